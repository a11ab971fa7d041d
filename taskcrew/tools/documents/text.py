"""Plain text: find the encoding, or say the bytes are not readable text.

Byte-order marks (UTF-8/16/32) first, then UTF-16/32 without a BOM (the pattern of zero bytes),
then UTF-8, then the common legacy encodings (Windows-1252, Shift-JIS, KOI8-R, Windows-1251,
GB18030, EUC-KR, Latin-1). A legacy decoding is accepted only when the text is plausible: letters of
one script per word, no control characters, no case flipping inside words (what KOI8-R read as
Windows-1251 looks like), no half-width katakana soup (what Windows-1252 read as Shift-JIS looks
like). Random bytes fail every candidate and are refused as "not readable text".
"""

from __future__ import annotations

import codecs
import itertools
import re
import unicodedata

from taskcrew.tools.documents.models import Unreadable, tidy

LEGACY = ("cp1252", "shift_jis", "koi8_r", "cp1251", "gb18030", "euc_kr", "latin-1")
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
PLAUSIBLE = 0.97  # share of characters that must look like text
_WORD = re.compile(r"[^\W\d_]+")


def decode_text(data: bytes, name: str) -> str:
    """The text in ``data``, or :class:`Unreadable` saying it is binary or not readable text."""
    text, _ = decode_with_encoding(data, name)
    return text


def decode_with_encoding(data: bytes, name: str) -> tuple[str, str]:
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return tidy(data[len(bom) :].decode(encoding)), encoding
            except UnicodeDecodeError:
                raise Unreadable(
                    f"{name}: starts with a {encoding} marker but is not valid {encoding}"
                ) from None
    if not data:
        return "", "utf-8"
    sample = data[:8192]
    if b"\x00" in sample:
        guess = _wide_guess(sample)
        if guess:
            try:
                text = data.decode(guess)
            except UnicodeDecodeError:
                text = ""
            if text and plausibility(text) >= PLAUSIBLE:
                return tidy(text), guess
        raise Unreadable(f"{name}: binary data, not text; it cannot be read here — ask a human")
    try:
        text = data.decode("utf-8")
        if plausibility(text) >= PLAUSIBLE:
            return tidy(text), "utf-8"
    except UnicodeDecodeError:
        pass
    best: tuple[float, str, str] | None = None
    for encoding in LEGACY:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        score = plausibility(text)
        if best is None or score > best[0] + 0.005:
            best = (score, encoding, text)
    if best is None or best[0] < PLAUSIBLE:
        raise Unreadable(
            f"{name}: not readable text (no known encoding gives plausible text; it may be binary or "
            "damaged); ask a human for a readable copy"
        )
    return tidy(best[2]), best[1]


def _wide_guess(sample: bytes) -> str | None:
    """UTF-16/32 without a BOM: ASCII-range text has zero bytes in fixed positions."""
    n = len(sample) - len(sample) % 4
    if n < 4:
        return None
    quads = [sample[i : i + 4] for i in range(0, n, 4)]
    if sum(q[1:4] == b"\x00\x00\x00" for q in quads) > 0.8 * len(quads):
        return "utf-32-le"
    if sum(q[0:3] == b"\x00\x00\x00" for q in quads) > 0.8 * len(quads):
        return "utf-32-be"
    even = sample[0:n:2]
    odd = sample[1:n:2]
    if odd.count(0) > 0.6 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.6 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return None


def _script(ch: str) -> str:
    if ch.isascii():
        return "LATIN"
    name = unicodedata.name(ch, "")
    first = name.split(" ")[0]
    if first in ("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC", "HANGUL"):
        return "CJK"
    return first or "UNKNOWN"


def plausibility(text: str) -> float:
    """Share of characters (0..1) that look like ordinary writing."""
    sample = text[:20000]
    total = sum(1 for ch in sample if not ch.isspace())
    if total == 0:
        return 1.0
    bad = 0
    for ch in sample:
        cat = unicodedata.category(ch)
        if (
            (cat == "Cc" and ch not in "\t\n\r\f\v")
            or cat in ("Co", "Cn", "Cs")
            or ch == "\ufffd"
            or "\uff61" <= ch <= "\uff9f"
            or "\u2500" <= ch <= "\u259f"
            or "\x80" <= ch <= "\x9f"
        ):
            bad += 1
    for word in _WORD.findall(sample):
        scripts = {_script(ch) for ch in word}
        if len(scripts) > 1:
            bad += len(word)
            continue
        flips = sum(1 for a, b in itertools.pairwise(word[1:]) if a.islower() and b.isupper())
        if flips and not word.isascii():  # 'GmbH' and 'iPhone' are fine; 'уВЈФ' is KOI8-R misread
            bad += len(word)
        elif scripts == {"LATIN"} and not word.isascii():
            accented = sum(1 for ch in word if not ch.isascii())
            if accented > max(2, len(word) // 2):
                bad += accented
    return max(0.0, 1 - bad / total)
