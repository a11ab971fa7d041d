"""Headings of a PDF without an outline, found by font size.

Many PDFs carry no bookmarks (exported from a word processor, printed to PDF), but their
headings are set larger than the body text. Each page's text is read once with pypdf's visitor,
which gives every text run's font size as drawn (the Tf size through the text and graphics
matrices). The body size is the size most characters are set in; a run at least
``HEADING_RATIO`` times larger, short (``MAX_WORDS``) and with letters in it is a heading, and
the distinct heading sizes, largest first, are the levels (at most ``MAX_LEVELS``; smaller ones
share the last). A heading's lines set one after the other at the same size are one heading
("2.3 The source" / "XML files"). Text repeated at a heading size on ``RUNNING_PAGES`` pages or
more is a running header, not a heading. The largest size, when it occurs once and first, is the
document's title rather than a chapter (as a lone top Markdown heading is).

Bold text at the body size is not read as a heading: without sizes to go by, a bold word in a
sentence and a bold run-in heading look alike.

Text nobody can see is no heading (pypdf reads it all; pdfseen.py tells what is seen): given
``shown``, each piece of text the visitor hands over is left out unless ``shown`` finds it on its
page (it neither counts towards the body size nor joins a heading), and a heading whose whole text
``shown`` does not find is dropped (hidden pieces too short to tell on their own, joined into one).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from taskcrew.knowledge.models import HEADING_MAX_CHARS

HEADING_RATIO = 1.15
MAX_WORDS = 16
MAX_CHARS = HEADING_MAX_CHARS  # a citation cuts a heading at the same length
MAX_LEVELS = 4
RUNNING_PAGES = 3


class _Run(NamedTuple):
    page: int
    size: float
    text: str


Shown = Callable[[int, str], bool]  # (page index, text): whether a person sees that text on that page


class FontOutline(NamedTuple):
    pages: list[str]  # each page's text, as pypdf extracts it
    entries: list[tuple[int, list[str]]]  # (page index, heading path) in document order
    title: str | None  # the lone largest heading on the first page, when there is one


def font_outline(reader: Any, shown: Shown | None = None, count: int | None = None) -> FontOutline:
    """Each page's text and the headings its font sizes show (see the module's docstring), for
    the first ``count`` pages (all by default); only text ``shown`` finds makes headings."""
    sizes = _Sizes(shown)
    pages: list[str] = []
    for index, page in enumerate(reader.pages):
        if count is not None and index >= count:
            break
        sizes.page, sizes.baseline = index, math.nan
        pages.append(page.extract_text(visitor_text=sizes.visit) or "")
    return _outline(pages, sizes.runs, sizes.chars, shown)


class _Sizes:
    """Text runs of one size, in reading order, and how many characters each size sets."""

    def __init__(self, shown: Shown | None = None) -> None:
        self.runs: list[_Run] = []
        self.chars: Counter[float] = Counter()
        self.page = 0
        self.baseline = math.nan  # where the last piece of text was drawn, in page space
        self.shown = shown

    def visit(self, text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        if self.shown is not None:  # pieces nobody can see are not there
            page = self.page
            lines = text.split("\n")
            kept = ["" if line.split() and not self.shown(page, line) else line for line in lines]
            if not any(line.split() for line in kept):
                return
            text = "\n".join(kept)
        # the text space's vertical unit through the text matrix then the page's matrix
        scale = math.hypot(tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3])
        value = float(size or 0) * (scale or 1.0)
        drawn = round(value * 2) / 2 if math.isfinite(value) else 0.0  # to half a point
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        new_line = not abs(y - self.baseline) < max(drawn, 1.0) / 2  # NaN (the first): a new line
        self.baseline = y
        for n, line in enumerate(text.split("\n")):
            words = line.split()
            if not words:
                continue
            self.chars[drawn] += sum(len(w) for w in words)
            last = self.runs[-1] if self.runs else None
            if last is not None and last.page == self.page and last.size == drawn:
                glue = " " if n or new_line or line[:1].isspace() or last.text.endswith(" ") else ""
                self.runs[-1] = last._replace(text=last.text + glue + line)
            else:
                self.runs.append(_Run(self.page, drawn, line))


def _outline(
    pages: list[str], runs: list[_Run], chars: Counter[float], shown: Shown | None = None
) -> FontOutline:
    if not chars:
        return FontOutline(pages, [], None)
    body = chars.most_common(1)[0][0]
    headings = [
        _Run(r.page, r.size, " ".join(r.text.split()))
        for r in runs
        if r.size >= body * HEADING_RATIO
        and _heading_like(r.text)
        and (shown is None or shown(r.page, r.text))
    ]
    on_pages: dict[str, set[int]] = {}
    for h in headings:
        on_pages.setdefault(h.text.lower(), set()).add(h.page)
    headings = [h for h in headings if len(on_pages[h.text.lower()]) < RUNNING_PAGES]
    if not headings:
        return FontOutline(pages, [], None)
    sizes = sorted({h.size for h in headings}, reverse=True)
    title = None
    first = headings[0]
    if first.page == 0 and first.size == sizes[0] and sum(h.size == sizes[0] for h in headings) == 1:
        title, headings, sizes = first.text, headings[1:], sizes[1:]
    level = {size: min(i, MAX_LEVELS - 1) for i, size in enumerate(sizes)}
    entries: list[tuple[int, list[str]]] = []
    stack: list[tuple[int, str]] = []
    for h in headings:
        while stack and stack[-1][0] >= level[h.size]:
            stack.pop()
        stack.append((level[h.size], h.text))
        entries.append((h.page, [text for _, text in stack]))
    return FontOutline(pages, entries, title)


def _heading_like(text: str) -> bool:
    words = text.split()
    return (
        0 < len(words) <= MAX_WORDS
        and len(" ".join(words)) <= MAX_CHARS
        and sum(c.isalpha() for c in text) >= 2
    )
