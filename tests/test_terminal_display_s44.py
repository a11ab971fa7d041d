"""What a terminal shows of an approval: no value draws a line that passes for one of the prompt's
own, and the values that decide the payment stay on screen beside the question.

A terminal wraps a long line at its width and starts the rest at column 0: a memo of plain words
could end on a line of its own reading "  amount = 49.00", indented as the prompt's field lines
are, and push the real amount off the top of the screen. ``describe_request`` (the one renderer of
`taskcrew approvals show` and of the `taskcrew run` prompt) cuts a long value (saying how many
characters more and where they are shown), wraps every line itself with each further piece started
"  ┆ ", and repeats the payee, amount, bank details and due date last. `approvals list` prints one
row an item: a parked question's line breaks are markers. Everything runs on a real pseudo-terminal
(pyte draws its screen as xterm would)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures_terminal import on_terminal, park_request, prompt_on_terminal
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.human import ApprovalRequest, FieldValue, describe_request

COLS, ROWS = 80, 24
CONTINUED = "  ┆ "  # how a further screen line of a long line starts (``human.CONTINUED``)
REAL, FORGED = "4900.00", "49.00"  # under the 5000.00 threshold: no risk flag repeats the amount
FIELDS = {"vendor": "Globex Corp", "amount": REAL}
WORDS = (
    "Services rendered per master agreement MSA-2024-117 including onsite support travel "
    "and materials as itemised in the attached statement of work for the period "
)


def _memo(prefix_len: int, width: int, rows: int = 30) -> str:
    """Plain words filling ``rows`` screen rows exactly after a prefix, then a forged field line."""
    filler = (WORDS * 40)[: width * rows - prefix_len]
    return filler[:-1] + "." + f"  amount = {FORGED}"


def _request(memo: str) -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills",
        page_url="http://127.0.0.1:8800/bills/new",
        summary='button "Save bill"',
        fields=[
            *(FieldValue(name=n, value=v) for n, v in FIELDS.items()),
            FieldValue(name="memo", value=memo),
        ],
    )


def _forged(lines: list[str], request: ApprovalRequest) -> list[str]:
    """The screen lines that read as a field line ("  name = value", a panel's border taken off)
    whose value is not the start of what that field sends."""
    sent = {f.name: f.value for f in request.fields}
    out = []
    for line in lines:
        found = re.fullmatch(r"\s*(\S+)\s+= (.*)", re.sub(r"^│|│$", "", line))
        if found and not sent.get(found.group(1), "\0").startswith(found.group(2).split("…")[0].rstrip()):
            out.append(line)
    return out


def _flat(shown: str) -> str:
    """The screen's text with each continued line joined to the one before (the panel's borders off)."""
    return " ".join(shown.replace("│", " ").replace("┆", " ").split())


def _tail_shows_what_decides(lines: list[str], last: int) -> None:
    """The values that decide the payment are among the ``last`` lines on the screen."""
    tail = "\n".join(lines[-last:])
    assert "Payee (vendor): Globex Corp" in tail, tail
    assert f"Amount (amount): {REAL}" in tail, tail


@pytest.fixture
def parked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ApprovalRequest]:
    # "  memo   = ": what the old rendering wrote before the memo (names padded to 6)
    request = _request(_memo(len("  memo   = "), COLS))
    return park_request(tmp_path, monkeypatch, request), request


def test_approvals_show_draws_no_forged_field_line_and_ends_with_what_decides(
    parked: tuple[str, ApprovalRequest],
) -> None:
    approval_id, request = parked
    code, screen, raw = on_terminal("approvals", "show", approval_id, cols=COLS, rows=ROWS)
    shown = "\n".join(screen)
    assert code == 0, raw[-2000:]
    assert not _forged(screen, request), shown
    assert f"  amount = {REAL}" in screen, shown  # the field line itself, on screen
    assert "--full` shows them all" in _flat(shown), shown  # the memo is cut, says where it is whole
    assert f"amount = {FORGED}" not in shown, shown
    _tail_shows_what_decides(screen, 6)


def test_approvals_show_full_marks_every_further_line_of_a_value(parked: tuple[str, ApprovalRequest]) -> None:
    approval_id, request = parked
    code, screen, raw = on_terminal("approvals", "show", approval_id, "--full", cols=COLS, rows=ROWS)
    shown = "\n".join(screen)
    assert code == 0, raw[-2000:]
    assert not _forged(screen, request), shown
    assert any(line.startswith(CONTINUED) and f"amount = {FORGED}" in line for line in screen), shown
    assert "more characters" not in shown, shown
    _tail_shows_what_decides(screen, 6)


def _rich_request() -> ApprovalRequest:
    """The request whose memo, as rich wrapped the prompt's panel before (by words, on its own),
    started a row with the forged field line."""
    from rich.console import Console
    from rich.panel import Panel
    from rich.text import Text

    for prefix in range(80):
        request = _request(_memo(prefix, COLS - 4))
        out = io.StringIO()
        Console(file=out, width=COLS, color_system=None).print(Panel(Text(describe_request(request))))
        if any(line.strip("│ ").strip() == f"amount = {FORGED}" for line in out.getvalue().splitlines()):
            return request
    raise AssertionError("no filler length puts the line at a row's start")


def test_the_run_prompt_draws_no_forged_field_line_and_ends_with_what_decides() -> None:
    """The `taskcrew run` prompt (TerminalHuman: a rich panel) on an 80 x 24 pty; then its full view."""
    request = _rich_request()
    # the first screen; "f" shows every value in full; then no, and no reason
    (first, full), out = prompt_on_terminal(request, [b"f\n", b"n\n\n"], COLS, ROWS)
    shown = "\n".join(first)
    assert "(n):" in shown, shown
    assert not _forged(first, request), shown
    assert "answer f to see every value in full" in _flat(shown), shown
    assert f"amount = {FORGED}" not in shown, shown
    _tail_shows_what_decides(first, 8)
    shown = "\n".join(full)
    assert not _forged(full, request), shown
    assert any(line.strip("│ ").startswith("┆") and f"amount = {FORGED}" in line for line in full), shown
    _tail_shows_what_decides(full, 8)
    assert "DECISION reject" in out, out[-2000:]


def test_an_honest_request_reads_as_before_with_what_decides_last() -> None:
    request = ApprovalRequest(
        kind="form_submission", method="POST", url="http://127.0.0.1:8800/bills",
        fields=[FieldValue(name="vendor", value="Globex Corp"), FieldValue(name="amount", value=REAL),
                FieldValue(name="iban", value="DE89370400440532013000"), FieldValue(name="due_date", value="2026-01-31")],
    )  # fmt: skip
    lines = describe_request(request, width=76, full_values="answer f").splitlines()
    assert lines[:6] == [
        "POST http://127.0.0.1:8800/bills",
        "fields that will be sent:",
        "  vendor   = Globex Corp",
        f"  amount   = {REAL}",
        "  iban     = DE89370400440532013000",
        "  due_date = 2026-01-31",
    ]
    assert lines[6] == "what you approve (repeated from above):"
    assert lines[7:] == [
        "  Payee (vendor): Globex Corp",
        f"  Amount (amount): {REAL} EUR",
        "  Bank details (iban): DE89370400440532013000",
        "  Due date (due_date): 2026-01-31",
    ]


def test_fit_wraps_by_the_cells_a_line_takes() -> None:
    """Wide characters take two columns: a line of them is cut by the columns it takes."""
    from taskcrew.tools.human import fit

    wide = "  memo = " + "株式会社" * 30
    lines = fit([wide], 40).splitlines()
    from rich.cells import cell_len

    assert all(cell_len(line) <= 40 for line in lines), lines
    assert all(line.startswith(CONTINUED) for line in lines[1:]), lines
    assert "".join(line.removeprefix(CONTINUED) for line in lines) == wide


runner = CliRunner()


def _question(jobs: Jobs, question: str) -> str:
    job = jobs.submit("Pay the Globex invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).ask(question)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return parked.value.approval_id


FORGED_ROWS = (
    "Which cost centre should I use?\n"
    "apr-000000000000  approved  job (done)  approval: POST http://127.0.0.1:8800/bills/BILL-0007/pay\n"
    "apr-000000000001  pending  job j-0  approval: POST http://127.0.0.1:8800/bills/BILL-0003/pay"
)


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Jobs]:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    j = Jobs.open(url)
    yield j
    j.close()


def test_approvals_list_prints_one_row_an_item_piped(jobs: Jobs) -> None:
    asked = _question(jobs, FORGED_ROWS)
    out = runner.invoke(app, ["approvals", "list"])
    rows = [line for line in out.output.splitlines() if line.strip()]
    assert out.exit_code == 0, out.output
    assert len(rows) == 1, out.output
    assert rows[0].startswith(f"{asked}  pending") and "⟨U+000A⟩apr-000000000000" in rows[0], out.output


def test_approvals_list_on_a_terminal_draws_no_row_of_its_own(jobs: Jobs) -> None:
    """On a terminal a row wider than it goes on on marked lines; a long question is cut."""
    asked = _question(jobs, FORGED_ROWS.replace("\n", " " * 2) + " more words" * 40)
    code, screen, raw = on_terminal("approvals", "list", cols=COLS, rows=ROWS)
    shown = "\n".join(screen)
    assert code == 0, raw[-2000:]
    assert screen[0].startswith(f"{asked}  pending"), shown
    assert all(line.startswith(CONTINUED) for line in screen[1:]), shown
    assert f"more characters: `taskcrew approvals show {asked}`" in _flat(shown), shown
