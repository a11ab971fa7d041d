"""What a person sees of an HTML page or e-mail: one rule for every reader that turns HTML into text.

A page, a manual or an e-mail's HTML body can show a person one thing and hand a program another:
"pay IBAN ..." in an element nobody sees. ``visible_html`` returns the document with every element
and every run of text a reader cannot see taken out, and every HTML reader here (the file reader's
e-mails and HTML files, the knowledge store's ingest, the web research tool) reads only that.

Hidden is decided as a browser lays the page out on a laptop's screen (``SCREEN``), from ``style``
attributes, the document's own ``<style>`` sheets and the old presentational attributes
(``bgcolor``, ``<font color>``): an element out of sight takes all it holds with it (``display:
none``, ``hidden``, ``aria-hidden``, next to no opacity, off the page, clipped or shrunk to
nothing); text is gone where it stands when it is ``visibility: hidden``, under ``TINY_FONT_PX`` or
painted in its background's colour (contrast under ``MIN_CONTRAST``). An element whose painting
depends on CSS the rule does not work out (a blend mode, a filter that can turn text into its
background, a mask, a clip-path other than an inset, a 3D or squashing transform: ``_unmodelled``)
is left out too, with ``UNCHECKED_NOTE`` where its text stood; so is one whose text colour, size,
offset, opacity or transform is given by a function the rule does not work out (``_unknown``: math
functions of plain values, ``calc()``, ``min()``, ``max()``, ``clamp()``, are worked out). The whole list, and what is not
applied, is in docs/documents.md ("Text nobody sees is not read").

Text a person sees struck through (``<s>``, ``<strike>``, ``<del>``, ``text-decoration: line-through``
as the cascade resolves it) is kept where it stands inside ``[struck through: …]`` (``STRUCK_OPEN``,
``STRUCK_RUN``): a cancelled figure is not a plain one. The PDF reader marks struck glyphs the same way.

Style sheets: rules whose selectors are made of tag names, ``.class``, ``#id``, ``[attr]`` and
``[attr=value]``, joined by descendant or child combinators, at the top level or under an
``@media`` that holds on ``SCREEN``; other rules (pseudo-classes, sibling combinators, other media)
are not applied. The cascade: ``!important`` first, then the ``style`` attribute, then
specificity, then source order; custom properties (``var()``) are inherited and resolved. Elements
closed by the next one's start (``<p>``, ``<li>``, ``<td>``) are closed as a browser's HTML parser
closes them.

Also here: ``visible_markdown`` (Markdown's raw HTML and comments, by the same rule, its code kept),
``linked_stylesheets`` (for a reader that may fetch them: the web research tool), and the guards
against documents built to be slow (``MAX_CHECKS``, ``closed_tail``, ``MAX_PENDING``).
"""

from __future__ import annotations

import colorsys
import functools
import html
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from taskcrew.tools.documents.models import Unreadable

_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())  # noqa: SIM905
_RAW = frozenset({"script", "style"})  # their content is not markup (HTMLParser hands it over raw)
# a start tag of these closes an open <p> (the HTML standard's "close a p element")
_CLOSES_P = frozenset(
    """address article aside blockquote details dialog div dl fieldset figcaption figure footer form h1 h2
    h3 h4 h5 h6 header hgroup hr li main menu nav ol p pre section table ul dd dt""".split()  # noqa: SIM905
)
_SCOPE = frozenset({"table", "td", "th", "caption", "button", "html", "body", "template", "object"})
# a start tag of the key closes an open element of the same group up to the boundary
_SIBLINGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu", *_SCOPE})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl", *_SCOPE})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl", *_SCOPE})),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "tbody", "thead", "tfoot"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist", *_SCOPE})),
}
# written where text was left out because its style may hide it in a way that is not checked
UNCHECKED_NOTE = (
    "[hidden text: text here is styled ({style}) in a way that can hide it from a person, which is not "
    "checked; it was not read. Compare with the document as shown before acting on it]"
)
OFF_PAGE_PX = 500.0  # an element moved this far out of the page is not on it
TINY_PX = 1.0  # an element this narrow or low with overflow hidden shows nothing
TINY_FONT_PX = 3.0  # text smaller than this cannot be read
MIN_CONTRAST = 1.2  # WCAG contrast ratio under which text is the colour of what is under it (PDFs: pdfseen)
BASE_FONT_PX = 16.0
MIN_LOGICAL_FONT_PX = 6.0  # Chromium's minimum for sizes relative to the reader's default
Colour = tuple[float, float, float, float]  # r, g, b (0-255), alpha (0-1)
WHITE: Colour = (255.0, 255.0, 255.0, 1.0)
BLACK: Colour = (0.0, 0.0, 0.0, 1.0)
UNKNOWN = None  # a background that is an image or not understood: text on it is not judged
# text a person sees struck through (a cancelled figure) is written inside this mark where it stands,
# on one line, its own square brackets as round ones (``in_strike``): a run is STRUCK_RUN exactly
STRUCK_OPEN, STRUCK_CLOSE = "[struck through: ", "]"
STRUCK_RUN = re.compile(re.escape(STRUCK_OPEN) + r"[^\[\]\n]*" + re.escape(STRUCK_CLOSE))
_ROUND = str.maketrans("[]", "()")


def in_strike(text: str) -> str:
    """Struck text as written inside the mark: its square brackets round, so none closes the mark."""
    return text.translate(_ROUND)


# the marks only a reader writes (``STRUCK_OPEN``, ``pdf.ANNOTATIONS``' "[annotation: …]" and kin):
# a document's own text that spells one is written with a round bracket (``own_text``)
READER_MARK = re.compile(
    r"[\[\uff3b\u27e6](?=\s*(?:struck\s+through|(?:stamp\s+|note\s+)?annotation)\s*:)", re.IGNORECASE
)


def own_text(text: str) -> str:
    """A document's own text as a reader hands it on: never spelling a reader's mark ("[struck
    through: …]", "[annotation: …]"), whose "[" (or a full-width or white one) it writes "(": only
    a reader says a figure is struck or a line is an annotation's."""
    return READER_MARK.sub("(", text)


_STRUCK_TAGS = frozenset({"s", "strike", "del"})
_DECORATION = (
    "text-decoration",
    "text-decoration-line",
    "-webkit-text-decoration",
    "-webkit-text-decoration-line",
)
# a struck run of text goes on through these tags; any other (a paragraph, a cell, a line break) ends it
_INLINE = frozenset(
    "a abbr b bdi bdo cite code data del dfn em font i ins kbd mark q s samp small span strike strong sub sup time u var".split()  # noqa: SIM905
)


# -- style sheets --------------------------------------------------------------------------------------
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_COMPOUND = re.compile(r"^(\*|[a-z][a-z0-9-]*)?((?:[.#][-\w]+|\[[^\]]+\])*)$", re.IGNORECASE)
_PART = re.compile(r"[.#][-\w]+|\[[^\]]+\]")
_ATTRIBUTE = re.compile(r"""^\[\s*([-\w:]+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([-\w]+))\s*)?\]$""")


@dataclass(frozen=True)
class _Compound:
    tag: str | None
    ids: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str | None], ...] = ()

    def matches(self, element: _Element) -> bool:
        return (
            (self.tag is None or self.tag == element.tag)
            and all(element.attrs.get("id") == i for i in self.ids)
            and all(c in element.classes for c in self.classes)
            and all(
                name in element.attrs and (value is None or element.attrs[name] == value)
                for name, value in self.attributes
            )
        )


@dataclass(frozen=True)
class _Rule:
    compounds: tuple[_Compound, ...]  # left to right
    combinators: tuple[str, ...]  # between them: " " (descendant) or ">" (child)
    specificity: tuple[int, int, int]
    order: int
    declarations: tuple[tuple[str, str, bool], ...]  # (property, value, important)
    needs: frozenset[str] = frozenset()  # a key (``_key``) of each compound left of the last

    def matches(self, element: _Element, ancestors: list[_Element]) -> tuple[bool, int]:
        """Whether the rule matches the element, and how many compound checks that took."""
        if not self.needs <= element.above or not self.compounds[-1].matches(element):
            return False, 1
        return _match_up(self.compounds[:-1], self.combinators, ancestors)


def _match_up(
    compounds: tuple[_Compound, ...], combinators: tuple[str, ...], ancestors: list[_Element]
) -> tuple[bool, int]:
    """Whether the ancestors (outermost first) hold the compounds left of the matched one, each
    combinator honoured, and the checks spent. Right to left, keeping every ancestor a compound
    can stand on (no backtracking): at most compounds x ancestors checks."""
    reach = [len(ancestors)]  # where the compound to the right stands (the element itself first)
    checks = 0
    for compound, combinator in zip(reversed(compounds), reversed(combinators), strict=True):
        if combinator == ">":
            spots: Iterable[int] = [p - 1 for p in reach if p > 0]
        else:
            spots = range(max(reach) - 1, -1, -1)
        reach = []
        for depth in spots:
            checks += 1
            if compound.matches(ancestors[depth]):
                reach.append(depth)
        if not reach:
            return False, checks
    return True, checks


def _compound(text: str) -> _Compound | None:
    m = _COMPOUND.match(text)
    if m is None or not text:
        return None
    ids: list[str] = []
    classes: list[str] = []
    attributes: list[tuple[str, str | None]] = []
    for part in _PART.findall(m.group(2) or ""):
        if part[0] == "#":
            ids.append(part[1:])
        elif part[0] == ".":
            classes.append(part[1:])
        else:
            a = _ATTRIBUTE.match(part)
            if a is None:
                return None  # an operator other than = ([class~=x], [href^=x]): not applied
            value = next((v for v in a.groups()[1:] if v is not None), None)
            attributes.append((a.group(1).lower(), value))
    tag = (m.group(1) or "").lower()
    return _Compound(None if tag in ("", "*") else tag, tuple(ids), tuple(classes), tuple(attributes))


def _selector(text: str, order: int, declarations: tuple[tuple[str, str, bool], ...]) -> _Rule | None:
    tokens = re.sub(r"\s*>\s*", " > ", re.sub(r"(?<![-\w]):root\b", "html", text.strip())).split()
    if not tokens or any(t in ("+", "~") or ":" in t for t in tokens):
        return None  # sibling combinators and pseudo-classes depend on what is not known here
    compounds: list[_Compound] = []
    combinators: list[str] = []
    pending = " "
    for token in tokens:
        if token == ">":
            pending = ">"
            continue
        compound = _compound(token)
        if compound is None:
            return None
        if compounds:
            combinators.append(pending)
        compounds.append(compound)
        pending = " "
    if not compounds or pending == ">":
        return None
    specificity = (
        sum(len(c.ids) for c in compounds),
        sum(len(c.classes) + len(c.attributes) for c in compounds),
        sum(c.tag is not None for c in compounds),
    )
    needs = frozenset(_key(c) for c in compounds[:-1]) - {"*"}
    return _Rule(tuple(compounds), tuple(combinators), specificity, order, declarations, needs)


_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}\s?|.)", re.DOTALL)
_IMPORTANT = re.compile(r"!\s*important$")


def _unescape(match: re.Match[str]) -> str:
    text = match.group(1)
    if not re.fullmatch(r"[0-9a-fA-F]{1,6}\s?", text):
        return text
    code = int(text.strip(), 16)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def declarations(style: str) -> tuple[tuple[str, str, bool], ...]:
    """(property, value, important) of each declaration of a ``style`` attribute or rule body
    (CSS escapes decoded: ``n\\6f ne`` is ``none``)."""
    out = []
    for part in _ESCAPE.sub(_unescape, _COMMENT.sub("", style)).split(";"):
        name, colon, value = part.partition(":")
        name, value = name.strip().lower(), " ".join(value.split()).lower()
        if not colon or not name or not value:
            continue
        important = _IMPORTANT.search(value)
        out.append((name, value[: important.start()].strip() if important else value, important is not None))
    return tuple(out)


def _blocks(css: str) -> Iterator[tuple[str, str]]:
    """(prelude, body) of each top-level block of a style sheet."""
    depth, start, prelude = 0, 0, ""
    for i, ch in enumerate(css):
        if ch == "{":
            if depth == 0:
                prelude, start = css[start:i].strip(), i + 1
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                yield prelude, css[start:i]
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1  # an @import or @charset statement


SCREEN = (1280.0, 800.0)  # the reader's window: an approver's laptop (width, height in px)
_FEATURE = re.compile(r"^\(\s*(min-|max-)?(width|height|orientation)\s*:\s*([^)]+?)\s*\)$")


def _media_applies(query: str) -> bool:
    """Whether rules under ``@media query`` apply on a laptop's screen (``SCREEN``): media types
    all and screen, conditions on width, height and orientation; anything else does not apply."""
    return any(_media_one(part) for part in query.lower().split(","))


def _media_one(query: str) -> bool:
    parts = [w.strip() for w in " ".join(query.split()).split(" and ") if w.strip()]
    if not parts:
        return True
    head = parts[0].removeprefix("only ").strip()
    if not head.startswith("("):
        if head not in ("all", "screen"):
            return False
        parts = parts[1:]
    return all(_feature(p) for p in parts)


def _feature(text: str) -> bool:
    m = _FEATURE.match(re.sub(r"\s+", " ", text))
    if m is None:
        return False
    limit, name, value = m.group(1), m.group(2), m.group(3).strip()
    width, height = SCREEN
    if name == "orientation":
        return limit is None and value == ("landscape" if width >= height else "portrait")
    size = length_px(value)
    if size is None:
        return False
    actual = width if name == "width" else height
    return actual >= size if limit == "min-" else actual <= size if limit == "max-" else actual == size


# selector checks one document's sheets may take (4-20 s of CPU); more is an attack on its reader
MAX_CHECKS = 20_000_000
CHECKS_ENV = "TASKCREW_STYLE_CHECKS"  # overrides MAX_CHECKS


class StylesTooComplex(Unreadable):
    """A document whose style sheets would take too long to apply: what it shows is not known."""


class Stylesheet:
    """The rules of a document's ``<style>`` elements that can be applied (see the module's note)."""

    def __init__(self, css: str = "") -> None:
        self.rules: list[_Rule] = []
        self._by_key: dict[str, list[_Rule]] = {}
        self.checks = 0  # selector checks spent on one document
        self.budget = int(os.environ.get(CHECKS_ENV) or MAX_CHECKS)
        self._add(_COMMENT.sub("", css))

    def _add(self, css: str) -> None:
        for prelude, body in _blocks(css):
            if prelude.startswith("@"):
                if prelude.lower().startswith("@media") and _media_applies(prelude[6:]):
                    self._add(body)
                continue
            found = declarations(body)
            for text in prelude.split(","):
                rule = _selector(text, len(self.rules), found)
                if rule is not None:
                    self.rules.append(rule)
                    self._by_key.setdefault(_key(rule.compounds[-1]), []).append(rule)

    def matching(self, element: _Element, ancestors: list[_Element]) -> list[_Rule]:
        if not self.rules:
            return []
        found: list[_Rule] = []  # each rule is filed under one key, so found once
        for key in element.keys:
            for rule in self._by_key.get(key, ()):
                matched, spent = rule.matches(element, ancestors)
                self.checks += spent
                if matched:
                    found.append(rule)
        if self.checks > self.budget:
            raise StylesTooComplex(
                f"its style sheets take more than {self.budget:,} selector checks to apply, so what it "
                "shows a person cannot be told; it is not read (ask for a plain copy)"
            )
        return found


def _key(compound: _Compound) -> str:
    if compound.ids:
        return f"#{compound.ids[0]}"
    if compound.classes:
        return f".{compound.classes[0]}"
    return f"<{compound.tag}" if compound.tag else "*"


def _is_style_tag(lower: str, start: int) -> bool:
    """Whether the ``<style`` at ``start`` opens a style element (not ``<styles>``, ``<style-x>``)."""
    after = lower[start + 6 : start + 7]
    return not after or after.isspace() or after in "/>"


def _style_blocks(document: str) -> Iterator[str]:
    """The text of each ``<style>`` element, in order (an unclosed one runs to the end, as in a
    browser); not one in an HTML comment (an Outlook-only ``<!--[if mso]><style>…<![endif]-->``,
    which browsers do not apply). Plain ``find``s: a document of many unclosed tags stays linear."""
    lower, pos = document.lower(), 0
    while (start := lower.find("<style", pos)) >= 0:
        comment = lower.find("<!--", pos, start)
        if comment >= 0:
            close = lower.find("-->", comment + 4)
            if close < 0:
                return
            pos = close + 3
            continue
        opened = lower.find(">", start)
        if opened < 0:
            return
        if not _is_style_tag(lower, start):
            pos = start + 6
            continue
        end = lower.find("</style", opened)
        yield document[opened + 1 : end if end >= 0 else len(document)]
        if end < 0:
            return
        pos = end + 7


def stylesheet_of(document: str, linked: str = "") -> Stylesheet:
    """The document's own ``<style>`` sheets, after ``linked`` (the sheets its ``<link>``s name,
    when its reader fetched them)."""
    return Stylesheet("\n".join([linked, *_style_blocks(document)]))


class _Link(HTMLParser):
    """The attributes of one ``<link>`` tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tag = ""
        self.attrs: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tag, self.attrs = tag, {name.lower(): (value or "") for name, value in attrs}


def linked_stylesheets(document: str) -> list[str]:
    """The ``href`` of each style sheet the document links that applies on ``SCREEN``, in order.
    Only the ``<link`` tags are parsed (plain ``find``s between them, as ``_style_blocks``)."""
    lower, pos, hrefs = document.lower(), 0, []
    while (start := lower.find("<link", pos)) >= 0:
        end = lower.find(">", start)
        if end < 0:
            break
        pos = end + 1
        parser = _Link()
        parser.feed(document[start:pos])
        parser.close()
        values, rel = parser.attrs, parser.attrs.get("rel", "").lower().split()
        sheet = parser.tag == "link" and "stylesheet" in rel and "alternate" not in rel
        if sheet and values.get("href") and _media_applies(values.get("media", "")):
            hrefs.append(values["href"].strip())
    return hrefs


# -- values ------------------------------------------------------------------------------------------
_LENGTH = re.compile(r"^(-?\d*\.?\d+)(px|pt|em|rem|%|vw|vh|ex|ch|cm|mm|in)?$")
_UNIT_PX = {
    "px": 1.0,
    "pt": 4 / 3,
    "cm": 37.8,
    "mm": 3.78,
    "in": 96.0,
    "vw": SCREEN[0] / 100,
    "vh": SCREEN[1] / 100,
}


@functools.cache
def _named() -> dict[str, str]:
    """CSS's named colours (css_colours.txt): name -> #rrggbb."""
    rows = (Path(__file__).with_name("css_colours.txt").read_text(encoding="utf-8")).splitlines()
    return dict(row.split() for row in rows if row and not row.startswith("#"))


def length_px(value: str, font_px: float = BASE_FONT_PX) -> float | None:
    """A CSS length in px (em and % of ``font_px``), or ``calc()``, ``min()``, ``max()`` or
    ``clamp()`` of lengths (``_math``); None when it is neither."""
    m = _LENGTH.match(value.strip())
    if m is None:
        return _math(value, font_px, font_px) if "(" in value else None
    number, unit = float(m.group(1)), m.group(2) or "px"
    if unit in ("em", "%", "ex", "ch"):
        return number * font_px / (100.0 if unit == "%" else 2.0 if unit in ("ex", "ch") else 1.0)
    if unit == "rem":
        return number * BASE_FONT_PX
    return number * _UNIT_PX[unit]


_MATH_TOKEN = re.compile(r"\d*\.?\d+(?:e[-+]?\d+)?[a-z%]*|[a-z-]+\(|[-+*/(),]|\S")
_MATH_FUNCTIONS = frozenset({"calc(", "min(", "max(", "clamp("})


def _math(value: str, font_px: float, whole: float) -> float | None:
    """A CSS math function (``calc()``, ``min()``, ``max()``, ``clamp()``) of lengths (in px, em
    of ``font_px``) and numbers (% of ``whole``); None when it is not one, or holds anything else
    (another function, a unit not known here): such a value is not worked out (``_unknown``)."""
    tokens = _MATH_TOKEN.findall(value.strip().lower())
    if not tokens or tokens[0] not in _MATH_FUNCTIONS or len(tokens) > 200:
        return None
    pos = 0

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1] if pos <= len(tokens) else ""

    def peek() -> str:
        return tokens[pos] if pos < len(tokens) else ""

    def sum_(depth: int) -> float:
        out = product(depth)
        while peek() in ("+", "-"):
            out = out + product(depth) if take() == "+" else out - product(depth)
        return out

    def product(depth: int) -> float:
        out = factor(depth)
        while peek() in ("*", "/"):
            if take() == "*":
                out *= factor(depth)
            else:
                out /= factor(depth)  # ZeroDivisionError: not a value
        return out

    def factor(depth: int) -> float:
        token = take()
        if depth > 16:
            raise ValueError(value)
        if token in ("-", "+"):
            inner = factor(depth + 1)
            return -inner if token == "-" else inner
        if token in _MATH_FUNCTIONS or token == "(":
            found = [sum_(depth + 1)]
            while peek() == ",":
                take()
                found.append(sum_(depth + 1))
            if take() != ")" or (token in ("calc(", "(") and len(found) != 1):
                raise ValueError(value)
            if token == "min(":
                return min(found)
            if token == "max(":
                return max(found)
            if token == "clamp(":
                if len(found) != 3:
                    raise ValueError(value)
                return max(found[0], min(found[1], found[2]))
            return found[0]
        m = re.fullmatch(r"(\d*\.?\d+(?:e[-+]?\d+)?)([a-z%]*)", token)
        if m is None:
            raise ValueError(value)
        number, unit = float(m.group(1)), m.group(2)
        if not unit:
            return number
        if unit == "%":
            return number * whole / 100
        found_px = length_px(m.group(0), font_px)
        if found_px is None:
            raise ValueError(value)
        return found_px

    try:
        out = sum_(0)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return out if pos == len(tokens) and math.isfinite(out) else None


def colour(value: str) -> Colour | None:
    """A CSS colour (a name, #hex, rgb(), hsl(), with alpha); None when it is not one."""
    value = value.strip().lower()
    pair = re.fullmatch(r"light-dark\(([^,]+),[^,]+\)", value)  # the reader's scheme is light
    if pair:
        value = pair.group(1).strip()
    if value == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    value = _named().get(value, value)
    if (
        value.startswith("#")
        and len(value) in (4, 5, 7, 9)
        and all(c in "0123456789abcdef" for c in value[1:])
    ):
        digits = value[1:]
        if len(digits) <= 4:
            digits = "".join(c * 2 for c in digits)
        channels = [int(digits[i : i + 2], 16) for i in range(0, len(digits), 2)]
        alpha = channels[3] / 255 if len(channels) == 4 else 1.0
        return (float(channels[0]), float(channels[1]), float(channels[2]), alpha)
    m = re.match(
        r"^(rgba?|hsla?)\(\s*([\d.]+)(%|deg)?[\s,]+([\d.]+%?)[\s,]+([\d.]+%?)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$",
        value,
    )
    if m is None:
        return None

    def channel(text: str, scale: float) -> float:
        return float(text[:-1]) * scale / 100 if text.endswith("%") else float(text)

    alpha = min(channel(m.group(6), 1.0), 1.0) if m.group(6) else 1.0
    if m.group(1).startswith("rgb"):
        first = channel(m.group(2) + ("%" if m.group(3) == "%" else ""), 255)
        return (first, channel(m.group(4), 255), channel(m.group(5), 255), alpha)
    red, green, blue = colorsys.hls_to_rgb(
        float(m.group(2)) % 360 / 360, channel(m.group(5), 1.0), channel(m.group(4), 1.0)
    )
    return (red * 255, green * 255, blue * 255, alpha)


LUMA = (0.2126, 0.7152, 0.0722)  # WCAG relative luminance: the weights of linear red, green, blue


def linear(v: float) -> float:
    """A colour channel (0-255, sRGB) in linear light, as WCAG computes luminance."""
    v /= 255
    return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4


def _luminance(c: Colour) -> float:
    return LUMA[0] * linear(c[0]) + LUMA[1] * linear(c[1]) + LUMA[2] * linear(c[2])


def contrast(text: Colour, background: Colour) -> float:
    """The WCAG contrast ratio of ``text`` (blended over ``background`` by its alpha)."""
    a = text[3]
    blended: Colour = (
        text[0] * a + background[0] * (1 - a),
        text[1] * a + background[1] * (1 - a),
        text[2] * a + background[2] * (1 - a),
        1.0,
    )
    hi, lo = sorted((_luminance(blended), _luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _background(value: str) -> tuple[bool, Colour | None]:
    """Whether a ``background`` (or ``background-color``) value paints over what is under it,
    and its colour: ``UNKNOWN`` for an image or anything not a plain opaque colour. Transparent
    or none paints nothing (the one under it shows)."""
    if "url(" in value or "gradient(" in value:
        return True, UNKNOWN
    for word in re.findall(r"#[0-9a-f]+|rgba?\([^)]*\)|[a-z]+", value):
        found = colour(word)
        if found is not None:
            return found[3] > 0, found if found[3] == 1 else UNKNOWN
    return value not in ("none", "initial", "inherit", "unset"), UNKNOWN


# -- one element -----------------------------------------------------------------------------------
@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    classes: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()  # what rules are filed under that can match it (``_key``)
    above: frozenset[str] = frozenset()  # the keys of its ancestors: a rule needing others cannot match
    hidden: bool = False  # it and all it holds are out of sight
    visible_text: bool = True  # its own visibility (inherited; a child may set it back)
    font_px: float = BASE_FONT_PX
    font_set: bool = False  # its font size comes from an absolute length (px, pt), its own or inherited
    colour: Colour = BLACK
    fill: Colour | None = None  # -webkit-text-fill-color: paints the text instead of ``colour``
    background: Colour | None = WHITE
    variables: dict[str, str] = field(default_factory=dict)  # custom properties (inherited)
    text_seen: bool = False  # whether text directly in it can be read (``_readable``)
    # the element left out because its own style paints in a way the rule does not model
    # (``_unmodelled``), for it and all it holds; and the style, in words
    unchecked: _Element | None = None
    unchecked_style: str = ""
    struck: bool = False  # a line is drawn through its text (inherited: a child cannot take it off)


def _strikes(tag: str, style: dict[str, str]) -> bool:
    """Whether the element draws a line through its text: ``text-decoration`` (or its ``-line``)
    naming ``line-through``, else ``<s>``, ``<strike>``, ``<del>`` (a browser's own style for them) —
    in a colour a person sees: a transparent line (``text-decoration-color`` of alpha 0) is none."""
    lines = [style[name] for name in _DECORATION if name in style]
    if not (any("line-through" in line for line in lines) if lines else tag in _STRUCK_TAGS):
        return False
    painted = style.get("text-decoration-color") or style.get("-webkit-text-decoration-color")
    if painted is None:  # the shorthand's colour, if it names one: 'line-through transparent'
        painted = next((w for line in lines for w in line.split() if colour(w) is not None), None)
    seen = colour(painted.strip()) if painted else None
    return seen is None or seen[3] > 0


# a line through a box's text is not drawn through these of its descendants (CSS Text Decoration:
# not propagated to atomic inlines, floats, absolutely or fixed positioned boxes)
_ATOMIC_DISPLAY = frozenset({"inline-block", "inline-table", "inline-flex", "inline-grid"})


def _own_box(style: dict[str, str]) -> bool:
    """Whether the element is a box a parent's line-through does not reach (``_ATOMIC_DISPLAY``)."""
    display = style.get("display", "").strip().lower()
    return (
        display in _ATOMIC_DISPLAY
        or style.get("float", "none").strip().lower() not in ("none", "")
        or style.get("position", "").strip().lower() in ("absolute", "fixed")
    )


def _readable(element: _Element) -> bool:
    if element.hidden or not element.visible_text or element.font_px < TINY_FONT_PX:
        return False
    painted = element.fill or element.colour
    return element.background is UNKNOWN or contrast(painted, element.background) >= MIN_CONTRAST


def _cascade(element: _Element, sheet: Stylesheet, ancestors: list[_Element]) -> dict[str, str]:
    """The element's own declared values, after the cascade."""
    found: list[tuple[tuple[int, int, tuple[int, int, int], int], str, str]] = []
    for rule in sheet.matching(element, ancestors):
        for name, value, important in rule.declarations:
            found.append(((int(important), 0, rule.specificity, rule.order), name, value))
    for order, (name, value, important) in enumerate(declarations(element.attrs.get("style", ""))):
        found.append(((int(important), 1, (0, 0, 0), order), name, value))
    found.sort(key=lambda item: item[0])
    style = _presentational(element)
    for _, name, value in found:
        style[name] = value
    return style


def _presentational(element: _Element) -> dict[str, str]:
    """Styles of the old attributes (a browser gives them the lowest weight)."""
    out = {}
    found = {
        "background-color": element.attrs.get("bgcolor"),
        "color": element.attrs.get("color") if element.tag == "font" else None,
    }
    if element.tag == "body" and element.attrs.get("text"):
        found["color"] = element.attrs["text"]
    for name, value in found.items():
        parsed = _legacy_colour(value) if value else None
        if parsed is not None:
            out[name] = parsed
    if element.attrs.get("background"):
        out["background-image"] = "url()"
    return out


def _legacy_colour(value: str) -> str | None:
    """A colour attribute (``<font color=000000>``, ``bgcolor``) read as the HTML standard's rules
    for a legacy colour value read it (any string is some colour: ``fff`` is #0f0f0f), as #rrggbb
    or a name; None where a browser ignores it."""
    text = value.strip().lower()
    if not text or text == "transparent":
        return None
    if text in _named() or re.fullmatch(r"#[0-9a-f]{3}", text):
        return text
    text = "".join("00" if ord(c) > 0xFFFF else c for c in text)[:128].removeprefix("#")
    text = "".join(c if c in "0123456789abcdef" else "0" for c in text)
    while not text or len(text) % 3:
        text += "0"
    length = len(text) // 3
    parts = [text[i * length : (i + 1) * length][-8:] for i in range(3)]
    while len(parts[0]) > 2 and all(p[0] == "0" for p in parts):
        parts = [p[1:] for p in parts]
    return "#" + "".join(f"{int(p[:2], 16):02x}" for p in parts)


def _fraction(value: str) -> float:
    """A number or percentage as a fraction, or a math function of them (1 when it is neither:
    ``_unknown`` leaves out what holds a function not worked out)."""
    if "(" in value:
        found = _math(value, BASE_FONT_PX, 1.0)
        return 1.0 if found is None else found
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return 1.0


def _offset(style: dict[str, str], name: str, font_px: float) -> float:
    value = length_px(style.get(name, ""), font_px)
    return value if value is not None else 0.0


def _out_of_sight(style: dict[str, str], font_px: float) -> bool:
    """Whether the element and all it holds are out of sight, from its own computed style."""
    if not style:
        return False
    if style.get("display") == "none" or style.get("mso-hide") == "all":
        return True
    if style.get("content-visibility") == "hidden":
        return True
    faint = re.search(r"opacity\(\s*([\d.]+%?)", style.get("filter", ""))
    for value in (style.get("opacity", "1"), faint.group(1) if faint else "1", style.get("zoom", "1")):
        if _fraction(value) < 0.1:
            return True
    far = -OFF_PAGE_PX
    if style.get("position") in ("absolute", "fixed") and any(
        _offset(style, side, font_px) <= far for side in ("left", "top", "right")
    ):
        return True
    if any(_offset(style, name, font_px) <= far for name in ("text-indent", "margin-left", "margin-top")):
        return True
    calls = _calls(style.get("transform", "")) or []
    for name, arguments in calls:
        if name.startswith("scale") and any(_fraction(p) < 0.1 for p in arguments):
            return True
        if name.startswith("translate") and any((length_px(p, font_px) or 0.0) <= far for p in arguments):
            return True
    if any(_fraction(p) < 0.1 for p in _parts(style.get("scale", "1"))):
        return True
    if any((length_px(p, font_px) or 0.0) <= far for p in _parts(style.get("translate", ""))):
        return True
    clip = style.get("clip", "")
    rect = re.match(r"^rect\((.*)\)$", clip)
    if rect and style.get("position") in ("absolute", "fixed"):
        sides = [length_px(p, font_px) for p in _parts(rect.group(1))]
        if len(sides) == 4 and all(s is not None for s in sides):
            top, right, bottom, left = (s or 0.0 for s in sides)
            if right - left <= TINY_PX or bottom - top <= TINY_PX:
                return True
    inset = re.match(r"^inset\(\s*([\d.]+)%", style.get("clip-path", ""))
    if inset and float(inset.group(1)) >= 50:
        return True
    cut = _inset(style.get("clip-path", ""))  # an inset whose sides meet: nothing is left
    if cut and (cut[0] + cut[2] >= 100 or cut[1] + cut[3] >= 100):
        return True
    if re.match(r"^circle\(\s*0*\.?0+(px|%)?\s*[)a]", style.get("clip-path", "")):
        return True
    overflow = " ".join(style.get(name, "") for name in ("overflow", "overflow-x", "overflow-y")).split()
    padded = any(
        (length_px(v, font_px) or 0.0) > TINY_PX for n, v in style.items() if n.startswith("padding")
    )
    if ("hidden" in overflow or "clip" in overflow) and not padded:
        for name in ("width", "height", "max-height", "max-width"):
            value = style.get(name, "")
            whole = SCREEN[0] if "width" in name else SCREEN[1]  # the most a percentage can be
            size = _math(value, font_px, whole) if "(" in value else length_px(value, font_px)
            if size is not None and size <= TINY_PX:
                return True
    return False


def _inset(clip_path: str) -> list[float] | None:
    """The four sides of ``clip-path: inset()`` in percent of the box (top, right, bottom, left),
    or None: not an inset, or one with lengths (their share of the box is not known)."""
    m = re.match(r"^inset\(([^)]*)\)$", clip_path)
    if m is None:
        return None
    values = m.group(1).split(" round ")[0].split()
    if not 1 <= len(values) <= 4 or not all(re.fullmatch(r"\d*\.?\d+%|0", v) for v in values):
        return None
    sides = [float(v.rstrip("%")) for v in values]
    top = sides[0]
    right = sides[1] if len(sides) > 1 else top
    bottom = sides[2] if len(sides) > 2 else top
    left = sides[3] if len(sides) > 3 else right
    return [top, right, bottom, left]


# CSS filter functions: those that keep text that shows showing (opacity is weighed by
# ``_out_of_sight``; the colour ones keep its lightness), and the others a browser knows
_KEEPS_TEXT = frozenset({"opacity", "drop-shadow", "grayscale", "sepia", "saturate", "hue-rotate"})
_FILTERS = frozenset({"blur", "brightness", "contrast", "invert", "url", *_KEEPS_TEXT})
_BLEND_MODES = frozenset(
    """multiply screen overlay darken lighten color-dodge color-burn hard-light soft-light difference
    exclusion hue saturation color luminosity plus-darker plus-lighter""".split()  # noqa: SIM905
)
_MASKS = ("mask", "mask-image", "mask-border", "mask-border-source", "-webkit-mask", "-webkit-mask-image")
_MASKS_TOO = ("-webkit-mask-box-image", "-webkit-mask-box-image-source")
_NO_VALUE = frozenset({"", "none", "initial", "unset", "inherit", "revert"})
_CLIP_BOXES = frozenset(
    {"border-box", "padding-box", "content-box", "margin-box", "fill-box", "stroke-box", "view-box"}
)
_FUNCTION = re.compile(r"([-a-z0-9]+)\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
# blend modes that never make the element lighter than it is: on a light (or unknown) backdrop
# its text keeps standing out from its background (a banner multiplied onto the page)
_DARKENING = frozenset({"multiply", "darken"})
LIGHT_BACKDROP = 0.4  # the relative luminance a backdrop has at least to be light
MILD = (0.5, 2.0)  # brightness() and contrast() between these keep text that shows showing


def _degrees(value: str) -> float | None:
    m = re.fullmatch(r"(-?\d*\.?\d+)(deg|rad|grad|turn)?", value.strip())
    if m is None:
        return None
    if m.group(2) is None and float(m.group(1)) != 0:
        return None
    per = {"deg": 1.0, "rad": 180 / math.pi, "grad": 0.9, "turn": 360.0}.get(m.group(2) or "deg", 1.0)
    return float(m.group(1)) * per


def _unmodelled(style: dict[str, str], backdrop: Colour | None = WHITE) -> str | None:
    """The declaration, if any, by which the element may paint nothing a person can see in a way
    this rule does not work out (a blend mode that can lighten, or darken on a dark ``backdrop``
    (what is painted under the element); a filter that can turn text into its background; a mask;
    a clip-path other than an inset; a transform whose flat shape cannot be worked out, or that
    squashes it): such an element is left out, with a note, rather than read as if it were seen."""
    blend = style.get("mix-blend-mode", "")
    darkens = blend in _DARKENING and (backdrop is UNKNOWN or _luminance(backdrop) >= LIGHT_BACKDROP)
    if blend in _BLEND_MODES and not darkens:
        return f"mix-blend-mode: {blend}"
    effect = style.get("filter", "")
    found = _FUNCTION.findall(effect)
    if found and all(name in _FILTERS for name, _ in found):  # an unknown one voids the declaration
        for name, argument in found:
            amount = _fraction(argument.strip() or "1")
            if name in _KEEPS_TEXT or (name in ("brightness", "contrast") and MILD[0] <= amount <= MILD[1]):
                continue
            if (name == "invert" and amount == 0) or (name == "blur" and (length_px(argument) or 0) <= 1):
                continue
            return f"filter: {effect}"
    for name in (*_MASKS, *_MASKS_TOO):
        if style.get(name, "") not in _NO_VALUE:
            return f"{name}: {style[name]}"
    clip = style.get("clip-path", "")
    if clip not in _NO_VALUE and clip not in _CLIP_BOXES and _inset(clip) is None:
        return f"clip-path: {clip}"
    unknown = _unknown(style)
    if unknown is not None:
        return unknown
    transform = style.get("transform", "")
    calls = _calls(transform) or []
    flat = _flattened(calls)
    if flat is None or not _readable_matrix([str(v) for v in (*flat, 0, 0)]):
        return f"transform: {transform}"
    for name, values in calls:
        if name in ("skew", "skewx", "skewy"):
            angles = [_degrees(v) for v in values]
            if not all(a is not None and abs(a) <= 60 for a in angles):
                return f"transform: {transform}"
    rotate = style.get("rotate", "")
    if len(rotate.split()) > 1:  # about an axis: in 3D
        return f"rotate: {rotate}"
    return None


_CSS_WIDE = frozenset({"inherit", "initial", "unset", "revert", "revert-layer"})
# properties whose value decides whether the element or its text can be seen, and take lengths or
# numbers: a function in them other than a math function of plain values is not worked out here
_MEASURED = (
    "font-size", "width", "height", "max-width", "max-height", "left", "top", "right", "text-indent",
    "margin-left", "margin-top", "opacity", "zoom", "clip", "translate", "scale", "rotate",
)  # fmt: skip


def _unknown(style: dict[str, str]) -> str | None:
    """The first declaration that may hide the element or its text whose value this rule cannot
    work out: a text colour that is not one ``colour`` reads (``color-mix()``, ``oklch()``, a
    system colour), or a function in a size, offset, opacity, clip or transform that is not a
    math function of plain values (``_math``) nor a transform function of such values."""
    for name in ("color", "-webkit-text-fill-color"):
        value = style.get(name)
        if value is not None and value not in _CSS_WIDE and value != "currentcolor" and colour(value) is None:
            return f"{name}: {value}"
    for name in _MEASURED:
        value = style.get(name, "")
        if name == "clip":
            value = re.sub(r"^rect\((.*)\)$", r"\1", value.replace(",", " "))
        if "(" in value and any(_opaque(part) for part in _parts(value)):
            return f"{name}: {value}"
    transform = style.get("transform", "")
    calls = _calls(transform)
    if calls is None or any(_opaque(v) for _, values in calls for v in values):
        return f"transform: {transform}"
    return None


def _opaque(value: str) -> bool:
    """Whether a value holds a function that is not a math function of plain values."""
    return "(" in value and _math(value, BASE_FONT_PX, 1.0) is None and _math_angle(value) is None


def _math_angle(value: str) -> float | None:
    """A math function of angles, in degrees (``calc(90deg)``)."""
    if "deg" not in value and "turn" not in value and "rad" not in value:
        return None
    plain = re.sub(r"(\d*\.?\d+)(deg|grad|rad|turn)\b", lambda m: str(_degrees(m.group(0))), value)
    return _math(plain, BASE_FONT_PX, 1.0)


def _parts(value: str) -> list[str]:
    """The space- or comma-separated parts of a value, a function's parentheses kept whole."""
    parts, depth, current = [], 0, ""
    for ch in value:
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and (ch.isspace() or ch == ","):
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p for p in (*parts, current) if p]


def _calls(value: str) -> list[tuple[str, list[str]]] | None:
    """The functions of a ``transform`` (name, arguments), nested parentheses kept whole; None
    when it is not a list of functions (``none`` and the CSS-wide keywords are an empty list)."""
    if value in _NO_VALUE:
        return []
    out = []
    for part in re.findall(r"[-a-z0-9]+\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\S+", value):
        m = re.fullmatch(r"([-a-z0-9]+)\((.*)\)", part, re.DOTALL)
        if m is None:
            return None
        out.append((m.group(1), [a.strip() for a in _parts(m.group(2))]))
    return out


def _flattened(calls: list[tuple[str, list[str]]]) -> tuple[float, float, float, float] | None:
    """The 2D linear part (a, b, c, d) of a ``transform`` as the flat element is painted, or None
    when it cannot be worked out. Functions in 3D are flattened: a move along z changes nothing
    without a ``perspective()`` before it, and scales by d / (d - z) with one (None at or behind
    the eye); ``rotateX``/``rotateY`` by an angle shrink the height/width by its cosine (near 90°
    to nothing); a ``matrix3d`` without perspective terms is its 2D part. Moves along x and y
    change nothing here (``_out_of_sight`` weighs them)."""
    total = (1.0, 0.0, 0.0, 1.0)
    depth: float | None = None  # the perspective() distance in force
    for name, values in calls:
        step: tuple[float, ...] = (1.0, 0.0, 0.0, 1.0)
        number = [_fraction(v) for v in values]
        if name in ("translate", "translatex", "translatey"):
            pass
        elif name in ("translatez", "translate3d"):
            z = length_px(values[-1]) if values else None
            if z is None:
                return None
            if depth is not None and z != 0:
                if depth - z <= 0:
                    return None
                step = (depth / (depth - z), 0.0, 0.0, depth / (depth - z))
        elif name == "perspective":
            depth = length_px(values[0]) if values else None
            if depth is None or depth <= 0:
                return None
        elif name in ("scale", "scalex", "scaley", "scale3d", "scalez"):
            sx = number[0] if number else None
            sy = number[1] if len(number) > 1 else sx
            sx, sy = {"scalex": (sx, 1.0), "scaley": (1.0, sx), "scalez": (1.0, 1.0)}.get(name, (sx, sy))
            if sx is None or sy is None:
                return None
            step = (sx, 0.0, 0.0, sy)
        elif name in ("rotate", "rotatez", "rotatex", "rotatey", "skew", "skewx", "skewy"):
            angles = [_degrees(v) if "(" not in v else _math_angle(v) for v in values] or [None]
            if any(a is None for a in angles):
                return None
            t = math.radians(angles[0] or 0.0)
            u = math.radians(angles[1] or 0.0) if len(angles) > 1 else 0.0
            step = {
                "rotatex": (1.0, 0.0, 0.0, math.cos(t)),
                "rotatey": (math.cos(t), 0.0, 0.0, 1.0),
                "skew": (1.0, math.tan(u), math.tan(t), 1.0),
                "skewx": (1.0, 0.0, math.tan(t), 1.0),
                "skewy": (1.0, math.tan(t), 0.0, 1.0),
            }.get(name, (math.cos(t), math.sin(t), -math.sin(t), math.cos(t)))
        elif name == "matrix" and len(values) == 6 and None not in (plain := [_number(v) for v in values]):
            step = tuple(float(v or 0.0) for v in plain[:4])
        elif name == "matrix3d" and len(values) == 16:
            m = [_number(v) for v in values]
            if any(v is None for v in m) or m[3] or m[7] or not m[15]:
                return None
            w = float(m[15] or 1.0)
            step = (float(m[0] or 0) / w, float(m[1] or 0) / w, float(m[4] or 0) / w, float(m[5] or 0) / w)
        else:
            return None  # rotate3d, a perspective in a matrix3d, an unknown function
        a, b, c, d = total
        p, q, r, t2 = step
        total = (a * p + c * q, b * p + d * q, a * r + c * t2, b * r + d * t2)
    return total


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _readable_matrix(values: list[str]) -> bool:
    """A 2D ``matrix()`` that neither shrinks text to nothing nor squashes it to a sliver."""
    try:
        a, b, c, d = (float(v) for v in values[:4])
    except ValueError:
        return False
    if len(values) != 6:
        return False
    # its singular values: how much it stretches the text along and across
    p, q = (a * a + b * b + c * c + d * d) / 2, abs(a * d - b * c)
    root = math.sqrt(max(p * p - q * q, 0.0))
    most, least = math.sqrt(p + root), math.sqrt(max(p - root, 0.0))
    return least >= 0.1 and most <= 10 * least


# the size in a ``font`` shorthand ("bold 0/0 a", "12px/1.4 Arial"): the first length before a family
_FONT_SIZE = re.compile(r"(?:^|\s)(\d*\.?\d+(?:px|pt|em|rem|%)|0)(?:/\S+)?(?=\s)")
_VAR = re.compile(r"var\(\s*(--[-\w]+)\s*(?:,\s*([^()]*(?:\([^()]*\)[^()]*)*))?\)")


# font-size keywords (Chromium's sizes for a 16px default); smaller and larger are of the parent's
_FONT_KEYWORDS = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0, "x-large": 24.0,
    "xx-large": 32.0, "xxx-large": 48.0,
}  # fmt: skip


def _font_size(size: str, parent_px: float) -> float | None:
    """A ``font-size`` in px (a length, a math function of lengths, a keyword); None when it is
    none of these (the parent's size is kept; a function not worked out is ``_unknown``)."""
    if size in _FONT_KEYWORDS:
        return _FONT_KEYWORDS[size]
    if size in ("smaller", "larger"):
        return parent_px / 1.2 if size == "smaller" else parent_px * 1.2
    if _LENGTH.match(size) is None and "(" not in size:
        return None
    found = length_px(size, parent_px)
    return None if found is None else max(found, 0.0)


def _resolved(style: dict[str, str], variables: dict[str, str]) -> dict[str, str]:
    """``style`` with each ``var(--name, fallback)`` replaced by its value; a property whose
    variable has neither is dropped (invalid where it is computed, as in a browser)."""
    gone = "\0"  # stands for a variable with no value and no fallback

    def one(m: re.Match[str]) -> str:
        found = variables.get(m.group(1), m.group(2))
        return gone if found is None else found

    out = {}
    for name, value in style.items():
        for _ in range(8):  # variables holding variables, a few levels deep
            if "var(" not in value:
                break
            value = _VAR.sub(one, value)
        if "var(" not in value and gone not in value:
            out[name] = value.strip()
    return out


def _open(tag: str, attrs: dict[str, str], sheet: Stylesheet, stack: list[_Element]) -> _Element:
    parent = stack[-1] if stack else None
    classes = frozenset((attrs.get("class") or "").split())
    keys = {"*", f"<{tag}", *(f".{c}" for c in classes), *([f"#{attrs['id']}"] if attrs.get("id") else [])}
    above = parent.above | parent.keys if parent is not None else frozenset()
    element = _Element(tag, attrs, classes, frozenset(keys), above)
    if parent is not None and parent.hidden:
        element.hidden = True  # out of sight with its parent, whatever its own style
        element.unchecked, element.unchecked_style = parent.unchecked, parent.unchecked_style
        return element
    style = _cascade(element, sheet, stack)
    own = {name: value for name, value in style.items() if name.startswith("--")}
    inherited = parent.variables if parent is not None else {}
    element.variables = {**inherited, **own} if own else inherited
    style = _resolved(style, element.variables)
    if parent is not None:  # inherited
        element.font_px, element.font_set, element.struck = parent.font_px, parent.font_set, parent.struck
        element.visible_text, element.colour, element.fill, element.background = (
            parent.visible_text,
            parent.colour,
            parent.fill,
            parent.background,
        )
    size = style.get("font-size") or next(iter(_FONT_SIZE.findall(style.get("font", ""))), None)
    font = _font_size(size.strip(), element.font_px) if size else None
    if size and font is not None:
        relative = re.search(r"\d(?:em|%|ex|ch)\b", size) or size in ("smaller", "larger")
        element.font_set = element.font_set or not relative
        # a browser's "smart minimum": a size relative to the reader's default is not made smaller
        # than MIN_LOGICAL_FONT_PX (0.1em of the default is shown at 6px; of a 2px parent, not), 0 aside
        element.font_px = font if element.font_set or font == 0 else max(font, MIN_LOGICAL_FONT_PX)
    element.struck = (element.struck and not _own_box(style)) or _strikes(tag, style)
    visibility = style.get("visibility")
    if visibility in ("hidden", "collapse"):
        element.visible_text = False
    elif visibility == "visible":
        element.visible_text = True
    text_colour = colour(style["color"]) if "color" in style else None
    if text_colour is not None:
        element.colour = text_colour
    if "-webkit-text-fill-color" in style:
        fill = style["-webkit-text-fill-color"]
        element.fill = None if fill in ("currentcolor", "initial", "unset") else colour(fill) or element.fill
    for name in ("background-color", "background"):
        if name in style:
            paints, found = _background(style[name])
            if paints:
                element.background = found
    if "background-image" in style and style["background-image"] != "none":
        element.background = UNKNOWN
    element.hidden = bool(
        "hidden" in attrs
        or attrs.get("aria-hidden", "").strip().lower() == "true"
        or _out_of_sight(style, element.font_px)
    )
    backdrop = parent.background if parent is not None else WHITE
    unmodelled = None if element.hidden else _unmodelled(style, backdrop)
    if unmodelled is not None:
        element.hidden, element.unchecked, element.unchecked_style = True, element, unmodelled
    element.text_seen = _readable(element)
    return element


# -- the document ---------------------------------------------------------------------------------
class _Visible(HTMLParser):
    """Re-writes the document without what a reader cannot see. ``markdown``: the document is
    Markdown holding raw HTML: what is seen is written exactly as the source has it (character
    references and all), and the contents of scripts and style sheets go."""

    def __init__(self, sheet: Stylesheet, markdown: bool = False) -> None:
        super().__init__(convert_charrefs=not markdown)
        self.sheet = sheet
        self.markdown = markdown
        self.stack: list[_Element] = []
        self.out: list[str] = []
        self.noted: set[int] = set()  # the elements left out as unchecked whose note is written
        self.striking = False  # a STRUCK_OPEN is written and not yet closed
        if markdown:  # rendered, it stands in a page's <html><body>, which style sheets may name
            for tag in ("html", "body"):
                self.stack.append(_open(tag, {}, sheet, self.stack))
        self.page = len(self.stack)  # the elements of the page around the document

    def _close_implied(self, tag: str) -> None:
        if tag in _CLOSES_P:
            self._close_up_to(frozenset({"p"}), _SCOPE)
        if tag in _SIBLINGS:
            self._close_up_to(*_SIBLINGS[tag])

    def _close_up_to(self, targets: frozenset[str], boundary: frozenset[str]) -> None:
        for depth in range(len(self.stack) - 1, -1, -1):
            tag = self.stack[depth].tag
            if tag in targets:
                del self.stack[depth:]  # closed without an end tag of its own: nothing to write
                return
            if tag in boundary:
                return

    def _seen(self) -> bool:
        return not self.stack or not self.stack[-1].hidden

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._close_implied(tag)
        values = {name.lower(): value or "" for name, value in attrs}
        element = _open(tag, values, self.sheet, self.stack)
        if not element.hidden:
            if tag not in _INLINE:
                self.unstrike()
            self.out.append(self.get_starttag_text() or f"<{tag}>")
        if tag not in _VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth].tag == tag:
                if not self.stack[depth].hidden:
                    if tag not in _INLINE:
                        self.unstrike()
                    self.out.append(f"</{tag}>")
                del self.stack[depth:]
                return
        if self._seen():
            if tag not in _INLINE:
                self.unstrike()
            self.out.append(f"</{tag}>")  # a stray end tag: the reader after this one decides

    def handle_data(self, data: str) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top.tag in _RAW:
            self.out.append("" if top.hidden or self.markdown else data)
        elif top is None or (not top.hidden and (top.text_seen or not data.strip())):
            data = own_text(data)  # the document's own words never spell a reader's mark
            self._write(
                data if self.markdown else html.escape(data, quote=False), top is not None and top.struck
            )
        elif top.unchecked is not None and data.strip() and id(top.unchecked) not in self.noted:
            self.noted.add(id(top.unchecked))  # once for each element left out so, where it stood
            self.unstrike()
            note = UNCHECKED_NOTE.format(style=top.unchecked_style[:80])
            self.out.append(f" {note} " if self.markdown else f" {html.escape(note, quote=False)} ")

    def _write(self, text: str, struck: bool) -> None:
        """Seen text; struck text inside ``STRUCK_OPEN`` … ``STRUCK_CLOSE``, which its end, a block's
        tag (``unstrike``), text not struck or (Markdown, where it ends a line) a line end close."""
        breaks = self.markdown and "\n" in text
        if not text.strip():
            if breaks:
                self.unstrike()
            self.out.append(text)
            return
        if not struck:
            self.unstrike()
            self.out.append(text)
            return
        for n, line in enumerate(text.split("\n") if breaks else [text]):
            if n:
                self.unstrike()
                self.out.append("\n")
            if line.strip() and not self.striking:
                lead = len(line) - len(line.lstrip())
                self.out.append(line[:lead] + STRUCK_OPEN)
                self.striking, line = True, line[lead:]
            self.out.append(in_strike(line))

    def unstrike(self) -> None:
        """Closes the struck run of text, if one is open."""
        if self.striking:
            self.out.append(STRUCK_CLOSE)
            self.striking = False

    def handle_entityref(self, name: str) -> None:  # markdown only (convert_charrefs off)
        self.handle_data(f"&{name};")

    def handle_charref(self, name: str) -> None:  # markdown only
        self.handle_data(f"&#{name};")

    def handle_decl(self, decl: str) -> None:
        if self._seen():
            self.out.append(f"<!{decl}>")


def closed_tail(document: str) -> str:
    """``document`` with each ``<`` after its last ``>`` written as text: a tag, comment or
    declaration cut off by the end of the document is not one (a browser drops it), and Python's
    HTML parser would take quadratic time over many (a 140 KB tail of ``<style `` took 50 s)."""
    last = document.rfind(">")
    tail = document[last + 1 :]
    return document if "<" not in tail else document[: last + 1] + tail.replace("<", "&lt;")


def visible_html(document: str, linked: str = "") -> str:
    """``document`` without the elements and text a person reading it cannot see (module note);
    ``linked``: the style sheets its ``<link>``s name (``linked_stylesheets``), fetched."""
    document = closed_tail(document)
    parser = _Visible(stylesheet_of(document, linked))
    parser.feed(document)
    parser.close()
    parser.unstrike()
    return "".join(parser.out)


# -- Markdown ----------------------------------------------------------------------------------
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(?<!`)(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")  # a code span (on one line)
MAX_PENDING = 4096  # characters of Markdown a tag may span before its "<" is taken as text
MAX_STYLES = 1 << 20  # characters of style sheets a Markdown file may hold that are applied


class _Fences:
    """Which lines of Markdown are fenced code, told one line at a time."""

    def __init__(self) -> None:
        self.fence = ""  # the open fence ("```", "~~~~"), or none

    def code(self, line: str) -> bool:
        m = _FENCE.match(line)
        if not self.fence:
            self.fence = m.group(1) if m else ""
            return m is not None
        if m and m.group(1)[0] == self.fence[0] and len(m.group(1)) >= len(self.fence):
            self.fence = "" if not line[m.end() :].strip() else self.fence
        return True


class MarkdownStyles:
    """The ``<style>`` sheets in Markdown's raw HTML (not in its code), up to ``MAX_STYLES``, told
    one line at a time: a browser applies a sheet to the whole page, so ``visible_markdown_lines``
    is given them all first."""

    def __init__(self) -> None:
        self._fences = _Fences()
        self._parts: list[str] = []
        self._inside = False
        self._comment = False  # in an HTML comment: a sheet in it is not applied
        self._size = 0

    def watch(self, lines: Iterable[str]) -> Iterator[str]:
        """``lines``, each seen on its way through."""
        for line in lines:
            self.see(line)
            yield line

    def see(self, line: str) -> None:
        if self._fences.code(line):
            return
        lower, pos = line.lower(), 0
        while pos < len(line) and self._size < MAX_STYLES:  # plain finds: linear in the line
            if self._comment:
                close = lower.find("-->", pos)
                if close < 0:
                    break
                self._comment, pos = False, close + 3
            elif self._inside:
                end = lower.find("</style", pos)
                self._parts.append(line[pos : end if end >= 0 else len(line)])
                self._size += len(self._parts[-1])
                if end < 0:
                    break
                self._inside, pos = False, end + 7
            else:
                start = lower.find("<style", pos)
                comment = lower.find("<!--", pos, start if start >= 0 else len(line))
                if comment >= 0:
                    self._comment, pos = True, comment + 4
                    continue
                opened = lower.find(">", start) if start >= 0 else -1
                if opened < 0:
                    break
                self._inside, pos = _is_style_tag(lower, start), opened + 1
        if self._inside:
            self._parts.append("\n")

    def text(self) -> str:
        return "".join(self._parts)


_PLACE = re.compile("\x00(\\d+)\x00")  # where a code span was held out of the HTML parser


def _hold_spans(line: str) -> tuple[str, list[str]]:
    """The line with its code spans held out (``_PLACE`` marks), and the spans."""
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(0))
        return f"\x00{len(held) - 1}\x00"

    return _SPAN.sub(hold, line.replace("\x00", "")), held


def _restore_spans(text: str, held: list[str]) -> str:
    return _PLACE.sub(lambda m: held[int(m.group(1))], text)


def visible_markdown_lines(lines: Iterable[str], styles: str = "") -> Iterator[str]:
    """Lines of Markdown (without their line ends) without what a person reading it rendered
    cannot see: its raw HTML is read as ``visible_html`` reads a page (an HTML comment, a hidden
    ``<div>`` and all it holds, white text), its code blocks and code spans as text (a sample of
    hidden HTML is shown, so kept); ``styles``: the file's sheets (``MarkdownStyles``). What is
    seen is left exactly as written, but that it never spells a reader's mark (``own_text``). Streams:
    one line is held at a time."""
    parser = _Visible(Stylesheet(styles), markdown=True)
    fences = _Fences()
    pending = ""
    for line in map(own_text, lines):  # the document's own text, code spans and fast paths too
        code = fences.code(line)
        plain = len(parser.stack) == parser.page and parser.stack[-1].text_seen and not parser.rawdata
        if plain and "<" not in line and "&" not in line:
            out = line + "\n"  # no HTML open, none in the line: as it stands
        elif code:
            parser.handle_data(line + "\n")
            out = "".join(parser.out)
        else:
            text, held = _hold_spans(line)
            parser.feed(text + "\n")
            if len(parser.rawdata) > MAX_PENDING:  # a "<" no ">" closes: text, not a tag
                pending_tag, parser.rawdata = parser.rawdata, ""
                parser.handle_data(pending_tag)
            out = _restore_spans("".join(parser.out), held)
        parser.out.clear()
        pending += out
        *done, pending = pending.split("\n")
        yield from done
    parser.close()
    parser.unstrike()
    pending += "".join(parser.out)
    if pending:
        yield from pending.split("\n")


def visible_markdown(text: str) -> str:
    """``visible_markdown_lines`` over a whole text."""
    if "<" not in text:
        return own_text(text)
    lines = text.split("\n")
    styles = MarkdownStyles()
    for line in lines:
        styles.see(line)
    return "\n".join(visible_markdown_lines(lines, styles.text()))
