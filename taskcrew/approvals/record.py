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
  risk rules, every page of it: ``vendor_list``; its heading in a language ``VENDOR_WORDS`` lists),
  or the options of a vendor select, one entry a record (a page showing neither is not read:
  None), and what a form sends for each record -> its name (``vendor_records``). A payee not among
  them is a new vendor; one named like two or more of them may be a look-alike record's
  (``rules.lookalike_vendor``); a chosen option pays the record it sends, by its listed name
  (``rules.option_payee``).

What a person reads (details, table rows, vendor names) is read from the page as a person sees it
(``visibility.visible_html``): a value the page hides is not shown as the record's, and a hidden row
does not make a payee a known vendor. Form controls are read as served, hidden or not: they are
what the form sends. A page whose styles are too costly to judge is not read (None).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from html.parser import HTMLParser
from typing import NamedTuple
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit, urlunsplit

from taskcrew.approvals.rules import (
    Payee,
    RiskRules,
    changed_record,
    named_alike,
    same_name,
    sent_part,
)
from taskcrew.approvals.visible import visible
from taskcrew.tools.documents.models import Unreadable
from taskcrew.tools.documents.visibility import closed_tail, visible_html
from taskcrew.tools.human import ApprovalRequest, RecordState

Fetch = Callable[[str], str | None]
# The words that say a vendor list, by language, each line words apart: its column of names
# ("Lieferant", "Nom du fournisseur", "取引先名"), its vendor select, the page itself
# (``_names_vendors``). The one list; a word is compared as ``_heading`` reads it (case, accents and
# punctuation aside).
VENDOR_WORDS = (
    "vendor vendors supplier suppliers payee payees beneficiary beneficiaries creditor creditors",
    "lieferant lieferanten kreditor kreditoren zahlungsempfänger",  # de
    "fournisseur fournisseurs bénéficiaire bénéficiaires créancier créanciers",  # fr
    "proveedor proveedores beneficiario beneficiarios acreedor acreedores",  # es
    "fornitore fornitori beneficiari creditore creditori fornecedor fornecedores",  # it, pt
    "leverancier leveranciers crediteur crediteuren begunstigde",  # nl
    "leverantör leverantörer leverantörs leverandør leverandører",  # sv, da, no
    "toimittaja toimittajat toimittajan",  # fi
    "取引先 仕入先 仕入れ先 支払先 業者 ベンダー サプライヤー 供应商 供應商",  # ja, zh
)
NAME_WORDS = ("name names nom nombre nome naam namn navn nimi 名 名称",)  # "Vendor name", "取引先名"
LINK_WORDS = ("of the du de des d del der van di dei della do da la le el",)  # "Nom du fournisseur"
COMPANY_NAMES = (  # a heading of names that says not whose, as NAME_WORDS alone do ("Name")
    "company",
    "company name",
    "firma",
    "firmenname",
    "société",
    "raison sociale",
    "empresa",
    "razón social",
    "ragione sociale",
    "bedrijfsnaam",
    "会社名",
    "名前",
)


def _heading(text: str) -> str:
    """A heading or name as vendor words are compared: compatibility forms folded (NFKC), case and
    accents aside, each run of punctuation (a ":", a sort arrow, "*", "_") one space."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def _any(*lines: str, phrases: tuple[str, ...] = ()) -> str:
    """A regex of any of the words of ``lines`` or of ``phrases``, as ``_heading`` reads them."""
    said = {_heading(w) for w in " ".join(lines).split()} | {_heading(p) for p in phrases}
    return "|".join(re.escape(w) for w in sorted(said, key=len, reverse=True))


_NAME = _any(*NAME_WORDS)
VENDOR_COLUMN = re.compile(
    rf"(?:(?:{_NAME}) (?:(?:{_any(*LINK_WORDS)}) )*)?(?:{_any(*VENDOR_WORDS)})(?: ?(?:{_NAME}))?"
)
"""A heading of a vendor list's column of names (fullmatch, as ``_heading`` reads it): "Vendor",
"Supplier name", "Lieferant", "Lieferantenname", "Nom du fournisseur", "Leverancier", "取引先名"."""
NAME_COLUMN = re.compile(_any(*NAME_WORDS, phrases=COMPANY_NAMES))
"""A heading of names that does not say whose (fullmatch): "Name", "Nom", "Nombre", "Company name" —
the vendors' only where it is the one in its header row, on a page that says it lists vendors."""
VENDOR_SELECT = re.compile(_any(*VENDOR_WORDS))  # searched in a select's name (``_heading``): "supplier_id"
NUMBER_COLUMN = re.compile(r"^\s*((vendor|supplier)\s+)?(no\.?|nr\.?|#|id|number)\s*$", re.IGNORECASE)
TITLES = ("title", "h1", "h2", "caption")
SKIPPED_INPUTS = {"hidden", "password", "submit", "button", "reset", "image", "file"}
MAX_VALUES = 60


def _squash(text: str) -> str:
    return " ".join(text.split())


class _PageParser(HTMLParser):
    """One pass over a page: details lists, table rows, form controls, select options."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pairs: list[tuple[str, str]] = []  # (label, value) as a person reads them
        self.pair_links: list[str] = []  # each pair's value's first link ("": none)
        self.controls: list[tuple[str, str]] = []  # (field name, value as served)
        self.rows: list[list[tuple[str, str]]] = []  # table rows: (cell tag, text)
        self.row_tables: list[int] = []  # each row's table (a number per <table>, 0: none)
        self.row_links: list[list[str]] = []  # each row's cells' first link ("": none)
        self.selects: dict[str, list[tuple[str, str]]] = {}  # select name -> (option label, value)
        self.labels: dict[str, str] = {}  # control id -> label text
        self.titles: list[str] = []  # what the page says it is: its title, headings, tables' captions
        self._title: list[str] | None = None
        self._ids: dict[str, str] = {}  # control id -> field name
        self._text: list[str] | None = None
        self._cell: str | None = None
        self._row: list[tuple[str, str]] | None = None
        self._dt: str | None = None
        self._label_for: str | None = None
        self._tables: list[int] = []  # the open tables, innermost last
        self._table_count = 0
        self._links: list[str] = []  # the open row's cells' links
        self._href: str | None = None  # the open cell's first link
        self._dd_href: str | None = None  # the open <dd>'s first link
        self._select: tuple[str, list[tuple[str, bool, str]]] | None = None
        self._option: tuple[str, bool] | None = None
        self._textarea: str | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "style", "template"):
            self._skip += 1
        elif tag in TITLES:
            self._title = []
        elif tag in ("dt", "dd", "th", "td", "label", "option", "textarea"):
            self._text = []
            if tag in ("th", "td"):
                self._cell, self._href = tag, ""
            if tag == "dd":
                self._dd_href = ""
            if tag == "label":
                self._label_for = a.get("for")
            if tag == "option":
                self._option = (a.get("value", ""), "selected" in a)
            if tag == "textarea":
                self._textarea = a.get("name", "")
                self._ids[a.get("id", "")] = self._textarea
        elif tag == "tr":
            self._row, self._links = [], []
        elif tag == "table":
            self._table_count += 1
            self._tables.append(self._table_count)
        elif tag == "a" and "" in (self._href, self._dd_href):  # a record's link, not a script's
            href = a.get("href", "").strip()
            href = "" if href.startswith("#") or href.lower().startswith("javascript:") else href
            self._href = href if self._href == "" else self._href
            self._dd_href = href if self._dd_href == "" else self._dd_href
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
        if tag in TITLES and self._title is not None:
            self.titles.append(_squash("".join(self._title)))
            self._title = None
        elif tag == "table" and self._tables:
            self._tables.pop()
        elif tag == "dt":
            self._dt, self._text = text, None
        elif tag == "dd" and self._dt is not None:
            self.pairs.append((self._dt, text))
            self.pair_links.append(self._dd_href or "")
            self._dt, self._text, self._dd_href = None, None, None
        elif tag in ("th", "td") and self._row is not None:
            self._row.append((tag, text))
            self._links.append(self._href or "")
            self._text, self._cell, self._href = None, None, None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self.row_tables.append(self._tables[-1] if self._tables else 0)
            self.row_links.append(self._links)
            if len(self._row) == 2 and self._row[0][0] == "th" and self._row[1][0] == "td":
                self.pairs.append((self._row[0][1], self._row[1][1]))
                self.pair_links.append(self._links[1])
            self._row = None
        elif tag == "label":
            if self._label_for:
                self.labels[self._label_for] = text
            self._text, self._label_for = None, None
        elif tag == "option" and self._select is not None and self._option is not None:
            value, selected = self._option
            self._select[1].append((text or value, selected, value))
            self._text, self._option = None, None
        elif tag == "select" and self._select is not None:
            name, options = self._select
            self.selects[name] = [(label, value) for label, _, value in options]
            chosen = [label for label, selected, _ in options if selected]
            self.controls.append((name, chosen[0] if chosen else ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self.controls.append((self._textarea, "".join(self._text or []).strip()))
            self._text, self._textarea = None, None

    def handle_data(self, data: str) -> None:
        if not self._skip and self._text is not None:
            self._text.append(data)
        if not self._skip and self._title is not None:
            self._title.append(data)


def _parse(page: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(closed_tail(page))
    parser.close()
    return parser


def record_values(page: str) -> dict[str, str]:
    """label -> value of what a page shows of one record, and name -> served value of its form's
    controls (a person's label of a control is kept beside it: "IBAN (iban)"). Raises
    ``Unreadable`` when the page's styles are too costly to judge what it shows."""
    return _record_read(page)[0]


def _record_read(page: str) -> tuple[dict[str, str], dict[str, str]]:
    """``record_values``, and label -> the first link in the value shown under that label (a bill's
    vendor linked to its record, "/vendors/10": which record it is, whatever it is called)."""
    seen = _parse(visible_html(page))
    out: dict[str, str] = {}
    links: dict[str, str] = {}
    for (label, value), link in zip(seen.pairs, seen.pair_links, strict=True):
        if label and label not in out:
            out[label] = value
            if link:
                links[label] = link
    if out:  # a page showing the record: its forms are actions on it, their values suggestions
        kept = dict(list(out.items())[:MAX_VALUES])
        return kept, {label: link for label, link in links.items() if label in kept}
    parser = _parse(page)  # the controls as served: what the form sends, seen or not
    names = {name: parser.labels.get(cid, "") for cid, name in parser._ids.items() if cid}
    for name, value in parser.controls:
        if value.strip():
            label = names.get(name, "")
            out[f"{label} ({name})" if label else name] = value.strip()
    return dict(list(out.items())[:MAX_VALUES]), {}


class _Listed(NamedTuple):
    """One entry of a vendor list: its name, what tells its record from another in its list
    (``vendor_names``), and what a form sends for it (``vendor_records``)."""

    name: str
    record: tuple[str, ...]
    number: str  # an option's value ("" none): what a vendor select sends for the record
    links: tuple[str, ...]  # a row's links to its record: its vendor cell's, else its cells'
    shown: str = ""  # a row's number cell ("#", "No."): shown, never known to be what a form sends


def _vendor_column(row: list[tuple[str, str]], names: bool) -> int | None:
    """Which cell of a header row heads the vendors' names: one a vendor heading reads
    (``VENDOR_COLUMN``), else, where ``names`` (a page that says it lists vendors, holding no vendor
    heading or select), the one heading of names (``NAME_COLUMN``: "Name", "Nom")."""
    headings = [("" if NUMBER_COLUMN.match(text) else _heading(text)) for _, text in row]
    found = [i for i, text in enumerate(headings) if VENDOR_COLUMN.fullmatch(text)]
    if not found and names:
        found = [i for i, text in enumerate(headings) if NAME_COLUMN.fullmatch(text)]
        found = found if len(found) == 1 else []
    return found[0] if found else None


def _names_vendors(parser: _PageParser, url: str) -> bool:
    """The page says it lists vendors: its address (path and query) or its title, a heading or a
    table's caption holds a vendor word (``VENDOR_WORDS``: "/vendors", "Lieferanten", "取引先一覧")."""
    where = urlsplit(url)
    said = [unquote(where.path), unquote(where.query), *parser.titles]
    return any(VENDOR_SELECT.search(_heading(text)) for text in said)


def _vendor_lists(page: str, url: str = "") -> list[list[_Listed]] | None:
    """The vendor lists a page shows: the vendor column of each table, the options of each vendor
    select; None when it shows none (no heading reads as a vendor column, no select as a vendor
    select: ``_vendor_column``) — a list not read, never a list of no vendor. A column of names
    headed "Name" is the vendors' on a page that says it lists vendors (``url``, its title) and
    shows no other vendor heading or select. A record is known by its key: an option's value; a
    row's link to the record (its vendor cell's, else its links) and its number (a "No." or "ID"
    column: it tells rows apart, never what a form sends, ``vendor_records``), else the whole row. Raises ``Unreadable`` when the page's styles are too costly to
    judge what it shows."""
    parser = _parse(visible_html(page))
    selects: dict[tuple[str, object], list[_Listed]] = {}
    for name, options in parser.selects.items():
        if VENDOR_SELECT.search(_heading(name)):
            selects[("select", name)] = [
                _Listed(
                    re.sub(r"^\W*(choose|select)\b.*$", "", label, flags=re.IGNORECASE),
                    (value or label,),
                    value or label,
                    (),
                )
                for label, value in options
            ]
    heads = [row for row in parser.rows if row and all(tag == "th" for tag, _ in row)]
    names = not selects and not any(_vendor_column(row, False) is not None for row in heads)
    names = names and _names_vendors(parser, url)
    lists: dict[tuple[str, object], list[_Listed]] = {}
    column: int | None = None  # the vendor column, as the last header row says (one a table or not)
    number: int | None = None
    for row, table, links in zip(parser.rows, parser.row_tables, parser.row_links, strict=True):
        if row and all(tag == "th" for tag, _ in row):
            column = _vendor_column(row, names)
            number = next((i for i, (_, text) in enumerate(row) if NUMBER_COLUMN.match(text)), None)
            if column is not None:
                lists.setdefault(("table", table), [])
        elif column is not None and column < len(row):
            linked = (links[column],) if links[column] else tuple(link for link in links if link)
            key = (" ".join(linked), row[number][1] if number is not None and number < len(row) else "")
            whole = tuple(text for _, text in row)
            entry = _Listed(row[column][1], key if any(key) else whole, "", linked, key[1])
            lists.setdefault(("table", table), []).append(entry)
    lists.update(selects)
    if not lists:
        return None
    return [[entry for entry in entries if entry.name.strip()] for entries in lists.values()]


def vendor_names(page: str, url: str = "") -> list[str] | None:
    """The vendors a page shows (``_vendor_lists``; None: it shows no vendor list), one entry a
    record. Each table and each vendor select is a list of its own, and a name counts as many
    records as the most keys any one list shows it with: a name shown twice with two keys is two
    records ("Northwind Traders" and one added as "Northwind  Traders", drawn alike:
    ``rules.lookalike_vendor``), while one record shown twice — a supplier's two site rows, a
    "Recently paid" table above "All vendors", a "Recent" group of a drop-down above "All" — or a
    table and a select of the same vendors count it once. Raises ``Unreadable`` when the page's
    styles are too costly to judge what it shows."""
    lists = _vendor_lists(page, url)
    return None if lists is None else _names(lists)


def _names(lists: list[list[_Listed]]) -> list[str]:
    records: dict[str, int] = {}
    for entries in lists:
        keys: dict[str, set[tuple[str, ...]]] = {}
        for entry in entries:
            keys.setdefault(entry.name, set()).add(entry.record)
        for listed, distinct in keys.items():
            records[listed] = max(records.get(listed, 0), len(distinct))
    return [listed for listed, count in records.items() for _ in range(count)]


def _segments(path: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """A path's segments, each as its value and its ";" parameters (name, value) but those whose
    name says how the page was served (``_served_name``: ";jsessionid=…"), as a query's values are
    kept: ";v=2", ";vendor_id=<uuid>" may be the record. Names and values unescaped ("%3B" is a
    value's ";", never a parameter's start); an empty segment stays, a place of its own."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    for seg in path.split("/"):
        value, *params = seg.split(";")
        said = [tuple(unquote(part) for part in param.partition("=")[::2]) for param in params]
        out.append((unquote(value), [(n, v) for n, v in said if not _served_name(n)]))
    return out


def _link_places(links: tuple[str, ...]) -> dict[tuple[int, str], str]:
    """The places of a row's links and what each holds: each link's path segments by position, each
    segment's ";" parameters by position and name (``_segments``: a served name's cut), its query's
    values by name ("/bills?vendor=3": (0, "/1") holds "bills", (0, "?vendor") holds "3";
    "/vendors/3;v=2": (0, "/2;v") holds "2"); a "#" part is no part of any place."""
    places: dict[tuple[int, str], str] = {}
    for i, link in enumerate(links):
        parts = urlsplit(link)
        for n, (value, params) in enumerate(_segments(parts.path)):
            places.update({(i, f"/{n}"): value} if value else {})
            places.update(_named(i, f"/{n};", params))
        places.update(_named(i, "?", parse_qsl(parts.query, keep_blank_values=True)))
    return places


def _named(i: int, at: str, pairs: list[tuple[str, str]]) -> dict[tuple[int, str], str]:
    """Named values as places: a name's first value at ``at`` + name, a name given again each value
    a place of its own ("?v=a&v=b": "?v" and "?v#2"), never one value hiding another."""
    places: dict[tuple[int, str], str] = {}
    for name, value in pairs:
        place, k = f"{at}{name}", 1
        while (i, place if k == 1 else f"{place}#{k}") in places:
            k += 1
        places[(i, place if k == 1 else f"{place}#{k}")] = value
    return places


PAGE_PARAMS = re.compile(r"p|pg|page|page[_-]?(no|num|number|index)|pagenum|offset|start|skip|cursor|after")


# The names of query parameters that say how a page was served, never which record it shows: a time
# stamp, a nonce or random number, a cache-buster, a session, a tracker, a return address, a tab, a
# sort, a language, a pager ("_t", "ts", "_", "nonce", "cb", "jsessionid", "sessionId",
# "cache-buster", "utm_source", "returnUrl", "page"), read in lower case with "-" as "_". A short
# name that may as well be a record's ("t", "s", "v", "p", "sid", "id") is none of them.
SERVED_NAMES = re.compile(
    r"_+|_t|_ts|_dc|ts|tstamp|time_?stamp|nonce|rnd|rand|random|cb|cache_?buster|no_?cache"
    r"|j?session_?id|phpsessid|aspsessionid\w*|cfid|cftoken|csrf(_?token)?|xsrf(_?token)?"
    r"|utm_\w+|gclid|fbclid|msclkid|back|back_?url|return|return_?to|return_?url|redirect(_?(to|url))?"
    r"|tab|sort|sort_?by|sort_?dir|order_?by|lang|locale"
    r"|page|pg|page_?(no|num|number|index|size)|per_?page|offset|cursor"
)


def _served_name(name: str) -> bool:
    """A query parameter's name says how the page was served (``SERVED_NAMES``: "sessionId")."""
    return bool(SERVED_NAMES.fullmatch(name.casefold().replace("-", "_")))


def record_link(link: str) -> str:
    """Which record ``link`` (absolute) names: the one way a link is compared (``payee_record``):
    its host, its path's segments as the vendor list's rows are read (``_segments``), with every
    ";" parameter but those whose name says how the page was served, no empty segment, no trailing
    slash, never its "#" part but a single-page application's route (``_route``: read as a path and
    query are), and every value of its query but those whose name says so
    (``_served_name``: a time, a nonce, a session, a cache-buster, a return address, a tab, a sort,
    a pager). A value is never dropped for how it looks (a UUID, an account number, a time) nor for
    what else the link holds: "/vendor.php?v=10&_t=1765085412" is "/vendor.php?v=10",
    "/vendors/10;jsessionid=…?back=/bills/5&_t=…" is "/vendors/10", while "?v=10" and "?v=11",
    "?org_id=1&vendor_id=<one uuid>" and "…=<another>", "?sid=10" and "?sid=11", "/vendors/7;v=1" and
    "/vendors/7;v=2" stay two records (the safe side: two links that may be two records stay two).
    One record linked in two forms is one record (parameters and query values in any order); a
    link read again is read the same."""
    parts = urlsplit(link)
    path, query = _place(parts.path, parts.query)
    route = ""
    if (fragment := _route(parts.fragment)) is not None:
        route_path, _, route_query = fragment.partition("?")
        route = "#" + "?".join(filter(None, _place(route_path, route_query)))
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, query, "")) + route


def _place(path: str, query: str) -> tuple[str, str]:
    """A path and a query as ``record_link`` compares them: each segment with its ";" parameters but
    the served ones (``_segments``), no empty segment; the query's values but the served ones, both
    in one order, escaped alike."""
    segments = [
        quote(value, safe="")
        + "".join(f";{quote(n, safe='')}={quote(v, safe='')}" for n, v in sorted(params))
        for value, params in _segments(path)
        if value or params
    ]
    kept = [(n, v) for n, v in parse_qsl(query, keep_blank_values=True) if not _served_name(n)]
    return "/" + "/".join(segments), "&".join(
        f"{quote(n, safe='')}={quote(v, safe='')}" for n, v in sorted(kept)
    )


def _route(fragment: str) -> str | None:
    """A "#" part that is a page's route, not a place on it: a single-page application's "#/vendors/10"
    or "#!/vendors/10" names the record as a path does, so it is read as one (``record_link``); "#top",
    "#details" are places on one page and are no part of which record it is."""
    for lead in ("/", "!/"):
        if fragment.startswith(lead):
            return fragment[len(lead) - 1 :]
    return None


def payee_record(payee: Payee, request: ApprovalRequest) -> str | None:
    """Which vendor record ``payee`` (``authority.request_payee``) is, where the system shows it, in
    one form whichever way it was read, so one record read another way is not another payee: the
    link in the record's payee value (a bill's vendor linked to "/vendors/10", read as the record it
    names: ``record_link``), the option value a chosen payee field sends, else the records of the
    vendor list read (``request.vendor_records``: an option's value, the number in a row's link)
    named like it (``rules.named_alike``) — none, one, or several (then the payee is unclear). A
    link or a value sent that is one of the listed records named like the payee (the link on the
    list's host differing from the list's own address only in one of their keys, ``_listed_key``:
    "/vendors/10" beside "/vendors") is said as that record of the list ("vendor record 10 listed at
    …/vendors"), as the list alone says it; a link or value the list does not name is said as read
    ("vendor record …/vendors/initech?org_id=10", "vendor record 10 as sent"). Records named alike
    stay apart: the link or value says which one. None: the system showed no record for it."""
    fields = {name for name, _ in payee.fields}
    where = f" listed at {request.vendors_page}" if request.vendors_page else ""
    listed = [
        key
        for key, name in (request.vendor_records or {}).items()
        if name and any(named_alike(n, name) for n in payee.names)
    ]
    record = request.record
    if payee.from_record and record is not None:
        labels = {label.replace(" ", "_"): label for label in record.links}
        if links := list(dict.fromkeys(record_link(record.links[labels[n]]) for n in fields if n in labels)):
            keys = [_listed_key(link, listed, request.vendors_page) for link in links]
            if all(keys):
                return _records([key for key in keys if key], where)
            return "vendor record " + " and ".join(links)
    if sent := list(
        dict.fromkeys(sent_part(f.value, f.label) for f in request.fields if f.label and f.name in fields)
    ):
        if all(key in listed for key in sent):
            return _records(sent, where)
        return "vendor record " + " and ".join(sent) + " as sent"
    if not request.vendor_records or not payee.names:
        return None
    return _records(listed, where) if listed else f"no vendor record{where}"


def _records(keys: list[str], where: str) -> str:
    keys = sorted(set(keys))
    return ("vendor record " if len(keys) == 1 else "vendor records ") + " and ".join(keys) + where


def _listed_key(link: str, listed: list[str], vendors_page: str | None) -> str | None:
    """The key of ``listed`` (records of the vendor list at ``vendors_page``) that ``link`` (read by
    ``record_link``), on the list's host, names: a link is a listed record only where its key is
    the one place of it (``_link_places``) that is not as the list's own address has it — the one
    address every record of the list shares, so nothing it holds tells records apart. "/vendors/10"
    beside the list "/vendors" names key 10. Every other place may tell records apart (a slug: the
    twin "/vendors/lnitech?org_id=10" of "/vendors/initech?org_id=10"; an org: "/orgs/10/vendors/
    initech"; a view, an "edit", a ";v=2"; a UUID): None, the link is said as read, so a bill moved
    to a record told apart only there is another payee."""
    if vendors_page is None or urlsplit(link).netloc != urlsplit(vendors_page).netloc.lower():
        return None
    own = _link_places((record_link(vendors_page),))
    differ = [value for place, value in _link_places((link,)).items() if own.get(place) != value]
    return differ[0] if len(differ) == 1 and differ[0] in listed else None


def vendor_records(lists: list[list[_Listed]]) -> dict[str, str]:
    """What a form sends for each vendor record the lists show -> its name as listed: a vendor
    select's option values, and what the rows' links to their records hold in a place that names
    one vendor whatever it holds (the record's number in "/bills?vendor=3" or "/vendors/3/edit";
    never "bills", which every row's link holds, nor "?page=2", which a page's rows share). A row's
    number column ("#", "No.": 1, 2, 3 as sorted) is never a record's key: a value it shows that
    nothing else keys maps to "" (uncertain), as does a key the lists give two names — an option
    sending it pays no record anyone can name (``rules.option_payee``: the payee is unclear)."""
    names: dict[str, set[str]] = {}
    shown = {entry.shown.strip() for entries in lists for entry in entries} - {""}
    held: dict[tuple[int, str], dict[str, set[str]]] = {}  # place -> what it holds -> the names
    for entry in (entry for entries in lists for entry in entries):
        if entry.number.strip():
            names.setdefault(entry.number.strip(), set()).add(entry.name)
        for place, value in _link_places(entry.links).items():
            if value.strip():
                held.setdefault(place, {}).setdefault(value.strip(), set()).add(entry.name)
    for values in held.values():
        if all(len({same_name(n) for n in listed}) == 1 for listed in values.values()):
            for value, listed in values.items():
                names.setdefault(value, set()).update(listed)
    records = {
        key: min(listed) if len({same_name(n) for n in listed}) == 1 else "" for key, listed in names.items()
    }
    return {**dict.fromkeys(shown, ""), **records}


def read_record(page_url: str | None, fetch: Fetch | None) -> RecordState | None:
    """The record shown at ``page_url`` (``record_page``), as the system serves it now (None: unread)."""
    if not page_url or fetch is None:
        return None
    page = fetch(page_url)
    if page is None:
        return None
    try:
        values, links = _record_read(page)
    except Unreadable:
        return None
    links = {label: record_link(urljoin(page_url, link)) for label, link in links.items()}
    return RecordState(page=page_url, values=values, links=links)


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


VENDOR_PAGES = 20  # pages of a vendor list read, at most; a longer one is not read
NEXT_WORDS = re.compile(
    r"(next|weiter|suivant|n[äa]chste|siguiente|volgende)(\s+(page|seite))?|page\s+suivante"
)
NEXT_ARROWS = frozenset("»›>→")


class _NextLinks(HTMLParser):
    """The links of a page to its next page: ``rel="next"``, or a link whose text says next ("Next",
    "Next page »", "Weiter", "Suivant", "»")."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.links: list[str] = []  # every link's href, in order (a pager's: ``_pager_pages``)
        self._link: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and a.get("href"):
            self.links.append(a["href"].strip())
        if tag in ("a", "link") and a.get("href") and "next" in a.get("rel", "").lower().split():
            self.found.append(a["href"])
        elif tag == "a" and a.get("href"):
            self._link = (a["href"], [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            href, text = self._link
            said = _squash("".join(text)).casefold()
            if NEXT_WORDS.fullmatch(said.strip("".join(NEXT_ARROWS) + " ")) or said in NEXT_ARROWS:
                self.found.append(href)
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link[1].append(data)


def _page_of(url: str) -> tuple[str, str, str, str, str]:
    """A list page's address as one page (scheme, host, path, its query but a pager's, the pager's),
    its "#" part left out."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    paged = sorted((n, v) for n, v in query if PAGE_PARAMS.fullmatch(n.casefold()))
    rest = sorted(set(query) - set(paged))
    return (parts.scheme.lower(), parts.netloc.lower(), parts.path, urlencode(rest), urlencode(paged))


def _pager_pages(links: list[str], url: str) -> list[str]:
    """The other pages of the list at ``url`` its links lead to, in order: the same path with another
    page ("1 2 3", "Page 2", "Show more": "/vendors?page=2"), whatever the links say."""
    at = _page_of(url)
    pages = (urljoin(url, h).split("#")[0] for h in links if not h.lower().startswith(("#", "javascript:")))
    return [p for p in dict.fromkeys(pages) if _page_of(p)[:4] == at[:4] and _page_of(p) != at]


def _next_page(html: str, url: str, read: tuple[str, ...] = (), again: bool = False) -> str | None:
    """The page after ``url`` (its next-page links, all one page); None on the last page (a next-page
    link to the page itself, a script or a place on it: a pager's disabled "Next"); "" when the links
    disagree. With no next-page link, the first page its pager links to not ``read`` yet (numbered
    pages: "1 2 3", ``_pager_pages``); None when it leads to no page unread: never a page with a
    pager taken for the last while a page it leads to is unread. ``again``: the page is one read
    before under another address ("?page=1"): only its pager is followed."""
    parser = _NextLinks()
    parser.feed(closed_tail(html))
    parser.close()
    hrefs = [h.strip() for h in parser.found if not h.strip().startswith("#")]
    pages = {urljoin(url, h).split("#")[0] for h in hrefs if not h.lower().startswith("javascript:")}
    pages.discard(url.split("#")[0])
    if parser.found and not again:  # a next-page link, if disabled (this page itself, "#"): the last page
        return pages.pop() if len(pages) == 1 else ("" if pages else None)
    seen = {_page_of(p) for p in [*read, url]}
    return next((p for p in _pager_pages(parser.links, url) if _page_of(p) not in seen), None)


class VendorList(NamedTuple):
    """The vendor list the target's system shows (``vendor_list``)."""

    names: list[str] | None  # one entry a record (``vendor_names``); None: not read
    page: str | None  # the page read (None: the rules name none)
    records: dict[str, str] | None = None  # what a form sends for a record -> its name (``vendor_records``)


def vendor_list(url: str, rules: RiskRules, fetch: Fetch | None) -> VendorList:
    """The vendors the target's system lists, the page read, and its records by what a form sends
    for each — names None when it cannot be read, page None too when the rules name no vendor list
    for that system. A list of several pages is read whole, following its next-page links
    (``_NextLinks``), else the pages its pager links to ("1 2", "Page 2", "Show more": the same
    path with another page, ``_pager_pages``), never a page with a pager taken for the last while
    a page it leads to is unread (a page showing the rows of one read before is that page: "?page=1"
    of "/vendors"), on the list's own host, each page read by ``fetch`` (the policy's guarded read:
    ``Policy.refuse_read`` on every hop), up to ``VENDOR_PAGES``: a list that cannot be read whole
    (a page unread, a next page elsewhere, read before, or past the limit, links that disagree) is
    not read (None), never its first pages taken for the whole list."""
    page = rules.vendor_list_for(url)
    if page is None or fetch is None:
        return VendorList(None, page)
    target = urljoin(url, page)
    names: list[str] = []
    lists: list[list[_Listed]] = []
    read: list[str] = []
    shown_before: list[list[list[_Listed]]] = []
    at: str | None = target
    while at is not None:
        own = urlsplit(at)[:2] == urlsplit(target)[:2] and at not in read and len(read) < VENDOR_PAGES
        html = fetch(at) if own else None
        if html is None:
            return VendorList(None, target)
        try:
            shown = _vendor_lists(html, at)
        except Unreadable:
            shown = None
        if shown is None:  # no vendor list read on a page of it: not read, never "0 vendors"
            return VendorList(None, target)
        again = shown in shown_before  # a page read before under another address ("?page=1")
        if not again:
            names, lists = names + _names(shown), lists + shown  # each page's records its own
        shown_before.append(shown)
        read.append(at)
        at = _next_page(html, at, tuple(read), again)
        if at == "":
            return VendorList(None, target)
    return VendorList(names, target, vendor_records(lists))
