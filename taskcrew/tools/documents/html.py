"""HTML → readable text: blocks become lines, table cells ' | '; what a reader cannot see is not read
(visibility.py)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from taskcrew.tools.documents.models import tidy
from taskcrew.tools.documents.visibility import visible_html


class _HtmlText(HTMLParser):
    BLOCK = frozenset(
        [
            "p",
            "div",
            "br",
            "tr",
            "table",
            "ul",
            "ol",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "blockquote",
            "pre",
            "hr",
            "section",
            "article",
            "header",
            "footer",
        ]
    )
    SKIP = frozenset({"script", "style", "head", "title", "noscript", "template"})
    VOID = frozenset(
        ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.stack: list[tuple[str, bool]] = []  # open tags and whether each is skipped (scripts, head)
        self.cells_in_row = 0
        self.href: str | None = None
        self.link_text = ""

    def _skipped(self) -> bool:
        return any(skips for _, skips in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag not in self.VOID:
            self.stack.append((tag, tag in self.SKIP))
        if self._skipped():
            return
        if tag in self.BLOCK:
            self.out.append("\n")
        if tag == "tr":
            self.cells_in_row = 0
        elif tag in ("td", "th"):
            if self.cells_in_row:
                self.out.append(" | ")
            self.cells_in_row += 1
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "a":
            href = attributes.get("href")
            self.href = href if href and not href.startswith("mailto:") else None
            self.link_text = ""

    def handle_endtag(self, tag: str) -> None:
        was_skipped = self._skipped()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if was_skipped:
            return
        if tag == "a" and self.href:
            if self.href not in self.link_text:
                self.out.append(f" ({self.href})")
            self.href = None
        if tag in self.BLOCK and tag not in ("tr", "br"):
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skipped():
            return
        text = re.sub(r"\s+", " ", data)
        if self.href is not None:
            self.link_text += text
        self.out.append(text)

    def text(self) -> str:
        lines = [" ".join(line.split()) for line in "".join(self.out).split("\n")]
        return tidy("\n".join(lines)).strip()


def html_to_text(html: str) -> str:
    """HTML e-mail → readable text: blocks become lines, table cells ' | ', hidden parts dropped."""
    parser = _HtmlText()
    parser.feed(visible_html(html))
    parser.close()
    return parser.text()
