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

from taskcrew.tools.documents.models import OcrText, Unreadable

if TYPE_CHECKING:
    from PIL.Image import Image

OCR_DPI = 300
MIN_WORD_CONFIDENCE = 30  # words tesseract is less sure of are usually specks of dust
OCR_TIMEOUT_S = 60
TARGET_WIDTH = 2400  # pixels across an A4 page that tesseract reads best (measured: see bench)
WEAK_CONFIDENCE, WEAK_WORDS = 70, 8  # below either: check the page's orientation and try again
PAGE_SEGMENTATION = "4"  # one column of lines: keeps "Invoice No.  SF-0098" on one line


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
    """Greyscale, and small images scaled up: tesseract reads ~30 px high capitals best."""
    from PIL import Image as PILImage
    from PIL import ImageOps

    image = ImageOps.exif_transpose(image) or image
    if image.mode in ("RGBA", "LA", "P"):
        background = PILImage.new("RGB", image.size, "white")
        rgba = image.convert("RGBA")
        background.paste(rgba, mask=rgba.getchannel("A"))
        image = background
    grey = image.convert("L")
    if grey.width < TARGET_WIDTH * 0.8:  # a 150 dpi scan or a small photo: scale towards ~290 dpi A4
        factor = min(4.0, TARGET_WIDTH / max(1, grey.width))
        size = (round(grey.width * factor), round(grey.height * factor))
        grey = grey.resize(size, PILImage.Resampling.LANCZOS)
    return grey


def ocr_image(image: Image) -> OcrText:
    """Text of an image, lines in reading order, with the mean confidence of the words kept."""
    exe = tesseract_path()
    if exe is None:
        raise OcrUnavailable(INSTALL_HINT)
    page = prepare(image)
    result = parse_tsv(_tesseract(exe, page, ["-l", languages(), "--psm", PAGE_SEGMENTATION, "tsv"]))
    if result.confidence < WEAK_CONFIDENCE or result.words < WEAK_WORDS:
        turn = _orientation(exe, page)  # a page photographed sideways or upside down
        if turn:
            turned = parse_tsv(
                _tesseract(
                    exe,
                    page.rotate(-turn, expand=True),
                    ["-l", languages(), "--psm", PAGE_SEGMENTATION, "tsv"],
                )
            )
            if turned.words * turned.confidence > result.words * result.confidence:
                result = turned
    return result


def _tesseract(exe: str, image: Image, args: list[str]) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    try:
        done = subprocess.run(
            [exe, "stdin", "stdout", *args],
            input=buffer.getvalue(),
            capture_output=True,
            timeout=OCR_TIMEOUT_S,
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


def parse_tsv(tsv: str) -> OcrText:
    lines: dict[tuple[int, int, int, int], list[str]] = {}
    confidences: list[float] = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        word = cols[11].strip()
        try:
            conf = float(cols[10])
        except ValueError:
            continue
        if not word or conf < MIN_WORD_CONFIDENCE:
            continue
        key = (int(cols[1]), int(cols[2]), int(cols[3]), int(cols[4]))
        lines.setdefault(key, []).append(word)
        confidences.append(conf)
    text_lines: list[str] = []
    last_block = None
    for key in sorted(lines):
        if last_block is not None and key[1] != last_block:
            text_lines.append("")
        last_block = key[1]
        text_lines.append(" ".join(lines[key]))
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    return OcrText(text="\n".join(text_lines).strip(), confidence=mean, words=len(confidences))
