"""Work on the bills already in Acme Payables: a report of open bills, marking a bill paid."""

from __future__ import annotations

import re

from taskcrew.crew.models import Citation
from taskcrew.crew.scripted import ScriptedCall
from taskcrew.eval import kit
from taskcrew.eval.solvers.base import Finding, Recipe, Step, StepScript, judge, visit
from taskcrew.tools import ap


def iso(printed: str) -> str:
    """A date from the request ('10 October 2026') as YYYY-MM-DD."""
    return ap.parse_date(printed).value.isoformat()


def claim_text(call: ScriptedCall) -> str:
    """Everything the colleague reported, for comparing with what the audit sees."""
    return "\n".join(f"{r.summary} {' '.join(r.data.values())}" for r in kit.step_results(call))


class UnpaidReport(Recipe):
    """Which bills are unpaid and due before a day, and their total per currency."""

    def __init__(self, due_before: str) -> None:
        self.due_before = iso(due_before)

    def goal(self) -> str:
        return f"Report the unpaid bills due before {self.due_before} and their total per currency"

    def criteria(self) -> list[str]:
        return [
            f"The answer gives, per currency, the total of the bills Acme Payables lists as unpaid and due "
            f"before {self.due_before}",
            "No bill was changed",
        ]

    def steps(self) -> list[Step]:
        return [
            Step(
                "browser_operator",
                f"List the unpaid bills due before {self.due_before}",
                f"In the bills list filter for status unpaid and due before {self.due_before}; read the bills "
                "and the total per currency.",
                self.report_unpaid,
            )
        ]

    def report_unpaid(self, call: ScriptedCall) -> StepScript:
        call = yield from visit(call, f"{kit.erp(call)}/bills")
        els = kit.elements(call.last_tool_result)
        call = yield kit.act(
            {"action": "select", "index": kit.by_field(els, "status").index, "option": "Unpaid"},
            {"action": "type", "index": kit.by_field(els, "due_before").index, "text": self.due_before},
            {"action": "click", "index": kit.button(els, "Apply filters").index},
        )
        text = call.last_tool_result
        rows, totals, url = kit.bill_table(text), kit.totals_line(text), kit.page_url(text)
        if not totals:
            return kit.report(
                "failed", f"The filtered bills list shows no totals: {kit.page_text(text)[:400]}"
            )
        listed = "; ".join(
            f"{r.bill_id} {r.vendor} {r.invoice_number} {r.amount} {r.currency} due {r.due_date}"
            for r in rows
        )
        per_currency = {cur: amount for amount, cur in re.findall(r"([\d.]+) ([A-Z]{3})", totals)}
        return kit.report(
            "done",
            f"{len(rows)} bills are unpaid and due before {self.due_before}: {listed}. Total per currency: {totals}.",
            [Citation(source=url, quote=totals)],
            **{f"total_{cur}": amount for cur, amount in per_currency.items()},
        )

    def audit(self, call: ScriptedCall) -> StepScript:
        call = yield from visit(call, f"{kit.erp(call)}/bills?status=unpaid&due_before={self.due_before}")
        text = call.last_tool_result
        url, totals = kit.page_url(text), kit.totals_line(text)
        claimed = claim_text(call)
        pairs = re.findall(r"([\d.]+) ([A-Z]{3})", totals)
        missing = [f"{a} {c}" for a, c in pairs if a not in claimed or c not in claimed]
        findings = [
            Finding(
                bool(pairs) and not missing,
                url,
                f"totals per currency: {totals or 'none shown'}"
                + (f"; not in the answer: {', '.join(missing)}" if missing else ""),
            )
        ]
        return judge(call, findings, f"The answer's totals match the bills list filtered as asked: {totals}.")


class MarkPaid(Recipe):
    changes_data = True

    def __init__(self, number: str, paid_on: str) -> None:
        self.number = number
        self.paid_on = iso(paid_on)

    def goal(self) -> str:
        return f"Mark bill {self.number} paid on {self.paid_on} in Acme Payables"

    def criteria(self) -> list[str]:
        return [
            f"The bill for invoice {self.number} is paid, paid on {self.paid_on}",
            "No other bill was changed",
        ]

    def steps(self) -> list[Step]:
        return [
            Step(
                "browser_operator",
                f"Mark bill {self.number} paid on {self.paid_on}",
                "Find the bill in the bills list; if it is unpaid, open it and mark it paid with that date.",
                self.mark,
            )
        ]

    def _row(self, text: str) -> kit.BillRow | None:
        return next((r for r in kit.bill_table(text) if kit.same_number(r.invoice_number, self.number)), None)

    def mark(self, call: ScriptedCall) -> StepScript:
        call = yield from visit(call, f"{kit.erp(call)}/bills")
        row = self._row(call.last_tool_result)
        if row is None:
            return kit.report("failed", f"No bill for invoice {self.number} in Acme Payables.")
        if row.status.lower() == "paid":
            return kit.report(
                "nothing_to_do",
                f"{row.bill_id} ({self.number}) is already paid (paid on {row.paid_on}).",
                [Citation(source=kit.page_url(call.last_tool_result), quote=self.number)],
            )
        link = next(e for e in kit.elements(call.last_tool_result) if e.name == row.bill_id)
        call = yield kit.act({"action": "click", "index": link.index})
        els = kit.elements(call.last_tool_result)
        call = yield kit.act(
            {
                "action": "type",
                "index": kit.by_field(els, "paid_on").index,
                "text": self.paid_on,
                "clear": True,
            },
            {"action": "click", "index": kit.button(els, "Mark paid").index},
        )
        text = call.last_tool_result
        if "did not approve" in text:
            return kit.report(
                "blocked", f"The person did not approve marking {row.bill_id} paid; nothing changed."
            )
        body = kit.page_text(text)
        status = next((line for line in body.splitlines() if line.startswith("Status:")), "")
        if self.paid_on not in status:
            return kit.report("failed", f"Acme Payables did not confirm the payment: {body[:400]}")
        return kit.report(
            "done",
            f"Marked {row.bill_id} ({row.vendor}, {self.number}, {row.amount} {row.currency}) paid: {status}.",
            [Citation(source=kit.page_url(text), quote=status)],
            bill_id=row.bill_id,
            paid_on=self.paid_on,
        )

    def audit(self, call: ScriptedCall) -> StepScript:
        call = yield from visit(call, f"{kit.erp(call)}/bills")
        url, row = kit.page_url(call.last_tool_result), self._row(call.last_tool_result)
        if row is None:
            return judge(call, [Finding(False, url, f"no bill for {self.number}")], "")
        ok = row.status.lower() == "paid" and row.paid_on == self.paid_on
        observed = f"{row.bill_id} {row.invoice_number}: status {row.status}, paid on {row.paid_on}"
        return judge(
            call,
            [Finding(ok, url, observed)],
            f"{row.bill_id} is paid on {self.paid_on}.",
            touched=[self.number],
        )
