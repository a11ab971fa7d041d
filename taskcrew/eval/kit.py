"""Building blocks for scripted "models": policies that read real observations and decide.

A scripted model stands in for an LLM in tests and in the offline eval sweep. It gets no help the
real model would not get: it sees the same prompts and tool results, finds element numbers by
reading the rendered observation, and answers in the same JSON formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from taskcrew.crew.models import Citation, CriterionCheck, StepReport, Verdict
from taskcrew.crew.scripted import Reply, ScriptedCall, ScriptError, ToolCall

_ELEMENT = re.compile(r'^\[(\d+)\] (\w+)(?: "((?:[^"\\]|\\.)*)")?(.*)$')
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


@dataclass
class El:
    index: int
    role: str
    name: str
    attrs: dict[str, str]
    rest: str

    @property
    def field(self) -> str | None:
        return self.attrs.get("name")

    @property
    def offscreen(self) -> bool:
        return "OFFSCREEN" in self.rest


def elements(text: str) -> list[El]:
    """The element lines of the latest observation in ``text``."""
    part = text.rsplit("Elements (", 1)
    if len(part) < 2:
        return []
    found = []
    for line in part[1].splitlines()[1:]:
        match = _ELEMENT.match(line.strip())
        if not match:
            continue
        attrs = {k: v.strip('"') for k, v in _ATTR.findall(match.group(4))}
        found.append(El(int(match.group(1)), match.group(2), match.group(3) or "", attrs, match.group(4)))
    return found


def page_url(text: str) -> str:
    matches = re.findall(r'^Page: ".*?" at (\S+)', text, re.MULTILINE)
    return matches[-1] if matches else ""


def page_text(text: str) -> str:
    match = re.search(r"<<<PAGE CONTENT.*?\n(.*?)>>>END OF PAGE CONTENT", text, re.DOTALL)
    return match.group(1) if match else ""


def system_url(call: ScriptedCall, name: str) -> str:
    match = re.search(rf"{re.escape(name)} at (https?://[^\s/]+)", call.prompt)
    if not match:
        raise ScriptError(f"no URL for {name!r} in the prompt")
    return match.group(1)


def erp(call: ScriptedCall) -> str:
    return system_url(call, "Acme Payables")


def act(*actions: dict[str, Any]) -> ToolCall:
    return ToolCall(name="browser_act", args={"actions": list(actions)})


def navigate(url: str) -> ToolCall:
    return act({"action": "navigate", "url": url})


def by_field(els: list[El], name: str) -> El:
    for el in els:
        if el.field == name:
            return el
    raise ScriptError(f"no field {name!r} on the page: {[e.field for e in els]}")


def button(els: list[El], label: str) -> El:
    for el in els:
        if el.role == "button" and label.lower() in el.name.lower():
            return el
    raise ScriptError(f"no button {label!r} on the page")


def login(text: str) -> ToolCall | None:
    """Log in when the page shows the login form (credentials only as placeholders)."""
    if "Obstacle: login_form" not in text:
        return None
    els = elements(text)
    return act(
        {"action": "type", "index": by_field(els, "username").index, "text": "{{secret:ERP_USERNAME}}"},
        {"action": "type", "index": by_field(els, "password").index, "text": "{{secret:ERP_PASSWORD}}"},
        {"action": "click", "index": button(els, "Log in").index},
    )


def report(status: str, summary: str, sources: list[Citation] | None = None, **data: str) -> str:
    return StepReport(status=status, summary=summary, data=data, sources=sources or []).model_dump_json()


@dataclass
class Bill:
    vendor: str
    invoice_number: str
    amount: str
    currency: str
    invoice_date: str
    due_date: str


class EnterBill:
    """Reactive operator: open the new-bill form, fill it, save, and recover from what happens.

    ``first_amount`` (e.g. the printed "1,284.50") is typed on the first try, the way a careless
    model would, so the form's validation message is exercised; the fix uses ``bill.amount``.
    """

    def __init__(self, bill: Bill, first_amount: str | None = None) -> None:
        self.bill = bill
        self.amount = first_amount or bill.amount
        self.started = False

    def __call__(self, call: ScriptedCall) -> Reply:
        text = call.last_tool_result
        base = erp(call)
        if not self.started:
            self.started = True
            return navigate(f"{base}/bills/new")
        if step := login(text):
            return step
        url = page_url(text)
        body = page_text(text)
        if re.search(r"/bills/BILL-\d+", url) and "saved" in body.lower():
            bill_id = re.search(r"BILL-\d+", url).group(0)  # type: ignore[union-attr]
            return report(
                "done",
                f"Saved bill {bill_id} for {self.bill.vendor} {self.bill.invoice_number}: "
                f"{self.bill.amount} {self.bill.currency}, due {self.bill.due_date}.",
                bill_id=bill_id,
            )
        if "/bills/new" not in url or "503" in text or "unavailable" in body.lower():
            return navigate(f"{base}/bills/new")
        els = elements(text)
        amount = by_field(els, "amount")
        if "invalid=" in amount.rest and self.amount != self.bill.amount:
            self.amount = self.bill.amount
            return act(
                {"action": "type", "index": amount.index, "text": self.amount, "clear": True},
                {"action": "click", "index": button(els, "Save").index},
            )
        return act(
            {"action": "select", "index": by_field(els, "vendor_id").index, "option": self.bill.vendor},
            {
                "action": "type",
                "index": by_field(els, "invoice_number").index,
                "text": self.bill.invoice_number,
                "clear": True,
            },
            {"action": "type", "index": amount.index, "text": self.amount, "clear": True},
            {"action": "select", "index": by_field(els, "currency").index, "option": self.bill.currency},
            {"action": "type", "index": by_field(els, "invoice_date").index, "text": self.bill.invoice_date},
            {"action": "type", "index": by_field(els, "due_date").index, "text": self.bill.due_date},
            {"action": "click", "index": button(els, "Save").index},
        )


class LookUpBills:
    """Reactive reader of the bills list: log in, open ``/bills?<query>``, hand the page to ``decide``."""

    def __init__(self, query: str, decide: Any) -> None:
        self.query = query
        self.decide = decide
        self.started = False

    def __call__(self, call: ScriptedCall) -> Reply:
        text = call.last_tool_result
        target = f"{erp(call)}/bills" + (f"?{self.query}" if self.query else "")
        if not self.started:
            self.started = True
            return navigate(target)
        if step := login(text):
            return step
        if not page_url(text).split("?")[0].endswith("/bills"):
            return navigate(target)
        result: Reply = self.decide(page_url(text), page_text(text))
        return result


def bill_rows(body: str, invoice_number: str) -> list[str]:
    return [line for line in body.splitlines() if invoice_number in line]


def verdict(criteria: list[tuple[str, bool, str, str]], reason: str) -> str:
    checks = [CriterionCheck(criterion=c, met=m, source=s, observed=o) for c, m, s, o in criteria]
    return Verdict(verified=all(c.met for c in checks), checks=checks, reason=reason).model_dump_json()
