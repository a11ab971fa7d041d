"""Main text and title from an HTML page: trafilatura first, a plain HTML-to-text fallback second."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Literal

from pydantic import BaseModel

from taskcrew.tools.documents.visibility import visible_html

_SKIP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form", "button",
     "select", "iframe", "head"}
)  # fmt: skip
_BLOCK_TAGS = frozenset(
    {"p", "div", "section", "article", "main", "br", "li", "ul", "ol", "table", "tr", "h1", "h2", "h3", "h4",
     "h5", "h6", "pre", "blockquote", "dl", "dt", "dd", "figcaption", "hr"}
)  # fmt: skip
_VOID_TAGS = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "source", "wbr"})


class ExtractedText(BaseModel):
    title: str | None = None
    text: str
    method: Literal["trafilatura", "fallback"]


def extract_main_text(html: str, url: str | None = None, linked_css: str = "") -> ExtractedText:
    """The readable main content of ``html`` (navigation, footers and scripts dropped); what a reader
    of the page cannot see is not read (visibility.py; ``linked_css``: the sheets the page links)."""
    html = visible_html(html, linked_css)
    title = html_title(html)
    text = _trafilatura_text(html, url)
    if text and len(text.strip()) >= 40:
        return ExtractedText(title=title, text=_tidy(text), method="trafilatura")
    return ExtractedText(title=title, text=_tidy(_plain_text(html)), method="fallback")


def _trafilatura_text(html: str, url: str | None) -> str | None:
    import trafilatura  # ~0.5 s to import: only when a page is actually read

    return trafilatura.extract(
        html,
        url=url,
        output_format="txt",
        include_comments=False,
        include_tables=True,
        include_links=False,
        favor_recall=True,
        deduplicate=False,
    )


def html_title(html: str) -> str | None:
    """``<title>``, else the first ``<h1>``."""
    parser = _TitleParser()
    parser.feed(html)
    parser.close()
    for candidate in (parser.title, parser.h1):
        cleaned = " ".join(candidate.split())
        if cleaned:
            return cleaned
    return None


def html_to_text(html: str) -> str:
    """A simple HTML-to-text conversion that drops scripts, navigation, headers and footers, and
    what a reader of the page cannot see (visibility.py)."""
    return _plain_text(visible_html(html))


def _plain_text(html: str) -> str:
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _tidy(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


class _TitleParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.h1 = ""
        self._in: str | None = None
        self._h1_done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title:
            self._in = "title"
        elif tag == "h1" and not self._h1_done:
            self._in = "h1"

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            if tag == "h1":
                self._h1_done = True
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "title":
            self.title += data
        elif self._in == "h1":
            self.h1 += data


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS and tag not in _VOID_TAGS:
            self._skip_depth += 1
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS and tag not in _VOID_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)
