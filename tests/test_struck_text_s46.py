"""Struck-through text and annotations a viewer paints are read as a person sees them.

A corrected invoice strikes through the old total and prints the valid one below; a PDF viewer paints
a "VOID - DUPLICATE, DO NOT PAY" box or stamp over a page. A person sees the old total cancelled and
the box; the reader handed the model the old total as a plain line and the box not at all.

- HTML (visibility.py): text under ``<s>``, ``<strike>``, ``<del>`` or CSS ``text-decoration:
  line-through`` (a ``style``, a style sheet's class; inherited, as a child cannot take a
  decoration off) is written ``[struck through: …]`` where it stands, one mark per run on a line.
- PDF (pdfseen.py): a thin stroked or filled line across the middle of upright glyphs (fpdf's strike
  style, Chromium printing ``<s>``, a line drawn over a figure) or a StrikeOut annotation marks
  them the same way; an underline, an overline, a table's rules and a white line do not.
- PDF (pdf.py): FreeText boxes, stamps and notes a viewer shows are read in a mark
  (``[annotation: …]``); hidden, NoView or off-page ones are not.

Real PDFs (fpdf2, pdfium, Chromium) and real e-mails through the real reader; no model is involved.
"""

from __future__ import annotations

import ctypes
import email
import io
import re
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from test_hidden_text_s41 import chromium

from taskcrew.sandbox.ground_truth import SANDBOX_DIR
from taskcrew.tools.documents import SandboxFiles, limits, pdfseen, visibility
from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.models import Unreadable
from taskcrew.tools.documents.pdf import read_pdf_pages
from taskcrew.tools.documents.visibility import visible_markdown

FIXTURES = (chromium,)  # a real Chromium for the module (test_hidden_text_s41)
STRUCK = "Total due 1,250.00 USD"
VALID = "Total due 1,150.00 USD"
STRUCK_RUN = re.compile(r"\[struck through: [^\[\]\n]*\]")  # a struck run, as visibility.STRUCK_RUN


def _plain_lines(text: str, value: str = "1,250.00") -> list[str]:
    """The lines that show ``value`` outside a struck mark."""
    return [line for line in text.splitlines() if value in STRUCK_RUN.sub(" ", line)]


def _read(data: bytes) -> str:
    limits.start_parse()
    [page] = read_pdf_pages(data, "invoice.pdf", ocr=False)
    assert page.hidden_text is None, page.hidden_text
    return page.text


# -- HTML -----------------------------------------------------------------------------------------------
def _mail(path: Path, body: str) -> None:
    m = EmailMessage()
    m["From"] = "Northwind Traders Billing <billing@northwind.example>"
    m["To"] = "ap@acme-corp.example"
    m["Subject"] = "Invoice NW-40919 (corrected)"
    m.set_content("Please see the HTML version.")
    m.add_alternative(f"<html><head><style>.old {{ text-decoration: underline line-through }}</style></head>"
                      f"<body><p>Invoice NW-40919</p>{body}<p>Total due: USD 1,150.00</p></body></html>",
                      subtype="html")  # fmt: skip
    path.write_bytes(bytes(m))


@pytest.mark.parametrize(
    "body",
    [
        "<p>Total due: <s>USD 1,250.00</s></p>",
        "<p>Total due: <strike>USD 1,250.00</strike></p>",
        "<p>Total due: <del>USD 1,250.00</del></p>",
        "<p>Total due: <span style='text-decoration: line-through'>USD 1,250.00</span></p>",
        "<p>Total due: <span style='text-decoration-line: line-through'>USD 1,250.00</span></p>",
        "<p>Total due: <span class=old>USD 1,250.00</span></p>",
        "<div style='text-decoration:line-through'><p>Total due:</p><p>USD <b style='text-decoration:none'>1,250.00</b></p></div>",
        "<table><tr><td>Total due</td><td><del>USD 1,250.00</del></td><td>USD 1,150.00</td></tr></table>",
    ],
)  # fmt: skip
def test_struck_html_is_marked_where_it_stands(tmp_path: Path, body: str) -> None:
    _mail(tmp_path / "corrected.eml", body)
    text = SandboxFiles(tmp_path).read("corrected.eml").render()  # the e-mail as the file reader reads it
    struck = [line for line in text.splitlines() if "1,250.00" in line]
    assert struck and not _plain_lines(text), text
    assert any("[struck through: " in line and "1,250.00]" in line for line in struck), text
    assert "Total due: USD 1,150.00" in text, text  # the valid total stays plain


def test_a_struck_run_is_one_mark_across_inline_tags_and_closes_at_each_block() -> None:
    text = html_to_text(
        "<p>Total due: <del>USD <b>1,250.00</b></del> now USD 1,150.00</p>"
        "<p><s>old<br>prices</s></p><ul><li><s>item one</s><li>item two</ul>"
    )
    assert "Total due: [struck through: USD 1,250.00] now USD 1,150.00" in text, text
    assert "[struck through: old]\n[struck through: prices]" in text, text
    assert "- [struck through: item one]\n- item two" in text, text


@pytest.mark.parametrize(
    "body",
    [
        "<del style='text-decoration:none'>USD 1,250.00</del>",
        "<u>USD 1,250.00</u>",
        "<ins>USD 1,250.00</ins>",
        "<span style='text-decoration: underline overline'>USD 1,250.00</span>",
        "<span style='color:red'>USD 1,250.00</span>",
    ],
)
def test_html_not_struck_is_not_marked(body: str) -> None:
    text = html_to_text(f"<p>Total due: {body}</p>")
    assert text == "Total due: USD 1,250.00", text


def test_brackets_in_struck_text_do_not_close_the_mark() -> None:
    text = html_to_text("<p>Total <s>[old] 1,250.00] USD</s> 1,150.00</p>")
    assert text == "Total [struck through: (old) 1,250.00) USD] 1,150.00", text
    assert visibility.STRUCK_RUN.sub("", text) == "Total  1,150.00"


def test_markdown_raw_html_struck_text_is_marked_on_each_line() -> None:
    text = visible_markdown("Total due:\n<del>USD 1,250.00\nUSD 1,240.00</del> USD 1,150.00\nplain 9.00")
    lines = text.splitlines()
    assert "[struck through: USD 1,250.00]" in lines[1], text
    assert "[struck through: USD 1,240.00" in lines[2] and lines[2].endswith("] USD 1,150.00"), text
    assert lines[3] == "plain 9.00", text


# -- PDF: lines through text ----------------------------------------------------------------------------
def _invoice(draw: Any) -> bytes:
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in ["NORTHWIND TRADERS   INVOICE (corrected copy)", "Invoice No. NW-40919"]:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    draw(pdf)
    pdf.set_font("Helvetica", size=12)
    pdf.cell(0, 10, VALID, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _strike_style(pdf: FPDF) -> None:
    pdf.set_font("Helvetica", style="S", size=12)
    pdf.cell(0, 10, STRUCK, new_x="LMARGIN", new_y="NEXT")


def _line_over(pdf: FPDF) -> None:  # a red pen stroke through the figure only
    y = pdf.get_y() + 5
    pdf.text(pdf.l_margin, y, STRUCK)
    left = pdf.l_margin + pdf.get_string_width("Total due ")
    pdf.set_draw_color(200, 0, 0)
    pdf.set_line_width(0.3)
    pdf.line(left - 0.5, y - 1.1, left + pdf.get_string_width("1,250.00") + 0.5, y - 1.1)
    pdf.set_y(y + 5)


def _strike_out_annotation(pdf: FPDF) -> None:  # a viewer's strike-through comment
    with pdf.highlight("void", type="StrikeOut"):
        pdf.cell(0, 10, STRUCK, new_x="LMARGIN", new_y="NEXT")


@pytest.mark.parametrize(
    ("draw", "want"),
    [
        (_strike_style, f"[struck through: {STRUCK}]"),
        (_line_over, "Total due [struck through: 1,250.00] USD"),
        (_strike_out_annotation, f"[struck through: {STRUCK}]"),
    ],
)
def test_a_line_through_pdf_text_marks_it_struck(draw: Any, want: str) -> None:
    text = _read(_invoice(draw))
    assert want in text.splitlines(), text
    assert not _plain_lines(text), text
    assert VALID in text.splitlines() and "Invoice No. NW-40919" in text, text


def _underline(pdf: FPDF) -> None:
    pdf.set_font("Helvetica", style="U", size=12)
    pdf.cell(0, 10, STRUCK, new_x="LMARGIN", new_y="NEXT")


def _table(pdf: FPDF) -> None:  # rules between the rows and round the cells
    with pdf.table(col_widths=(60, 40), line_height=6) as table:
        for row in (("Item", "Amount"), ("Widgets", "1,250.00 USD"), ("Total due", "1,250.00 USD")):
            table.row(row)


def _white_line(pdf: FPDF) -> None:  # nobody sees a white line on white paper
    y = pdf.get_y() + 5
    pdf.text(pdf.l_margin, y, STRUCK)
    pdf.set_draw_color(255, 255, 255)
    pdf.line(pdf.l_margin, y - 1.1, pdf.l_margin + 60, y - 1.1)
    pdf.set_y(y + 5)


def _overline_and_box(pdf: FPDF) -> None:  # a rule over the line, a box round it
    y = pdf.get_y() + 5
    pdf.text(pdf.l_margin + 1, y, STRUCK)
    pdf.line(pdf.l_margin, y - 4.0, pdf.l_margin + 60, y - 4.0)
    pdf.rect(pdf.l_margin, y - 5, 60, 7)
    pdf.set_y(y + 5)


@pytest.mark.parametrize("draw", [_underline, _table, _white_line, _overline_and_box])
def test_rules_that_do_not_cross_the_text_leave_it_plain(draw: Any) -> None:
    text = _read(_invoice(draw))
    assert "struck" not in text, text
    assert "1,250.00" in text and VALID in text, text


def test_too_many_lines_to_check_is_said_and_the_text_kept() -> None:
    def draw(pdf: FPDF) -> None:
        pdf.set_line_width(0.1)
        for n in range(pdfseen.MAX_STRIKE_PATHS + 10):  # a page built to be slow to check
            pdf.line(10, 200 + (n % 50) * 0.5, 12, 200 + (n % 50) * 0.5)
        _strike_style(pdf)

    limits.start_parse()
    [page] = read_pdf_pages(_invoice(draw), "invoice.pdf", ocr=False)
    assert STRUCK in page.text and VALID in page.text, page.text
    assert page.hidden_text is not None and "too many lines" in page.hidden_text, page.hidden_text


@pytest.mark.browser
def test_chromium_printed_strikes_are_marked_and_underlines_are_not(chromium: Any) -> None:
    chromium.set_content(
        "<html><body style=\"font-family:'DejaVu Sans';font-size:11pt\"><h2>ACME invoice INV-1</h2>"
        "<p>Total due: <s>USD 1,250.00</s> USD 1,150.00</p>"
        "<p><u>Underlined 77.00</u> and <span style='text-decoration:overline'>over 88.00</span></p>"
        "<table style='border-collapse:collapse' border=1><tr><td>Item A</td><td>10.00</td></tr>"
        "<tr><td>Item B</td><td><del>20.00</del> 19.00</td></tr><tr><td>Item C</td><td>30.00</td></tr></table>"
        "<hr><p>Thank you</p></body></html>"
    )
    text = _read(chromium.pdf(format="A4", print_background=True))
    assert "Total due: [struck through: USD 1,250.00] USD 1,150.00" in text, text
    assert "[struck through: 20.00] 19.00" in text, text
    assert text.count("[struck through: ") == 2, text
    assert "Underlined 77.00" in text and "over 88.00" in text and "Item C 30.00" in text, text


# -- PDF: annotations -----------------------------------------------------------------------------------
def _annotated(flags: tuple[int, ...] = (4,), x: float = 20) -> bytes:
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in ["NORTHWIND TRADERS   INVOICE", "Invoice No. NW-40922", "TOTAL DUE 1,234.50 USD"]:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=20)
    pdf.free_text_annotation("VOID - DUPLICATE, DO NOT PAY", x=x, y=60, w=150, h=20, flags=flags)
    return bytes(pdf.output())


def test_a_free_text_box_a_viewer_paints_is_read_in_a_mark(tmp_path: Path) -> None:
    (tmp_path / "inv.pdf").write_bytes(_annotated())
    text = SandboxFiles(tmp_path).read("inv.pdf").render()
    assert "[annotation: VOID - DUPLICATE, DO NOT PAY]" in text.splitlines(), text
    assert text.index("[annotation:") < text.index("TOTAL DUE")  # it stands in the page's upper half
    assert "TOTAL DUE 1,234.50 USD" in text, text


@pytest.mark.parametrize(
    ("flags", "x"), [((2,), 20), ((4, 32), 20), ((4,), 400)]
)  # hidden, NoView, off the page
def test_an_annotation_nobody_sees_is_not_read(flags: tuple[int, ...], x: float) -> None:
    text = _read(_annotated(flags, x))
    assert "VOID" not in text and "annotation" not in text, text
    assert "TOTAL DUE 1,234.50 USD" in text, text


def test_a_stamp_is_read_by_the_words_its_appearance_draws_and_a_note_by_its_contents() -> None:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 20, "ACME invoice INV-7   TOTAL DUE 1,234.50 USD")
    pdf.text_annotation(150, 250, "Pay the corrected total 1,150.00")
    document = pdfium.PdfDocument(bytes(pdf.output()))
    page = document[0]
    stamp = raw.FPDFPage_CreateAnnot(page.raw, raw.FPDF_ANNOT_STAMP)  # pdfium draws its appearance
    raw.FPDFAnnot_SetRect(stamp, raw.FS_RECTF(300, 500, 540, 450))  # its words inside its box
    word = raw.FPDFPageObj_CreateTextObj(
        document.raw, raw.FPDFText_LoadStandardFont(document.raw, b"Helvetica"), 18
    )
    wide = ctypes.create_string_buffer("PAID - DO NOT PAY AGAIN\0".encode("utf-16-le"))
    raw.FPDFText_SetText(word, ctypes.cast(wide, ctypes.POINTER(raw.FPDF_WCHAR)))
    raw.FPDFPageObj_Transform(word, 1, 0, 0, 1, 305, 470)
    assert raw.FPDFAnnot_AppendObject(stamp, word)
    raw.FPDFAnnot_SetStringValue(stamp, b"Contents", ctypes.cast(
        ctypes.create_string_buffer("approved\0".encode("utf-16-le")), ctypes.POINTER(raw.FPDF_WCHAR)))  # fmt: skip
    raw.FPDFPage_CloseAnnot(stamp)
    out = io.BytesIO()
    document.save(out)
    page.close()
    document.close()
    lines = _read(out.getvalue()).splitlines()
    assert "[stamp annotation: PAID - DO NOT PAY AGAIN]" in lines, lines  # what it draws, not its /Contents
    assert lines[-1] == "[note annotation: Pay the corrected total 1,150.00]", lines  # lower half: after


# -- honest documents -----------------------------------------------------------------------------------
def _pdf_texts(data: bytes, name: str) -> list[str]:
    limits.start_parse()
    try:
        return [p.text for p in read_pdf_pages(data, name, ocr=False)]
    except Unreadable:  # a scan (no text layer), the file damaged on purpose
        return []


def test_the_demo_inbox_reads_with_no_struck_or_annotation_mark_but_the_newsletters_old_prices() -> None:
    marks: dict[str, list[str]] = {}
    read = 0
    for path in sorted((SANDBOX_DIR / "inbox").rglob("*")):
        texts = _pdf_texts(path.read_bytes(), path.name) if path.suffix == ".pdf" else []
        if path.suffix == ".eml":  # its HTML body and its PDF attachments
            for part in email.message_from_bytes(path.read_bytes()).walk():
                data = part.get_payload(decode=True)
                if part.get_content_type() == "text/html" and isinstance(data, bytes):
                    texts.append(html_to_text(data.decode(part.get_content_charset() or "utf-8")))
                elif part.get_content_type() == "application/pdf" and isinstance(data, bytes):
                    texts.extend(_pdf_texts(data, part.get_filename() or "attachment.pdf"))
        read += len(texts)
        found = [
            line
            for text in texts
            for line in text.splitlines()
            if "[struck through" in line or "annotation:" in line
        ]
        if found:
            marks[path.name] = found
    assert read > 30
    assert marks == {
        "Fall savings inside - up to 20% off toner.eml": [
            "HP 26A black toner | $89.99 | [struck through: $112.49]",
            "Copy paper A4 80gsm, case of 5 reams | $27.49 | [struck through: $29.99]",
            "Ergonomic mesh chair | $179.00 | [struck through: $229.00]",
        ]
    }, marks
