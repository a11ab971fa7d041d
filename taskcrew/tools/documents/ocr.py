"""OCR with the Tesseract command-line program: pixels → text with a confidence.

Debian: ``apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu``. Languages come
from ``TASKCREW_OCR_LANGS`` (default: eng+deu, those of them installed). A missing program is an
:class:`OcrUnavailable` with what to install, never a crash.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

from taskcrew.tools.documents import ocrtables, pixels
from taskcrew.tools.documents.models import OcrText, Unreadable
from taskcrew.tools.documents.ocrlines import UNCERTAIN_BELOW, Line, Word, build, parse_tsv

if TYPE_CHECKING:
    from PIL.Image import Image

OCR_DPI = 300
OCR_TIMEOUT_S = 60
# body text is scaled to letters this high (pixels, about the x-height; ~300 dpi for 10 pt) when it
# is smaller by a quarter (a 150 dpi scan, a small screenshot); larger is read as it is (cost, no gain)
LETTER_HEIGHT = 20
MIN_UPSCALE, MAX_UPSCALE = 1.25, 4.0
MAX_OCR_PIXELS = 16_000_000
WEAK_CONFIDENCE, WEAK_WORDS = 70, 8  # below either: check the page's orientation and try again
PAGE_SEGMENTATION = "4"  # one column of lines: keeps "Invoice No.  SF-0098" on one line
SECOND_SEGMENTATION = "6"  # weak lines again, alone, as one uniform block
LOW_CONTRAST = 110  # grey levels between ink and paper below which a page is stretched
MAX_REREAD_LINES = 24  # weak lines read a second time per image
# one thread: on a busy machine tesseract's OpenMP threads spin-wait for each other (5-7x slower)
TESSERACT_ENV = {"OMP_THREAD_LIMIT": "1"}


class OcrUnavailable(Unreadable):
    """No OCR engine on this machine."""


INSTALL_HINT = (
    "OCR is not available on this machine (the 'tesseract' program is missing); install it with "
    "'apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu', or ask a human to read it"
)


def tesseract_path() -> str | None:
    return shutil.which(os.environ.get("TASKCREW_TESSERACT", "tesseract"))


@functools.cache
def languages() -> str:
    wanted = os.environ.get("TASKCREW_OCR_LANGS", "eng+deu").split("+")
    exe = tesseract_path()
    if exe is None:
        return "eng"
    try:
        listed = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return "eng"
    have = {line.strip() for line in listed.splitlines()[1:]}
    usable = [lang for lang in wanted if lang in have]
    return "+".join(usable) if usable else "eng"


def prepare(image: Image) -> Image:
    """Greyscale, lighting evened, contrast stretched, small letters scaled up (tesseract reads
    letters with a ~20 px x-height best)."""
    from PIL import Image as PILImage
    from PIL import ImageOps

    image = pixels.on_white(ImageOps.exif_transpose(image) or image)
    grey = _stretched(pixels.evened(image.convert("L")))
    height = pixels.letter_height(grey)
    factor = min(MAX_UPSCALE, LETTER_HEIGHT / height) if height else 1.0
    if factor >= MIN_UPSCALE:  # a 150 dpi scan, a small photo, a screenshot: letters too small to read
        size = (round(grey.width * factor), round(grey.height * factor))
        if size[0] * size[1] <= MAX_OCR_PIXELS:
            grey = grey.resize(size, PILImage.Resampling.LANCZOS)
    return grey


def straighten(exe: str, page: Image) -> Image:
    """Upright (a page lying sideways turned by tesseract's orientation detection), then level (a
    crooked scan turned by its projection profile), its blank margins cut off, its ruled lines painted
    out."""
    from PIL import Image as PILImage

    if pixels.lies_sideways(page):
        page = _upright(exe, page, sideways=True)
    angle = pixels.skew_angle(page)
    if angle:  # turned after scaling: turning a small picture smears its letters
        page = page.rotate(angle, resample=PILImage.Resampling.BICUBIC, expand=True, fillcolor=255)
    if (box := pixels.inked_box(page)) is not None:  # blank margins cost tesseract's layout time
        page = page.crop(box)
    return pixels.without_rules(page)


def _stretched(grey: Image) -> Image:
    """A faint page (grey ink on grey paper) stretched to black on white; others left as they are."""
    from PIL import ImageOps

    ink, paper = pixels.levels(grey, 0.5, 50)
    if paper - ink >= LOW_CONTRAST:
        return grey
    return ImageOps.autocontrast(grey, cutoff=(0.5, 2))


def ocr_image(image: Image) -> OcrText:
    """Text of an image, lines in reading order, each value with its own confidence."""
    exe = tesseract_path()
    if exe is None:
        raise OcrUnavailable(INSTALL_HINT)
    page = straighten(exe, prepare(image))
    lines = _read(exe, page, PAGE_SEGMENTATION)
    result = build(lines)
    if result.confidence < WEAK_CONFIDENCE or result.words < WEAK_WORDS:
        turned_page = _upright(exe, page, sideways=False)  # a page upside down, or unsure which way
        if turned_page is not page:
            turned = _read(exe, turned_page, PAGE_SEGMENTATION)
            better = build(turned)
            if better.words * better.confidence > result.words * result.confidence:
                page, lines, result = turned_page, turned, better
    return build(_second_pass(exe, page, lines))


def _read(exe: str, page: Image, psm: str) -> list[Line]:
    return parse_tsv(_tesseract(exe, page, ["-l", languages(), "--psm", psm, "tsv"]))


def _upright(exe: str, page: Image, *, sideways: bool) -> Image:
    turn = _orientation(exe, page)
    if sideways and turn not in (90, 270):
        turn = 90 if turn == 0 else turn  # the profile is sure it lies sideways; tesseract unsure
    return page.rotate(-turn, expand=True) if turn else page


def _second_pass(exe: str, page: Image, lines: list[Line]) -> list[Line]:
    """One more tesseract run, only where the first reading leaves doubt: lines with a value it was
    unsure of (a boxed or dotted value, a blurred digit), each cut out alone, and doubtful table-like
    runs of lines (:mod:`ocrtables`), column by column. All on one sheet read with another
    segmentation; each line or table cell keeps the reading tesseract is surer of. Every table's
    words are told their column."""
    tables = ocrtables.find_tables(lines)
    redo = [(t, cols) for t in tables if (cols := ocrtables.doubtful(lines, t))]
    in_tables = {i for t, _ in redo for i in t.rows}
    weak = [i for i, line in enumerate(lines) if line.words and line.weakest < UNCERTAIN_BELOW]
    weak = [
        i for i in weak if i not in in_tables and any(ch.isdigit() for w in lines[i].words for ch in w.text)
    ]
    weak = weak[:MAX_REREAD_LINES]
    boxes = [_padded(page, lines[i].box, *[max(8, _tall(lines[i]) // 2)] * 2) for i in weak]
    strips = [
        [
            _padded(page, (a, t.box[1], b, t.box[3]), 0, 8)
            for c, (a, b) in enumerate(t.strips(page.width))
            if c in cols
        ]
        for t, cols in redo
    ]
    if not boxes and not strips:
        ocrtables.mark_columns(lines, tables)
        return lines
    read = _read_crops(exe, page, boxes + [box for table in strips for box in table])
    out = list(lines)
    for i, words in zip(weak, read, strict=False):
        if words and _score(words) > _score(lines[i].words):
            out[i] = Line(block=lines[i].block, words=words)
    at = len(weak)
    for (table, columns), table_strips in zip(redo, strips, strict=True):
        again = [w for words in read[at : at + len(table_strips)] for w in words]
        at += len(table_strips)
        out = ocrtables.merge(out, table, columns, again, _score)
    ocrtables.mark_columns(out, tables)
    return out


def _padded(page: Image, box: tuple[int, int, int, int], across: int, down: int) -> tuple[int, int, int, int]:
    left, top, right, bottom = box
    return (
        max(0, left - across),
        max(0, top - down),
        min(page.width, right + across),
        min(page.height, bottom + down),
    )


def _tall(line: Line) -> int:
    return line.box[3] - line.box[1]


def _read_crops(exe: str, page: Image, boxes: list[tuple[int, int, int, int]]) -> list[list[Word]]:
    """The words of each box of the page, read in one tesseract run (``--psm 6``) of a sheet with the
    crops stacked apart, in page coordinates, left to right."""
    from PIL import Image as PILImage

    crops = [page.crop(box) for box in boxes]
    gap = min(48, max(crop.height for crop in crops))  # white between crops: tesseract keeps them apart
    sheet = PILImage.new(
        "L", (max(c.width for c in crops) + 2 * gap, sum(c.height + gap for c in crops) + gap), 255
    )
    slots = []
    y = gap
    for box, crop in zip(boxes, crops, strict=True):
        sheet.paste(crop, (gap, y))
        slots.append((y, y + crop.height, box))
        y += crop.height + gap
    again = [w for line in _read(exe, sheet, SECOND_SEGMENTATION) for w in line.words]
    out = []
    for top, bottom, box in slots:
        words = [
            Word(w.text, w.conf, w.left - gap + box[0], w.top - top + box[1], w.width, w.height)
            for w in again
            if top <= w.top + w.height / 2 <= bottom
        ]
        out.append(sorted(words, key=lambda w: w.left))
    return out


def _score(words: list[Word]) -> float:
    """A reading's worth: its weakest word first (that is the value an approver doubts), then the mean."""
    return min(w.conf for w in words) + sum(w.conf for w in words) / len(words) / 100


def _tesseract(exe: str, image: Image, args: list[str]) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    try:
        done = subprocess.run(
            [exe, "stdin", "stdout", *args],
            input=buffer.getvalue(),
            capture_output=True,
            timeout=OCR_TIMEOUT_S,
            env={**os.environ, **TESSERACT_ENV},
        )
    except subprocess.TimeoutExpired as exc:
        raise Unreadable(f"OCR took longer than {OCR_TIMEOUT_S} s; ask a human to read it") from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["unknown error"]
        raise Unreadable(f"OCR failed ({why[0][:200]}); ask a human to read it")
    return done.stdout.decode("utf-8", "replace")


def _orientation(exe: str, image: Image) -> int:
    """Degrees (0, 90, 180, 270) tesseract's orientation detection says the page must turn; 0 if unsure."""
    try:
        report = _tesseract(exe, image, ["--psm", "0"])
    except Unreadable:  # no 'osd' data, or too little text to tell
        return 0
    fields = dict(line.split(":", 1) for line in report.splitlines() if ":" in line)
    try:
        turn, confidence = int(fields.get("Rotate", "0")), float(fields.get("Orientation confidence", "0"))
    except ValueError:
        return 0
    return turn if confidence >= 1.0 else 0
