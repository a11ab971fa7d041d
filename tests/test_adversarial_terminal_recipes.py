"""A recipe file (written by a user or a colleague), a document's file name and the values typed for a
recipe reach the terminal: `taskcrew recipes list|show|add`, the help that lists a recipe and its own
`--help`, `--dry-run`, `--submit`, and `knowledge ingest`'s progress. None of it may reach the screen
as what it does: an ESC sequence (clear the screen, an OSC 8 hyperlink whose target is hidden), a
bidi override, NEL (a line break on a terminal that reads 8-bit controls), rich markup or an emoji
code. Each is shown as written (``⟨U+001B⟩``, ``[bold red]``, ``:warning:``).

And one set of such characters (``terminal.CONTROLS``: Unicode's Cc, its Bidi_Control characters,
the line and paragraph separators) holds on every surface: refused in a task and in a recipe's
value, written as � in report.md, shown as ``⟨U+…⟩`` on a terminal and in an approval; each surface
is tried with every character of it.
"""

from __future__ import annotations

import io
import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from fixtures_terminal import on_terminal
from rich.console import Console
from typer.testing import CliRunner

ESC, RLO, PDF, NEL = "\x1b", "\u202e", "\u202c", "\u0085"
CLEAR = f"{ESC}[2J"
LINK = f"{ESC}]8;;https:pay.example{ESC}\\click to approve{ESC}]8;;{ESC}\\"  # no "/": a file name too
RICH, EMOJI = "[bold red]APPROVED[/bold red]", ":warning:"
ATTACK = f"{CLEAR}{LINK} {RLO}00.0001{PDF} {NEL}{RICH} {EMOJI}"
NAMED = f"{CLEAR}{LINK} {RLO}00.0001{PDF} {NEL}[bold red]APPROVED {EMOJI}"  # a file's name: no "/"
# what none of it may become on the screen (the emoji is what rich draws for :warning:)
OBEYED = (CLEAR, f"{ESC}]8;", RLO, NEL, "\u26a0")

# the set, as Unicode defines its parts: category Cc, the Bidi_Control property (PropList.txt), and
# the line and paragraph separators (categories Zl, Zp)
BIDI_CONTROL = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
EXPECTED = frozenset(
    c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) in ("Cc", "Zl", "Zp")
) | frozenset(BIDI_CONTROL)
LAYOUT = frozenset("\n\t")  # the two a text whose lines are its own keeps
EVERY = sorted(EXPECTED)


def _code(char: str) -> str:
    return f"U+{ord(char):04X}"


def _every_control(check: Callable[[str], None]) -> None:
    """``check`` with each character of the set; every one that fails is named."""
    failed = []
    for char in EVERY:
        try:
            check(char)
        except (AssertionError, pytest.fail.Exception) as exc:
            failed.append(f"{_code(char)}: {' '.join(str(exc).split())[:300]}")
    assert not failed, "\n".join(failed)


# ---- the one set ------------------------------------------------------------------------------


def test_one_set_of_controls_is_shared_by_every_surface() -> None:
    from taskcrew import inputs, terminal
    from taskcrew.approvals import visible
    from taskcrew.crew import report
    from taskcrew.recipes import params

    assert terminal.CONTROLS == EXPECTED
    assert "\ufeff" not in terminal.CONTROLS and "\u200b" not in terminal.CONTROLS  # hide, move nothing
    assert terminal.LAYOUT == LAYOUT
    # each surface reads that set, not a copy of its own
    assert inputs.CONTROLS is terminal.CONTROLS and inputs.TASK_KEPT is terminal.LAYOUT
    assert visible.CONTROLS is terminal.CONTROLS
    assert params.CONTROLS is terminal.CONTROLS
    assert set(map(chr, report._AS_REPLACEMENT)) == terminal.CONTROLS - terminal.LAYOUT
    assert all(visible._invisible(c) for c in terminal.CONTROLS)


# ``char`` inside a value, through each surface: what reaches the terminal, a file or a page holds no
# such character (but a line feed or a tab where a text keeps its own lines)
VALUE = "Pay {}Globex"


def test_a_task_refuses_every_control() -> None:
    """A job's or a run's task (``inputs.check_plain``): each one refused, named by its code."""
    _every_control(_a_task_refuses_every_control)


def _a_task_refuses_every_control(char: str) -> None:
    from taskcrew.inputs import InputError, check_plain

    value = VALUE.format(char)
    if char in LAYOUT:
        assert check_plain(value, "the task") == value
        return
    with pytest.raises(InputError, match=re.escape(f"({_code(char)} ")):
        check_plain(value, "the task")


def test_a_recipes_value_refuses_every_control() -> None:
    """A value typed for a recipe's parameter becomes part of its task: refused as the task would be."""
    _every_control(_a_recipes_value_refuses_every_control)


def _a_recipes_value_refuses_every_control(char: str) -> None:
    from taskcrew.recipes.params import ParamValueError, check_value

    value = VALUE.format(char)
    if char in LAYOUT:
        assert check_value("vendor", value) == "Pay Globex"  # a line break or tab is a space there
        return
    with pytest.raises(ParamValueError, match="control characters"):
        check_value("vendor", value)


def test_report_md_writes_every_control_as_a_replacement_mark() -> None:
    """report.md (``crew.report``): in a line, a space (white space) or �; in a block, � but a block's
    own line breaks and tabs."""
    _every_control(_report_md_writes_every_control_as_a_replacement_mark)


def _report_md_writes_every_control_as_a_replacement_mark(char: str) -> None:
    from taskcrew.crew.report import md_block, md_code, md_text

    value = VALUE.format(char)
    for surface, out, kept in (
        ("text", md_text(value), frozenset()),
        ("code", md_code(value), frozenset()),
        ("block", "\n".join(md_block(value)), LAYOUT),
    ):
        assert char not in out or char in kept, (surface, out)
        assert "Globex" in out, (surface, out)
    if char not in LAYOUT and char != "\r":  # a block reads a carriage return as a line break
        assert "Pay \ufffdGlobex" in md_block(value)


def test_a_terminal_and_an_approval_show_every_control() -> None:
    """What a person is shown (``approvals.visible``, ``terminal``, a routine's lines): the code
    (``⟨U+202E⟩``: the approver knows something was there), a space where a line is flattened."""
    _every_control(_a_terminal_and_an_approval_show_every_control)


def _a_terminal_and_an_approval_show_every_control(char: str) -> None:
    from taskcrew import terminal
    from taskcrew.approvals.visible import visible
    from taskcrew.routines.models import on_screen

    value = VALUE.format(char)
    for surface, out, kept in (
        ("visible", visible(value), frozenset()),
        ("visible layout", visible(value, layout=True), LAYOUT),
        ("terminal.plain", terminal.plain(value), frozenset()),
        ("terminal.plain flat", terminal.plain(value, flat=True), frozenset()),
        ("terminal.plain layout", terminal.plain(value, layout=True), LAYOUT),
        ("terminal.markup", terminal.markup(value), frozenset()),
        ("terminal.document", terminal.document(value).markup, LAYOUT),
        ("routines on_screen", on_screen(value), frozenset()),
    ):
        assert char not in out or char in kept, (surface, out)
        assert "Globex" in out, (surface, out)
    if char not in LAYOUT:
        assert f"Pay ⟨{_code(char)}⟩Globex" in terminal.plain(value, layout=True)


def test_a_routine_holds_no_control_and_its_fallback_reason_shows_none() -> None:
    """A routine's text (``routines.models``: a label, a value it types, a step's words) is replayed
    into the system and read by its reviewer on a terminal: each character of the set is refused in
    it (a bidi control too, which was let through), and a page's words kept as a fallback's reason
    hold none."""
    _every_control(_a_routine_refuses)


def _a_routine_refuses(char: str) -> None:
    from pydantic import ValidationError

    from taskcrew.routines.models import FieldRule, printable

    with pytest.raises(ValidationError, match=re.escape(_code(char))):
        FieldRule(name="total", kind="amount", anchor=VALUE.format(char))
    assert printable(VALUE.format(char)) == "Pay  Globex"


def test_a_recipes_help_shows_every_control() -> None:
    """A recipe's words as Typer help (``terminal.help_text``): shown as the terminal shows them; the
    reset that has Typer draw them as text is the only ESC in it."""
    _every_control(_a_recipes_help_shows_every_control)


def _a_recipes_help_shows_every_control(char: str) -> None:
    from taskcrew.terminal import help_text

    out = help_text(VALUE.format(char))
    assert out.count(ESC) == out.count(f"{ESC}[0m") >= 1, out
    shown = out.replace(f"{ESC}[0m", "")
    assert (char not in shown or char in LAYOUT) and "Globex" in shown, shown


def test_knowledge_ingest_progress_shows_every_control_in_a_file_name() -> None:
    """A document's file name in `knowledge ingest`'s progress: its plain lines and its live bar."""
    _every_control(_knowledge_ingest_progress_shows_every_control_in_a_file_name)


def _knowledge_ingest_progress_shows_every_control_in_a_file_name(char: str) -> None:
    from taskcrew.knowledge.progress import IngestProgress

    name = f"statement {char}Globex.md"
    plain_out = io.StringIO()
    with IngestProgress(Console(file=plain_out, force_terminal=False, width=300), files=1, every_s=0) as bar:
        bar.chunks(Path(name), 1, 2)
    text = plain_out.getvalue()
    assert "Globex.md: 1/2 chunks" in text and char not in text.removesuffix("\n"), text
    live_out = io.StringIO()
    console = Console(file=live_out, force_terminal=True, width=300, color_system=None)
    with IngestProgress(console, files=1) as bar:
        bar.chunks(Path(name), 1, 2)
        assert bar._live is not None
        bar._live.refresh()
    drawn = live_out.getvalue()
    assert "Globex.md" in drawn and (char != ESC or "⟨U+001B⟩Globex.md" in drawn), drawn
    if char not in (ESC, "\r", "\n"):  # the live bar moves its own cursor with these
        assert char not in drawn, drawn


# ---- recipe files, through the real CLI -------------------------------------------------------


def _recipe(folder: Path, name: str, words: str, *, task: str | None = None) -> Path:
    """A recipe whose every text a person is shown holds ``words``: its summary, help, a parameter's
    help, default and choices, its task and criterion."""
    data = {
        "name": name,
        "summary": f"Pay a vendor's bill {words}",
        "help": f"Pays it. {words}\n\nSecond paragraph {words}",
        "params": [
            {"name": "vendor", "type": "vendor", "help": f"The vendor {words}"},
            {
                "name": "how",
                "type": "choice",
                "choices": [f"wire {words}", "check"],
                "default": f"wire {words}",
                "help": "How to pay.",
                "phrase": "by {value}",
            },
        ],
        "task": task if task is not None else f"Pay the open bill from {{vendor}} {{how}}. {words}",
        "criteria": [f"The bill from {{vendor}} is paid {words}"],
        "changes_data": True,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture
def recipes(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("TASKCREW_SANDBOX", "TASKCREW_JOBS_DB", "TERMINAL_WIDTH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "400")  # the help on one line a value: nothing of it wraps apart
    folder = tmp_path / "recipes"
    monkeypatch.setenv("TASKCREW_RECIPES", str(folder))
    return folder


def _cli(*args: str) -> tuple[int, str]:
    from taskcrew.cli import app

    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"taskcrew {' '.join(args)} crashed: {result.exception!r}\n{result.output}")
    return result.exit_code, result.stdout + result.stderr


def _shown_not_obeyed(out: str, where: str) -> None:
    for raw in OBEYED:
        assert raw not in out, (where, raw, out)
    assert ESC not in out, (where, out)  # no terminal here: not even a style of taskcrew's own


SURFACES = [
    ("recipes", "list"),
    ("recipes", "show", "pay-bill"),
    ("--help",),
    ("pay-bill", "--help"),
    ("pay-bill", "--vendor", "Globex", "--dry-run"),
]


@pytest.mark.parametrize("args", SURFACES, ids=" ".join)
def test_a_recipe_files_words_are_printed_as_written(recipes: Path, args: tuple[str, ...]) -> None:
    _recipe(recipes, "pay-bill", ATTACK)
    code, out = _cli(*args)
    assert code == 0, out
    _shown_not_obeyed(out, args)
    assert "⟨U+001B⟩[2J" in out and "⟨U+001B⟩]8;;https:pay.example" in out and "⟨U+202E⟩00.0001" in out
    assert RICH in out and EMOJI in out  # markup and the emoji code: as typed, never drawn


@pytest.mark.parametrize("args", SURFACES, ids=" ".join)
def test_every_control_in_a_recipe_file_is_shown_never_printed(recipes: Path, args: tuple[str, ...]) -> None:
    """The recipe holds every character of the set, each on every text a person is shown of it."""
    from taskcrew.recipes import load_file

    every = "".join(EVERY)
    path = _recipe(recipes, "pay-bill", every)
    assert load_file(path).summary == f"Pay a vendor's bill {every}"  # the file carries each one
    code, out = _cli(*args)
    assert code == 0, out
    found = {_code(c) for c in out if c in EXPECTED and c != "\n"}
    assert not found, (args, found, out)


def test_a_broken_recipe_files_name_and_words_are_shown_in_its_error(recipes: Path) -> None:
    """A file the loader refuses: its name (a file name can hold ESC) and what it quotes of the file
    (an unknown key, verbatim) are printed as text by `recipes list`, `recipes show` and `recipes add`."""
    name = f"pay-bill{CLEAR}{RLO}{NEL}[bold red]APPROVED {EMOJI}"
    recipes.mkdir()
    bad = recipes / f"{name}.yaml"
    bad.write_text(
        yaml.safe_dump({"name": "pay-bill", f"extra {ATTACK}": 1}, allow_unicode=True), encoding="utf-8"
    )
    for args in (["recipes", "list"], ["recipes", "show", name], ["recipes", "add", str(recipes)]):
        code, out = _cli(*args)
        assert code == (0 if args[1] == "list" else 2), out
        _shown_not_obeyed(out, args)
        assert f"pay-bill⟨U+001B⟩[2J⟨U+202E⟩⟨U+0085⟩[bold red]APPROVED {EMOJI}.yaml" in out, (args, out)
        assert "extra ⟨U+001B⟩[2J⟨U+001B⟩]8;;https:pay.example" in out, (args, out)


def test_a_recipes_submit_prints_its_task_as_written_and_refuses_controls_in_one_line(recipes: Path) -> None:
    model = ["--model", "openai/gpt-4o"]
    _recipe(recipes, "pay-bill", f"{RICH} {EMOJI}")
    code, out = _cli("pay-bill", "--vendor", "Globex", "--submit", *model)
    assert code == 0, out
    assert "queued: Pay the open bill from Globex wire [bold red]APPROVED[/bold red]" in out, out
    assert EMOJI in out and "\u26a0" not in out, out
    # a value typed with a bidi override: refused by the parameter, before any job is written
    code, out = _cli("pay-bill", "--vendor", f"Globex{RLO}", "--submit", *model)
    assert code == 2 and "--vendor: contains control characters (U+202E)" in out and RLO not in out, out
    # a recipe whose task holds ESC: the job store refuses the task; one line, not a traceback
    _recipe(recipes, "pay-bill", "x", task=f"Pay the open bill from {{vendor}} {{how}}.{CLEAR}")
    code, out = _cli("pay-bill", "--vendor", "Globex", "--submit", *model)
    assert code == 2, out
    assert out.startswith("error: the task holds a control character (U+001B ESCAPE"), out
    _shown_not_obeyed(out, "submit")


# ---- on a real terminal -----------------------------------------------------------------------


@pytest.mark.parametrize("args", SURFACES[:4], ids=" ".join)
def test_on_a_terminal_a_recipe_draws_nothing_of_its_own(recipes: Path, args: tuple[str, ...]) -> None:
    """On a pseudo-terminal (rich styles its own words here): no hyperlink, no cleared screen, no
    emoji, no markup read; the recipe's words are on the screen as written."""
    _recipe(recipes, "pay-bill", ATTACK)
    code, screen, raw = on_terminal(*args, cols=400, rows=300)
    shown = "\n".join(screen)
    assert code == 0, shown
    for obeyed in OBEYED:
        assert obeyed not in raw, (obeyed, raw)
    assert "Pay a vendor's bill ⟨U+001B⟩[2J⟨U+001B⟩]8;;https:pay.example" in shown, shown
    assert f"⟨U+202E⟩00.0001⟨U+202C⟩ ⟨U+0085⟩{RICH} {EMOJI}" in shown, shown


def test_a_documents_file_name_in_knowledge_ingest_is_shown_as_written(
    isolated_home: Path, tmp_path: Path
) -> None:
    name = f"{NAMED}.md"
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / name).write_text("# Payment terms\n\nVendors are paid net 30 days after the invoice date.\n")
    code, out = _cli("knowledge", "ingest", str(folder), "--store", str(tmp_path / "store"))
    assert code == 0, out
    _shown_not_obeyed(out, "knowledge ingest")
    assert "ingesting ⟨U+001B⟩[2J⟨U+001B⟩]8;;https:pay.example" in out, out
    assert f"[bold red]APPROVED {EMOJI}.md" in out, out


@pytest.mark.parametrize("shell", ["zsh", "fish"])
@pytest.mark.parametrize("line", ["taskcrew pay", "taskcrew pay-bill --v"])
def test_shell_completion_reads_a_recipes_words_as_text(recipes: Path, shell: str, line: str) -> None:
    """A shell's completion reads help as rich markup (never as ANSI): a recipe's words, "[/]" too,
    are given to it escaped, not read (a stray closing tag stopped the completion) nor obeyed."""
    from taskcrew.cli import app

    _recipe(recipes, "pay-bill", f"[/] {ATTACK}")
    env = {"_TASKCREW_COMPLETE": f"complete_{shell}", "_TYPER_COMPLETE_ARGS": line}
    if shell == "fish":
        env["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    result = CliRunner().invoke(app, [], env=env, prog_name="taskcrew")
    out = result.stdout + result.stderr
    assert result.exit_code == 0, out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "[/] ⟨U+001B⟩[2J⟨U+001B⟩]8;;https" in out and "[bold red]APPROVED" in out, out
    assert ESC not in out and RLO not in out and NEL not in out, out
