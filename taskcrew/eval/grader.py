"""Graders: compare the ERP's ground truth before and after a run, and read the run's report.

Nothing here reads what the agent claims about itself: bills are read from /_debug/state, the
answer from report.md's Answer section, questions from what the simulated person was asked.
"""

from __future__ import annotations

import re

from taskcrew.eval.models import BillExpectation, Check, EvalCase, Grade
from taskcrew.mock_erp.models import Bill, DebugState


def report_answer(report: str) -> str:
    """The text under '## Answer' in report.md (empty if there is none)."""
    match = re.search(r"^## Answer\n(.*?)(?=^## |\Z)", report, re.DOTALL | re.MULTILINE)
    return match.group(1).strip() if match else ""


def _matches(bill: Bill, want: BillExpectation) -> list[str]:
    problems = []
    for field in ("vendor", "invoice_number", "amount", "currency", "invoice_date", "due_date"):
        expected = getattr(want, field)
        if expected is not None and getattr(bill, field) != expected:
            problems.append(f"{field} {getattr(bill, field)!r} ≠ {expected!r}")
    return problems


def _new_bills(case: EvalCase, before: DebugState, after: DebugState) -> list[Check]:
    old = {b.id for b in before.bills}
    added = [b for b in after.bills if b.id not in old]
    checks = [
        Check(
            name="new bills",
            passed=len(added) == len(case.expect.new_bills),
            detail=f"{len(added)} added, {len(case.expect.new_bills)} expected: "
            + ", ".join(f"{b.vendor} {b.invoice_number} {b.amount} {b.currency}" for b in added),
        )
    ]
    for want in case.expect.new_bills:
        candidates = [b for b in added if b.vendor == want.vendor and b.invoice_number == want.invoice_number]
        if not candidates:
            checks.append(Check(name=f"bill {want.invoice_number}", passed=False, detail="not entered"))
            continue
        problems = _matches(candidates[0], want)
        checks.append(
            Check(name=f"bill {want.invoice_number}", passed=not problems, detail="; ".join(problems))
        )
    return checks


def _existing_bills(case: EvalCase, before: DebugState, after: DebugState) -> list[Check]:
    checks = []
    now = {b.id: b for b in after.bills}
    changed = []
    for bill in before.bills:
        current = now.get(bill.id)
        if current is None:
            changed.append(f"{bill.id} deleted")
        elif current != bill and bill.id not in case.expect.paid:
            changed.append(f"{bill.id} changed ({bill.status}→{current.status})")
    checks.append(Check(name="no other bill touched", passed=not changed, detail=", ".join(changed)))
    for bill_id in case.expect.paid:
        current = now.get(bill_id)
        ok = current is not None and current.status == "paid"
        detail = "" if current is None else f"status {current.status}, paid_on {current.paid_on}"
        if ok and case.expect.paid_on and current is not None and current.paid_on != case.expect.paid_on:
            ok, detail = False, f"paid_on {current.paid_on} ≠ {case.expect.paid_on}"
        checks.append(Check(name=f"{bill_id} paid", passed=ok, detail=detail))
    return checks


def grade(
    case: EvalCase,
    *,
    outcome: str,
    before: DebugState,
    after: DebugState,
    report: str,
    questions: list[str],
) -> Grade:
    expect = case.expect
    checks = [
        Check(
            name="outcome",
            passed=outcome in expect.outcomes,
            detail=f"{outcome} (expected {expect.outcomes})",
        )
    ]
    checks += _new_bills(case, before, after)
    checks += _existing_bills(case, before, after)
    answer = report_answer(report)
    flat = answer.replace(",", "")
    for entry in expect.answer_contains:
        spellings = [entry] if isinstance(entry, str) else entry
        found = any(
            s.lower() in answer.lower() or s.replace(",", "").lower() in flat.lower() for s in spellings
        )
        checks.append(Check(name=f"answer mentions {' or '.join(map(repr, spellings))}", passed=found))
    for needle in expect.answer_excludes:
        checks.append(Check(name=f"answer avoids {needle!r}", passed=needle.lower() not in answer.lower()))
    for source in expect.sources_cited:
        checks.append(Check(name=f"cites {source}", passed=source in report))
    if expect.asked_human is not None:
        asked = bool(questions)
        checks.append(
            Check(
                name="asked the person" if expect.asked_human else "did not need to ask",
                passed=asked == expect.asked_human,
                detail=" | ".join(q[:120] for q in questions),
            )
        )
    return Grade(passed=all(c.passed for c in checks), checks=checks)
