"""Risk rules for approvals, in code and configuration (risk_rules.yaml).

- an amount above its currency's threshold needs a second, different approver;
- a change of bank details is always flagged;
- bulk approval only for identical (same method, target and field names) low-risk items.
"""

from __future__ import annotations

import os
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

DEFAULT_RULES = Path(__file__).with_name("risk_rules.yaml")


class RiskRulesError(ValueError):
    pass


class RiskRules(BaseModel):
    amount_thresholds: dict[str, Decimal]
    amount_fields: list[str]
    currency_fields: list[str]
    default_currency: str = "EUR"
    bank_fields: list[str]
    bank_change_needs_second_approver: bool = True
    flag_paths: list[str] = Field(default_factory=list)
    bulk_allowed: bool = True

    @field_validator("amount_fields", "currency_fields", "bank_fields", "flag_paths")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from exc
        return patterns

    @field_validator("amount_thresholds")
    @classmethod
    def _star(cls, value: dict[str, Decimal]) -> dict[str, Decimal]:
        if "*" not in value:
            raise ValueError("amount_thresholds needs a '*' entry for currencies not listed")
        return {k.upper(): v for k, v in value.items()}

    def threshold(self, currency: str) -> Decimal:
        return self.amount_thresholds.get(currency.upper(), self.amount_thresholds["*"])


def load_rules(path: Path | None = None) -> RiskRules:
    if path is None:
        env = os.environ.get("TASKCREW_CONSOLE_RISK_RULES")
        path = Path(env) if env else DEFAULT_RULES
    try:
        return RiskRules.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise RiskRulesError(f"The risk rules {path} cannot be used: {exc}") from exc


class RiskFlag(BaseModel):
    rule: Literal["amount_above_threshold", "bank_details", "sensitive_target", "unreadable_amount"]
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


def assess(fields: list[tuple[str, str]], url: str, rules: RiskRules) -> Assessment:
    """The flags for one submission: its fields (name, value) and its target URL."""
    currency = rules.default_currency
    for name, value in fields:
        if _matches(name, rules.currency_fields) and value.strip():
            currency = value.strip().upper()[:8]
    flags: list[RiskFlag] = []
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
        elif _matches(name, rules.amount_fields) and value.strip():
            amount = parse_amount(value)
            limit = rules.threshold(currency)
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
    path = urlsplit(url).path
    if any(re.search(p, path, re.IGNORECASE) for p in rules.flag_paths):
        flags.append(
            RiskFlag(
                rule="sensitive_target",
                message=f"the target {path} is a sensitive page",
                second_approver=True,
            )
        )
    return Assessment(flags=flags)


def bulk_key(method: str, url: str, field_names: list[str]) -> tuple[str, str, tuple[str, ...]]:
    """Items may be approved together only when this key is the same for all of them."""
    parts = urlsplit(url)
    return method.upper(), f"{parts.netloc}{parts.path}", tuple(sorted(field_names))
