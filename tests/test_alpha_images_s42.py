"""A picture is judged as it looks on paper: laid on white by its transparency (an alpha channel, a
PDF image's soft mask) before anything looks at it (``pixels.on_white``: the "holds text?" gate,
OCR).

Chromium prints an element under a CSS ``filter`` as an image whose colour samples are all black and
whose picture is its soft mask; the reader took the samples alone, found no text in a black
rectangle, skipped OCR and cleared the page's notes: the table with the total vanished without a
word. With ``opacity`` as well the image sits inside a form, which the reader did not count at all.
A PNG with a transparent background (black text on alpha 0) was refused as "a picture with no lines
of text". The other way round, the colours under a soft mask that paints nothing are no text a
person sees: they are not read, and do not turn a hidden-text warning into "read by OCR".
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from fpdf.enums import TextMode

from taskcrew.tools.browser import BrowserConfig
from taskcrew.tools.browser.runtime import plan_launch
from taskcrew.tools.documents import limits
from taskcrew.tools.documents.models import Unreadable
from taskcrew.tools.documents.pdf import read_pdf_pages
from taskcrew.tools.files import SandboxFiles

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LINES = ["Northwind Traders  Invoice NW-40917", "Total due 1,284.50 USD", "Due date 2026-11-13"]

pytestmark = pytest.mark.skipif(not Path(FONT).exists(), reason="needs the DejaVu fonts")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            **plan_launch(BrowserConfig(), playwright_build=False).launch_options()
        )
        yield browser.new_page()
        browser.close()


def _invoice(css: str) -> str:
    return (
        "<!doctype html><html><head><style>body{font-family:'DejaVu Sans';font-size:11pt} " + css + "</style>"
        "</head><body><h2>Northwind Traders &mdash; Invoice NW-40917</h2>"
        "<p>Invoice date: 2026-10-14<br>Due date: 2026-11-13</p><div class=card><table>"
        "<tr><td>Widgets</td><td style='text-align:right'>412.50 USD</td></tr>"
        "<tr><td><b>Total due</b></td><td style='text-align:right'><b>412.50 USD</b></td></tr></table></div>"
        "<p>Thank you for your business.</p></body></html>"
    )


@pytest.mark.browser
@pytest.mark.parametrize(
    "css",
    [
        ".card{filter:grayscale(1)}",
        ".card{filter:brightness(.9)}",
        ".card{filter:drop-shadow(2px 2px 2px #aaa);background:#fff}",
        ".card{filter:grayscale(1);opacity:.8}",  # the image inside a transparency-group form
    ],
    ids=["grayscale", "brightness", "drop-shadow", "grayscale-with-opacity"],
)
def test_a_table_printed_under_a_css_filter_is_read_in_its_place(
    chromium: Any, tmp_path: Path, css: str
) -> None:
    chromium.set_content(_invoice(css))
    data = chromium.pdf(format="A4", print_background=True)
    limits.start_parse()
    [page] = read_pdf_pages(data, "invoice.pdf")
    assert page.ocr, (page.text, page.notes)
    assert "412.50" in page.text, page.text
    # the table is at the top of the page: its OCR'd text goes before the text layer's thank-you line
    assert page.text.index("412.50") < page.text.index("Thank you for your business"), page.text
    assert page.hidden_text is None, page.hidden_text
    (tmp_path / "invoice.pdf").write_bytes(data)
    assert "Total due" in SandboxFiles(tmp_path).read("invoice.pdf").full_text()


def _lines(background: tuple[int, ...], ink: tuple[int, ...], mode: str = "RGBA") -> Any:
    from PIL import Image, ImageDraw, ImageFont

    im = Image.new(mode, (900, 260), background)
    draw = ImageDraw.Draw(im)
    font = ImageFont.truetype(FONT, 30)
    for i, line in enumerate(LINES):
        draw.text((20, 20 + 70 * i), line, fill=ink, font=font)
    return im


def _saved(tmp_path: Path, name: str, im: Any, **options: Any) -> str:
    im.save(tmp_path / name, **options)
    limits.start_parse()
    return SandboxFiles(tmp_path).read(name).full_text()


@pytest.mark.parametrize(
    ("name", "mode", "background", "ink"),
    [
        ("invoice.png", "RGBA", (0, 0, 0, 0), (0, 0, 0, 255)),  # black text on a transparent background
        ("invoice.webp", "RGBA", (0, 0, 0, 0), (0, 0, 0, 255)),
        ("grey.png", "LA", (0, 0), (0, 255)),
    ],
)
def test_a_picture_with_a_transparent_background_is_read(
    tmp_path: Path, name: str, mode: str, background: tuple[int, ...], ink: tuple[int, ...]
) -> None:
    text = _saved(
        tmp_path, name, _lines(background, ink, mode), **({"lossless": True} if name.endswith("webp") else {})
    )
    assert "1,284.50" in text and "NW-40917" in text, text


def test_a_gif_whose_transparent_colour_is_its_background_is_read(tmp_path: Path) -> None:
    """Black paper, dark grey letters, the paper's colour transparent: on white the letters show."""
    from PIL import Image

    letters = _lines((0, 0, 0, 0), (0, 0, 0, 255)).getchannel("A").point(lambda a: 255 if a > 127 else 0)
    im = Image.new("P", letters.size, 0)
    im.putpalette([0, 0, 0, 40, 40, 40])
    im.paste(1, mask=letters)
    text = _saved(tmp_path, "invoice.gif", im, transparency=0)
    assert "1,284.50" in text, text


def test_the_colours_under_a_fully_transparent_picture_are_not_read(tmp_path: Path) -> None:
    """Text in a PNG's colour channels under alpha 0 is no text anybody sees."""
    im = _lines((255, 255, 255, 0), (0, 0, 0, 0))
    with pytest.raises(Unreadable, match="no text OCR could read"):
        _saved(tmp_path, "blank.png", im)


def _pdf_with_a_picture_over_hidden_text(picture: Any) -> bytes:
    """A visible heading; below it invisible text (Tr 3) saying 999.00, and a picture drawn over it."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.add_font("DejaVu", "", FONT)
    pdf.set_font("DejaVu", size=14)
    pdf.text(20, 20, "Northwind Traders - Invoice NW-40917")
    with pdf.local_context(text_mode=TextMode.INVISIBLE):
        pdf.text(20, 60, "Total due 999.00 USD")
    pdf.image(picture, x=15, y=45, w=150)
    return bytes(pdf.output())


def test_a_picture_drawn_only_by_its_soft_mask_is_read() -> None:
    """Black colour samples, the letters in the soft mask (what Chromium prints for a CSS filter)."""
    from PIL import Image

    letters = _lines((0, 0, 0, 0), (0, 0, 0, 255)).getchannel("A")
    picture = Image.new("RGB", letters.size, (0, 0, 0))
    picture.putalpha(letters)
    limits.start_parse()
    [page] = read_pdf_pages(_pdf_with_a_picture_over_hidden_text(picture), "masked.pdf")
    assert page.ocr and "1,284.50" in page.text, (page.text, page.notes)
    assert "999.00" not in page.text, page.text


def test_a_picture_whose_soft_mask_paints_nothing_does_not_count_as_seen_text() -> None:
    """Its colours hold an invoice's lines, its soft mask is all transparent: a person sees the page's
    heading and nothing else. The colours are not read, and the invisible text under it keeps its
    warning (not the scanner's-OCR note that reading the picture would bring)."""
    picture = _lines((255, 255, 255, 0), (0, 0, 0, 0))
    limits.start_parse()
    [page] = read_pdf_pages(_pdf_with_a_picture_over_hidden_text(picture), "hidden.pdf")
    assert "1,284.50" not in page.text and "999.00" not in page.text, page.text
    assert not page.ocr, page.text
    assert page.hidden_text and "may have been altered" in page.hidden_text, page.hidden_text


def test_an_image_that_cannot_be_decoded_is_noted() -> None:
    """No region vanishes silently: a damaged picture (its JPEG data zeroed) is said on its page."""
    jpeg = io.BytesIO()
    _lines((255, 255, 255), (0, 0, 0), "RGB").save(jpeg, "JPEG")
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=14)
    pdf.text(20, 20, "Northwind Traders - Invoice NW-40917")
    pdf.image(io.BytesIO(jpeg.getvalue()), x=15, y=45, w=150)  # its JPEG data embedded as it is
    data = bytes(pdf.output())
    start = data.index(jpeg.getvalue()[:64])
    damaged = data[:start] + bytes(len(jpeg.getvalue())) + data[start + len(jpeg.getvalue()) :]
    limits.start_parse()
    [page] = read_pdf_pages(damaged, "damaged.pdf")
    assert "NW-40917" in page.text, page.text
    assert any("could not be decoded" in note for note in page.notes), page.notes


@pytest.mark.browser
def test_a_table_printed_at_an_opacity_nobody_sees_is_not_read(chromium: Any) -> None:
    """The image sits in a form drawn at opacity 0.02: its own mask paints the letters, the form
    fades them to nothing; read bare, they would be text nobody sees."""
    chromium.set_content(_invoice(".card{filter:grayscale(1);opacity:.02}"))
    limits.start_parse()
    [page] = read_pdf_pages(chromium.pdf(format="A4", print_background=True), "invoice.pdf")
    assert "412.50" not in page.text and not page.ocr, page.text


def test_a_picture_drawn_at_an_opacity_nobody_sees_is_not_read() -> None:
    picture = _lines((255, 255, 255), (0, 0, 0), "RGB")
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=14)
    pdf.text(20, 20, "Northwind Traders - Invoice NW-40917")
    with pdf.local_context(fill_opacity=0.02):
        pdf.image(picture, x=15, y=45, w=150)
    limits.start_parse()
    [page] = read_pdf_pages(bytes(pdf.output()), "faint.pdf")
    assert "1,284.50" not in page.text and not page.ocr, page.text
