"""Remarks in prose are not terms nor signs (regressions of ec6f4a3).

1. Working days refused only where they are the count the terms give ("payable within 10 working
   days"): a note on how long a transfer takes beside "Net 30" is a remark, and the due date is the
   net date (ap.due_date refused it as "counts working days").
2. An amount in brackets in a sentence that goes on after them is an aside, not the accounting minus
   ("The remaining balance (412.50 USD) is due on 14 Dec." was read as -412.50 and the approval said
   the line shows a credit); a statement's cell ("Credit note total (1.234,50 €)") stays a credit.
"""

from __future__ import annotations

from datetime import date

import pytest
from test_line_reading_s43 import _origin

from taskcrew.tools import ap
from taskcrew.tools.documents.provenance import shows_value

# ------------------------------------------------------------------ 1. working days as a remark


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30. Please allow 3 business days for payment processing.",
        "Net 30. Payments by bank transfer take up to 3 business days to arrive.",
        "Please pay within 30 days. Bank: IBAN DE89 3704 0044 0532 0130 00, allow 3 working days for transfer.",
        "Net 30 days. Payment: allow 5 working days for your bank to process.",
        "Zahlbar innerhalb 30 Tagen. Bitte rechnen Sie 2 Werktage für die Überweisung ein.",
    ],
)
def test_working_days_beside_the_net_count_are_a_remark(terms: str) -> None:
    due = ap.due_date("2026-11-02", terms)
    assert due.due_date == date(2026, 12, 2), due
    assert due.rule == "net_days", due


def test_working_days_beside_a_labelled_due_date_are_a_remark() -> None:
    due = ap.due_date("2026-11-02", "Due date: 2026-12-01. Allow 3 business days for payment.")
    assert due.due_date == date(2026, 12, 1), due


@pytest.mark.parametrize(
    "terms",
    [
        "Zahlbar innerhalb 10 Werktagen",
        "payable within 10 working days",
        "Net 30 business days",
        "10 Werktage",  # no other count: the working days are the count
        "2% discount within 10 business days, net 30",  # the discount's count
        "Net 30, payable in 3 business days",
    ],
)
def test_working_days_that_are_the_count_are_refused(terms: str) -> None:
    with pytest.raises(ap.APInputError, match="counts working days, not calendar days"):
        ap.due_date("2026-11-02", terms)


# ------------------------------------------------------------------ 2. brackets in a sentence


@pytest.mark.parametrize(
    "line",
    [
        "The remaining balance (412.50 USD) is due on 14 Dec.",
        "Please pay the invoice total (USD 412.50) by Friday.",
        "Total Amount (412.50 USD) payable by bank transfer",
    ],
)
def test_an_amount_in_brackets_in_a_sentence_is_the_amount(line: str) -> None:
    assert shows_value(line, "412.50 USD"), line
    assert not shows_value(line, "-412.50 USD"), line
    said = _origin(f"Hi,\n{line}\nThanks, Northwind\n", line, "412.50", "USD")
    assert said.startswith("invoice.txt, line 2"), said
    assert "minus" not in said, said


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("Credit note total (1.234,50 €)", "1234.50 EUR"),
        ("Gutschrift gesamt (1.234,50 €)", "1234.50 EUR"),
        ("Total (950.00)", "950.00"),
        ("(412.50 USD)", "412.50 USD"),
        ("Refund USD (412.50) issued", "412.50 USD"),  # the currency before the brackets: a cell
    ],
)
def test_a_bracketed_amount_in_a_statement_cell_stays_a_credit(line: str, value: str) -> None:
    assert shows_value(line, f"-{value}"), line
    assert not shows_value(line, value), line


@pytest.mark.parametrize("terms", ["Net 30 days after month end", "30 days month end", "Net 30 month-end"])
def test_a_count_after_month_end_runs_from_the_invoice_months_end(terms: str) -> None:
    """As "end of month" and "EOM": the count starts at the end of the invoice's month, not at its
    date (they gave 2026-11-13, 17 days early)."""
    assert ap.due_date("2026-10-14", terms).due_date == date(2026, 11, 30)


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30, 2% within 10 days",
        "2% within 10 days, net 30",
        "Net 30 days, 2% in 10 days",
        "Within 30 days after receipt; 2% skonto within 10 days after receipt",
    ],
)
def test_a_small_rate_with_its_own_day_count_is_the_early_payment_discount(terms: str) -> None:
    """No word needs to say "discount" ("several day counts" refused these since ec6f4a3), and a
    sentence naming only the discount does not drop the net count beside it."""
    due = ap.due_date("2026-11-02", terms)
    assert (due.due_date, due.note and "2% if paid within 10 days" in due.note) == (date(2026, 12, 2), True)


@pytest.mark.parametrize(
    "terms",
    [
        "Deposit 50% within 7 days, balance Net 30",
        "Anzahlung 30% innerhalb 7 Tagen, Rest 30 Tage netto",
        "Net 30. 50% within 7 days",  # half the amount early is no discount
    ],
)
def test_a_part_payment_with_a_day_count_is_no_discount(terms: str) -> None:
    with pytest.raises(ValueError, match="a rate with a day count that is no early-payment discount"):
        ap.due_date("2026-11-02", terms)
