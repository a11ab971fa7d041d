"""What a person's terminal shows of text taskcrew did not write, on the surfaces
tests/test_terminal_output.py does not drive: `knowledge search` (a document), `knowledge facts` and
`knowledge forget` (a learned fact), a recipe's `--dry-run` and help (a recipe file), the agent's question at
the prompt (a model), `routines accept` (a routine file), `demo` (its task), `runs list` (a run
folder's name) and `eval` (its --out folder).

Each command runs for real in a pseudo-terminal; what the screen shows is read through pyte (a VT100
emulator), as in tests/test_terminal_output.py. The attack (ESC sequences that clear the screen and
draw a forged line, a carriage return, a bidi override, rich markup and an emoji code) must be shown
as text (``⟨U+001B⟩`` …), never obeyed, interpreted or crash the command; taskcrew's own lines stay.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from fake_openai import FakeOpenAIServer
from fixtures_knowledge import FakeVerdict, write_small_doc
from fixtures_terminal import files_run
from fixtures_terminal import on_terminal as terminal

from taskcrew.crew.models import Citation, CriterionCheck, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.scripted import ScriptedLLM, ToolCall

if TYPE_CHECKING:
    from taskcrew.knowledge import MiniLMEmbedder

ESC = "\x1b"
RLO, PDF = "\u202e", "\u202c"
SHOWN_ESC, SHOWN_RLO = "⟨U+001B⟩", "⟨U+202E⟩"
# clear the screen, draw a forged line at the top, reorder what follows, and markup and an emoji code
FORGED = f"{ESC}[2J{ESC}[1;1Hdone: paid {RLO}00.0001{PDF}"
RICH = "[/] [green]ok[/green] :white_check_mark:"
COLS, ROWS = 500, 200  # wide enough that no line here wraps, tall enough that nothing scrolls off


def on_terminal(*args: str, typed: str = "", timeout: float = 200) -> tuple[int, list[str], str]:
    """``taskcrew ARGS`` on a pseudo-terminal of COLS × ROWS (``fixtures_terminal.on_terminal``)."""
    return terminal(*args, cols=COLS, rows=ROWS, typed=typed, timeout=timeout)


def shown_not_obeyed(raw: str) -> None:
    """Nothing of the attack reached the terminal as what it does."""
    assert f"{ESC}[2J" not in raw and f"{ESC}[1;1Hdone" not in raw, raw
    assert RLO not in raw and "✅" not in raw, raw


# ---- knowledge: a document, a fact ------------------------------------------------------------


def test_knowledge_search_shows_a_documents_text_as_it_is(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    handbook = (
        "# Company handbook\n\n## Parking\n\n"
        f"Visitors park in the spaces marked with a V.{FORGED} {RICH}\n"
        "Staff park on the upper deck of the garage.\n"
    )
    (sandbox / "company_context.md").write_text(handbook, encoding="utf-8")
    monkeypatch.setenv("TASKCREW_SANDBOX", str(sandbox))  # the store is seeded from it

    code, screen, raw = on_terminal("knowledge", "search", "where do visitors park", "--ranking", "bm25")
    shown = "\n".join(screen)
    assert code == 0, shown
    assert screen[0].startswith("The knowledge store was empty: ingested the company handbook"), shown
    assert [line for line in screen if line.startswith("1. company_context.md § ")], shown
    # what a reader of the file does not see (an escape, a right-to-left override) is dropped at ingest
    # (``knowledge.seen``): the rest is shown as it is, obeyed by nothing
    assert "a V.[2J[1;1Hdone: paid 00.0001" in shown, shown
    assert RICH in shown and "Staff park on the upper deck" in shown, shown
    shown_not_obeyed(raw)


def test_knowledge_facts_and_forget_show_a_facts_words_as_they_are(
    isolated_home: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    from taskcrew.config import Paths
    from taskcrew.knowledge import FactGrant, KnowledgeStore

    store = KnowledgeStore(Paths.from_env().knowledge_dir, knowledge_embedder)
    write_small_doc(isolated_home / "rules.md")
    store.procedures.ingest([isolated_home / "rules.md"])  # not empty: no seeding
    grant = FactGrant.from_verdict(FakeVerdict(verified=True, run_id="run-cli"))
    fact = store.facts.learn(grant, f"Hooli sends two invoices a day.{FORGED} {RICH}").fact
    del store

    code, screen, raw = on_terminal("knowledge", "facts")
    shown = "\n".join(screen)
    assert code == 0, shown
    assert [line for line in screen if line.startswith(f"{fact.id} proposed")], shown
    words = [line for line in screen if line.startswith("  Hooli sends two invoices a day.")]
    assert words and f"{SHOWN_ESC}[2J{SHOWN_ESC}[1;1Hdone: paid {SHOWN_RLO}00.0001" in words[0], shown
    assert words[0].endswith(RICH), shown
    shown_not_obeyed(raw)

    code, screen, raw = on_terminal("knowledge", "forget", fact.id)
    shown = "\n".join(screen)
    assert code == 0, shown
    assert screen[-1].startswith(f"Forgot {fact.id}: Hooli sends two invoices a day.{SHOWN_ESC}[2J"), shown
    assert screen[-1].endswith(RICH), shown
    shown_not_obeyed(raw)


# ---- a recipe file ----------------------------------------------------------------------------


def test_a_recipes_dry_run_shows_its_task_as_it_is(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    folder = tmp_path / "recipes"
    folder.mkdir()
    recipe = {
        "name": "pay-bill",
        "summary": f"Pay a vendor's open bill [EUR].{FORGED}",
        "params": [{"name": "vendor", "type": "vendor", "help": "The vendor."}],
        "task": f"Pay the open bill from {{vendor}}.{FORGED} {RICH}",
        "criteria": [f"The bill from {{vendor}} is paid{ESC}[1A{ESC}[2K"],
        "changes_data": True,
    }
    (folder / "pay-bill.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_RECIPES", str(folder))

    code, screen, raw = on_terminal("pay-bill", "--vendor", "Globex", "--dry-run")
    shown = "\n".join(screen)
    assert code == 0, shown
    assert screen[0] == (
        f"task: Pay the open bill from Globex.{SHOWN_ESC}[2J{SHOWN_ESC}[1;1Hdone: paid "
        f"{SHOWN_RLO}00.0001⟨U+202C⟩ {RICH.replace(' :', ':')}"  # tidied: no space before ":"
    ), shown
    assert screen[1] == f"  criterion: The bill from Globex is paid{SHOWN_ESC}[1A{SHOWN_ESC}[2K", shown
    assert screen[2] == "  read-only: no", shown
    shown_not_obeyed(raw)
    assert f"{ESC}[1A" not in raw

    for args in (["--help"], ["pay-bill", "--help"]):  # its summary, in the help that lists it
        code, screen, raw = on_terminal(*args)
        shown = "\n".join(screen)
        assert code == 0, shown
        assert f"Pay a vendor's open bill [EUR].{SHOWN_ESC}[2J{SHOWN_ESC}[1;1Hdone: paid {SHOWN_RLO}" in shown
        shown_not_obeyed(raw)


# ---- a model's question at the prompt ---------------------------------------------------------

QUESTION = f"Which of the two Vandelay statements do you mean?{FORGED} {RICH}\nThe newer one?"


@pytest.mark.timeout(300)  # a real `taskcrew run` in a process of its own
def test_the_agents_question_is_shown_as_it_is(isolated_home: Path, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "statement.txt").write_text("Vandelay Industries\nBalance 2640.00 USD\n", encoding="utf-8")
    criterion = "The answer gives the balance of the Vandelay statement"
    plan = Plan(
        goal="Read the Vandelay statement",
        success_criteria=[criterion],
        steps=[PlanStep(role="file_reader", title="Read the statement", instructions="Read it.")],
        changes_data=False,
    )
    worker = ScriptedLLM(
        {
            "planner": [plan],
            "file_reader": [
                ToolCall(name="ask_user", args={"question": QUESTION}),
                ToolCall(name="read_file", args={"path": "statement.txt"}),
                StepReport(
                    status="done",
                    summary="The balance of the Vandelay statement is 2640.00 USD.",
                    sources=[Citation(source="statement.txt", quote="Balance 2640.00 USD")],
                ),
            ],
            "reflector": ['{"facts": []}'],
        }
    )
    check = CriterionCheck(
        criterion=criterion, met=True, source="statement.txt", observed="Balance 2640.00 USD"
    )
    verdict = Verdict(verified=True, checks=[check], reason="it is there")
    verifier = ScriptedLLM(
        {"verifier": [ToolCall(name="read_file", args={"path": "statement.txt"}), verdict]}
    )
    with FakeOpenAIServer(worker) as w, FakeOpenAIServer(verifier) as v:
        code, screen, raw = on_terminal(
            *files_run("What is the balance of the Vandelay statement?", w.base_url, v.base_url, sandbox),
            typed="the newer one\n",
        )
    shown = "\n".join(screen)
    assert "Task: What is the balance of the Vandelay statement?" in shown  # the screen was not cleared
    asked = [i for i, line in enumerate(screen) if line.startswith("The agent asks: ")]
    assert asked, shown
    first = screen[asked[0]]
    assert first.startswith(
        f"The agent asks: Which of the two Vandelay statements do you mean?{SHOWN_ESC}[2J{SHOWN_ESC}[1;1H"
        f"done: paid {SHOWN_RLO}00.0001"
    ), shown
    assert first.endswith(RICH), shown
    assert screen[asked[0] + 1] == "  The newer one?", shown  # its further line under it
    assert not [line for line in screen if line.startswith("done: paid")], shown
    assert code == 0 and [line for line in screen if line.startswith("done: ")], shown  # the real outcome
    shown_not_obeyed(raw)


# ---- a routine file ---------------------------------------------------------------------------


def test_routines_accept_shows_a_routine_files_words_in_its_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path
) -> None:
    """A routine cannot hold a control character or a bidi override, but its file can be edited by
    hand to hold one (its run folder's name): accepting it is refused, naming the file and the code
    points, and the override never reaches the terminal."""
    from taskcrew.approvals.identity import TokenStore
    from taskcrew.routines.models import BrowserStep, DocumentRule, FieldRule, Routine, Template
    from taskcrew.routines.store import RoutineStore, fingerprint

    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    template = Template(
        issuer="Northwind Traders",
        fields=[FieldRule(name="invoice_number", kind="text", anchor="Invoice No.", pattern=r"INV-\d+")],
    )
    routine = Routine(
        name="enter-invoice",
        version=1,
        source_run="20261205-090000-enter-invoice",
        params=["vendor"],
        documents=DocumentRule(search="{vendor}"),
        templates=[template],
        values=["invoice_number"],
        browser=[BrowserStep(kind="open", url="{erp}/bills/new")],
    )
    store = RoutineStore()
    draft, _ = store.propose(routine, author="token:bob", submitter="ana")
    path = tmp_path / "routines" / "enter-invoice.v1.yaml"
    text = path.read_text(encoding="utf-8")
    assert "20261205-090000-enter-invoice" in text
    edited = f"20261205-090000-enter-invoice{RLO}DEVORPPA YDAERLA{PDF}"
    path.write_text(text.replace("20261205-090000-enter-invoice", edited), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("carol"))

    args = ("routines", "accept", "enter-invoice", "-v", "1", "--fingerprint", fingerprint(draft))
    code, screen, raw = on_terminal(*args)
    shown = "\n".join(screen)
    assert code != 0, shown
    assert "enter-invoice.v1.yaml: not a usable routine" in shown, shown
    assert "source_run holds control characters (U+202E, U+202C)" in shown, shown
    # the file is left as it is, for a person to read
    assert path.read_text(encoding="utf-8") == text.replace("20261205-090000-enter-invoice", edited)
    shown_not_obeyed(raw)


# ---- `taskcrew demo` --------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_demo_shows_its_task_as_it_is(tmp_path: Path, eval_knowledge_seed: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    seed = tmp_path / "home" / "demo" / "knowledge-seed"  # seeded once per home, as the demo does
    shutil.copytree(eval_knowledge_seed, seed)
    (seed / ".seeded").write_text("seeded\n")
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TASKCREW_MODEL", raising=False)
    vendor = f"Nobody{FORGED} {RICH}"
    code, screen, raw = on_terminal(
        "demo", "--vendor", vendor, "--no-chaos", "--runs-dir", str(tmp_path / "runs"), typed="\n" * 4
    )
    shown = "\n".join(screen)
    assert "DEMO with scripted stand-in models" in shown  # not cleared
    task = [line for line in screen if line.startswith("Task: Find the latest invoice from Nobody")]
    assert task and task[0].startswith(
        f"Task: Find the latest invoice from Nobody{SHOWN_ESC}[2J{SHOWN_ESC}[1;1Hdone: paid {SHOWN_RLO}"
    ), shown
    assert f"{RICH}, extract the amount" in task[0], shown
    assert [line for line in screen if line.startswith("Report: ")], shown
    assert "This was the demo with scripted stand-in models (not AI)." in shown
    shown_not_obeyed(raw)
    assert code in (0, 3, 4), shown


# ---- a run folder and an eval's --out folder ---------------------------------------------------

NAMED = f"broken{ESC}[2J{ESC}[1;1Hdone [green]ok :white_check_mark: {RLO}run"  # a folder name has no "/"


def test_runs_list_shows_a_folder_it_skips_as_it_is(isolated_home: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / NAMED).mkdir(parents=True)
    (runs / NAMED / "trace.jsonl").write_text('{"kind": "note"}\n', encoding="utf-8")
    code, screen, raw = on_terminal("runs", "list", "--runs-dir", str(runs))
    shown = "\n".join(screen)
    assert code == 0, shown
    skipped = [line for line in screen if line.startswith("skipped: ")]
    assert skipped, shown
    assert (
        f"broken{SHOWN_ESC}[2J{SHOWN_ESC}[1;1Hdone [green]ok :white_check_mark: {SHOWN_RLO}run" in skipped[0]
    ), shown
    assert "has no run_started event" in skipped[0], shown
    shown_not_obeyed(raw)


@pytest.mark.timeout(300)
def test_eval_shows_its_out_folder_as_it_is(isolated_home: Path, tmp_path: Path) -> None:
    out = tmp_path / NAMED
    code, screen, raw = on_terminal(
        "eval", "--models", "scripted/solver", "--cases", "research-sum-of-squares", "--out", str(out)
    )
    shown = "\n".join(screen)
    assert code == 0, shown
    at = next((i for i, line in enumerate(screen) if line.startswith("results: ")), None)
    assert at is not None, shown
    # the line, with the rows it wrapped onto when the temp folder's path is longer than the screen
    results = ["".join(screen[at : at + 3])]
    name = f"broken{SHOWN_ESC}[2J{SHOWN_ESC}[1;1Hdone [green]ok :white_check_mark: {SHOWN_RLO}run"
    assert f"{name}/results.md and " in results[0] and f"{name}/runs" in results[0], shown
    assert "1 case(s) × 1 model(s) × 1 repeat(s) = 1 run(s)" in shown  # not cleared
    shown_not_obeyed(raw)
