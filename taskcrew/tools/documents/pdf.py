"""PDF: the text layer in reading order (pypdf's layout mode), OCR for pages and image regions
without one (pages rendered with pypdfium2, images taken from the page).

Layout mode places text by its position on the page, so a value drawn before its label in the file
still comes out after it on the same line (``Order number: 12572103``), and table columns stay
apart. Runs of blanks are shortened so the layout costs few characters. Text drawn upside down or
mirrored against the rest of its page (a '6' turned over shows a '9') puts ``TURNED`` in the page's
note (what could not be checked): told from each character's whole matrix as pdfium draws it (pdfseen),
forms and the page's own flip included.

Annotations a viewer paints on the page (a FreeText box, a stamp: "VOID - DUPLICATE, DO NOT PAY") and
notes it shows as an icon are read too, each inside a mark (``[annotation: …]``) before the page's
text when it stands in the page's upper half, else after it (``_annotations``), when a viewer paints
them (pdfium, ``pdfseen``): an annotation that paints nothing a person can see (an empty appearance,
words clipped away, an opacity of 0, hidden, not to be viewed, off the page) is not read; of one
that is painted, only the words a person sees are read (``SeenPage.words``: words its appearance
clips away or covers are not). The page's own text never spells such a mark (``visibility.own_text``).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import re
from collections.abc import Iterator
from typing import Any

from taskcrew.tools.documents import limits, pixels
from taskcrew.tools.documents.limits import MAX_CHARS, MAX_OCR_PAGES, MAX_PAGES
from taskcrew.tools.documents.models import NO_TEXT_LAYER, OcrText, PageText, Unreadable, tidy
from taskcrew.tools.documents.ocr import OCR_DPI, OcrUnavailable, ocr_image
from taskcrew.tools.documents.pdfseen import TURNED as TURNED  # said of a page with text upside down
from taskcrew.tools.documents.pdfseen import AnnotationText, SeenPage, seer
from taskcrew.tools.documents.visibility import own_text

MIN_IMAGE_SIDE = 120  # pixels; smaller images are logos, rules and specks, not text
IMAGE_DEPTH = 3  # images inside forms inside forms are read; deeper ones are not counted either
_GAP = re.compile(r"[ \t]{4,}")
# annotations whose words a person sees on the page (a note: its icon, which opens to show them), and
# how each is marked where it is read
ANNOTATIONS = {"/FreeText": "annotation", "/Stamp": "stamp annotation", "/Text": "note annotation"}
_NOT_SHOWN = 2 | 32  # the annotation flags Hidden and NoView: a viewer does not paint it
MAX_ANNOTATIONS = 100  # read per page; more are said to be left out
MAX_ANNOTATION_CHARS = 1_000  # of each one's words
MAX_APPEARANCE_BYTES = 256 * 1024  # an appearance larger than this is not parsed for its words


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
            seen_of: dict[int, SeenPage] = {}
            annotated: dict[
                int, tuple[list[str], list[str]]
            ] = {}  # a page's annotations: before, after its text
            used = 0
            with seer(data, annotation_words=True) as look:
                for index in range(min(count, MAX_PAGES)):
                    page = reader.pages[index]
                    seen = seen_of[index + 1] = look(index)  # text nobody can see is not read (pdfseen)
                    text = own_text(_page_text(page))  # a '6' upside down (a '9') is in seen.unchecked
                    if seen.text is not None:
                        text = tidy(seen.text)
                    page_text = PageText(number=index + 1, text=text, hidden_text=seen.note())
                    page_text.notes = _image_notes(page, bool(page_text.text.strip()))
                    annotated[index + 1] = _annotations(page, page_text.notes, seen.painted, seen.words)
                    pages.append(page_text)
                    used += len(page_text.text)
                    if index + 1 < min(count, MAX_PAGES) and limits.past(limits.TEXT_SHARE):
                        pages[-1].notes.append(
                            f"reading stopped after page {index + 1} of {count}: the pages are too slow to parse "
                            f"(over {limits.budget_s(limits.TEXT_SHARE):.0f} s); ask a human which part matters"
                        )
                        break
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
        for p in needs_ocr:
            p.hidden_text = seen_of[p.number].note(read_by_ocr=p.ocr)
    for p in pages:  # after OCR: a stamp on a scanned page does not make it a page with a text layer
        before, after = annotated.get(p.number, ([], []))
        p.text = "\n\n".join(part for part in [*before, p.text, *after] if part.strip())
    if not any(p.text.strip() for p in pages):
        scanned = any(p.notes for p in pages)
        if scanned:
            why = "; ".join(dict.fromkeys(n for p in pages for n in p.notes))
            raise Unreadable(f"{name}: {NO_TEXT_LAYER} ({why})" if ocr else f"{name}: {NO_TEXT_LAYER}")
        if any(seen_of[p.number].hidden for p in pages):
            raise Unreadable(
                f"{name}: every piece of text in this PDF is drawn so that nobody can see it "
                f"({pages[0].hidden_text or 'see its pages'}); it was not read — ask a human"
            )
        raise Unreadable(f"{name}: the PDF has no text on any page; ask a human")
    return pages


BACK_STEP = 0.1  # a fragment starting this share of its font size left of the one before: out of order


def _page_text(page: Any) -> str:
    """The page's text in the file's drawing order, unless that order disagrees with the positions.

    When a fragment is drawn to the left of the one before it on the same line (a value written
    before its label: ``12572103Ordernummer:``, a digit drawn before the one left of it), the page is
    rebuilt from positions instead (pypdf's layout mode), so labels and values read left to right,
    and table columns stay apart.
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
    """True when a fragment of text starts left of the one drawn before it on the same line (by
    more than ``BACK_STEP`` of its size: a digit drawn before the one left of it too)."""
    for (x1, y1, size), (x2, y2, _) in itertools.pairwise(spots):
        if abs(y2 - y1) < max(1.0, 0.3 * size) and x2 < x1 - BACK_STEP * size:
            return True
    return False


def _annotations(
    page: Any, notes: list[str], painted: set[int] | None, shown: dict[int, AnnotationText] | None = None
) -> tuple[list[str], list[str]]:
    """The words of the annotations a person sees on the page (``ANNOTATIONS``; not flagged hidden
    or NoView, placed on the page, and painted: their index in ``painted``, what pdfseen saw a
    viewer paint visibly; None: not told), each marked (``[annotation: …]``): those standing in its
    upper half, and the others. Words are those its appearance draws, else, when it has none, its
    ``/Contents`` (a viewer draws a FreeText box without an appearance from them; a note's icon
    shows them when opened); a stamp drawing no words is named by its ``/Name``. Of an appearance
    drawing some of its words so that nobody sees them (``shown``, by pdfseen), only those seen are
    read. What could not be read goes in ``notes``."""
    before: list[str] = []
    after: list[str] = []
    try:
        found = page.get("/Annots")
        annots = list(found.get_object()) if found is not None else []
        box = [float(v) for v in page.cropbox]
    except Exception:  # a damaged /Annots: the page's text stands
        notes.append("the page's annotations could not be read (damaged); look at the page as shown")
        return before, after
    (left, right), (bottom, top) = sorted(box[0::2]), sorted(box[1::2])
    read = unpainted = unseen = unseen_chars = 0
    shown = shown or {}
    for number, ref in enumerate(annots):
        try:
            annot = ref.get_object()
            kind = ANNOTATIONS.get(str(annot.get("/Subtype")))
            if kind is None or int(annot.get("/F", 0)) & _NOT_SHOWN:
                continue
            x0, y0, x1, y1 = (float(v) for v in annot["/Rect"])
            if max(x0, x1) <= left or min(x0, x1) >= right or max(y0, y1) <= bottom or min(y0, y1) >= top:
                continue  # off the page: nobody sees it
            if painted is not None and number not in painted:
                unpainted += 1  # a viewer paints nothing of it a person can see
                continue
            if read >= MAX_ANNOTATIONS:
                notes.append(
                    f"only {MAX_ANNOTATIONS} annotations on this page were read; look at the page as shown"
                )
                break
            read += 1
            seen = shown.get(number)
            if seen is not None:  # its appearance draws words nobody sees: only those seen are read
                unseen, unseen_chars = unseen + 1, unseen_chars + seen.hidden
            words = _annotation_words(page, annot, None if seen is None else seen.text)
        except Exception:  # one damaged annotation: said, the others are read
            notes.append("an annotation on this page could not be read (damaged); look at the page as shown")
            continue
        if not words:
            continue
        if len(words) > MAX_ANNOTATION_CHARS:
            words = words[:MAX_ANNOTATION_CHARS] + " … (cut)"
        share = (top - max(y0, y1)) / ((top - bottom) or 1)
        (before if share < 0.5 else after).append(f"[{kind}: {own_text(words)}]")
    if unpainted:
        notes.append(
            f"{unpainted} annotation(s) on this page paint nothing a person can see; their words were not read"
        )
    if unseen:
        notes.append(
            f"{unseen} annotation(s) on this page draw words nobody can see ({unseen_chars} character(s): "
            "clipped away, outside the box, covered, or in the colour behind them); those words were not read"
        )
    return before, after


def _annotation_words(page: Any, annot: Any, seen: str | None = None) -> str:
    """The words an annotation shows, on one line (see ``_annotations``); ``seen``: what a person
    sees of the words its appearance draws, when she does not see them all (pdfseen)."""
    appearance = annot.get("/AP")
    normal = appearance.get_object().get("/N") if appearance is not None else None
    normal = normal.get_object() if normal is not None else None
    if normal is not None and not hasattr(normal, "get_data"):  # appearances by state: the one it is in
        state = annot.get("/AS")
        normal = (
            normal.get(state).get_object() if state is not None and normal.get(state) is not None else None
        )
    drawn = ""
    drawing = normal is not None and hasattr(normal, "get_data")
    if seen is not None:
        drawn = seen
    elif normal is not None and drawing:
        if len(normal.get_data()) > MAX_APPEARANCE_BYTES:
            return "(its appearance is too large to read; look at the page as shown)"
        drawn = page.extract_xform_text(normal) or ""
    contents = " ".join(str(annot.get("/Contents") or "").split())
    if annot.get("/Subtype") == "/Text":  # a note: its icon opens to show its contents
        return contents
    if drawn.strip():
        return " ".join(drawn.split())
    if annot.get("/Subtype") == "/FreeText":  # drawn from its contents when it has no appearance
        shows = drawing or seen is not None  # its appearance (pdfium's, made from them, too) hides them
        return "a text box whose words could not be read; look at the page as shown" if shows else contents
    name = str(annot.get("/Name") or "").lstrip("/")
    described = f", described as: {contents}" if contents else ""
    return f"a stamp{f' ({name})' if name else ''} whose words could not be read{described}; look at the page as shown"


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
    """Sizes of the images the page draws, those inside its forms too (Chromium prints an element
    with CSS ``opacity`` and a ``filter`` as an image inside a transparency-group form), as deep as
    ``_page_images`` takes them out."""
    sizes: list[tuple[int, int]] = []
    seen: set[int] = set()

    def walk(holder: Any, depth: int) -> None:
        resources = holder.get("/Resources")
        xobjects = resources.get_object().get("/XObject") if resources is not None else None
        for x in xobjects.get_object().values() if xobjects is not None else ():
            obj = x.get_object()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.get("/Subtype") == "/Image":
                sizes.append((int(obj.get("/Width", 0)), int(obj.get("/Height", 0))))
            elif obj.get("/Subtype") == "/Form" and depth + 1 < IMAGE_DEPTH:
                walk(obj, depth + 1)

    with contextlib.suppress(Exception):  # a damaged resource: the images found before it count
        walk(page, 0)
    return sizes


def _ocr_pages(data: bytes, reader: Any, pages: list[PageText], name: str) -> None:
    """Scanned pages: OCR the rendered page. Mixed pages: OCR each large image on it."""
    done = 0
    for page in pages:
        if done >= MAX_OCR_PAGES or limits.past(limits.OCR_SHARE):
            why = f"only {MAX_OCR_PAGES} pages" if done >= MAX_OCR_PAGES else "the time for OCR is used up"
            page.notes.append(f"not read by OCR: {why} per document; ask a human about this page")
            continue
        done += 1
        try:
            if page.text.strip():
                _ocr_regions(data, page)
            else:
                result = ocr_image(_render(data, page.number - 1))
                result.text = own_text(result.text)  # the page's own text, before the reader's marks
                if result.text:
                    page.text = result.marked("the whole page is an image")
                    page.ocr, page.ocr_confidence, page.notes = True, result.confidence, []
                    page.ocr_values = result.values
                else:
                    page.notes = ["the page is an image and OCR found no text on it"]
        except OcrUnavailable as exc:
            page.notes = [*page.notes, str(exc)]
            break
        except Unreadable as exc:
            page.notes = [*page.notes, str(exc)]


def _ocr_regions(data: bytes, page: PageText) -> None:
    """OCR each large picture on a page with a text layer; pictures in the upper half of the page
    go before the text, the others after it (reading order)."""
    before: list[OcrText] = []
    after: list[OcrText] = []
    read = undecoded = 0
    for image, top_share in _page_images(data, page.number - 1):
        if image is None:
            undecoded += 1
            continue
        if not pixels.holds_text(image):  # a logo, a rule, a photograph: ~1.5 s of OCR for nothing
            continue
        read += 1
        result = ocr_image(image)
        if result.text:
            (before if top_share < 0.5 else after).append(result)
    regions = len(before) + len(after)
    damaged = f"{undecoded} image(s) on this page could not be decoded (damaged?); what they show is unread"
    missed = [damaged] if undecoded else []
    if not regions:  # only pictures without text (logos) say nothing; pictures OCR could not read do
        page.notes = (["this page also has image(s) in which OCR found no text"] if read else []) + missed
        return
    mean = sum(r.confidence for r in before + after) / regions

    def marked(results: list[OcrText]) -> str:
        what = f"{regions} image region(s) on this page"
        text = "\n\n".join(own_text(r.text) for r in results)  # the page's own text, then the marks
        return OcrText(text=text, confidence=mean, values=[v for r in results for v in r.values]).marked(what)

    parts = [marked(before)] if before else []
    parts.append(page.text)
    if after:
        parts.append(marked(after))
    page.text = "\n\n".join(parts)
    page.ocr, page.ocr_confidence, page.notes = True, mean, missed
    page.ocr_values = [v for r in before + after for v in r.values]


def _page_images(data: bytes, index: int) -> list[tuple[Any, float]]:
    """The page's large images as PIL images (None: one pdfium cannot decode), with how far down the
    page each starts (0 top, 1 bottom)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        page = document[index]
        height = page.get_size()[1] or 1
        found = []
        for obj in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE], max_depth=IMAGE_DEPTH):
            width_px, height_px = obj.get_px_size()
            if min(width_px, height_px) < MIN_IMAGE_SIDE:
                continue
            matrix, opacity = obj.get_matrix(), 1.0
            for form in _containers(obj):  # an image inside forms: placed and faded by each of them
                matrix = matrix.multiply(form.get_matrix())
                opacity *= _opacity(pdfium, form)
            top = max(matrix.on_point(x, y)[1] for x in (0, 1) for y in (0, 1))
            picture = _picture(pdfium, obj, width_px, height_px, opacity)
            found.append((picture, max(0.0, (height - top) / height)))
        return found
    finally:
        document.close()


def _containers(obj: Any) -> Iterator[Any]:
    form = obj.container
    while form is not None:
        yield form
        form = form.container


def _opacity(pdfium: Any, form: Any) -> float:
    """The opacity a form is drawn with (CSS ``opacity`` prints as a form drawn with it), 0 to 1."""
    import ctypes

    alpha, colour = ctypes.c_uint(255), ctypes.c_uint()
    spots = (ctypes.byref(colour), ctypes.byref(colour), ctypes.byref(colour), ctypes.byref(alpha))
    return alpha.value / 255 if pdfium.raw.FPDFPageObj_GetFillColor(form, *spots) else 1.0


def _picture(pdfium: Any, obj: Any, width: int, height: int, opacity: float = 1.0) -> Any:
    """The image as it is drawn, laid on white (``pixels.on_white``): pdfium renders its samples
    through its soft mask or mask (a CSS ``filter`` printed by Chromium is black samples under a soft
    mask that holds the picture) and its own opacity, one pixel per sample, the way up it is stored;
    ``opacity`` is that of the forms it is in. None when pdfium cannot decode it (drawn, a damaged
    image is blank: nothing would say what it held)."""
    matrix = obj.get_matrix()
    obj.set_matrix(pdfium.PdfMatrix(width, 0, 0, height, 0, 0))  # one pixel per sample, not mirrored
    try:
        raw = pdfium.raw.FPDFImageObj_GetRenderedBitmap(obj.pdf, obj.page, obj)
    finally:
        obj.set_matrix(matrix)
    if not raw:
        return None
    drawn = pdfium.PdfBitmap.from_raw(raw).to_pil()
    if drawn.mode == "RGBA" and drawn.getchannel("A").getextrema()[1] == 0:
        # nothing painted: a mask that hides it all (white is right), or samples pdfium cannot decode
        samples = pdfium.raw.FPDFImageObj_GetBitmap(obj)
        if not samples:
            return None
        pdfium.raw.FPDFBitmap_Destroy(samples)
    if opacity < 1 and drawn.mode == "RGBA":  # a picture in a form at opacity 0.02 is not seen either
        drawn.putalpha(drawn.getchannel("A").point(lambda a: round(a * opacity)))
    return pixels.on_white(drawn)


def _render(data: bytes, index: int) -> Any:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        page = document[index]
        return page.render(scale=OCR_DPI / 72, grayscale=True).to_pil()
    finally:
        document.close()
