"""What a person reading a document sees of its text, and when two file names look alike.

``seen(text)``: the text as a person reading the document sees it. Ingest passes every chunk's
text, heading path and title through it (``chunking.stream_chunks``, the one step every format goes
through), so what the store gives a planner is what a reader of the file saw. A character that
draws nothing is dropped, by the rule the approvers' screens use to show one
(``approvals.visible``: format characters, Unicode category Cf; control characters; the few letters
and marks that draw as nothing) and the rest of Unicode's default-ignorable code points:

- the tag characters U+E0000–U+E0FFF ("ASCII smuggling": drawn as nothing, read as ASCII by a
  language model's tokenizer); also those that follow a black flag in the flags of England,
  Scotland and Wales, which then show as a black flag;
- the bidi controls (embeddings, overrides, isolates, the marks LRM, RLM, ALM): the text keeps its
  logical order, the order a screen reader reads and a copy gives; a person sees the same
  characters, but a run a control reversed on screen reads in the other order;
- zero-width spaces, the word joiner, U+FEFF, the soft hyphen, invisible math operators, the
  Hangul fillers, the combining grapheme joiner, the interlinear annotation controls; the braille
  blank U+2800 reads as a space;
- a line or paragraph separator, or another control a reader sees as a line break (VT, FF, NEL),
  becomes a line feed; tabs, line feeds and carriage returns stay.

Kept, because real text needs them:

- ZWNJ U+200C and ZWJ U+200D where they shape something: between two letters or marks of a script
  that joins or conjoins (``JOINING_SCRIPTS``: Persian, Devanagari and other Indic scripts …), after
  such a script's virama, and between two emoji ("👩‍💻"); a joiner next to an ASCII character, a
  space or another joiner, or between Cyrillic, Greek or CJK letters, is dropped (a run of joiners
  between Latin letters is a hidden code, not writing);
- a variation selector right after a character it selects a form of (``_selects``: "❤️", "1️⃣",
  a Japanese name's ideographic variant); any other (after an ASCII letter: VS1–256 hide a byte
  after each character) is dropped, and so is a second one after the first (a run of them after
  one emoji hides bytes);
- the Arabic, Syriac and Kaithi number and end-of-verse signs (category Cf, but drawn).

``skeleton(name)``: what ``name`` looks like, to tell whether two file names would pass for each
other (``models.source_labels``): invisible characters dropped, compatibility forms folded (NFKC:
fullwidth and mathematical letters), accents dropped, whitespace collapsed, case folded, letters of
other scripts drawn like Latin ones (``approvals.visible.LATIN_ALIKE``), Latin letters that are a
variant of a basic one by their Unicode name (``latin_like``: the IPA "ɑ", the small capital "ᴏ",
"ł") and a few Latin shapes that pass for one another ("rn" for "m", "0" for "o", "1" and "I" for
"l", any dash for "-") made one. It errs towards "alike": two names it wrongly calls alike are only
cited by more of their paths.

A letter of a block no language writes names in (the phonetic alphabets, Latin Extended-C to G) is
marked by ``approvals.visible`` (``odd_letter``) wherever a person reads it: a citation
(``models.cited_name``) as much as an approval screen.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from taskcrew.approvals.visible import INVISIBLE_CATEGORIES, INVISIBLE_EXTRA
from taskcrew.terminal import CONTROLS

KEPT = frozenset("\n\t\r")
LINE_BREAKS = frozenset("\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # a reader sees a new line
JOINERS = frozenset("\u200c\u200d")  # ZWNJ, ZWJ
# a character that selects its base's form: the variation selectors and Mongolian's
SELECTORS = frozenset(chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0))) | frozenset(
    "\u180b\u180c\u180d\u180f"
)
# format characters that are drawn (Unicode's Prepended_Concatenation_Mark, and the end of ayah)
DRAWN_FORMAT = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
# default-ignorable code points ``approvals.visible`` does not list: the Khmer inherent vowels, the
# unassigned ones (a later Unicode may give them a meaning, still drawn as nothing)
IGNORABLE_EXTRA = frozenset("\u17b4\u17b5\u2065") | frozenset(
    chr(c) for c in (*range(0xFFF0, 0xFFF9), *range(0xE0000, 0xE1000))
)
AS_SPACE = frozenset("\u2800")  # the braille blank: a space in braille

# A joiner changes how letters join or combine only in the scripts that shape them (the first word
# of a letter's or mark's Unicode name): Arabic-script (Persian, Urdu …), Syriac, N'Ko, Mongolian,
# the Indic scripts, Sinhala, Tibetan, Myanmar, Khmer. Elsewhere ("д\u200cд") it does nothing.
JOINING_SCRIPTS = frozenset(
    {"ARABIC", "SYRIAC", "NKO", "MANDAIC", "MONGOLIAN", "DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI"}
    | {"ORIYA", "TAMIL", "TELUGU", "KANNADA", "MALAYALAM", "SINHALA", "TIBETAN", "MYANMAR", "KHMER"}
)
EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")  # text and emoji presentation
# an emoji's or a symbol's presentation is chosen by U+FE0E/U+FE0F (emoji-variation-sequences.txt:
# symbols, category So or Sm, beyond ASCII), and these: the keycap bases, and the few emoji that are
# punctuation or letters ("‼" "⁉" "ℹ" "〰" "〽")
KEYCAP_BASES = frozenset("0123456789#*")
EMOJI_OTHER = frozenset("\u203c\u2049\u2139\u3030\u303d")
# U+FE00–FE0D select a form of (StandardizedVariants.txt, approximately): a math or other symbol, a
# CJK ideograph, CJK and fullwidth punctuation, a letter of Myanmar, Phags-pa, Manichaean or
# Egyptian hieroglyphs. The slashed zero ("0\ufe00") is the one ASCII base: its selector is dropped.
VARIANT_SCRIPTS = frozenset({"CJK", "MYANMAR", "PHAGS-PA", "MANICHAEAN", "EGYPTIAN"})

# letters of other scripts drawn like a Latin letter (``approvals.visible.LATIN_ALIKE``, in its
# order), and the Latin letter each passes for
_ALIKE_FROM = (
    "АВСЕНІЈКМОРЅТХУҮҺӀԚԜЬаеорсухіјѕһԁԛԝӏүьъѵ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿαικνορυχγϲϳ"  # Greek
    "ՕօՍսոհցզ"  # Armenian
)
_ALIKE_TO = "ABCEHIJKMOPSTXYYhlQWbaeopcyxijshdqwlybbvABEZHIKMNOPTYXCJaikvopuxycjOoUunhgq"
CONFUSABLES = dict(zip(_ALIKE_FROM, _ALIKE_TO, strict=True))  # a test checks it covers LATIN_ALIKE
# Latin shapes that pass for one another (after case folding), longest first; the clicks "ǀ" "ǃ"
# (Latin letters) are drawn as "|" and "!"
_SHAPES = re.compile(r"rn|vv|[01i|!\u01c0\u01c3]")
_SHAPE_OF = {
    "rn": "m",
    "vv": "w",
    "0": "o",
    "1": "l",
    "i": "l",
    "|": "l",
    "!": "l",
    "\u01c0": "l",
    "\u01c3": "l",
}
# a Latin letter that no compatibility form makes ASCII is drawn like the basic letter its Unicode
# name ends in ("LATIN SMALL LETTER SCRIPT G", "LATIN LETTER SMALL CAPITAL O", "… O WITH STROKE"),
# or like these: letters named after Greek ones, the schwa (a turned e), the eth (Đ), and turned
# letters drawn like another one ("ɯ" a turned m, drawn like "w")
_NAMED_LIKE = {
    "ALPHA": "a", "BETA": "b", "GAMMA": "y", "IOTA": "i", "UPSILON": "u", "OMEGA": "w", "CHI": "x",
    "SCHWA": "e", "ETH": "d",
}  # fmt: skip
_TURNED_LIKE = {"M": "w", "W": "m", "H": "u"}


def unseen(char: str) -> bool:
    """Whether ``char`` draws nothing (``approvals.visible``'s rule, and the other default-ignorable
    code points); line feeds, tabs and carriage returns are not counted."""
    return char not in KEPT and (
        char in CONTROLS
        or char in INVISIBLE_EXTRA
        or char in IGNORABLE_EXTRA
        or unicodedata.category(char) in INVISIBLE_CATEGORIES
    )


def _head(char: str) -> str:
    """The first word of ``char``'s Unicode name: a letter's or a mark's script ("ARABIC")."""
    return unicodedata.name(char, "").partition(" ")[0]


def _selects(selector: str, base: str) -> bool:
    """Whether ``selector`` chooses a form of ``base`` (the character before it): U+FE0E/FE0F the
    presentation of an emoji, a symbol or a keycap base; U+FE00–FE0D a form of what
    ``VARIANT_SCRIPTS`` and the symbols have; an ideographic variation selector (U+E0100–E01EF) a CJK
    ideograph's; a Mongolian one a Mongolian letter's. Any other (after an ASCII letter, a space,
    another selector) selects nothing: it is a hidden code (256 of them hide a byte a character)."""
    if base in SELECTORS or base.isspace() or unseen(base):
        return False
    kind = unicodedata.category(base)
    symbol = not base.isascii() and kind in ("So", "Sm")
    code = ord(selector)
    if selector in EMOJI_SELECTORS:
        return symbol or base in KEYCAP_BASES or base in EMOJI_OTHER
    if 0xFE00 <= code <= 0xFE0D:
        return symbol or (
            not base.isascii()
            and (
                _head(base) in VARIANT_SCRIPTS
                or 0x3000 <= ord(base) <= 0x303F
                or 0xFF01 <= ord(base) <= 0xFF65
            )
        )
    if code >= 0xE0100:
        return kind == "Lo" and _head(base) == "CJK"
    return _head(base) == "MONGOLIAN"  # the Mongolian free variation selectors


def _kept_selector(text: str, i: int) -> bool:
    """Whether the selector at ``text[i]`` is kept (``_selects`` the character before it)."""
    return i > 0 and _selects(text[i], text[i - 1])


def _joins(text: str, i: int, j: int) -> str:
    """What ``text[j]`` is beside a joiner at ``text[i]``: "script" (a letter or mark of a script a
    joiner shapes, ``JOINING_SCRIPTS``), "emoji" (a pictograph, a skin tone, a kept emoji selector:
    "👩‍💻", "🏳️‍🌈", "👩🏽‍💻"), or "" (anything else: ASCII, a space, another joiner, Cyrillic …)."""
    if not 0 <= j < len(text):
        return ""
    char = text[j]
    if char in EMOJI_SELECTORS:
        return "emoji" if j < i and _kept_selector(text, j) else ""
    if char.isascii() or unseen(char):
        return ""
    kind = unicodedata.category(char)
    if kind in ("So", "Sk"):
        return "emoji"
    return "script" if kind[0] in "LM" and _head(char) in JOINING_SCRIPTS else ""


def _shown(match: re.Match[str]) -> str:
    """What a reader sees of one character ``_candidates`` found, in its place in the text."""
    char, text, i = match.group(0), match.string, match.start()
    if char in LINE_BREAKS:
        return "\n"
    if char in AS_SPACE:
        return " "
    if char in JOINERS:
        side = _joins(text, i, i - 1)
        if side == "script" and unicodedata.category(text[i - 1])[0] == "M":
            return char  # after a virama: a half form or a chillu, at a word's end too ("ന്\u200d")
        return char if side and side == _joins(text, i, i + 1) else ""
    if char in SELECTORS:
        return char if _kept_selector(text, i) else ""
    return ""


@functools.cache
def _candidates() -> re.Pattern[str]:
    """The characters ``seen`` may drop or change: every one that draws nothing, as this Python's
    Unicode tables say (format characters lie below U+20000 and in plane 14; built on first use)."""
    chars = [
        c
        for c in (*map(chr, range(0x20000)), *map(chr, range(0xE0000, 0xE1000)))
        if c not in DRAWN_FORMAT and (unseen(c) or c in LINE_BREAKS or c in AS_SPACE or c in SELECTORS)
    ]
    ranges: list[list[int]] = []
    for code in map(ord, chars):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    body = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )
    return re.compile(f"[{body}]")


def seen(text: str) -> str:
    """``text`` as a person reading it sees it (see the module's doc)."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing hidden (no control character, not even a line feed)
    return _candidates().sub(_shown, text)


@functools.lru_cache(maxsize=4096)
def latin_like(char: str) -> str:
    """The basic Latin letter (lower case) a Latin letter is drawn like, by its Unicode name
    (``_NAMED_LIKE``, ``_TURNED_LIKE``): "ɑ" → "a", "ᴏ" → "o", "ɡ" → "g", "ł" → "l", "ı" → "i";
    "" for any other character (an ASCII one, a letter of another script, "ß", "æ", "þ")."""
    name = unicodedata.name(char, "")
    if char.isascii() or not name.startswith("LATIN ") or " LETTER " not in name or "SHARP S" in name:
        return ""
    words = name.partition(" LETTER ")[2].partition(" WITH ")[0].split()
    last = words[-1] if words else ""
    if "TURNED" in words and last in _TURNED_LIKE:
        return _TURNED_LIKE[last]
    if len(last) == 1 and "A" <= last <= "Z":
        return last.lower()
    return _NAMED_LIKE.get(last, "")


def skeleton(name: str) -> str:
    """What ``name`` looks like: two names with the same skeleton would pass for each other (see the
    module's doc)."""
    text = unicodedata.normalize("NFKC", "".join(CONFUSABLES.get(c, c) for c in name))
    text = "".join(
        CONFUSABLES.get(c) or latin_like(c) or c
        for c in unicodedata.normalize("NFKD", text)
        if not unseen(c)
        and c not in JOINERS
        and c not in SELECTORS
        and unicodedata.category(c) not in ("Mn", "Me")
    )
    text = "".join("-" if c == "\u2212" or unicodedata.category(c) == "Pd" else c for c in text)
    text = " ".join(text.split()).casefold()
    return _SHAPES.sub(lambda m: _SHAPE_OF[m.group(0)], text)
