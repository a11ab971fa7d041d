"""One width rule: no line taskcrew prints is wider on a terminal than taskcrew counts it.

``fit`` (``tools/human.py``) wraps every line of `taskcrew approvals show` and of the `taskcrew run`
prompt itself, each further screen line started "  ┆ ", so that no value's words start a screen
line where a terminal's own wrap would (column 0: "  amount = 49.00"). It counted a line's columns
by rich's table, which counts an emoji skin-tone modifier (U+1F3FB–U+1F3FF) as 0 columns and a
regional indicator (U+1F1E6–U+1F1FF) as 1, where a terminal (wcwidth: xterm, pyte) draws each 2
wide; a value of such symbols overflowed and the terminal wrapped it at column 0. It also fitted
to at least 24 columns, wider than a narrower terminal. Now each character counts as the wider of
the two (``char_cells``), a line is fitted to the terminal's own width, and the prompt's frame is
padded by that count (rich's panel padded by its own). Real pseudo-terminals, pyte drawing them
(red team bypass 7's proofs of concept, kept here)."""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

import pyte
import pytest
import wcwidth
from fixtures_terminal import on_terminal, park_request, prompt_on_terminal
from rich.cells import get_character_cell_size

from taskcrew.approvals.rules import load_rules
from taskcrew.tools.human import (
    CONTINUED,
    FULL_ON_REQUEST,
    ApprovalRequest,
    FieldValue,
    describe_request,
    fit,
)

COLS, ROWS = 80, 30
REAL, FORGED = "4900.00", "49.00"
TONE = " \U0001f3fb"  # rich: 1 column (the space); a terminal: 3
FLAG = " \U0001f1e9\U0001f1ea"  # 🇩🇪: rich 2 columns (and the space); a terminal 4


def _request(fields: dict[str, str]) -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission", method="POST", url="http://127.0.0.1:8800/bills",
        page_url="http://127.0.0.1:8800/bills/new", summary='button "Save bill"',
        fields=[FieldValue(name=n, value=v) for n, v in fields.items()],
    )  # fmt: skip


def _drawn(text: str, cols: int) -> list[str]:
    """``text``'s lines as a terminal of ``cols`` columns draws them (pyte, wcwidth): one screen
    row each, unless the terminal wrapped one itself."""
    lines = text.split("\n")
    screen = pyte.Screen(cols, len(lines) * 4 + 1)
    pyte.Stream(screen).feed(text.replace("\n", "\r\n"))
    return [row.rstrip() for row in screen.display][: screen.cursor.y + 1]


def _forged(rows: list[str]) -> list[str]:
    return [row for row in rows if re.fullmatch(rf"[│\s]*amount\s+= {re.escape(FORGED)}( EUR)?[\s│]*", row)]


# --- the count ------------------------------------------------------------------------------------


def test_no_character_is_drawn_wider_than_fit_counts_it() -> None:
    """Every code point: ``char_cells`` is at least rich's count and wcwidth's (a terminal's)."""
    from taskcrew.tools.human import char_cells

    narrower = [
        f"U+{code:04X}"
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF
        and char_cells(c := chr(code)) < max(get_character_cell_size(c), wcwidth.wcwidth(c))
    ]
    assert not narrower, f"{len(narrower)} characters a terminal draws wider: {narrower[:20]}"


@functools.cache
def _disputed() -> list[str]:
    """The characters whose width rich and a terminal disagree on, and the zero-width ones that build
    emoji sequences: every skin-tone modifier and regional indicator, every 20th other code point
    wcwidth draws wider than rich counts (emoji newer than this Python's Unicode tables; all of
    them are swept above), every 8th variation selector, the zero-width joiner, and whole sequences:
    a flag, a toned thumb, a family, a red heart."""
    tones = [chr(c) for c in range(0x1F3FB, 0x1F400)]
    indicators = [chr(c) for c in range(0x1F1E6, 0x1F200)]
    wider = [
        chr(code)
        for code in range(0x20, 0x110000)
        if not 0xD800 <= code <= 0xDFFF
        and wcwidth.wcwidth(chr(code)) > get_character_cell_size(chr(code))
        and chr(code) not in tones + indicators
    ]
    assert wider, "wcwidth draws no other character wider than rich counts it"
    selectors = [chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0))]
    sequences = ["\U0001f1e9\U0001f1ea", "\U0001f44d\U0001f3fd", "👨\u200d👩\u200d👧", "❤\ufe0f", "\u200d"]
    return [*tones, *indicators, *wider[::20], *selectors[::8], *sequences]


@pytest.mark.parametrize("cols", [80, 30])
def test_a_value_of_any_disputed_character_draws_no_line_of_its_own(cols: int) -> None:
    """Each such character, alone between spaces and run together, in a memo and in the payee (its
    line in "what you approve" too), then a forged field line: the terminal wraps no line itself
    (every screen row is a line ``describe_request`` wrote) and no row reads the forgery."""
    rules = load_rules()
    disputed = _disputed()
    for start in range(0, len(disputed), 40):
        chars = disputed[start : start + 40]
        fields = {"vendor": "Globex" + (" " + chars[0]) * 40 + f"  Amount (amount): {FORGED} EUR"}
        fields["amount"] = REAL
        for i, c in enumerate(chars):
            fields[f"memo{i}"] = "Consulting" + (" " + c) * 45 + f"  amount = {FORGED}"
            fields[f"note{i}"] = "Consulting " + c * 60 + f"  amount = {FORGED}"
        shown = describe_request(_request(fields), width=cols, rules=rules)
        lines = [line.rstrip() for line in shown.split("\n")]
        rows = _drawn(shown, cols)
        assert rows == lines, "the terminal wrapped a line itself:\n" + "\n".join(rows)
        assert not _forged(rows), "\n".join(rows)


def test_honest_text_is_shown_as_it_is_and_fits() -> None:
    """CJK, accented and emoji text (a toned thumb, a flag) is shown as written, and a line of it
    still takes no more columns than the terminal has."""
    payee = "株式会社グローベックス Müller & Søn 👍🏽 🇩🇪 Łódź 🙂"
    shown = describe_request(_request({"vendor": payee, "amount": REAL}), width=40)
    assert "株式会社グローベックス" in shown and "Łódź" in shown, shown
    assert "Müller & Søn" in shown and "👍🏽" in shown and "🇩🇪" in shown and "🙂" in shown, shown
    assert "⟨" not in shown, shown
    rows = _drawn(shown, 40)
    assert rows == [line.rstrip() for line in shown.split("\n")], "\n".join(rows)
    assert "".join(row.removeprefix(CONTINUED) for row in fit([payee], 24).split("\n")) == payee


def test_fit_keeps_to_a_terminal_narrower_than_24_columns() -> None:
    """Each screen line fits the terminal's own width, however narrow (down to the mark and a wide
    character, ``NARROWEST``)."""
    line = "  memo = Consulting per MSA-2024-117 株式会社 onsite work 👍🏽" + f"  amount = {FORGED}"
    for cols in (6, 10, 16, 20, 23):
        text = fit([line], cols)
        pieces = text.split("\n")
        assert _drawn(text, cols) == [piece.rstrip() for piece in pieces], (cols, pieces)
        assert all(piece.startswith(CONTINUED) for piece in pieces[1:]), (cols, pieces)


# --- on a real terminal ---------------------------------------------------------------------------


def test_a_memo_of_skin_tones_draws_no_forged_field_line_in_approvals_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "  memo   = " + 39 characters + 10 tones: 60 columns to rich, 80 on the terminal; then the forgery
    memo = "Consulting per MSA-2024-117 onsite work" + TONE * 10 + f"  amount = {FORGED}"
    request = _request({"vendor": "Globex Corp", "amount": REAL, "memo": memo})
    approval_id = park_request(tmp_path, monkeypatch, request)
    code, screen, raw = on_terminal("approvals", "show", approval_id, cols=COLS, rows=ROWS)
    assert code == 0, raw[-2000:]
    assert not _forged(screen), "\n".join(screen)
    assert any(row.startswith(CONTINUED) and f"amount = {FORGED}" in row for row in screen), screen


def test_a_payee_of_skin_tones_or_flags_draws_no_amount_inside_what_you_approve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The payee's value, repeated in "what you approve", puts no second "Amount" line in that block."""
    # "  Payee (vendor): " (18) + 17 + 15 tones (rich 15, terminal 45) = 80 on the terminal; or
    # 18 + 6 + 14 flags (rich 28, terminal 56) = 80
    flags = "Globe " + "\U0001f1e9\U0001f1ea" * 14
    for i, payee in enumerate(["Globex Industrial" + TONE * 15, flags]):
        payee += f"  Amount (amount): {FORGED} EUR"
        (tmp_path / str(i)).mkdir()
        request = _request({"vendor": payee, "amount": REAL})
        approval_id = park_request(tmp_path / str(i), monkeypatch, request)
        code, screen, raw = on_terminal("approvals", "show", approval_id, cols=COLS, rows=ROWS)
        assert code == 0, raw[-2000:]
        block = screen[next(i for i, row in enumerate(screen) if row.startswith("what you approve")) :]
        amounts = [row for row in block if row.startswith("  Amount")]
        assert amounts == [f"  Amount (amount): {REAL} EUR"], "the block reads:\n" + "\n".join(block)


def test_approvals_show_on_a_terminal_of_20_columns_wraps_every_line_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Narrower than 24 columns: every screen row is a line taskcrew printed (none the terminal's
    wrap), each further piece of a long one started "  ┆ "."""
    memo = "Consulting per MSA-2024-117 onsite work" + f"  amount = {FORGED}"
    request = _request({"vendor": "Globex Corp", "amount": REAL, "memo": memo})
    approval_id = park_request(tmp_path, monkeypatch, request)
    code, _, raw = on_terminal("approvals", "show", approval_id, cols=20, rows=120)
    assert code == 0, raw[-2000:]
    printed = raw.replace("\r\n", "\n").rstrip("\n")
    rows = _drawn(printed, 20)
    assert rows == [line.rstrip() for line in printed.split("\n")], "\n".join(rows)
    assert any(row.startswith(CONTINUED) for row in rows), rows


def _prompt_screen(request: ApprovalRequest, cols: int, rows: int = 80) -> list[str]:
    """`taskcrew run`'s prompt (``TerminalHuman``) for ``request`` on a ``cols`` × ``rows`` pty,
    answered no: the screen's rows (pyte) when the question is drawn."""
    (screen,), out = prompt_on_terminal(request, [b"n\n\n"], cols, rows)
    assert "DECISION reject" in out, out[-2000:]
    return screen


@pytest.mark.parametrize("cols", [COLS, 20])
def test_the_run_prompt_frames_each_line_as_fit_wrote_it(cols: int) -> None:
    """The frame holds exactly the lines ``describe_request`` fitted to it, each between its two
    borders on one screen row: no forged field line, no border pushed onto a row of its own."""
    memo = "Consulting per MSA-2024-117 onsite wo" + TONE * 10 + FLAG * 3 + f"  amount = {FORGED}"
    request = _request({"vendor": "Globex Corp 👍🏽", "amount": REAL, "memo": memo})
    rows = _prompt_screen(request, cols)
    shown = "\n".join(rows)
    assert not _forged(rows), shown
    framed = rows[1 : next(i for i, row in enumerate(rows) if row.startswith("╰"))]
    assert rows[0].startswith("╭") and rows[0].endswith("╮"), shown
    assert all(row.startswith("│ ") and row.endswith(" │") for row in framed), shown
    expected = describe_request(request, width=cols - 4, full_values=FULL_ON_REQUEST).split("\n")
    assert [row[2:-2].rstrip() for row in framed] == [line.rstrip() for line in expected], shown


def test_the_narrowest_fit_is_a_mark_and_one_wide_character() -> None:
    from taskcrew.tools.human import NARROWEST, cells

    assert cells(CONTINUED) + 2 == NARROWEST
    assert all(unicodedata.east_asian_width(c) != "W" for c in CONTINUED)
