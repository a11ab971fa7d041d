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
   reference to another record (``_reference``: vendor, vendor_id, supplier, customer, account,
   parent …, not the form's own noun) no longer joins two records into one.
"""

from __future__ import annotations

import pytest
from test_adversarial_evidence import _check
from test_adversarial_evidence_8 import ERP, TYPO_THEN_RIGHT, _bill, _pay, _send, _verdict

from taskcrew.crew.evidence import NOTHING_ELSE, SENDS_SOURCE, _plan_names, _stated_count
from taskcrew.tools.submissions import SubmissionResult, classify

GLOBEX = "Acme Payables has a bill for Globex Corp GX-5531 of 2150.00 USD"
INITECH = "Acme Payables has a bill for Initech INI-7781 of 3420.00 USD"
NO_OTHER = "No other bill was created or changed"


def _no_redirect(s: SubmissionResult) -> SubmissionResult:
    return s.model_copy(update={"http_status": 200})


def _checks(criteria: list[str], finds: list[str]) -> list:
    return [_check(c, SENDS_SOURCE, "-", find=f) for c, f in zip(criteria, finds, strict=True)]


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
    criteria = [GLOBEX, extra]
    assert _stated_count(extra) is None, extra
    planned = _plan_names(criteria)
    assert planned is not None and planned.more == 0 and planned.total == 0, planned
    v = _verdict(criteria, _checks(criteria, ["GX-5531", "2150.00"]), TYPO_THEN_RIGHT, None)
    assert not v.verified and "GX-5513" in v.reason, v.reason
    # one bill entered, the same plan: verified
    v = _verdict(criteria, _checks(criteria, ["GX-5531", "2150.00"]), [_bill("GX-5531")], None)
    assert v.verified, v.reason


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
    finds = ["INI-7781" if "Initech" in c and "Globex" not in c else "GX-5531" for c in criteria]
    v = _verdict(criteria, _checks(criteria, finds), [_bill("GX-5531"), _bill("INI-7781", "3420.00")], None)
    assert v.verified, v.reason


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
    finds = ["GX-5531", "Data-changing submissions sent"][: len(criteria)]
    v = _verdict(criteria, _checks(criteria, finds), [_no_redirect(_bill("GX-5531")), change], None)
    assert v.verified, v.reason


def _created(location: str) -> SubmissionResult:
    """A save answered "201 Created" with the new record's address in its Location header."""
    url = f"{ERP}/bills/new"
    result, detail = classify(method="POST", url=url, http_status=201, location=location)
    return _bill("GX-5531").model_copy(update={"http_status": 201, "result": result, "detail": detail})


def test_a_201_location_is_recorded_as_the_record_the_create_made() -> None:
    made = _created("/bills/BILL-0013")
    assert made.result == "saved" and "/bills/BILL-0013" in made.detail, made
    for criteria in ([GLOBEX], [GLOBEX, NO_OTHER]):
        finds = ["GX-5531", "Data-changing submissions sent"][: len(criteria)]
        # paying the bill it made: one record
        assert _verdict(criteria, _checks(criteria, finds), [made, _pay("BILL-0013")], None).verified
        # paying another bill, nothing contradicting: evidence, not a guess — another record
        v = _verdict(criteria, _checks(criteria, finds), [made, _pay("BILL-0002")], None)
        assert not v.verified and "BILL-0002" in v.reason, v.reason


# ---- 3. a reference to another record joins no two records -----------------------------------------

VENDOR = "Acme Payables has vendor V-1042 Hooli GmbH"
HOOLI = "Acme Payables has a bill for Hooli GmbH HO-1001 of 500.00 EUR"
NEW_VENDOR = _send(f"{ERP}/vendors/new", [("vendor_number", "V-1042"), ("name", "Hooli GmbH")])


def _hooli(number: str, field: str = "vendor") -> SubmissionResult:
    fields = [(field, "V-1042"), ("invoice_number", number), ("amount", "500.00"), ("currency", "EUR")]
    return _send(f"{ERP}/bills/new", fields)


@pytest.mark.parametrize("field", ["vendor", "vendor_id", "supplier_code", "vendor_number"])
@pytest.mark.parametrize("criteria", [[VENDOR, HOOLI], [VENDOR, HOOLI, NO_OTHER]], ids=["plain", "no-other"])
def test_a_vendor_and_its_bill_created_verify(field: str, criteria: list[str]) -> None:
    finds = ["V-1042", "HO-1001", "Data-changing submissions sent"][: len(criteria)]
    v = _verdict(criteria, _checks(criteria, finds), [NEW_VENDOR, _hooli("HO-1001", field)], None)
    assert v.verified, v.reason


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
