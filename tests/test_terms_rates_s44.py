"""Payment terms: one rule for a rate beside a day count (a part to pay early is no discount; a tax's
rate is none), only sentences about paying give day counts, the month end starts a count only when tied
to it, a date in the terms is never a rate; two-digit-year slash dates and ordinals are read; a trailing
"CR" marks a credit for ``parse_amount`` and the provenance alike; cash terms and "Net 15th of following
month" are read."""

from __future__ import annotations

from datetime import date

import pytest

from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import value_origin
from taskcrew.tools import ap
from taskcrew.tools.documents.provenance import shows_value

INVOICE = "2026-10-05"


@pytest.mark.parametrize(
    "terms",
    [
        "Prepayment 10% within 7 days, Net 30",
        "Pay 10% within 7 days, remainder Net 30",
        "First payment 10% within 7 days; Net 30",
        "Partial payment 10% within 10 days, net 30",
        "Milestone 10% within 14 days, Net 60",
        "5% within 10 days, 95% within 30 days",
        "Net 30. 5% within 60 days",  # a "discount" later than the net date
        # the rate's part is bare, but the net count beside it says it is the remainder's
        "Terms: 10% within 7 days, remainder Net 30",
        "Terms: 10% within 7 days, balance due Net 30",
    ],
)
def test_a_rate_with_a_day_count_and_no_discount_form_is_refused(terms: str) -> None:
    """They were read as an early-payment discount (note "10% if paid within 7 days", due at the net
    date); a share to pay early is no discount to take: ask a human."""
    with pytest.raises(ap.APInputError, match="a rate with a day count that is no early-payment discount"):
        ap.due_date(INVOICE, terms)


@pytest.mark.parametrize(
    "terms",
    [
        "2% discount within 10 days. Warranty 90 days.",
        "2% Skonto within 10 days. Delivery within 45 days.",
        "3% Skonto innerhalb 8 Tagen. Lieferung innerhalb 60 Tagen.",
    ],
)
def test_a_day_count_of_a_sentence_not_about_paying_is_no_net_count(terms: str) -> None:
    """Were due in 90 / 45 / 60 days: a warranty or delivery period read as the net count."""
    with pytest.raises(ap.APInputError, match="a day count only for the discount"):
        ap.due_date(INVOICE, terms)


@pytest.mark.parametrize(
    ("terms", "due", "discount"),
    [
        ("Net 30, 2% within 10 days", date(2026, 11, 4), "2% if paid within 10 days"),
        ("2/10 Net 30", date(2026, 11, 4), "2% if paid within 10 days"),
        ("Payment terms: 2/10 net 30", date(2026, 11, 4), "2% if paid within 10 days"),
        (
            "Within 30 days after receipt; 2% Skonto within 10 days",
            date(2026, 11, 4),
            "2% if paid within 10 days",
        ),
        ("Net 10. 2% within 10 days", date(2026, 10, 15), "2% if paid within 10 days"),  # was refused
        ("Net 30. 7% VAT.", date(2026, 11, 4), None),  # were refused: the VAT rate read as a discount
        ("Net 14. 8% VAT included.", date(2026, 10, 19), None),
        ("Net 30 incl. 5% VAT", date(2026, 11, 4), None),
        ("Payment within 30 days incl. 7% MwSt", date(2026, 11, 4), None),
        ("Zahlbar innerhalb 14 Tagen inkl. 7% MwSt.", date(2026, 10, 19), None),
        ("Net 30, 2% within 10 days, VAT 19%", date(2026, 11, 4), "2% if paid within 10 days"),
    ],
)
def test_discounts_in_their_fixed_forms_and_tax_rates_beside_a_count(
    terms: str, due: date, discount: str | None
) -> None:
    got = ap.due_date(INVOICE, terms)
    assert got.due_date == due, got.derivation
    if discount is None:
        assert got.note is None
    else:
        assert got.note and discount in got.note


@pytest.mark.parametrize(
    "terms", ["Net 30, statements issued at month end", "Net 30 days, month-end statement enclosed"]
)
def test_a_month_end_not_tied_to_the_count_starts_nothing(terms: str) -> None:
    """Were due 2026-11-30: any mention of month end moved the count's start."""
    assert ap.due_date(INVOICE, terms).due_date == date(2026, 11, 4)


@pytest.mark.parametrize(
    "terms",
    ["30 days EOM", "EOM + 30", "end of month + 30", "Net 30 days after month end", "30 Tage nach Monatsende",
     "30 jours fin de mois"],
)  # fmt: skip
def test_a_count_tied_to_the_month_end_still_runs_from_it(terms: str) -> None:
    got = ap.due_date(INVOICE, terms)
    assert (got.due_date, got.rule) == (date(2026, 11, 30), "end_of_month_plus_days")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("10/20/26", date(2026, 10, 20)),
        ("15/10/26", date(2026, 10, 15)),
        ("1er novembre 2026", date(2026, 11, 1)),
        ("1° ottobre 2026", date(2026, 10, 1)),
        ("1º de octubre de 2026", date(2026, 10, 1)),
    ],
)
def test_slash_dates_with_a_two_digit_year_and_ordinals_are_read(text: str, want: date) -> None:
    assert ap.parse_date(text).value == want
    assert ap.compare(text, "2026-09-30").relation == "a_greater"


@pytest.mark.parametrize("text", ["10/05/26", "12-10-26"])
def test_an_ambiguous_or_hyphenated_short_date_is_not_read(text: str) -> None:
    with pytest.raises(ap.APInputError):
        ap.parse_date(text)


def test_a_due_date_in_the_terms_is_no_discount() -> None:
    """Gave a made-up note "10% if paid within 20 days": the date's 10/20 read as a rate."""
    got = ap.due_date("2026-09-20", "Terms: Net 30   Due Date: 10/20/26")
    assert (got.due_date, got.note) == (date(2026, 10, 20), None)


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30 - due by 15/10/26",  # gave 2026-10-20, later than printed, and a 15% "discount"
        "Paiement à 30 jours, échéance : 1er novembre 2026",  # gave 2026-10-20 with no word of the date
    ],
)
def test_a_printed_due_date_the_count_contradicts_is_refused(terms: str) -> None:
    with pytest.raises(ap.APInputError, match="ask a human"):
        ap.due_date("2026-09-20", terms)


@pytest.mark.parametrize(("terms", "why"), [("Net 30 due 10/20/2", "looks like a date"), ("Net 30, due 10/05/26", "ambiguous date")])  # fmt: skip
def test_a_date_shaped_token_not_read_refuses_the_terms(terms: str, why: str) -> None:
    with pytest.raises(ap.APInputError, match=why):
        ap.due_date("2026-09-20", terms)


@pytest.mark.parametrize(
    ("text", "plain", "currency"),
    [("120.00 CR", "-120.00", None), ("USD 120.00 CR", "-120.00", "USD"), ("1.234,50 € CR", "-1234.50", "EUR"),
     ("120.00 Cr", "-120.00", None)],
)  # fmt: skip
def test_a_trailing_cr_is_a_credit(text: str, plain: str, currency: str | None) -> None:
    got = ap.parse_amount(text)
    assert (got.plain, got.currency) == (plain, currency)
    assert "'CR': a credit" in got.derivation


@pytest.mark.parametrize("text", ["-120.00 CR", "(120.00) CR"])
def test_a_credit_marked_twice_is_refused(text: str) -> None:
    with pytest.raises(ap.APInputError, match="marks a credit twice"):
        ap.parse_amount(text)


def test_the_provenance_reads_a_cr_line_as_the_credit() -> None:
    line = "Amount due: USD 120.00 CR"
    assert shows_value(line, "-120.00") and not shows_value(line, "120.00")
    assert shows_value("Balance 1,500 CR", "-1500") and not shows_value("Balance 1,500 CR", "1500")


def test_a_cr_credit_entered_as_a_bill_carries_the_credit_caution() -> None:
    text = "CONTOSO OFFICE SUPPLIES\nCREDIT NOTE CN-0042 against CO-55120\nAmount due: USD 120.00 CR"
    report = StepReport(status="done", summary="Read it.", data={"amount": "120.00"},
                        sources=[Citation(source="inbox/cn.pdf", quote="Amount due: USD 120.00 CR")])  # fmt: skip
    origin = value_origin("120.00", [(1, "file_reader", report)], lambda _s: text)
    assert "minus sign" in origin, origin


@pytest.mark.parametrize(
    ("terms", "due"),
    [
        ("COD", date(2026, 9, 20)),
        ("Netto Kasse", date(2026, 9, 20)),
        ("Paiement comptant", date(2026, 9, 20)),
        ("pago al contado", date(2026, 9, 20)),
        ("Rimessa diretta", date(2026, 9, 20)),
        ("Vista fattura", date(2026, 9, 20)),
        ("Paiement à 30 jours. Pas d'escompte pour paiement comptant", date(2026, 10, 20)),  # a count: it
        ("Net 15th of following month", date(2026, 10, 15)),
        ("Net 10th prox", date(2026, 10, 10)),
    ],
)
def test_cash_terms_and_a_day_of_the_next_month(terms: str, due: date) -> None:
    assert ap.due_date("2026-09-20", terms).due_date == due


@pytest.mark.parametrize("terms", ["Net 30, 15th of following month", "30th prox"])
def test_a_day_of_the_next_month_beside_a_count_or_past_its_end_is_refused(terms: str) -> None:
    with pytest.raises(ap.APInputError, match="not understood"):
        ap.due_date("2027-01-20", terms)


@pytest.mark.parametrize(
    "terms", ["Prepayment 10% within 7 days, Net 30", "2% discount within 10 days. Warranty 90 days."]
)
def test_a_learned_template_hands_such_terms_to_the_agent(terms: str) -> None:
    """A learned routine's template (no model) derives the due date from the terms and the replay types
    it into the ERP: such terms give none, the document goes to the agent."""
    from taskcrew.config import DEFAULT_SANDBOX
    from taskcrew.routines.template import ExtractionError, extract, learn
    from taskcrew.sandbox.ground_truth import load_ground_truth
    from taskcrew.tools.files import SandboxFiles

    files = SandboxFiles(DEFAULT_SANDBOX / "inbox")
    doc = next(d for d in load_ground_truth().documents if d.number == "INV-2057")
    text = files.read(doc.path).full_text()
    values = {
        "invoice_number": doc.number,
        "amount": f"{doc.total:.2f}",
        "currency": doc.currency,
        "invoice_date": doc.invoice_date.isoformat(),
        "due_date": doc.due_date.isoformat(),
    }
    template = learn(text, values, "Northwind Traders", doc.path)
    assert "Terms Net 30" in text
    with pytest.raises(ExtractionError):
        extract(template, text.replace("Terms Net 30", f"Terms {terms}"))
