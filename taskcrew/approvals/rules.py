"""Risk rules for approvals, in code and configuration (``rules.yaml``), for every surface:

- an amount above its currency's threshold needs a second, different approver;
- a change of bank details is always flagged;
- paying an existing record (``/bills/<id>/pay``) is judged by the record's amount, read from its
  page by the worker when the form does not carry it;
- per-path and per-field rules; bulk approval only for identical low-risk items;
- which fields (named exactly, per system) are left out of the approval key;
- who may submit with ``--auto-approve``, for which targets.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal
from urllib.parse import urljoin, urlsplit

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

DEFAULT_RULES = Path(__file__).with_name("rules.yaml")
ENV_RULES = ("TASKCREW_RISK_RULES", "TASKCREW_CONSOLE_RISK_RULES")


def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{(parts.hostname or '').lower()}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


class RiskRulesError(ValueError):
    pass


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from exc
    return pattern


class PathRule(BaseModel):
    path: str
    methods: list[str] = Field(default_factory=list, description="empty: every data-changing method")
    message: str
    second_approver: bool = True

    @field_validator("path")
    @classmethod
    def _valid(cls, v: str) -> str:
        return _regex(v)


class FieldRule(BaseModel):
    field: str
    value: str = ".*"
    message: str
    second_approver: bool = True

    @field_validator("field", "value")
    @classmethod
    def _valid(cls, v: str) -> str:
        return _regex(v)


class AmountLookup(BaseModel):
    path: str = Field(description="regex on the target's path, with named groups for `page`")
    page: str = Field(description="the record's page, e.g. /bills/{id}")
    pattern: str = Field(description="regex with a group `amount` (and optionally `currency`)")

    @field_validator("path", "pattern")
    @classmethod
    def _valid(cls, v: str) -> str:
        return _regex(v)


class ExcludedFields(BaseModel):
    hosts: list[str] = Field(min_length=1, description="host:port patterns of the system")
    fields: list[str] = Field(min_length=1, description="exact field names")
    why: str


class VendorList(BaseModel):
    hosts: list[str] = Field(min_length=1, description="host:port patterns of the system")
    page: str = Field(description="the page that lists the system's vendors, e.g. /vendors")


class AutoApproveRule(BaseModel):
    identities: list[str] = Field(min_length=1, description="submitter name patterns ('*': anyone)")
    paths: list[str] = Field(default_factory=lambda: [".*"])
    flagged: bool = False

    @field_validator("paths")
    @classmethod
    def _valid(cls, v: list[str]) -> list[str]:
        return [_regex(p) for p in v]


class RiskRules(BaseModel):
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

    @field_validator("amount_fields", "currency_fields", "bank_fields", "flag_paths")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        return [_regex(p) for p in patterns]

    @field_validator("amount_thresholds")
    @classmethod
    def _star(cls, value: dict[str, Decimal]) -> dict[str, Decimal]:
        if "*" not in value:
            raise ValueError("amount_thresholds needs a '*' entry for currencies not listed")
        return {k.upper(): v for k, v in value.items()}

    def threshold(self, currency: str) -> Decimal:
        return self.amount_thresholds.get(currency.upper(), self.amount_thresholds["*"])

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
        path = urlsplit(url).path or "/"
        for rule in self.auto_approve:
            if any(fnmatch.fnmatchcase(identity, i) for i in rule.identities) and any(
                re.search(p, path) for p in rule.paths
            ):
                return rule
        return None


def load_rules(path: Path | None = None) -> RiskRules:
    if path is None:
        env = next((os.environ[e] for e in ENV_RULES if os.environ.get(e)), None)
        path = Path(env) if env else DEFAULT_RULES
    try:
        return RiskRules.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise RiskRulesError(f"The risk rules {path} cannot be used: {exc}") from exc


RuleName = Literal[
    "amount_above_threshold",
    "bank_details",
    "sensitive_target",
    "unreadable_amount",
    "path_rule",
    "field_rule",
]


class RiskFlag(BaseModel):
    rule: RuleName
    message: str
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


def _matches(name: str, patterns: list[str]) -> bool:
    return any(re.search(p, name, re.IGNORECASE) for p in patterns)


def parse_amount(text: str) -> Decimal | None:
    """'1.234,56', '1,234.56', '€ 1234.5', '1 234,56 EUR' → Decimal; None when it is no amount."""
    cleaned = re.sub(r"[^\d,.\-]", "", text.replace("\u00a0", " "))
    if not re.search(r"\d", cleaned):
        return None
    last_dot, last_comma = cleaned.rfind("."), cleaned.rfind(",")
    if last_comma > last_dot:  # comma is the decimal separator (or a thousands one: 1,234)
        whole, _, frac = cleaned.rpartition(",")
        if len(frac) == 3 and last_dot == -1 and "," not in whole:
            cleaned = whole + frac
        else:
            cleaned = whole.replace(".", "").replace(",", "") + "." + frac
    else:
        cleaned = cleaned.replace(",", "")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def look_up(url: str, rules: RiskRules, fetch: Callable[[str], str | None] | None) -> dict[str, str]:
    """For a target an ``amount_lookups`` rule names: the record's amount and currency, read from
    its page ({"amount", "currency", "source"}); {"unreadable": why} when it cannot be read."""
    path = urlsplit(url).path
    for lookup in rules.amount_lookups:
        found = re.search(lookup.path, path)
        if not found:
            continue
        page = urljoin(url, lookup.page.format(**found.groupdict()))
        text = fetch(page) if fetch is not None else None
        hit = re.search(lookup.pattern, text or "")
        if hit is None:
            return {"unreadable": f"the amount could not be read from {page}", "source": page}
        groups = hit.groupdict()
        return {"amount": groups["amount"], "currency": groups.get("currency") or "", "source": page}
    return {}


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


def lookup_change(then: dict[str, str], now: dict[str, str]) -> str | None:
    """How the record amount ``look_up`` read for a request changed between two readings (the one
    an approver was shown and the one read now); None: the same amount and currency."""
    if _seen(then) == _seen(now):
        return None
    source = now.get("source") or then.get("source") or "the record"
    return f"the amount on {source} was {_said(then)}; it is now {_said(now)}"


def approved_when(by: str | None, then: dict[str, str], now: dict[str, str]) -> str | None:
    """Why an approval given on the reading ``then`` does not cover the record as read ``now``
    (None: it covers it): what every surface shows as "asked again"."""
    change = lookup_change(then, now)
    return None if change is None else f"{by or 'a person'} approved it when {change}"


def assess(
    fields: list[tuple[str, str]], url: str, rules: RiskRules, looked_up: dict[str, str] | None = None
) -> Assessment:
    """The flags for one submission: its fields (name, value), its target URL and the record amount
    the worker looked up for it."""
    currency = rules.default_currency
    for name, value in fields:
        if _matches(name, rules.currency_fields) and value.strip():
            currency = value.split()[0].upper()[:8]  # "EUR (Euro)": a select's label cut off
    flags: list[RiskFlag] = []
    amounts = [(n, v) for n, v in fields if _matches(n, rules.amount_fields) and v.strip()]
    if looked_up and "amount" in looked_up:
        source = looked_up.get("source", "the record")
        amounts.append((f"amount (read from {source})", looked_up["amount"]))
        currency = (looked_up.get("currency") or currency).upper()
    if looked_up and "unreadable" in looked_up:
        flags.append(
            RiskFlag(
                rule="unreadable_amount",
                message=f"{looked_up['unreadable']}: check the amount by hand",
                second_approver=True,
            )
        )
    for name, value in fields:
        if _matches(name, rules.bank_fields) and value.strip():
            flags.append(
                RiskFlag(
                    rule="bank_details",
                    field=name,
                    message=f"sets bank details ({name}): always checked by a second person",
                    second_approver=rules.bank_change_needs_second_approver,
                )
            )
    bank = {f.field for f in flags}
    for name, value in amounts:
        if name in bank:
            continue
        amount, limit = parse_amount(value), rules.threshold(currency)
        if amount is None:
            flags.append(
                RiskFlag(
                    rule="unreadable_amount",
                    field=name,
                    message=f"{name} = {value!r} is not a readable amount: check it by hand",
                    second_approver=True,
                )
            )
        elif abs(amount) > limit:
            flags.append(
                RiskFlag(
                    rule="amount_above_threshold",
                    field=name,
                    message=f"{name} {amount} {currency} is above {limit} {currency}: needs a second approver",
                    second_approver=True,
                )
            )
    for rule in rules.field_rules:
        for name, value in fields:
            if re.search(rule.field, name, re.I) and re.fullmatch(rule.value, value, re.I | re.S):
                flags.append(
                    RiskFlag(
                        rule="field_rule",
                        field=name,
                        message=rule.message,
                        second_approver=rule.second_approver,
                    )
                )
    path = urlsplit(url).path
    if any(re.search(p, path, re.IGNORECASE) for p in rules.flag_paths):
        flags.append(
            RiskFlag(
                rule="sensitive_target",
                message=f"the target {path} is a sensitive page",
                second_approver=True,
            )
        )
    flags += [
        RiskFlag(rule="path_rule", message=r.message, second_approver=r.second_approver)
        for r in rules.path_rules
        if re.search(r.path, path, re.IGNORECASE)
    ]
    return Assessment(flags=flags)


def bulk_key(method: str, url: str, field_names: list[str]) -> tuple[str, str, tuple[str, ...]]:
    """Items may be approved together only when this key is the same for all of them."""
    parts = urlsplit(url)
    return method.upper(), f"{parts.netloc}{parts.path}", tuple(sorted(field_names))
