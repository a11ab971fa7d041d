"""Looking at pixels before OCR: how crooked a page is, whether it lies sideways, whether a picture
can hold text at all (a logo cannot), all from ink profiles of a small copy (numpy, milliseconds).

- :func:`skew_angle`: the rotation that makes text lines horizontal (projection profile: rows of
  a page whose lines are level alternate sharply between ink and paper).
- :func:`lies_sideways`: the columns' profile is much sharper than the rows' at any small angle.
- :func:`holds_text`: some band of ink has the rhythm of letters (many narrow runs of ink).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL.Image import Image

WORK_WIDTH = 700  # pixels across the small copy the profiles are taken on
MAX_SKEW = 12.0  # degrees searched either way
MIN_SKEW = 2.0  # smaller than this is left alone: tesseract copes, and turning smears letters
SIDEWAYS_RATIO = 1.6  # columns' profile this much sharper than rows': the text runs up or down


def ink(image: Image, width: int = WORK_WIDTH) -> Any:
    """A boolean array of a small greyscale copy: True where there is ink (Otsu's threshold)."""
    import numpy as np
    from PIL import Image as PILImage

    grey = image.convert("L")
    if grey.width > width:
        grey = grey.resize((width, max(1, round(grey.height * width / grey.width))), PILImage.Resampling.BOX)
    pixels = np.asarray(grey, dtype=np.uint8)
    return pixels < otsu(pixels)


def otsu(pixels: Any) -> int:
    import numpy as np

    hist = np.bincount(pixels.ravel(), minlength=256).astype(float)
    total = hist.sum()
    if total == 0:
        return 128
    levels = np.arange(256)
    weight = np.cumsum(hist)
    mean = np.cumsum(hist * levels)
    between = (mean[-1] * weight - mean * total) ** 2 / np.maximum(weight * (total - weight), 1e-9)
    return int(np.argmax(between[:-1])) + 1


def _sharpness(mask: Any, angle: float) -> float:
    """How sharply the rows of the mask turned by ``angle`` alternate between ink and paper."""
    import numpy as np
    from PIL import Image as PILImage

    picture = PILImage.fromarray(mask.astype(np.uint8) * 255)
    turned = np.asarray(picture.rotate(angle, resample=PILImage.Resampling.NEAREST, expand=True))
    rows = turned.sum(axis=1, dtype=np.float64)
    return float(np.sum(np.diff(rows) ** 2))


def skew_angle(image: Image) -> float:
    """Degrees to turn the page (counter-clockwise, PIL's sense) so its text lines are level."""
    import numpy as np

    mask = ink(image)
    if mask.mean() < 0.002:  # blank
        return 0.0
    coarse = max(np.arange(-MAX_SKEW, MAX_SKEW + 0.1, 1.0), key=lambda a: _sharpness(mask, float(a)))
    fine = max(np.arange(coarse - 0.9, coarse + 0.95, 0.15), key=lambda a: _sharpness(mask, float(a)))
    angle = round(float(fine), 2)
    return angle if abs(angle) >= MIN_SKEW else 0.0


def lies_sideways(image: Image) -> bool:
    """True when the text lines run up or down the picture (a page turned by 90°)."""
    mask = ink(image)
    if mask.mean() < 0.002:
        return False
    rows = max(_sharpness(mask, a) for a in (-4.0, 0.0, 4.0))
    columns = max(_sharpness(mask.T, a) for a in (-4.0, 0.0, 4.0))
    return columns > SIDEWAYS_RATIO * rows * mask.shape[0] / max(1, mask.shape[1])


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
    mask = pixels < otsu(pixels)
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
