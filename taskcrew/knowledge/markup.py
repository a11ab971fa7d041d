"""Structure of documents that are not Markdown: reStructuredText and HTML headings, PDF outlines.

RST and HTML are rewritten as Markdown-structured text (``#`` headings, paragraphs, list lines) so
one splitter (``chunking.split_markdown``) sizes every format alike and chunks follow the
document's own sections. Markup that carries no words for a reader (RST labels, directive names,
figure options, role syntax, HTML scripts and navigation) is dropped; link texts and inline code
keep their words. PDF: the outline (bookmarks) names the section each page region belongs to.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from html.parser import HTMLParser

from taskcrew.tools.documents.visibility import visible_html

_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
_RST_LABEL = re.compile(r"^\.\.\s+_[^:]*:\s*\S*\s*$")
_RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*)$")
_RST_COMMENT = re.compile(r"^\.\.(\s.*)?$")
_RST_OPTION = re.compile(r"^\s+:[\w -]+:.*$")
_RST_ROLE = re.compile(r":[\w:+-]+:`([^`<]*?)\s*(?:<[^>]*>)?`")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`_{1,2}")
_RST_REF = re.compile(r"`([^`]+)`_{1,2}")
_RST_LITERAL = re.compile(r"``([^`]+)``")
_RST_EMPHASIS = re.compile(r"\*{1,2}([^*\n]+)\*{1,2}")
_RST_SUBST = re.compile(r"\|([\w -]+)\|")
_SKIPPED_DIRECTIVES = frozenset({"figure", "image", "toctree", "raw", "include", "only", "index", "meta"})


def rst_title(text: str) -> str | None:
    """The document title: its first heading."""
    for level, title in _rst_headings(text.splitlines()):
        del level
        return title
    return None


def _rst_headings(lines: list[str]) -> Iterator[tuple[tuple[str, bool], str]]:
    for i in range(len(lines)):
        heading = _rst_heading_at(lines, i)
        if heading is not None:
            yield heading[0], heading[1]


def _rst_heading_at(lines: list[str], i: int) -> tuple[tuple[str, bool], str, int] | None:
    """(style, title, lines used) when a heading starts at line ``i``: text underlined (and maybe
    overlined) with one punctuation character, at least as long as the text."""
    line = lines[i].rstrip()
    if not line:
        return None
    over = _RST_ADORNMENT.match(line)
    if over and i + 2 < len(lines):
        title, under = lines[i + 1].strip(), lines[i + 2].rstrip()
        if title and under == line and len(line) >= len(title):
            return (line[0], True), title, 3
    if over or line.startswith(" ") or i + 1 >= len(lines):
        return None
    under = lines[i + 1].rstrip()
    match = _RST_ADORNMENT.match(under)
    if match and len(under) >= len(line.strip()) and (i == 0 or not lines[i - 1].strip()):
        return (under[0], False), line.strip(), 2
    return None


def rst_to_markdown(text: str) -> str:
    """Headings become ``#`` lines (levels in order of first use, as RST defines them)."""
    lines = text.replace("\t", "    ").splitlines()
    styles: list[tuple[str, bool]] = []
    out: list[str] = []
    skip_indent: int | None = None  # inside a directive whose body carries no prose (figure, toctree)
    i = 0
    while i < len(lines):
        line = lines[i]
        if skip_indent is not None:
            if not line.strip() or len(line) - len(line.lstrip()) > skip_indent:
                i += 1
                continue
            skip_indent = None
        heading = _rst_heading_at(lines, i)
        if heading is not None:
            style, title, used = heading
            if style not in styles:
                styles.append(style)
            out.extend(["", f"{'#' * min(styles.index(style) + 1, 6)} {_rst_inline(title)}", ""])
            i += used
            continue
        directive = _RST_DIRECTIVE.match(line)
        if directive:
            indent, name, argument = len(directive.group(1)), directive.group(2).lower(), directive.group(3)
            if name in _SKIPPED_DIRECTIVES:
                skip_indent = indent
            elif argument.strip():  # ".. note:: text", ".. table:: caption"
                out.append(_rst_inline(argument))
            i += 1
            continue
        if _RST_LABEL.match(line) or _RST_COMMENT.match(line) or _RST_OPTION.match(line):
            i += 1
            continue
        if _RST_TABLE_BORDER.match(line):
            i += 1
            continue
        out.append(_rst_inline(_table_row(line)).rstrip())
        i += 1
    return "\n".join(out)


_RST_TABLE_BORDER = re.compile(r"^\s*\+[-=+]+\+\s*$|^\s*=+(\s+=+)+\s*$")


def _table_row(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3:
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        return "    " + " | ".join(c for c in cells if c)
    return line


def _rst_inline(text: str) -> str:
    text = _RST_ROLE.sub(r"\1", text)
    text = _RST_LINK.sub(r"\1", text)
    text = _RST_REF.sub(r"\1", text)
    text = _RST_LITERAL.sub(r"\1", text)
    text = _RST_EMPHASIS.sub(r"\1", text)
    text = _RST_SUBST.sub(r"\1", text)
    return text.replace("\\", "")


# -- HTML ----------------------------------------------------------------------------------------
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "li", "tr", "table", "ul", "ol", "dl", "dt", "dd", "pre", "blockquote"}
)
_DROPPED = frozenset({"script", "style", "nav", "header", "footer", "noscript", "template", "svg", "head"})
# ARIA landmarks that hold no document text: a generator's navigation bar, sidebar, search box
# (Sphinx's <div class="related" role="navigation">, <div class="sphinxsidebar" ...>). <aside> is
# kept: docutils writes a manual's sidebars, topics and footnotes as <aside>.
_DROPPED_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_PERMALINK = " §🔗"  # anchors a documentation generator puts after a heading (and ¶ anywhere)


class _HtmlToMarkdown(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.title = ""
        self._in_title = False
        self._drop: str | None = None  # the tag of the outermost element being dropped
        self._drop_depth = 0  # how many of that tag are open inside it
        self._pre = 0
        self._heading: int | None = None
        self._text: list[str] = []

    def _flush(self) -> None:
        raw = "".join(self._text).replace("¶", "")
        self._text = []
        if self._pre:  # preformatted: its lines kept, fenced so a "# comment" is not a heading,
            lines = [line.rstrip() for line in raw.splitlines() if line.strip()]  # one paragraph
            if lines:
                self.out.extend(["", "```", *lines, "```", ""])
            return
        text = " ".join(raw.split())
        if not text:
            return
        if self._heading is not None:
            self.out.extend(["", f"{'#' * self._heading} {text.rstrip(_PERMALINK)}", ""])
        else:
            self.out.append(f" {text}" if text.startswith("#") else text)  # text, not a heading

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif self._drop is not None:
            self._drop_depth += tag == self._drop
        elif tag in _DROPPED or (tag not in _VOID and _dropped(dict(attrs))):
            self._drop, self._drop_depth = tag, 1
        elif tag in _HEADINGS:
            self._flush()
            self._heading = _HEADINGS[tag]
        elif tag in _BLOCKS or tag == "br":
            self._flush()
            self._pre += tag == "pre"
            if tag in ("p", "div", "section", "table", "ul", "ol", "blockquote", "pre"):
                self.out.append("")
            if tag == "li":
                self._text.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif self._drop is not None:
            if tag == self._drop:
                self._drop_depth -= 1
                if self._drop_depth == 0:
                    self._drop = None
        elif tag in _HEADINGS:
            self._flush()
            self._heading = None
        elif tag in _BLOCKS:
            self._flush()
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._drop is None:
            self._text.append(data)


def _dropped(attrs: dict[str, str | None]) -> bool:
    """A landmark of navigation or chrome (``_DROPPED_ROLES``); what no reader sees is gone before
    (visibility.py)."""
    return attrs.get("role") in _DROPPED_ROLES


def html_to_markdown(text: str) -> tuple[str, str | None]:
    """(Markdown-structured text, the page's <title> or None); text a reader of the page cannot see
    is not read (visibility.py)."""
    parser = _HtmlToMarkdown()
    parser.feed(visible_html(text))
    parser.close()
    parser._flush()
    title = " ".join(html.unescape(parser.title).split()) or None
    return "\n".join(parser.out), title


# -- PDF outline ---------------------------------------------------------------------------------
def pdf_outline(reader: object) -> list[tuple[int, list[str]]]:
    """(page index, heading path) of each outline entry, in document order; [] without an outline."""
    entries: list[tuple[int, list[str]]] = []

    def walk(items: list[object], parents: list[str]) -> None:
        last: list[str] = parents
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            try:
                page = reader.get_destination_page_number(item)  # type: ignore[attr-defined]
            except Exception:
                continue
            if title and page is not None and page >= 0:
                last = [*parents, title]
                entries.append((page, last))

    try:
        outline = reader.outline  # type: ignore[attr-defined]
    except Exception:
        return []
    walk(list(outline or []), [])
    return entries
