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

Taskcrew's own words keep their styles: only the values pass through here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from taskcrew.approvals.visible import visible

# an & that starts a character reference (&#x202E;, &amp;): Markdown decodes it after any filter saw
# the text, so report.md (crew/report.py) and its printing (``document``) keep it as text
CHARACTER_REFERENCE = re.compile(r"&(?=#?[0-9A-Za-z]+;)")

if TYPE_CHECKING:
    from rich.console import Console
    from rich.markdown import Markdown


def plain(value: object, *, layout: bool = False, flat: bool = False, indent: str = "") -> str:
    """``value`` as text a terminal only draws (see the module's doc)."""
    text = value if isinstance(value, str) else str(value)
    if flat:
        text = " ".join(text.split())
    shown = visible(text, layout=layout and not flat)
    return shown.replace("\n", "\n" + indent) if indent else shown


def markup(value: object, *, layout: bool = False, flat: bool = False, indent: str = "") -> str:
    """``plain(value)`` with rich markup escaped: to embed in taskcrew's own markup."""
    return escape(plain(value, layout=layout, flat=flat, indent=indent))


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
