"""Honest documents read fully and without a false "hidden text … may have been altered" note.

PDF (pdfseen.py): a different character under another is hidden only when its own ink does not
show (the page painted without its text object changes nothing in its box), not by the draw order:
an X ticked in a box, a description running into the next column, a form filled over its grey
placeholder and a see-through stamp over the page keep every character. Outlined lettering (white
fill, black stroke; or a fill copy and a stroke copy pdfium lists once) is seen by its stroke.

HTML (visibility.py): CSS Chromium paints (checked on a real Chromium screenshot) is read: 3D
transforms whose flat shape is worked out (the perspective()/translateZ(0) button trick, rotateY(0),
an identity matrix3d), a mild brightness()/contrast(), a multiply banner on a light page; a
``<style>`` in an HTML comment (Outlook's ``<!--[if mso]>``) is not applied, as browsers do not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from fpdf.enums import TextMode
from test_hidden_text_s41 import _eml, _ink_in_its_row, chromium

from taskcrew.tools.documents import limits
from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.pdf import read_pdf_pages

FIXTURES = (chromium,)  # a real Chromium for the module (test_hidden_text_s41)
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


# -- PDF ----------------------------------------------------------------------------------------------
def _pdf() -> FPDF:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 20, "ACME GmbH  INVOICE INV-2057")
    return pdf


def _read(pdf: FPDF) -> tuple[str, str | None]:
    limits.start_parse()
    [page] = read_pdf_pages(bytes(pdf.output()), "invoice.pdf")
    return page.text, page.hidden_text


def test_a_box_ticked_with_an_x_keeps_both_boxes() -> None:
    if not Path(DEJAVU).exists():
        pytest.skip("no DejaVu font for the ballot box")
    pdf = _pdf()
    pdf.add_font("DV", "", DEJAVU)
    pdf.set_font("DV", size=12)
    pdf.text(20, 60, "Payment: \u2610 Cheque   \u2610 Bank transfer")
    pdf.text(20 + pdf.get_string_width("Payment: \u2610 Cheque   ") + 0.6, 60, "X")
    pdf.text(20, 70, "Total due: 1,284.50 USD")
    text, note = _read(pdf)
    assert note is None, (note, text)
    assert text.count("\u2610") == 2 and "X" in text, text


ROWS = [
    ("Consulting services, October 2026 (on site)", "12", "95.00", "1,140.00"),
    ("Travel expenses Frankfurt - Berlin return", "1", "144.50", "144.50"),
]


def test_a_description_running_into_the_next_column_is_read_whole() -> None:
    pdf = _pdf()  # fpdf2's cell() does not clip: the description runs into the Qty column
    pdf.set_y(50)
    pdf.set_font("Helvetica", size=10)
    for row in ROWS:
        pdf.cell(50, 6, row[0])
        pdf.cell(15, 6, row[1], align="R")
        pdf.cell(25, 6, row[2], align="R")
        pdf.cell(30, 6, row[3], align="R", new_x="LMARGIN", new_y="NEXT")
    text, note = _read(pdf)
    assert note is None, (note, text)
    assert "(on site)" in text, text


def test_a_quantity_under_a_description_drawn_after_it_is_kept() -> None:
    pdf = _pdf()  # the figures drawn first, the descriptions after (column by column)
    pdf.set_font("Helvetica", size=10)
    for i, row in enumerate(ROWS):
        pdf.text(80, 60 + 6 * i, row[1])
        pdf.text(100, 60 + 6 * i, row[2])
        pdf.text(130, 60 + 6 * i, row[3])
    for i, row in enumerate(ROWS):
        pdf.text(20, 60 + 6 * i, row[0])
    text, note = _read(pdf)
    assert "1 144.50 144.50" in text, (note, text)
    assert note is None, note


def test_a_form_filled_over_its_grey_placeholder_keeps_both() -> None:
    pdf = _pdf()
    pdf.set_font("Helvetica", size=11)
    for y, label, placeholder, value in ((40, "Rechnungsdatum:", "TT.MM.JJJJ", "14.10.2026"),
                                         (50, "Betrag:", "0,00 EUR", "1.284,50 EUR")):  # fmt: skip
        pdf.set_text_color(0, 0, 0)
        pdf.text(20, y, label)
        pdf.set_text_color(170, 170, 170)
        pdf.text(60, y, placeholder)
        pdf.set_text_color(0, 0, 0)
        pdf.text(60, y, value)
    text, note = _read(pdf)
    assert note is None, (note, text)
    assert "TT.MM.JJJJ" in text and "14.10.2026" in text and "1.284,50 EUR" in text, text


@pytest.mark.parametrize("two_objects", [False, True], ids=["fill and stroke", "a fill then a stroke copy"])
def test_outlined_lettering_white_fill_black_stroke_is_read(two_objects: bool) -> None:
    pdf = _pdf()
    pdf.set_font("Helvetica", "B", 20)
    pdf.set_text_color(255, 255, 255)
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.3)
    if two_objects:  # as Chromium prints -webkit-text-stroke
        pdf.text(20, 40, "AMOUNT DUE 1,284.50 USD")
        pdf.text_mode = TextMode.STROKE
    else:
        pdf.text_mode = TextMode.FILL_STROKE
    pdf.text(20, 40, "AMOUNT DUE 1,284.50 USD")
    text, note = _read(pdf)
    assert "AMOUNT DUE 1,284.50 USD" in text and note is None, (note, text)


@pytest.mark.parametrize("how", ["25% red", "opaque light grey"])
def test_a_see_through_stamp_over_the_page_keeps_the_amounts(how: str) -> None:
    pdf = _pdf()
    pdf.set_font("Helvetica", size=10)
    rows = [("Widget Pro", "2", "500.00", "1,000.00"), ("Shipping", "1", "50.00", "50.00"),
            ("VAT", "", "", "234.50"), ("Total due", "", "", "1,284.50 USD")]  # fmt: skip
    for i, row in enumerate(rows):
        for x, cell in zip((20, 90, 110, 140), row, strict=True):
            pdf.text(x, 40 + 6 * i, cell)
    if how == "25% red":
        pdf.set_text_color(200, 0, 0)
        opacity = 0.25
    else:
        pdf.set_text_color(225, 225, 225)
        opacity = 1.0
    with pdf.local_context(fill_opacity=opacity):
        for j in range(12):
            pdf.text(10 + (j % 3) * 2, 30 + j * 4, "COPY  " * 16)
    text, note = _read(pdf)
    assert "Shipping 1 50.00 50.00" in text and "Total due 1,284.50 USD" in text, (note, text)


def test_a_different_digit_typed_in_another_ones_place_is_still_hidden_text() -> None:
    pdf = _pdf()  # the forgery the rule is for: one colour, one origin, one size
    pdf.text(20, 60, "TOTAL DUE")
    pdf.text(50, 60, "9")
    pdf.text(50, 60, "412.50 USD")
    text, note = _read(pdf)
    assert "TOTAL DUE 412.50 USD" in text and "9412" not in text, text
    assert note is not None and "drawn under another character" in note, note


# -- HTML -----------------------------------------------------------------------------------------------
TOTAL = "Invoice INV-2057 total due 1,284.50 USD"


def _mail(style: str) -> str:
    return (
        "<html><body style='background:#fff;color:#000;margin:20px'>"
        "<p>Dear Acme, thank you for your business.</p>"
        f"<p><span id=t style='{style}'>{TOTAL}</span></p><p>Kind regards, Northwind</p></body></html>"
    )


PAINTED = {
    "button hack perspective(1px) translateZ(0)": "display:inline-block;transform:perspective(1px) translateZ(0)",
    "translateZ(1px)": "display:inline-block;transform:translateZ(1px)",
    "rotateY(0deg)": "display:inline-block;transform:rotateY(0deg)",
    "rotateX(30deg)": "display:inline-block;transform:rotateX(30deg)",
    "identity matrix3d": "display:inline-block;transform:matrix3d(1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1)",
    "banner mix-blend-mode multiply": "background:#ffe9a8;mix-blend-mode:multiply",
    "mix-blend-mode darken": "mix-blend-mode:darken",
    "brightness(0.95)": "filter:brightness(0.95)",
    "contrast(105%)": "filter:contrast(105%)",
}  # fmt: skip
HIDDEN = {
    "rotateY(89.9deg)": "display:inline-block;transform:rotateY(89.9deg)",
    "perspective behind the eye": "display:inline-block;transform:perspective(10px) translateZ(20px)",
    "brightness(10)": "color:#333;filter:brightness(10)",
    "contrast(0.1)": "filter:contrast(0.1)",
    "screen": "mix-blend-mode:screen",
}


@pytest.mark.parametrize("how", sorted(PAINTED))
def test_css_chromium_paints_is_read_without_a_note(how: str, tmp_path: Path, chromium: Any) -> None:
    document = _mail(PAINTED[how])
    assert _ink_in_its_row(chromium, document) > 100  # Chromium paints it
    text = _eml(tmp_path, document)
    assert "1,284.50 USD" in text and "[hidden text" not in text, text


@pytest.mark.parametrize("how", sorted(HIDDEN))
def test_css_that_can_hide_text_keeps_its_note(how: str, tmp_path: Path) -> None:
    text = _eml(tmp_path, _mail(HIDDEN[how]))
    assert "1,284.50" not in text and "[hidden text" in text, text


def test_a_multiply_blend_on_a_dark_backdrop_keeps_its_note(tmp_path: Path) -> None:
    document = (
        "<html><body style='background:#000;color:#fff;margin:20px'><p>Dear Acme,</p>"
        f"<p><span style='background:#fff;color:#000;mix-blend-mode:multiply'>{TOTAL}</span></p></body></html>"
    )
    text = _eml(tmp_path, document)
    assert "1,284.50" not in text and "[hidden text" in text, text


def test_a_style_sheet_in_an_outlook_comment_is_not_applied(chromium: Any) -> None:
    document = (
        "<html><head><!--[if mso]><style>.ol{display:none}</style><![endif]--></head>"
        f"<body style='background:#fff;color:#000;margin:20px'><p><span id=t class=ol>{TOTAL}</span></p>"
        "</body></html>"
    )
    assert _ink_in_its_row(chromium, document) > 100  # a browser (not Outlook) paints it
    assert "1,284.50 USD" in html_to_text(document), html_to_text(document)
