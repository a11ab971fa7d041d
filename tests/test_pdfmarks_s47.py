"""What a viewer paints of a PDF decides what is read: annotation opacity, words an appearance
hides, and strikes drawn as segments of a larger path, diagonals, crosses and pen strokes (s47).

- An annotation at opacity 0 (``/CA 0``: a viewer paints it so, pdfium at full opacity) shows nothing:
  its words are not read, and a white box at opacity 0 hides nothing under it.
- Of the words an annotation's appearance draws, only those a person sees are read: words clipped
  away, outside its box, white on white or covered by the appearance itself are left out, said.
- A strike is judged segment by segment: a line inside a path with others (a grid), a slash, an X
  (two paths, one path, or one Ink annotation's two strokes), thin filled bars; not a table's
  rules, a tick, a box, an underline, a circle, a grid line running through a label; text set at
  a large font size under a shrinking matrix is judged at the size it is drawn.

Real PDFs (fpdf2, pypdf, pdfium) through the real reader; no model is involved.
"""

from __future__ import annotations

import ctypes
import io
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fpdf import FPDF
from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, NumberObject, StreamObject
from test_pdf_painted_s46 import PT, _annot, _annotate, _appearance, _base, _drawing, _f, _pixels, _read

from taskcrew.tools.documents import pdfseen

VOID = "VOID - DO NOT PAY"
RECT = (50, 700, 350, 730)
LIVE = "Total due 1,250.00 USD"
VALID = "Total due 1,150.00 USD"
STRUCK = "Total due [struck through: 1,250.00] USD"
STRUCK_RUN = re.compile(r"\[struck through: [^\[\]\n]*\]")
BOX = b"q 0.95 0.8 0.8 rg 0 0 300 30 re f 1 0 0 RG 2 w 1 1 298 28 re S Q "  # a pink box, a red border


def _notes(page: Any) -> str:
    return " | ".join(page.notes)


# -- 1. an annotation at opacity 0 paints nothing ---------------------------------------------------------
def _gs_appearance(content: bytes, alpha: float) -> StreamObject:
    ap = _appearance(content)
    state = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/ExtGState"),
            NameObject("/ca"): FloatObject(alpha),
            NameObject("/CA"): FloatObject(alpha),
        }
    )
    ap["/Resources"][NameObject("/ExtGState")] = DictionaryObject({NameObject("/G0"): state})  # type: ignore[index]
    return ap


FAINT = {
    "free text /CA 0": lambda: _annot(
        "/FreeText", RECT, _appearance(BOX + _drawing(VOID)), CA=FloatObject(0)
    ),
    "stamp /CA 0": lambda: _annot("/Stamp", RECT, _appearance(BOX + _drawing(VOID)), CA=FloatObject(0)),
    "free text /CA 0.02": lambda: _annot(
        "/FreeText", RECT, _appearance(BOX + _drawing(VOID)), CA=FloatObject(0.02)
    ),
    "appearance's ExtGState /ca 0": lambda: _annot(
        "/FreeText", RECT, _gs_appearance(b"/G0 gs " + _drawing(VOID), 0)
    ),
}


@pytest.mark.parametrize("kind", list(FAINT))
def test_an_annotation_painted_at_opacity_0_is_not_read(kind: str) -> None:
    page = _read(_annotate(_base(), FAINT[kind]()))
    assert "VOID" not in page.text and "annotation:" not in page.text, page.text
    assert "TOTAL DUE 1,250.00 USD" in page.text.splitlines(), page.text
    assert "1 annotation(s) on this page paint nothing a person can see" in _notes(page), page.notes


def test_pdfium_paints_an_annotation_at_opacity_0_so_the_opacity_is_judged_by_the_reader() -> None:
    data = _annotate(_base(), FAINT["free text /CA 0"]())  # the fair case: pdfium alone shows the box
    assert int(np.abs(_pixels(data) - _pixels(_base())).max()) > 100


def test_an_annotation_at_half_opacity_is_still_read() -> None:
    page = _read(
        _annotate(_base(), _annot("/FreeText", RECT, _appearance(BOX + _drawing(VOID)), CA=FloatObject(0.5)))
    )
    assert f"[annotation: {VOID}]" in page.text.splitlines(), page.text
    assert not page.notes, page.notes


def test_a_white_box_at_opacity_0_hides_nothing_under_it() -> None:
    # an opaque white box over the total, at /CA 0: a viewer shows the total, pdfium paints the box
    cover = _annot(
        "/FreeText",
        (20, 715, 300, 765),
        _appearance(b"1 g 0 0 280 50 re f", (0, 0, 280, 50)),
        CA=FloatObject(0),
    )
    page = _read(_annotate(_base(), cover))
    assert "TOTAL DUE 1,250.00 USD" in page.text.splitlines(), page.text
    assert page.hidden_text is None, page.hidden_text


# -- 2. only the words an appearance shows are read ------------------------------------------------------
HIDING = {
    "clipped away inside a visible box": BOX + b"q 0 0 1 1 re W n " + _drawing(VOID) + b" Q",
    "outside the appearance's box": BOX + f"BT /Helv 12 Tf 0 g 5 50 Td ({VOID}) Tj ET".encode(),
    "white on white inside a red border": b"1 0 0 RG 2 w 1 1 298 28 re S BT /Helv 12 Tf 1 g 5 10 Td (VOID - DO NOT PAY) Tj ET",
    "covered by the appearance's own box": _drawing(VOID) + b" 1 0 0 RG 0.9 g 2 w 1 1 298 28 re B",
}


@pytest.mark.parametrize("how", list(HIDING))
@pytest.mark.parametrize("subtype", ["/FreeText", "/Stamp"])
def test_words_an_appearance_hides_are_not_read_and_the_page_says_so(how: str, subtype: str) -> None:
    page = _read(_annotate(_base(), _annot(subtype, RECT, _appearance(HIDING[how]))))
    assert "VOID" not in page.text, page.text  # the box shows: it is named, its hidden words are not read
    assert "whose words could not be read" in page.text and "look at the page as shown" in page.text, (
        page.text
    )
    assert (
        f"1 annotation(s) on this page draw words nobody can see ({len(VOID.replace(' ', ''))} character(s)"
        in _notes(page)
    ), page.notes


def test_of_a_box_some_of_whose_words_are_clipped_the_words_shown_are_read() -> None:
    drawn = (
        BOX
        + b"BT /Helv 12 Tf 0 g 5 10 Td (PAID 2026-12-01) Tj ET q 0 0 1 1 re W n BT /Helv 12 Tf 0 g 150 10 Td (PAY 9,999.00 TO GB33) Tj ET Q"
    )
    page = _read(_annotate(_base(), _annot("/FreeText", RECT, _appearance(drawn))))
    assert "[annotation: PAID 2026-12-01]" in page.text.splitlines(), page.text
    assert "9,999.00" not in page.text and "GB33" not in page.text, page.text
    assert "draw words nobody can see (17 character(s)" in _notes(page), page.notes


def _pdfium_stamp(words: str, size: float, right: float) -> bytes:
    """A stamp whose appearance pdfium writes (its box is the stamp's rectangle), as
    test_struck_text_s46 builds one."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 20, "ACME invoice INV-7   TOTAL DUE 1,234.50 USD")
    document = pdfium.PdfDocument(bytes(pdf.output()))
    page = document[0]
    stamp = raw.FPDFPage_CreateAnnot(page.raw, raw.FPDF_ANNOT_STAMP)
    raw.FPDFAnnot_SetRect(stamp, raw.FS_RECTF(300, 500, right, 450))
    word = raw.FPDFPageObj_CreateTextObj(
        document.raw, raw.FPDFText_LoadStandardFont(document.raw, b"Helvetica"), size
    )
    wide = ctypes.create_string_buffer(f"{words}\0".encode("utf-16-le"))
    raw.FPDFText_SetText(word, ctypes.cast(wide, ctypes.POINTER(raw.FPDF_WCHAR)))
    raw.FPDFPageObj_Transform(word, 1, 0, 0, 1, 305, 470)
    assert raw.FPDFAnnot_AppendObject(stamp, word)
    raw.FPDFPage_CloseAnnot(stamp)
    out = io.BytesIO()
    document.save(out)
    page.close()
    document.close()
    return out.getvalue()


def test_a_stamp_reads_the_words_inside_its_box_not_those_running_past_it() -> None:
    page = _read(_pdfium_stamp("PAID - DO NOT PAY AGAIN", 24, 520))  # " AGAIN" lies past the box's right side
    assert "[stamp annotation: PAID - DO NOT PAY]" in page.text.splitlines(), page.text
    assert "AGAIN" not in page.text, page.text
    assert "1 annotation(s) on this page draw words nobody can see" in _notes(page), page.notes
    whole = _read(_pdfium_stamp("PAID - DO NOT PAY AGAIN", 18, 540))  # the same words inside the box
    assert "[stamp annotation: PAID - DO NOT PAY AGAIN]" in whole.text.splitlines(), whole.text
    assert not whole.notes, whole.notes


# -- 3. strikes judged segment by segment ------------------------------------------------------------------
def _invoice(draw: Callable[[FPDF, float, float, float], DictionaryObject | None]) -> bytes:
    """The corrected invoice of test_struck_text_s46: the old total, something drawn over or near
    it (``draw(pdf, baseline, figure's left, figure's right)`` in mm; an annotation it returns is
    added), the valid total under it."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in ["NORTHWIND TRADERS   INVOICE (corrected copy)", "Invoice No. NW-40919"]:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    y = pdf.get_y() + 5
    pdf.text(pdf.l_margin, y, LIVE)
    left = pdf.l_margin + pdf.get_string_width("Total due ")
    right = left + pdf.get_string_width("1,250.00")
    pdf.set_draw_color(200, 0, 0)
    pdf.set_line_width(0.3)
    annotation = draw(pdf, y, left, right)
    pdf.set_draw_color(0, 0, 0)
    pdf.set_y(y + 5)
    pdf.cell(0, 10, VALID, new_x="LMARGIN", new_y="NEXT")
    data = bytes(pdf.output())
    return data if annotation is None else _annotate(data, annotation)


def _path(pdf: FPDF, *subpaths: list[tuple[float, float]], fill: bool = False) -> None:
    """One path object of several subpaths (fpdf closes each)."""
    with pdf.new_path() as path:
        path.style.stroke_color = "#c80000"
        path.style.stroke_width = 0.3
        path.style.fill_color = "#c80000" if fill else None
        path.style.paint_rule = "FILL_NONZERO" if fill else "STROKE"
        for points in subpaths:
            path.move_to(*points[0])
            for point in points[1:]:
                path.line_to(*point)
            if fill:
                path.close()


def _ink(*strokes: list[tuple[float, float]]) -> DictionaryObject:
    """An Ink annotation (no appearance: a viewer draws it) of strokes given in mm from the top left."""
    flat = [[v for x, yy in stroke for v in (x * PT, 841.89 - yy * PT)] for stroke in strokes]
    xs = [v for stroke in flat for v in stroke[0::2]]
    ys = [v for stroke in flat for v in stroke[1::2]]
    ink = _annot(
        "/Ink",
        (min(xs) - 3, min(ys) - 3, max(xs) + 3, max(ys) + 3),
        None,
        InkList=ArrayObject([_f(*stroke) for stroke in flat]),
        C=_f(1, 0, 0),
        BS=DictionaryObject({NameObject("/W"): NumberObject(1)}),
    )
    del ink["/Contents"]
    return ink


def _cross(y: float, left: float, right: float) -> list[list[tuple[float, float]]]:
    return [[(left - 0.5, y + 0.8), (right + 0.5, y - 4.0)], [(left - 0.5, y - 4.0), (right + 0.5, y + 0.8)]]


STRIKES: dict[str, Callable[[FPDF, float, float, float], DictionaryObject | None]] = {
    "a strike in one path with a table's rules": lambda pdf, y, a, b: _path(
        pdf,
        [(10, y - 6), (200, y - 6)],
        [(10, y + 2), (200, y + 2)],
        [(a - 0.5, y - 1.1), (b + 0.5, y - 1.1)],
    ),
    "an X of two lines": lambda pdf, y, a, b: [pdf.line(*p, *q) for p, q in _cross(y, a, b)] and None,
    "an X drawn as one path": lambda pdf, y, a, b: _path(pdf, *_cross(y, a, b)),
    "a slash": lambda pdf, y, a, b: pdf.line(a - 1, y + 0.3, b + 1, y - 3.6),
    "thin filled bars in one path": lambda pdf, y, a, b: _path(
        pdf,
        [(10, y - 6), (200, y - 6), (200, y - 5.8), (10, y - 5.8)],
        [(a, y - 1.2), (b, y - 1.2), (b, y - 0.9), (a, y - 0.9)],
        fill=True,
    ),
    "an Ink annotation's X of two strokes": lambda pdf, y, a, b: _ink(*_cross(y, a, b)),
    "an Ink annotation striking the figure and drawing a line elsewhere": lambda pdf, y, a, b: _ink(
        [(a, y - 1.2), ((a + b) / 2, y - 1.4), (b, y - 1.2)], [(a, y + 20), (b, y + 20)]
    ),
}


@pytest.mark.parametrize("how", list(STRIKES))
def test_a_figure_struck_by_a_segment_of_a_path_a_slash_or_a_cross_is_marked_struck(how: str) -> None:
    text = _read(_invoice(STRIKES[how])).text
    assert STRUCK in text.splitlines(), text
    assert VALID in text.splitlines(), text
    assert text.count("[struck through: ") == 1, text


NOT_STRIKES: dict[str, Callable[[FPDF, float, float, float], DictionaryObject | None]] = {
    "a table's grid as one path": lambda pdf, y, a, b: _path(
        pdf,
        [(10, y - 6), (200, y - 6)],
        [(10, y + 2), (200, y + 2)],
        [(10, y - 6), (10, y + 2)],
        [(70, y - 6), (70, y + 2)],
        [(200, y - 6), (200, y + 2)],
    ),
    "a tick beside the text": lambda pdf, y, a, b: pdf.polyline([(4, y - 2), (5.5, y), (8.5, y - 4)]),
    "a tick over the figure": lambda pdf, y, a, b: pdf.polyline(
        [(a + 2, y - 2), (a + 4, y + 0.5), (a + 9, y - 5)]
    ),
    "an Ink annotation's tick over the figure": lambda pdf, y, a, b: _ink(
        [(a + 2, y - 2), (a + 4, y + 0.5), (a + 9, y - 5)]
    ),
    "a box round the line": lambda pdf, y, a, b: pdf.rect(pdf.l_margin - 1, y - 5, 60, 7),
    "an underline and a rule in one path": lambda pdf, y, a, b: _path(
        pdf, [(a, y + 0.8), (b, y + 0.8)], [(10, y - 6), (200, y - 6)]
    ),
    "a circle round the figure": lambda pdf, y, a, b: pdf.ellipse(a - 3, y - 6, b - a + 6, 8),
    "a chart's grid line running through the figure": lambda pdf, y, a, b: pdf.line(
        a - 60, y - 1.1, b + 120, y - 1.1
    ),
}


@pytest.mark.parametrize("how", list(NOT_STRIKES))
def test_rules_ticks_boxes_and_lines_running_past_the_text_do_not_strike_it(how: str) -> None:
    text = _read(_invoice(NOT_STRIKES[how])).text
    assert not STRUCK_RUN.search(text), text
    assert LIVE in text.splitlines() and VALID in text.splitlines(), text


def test_text_set_large_under_a_shrinking_matrix_is_judged_at_the_size_it_is_drawn() -> None:
    # 199 pt text drawn at a twentieth (as camelot's invoice sets it): 10 pt on the page. A table's
    # rule 25 pt above its baseline is in the strike band of 199 pt text, far above 10 pt text.
    content = (
        b"BT /F1 199 Tf 0.05 0 0 0.05 72 700 Tm (Total due 1,250.00 USD) Tj ET "
        b"0 G 0.5 w 60 725 m 300 725 l S 60 690 m 300 690 l S"
    )
    data = _raw_page(content)
    text = _read(data).text
    assert not STRUCK_RUN.search(text), text
    assert LIVE in text, text


def _raw_page(content: bytes) -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % offset for offset in offsets)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def test_too_many_segments_near_the_text_is_said_and_the_text_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdfseen, "MAX_STRIKE_SEGMENTS", 40)  # a page built to be slow to check, made small

    def zigzag(pdf: FPDF, y: float, a: float, b: float) -> None:
        _path(pdf, [(10 + k, y - 1.1 + (k % 2) * 0.2) for k in range(60)])

    page = _read(_invoice(zigzag))
    assert LIVE in page.text and VALID in page.text, page.text
    assert page.hidden_text is not None and "too many lines" in page.hidden_text, page.hidden_text
