"""A record noun counted where it names no record the plan creates (a red team's fourth round).

A number before a record noun ("exactly one bill") allows as many more records in a data-changing
run. The noun was read as a record wherever it stood first in a phrase: "The bill has exactly 2
invoice lines", "Only one payment term applies", "The vendor has exactly one contact person", "The
bill is to be paid in a single payment", "The bill is recorded against a single purchase order"
each allowed one or two more records beside the GX-5531 bill the plan names, and a typo'd GX-5513
bill saved first verified. Now (``evidence._counted``, ``_heads``, ``_of_the_plan``):

1. a record noun names a record only as the head of its phrase — before the end, a mark, an
   identifier or a word that is no noun; before any other noun, in any language, it is a modifier
   ("invoice lines", "payment term", "contact person", "invoice Positionen", "invoice-lines");
2. a count or record noun after the verb of a clause about a record or a field of one ("The bill
   has …", "The amount is booked to …") is what that record holds or is tied to, not a record;
3. a count allows more records only of the kind the plan creates or changes (its criteria naming
   records by identifier), of a generic noun, or said to be created or changed: a count of things of
   another kind that are there ("Exactly one purchase order is referenced") allows none.
"""

from __future__ import annotations

import pytest
from test_adversarial_evidence import _check
from test_adversarial_evidence_8 import DIFF_SOURCE, TYPO_DIFF, TYPO_THEN_RIGHT, _bill, _diff, _row, _verdict

from taskcrew.crew.evidence import NOTHING_ELSE, SENDS_SOURCE, _plan_names, _stated_count

GLOBEX = "Acme Payables has a bill for Globex Corp GX-5531 of 2150.00 USD"
INITECH = "Acme Payables has a bill for Initech INI-7781 of 3420.00 USD"
TWO_BILLS = [_bill("GX-5531"), _bill("INI-7781", "3420.00")]
# what code's before/after read-back of the bills shows of each run
ONE_BILL_DIFF = _diff([_row("BILL-0013")])
INITECH_ROW = "BILL-0012 | Initech | INI-7781 | 3420.00 | USD | 2026-09-01 | 2026-10-01 | Unpaid | —"
TWO_BILLS_DIFF = _diff([INITECH_ROW, _row("BILL-0013")])
NOT_HELD = "not what it holds"  # the record of sends cited for what a bill holds: rejected


def _checks(criteria: list[str], source: str = DIFF_SOURCE) -> list:
    finds = {GLOBEX: "GX-5531", INITECH: "INI-7781"}
    return [_check(c, source, "-", find=finds.get(c, "2150.00")) for c in criteria]


# the red team's seven, then the same in other words, cases and languages
POC = [
    "The bill has exactly 2 invoice lines",
    "The bill lists exactly two invoice line items",
    "The amount is booked to exactly one expense account",
    "Only one payment term applies (Net 30)",
    "The vendor has exactly one contact person",
    "The bill is to be paid in a single payment",
    "The bill is recorded against a single purchase order",
]
VARIANTS = [
    "Exactly 2 Invoice Lines are on the bill",  # title case: "Invoice" is no proper name before a record
    "The bill has exactly two invoice-lines",
    "The bill carries exactly 2 invoice Positionen",
    "The bill carries exactly 2 Rechnungspositionen",
    "Exactly one vendor Ansprechpartner is listed",
    "Only one payment échéance applies",
    "Exactly one contact person is on file for the vendor",
    "Exactly one bill number is set",
    "Exactly one payment plan applies",
    "The bill has exactly one payment schedule",
    "The amount is booked to exactly one Expense Account",  # "Expense" read as a name: the clause rule
    "The new bill is linked to exactly one order",
    "Its due date falls in a single payment period",
    "Exactly one purchase order is referenced",  # another kind, not said to be made
    "Only one Expense Account is used",
    "Acme Payables has exactly one vendor named Globex Corp",
]


@pytest.mark.parametrize("extra", POC + VARIANTS)
def test_a_count_of_what_a_record_holds_allows_no_second_bill(extra: str) -> None:
    """Checked on code's before/after difference; the record of sends, no evidence of what the bill
    holds, verifies neither run — and still counts the typo'd bill."""
    criteria = [GLOBEX, extra]
    planned = _plan_names(criteria)
    assert planned is not None and planned.more == 0 and planned.total == 0, planned
    v = _verdict(criteria, _checks(criteria), TYPO_THEN_RIGHT, TYPO_DIFF)
    assert not v.verified and "GX-5513" in v.reason, v.reason
    # the honest run of the same plan: one bill, verified
    v = _verdict(criteria, _checks(criteria), [_bill("GX-5531")], ONE_BILL_DIFF)
    assert v.verified, v.reason
    # cited on the record of sends: the bill's criterion is rejected, and the second bill still counted
    v = _verdict(criteria, _checks(criteria, SENDS_SOURCE), TYPO_THEN_RIGHT, None)
    assert not v.verified and NOT_HELD in v.reason and "GX-5513" in v.reason, v.reason
    v = _verdict(criteria, _checks(criteria, SENDS_SOURCE), [_bill("GX-5531")], None)
    assert not v.verified and NOT_HELD in v.reason, v.reason


@pytest.mark.parametrize(
    "criterion",
    [
        *POC[:5],
        "Exactly 2 Invoice Lines are on the bill",
        "The bill has exactly two invoice-lines",
        "Exactly one vendor Ansprechpartner is listed",
        "Exactly one contact person is on file for the vendor",
        "Exactly one bill number is set",
        "The amount is booked to exactly one Expense Account",
    ],
)
def test_a_modifier_or_what_a_record_holds_is_no_count(criterion: str) -> None:
    assert _stated_count(criterion) is None, criterion
    assert NOTHING_ELSE.search(criterion) is None, criterion


@pytest.mark.parametrize(
    "criterion,count",
    [
        ("Exactly two bills were created in Acme Payables", 2),
        ("exactly 2 bills", 2),
        ("Acme Payables has exactly one bill for the latest invoice from Initech", 1),
        ("Acme Payables has exactly one Globex Corp bill", 1),
        ("Acme Payables has exactly one invoice GX-5531 from Globex Corp", 1),
        ("Only one bill (GX-5531 from Globex Corp) was created in Acme Payables", 1),
        ("Only 3 vendors were added", 3),
        ("Exactly one bill created, for GX-5531", 1),
        ("Enter exactly two invoices from Initech as bills", 2),
        ("Exactly one payment was made for the bill", 1),
        ("The bill is entered; exactly one bill was created", 1),  # a clause of its own
        ("Exactly one purchase order is referenced", 1),  # a count — of another kind (see below)
    ],
)
def test_a_count_of_records_still_counts(criterion: str, count: int) -> None:
    assert _stated_count(criterion) == count, criterion


@pytest.mark.parametrize(
    "criteria",
    [
        [GLOBEX, "Acme Payables has exactly one bill for the latest invoice from Initech"],
        [GLOBEX, "Acme Payables has exactly 1 bill from Initech"],
        [GLOBEX, "Exactly one invoice from Initech is entered as a bill"],
        [GLOBEX, "Enter exactly one more invoice, from Initech, as a bill"],
        [GLOBEX, INITECH, "Exactly two bills were created in Acme Payables"],
        [GLOBEX, INITECH, "The bill has exactly 2 invoice lines"],
        [GLOBEX, "Exactly 2 records were created", "The vendor has exactly one contact person"],
    ],
)
def test_a_plan_asking_for_two_bills_still_allows_two(criteria: list[str]) -> None:
    """Checked on code's before/after difference; cited on the record of sends, not verified: it is
    no evidence of what a bill holds."""
    v = _verdict(criteria, _checks(criteria), TWO_BILLS, TWO_BILLS_DIFF)
    assert v.verified, v.reason
    v = _verdict(criteria, _checks(criteria, SENDS_SOURCE), TWO_BILLS, None)
    assert not v.verified and NOT_HELD in v.reason, v.reason
    assert "something else was created or changed" not in v.reason, v.reason  # two allowed still


def test_a_count_of_another_kind_said_to_be_made_still_allows_it() -> None:
    """A payment the plan says is made is a record it creates: counted, whatever its kind."""
    criteria = [GLOBEX, "Exactly one payment was made for the bill"]
    planned = _plan_names(criteria)
    assert planned is not None and planned.more == 1, planned
    # a plan counting purchase orders only as there: none allowed
    planned = _plan_names([GLOBEX, "Exactly one purchase order is referenced"])
    assert planned is not None and planned.more == 0, planned
