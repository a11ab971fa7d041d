"""What the terminal is shown of text taskcrew did not write: the one way every CLI surface prints
a value that came from a model, a page, a document, a submitter or the job database.

Such a value may hold control characters (ESC sequences that clear the screen, move the cursor or
colour a forged line; a carriage return that overwrites a line's start), invisible or reordering
characters, and — on a rich console — markup (``[green]``, ``[/]``) or emoji codes
(``:white_check_mark:``). Printed raw, it can draw anything over taskcrew's own words.

- ``plain(value)``: the value as a person is shown it everywhere else (``approvals.visible``:
  control, invisible and reordering characters, long runs of whitespace, look-alike letters made
  visible), for ``typer.echo``. ``layout=True`` keeps line feeds and tabs (an answer, a report);
  ``flat=True`` reads line breaks and runs of whitespace as one space (a line of live progress);
  ``indent`` starts each further line of a ``layout`` value with it, so that no line of the value
  can pass for a line taskcrew printed on its own.
- ``markup(value)``: the same, with rich markup escaped, to put inside taskcrew's own markup.
- ``say(console, text)``: print taskcrew's own markup with such values in it: no emoji codes and no
  highlighting (neither of which ``escape`` stops).
- ``document(text)``: a Markdown document (a run's report.md) to print, its values made visible
  (character references too) and its links shown with their addresses.
- ``help_text(value)``: a value as Typer help (a recipe's summary, a parameter's help): drawn as
  written, neither markup nor emoji codes read (``help_markup``: the same for shell completion).
- ``CONTROLS``: the characters no surface may pass on as they are (below); each surface says what it
  does with one: ``inputs.check_plain`` refuses it in a task, report.md (``crew.report``) writes �,
  ``approvals.visible`` (so ``plain``) shows ``⟨U+202E⟩``.

Taskcrew's own words keep their styles: only the values pass through here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.markup import escape

# The characters that make a terminal, or whatever draws the text, do something other than draw a
# character: every surface that shows text taskcrew did not write treats them (``inputs``,
# ``crew.report``, ``approvals.visible``, and through it ``plain``).
# - The control characters (Unicode category Cc): C0 U+0000–U+001F (ESC starts every control
#   sequence: clear the screen, move the cursor, an OSC 8 hyperlink; CR rewrites a line's start; BS
#   erases; VT and FF move down), DEL U+007F, and C1 U+0080–U+009F (U+009B is an 8-bit CSI, U+009D an
#   OSC on a terminal that reads 8-bit controls; U+0085 NEL is a line break). Line feed and tab are
#   among them: a surface whose text keeps its layout keeps ``LAYOUT`` and nothing else.
# - The bidi controls (Unicode's Bidi_Control property, PropList.txt): the marks ALM U+061C, LRM
#   U+200E and RLM U+200F, the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069.
#   They reorder what is drawn around them: "\u202e4,001" reads "100,4".
# - LINE SEPARATOR U+2028 and PARAGRAPH SEPARATOR U+2029: a line break to much that reads text (a
#   browser, str.splitlines, a paragraph end that ends every bidi embedding) but not to taskcrew's
#   own line handling, so a value could start a line of its own that passes for taskcrew's.
# Not here: U+FEFF, the zero-width spaces and joiners, the soft hyphen, tags. They hide themselves
# but move and reorder nothing, and a task pasted from a file may well hold one; the surfaces that
# show text (``approvals.visible``) still show every invisible character.
BIDI_CONTROLS = (
    frozenset("\u061c\u200e\u200f")
    | frozenset(map(chr, range(0x202A, 0x202F)))
    | frozenset(map(chr, range(0x2066, 0x206A)))
)
SEPARATORS = frozenset("\u2028\u2029")
CONTROLS = frozenset(map(chr, (*range(0x20), *range(0x7F, 0xA0)))) | BIDI_CONTROLS | SEPARATORS
LAYOUT = frozenset("\n\t")  # the controls of a text whose lines and indentation are its own

# an & that starts a character reference (&#x202E;, &amp;): Markdown decodes it after any filter saw
# the text, so report.md (crew/report.py) and its printing (``document``) keep it as text
CHARACTER_REFERENCE = re.compile(r"&(?=#?[0-9A-Za-z]+;)")

if TYPE_CHECKING:
    from rich.console import Console
    from rich.markdown import Markdown


def plain(value: object, *, layout: bool = False, flat: bool = False, indent: str = "") -> str:
    """``value`` as text a terminal only draws (see the module's doc)."""
    from taskcrew.approvals.visible import visible  # here: visible reads CONTROLS from this module

    text = value if isinstance(value, str) else str(value)
    if flat:
        text = " ".join(text.split())
    shown = visible(text, layout=layout and not flat)
    return shown.replace("\n", "\n" + indent) if indent else shown


def markup(value: object, *, layout: bool = False, flat: bool = False, indent: str = "") -> str:
    """``plain(value)`` with rich markup escaped: to embed in taskcrew's own markup."""
    return escape(plain(value, layout=layout, flat=flat, indent=indent))


# Typer draws help text that holds an ANSI escape sequence with rich's ``Text.from_ansi``, which reads
# neither markup nor emoji codes; any other help it reads as rich markup, emoji codes too (``escape``
# does not stop ":warning:" becoming ⚠). ``plain`` shows a value's own ESC, so this reset is the
# only sequence in the help, and it draws nothing.
_AS_TEXT = "\x1b[0m"


def help_text(value: object) -> str:
    """``plain(value, layout=True)`` as help text for Typer (a command's, an option's): drawn as it
    is written, ``[bold]`` and ``:warning:`` too. Typer renders a command's help paragraph by
    paragraph (after dedenting it), so every line that holds something ends with the reset."""
    lines = plain(value, layout=True).split("\n")
    return "\n".join(line + _AS_TEXT if line.strip() else line for line in lines)


def help_markup(text: str) -> str:
    """Help made by ``help_text`` as rich markup (``markup``), for what reads help as markup and never
    as ANSI: Typer's shell completion ("[/]" in a recipe's words would stop it). Any other help is
    taskcrew's own, returned as it is."""
    return escape(text.replace(_AS_TEXT, "")) if _AS_TEXT in text else text


def say(console: Console, text: Any, **options: Any) -> None:
    """Print ``text`` (taskcrew's own markup, values through ``markup``): emoji codes in a value are
    not drawn as emoji, and nothing is highlighted that taskcrew did not style."""
    options.setdefault("highlight", False)
    console.print(text, emoji=False, **options)


def document(text: str) -> Markdown:
    """A Markdown document written with model text in it (a run's report.md), to print: control and
    invisible characters shown, and each link with the address it goes to (not a hidden target)."""
    from rich.markdown import Markdown

    # a character reference (&#x202E;) would be decoded after ``plain`` saw the text: kept as text
    shown = CHARACTER_REFERENCE.sub(r"\\&", plain(text, layout=True))
    return Markdown(shown, hyperlinks=False)
