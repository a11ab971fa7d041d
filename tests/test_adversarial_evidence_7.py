"""A bill named without its identifier, a quoted status, a note's status word, an answer's value
away from its identifier, two bills in one statement, and a negated "unpaid".

1. A criterion naming a bill by vendor and amount ("Globex Corp's invoice of 2150.00 USD is paid")
   named no identifier, so no row was its own: "paid" was held to nothing. The rows showing its
   amounts are its rows now.
2. A criterion quoting a status ('has the status "Paid"') claimed none: a quoted status is a claim.
3. A status word in another cell of the row ("| Unpaid | vendor says paid |") was the row's status
   too. A row's status is a cell that starts with it.
4. An answer's wrong value before its identifier ("2310.00 EUR is the amount of GX-5531"), after a
   dash or a line break ("GX-5531 — 2310.00 EUR"), or in a sentence of its own ("GX-5531. Status:
   paid") escaped the answer check. Such a value is the record's when nothing else claims it.
5. A verifier's statement naming two bills ("BILL-0002 and BILL-0001 … 2150.00 USD and 980.00
   USD") gave each both amounts: an answer taking the neighbour's passed.
6. "is no longer unpaid" / "is not unpaid" claimed nothing; it claims "paid".

Honest wordings stay accepted (sums, conversions, "still open", "overdue", instructions). Units on
``check_verdict`` and ``answer_unsupported`` only."""

from __future__ import annotations

import pytest
from test_adversarial_evidence_6 import ANSWER_ROW, PAID_NOW, STATUS_ROWS, TWO_ROWS, _met, _v

from taskcrew.crew.evidence import answer_unsupported, standing

# ---- 1. a bill named by vendor and amount ------------------------------------------------------


@pytest.mark.parametrize("changes_data", [True, False])
def test_a_bill_named_by_its_amount_is_held_to_its_row(changes_data: bool) -> None:
    paid = _v(
        "Globex Corp's invoice of 2150.00 USD is paid in Acme Payables",
        "Globex Corp 2150.00 USD",
        changes_data=changes_data,
    )
    assert not paid.verified and "Paid" in paid.reason
    honest = _v(
        "Globex Corp's invoice of 2150.00 USD is unpaid in Acme Payables",
        "Globex Corp 2150.00 USD Unpaid",
        changes_data=changes_data,
    )
    assert honest.verified and standing(honest.checks[0]) == "met", honest.reason
    other = _v(
        "Northwind Traders' bill of 980.00 USD is paid in Acme Payables",
        "Northwind 980.00 USD Paid",
        changes_data=changes_data,
    )
    assert other.verified, other.reason


def test_a_bill_named_by_its_amount_on_its_detail_page() -> None:
    url = "http://127.0.0.1:8800/bills/BILL-0002"
    page = "Bill: BILL-0002\nVendor: Globex Corp\nAmount: 2150.00 USD\nStatus: Unpaid\nNotes: —"
    assert not _v(
        "Globex Corp's bill of 2150.00 USD is paid in Acme Payables", "Globex Corp 2150.00 USD", page, url
    ).verified
    assert _v(
        "Globex Corp's bill of 2150.00 USD is unpaid in Acme Payables", "2150.00 USD Unpaid", page, url
    ).verified


# ---- 2. a quoted status ------------------------------------------------------------------------


@pytest.mark.parametrize("quoted", ['has the status "Paid"', "shows `Paid`", "has status “Paid”"])
def test_a_quoted_status_in_a_criterion_is_a_claim(quoted: str) -> None:
    v = _v(f"Bill BILL-0002 (GX-5531) {quoted} in Acme Payables", "BILL-0002 GX-5531 2150.00 USD")
    assert not v.verified and "Paid" in v.reason
    honest = _v(
        f"Bill BILL-0002 (GX-5531) {quoted.replace('Paid', 'Unpaid')} in Acme Payables",
        "BILL-0002 GX-5531 2150.00 USD Unpaid",
    )
    assert honest.verified, honest.reason


# ---- 3. a status word in another cell --------------------------------------------------------------

NOTE_ROWS = STATUS_ROWS.replace("| Unpaid |", "| Unpaid | vendor says paid |")


def test_a_status_word_in_a_notes_cell_is_not_the_rows_status() -> None:
    v = _v(
        "Bill BILL-0002 (Globex Corp GX-5531) is paid in Acme Payables",
        "BILL-0002 | Globex Corp | GX-5531 | 2150.00 | paid",
        NOTE_ROWS,
    )
    assert not v.verified and "Paid" in v.reason
    honest = _v(
        "Bill BILL-0002 (GX-5531) is unpaid in Acme Payables",
        "BILL-0002 GX-5531 2150.00 USD Unpaid",
        NOTE_ROWS,
    )
    assert honest.verified, honest.reason
    # a status cell with more in it ("Paid on 2026-09-05") is still the row's status
    dated = STATUS_ROWS.replace("| Paid | 2026-09-05 |", "| Paid on 2026-09-05 |")
    assert _v(
        "Bill BILL-0001 (INV-2031) is paid in Acme Payables", "BILL-0001 INV-2031 980.00 USD Paid", dated
    ).verified


# ---- 4. an answer's value away from its identifier ----------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "2310.00 EUR is the amount of GX-5531",
        "Amount 2310.00 EUR for GX-5531",
        "Paid: GX-5531",
        "GX-5531 — 2310.00 EUR",
        "GX-5531 - 2310.00 EUR, paid",
        "GX-5531\n2310.00 EUR",
        "GX-5531, Globex Corp, 980.00 USD",
        "GX-5531. Amount: 2310.00 EUR.",
        "GX-5531 is open. Status: paid",
        "GX\u20115531 is for 2310.00 EUR",  # a non-breaking hyphen
    ],
)
def test_an_answers_wrong_value_is_caught_wherever_it_stands(answer: str) -> None:
    assert answer_unsupported(answer, [_met(ANSWER_ROW)]) is not None


@pytest.mark.parametrize(
    ("answer", "observed"),
    [
        ("GX-5531 and INV-2031 total 3130.00 USD", TWO_ROWS),
        ("BILL-0002 and BILL-0001 together come to 3130.00 USD", TWO_ROWS),
        ("GX-5531 is 2150.00 USD; INV-2031 is 980.00 USD; together 3130.00 USD", TWO_ROWS),
        ("GX-5531 and INV-2031 are 2150.00 USD and 980.00 USD", TWO_ROWS),
        ("Unpaid bills over 1000.00 USD: GX-5531", ANSWER_ROW),
        ("BILL-0002 is outstanding: 2150.00 USD, approx. 1980.00 EUR", ANSWER_ROW),
        ("BILL-0002 is outstanding, approx. 1980.00 EUR", ANSWER_ROW),
        ("GX-5531 is 2150.00 USD; with the 10% discount 1935.00 USD", ANSWER_ROW),
        ("BILL-0002 GX-5531 2150.00 USD (2,150.00 USD incl. 0.00 fees)", ANSWER_ROW),
        (
            "BILL-0002 2150.00 USD is unpaid; paying it by 2026-09-14 avoids the 2% late fee of 43.00 USD",
            ANSWER_ROW,
        ),
        ("BILL-0002 (2150.00 USD) was not paid; you can mark it paid once the transfer is made", ANSWER_ROW),
        ("BILL-0002 is Unpaid. To pay it, open BILL-0002 and press Mark paid", ANSWER_ROW),
        ("GX-5531 is 2150.00 USD, due 2026-09-14. Status: Unpaid", ANSWER_ROW),
        ("GX-5531 - 2150.00 USD, unpaid", ANSWER_ROW),
        ("GX-5531\n2150.00 USD\nStatus: Unpaid", ANSWER_ROW),
        ("2150.00 USD is the amount of GX-5531", ANSWER_ROW),
        ("BILL-0002 (GX-5531) is still open: 2150.00 USD due 2026-09-14", ANSWER_ROW),
        ("BILL-0002 for 2150.00 USD is unpaid, pending approval", ANSWER_ROW),
        ("1 bill is unpaid: BILL-0002 Globex Corp GX-5531 2150.00 USD. Total: 2150.00 USD", ANSWER_ROW),
        (
            "1 bill is unpaid and due before 2026-10-01: BILL-0002 Globex Corp GX-5531 2150.00 USD due "
            "2026-09-14. Total per currency: 3130.00 USD (BILL-0002 2150.00, BILL-0001 980.00)",
            TWO_ROWS,
        ),
        # a status word that labels a field is no claim of that status
        ("GX-5531 is 2150.00 USD. Paid so far: 0.00 USD", ANSWER_ROW),
        ("GX-5531: 2150.00 USD. Paid on: —", ANSWER_ROW),
        ("GX-5531 2150.00 USD. Paid: 0.00 USD", ANSWER_ROW),
    ],
)
def test_honest_answers_stay_accepted(answer: str, observed: str) -> None:
    assert answer_unsupported(answer, [_met(observed)]) is None


# ---- 5. one statement naming two bills ------------------------------------------------------------


def test_one_statement_naming_two_bills_gives_each_its_own_amount() -> None:
    v = _v(
        "Bills BILL-0002 and BILL-0001 are in Acme Payables",
        "BILL-0002 and BILL-0001 are listed with 2150.00 USD and 980.00 USD",
    )
    assert v.verified and standing(v.checks[0]) == "met", v.reason
    assert answer_unsupported("BILL-0002 is for 980.00 USD", v.checks) is not None
    assert answer_unsupported("BILL-0001 is for 2150.00 USD", v.checks) is not None
    assert answer_unsupported("BILL-0002 is for 2150.00 USD and BILL-0001 for 980.00 USD", v.checks) is None
    # two names of one bill in one statement still share its values
    assert answer_unsupported("GX-5531 is for 2150.00 USD", [_met("BILL-0002 (GX-5531) 2150.00 USD")]) is None


# ---- 6. a negated "unpaid" ---------------------------------------------------------------------------


@pytest.mark.parametrize("words", ["is no longer unpaid", "is not unpaid"])
def test_a_negated_unpaid_claims_paid(words: str) -> None:
    v = _v(f"Bill BILL-0002 (Globex Corp GX-5531) {words} in Acme Payables", "BILL-0002 GX-5531 2150.00 USD")
    assert not v.verified and "Paid" in v.reason
    honest = _v(
        f"Bill BILL-0002 (GX-5531) {words} in Acme Payables", "BILL-0002 GX-5531 2150.00 USD Paid", PAID_NOW
    )
    assert honest.verified, honest.reason


# ---- honest criteria still verify ---------------------------------------------------------------------

ROWS3 = (
    STATUS_ROWS
    + "\n| [25] BILL-0003 | Initech | INI-2201 | 120.00 | USD | 2026-08-01 | 2026-08-31 | Unpaid | — |"
)


@pytest.mark.parametrize(
    ("criterion", "observed", "page"),
    [
        (
            "Bill BILL-0002 (GX-5531) is still open in Acme Payables",
            "BILL-0002 GX-5531 2150.00 USD Unpaid",
            ROWS3,
        ),
        (
            "The open bill BILL-0002 (GX-5531) of 2150.00 USD is recorded in Acme Payables",
            "BILL-0002 GX-5531 2150.00 USD Unpaid",
            ROWS3,
        ),
        (
            "Bill BILL-0002 (GX-5531) is overdue in Acme Payables",
            "BILL-0002 GX-5531 due 2026-09-14 Unpaid",
            ROWS3,
        ),
        (
            "Bill BILL-0002, previously unpaid, is now marked paid in Acme Payables",
            "BILL-0002 2150.00 USD Paid",
            PAID_NOW,
        ),
        ("Bill BILL-0002 moves from Unpaid to Paid in Acme Payables", "BILL-0002 2150.00 USD Paid", PAID_NOW),
        (
            "Bill BILL-0002 is paid, not open, in Acme Payables",
            "BILL-0002 GX-5531 2150.00 USD Paid",
            PAID_NOW,
        ),
        (
            "Bill BILL-0002 (GX-5531) is not paid yet in Acme Payables",
            "BILL-0002 GX-5531 2150.00 Unpaid",
            ROWS3,
        ),
        ("Initech's bill of 120.00 USD is open in Acme Payables", "Initech 120.00 USD Unpaid", ROWS3),
        (
            "Globex Corp's bill of 2150.00 USD was marked paid in Acme Payables",
            "Globex 2150.00 USD Paid",
            PAID_NOW,
        ),
        (
            "Two bills totalling 3130.00 USD are in Acme Payables",
            "BILL-0002 2150.00 USD, BILL-0001 980.00 USD",
            STATUS_ROWS,
        ),
    ],
)
def test_honest_criteria_still_verify(criterion: str, observed: str, page: str) -> None:
    v = _v(criterion, observed, page)
    assert v.verified, v.reason
