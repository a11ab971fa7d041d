"""What a person sees of a PDF page: text drawn so nobody can see it is not read.

A PDF can show a person one amount and hand a program another: text painted white on white,
drawn in the invisible render mode (how scanners lay an OCR layer over a picture, and how anyone can
lay any other words there), covered by a shape or a picture drawn after it, clipped away, placed
outside the page, or shrunk to a speck. A text extractor reads all of it.

Whether a character is seen is decided by the page as pdfium paints it, not by guessing from the
drawing operators: the page is rendered twice, as it is and with every text object switched to the
invisible render mode, and a character is seen when the two renders differ inside its box (its ink
shows) by a WCAG contrast of ``visibility.MIN_CONTRAST`` at least, the HTML reader's rule. Whatever hides the ink (a colour equal to what is under it, a later white box, a clip, the
page's edge) hides the character, by the same test. Besides: characters drawn in the invisible render
mode, outside the page, or under ``TINY_PT`` tall are not seen; nor is a character drawn under
another at the same spot (black ink on black ink changes the render too): of characters drawn over
one another only the last is seen, the others being hidden text, or, when the same character,
simply read once (bold struck twice). A character is seen by its own ink only: one whose box
overlaps another text object's character, and whose ink shows only inside that one's box, is
painted once more with its text object left out, and is hidden when that changes nothing there
(``_own_ink``; objects far enough apart are left out of one render together, ``_layers``). Text
filled at opacity 0 with ink painted in its glyphs' shape (a gradient through the letters) has that
ink for its own (``_glyph_ink``). Text drawn upside down or mirrored against the rest of the page,
by each character's whole matrix as pdfium draws it, is said to be (``TURNED``). pdfium itself lists a character drawn twice at one spot once,
which pypdf reads twice; the page is then read as pdfium's text, with no note. Text drawn as a clipping path (render
mode 7, the letters cut out of a gradient or a picture painted after them) cannot be judged so: it paints
nothing itself, what shows is what is drawn next. It is kept, and the page says it could not be checked.

Speed (bench/pdf_seen_bench.py: ~40 ms of CPU for a page of 3,500 characters, painted in colour for
the contrast rule; a third of what one call per property per character took): a printable character costs five pdfium calls, declared on
plain addresses so no ctypes object is made for each; the render mode and colour are read once per
text object (pdfium keeps them there); the pages are not painted at all when the objects and boxes
decide every character; and the colour test (white letters over black ones erase, but nobody sees
them) is made once for a text object against all that is behind its characters, then character by
character only where that does not decide it. The verdicts are those of the test made character by
character.

Text a line is painted through is struck: each drawn segment is judged, not a path object's
bounds (a stroked path's segments, a filled path's thin subpaths, a viewer's pen strokes: an Ink,
Line or PolyLine annotation's, where it paints), across the middle of upright glyphs
(``STRIKE_BAND``, the size they are drawn at), level or slanting (a slash, an X over a figure),
not a tick nor a rule running on past the text, and painted over it (the page rendered without it
shows so); or a StrikeOut annotation. The page is read as pdfium's text with each struck run
inside ``visibility.STRUCK_OPEN`` … ``STRUCK_CLOSE`` (``_struck``), as the HTML reader marks
``<s>``. The page's own text never spells such a mark (``visibility.own_text``, before the marks
are added).

Annotations count by what a viewer paints of them (``_painted_annotations``): the page rendered with
and without its annotations, one whose area does not change visibly paints nothing (an empty
appearance, words clipped away, an opacity (/CA) of 0, which pdfium does not apply and a viewer
does) and is left out of ``SeenPage.painted``, which the PDF reader reads annotations' words from.
Of a painted FreeText box or stamp, each character its appearance draws is judged as the page's
text is, on the page with its annotations flattened into it (``annotation_texts``): words clipped
away, outside the appearance's box, covered or in the colour behind them are left out
(``SeenPage.words``).

:func:`seen_pages` says, page by page, whether anything is hidden; where something is, it gives the
text a person sees (pdfium's text of the seen characters) and how much was left out. Pages where
everything is seen are left to the caller's own text extraction, unchanged.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from taskcrew.tools.documents.visibility import (
    LUMA,
    MIN_CONTRAST,
    STRUCK_CLOSE,
    STRUCK_OPEN,
    WHITE,
    Colour,
    contrast,
    in_strike,
    linear,
    own_text,
)

HIDDEN_MARK = "hidden text"  # how the reader's note on such a page starts
SCALE = 2.0  # render at 144 dpi: the stem of a small i is a pixel wide
MAX_SIDE = 6000  # pixels: a page larger than 41 inches is rendered at less than SCALE
# ink shows where the render changes by a WCAG contrast of at least visibility.MIN_CONTRAST (the HTML
# reader's rule: the painted colour against what is under it); less, and nobody sees it
TINY_PT = 2.25  # under 3 px at 96 dpi (visibility.TINY_FONT_PX): too small to read
SQUEEZED = 0.1  # a character narrower than this share of its height (i and l are ~0.2) is squeezed
INVISIBLE = "drawn invisible"
_COVERED = "painted in the colour behind it, covered, or clipped away"
_UNDER = "drawn under another character"
_TWICE = "drawn twice"  # the same character over itself (double-struck bold, a shadow): one is kept, no note
_OTHER = (
    "not an annotation's"  # the page's own text, when an annotation's words are judged (``annotation_texts``)
)
# two characters coincide when their ink boxes overlap by more than COINCIDE of the larger and they
# are drawn from origins less than SAME_SPOT of the font size apart (an italic f's ink reaches over
# the next f's too, but from 0.28 em before it)
COINCIDE = 0.5
SAME_SPOT = 0.15
# a page read again to tell what pdfium left out as drawn twice: past this many characters, or text
# objects to move apart, it is taken as so (a page built to be slow: a line drawn over itself 10,000 times)
# a different character under another from the same origin at the same size (less than ONE_PEN of
# the font size off) in the same colour is typed over: hidden text; any other (an X ticked in a box,
# a description running into the next column, a see-through stamp, a form filled over its grey
# placeholder) is hidden only when its own ink does not show
ONE_PEN = 0.005
MAX_APART = 200_000
MAX_APART_OBJECTS = 5_000
_CLIP = (
    "text drawn as a clipping path (render mode 7): what shows of it is whatever is painted after it, "
    "which was not checked"
)
_INVISIBLE_MODE = 3  # FPDF_TEXTRENDERMODE_INVISIBLE: nothing is painted
_CLIP_MODE = 7  # FPDF_TEXTRENDERMODE_CLIP: nothing is painted, what is drawn next shows through the letters
_STROKED_MODES = {1, 5}  # stroke, stroke and clip: the letters' colour is the stroke's
_BOTH_MODES = {2, 6}  # fill and stroke (and clip): the letters show in either colour
# text objects pdfium merged into another (drawn again at its spot) whose colours are looked up
# for it: past this many pairs to compare, none is (the merged copy is judged by its own colour)
MAX_MERGED = 1_000_000
# renders of the page, each without a group of text objects none of which comes near another, to
# tell the own ink of characters overlapping other text (``_own_ink``, ``_layers``): a see-through
# stamp over a table takes a few; past this many the page says its text could not all be checked
MAX_OWN_INK = 32
_CROWDED = (
    f"text is drawn over or into other text in more than {MAX_OWN_INK} layers, too many to tell "
    "each piece's own ink"
)
_ALONE = (
    "a character is drawn over a different one of the same piece of text, which cannot be painted "
    "without it to tell whether it shows"
)
# ink painted in a transparent character's glyph (``_glyph_ink``) is its own when the ink in its box
# outside the glyph (a neighbour's edge) is at most this share of the ink inside it
GLYPH_STRAY = 0.25
_FORM_DEPTH = 64  # form XObjects nested this deep are looked into (pdfium's parser stops at 40)
# said (as what was not checked) of a page where some text is drawn upside down or mirrored against
# the rest of it, as pdfium draws each character (its whole matrix, forms' and page's included)
TURNED = (
    "some text on this page is drawn upside down or mirrored against the rest of it (a '6' turned over "
    "shows a '9'), so what it reads as may not be what a person sees"
)
TURNED_DEGREES = 100.0  # text turned more than this from the page's own direction is upside down
# a line drawn through text (a corrected figure struck out): a stroked or filled path no thicker than
# STRIKE_THICK of the font size, wider than it is thick, whose middle lies between these shares of
# the font size above a character's baseline (an underline lies under the baseline, an overline
# and a table's rule above the capitals), across the middle of the character, which is upright
STRIKE_BAND = (0.1, 0.55)
STRIKE_THICK = 0.25
STRIKE_UPRIGHT = 1.0  # degrees: text turned more is not judged struck
# each drawn segment is judged (a path's subpaths when filled, its segments when stroked, a pen's
# strokes): one slanting up to STRIKE_SLANT from level strikes a character whose middle it crosses
# in the band; one slanting through the whole band (a slash through a figure) also each character
# along it whose middle it passes within STRIKE_REACH (the figure's first and last digits); two
# slanting ones that cross each other in their middle parts (CROSSED) strike each character whose
# middle lies where both reach (an X over a figure); a tick (two strokes meeting at their lowest
# point at more than TICK_TURN degrees) strikes nothing
STRIKE_SLANT = 60.0
STRIKE_REACH = (-0.2, 0.75)
# a line (or an X) running on past the characters it would strike, on either side, by more than
# STRIKE_OVERRUN[0] of their font size plus STRIKE_OVERRUN[1] of their span is a rule, not a strike
# (a table's rule or a chart's grid line through a label; a pen overshooting a figure is a strike)
STRIKE_OVERRUN = (1.5, 0.25)
CROSSED = (0.1, 0.9)  # the share of each segment's length, from its start, where the other crosses it
TICK_TURN = 45.0
STRIKE_GRID = (
    8.0  # points: the cells in which a path is looked for near the text before its segments are read
)
MAX_STRIKE_PATHS = 20_000  # path objects looked at per page for lines through text …
MAX_STRIKE_SEGMENTS = 100_000  # … segments read of those drawn near the text …
MAX_STRIKE_PAIRS = 2_000_000  # … and (segment, character) pairs compared; past any, the page says so
_PAIRS_AT_ONCE = 250_000  # (segment, character) pairs worked out in one numpy pass
MAX_STRIKE_OUTS = 500  # StrikeOut annotations' areas (a viewer's strike-through comment) looked at per page
_STRIKES_UNCHECKED = "too many lines are drawn on this page to tell which strike through its text"
# annotations judged by what a viewer paints of them (``_painted_annotations``): those whose words are
# read (FreeText, stamp, note) and those that strike text (StrikeOut; a pen's Ink, Line, PolyLine)
_PEN = (15, 4, 8)  # FPDF_ANNOT_INK, _LINE, _POLYLINE: a viewer's pen stroke
_JUDGED = frozenset({1, 3, 13, 12, *_PEN})  # TEXT, FREETEXT, STAMP, STRIKEOUT and the pens
MAX_JUDGED_ANNOTATIONS = 200  # per page; past this many, the others are not read (said)
# an annotation whose area another annotation's overlaps is painted once more without it, to tell
# its own paint: past this many such renders, the others are taken as painted (said)
MAX_ANNOTATION_RENDERS = 8
_ANNOTATIONS_UNCHECKED = "too many annotations overlap on this page to tell what each one paints"
# annotations whose appearance's words are read (FPDF_ANNOT_FREETEXT, _STAMP): each character of them
# is judged as the page's own text is, on the page with its annotations painted into it
# (``annotation_texts``)
_WORDS = (3, 13)
_WORDS_UNCHECKED = (
    "the words of the annotations on this page could not be checked against what a viewer paints"
)


class AnnotationText(NamedTuple):
    """What a person sees of the words an annotation's appearance draws: pdfium's text of the seen
    characters (on one line; "" when none is seen) and how many characters nobody sees."""

    text: str
    hidden: int


@dataclass
class SeenPage:
    """``text`` is None when a person sees every character and each once, else the text she sees
    (a character drawn twice over itself is in it once, with no note). ``unchecked``
    (the text on the page, or some of it, could not be judged) may go with either: what could not
    be judged is kept."""

    text: str | None = None
    hidden: int = 0
    reasons: list[str] = field(default_factory=list)
    unchecked: str | None = None  # why what a person sees could not be told
    struck: int = 0  # characters seen struck through (in ``text``, inside STRUCK_OPEN … STRUCK_CLOSE)
    # the annotations (their index in the page's /Annots) a viewer paints visibly, of those judged
    # (``_painted_annotations``); None: not judged (pdfium could not paint the page)
    painted: set[int] | None = None
    # of those whose words are read (a FreeText box, a stamp), each whose appearance draws some of
    # its words so that nobody sees them (clipped away, outside its box, covered, in the colour
    # behind them): what it shows of them (``annotation_texts``; asked for by ``seer``)
    words: dict[int, AnnotationText] = field(default_factory=dict)

    def note(self, read_by_ocr: bool = False) -> str | None:
        """What the reader must be told about this page, if anything. ``read_by_ocr``: the page's
        picture was read by OCR instead (an invisible text layer is how a scanner stores its own OCR)."""
        hidden = self._hidden_note(read_by_ocr)
        if not self.unchecked:
            return hidden
        unchecked = (
            f"whether all the text on this page can be seen could not be checked ({self.unchecked}); "
            "compare the values with the document as shown before acting on them"
        )
        return f"{HIDDEN_MARK}: {unchecked}" if hidden is None else f"{hidden}. Besides, {unchecked}"

    def _hidden_note(self, read_by_ocr: bool) -> str | None:
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
def seer(data: bytes, annotation_words: bool = False) -> Iterator[Callable[[int], SeenPage]]:
    """A function from a page's index to what is seen of it, while the document is open. A file
    pdfium cannot open (it is stricter than pypdf on some damaged files) is taken as all seen:
    pypdf's reading stands. ``annotation_words``: tell what is seen of the words of the annotations
    a viewer paints (``SeenPage.words``), for a reader that reads them. Each page is looked at
    once (telling that paints its annotations into it): asked again, the same answer is given.
    pdfium that cannot be loaded for want of memory (a parse's memory limit) is out of memory."""
    try:
        import pypdfium2 as pdfium
    except OSError as exc:
        if "failed to map" in str(exc):  # dlopen: no room left to map the library (ENOMEM)
            raise MemoryError(str(exc)) from exc
        raise

    try:
        document = pdfium.PdfDocument(data)
    except Exception:
        yield lambda _index: SeenPage()
        return
    looked: dict[int, SeenPage] = {}

    def look(index: int) -> SeenPage:
        if index not in looked:
            looked[index] = _seen(document, index, annotation_words) if index < len(document) else SeenPage()
        return looked[index]

    try:
        yield look
    finally:
        document.close()


def seen_pages(data: bytes, count: int) -> list[SeenPage]:
    """One :class:`SeenPage` for each of the first ``count`` pages."""
    with seer(data) as look:
        return [look(index) for index in range(count)]


def _seen(document: Any, index: int, annotation_words: bool = False) -> SeenPage:
    try:
        seen = _look(document, index)
    except Exception as exc:  # pdfium failing on one page leaves pypdf's text, and says so
        return SeenPage(unchecked=f"the page could not be painted: {type(exc).__name__}")
    if annotation_words and seen.painted:
        try:
            seen.words = annotation_texts(document, index, seen.painted)
        except Exception:  # the words are read as their appearance holds them, and the page says so
            seen.unchecked = "; ".join(filter(None, [seen.unchecked, _WORDS_UNCHECKED]))
    return seen


def _look(document: Any, index: int) -> SeenPage:
    import pypdfium2.raw as raw

    page = document[index]
    textpage = page.get_textpage()
    try:
        scale = min(SCALE, MAX_SIDE / max(1.0, *page.get_size()))
        annotations, as_is, annotations_unchecked = _painted_annotations(page, scale)
        chars = _read_chars(textpage)
        if not chars.printable:
            return SeenPage(painted=set(annotations), unchecked=annotations_unchecked)
        turned = TURNED if _turned(chars.turns) else None  # a '6' upside down is a '9'
        objects = list(page.get_objects(filter=[raw.FPDF_PAGEOBJ_TEXT], max_depth=_FORM_DEPTH))
        verdicts = _by_object(chars)
        painted, crowded, alone = _judge(
            page, objects, chars, verdicts, scale, as_is
        )  # what only the painted page tells
        hidden: dict[str, int] = {}
        for verdict in verdicts:
            if verdict is not None and verdict not in (_CLIP, _TWICE):
                hidden[verdict] = hidden.get(verdict, 0) + 1
        struck, strikes_unchecked = _struck(page, chars, verdicts, objects, painted, annotations, scale)
        notes = [
            _CLIP if _CLIP in verdicts else None,
            crowded,
            _ALONE if alone else None,
            turned,
            strikes_unchecked,
            annotations_unchecked,
        ]
        unchecked = "; ".join(filter(None, notes)) or None
        # after the render: this moves the text objects apart
        if not hidden and not struck and _TWICE not in verdicts and not _drawn_twice(page, textpage, objects):
            return SeenPage(unchecked=unchecked, painted=set(annotations))
        seen = {i for i, verdict in zip(chars.printable, verdicts, strict=True) if verdict in (None, _CLIP)}
        text = _text(chars.texts, set(chars.printable), seen, {chars.printable[j] for j in struck})
        return SeenPage(
            text=text,
            hidden=sum(hidden.values()),
            reasons=list(hidden),
            unchecked=unchecked,
            struck=len(struck),
            painted=set(annotations),
        )
    finally:
        textpage.close()
        page.close()


@dataclass
class _Chars:
    """A page's characters as pdfium reads them. Every character's text (pdfium's own spaces and
    line breaks too); for the printable ones (drawn, not blank) their boxes and text objects."""

    texts: list[str]
    printable: list[int]  # the index in ``texts`` of each printable character; for these, in order:
    box: Any  # their ink: an (n, 4) array of left, right, bottom, top, in page points
    cell: Any  # their cells: an (n, 2) array of advance width and font height, in points
    obj: list[int]  # their text objects, an index into ``modes``, ``paints`` and ``handles``:
    modes: list[int]  # the text object's render mode
    paints: list[list[Colour]]  # its colours (fill, stroke) as red, green, blue (0-255) and
    # an opacity (0-1), each that it is painted in; none: not known
    handles: list[int | None]  # its address (pdfium's FPDF_PAGEOBJECT)
    page: int | None  # the address of the text page they are read from (while it is open)
    # each text object's direction on the page, as pdfium draws it (its whole matrix: the page's,
    # the forms' it is drawn in, its own): angle in degrees, mirrored, and its printable characters
    turns: list[tuple[float, bool, int]] = field(default_factory=list)


class _Pdfium(NamedTuple):
    """pdfium's text calls, declared on plain addresses (ints) in and out: a page has thousands of
    characters, and wrapping each handle in a ctypes pointer object cost more than the calls."""

    count: Callable[..., int]
    unicode: Callable[..., int]
    generated: Callable[..., int]
    char_box: Callable[..., int]
    loose_box: Callable[..., int]
    text_object: Callable[..., int | None]
    render_mode: Callable[..., int]
    fill: Callable[..., int]
    stroke: Callable[..., int]
    origin: Callable[..., int]
    font_size: Callable[..., float]
    matrix: Callable[..., int]
    path_count: Callable[..., int]  # a path object's segments: how many, each, its point, kind, close
    path_segment: Callable[..., int | None]
    segment_point: Callable[..., int]
    segment_type: Callable[..., int]
    segment_close: Callable[..., int]
    draw_mode: Callable[..., int]  # a path object's fill mode and whether it is stroked, its bounds, colours
    bounds: Callable[..., int]
    fill_colour: Callable[..., int]
    stroke_colour: Callable[..., int]
    stroke_width: Callable[..., int]
    obj_matrix: Callable[..., int]


@functools.cache
def _pdfium() -> _Pdfium:
    import pypdfium2.raw as raw

    def bind(name: str, restype: Any, *argtypes: Any) -> Any:
        address = ctypes.cast(getattr(raw, name), ctypes.c_void_p).value
        if address is None:
            raise RuntimeError(f"pdfium has no {name}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)  # pypdfium2 loads pdfium as a CDLL too

    ptr, num = ctypes.c_void_p, ctypes.c_int
    return _Pdfium(
        count=bind("FPDFText_CountChars", num, ptr),
        unicode=bind("FPDFText_GetUnicode", ctypes.c_uint, ptr, num),
        generated=bind("FPDFText_IsGenerated", num, ptr, num),
        char_box=bind("FPDFText_GetCharBox", num, ptr, num, ptr, ptr, ptr, ptr),
        loose_box=bind("FPDFText_GetLooseCharBox", num, ptr, num, ptr),
        text_object=bind("FPDFText_GetTextObject", ptr, ptr, num),
        render_mode=bind("FPDFTextObj_GetTextRenderMode", num, ptr),
        fill=bind("FPDFText_GetFillColor", num, ptr, num, ptr, ptr, ptr, ptr),
        stroke=bind("FPDFText_GetStrokeColor", num, ptr, num, ptr, ptr, ptr, ptr),
        origin=bind("FPDFText_GetCharOrigin", num, ptr, num, ptr, ptr),
        font_size=bind("FPDFText_GetFontSize", ctypes.c_double, ptr, num),
        matrix=bind("FPDFText_GetMatrix", num, ptr, num, ptr),
        path_count=bind("FPDFPath_CountSegments", num, ptr),
        path_segment=bind("FPDFPath_GetPathSegment", ptr, ptr, num),
        segment_point=bind("FPDFPathSegment_GetPoint", num, ptr, ptr, ptr),
        segment_type=bind("FPDFPathSegment_GetType", num, ptr),
        segment_close=bind("FPDFPathSegment_GetClose", num, ptr),
        draw_mode=bind("FPDFPath_GetDrawMode", num, ptr, ptr, ptr),
        bounds=bind("FPDFPageObj_GetBounds", num, ptr, ptr, ptr, ptr, ptr),
        fill_colour=bind("FPDFPageObj_GetFillColor", num, ptr, ptr, ptr, ptr, ptr),
        stroke_colour=bind("FPDFPageObj_GetStrokeColor", num, ptr, ptr, ptr, ptr, ptr),
        stroke_width=bind("FPDFPageObj_GetStrokeWidth", num, ptr, ptr),
        obj_matrix=bind("FPDFPageObj_GetMatrix", num, ptr, ptr),
    )


def _read_chars(textpage: Any) -> _Chars:
    """The characters: one pdfium call for each (its text), four more for each printable one
    (whether pdfium made it up, its two boxes, its text object), and two for each text object
    (its render mode and colour: pdfium keeps them there, not with the characters)."""
    import numpy as np

    pdfium = _pdfium()
    handle = ctypes.cast(textpage.raw, ctypes.c_void_p).value
    codes = [pdfium.unicode(handle, i) for i in range(max(0, pdfium.count(handle)))]
    texts = [chr(code) if 0 < code < 0x110000 else "" for code in codes]
    printable = [i for i, text in enumerate(texts) if text.strip() and not pdfium.generated(handle, i)]
    n = len(printable)
    boxes = (ctypes.c_double * (4 * n))()  # left, right, bottom, top
    loose = (ctypes.c_float * (4 * n))()  # FS_RECTF: left, top, right, bottom
    box_at, loose_at = ctypes.addressof(boxes), ctypes.addressof(loose)
    for j, i in enumerate(printable):
        at = box_at + 32 * j
        pdfium.char_box(handle, i, at, at + 8, at + 16, at + 24)
        pdfium.loose_box(handle, i, loose_at + 16 * j)
    rgba = (ctypes.c_uint * 4)()
    channel = [ctypes.addressof(rgba) + 4 * k for k in range(4)]
    objects: dict[int | None, int] = {}  # the same as ``handles``, the other way round
    obj: list[int] = []
    modes: list[int] = []
    paints: list[list[Colour]] = []
    turns: list[tuple[float, bool, int]] = []
    matrix = (ctypes.c_float * 6)()  # FS_MATRIX: a, b, c, d, e, f
    for i in printable:
        found = pdfium.text_object(handle, i)
        k = objects.get(found)
        if k is not None:
            angle, mirrored, count = turns[k]
            turns[k] = angle, mirrored, count + 1
        else:  # the first character of a text object: its mode, colour and direction, once
            k = objects[found] = len(modes)
            a, b, c, d = matrix[:4] if pdfium.matrix(handle, i, ctypes.addressof(matrix)) else (1, 0, 0, 1)
            turns.append((math.degrees(math.atan2(b, a)), a * d - b * c < 0, 1))
            mode = pdfium.render_mode(found) if found else 0
            if mode in _STROKED_MODES:
                colours = [pdfium.stroke]
            else:
                colours = [pdfium.fill, pdfium.stroke] if mode in _BOTH_MODES else [pdfium.fill]
            modes.append(mode)
            paints.append([])
            for colour in colours:
                if colour(handle, i, *channel):
                    r, g, b, a = rgba
                    paints[-1].append((r, g, b, a / 255))
        obj.append(k)
    corners = np.frombuffer(memoryview(loose), dtype=np.float32).reshape(n, 4).astype(np.float64)
    cell = np.abs(np.stack([corners[:, 2] - corners[:, 0], corners[:, 1] - corners[:, 3]], axis=1))
    box = np.frombuffer(memoryview(boxes), dtype=np.float64).reshape(n, 4).copy()
    return _Chars(texts, printable, box, cell, obj, modes, paints, list(objects), handle, turns)


def _turned(turns: list[tuple[float, bool, int]]) -> bool:
    """Whether some text (angle in degrees, mirrored, characters) is drawn mirrored against most of
    the page's text, or turned more than ``TURNED_DEGREES`` from it. A page turned as a whole, or a
    label running up the margin (a quarter turn), is not."""
    if len(turns) < 2:
        return False
    weight: dict[tuple[int, bool], int] = {}
    for angle, mirrored, count in turns:
        key = (round(angle) % 360, mirrored)
        weight[key] = weight.get(key, 0) + count
    (main, main_mirrored), _ = max(weight.items(), key=lambda item: item[1])
    for angle, mirrored, _ in turns:
        apart = abs((angle - main + 180) % 360 - 180)
        if mirrored != main_mirrored or apart > TURNED_DEGREES:
            return True
    return False


def _struck(
    page: Any,
    chars: _Chars,
    verdicts: list[str | None],
    objects: list[Any],
    painted: _Painted | None,
    annotations: dict[int, _Paint],
    scale: float,
) -> tuple[list[int], str | None]:
    """The seen characters a line is painted through, as a person sees a corrected figure struck out
    (``STRIKE_BAND``: not an underline, an overline or a table's rule): upright characters only.
    Each drawn segment is judged, not a path object's bounds (a grid drawn as one path, several
    strokes as one): a stroked path's segments (curves as chords) and a filled path's subpaths
    (each as the line along its length), in a colour that shows on white paper (``MIN_CONTRAST``),
    the forms they are drawn in applied (``_drawn_segments``); and a viewer's pen strokes (an Ink,
    Line or PolyLine annotation's, ``_pen_segments``). Which characters they strike is told by
    ``_crossed`` (a line through their middles, a slash, an X; not a tick, not a rule running on
    past them). A segment strikes only when it is painted over the character: the page rendered
    without the paths that would strike something changes visibly there (a line under a white box
    drawn after it, or at 1% opacity, does not), a pen's stroke where its annotation paints. Past
    ``MAX_STRIKE_PATHS`` paths, ``MAX_STRIKE_SEGMENTS`` segments (of those near the text) or
    ``MAX_STRIKE_PAIRS`` comparisons none is judged, and the reason is returned. Leaves the text
    objects drawn as the page has them."""
    import numpy as np

    live = [j for j, verdict in enumerate(verdicts) if verdict is None]
    areas = _strike_outs(page, annotations)
    if areas is None:
        return [], _STRIKES_UNCHECKED
    struck: set[int] = set()
    if live and areas:
        centre_x = (chars.box[live, 0] + chars.box[live, 1]) / 2
        centre_y = (chars.box[live, 2] + chars.box[live, 3]) / 2
        for x0, x1, y0, y1 in areas:  # a StrikeOut annotation strikes the characters in its area
            inside = (centre_x > x0) & (centre_x < x1) & (centre_y > y0) & (centre_y < y1)
            struck.update(np.asarray(live)[inside].tolist())
    upright = [
        j
        for j in live
        if abs(chars.turns[chars.obj[j]][0]) < STRIKE_UPRIGHT and not chars.turns[chars.obj[j]][1]
    ]
    if not upright:
        return sorted(struck), None
    # where the band of each could lie: its ink box, with room above and below (its cell's height)
    box, reach = chars.box[upright], chars.cell[upright, 1] * STRIKE_BAND[1]
    near = _near(np.stack([box[:, 0], box[:, 1], box[:, 2] - reach, box[:, 3] + reach], axis=1))
    found = _drawn_segments(page, near)
    if found is None:
        return [], _STRIKES_UNCHECKED
    segments, sources = found
    for n, paint in annotations.items():
        strokes = _pen_segments(page, n, paint) if paint.subtype in _PEN else None
        if strokes is not None and len(strokes):
            first = int(segments[:, 6].max()) + 1 if len(segments) else 0
            pen = np.column_stack(
                [strokes[:, :5], np.full(len(strokes), len(sources)), strokes[:, 5] + first]
            )
            segments = np.concatenate([segments, pen])
            sources.append(n)
    if not len(segments):
        return sorted(struck), None
    hits = _crossed(segments, _upright(chars, upright))
    if hits is None:
        return [], _STRIKES_UNCHECKED
    by_path: dict[int, tuple[float, float]] = {}  # a character: the band the paths striking it take up
    paths: dict[int, Any] = {}
    for j, source, low, high in hits:
        if j in struck:
            continue
        what = sources[source]
        if isinstance(what, int):  # a pen: where its annotation paints
            if _pen_paints(page, chars.box[j], (low, high), annotations[what]):
                struck.add(j)
            continue
        bottom, top = by_path.get(j, (math.inf, -math.inf))
        by_path[j] = min(bottom, low), max(top, high)
        paths[_address(what) or 0] = what
    for j in struck:
        by_path.pop(j, None)
    if by_path:
        struck.update(_painted_over(page, chars, by_path, list(paths.values()), objects, painted, scale))
    return sorted(struck), None


class _Upright(NamedTuple):
    """The upright seen characters a line may strike, in page points, sorted by baseline: their index
    in ``_Chars``, baseline, font size (as drawn) and ink box (left, right, bottom, top)."""

    which: Any
    base: Any
    size: Any
    box: Any


def _upright(chars: _Chars, upright: list[int]) -> _Upright:
    import numpy as np

    spot = _origins(chars, upright)
    base = np.array([spot[j][1] for j in upright])
    order = np.argsort(base, kind="stable")
    which = np.asarray(upright)[order]
    size = np.array([spot[j][2] for j in upright])[order]
    return _Upright(which, base[order], size, chars.box[which])


def _near(boxes: Any) -> Callable[[float, float, float, float], bool]:
    """Whether a rectangle (left, bottom, right, top) meets a cell of ``STRIKE_GRID`` points that one
    of ``boxes`` (left, right, bottom, top) meets: a summed-area table of the cells, one look-up
    per rectangle."""
    import numpy as np

    grid = STRIKE_GRID
    boxes = boxes[np.isfinite(boxes).all(axis=1)]
    if not len(boxes):
        return lambda *_: False
    ox, oy = float(boxes[:, 0].min()), float(boxes[:, 2].min())
    cx0, cx1 = ((boxes[:, k] - ox) // grid for k in (0, 1))
    cy0, cy1 = ((boxes[:, k] - oy) // grid for k in (2, 3))
    cols, rows = int(cx1.max()) + 1, int(cy1.max()) + 1
    marks = np.zeros((rows + 1, cols + 1), dtype=np.int64)  # a difference array of the boxes' cells
    cx0, cx1, cy0, cy1 = (v.astype(np.int64) for v in (cx0, cx1 + 1, cy0, cy1 + 1))
    np.add.at(marks, (cy0, cx0), 1)
    np.add.at(marks, (cy0, cx1), -1)
    np.add.at(marks, (cy1, cx0), -1)
    np.add.at(marks, (cy1, cx1), 1)
    taken = (marks.cumsum(axis=0).cumsum(axis=1)[:rows, :cols] > 0).astype(np.int64)
    table = np.zeros((rows + 1, cols + 1), dtype=np.int64)
    table[1:, 1:] = taken.cumsum(axis=0).cumsum(axis=1)

    def near(left: float, bottom: float, right: float, top: float) -> bool:
        if not all(math.isfinite(v) for v in (left, bottom, right, top)):
            return False
        a, c = (min(max(int((v - ox) // grid), -1), cols) for v in (left, right))
        b, d = (min(max(int((v - oy) // grid), -1), rows) for v in (bottom, top))
        a, b, c, d = max(a, 0), max(b, 0), min(c, cols - 1), min(d, rows - 1)
        if a > c or b > d:
            return False
        return bool(table[d + 1, c + 1] - table[b, c + 1] - table[d + 1, a] + table[b, a] > 0)

    return near


_MOVE, _CURVE = 2, 1  # FPDF_SEGMENT_MOVETO, _BEZIERTO (others are lines)


def _drawn_segments(
    page: Any, near: Callable[[float, float, float, float], bool]
) -> tuple[Any, list[Any]] | None:
    """The segments of the page's path objects drawn near the text (``near``: their bounds on the
    page, the forms they are drawn in applied) in a colour that shows on white paper (stroke or
    fill, ``MIN_CONTRAST``, not at opacity 0), as an (n, 7) array of their ends, thickness, source
    (an index into the returned paths) and stroke (a number for each subpath), in page points: a
    stroked path's segments, a curve as four chords; a filled path's subpaths, each as the line
    along its length through its middle, as thick as it is across (a thin filled rectangle is a
    line; a box is not, ``_along``). A tick (``_tick``) is left out. None past
    ``MAX_STRIKE_PATHS`` paths or ``MAX_STRIKE_SEGMENTS`` segments read."""
    import numpy as np
    import pypdfium2.raw as raw

    pdfium = _pdfium()
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    modes = ctypes.addressof(fill), ctypes.addressof(stroke)
    rgba = (ctypes.c_uint * 4)()
    channel = [ctypes.addressof(rgba) + 4 * k for k in range(4)]
    x, y, width = ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    at, wide = (ctypes.addressof(x), ctypes.addressof(y)), ctypes.addressof(width)
    matrix = (ctypes.c_float * 6)()
    where = ctypes.addressof(matrix)
    sides = (ctypes.c_float * 4)()  # left, bottom, right, top
    side = [ctypes.addressof(sides) + 4 * k for k in range(4)]

    def shows(getter: Callable[..., int], handle: int) -> bool:
        if not getter(handle, *channel):
            return False
        r, g, b, a = rgba
        return a > 0 and contrast((r, g, b, 1.0), WHITE) >= MIN_CONTRAST

    xs: list[float] = []  # every point read, with the path (in ``sources``) it is of, its kind and close
    ys: list[float] = []
    owner: list[int] = []
    kinds: list[int] = []
    closes: list[int] = []
    placed: list[
        tuple[float, ...]
    ] = []  # each path's matrix to the page, and its stroke's width (None: not stroked)
    widths: list[float | None] = []
    filled: list[bool] = []
    sources: list[Any] = []
    budget = MAX_STRIKE_SEGMENTS
    for n, obj in enumerate(page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH], max_depth=_FORM_DEPTH)):
        if n >= MAX_STRIKE_PATHS:
            return None
        handle = _address(obj)
        if handle is None or not pdfium.draw_mode(handle, *modes) or not (fill.value or stroke.value):
            continue
        if not pdfium.bounds(handle, *side):
            continue
        left, bottom, right, top = sides
        m: tuple[float, ...] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
        if obj.container is not None:  # a path in a form: placed by it
            corners = [(left, bottom), (left, top), (right, bottom), (right, top)]
            for form in _forms(obj):
                placing = form.get_matrix()
                corners = [placing.on_point(px, py) for px, py in corners]
                m = _then(m, (placing.a, placing.b, placing.c, placing.d, placing.e, placing.f))
            left, right = min(p[0] for p in corners), max(p[0] for p in corners)
            bottom, top = min(p[1] for p in corners), max(p[1] for p in corners)
        if not near(left, bottom, right, top):
            continue
        strokes = bool(stroke.value) and shows(pdfium.stroke_colour, handle)
        fills = bool(fill.value) and shows(pdfium.fill_colour, handle)
        if not (strokes or fills):
            continue
        count = pdfium.path_count(handle)
        budget -= max(0, count)
        if budget < 0:
            return None
        k = len(sources)
        for i in range(max(0, count)):
            segment = pdfium.path_segment(handle, i)
            if not segment or not pdfium.segment_point(segment, *at):
                continue
            xs.append(x.value)
            ys.append(y.value)
            kinds.append(pdfium.segment_type(segment))
            closes.append(pdfium.segment_close(segment))
            owner.append(k)
        own = tuple(matrix) if pdfium.obj_matrix(handle, where) else (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
        placed.append(_then(own, m))
        widths.append(
            width.value if strokes and pdfium.stroke_width(handle, wide) else (0.0 if strokes else None)
        )
        filled.append(fills)
        sources.append(obj)
    if not xs:
        return np.zeros((0, 7)), sources
    return _path_segments(
        np.asarray(xs), np.asarray(ys), owner, kinds, closes, placed, widths, filled
    ), sources


def _then(first: tuple[float, ...], second: tuple[float, ...]) -> tuple[float, ...]:
    """The matrix (a, b, c, d, e, f) applying ``first``, then ``second``."""
    a, b, c, d, e, f = first
    p, q, r, s, t, u = second
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s, e * p + f * r + t, e * q + f * s + u)


def _path_segments(
    xs: Any,
    ys: Any,
    owner: list[int],
    kinds: list[int],
    closes: list[int],
    placed: list[tuple[float, ...]],
    widths: list[float | None],
    filled: list[bool],
) -> Any:
    """The segments (see ``_drawn_segments``: ends, thickness, path, subpath) of paths given as their points in their own space (each
    point's path in ``owner``, its kind and whether it closes its subpath), each path's matrix to
    the page, its stroke's width (None: not stroked) and whether it is filled. All paths at once:
    a table's hundred ruled cells are a few array operations."""
    import numpy as np

    path = np.asarray(owner, dtype=np.int64)
    kind = np.asarray(kinds, dtype=np.int64)
    close = np.asarray(closes, dtype=bool)
    m = np.asarray(placed, dtype=np.float64)[path]
    px = m[:, 0] * xs + m[:, 2] * ys + m[:, 4]
    py = m[:, 1] * xs + m[:, 3] * ys + m[:, 5]
    stretch = np.sqrt(np.abs(m[:, 0] * m[:, 3] - m[:, 1] * m[:, 2]))
    starts = np.ones(len(px), dtype=bool)  # a point starting a subpath: a move, a new path, after a close
    starts[1:] = (kind[1:] == _MOVE) | (path[1:] != path[:-1]) | close[:-1]
    sub = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)[sub]  # each point's subpath's first point
    size = np.bincount(sub)
    stroked = np.array([w is not None for w in widths])[path]
    width = np.array([w or 0.0 for w in widths])[path] * stretch
    rows: list[Any] = []
    curved = np.zeros(len(size), dtype=bool)
    np.logical_or.at(curved, sub, kind == _CURVE)
    # stroked lines: each point from the one before it in its subpath; a close back to its start
    line = stroked & ~starts & (kind != _CURVE) & ~curved[sub]
    closing = stroked & close & ~curved[sub] & ((px != px[first]) | (py != py[first]))
    ticks = _ticks(px, py, sub, first, size, close, kind)
    line &= ~ticks[sub]
    i = np.flatnonzero(line)
    rows.append(np.stack([px[i - 1], py[i - 1], px[i], py[i], width[i], path[i], sub[i]], axis=1))
    i = np.flatnonzero(closing)
    rows.append(np.stack([px[i], py[i], px[first[i]], py[first[i]], width[i], path[i], sub[i]], axis=1))
    for number in np.flatnonzero(curved).tolist():  # curves (few): as chords, one subpath at a time
        members = np.flatnonzero(sub == number)
        if not stroked[members[0]]:
            continue
        points = _stroke_points(np.stack([px, py], axis=1), kinds, members.tolist(), bool(close[members[-1]]))
        k = members[0]
        chords = [
            (*p, *q, float(width[k]), float(path[k]), float(number)) for p, q in itertools.pairwise(points)
        ]
        rows.append(np.asarray(chords, dtype=np.float64).reshape(-1, 7))
    fills = np.array(filled)[path]
    if fills.any():
        lines = _along(px, py, sub, fills)
        source = path[np.searchsorted(sub, lines[:, 5].astype(np.int64))]
        rows.append(np.column_stack([lines[:, :5], source, lines[:, 5]]))
    return np.concatenate(rows) if rows else np.zeros((0, 7))


def _ticks(px: Any, py: Any, sub: Any, first: Any, size: Any, close: Any, kind: Any) -> Any:
    """Which subpaths are ticks (check marks): three points, open, drawn with lines, the middle one
    the lowest, turning there by more than ``TICK_TURN`` degrees (and less than all the way back:
    a line drawn there and back is a line)."""
    import numpy as np

    out = np.zeros(len(size), dtype=bool)
    three = np.flatnonzero(size == 3)
    if not len(three):
        return out
    a = first[np.searchsorted(sub, three)]
    v, b = a + 1, a + 2
    open_lines = ~close[b] & (kind[v] != _CURVE) & (kind[b] != _CURVE)
    lowest = (py[v] < py[a]) & (py[v] < py[b])
    turn = np.abs(
        np.degrees(
            (np.arctan2(py[b] - py[v], px[b] - px[v]) - np.arctan2(py[v] - py[a], px[v] - px[a]) + np.pi)
            % (2 * np.pi)
            - np.pi
        )
    )
    out[three] = open_lines & lowest & (turn > TICK_TURN) & (turn < 180 - TICK_TURN / 4)
    return out


def _forms(obj: Any) -> Iterator[Any]:
    """The forms a page object is drawn in, innermost first."""
    form = obj.container
    while form is not None:
        yield form
        form = form.container


def _stroke_points(xy: Any, kinds: list[int], members: list[int], closed: bool) -> list[tuple[float, float]]:
    """The points a subpath's stroke runs through: its lines' ends, each curve's at four steps."""
    points = [tuple(xy[members[0]])]
    k = 1
    while k < len(members):
        i = members[k]
        if kinds[i] == _CURVE and k + 2 < len(members) and kinds[members[k + 1]] == _CURVE:
            p0, p1, p2, p3 = (xy[m] for m in (members[k - 1], i, members[k + 1], members[k + 2]))
            for t in (0.25, 0.5, 0.75, 1.0):
                s = 1 - t
                points.append(tuple(s**3 * p0 + 3 * s * s * t * p1 + 3 * s * t * t * p2 + t**3 * p3))
            k += 3
        else:
            points.append(tuple(xy[i]))
            k += 1
    if closed and points[-1] != points[0]:
        points.append(points[0])
    return points


def _tick(points: list[tuple[float, float]]) -> bool:
    """A pen's stroke that is a tick (``_ticks``)."""
    import numpy as np

    if len(points) != 3:
        return False
    px, py = (np.asarray(v, dtype=np.float64) for v in zip(*points, strict=True))
    one = np.zeros(3, dtype=np.int64)
    no = np.zeros(3, dtype=bool)
    return bool(_ticks(px, py, one, one, np.array([3]), no, np.zeros(3, dtype=np.int64))[0])


def _along(px: Any, py: Any, sub: Any, which: Any) -> Any:
    """The filled subpaths (their points: ``which``) as lines along their length through their
    middle (the main axis of their points), as thick as they are across: (n, 6) rows of ends,
    thickness and subpath."""
    import numpy as np

    i = np.flatnonzero(which)
    numbers, group = np.unique(sub[i], return_inverse=True)
    count = np.bincount(group).astype(np.float64)
    mx, my = (np.bincount(group, weights=v[i]) / count for v in (px, py))
    rx, ry = px[i] - mx[group], py[i] - my[group]
    sxx, syy, sxy = (np.bincount(group, weights=w) for w in (rx * rx, ry * ry, rx * ry))
    angle = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    ux, uy = np.cos(angle), np.sin(angle)
    along = rx * ux[group] + ry * uy[group]
    across = -rx * uy[group] + ry * ux[group]
    lo, hi = np.full(len(numbers), np.inf), np.full(len(numbers), -np.inf)
    low, high = lo.copy(), hi.copy()
    np.minimum.at(lo, group, along)
    np.maximum.at(hi, group, along)
    np.minimum.at(low, group, across)
    np.maximum.at(high, group, across)
    out = np.stack(
        [mx + lo * ux, my + lo * uy, mx + hi * ux, my + hi * uy, high - low, numbers.astype(float)], axis=1
    )
    return out[(count > 1) & np.isfinite(out).all(axis=1)]


def _pen_segments(page: Any, number: int, paint: _Paint) -> Any:
    """A painted pen annotation's strokes (an Ink's ink list, a Line's ends, a PolyLine's vertices)
    as segments (an (n, 6) array: ends, thickness, the stroke) in page points, each stroke made simpler
    (``_simpler``: a hand's wobble is not a stroke of its own); a tick is left out. Their thickness
    is what the annotation paints: its ink over the strokes' length. Also the line of all it paints
    when that is thin and wide (``_pen_line``: a pen with no strokes listed). None: none."""
    import numpy as np
    import pypdfium2.raw as raw

    annot = raw.FPDFPage_GetAnnot(page.raw, number)
    if not annot:
        return None
    strokes: list[list[tuple[float, float]]] = []
    try:
        if paint.subtype == raw.FPDF_ANNOT_INK:
            for k in range(min(max(0, raw.FPDFAnnot_GetInkListCount(annot)), MAX_STRIKE_OUTS)):
                size = min(raw.FPDFAnnot_GetInkListPath(annot, k, None, 0), MAX_STRIKE_SEGMENTS)
                buffer = (raw.FS_POINTF * max(1, size))()
                got = min(raw.FPDFAnnot_GetInkListPath(annot, k, buffer, size), size)
                strokes.append([(p.x, p.y) for p in buffer[:got]])
        elif paint.subtype == raw.FPDF_ANNOT_LINE:
            start, end = raw.FS_POINTF(), raw.FS_POINTF()
            if raw.FPDFAnnot_GetLine(annot, ctypes.byref(start), ctypes.byref(end)):
                strokes.append([(start.x, start.y), (end.x, end.y)])
        else:
            size = min(raw.FPDFAnnot_GetVertices(annot, None, 0), MAX_STRIKE_SEGMENTS)
            buffer = (raw.FS_POINTF * max(1, size))()
            got = min(raw.FPDFAnnot_GetVertices(annot, buffer, size), size)
            strokes.append([(p.x, p.y) for p in buffer[:got]])
    finally:
        raw.FPDFPage_CloseAnnot(annot)
    length = sum(math.dist(p, q) for stroke in strokes for p, q in itertools.pairwise(stroke))
    line = _pen_line(page, paint)
    out: list[tuple[float, ...]] = [(*line, 0.0)] if line else []
    if length > 0:
        thick = float(paint.ink.sum()) / (
            length * paint.scale * paint.scale
        )  # pixels of ink a point of stroke
        for number, stroke in enumerate(strokes, start=1):
            points = _simpler(stroke, max(thick / 2, 0.5))
            if not _tick(points):
                out.extend((*p, *q, thick, number) for p, q in itertools.pairwise(points))
    found = np.asarray(out, dtype=np.float64).reshape(-1, 6)
    return found if len(found) else None


def _simpler(points: list[tuple[float, float]], within: float) -> list[tuple[float, float]]:
    """A stroke's points without those that lie within ``within`` of the line between their
    neighbours kept (Ramer-Douglas-Peucker)."""
    if len(points) < 3:
        return points
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    todo = [(0, len(points) - 1)]
    while todo:
        first, last = todo.pop()
        (ax, ay), (bx, by) = points[first], points[last]
        span = math.hypot(bx - ax, by - ay)
        far, at = 0.0, -1
        for k in range(first + 1, last):
            px, py = points[k]
            gap = (
                abs((bx - ax) * (ay - py) - (ax - px) * (by - ay)) / span
                if span
                else math.hypot(px - ax, py - ay)
            )
            if gap > far:
                far, at = gap, k
        if at > 0 and far > within:
            keep[at] = True
            todo.extend([(first, at), (at, last)])
    return [p for p, kept in zip(points, keep, strict=True) if kept]


def _pen_line(page: Any, paint: _Paint) -> tuple[float, ...]:
    """All a pen annotation paints as one line (left end, right end, thickness in page points) when
    it is wider than twice its thickness, else ()."""
    import numpy as np
    import pypdfium2.raw as raw

    rows, cols = np.nonzero(paint.ink.any(axis=1))[0], np.nonzero(paint.ink.any(axis=0))[0]
    left, top = paint.area[0] + int(cols.min()), paint.area[1] + int(rows.min())
    right, bottom = paint.area[0] + int(cols.max()) + 1, paint.area[1] + int(rows.max()) + 1
    x, y = ctypes.c_double(), ctypes.c_double()
    corners = []
    for px, py in ((left, top), (right, bottom)):
        raw.FPDF_DeviceToPage(page.raw, 0, 0, *paint.screen, 0, px, py, ctypes.byref(x), ctypes.byref(y))
        corners.append((x.value, y.value))
    (ax, ay), (bx, by) = corners
    wide, thick = abs(bx - ax), abs(by - ay)
    if wide <= 2 * thick:
        return ()
    mid = (ay + by) / 2
    return (min(ax, bx), mid, max(ax, bx), mid, thick)


def _pen_paints(page: Any, box: Any, band: tuple[float, float], paint: _Paint) -> bool:
    """Whether a pen annotation paints (``_Paint.ink``) across a character's width (``box``: left,
    right, bottom, top) in the band (bottom, top, in points) its stroke takes up there."""
    import numpy as np
    import pypdfium2.raw as raw

    area = np.array([[box[0], box[1], band[0], band[1]]], dtype=float)
    x0, y0, x1, y1 = (int(v[0]) for v in _page_to_screen(page, raw, *paint.screen)(area))
    left, top = paint.area[0], paint.area[1]
    c0, c1 = max(x0 - 1 - left, 0), max(x1 + 1 - left, 0)
    r0, r1 = max(y0 - 1 - top, 0), max(y1 + 1 - top, 0)
    return bool(paint.ink[r0:r1, c0:c1].any())


def _crossed(segments: Any, text: _Upright) -> list[tuple[int, int, float, float]] | None:
    """The characters ``segments`` (an (n, 7) array: ends, thickness, source, stroke) would strike, each with
    the source and the band (bottom, top) the segment takes up across it: a segment no thicker than
    ``STRIKE_THICK`` of the character's size and longer than twice its thickness, slanting at most
    ``STRIKE_SLANT``, whose height at the character's middle lies in ``STRIKE_BAND``; and, of two
    slanting ones that strike something and cross each other in their middle parts (``CROSSED``:
    an X), each character whose middle and band's middle lie where both reach. None past
    ``MAX_STRIKE_PAIRS`` comparisons."""
    import numpy as np

    flip = segments[:, 0] > segments[:, 2]  # each from its left end
    ax = np.where(flip, segments[:, 2], segments[:, 0])
    ay = np.where(flip, segments[:, 3], segments[:, 1])
    bx = np.where(flip, segments[:, 0], segments[:, 2])
    by = np.where(flip, segments[:, 1], segments[:, 3])
    thick, source = segments[:, 4], segments[:, 5].astype(np.int64)
    stroke = np.unique(segments[:, 6], return_inverse=True)[1].reshape(
        -1
    )  # each stroke's extent, left to right
    stroke_left = np.full(int(stroke.max()) + 1 if len(stroke) else 0, np.inf)
    stroke_right = np.full(len(stroke_left), -np.inf)
    np.minimum.at(stroke_left, stroke, ax)
    np.maximum.at(stroke_right, stroke, bx)
    dx, dy = bx - ax, by - ay
    slant = np.degrees(np.arctan2(np.abs(dy), dx))
    usable = (
        (np.hypot(dx, dy) > 2 * thick)
        & (dx > 0)
        & (slant <= STRIKE_SLANT)
        & np.isfinite(segments).all(axis=1)
    )
    low, high = np.minimum(ay, by), np.maximum(ay, by)
    base, size, box = text.base, text.size, text.box
    middle = (box[:, 0] + box[:, 1]) / 2
    first = np.searchsorted(base, low - STRIKE_BAND[1] * float(size.max()), side="left")
    last = np.searchsorted(base, high - STRIKE_BAND[0] * float(size.min()), side="right")
    count = np.where(usable, np.maximum(last - first, 0), 0)
    pairs = int(count.sum())
    if pairs > MAX_STRIKE_PAIRS:
        return None
    out: list[tuple[int, int, float, float]] = []
    striking = np.zeros(len(segments), dtype=bool)  # strikes something: its height in the band somewhere
    slashing = np.zeros(len(segments), dtype=bool)  # slants through the whole band of a character it strikes
    reach: list[tuple[Any, Any]] = []  # (segment, character) pairs within STRIKE_REACH, not in the band
    found: list[tuple[Any, Any]] = []  # (segment, character) pairs in the band
    ends = np.cumsum(count)
    start = 0
    while start < len(segments):  # the pairs, a few hundred thousand at a time
        stop = int(np.searchsorted(ends, (ends[start - 1] if start else 0) + _PAIRS_AT_ONCE, side="right"))
        stop = max(stop, start + 1)
        n = count[start:stop]
        s = np.repeat(np.arange(start, stop), n)
        offset = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        c = first[s] + offset
        start = stop
        if not len(c):
            continue
        xm = middle[c]
        at = ay[s] + (xm - ax[s]) * dy[s] / dx[s]
        above = at - base[c]
        along = (xm > ax[s]) & (xm < bx[s]) & (thick[s] <= STRIKE_THICK * size[c])
        hit = along & (above >= STRIKE_BAND[0] * size[c]) & (above <= STRIKE_BAND[1] * size[c])
        through = (
            hit
            & (low[s] <= base[c] + STRIKE_BAND[0] * size[c])
            & (high[s] >= base[c] + STRIKE_BAND[1] * size[c])
        )
        striking[s[hit]] = True
        slashing[s[through & (slant[s] >= STRIKE_UPRIGHT)]] = True
        near = along & ~hit & (above >= STRIKE_REACH[0] * size[c]) & (above <= STRIKE_REACH[1] * size[c])
        reach.append((s[near], c[near]))
        found.append((s[hit], c[hit]))
    found.extend((s[slashing[s]], c[slashing[s]]) for s, c in reach)  # a slash through a figure: its ends too
    s = np.concatenate([np.zeros(0, dtype=np.int64), *(s for s, _ in found)])
    c = np.concatenate([np.zeros(0, dtype=np.int64), *(c for _, c in found)])
    kept = _spanned(stroke[s], c, stroke_left, stroke_right, text)
    out.extend(_across(s[kept], c[kept], ax, ay, bx, dy, dx, thick, source, text))
    slanting = np.flatnonzero(striking & (slant >= STRIKE_UPRIGHT))
    if len(slanting) > 1:
        crossings = _crossings(slanting, ax, ay, bx, by)
        if pairs + len(slanting) ** 2 + len(crossings) * len(base) > MAX_STRIKE_PAIRS:
            return None
        band_middle = base + (STRIKE_BAND[0] + STRIKE_BAND[1]) / 2 * size
        for i, k in crossings:
            x0, x1 = max(ax[i], ax[k]), min(bx[i], bx[k])
            y0, y1 = max(low[i], low[k]), min(high[i], high[k])
            inside = np.flatnonzero(
                (middle > x0)
                & (middle < x1)
                & (band_middle > y0)
                & (band_middle < y1)
                & (max(thick[i], thick[k]) <= STRIKE_THICK * size)
            )
            start = min(stroke_left[stroke[i]], stroke_left[stroke[k]])
            end = max(stroke_right[stroke[i]], stroke_right[stroke[k]])
            if not len(inside) or _overruns(start, end, box[inside], size[inside]):
                continue  # two lines of a figure crossing near a label
            for c in inside.tolist():
                j = int(text.which[c])
                out.extend([(j, int(source[i]), y0, y1), (j, int(source[k]), y0, y1)])
    return out


def _spanned(s: Any, c: Any, ax: Any, bx: Any, text: _Upright) -> Any:
    """Which of the (stroke ``s``, character ``c``) pairs to keep: those of strokes (from their left
    ends ``ax`` to their right ones ``bx``) that do not run on past all the characters their segments
    strike (``_overruns``: a curve of a figure through a label runs on, a pen's strike does not)."""
    import numpy as np

    keep = np.ones(len(s), dtype=bool)
    if not len(s):
        return keep
    segments, where = np.unique(s, return_inverse=True)
    left = np.full(len(segments), np.inf)
    right = np.full(len(segments), -np.inf)
    size = np.zeros(len(segments))
    np.minimum.at(left, where, text.box[c, 0])
    np.maximum.at(right, where, text.box[c, 1])
    np.maximum.at(size, where, text.size[c])
    span = right - left
    room = STRIKE_OVERRUN[0] * size + STRIKE_OVERRUN[1] * span
    fine = (ax[segments] >= left - room) & (bx[segments] <= right + room)
    return fine[where]


def _overruns(start: float, end: float, box: Any, size: Any) -> bool:
    """Whether a line from ``start`` to ``end`` (x, in points) runs on past the characters it would
    strike (their ``box``: left, right, bottom, top; their font ``size``) by more than
    ``STRIKE_OVERRUN`` on either side: a rule, not a strike."""
    left, right = float(box[:, 0].min()), float(box[:, 1].max())
    room = STRIKE_OVERRUN[0] * float(size.max()) + STRIKE_OVERRUN[1] * (right - left)
    return start < left - room or end > right + room


def _across(
    s: Any, c: Any, ax: Any, ay: Any, bx: Any, dy: Any, dx: Any, thick: Any, source: Any, text: _Upright
) -> Iterator[tuple[int, int, float, float]]:
    """For segments ``s`` striking upright characters ``c`` (arrays, pair by pair): the character, the
    segment's source and the band (bottom, top) the segment takes up across the character's width."""
    import numpy as np

    box = text.box
    left = np.maximum(box[c, 0], ax[s])
    right = np.minimum(box[c, 1], bx[s])
    y_left = ay[s] + (left - ax[s]) * dy[s] / dx[s]
    y_right = ay[s] + (right - ax[s]) * dy[s] / dx[s]
    bottom = np.minimum(y_left, y_right) - thick[s] / 2
    top = np.maximum(y_left, y_right) + thick[s] / 2
    return zip(text.which[c].tolist(), source[s].tolist(), bottom.tolist(), top.tolist(), strict=True)


def _crossings(which: Any, ax: Any, ay: Any, bx: Any, by: Any) -> list[tuple[int, int]]:
    """The pairs of the segments ``which`` (from their left ends) that slant opposite ways and cross
    each other within ``CROSSED`` of each one's length: an X."""
    import numpy as np

    i, k = np.triu_indices(len(which), 1)
    i, k = which[i], which[k]
    opposite = (by[i] - ay[i]) * (by[k] - ay[k]) < 0
    i, k = i[opposite], k[opposite]
    rx, ry = bx[i] - ax[i], by[i] - ay[i]
    sx, sy = bx[k] - ax[k], by[k] - ay[k]
    cross = rx * sy - ry * sx
    qx, qy = ax[k] - ax[i], ay[k] - ay[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (qx * sy - qy * sx) / cross
        u = (qx * ry - qy * rx) / cross
    inside = (cross != 0) & (t > CROSSED[0]) & (t < CROSSED[1]) & (u > CROSSED[0]) & (u < CROSSED[1])
    return list(zip(i[inside].tolist(), k[inside].tolist(), strict=True))


def _painted_over(
    page: Any,
    chars: _Chars,
    which: dict[int, tuple[float, float]],
    paths: list[Any],
    objects: list[Any],
    painted: _Painted | None,
    scale: float,
) -> list[int]:
    """Those of the characters ``which`` where the page, with its text drawn as it is, changes
    visibly (``_changed``) when ``paths`` are not painted: across the character's width, in the band
    its lines take up (bottom, top in points; a comma lies under it): the lines are painted over it."""
    import numpy as np
    import pypdfium2.raw as raw

    if painted is not None:  # as the page has them: _by_render and _own_ink switch them off
        for found, mode in zip(objects, painted.modes, strict=True):
            raw.FPDFTextObj_SetTextRenderMode(found.raw, mode)
        scale = painted.scale
    as_is = painted.rgb if painted is not None else _rgb(page, scale)
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    modes = []
    for path in paths:
        raw.FPDFPath_GetDrawMode(path.raw, ctypes.byref(fill), ctypes.byref(stroke))
        modes.append((fill.value, stroke.value))
    try:
        for path in paths:
            raw.FPDFPath_SetDrawMode(path.raw, 0, False)
        without = _rgb(page, scale)
    finally:
        for path, (filled, stroked) in zip(paths, modes, strict=True):
            raw.FPDFPath_SetDrawMode(path.raw, filled, bool(stroked))
    changed = _changed(as_is, without)
    rows, cols = changed.shape
    numbers = list(which)
    box = chars.box[numbers].copy()
    box[:, 2:] = [which[j] for j in numbers]
    x0, y0, x1, y1 = _page_to_screen(page, raw, cols, rows)(box)
    out = []
    for j, a, b, c, d in zip(numbers, x0.tolist(), y0.tolist(), x1.tolist(), y1.tolist(), strict=True):
        a, c = int(np.clip(a - 1, 0, cols)), int(np.clip(c + 1, 0, cols))
        b, d = int(np.clip(b - 1, 0, rows)), int(np.clip(d + 1, 0, rows))
        if changed[b:d, a:c].any():
            out.append(j)
    return out


class _Paint(NamedTuple):
    """What an annotation paints: its subtype, its area in pixels of the render (x0, y0, x1, y1) and
    where in that area the render changes visibly for it (a boolean array)."""

    subtype: int
    area: tuple[int, int, int, int]
    ink: Any
    screen: tuple[int, int]  # the render's width and height
    scale: float  # its pixels a point


def _painted_annotations(page: Any, scale: float) -> tuple[dict[int, _Paint], Any, str | None]:
    """The annotations (``_JUDGED`` kinds, by their index in the page's /Annots) a viewer paints: the
    page is rendered with its annotations and without them, and an annotation is painted when the
    render changes visibly in its area (``MIN_CONTRAST``; an empty appearance, words clipped away,
    an opacity of 0 change nothing). An appearance the file holds is painted at the annotation's
    opacity (its /CA, which a viewer applies and pdfium does not: ``_annotation_opacity``), laid
    over the page by it as text is (``_faded``); one so faint it paints nothing is then left out of
    every later render of the page too (flagged Hidden), so text under it is judged as a person
    sees it. One whose area another annotation's overlaps is painted once
    more without it, so that what it paints is its own (past ``MAX_ANNOTATION_RENDERS`` such renders
    the others are taken as painted, and the reason is returned). Flagged Hidden or NoView: not
    painted. Also returns the render with annotations (None when none is judged), for the text."""
    import numpy as np
    import pypdfium2.raw as raw

    shown = raw.FPDF_ANNOT_FLAG_HIDDEN | raw.FPDF_ANNOT_FLAG_NOVIEW

    def each() -> Iterator[tuple[int, int, Any]]:  # index, subtype, handle: the annotations shown
        for n in range(min(max(0, raw.FPDFPage_GetAnnotCount(page.raw)), 10 * MAX_JUDGED_ANNOTATIONS)):
            annot = raw.FPDFPage_GetAnnot(page.raw, n)
            if not annot:
                continue
            try:
                if not raw.FPDFAnnot_GetFlags(annot) & shown:
                    yield n, raw.FPDFAnnot_GetSubtype(annot), annot
            finally:
                raw.FPDFPage_CloseAnnot(annot)

    kinds: dict[int, int] = {}
    opacity: dict[int, float] = {}  # of those the file gives an appearance (pdfium makes the others by it)
    for n, kind, annot in each():
        kinds[n] = kind
        see_through = _annotation_opacity(annot)
        if see_through < 1:
            opacity[n] = see_through
    if not any(kind in _JUDGED for kind in kinds.values()):
        return {}, None, None
    with_them = _rgb(page, scale)  # first: painting an annotation with no appearance may set its area
    bare = _rgb(page, scale, annotations=False)
    changed = _changed(with_them, bare)
    areas: list[tuple[int, tuple[float, float, float, float]]] = []  # the rectangle and quads of each
    judged: list[tuple[int, int, tuple[float, float, float, float]]] = []  # index, subtype, area
    rect, quad = raw.FS_RECTF(), raw.FS_QUADPOINTSF()
    for n, kind, annot in each():
        xs: list[float] = []
        ys: list[float] = []
        if raw.FPDFAnnot_GetRect(annot, ctypes.byref(rect)):
            xs, ys = [rect.left, rect.right], [rect.bottom, rect.top]
        for k in range(min(max(0, raw.FPDFAnnot_CountAttachmentPoints(annot)), MAX_STRIKE_OUTS)):
            if raw.FPDFAnnot_GetAttachmentPoints(annot, k, ctypes.byref(quad)):
                xs.extend((quad.x1, quad.x2, quad.x3, quad.x4))
                ys.extend((quad.y1, quad.y2, quad.y3, quad.y4))
        if not xs:
            continue
        areas.append((n, (min(xs), max(xs), min(ys), max(ys))))
        if kind in _JUDGED and len(judged) < MAX_JUDGED_ANNOTATIONS:
            judged.append((n, kind, areas[-1][1]))
    rows, cols = changed.shape
    to_screen = _page_to_screen(page, raw, cols, rows)
    found: dict[int, _Paint] = {}
    renders, unchecked = 0, None
    faint: list[int] = []  # painted at an opacity at which they show nothing
    for n, kind, area in judged:
        x0, y0, x1, y1 = (v[0] for v in to_screen(np.array([area], dtype=float)))
        x0, x1 = int(np.clip(x0 - 1, 0, cols)), int(np.clip(x1 + 1, 0, cols))
        y0, y1 = int(np.clip(y0 - 1, 0, rows)), int(np.clip(y1 + 1, 0, rows))
        ink = changed[y0:y1, x0:x1]
        alpha = opacity.get(n)
        if alpha is not None and ink.any():
            under = bare[y0:y1, x0:x1]
            ink = _changed(_faded(with_them[y0:y1, x0:x1], under, alpha), under)
            if not ink.any():
                faint.append(n)
        if not ink.any():
            continue
        left, right, bottom, top = area
        crowded = any(
            other != n and o[0] < right and o[1] > left and o[2] < top and o[3] > bottom for other, o in areas
        )
        if crowded and renders < MAX_ANNOTATION_RENDERS:
            renders += 1
            annot = raw.FPDFPage_GetAnnot(page.raw, n)
            flags = raw.FPDFAnnot_GetFlags(annot)
            try:
                raw.FPDFAnnot_SetFlags(annot, flags | raw.FPDF_ANNOT_FLAG_HIDDEN)
                without = _rgb(page, scale)
            finally:
                raw.FPDFAnnot_SetFlags(annot, flags)
                raw.FPDFPage_CloseAnnot(annot)
            under = without[y0:y1, x0:x1]
            mine = with_them[y0:y1, x0:x1]
            ink = _changed(mine if alpha is None else _faded(mine, under, alpha), under)
            if not ink.any():
                continue
        elif crowded:
            unchecked = _ANNOTATIONS_UNCHECKED
        found[n] = _Paint(kind, (x0, y0, x1, y1), ink, (cols, rows), scale)
    if faint:  # what they cover (a white box at opacity 0 over the total) is seen: painted without them
        for n in faint:
            annot = raw.FPDFPage_GetAnnot(page.raw, n)
            try:
                raw.FPDFAnnot_SetFlags(annot, raw.FPDFAnnot_GetFlags(annot) | raw.FPDF_ANNOT_FLAG_HIDDEN)
            finally:
                raw.FPDFPage_CloseAnnot(annot)
        with_them = _rgb(page, scale)
    return found, with_them, unchecked


def _annotation_opacity(annot: Any) -> float:
    """The opacity (0 to 1) a viewer paints an annotation's appearance at: its /CA (PDF 1.4: "the
    constant opacity value used in painting the annotation", background and border included).
    pdfium paints an appearance the file holds at full opacity, and one it makes up (no /AP) at its
    /CA already: 1 for those."""
    import pypdfium2.raw as raw

    value = ctypes.c_float(1.0)
    if not raw.FPDFAnnot_HasKey(annot, b"AP") or not raw.FPDFAnnot_GetNumberValue(
        annot, b"CA", ctypes.byref(value)
    ):
        return 1.0
    alpha = value.value
    return 1.0 if not math.isfinite(alpha) else min(1.0, max(0.0, alpha))


def _faded(paint: Any, under: Any, alpha: float) -> Any:
    """A render ``paint`` laid over another, ``under`` (both ``_rgb`` arrays), at opacity ``alpha``:
    what a viewer shows of a layer pdfium painted at full opacity (``_over`` for a colour)."""
    import numpy as np

    mixed = np.rint(paint.astype(np.float32) * alpha + under.astype(np.float32) * (1 - alpha))
    return mixed.clip(0, 255).astype(np.uint8)


def annotation_texts(document: Any, index: int, painted: set[int]) -> dict[int, AnnotationText]:
    """What a person sees of the words the painted FreeText boxes and stamps (``painted``: their
    index in the page's /Annots) draw: each character is judged as the page's own text is
    (``_judge``: drawn invisible, too small, clipped away, outside the appearance's box, covered,
    in the colour behind it), on the page with those annotations painted into its content
    (pdfium's flattening, as a viewer places each appearance: its box, its matrix, its clip), the
    others left out. Only those some of whose characters nobody sees are returned, with the text
    of those seen; a box showing all its words is read as before. Changes the page in the open
    document (its annotations become its content): last. Raises when the flattened appearances
    cannot be told apart (the caller reads the words as the appearances hold them, and says so)."""
    import numpy as np
    import pypdfium2.raw as raw

    page = document[index]
    try:
        count = raw.FPDFPage_GetAnnotCount(page.raw)
        if count > 10 * MAX_JUDGED_ANNOTATIONS:
            raise ValueError("too many annotations to flatten")
        ours: list[int] = []
        for n in range(max(0, count)):
            annot = raw.FPDFPage_GetAnnot(page.raw, n)
            if not annot:
                continue
            try:
                flags = raw.FPDFAnnot_GetFlags(annot)
                if n in painted and raw.FPDFAnnot_GetSubtype(annot) in _WORDS:
                    ours.append(n)  # flattened as shown (pdfium's flattening leaves out Invisible ones)
                    off = (
                        raw.FPDF_ANNOT_FLAG_INVISIBLE
                        | raw.FPDF_ANNOT_FLAG_HIDDEN
                        | raw.FPDF_ANNOT_FLAG_NOVIEW
                    )
                    raw.FPDFAnnot_SetFlags(annot, flags & ~off)
                else:
                    raw.FPDFAnnot_SetFlags(annot, flags | raw.FPDF_ANNOT_FLAG_HIDDEN)
            finally:
                raw.FPDFPage_CloseAnnot(annot)
        if not ours:
            return {}
        before = raw.FPDFPage_CountObjects(page.raw)
        if raw.FPDFPage_Flatten(page.raw, raw.FLAT_NORMALDISPLAY) != raw.FLATTEN_SUCCESS:
            raise ValueError("the annotations could not be flattened")
    finally:
        page.close()
    page = document[index]
    textpage = page.get_textpage()
    try:
        if raw.FPDFPage_CountObjects(page.raw) != before + 1:
            raise ValueError("the flattened annotations are not one form")
        whose: dict[int | None, int] = {}  # a text object's address: the annotation (in ``ours``) it draws
        objects: list[Any] = []
        flat = ctypes.cast(raw.FPDFPage_GetObject(page.raw, before), ctypes.c_void_p).value
        forms = -1  # the annotations' form met so far, counted from 1 (-1: outside the flattened one)
        for obj in page.get_objects(max_depth=_FORM_DEPTH):
            if obj.level == 0:  # the flattened annotations are one form drawn last
                forms = 0 if obj.type == raw.FPDF_PAGEOBJ_FORM and _address(obj) == flat else -1
            elif forms >= 0 and obj.level == 1:
                forms += 1  # each annotation's appearance is a form of its own, in the order of /Annots
            if forms >= 1 and obj.type == raw.FPDF_PAGEOBJ_TEXT:
                whose[_address(obj)] = forms - 1
                objects.append(obj)
        if forms != len(ours):
            raise ValueError("the flattened annotations do not match those painted")
        chars = _read_chars(textpage)
        if not chars.printable:
            return {}
        mine = np.array([whose.get(handle, -1) for handle in chars.handles], dtype=np.int64)[chars.obj]
        verdicts = _by_object(chars)
        for j in np.flatnonzero(mine < 0).tolist():
            verdicts[j] = _OTHER
        scale = min(SCALE, MAX_SIDE / max(1.0, *page.get_size()))
        _, crowded, alone = _judge(page, objects, chars, verdicts, scale)
        if crowded or alone:
            raise ValueError(crowded or _ALONE)
        out: dict[int, AnnotationText] = {}
        printable = set(chars.printable)
        for k, n in enumerate(ours):
            members = np.flatnonzero(mine == k).tolist()
            hidden = sum(1 for j in members if verdicts[j] not in (None, _CLIP, _TWICE))
            if hidden:
                seen = {chars.printable[j] for j in members if verdicts[j] in (None, _CLIP)}
                out[n] = AnnotationText(" ".join(_text(chars.texts, printable, seen).split()), hidden)
        return out
    finally:
        textpage.close()
        page.close()


def _judge(
    page: Any, objects: list[Any], chars: _Chars, verdicts: list[str | None], scale: float, before: Any = None
) -> tuple[_Painted | None, str | None, bool]:
    """The characters whose verdict is None judged by the painted page (``before``: as it is, when
    painted already): the page painted with and without the text objects ``objects``
    (``_by_render``; not painted when no character is left to judge), ink in a transparent glyph's
    shape (``_glyph_ink``), characters drawn over one another (``_overprinted``) and their own ink
    (``_own_ink``). Returns the painted page, why some characters' own ink could not be told (then
    they are kept), and whether one is drawn over a different one of its own text object."""
    todo = [j for j, verdict in enumerate(verdicts) if verdict is None]
    painted = _by_render(page, objects, chars, todo, verdicts, scale, before) if todo else None
    if painted is not None:
        _glyph_ink(page, objects, chars, verdicts, painted)
    unders, alone = _overprinted(chars, objects, verdicts)
    crowded = _own_ink(page, objects, chars, verdicts, painted, unders) if painted is not None else None
    return painted, crowded, alone


def _strike_outs(page: Any, annotations: dict[int, _Paint]) -> list[tuple[float, float, float, float]] | None:
    """The areas (left, right, bottom, top) of the page's StrikeOut annotations a viewer paints
    (``annotations``): each quad of their attachment points, else their rectangle. None past
    ``MAX_STRIKE_OUTS``."""
    import pypdfium2.raw as raw

    areas = []
    quad, rect = raw.FS_QUADPOINTSF(), raw.FS_RECTF()
    for n, paint in annotations.items():
        if paint.subtype != raw.FPDF_ANNOT_STRIKEOUT:
            continue
        annot = raw.FPDFPage_GetAnnot(page.raw, n)
        if not annot:
            continue
        try:
            quads = raw.FPDFAnnot_CountAttachmentPoints(annot)
            for k in range(max(0, quads)):
                if raw.FPDFAnnot_GetAttachmentPoints(annot, k, ctypes.byref(quad)):
                    xs, ys = (quad.x1, quad.x2, quad.x3, quad.x4), (quad.y1, quad.y2, quad.y3, quad.y4)
                    areas.append((min(xs), max(xs), min(ys), max(ys)))
            if quads <= 0 and raw.FPDFAnnot_GetRect(annot, ctypes.byref(rect)):
                areas.append((rect.left, rect.right, min(rect.bottom, rect.top), max(rect.bottom, rect.top)))
        finally:
            raw.FPDFPage_CloseAnnot(annot)
        if len(areas) > MAX_STRIKE_OUTS:
            return None
    return areas


def _by_object(chars: _Chars) -> list[str | None]:
    """What the text objects and the characters' cells tell: drawn invisible, as a clip
    (``_CLIP``: unchecked), too small, squeezed; None where only the painted page can tell."""
    import numpy as np

    mode = np.asarray(chars.modes)[chars.obj]
    width, tall = chars.cell[:, 0], chars.cell[:, 1]
    verdict = np.select(
        [mode == _INVISIBLE_MODE, mode == _CLIP_MODE, tall < TINY_PT, width < SQUEEZED * tall],
        [1, 2, 3, 4],
        0,
    )
    words = [None, INVISIBLE, _CLIP, "too small to read", "squeezed to no width"]
    return [words[v] for v in verdict.tolist()]


class _Painted(NamedTuple):
    """The page as pdfium paints it (red, green, blue), where its text's ink is (the pixels that change
    when all text is left out), the scale it was painted at, and the render mode each text object
    had (``_by_render`` switches them off; ``_own_ink`` switches them back)."""

    rgb: Any
    ink: Any
    scale: float
    modes: list[int]


def _by_render(
    page: Any,
    objects: list[Any],
    chars: _Chars,
    todo: list[int],
    verdicts: list[str | None],
    scale: float,
    before: Any = None,
) -> _Painted:
    """The characters ``todo`` judged by the painted page: outside it, or nothing of their ink
    shows, or it shows in the colour behind it. Each text object's colour is first compared with
    what is behind all its characters at once: when it stands out from all of that, it stands out
    from what is behind each of them (the usual dark text on a light page), and only the objects
    where it does not are looked at character by character."""
    import numpy as np
    import pypdfium2.raw as raw

    if before is None:  # the page as it is (``_painted_annotations`` may have painted it)
        before = _rgb(page, scale)
    modes = [raw.FPDFTextObj_GetTextRenderMode(obj.raw) for obj in objects]
    for obj in objects:
        raw.FPDFTextObj_SetTextRenderMode(obj.raw, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
    after = _rgb(page, scale)
    ink = _changed(before, after)
    painted = _Painted(before, ink, scale, modes)
    rows, cols = ink.shape
    x0, y0, x1, y1 = _page_to_screen(page, raw, cols, rows)(chars.box[todo])
    if not all(np.isfinite(v).all() for v in (x0, y0, x1, y1)):
        raise ValueError("a character's box is not a number")
    outside = ((x1 <= 0) | (y1 <= 0) | (x0 >= cols) | (y0 >= rows)).tolist()
    # a pixel around the ink box, within the render
    x0, x1 = (np.clip(v, 0, cols).astype(np.int64) for v in (x0 - 1, x1 + 1))
    y0, y1 = (np.clip(v, 0, rows).astype(np.int64) for v in (y0 - 1, y1 + 1))
    any_ink = np.logical_or.reduce
    shows = np.zeros(len(todo), dtype=bool)
    for n, (j, a, b, c, d) in enumerate(
        zip(todo, x0.tolist(), y0.tolist(), x1.tolist(), y1.tolist(), strict=True)
    ):
        if outside[n]:
            verdicts[j] = "outside the page"
        elif not any_ink(ink[b:d, a:c], axis=None):
            verdicts[j] = _COVERED
        else:
            shows[n] = True
    # the colour test, for characters whose ink shows in a known colour: a text object at a time
    objs = np.asarray(chars.obj)[todo]
    paints = _merged_paints(objects, modes, chars)
    coloured = np.array([bool(paint) for paint in paints])
    test = np.flatnonzero(shows & coloured[objs])
    if not len(test):
        return painted
    tested, size = objs[test], len(chars.paints)
    left, top = np.full(size, cols), np.full(size, rows)  # each text object's box: all its tested characters
    right, bottom = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
    np.minimum.at(left, tested, x0[test])
    np.minimum.at(top, tested, y0[test])
    np.maximum.at(right, tested, x1[test])
    np.maximum.at(bottom, tested, y1[test])
    for k in np.unique(tested).tolist():  # seen when any of its colours stands out
        if any(_stands_out(paint, after[top[k] : bottom[k], left[k] : right[k]]) for paint in paints[k]):
            continue
        for n in test[tested == k].tolist():
            if all(_like_behind(paint, after[y0[n] : y1[n], x0[n] : x1[n]]) for paint in paints[k]):
                verdicts[todo[n]] = _COVERED
    return painted


def _glyph_ink(
    page: Any, objects: list[Any], chars: _Chars, verdicts: list[str | None], painted: _Painted
) -> None:
    """Ink painted in a character's own glyph shape is its ink: text a browser prints in a
    transparent colour, to paint a gradient through the letters (``background-clip: text``), paints
    nothing itself. A character of a text object filled at opacity 0 that ``_by_render`` found
    showing nothing is seen when what the page shows inside its glyph (the pixels that change when
    the object is filled black rather than white) contrasts with what it shows around it in its box
    (``MIN_CONTRAST``, the medians), and that ink keeps to the glyph's shape (``GLYPH_STRAY``); it is then judged as any other, that ink taken as its own (drawn
    over other text, it must still show ink of its own: ``_own_ink``). Objects are painted so in
    groups (``_layers``)."""
    import numpy as np
    import pypdfium2.raw as raw

    drawn = {_address(found): n for n, found in enumerate(objects)}
    candidates = sorted(
        {
            chars.obj[j]
            for j, verdict in enumerate(verdicts)
            if verdict == _COVERED
            and chars.modes[chars.obj[j]] == 0
            and chars.paints[chars.obj[j]]
            and all(paint[3] == 0 for paint in chars.paints[chars.obj[j]])
            and chars.handles[chars.obj[j]] in drawn
        }
    )
    if not candidates:
        return
    rows, cols = painted.ink.shape
    x0, y0, x1, y1 = (
        np.clip(v, 0, n).astype(np.int64)
        for v, n in zip(_page_to_screen(page, raw, cols, rows)(chars.box), (cols, rows) * 2, strict=True)
    )
    groups = _layers(chars, candidates, (x0, y0, x1, y1))
    if len(groups) > MAX_OWN_INK:
        return  # left hidden
    rgba = [ctypes.c_uint() for _ in range(4)]
    for group in groups:
        handles = [objects[drawn[chars.handles[k]]].raw for k in group]
        fills = []
        for handle in handles:
            raw.FPDFPageObj_GetFillColor(handle, *(ctypes.byref(c) for c in rgba))
            fills.append([c.value for c in rgba])
            raw.FPDFTextObj_SetTextRenderMode(handle, raw.FPDF_TEXTRENDERMODE_FILL)
        renders = []
        try:
            for grey in (0, 255):
                for handle in handles:
                    raw.FPDFPageObj_SetFillColor(handle, grey, grey, grey, 255)
                renders.append(_rgb(page, painted.scale))
        finally:
            for handle, fill in zip(handles, fills, strict=True):  # as _by_render left them
                raw.FPDFPageObj_SetFillColor(handle, *fill)
                raw.FPDFTextObj_SetTextRenderMode(handle, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
        glyphs = _changed(*renders)
        members = set(group)
        for j, verdict in enumerate(verdicts):
            if verdict != _COVERED or chars.obj[j] not in members:
                continue
            c0, c1 = max(int(x0[j]) - 1, 0), min(int(x1[j]) + 1, cols)
            r0, r1 = max(int(y0[j]) - 1, 0), min(int(y1[j]) + 1, rows)
            shape, shown = glyphs[r0:r1, c0:c1], _luminance(painted.rgb[r0:r1, c0:c1])
            if not shape.any() or shape.all():
                continue
            inside, around = float(np.median(shown[shape])), float(np.median(shown[~shape]))
            ink = _contrasting(shown, around)
            # in its shape: not a dark patch that happens to lie over much of it (ink around it too)
            if _contrasting(inside, around) and (ink & ~shape).sum() <= GLYPH_STRAY * (ink & shape).sum():
                verdicts[j] = None
                painted.ink[r0:r1, c0:c1] |= shape & ink  # its ink, for _own_ink


def _merged_paints(objects: list[Any], modes: list[int], chars: _Chars) -> list[list[Colour]]:
    """Each text object's colours, with those of the text objects pdfium merged into it: pdfium lists
    text drawn again at its own spot once (outlined lettering printed as a white fill, then a black
    stroke over it), so the copy it lists is judged by the colours of all its copies, the most
    visible one deciding. A text object none of whose characters are listed lends its colours to
    a listed one with the same bounds (to a point, or a tenth of its height) (past ``MAX_MERGED`` pairs to compare, none do). ``modes``:
    each object's render mode as the page has it."""
    import pypdfium2.raw as raw

    paints = [list(paint) for paint in chars.paints]
    listed = {handle: k for k, handle in enumerate(chars.handles) if handle is not None}
    unlisted = [(obj, mode) for obj, mode in zip(objects, modes, strict=True) if _address(obj) not in listed]
    mine = [obj for obj in objects if _address(obj) in listed]
    if not unlisted or len(unlisted) * len(mine) > MAX_MERGED:
        return paints
    sides = [ctypes.c_float() for _ in range(4)]  # left, bottom, right, top

    def bounds(obj: Any) -> tuple[float, ...] | None:
        if not raw.FPDFPageObj_GetBounds(obj.raw, *(ctypes.byref(side) for side in sides)):
            return None
        return tuple(side.value for side in sides)

    rgba = [ctypes.c_uint() for _ in range(4)]
    boxes = [(listed.get(_address(obj) or 0, -1), bounds(obj)) for obj in mine]
    for obj, mode in unlisted:
        box = bounds(obj)
        if box is None:
            continue
        getters = []
        if mode in _STROKED_MODES or mode in _BOTH_MODES:
            getters.append(raw.FPDFPageObj_GetStrokeColor)
        if mode not in _STROKED_MODES and mode not in (_INVISIBLE_MODE, _CLIP_MODE):
            getters.append(raw.FPDFPageObj_GetFillColor)
        colours = []
        for getter in getters:
            if getter(obj.raw, *(ctypes.byref(c) for c in rgba)):
                r, g, b, a = (c.value for c in rgba)
                colours.append((r, g, b, a / 255))
        slack = max(1.0, 0.1 * (box[3] - box[1]))  # a stroke widens the bounds by half its width
        for k, other in boxes:
            if other is not None and max(abs(p - q) for p, q in zip(box, other, strict=True)) <= slack:
                paints[k].extend(colours)
    return paints


def _own_ink(
    page: Any,
    objects: list[Any],
    chars: _Chars,
    verdicts: list[str | None],
    painted: _Painted,
    unders: list[int],
) -> str | None:
    """A character is seen by its own ink only. ``_by_render`` takes one as seen when ink shows
    anywhere in its box; where its box overlaps a character of another text object, that ink may
    be the other's (a 7pt '9' under a white box, inside the box of the '4' drawn after it). Such a
    character whose ink shows only where the other's box is (a kerned 'AV' shows its own outside
    it) is painted once more, its text object left out: when that changes nothing in its box, it
    shows no ink of its own and is hidden (``_UNDER``). Past ``MAX_OWN_INK`` text objects to paint
    so, none is, and the reason is returned (the page's text is then said to be unchecked): all
    are kept. ``unders`` (characters drawn under a different one at their spot, ``_overprinted``)
    are painted so whatever their ink shows."""
    import numpy as np
    import pypdfium2.raw as raw

    live = np.flatnonzero(np.array([verdict is None for verdict in verdicts]))
    if len(live) < 2:
        return None
    a, b = _touching(chars.box[live], reach=2.0)
    a, b = live[a], live[b]
    obj = np.asarray(chars.obj)
    keep = (obj[a] != obj[b]) & (_share(chars.box, a, b) > 0)
    if not keep.any() and not unders:
        return None
    others: dict[int, list[int]] = {j: [] for j in unders if verdicts[j] is None}
    for x, y in zip(a[keep].tolist(), b[keep].tolist(), strict=True):
        others.setdefault(x, []).append(y)
        others.setdefault(y, []).append(x)
    rows, cols = painted.ink.shape
    to_screen = _page_to_screen(page, raw, cols, rows)
    x0, y0, x1, y1 = (
        np.clip(v, 0, n).astype(np.int64) for v, n in zip(to_screen(chars.box), (cols, rows) * 2, strict=True)
    )
    by_object: dict[int, list[int]] = {}
    tested = set(unders)
    for j, near in others.items():
        if j in tested:
            by_object.setdefault(chars.obj[j], []).append(j)
            continue
        own = painted.ink[y0[j] : y1[j], x0[j] : x1[j]].copy()  # its ink outside the others' boxes
        for o in near:  # (a pixel around each: the edge of their ink)
            own[
                max(y0[o] - 1 - y0[j], 0) : max(y1[o] + 1 - y0[j], 0),
                max(x0[o] - 1 - x0[j], 0) : max(x1[o] + 1 - x0[j], 0),
            ] = False
        if not own.any():
            by_object.setdefault(chars.obj[j], []).append(j)
    if not by_object:
        return None
    drawn = {_address(found): n for n, found in enumerate(objects)}
    by_object = {k: members for k, members in by_object.items() if chars.handles[k] in drawn}
    layers = _layers(chars, list(by_object), (x0, y0, x1, y1))
    if len(layers) > MAX_OWN_INK:
        return _CROWDED
    for found, mode in zip(objects, painted.modes, strict=True):  # as the page is: _by_render hid them
        raw.FPDFTextObj_SetTextRenderMode(found.raw, mode)
    renders = 0
    while layers:
        layer = layers.pop()
        renders += 1
        if renders > MAX_OWN_INK:
            return _CROWDED
        numbers = [drawn[chars.handles[k]] for k in layer]
        for n in numbers:
            raw.FPDFTextObj_SetTextRenderMode(objects[n].raw, raw.FPDF_TEXTRENDERMODE_INVISIBLE)
        try:
            without = _rgb(page, painted.scale)
        finally:
            for n in numbers:
                raw.FPDFTextObj_SetTextRenderMode(objects[n].raw, painted.modes[n])
        changed = _changed(painted.rgb, without)
        if len(layer) > 1:  # its ink must lie in its characters' boxes, else each is painted alone
            stray = changed.copy()
            for j in np.flatnonzero(np.isin(obj, layer)).tolist():
                top, left = max(int(y0[j]) - 2, 0), max(int(x0[j]) - 2, 0)
                stray[top : int(y1[j]) + 2, left : int(x1[j]) + 2] = False
            if stray.any():  # a clip, a wide stroke, a Type 3 glyph painting elsewhere
                layers.extend([k] for k in layer)
                continue
        for k in layer:
            for j in by_object[k]:
                c0, c1 = max(int(x0[j]) - 1, 0), min(int(x1[j]) + 1, cols)
                r0, r1 = max(int(y0[j]) - 1, 0), min(int(y1[j]) + 1, rows)
                if not changed[r0:r1, c0:c1].any():
                    verdicts[j] = _UNDER
    return None


def _layers(chars: _Chars, candidates: list[int], screen: tuple[Any, ...]) -> list[list[int]]:
    """The text objects ``candidates`` in groups that can each be left out of one render: no
    character of one comes within two pixels of a character of another in the same group (its
    pixel box: x0, y0, x1, y1 in ``screen``), so what changes in a character's box when its group is
    left out is its own object's doing. A see-through stamp over a table is then a handful of
    renders, not one for each cell under it (a group whose ink strays outside its characters' boxes
    is painted again one object at a time, by ``_own_ink``)."""
    import numpy as np

    x0, y0, x1, y1 = screen
    obj = np.asarray(chars.obj)
    which = np.flatnonzero(np.isin(obj, candidates))
    near: dict[int, set[int]] = {k: set() for k in candidates}
    if len(which) > 1:
        box = np.stack([x0[which] - 2, x1[which] + 2, y0[which] - 2, y1[which] + 2], axis=1).astype(float)
        a, b = _touching(box, reach=2.0)
        meet = (
            (np.minimum(box[a, 1], box[b, 1]) > np.maximum(box[a, 0], box[b, 0]))
            & (np.minimum(box[a, 3], box[b, 3]) > np.maximum(box[a, 2], box[b, 2]))
            & (obj[which[a]] != obj[which[b]])
        )
        for p, q in zip(obj[which[a[meet]]].tolist(), obj[which[b[meet]]].tolist(), strict=True):
            near[p].add(q)
            near[q].add(p)
    groups: list[list[int]] = []
    colour: dict[int, int] = {}
    for k in candidates:  # greedy: the first group none of its neighbours is in
        taken = {colour[o] for o in near[k] if o in colour}
        colour[k] = next(c for c in range(len(groups) + 1) if c not in taken)
        if colour[k] == len(groups):
            groups.append([])
        groups[colour[k]].append(k)
    return groups


def _stands_out(paint: Colour, behind: Any) -> bool:
    """Its colour, laid over every pixel painted under it (text left out: part of a render,
    ``_rgb``), contrasts with each by ``MIN_CONTRAST`` at least."""
    import numpy as np

    packed = behind.view("<u4")[..., 0] & 0xFFFFFF  # red, green, blue as one number (little-endian)
    colours = []
    for _ in range(8):  # mostly a few colours: the most common (the paper) taken out first
        if not packed.size:
            break
        colours.append(packed.flat[0])
        packed = packed[packed != colours[-1]]
    else:
        colours.extend(np.unique(packed).tolist())
    found = np.asarray(colours, dtype=np.uint32)
    under = np.stack([found & 255, (found >> 8) & 255, found >> 16], axis=1).astype(np.uint8)
    return bool(_contrasting(_luminance(_over(paint, under)), _luminance(under)).all())


def _like_behind(paint: Colour, behind: Any) -> bool:
    """Its colour is what is painted under it, text left out: white letters laid over black ones
    change the render (they erase), but nobody sees the white letters. (Laid over the median colour
    behind it, it contrasts with it by less than ``MIN_CONTRAST``.)"""
    import numpy as np

    if _stands_out(paint, behind):  # the median lies between the min and the max: often decided
        return False
    under = np.median(behind[..., :3].reshape(-1, 3), axis=0)
    return contrast(paint, (*under.tolist(), 1.0)) < MIN_CONTRAST


def _over(paint: Colour, under: Any) -> Any:
    """``paint`` laid over the colours ``under`` (an (n, 3) array) by its opacity, as 8-bit colours."""
    import numpy as np

    r, g, b, a = paint
    return np.rint(np.asarray([r, g, b]) * a + under * (1 - a)).clip(0, 255).astype(np.uint8)


@functools.cache
def _linear_table() -> Any:
    import numpy as np

    return np.array([linear(v) for v in range(256)], dtype=np.float32)


def _luminance(rgb: Any) -> Any:
    """The WCAG relative luminance of each of an array of 8-bit colours (last axis red, green, blue)."""
    table = _linear_table()
    return LUMA[0] * table[rgb[..., 0]] + LUMA[1] * table[rgb[..., 1]] + LUMA[2] * table[rgb[..., 2]]


def _changed(one: Any, other: Any) -> Any:
    """Where two renders (``_rgb``) differ by a contrast of ``MIN_CONTRAST`` or more: the luminance
    is worked out only where their pixels differ at all (a page's text is a few of them)."""
    import numpy as np

    first, second = (np.ascontiguousarray(v).view("<u4")[..., 0] for v in (one, other))  # a pixel a number
    out = first != second
    where = np.flatnonzero(out)
    table = _linear_table()
    lum = [
        LUMA[0] * table[v & 255] + LUMA[1] * table[(v >> 8) & 255] + LUMA[2] * table[(v >> 16) & 255]
        for v in (first.reshape(-1)[where], second.reshape(-1)[where])  # red, green, blue: little-endian
    ]
    out.reshape(-1)[where] = _contrasting(*lum)
    return out


def _contrasting(one: Any, other: Any) -> Any:
    """Where two luminances (arrays) are apart by a WCAG contrast of ``MIN_CONTRAST`` or more: a
    person tells one from the other (visibility's rule for text against its background)."""
    import numpy as np

    return np.maximum(one, other) + 0.05 >= MIN_CONTRAST * (np.minimum(one, other) + 0.05)


def _overprinted(chars: _Chars, objects: list[Any], verdicts: list[str | None]) -> tuple[list[int], bool]:
    """Characters drawn over one another (their ink boxes overlapping by more than ``COINCIDE`` of
    the larger, from origins less than ``SAME_SPOT`` of the font size apart). The same character
    under another is left out quietly (``_TWICE``: bold struck twice, a shadow: a person sees one).
    A different one under another is not judged by the draw order (an X typed into a box, a
    description running into the next column, a see-through stamp: both show): it is returned, for
    ``_own_ink`` to paint the page without it; and whether one lies in the same text object as the
    one over it (it cannot be painted without that one: it is kept, and the page says it was not
    checked). The characters of one glyph (a ligature read as "fi") share its box and are not
    overprinted."""
    import numpy as np

    live = np.flatnonzero(np.array([verdict is None for verdict in verdicts]))
    if len(live) < 2:
        return [], False
    a, b = _touching(chars.box[live])
    a, b = live[a], live[b]
    keep = _share(chars.box, a, b) > COINCIDE
    if not keep.any():
        return [], False
    a, b = a[keep], b[keep]
    spot = _origins(chars, sorted({*a.tolist(), *b.tolist()}))
    near = np.array(
        [
            math.dist(spot[x][:2], spot[y][:2]) < SAME_SPOT * min(spot[x][2], spot[y][2])
            for x, y in zip(a.tolist(), b.tolist(), strict=True)
        ],
        dtype=bool,
    )
    drawn = {_address(obj): n for n, obj in enumerate(objects)}
    rank = np.array([drawn.get(chars.handles[k], -1) for k in chars.obj]) * len(verdicts)
    rank += np.arange(len(verdicts))  # the text objects in the order they are drawn, each in its order
    texts, where = chars.texts, chars.printable
    unders: set[int] = set()
    alone = False  # a different character under another of its own text object
    for x, y in zip(a[near].tolist(), b[near].tolist(), strict=True):
        under, over = (x, y) if rank[x] < rank[y] else (y, x)
        one_glyph = chars.obj[x] == chars.obj[y] and (chars.box[x] == chars.box[y]).all()
        if verdicts[under] is not None or one_glyph:
            continue
        if texts[where[under]] == texts[where[over]]:
            verdicts[under] = _TWICE
        elif _one_pen(spot[under], spot[over]) and _alike(
            chars.paints[chars.obj[under]], chars.paints[chars.obj[over]]
        ):
            verdicts[under] = _UNDER
        elif chars.obj[under] == chars.obj[over]:
            alone = True
        else:
            unders.add(under)
    return sorted(unders), alone


def _one_pen(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    """Two characters set from one origin at one size (``ONE_PEN``), one typed over the other in
    its place: in one colour (``_alike``) their ink merges into one glyph a person cannot take
    apart (a '4' over a '9'), and she reads the one on top."""
    size = min(a[2], b[2])
    return math.dist(a[:2], b[:2]) < ONE_PEN * size and abs(a[2] - b[2]) < ONE_PEN * size


def _alike(one: list[Colour], other: list[Colour]) -> bool:
    """Whether two text objects are painted in one colour (a contrast under ``MIN_CONTRAST``, opaque alike)."""
    if not one or not other or one[0][3] != other[0][3]:
        return False
    return contrast((*one[0][:3], 1.0), (*other[0][:3], 1.0)) < MIN_CONTRAST


def _origins(chars: _Chars, which: list[int]) -> dict[int, tuple[float, float, float]]:
    """The origin (x, y) and font size of each of the printable characters ``which``, in points on
    the page: the size its font is set at (``Tf``) scaled by its matrix (text set at 199 pt and
    drawn at a twentieth of that is 10 pt text)."""
    pdfium = _pdfium()
    x, y = ctypes.c_double(), ctypes.c_double()
    at = ctypes.addressof(x), ctypes.addressof(y)
    matrix = (ctypes.c_float * 6)()  # FS_MATRIX: a, b, c, d, e, f
    where = ctypes.addressof(matrix)
    out = {}
    for j in which:
        i = chars.printable[j]
        pdfium.origin(chars.page, i, *at)
        size = abs(pdfium.font_size(chars.page, i))
        if pdfium.matrix(chars.page, i, where):
            a, b, c, d = matrix[:4]
            stretch = math.sqrt(abs(a * d - b * c))
            size *= stretch if math.isfinite(stretch) and stretch > 0 else 1.0
        out[j] = (x.value, y.value, size)
    return out


def _touching(box: Any, reach: float = 1.0) -> tuple[Any, Any]:
    """Pairs of boxes (an (n, 4) array of left, right, bottom, top) that overlap side to side and
    whose middles are less than half the tallest box apart up and down (``reach`` times that): all
    pairs that could coincide (or overlap: ``reach`` 2), without comparing every box with every
    other. Within bands of that height (twice: the
    second bands shifted by half of one, so two middles that close share a band in one of them),
    boxes sorted by their left side; each is paired with those whose left side lies within it."""
    import numpy as np

    left, right, bottom, top = box.T
    tall = float((top - bottom).max())
    none = np.zeros(0, dtype=np.int64)
    if not tall > 0:
        return none, none
    origin, span = float(left.min()), float(right.max() - left.min()) + 1.0
    firsts, seconds = [none], [none]
    for shift in (0.0, 0.5):
        band = np.floor((bottom + top) / (2 * tall * reach) + shift) * span - origin
        order = np.argsort(band + left, kind="stable")
        stop = np.searchsorted((band + left)[order], (band + right)[order], side="left")
        count = np.maximum(stop - np.arange(1, len(box) + 1), 0)
        first = np.repeat(np.arange(len(box)), count)
        second = first + 1 + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        firsts.append(order[first])
        seconds.append(order[second])
    return np.concatenate(firsts), np.concatenate(seconds)


def _share(box: Any, a: Any, b: Any) -> Any:
    """How much of the larger of boxes ``a`` and ``b`` (left, right, bottom, top) is common to both."""
    import numpy as np

    wide = np.minimum(box[a, 1], box[b, 1]) - np.maximum(box[a, 0], box[b, 0])
    high = np.minimum(box[a, 3], box[b, 3]) - np.maximum(box[a, 2], box[b, 2])
    common = np.clip(wide, 0, None) * np.clip(high, 0, None)
    area = (box[:, 1] - box[:, 0]) * (box[:, 3] - box[:, 2])
    larger = np.maximum(area[a], area[b])
    return np.divide(common, larger, out=np.zeros_like(common), where=larger > 0)


def _drawn_twice(page: Any, textpage: Any, objects: list[Any]) -> bool:
    """Whether pdfium's text leaves out a character drawn again over itself. pdfium keeps one of
    the same character drawn twice at the same spot (a whole line drawn twice, or a letter: a
    person sees one), so its text does not list the other, while pypdf reads both ('4' drawn on
    the '4' of '412.50' reads '4412.50'). Told by reading the page's text again with the text
    objects that overlap another moved far apart: one that then has more characters was drawn
    over another (past ``MAX_APART`` characters or ``MAX_APART_OBJECTS`` objects, taken as so).
    Moves the objects: last."""
    import numpy as np
    import pypdfium2.raw as raw

    if len(objects) < 2:
        return False
    sides = [ctypes.c_float() for _ in range(4)]  # left, bottom, right, top
    box = np.zeros((len(objects), 4))
    for n, obj in enumerate(objects):
        if raw.FPDFPageObj_GetBounds(obj.raw, *(ctypes.byref(side) for side in sides)):
            left, bottom, right, top = (side.value for side in sides)
            box[n] = left, right, bottom, top
    a, b = _touching(box)
    common = (np.minimum(box[a, 1], box[b, 1]) > np.maximum(box[a, 0], box[b, 0])) & (
        np.minimum(box[a, 3], box[b, 3]) > np.maximum(box[a, 2], box[b, 2])
    )
    overlapping = sorted({*a[common].tolist(), *b[common].tolist()})
    if not overlapping:
        return False
    if len(overlapping) > MAX_APART_OBJECTS:
        return True
    before = _per_object(textpage)
    step = 4.0 * sum(page.get_size()) + 100.0  # farther than anything on the page is from anything
    across = max(1, math.isqrt(len(overlapping)))
    for n, index in enumerate(overlapping):
        dx, dy = step * (n % across + 1), step * (n // across + 1)
        raw.FPDFPageObj_Transform(objects[index].raw, 1, 0, 0, 1, dx, dy)
    apart = page.get_textpage()
    try:
        after = _per_object(apart)
    finally:
        apart.close()
    if before is None or after is None:
        return True
    return any(
        after.get(found, 0) > before.get(found, 0)
        for found in map(_address, (objects[i] for i in overlapping))
    )


def _per_object(textpage: Any) -> dict[int | None, int] | None:
    """How many characters a text page lists for each text object (by its address); None past
    ``MAX_APART`` characters."""
    pdfium = _pdfium()
    handle = ctypes.cast(textpage.raw, ctypes.c_void_p).value
    count = pdfium.count(handle)
    if count > MAX_APART:
        return None
    out: dict[int | None, int] = {}
    for i in range(max(0, count)):
        found = pdfium.text_object(handle, i)
        out[found] = out.get(found, 0) + 1
    return out


def _address(obj: Any) -> int | None:
    return ctypes.cast(obj.raw, ctypes.c_void_p).value


def _page_to_screen(page: Any, raw: Any, cols: int, rows: int) -> Callable[[Any], tuple[Any, ...]]:
    """Page points to pixels of the render, with the page's rotation and crop box applied as pdfium
    applies them when it paints (an affine map, taken from three points): characters' boxes
    (an (n, 4) array of left, right, bottom, top) become arrays x0, y0, x1, y1 (whole pixels)."""
    import numpy as np

    x, y = ctypes.c_int(), ctypes.c_int()

    def device(px: float, py: float) -> tuple[float, float]:
        raw.FPDF_PageToDevice(page.raw, 0, 0, cols, rows, 0, px, py, ctypes.byref(x), ctypes.byref(y))
        return float(x.value), float(y.value)

    (ox, oy), (ax, ay), (bx, by) = device(0, 0), device(1000, 0), device(0, 1000)
    xx, xy, yx, yy = (ax - ox) / 1000, (ay - oy) / 1000, (bx - ox) / 1000, (by - oy) / 1000

    def to_screen(box: Any) -> tuple[Any, ...]:
        left, right, bottom, top = box.T
        xa, ya = ox + xx * left + yx * bottom, oy + xy * left + yy * bottom
        xb, yb = ox + xx * right + yx * top, oy + xy * right + yy * top
        return (
            np.floor(np.minimum(xa, xb)),
            np.floor(np.minimum(ya, yb)),
            np.ceil(np.maximum(xa, xb)),
            np.ceil(np.maximum(ya, yb)),
        )

    return to_screen


def _rgb(page: Any, scale: float, annotations: bool = True) -> Any:
    """The page painted (its annotations too, unless not ``annotations``), as an (h, w, 4) array of
    red, green, blue and a fourth byte (unused): four bytes a pixel compare as one number (``_changed``)."""
    import numpy as np
    import pypdfium2 as pdfium

    bitmap = page.render(
        scale=scale,
        may_draw_forms=False,
        rev_byteorder=True,
        prefer_bgrx=True,
        fill_color=(255, 255, 255, 255),
        draw_annots=annotations,
        bitmap_maker=pdfium.PdfBitmap.new_native,  # in memory Python owns: the array keeps it, no copy
    )
    pixels = bitmap.to_numpy()
    if pixels.ndim != 3 or pixels.shape[2] != 4 or bitmap.stride != 4 * pixels.shape[1]:
        return np.asarray(bitmap.to_pil().convert("RGBA"))  # should pypdfium2 render otherwise
    return pixels


def _text(texts: list[str], printable: set[int], seen: set[int], struck: set[int] | None = None) -> str:
    """pdfium's text of the seen characters; its own spaces and line breaks kept between them. A
    run of ``struck`` characters on a line is written inside STRUCK_OPEN … STRUCK_CLOSE. The page's
    own text never spells a reader's mark (``visibility.own_text``: its "[" is written "("), told
    before the marks are added."""
    order = [i for i, text in enumerate(texts) if i in seen or i not in printable]
    own = own_text("".join(texts[i] or "\0" for i in order))  # one character each: "" kept apart
    if len(own) == len(order):
        texts = list(texts)
        for i, text in zip(order, own, strict=True):
            if text != (texts[i] or "\0"):
                texts[i] = text
    out: list[str] = []
    pending = ""
    striking = False
    for i, text in enumerate(texts):
        if i in printable:
            if i in seen:  # a space before a character left out goes before the next one seen
                mark = struck is not None and i in struck
                if striking and (not mark or "\n" in pending):
                    out.append(STRUCK_CLOSE)
                    striking = False
                out.append(pending)
                if mark and not striking:
                    out.append(STRUCK_OPEN)
                    striking = True
                out.append(in_strike(text) if striking else text)
                pending = ""
        elif text in "\r\n":
            pending = "\n" if out else ""
        elif text.isspace() and out and not pending:
            pending = " "
    if striking:
        out.append(STRUCK_CLOSE)
    return "".join(out).replace("\r", "")
