"""Intents: a data-changing submission is recorded before it is sent, and a repeat is reconciled
against the real system (read back) before anything is sent again.

The network gate (``tools/browser/network.py``) calls ``IntentLog.before_send`` for every approved
data-changing request and ``after_send`` once it left. A durable run (``taskcrew.jobs``) attaches an
``IntentLog`` to the run's policy (``policy.intents``); a plain run has none and sends as before.

    before_send → None: send it (the intent is recorded first)
                → a text: do NOT send (the earlier submission is in the system, or that cannot be
                  established); the text goes back to the agent as an observation.

Read-back rules say, per target, which page lists the records and which submitted values identify
one: ``ReadBack(target="http://erp/bills/new", list_url="http://erp/bills?vendor={vendor_id}",
identify=["invoice_number"])``. Only targets with a rule are tracked; a repeat whose read-back cannot
tell (no identifying value, the list page fails or shows a login form) is refused, never guessed.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

VOLATILE = ("csrf", "token", "nonce")

ReadBackResult = Literal["applied", "absent", "unknown"]


class ReadBack(BaseModel):
    target: str = Field(description="method-less URL the submission goes to (prefix match)")
    list_url: str = Field(description="a page that lists the records; {field} is filled from the payload")
    identify: list[str] = Field(min_length=1, description="fields whose values identify the record")


class IntentRecord(BaseModel):
    key: str
    method: str
    url: str
    fields: list[tuple[str, str]]
    status: Literal["recorded", "sent", "confirmed", "not_applied"] = "recorded"
    result: str | None = None
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class IntentSink(Protocol):
    def get(self, key: str) -> IntentRecord | None: ...

    def put(self, record: IntentRecord) -> None: ...


def intent_key(scope: str, method: str, url: str, fields: list[tuple[str, str]]) -> str:
    stable = sorted((n, v) for n, v in fields if not any(t in n.lower() for t in VOLATILE))
    raw = json.dumps([scope, method.upper(), url.split("#")[0], stable])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class IntentLog:
    def __init__(self, sink: IntentSink, scope: str, rules: list[ReadBack]) -> None:
        self.sink = sink
        self.scope = scope  # the job id: the same payload in another job is another intent
        self.rules = rules
        self.refused = 0

    def covers(self, url: str) -> bool:
        """Only submissions with a read-back rule are tracked (a login or a notice dismissal is not)."""
        return any(url.startswith(rule.target) for rule in self.rules)

    def before_send(
        self, method: str, url: str, fields: list[tuple[str, str]], fetch_text: Callable[[str], str | None]
    ) -> str | None:
        if not self.covers(url):
            return None
        key = intent_key(self.scope, method, url, fields)
        earlier = self.sink.get(key)
        if earlier is None:
            self.sink.put(IntentRecord(key=key, method=method.upper(), url=url, fields=fields))
            return None
        found = self.read_back(url, fields, fetch_text)
        if found == "absent":
            earlier.status, earlier.result = "recorded", "read back: not in the system; sending again"
            self.sink.put(earlier)
            return None
        self.refused += 1
        if found == "applied":
            earlier.status, earlier.result = "confirmed", "read back: the record is in the system"
            self.sink.put(earlier)
            return (
                f"this exact submission to {url} was already sent (at {earlier.at:%H:%M:%S} UTC) and the "
                "record is in the system now: it was NOT sent again. Check the existing record instead."
            )
        return (
            f"this exact submission to {url} may already have been sent (at {earlier.at:%H:%M:%S} UTC) and "
            "reading the system back could not tell: it was NOT sent again. Look for the record first."
        )

    def after_send(self, method: str, url: str, fields: list[tuple[str, str]], outcome: str) -> None:
        if not self.covers(url):
            return
        key = intent_key(self.scope, method, url, fields)
        record = self.sink.get(key) or IntentRecord(key=key, method=method.upper(), url=url, fields=fields)
        record.status, record.result = "sent", outcome
        self.sink.put(record)

    def read_back(
        self, url: str, fields: list[tuple[str, str]], fetch_text: Callable[[str], str | None]
    ) -> ReadBackResult:
        values = dict(fields)
        for rule in self.rules:
            if not url.startswith(rule.target):
                continue
            wanted = [values.get(name, "").strip() for name in rule.identify]
            if not all(wanted):
                return "unknown"
            try:
                page = fetch_text(rule.list_url.format(**values))
            except (KeyError, IndexError):
                return "unknown"
            if page is None:
                return "unknown"
            text = html.unescape(page)
            return "applied" if all(w in text for w in wanted) else "absent"
        return "unknown"


def fetcher(context: Any, login_marker: str = 'name="password"') -> Callable[[str], str | None]:
    """GET a page with the browser context's cookies (a read, never gated); None when it fails or
    lands on a login page (a read-back that cannot be trusted)."""

    def fetch(url: str) -> str | None:
        try:
            response = context.request.get(url, timeout=15000)
        except Exception:
            return None
        if not response.ok:
            return None
        text = response.text()
        return None if login_marker in text else text

    return fetch
