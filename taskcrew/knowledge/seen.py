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

- ZWNJ U+200C and ZWJ U+200D between two characters that take them (letters or marks of a script
  other than ASCII's: Persian, Devanagari and other Indic scripts; emoji, as in "👩‍💻"); a joiner
  next to an ASCII character, a space or another joiner is dropped (a run of joiners between
  Latin letters is a hidden code, not writing);
- a variation selector right after the character it selects a form of ("❤️", a Japanese name's
  ideographic variant); a second one after it (a run of them after one emoji hides bytes) is
  dropped;
- the Arabic, Syriac and Kaithi number and end-of-verse signs (category Cf, but drawn).

``skeleton(name)``: what ``name`` looks like, to tell whether two file names would pass for each
other (``models.source_labels``): invisible characters dropped, compatibility forms folded (NFKC:
fullwidth and mathematical letters), accents dropped, whitespace collapsed, case folded, letters of
other scripts drawn like Latin ones (``approvals.visible.LATIN_ALIKE``) and a few Latin shapes that
pass for one another ("rn" for "m", "0" for "o", "1" and "I" for "l", any dash for "-") made one.
It errs towards "alike": two names it wrongly calls alike are only cited by more of their paths.
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

# letters of other scripts drawn like a Latin letter (``approvals.visible.LATIN_ALIKE``, in its
# order), and the Latin letter each passes for
_ALIKE_FROM = (
    "АВСЕНІЈКМОРЅТХУҮҺӀԚԜЬаеорсухіјѕһԁԛԝӏүьъѵ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿαικνορυχγϲϳ"  # Greek
    "ՕօՍսոհցզ"  # Armenian
)
_ALIKE_TO = "ABCEHIJKMOPSTXYYhlQWbaeopcyxijshdqwlybbvABEZHIKMNOPTYXCJaikvopuxycjOoUunhgq"
CONFUSABLES = dict(zip(_ALIKE_FROM, _ALIKE_TO, strict=True))  # a test checks it covers LATIN_ALIKE
# Latin shapes that pass for one another (after case folding), longest first
_SHAPES = re.compile(r"rn|vv|[01i|!]")
_SHAPE_OF = {"rn": "m", "vv": "w", "0": "o", "1": "l", "i": "l", "|": "l", "!": "l"}


def unseen(char: str) -> bool:
    """Whether ``char`` draws nothing (``approvals.visible``'s rule, and the other default-ignorable
    code points); line feeds, tabs and carriage returns are not counted."""
    return char not in KEPT and (
        char in CONTROLS
        or char in INVISIBLE_EXTRA
        or char in IGNORABLE_EXTRA
        or unicodedata.category(char) in INVISIBLE_CATEGORIES
    )


def _takes_joiner(char: str) -> bool:
    """A character a ZWJ or ZWNJ may stand beside: a letter, mark or symbol (an emoji) beyond ASCII,
    or the variation selector of one ("🏳️‍🌈")."""
    return char in SELECTORS or (
        not char.isascii() and unicodedata.category(char)[0] in "LMS" and not unseen(char)
    )


def _shown(match: re.Match[str]) -> str:
    """What a reader sees of one character ``_candidates`` found, in its place in the text."""
    char, text, i = match.group(0), match.string, match.start()
    if char in LINE_BREAKS:
        return "\n"
    if char in AS_SPACE:
        return " "
    if char in JOINERS:
        return (
            char
            if 0 < i < len(text) - 1 and _takes_joiner(text[i - 1]) and _takes_joiner(text[i + 1])
            else ""
        )
    if char in SELECTORS:
        before = text[i - 1] if i else " "
        return "" if before.isspace() or unseen(before) or before in SELECTORS else char
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


def skeleton(name: str) -> str:
    """What ``name`` looks like: two names with the same skeleton would pass for each other (see the
    module's doc)."""
    text = unicodedata.normalize("NFKC", "".join(CONFUSABLES.get(c, c) for c in name))
    text = "".join(
        CONFUSABLES.get(c, c)
        for c in unicodedata.normalize("NFKD", text)
        if not unseen(c)
        and c not in JOINERS
        and c not in SELECTORS
        and unicodedata.category(c) not in ("Mn", "Me")
    )
    text = "".join("-" if c == "\u2212" or unicodedata.category(c) == "Pd" else c for c in text)
    text = " ".join(text.split()).casefold()
    return _SHAPES.sub(lambda m: _SHAPE_OF[m.group(0)], text)
