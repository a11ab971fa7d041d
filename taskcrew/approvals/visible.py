"""What a person is shown of a value, on every surface (the console's pages, `taskcrew approvals`,
the terminal prompt): the characters that draw nothing, or that reorder what is drawn, made visible.

A value is shown as it is, except:

- a character of Unicode category Cf (the bidi controls U+202A–U+202E and U+2066–U+2069, the marks
  U+200E/U+200F, zero-width spaces and joiners, the soft hyphen, tags …), a control character (Cc:
  a line feed or tab inside a value too), a line or paragraph separator, and a few characters that
  draw as nothing though they are letters or marks (Hangul fillers, the braille blank, the
  combining grapheme joiner, variation selectors) is shown as ``⟨U+202E⟩``: an amount sent as
  "\\u202e4,001\\u202c" reads "⟨U+202E⟩4,001⟨U+202C⟩", never "100,4";
- a run of three or more whitespace characters is shown as ``⟨160 × U+00A0⟩`` (``⟨5 spaces⟩`` for
  plain spaces): a payee padded with no-break spaces cannot push its tail off the screen;
- a letter of another script than the rest of its word (a look-alike: a Cyrillic "о" in
  "Nоrthwind", a fullwidth or mathematical letter, the Kelvin sign for "K", a Cyrillic "О" in
  "INV-2О57") is shown as ``⟨Cyrillic о U+043E⟩``: "Nоrthwind Traders" reads
  "N⟨Cyrillic о U+043E⟩rthwind Traders", never "Northwind Traders". A word is what lies between
  spaces; its script is the one most of its letters have; letters of Chinese, Japanese and Korean
  writing may mix (none of them passes for a Latin, Greek or Cyrillic letter);
- a Latin letter drawn like another ASCII character, beside another letter or digit: one of a block
  no language writes names in (``odd_letter``: "Nᴏrthwind"), or one of ``LATIN_LOOKALIKE`` ("ǀ"
  U+01C0 for "I", "Ɩ", "ſ" for "f"): "ǀNV-2057" reads "⟨Latin letter dental click ǀ U+01C0⟩NV-2057".
  Letters names are written with ("Müller", "Łódź", "Ærø", "Sabancı") are left as they are;
- a word written in another script whose every letter is drawn like a Latin one (``LATIN_ALIKE``:
  Cyrillic "АСМЕ", Greek "ΤΟΚΥΟ", fullwidth or mathematical letters), in a text that holds Latin
  letters too: "АСМЕ Corp" reads "⟨Cyrillic А U+0410⟩⟨Cyrillic С U+0421⟩… Corp". A text with no
  Latin letter is its own script's ("ООО «Ромашка»", "Ελληνικά Α.Ε." are left as they are), and
  a word with one letter no Latin letter looks like ("Ромашка", "ΑΒΓ") is not mistaken for Latin;
- a digit other than 0-9 in a word with digits 0-9: "৪00.00" (a Bengali 4, drawn like an 8)
  reads "⟨Bengali ৪ U+09EA⟩00.00", "INV-2০57" (a Bengali 0) reads "INV-2⟨Bengali ০ U+09E6⟩57".
- a symbol that has no place in an identifier or a name (``_stray_symbols``: an emoji or other
  pictograph, a dingbat, an arrow, a math sign such as the minus "−" drawn like a hyphen, a
  circled or squared letter or digit, a superscript digit, a private-use or unassigned code
  point) inside a word that holds a letter or a digit, or anywhere when it is drawn like a letter
  or digit ("🄰", "①"): "INV-🔥2057" reads "INV-⟨Symbol 🔥 U+1F525⟩2057". Signs that do belong in
  names and references (``NAME_SIGNS``: ™ ® © № ℅ °, "㈱" …), currency signs and punctuation are
  left as they are, and so is a pictograph standing alone between spaces ("Thanks 🙂"); in text
  whose layout is its own (``layout=True``: prose, not a value) and in a free-text value
  (``prose=True``: a description, a memo, ``rules.prose_field``: "250 m²", "M8×40", "−20 °C")
  symbols are not marked, nor a letter of another script that passes for no other ("10 kΩ",
  "50 μm": ``_passes``). Everything else above is marked in every value.

``layout=True`` is for text whose lines and indentation are its own (a summary, a document's line,
a log): line feeds and tabs stay, and a run of whitespace is marked only when it holds something
other than spaces and tabs. ``hidden`` lists what a value hides, for the risk rules' flag.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import ValidatorFunctionWrapHandler, WrapValidator

from taskcrew.terminal import CONTROLS, LAYOUT

# shown as a marker: the controls every surface treats (``terminal.CONTROLS``: Cc, the bidi controls,
# the line and paragraph separators), every other format character (Cf: zero-width spaces and
# joiners, the soft hyphen, U+FEFF, tags …), a lone surrogate, and these letters and marks that draw
# as nothing
INVISIBLE_CATEGORIES = frozenset({"Cf", "Cs"})
INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f") | frozenset(
    chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0))
)
LAYOUT_KEPT = LAYOUT  # kept in text whose layout is its own
PLAIN_SPACE = frozenset(" \t")
RUN = 3  # this many whitespace characters in a row are shown as a marker
# the first word of a letter's Unicode name is its script ("CYRILLIC SMALL LETTER O"), except for
# these, which are no script (º in "Nº", µ, modifier letters) or which Japanese mixes in one word
NO_SCRIPT = frozenset({"MODIFIER", "FEMININE", "MASCULINE", "MICRO"})
MIXING = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "HALFWIDTH", "IDEOGRAPHIC"})
# letters of other scripts drawn like a Latin letter in common fonts (after Unicode's confusables,
# UTS #39): Cyrillic, Greek, Armenian; a letter whose compatibility form is a Latin letter (a
# fullwidth or mathematical one, the Kelvin sign) is one too (``_latin_alike``)
LATIN_ALIKE = frozenset("АВСЕНІЈКМОРЅТХУҮҺӀԚԜЬаеорсухіјѕһԁԛԝӏүьъѵ")  # Cyrillic
LATIN_ALIKE |= frozenset("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿαικνορυχγϲϳ") | frozenset("ՕօՍսոհցզ")  # Greek, Armenian
# symbols that have no place in an identifier (an invoice number, an IBAN) or a name: other symbols
# (emoji, pictographs, dingbats, box drawing, circled letters), math symbols (arrows, "−" drawn like
# a hyphen, "∕" like a slash), modifier symbols (spacing accents, emoji skin tones), numbers that are
# not digits ("①", "²"), private-use and unassigned code points (a font's icon, or nothing at all);
# ASCII ones (+ < = > | ~ ^ `) are ordinary, and so are the signs a company name or a reference
# uses. Currency signs (Sc) and punctuation are not symbols here.
# A dash other than the ASCII hyphen ("–" "‐" "—") inside an identifier is one too: drawn like "-".
SYMBOL_CATEGORIES = frozenset({"So", "Sm", "Sk", "No", "Co", "Cn", "Pd"})
# ("〒" a Japanese postcode, "㈱" "㍿" "㈜" a Japanese or Korean company form; U+FFFD: what a
# reader puts where a character could not be read, already shown as such)
NAME_SIGNS = frozenset("™®©℠℗°№℅〒㈱㈲㍿㈜\ufffd")
SYMBOL_WORDS = {"Co": "Private-use", "Cn": "Unassigned"}  # else "Symbol"


# the blocks of letters no language writes names in: the phonetic alphabets (IPA Extensions, the
# Phonetic Extensions and their Supplement) and Latin Extended-C to G (medievalist, phonetic and
# Uralic letters, small capitals). Except the IPA letters that African and American orthographies
# use (the African Reference Alphabet's ɓ ɔ ɖ ɗ ə ɛ ɠ ɣ ɨ ɩ ɲ ʃ ʊ ʋ ʒ ʉ, the glottal stop ʔ) and the
# saltillo "ꞌ" (Mexican languages).
ODD_BLOCKS = (
    (0x0250, 0x02AF),  # IPA Extensions
    (0x1D00, 0x1DBF),  # Phonetic Extensions, Phonetic Extensions Supplement
    (0x2C60, 0x2C7F),  # Latin Extended-C
    (0xA720, 0xA7FF),  # Latin Extended-D
    (0xAB30, 0xAB6F),  # Latin Extended-E
    (0x10780, 0x107BF),  # Latin Extended-F
    (0x1DF00, 0x1DFFF),  # Latin Extended-G
)
ORTHOGRAPHIC = frozenset("ɓɔɖɗəɛɠɣɨɩɲʃʊʋʒʉʔ\ua78b\ua78c")
# Latin letters drawn like another ASCII letter, digit or sign (after UTS #39's confusables) that no
# living alphabet writes beside plain letters, outside the blocks above: the clicks ǀ ǁ ǃ (drawn "l"
# "ll" "!"), the iotas Ɩ ɩ ("l" "i"), the dotless j ȷ, the l with bar ƚ, the long s ſ ("f"), the kra
# ĸ ("k"), the tone letters Ƅ ƅ Ƨ ƨ Ƽ ƽ ("b" "2" "5"), ezh and yogh Ʒ ʒ Ȝ ȝ ("3"), ou Ȣ ȣ ("8"), the
# digraphs ȸ ȹ ("db" "qp"), yr Ʀ ("R"), wynn Ƿ ƿ ("P" "p"), the turned M Ɯ ("W"). None decomposes to
# the ASCII character it is drawn like. Not the letters living alphabets write names with, though
# they decompose to no ASCII letter either (ß æ ø ł đ ħ ŋ œ þ ð, and the dotless ı of Turkish and
# Azerbaijani: "Sabancı"), nor one with a diacritic (é ü ñ decompose to their ASCII letter).
# the click letters of Khoekhoe and other Khoisan orthographies left as written opening a word; not the
# dental click ǀ, drawn exactly as "I" and "l" ("ǀnitech" reads Initech): it is marked wherever it stands
CLICKS = frozenset("ǁǂǃ")
LATIN_LOOKALIKE = frozenset("ǀǁǃƖɩȷƚſĸƄƅƧƨƼƽƷʒȜȝȢȣȸȹƦǷƿƜ")


def odd_letter(char: str) -> bool:
    """Whether ``char`` is a letter of a block no language writes names in (``ODD_BLOCKS``: the
    phonetic alphabets' "ɑ", small capitals "ᴏ" "ᴄ" "ᴀ", Latin Extended-C to G), but the few that
    orthographies use (``ORTHOGRAPHIC``). German, French, Polish, Czech, Romanian, Turkish,
    Vietnamese, Icelandic letters (Latin-1, Latin Extended-A, -B and Additional) are not odd."""
    code = ord(char)
    return (
        unicodedata.category(char)[0] == "L"
        and char not in ORTHOGRAPHIC
        and any(low <= code <= high for low, high in ODD_BLOCKS)
    )


def _invisible(char: str) -> bool:
    return char in CONTROLS or char in INVISIBLE_EXTRA or unicodedata.category(char) in INVISIBLE_CATEGORIES


_MARKS = frozenset({"Mn", "Me"})


def _stray_marks(text: str) -> set[int]:
    """Indexes of the combining marks ``text`` draws over a Latin letter, a digit or a sign that no
    letter of any alphabet takes: those NFC does not compose ("INV-1\u0301" reads "INV-1´", a
    U+0336 overlay strikes a payee's name through, stacked marks bury a value). An accent written
    as a separate mark ("Mu\u0308ller") composes, and a script's own marks (Devanagari vowel signs,
    Arabic or Hebrew points) sit on its own letters: neither is marked."""
    found: set[int] = set()
    i = 0
    while i < len(text):
        end = i + 1
        while end < len(text) and unicodedata.category(text[end]) in _MARKS:
            end += 1
        base = text[i]
        if end > i + 1 and (base.isascii() or _script(base) == "LATIN"):
            composed = unicodedata.normalize("NFC", text[i:end])
            if any(unicodedata.category(c) in _MARKS for c in composed):
                found |= set(range(i + 1, end))
        i = end
    return found


def _code(char: str) -> str:
    return f"U+{ord(char):04X}"


def _run_marker(run: str) -> str:
    kinds = list(dict.fromkeys(run))
    if kinds == [" "]:
        return f"⟨{len(run)} spaces⟩"
    if len(kinds) == 1:
        return f"⟨{len(run)} × {_code(kinds[0])}⟩"
    return f"⟨{len(run)} spaces: {', '.join(_code(k) for k in kinds)}⟩"


_SPACES = re.compile(rf"[^\S\n]{{{RUN},}}")  # horizontal whitespace (a line feed ends a run)
_WORD = re.compile(r"\S+")


def _script(char: str) -> str | None:
    """A letter's script (the first word of its Unicode name), or a digit's other than 0-9 ("BENGALI"
    for "৪"); None: not a letter, a digit 0-9, or no script."""
    kind = unicodedata.category(char)
    if not kind.startswith("L") and (kind != "Nd" or char.isascii()):
        return None
    head = unicodedata.name(char, "").split(" ")[0]
    return None if not head or head in NO_SCRIPT or head in MIXING else head


def _latin_alike(char: str) -> bool:
    return char in LATIN_ALIKE or unicodedata.normalize("NFKC", char).isascii()


def _latin(text: str) -> bool:
    """Whether ``text`` holds a Latin letter (the context a look-alike word passes in)."""
    return any(_script(c) == "LATIN" for c in text)


def _foreign(word: str, latin: bool, prose: bool = False) -> list[tuple[int, str]]:
    """(index, script) of each letter of ``word`` shown as a look-alike: in a text with Latin
    letters (``latin``), every letter of another script when all of them are drawn like Latin
    letters ("АСМЕ" in "АСМЕ Corp"); else each letter whose script is not the word's own (the
    script most of its letters have; on a tie, the first letter's). In free text (``prose``) only
    those that pass for another (``_passes``): a unit's "kΩ" or "μm" is honest there."""
    scripts = [(i, s) for i, c in enumerate(word) if (s := _script(c)) is not None]
    alike = [(i, s) for i, s in scripts if s != "LATIN"]
    if latin and alike and all(_latin_alike(word[i]) for i, _ in alike):
        found = alike
    else:
        names = list(dict.fromkeys(s for _, s in scripts))
        own = max(names, key=lambda n: sum(1 for _, s in scripts if s == n)) if names else None
        found = [(i, s) for i, s in scripts if s != own]  # own: the first of the most frequent
    # a Latin letter of a block no language writes names in, drawn like a plain one: "Nᴏrthwind"
    found += [(i, s) for i, s in scripts if s == "LATIN" and odd_letter(word[i]) and (i, s) not in found]
    # a Latin letter drawn like another ASCII one: "ǀNV-2057", "Gǀobex" (``_lookalike``)
    found += [(i, s) for i, s in scripts if s == "LATIN" and _lookalike(word, i) and (i, s) not in found]
    if any("0" <= c <= "9" for c in word):  # a digit of another system beside 0-9: "৪00.00"
        found += [(i, s) for i, s in scripts if unicodedata.category(word[i]) == "Nd" and (i, s) not in found]
    return [(i, s) for i, s in found if _passes(word[i], s)] if prose else found


def _passes(char: str, script: str) -> bool:
    """Whether a letter or digit ``_foreign`` found passes for another: a digit other than 0-9, a
    letter of another script drawn like a Latin one (``_latin_alike``: Cyrillic "о", fullwidth "Ｐ"),
    a Latin letter drawn like another ASCII character (``odd_letter``, ``LATIN_LOOKALIKE``). Not a
    Greek "Ω" beside a Latin "k", nor a Latin "m" beside a Greek "μ": neither is drawn like the other."""
    if unicodedata.category(char) == "Nd":
        return True
    if script == "LATIN":
        return odd_letter(char) or char in LATIN_LOOKALIKE
    return _latin_alike(char)


def _lookalike(word: str, i: int) -> bool:
    """Whether ``word[i]`` is a look-alike (``LATIN_LOOKALIKE``) in a word that holds another
    letter or digit: "ǀ" in "ǀNV-2057" passes for "I", alone it passes for nothing. The iota "ɩ"
    and the ezh "ʒ" that African alphabets write are left as they are beside that alphabet's other
    letters (``ORTHOGRAPHIC``: "Kabɩyɛ"), as in ``odd_letter``, and so is a click letter opening a
    word of letters (``CLICKS``: Namibia's "ǁKaras", "ǃNara"); in a word with digits, or inside a
    word ("Gǀobex"), it is marked, and the dental click "ǀ" always ("ǀnitech")."""
    char = word[i]
    if char not in LATIN_LOOKALIKE:
        return False
    others = [c for j, c in enumerate(word) if j != i and c.isalnum()]
    if char in CLICKS and i == 0 and not any(c.isdigit() for c in others):
        return False  # a click opening a word of letters, as Khoekhoe writes them: "ǁKaras", "ǃNara"
    if char in ORTHOGRAPHIC and any(c in ORTHOGRAPHIC and c not in LATIN_LOOKALIKE for c in others):
        return False
    return bool(others)


# what an odd letter (``odd_letter``) is, by its block, when its Unicode name says no more
ODD_KINDS = ((0x0250, 0x02AF, "IPA letter"), (0x1D00, 0x1DBF, "phonetic letter"))
_SMALL_CAPITAL = re.compile(r"SMALL CAPITAL(?: LETTER)? (\S)(.*)")


def odd_words(char: str) -> str:
    """What an odd letter is, in a few words from its Unicode name: "small capital O" (U+1D0F, LATIN
    LETTER SMALL CAPITAL O), "IPA letter ɑ" (U+0251, LATIN SMALL LETTER ALPHA), "rare Latin letter
    ⱥ" (Latin Extended-C to G): why it is marked, where its script alone (Latin) would not say."""
    name = unicodedata.name(char, "")
    if capital := _SMALL_CAPITAL.search(name):
        return f"small capital {capital.group(1)}{capital.group(2).lower()}"
    if char in LATIN_LOOKALIKE:  # "Latin letter dental click ǀ", "Latin capital letter iota Ɩ"
        return f"Latin {name.lower().removeprefix('latin ')} {char}"
    kind = next((k for low, high, k in ODD_KINDS if low <= ord(char) <= high), "rare Latin letter")
    return f"{kind} {char}"


def _look_alike(char: str, script: str) -> str:
    if script == "LATIN" and (odd_letter(char) or char in LATIN_LOOKALIKE):
        return f"⟨{odd_words(char)} {_code(char)}⟩"
    return f"⟨{script.title()} {char} {_code(char)}⟩"


def _symbol(char: str) -> bool:
    return (
        not char.isascii()
        and char not in NAME_SIGNS
        and unicodedata.category(char) in SYMBOL_CATEGORIES
        and not _invisible(char)  # a variation selector or a tag is shown as a hidden character
    )


def _stray_symbols(word: str) -> list[int]:
    """Indexes of the symbols of ``word`` (what lies between spaces) that have no place in it: every
    symbol when the word holds a letter or a digit (an identifier, a name: "INV-🔥2057"), and a
    symbol drawn like a letter or a digit wherever it stands ("🄰🄲🄼🄴", "①")."""
    symbols = [i for i, c in enumerate(word) if _symbol(c)]
    if not symbols:
        return []
    if any(c.isalnum() for i, c in enumerate(word) if i not in symbols):
        return symbols
    return [i for i in symbols if any(c.isalnum() for c in unicodedata.normalize("NFKC", word[i]))]


def _symbol_marker(char: str) -> str:
    kind = SYMBOL_WORDS.get(unicodedata.category(char))
    return f"⟨{kind} {_code(char)}⟩" if kind else f"⟨Symbol {char} {_code(char)}⟩"


def _mark_scripts(text: str, symbols_too: bool = True, latin: bool | None = None, prose: bool = False) -> str:
    latin = _latin(text) if latin is None else latin

    def word(match: re.Match[str]) -> str:
        found = dict(_foreign(match.group(0), latin, prose))
        symbols = set(_stray_symbols(match.group(0))) if symbols_too and not prose else set()
        if not found and not symbols:
            return match.group(0)
        return "".join(
            _look_alike(c, found[i]) if i in found else _symbol_marker(c) if i in symbols else c
            for i, c in enumerate(match.group(0))
        )

    return _WORD.sub(word, text)


def visible(text: str, *, layout: bool = False, prose: bool = False) -> str:
    """``text`` with every invisible or reordering character, every long run of whitespace, every
    look-alike letter and every symbol out of place shown as a marker (see the module's doc).
    ``prose``: a free-text value (a description, a memo), whose symbols are not marked (``hidden``)."""
    return _visible(text, layout=layout, prose=prose)


# what may be a marker this module wrote ("⟨Cyrillic о U+043E⟩", "⟨U+200B⟩", "⟨5 × U+00A0⟩"): shown as it
# is when it hides nothing (``_a_marker``), so showing a text twice marks nothing twice
_MARKER_LIKE = re.compile(r"(⟨[^⟨⟩\n]{1,80}⟩)")
_CODE = re.compile(r"U\+([0-9A-F]{4,6})")


def _a_marker(part: str) -> bool:
    """Whether ``part`` (``⟨…⟩``) shows nothing but printable ASCII, "×", and the very letters,
    digits or symbols the codes it names are: such a text hides nothing (a look-alike in it is the
    one it names; nothing in it draws nothing or reorders what follows), whoever wrote it."""
    named = {
        c
        for code in _CODE.findall(part)
        if int(code, 16) <= 0x10FFFF
        and unicodedata.category(c := chr(int(code, 16)))[0] in "LNS"
        and not _invisible(c)
    }
    return all(" " <= c <= "~" or c in "⟨⟩×" or c in named for c in part)


def _visible(text: str, *, layout: bool = False, latin: bool | None = None, prose: bool = False) -> str:
    """``visible``; ``latin``: whether the text this one is part of holds Latin letters (a word
    quoted out of a value is judged as in the value: "АСМЕ" of "АСМЕ Corp"). A marker already in
    the text (shown once before, by this function) is left as it is."""
    if text.isascii() and text.isprintable() and "   " not in text:
        return text  # the common case: nothing to mark
    parts = _MARKER_LIKE.split(text)
    if len(parts) > 1:
        latin = _latin(text) if latin is None else latin
        out, plain = [], ""
        for i, part in enumerate(parts):
            if i % 2 and _a_marker(part):
                out += [_shown_plain(plain, layout, latin, prose) if plain else "", part]
                plain = ""
            else:
                plain += part
        return "".join([*out, _shown_plain(plain, layout, latin, prose) if plain else ""])
    return _shown_plain(text, layout, latin, prose)


def _shown_plain(text: str, layout: bool, latin: bool | None, prose: bool = False) -> str:
    """``_visible`` of text that holds no marker."""
    kept = LAYOUT_KEPT if layout else frozenset()
    marked = _mark_scripts(text, symbols_too=not layout, latin=latin, prose=prose)
    stray = _stray_marks(marked)
    out = "".join(
        f"⟨{_code(c)}⟩" if (c not in kept and _invisible(c)) or i in stray else c
        for i, c in enumerate(marked)
    )

    def run(match: re.Match[str]) -> str:
        found = match.group(0)
        if layout and set(found) <= PLAIN_SPACE:
            return found
        return _run_marker(found)

    return _SPACES.sub(run, out)


def hidden(text: str, *, prose: bool = False) -> list[Shown]:
    """What ``text`` hides from a reader (code points, and runs of unusual spaces), for a risk flag;
    line feeds, carriage returns and tabs (a multi-line text field sends them) are not counted.
    Each item is already shown (``Shown``): its marker, and the word it is in as ``visible`` shows
    it, without the punctuation around it ("3 (Nᴏrthwind" quotes “N⟨small capital O U+1D0F⟩rthwind”).

    ``prose``: a free-text value (a description, notes, a memo, a line's text: the caller decides by
    the field, ``rules.prose_field``), where "250 m²", "210×297 mm", "−20 °C" and "½″" are honest:
    its symbols are not counted (``_stray_symbols`` is for identifiers and names: an invoice number,
    an amount, an IBAN, a payee). Its invisible and reordering characters, runs of unusual spaces,
    stray combining marks, and letters and digits that pass for others (``_passes``) are."""
    stray = {text[i] for i in _stray_marks(text)}
    found = [_code(c) for c in dict.fromkeys(text) if c not in "\n\r\t" and (_invisible(c) or c in stray)]
    runs = [_run_marker(m.group(0)) for m in _SPACES.finditer(text) if not set(m.group(0)) <= PLAIN_SPACE]
    latin = _latin(text)

    def word(w: str) -> str:  # the word quoted, cut as every quoted value is (``cut_shown``)
        return cut_shown(_visible(_unpunctuated(bare(w)), latin=latin, prose=prose))

    alike = [
        f"{_look_alike(w.group(0)[i], script)} in “{word(w.group(0))}”"
        for w in _WORD.finditer(text)
        for i, script in _foreign(w.group(0), latin, prose)
    ]
    symbols = [
        f"{_symbol_marker(w.group(0)[i])} in “{word(w.group(0))}”"
        for w in ([] if prose else _WORD.finditer(text))
        for i in _stray_symbols(w.group(0))
    ]
    every = found + list(dict.fromkeys(runs)) + list(dict.fromkeys(alike)) + list(dict.fromkeys(symbols))
    return [Shown(item) for item in every]


def _unpunctuated(word: str) -> str:
    """``word`` without the punctuation around it ("(Nᴏrthwind," -> "Nᴏrthwind"); all of it when
    it is nothing but punctuation."""
    start, end = 0, len(word)
    while start < end and unicodedata.category(word[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(word[end - 1]).startswith("P"):
        end -= 1
    return word[start:end] or word


class Shown(str):
    """Text already as a person is to read it: ``visible``'s output and the words code put around
    it (a risk flag's message that quotes a value's words and markers: ``hidden``). A page shows it
    as it is, not marked again (``console.web._finalize``): a marker's own letter ("⟨Cyrillic о
    U+043E⟩") is not marked inside the marker. Only code makes one: text read from a page, a model
    or a file is a plain ``str``, whatever brackets it writes, and is marked wherever it is shown.
    Anything done to it (``+``, ``format``, slicing) gives a plain ``str`` again: wrap only what is
    built from ``Shown`` and ``visible`` pieces (``shown``)."""

    __slots__ = ()


def shown(template: str, *parts: str) -> Shown:
    """``template`` (code's own words) filled with ``parts`` by ``str.format``, each shown: a
    ``Shown`` one as it is, any other through ``visible``."""
    return Shown(template.format(*(p if isinstance(p, Shown) else visible(str(p)) for p in parts)))


VALUE_LIMIT = 200  # characters of a value any surface shows before it says how many more there are
IN_FIELDS = "see every field sent"  # where a value cut in a flag or a console cell is shown whole
QUOTE_LIMIT = 3 * VALUE_LIMIT  # characters of a list of values a message quotes (``quoted``)


def cut_shown(text: str, full_values: str | None = IN_FIELDS, limit: int = VALUE_LIMIT) -> str:
    """Text already shown (``visible``'s output, a ``Shown`` message) cut after ``limit``
    characters, never inside a marker, saying how many more it has and where they are all shown
    (``full_values``; None: never cut). The one cut of every surface: a value on the terminal
    (``human.describe_request``), each value a risk flag quotes, each cell of the console's
    worklist and "What you approve". A ``Shown`` text stays one."""
    if full_values is None or len(text) <= limit:
        return text
    at = limit
    opened = text.rfind("⟨", max(0, limit - 81), limit)  # a marker is at most 82 characters long
    if opened > 0 and "⟩" not in text[opened:limit]:
        at = opened  # a marker is shown whole or not at all
    cut = f"{text[:at]}… ({len(text) - at} more characters: {full_values})"
    return Shown(cut) if isinstance(text, Shown) else cut


def cut_value(text: str, full_values: str | None = IN_FIELDS, *, within: str | None = None) -> str:
    """``text`` as ``visible`` shows it, cut by ``cut_shown``; ``full_values`` None: never cut.
    ``within``: the text it is quoted with (the other values of a list), whose Latin letters make a
    word of look-alikes stand out as in ``visible`` of the whole ("АСМЕ" beside "ACME")."""
    return cut_shown(_visible(text, latin=None if within is None else _latin(within)), full_values)


def quoted(pairs: Iterable[tuple[str, str]]) -> str:
    """Fields a message quotes, "name = value; name = value": each pair cut (``cut_value``), and the
    list too after ``QUOTE_LIMIT`` characters (a field sent a hundred times is no hundred lines)."""
    said = [f"{name} = {value}" for name, value in pairs]
    whole = "; ".join(said)
    return cut_shown("; ".join(cut_value(pair, within=whole) for pair in said), limit=QUOTE_LIMIT)


def _keep_shown(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return value if isinstance(value, Shown) else handler(value)


# a model's text field that keeps a ``Shown`` value as such (pydantic makes any ``str`` subclass a
# plain ``str``); stored and read back, it is a plain ``str`` again, marked where it is shown
ShownText = Annotated[str, WrapValidator(_keep_shown)]


def bare(text: str) -> str:
    """``text`` without its invisible characters (what a reader sees of it, to judge its shape)."""
    return "".join(c for c in text if not _invisible(c))
