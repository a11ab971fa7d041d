"""PDF: the text layer in reading order (pypdf's layout mode), OCR for pages and image regions
without one (pages rendered with pypdfium2, images taken from the page).

Layout mode places text by its position on the page, so a value drawn before its label in the file
still comes out after it on the same line (``Order number: 12572103``), and table columns stay
apart. Runs of blanks are shortened so the layout costs few characters.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import re
from collections.abc import Iterator
from typing import Any

from taskcrew.tools.documents.limits import MAX_CHARS, MAX_OCR_PAGES, MAX_PAGES
from taskcrew.tools.documents.models import NO_TEXT_LAYER, PageText, Unreadable, tidy
from taskcrew.tools.documents.ocr import OCR_DPI, OcrUnavailable, ocr_image

MIN_IMAGE_SIDE = 120  # pixels; smaller images are logos, rules and specks, not text
_GAP = re.compile(r"[ \t]{4,}")


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs warnings ("EOF marker not found") for damaged files; the result says it instead."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def read_pdf_pages(data: bytes, name: str, *, ocr: bool = True) -> list[PageText]:
    """Text of each page, or :class:`Unreadable` (damaged, encrypted, or a scan OCR cannot read)."""
    from pypdf import PdfReader

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise Unreadable(f"{name}: not a PDF file (no %PDF header); it cannot be read — ask a human")
    with _quiet_pypdf():
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise Unreadable(f"{name}: the PDF is password-protected; ask a human for an open copy")
            count = len(reader.pages)
            pages: list[PageText] = []
            used = 0
            for index in range(min(count, MAX_PAGES)):
                page = reader.pages[index]
                page_text = PageText(number=index + 1, text=_page_text(page))
                page_text.notes = _image_notes(page, bool(page_text.text.strip()))
                pages.append(page_text)
                used += len(page_text.text)
                if used > MAX_CHARS:
                    pages[-1].notes.append(
                        f"reading stopped after page {index + 1} of {count}: the text exceeds "
                        f"{MAX_CHARS:,} characters; ask a human which part matters"
                    )
                    break
        except Unreadable:
            raise
        except MemoryError:
            raise
        except Exception as exc:  # pypdf raises many types on damaged input; none is our bug
            raise Unreadable(
                f"{name}: damaged or incomplete PDF ({type(exc).__name__}: {str(exc)[:200]}); it cannot be "
                "read — ask for a new copy of the file. Other files are not affected."
            ) from exc
    if count > MAX_PAGES:
        pages[-1].notes.append(f"only the first {MAX_PAGES} of {count} pages were read")
    needs_ocr = [p for p in pages if any("image" in n for n in p.notes)]
    if needs_ocr and ocr:
        _ocr_pages(data, reader, needs_ocr, name)
    if not any(p.text.strip() for p in pages):
        scanned = any(p.notes for p in pages)
        if scanned:
            why = "; ".join(dict.fromkeys(n for p in pages for n in p.notes))
            raise Unreadable(f"{name}: {NO_TEXT_LAYER} ({why})" if ocr else f"{name}: {NO_TEXT_LAYER}")
        raise Unreadable(f"{name}: the PDF has no text on any page; ask a human")
    return pages


def _page_text(page: Any) -> str:
    """The page's text in the file's drawing order, unless that order disagrees with the positions.

    When a fragment is drawn to the left of the one before it on the same line (a value written
    before its label: ``12572103Ordernummer:``), the page is rebuilt from positions instead (pypdf's
    layout mode), so labels and values read left to right, and table columns stay apart.
    """
    spots: list[tuple[float, float, float]] = []

    def visit(text: str, cm: Any, tm: Any, _font: Any, size: Any) -> None:
        if text.strip():
            x = cm[0] * tm[4] + cm[2] * tm[5] + cm[4]
            y = cm[1] * tm[4] + cm[3] * tm[5] + cm[5]
            spots.append((x, y, float(size or 10)))

    plain = page.extract_text(visitor_text=visit) or ""
    if not _drawn_out_of_order(spots):
        return tidy(plain)
    try:
        text = page.extract_text(extraction_mode="layout", layout_mode_space_vertically=False) or ""
    except Exception:  # layout mode is stricter about odd fonts; the plain text is still there
        return tidy(plain)
    lines = [_GAP.sub("   ", line.rstrip()) for line in text.splitlines()]
    width = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return tidy("\n".join(line[width:] for line in lines))


def _drawn_out_of_order(spots: list[tuple[float, float, float]]) -> bool:
    """True when text on one line is drawn right to left more than once in a while."""
    backwards = 0
    for (x1, y1, size), (x2, y2, _) in itertools.pairwise(spots):
        if abs(y2 - y1) < max(1.0, 0.3 * size) and x2 < x1 - size:
            backwards += 1
    return backwards >= 1


def _image_notes(page: Any, has_text: bool) -> list[str]:
    """Notes for the images on a page that may hold text (the OCR step replaces them)."""
    large = [img for img in _images(page) if min(img) >= MIN_IMAGE_SIDE]
    if not large:
        return []
    if has_text:
        return [
            f"part of this page is an image ({len(large)} image region(s)) that the text layer does not contain"
        ]
    return ["the page is an image with no text layer"]


def _images(page: Any) -> list[tuple[int, int]]:
    try:
        resources = page.get("/Resources")
        xobjects = resources.get_object().get("/XObject") if resources is not None else None
        if xobjects is None:
            return []
        sizes = []
        for x in xobjects.get_object().values():
            obj = x.get_object()
            if obj.get("/Subtype") == "/Image":
                sizes.append((int(obj.get("/Width", 0)), int(obj.get("/Height", 0))))
        return sizes
    except Exception:
        return []


def _ocr_pages(data: bytes, reader: Any, pages: list[PageText], name: str) -> None:
    """Scanned pages: OCR the rendered page. Mixed pages: OCR each large image on it."""
    done = 0
    for page in pages:
        if done >= MAX_OCR_PAGES:
            page.notes.append(
                f"not read by OCR: only {MAX_OCR_PAGES} pages are OCR'd per document; ask a human"
            )
            continue
        done += 1
        try:
            if page.text.strip():
                _ocr_regions(reader.pages[page.number - 1], page)
            else:
                result = ocr_image(_render(data, page.number - 1))
                if result.text:
                    page.text = result.marked("the whole page is an image")
                    page.ocr, page.ocr_confidence, page.notes = True, result.confidence, []
                else:
                    page.notes = ["the page is an image and OCR found no text on it"]
        except OcrUnavailable as exc:
            page.notes = [*page.notes, str(exc)]
            break
        except Unreadable as exc:
            page.notes = [*page.notes, str(exc)]


def _ocr_regions(pdf_page: Any, page: PageText) -> None:
    texts, confidences = [], []
    for image in pdf_page.images:
        pil = image.image
        if pil is None or min(pil.size) < MIN_IMAGE_SIDE:
            continue
        result = ocr_image(pil)
        if result.text:
            texts.append(result.text)
            confidences.append(result.confidence)
    if texts:
        mean = sum(confidences) / len(confidences)
        block = "\n\n".join(texts)
        from taskcrew.tools.documents.models import OcrText

        page.text += "\n\n" + OcrText(text=block, confidence=mean).marked(
            f"{len(texts)} image region(s) on this page"
        )
        page.ocr, page.ocr_confidence = True, mean
        page.notes = []
    else:
        page.notes = ["this page also has image(s) in which OCR found no text"]


def _render(data: bytes, index: int) -> Any:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        page = document[index]
        return page.render(scale=OCR_DPI / 72, grayscale=True).to_pil()
    finally:
        document.close()
