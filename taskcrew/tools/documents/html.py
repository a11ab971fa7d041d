"""HTML → readable text: blocks become lines, table cells ' | '; what a reader cannot see is not read
(visibility.py); what an e-mail reply quotes is written as a plain-text reply quotes it, each line
after "> " (``_quotes``)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from taskcrew.tools.documents.models import tidy
from taskcrew.tools.documents.visibility import visible_html

# the block an e-mail program quotes an earlier message in: Gmail's, Yahoo's, Proton's
_QUOTE_CLASS = re.compile(r"(?:^|\s)(?:gmail_quote\w*|yahoo_quoted|protonmail_quote)(?:\s|$)", re.IGNORECASE)
_INDENT_ONLY = re.compile(r"\bborder\s*:\s*(?:none|0)\b", re.IGNORECASE)  # Gmail's and Outlook's indent
_QUOTE_MARK = re.compile("\x02(\\d+)\x03")  # a run's quote depth, in the text while it is built


def _quotes(tag: str, attributes: dict[str, str | None]) -> str:
    """How ``tag`` quotes an earlier message in an e-mail reply: "cite" for a ``<blockquote>`` (Gmail's
    ``gmail_quote``, Apple's and Thunderbird's ``type="cite"``) — not one that only indents (``border:
    none``, no quote bar); "block" for a block that holds a quote and its "On … wrote:" line (Gmail's
    ``gmail_quote`` div, Yahoo's ``yahoo_quoted``); "rest" for Outlook's reply header
    (``id="divRplyFwdMsg"``: "From: … Sent: …"), after which the rest is the quoted message; "" for
    none."""
    if tag == "blockquote":
        style = attributes.get("style") or ""
        indent = _INDENT_ONLY.search(style) and "border-left" not in style.lower()
        return "" if indent and attributes.get("type") != "cite" else "cite"
    if (attributes.get("id") or "").lower() == "divrplyfwdmsg":
        return "rest"
    return "block" if _QUOTE_CLASS.search(attributes.get("class") or "") else ""


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
        self.stack: list[tuple[str, bool, str]] = []  # open tags, whether each is skipped (scripts, head)
        # and how it quotes (``_quotes``)
        self.rest_quoted = False  # past Outlook's reply header: the rest is the quoted message
        self.cells_in_row = 0
        self.href: str | None = None
        self.link_text = ""

    def _skipped(self) -> bool:
        return any(skips for _, skips, _quote in self.stack)

    def _quote_depth(self) -> int:
        """How deep the text here is quoted: the quoting blockquotes around it, or one in a block
        that holds a quote or past Outlook's reply header."""
        cites = sum(quote == "cite" for _, _skips, quote in self.stack)
        return cites or int(self.rest_quoted or any(quote == "block" for _, _skips, quote in self.stack))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        quote = _quotes(tag, attributes)
        if tag not in self.VOID:
            self.stack.append((tag, tag in self.SKIP, quote))
        if self._skipped():
            return
        self.rest_quoted = self.rest_quoted or quote == "rest"
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
        text = re.sub(r"\s+", " ", data.replace("\x02", "").replace("\x03", ""))
        if self.href is not None:
            self.link_text += text
        if depth := self._quote_depth():
            self.out.append(f"\x02{depth}\x03")
        self.out.append(text)

    def text(self) -> str:
        lines = []
        for line in "".join(self.out).split("\n"):
            depth = max((int(d) for d in _QUOTE_MARK.findall(line)), default=0)
            words = " ".join(_QUOTE_MARK.sub("", line).split())
            lines.append("> " * depth + words if words else "")
        return tidy("\n".join(lines)).strip()


def html_to_text(html: str) -> str:
    """HTML e-mail → readable text: blocks become lines, table cells ' | ', hidden parts dropped."""
    parser = _HtmlText()
    parser.feed(visible_html(html))
    parser.close()
    return parser.text()
