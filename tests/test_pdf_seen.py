"""Text a person cannot see in a PDF is not read (pdfseen.py): white on white, drawn invisible,
covered by a later box or picture, clipped away, off the page, too small, squeezed to no width.

Each hostile page shows a person "Total due: 1,200.00 EUR" and the IBAN DE89…; the hidden text holds
another amount and IBAN. The file reader (what the agent and the approval's provenance read) and
the knowledge ingest must read only what is shown, and say that something was left out. Text that
is seen stays: white on a dark banner, grey, small print, thin letters, a rotated page.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from fpdf import FPDF
from fpdf.enums import TextMode
from PIL import Image, ImageDraw, ImageFont

from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import value_origin
from taskcrew.knowledge.chunking import ChunkingConfig, UnreadableFile
from taskcrew.knowledge.formats import pdf_pieces
from taskcrew.tools.documents import limits, pdfseen
from taskcrew.tools.documents.models import Unreadable
from taskcrew.tools.documents.pdf import read_pdf_pages
from taskcrew.tools.files import SandboxFiles

SHOWN = ["INVOICE INV-1001 Northwind Traders", "Total due: 1,200.00 EUR", "IBAN: DE89 3704 0044 0532 0130 00"]
HIDDEN_AMOUNT, HIDDEN_IBAN = "12,000.00", "GB33 BUKB 2020 1555 5555 55"
HIDDEN = f"Total due: {HIDDEN_AMOUNT} EUR IBAN {HIDDEN_IBAN}"


def _page(hide: Callable[[FPDF], None] | None = None) -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for n, line in enumerate(SHOWN):
        pdf.text(20, 30 + 10 * n, line)
    if hide is not None:
        hide(pdf)
    return bytes(pdf.output())


def _white(pdf: FPDF) -> None:
    pdf.set_text_color(255, 255, 255)
    pdf.text(20, 70, HIDDEN)


def _near_white(pdf: FPDF) -> None:
    pdf.set_text_color(246, 246, 246)
    pdf.text(20, 70, HIDDEN)


def _invisible(pdf: FPDF) -> None:
    pdf.text_mode = TextMode.INVISIBLE
    pdf.text(20, 70, HIDDEN)


def _covered(pdf: FPDF) -> None:
    pdf.text(20, 70, HIDDEN)
    pdf.set_fill_color(255, 255, 255)
    pdf.rect(10, 64, 190, 10, style="F")


def _under_picture(pdf: FPDF) -> None:
    pdf.text(20, 70, HIDDEN)
    pdf.image(Image.new("RGB", (400, 40), (255, 255, 255)), x=10, y=62, w=190, h=12)


def _clipped(pdf: FPDF) -> None:
    with pdf.rect_clip(x=150, y=100, w=5, h=5):
        pdf.text(20, 70, HIDDEN)


def _off_page(pdf: FPDF) -> None:
    pdf.text(20, 400, HIDDEN)


def _tiny(pdf: FPDF) -> None:
    pdf.set_font_size(1)
    pdf.text(20, 70, HIDDEN)


def _squeezed(pdf: FPDF) -> None:
    pdf.set_stretching(2)  # 2 % of its width: a smudge, not letters
    pdf.text(20, 70, HIDDEN)


HIDING = {
    "white on white": _white,
    "near-white on white": _near_white,
    "render mode invisible": _invisible,
    "covered by a later white box": _covered,
    "under a picture drawn after it": _under_picture,
    "clipped away": _clipped,
    "off the page": _off_page,
    "1 pt": _tiny,
    "squeezed to 2 %": _squeezed,
}


@pytest.mark.parametrize("trick", list(HIDING))
def test_hidden_text_is_not_read_and_the_page_says_so(tmp_path: Path, trick: str) -> None:
    (tmp_path / "invoice.pdf").write_bytes(_page(HIDING[trick]))
    text = SandboxFiles(tmp_path).read("invoice.pdf").full_text()
    assert HIDDEN_AMOUNT not in text and "GB33" not in text, text
    for line in SHOWN:
        assert line in text, text
    assert "hidden text" in text and "not read" in text, text


def _banner(pdf: FPDF) -> None:
    pdf.set_fill_color(20, 40, 120)
    pdf.rect(10, 64, 190, 12, style="F")
    pdf.set_text_color(255, 255, 255)
    pdf.text(20, 72, "Payment terms: 30 days")


def _grey_small_thin(pdf: FPDF) -> None:
    pdf.set_text_color(150, 150, 150)
    pdf.set_font_size(6)
    pdf.text(20, 70, "Registered office: Ilill 1, il. i.l. ; ,")


def _drawn_over_a_picture(pdf: FPDF) -> None:
    pdf.image(Image.new("RGB", (400, 40), (230, 240, 255)), x=10, y=62, w=190, h=12)
    pdf.text(20, 70, "Reference: PO-778")


SEEN = {
    "white on a dark banner": (_banner, "Payment terms: 30 days"),
    "grey small print and thin letters": (_grey_small_thin, "Ilill 1, il. i.l. ; ,"),
    "text drawn over a picture": (_drawn_over_a_picture, "Reference: PO-778"),
}


@pytest.mark.parametrize("case", list(SEEN))
def test_text_a_person_sees_is_read_as_before(tmp_path: Path, case: str) -> None:
    draw, words = SEEN[case]
    data = _page(draw)
    assert pdfseen.seen_pages(data, 1)[0].text is None  # nothing hidden: the text layer is read as always
    (tmp_path / "invoice.pdf").write_bytes(data)
    text = SandboxFiles(tmp_path).read("invoice.pdf").full_text()
    assert words in text and "hidden text" not in text, text


def test_a_rotated_page_is_judged_as_it_is_shown(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for n, line in enumerate(SHOWN):
        pdf.text(20, 30 + 10 * n, line)
    writer = io.BytesIO(bytes(pdf.output()))
    from pypdf import PdfReader, PdfWriter

    out = PdfWriter()
    out.add_page(PdfReader(writer).pages[0].rotate(90))
    buffer = io.BytesIO()
    out.write(buffer)
    assert pdfseen.seen_pages(buffer.getvalue(), 1)[0].hidden == 0


def _scan_with_a_text_layer(layer: list[str]) -> bytes:
    """A scanned page (a picture of the invoice) with an invisible text layer over it, as scanners
    store their own OCR; here the layer says something else than the picture."""
    picture = Image.new("L", (1654, 520), 255)
    draw = ImageDraw.Draw(picture)
    font = ImageFont.truetype("DejaVuSans.ttf", 48)
    for n, line in enumerate(SHOWN):
        draw.text((60, 60 + 140 * n), line, font=font, fill=0)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(picture, x=0, y=0, w=210)
    pdf.set_font("Helvetica", size=12)
    pdf.text_mode = TextMode.INVISIBLE
    for n, line in enumerate(layer):
        pdf.text(10, 20 + 18 * n, line)
    return bytes(pdf.output())


def test_a_scans_invisible_text_layer_gives_way_to_ocr_of_its_picture() -> None:
    limits.start_parse()  # this process's parse budget starts now (a reader's child process does so)
    data = _scan_with_a_text_layer(
        ["INVOICE INV-1001", f"Total due: {HIDDEN_AMOUNT} EUR", f"IBAN: {HIDDEN_IBAN}"]
    )
    [page] = read_pdf_pages(data, "scan.pdf")
    assert page.ocr and "1,200.00" in page.text and HIDDEN_AMOUNT not in page.text and "GB33" not in page.text
    assert page.hidden_text and "invisible text layer" in page.hidden_text


def test_a_pdf_whose_every_word_is_hidden_says_why_it_is_not_read() -> None:
    limits.start_parse()
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    _white(pdf)
    with pytest.raises(Unreadable, match="nobody can see"):
        read_pdf_pages(bytes(pdf.output()), "blank.pdf")


def test_a_cited_value_found_only_in_hidden_text_is_not_shown_by_the_file() -> None:
    limits.start_parse()
    data = _page(_white)
    text = "\n".join(p.text for p in read_pdf_pages(data, "invoice.pdf"))
    report = StepReport(
        status="done",
        summary="read the invoice",
        data={"amount": HIDDEN_AMOUNT},
        sources=[Citation(source="invoice.pdf", quote=f"Total due: {HIDDEN_AMOUNT} EUR")],
    )
    origin = value_origin(HIDDEN_AMOUNT, [(1, "file_reader", report)], lambda _s: text)
    assert "does not show it" in origin, origin


def _white_heading(pdf: FPDF) -> None:
    """A white line set at a heading's size right under a visible heading: by its size it is a
    heading (and one with the heading above it), in every chunk's path."""
    pdf.set_font_size(16)
    pdf.text(20, 70, "Payment instructions")
    pdf.set_text_color(255, 255, 255)
    pdf.text(20, 80, HIDDEN)


def _white_bookmarked_heading(pdf: FPDF) -> None:
    """The same with bookmarks: the hidden line has its own outline entry."""
    pdf.set_font_size(16)
    pdf.start_section("Payment instructions")
    pdf.text(20, 70, "Payment instructions")
    pdf.start_section(HIDDEN, level=1)
    pdf.set_text_color(255, 255, 255)
    pdf.text(20, 80, HIDDEN)


KNOWLEDGE_HIDING = {
    "covered by a later white box": _covered,
    "a white line under a heading": _white_heading,
    "a white bookmarked line under a heading": _white_bookmarked_heading,
}


@pytest.mark.parametrize("trick", list(KNOWLEDGE_HIDING))
def test_the_knowledge_ingest_leaves_hidden_text_out(trick: str) -> None:
    pieces, title = pdf_pieces(_page(KNOWLEDGE_HIDING[trick]), ["manual.pdf"], ChunkingConfig())
    indexed = " ".join(p.text for p in pieces)
    assert "1,200.00" in indexed and HIDDEN_AMOUNT not in indexed
    for piece in pieces:  # the heading path is embedded with every chunk: it must not carry it either
        assert not any(HIDDEN_AMOUNT in part or "GB33" in part for part in piece.path), piece.path
    assert HIDDEN_AMOUNT not in (title or ""), title
    if trick != "covered by a later white box":  # the visible heading is still one
        assert title == "Payment instructions" or any("Payment instructions" in p.path for p in pieces)


def test_white_letters_laid_over_black_ones_are_not_read(tmp_path: Path) -> None:
    def over(pdf: FPDF) -> None:
        pdf.set_text_color(255, 255, 255)
        pdf.text(20, 40, "Total due: 12,000.00 EUR")  # on top of the shown total: it erases, it is not seen

    (tmp_path / "invoice.pdf").write_bytes(_page(over))
    text = SandboxFiles(tmp_path).read("invoice.pdf").full_text()
    assert HIDDEN_AMOUNT not in text and "hidden text" in text, text


def _clip_text(pdf: FPDF) -> None:
    """The total drawn as a clipping path (render mode 7) and a fill painted through it: the
    letters show in red, though the text itself paints nothing."""
    pdf.set_font("Helvetica", "B", size=20)
    with pdf.local_context(text_mode=TextMode.CLIP):
        pdf.text(20, 80, "Amount paid: 300.00 EUR")
        pdf.set_fill_color(200, 30, 30)
        pdf.rect(10, 70, 190, 14, style="F")


def test_text_drawn_as_a_clip_is_read_and_said_to_be_unchecked(tmp_path: Path) -> None:
    data = _page(_clip_text)
    [seen] = pdfseen.seen_pages(data, 1)
    assert seen.text is None and seen.hidden == 0 and seen.unchecked and "clipping path" in seen.unchecked
    (tmp_path / "invoice.pdf").write_bytes(data)
    text = SandboxFiles(tmp_path).read("invoice.pdf").full_text()
    assert "Amount paid: 300.00 EUR" in text and "could not be checked" in text, text
    assert "altered" not in text, text  # not called a document that hides text

    def both(pdf: FPDF) -> None:  # and with white text on the same page: that is still left out
        _white(pdf)
        _clip_text(pdf)

    [seen] = pdfseen.seen_pages(_page(both), 1)
    assert seen.text is not None and "Amount paid: 300.00 EUR" in seen.text and HIDDEN_AMOUNT not in seen.text
    note = seen.note()
    assert note and "nobody can see" in note and "could not be checked" in note, note


def test_a_line_partly_on_a_dark_banner_is_judged_letter_by_letter() -> None:
    """White letters show on the banner and not past its end, though one text object draws them all."""

    def half(pdf: FPDF) -> None:
        pdf.set_fill_color(20, 40, 120)
        pdf.rect(10, 64, 12 + pdf.get_string_width("Terms: 30 days "), 12, style="F")
        pdf.set_text_color(255, 255, 255)
        pdf.text(20, 72, f"Terms: 30 days {HIDDEN_AMOUNT}")

    [seen] = pdfseen.seen_pages(_page(half), 1)
    assert seen.text is not None and "Terms: 30 days" in seen.text and HIDDEN_AMOUNT not in seen.text, seen


def _pages(count: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for n in range(count):
        pdf.add_page()
        pdf.text(20, 30, f"Procedure step {n + 1}: check the purchase order before paying.")
    return bytes(pdf.output())


def test_the_knowledge_ingest_says_which_pages_it_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_INGEST_PAGES", 2)
    pieces, _ = pdf_pieces(_pages(4), ["manual.pdf"], ChunkingConfig(min_chars=0))
    indexed = " ".join(p.text for p in pieces)
    assert "step 2:" in indexed and "step 3:" not in indexed, indexed
    note = pieces[-1]
    assert note.path == ["manual.pdf", "page 3"], note.path
    assert "pages 3-4 of this PDF are not indexed" in note.text, note.text


def test_a_pdf_the_ingest_cannot_check_in_time_is_not_indexed_in_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cut short by time, it would be stored as if whole and called unchanged by the next ingest."""
    monkeypatch.setattr(limits, "INGEST_CHECK_S", 0.0)  # over the time after the first page
    with pytest.raises(UnreadableFile, match=r"took over 0 s \(page 1 of 4\); split the file"):
        pdf_pieces(_pages(4), ["manual.pdf"], ChunkingConfig(min_chars=0))


def _nested_forms(depth: int) -> bytes:
    """A page whose second line is drawn inside form XObjects nested ``depth`` deep (as some
    generators wrap each block), written by hand: fpdf does not nest forms."""
    font = b"/Font << /F 4 0 R >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 5 0 R "
        b"/Resources << " + font + b" /XObject << /X 6 0 R >> >> >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    streams = [(b"", b"BT /F 12 Tf 50 800 Td (INVOICE INV-1001) Tj ET q /X Do Q")]
    for level in range(depth):
        inner = level + 1 < depth
        body = b"q /X Do Q" if inner else b"BT /F 12 Tf 50 780 Td (Reference: PO-778) Tj ET"
        xobject = b" /XObject << /X %d 0 R >>" % (7 + level) if inner else b""
        streams.append(
            (
                b"/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << "
                + font
                + xobject
                + b" >> ",
                body,
            )
        )
    objects += [
        b"<< %s/Length %d >>\nstream\n%s\nendstream" % (head, len(body), body) for head, body in streams
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_text_deep_in_nested_forms_is_judged_as_shown() -> None:
    """pdfium parses forms 40 deep; text 20 deep is switched off for the second render like any other
    (left drawn, it would look covered)."""
    [seen] = pdfseen.seen_pages(_nested_forms(20), 1)
    assert seen.hidden == 0 and seen.unchecked is None, seen
    limits.start_parse()
    pages = read_pdf_pages(_nested_forms(20), "deep.pdf", ocr=False)
    assert "Reference: PO-778" in pages[0].text and pages[0].hidden_text is None


def test_the_knowledge_ingest_says_why_a_pdf_of_hidden_text_is_not_indexed() -> None:
    from taskcrew.knowledge.chunking import UnreadableFile

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    _white(pdf)
    with pytest.raises(UnreadableFile, match="nobody can see"):
        pdf_pieces(bytes(pdf.output()), ["blank.pdf"], ChunkingConfig())
