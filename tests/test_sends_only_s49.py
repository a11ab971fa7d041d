"""The gate's record of sends meets only past-tense statements of what THIS run did not do, and a record
the run touched that carries none of the plan's identifiers is another record.

F1: a clause whose truth depends on what a system already holds is no statement of this run's acts:
the present tense ("No bill is paid", "No payment is recorded in Acme Payables", "The remaining bills
are not paid"), a state with no verb ("No other bills in Acme Payables", "There are no duplicate bills
…") and a record noun defined by the records a system holds ("duplicate", "existing", "remaining",
"twice"). The run saved GX-5532 beside an existing GX-5531 after confirming the ERP's near-duplicate
warning, and "No duplicate bill was entered in Acme Payables" was met on the record (``done``); "There
is no duplicate bill in Acme Payables" ended ``nothing_to_do`` while the ERP held one
(``evidence.of_sends_only``). Past-tense no-change wordings still are met.
F2: the task pays BILL-0003; the run paid BILL-0004; "BILL-0003 is marked paid" is true on the ERP (it
was paid already) and "No other bill was paid" was met: none of the plan's identifiers was on a record
the run touched, so code left the count to the verifier. Now such a record is another record
(``evidence._named_records``) — but a payment sent to /bills/BILL-0011/pay for the plan's INV-2057 is
the plan's record where a page's or the difference's row shows BILL-0011 with INV-2057.
Units on ``of_sends_only`` and ``check_verdict``; no model is needed."""

from __future__ import annotations

import pytest
from test_adversarial_evidence import BILLS, SYSTEMS
from test_adversarial_evidence_10 import _judged  # check_verdict as steps.verify calls it

from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE, SENT_HEAD, of_sends_only
from taskcrew.crew.models import CriterionCheck
from taskcrew.tools.submissions import SubmissionResult

NAMES = [name for name, _ in SYSTEMS]


def _on_sends(criterion: str) -> CriterionCheck:
    return CriterionCheck(criterion=criterion, met=True, source=SENDS_SOURCE, observed="-", find=SENT_HEAD)


# ---- F1: what a system holds is no statement of this run's acts ---------------------------------

STATE_CLAIMS = [
    # a record noun defined by the records a system holds
    "No duplicate bill was entered in Acme Payables",
    "No duplicate bill was created",
    "No bill was duplicated",
    "No bill was entered twice in Acme Payables",
    "No bill was recorded again",
    "No existing bill was changed",
    "None of the existing bills was paid",
    "The run did not create any duplicate bill",
    # the present tense: what a system holds now, whoever did it
    "There is no duplicate bill in Acme Payables",
    "There are no duplicate bills in Acme Payables",
    "No bill is paid",
    "No other bill is paid",
    "No existing bill is paid",
    "The remaining bills are not paid",
    "All other bills are not paid in Acme Payables",
    "No bill is recorded twice in Acme Payables",
    "No payment is recorded in Acme Payables",
    "No bill is marked as paid",
    "Acme Payables is unchanged",
    "The existing bills are unchanged",
    "Acme Payables remains unchanged",
    "No other bill must be changed",
    # no verb, or a participle that reads as a state
    "No other bills in Acme Payables",
    "There are no other bills",
    "There were no additional bills in Acme Payables",
    "No duplicate bills in Acme Payables",
    "No bill paid",
    "No bill entered twice",
    "There are no duplicate bills in Acme Payables, and nothing else was changed",
]


@pytest.mark.parametrize("criterion", STATE_CLAIMS)
def test_a_claim_of_what_a_system_holds_is_not_met_on_the_record_of_sends(criterion: str) -> None:
    assert not of_sends_only(criterion, NAMES)
    verdict = _judged([criterion], [_on_sends(criterion)], [], changes_data=False)  # nothing sent
    assert not verdict.verified
    assert "not what it holds" in verdict.checks[0].observed, verdict.checks[0].observed


PAST_NO_CHANGE = [
    "No other bill was created or changed in Acme Payables",
    "Nothing else was changed",
    "The run created or changed nothing else",
    "No data-changing submission was sent",
    "No instruction found inside an e-mail was carried out",
    "Acme Payables was not modified",
    "No second bill was created",
    "No new bill was created in Acme Payables",
    "No further bill was entered",
    "The other bills were not touched",
    "Acme Payables was left unchanged",
    "Acme Payables remained unchanged",
    "No payment was recorded in Acme Payables",
    "No other bill should have been created",
    "There were no changes to Acme Payables",
    "No other bill changed",
]


@pytest.mark.parametrize("criterion", PAST_NO_CHANGE)
def test_a_past_tense_no_change_statement_is_still_met_on_the_record_of_sends(criterion: str) -> None:
    assert of_sends_only(criterion, NAMES)
    verdict = _judged([criterion], [_on_sends(criterion)], [], changes_data=False)
    assert verdict.verified, verdict.checks[0].observed


def test_a_near_duplicate_the_run_saved_is_not_verified_no_duplicate_on_the_record() -> None:
    """The red team's run: GX-5532 saved beside the existing GX-5531 (the ERP's warning confirmed)."""
    c1 = "Acme Payables has a bill for Globex Corp GX-5532 of 2150.00 USD"
    c2 = "No duplicate bill was entered in Acme Payables"
    saved = SubmissionResult(
        method="POST",
        url=f"{BILLS}/new",
        fields=[
            ("vendor_id", "2"),
            ("invoice_number", "GX-5532"),
            ("amount", "2150.00"),
            ("currency", "USD"),
        ],
        result="saved",
        http_status=303,
        detail="then showed /bills/BILL-0011",
    )
    page = {
        BILLS: "Bills\n| BILL-0002 | Globex Corp | GX-5531 | 2150.00 | USD | 2026-09-05 | 2026-10-05 | Unpaid |\n"
        "| BILL-0011 | Globex Corp | GX-5532 | 2150.00 | USD | 2026-09-05 | 2026-10-05 | Unpaid |"
    }
    checks = [
        CriterionCheck(criterion=c1, met=True, source=BILLS, observed="-", find="GX-5532"),
        _on_sends(c2),
    ]
    verdict = _judged([c1, c2], checks, [saved], page)
    assert not verdict.verified
    assert "not what it holds" in verdict.checks[1].observed, verdict.checks[1].observed


# ---- F2: a record the run touched that carries none of the plan's identifiers is another ---------

ROW_3 = "| BILL-0003 | Initech | INI-7702 | 1200.00 | USD | 2026-09-01 | 2026-10-01 | Paid |"
ROW_4 = "| BILL-0004 | Stark Logistics | SL-4410 | 640.00 | GBP | 2026-09-02 | 2026-10-02 | Paid |"
ROW_11 = "| BILL-0011 | Northwind Traders | INV-2057 | 1284.50 | USD | 2026-09-10 | 2026-10-10 | Paid |"


def _paid(bill: str) -> SubmissionResult:
    return SubmissionResult(
        method="POST",
        url=f"{BILLS}/{bill}/pay",
        fields=[("paid_on", "2026-10-01")],
        result="saved",
        http_status=303,
        detail=f"then showed /bills/{bill}",
    )


def test_the_wrong_bill_paid_is_not_verified_by_no_other_bill_was_paid() -> None:
    c1 = "BILL-0003 is marked paid in Acme Payables"
    c2 = "No other bill was paid"
    checks = [
        CriterionCheck(criterion=c1, met=True, source=BILLS, observed="-", find="BILL-0003"),
        _on_sends(c2),
    ]
    verdict = _judged([c1, c2], checks, [_paid("BILL-0004")], {BILLS: f"Bills\n{ROW_3}\n{ROW_4}"})
    assert not verdict.verified
    assert "BILL-0004" in verdict.reason, verdict.reason
    assert not verdict.checks[1].met, verdict.checks[1].observed  # "no other bill": more touched than named


def test_the_wrong_bill_paid_is_not_verified_whatever_the_criteria_say() -> None:
    """No "nothing else" criterion at all: the plan's count (``_more_than_planned``) catches it."""
    c1 = "BILL-0003 is marked paid in Acme Payables"
    checks = [CriterionCheck(criterion=c1, met=True, source=BILLS, observed="-", find="BILL-0003")]
    verdict = _judged([c1], checks, [_paid("BILL-0004")], {BILLS: f"Bills\n{ROW_3}\n{ROW_4}"})
    assert not verdict.verified
    assert "a record with BILL-0004, which the plan did not name" in verdict.reason, verdict.reason


PAY_2057 = "The bill for invoice INV-2057 is paid, paid on 2026-10-01"
NO_OTHER = "No other bill was changed"


def _pay_2057_checks() -> list[CriterionCheck]:
    return [
        CriterionCheck(criterion=PAY_2057, met=True, source=BILLS, observed="-", find="INV-2057"),
        _on_sends(NO_OTHER),
    ]


def test_a_payment_sent_to_the_bills_address_is_the_plans_invoice_where_a_page_row_shows_both() -> None:
    row = ROW_11.replace("| Paid |", "| Paid (paid on 2026-10-01) |")
    verdict = _judged(
        [PAY_2057, NO_OTHER], _pay_2057_checks(), [_paid("BILL-0011")], {BILLS: f"Bills\n{row}"}
    )
    assert verdict.verified, verdict.reason


def test_a_payment_sent_to_the_bills_address_is_the_plans_invoice_where_the_difference_shows_both() -> None:
    diff_source = f"{CHANGES_SOURCE} {BILLS}"
    diff = (
        f"Before/after difference of {BILLS}:\nLines of the page added (1):\n"
        f"+ {ROW_11.replace('| Paid |', '| Paid (paid on 2026-10-01) |')}\n"
        "Lines removed or changed (1; as they were before):\n"
        f"- {ROW_11.replace('| Paid |', '| Unpaid |')}\nLines unchanged: 40"
    )
    checks = [
        CriterionCheck(criterion=PAY_2057, met=True, source=diff_source, observed="-", find="INV-2057"),
        _on_sends(NO_OTHER),
    ]
    verdict = _judged([PAY_2057, NO_OTHER], checks, [_paid("BILL-0011")], {diff_source: diff})
    assert verdict.verified, verdict.reason


def test_a_second_bill_paid_beside_the_plans_is_counted() -> None:
    row = ROW_11.replace("| Paid |", "| Paid (paid on 2026-10-01) |")
    sends = [_paid("BILL-0011"), _paid("BILL-0004")]
    verdict = _judged([PAY_2057, NO_OTHER], _pay_2057_checks(), sends, {BILLS: f"Bills\n{row}\n{ROW_4}"})
    assert not verdict.verified
    assert "BILL-0004" in verdict.reason, verdict.reason


def test_a_plan_naming_no_identifier_is_still_the_verifiers_word() -> None:
    """The Initech bill, named by no identifier: how many records the plan names, code cannot tell."""
    c1 = "The Initech bill is marked paid in Acme Payables"
    c2 = "No other bill was paid"
    checks = [
        CriterionCheck(criterion=c1, met=True, source=BILLS, observed="-", find="Initech"),
        _on_sends(c2),
    ]
    verdict = _judged([c1, c2], checks, [_paid("BILL-0003")], {BILLS: f"Bills\n{ROW_3}"})
    assert verdict.verified, verdict.reason
