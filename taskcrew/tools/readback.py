"""Read-back rules: how a repeated submission is checked against the real system before it is sent
again. Data, not code: a company keeps them in a YAML file beside its procedures (the demo company's is
``sandbox/readback.yaml``; ``TASKCREW_READBACK`` names another), validated on load.

    rules:
      - target: "{erp}/bills/{bill_id}/pay"      # {erp}: the workplace's ERP URL
        read_back: "{erp}/bills/{bill_id}"        # {bill_id}: taken from the submitted URL
        shows: ["paid on {paid_on}"]              # {paid_on}: a submitted field
      - target: "{erp}/logout"
        safe_to_repeat: true                      # sending it twice changes nothing

In ``target`` a ``{name}`` matches one path segment (a path parameter); the query string is not part of
the match. ``read_back``, ``identify`` and ``shows`` may use path parameters, the submitted fields and
the query's parameters. A repeat counts as applied when the read-back page's text contains every
``identify`` field's submitted value and every ``shows`` text (each as a whole, not inside a longer
word or number); a page that cannot be read (an error, a
login page) or a value that is missing means the read-back cannot tell.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from taskcrew.yamlfile import load_yaml

FILE_NAME = "readback.yaml"
ENV_VAR = "TASKCREW_READBACK"
MAX_FILE_BYTES = 64_000
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
DATA_CHANGING = ("POST", "PUT", "PATCH", "DELETE")

ReadBackResult = Literal["applied", "absent", "unknown"]
FetchText = Callable[[str], str | None]  # URL -> page text, or None when the page cannot be trusted


class ReadBackFileError(ValueError):
    """A read-back rule file that cannot be used; the message names the file and what to fix."""


class ReadBack(BaseModel):
    """One rule; ``target`` and ``read_back`` are absolute URLs once the systems are filled in."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="URL the submission goes to; {name} matches one path segment")
    methods: list[str] = Field(default_factory=lambda: list(DATA_CHANGING))
    read_back: str | None = Field(default=None, description="a page that shows whether it was applied")
    identify: list[str] = Field(default_factory=list, description="fields whose values show the record")
    shows: list[str] = Field(default_factory=list, description="texts on the page that show it applied")
    safe_to_repeat: bool = Field(default=False, description="sending it again changes nothing")

    @model_validator(mode="after")
    def _complete(self) -> ReadBack:
        self.methods = [m.upper() for m in self.methods]
        for name, url in (("target", self.target), ("read_back", self.read_back)):
            if url is None:
                continue
            if unknown := re.match(r"\{(\w+)\}", url):
                raise ValueError(
                    f"{name} {url!r}: {{{unknown.group(1)}}} is not one of this workplace's systems "
                    "(erp, intranet); use one of them or a full address"
                )
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc or "{" in parts.netloc:
                raise ValueError(
                    f"{name} {url!r} is not an absolute http(s) URL; start it with a system placeholder "
                    "such as {erp} or a full address"
                )
        if "{" in urlsplit(self.target).query:
            raise ValueError(f"target {self.target!r}: placeholders belong in the path, not the query")
        if self.safe_to_repeat:
            if self.read_back or self.identify or self.shows:
                raise ValueError(
                    f"{self.target}: safe_to_repeat needs no read_back, identify or shows; remove one side"
                )
            return self
        if not self.read_back:
            raise ValueError(f"{self.target}: give read_back (a page to check) or safe_to_repeat: true")
        if not (self.identify or self.shows):
            raise ValueError(
                f"{self.target}: say what on {self.read_back} shows it applied: identify (fields) or shows (texts)"
            )
        return self

    def match(self, method: str, url: str) -> dict[str, str] | None:
        """The path parameters when this rule covers ``method`` ``url``, else None."""
        if method.upper() not in self.methods:
            return None
        found = _target_pattern(self.target).fullmatch(_without_query(url))
        return {k: unquote(v) for k, v in found.groupdict().items()} if found else None

    def check(
        self, url: str, params: dict[str, str], fields: list[tuple[str, str]], fetch_text: FetchText
    ) -> tuple[ReadBackResult, str]:
        """Read the system back for a submission of ``fields`` to ``url``: the verdict and the page read."""
        values = {k: v.strip() for k, v in parse_qsl(urlsplit(url).query)}
        values.update({k: v.strip() for k, v in fields})
        values.update(params)
        try:
            page_url = _fill(self.read_back or "", values, quoted=True)
            wanted = [values[name] for name in self.identify]
            wanted += [_fill(text, values, quoted=False) for text in self.shows]
        except KeyError:
            return "unknown", self.read_back or ""  # a value the rule needs was not submitted
        if not all(wanted):
            return "unknown", page_url
        page = fetch_text(page_url)
        if page is None:
            return "unknown", page_url
        text = visible_text(page)
        return ("applied" if all(_shown(text, w) for w in wanted) else "absent"), page_url


class ReadBackRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[ReadBack] = Field(default_factory=list)

    def rule_for(self, method: str, url: str) -> tuple[ReadBack, dict[str, str]] | None:
        for rule in self.rules:
            params = rule.match(method, url)
            if params is not None:
                return rule, params
        return None


def rules_file(sandbox: Path) -> Path | None:
    """The company's rule file: ``TASKCREW_READBACK`` when set, else ``readback.yaml`` in the
    sandbox (None when it has none: every repeat is then decided by its recorded outcome)."""
    if named := os.environ.get(ENV_VAR):
        return Path(named).expanduser()
    path = sandbox / FILE_NAME
    return path if path.exists() else None


def load_rules(path: Path | None, systems: dict[str, str]) -> ReadBackRules:
    """Rules from ``path``, with system placeholders (``{erp}``…) filled in; raises ReadBackFileError."""
    if path is None:
        return ReadBackRules()
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ReadBackFileError(f"{path}: larger than {MAX_FILE_BYTES // 1000} kB; a rule file is short")
        data = load_yaml(path.read_text(encoding="utf-8"))  # a key written twice is refused
    except OSError as exc:
        raise ReadBackFileError(
            f"read-back rules {path}: cannot be read ({exc.strerror or exc}); fix the path or unset {ENV_VAR}"
        ) from exc
    except UnicodeDecodeError as exc:
        raise ReadBackFileError(f"read-back rules {path}: not UTF-8 text") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ReadBackFileError(
            f"read-back rules {path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}"
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ReadBackFileError(f"read-back rules {path}: expected a mapping with a `rules:` list")
    filled = _fill_systems(data, {k: v.rstrip("/") for k, v in systems.items() if v})
    try:
        return ReadBackRules.model_validate(filled)
    except ValidationError as exc:
        raise ReadBackFileError(f"read-back rules {path}: {_describe(exc)}") from exc


def visible_text(page: str) -> str:
    """The text a person sees on an HTML page (no tags, scripts or styles), whitespace squashed."""
    return _squash(" ".join(_parsed(page)).replace(_BREAK, " ").replace(_CELL, " "))


def visible_lines(page: str) -> list[str]:
    """The text of an HTML page as a person sees it, one line per block (row, paragraph, item)."""
    text = "".join(p.replace("\n", " ") for p in _parsed(page)).replace(_BREAK, "\n").replace(_CELL, " | ")
    return [ln for ln in (_squash(p) for p in text.split("\n")) if ln]


# ---- internals ---------------------------------------------------------------------------------


_BLOCKS = {"tr", "p", "li", "div", "h1", "h2", "h3", "h4", "h5", "h6", "br", "section", "table", "form"}
_BLOCKS |= {"ul", "ol", "dt", "dd", "label", "header", "footer", "main", "nav", "article", "title"}
_BREAK, _CELL = "\x00", "\x01"  # where a block or a table cell starts or ends (never in page text)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "template"):
            self._skip += 1
        elif tag in _BLOCKS:
            self.parts.append(_BREAK)
        elif tag in ("td", "th"):
            self.parts.append(_CELL)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template") and self._skip:
            self._skip -= 1
        elif tag in _BLOCKS:
            self.parts.append(_BREAK)

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _parsed(page: str) -> list[str]:
    parser = _TextParser()
    parser.feed(page)
    parser.close()
    return parser.parts


def _squash(text: str) -> str:
    return " ".join(text.split())


def _shown(text: str, wanted: str) -> bool:
    """``wanted`` on the page as a whole (INV-2057 is not found inside INV-20571)."""
    return re.search(rf"(?<!\w){re.escape(_squash(wanted))}(?!\w)", text) is not None


def _without_query(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}"


def _target_pattern(target: str) -> re.Pattern[str]:
    parts = urlsplit(target)
    base = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
    out, last = [re.escape(base)], 0
    for found in PLACEHOLDER.finditer(parts.path):
        out.append(re.escape(parts.path[last : found.start()]))
        out.append(f"(?P<{found.group(1)}>[^/]+)")
        last = found.end()
    out.append(re.escape(parts.path[last:].rstrip("/")) + "/?")
    return re.compile("".join(out))


def _fill(template: str, values: dict[str, str], *, quoted: bool) -> str:
    def one(found: re.Match[str]) -> str:
        value = values[found.group(1)]
        return quote(value, safe="") if quoted else value

    return PLACEHOLDER.sub(one, template)


def _fill_systems(data: object, systems: dict[str, str]) -> object:
    """``{erp}`` and the other system names filled in every string (other placeholders stay)."""
    if isinstance(data, str):
        return PLACEHOLDER.sub(lambda m: systems.get(m.group(1), m.group(0)), data)
    if isinstance(data, list):
        return [_fill_systems(x, systems) for x in data]
    if isinstance(data, dict):
        return {k: _fill_systems(v, systems) for k, v in data.items()}
    return data


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        loc = list(error["loc"])
        if loc[:1] == ["rules"] and len(loc) > 1 and isinstance(loc[1], int):
            loc = [f"rule {loc[1] + 1}", *loc[2:]]  # as a person counts them in the file
        where = ".".join(str(x) for x in loc)
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)
