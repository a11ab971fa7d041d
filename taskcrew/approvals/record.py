"""What the system shows now, read by code (read-only, with the worker's session) when an approval
is asked: the record a submission changes, and the vendors the system already knows.

- The record: the page of the record the submission changes (``record_page``: the one the rules'
  amount look-up reads for its target, ``rules.changed_record``; where no rule names one, the page
  the form was filled on), read again, as label -> value — a details list (``<dt>``/``<dd>``) or
  two-cell table rows (header, value); on a page showing neither, its form's controls as the
  system served them (an edit form is served holding the record's current values; a form on a
  record's page is an action on it, its values only suggestions). The console shows it as the
  "before" beside each field sent, and a submission that names no payee (paying a bill sends only
  a date) is read as paying that record's vendor, only when it was sent from that record's own
  page (``changed_record_read``).
- The known vendors: the vendor column of the system's vendor list page (``vendor_lists`` in the
  risk rules), or the options of a vendor select, one entry a record. A payee not among them is a
  new vendor; one named like two or more of them may be a look-alike record's (``rules.lookalike_vendor``).

What a person reads (details, table rows, vendor names) is read from the page as a person sees it
(``visibility.visible_html``): a value the page hides is not shown as the record's, and a hidden row
does not make a payee a known vendor. Form controls are read as served, hidden or not: they are
what the form sends. A page whose styles are too costly to judge is not read (None).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

from taskcrew.approvals.rules import RiskRules, changed_record
from taskcrew.approvals.visible import visible
from taskcrew.tools.documents.models import Unreadable
from taskcrew.tools.documents.visibility import closed_tail, visible_html
from taskcrew.tools.human import ApprovalRequest, RecordState

Fetch = Callable[[str], str | None]
VENDOR_COLUMN = re.compile(r"^\s*(vendor|supplier|payee|beneficiary)(\s+name)?\s*$", re.IGNORECASE)
VENDOR_SELECT = re.compile(r"vendor|supplier|payee", re.IGNORECASE)
SKIPPED_INPUTS = {"hidden", "password", "submit", "button", "reset", "image", "file"}
MAX_VALUES = 60


def _squash(text: str) -> str:
    return " ".join(text.split())


class _PageParser(HTMLParser):
    """One pass over a page: details lists, table rows, form controls, select options."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pairs: list[tuple[str, str]] = []  # (label, value) as a person reads them
        self.controls: list[tuple[str, str]] = []  # (field name, value as served)
        self.rows: list[list[tuple[str, str]]] = []  # table rows: (cell tag, text)
        self.selects: dict[str, list[str]] = {}  # select name -> option labels
        self.labels: dict[str, str] = {}  # control id -> label text
        self._ids: dict[str, str] = {}  # control id -> field name
        self._text: list[str] | None = None
        self._cell: str | None = None
        self._row: list[tuple[str, str]] | None = None
        self._dt: str | None = None
        self._label_for: str | None = None
        self._select: tuple[str, list[tuple[str, bool]]] | None = None
        self._option: tuple[str, bool] | None = None
        self._textarea: str | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "style", "template"):
            self._skip += 1
        elif tag in ("dt", "dd", "th", "td", "label", "option", "textarea"):
            self._text = []
            if tag in ("th", "td"):
                self._cell = tag
            if tag == "label":
                self._label_for = a.get("for")
            if tag == "option":
                self._option = (a.get("value", ""), "selected" in a)
            if tag == "textarea":
                self._textarea = a.get("name", "")
                self._ids[a.get("id", "")] = self._textarea
        elif tag == "tr":
            self._row = []
        elif tag == "input" and a.get("name") and a.get("type", "text").lower() not in SKIPPED_INPUTS:
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self.controls.append((a["name"], a.get("value", "")))
            self._ids[a.get("id", "")] = a["name"]
        elif tag == "select" and a.get("name"):
            self._select = (a["name"], [])
            self._ids[a.get("id", "")] = a["name"]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template") and self._skip:
            self._skip -= 1
            return
        text = _squash("".join(self._text or []))
        if tag == "dt":
            self._dt, self._text = text, None
        elif tag == "dd" and self._dt is not None:
            self.pairs.append((self._dt, text))
            self._dt, self._text = None, None
        elif tag in ("th", "td") and self._row is not None:
            self._row.append((tag, text))
            self._text, self._cell = None, None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            if len(self._row) == 2 and self._row[0][0] == "th" and self._row[1][0] == "td":
                self.pairs.append((self._row[0][1], self._row[1][1]))
            self._row = None
        elif tag == "label":
            if self._label_for:
                self.labels[self._label_for] = text
            self._text, self._label_for = None, None
        elif tag == "option" and self._select is not None and self._option is not None:
            value, selected = self._option
            self._select[1].append((text or value, selected))
            self._text, self._option = None, None
        elif tag == "select" and self._select is not None:
            name, options = self._select
            self.selects[name] = [label for label, _ in options]
            chosen = [label for label, selected in options if selected]
            self.controls.append((name, chosen[0] if chosen else ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self.controls.append((self._textarea, "".join(self._text or []).strip()))
            self._text, self._textarea = None, None

    def handle_data(self, data: str) -> None:
        if not self._skip and self._text is not None:
            self._text.append(data)


def _parse(page: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(closed_tail(page))
    parser.close()
    return parser


def record_values(page: str) -> dict[str, str]:
    """label -> value of what a page shows of one record, and name -> served value of its form's
    controls (a person's label of a control is kept beside it: "IBAN (iban)"). Raises
    ``Unreadable`` when the page's styles are too costly to judge what it shows."""
    seen = _parse(visible_html(page))
    out: dict[str, str] = {}
    for label, value in seen.pairs:
        if label and label not in out:
            out[label] = value
    if out:  # a page showing the record: its forms are actions on it, their values suggestions
        return dict(list(out.items())[:MAX_VALUES])
    parser = _parse(page)  # the controls as served: what the form sends, seen or not
    names = {name: parser.labels.get(cid, "") for cid, name in parser._ids.items() if cid}
    for name, value in parser.controls:
        if value.strip():
            label = names.get(name, "")
            out[f"{label} ({name})" if label else name] = value.strip()
    return dict(list(out.items())[:MAX_VALUES])


def vendor_names(page: str) -> list[str]:
    """The vendors a page shows: the vendor column of its tables, or the options of a vendor select,
    one entry a record: a name a list shows twice is two records ("Northwind Traders" and one added
    as "Northwind  Traders", drawn alike: ``rules.lookalike_vendor``), while a page showing a table
    and a select of the same vendors counts each once (the most any one list shows). Raises
    ``Unreadable`` when the page's styles are too costly to judge what it shows."""
    parser = _parse(visible_html(page))
    lists: list[list[str]] = [[]]  # the tables' vendor column, then each vendor select
    column: int | None = None
    for row in parser.rows:
        if row and all(tag == "th" for tag, _ in row):
            column = next((i for i, (_, text) in enumerate(row) if VENDOR_COLUMN.match(text)), None)
        elif column is not None and column < len(row):
            lists[0].append(row[column][1])
    for name, options in parser.selects.items():
        if VENDOR_SELECT.search(name):
            lists.append([re.sub(r"^\W*(choose|select)\b.*$", "", o, flags=re.IGNORECASE) for o in options])
    records: dict[str, int] = {}
    for names in lists:
        for listed, count in Counter(n for n in names if n.strip()).items():
            records[listed] = max(records.get(listed, 0), count)
    return [listed for listed, count in records.items() for _ in range(count)]


def read_record(page_url: str | None, fetch: Fetch | None) -> RecordState | None:
    """The record shown at ``page_url`` (``record_page``), as the system serves it now (None: unread)."""
    if not page_url or fetch is None:
        return None
    page = fetch(page_url)
    if page is None:
        return None
    try:
        return RecordState(page=page_url, values=record_values(page))
    except Unreadable:
        return None


def same_page(a: str, b: str) -> bool:
    """Whether two addresses are one page: scheme, host and port, path and query (not a "#" part)."""
    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme.lower(), x.netloc.lower(), x.path, x.query) == (
        y.scheme.lower(),
        y.netloc.lower(),
        y.path,
        y.query,
    )


def record_page(url: str, page_url: str | None, rules: RiskRules) -> str | None:
    """The page of the record a submission to ``url`` changes, as the worker reads it when it asks:
    the one the rules' amount look-up reads for ``url`` (``rules.changed_record``), else (no rule
    names one) the page the form sat on, ``page_url``."""
    changed = changed_record(url, rules)
    return changed.page if changed is not None else page_url


class ChangedRead(NamedTuple):
    record: RecordState | None  # the record read, where it is the one the request changes
    doubt: str | None  # why it cannot say whom the request pays (None: it can)


def changed_record_read(request: ApprovalRequest, rules: RiskRules) -> ChangedRead:
    """The record ``request`` changes as the worker read it, and why it cannot say whom the request
    pays: the one rule for every surface (``authority.request_payee``). Where the rules name the
    record the target changes (``rules.changed_record``), the record must be that page, read, and
    the request sent from it (where the page it was sent from is known; a script's request from no
    page is read as paying that record's vendor): a form on another page (any page, on any allowed
    host) that posts to a bill's pay address would otherwise show that page's vendor beside another
    bill's amount. Where no rule names one, the record is the page the form sat on, as read."""
    changed = changed_record(request.url, rules)
    record = request.record
    if changed is None:
        return ChangedRead(record, None)
    if record is not None and not same_page(record.page, changed.page):
        record = None  # another page's (a request asked before the record was read from its own page)
    if changed.unclear is not None:
        doubt = f"{changed.unclear}, so which record it changes is not clear"
    elif request.page_url and not same_page(request.page_url, changed.page):
        doubt = (
            f"the page this was sent from ({request.page_url}) is not the record it changes ({changed.page})"
        )
    elif record is None:
        doubt = f"the record it changes ({changed.page}) could not be read"
    else:
        return ChangedRead(record, None)
    return ChangedRead(record, visible(doubt))


def known_vendors(url: str, rules: RiskRules, fetch: Fetch | None) -> tuple[list[str] | None, str | None]:
    """(the vendors the target's system lists, the page read) — (None, page) when it cannot be read,
    (None, None) when the rules name no vendor list for that system."""
    page = rules.vendor_list_for(url)
    if page is None or fetch is None:
        return None, page
    target = urljoin(url, page)
    html = fetch(target)
    try:
        return (vendor_names(html) if html is not None else None), target
    except Unreadable:
        return None, target
