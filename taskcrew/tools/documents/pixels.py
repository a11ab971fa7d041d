"""Looking at pixels before OCR: how crooked a page is, whether it lies sideways, whether a picture
can hold text at all (a logo cannot), all from ink profiles of a small copy (numpy, milliseconds).

- :func:`skew_angle`: the rotation that makes text lines horizontal (projection profile: rows of
  a page whose lines are level alternate sharply between ink and paper).
- :func:`lies_sideways`: the columns' profile is much sharper than the rows' at any small angle.
- :func:`holds_text`: some band of ink has the rhythm of letters (many narrow runs of ink).

All of them look at the picture laid on white by its transparency first (:func:`on_white`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL.Image import Image

WORK_WIDTH = 700  # pixels across the small copy the profiles are taken on
MAX_SKEW = 12.0  # degrees searched either way
MIN_SKEW = 2.0  # smaller than this is left alone: tesseract copes, and turning smears letters
PAGE_SHAPE = 0.5  # pictures narrower than this (short side / long side) are strips, not pages
SIDEWAYS_MARGIN = 0.15  # this much more of the columns than of the rows empty: the lines run up or down


def on_white(image: Image) -> Image:
    """The picture as it looks on paper: laid on white by its transparency (an alpha channel, a PDF
    image's soft mask as pdf.py renders it, a PNG's or GIF's transparent colour); others unchanged.

    Every look at a picture (``ink``, so whether it holds text; ``ocr.prepare``) starts here: the
    colour under a transparent pixel is not what anyone sees (black text on a transparent PNG has
    black there too; Chromium prints a CSS ``filter`` as black samples whose picture is the mask).
    """
    from PIL import Image as PILImage

    if image.mode not in ("RGBA", "RGBa", "LA", "La", "PA") and "transparency" not in image.info:
        return image
    paper = PILImage.new("RGBA", image.size, (255, 255, 255, 255))
    return PILImage.alpha_composite(paper, image.convert("RGBA")).convert("RGB")


def ink(image: Image, width: int = WORK_WIDTH) -> Any:
    """A boolean array of a small greyscale copy: True where there is ink."""
    from PIL import Image as PILImage

    grey = on_white(image).convert("L")
    if grey.width > width:
        grey = grey.resize((width, max(1, round(grey.height * width / grey.width))), PILImage.Resampling.BOX)
    return ink_mask(grey)


UNEVEN_LIGHT = 25  # grey levels between the paper's brightest and darkest parts: a photo's lighting


def paper(grey: Image) -> Image:
    """The paper's brightness under each pixel: the brightest nearby pixels of a small copy, blurred."""
    from PIL import Image as PILImage
    from PIL import ImageFilter

    small = grey.resize((max(1, grey.width // 16), max(1, grey.height // 16)), PILImage.Resampling.BOX)
    return small.filter(ImageFilter.MaxFilter(3)).resize(grey.size, PILImage.Resampling.BILINEAR)


def evened(grey: Image) -> Image:
    """A page photographed in uneven light, divided by its paper's brightness: white paper all over
    (tesseract's one threshold for the whole page turns a shaded corner black otherwise)."""
    import numpy as np
    from PIL import Image as PILImage

    lit = paper(grey)
    low, high = levels(lit, 2, 98)
    if high - low < UNEVEN_LIGHT:
        return grey
    light = np.asarray(lit, dtype=np.float32)
    flat = np.asarray(grey, dtype=np.float32) * 255.0 / np.maximum(light, 1.0)
    return PILImage.fromarray(np.clip(flat, 0, 255).astype(np.uint8))


def ink_mask(grey: Image) -> Any:
    """True where a pixel is clearly darker than the paper around it (the paper's brightness taken
    from a blurred copy, so uneven light on a photo is not ink), and darker than Otsu's threshold."""
    import numpy as np

    pixels = np.asarray(grey, dtype=np.uint8)
    (darkest,) = levels(grey, 0.5)
    background = np.asarray(paper(grey), dtype=np.int16)
    local = pixels.astype(np.int16) < background - np.maximum(8, (background - darkest) // 2)
    return local & (pixels < max(otsu(grey), 1))


def levels(grey: Image, *percents: float) -> tuple[int, ...]:
    """The grey levels below which these percentages of the pixels lie (from the image's histogram,
    PIL's C code: a full page in milliseconds, where numpy's percentile sorts a float copy)."""
    import numpy as np

    counts = np.cumsum((grey if grey.mode == "L" else grey.convert("L")).histogram()[:256])
    total = counts[-1] if counts[-1] else 1
    return tuple(int(np.searchsorted(counts, p / 100 * total)) for p in percents)


def otsu(grey: Image) -> int:
    import numpy as np

    hist = np.asarray((grey if grey.mode == "L" else grey.convert("L")).histogram()[:256], dtype=float)
    total = hist.sum()
    if total == 0:
        return 128
    levels = np.arange(256)
    weight = np.cumsum(hist)
    mean = np.cumsum(hist * levels)
    between = (mean[-1] * weight - mean * total) ** 2 / np.maximum(weight * (total - weight), 1e-9)
    return int(np.argmax(between[:-1])) + 1


def _sharpness(points: tuple[Any, Any], angle: float) -> float:
    """How sharply the rows of ink points, sheared by ``angle``, alternate between ink and paper.

    A shear is a rotation for the small angles searched here, and costs one histogram of the ink
    points' rows instead of turning a picture.
    """
    import numpy as np

    ys, xs = points
    rows = np.round(ys + xs * np.tan(np.radians(angle))).astype(np.int64)
    profile = np.bincount(rows - rows.min()).astype(np.float64)
    return float(np.sum(np.diff(profile) ** 2))


def skew_angle(image: Image) -> float:
    """Degrees to turn the page (counter-clockwise, PIL's sense) so its text lines are level."""
    import numpy as np

    mask = ink(image)
    if mask.mean() < 0.002:  # blank
        return 0.0
    points: tuple[Any, Any] = tuple(np.nonzero(mask))  # type: ignore[assignment]
    coarse = max(np.arange(-MAX_SKEW, MAX_SKEW + 0.1, 0.5), key=lambda a: _sharpness(points, float(a)))
    fine = max(np.arange(coarse - 0.5, coarse + 0.55, 0.1), key=lambda a: _sharpness(points, float(a)))
    angle = -round(float(fine), 2)  # the shear that levels the lines, undone by turning the other way
    return angle if abs(angle) >= MIN_SKEW else 0.0


MARGIN = 0.04  # of the long side, kept around the ink when the blank margins are cut off
CROP_FROM = 2_500_000  # pixels: smaller pictures are read whole (their layout is quick; a crop
# changes tesseract's threshold of a faint small picture)


def inked_box(image: Image) -> tuple[int, int, int, int] | None:
    """The part of the picture that holds ink, with a small margin; None when that is (nearly) all of
    it. Tesseract's page layout costs time in proportion to the pixels, blank margins included."""
    import numpy as np

    if image.width * image.height < CROP_FROM:
        return None
    mask = ink(image)
    if mask.mean() < 0.002:
        return None
    scale = image.width / mask.shape[1]
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    pad = MARGIN * max(image.size)
    box = (
        max(0, int(cols[0] * scale - pad)),
        max(0, int(rows[0] * scale - pad)),
        min(image.width, int((cols[-1] + 1) * scale + pad)),
        min(image.height, int((rows[-1] + 1) * scale + pad)),
    )
    kept = (box[2] - box[0]) * (box[3] - box[1]) / (image.width * image.height)
    return box if kept < 0.8 else None


def lies_sideways(image: Image) -> bool:
    """True when the text lines of a page run up or down the picture (a page turned by 90°).

    Between level lines of text whole rows are paper; down a page of many lines hardly a column is
    (the gaps between letters do not line up). Only page-shaped pictures are judged: in a strip
    of one or two lines (a letterhead) the gaps between words line up too.
    """

    if min(image.size) < PAGE_SHAPE * max(image.size):
        return False
    mask = ink(image)
    if mask.mean() < 0.002:
        return False
    return _empty_share(mask.any(axis=0)) > _empty_share(mask.any(axis=1)) + SIDEWAYS_MARGIN


def _empty_share(profile: Any) -> float:
    """Share of the positions between the first and the last ink that hold no ink."""
    import numpy as np

    where = np.flatnonzero(profile)
    if where.size < 2:
        return 0.0
    inside = profile[where[0] : where[-1] + 1]
    return float(1 - inside.mean())


def letter_height(grey: Image) -> float:
    """The height of the body text's letters in pixels (about its x-height): the 90th percentile of
    the vertical runs of ink, mostly letters' upright strokes (the few taller runs are headings and
    capitals); 0 for a blank picture."""
    import numpy as np
    from PIL import Image as PILImage

    grey, scale = grey.convert("L"), 1.0
    if grey.width > 1400:  # half size is exact enough for letters this large, and four times cheaper
        grey, scale = grey.resize((grey.width // 2, grey.height // 2), PILImage.Resampling.BOX), 2.0
    mask = ink_mask(grey)
    padded = np.zeros((mask.shape[1], mask.shape[0] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask.T
    _, cols = np.nonzero(np.diff(padded, axis=1))
    runs = cols[1::2] - cols[::2]
    runs = runs[runs >= 3]
    return scale * float(np.percentile(runs, 90)) if runs.size else 0.0


def holds_text(image: Image) -> bool:
    """False for a picture that cannot hold text: blank, a solid shape, a logo mark, a photograph.

    Text shows as horizontal bands of ink crossed by many narrow runs (letters); one band with at
    least four letter-like runs is enough (a word). Checked on both orientations.
    """
    mask = ink(image, width=min(WORK_WIDTH, max(32, image.width)))
    share = float(mask.mean())
    if share < 0.001 or share > 0.6:
        return False
    return _letters(mask) or _letters(mask.T)


def _letters(mask: Any) -> bool:
    import numpy as np

    rows = mask.any(axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], rows.astype(np.int8), [0]))))
    for top, bottom in zip(edges[::2], edges[1::2], strict=True):
        height = bottom - top
        if height < 4 or height > 0.5 * mask.shape[0] + 4:
            continue
        columns = mask[top:bottom].any(axis=0).astype(np.int8)
        runs = np.flatnonzero(np.diff(np.concatenate(([0], columns, [0]))))
        widths = runs[1::2] - runs[::2]
        if int(np.sum((widths >= 1) & (widths <= 1.5 * height))) >= 4:
            return True
    return False


RULE_SHARE = 0.12  # a run of ink across this share of the width is a ruled line, not letters


def without_rules(grey: Image) -> Image:
    """The page with its long horizontal rules (table lines, underlines, box edges) painted white:
    tesseract reads a rule as a row of garbage letters, or glues it to the text above it."""
    import numpy as np
    from PIL import Image as PILImage

    pixels = np.asarray(grey, dtype=np.uint8)
    mask = ink_mask(grey)
    height, width = mask.shape
    padded = np.zeros((height, width + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    rows, cols = np.nonzero(np.diff(padded, axis=1))
    starts, ends = cols[::2], cols[1::2]
    long = (ends - starts) >= RULE_SHARE * width
    if not long.any():
        return grey
    cleaned = pixels.copy()
    for row, start, end in zip(rows[::2][long], starts[long], ends[long], strict=True):
        cleaned[max(0, row - 1) : row + 2, start:end] = 255
    return PILImage.fromarray(cleaned)
