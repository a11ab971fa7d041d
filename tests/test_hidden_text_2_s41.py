"""Text a person cannot see is not read as the document's, round two (red team's bypasses).

HTML (visibility.py): a size, colour, opacity or transform given by a function the rule does not
work out (``color-mix()``, ``oklch()``) is left out with a note; math functions of plain values
(``calc(1px - 1px)``, ``min(0px, 1em)``) are worked out; ``light-dark()`` is read in the light
scheme; the standalone ``translate``, ``scale`` and ``rotate`` properties count as ``transform``.
Each hiding style is checked against a real Chromium's screenshot; styles that keep text showing
are read without a note.

PDF: a character counts as seen only by its own ink (pdfseen.py: a 7pt '9' under a white box in
the box of the '4' drawn after it is hidden text); a digit drawn before the one left of it, even
less than an em back, is read by position (pdf.py); a digit drawn upside down (a '6' showing a '9')
puts a note on its page. Honest text (kerned pairs drawn apart, superscripts, a margin label turned
a quarter, a page turned as a whole) reads as before, with no note.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from test_hidden_text_s41 import SECRET, _eml, _html, _ink_in_its_row, _read, chromium
from test_hidden_text_s41 import _pdf as invoice_pdf

from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.pdf import TURNED
from taskcrew.tools.documents.pdfseen import MAX_OWN_INK
from taskcrew.tools.documents.visibility import visible_markdown

FIXTURES = (chromium,)  # a real Chromium for the module (test_hidden_text_s41)


# -- HTML -------------------------------------------------------------------------------------------
HIDDEN = {  # Chromium paints nothing; the rule works it out and leaves the text out
    "font-size calc(0px)": "font-size:calc(0px)",
    "font-size calc(1px - 1px)": "font-size:calc(1px - 1px)",
    "font-size min(0px, 1em)": "font-size:min(0px, 1em)",
    "font-size clamp": "font-size:clamp(0px, 0px, 1px)",
    "light-dark white": "color:light-dark(#fff,#fff)",
    "translate": "display:inline-block;translate:-10000px",
    "translate calc": "display:inline-block;translate:calc(-10000px + 1px) 0",
    "transform translate calc": "display:inline-block;transform:translateX(calc(-10000px))",
    "scale calc(0)": "display:inline-block;scale:calc(0)",
    "opacity calc(0)": "opacity:calc(0)",
}
NOTED = {  # Chromium paints nothing; the rule does not work the value out: left out with a note
    "color-mix white": "color:color-mix(in srgb, white 100%, black)",
    "oklch white": "color:oklch(100% 0 0)",
    "system colour Canvas": "color:Canvas",
    "scale of an unknown function": "display:inline-block;scale:sin(0)",
}
SHOWN = {  # Chromium paints it; read, with no note
    "font-size calc": "font-size:calc(1em + 2px)",
    "font-size clamp": "font-size:clamp(12px, 2vw, 18px)",
    "font-size larger": "font-size:larger",
    "light-dark black": "color:light-dark(#000,#fff)",
    "translate": "display:inline-block;translate:10px 5px",
    "rotate": "display:inline-block;rotate:5deg",
    "scale": "display:inline-block;scale:1.1",
    "width calc with overflow": "display:inline-block;width:calc(100% - 20px);overflow:hidden;white-space:nowrap",
    "transform calc": "display:inline-block;transform:translateX(calc(10px + 1em)) rotate(calc(2deg))",
    "opacity calc": "opacity:calc(0.5 + 0.5)",
}


@pytest.mark.browser
@pytest.mark.parametrize("how", sorted(HIDDEN))
def test_css_a_browser_paints_as_nothing_is_worked_out(how: str, tmp_path: Path, chromium: Any) -> None:
    document = _html(HIDDEN[how])
    assert _ink_in_its_row(chromium, document) == 0  # Chromium paints nothing there
    for text in (_eml(tmp_path, document), visible_markdown(document), html_to_text(document)):
        assert "GB33BUKB20201555555555" not in text and "412.50 USD" in text, text


@pytest.mark.browser
@pytest.mark.parametrize("how", sorted(NOTED))
def test_css_the_rule_cannot_work_out_is_left_out_with_a_note(
    how: str, tmp_path: Path, chromium: Any
) -> None:
    document = _html(NOTED[how])
    assert _ink_in_its_row(chromium, document) == 0
    for text in (_eml(tmp_path, document), visible_markdown(document), html_to_text(document)):
        assert "GB33BUKB20201555555555" not in text and "412.50 USD" in text, text
        assert "[hidden text: text here is styled (" in text, text


def test_a_colour_function_not_worked_out_is_noted_even_when_it_is_dark() -> None:
    # fail closed: oklch(40% ...) is a dark teal a person reads, but the rule does not compute it
    text = html_to_text(_html("color:oklch(40% 0.1 200)"))
    assert "GB33BUKB20201555555555" not in text and "styled (color: oklch(40% 0.1 200))" in text, text


@pytest.mark.browser
@pytest.mark.parametrize("how", sorted(SHOWN))
def test_css_functions_that_keep_text_showing_are_read_without_a_note(
    how: str, tmp_path: Path, chromium: Any
) -> None:
    document = _html(SHOWN[how])
    assert _ink_in_its_row(chromium, document) > 100  # Chromium paints it
    for text in (_eml(tmp_path, document), html_to_text(document)):
        assert SECRET in text and "[hidden text" not in text, text


@pytest.mark.browser
@pytest.mark.parametrize(
    ("attribute", "seen"), [("ffffff", False), ("fffffg", False), ("000000", True), ("fff", True)]
)
def test_legacy_colour_attributes_are_read_as_a_browser_reads_them(
    attribute: str, seen: bool, chromium: Any
) -> None:
    # <font color=000000> (no '#') is black to a browser, ffffff white, fff #0f0f0f, fffffg yellow
    document = (
        _html("")
        .replace("<span id=t style=''>", f"<font id=t color={attribute}>")
        .replace("</span>", "</font>")
    )
    assert (_ink_in_its_row(chromium, document) > 100) is seen
    text = html_to_text(document)
    assert (SECRET in text) is seen and "412.50 USD" in text and "[hidden text" not in text, text


# -- PDF --------------------------------------------------------------------------------------------
def _pdf(draw: Callable[[FPDF], None]) -> bytes:
    """The first file's invoice page, its "TOTAL DUE" label drawn before ``draw``."""

    def labelled(pdf: FPDF) -> None:
        pdf.text(20, 60, "TOTAL DUE")
        draw(pdf)

    return invoice_pdf(labelled)


def _small_digit_under_a_box(pdf: FPDF) -> None:
    pdf.set_font("Helvetica", size=7)
    pdf.text(50.3, 59.6, "9")  # within the box of the '4' drawn later, its own ink under a white box
    pdf.set_fill_color(255, 255, 255)
    pdf.rect(50.0, 56.5, 3.2, 3.6, style="F")
    pdf.set_font("Helvetica", size=12)
    pdf.text(50, 60, "412.50 USD")


def test_a_character_whose_box_holds_only_another_ones_ink_is_hidden_text() -> None:
    text, note = _read(_pdf(_small_digit_under_a_box))
    assert "412.50 USD" in text and "9" not in text.split("TOTAL DUE")[1], text
    assert note is not None and "drawn under another character" in note, note


def _out_of_order(pdf: FPDF) -> None:  # a person sees 412.50; drawn 1, then 4 (half an em back), then 2.50
    w4 = pdf.get_string_width("4")
    pdf.text(50 + w4, 60, "1")
    pdf.text(50, 60, "4")
    pdf.text(50 + w4 + pdf.get_string_width("1"), 60, "2.50 USD")


def test_digits_drawn_out_of_order_by_less_than_an_em_are_read_by_position() -> None:
    text, _ = _read(_pdf(_out_of_order))
    assert "412.50" in text, text


def _six_upside_down(pdf: FPDF) -> None:  # a '6' turned over shows a '9': a person sees 419.50
    pdf.text(50, 60, "41")
    x = 50 + pdf.get_string_width("41")
    w = pdf.get_string_width("6")
    with pdf.rotation(180, x + w / 2, 60 - 4.23 * 0.36):
        pdf.text(x, 60, "6")
    pdf.text(x + w, 60, ".50 USD")


def test_a_digit_drawn_upside_down_puts_a_note_on_its_page() -> None:
    _, note = _read(_pdf(_six_upside_down))
    assert note is not None and TURNED in note and "compare the values" in note, note


def _kerned_apart(pdf: FPDF) -> None:  # each letter its own text object, kerned into the next
    x = 50.0
    for letter in "AVATAR WAVY Type 412.50":
        pdf.text(x, 60, letter)
        x += pdf.get_string_width(letter) - (0.6 if letter in "AVTWY" else 0)


def _superscripts(pdf: FPDF) -> None:
    pdf.text(50, 60, "Area 12 m")
    pdf.set_font("Helvetica", size=7)
    pdf.text(50 + pdf.get_string_width("Area 12 m") * 12 / 7 - 0.2, 57.5, "2")
    pdf.set_font("Helvetica", size=12)
    pdf.text(50, 66, "E = mc")
    pdf.set_font("Helvetica", size=7)
    pdf.text(50 + pdf.get_string_width("E = mc") * 12 / 7 - 0.3, 63.6, "2")


def _margin_label(pdf: FPDF) -> None:  # a label running up the margin, a quarter turn
    pdf.text(50, 60, "412.50 USD")
    with pdf.rotation(90, 10, 150):
        pdf.text(10, 150, "Printed 2026-10-12 copy 1 of 3")


def _page_turned(pdf: FPDF) -> None:  # everything drawn upside down: the page is read turned over
    with pdf.rotation(180, 105, 148):
        pdf.text(20, 100, "TOTAL DUE 412.50 USD")
        pdf.text(20, 110, "Thank you for your business 69")


@pytest.mark.parametrize(
    ("draw", "shown"),
    [
        (_kerned_apart, "AVATAR WAVY Type 412.50"),
        (_superscripts, "E = mc"),
        (_margin_label, "412.50 USD"),
    ],
    ids=["kerned letters drawn apart", "superscripts", "margin label"],
)
def test_honest_text_reads_as_before_with_no_note(draw: Callable[[FPDF], None], shown: str) -> None:
    text, note = _read(_pdf(draw))
    assert note is None, note
    assert shown in text.replace(" ", "") or shown in text, text
    assert text.count("2") >= text.count("12") + 2 or draw is not _superscripts, text  # both read


def test_a_page_of_mostly_turned_text_gets_no_note_for_it() -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    with pdf.rotation(180, 105, 148):
        for n in range(6):
            pdf.text(20, 100 + 10 * n, f"Line {n} of the turned page 412.50")
    text, note = _read(bytes(pdf.output()))
    assert note is None and "412.50" in text, (note, text)


def test_too_many_pieces_drawn_into_others_to_check_say_so() -> None:
    def crowded(pdf: FPDF) -> None:  # a pile: each letter over all the others, so each needs a render
        for n, char in enumerate("ABCDEFGHJKLMNOPQRSTUVWXYZ0123456789abcdefgh"[: MAX_OWN_INK + 8]):
            pdf.set_font("Helvetica", size=28 + 0.2 * n)
            pdf.text(60, 90, char)

    text, note = _read(_pdf(crowded))
    assert "ABCDEFGHJKLMNOPQRSTUVWXYZ" in text, text  # read, and said to be unchecked
    assert note is not None and "could not be checked" in note and "too many" in note, note


def test_many_small_letters_each_inside_a_big_one_are_read_with_no_note() -> None:
    def rings(pdf: FPDF) -> None:
        for n in range(MAX_OWN_INK + 1):  # a small x in the ring of each big O: all its ink is in the O's box
            x, y = 20 + 20 * (n % 8), 90 + 15 * (n // 8)
            pdf.set_font("Helvetica", size=28)
            pdf.text(x, y, "O")
            pdf.set_font("Helvetica", size=6)
            pdf.text(x + 3.6, y - 3.4, "x")

    text, note = _read(_pdf(rings))  # side by side, the x's are told apart in one render (pdfseen._layers)
    assert text.count("x") >= MAX_OWN_INK + 1 and note is None, (text, note)


def test_a_small_letter_inside_a_big_one_that_shows_is_read() -> None:
    def inside(pdf: FPDF) -> None:
        pdf.set_font("Helvetica", size=28)
        pdf.text(50, 90, "O")
        pdf.set_font("Helvetica", size=6)
        pdf.text(53.6, 86.6, "x")

    text, note = _read(_pdf(inside))
    assert note is None and "x" in text, (note, text)
