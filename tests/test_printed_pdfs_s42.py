"""Honest invoices printed to PDF by Chromium (how web invoicing tools print) read with no false
hidden-text note, while text nobody can see in them is still left out (pdfseen.py).

- CSS ``opacity`` (a grey footer), a mask: Chromium prints the part as a form XObject. Which way text
  runs is told from each character's whole matrix as pdfium draws it, the form's and the page's flip
  included; text really drawn mirrored or upside down inside such a form is still said to be so.
- A see-through "ENTWURF" stamp over a table, each cell its own text object: the characters under
  it are told apart in a few renders (groups of text objects that do not touch), not one per cell.
- A faint watermark: ink shows by the HTML reader's rule (WCAG contrast against what is under it,
  ``visibility.MIN_CONTRAST``), colour included; fainter text is left out of both readers alike.
- A gradient painted through the letters of a heading (``background-clip: text``, the text itself
  transparent): the ink in the letters' shape is theirs; transparent text with no such ink is hidden.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_hidden_text_s41 import chromium

from taskcrew.tools.documents import limits
from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.pdf import TURNED, read_pdf_pages

FIXTURES = (chromium,)  # a real Chromium for the module (test_hidden_text_s41)

INVOICE = """<!doctype html><html><head><meta charset=utf-8><style>{css}</style></head>
<body style="font-family:'DejaVu Sans';font-size:11pt">
<h2>Northwind Traders &mdash; Invoice NW-40917</h2>
<p>Invoice date: 2026-10-14<br>Due date: 2026-11-13</p>
<table><tr><td>Widgets</td><td style="text-align:right">412.50 USD</td></tr>
<tr><td><b>Total due</b></td><td style="text-align:right"><b>412.50 USD</b></td></tr></table>
<p style="{footer}">Thank you for your business. Northwind Traders Ltd, 1 Harbour St, Seattle.</p>
{extra}</body></html>"""

ROWS = "".join(
    f"<tr><td>{i + 1}</td><td>Consulting hours, week {i + 1}</td><td class=n>8</td>"
    f"<td class=n>115,00&nbsp;€</td><td class=n>920,00&nbsp;€</td></tr>"
    for i in range(30)
)
TABLE = """<!doctype html><html><head><meta charset=utf-8><style>
body {{ font-family:'DejaVu Sans'; font-size:10pt; }}
table {{ width:100%; border-collapse:collapse; }} td {{ padding:3px 6px; border-bottom:1px solid #ddd; }}
.n {{ text-align:right; }}
.stamp {{ position:absolute; top:70mm; left:40mm; transform:rotate(-25deg); font-size:64pt;
          color:{colour}; border:6px solid {colour}; padding:4mm; }}
</style></head><body>
<h1>Rechnung RE-2026-0042</h1><p>Muster Beratung GmbH &middot; Fällig am 28.10.2026</p>
<table>{rows}<tr><td></td><td><b>Gesamtbetrag</b></td><td></td><td></td><td class=n><b>27.600,00&nbsp;€</b></td></tr></table>
{extra}<div class=stamp>ENTWURF</div></body></html>"""


def _printed(page: Any, html: str) -> Any:
    page.set_content(html)
    data = page.pdf(format="A4", print_background=True)
    limits.start_parse()
    [read] = read_pdf_pages(data, "invoice.pdf")
    return read


# -- which way text runs: forms (opacity, masks) ----------------------------------------------------
@pytest.mark.browser
@pytest.mark.parametrize(
    "footer",
    ["opacity:.7", "opacity:.99", "-webkit-mask-image:linear-gradient(#000,#000)"],
    ids=["opacity", "opacity .99", "mask"],
)
def test_a_footer_printed_as_a_form_is_not_called_mirrored(chromium: Any, footer: str) -> None:
    page = _printed(chromium, INVOICE.format(css="", footer=footer, extra=""))
    assert "Thank you for your business" in page.text and "412.50 USD" in page.text, page.text
    assert page.hidden_text is None, page.hidden_text


@pytest.mark.browser
@pytest.mark.parametrize("turn", ["scaleX(-1)", "rotate(180deg)"], ids=["mirrored", "upside down"])
def test_a_value_turned_over_inside_a_see_through_part_is_still_noted(chromium: Any, turn: str) -> None:
    extra = (
        f"<p style='opacity:.8'>Amount: <span style='display:inline-block;transform:{turn}'>619.50</span></p>"
    )
    page = _printed(chromium, INVOICE.format(css="", footer="", extra=extra))
    assert page.hidden_text is not None and TURNED in page.hidden_text, page.hidden_text


# -- a see-through stamp over a table ---------------------------------------------------------------
@pytest.mark.browser
@pytest.mark.parametrize("colour", ["rgba(200,0,0,.5)", "rgba(200,0,0,.15)"], ids=["half", "light"])
def test_a_see_through_stamp_over_a_table_is_read_without_a_note(chromium: Any, colour: str) -> None:
    page = _printed(chromium, TABLE.format(colour=colour, rows=ROWS, extra=""))
    assert "ENTWURF" in page.text and "27.600,00\xa0€" in page.text, page.text
    assert page.text.count("920,00") == 30, page.text
    assert page.hidden_text is None, page.hidden_text


@pytest.mark.browser
def test_a_value_under_an_opaque_box_is_still_left_out_under_a_see_through_stamp(chromium: Any) -> None:
    box = "position:absolute;top:95mm;left:60mm;font-size:10pt"
    extra = (
        f"<div style='{box}'>Bank account DE99 9999 9999</div>"
        f"<div style='{box};width:80mm;height:8mm;background:#fff;margin:-2mm'></div>"
    )
    page = _printed(chromium, TABLE.format(colour="rgba(200,0,0,.3)", rows=ROWS, extra=extra))
    assert "DE99" not in page.text and "ENTWURF" in page.text, page.text
    assert page.hidden_text is not None and "nobody can see" in page.hidden_text, page.hidden_text


# -- faint ink: one rule for HTML and PDF -----------------------------------------------------------
@pytest.mark.browser
def test_a_faint_watermark_the_html_reader_keeps_is_kept_in_the_pdf(chromium: Any) -> None:
    html = TABLE.format(colour="rgba(200,0,0,.12)", rows=ROWS, extra="")  # WCAG contrast ~1.24
    assert "ENTWURF" in html_to_text(html)
    page = _printed(chromium, html)
    assert "ENTWURF" in page.text and "27.600,00\xa0€" in page.text, page.text
    assert page.hidden_text is None, page.hidden_text


@pytest.mark.browser
@pytest.mark.parametrize(
    "colour",
    ["#f4f4f4", "#ffff00", "rgba(0,0,0,.01)"],
    ids=["near-white grey", "yellow on white", "1% black"],
)
def test_text_fainter_than_the_html_rule_is_left_out_of_the_pdf_too(chromium: Any, colour: str) -> None:
    extra = f"<p style='color:{colour}'>Pay to DE99 9999 9999</p>"  # WCAG contrast under 1.2
    html = INVOICE.format(css="", footer="", extra=extra)
    assert "DE99" not in html_to_text(html)
    page = _printed(chromium, html)
    assert "DE99" not in page.text and "412.50 USD" in page.text, page.text
    assert page.hidden_text is not None and "nobody can see" in page.hidden_text, page.hidden_text


# -- a gradient painted through the letters ---------------------------------------------------------
GRADIENT = "background:linear-gradient(90deg,#06c,#0a4);-webkit-background-clip:text;background-clip:text"


@pytest.mark.browser
def test_a_gradient_heading_is_read_in_the_printed_pdf(chromium: Any) -> None:
    html = INVOICE.format(css=f"h2{{{GRADIENT};color:transparent}}", footer="", extra="")
    assert "Invoice NW-40917" in html_to_text(html)
    page = _printed(chromium, html)
    assert "Northwind Traders — Invoice NW-40917" in page.text, (page.text, page.hidden_text)
    assert page.hidden_text is None, page.hidden_text


@pytest.mark.browser
@pytest.mark.parametrize(
    "style",
    [
        "color:transparent",
        "color:transparent;background:linear-gradient(90deg,#06c,#0a4)",
        "color:transparent;display:inline-block;font-size:30pt;background:linear-gradient(90deg,#000 50%,#fff 50%)",
        "color:transparent;font-size:20pt;background:repeating-linear-gradient(90deg,#000 0 2px,#fff 2px 6px)",
    ],
    ids=["transparent", "transparent over a gradient", "over half black", "over stripes"],
)
def test_transparent_text_with_no_ink_in_its_letters_is_still_left_out(chromium: Any, style: str) -> None:
    extra = f"<p style='{style}'>Pay to DE99 9999 9999</p>"
    page = _printed(chromium, INVOICE.format(css="", footer="", extra=extra))
    assert "DE99" not in page.text and "412.50 USD" in page.text, page.text
    assert page.hidden_text is not None and "nobody can see" in page.hidden_text, page.hidden_text
