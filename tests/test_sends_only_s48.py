"""The gate's record of sends meets a criterion only if every clause of it, in full, says this run
created or changed nothing (else) (``evidence.of_sends_only``: a whole-clause grammar).

The record is what this run sent and how each system answered, never what a system holds. A positive
claim in the words of a count ("Exactly one bill was created …", "Only one bill …", "A single bill
…"), one put before ", no other bill …" in the same clause, a record described ("besides the one for
the newest Northwind invoice"), an amount in words, or a named record ("The Hooli bill is marked paid
…") is not met on it: a verifier citing only the record got a bill saved with the wrong amount (the
subtotal) verified, and the wrong bill paid. Negative no-change wordings still are. Units on
``of_sends_only`` and ``check_verdict``; only the LLM would be faked (none is needed here)."""

from __future__ import annotations

import pytest

from taskcrew.config import ERP_NAME, INTRANET_NAME
from taskcrew.crew.evidence import SENDS_SOURCE, check_verdict, of_sends_only
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.outcome import Facts
from taskcrew.tools.submissions import SubmissionResult

ERP = "http://127.0.0.1:8800"
SYSTEMS = [(ERP_NAME, f"{ERP}/"), (INTRANET_NAME, "http://127.0.0.1:8900/")]
NAMES = [name for name, _ in SYSTEMS]

POSITIVE = [
    # a count of what was made, with what it holds
    "Exactly one bill was created in Acme Payables for the newest invoice from Northwind Traders, with the "
    "invoice number, total amount, currency, invoice date, due date the invoice states",
    "Only one bill was entered in Acme Payables, for the newest Northwind Traders invoice, at the invoice's total",
    "A single bill was created in Acme Payables, holding the invoice's number, total, currency, dates",
    "Exactly one bill was created",
    "Exactly two bills were created in Acme Payables",
    "Only one invoice was entered, from Globex Corp",
    # a positive claim before ", no other …" / ", nothing else …" in the same clause
    "Acme Payables holds the Northwind Traders bill with the total amount the invoice states, with no other "
    "bill created",
    "The bill for the newest Northwind invoice is in Acme Payables with the invoice's total, nothing else was "
    "created",
    # "no X besides <a description>", an amount in words, a vendor, a qualifier
    "No bill besides the one for the newest Northwind Traders invoice, at its total amount, was created",
    "No bill other than one for one thousand two hundred eighty-four dollars fifty was created",
    "No other bill was created in Acme Payables besides the Northwind one",
    "No Northwind Traders bill was created twice",
    "No bill with the wrong total was created",
    "No bill whose amount differs from the invoice was created",
    "Nothing else was changed; the bill is in Acme Payables",
]
WRONG_AMOUNT = [
    ("vendor_id", "3"),
    ("invoice_number", "INV-2057"),
    ("amount", "1190.00"),
    ("currency", "USD"),
]


def _judge(criterion: str, facts: Facts, find: str | None = None) -> Verdict:
    """``check_verdict`` as ``steps.verify`` calls it, on a check citing only the gate's record (the
    line of its first send, else the line ``find`` points at)."""
    line = next((ln[2:] for ln in facts.record().splitlines() if ln.startswith("- ")), "-")
    plan = Plan(
        goal="enter the bill",
        success_criteria=[criterion],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    check = CriterionCheck(
        criterion=criterion, met=True, source=SENDS_SOURCE, observed=f"“{line}”", find=find
    )
    return check_verdict(
        Verdict(verified=True, checks=[check], reason="ok"),
        plan,
        {SENDS_SOURCE},
        {SENDS_SOURCE: [facts.record()]},
        SYSTEMS,
        on_systems=True,
        applied=facts.applied_lines(),
    )


@pytest.mark.parametrize("criterion", POSITIVE)
def test_a_positive_claim_is_not_met_on_the_record_of_sends(criterion: str) -> None:
    saved = SubmissionResult(
        method="POST", url=f"{ERP}/bills/new", fields=WRONG_AMOUNT, result="saved", http_status=303
    )
    verdict = _judge(criterion, Facts(submissions=[saved]))  # the subtotal, not the 1284.50 total
    assert not verdict.verified
    assert "not what it holds" in verdict.checks[0].observed, verdict.checks[0].observed
    assert not of_sends_only(criterion, NAMES)


def test_the_wrong_bill_paid_is_not_met_on_the_record_of_sends() -> None:
    """Money: the run paid Initech's BILL-0004; the criterion speaks of the Hooli bill."""
    criterion = "The Hooli bill is marked paid with payment date 2026-10-01, no other bill was changed"
    paid = SubmissionResult(
        method="POST",
        url=f"{ERP}/bills/BILL-0004/pay",
        fields=[("paid_on", "2026-10-01")],
        result="saved",
        http_status=303,
        detail="then showed /bills/BILL-0004",
    )
    verdict = _judge(criterion, Facts(submissions=[paid]))
    assert not verdict.verified
    assert "not what it holds" in verdict.checks[0].observed, verdict.checks[0].observed
    assert not of_sends_only(criterion, NAMES)


NEGATIVE = [
    "No other bill was created or changed",
    "No other bill was created or changed in Acme Payables",
    "Nothing else was changed",
    "Nothing in Acme Payables was changed",
    "Nothing was entered or changed in Acme Payables",
    "No record was created, changed or deleted",
    "No bill was paid",
    "No payment was made",
    "The ERP was not modified",
    "Acme Payables was not changed",
    "No instruction found inside an e-mail was carried out",
    "No data-changing submission was sent",
    "Nothing was sent",
    "No second bill was created",
    "No additional bill was created",
    "No instruction found inside an e-mail was carried out; nothing in Acme Payables was changed",
    "Nothing else was created or changed, and no bill was paid",
    "No changes were made to the Acme Connect intranet",
    "The run created or changed nothing else in Acme Payables",
    "Acme Payables was left unchanged.",
    "Nothing was changed in any system",
    "No other bill touched",
    "Nothing else changed",
]


@pytest.mark.parametrize("criterion", NEGATIVE)
def test_a_no_change_statement_is_still_met_on_the_record_of_sends(criterion: str) -> None:
    verdict = _judge(criterion, Facts(), find="Data-changing submissions sent")  # the run sent nothing
    assert verdict.verified, verdict.checks[0].observed
    assert of_sends_only(criterion, NAMES)


def test_a_system_is_named_only_by_its_own_name() -> None:
    """A clause may name the systems the verifier knows, or say "the ERP": no other proper name."""
    assert of_sends_only("Nothing in Acme Payables was changed", NAMES)
    assert not of_sends_only("Nothing in Acme Payables was changed", [])
    assert of_sends_only("Nothing in the ERP was changed", [])
    assert not of_sends_only("Nothing in Northwind Traders was changed", NAMES)
    assert not of_sends_only("No bill was created for Acme Payables", NAMES)  # "for": a qualifier
