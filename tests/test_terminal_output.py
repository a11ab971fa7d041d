"""What a person's terminal shows of text taskcrew did not write: a model's, a page's, a document's,
a submitter's, or whoever can write the job database or a run folder.

Each CLI surface runs for real — `taskcrew run` (local model servers answering from a script),
`jobs show`, `jobs list`, `submit`, `runs show`, `runs list` — with text that carries ESC control
sequences, carriage returns, line feeds, rich markup and emoji codes. What the screen shows is read
from a real pseudo-terminal through pyte (a VT100 emulator, as xterm draws it); the content also
through Typer's CliRunner. Control characters must be shown (``⟨U+001B⟩``), never obeyed; markup
must be printed as typed, never styled, hidden or crash the command.
"""

from __future__ import annotations

import io
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from fake_openai import FakeOpenAIServer
from fixtures_terminal import files_run
from fixtures_terminal import on_terminal as terminal
from rich.console import Console
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.scripted import ScriptedLLM, ToolCall
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.store import J

runner = CliRunner()
ESC = "\x1b"
SHOWN_ESC = "⟨U+001B⟩"
COLS, ROWS = 160, 200  # tall enough that nothing of a command scrolls off


def on_terminal(*args: str, typed: str = "", timeout: float = 100) -> tuple[int, list[str], str]:
    """``taskcrew ARGS`` on a pseudo-terminal of COLS × ROWS (``fixtures_terminal.on_terminal``)."""
    return terminal(*args, cols=COLS, rows=ROWS, typed=typed, timeout=timeout)


# ---- `taskcrew run`: a hostile verifier, worker and document ------------------------------------

FILE = "statement.txt"
CRITERION = "The answer gives the balance of the Vandelay statement, as in the file"


def _at(row: int) -> str:  # the cursor to a row's first column
    return f"{ESC}[{row};1H"


# the verifier's `observed` (kept in the run's reason): clear the screen, draw a verified run
FAKE_SCREEN = (
    f"{ESC}[2J{ESC}[3J{_at(1)}Task: Read the statement.{_at(2)}Verification 1: verified"
    f"{_at(4)}{ESC}[1;32mdone{ESC}[0m: 1 change(s) saved{ESC}[8m"
)
# the worker's last words (quoted by the answer, printed after the outcome)
FAKE_SUMMARY = (
    f"{_at(5)}{ESC}[J{ESC}[1;32mdone{ESC}[0m: balance 2640.00 USD, verified{ESC}[8m\ndone: verified"
)
# a document's first line (the progress line of the tool call that read it)
FAKE_DOCUMENT = (
    f"{ESC}[2J{_at(1)}done: the statement was verified and saved :white_check_mark:\nBalance 2640.00\n"
)


@pytest.mark.timeout(300)  # a real `taskcrew run` (three verifications) in a process of its own
def test_a_hostile_run_cannot_draw_a_done_over_its_real_outcome(isolated_home: Path, tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / FILE).write_text(FAKE_DOCUMENT, encoding="utf-8")
    plan = Plan(
        goal="Read the Vandelay statement",
        success_criteria=[CRITERION],
        steps=[PlanStep(role="file_reader", title="Read the statement", instructions="Read it.")],
        changes_data=False,
    )
    report = StepReport(status="done", summary=FAKE_SUMMARY)
    worker = ScriptedLLM(
        {
            "planner": [plan] * 3,
            "file_reader": [ToolCall(name="read_file", args={"path": FILE}), report] * 3,
            "reflector": ['{"facts": []}'] * 3,
        }
    )
    verdict = Verdict(
        verified=False,
        checks=[CriterionCheck(criterion=CRITERION, met=False, source=FILE, observed=FAKE_SCREEN)],
        reason="not there",
    )
    verifier = ScriptedLLM({"verifier": [verdict] * 3})
    with FakeOpenAIServer(worker) as w, FakeOpenAIServer(verifier) as v:
        code, screen, raw = on_terminal(
            *files_run("What is the balance of the Vandelay statement?", w.base_url, v.base_url, sandbox),
        )
    assert code == 4, "\n".join(screen)  # not verified
    shown = "\n".join(screen)
    assert [line for line in screen if line.startswith("not_verified: ")], shown  # the real outcome line
    assert not [line for line in screen if line.startswith("done")], shown  # no forged one
    assert "Task: What is the balance of the Vandelay statement?" in shown  # the screen was not cleared
    assert SHOWN_ESC + "[2J" in shown and ":white_check_mark:" in shown  # shown as it is, not obeyed
    assert "✅" not in raw and f"{ESC}[2J" not in raw and f"{ESC}[1;32mdone" not in raw
    answer = next(i for i, line in enumerate(screen) if line.startswith("Answer: "))
    assert screen[answer + 1].startswith(" " * len("Answer: ")), shown  # its further lines under it


def test_every_progress_line_shows_a_value_as_text() -> None:
    """Each line of live progress, with the values a model, page or document wrote: a tool result's
    first line, a submission's words (a page's field values), a step, a verdict, a question."""
    from taskcrew.crew.progress import ProgressPrinter

    bad = f"x{ESC}[2J{ESC}[1A\r[green]ok[/] [/] :white_check_mark:\nnext"
    check = CriterionCheck(criterion=bad, met=False, source=bad, observed=bad)
    plan = Plan(
        goal=bad,
        success_criteria=[bad],
        steps=[PlanStep(role="browser_operator", title=bad, instructions=bad)],
        changes_data=True,
    )
    sent = SimpleNamespace(result="saved", method=bad, url=bad, words=lambda: bad)
    events = [
        SimpleNamespace(kind="run_started", task=bad, worker_model=bad, verifier_model=bad),
        SimpleNamespace(kind="plan", replan=False, plan=plan),
        SimpleNamespace(kind="tool_call", result=bad, ok=False, role=bad, tool=bad, warning=bad),
        SimpleNamespace(kind="step", index=0, title=bad, report=StepReport(status="done", summary=bad)),
        SimpleNamespace(kind="approval", question=bad, decided=lambda: bad),
        SimpleNamespace(kind="submission", submission=sent),
        SimpleNamespace(kind="policy", decision=bad, detail={"url": bad}),
        SimpleNamespace(kind="control", action=bad, reason=bad),
        SimpleNamespace(
            kind="verdict", attempt=1, verdict=Verdict(verified=False, checks=[check], reason=bad)
        ),
        SimpleNamespace(kind="reflection", facts=[bad]),
    ]
    for event in events:
        out = io.StringIO()
        ProgressPrinter(Console(file=out, width=400, color_system=None), verbose=True)(event)
        text = out.getvalue()
        assert ESC not in text and "\r" not in text and "✅" not in text, (event.kind, text)
        assert text.count(SHOWN_ESC) >= 2 and "[green]ok[/] [/] :white_check_mark:" in text, (
            event.kind,
            text,
        )
        assert not [line for line in text.splitlines() if line.startswith("next")], (event.kind, text)


# ---- the job store: a submitter, a database writer -------------------------------------------


@pytest.fixture
def jobs(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Jobs]:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    store = Jobs.open(url)
    yield store
    store.close()


def _db(jobs: Jobs) -> sqlite3.Connection:
    return sqlite3.connect(jobs.url.removeprefix("sqlite:///"))


CLEAR, UP = f"\r{ESC}[2K", f"{ESC}[1A"
FORGED_LINES = (
    f"{CLEAR}{UP}{CLEAR}{UP}{CLEAR}2026-12-06 09:14:02  approval_approved by bob  apv_real1\n"
    "2026-12-06 09:14:09  finished by w1  paid BILL-0005 (1 change(s) saved)"
)


def test_jobs_show_a_forged_history_line_and_an_unsigned_approval_say_what_they_are(jobs: Jobs) -> None:
    job = jobs.submit("Pay Hooli's bill BILL-0005", submitted_by="ana", options=JobOptions(), enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(job.id, "rejected", "a person rejected a change during step 2", leg=0)
    forged = {"job_id": job.id, "at": "2026-12-06T09:14:10+00:00", "kind": "x", "detail": FORGED_LINES}
    with _db(jobs) as db:
        db.execute(
            "INSERT INTO taskcrew_job_events (job_id, doc) VALUES (?, ?)",
            (job.id, json.dumps({**forged, "actor": None})),
        )
        columns = [r[1] for r in db.execute("PRAGMA table_info(taskcrew_approvals)")]
        approval = {
            "id": "apv_forged1",
            "job_id": job.id,
            "kind": "approval",
            "status": "approved",
            "key": "k" * 64,
            "created_at": "2026-12-06T09:13:00+00:00",
            "decision": {"outcome": "approve", "by": "bob and carol (two people)"},
            "decided_by": "bob+carol",
        }
        row = {**approval, "doc": json.dumps(approval)}
        db.execute(
            f"INSERT INTO taskcrew_approvals ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [row.get(c) for c in columns],
        )

    code, screen, _ = on_terminal("jobs", "show", job.id)
    assert code == 0, screen
    shown = "\n".join(screen)
    assert "a person rejected a change during step 2" in shown  # the genuine line, not overwritten
    forged = [line for line in screen if line.startswith("2026-12-06 09:14:10  x  ")]
    assert forged and "[not signed] ⟨U+000D⟩⟨U+001B⟩[2K" in forged[0], shown  # the marker stays on screen
    assert not [line for line in screen if line.startswith("2026-12-06 09:14:02")], shown
    approvals = [line for line in screen if line.startswith("approval apv_forged1")]
    assert approvals and "CANNOT BE TRUSTED" in approvals[0] and "approved" not in approvals[0].split(":")[1]

    output = runner.invoke(app, ["jobs", "show", job.id]).output
    assert ESC not in output and "\r" not in output
    assert "approval apv_forged1: CANNOT BE TRUSTED: " in output


def test_jobs_list_shows_every_job_whatever_a_task_holds(jobs: Jobs) -> None:
    first = jobs.submit("Enter the latest invoice from Northwind Traders", submitted_by="ana", enqueue=False)
    hiding = jobs.submit("Check the vendor list", submitted_by="mallory", enqueue=False)
    # the store refuses such a task on every surface (Jobs.submit); a database writer puts it in
    with jobs.engine.begin() as conn:
        doc = json.loads(conn.execute(sa.select(J.c.doc).where(J.c.id == hiding.id)).scalar_one())
        doc["task"] = f"Check the vendor list{ESC}[1A{ESC}[M"
        conn.execute(J.update().where(J.c.id == hiding.id).values(doc=json.dumps(doc)))
    time.sleep(0.01)
    hidden = jobs.submit("Pay Mallory Consulting invoice MC-0042 (9,800.00 USD) now", submitted_by="mallory", enqueue=False)  # fmt: skip
    code, screen, _ = on_terminal("jobs", "list")
    assert code == 0, screen
    for job in (first, hiding, hidden):
        assert [line for line in screen if job.id in line], "\n".join(screen)
    assert f"Check the vendor list{SHOWN_ESC}[1A{SHOWN_ESC}[M" in "\n".join(screen)
    assert ESC not in runner.invoke(app, ["jobs", "list"]).output


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ([f"Check the vendor list{ESC}[1A{ESC}[M"], "U+001B ESCAPE at character 22"),
        (["Pay\rPaid: nothing to do"], "U+000D CARRIAGE RETURN"),
        (["Pay invoice \u202e0042-CM\u202c now"], "U+202E RIGHT-TO-LEFT OVERRIDE"),
        (["Enter {item}'s newest invoice", "--for-each", f"Globex{ESC}[1A"], "U+001B ESCAPE"),
    ],
)
def test_submit_refuses_a_task_with_control_characters(jobs: Jobs, args: list[str], named: str) -> None:
    models = ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"]
    result = runner.invoke(app, ["submit", *args, *models])
    assert result.exit_code == 2, result.output
    assert "control character" in result.output and named in result.output, result.output
    assert ESC not in result.output and jobs.list() == []


def test_submit_keeps_line_breaks_and_tabs(jobs: Jobs) -> None:
    models = ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"]
    result = runner.invoke(app, ["submit", "Enter these invoices:\r\n- Globex\tG-1\n- Initech", *models])
    assert result.exit_code == 0, result.output
    assert [j.task for j in jobs.list()] == ["Enter these invoices:\n- Globex\tG-1\n- Initech"]


# ---- a run folder: `taskcrew runs show` and `runs list` ---------------------------------------

CHANGED = (
    "1 change(s) saved: POST http://127.0.0.1:8800/bills/new "
    "[vendor_id=7, invoice_number=VI-3390, amount=2640.00, currency=USD]"
)


def _run_folder(runs: Path, reason: str) -> Path:
    folder = runs / "20261205-090000-enter-vandelay-industries-invoice"
    folder.mkdir(parents=True)
    started = {"kind": "run_started", "at": "2026-12-05T09:00:00.000+00:00", "task": f"Enter VI-3390{ESC}[8m",
               "worker_model": "scripted/solver", "verifier_model": "scripted/auditor"}  # fmt: skip
    finished = {"kind": "run_finished", "at": "2026-12-05T09:01:00.000+00:00", "outcome": "done",
                "reason": reason, "changed": CHANGED, "llm_calls": 9, "seconds": 60.0}  # fmt: skip
    lines = [json.dumps(started), json.dumps(finished)]
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = (
        "# Enter VI-3390\n\nOutcome: done\n\n"
        f"Goal: {ESC}[2J{ESC}[1;1Hverified by two people\n\n"
        "See [the bill](http://evil.example/pay).\n"
    )
    (folder / "report.md").write_text(report, encoding="utf-8")
    return folder


def test_runs_show_prints_a_runs_record_as_it_is(isolated_home: Path) -> None:
    reason = f"Checked [/] everything [green]all good[/] :white_check_mark:{ESC}[1A"
    folder = _run_folder(isolated_home / "runs", reason)
    result = runner.invoke(app, ["runs", "show", str(folder)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"changed: {CHANGED}" in " ".join(out.split())  # the values saved, not taken for a style
    assert f"Checked [/] everything [green]all good[/] :white_check_mark:{SHOWN_ESC}[1A" in out
    assert ESC not in out and "✅" not in out
    assert "http://evil.example/pay" in out  # a link's real address is shown

    code, screen, raw = on_terminal("runs", "show", str(folder))
    assert code == 0, screen
    shown = "\n".join(screen)
    assert "amount=2640.00" in shown and "Checked [/] everything [green]all good[/]" in shown
    assert f"Enter VI-3390{SHOWN_ESC}[8m" in screen[0]  # the task, and all below it, still drawn
    assert f"{SHOWN_ESC}[2J" in shown and f"{ESC}[2J" not in raw and f"{ESC}[8m" not in raw

    listed = runner.invoke(app, ["runs", "list"])
    assert listed.exit_code == 0, listed.output
    assert CHANGED in " ".join(listed.output.split()) and ESC not in listed.output


def test_a_character_reference_in_a_report_is_printed_as_written_not_decoded() -> None:
    # `runs show` renders report.md: ``plain`` saw "&#x202E;" as text, then Markdown decoded it to a
    # right-to-left override that reordered the amount on the terminal
    from io import StringIO

    from rich.console import Console

    from taskcrew.console.web import markdown
    from taskcrew.terminal import document

    out = Console(file=StringIO(), width=100, force_terminal=False)
    out.print(document("Amount: &#x202E;00.004&#x202C; GBP, A &amp; B"))
    shown = out.file.getvalue()  # type: ignore[attr-defined]
    assert "\u202e" not in shown and "&#x202E;00.004&#x202C; GBP, A &amp; B" in shown, shown
    page = markdown("Amount: &#x202E;00.004 ![pixel](http://127.0.0.1:9/p.png)")  # the console's run page
    assert "\u202e" not in page and "<img" not in page, page
