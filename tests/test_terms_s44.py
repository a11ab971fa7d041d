"""Payment terms: a day count from another event than the invoice is refused, "n/30" is the net count;
the verifier reads a year-first dotted date and an Indian-grouped amount on a page as the invoice
reader does."""

from __future__ import annotations

from datetime import date

import pytest

from taskcrew.crew.evidence import values
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.steps import check_verdict
from taskcrew.tools.ap import APInputError, due_date

INVOICE = "2026-10-01"


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30 days after delivery",
        "30 days from receipt of goods",
        "payable 30 days after date of delivery",
        "Due 45 days after shipment",
        "Payment within 30 days of delivery and invoice",
        "30 Tage nach Lieferung",
        "30 Tage nach Wareneingang",
        "Zahlbar 30 Tage nach Erhalt der Ware",
        "30 Tage nach Lieferung und Rechnungserhalt",
        "30 jours après livraison",
        "30 jours après réception de la marchandise",
        "30 días desde la entrega",
        "30 giorni dalla consegna",
        "30 gg data consegna",
        "30 dagen na levering",
        "2/10 n/30 after delivery",
    ],
)
def test_a_count_from_another_event_than_the_invoice_is_refused(terms: str) -> None:
    with pytest.raises(APInputError) as refused:
        due_date(INVOICE, terms)
    message = str(refused.value)
    assert "counts from another event than the invoice" in message
    assert "pass that; otherwise ask a human" in message


@pytest.mark.parametrize(
    ("terms", "due"),
    [
        ("Net 30", date(2026, 10, 31)),
        ("30 days net", date(2026, 10, 31)),
        ("30 days from invoice date", date(2026, 10, 31)),
        ("net 30 days from date of invoice", date(2026, 10, 31)),
        ("30 days after receipt of invoice", date(2026, 10, 31)),
        ("Within 30 days after receipt; 2% Skonto within 10 days", date(2026, 10, 31)),
        ("30 Tage netto", date(2026, 10, 31)),
        ("30 Tage nach Rechnungserhalt", date(2026, 10, 31)),
        ("Net 30 days after receipt of a correct invoice", date(2026, 10, 31)),
        ("30 jours à compter de la date de facture", date(2026, 10, 31)),
        ("30 jours fin de mois", date(2026, 11, 30)),
        ("Net 30 days from end of month", date(2026, 11, 30)),
        ("30 giorni data fattura", date(2026, 10, 31)),
        ("Zahlbar innerhalb 14 Tagen", date(2026, 10, 15)),
        ("Returns accepted within 14 days of delivery. Payment: Net 30", date(2026, 10, 31)),
    ],
)
def test_a_count_from_the_invoice_or_its_receipt_runs_from_the_invoice_date(terms: str, due: date) -> None:
    assert due_date(INVOICE, terms).due_date == due


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30 days after delivery on 2026-10-05",
        "30 days after delivery (2026-10-05)",
        "30 Tage nach Lieferung am 05.10.2026",
        "Net 30 from delivery date 2026-10-05",
    ],
)
def test_a_count_from_another_event_runs_from_the_date_the_terms_give_it(terms: str) -> None:
    counted = due_date(INVOICE, terms)
    assert counted.due_date == date(2026, 11, 4)
    assert "the date the terms count from" in counted.derivation


@pytest.mark.parametrize(
    ("terms", "days", "discount"),
    [
        ("2/10, n/30", 30, 10),
        ("2/10 n/30", 30, 10),
        ("2% 10, n 30", 30, 10),
        ("1/15 net 45", 45, 15),
        ("N/30", 30, None),
    ],
)
def test_n_slash_30_is_the_net_count(terms: str, days: int, discount: int | None) -> None:
    counted = due_date(INVOICE, terms)
    assert counted.rule == "net_days" and counted.days == days
    if discount is None:
        assert counted.note is None
    else:
        assert counted.note is not None and f"within {discount} days" in counted.note


ERP = "http://127.0.0.1:8800"
PAGE = f"{ERP}/bills/7"
PLAN = Plan(
    goal="Check the bill",
    changes_data=False,
    success_criteria=["c"],
    steps=[PlanStep(role="browser_operator", title="Look", instructions="Look it up.")],
)
SHOWN = [
    "Bill BILL-0007",
    "Vendor: Tata Steel",
    "Amount: 1,28,450.00 INR",
    "Due date: 2027.01.15",
    "Status: unpaid",
]


def _checked(observed: str) -> Verdict:
    check = CriterionCheck(criterion="c", met=True, source=PAGE, observed=observed)
    return check_verdict(Verdict(verified=True, checks=[check], reason="ok"), PLAN, {PAGE}, {PAGE: SHOWN})


def test_the_verifier_reads_a_year_first_dotted_date_and_an_indian_grouped_amount() -> None:
    assert "2027-01-15" in values("Due date: 2027.01.15")
    assert "128450" in values("Amount: 1,28,450.00 INR")
    assert "1234567.5" in values("12,34,567.50")


@pytest.mark.parametrize(
    "observed",
    [
        "BILL-0007 shows amount 128,450.00 INR",
        "BILL-0007 shows amount 1,28,450.00 INR",
        "BILL-0007 is due 2027-01-15",
        "BILL-0007 is due 15 January 2027",
    ],
)
def test_an_honest_claim_of_what_the_page_shows_is_accepted(observed: str) -> None:
    assert _checked(observed).verified


@pytest.mark.parametrize(
    ("observed", "unshown"),
    [("BILL-0007 amount 1,28,451.00", "128451"), ("BILL-0007 due 2027.01.16", "2027-01-16")],
)
def test_a_value_the_page_does_not_show_is_rejected(observed: str, unshown: str) -> None:
    checked = _checked(observed)
    assert not checked.verified and f"does not show {unshown}" in checked.checks[0].observed
