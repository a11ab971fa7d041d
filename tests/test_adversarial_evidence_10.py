"""Three holes in the count of what a data-changing run touched (a red team's third round).

1. Any number after "exactly/only/just/at most" was read as a count of records the plan names: a
   plan naming GX-5531 beside "The amount is entered with exactly 2 decimal places" (or "exactly 30
   calendar days", "at most 45 business days", "only 1 line item") allowed 1+2, 1+30, 1+45 records,
   and a typo'd extra GX-5513 bill verified. Now a stated number counts records only when the noun
   after it is a record's (``evidence._RECORD_NOUN``, one list read by every count in the module), and
   a criterion naming no identifier, no count of records and no record by description
   (``_describes_a_record``: "a bill for …", "the Globex Corp bill"; not "the bill", "the invoice
   date") names no record of its own: the plan is counted by the others, never enlarged by it.
2. A change code could not link to any record was merged into an earlier create whose answer named
   none (HTTP 200, no redirect): an edit of ANOTHER bill (BILL-0002, invoice GX-1100, amount 9.00)
   after saving GX-5531 was taken for the new bill. Now a change that sends, in a field the create
   sent too, another identifier, amount or referred record is never that create's record
   (``_contradicts``), and a 201 answer's Location is recorded as the record the create made
   (``submissions.classify``), so the guess is needed less. Entered, then paid, is still one record.
3. A plan creating vendor V-1042 and a bill for it (the bill's form sending ``vendor=V-1042``) was
   refused: the two records showed V-1042, so they counted as one named record. A value sent as a
   reference to another record (``is_reference``: vendor, vendor_id, supplier, customer, account,
   parent …, not the form's own noun) no longer joins two records into one.

The record of sends is what the run sent, not what the ERP holds: every positive criterion here is
checked on the ERP's own page or on code's before/after difference (the page read counts records by
the sends alone, so the guards above are exercised without a row to link them), and the same check
cited on the record of sends is refused ("not what it holds").
"""

from __future__ import annotations

import pytest
from test_adversarial_evidence import BILLS, SYSTEMS, _check
from test_adversarial_evidence_8 import (
    DIFF_SOURCE,
    ERP,
    TYPO_DIFF,
    TYPO_THEN_RIGHT,
    _bill,
    _diff,
    _pay,
    _row,
    _send,
    _verdict,
)

from taskcrew.crew.evidence import (
    CHANGES_SOURCE,
    NOTHING_ELSE,
    SENDS_SOURCE,
    _plan_names,
    _stated_count,
    check_verdict,
)
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.outcome import Facts
from taskcrew.tools.submissions import SubmissionResult, classify

GLOBEX = "Acme Payables has a bill for Globex Corp GX-5531 of 2150.00 USD"
INITECH = "Acme Payables has a bill for Initech INI-7781 of 3420.00 USD"
NO_OTHER = "No other bill was created or changed"
SENT = "Data-changing submissions sent"  # a "nothing else" criterion's find on the record of sends
HOLDS = "not what it holds"  # the record of sends cited for what the ERP holds
ONE_DIFF = _diff([_row("BILL-0013")])
INITECH_ROW = "BILL-0014 | Initech | INI-7781 | 3420.00 | USD | 2026-09-01 | 2026-10-01 | Unpaid | —"


def _no_redirect(s: SubmissionResult) -> SubmissionResult:
    return s.model_copy(update={"http_status": 200})


def _checks(criteria: list[str], finds: list[str], source: str = SENDS_SOURCE) -> list[CriterionCheck]:
    """One check per criterion on ``source``; a "nothing else" criterion stays on the record of sends."""
    return [
        _check(c, SENDS_SOURCE if f == SENT else source, "-", find=f)
        for c, f in zip(criteria, finds, strict=True)
    ]


def _judged(
    criteria: list[str],
    checks: list[CriterionCheck],
    sends: list[SubmissionResult],
    pages: dict[str, str] | None = None,
    changes_data: bool = True,
) -> Verdict:
    """``_verdict`` with any pages or before/after differences beside the record of sends."""
    facts = Facts(submissions=sends)
    texts = {SENDS_SOURCE: [facts.record()], **{k: [v] for k, v in (pages or {}).items()}}
    plan = Plan(
        goal="enter the bills",
        success_criteria=criteria,
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=changes_data,
    )
    verdict = Verdict(verified=True, checks=checks, reason="ok")
    return check_verdict(verdict, plan, set(texts), texts, SYSTEMS, applied=facts.applied_lines())


def _bills_page(*rows: str) -> dict[str, str]:
    """The ERP's bills list as the verifier read it after the run."""
    return {BILLS: "Bills\n" + "\n".join(f"| {row} |" for row in rows)}


# ---- 1. a number not about records is no count of them ---------------------------------------------

NOT_RECORDS = [
    "The amount is entered with exactly 2 decimal places",
    "The due date is exactly 30 calendar days after the invoice date",
    "Payment terms are at most 45 business days",
    "Only 1 line item is on the bill",  # a line item is no record the plan creates; "the bill" is GX-5531
    "The due date is 30 days after the invoice date",  # no count word at all
]


@pytest.mark.parametrize("extra", NOT_RECORDS)
def test_a_number_not_counting_records_does_not_allow_more_bills(extra: str) -> None:
    """Checked on code's before/after difference; on the record of sends it is no evidence at all."""
    criteria = [GLOBEX, extra]
    assert _stated_count(extra) is None, extra
    planned = _plan_names(criteria)
    assert planned is not None and planned.more == 0 and planned.total == 0, planned
    on_diff = _checks(criteria, ["BILL-0013", "2150.00"], DIFF_SOURCE)
    v = _verdict(criteria, on_diff, TYPO_THEN_RIGHT, TYPO_DIFF)
    assert not v.verified and "GX-5513" in v.reason, v.reason
    # one bill entered, the same plan: verified
    v = _verdict(criteria, on_diff, [_bill("GX-5531")], ONE_DIFF)
    assert v.verified, v.reason
    # the same checks cited on the record of sends: what the run sent, not what the ERP holds
    for sends in (TYPO_THEN_RIGHT, [_bill("GX-5531")]):
        v = _verdict(criteria, _checks(criteria, ["GX-5531", "2150.00"]), sends, None)
        assert not v.verified and HOLDS in v.reason, v.reason
        assert ("GX-5513" in v.reason) == (sends is TYPO_THEN_RIGHT), v.reason  # still counted


@pytest.mark.parametrize(
    "criterion,count",
    [
        ("Acme Payables has exactly one GX-5531 bill from Globex Corp", 1),
        ("Acme Payables has exactly one Globex Corp bill", 1),  # a proper name before the noun
        ("Exactly two bills were created in Acme Payables", 2),
        ("Only one bill (GX-5531 from Globex Corp) was created in Acme Payables", 1),
        ("exactly one new invoice was entered", 1),
        ("Only 3 vendors were added", 3),
        ("The amount has exactly 2 decimal places", None),
        ("Exactly 1 line item was added to the bill", None),
        ("Only 1 attachment was uploaded", None),
    ],
)
def test_a_stated_number_counts_records_only_before_a_record_noun(criterion: str, count: int | None) -> None:
    assert _stated_count(criterion) == count, criterion
    if count is None:  # nor is it a claim that nothing else was created
        assert NOTHING_ELSE.search(criterion) is None, criterion


@pytest.mark.parametrize(
    "criteria",
    [
        ["Acme Payables has exactly one Globex Corp bill", INITECH],
        # a bill named by description, beside a criterion with a number of something else
        ["Acme Payables has a bill for the latest invoice from Initech", GLOBEX, NOT_RECORDS[0]],
        ["The Globex Corp bill and the Initech bill are entered", NOT_RECORDS[2]],
    ],
)
def test_honest_two_bills_still_verify(criteria: list[str]) -> None:
    """Verified on code's before/after difference and on the ERP's bills page, not on the record of sends."""
    sends = [_bill("GX-5531"), _bill("INI-7781", "3420.00")]
    finds = ["INI-7781" if "Initech" in c and "Globex" not in c else "GX-5531" for c in criteria]
    diff = _diff([_row("BILL-0013"), INITECH_ROW])
    v = _verdict(criteria, _checks(criteria, finds, DIFF_SOURCE), sends, diff)
    assert v.verified, v.reason
    v = _judged(criteria, _checks(criteria, finds, BILLS), sends, _bills_page(_row("BILL-0013"), INITECH_ROW))
    assert v.verified, v.reason
    v = _verdict(criteria, _checks(criteria, finds), sends, diff)
    assert not v.verified and HOLDS in v.reason, v.reason


# ---- 2. a change of another record is not merged into an unnamed create ----------------------------


EDIT_OTHER = _send(
    f"{ERP}/bills/BILL-0002/edit", [("invoice_number", "GX-1100"), ("amount", "9.00"), ("currency", "USD")]
)


@pytest.mark.parametrize("criteria", [[GLOBEX, NO_OTHER], [GLOBEX]], ids=["no-other", "plain"])
@pytest.mark.parametrize(
    "edit",
    [
        EDIT_OTHER,
        _send(f"{ERP}/bills/BILL-0002/edit", [("amount", "9.00")]),  # another amount only
        _send(f"{ERP}/bills/BILL-0002/edit", [("vendor_id", "7")]),  # another vendor only
    ],
    ids=["number-and-amount", "amount", "vendor"],
)
def test_editing_another_bill_after_an_unredirected_create_is_counted(
    criteria: list[str], edit: SubmissionResult
) -> None:
    finds = ["GX-5531", "Data-changing submissions sent"][: len(criteria)]
    v = _verdict(criteria, _checks(criteria, finds), [_no_redirect(_bill("GX-5531")), edit], None)
    assert not v.verified and "something else" in v.reason, v.reason


@pytest.mark.parametrize("criteria", [[GLOBEX, NO_OTHER], [GLOBEX]], ids=["no-other", "plain"])
@pytest.mark.parametrize(
    "change",
    [
        _pay("BILL-0013"),
        # the edit form sends the bill's fields again, as they were, with its new status and date
        _send(
            f"{ERP}/bills/BILL-0013/edit",
            [*_bill("GX-5531").fields, ("status", "Paid"), ("paid_on", "2026-10-02")],
        ),
    ],
    ids=["pay", "edit-same-values"],
)
def test_enter_then_change_the_same_bill_is_one_record(criteria: list[str], change: SubmissionResult) -> None:
    """The bill checked on the ERP's bills page (no row links the sends: the record of sends counts
    one record) or on code's before/after difference; on the record of sends, not verified."""
    sends = [_no_redirect(_bill("GX-5531")), change]
    paid = _row("BILL-0013", status="Paid")
    finds = ["GX-5531", SENT][: len(criteria)]
    v = _judged(criteria, _checks(criteria, finds, BILLS), sends, _bills_page(paid))
    assert v.verified, v.reason
    v = _verdict(criteria, _checks(criteria, finds, DIFF_SOURCE), sends, _diff([paid]))
    assert v.verified, v.reason
    v = _verdict(criteria, _checks(criteria, finds), sends, None)
    assert not v.verified and HOLDS in v.reason, v.reason


def _created(location: str) -> SubmissionResult:
    """A save answered "201 Created" with the new record's address in its Location header."""
    url = f"{ERP}/bills/new"
    result, detail = classify(method="POST", url=url, http_status=201, location=location)
    return _bill("GX-5531").model_copy(update={"http_status": 201, "result": result, "detail": detail})


def test_a_201_location_is_recorded_as_the_record_the_create_made() -> None:
    """The bill checked on the ERP's bills page, where no row links the sends (only the Location
    does); the record of sends cited for it is refused."""
    made = _created("/bills/BILL-0013")
    assert made.result == "saved" and "/bills/BILL-0013" in made.detail, made
    other = "BILL-0002 | Globex Corp | GX-1100 | 9.00 | USD | 2026-08-01 | 2026-08-31 | Paid | 2026-10-02"
    for criteria in ([GLOBEX], [GLOBEX, NO_OTHER]):
        finds = ["GX-5531", SENT][: len(criteria)]
        on_page = _checks(criteria, finds, BILLS)
        # paying the bill it made: one record
        v = _judged(
            criteria, on_page, [made, _pay("BILL-0013")], _bills_page(_row("BILL-0013", status="Paid"))
        )
        assert v.verified, v.reason
        # paying another bill, nothing contradicting: evidence, not a guess — another record
        v = _judged(criteria, on_page, [made, _pay("BILL-0002")], _bills_page(_row("BILL-0013"), other))
        assert not v.verified and "BILL-0002" in v.reason, v.reason
        # on the record of sends: not what the ERP holds, whichever bill was paid
        for pay in ("BILL-0013", "BILL-0002"):
            v = _verdict(criteria, _checks(criteria, finds), [made, _pay(pay)], None)
            assert not v.verified and HOLDS in v.reason, v.reason


# ---- 3. a reference to another record joins no two records -----------------------------------------

VENDOR = "Acme Payables has vendor V-1042 Hooli GmbH"
HOOLI = "Acme Payables has a bill for Hooli GmbH HO-1001 of 500.00 EUR"
NEW_VENDOR = _send(f"{ERP}/vendors/new", [("vendor_number", "V-1042"), ("name", "Hooli GmbH")])
VENDORS = f"{ERP}/vendors"
VENDORS_DIFF = f"{CHANGES_SOURCE} {VENDORS}"


def _diff_of(page: str, added: list[str]) -> str:
    """``_diff`` of another page than the bills list."""
    return _diff(added).replace(BILLS, page, 1).replace("bills", "vendors")


def _hooli(number: str, field: str = "vendor") -> SubmissionResult:
    fields = [(field, "V-1042"), ("invoice_number", number), ("amount", "500.00"), ("currency", "EUR")]
    return _send(f"{ERP}/bills/new", fields)


@pytest.mark.parametrize("field", ["vendor", "vendor_id", "supplier_code", "vendor_number"])
@pytest.mark.parametrize("criteria", [[VENDOR, HOOLI], [VENDOR, HOOLI, NO_OTHER]], ids=["plain", "no-other"])
def test_a_vendor_and_its_bill_created_verify(field: str, criteria: list[str]) -> None:
    """Checked on the ERP's vendors and bills pages (the record of sends counts the records) or on
    code's before/after differences of both; on the record of sends, not verified."""
    finds = ["V-1042", "HO-1001", SENT][: len(criteria)]
    sends = [NEW_VENDOR, _hooli("HO-1001", field)]
    vendor, bill = (
        "V-1042 | Hooli GmbH",
        "BILL-0011 | Hooli GmbH | HO-1001 | 500.00 | EUR | 2026-09-01 | 2026-10-01 | Unpaid | —",
    )
    checks = [*_checks(criteria[:1], finds[:1], VENDORS), *_checks(criteria[1:], finds[1:], BILLS)]
    v = _judged(criteria, checks, sends, {VENDORS: f"Vendors\n| {vendor} |", **_bills_page(bill)})
    assert v.verified, v.reason
    diffs = {VENDORS_DIFF: _diff_of(VENDORS, [vendor]), DIFF_SOURCE: _diff([bill])}
    checks = [*_checks(criteria[:1], finds[:1], VENDORS_DIFF), *_checks(criteria[1:], finds[1:], DIFF_SOURCE)]
    v = _judged(criteria, checks, sends, diffs)
    assert v.verified, v.reason
    v = _judged(criteria, _checks(criteria, finds), sends, {})
    assert not v.verified and HOLDS in v.reason, v.reason


@pytest.mark.parametrize("criteria", [[VENDOR, HOOLI], [VENDOR, HOOLI, NO_OTHER]], ids=["plain", "no-other"])
def test_a_typod_extra_bill_for_the_new_vendor_is_still_counted(criteria: list[str]) -> None:
    finds = ["V-1042", "HO-1001", "Data-changing submissions sent"][: len(criteria)]
    sends = [NEW_VENDOR, _hooli("HO-1010"), _hooli("HO-1001")]
    v = _verdict(criteria, _checks(criteria, finds), sends, None)
    assert not v.verified and "HO-1010" in v.reason, v.reason
    # two bills for the same invoice, the vendor's number on both
    sends = [NEW_VENDOR, _hooli("HO-1001"), _hooli("HO-1001").model_copy(update={"fields": [
        ("vendor", "V-1042"), ("invoice_number", "HO-1001"), ("amount", "5000.00"), ("currency", "EUR")]})]  # fmt: skip
    v = _verdict(criteria, _checks(criteria, finds), sends, None)
    assert not v.verified, v.reason
