"""Risk rules for approvals, in code and configuration (``rules.yaml``), for every surface:

- an amount above its currency's threshold needs a second, different approver;
- a change of bank details is always flagged;
- paying an existing record (``/bills/<id>/pay``) is judged by the record's amount, read from its
  page by the worker when the form does not carry it;
- per-path and per-field rules; bulk approval only for identical low-risk items;
- a target's path is read one way for every rule (``target_path``: its canonical form and every
  reading a server may route on): deny and flag rules match any reading, allow rules (auto-approval,
  the policy's exemptions) only a plain path as sent; a path read otherwise is "unclear_target";
- a value that hides characters from its reader (bidi controls, zero-width and other format
  characters, long runs of odd spaces: ``approvals.visible``) is flagged; a symbol out of place
  ("INV-🔥2057", "−" for "-") only in an identifier, not in free text (``prose_field``: "250 m²");
- field names are matched on their words too (``field_matches``: "invoiceAmount", "invoice-total",
  "lines[0].amount" read as "invoice_amount", "invoice_total", "lines_0_amount"); a value shaped
  like money above the threshold is flagged whatever its field is called;
- a name or value the browser guard could not read exactly from a request's body (``NOT_EXACT``)
  is flagged "unread_body", to be checked by hand by a second person;
- ``read_money``: a submission's amounts and currency, for the rules and for every surface that
  shows them (a currency that cannot be read is flagged, never guessed); an amount is read only in
  the digits 0-9, with no letter but a currency code (``unreadable_amount``: "৪00.00" or
  "ا 4 001.00" is unreadable, for a second person); one amount sent more than once with different
  values ("amount=950.00 … amount=4950.00", a money-shaped "price" twice) is flagged
  "unclear_amount", any other field sent twice with different values "repeated_field" (one rule:
  ``repeated``; a declared list "[]", a multi-choice control's options and a checkbox group's
  values, none money, are read whole); line items sent by plain repeated names, row after row, are
  rows (``line_items``): each shown, their sum judged by the threshold, a total beside them that is
  not their sum "unclear_amount"; the headline amount every surface shows is the largest sent
  (``headline``), and differently named amounts that differ and do not add up (net + tax = total)
  are each shown, "unclear_amount";
- the target's query pairs are judged as fields by every rule ("amount (in the address)":
  ``query_fields``);
- ``read_payee``, ``new_vendor`` and ``lookalike_vendor``: whom a submission pays (the field that
  picks the vendor; an unclear payee when fields disagree), whether the target system lists it, and
  whether it lists more than one record named so ("NORTHWIND TRADERS", "lnitech" or "Northwind
  Traders Ltd" beside the real vendor: ``routines.models.name_key``, the replay's comparison too),
  for the authority's flags (``authority.shown_flags``) and for every surface that shows the payee;
- which fields (named exactly, per system) are left out of the approval key;
- who may submit with ``--auto-approve``, for which targets.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import itertools
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from taskcrew.approvals.key import target
from taskcrew.approvals.visible import (
    QUOTE_LIMIT,
    Shown,
    ShownText,
    bare,
    cut_shown,
    cut_value,
    hidden,
    quoted,
    shown,
    visible,
)
from taskcrew.routines.models import name_key, other_entities
from taskcrew.tools import ap
from taskcrew.tools.ap import SIGN_CURRENCY, signs_pattern
from taskcrew.yamlfile import DuplicateKeyError, load_yaml, normalised_keys

DEFAULT_RULES = Path(__file__).with_name("rules.yaml")
# How the browser guard's body parser (tools/browser/network.py) starts a name or value it could not
# read exactly as the system will ("(not read exactly: REASON) what it could read"); ``assess``
# flags it, to be checked by hand (a text that starts so is sent with "(text) " before it).
NOT_EXACT = "(not read exactly: "
ENV_RULES = ("TASKCREW_RISK_RULES", "TASKCREW_CONSOLE_RISK_RULES")


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{(parts.hostname or '').lower()}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


# ---- target paths: one canonical form, and every reading a server may route on ------------------
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
READINGS_MAX = 256  # a path with more readings than this is "unclear" and matched as every rule


def _dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 on an absolute path: "." and ".." segments resolved; "//" and a trailing "/"
    are kept (servers differ on them)."""
    segments = (path if path.startswith("/") else "/" + path).split("/")[1:]
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment in (".", ".."):
            if segment == ".." and out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def canonical_path(path: str) -> str:
    """The one canonical form of a target's path (RFC 3986 6.2.2): an escape of an unreserved
    character decoded ("%2D" -> "-", "%70" -> "p"), the other escapes in upper case, dot segments
    resolved, "" read as "/". Case, ";params", "//" and a trailing "/" are kept as sent: servers
    differ on them (``target_path``)."""

    def escape(found: re.Match[str]) -> str:
        char = chr(int(found.group(1), 16))
        return char if char in _UNRESERVED else "%" + found.group(1).upper()

    return _dot_segments(_ESCAPE.sub(escape, path or "/"))


_READS: tuple[Callable[[str], str], ...] = (
    canonical_path,
    lambda p: unquote(p, errors="replace"),  # a server that decodes every escape (again)
    lambda p: re.sub(r";[^/]*", "", p),  # Tomcat, Jetty, Spring drop ";params" from each segment
    lambda p: re.split(r"[?#]", p, maxsplit=1)[0],  # a decoded "?" or "#" read as the path's end
    lambda p: p.replace("\\", "/"),  # IIS, some proxies
    lambda p: re.sub(r"/{2,}", "/", p),  # nginx merge_slashes, most routers
    _dot_segments,
    lambda p: p.rstrip("/") or "/",  # Express, Spring < 6, Rails: "/pay/" routed as "/pay"
)


class TargetPath(BaseModel):
    """A target URL's path as sent, its canonical form and every reading a server may route it on
    (percent-decoded once or more, ";params" dropped, cut at a decoded "?", backslashes and "//"
    as "/", dot segments resolved, a trailing "/" dropped, in any combination)."""

    model_config = ConfigDict(frozen=True)

    sent: str
    canonical: str
    readings: tuple[str, ...] = Field(description="the canonical form first")
    complete: bool = Field(default=True, description="False: more readings than READINGS_MAX")

    @property
    def plain(self) -> bool:
        """Read one way only: as sent (no escape, ";", "//", dot segment, backslash, trailing "/")."""
        return self.complete and self.readings == (self.sent,)

    def ends(self) -> list[str]:
        """The readings no further step changes (what a server finally routes on), shortest first."""
        return sorted((r for r in self.readings if all(_read(step, r) == r for step in _READS)), key=len)

    def unclear(self) -> list[str]:
        """What lets a server read it otherwise than as written, in words ([]: plain)."""
        sent, why = self.sent, []
        for there, words in (
            ("%" in sent, "percent-encoded characters"),
            (";" in sent, "';' parameters"),
            ("\\" in sent, "a backslash"),
            ("//" in sent, "an empty segment ('//')"),
            (bool(re.search(r"(^|/)\.{1,2}(/|$)", sent)), "'.' or '..' segments"),
            (sent != "/" and sent.endswith("/"), "a trailing '/'"),
        ):
            if there:
                why.append(words)
        return why or ([] if self.plain else ["characters a server may read otherwise"])


def target_path(url: str) -> TargetPath:
    """``url``'s path read every way a server may route it: deny and flag rules match any reading
    (``path_flagged``), allow and exempt rules only a plain path as sent (``path_exact``). The one
    reading of paths for every rule: risk rules, auto-approval, the policy's blocked, exempt, login
    and data-changing GET paths."""
    return read_path(urlsplit(url).path)


@functools.lru_cache(maxsize=1024)
def read_path(sent: str) -> TargetPath:
    """``target_path`` of a path as sent ("" is "/")."""
    sent = sent or "/"
    canonical = canonical_path(sent)
    seen = {sent: None, canonical: None}
    todo = [sent, canonical]
    while todo and len(seen) <= READINGS_MAX:
        path = todo.pop()
        for step in _READS:
            reading = _read(step, path)
            if reading not in seen:
                seen[reading] = None
                todo.append(reading)
    readings = (canonical, *(r for r in seen if r != canonical))
    return TargetPath(sent=sent, canonical=canonical, readings=readings, complete=not todo)


def _read(step: Callable[[str], str], path: str) -> str:
    reading = step(path)
    return reading if reading.startswith("/") else "/" + reading


def path_flagged(pattern: str, target: TargetPath) -> bool:
    """A deny or flag rule (a regex, any case) matches: on any reading of the path, or on every
    path when it has too many readings to tell."""
    return not target.complete or any(re.search(pattern, r, re.IGNORECASE) for r in target.readings)


def path_exact(pattern: str, target: TargetPath) -> bool:
    """An allow rule (a regex, as written) matches: only a plain path, as it was sent."""
    return target.plain and re.search(pattern, target.sent) is not None


class RiskRulesError(ValueError):
    pass


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from exc
    return pattern


class _Rule(BaseModel):
    """A part of the rules file: a key it does not know is refused, never ignored (``path:`` for
    ``paths:``, ``two-person`` for ``two_person`` would otherwise loosen the rules without a word)."""

    model_config = ConfigDict(extra="forbid")


class PathRule(_Rule):
    path: str
    methods: list[str] = Field(default_factory=list, description="empty: every data-changing method")
    message: str
    second_approver: bool = True

    @field_validator("path")
    @classmethod
    def _valid(cls, v: str) -> str:
        return _regex(v)


class FieldRule(_Rule):
    field: str
    value: str = ".*"
    message: str
    second_approver: bool = True

    @field_validator("field", "value")
    @classmethod
    def _valid(cls, v: str) -> str:
        return _regex(v)


class AmountLookup(_Rule):
    path: str = Field(description="regex on the target's path, with named groups for `page`")
    page: str = Field(description="the record's page, e.g. /bills/{id}")
    pattern: str = Field(description="regex with a group `amount` (and optionally `currency`)")

    @field_validator("path", "pattern")
    @classmethod
    def _valid(cls, v: str) -> str:
        return _regex(v)


class ExcludedFields(_Rule):
    hosts: list[str] = Field(min_length=1, description="host:port patterns of the system")
    fields: list[str] = Field(min_length=1, description="exact field names")
    why: str


class VendorList(_Rule):
    hosts: list[str] = Field(min_length=1, description="host:port patterns of the system")
    page: str = Field(description="the page that lists the system's vendors, e.g. /vendors")


class AutoApproveRule(_Rule):
    identities: list[str] = Field(min_length=1, description="submitter name patterns ('*': anyone)")
    paths: list[str] = Field(default_factory=lambda: [".*"])
    flagged: bool = False

    @field_validator("paths")
    @classmethod
    def _valid(cls, v: list[str]) -> list[str]:
        return [_regex(p) for p in v]


class RiskRules(_Rule):
    two_person: Literal["auto", "on", "off"] = "auto"
    amount_thresholds: dict[str, Decimal]
    amount_fields: list[str]
    currency_fields: list[str]
    default_currency: str = "EUR"
    bank_fields: list[str]
    bank_change_needs_second_approver: bool = True
    flag_paths: list[str] = Field(default_factory=list)
    path_rules: list[PathRule] = Field(default_factory=list)
    field_rules: list[FieldRule] = Field(default_factory=list)
    amount_lookups: list[AmountLookup] = Field(default_factory=list)
    excluded_fields: list[ExcludedFields] = Field(default_factory=list)
    vendor_lists: list[VendorList] = Field(default_factory=list)
    auto_approve: list[AutoApproveRule] = Field(default_factory=list)
    bulk_allowed: bool = True

    @field_validator("two_person", mode="before")
    @classmethod
    def _yaml_on_off(cls, value: object) -> object:
        """YAML reads an unquoted ``on``/``off`` as true/false: what the person wrote is meant."""
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value

    @field_validator("amount_fields", "currency_fields", "bank_fields", "flag_paths")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        return [_regex(p) for p in patterns]

    @field_validator("amount_thresholds")
    @classmethod
    def _star(cls, value: dict[str, Decimal]) -> dict[str, Decimal]:
        if "*" not in value:
            raise ValueError("amount_thresholds needs a '*' entry for currencies not listed")
        return normalised_keys(value, str.upper, "currency codes are read in upper case")

    def threshold(self, currency: str) -> Decimal:
        return self.amount_thresholds.get(currency.upper(), self.amount_thresholds["*"])

    def lowest_threshold(self) -> Decimal:
        """The threshold of an amount whose currency the page alone names (``read_money``)."""
        return min(self.amount_thresholds.values())

    def excluded_for(self, url: str) -> dict[str, str]:
        """The fields left out of the key on this URL's system: name -> why."""
        host = _host(url)
        out: dict[str, str] = {}
        for rule in self.excluded_fields:
            if any(fnmatch.fnmatchcase(host, h.lower()) for h in rule.hosts):
                out.update(dict.fromkeys(rule.fields, rule.why))
        return out

    def vendor_list_for(self, url: str) -> str | None:
        """The page listing the vendors of this URL's system (None: the rules name none)."""
        host = _host(url)
        return next(
            (r.page for r in self.vendor_lists if any(fnmatch.fnmatchcase(host, h.lower()) for h in r.hosts)),
            None,
        )

    def auto_approve_rule(self, identity: str, url: str) -> AutoApproveRule | None:
        """The rule letting ``identity`` auto-approve ``url``: an allow rule, so only a plain path
        as sent matches it (``path_exact``); one a server could read otherwise is asked."""
        target = target_path(url)
        for rule in self.auto_approve:
            if any(fnmatch.fnmatchcase(identity, i) for i in rule.identities) and any(
                path_exact(p, target) for p in rule.paths
            ):
                return rule
        return None


def rules_path(path: Path | None = None) -> Path:
    """The risk rules file: ``path``, else TASKCREW_RISK_RULES (or TASKCREW_CONSOLE_RISK_RULES), else
    the packaged defaults."""
    if path is None:
        env = next((os.environ[e] for e in ENV_RULES if os.environ.get(e)), None)
        path = Path(env) if env else DEFAULT_RULES
    return path


def load_rules(path: Path | None = None) -> RiskRules:
    path = rules_path(path)
    return rules_from(_rules_bytes(path), path)


def _rules_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise RiskRulesError(f"The risk rules {path} cannot be used: {exc}") from exc


DIGEST_CHARS = 16  # the digest of the rules in force, as the signed audit log says it (hex)


def rules_digest(data: bytes) -> str:
    """The short digest of a rules file's bytes (``sha256sum`` of the file, its first characters):
    which rules judged a decision, as its signed audit entry says (``Authority.rules_digest``)."""
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


def rules_from(data: bytes, path: Path) -> RiskRules:
    """The risk rules a rules file's bytes say (``path``: where they were read, for the message)."""
    try:
        return RiskRules.model_validate(load_yaml(data.decode("utf-8")))
    except DuplicateKeyError as exc:  # YAML would keep the last silently: maybe the looser one
        first, again = exc.lines
        raise RiskRulesError(
            f"The risk rules {path} cannot be used: {exc.key}: written twice (lines {first} and {again}); "
            "only one can count. Keep one (docs/security.md lists the settings)."
        ) from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'the file'}: "
            + ("not a known setting (misspelt?)" if error["type"] == "extra_forbidden" else error["msg"])
            for error in exc.errors()
        )
        raise RiskRulesError(
            f"The risk rules {path} cannot be used: {problems}. Fix the file (docs/security.md lists the settings)."
        ) from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RiskRulesError(f"The risk rules {path} cannot be used: {exc}") from exc


class RulesInForce:
    """The risk rules in force: the rules file (``rules_path``), read on every use and validated
    again whenever its bytes changed since (their digest, ``rules_digest``: an edit that keeps the
    size and the modification time — ``cp -p``, ``touch -r``, ``rsync -t``, two writes in one tick
    — is read too; the file is small), so a running console or worker leg judges each decision by
    the rules as they are when it is made, without a restart, as it judges by the users file. Read
    at once (a file that cannot be used is said at start); one that can no longer be read or
    validated raises ``RiskRulesError`` on every use until it is fixed, never the rules read before
    it broke. ``digest``: the rules in force now; ``read``: the digest and the rules of one reading
    (what one decision reads, ``Authority.one_reading``). ``Authority.rules``. ``at_start=False``:
    not read until first used (the CLI's ``approvals``: a rejection needs no rules)."""

    def __init__(self, path: Path | None = None, *, at_start: bool = True) -> None:
        self.path = rules_path(path)
        self._read: tuple[str, RiskRules] | None = None
        if at_start:
            self.current()

    @property
    def digest(self) -> str:
        """The digest of the bytes the rules in force were read from (``rules_digest``)."""
        assert self._read is not None  # read at start
        return self._read[0]

    def current(self) -> RiskRules:
        """The rules as the file says now (``rules_from``, only when its bytes changed since read)."""
        return self.read()[1]

    def read(self) -> tuple[str, RiskRules]:
        """The file's digest and the rules it says now, of one reading (``current``): one decision
        reads both from one (``Authority.one_reading``), whatever another thread reads meanwhile."""
        data = _rules_bytes(self.path)
        digest = rules_digest(data)
        read = self._read
        if read is None or digest != read[0]:
            read = self._read = (digest, rules_from(data, self.path))  # a broken file: raises, every use
        return read


RuleName = Literal[
    "amount_above_threshold",
    "bank_details",
    "sensitive_target",
    "unreadable_amount",
    "path_rule",
    "field_rule",
    "unreadable_currency",
    "hidden_characters",
    "unclear_target",
    "unread_body",
    "ocr_value",
    "new_vendor",
    "unclear_payee",
    "unclear_amount",
    "repeated_field",
    "lookalike_vendor",
    "password_box",
]


class RiskFlag(BaseModel):
    rule: RuleName
    message: ShownText  # a ``Shown`` message (its values already shown) is kept as such
    field: str | None = None
    second_approver: bool


class Assessment(BaseModel):
    flags: list[RiskFlag] = Field(default_factory=list)

    @property
    def needs_second_approver(self) -> bool:
        return any(f.second_approver for f in self.flags)

    @property
    def low_risk(self) -> bool:
        return not self.flags


def word_name(name: str) -> str:
    """A field's name as lower-case words joined by "_": "invoiceAmount" -> "invoice_amount",
    "invoice-total" / "invoice.total" / "invoice[total]" -> "invoice_total", "IBANNumber" ->
    "iban_number"."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", spaced)
    return re.sub(r"[^0-9A-Za-z]+", "_", spaced).strip("_").lower()


ADDRESS = " (in the address)"  # a name/value pair of the target's query, judged as a field


def query_fields(url: str) -> list[tuple[str, str]]:
    """The name/value pairs of ``url``'s query, each named "NAME (in the address)": many servers
    read them as fields of the body (PHP ``$_REQUEST``, Rails ``params``, Flask
    ``request.values``), so the rules judge them as fields (``assess``)."""
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True, errors="replace")
    return [(name + ADDRESS, value) for name, value in pairs]


def with_address(fields: list[tuple[str, str]], url: str) -> list[tuple[str, str]]:
    """The fields and the target's query pairs (``query_fields``) a field does not repeat: what the
    rules judge (``assess``) and every surface reads the amount from (``read_money``)."""
    return [*fields, *(pair for pair in query_fields(url) if (field_name(pair[0]), pair[1]) not in fields)]


def field_name(name: str) -> str:
    """A field's name as sent: a query pair's without its "(in the address)"."""
    return name.removesuffix(ADDRESS)


def name_words(name: str) -> str:
    """A field's words (``word_name``) as they are meant, without a number or plural at a word's end:
    "accountNumber1", "account_numbers" -> "account_number"; "currencies2" -> "currency"; "account_nos"
    -> "account_no" ("ss", "us" stay: "address", "status")."""
    words = (re.sub(r"ies$", "y", re.sub(r"\d+$", "", word)) for word in word_name(name).split("_"))
    return "_".join(re.sub(r"(?<=.[^su])s$", "", word) for word in words if word)


def field_matches(name: str, patterns: list[str] | re.Pattern[str], *, words: bool = False) -> bool:
    """Whether a field's name matches one of the rules' patterns (regular expressions, any case),
    as it is or as its words (``word_name``): the one matcher of field names, for every caller. A
    query pair (``query_fields``) is matched by its name as sent. ``words``: by what its words mean
    too (``name_words``), as bank details and the currency are named (``bank_name``)."""
    name = field_name(name)
    names = (name, word_name(name), *([name_words(name)] if words else []))
    if isinstance(patterns, re.Pattern):
        return any(patterns.search(n) for n in names)
    return any(re.search(p, n, re.IGNORECASE) for p in patterns for n in names)


# "EUR" in "1 234,56 EUR", never a word glued to a digit ("9OOO.00" is no 9.00), and a currency sign
# of the invoice reader's one table ("Rs", "zł", "RM 1,234.50": ``ap.signs_pattern``)
_CURRENCY_WORD = re.compile(rf"{signs_pattern()}|(?<![^\W_])[A-Za-z]{{3}}(?![^\W_])")


def unreadable_amount(text: str) -> str | None:
    """Why ``text`` is no amount a person reads as the rules would (None: it may be one): a digit
    other than 0-9 ("৪00.00": a Bengali 4, drawn like an 8), a right-to-left letter ("ا 4 001.00"
    is drawn "001.00 4 ا"), or any other letter, mark or number that is not a currency code."""
    for char in _CURRENCY_WORD.sub("", ap.printed(text)):  # "1ʼ234.50": an apostrophe, as printed
        kind = unicodedata.category(char)
        if kind[0] not in "LMN" or "0" <= char <= "9":
            continue
        if kind == "Nd":
            what = "a digit other than 0-9"
        elif unicodedata.bidirectional(char) in ("R", "AL"):
            what = "a right-to-left letter, which reorders how the digits are drawn"
        else:
            what = "a letter or sign that is no currency code"
        return f"{what}: {unicodedata.name(char, 'unnamed').title()} U+{ord(char):04X}"
    return None


def parse_amount(text: str) -> Decimal | None:
    """'1.234,56', '1,234.56', '€ 1234.5', '1 234,56 EUR', 'CHF 1’234.50' → Decimal; None when it is
    no amount, or not one a person reads as the rules would: only 0-9 are digits, and no letter but a
    currency code or sign stands in it (``unreadable_amount``). Read by the invoice reader
    (``ap.parse_amount``: its signs, groupings and brackets); what it refuses as ambiguous ('1,234')
    or cannot read is read here, a grouped one as the larger reading (never under a threshold)."""
    if unreadable_amount(text) is not None:
        return None
    with contextlib.suppress(ValueError, ArithmeticError):
        return ap.parse_amount(text).value
    cleaned = re.sub(r"[^0-9,.\-]", "", text)
    if not re.search(r"[0-9]", cleaned):
        return None
    # '1,234', '12.500', '1.500.000', '1,234,567': one kind of separator, each before three digits:
    # grouped thousands, the larger reading (never under a threshold); '0,500' is a fraction
    grouped = re.fullmatch(r"-?[1-9][0-9]{0,2}([.,])[0-9]{3}(?:\1[0-9]{3})*", cleaned)
    if grouped:
        cleaned = cleaned.replace(grouped.group(1), "")
    elif cleaned.rfind(",") > cleaned.rfind("."):  # the comma is the decimal separator: 1.234,56
        whole, _, frac = cleaned.rpartition(",")
        cleaned = whole.replace(".", "").replace(",", "") + "." + frac
    else:
        cleaned = cleaned.replace(",", "")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


class ChangedRecord(BaseModel):
    """The record a target changes, as the rules name it (``changed_record``)."""

    page: str = Field(description="the record's page, as the amount look-up reads it")
    lookup: AmountLookup
    unclear: str | None = Field(default=None, description="why the target reads as more than one record")


def changed_record(url: str, rules: RiskRules) -> ChangedRecord | None:
    """The record a submission to ``url`` changes, where an ``amount_lookups`` rule names it (paying
    "/bills/BILL-7/pay" changes the record shown at "/bills/BILL-7"); None: no rule does. The rule
    matches any reading of the path (``target_path``: "/bills/BILL%2D7/pay/" is read as
    "/bills/BILL-7/pay"), in any case; a path read as more than one record is ``unclear``. The one
    reading of which record a target changes: for its amount (``look_up``), for the record the
    worker reads as the "before" and the payee (``record.record_page``), and for the authority's
    check that the payee shown is that record's (``record.changed_record_read``)."""
    target = target_path(url)
    for lookup in rules.amount_lookups:
        pages = list(dict.fromkeys(_lookup_pages(lookup, target, url)))
        if not pages:
            continue
        if len(pages) > 1 or not target.complete:
            records = ", ".join(pages[:3]) if target.complete else "too many to list"
            why = f"the target {target.sent} reads as more than one record ({records})"
            return ChangedRecord(page=pages[0], lookup=lookup, unclear=why)
        return ChangedRecord(page=pages[0], lookup=lookup)
    return None


def look_up(url: str, rules: RiskRules, fetch: Callable[[str], str | None] | None) -> dict[str, str]:
    """For a target an ``amount_lookups`` rule names: the record's amount and currency, read from
    its page (``changed_record``; {"amount", "currency", "source"}); {"unreadable": why} when it
    cannot be read (the target reads as more than one record, or the page shows no amount)."""
    changed = changed_record(url, rules)
    if changed is None:
        return {}
    if changed.unclear is not None:
        return {"unreadable": changed.unclear, "source": changed.page}
    text = fetch(changed.page) if fetch is not None else None
    hit = re.search(changed.lookup.pattern, text or "")
    if hit is None:
        return {"unreadable": f"the amount could not be read from {changed.page}", "source": changed.page}
    groups = hit.groupdict()
    return {"amount": groups["amount"], "currency": groups.get("currency") or "", "source": changed.page}


def _lookup_pages(lookup: AmountLookup, target: TargetPath, url: str) -> list[str]:
    found = (re.search(lookup.path, reading, re.IGNORECASE) for reading in target.readings)
    return [urljoin(url, lookup.page.format(**f.groupdict())) for f in found if f]


def _seen(looked_up: dict[str, str]) -> tuple[object, ...]:
    if "unreadable" in looked_up:
        return ("unreadable",)
    if "amount" not in looked_up:
        return ()
    amount = looked_up["amount"]
    return (parse_amount(amount) or amount.strip(), (looked_up.get("currency") or "").strip().upper())


def _said(looked_up: dict[str, str]) -> str:
    if "unreadable" in looked_up:
        return "unreadable"
    if "amount" not in looked_up:
        return "not read"
    return f"{looked_up['amount']} {looked_up.get('currency') or ''}".strip()


UNCLEAR = " (unclear)"  # after a payee's names in a reading (``authority.system_reading``)


def lookup_change(then: dict[str, str], now: dict[str, str]) -> str | None:
    """How what was read from the system for a request changed between two readings (the one an
    approver was shown and the one read now; ``authority.system_reading``): the record's amount and
    currency (``look_up``), and whom it pays where the system, not the bytes sent, says it
    ("payee", read from ``payee_source``, and which vendor record that is, "payee_record": a payee
    moved to another record named alike is another payee). None: all of it the same; else each
    change, said."""
    changes = []
    if _seen(then) != _seen(now):
        source = now.get("source") or then.get("source") or "the record"
        changes.append(f"the amount on {source} was {_said(then)}; it is now {_said(now)}")
    if (then.get("payee"), then.get("payee_record")) != (now.get("payee"), now.get("payee_record")):
        source = now.get("payee_source") or then.get("payee_source") or "the system"
        was, new = then.get("payee") or "not read", now.get("payee") or "not read"
        if was.removesuffix(UNCLEAR) == new.removesuffix(UNCLEAR):  # named alike: which record says it
            was, new = (
                f"{r.get('payee')}, {r.get('payee_record') or 'no vendor record known'}" for r in (then, now)
            )
        changes.append(f"the payee read from {source} was {was}; it is now {new}")
    return "; and ".join(changes) or None


def approved_when(by: str | None, then: dict[str, str], now: dict[str, str]) -> str | None:
    """Why an approval given on the reading ``then`` does not cover the system as read ``now``
    (``lookup_change``; None: it covers it): what every surface shows as "asked again"."""
    change = lookup_change(then, now)
    return None if change is None else f"{by or 'a person'} approved it when {change}"


# the signs of the invoice reader's one table (``ap.SIGN_CURRENCY``): those naming one currency read
# as it (€, £, ₹, R$, zł …; $ and ¥ are not), any as money's shape (``MONEY_SHAPE``)
_ONE_CURRENCY_SIGN = re.compile(signs_pattern(one_currency=True))
_CODE = re.compile(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])")
_SYMBOL = rf"(?:{signs_pattern()}|[A-Z]{{3}})"
IBAN_SHAPE = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}")


def iban_shaped(value: str) -> bool:
    """Whether ``value`` is an IBAN (ISO 13616: country, check digits, account; spaces allowed; its
    check digits must hold, so an invoice number or a code is not taken for one)."""
    text = re.sub(r"[\s-]", "", bare(value)).upper()
    if not IBAN_SHAPE.fullmatch(text):
        return False
    moved = text[4:] + text[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def bank_field(name: str, value: str, rules: RiskRules) -> bool:
    """Whether a field sets bank details: its name says so (``bank_fields``), or, whatever it is
    called ("account", "reference", "remit_to"), its value is an IBAN. The one test for the risk
    flag and for every page that shows bank details first."""
    return bool(value.strip()) and (bank_name(name, rules) or iban_shaped(value))


def bank_name(name: str, rules: RiskRules) -> bool:
    """Whether a field's name says it sets bank details: a word of it, as meant (``name_words``:
    "account_number2", "accountNumbers"), is one of ``bank_fields``: an account number or holder, a
    payee's account ("vendor_account", "remit_account"), an IBAN, BIC…; never a ledger account
    ("gl_acct", "account_code"). The currency fields are named so too (``currency_name``)."""
    return field_matches(name, rules.bank_fields, words=True)


def currency_name(name: str, rules: RiskRules) -> bool:
    """Whether a field's name says it is the currency (``currency_fields``), by its words as meant
    ("currency2", "currencyCodes")."""
    return field_matches(name, rules.currency_fields, words=True)


PAYEE_FIELD = re.compile(r"vendor|payee|supplier|beneficiary(?!.*(iban|account|bank))", re.IGNORECASE)
PAYEE_NAME = re.compile(r"(vendor|payee|supplier|beneficiary)(_(id|name))?")  # a field's words, whole


def same_name(text: str) -> str:
    """A vendor's name as names are compared: its letters and digits, compatibility forms folded
    and accents composed (NFKC: "e" and a combining acute, U+0301, is "é", fullwidth "ＡＢＣ" is
    "ABC", as ``models.name_key`` folds them), case folded. Letters of another script drawn alike
    are not folded (a Cyrillic "о" is another name), and the raw value is still judged for what
    it hides (``hidden_characters``) and for records drawn alike (``lookalike_vendor``)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return re.sub(r"[\W_]+", "", folded)


class Payee(BaseModel):
    """Whom a submission pays, as ``read_payee`` reads it."""

    fields: list[tuple[str, str]] = Field(
        default_factory=list, description="(field, value as shown) the payee is read from"
    )
    unclear: bool = Field(
        default=False,
        description="those fields name more than one payee, or its name more than one vendor record the "
        "system lists (``lookalike_vendor``; ``authority.request_payee``)",
    )
    from_record: bool = Field(default=False, description="read from the record the submission changes")
    doubt: str | None = Field(
        default=None,
        description="why the record cannot say whom it pays (``record.changed_record_read``), or why a "
        "chosen option's label is not the vendor it pays (``option_payee``): then unclear",
    )

    @property
    def names(self) -> list[str]:
        """The payee's names as shown, each once."""
        seen: dict[str, str] = {}
        for _, value in self.fields:
            seen.setdefault(same_name(value), value)
        return list(seen.values())


def read_payee(
    fields: list[tuple[str, str]], chosen: set[str], rules: RiskRules, known: list[str] | None = None
) -> Payee:
    """Whom a submission pays, for the rules and for every surface that shows it. ``fields``: (name,
    value as shown, a chosen option by its label); ``chosen``: the names of the chosen options;
    ``known``: the vendors the target system lists.

    The payee is the field that picks the vendor: a chosen option named like a payee, or a field
    named exactly so ("vendor", "vendor_id", "payee_name", "supplier", "beneficiary_name"); where
    there is none, every field whose name speaks of a vendor, payee, supplier or beneficiary (bank
    details aside). It is unclear when those fields name different payees, or when another field
    named like a payee holds another vendor the system lists ("supplier_reference = Northwind
    Traders" beside "vendor_id = 7 (Initrode Ltd)"): all of them are shown, and it is flagged."""
    named = [
        (n, v)
        for n, v in fields
        if v.strip() and field_matches(n, PAYEE_FIELD) and not bank_field(n, v, rules)
    ]
    picks = [(n, v) for n, v in named if n in chosen or PAYEE_NAME.fullmatch(word_name(n))]
    payee = Payee(fields=picks or named)
    others = {same_name(v) for v in known or []} - {same_name(v) for _, v in payee.fields}
    payee.fields += [(n, v) for n, v in named if (n, v) not in payee.fields and same_name(v) in others]
    payee.unclear = len(payee.names) > 1
    return payee


def option_payee(
    name: str, sent: str, label: str, records: dict[str, str] | None, page: str | None = None
) -> tuple[str, str | None] | None:
    """(whom a chosen option of a payee field pays, why its label is not that vendor) — None when
    it is no payee field (``PAYEE_FIELD``) or no vendor list with keys was read (``records``: what a
    form sends for a record -> its name as listed, read from ``page``; none read, or none keyed:
    the option is read by its label, as before). The system books the record the option sends,
    whatever the page labelled it: a page script can relabel Globex's option "Northwind Traders",
    as it can relabel a currency's (``read_money``). So it pays the listed name, and a label that
    names another vendor (``name_key`` of ``listed_name``, as look-alike records are compared) is
    said: the payee is unclear, shown and kept out of bulk approval. A value the list cannot name
    with certainty (``record.vendor_records``: a key with two names, a row's display number, or one
    it does not key at all) is unclear too: shown as sent, never read by its label."""
    if not records or not field_matches(name, PAYEE_FIELD):
        return None
    key = sent.strip()
    if key not in records and same_name(key) == same_name(label):
        return None  # it sends the name it shows: the system books that name
    listed = records.get(key, "")
    where = f" ({visible(page)})" if page else ""
    if not listed:
        return key, (
            f"{cut_value(name)} sends {cut_value(key)}, which the vendor list{where} does not name as one "
            f"record, and the page showed that option as “{cut_value(label)}” (a page can relabel an option; "
            "the system books the record sent): check in the system which vendor it is"
        )
    shown, booked = listed_name(label), listed_name(listed)
    if name_key(shown) == name_key(booked) and not other_entities(shown, booked):
        return listed, None
    return listed, (
        f"{cut_value(name)} sends {cut_value(sent)}, the record the vendor list{where} names "
        f"“{cut_value(listed)}”, but the page showed that option as “{cut_value(label)}” (a page can "
        "relabel an option; the system books the record sent)"
    )


def new_vendor(payee: Payee, url: str, known: list[str] | None, page: str | None) -> str | None:
    """Why a submission pays a new vendor (None: it does not, or nobody knows): it creates a vendor,
    or a payee it names is not among the vendors the target system listed when the worker asked
    (``known``, read from ``page``), whatever the form (a bill, a payment, a bank-details change).
    A payee is listed under its own name (``same_name``: case, spaces, punctuation aside), not one
    drawn like it ("lnitech" is a new vendor beside Initech). When the rules name a list that could
    not be read whole (``record.vendor_list``), it says so: the payee was not checked."""
    if path_flagged(r"/vendors?/(new|create)\b", target_path(url)):  # any reading of the path
        return "creates a vendor"
    listed = {same_name(v) for v in known or []}
    unknown = [f"“{cut_value(n)}”" for n in payee.names if same_name(n) not in listed]
    where = f" ({visible(page)})" if page else ""
    if known is None and page and unknown:
        return (
            f"whether {', '.join(unknown)} is a vendor the system lists was not checked: its vendor "
            f"list{where} could not be read whole; check the vendor in the system before approving"
        )
    if known is None or not unknown:
        return None
    verb = "is" if len(unknown) == 1 else "are"
    return f"{', '.join(unknown)} {verb} not among the {len(known)} vendors the system lists{where}"


# a record's number beside its name, as lists and chosen options show it: "11 (Northwind Traders)"
# (a chosen option as a submission shows it), "Northwind Traders (#11)", "11 - Northwind Traders"
_NUMBERED = (
    re.compile(r"#?\d+\s*\((?P<name>.*[^\W\d_].*)\)"),
    re.compile(r"(?P<name>.*[^\W\d_].*?)\s*\(\s*(?:id\b\s*:?\s*|#\s*)?\d+\s*\)", re.IGNORECASE),
    re.compile(r"#?\d+(?:\s+[-\u2013\u2014]\s+|\s*[:|]\s*)(?P<name>.*[^\W\d_].*)"),  # not "7-Eleven"
)


def listed_name(text: str) -> str:
    """A vendor record's name without the record's number beside it ("11 (Northwind Traders)",
    "Northwind Traders (#11)", "11 - Northwind Traders": "Northwind Traders"); any other text whole
    ("Unit 4 Supplies", "Initrode (Northwind Traders)")."""
    stripped = text.strip()
    for shape in _NUMBERED:
        if found := shape.fullmatch(stripped):
            return found.group("name").strip()
    return stripped


def named_alike(name: str, listed: str) -> bool:
    """Whether ``name`` names the vendor record a list shows as ``listed``, as look-alike records are
    compared (``lookalike_vendor``: ``models.name_key`` of ``listed_name``, two legal forms written
    plainly apart; a name of no letter or digit names no record)."""
    key = name_key(listed_name(name))
    return (
        bool(key)
        and key == name_key(listed_name(listed))
        and not other_entities(listed_name(name), listed_name(listed))
    )


def lookalike_vendor(
    payee: Payee, known: list[str] | None, page: str | None, sent: list[tuple[str, str]] | None = None
) -> str | None:
    """Why a submission may pay another vendor record than the one meant (None: it does not, or
    nobody knows): a payee it names is named like more than one record of the vendors the target
    system listed when the worker asked (``known``, read from ``page``, one entry a record), as
    names are compared (``models.name_key`` of ``listed_name``, the replay's comparison too: case,
    spaces, punctuation, a legal form, accents, letters drawn alike and a record's number beside its
    name aside): "NORTHWIND TRADERS", "Northwind  Traders", "Northvvind Traders", "Nоrthwind Traders"
    (a Cyrillic "о") or "Northwind Traders Ltd" beside Northwind Traders, "lnitech" beside Initech. A chosen option sends one record's number, and nothing a person is shown tells the
    real vendor's record from a look-alike someone added (a second employee, a vendor's own
    onboarding form), whose bills and bank details are its own. Distinct names are distinct
    vendors ("Initech" and "Initech Europe GmbH"), and so are two companies of one group whose
    legal forms, written plainly, alone tell them apart ("Siemens AG" is not named like "Siemens
    plc": ``models.other_entities``; "Siemens" is named like both). ``sent``: the submission's
    fields as sent, to show which record it picks."""
    said: list[str] = []
    for name in payee.names:
        alike = [entry for entry in known or [] if named_alike(name, entry)]
        if len(alike) > 1:
            listed = cut_shown("; ".join(f"“{cut_value(entry)}”" for entry in alike), limit=QUOTE_LIMIT)
            said.append(f"{len(alike)} are called “{cut_value(listed_name(name))}” (as listed: {listed})")
    if not said:
        return None
    where = f" the system lists ({visible(page)})" if page else " the system lists"
    picks = [(n, v) for n, v in sent or [] if any(n == f for f, _ in payee.fields)]
    it = f" ({quoted(picks)})" if picks else ""
    return (
        f"of the vendor records{where}, {', and '.join(said)}: check in the system which record this "
        f"pays{it} and that it is the vendor's own, before approving"
    )


# money's shape: cents, or the mark that closes a whole amount ("1.234,-", "Rs. 1,23,456/-", "12 345:-":
# ``ap.WHOLE_MARK``), after digits grouped in thousands (by what the invoice reader reads as grouping,
# ``ap.GROUPS``: a thin space too, "9 500,00 €") or, Indian, in lakhs ("1,23,456")
MONEY_SHAPE = re.compile(
    rf"[-+]?(?:{_SYMBOL}\s?)?[-+]?(?:\d{{1,3}}(?:[{re.escape(ap.GROUPS)}]\d{{3}})+|\d{{1,2}}(?:,\d{{2}})+,\d{{3}}|\d+)"
    rf"(?:[.,]\d{{2}}|{ap.WHOLE_MARK})(?:\s?{_SYMBOL})?"
)


def read_currency(text: str) -> str | None:
    """The currency a value names: its ISO-shaped code ("EUR", "eur", "EUR (Euro)", a select's
    "2 (GBP)": the code in the value or in its label) or an unambiguous symbol (€ £ ₹); None when
    it names none, or more than one."""
    stripped = bare(text).strip()
    if re.fullmatch(r"[A-Za-z]{3}", stripped):
        return stripped.upper()
    signs = {SIGN_CURRENCY[m.group(0)] for m in _ONE_CURRENCY_SIGN.finditer(stripped)}
    found = set(_CODE.findall(stripped)) | signs
    return found.pop() if len(found) == 1 else None


class AmountRead(BaseModel):
    field: str
    text: str = Field(description="as sent (or as read from the record's page)")
    value: Decimal | None = Field(default=None, description="None: not a readable amount")


class Money(BaseModel):
    """A submission's amounts and the currency they are in, as the rules read them."""

    amounts: list[AmountRead] = Field(default_factory=list, description="fields named as amounts")
    shaped: list[AmountRead] = Field(
        default_factory=list, description="other fields whose value is shaped like money"
    )
    currency: str = Field(default="", description="the code the thresholds apply to; '' when unreadable")
    currency_field: str | None = None
    currency_text: str = Field(default="", description="the currency field's value(s) as sent")
    limit: Decimal | None = Field(default=None, description="the threshold that applies (None: unreadable)")
    currency_label: str | None = Field(
        default=None,
        description="the chosen option's label (the page's text, not sent) that alone named the currency",
    )
    sent: list[tuple[str, str]] = Field(
        default_factory=list,
        description="the fields read (name, value): the rows and totals beside the amounts",
    )
    currency_names: list[str] = Field(default_factory=list, description="the fields read as the currency")
    bank_names: list[str] = Field(default_factory=list, description="the fields setting bank details")

    @property
    def currency_unreadable(self) -> bool:
        return self.currency_field is not None and not self.currency

    @property
    def headline(self) -> Headline | None:
        """The one amount every surface shows and judges the submission by (``headline``)."""
        return headline(self)

    @property
    def by_hand(self) -> str | None:
        """Why a person must check the amount on its own page (None: the headline is read, or no
        money is sent): the headline is no readable amount, is judged by a value read as money only
        by its shape (``Headline.shaped``: no field the rules know as an amount), or has no threshold
        (the currency is not read). Bulk approval takes no such item (``authority.bulk_refusal``)."""
        head = self.headline
        if not self.values:
            return None
        if head is None or head.value is None:
            return f"its amount {cut_value(head.text if head else '')} is not a readable amount"
        if head.shaped:
            return (
                f"its amount {cut_value(head.text)} is judged by {cut_value(head.field)}, read as money "
                "only by its shape (the rules know no field of that name as an amount)"
            )
        if self.limit is None:
            return "its currency is not read: no threshold applies to its amount"
        return None

    @property
    def values(self) -> list[AmountRead]:
        """Every money value of the request, the amounts and the money-shaped values: the one list
        the rules (``repeated``) and the origins' currency check (``origins.amount_currencies``) read."""
        return self.amounts + self.shaped

    @property
    def disagreeing(self) -> list[list[AmountRead]]:
        """The amounts sent more than once with different values (``repeated``), each as its
        differing readings (each value once, in order): one amount as a surface shows it."""
        read = {(found.field, found.text): found for found in self.amounts}
        found = [[read[pair] for pair in same if pair in read] for same in repeated(self.sent, self)]
        return [same for same in found if len(same) > 1]

    @property
    def lines(self) -> list[LineItems]:
        """The amounts sent once a row of a form's line items (``line_items``)."""
        return line_items(self.sent, self)


def repeated(
    fields: list[tuple[str, str]], money: Money, options: Sequence[bool] = ()
) -> list[list[tuple[str, str]]]:
    """The fields sent more than once with different values ([]: none), each as its differing
    pairs (each value once, in order): fields of one name, as sent or as its words ("amount"
    twice, "amount" beside "Amount", "invoice[amount]" beside "invoice.amount", a query's
    "amount (in the address)" beside the body's "amount"), that hold different values. A system
    takes one of them, often the last (Django's ``QueryDict.get``, PHP, Rails), while a page shows
    the first. A value is compared by what it means (``_meaning``): a money value (``Money.values``)
    by its amount ("950" and "950.00" are one), a currency code in any case ("eur", "EUR"), a date
    by the date it names, any other by its text. Differently named fields ("net_amount", "vat_amount"; line items
    "lines[0].amount", "lines[1].amount") are different fields; read whole, not flagged here: a list
    the form declares ("[]" in every name: "lines[][amount]", "tags[]"), an amount sent once a row
    of line items (``line_items``: its rows and their sum are judged by ``assess``), and the values
    of one control that sends several (``options``: whether each field is a chosen option or a
    ticked box, ``FieldValue.label`` / ``FieldValue.choice``) when none is money; neither the rows
    nor a set exempt a field of one value per submission (``one_value``: a date, an invoice number)."""
    amounts = {(found.field, found.text): found for found in money.values}
    rows = {at for _, places in _line_places(fields, money) for at in places}
    out: list[list[tuple[str, str]]] = []
    for same in _places(fields).values():
        names = {fields[at][0] for at in same}
        if all("[]" in name for name in names):
            continue
        if any(one_value(name, money) for name in names):
            pass  # one value per submission: judged, beside rows or as a group of boxes too
        elif rows.issuperset(same):
            continue
        elif (
            len(names) == 1
            and all(at < len(options) and options[at] for at in same)
            and not any(fields[at] in amounts for at in same)
        ):
            continue  # the values of one control that sends several, none money: a set
        values: dict[object, tuple[str, str]] = {}
        for at in reversed(same):  # the first of each value
            found = amounts.get(fields[at])
            value = found.value if found is not None and found.value is not None else None
            values[value if value is not None else _meaning(*fields[at], money)] = fields[at]
        if len(values) > 1:
            out.append(sorted(values.values(), key=fields.index))
    return out


# a field a system reads as ONE value per submission, by its name's words: a date, an invoice or
# reference number, a status (and the payee, ``PAYEE_FIELD``; bank details, ``Money.bank_names``; the
# currency, ``Money.currency_names``: each read by the rule that reads it everywhere)
ONE_VALUE_FIELD = re.compile(r"(^|_)(due|dated?|invoice|ref|reference|status)(_|$)")


def one_value(name: str, money: Money) -> bool:
    """Whether a field holds one value per submission by what it means (``ONE_VALUE_FIELD``), so
    that sending it with several values is *repeated* however it is sent: beside line items (only
    a column that says something of each row, a description, quantity, unit price or item text, is
    read as one) or as a group of options or ticked boxes. The one test for both (``repeated``)."""
    if any(found.field == name for found in money.values):
        return False  # money: an amount's rows are read as such (``line_items``)
    return (
        name in money.currency_names
        or name in money.bank_names
        or bool(PAYEE_FIELD.search(field_name(name)) or ONE_VALUE_FIELD.search(word_name(field_name(name))))
    )


def _meaning(name: str, value: str, money: Money) -> object:
    """A value other than money as ``repeated`` compares it: a currency field's code in upper case
    ("eur" is "EUR"), a whole value that is one date as the date it names ("2026-10-14", "14.10.2026",
    "14 Oct 2026": the invoice reader's ``ap.parse_date``; "04/03/2026", which may be either day or
    month first, is read as written), any other as its text."""
    text = bare(value).strip()
    if name in money.currency_names and re.fullmatch(r"[A-Za-z]{3}", text):
        return ("currency", text.upper())
    if ap.date_spans(text) == [(0, len(text))]:
        with contextlib.suppress(ValueError):  # ``ap.APInputError``: ambiguous, or no real date
            return ap.parse_date(text).value
    return text


def _places(fields: list[tuple[str, str]]) -> dict[str, list[int]]:
    """Each field name, as its words (``word_name``), -> the places it is sent at, in order; a row
    sent all empty is left out (``_blank_rows``)."""
    groups: dict[str, list[int]] = {}
    blank = _blank_rows(fields)
    for at, (name, _) in enumerate(fields):
        if at not in blank:
            groups.setdefault(word_name(field_name(name)), []).append(at)
    return groups


def _blank_rows(fields: list[tuple[str, str]]) -> set[int]:
    """The places of the rows sent all empty (a form's spare row, "description=&amount="): two or
    more empty fields one after another, each of another name, each name sent elsewhere with a
    value. Nothing is read from them: not a row, not a repeat."""
    names = [word_name(field_name(name)) for name, _ in fields]
    filled = {names[at] for at, (_, value) in enumerate(fields) if value.strip()}
    out: set[int] = set()
    run: list[int] = []
    for at in [*range(len(fields)), len(fields)]:
        empty = at < len(fields) and not fields[at][1].strip() and names[at] in filled
        if empty and names[at] not in {names[i] for i in run}:
            run.append(at)
            continue
        if len(run) > 1:
            out.update(run)
        run = [at] if empty else []
    return out


TOTAL_FIELD = re.compile(r"(^|_)(total|subtotal|gross|sum)(_|$)")  # of a name's words (``word_name``)
DEDUCTION_FIELD = re.compile(r"(^|_)(discount|rebate|credit|deduction)(_|$)")  # taken off the rows' sum


class LineItems(BaseModel):
    """One amount sent once a row of a form's line items (``line_items``)."""

    rows: list[AmountRead]
    sum: Decimal
    totals: list[AmountRead] = Field(default_factory=list, description="the totals sent once beside the rows")
    agrees: bool = Field(
        description="no total is sent, or one equals a row amount's sum (plus tax and the like)"
    )

    @property
    def text(self) -> str:
        """ "120.00 + 80.00 = 200.00", with each total sent that is not the sum ("100.00 + 200.00 =
        300.00; total = 4999.00": what the headline is judged by is always shown), or, when none
        adds up, every total in brackets."""
        said = f"{' + '.join(row.text for row in self.rows)} = {self.sum}"
        if not self.agrees:
            return f"{said} ({'; '.join(f'{t.field} = {t.text}' for t in self.totals)})"
        return "; ".join([said, *(f"{t.field} = {t.text}" for t in self.totals if t.value != self.sum)])


def _line_places(fields: list[tuple[str, str]], money: Money) -> list[tuple[list[AmountRead], set[int]]]:
    """Each amount sent once a row (``line_items``): its readings, and the places of the rows'
    fields (the amount's and each name beside it in every row)."""
    read = {(found.field, found.text): found for found in money.values}
    places = _places(fields)

    def plain(same: list[int]) -> bool:  # one name, as sent in the body, and no declared list
        names = {fields[at][0] for at in same}
        return len(names) == 1 and not any("[]" in n or n.endswith(ADDRESS) for n in names)

    def rows_of(same: list[int], other: list[int]) -> bool:  # one of each a row, in one order, row by row
        pairs = list(zip(same, other, strict=True))
        spans = [sorted(pair) for pair in pairs]
        one_order = len({a < b for a, b in pairs}) == 1
        return one_order and all(a[1] < b[0] for a, b in itertools.pairwise(spans))

    out: list[tuple[list[AmountRead], set[int]]] = []
    for word, same in places.items():
        reads = [found for at in same if (found := read.get(fields[at])) and found.value is not None]
        if len(reads) < max(2, len(same)) or not plain(same) or any((r.value or 0) < 0 for r in reads):
            continue
        beside = [
            at
            for name, other in places.items()
            if name != word and len(other) == len(same) and plain(other) and rows_of(same, other)
            if not any(fields[at] in read for at in other)
            for at in other
        ]
        if beside:
            out.append((reads, {*same, *beside}))
    return out


def line_items(fields: list[tuple[str, str]], money: Money) -> list[LineItems]:
    """The amounts a form sends once a row of its line items, by plain repeated names
    ("description=Paper&amount=120.00&description=Toner&amount=80.00&total=200.00": Django's
    ``getlist``, Go's ``r.Form``, a servlet's ``getParameterValues``), told from one amount sent
    twice by what the submission shows: the amount's name (one, as sent) is sent two or more times,
    each value a readable amount not below zero, beside another name that is no amount sent as many
    times, one of each in every row, row after row (each row's own description or quantity). Each
    row is shown and their sum is judged (``assess``): a total sent once beside them ("total",
    "subtotal", "gross", "sum" in its name) must equal the sum of one of the submission's row
    amounts, alone or with some of the other amounts sent once (net, tax, shipping; those above
    zero: ``_adds_up``, the headline's rule too; a discount, rebate or credit taken off), the rows'
    amounts together (each row's amount and its tax) or one of them; else *amounts disagree*. A row
    sent all empty (a form's spare row) is no row (``_blank_rows``)."""
    found = [
        (reads, sum((r.value or Decimal(0) for r in reads), Decimal(0)))
        for reads, _ in _line_places(fields, money)
    ]
    if not found:
        return []
    read = {(f.field, f.text): f for f in money.values}
    once = [
        read[fields[same[0]]]
        for same in _places(fields).values()
        if len(same) == 1 and fields[same[0]] in read
    ]
    totals = [f for f in once if f.value is not None and TOTAL_FIELD.search(word_name(field_name(f.field)))]
    others = [
        -f.value if DEDUCTION_FIELD.search(word_name(field_name(f.field))) else f.value
        for f in once
        if f not in totals and f.value is not None and f.value > 0
    ]
    sums = [[total] for _, total in found] + ([[total for _, total in found]] if len(found) > 1 else [])
    agrees = not totals or any(_adds_up(t.value or Decimal(0), rows, others) for t in totals for rows in sums)
    return [LineItems(rows=reads, sum=total, totals=totals, agrees=agrees) for reads, total in found]


class Headline(BaseModel):
    """The one amount a submission is shown and judged by, on every surface (``headline``)."""

    text: str = Field(description="as shown: one amount, its rows, its values, or each amount sent")
    value: Decimal | None = Field(description="what it is judged by: the largest amount (None: unreadable)")
    field: str = Field(description="the field that holds the largest (the record's: read from its page)")
    disagree: list[AmountRead] = Field(
        default_factory=list, description="each amount sent, when differently named ones differ unexplained"
    )
    shaped: bool = Field(
        default=False,
        description="judged by a value read only by its shape (``Money.shaped``: a field not named as an amount)",
    )


EXPLAIN_MAX = 12  # money values tried as the parts of the largest amount (2**12 sums); more: unexplained


def _list_key(name: str) -> str | None:
    """The list a field is one item of: declared ("amount[]", "lines[][amount]") or numbered
    ("lines[0].amount", "lines[1].amount": its words with each number as "#"); None: none."""
    words = word_name(field_name(name))
    if "[]" in name:
        return words + "[]"
    return re.sub(r"[0-9]+", "#", words) if re.search(r"[0-9]", words) else None


def headline(money: Money) -> Headline | None:
    """The amount every surface shows as the submission's "Amount" and judges it by (the worklist
    row, the decision page, bulk approval's message): never smaller than an amount it sends. Each
    amount sent (a field named as one) is read once: one amount sent with different values as its
    values ("950.00 / 4950.00", ``Money.disagreeing``), line items as their rows and sum (``line_items``,
    with the totals beside them), a list ("amount[]", "lines[0].amount", "lines[1].amount": none below
    zero) as its items and their sum, any other as sent. The headline is the largest; the system may
    book another, so when differently named amounts differ ("net=400.00 … amount=4900.00") and the
    largest is not the others' sum, alone or with other money values sent (net + tax = total,
    subtotal = total + discount; to 0.01 a part), every one is shown ("net = 400.00; amount = 4900.00")
    and ``assess`` flags it *amounts disagree* unless what is sent beside explains each (``_derived``:
    a part paid or due, a base-currency twin, a quantity, a rate): shown, not flagged. None: no amount; the record's amount the worker read for a payment
    (``look_up``) when the form sends none. A value the rules judge only by its shape (``Money.shaped``,
    or rows of them) larger than all that, or where there is none, is the headline too (``_by_shape``)."""
    sent = set(money.sent)
    named = {(a.field, a.text) for a in money.amounts}
    place: dict[tuple[str, str], int] = {}
    for at, pair in enumerate(money.sent):
        place.setdefault(pair, at)
    parts: list[tuple[int, AmountRead, bool]] = []  # (where it is sent, the amount, named as one)
    taken: set[tuple[str, str]] = set()
    words: set[str] = set()
    for same in money.disagreeing:
        words.add(word_name(field_name(same[0].field)))
        most = max((f.value for f in same if f.value is not None), key=abs, default=None)
        text = " / ".join(f.text for f in same)
        at = place.get((same[0].field, same[0].text), 0)
        parts.append((at, AmountRead(field=same[0].field, text=text, value=most), True))
    rows: set[tuple[str, str]] = set()
    for lines in money.lines:
        mine = {(r.field, r.text) for r in lines.rows}
        rows |= mine
        totals = {(t.field, t.text) for t in lines.totals}
        if (mine | totals) & named:
            taken |= mine | totals
            most = max([lines.sum, *(t.value for t in lines.totals if t.value is not None)], key=abs)
            row = lines.rows[0]
            part = AmountRead(field=row.field, text=lines.text, value=most)
            parts.append((place.get((row.field, row.text), 0), part, bool(mine & named)))
    rest = [
        a
        for a in money.amounts
        if (a.field, a.text) in sent - taken and word_name(field_name(a.field)) not in words
    ]
    lists: dict[str, list[AmountRead]] = {}
    for found in rest:
        if (key := _list_key(found.field)) is not None:
            lists.setdefault(key, []).append(found)
    once: set[tuple[str, object]] = set()  # one amount sent twice with one value ("amount", "Amount")
    for found in rest:
        items = lists.get(_list_key(found.field) or "", [])
        at = place.get((found.field, found.text), 0)
        if len(items) < 2 or not all(i.value is not None and i.value >= 0 for i in items):
            one: tuple[str, object] = (word_name(field_name(found.field)), found.value or found.text)
            if one not in once:
                once.add(one)
                parts.append((at, found, True))
        elif found is items[0]:
            total = sum((i.value or Decimal(0) for i in items), Decimal(0))
            text = f"{' + '.join(i.text for i in items)} = {total}"
            parts.append((at, AmountRead(field=found.field, text=text, value=total), True))
    if not parts:
        record = next((a for a in money.amounts if (a.field, a.text) not in sent), None)
        read = None if record is None else Headline(text=record.text, value=record.value, field=record.field)
        return _by_shape(money, read, rows | taken)
    parts.sort(key=lambda part: part[0])
    values = [(found.value, own, found) for _, found, own in parts if found.value is not None]
    largest = max(values, key=lambda v: (abs(v[0]), v[1]), default=None)  # ties: one named as an amount
    top = largest[2] if largest is not None else parts[0][1]
    head = Headline(text=top.text, value=top.value, field=top.field)
    differ = [(found, abs(value)) for value, _, found in values if value and value != top.value]
    others = [abs(f.value) for f in money.shaped if f.value and (f.field, f.text) in sent - rows - taken]
    others += [value for name, value in _money_words(money, sent - rows - taken)]
    most = abs(top.value or Decimal(0))
    if differ and not _adds_up(most, sorted({v for _, v in differ}), others):
        every = [found for _, found, _ in parts]
        head.text = "; ".join(f"{f.field} = {f.text}" for f in every)
        factors = _factors(money)
        if not all(_derived(found, value, most, factors) for found, value in differ):
            head.disagree = every
    return _by_shape(money, head, rows | taken, listed=head.text != top.text)


def _by_shape(
    money: Money, head: Headline | None, rows: set[tuple[str, str]], listed: bool = False
) -> Headline | None:
    """``head`` (the amounts named as such, or the record's), never smaller than a value the rules
    judge only by its shape (``assess``: a money-shaped "price" sent once, or rows of them and their
    sum, ``line_items``): the largest such readable value, when it is larger or there is no readable
    headline, is the headline, shown beside the amounts (``shaped``); with none readable, the first
    one sent that is not, as sent. ``rows``: the values read as rows (and the named amounts' totals);
    ``listed``: ``head.text`` names each amount's field already ("net = 400.00; amount = 4900.00")."""
    shaped = {(found.field, found.text) for found in money.shaped}
    judged = [found for found in money.shaped if (found.field, found.text) not in rows]
    for lines in money.lines:
        if {(row.field, row.text) for row in lines.rows} <= shaped:
            judged.append(AmountRead(field=lines.rows[0].field, text=lines.text, value=lines.sum))
    readable = [found for found in judged if found.value is not None]
    top = max(readable, key=lambda found: abs(found.value or Decimal(0)), default=None)
    if top is None or top.value is None:
        if head is not None or not judged:
            return head
        return Headline(text=judged[0].text, value=None, field=judged[0].field, shaped=True)
    if head is not None and head.value is not None and abs(head.value) >= abs(top.value):
        return head
    if head is None:
        return Headline(text=top.text, value=top.value, field=top.field, shaped=True)
    named = head.text if listed else f"{head.field} = {head.text}"
    text = f"{named}; {top.field} = {top.text}"
    return Headline(text=text, value=top.value, field=top.field, disagree=head.disagree, shaped=True)


# amounts named as a part of another (what is paid, due, left, paid before) or as the amount in
# another currency (the company's own: "amount_base", "base_amount", "amount_local"), by the words
PART_FIELD = re.compile(r"(^|_)(paid|due|balance|deposit|outstanding|remaining|open)(_|$)")
TWIN_FIELD = re.compile(r"(^|_)(base|local|functional|home|converted)(_|$)")
# a field sent beside the amounts that is money by its name, read by its number whatever its shape
MONEY_WORD = re.compile(
    r"(^|_)(tax|vat|gst|hst|fee|fees|shipping|freight|handling|postage|delivery|charges?|surcharge"
    r"|discount|rebate|credit|deposit|tip|duty|levy)(_|$)"
)
COUNT_FIELD = re.compile(r"(^|_)(quantity|qty|count|units|hours)(_|$)")
RATE_FIELD = re.compile(r"(^|_)(rate|percent|percentage|pct)(_|$)")
ROUNDING = Decimal("0.01")  # a part rounded on its own (VAT by line or on the total)
# a money word's, a count's or a rate's value, read by its number: in 0-9 only, as every amount
# (``unreadable_amount``: an Arabic-Indic "٤" is no count of 4 a person reads)
PLAIN_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")


def _money_words(money: Money, sent: set[tuple[str, str]]) -> list[tuple[str, Decimal]]:
    """The fields not read as money by their value that are money by name (``MONEY_WORD``: "tax=1000",
    an <input type=number>, a zero-decimal currency), by their number (not a rate)."""
    read = {(f.field, f.text) for f in money.values}
    out = []
    for name, value in money.sent:
        words = word_name(field_name(name))
        if (name, value) in read or (name, value) not in sent or RATE_FIELD.search(words):
            continue
        if MONEY_WORD.search(words) and PLAIN_NUMBER.fullmatch(value.strip()):
            out.append((name, Decimal(value.strip())))
    return out


def _factors(money: Money) -> tuple[list[Decimal], list[Decimal]]:
    """The counts (a quantity field) and the rates (a field named a rate or percent, as a fraction)
    sent, by which one amount is another's multiple (``_derived``)."""
    counts: list[Decimal] = []
    rates: list[Decimal] = []
    for name, value in money.sent:
        words = word_name(field_name(name))
        if not PLAIN_NUMBER.fullmatch(value.strip()):
            continue
        if COUNT_FIELD.search(words):
            counts.append(Decimal(value.strip()))
        elif RATE_FIELD.search(words):
            rates.append(Decimal(value.strip()) / 100)
    return counts, rates


def _derived(found: AmountRead, value: Decimal, largest: Decimal, factors: tuple[list[Decimal], ...]) -> bool:
    """Whether an amount below the largest is explained by what it is named or by what is sent beside
    it: a part of it paid, due or left (``PART_FIELD``), the amount in another currency (``TWIN_FIELD``),
    a unit amount times a quantity, or a net, tax or discounted amount at a rate sent (each to 0.01)."""
    words = word_name(field_name(found.field))
    if TWIN_FIELD.search(words) or (value < largest and PART_FIELD.search(words)):
        return True
    counts, rates = factors
    pairs = [
        *((value * c, largest) for c in counts),  # unit amount x quantity = line amount
        *((largest * r, value) for r in rates),  # the tax or discount at the rate
        *((largest * (1 - r), value) for r in rates),  # the total after a discount at the rate
        *((value * (1 + r), largest) for r in rates),  # net x (1 + rate) = total
    ]
    return any(abs(got - want) <= ROUNDING for got, want in pairs)


def _adds_up(largest: Decimal, parts: list[Decimal], others: list[Decimal]) -> bool:
    """Whether ``largest`` is the sum of ``parts`` and none, some or all of ``others`` (of more than
    ``EXPLAIN_MAX`` others: none or all; an other below zero is taken off: a discount), each part
    added rounded on its own to within 0.01 (VAT by line or on the total)."""
    need = largest - sum(parts, Decimal(0))
    if len(others) > EXPLAIN_MAX:
        return need in (0, sum(others, Decimal(0)))
    subsets = itertools.chain.from_iterable(itertools.combinations(others, n) for n in range(len(others) + 1))
    return any(
        abs(sum(chosen, Decimal(0)) - need) <= ROUNDING * (len(parts) + len(chosen) - 1) for chosen in subsets
    )


def sent_part(value: str, label: str | None) -> str:
    """What a field sends, of the value a surface shows: a chosen option is shown as "SENT (LABEL)"
    (``FieldValue``) and sends SENT; any other value is sent as shown."""
    suffix = f" ({label})" if label else ""
    return value[: -len(suffix)] if suffix and value.endswith(suffix) else value


def read_money(
    fields: list[tuple[str, str]],
    rules: RiskRules,
    looked_up: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> Money:
    """The amounts of a submission (its fields named as amounts, the record's amount the worker
    read for it) and their currency (its currency fields, read by ``read_currency``; the rules'
    default when it has none): for the risk rules and for every surface that shows them.

    ``labels``: the chosen options' labels by field name (``FieldValue.label``). A label is the
    page's text, not what is sent (a page script can relabel option "1" from EUR to JPY, and the
    system still reads "1" as EUR): a currency named by a label alone is shown, but its amounts are
    judged under the rules' lowest threshold (``currency_label``); only what is sent, or the
    record's page the worker read, lowers it to the currency's own."""
    money = Money(sent=fields)
    currencies: list[str | None] = []
    by_label: str | None = None  # the first label that alone names the currency
    money.bank_names = [name for name, value in fields if bank_field(name, value, rules)]
    for name, value in fields:
        if currency_name(name, rules) and value.strip():
            money.currency_field = money.currency_field or name
            money.currency_names.append(name)
            money.currency_text = f"{money.currency_text} / {value}" if money.currency_text else value
            currencies.append(read_currency(value))
            label = (labels or {}).get(name)
            if currencies[-1] is not None and label and read_currency(sent_part(value, label)) is None:
                by_label = by_label or label
    codes = set(currencies)
    if not currencies:
        money.currency = rules.default_currency.upper()
    elif len(codes) == 1 and None not in codes:
        money.currency = str(currencies[0])
    for name, value in fields:
        if not value.strip() or currency_name(name, rules):
            continue
        if bank_field(name, value, rules):
            continue  # bank details are flagged as such
        if field_matches(name, rules.amount_fields):
            money.amounts.append(AmountRead(field=name, text=value, value=parse_amount(value)))
        elif MONEY_SHAPE.fullmatch(bare(value).strip()):
            money.shaped.append(AmountRead(field=name, text=value, value=parse_amount(value)))
    if looked_up and "amount" in looked_up:
        source = looked_up.get("source", "the record")
        amount = looked_up["amount"]
        money.amounts.append(
            AmountRead(field=f"amount (read from {source})", text=amount, value=parse_amount(amount))
        )
        if looked_up.get("currency"):
            money.currency = looked_up["currency"].strip().upper()
            by_label = None  # the record's page, read by the worker, names it
    money.limit = rules.threshold(money.currency) if money.currency else None
    if money.currency and by_label:
        money.currency_label = by_label
        money.limit = rules.lowest_threshold()
    return money


# a field of free text, by its name's words: a description, notes, a memo, a comment, a line's text;
# or a line item's text by the name of what it is ("item", "line_item", "product", "artikel",
# "leistung", "product_name") — only as the name's last word or before a word of text, never before
# an identifier's ("item_number", "article_no", "product_code", "sku" are identifiers)
PROSE_FIELD = re.compile(
    r"(^|_)(description|desc|descr|notes?|memo|comments?|remarks?|message|narrative|text)(_|$)"
    r"|(^|_)(items?|products?|articles?|services?|artikel|produit|bezeichnung|leistung|posten|prestation"
    r"|producto|articulo|servicio|prodotto|articolo|servizio)(_(name|label|title))?$",
    re.IGNORECASE,
)


def prose_field(name: str, value: str, rules: RiskRules, money: Money) -> bool:
    """Whether a field is free text ("250 m²", "M8×40", "−20 °C" are honest there): named so
    (``PROSE_FIELD``: "description", "lines[0].description", "memo", "notes") and none of the
    fields a person pays by: an amount or currency field, a value shaped like money, bank details,
    a payee. Every other field (an invoice or reference number, a date, a name, one the rules do
    not know) is an identifier. The one test for ``hidden_characters`` (``visible.hidden``)."""
    return (
        field_matches(name, PROSE_FIELD)
        and not PAYEE_FIELD.search(field_name(name))
        and not bank_field(name, value, rules)
        and not field_matches(name, rules.amount_fields)
        and not currency_name(name, rules)
        and not any((found.field, found.text) == (name, value) for found in money.values)
    )


def assess(
    fields: list[tuple[str, str]],
    url: str,
    rules: RiskRules,
    looked_up: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    options: Sequence[bool] = (),
) -> Assessment:
    """The flags for one submission: its fields (name, value), its target URL, the record amount
    the worker looked up for it, the chosen options' labels (``read_money``) and whether each field
    is a chosen option (``repeated``). The target's query pairs are judged as fields too
    (``query_fields``: "amount (in the address)"), by every rule."""
    flags: list[RiskFlag] = []
    fields = with_address(fields, url)
    money = read_money(fields, rules, looked_up, labels)
    if looked_up and "unreadable" in looked_up:
        flags.append(
            RiskFlag(
                rule="unreadable_amount",
                message=f"{looked_up['unreadable']}: check the amount by hand",
                second_approver=True,
            )
        )
    for name, value in fields:
        unread = next((t for t in (name, value) if t.startswith(NOT_EXACT)), None)
        if unread is not None:
            why = unread[len(NOT_EXACT) :].partition(") ")[0]
            flags.append(
                RiskFlag(
                    rule="unread_body",
                    field=name,
                    message=(
                        f"the body could not be read exactly as the system will read it ({cut_value(why)}): "
                        "what is shown may not be all it reads; check it by hand"
                    ),
                    second_approver=True,
                )
            )
    for name, value in fields:
        if bank_field(name, value, rules):
            named = bank_name(name, rules)
            what = cut_value(name) if named else f"{quoted([(name, value)])} is an IBAN"
            flags.append(
                RiskFlag(
                    rule="bank_details",
                    field=name,
                    message=f"sets bank details ({what}): always checked by a second person",
                    second_approver=rules.bank_change_needs_second_approver,
                )
            )
    if money.currency_unreadable:
        flags.append(
            RiskFlag(
                rule="unreadable_currency",
                field=money.currency_field,
                message=(
                    f"currency not readable: check by hand ({quoted([(money.currency_field or '', money.currency_text)])}"
                    " names no one currency code)"
                ),
                second_approver=True,
            )
        )
    amounts = {found.field for found in money.values}
    for same in repeated(fields, money, options):
        values = quoted(same)  # each value cut, as every value a flag quotes
        an_amount = any(name in amounts or field_matches(name, rules.amount_fields) for name, _ in same)
        flags.append(
            RiskFlag(
                rule="unclear_amount" if an_amount else "repeated_field",
                field=same[0][0],
                message=(
                    f"amounts disagree: check each by hand ({values}: one amount sent with different "
                    "values, and the system may book any of them, often the last)"
                    if an_amount
                    else f"sent twice with different values: check each by hand ({values}: one field "
                    "sent with different values, and the system may take any of them, often the last)"
                ),
                second_approver=False,
            )
        )
    head = money.headline
    if head is not None and head.disagree:
        flags.append(
            RiskFlag(
                rule="unclear_amount",
                field=head.field,
                message=(
                    f"amounts disagree: check each by hand ({cut_shown(visible(head.text), limit=QUOTE_LIMIT)}: "
                    "amounts sent under different names that differ and do not add up to one another, and the "
                    f"system books one of them; judged by the largest, {cut_value(str(head.value))})"
                ),
                second_approver=False,
            )
        )
    currency = money.currency or "(currency not read)"
    limit = money.limit if money.limit is not None else rules.amount_thresholds["*"]
    for lines in line_items(fields, money):
        rows = quoted((row.field, row.text) for row in lines.rows)
        if not lines.agrees:
            totals = quoted((t.field, t.text) for t in lines.totals)
            flags.append(
                RiskFlag(
                    rule="unclear_amount",
                    field=lines.rows[0].field,
                    message=(
                        f"amounts disagree: the rows do not add up to the total: check each by hand ({rows}: "
                        f"rows summing to {cut_value(str(lines.sum))}; {totals}: the system may book the total, the rows "
                        "or one of them)"
                    ),
                    second_approver=False,
                )
            )
        if abs(lines.sum) > limit and all(t.value != lines.sum for t in lines.totals):
            flags.append(
                RiskFlag(
                    rule="amount_above_threshold",
                    field=lines.rows[0].field,
                    message=(
                        f"the rows ({rows}) sum to {cut_value(str(lines.sum))} {currency}, above {limit} {currency}: needs a "
                        "second approver"
                    ),
                    second_approver=True,
                )
            )
    for found in money.amounts:
        if found.value is None:
            flags.append(_unreadable(found))
        elif abs(found.value) > limit:
            message = (
                f"{cut_value(found.field)} {cut_value(str(found.value))} {currency} is above {limit} {currency}: "
                "needs a second approver"
                if money.currency_label is None
                else f"{cut_value(found.field)} {cut_value(str(found.value))} is above {limit}, the lowest "
                f"threshold: its currency ({currency}) is named only by the option's label on the page "
                f"({cut_value(money.currency_label)}), not by what is sent, and a page can relabel "
                "an option: needs a second approver"
            )
            flags.append(
                RiskFlag(
                    rule="amount_above_threshold", field=found.field, message=message, second_approver=True
                )
            )
    for found in money.shaped:
        own = read_currency(found.text)
        code, over = (own, rules.threshold(own)) if own else (currency, limit)
        if found.value is None:  # shaped like money in digits other than 0-9
            flags.append(_unreadable(found))
        elif abs(found.value) > over:
            flags.append(
                RiskFlag(
                    rule="amount_above_threshold",
                    field=found.field,
                    message=(
                        f"{quoted([(found.field, found.text)])} looks like an amount (the rules do not "
                        f"know the field by its name) and is above {over} {code}: needs a second approver"
                    ),
                    second_approver=True,
                )
            )
    hiding = [
        (name, hidden(name) + hidden(value, prose=prose_field(name, value, rules, money)))
        for name, value in fields
    ]
    if any(found for _, found in hiding):
        # every value's words and markers already shown (``hidden``, ``visible``): a page shows the
        # message as it is (``Shown``), never a marker's own letter marked again inside it
        where = cut_shown(
            Shown(
                "; ".join(
                    shown("{}: {}", Shown(cut_value(name)), Shown(", ".join(found)))
                    for name, found in hiding
                    if found
                )
            ),
            limit=QUOTE_LIMIT,
        )  # each word quoted cut (``visible.hidden``), and the list
        flags.append(
            RiskFlag(
                rule="hidden_characters",
                field=next(name for name, found in hiding if found),
                message=shown(
                    "a value holds hidden direction/format characters, a run of unusual spaces, a "
                    "letter of another script than its word's or drawn like another, or a word of "
                    "another script drawn like Latin letters, shown as ⟨…⟩ ({}): read it as shown, "
                    "not as a page may draw it",
                    where,
                ),
                second_approver=False,
            )
        )
    for rule in rules.field_rules:
        for name, value in fields:
            if field_matches(name, [rule.field]) and re.fullmatch(rule.value, value, re.I | re.S):
                flags.append(
                    RiskFlag(
                        rule="field_rule",
                        field=name,
                        message=rule.message,
                        second_approver=rule.second_approver,
                    )
                )
    flags += path_flags(url, rules)
    return Assessment(flags=flags)


def _unreadable(found: AmountRead) -> RiskFlag:
    why = unreadable_amount(found.text)
    return RiskFlag(
        rule="unreadable_amount",
        field=found.field,
        message=f"{cut_value(found.field)} = {cut_value(found.text)!r} is not a readable amount"
        + (f" ({why})" if why else "")
        + ": check it by hand",
        second_approver=True,
    )


def path_flags(url: str, rules: RiskRules) -> list[RiskFlag]:
    """The flags of a data-changing request's target path, matched on every reading a server may
    route it on (``target_path``): a sensitive page, a path rule, and a path a server could read
    otherwise than as written (or that names a record to look up only once normalised)."""
    target = target_path(url)
    flags: list[RiskFlag] = []
    if any(path_flagged(p, target) for p in rules.flag_paths):
        flags.append(
            RiskFlag(
                rule="sensitive_target",
                message=f"the target {cut_value(target.sent)} is a sensitive page",
                second_approver=True,
            )
        )
    flags += [
        RiskFlag(rule="path_rule", message=r.message, second_approver=r.second_approver)
        for r in rules.path_rules
        if path_flagged(r.path, target)
    ]
    why = target.unclear()
    if not why:  # plain, but a record to look up only in another case ("/Bills/7/pay")
        why = [
            f"letters in another case than the rules' path, read as {pages[0]}"
            for lookup in rules.amount_lookups
            if (pages := _lookup_pages(lookup, target, url)) and not re.search(lookup.path, target.sent)
        ][:1]
    if why:
        readings = [cut_value(r) for r in target.ends() if r != target.sent][:3]
        taken = f"; a server may take it for {' or '.join(readings)}" if readings else ""
        flags.append(
            RiskFlag(
                rule="unclear_target",
                message=(
                    f"the target {cut_value(target.sent)} can be read otherwise than as written "
                    f"({cut_value(', '.join(why))}{taken}): check it by hand"
                ),
                second_approver=True,
            )
        )
    return flags


def bulk_key(method: str, url: str, field_names: list[str]) -> tuple[str, str, tuple[str, ...]]:
    """Items may be approved together only when this key is the same for all of them: the method,
    the target as the request key binds it (``key.target``: scheme, host, path and query; a query
    is as much a part of what is sent as a field) and the field names (their values may differ)."""
    return method.upper(), target(url), tuple(sorted(field_names))
