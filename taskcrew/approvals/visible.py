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
  plain spaces): a payee padded with no-break spaces cannot push its tail off the screen.

``layout=True`` is for text whose lines and indentation are its own (a summary, a document's line,
a log): line feeds and tabs stay, and a run of whitespace is marked only when it holds something
other than spaces and tabs. ``hidden`` lists what a value hides, for the risk rules' flag.
"""

from __future__ import annotations

import re
import unicodedata

INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp", "Cs"})
# letters and marks that draw as nothing
INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f") | frozenset(
    chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0))
)
LAYOUT_KEPT = frozenset("\n\t")  # kept in text whose layout is its own
PLAIN_SPACE = frozenset(" \t")
RUN = 3  # this many whitespace characters in a row are shown as a marker


def _invisible(char: str) -> bool:
    return char in INVISIBLE_EXTRA or unicodedata.category(char) in INVISIBLE_CATEGORIES


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


def visible(text: str, *, layout: bool = False) -> str:
    """``text`` with every invisible or reordering character, and every long run of whitespace,
    shown as a marker (see the module's doc)."""
    kept = LAYOUT_KEPT if layout else frozenset()
    if text.isascii() and text.isprintable() and "   " not in text:
        return text  # the common case: nothing to mark
    out = "".join(f"⟨{_code(c)}⟩" if c not in kept and _invisible(c) else c for c in text)

    def run(match: re.Match[str]) -> str:
        found = match.group(0)
        if layout and set(found) <= PLAIN_SPACE:
            return found
        return _run_marker(found)

    return _SPACES.sub(run, out)


def hidden(text: str) -> list[str]:
    """What ``text`` hides from a reader (code points, and runs of unusual spaces), for a risk flag;
    line feeds, carriage returns and tabs (a multi-line text field sends them) are not counted."""
    found = [_code(c) for c in dict.fromkeys(text) if c not in "\n\r\t" and _invisible(c)]
    runs = [_run_marker(m.group(0)) for m in _SPACES.finditer(text) if not set(m.group(0)) <= PLAIN_SPACE]
    return found + list(dict.fromkeys(runs))


def bare(text: str) -> str:
    """``text`` without its invisible characters (what a reader sees of it, to judge its shape)."""
    return "".join(c for c in text if not _invisible(c))
