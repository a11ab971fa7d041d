"""Image files (PNG, JPG, TIFF, …): every frame is a page read by OCR."""

from __future__ import annotations

import io

from taskcrew.tools.documents import limits, pixels
from taskcrew.tools.documents.limits import MAX_OCR_PAGES
from taskcrew.tools.documents.models import PageText, Unreadable
from taskcrew.tools.documents.ocr import OcrUnavailable, ocr_image

MIN_SIDE = 32  # pixels; smaller is an icon, not a document
MAX_PIXELS = 60_000_000  # a 600 dpi A3 page; bigger is a decompression bomb, not a document


def read_image_pages(data: bytes, name: str) -> list[PageText]:
    from PIL import Image, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        image = Image.open(io.BytesIO(data))
        frames = getattr(image, "n_frames", 1)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as exc:
        raise Unreadable(f"{name}: not a readable image ({type(exc).__name__}); ask a human") from exc
    pages: list[PageText] = []
    for index in range(min(frames, MAX_OCR_PAGES)):
        if pages and limits.past(limits.OCR_SHARE):
            pages[-1].notes.append(f"frames {index + 1}-{frames} not read: the time for OCR is used up")
            break
        try:
            image.seek(index)
            image.load()
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise Unreadable(f"{name}: damaged image ({type(exc).__name__}); ask for a new copy") from exc
        if min(image.size) < MIN_SIDE:
            small = f"a small picture ({image.width}×{image.height} px: a logo or icon); no text read"
            pages.append(PageText(number=index + 1, text="", notes=[small]))
            continue
        if not pixels.holds_text(image):
            none = (
                "a picture with no lines of text in it (a logo, a photograph or a blank page); no text read"
            )
            pages.append(PageText(number=index + 1, text="", notes=[none]))
            continue
        try:
            result = ocr_image(image)
        except OcrUnavailable as exc:
            raise OcrUnavailable(f"{name}: an image; {exc}") from None
        page = PageText(
            number=index + 1, text="", ocr=True, ocr_confidence=result.confidence, ocr_values=result.values
        )
        if result.text:
            page.text = result.marked("the whole image")
        else:
            page.notes.append("OCR found no text in this image; do not guess its contents; ask a human")
        pages.append(page)
    if frames > MAX_OCR_PAGES:
        pages[-1].notes.append(f"only the first {MAX_OCR_PAGES} of {frames} frames were read")
    if not any(p.text for p in pages):
        why = "; ".join(dict.fromkeys(n for p in pages for n in p.notes)) or "OCR found no text"
        raise Unreadable(f"{name}: no text OCR could read ({why}); do not guess its contents; ask a human")
    return pages
