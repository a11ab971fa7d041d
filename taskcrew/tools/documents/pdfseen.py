"""What a person sees of a PDF page: text drawn so nobody can see it is not read.

A PDF can show a person one amount and hand a program another: text painted white on white,
drawn in the invisible render mode (how scanners lay an OCR layer over a picture, and how anyone can
lay any other words there), covered by a shape or a picture drawn after it, clipped away, placed
outside the page, or shrunk to a speck. A text extractor reads all of it.

Whether a character is seen is decided by the page as pdfium paints it, not by guessing from the
drawing operators: the page is rendered twice, as it is and with every text object switched to the
invisible render mode, and a character is seen when the two renders differ inside its box (its ink
shows). Whatever hides the ink (a colour equal to what is under it, a later white box, a clip, the
page's edge) hides the character, by the same test. Besides: characters drawn in an invisible render
mode, outside the page, or under ``TINY_PT`` tall are not seen.

:func:`seen_pages` says, page by page, whether anything is hidden; where something is, it gives the
text a person sees (pdfium's text of the seen characters) and how much was left out. Pages where
everything is seen are left to the caller's own text extraction, unchanged.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

HIDDEN_MARK = "hidden text"  # how the reader's note on such a page starts
SCALE = 2.0  # render at 144 dpi: the stem of a small i is a pixel wide
MAX_SIDE = 6000  # pixels: a page larger than 41 inches is rendered at less than SCALE
INK = 24  # grey levels: a render that changes less than this (contrast under ~1.2) shows nothing
TINY_PT = 2.25  # under 3 px at 96 dpi (visibility.TINY_FONT_PX): too small to read
SQUEEZED = 0.1  # a character narrower than this share of its height (i and l are ~0.2) is squeezed
INVISIBLE = "drawn invisible"
_INVISIBLE_MODES = {3, 7}  # FPDF_TEXTRENDERMODE_INVISIBLE and _CLIP: nothing is painted


@dataclass
class SeenPage:
    """``text`` is None when a person sees every character (or it could not be told: ``unchecked``);
    else the text she sees."""

    text: str | None = None
    hidden: int = 0
    reasons: list[str] = field(default_factory=list)
    unchecked: str | None = None  # why what a person sees could not be told

    def note(self, read_by_ocr: bool = False) -> str | None:
        """What the reader must be told about this page, if anything. ``read_by_ocr``: the page's
        picture was read by OCR instead (an invisible text layer is how a scanner stores its own OCR)."""
        if self.unchecked:
            return (
                f"{HIDDEN_MARK}: whether all the text on this page can be seen could not be checked "
                f"({self.unchecked}); compare the values with the document as shown before acting on them"
            )
        if not self.hidden:
            return None
        if read_by_ocr and self.reasons == [INVISIBLE]:
            return (
                f"{HIDDEN_MARK}: the page's invisible text layer ({self.hidden} characters: a scanner's own "
                "OCR, or words laid over the picture) was not read; what the picture shows was read by OCR"
            )
        return (
            f"{HIDDEN_MARK}: {self.hidden} character(s) of text on this page are drawn so that nobody can "
            f"see them ({', '.join(self.reasons)}); they were not read. A document that hides text may "
            "have been altered: compare it with what the sender shows elsewhere before acting on it"
        )


@contextlib.contextmanager
def seer(data: bytes) -> Iterator[Callable[[int], SeenPage]]:
    """A function from a page's index to what is seen of it, while the document is open. A file
    pdfium cannot open (it is stricter than pypdf on some damaged files) is taken as all seen:
    pypdf's reading stands."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except Exception:
        yield lambda _index: SeenPage()
        return
    try:
        yield lambda index: _seen(document, index) if index < len(document) else SeenPage()
    finally:
        document.close()


def seen_pages(data: bytes, count: int) -> list[SeenPage]:
    """One :class:`SeenPage` for each of the first ``count`` pages."""
    with seer(data) as look:
        return [look(index) for index in range(count)]


def _seen(document: Any, index: int) -> SeenPage:
    try:
        return _look(document, index)
    except Exception as exc:  # pdfium failing on one page leaves pypdf's text, and says so
        return SeenPage(unchecked=f"the page could not be painted: {type(exc).__name__}")


def _look(document: Any, index: int) -> SeenPage:
    import numpy as np
    import pypdfium2.raw as raw

    page = document[index]
    textpage = page.get_textpage()
    try:
        chars = _chars(textpage, raw)
        if not any(c.printable for c in chars):
            return SeenPage()
        scale = min(SCALE, MAX_SIDE / max(1.0, *page.get_size()))
        before = _grey(page, scale, np)
        for obj in _text_objects(page, raw):
            raw.FPDFTextObj_SetTextRenderMode(obj, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
        after = _grey(page, scale, np)
        ink = (np.maximum(before, after) - np.minimum(before, after)) > INK
        rows, cols = ink.shape
        to_screen = _page_to_screen(page, raw, cols, rows)
        hidden: dict[str, int] = {}
        for char in chars:
            if not char.printable:
                continue
            why = _why_hidden(char)
            if why is None:
                x0, y0, x1, y1 = to_screen(char.box)
                if x1 <= 0 or y1 <= 0 or x0 >= cols or y0 >= rows:
                    why = "outside the page"
                else:  # a pixel around the ink box
                    x0, y0, x1, y1 = max(0, x0 - 1), max(0, y0 - 1), min(cols, x1 + 1), min(rows, y1 + 1)
                    if not ink[y0:y1, x0:x1].any() or _like_behind(char, after[y0:y1, x0:x1], np):
                        why = "painted in the colour behind it, covered, or clipped away"
            if why is not None:
                char.seen = False
                hidden[why] = hidden.get(why, 0) + 1
        if not hidden:
            return SeenPage()
        return SeenPage(text=_text(chars), hidden=sum(hidden.values()), reasons=list(hidden))
    finally:
        textpage.close()
        page.close()


@dataclass
class _Char:
    text: str
    box: tuple[float, float, float, float]  # its ink: left, right, bottom, top (page points)
    size: tuple[float, float]  # its cell (advance width, font height), in points
    mode: int  # the text object's render mode
    generated: bool
    paint: tuple[float, float] | None  # its colour as a grey level (0-255) and its opacity (0-1)
    seen: bool = True

    @property
    def printable(self) -> bool:
        return not self.generated and bool(self.text.strip())


def _chars(textpage: Any, raw: Any) -> list[_Char]:
    out = []
    box = [ctypes.c_double() for _ in range(4)]
    loose = raw.FS_RECTF()
    rgba = [ctypes.c_uint() for _ in range(4)]
    for i in range(raw.FPDFText_CountChars(textpage)):
        code = raw.FPDFText_GetUnicode(textpage, i)
        text = chr(code) if 0 < code < 0x110000 else ""
        raw.FPDFText_GetCharBox(textpage, i, *(ctypes.byref(b) for b in box))
        obj = raw.FPDFText_GetTextObject(textpage, i)
        raw.FPDFText_GetLooseCharBox(textpage, i, ctypes.byref(loose))
        mode = raw.FPDFTextObj_GetTextRenderMode(obj) if obj else 0
        colour = raw.FPDFText_GetStrokeColor if mode in (1, 5) else raw.FPDFText_GetFillColor
        painted = colour(textpage, i, *(ctypes.byref(c) for c in rgba))
        r, g, b, a = (c.value for c in rgba)
        out.append(
            _Char(
                text=text,
                box=(box[0].value, box[1].value, box[2].value, box[3].value),
                size=(abs(loose.right - loose.left), abs(loose.top - loose.bottom)),
                mode=mode,
                generated=bool(raw.FPDFText_IsGenerated(textpage, i)),
                paint=(0.299 * r + 0.587 * g + 0.114 * b, a / 255) if painted else None,
            )
        )
    return out


def _why_hidden(char: _Char) -> str | None:
    if char.mode in _INVISIBLE_MODES:
        return INVISIBLE
    width, tall = char.size
    if tall < TINY_PT:
        return "too small to read"
    if width < SQUEEZED * tall:
        return "squeezed to no width"
    return None


def _like_behind(char: _Char, behind: Any, np: Any) -> bool:
    """Its colour is what is painted under it, text left out: white letters laid over black ones
    change the render (they erase), but nobody sees the white letters."""
    if char.paint is None:
        return False
    grey, opacity = char.paint
    low, high = float(behind.min()), float(behind.max())  # the median lies between them: often decided
    if opacity * (low - grey) > INK or opacity * (grey - high) > INK:
        return False
    return opacity * abs(grey - float(np.median(behind))) <= INK


def _page_to_screen(
    page: Any, raw: Any, cols: int, rows: int
) -> Callable[[tuple[float, ...]], tuple[int, ...]]:
    """Page points to pixels of the render, with the page's rotation and crop box applied as pdfium
    applies them when it paints (an affine map, taken from three points): a character's box
    (left, right, bottom, top) becomes (x0, y0, x1, y1)."""
    x, y = ctypes.c_int(), ctypes.c_int()

    def device(px: float, py: float) -> tuple[float, float]:
        raw.FPDF_PageToDevice(page.raw, 0, 0, cols, rows, 0, px, py, ctypes.byref(x), ctypes.byref(y))
        return float(x.value), float(y.value)

    (ox, oy), (ax, ay), (bx, by) = device(0, 0), device(1000, 0), device(0, 1000)
    xx, xy, yx, yy = (ax - ox) / 1000, (ay - oy) / 1000, (bx - ox) / 1000, (by - oy) / 1000

    def to_screen(box: tuple[float, ...]) -> tuple[int, ...]:
        xs, ys = [], []
        for px, py in ((box[0], box[2]), (box[1], box[3])):
            xs.append(ox + xx * px + yx * py)
            ys.append(oy + xy * px + yy * py)
        return math.floor(min(xs)), math.floor(min(ys)), math.ceil(max(xs)), math.ceil(max(ys))

    return to_screen


def _text_objects(page: Any, raw: Any) -> list[Any]:
    """Every text object on the page, those inside form XObjects included."""
    found = []

    def walk(count: int, get: Any) -> None:
        for i in range(count):
            obj = get(i)
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_TEXT:
                found.append(obj)
            elif kind == raw.FPDF_PAGEOBJ_FORM:
                walk(raw.FPDFFormObj_CountObjects(obj), lambda j, o=obj: raw.FPDFFormObj_GetObject(o, j))

    walk(raw.FPDFPage_CountObjects(page.raw), lambda i: raw.FPDFPage_GetObject(page.raw, i))
    return found


def _grey(page: Any, scale: float, np: Any) -> Any:
    return np.asarray(page.render(scale=scale, grayscale=True, may_draw_forms=False).to_pil().convert("L"))


def _text(chars: list[_Char]) -> str:
    """pdfium's text of the seen characters; its own spaces and line breaks kept between them."""
    out: list[str] = []
    pending = ""
    for char in chars:
        if char.printable:
            if char.seen:
                out.append(pending + char.text)
            pending = ""
        elif char.text in "\r\n":
            pending = "\n" if out else ""
        elif char.text.isspace() and out and not pending:
            pending = " "
    return "".join(out).replace("\r", "")
