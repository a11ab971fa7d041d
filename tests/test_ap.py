"""The deterministic AP helpers: amounts, dates, due dates, comparisons."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from taskcrew.tools.ap import (
    APInputError,
    compare,
    compare_result,
    due_date,
    due_date_result,
    parse_amount,
    parse_amount_result,
    parse_date,
    plain_amount,
)

# ------------------------------------------------------------------------------------ amounts


@pytest.mark.parametrize(
    ("text", "value", "currency", "fmt"),
    [
        ("1,284.50", "1284.50", None, "us"),
        ("1.284,50", "1284.50", None, "european"),
        ("1,28,450.00", "128450.00", None, "indian"),
        ("EUR 1 284,50", "1284.50", "EUR", "space_grouped"),
        ("1\u00a0284,50\u00a0€", "1284.50", "EUR", "space_grouped"),
        ("1\u202f284.50 USD", "1284.50", "USD", "space_grouped"),
        ("$1,284.50", "1284.50", "USD", "us"),
        ("US$ 1,284.50", "1284.50", "USD", "us"),
        ("₹1,28,450.00", "128450.00", "INR", "indian"),
        ("Rs. 1,28,450.00", "128450.00", "INR", "indian"),
        ("INR 12,34,567", "1234567", "INR", "indian"),
        ("-150.00", "-150.00", None, "plain"),
        ("(150.00)", "-150.00", None, "plain"),
        ("($150.00)", "-150.00", "USD", "plain"),
        ("USD (150.00)", "-150.00", "USD", "plain"),
        ("-$150.00", "-150.00", "USD", "plain"),
        ("150.00-", "-150.00", None, "plain"),
        ("\u2212150.00", "-150.00", None, "plain"),
        ("1284.5", "1284.5", None, "plain"),
        ("1284", "1284", None, "plain"),
        ("0.125", "0.125", None, "plain"),
        (".50", "0.50", None, "plain"),
        ("2.310,00 EUR", "2310.00", "EUR", "european"),
        ("1.234.567", "1234567", None, "european"),
        ("1284,5", "1284.5", None, "european"),
        ("1'284.50 CHF", "1284.50", "CHF", "swiss"),
        ("£640.00", "640.00", "GBP", "plain"),
        ("12,345.67", "12345.67", None, "us"),
        ("1,234,567.89", "1234567.89", None, "us"),
        ("  3,420.00 usd ", "3420.00", "USD", "us"),
    ],
)
def test_parse_amount_formats(text: str, value: str, currency: str | None, fmt: str) -> None:
    parsed = parse_amount(text)
    assert parsed.value == Decimal(value)
    assert parsed.currency == currency
    assert parsed.format == fmt
    assert " ".join(text.split()) in parsed.derivation


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("1,284", "ambiguous"),
        ("1.284", "ambiguous"),
        ("", "empty"),
        ("   ", "empty"),
        ("abc", "not an amount"),
        ("12abc", "not an amount"),
        ("Total: 1,284.50", "not an amount"),
        ("1..2", "not a recognised amount format"),
        ("1,2,3", "not a recognised amount format"),
        ("1,284,50", "not a recognised amount format"),
        ("12,3456.00", "not a recognised amount format"),
        ("1 28,50", "not a recognised amount format"),
        ("$ 5 EUR", "conflicting currencies"),
        ("(150.00", "not an amount"),
        ("--5", "not an amount"),
        ("1.284.50", "not a recognised amount format"),
    ],
)
def test_parse_amount_refuses_ambiguous_or_junk(text: str, needle: str) -> None:
    with pytest.raises(APInputError, match=needle):
        parse_amount(text)


def test_parse_amount_gives_the_plain_form_erps_accept() -> None:
    assert parse_amount("1,284.50 USD").plain == "1284.50"
    assert parse_amount("1284.5").plain == "1284.50"
    assert parse_amount("₹1,28,450.00").plain == "128450.00"
    assert parse_amount("(150.00)").plain == "-150.00"
    assert parse_amount("0.125").plain == "0.125"


def test_parse_amount_result_is_a_tool_result() -> None:
    ok = parse_amount_result("1.284,50 EUR")
    assert ok.ok and "1284.50" in ok.to_text() and "EUR" in ok.to_text()
    bad = parse_amount_result("1,284")
    assert not bad.ok and bad.error and "ambiguous" in bad.error


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("1284.5"), "1284.50"),
        (Decimal("1284.505"), "1284.51"),
        (Decimal("-150"), "-150.00"),
        (Decimal("-0.001"), "0.00"),
        (128450, "128450.00"),
        ("96000", "96000.00"),
    ],
)
def test_plain_amount(value: Decimal | int | str, expected: str) -> None:
    assert plain_amount(value) == expected


def test_plain_amount_refuses_formatted_text() -> None:
    with pytest.raises(APInputError, match="parse_amount"):
        plain_amount("1,284.50")


# -------------------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-09-12", date(2026, 9, 12)),
        ("2026/09/12", date(2026, 9, 12)),
        ("12.09.2026", date(2026, 9, 12)),
        ("15.09.2026", date(2026, 9, 15)),
        ("12 Sep 2026", date(2026, 9, 12)),
        ("12-Sep-2026", date(2026, 9, 12)),
        ("September 12, 2026", date(2026, 9, 12)),
        ("Sep 5, 2026", date(2026, 9, 5)),
        ("15. Oktober 2026", date(2026, 10, 15)),
        ("3 März 2026", date(2026, 3, 3)),
        ("30th September 2026", date(2026, 9, 30)),
        ("09/20/2026", date(2026, 9, 20)),
        ("20/09/2026", date(2026, 9, 20)),
        ("05/05/2026", date(2026, 5, 5)),
        ("29.02.2028", date(2028, 2, 29)),
    ],
)
def test_parse_date(text: str, expected: date) -> None:
    assert parse_date(text).value == expected


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("10/05/2026", "ambiguous"),
        ("09/10/2026", "ambiguous"),
        ("29.02.2026", "not a valid calendar date"),
        ("31 Sep 2026", "not a valid calendar date"),
        ("next Tuesday", "not a date"),
        ("2026-09-12 and 2026-10-12", "more than one date"),
    ],
)
def test_parse_date_refuses(text: str, needle: str) -> None:
    with pytest.raises(APInputError, match=needle):
        parse_date(text)


# ---------------------------------------------------------------------------------- due dates


@pytest.mark.parametrize(
    ("invoice_date", "terms", "expected", "rule"),
    [
        ("2026-09-12", "Net 30", date(2026, 10, 12), "net_days"),
        ("2026-09-12", "net 30 days", date(2026, 10, 12), "net_days"),
        ("2026-09-12", "NET30", date(2026, 10, 12), "net_days"),
        ("2026-09-12", "N30", date(2026, 10, 12), "net_days"),
        ("2026-09-12", "30 days", date(2026, 10, 12), "net_days"),
        ("2026-09-12", "30 days net", date(2026, 10, 12), "net_days"),
        ("2026-09-12", "payable within 14 days", date(2026, 9, 26), "net_days"),
        ("2026-09-15", "zahlbar innerhalb 14 Tagen", date(2026, 9, 29), "net_days"),
        ("2026-09-15", "zahlbar innerhalb 14 Tagen netto", date(2026, 9, 29), "net_days"),
        ("15.09.2026", "14 Tage netto", date(2026, 9, 29), "net_days"),
        ("2026-09-17", "Net 45", date(2026, 11, 1), "net_days"),
        ("2026-09-20", "Net 15", date(2026, 10, 5), "net_days"),
        ("2026-09-12", "2/10 Net 30", date(2026, 10, 12), "net_days"),
        (
            "2026-09-15",
            "2% Skonto bei Zahlung innerhalb 10 Tagen, 30 Tage netto",
            date(2026, 10, 15),
            "net_days",
        ),
        (
            "2026-09-28",
            "2% discount if paid within 10 days, otherwise net 30 days",
            date(2026, 10, 28),
            "net_days",
        ),
        ("2026-09-28", "3 % Skonto binnen 8 Tagen, 30 Tage netto", date(2026, 10, 28), "net_days"),
        # the discount's deadline and the net date both printed: each is its count's date
        (
            "2026-09-28",
            "2% 10 days (until 2026-10-08), net 30 days (until 2026-10-28)",
            date(2026, 10, 28),
            "net_days",
        ),
        (
            "2026-09-28",
            "2 % Skonto bei Zahlung innerhalb 10 Tagen (bis 08.10.2026), netto 30 Tage (bis 28.10.2026)",
            date(2026, 10, 28),
            "net_days",
        ),
        ("2026-12-15", "Net 30", date(2027, 1, 14), "net_days"),
        ("2028-01-30", "Net 30", date(2028, 2, 29), "net_days"),  # leap year
        ("2027-01-30", "Net 30", date(2027, 3, 1), "net_days"),  # not a leap year
        ("2026-09-10", "30 days EOM", date(2026, 10, 30), "end_of_month_plus_days"),
        ("2026-09-10", "Net 30 EOM", date(2026, 10, 30), "end_of_month_plus_days"),
        ("2026-09-10", "EOM + 30", date(2026, 10, 30), "end_of_month_plus_days"),
        ("2026-09-10", "end of month + 15 days", date(2026, 10, 15), "end_of_month_plus_days"),
        ("2026-09-10", "end of the month plus 10 days", date(2026, 10, 10), "end_of_month_plus_days"),
        ("2026-01-31", "EOM", date(2026, 1, 31), "end_of_month_plus_days"),
        ("2028-02-10", "EOM", date(2028, 2, 29), "end_of_month_plus_days"),  # leap February
        ("2027-02-10", "E.O.M.", date(2027, 2, 28), "end_of_month_plus_days"),
        ("2026-12-05", "30 days EOM", date(2027, 1, 30), "end_of_month_plus_days"),
        ("2028-01-20", "30 days end of month", date(2028, 3, 1), "end_of_month_plus_days"),
        ("2026-09-30", "Due on receipt", date(2026, 9, 30), "on_receipt"),
        ("2026-09-30", "Due upon receipt", date(2026, 9, 30), "on_receipt"),
        ("2026-09-30", "payable immediately", date(2026, 9, 30), "on_receipt"),
        ("2026-09-30", "sofort fällig", date(2026, 9, 30), "on_receipt"),
        ("2026-09-18", "Due date: 2026-10-20", date(2026, 10, 20), "explicit_date"),
        ("2026-08-28", "zahlbar bis 07.10.2026 ohne Abzug", date(2026, 10, 7), "explicit_date"),
        ("2026-09-12", "Payment due by October 20, 2026", date(2026, 10, 20), "explicit_date"),
        ("12 Sep 2026", "Due: 20 Oct 2026", date(2026, 10, 20), "explicit_date"),
    ],
)
def test_due_date(invoice_date: str, terms: str, expected: date, rule: str) -> None:
    result = due_date(invoice_date, terms)
    assert result.due_date == expected
    assert result.rule == rule
    assert expected.isoformat() in result.derivation


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30. Late payments after 2026-11-13 incur 1.5% interest",
        "Net 30. Payment received after 13.11.2026 will be charged interest",
        "Net 30, interest charged on payments after 2026-11-20",
        "Zahlbar innerhalb 30 Tagen. Verzugszinsen ab 14.11.2026",
        "Net 30. Interest of 8% p.a. is charged from 2026-11-14",  # "p.a." ends no sentence
    ],
)
def test_a_date_charges_for_paying_late_start_from_is_neither_due_nor_counted_from(terms: str) -> None:
    # "after <date>" there is when a penalty starts, not the start of the 30 days (it gave 2026-12-13)
    result = due_date("2026-10-14", terms)
    assert result.due_date == date(2026, 11, 13) and "late-payment charges" in result.derivation


def test_charges_for_paying_late_before_the_due_date_are_asked_about() -> None:
    with pytest.raises(APInputError, match="before the due date"):
        due_date("2026-10-14", "Net 30, late fee after 2026-11-01")
    with pytest.raises(APInputError, match="paying late"):
        due_date("2026-10-14", "Interest on payments after 2026-11-13")
    # a count "from" a date in a sentence about paying late may count from when charges start
    for terms in (
        "Net 30 from 2026-10-20, late fees apply",
        "Net 30. Paid after 13.11.2026, interest is due",
    ):
        with pytest.raises(APInputError, match="paying late in the same sentence"):
            due_date("2026-10-14", terms)


def test_due_date_shows_the_working() -> None:
    result = due_date(date(2026, 9, 12), "Net 30")
    assert result.derivation == "2026-09-12 + 30 days = 2026-10-12"
    assert result.days == 30
    eom = due_date("2026-09-10", "30 days EOM")
    assert eom.derivation == "end of the invoice month 2026-09-30 + 30 days = 2026-10-30"
    discount = due_date("2026-09-12", "2/10 Net 30")
    assert discount.note and "2%" in discount.note and "2026-09-22" in discount.note


@pytest.mark.parametrize(
    ("invoice_date", "terms", "needle"),
    [
        ("2026-09-12", "whenever you like", "not understood"),
        ("2026-09-12", "", "no terms"),
        ("2026-09-12", "Net 30 or 60 days", "several day counts"),
        ("2026-09-12", "Due date: 2026-09-01", "before the invoice date"),
        ("2026-09-12", "due 2026-10-01 or 2026-10-15", "several dates"),
        # a discount deadline its count does not give is not explained away
        ("2026-09-28", "2% 10 days (until 2026-10-09), net 30 days (until 2026-10-28)", "several dates"),
        ("2026-09-28", "2% 10 days, net 30 days (until 2026-10-27)", "day count"),
        ("2026-09-12", "Net 999", "not a plausible"),
        ("10/05/2026", "Net 30", "ambiguous"),
        ("someday", "Net 30", "not a date"),
    ],
)
def test_due_date_refuses(invoice_date: str, terms: str, needle: str) -> None:
    with pytest.raises(APInputError, match=needle):
        due_date(invoice_date, terms)


def test_due_date_result_failure_is_recoverable() -> None:
    result = due_date_result("2026-09-12", "whenever")
    assert not result.ok and result.to_text().startswith("ERROR: payment terms not understood")


# ---------------------------------------------------------------------------------- compare


def test_compare_amounts_in_different_formats() -> None:
    same = compare("1.284,50 EUR", "EUR 1 284,50")
    assert same.kind == "amount" and same.relation == "equal" and same.difference == "0.00 EUR"
    diff = compare("1,070.42", "1,284.50 USD")
    assert diff.relation == "b_greater"
    assert diff.difference == "-214.08 USD"
    assert diff.derivation == "1070.42 − 1284.50 = -214.08 USD"
    assert compare(Decimal("2961.40"), "2,961.4").relation == "equal"


def test_compare_dates_in_different_formats() -> None:
    result = compare("2026-10-12", "Oct 5, 2026")
    assert result.kind == "date" and result.relation == "a_greater" and result.difference == "7 days"
    assert compare("15.09.2026", date(2026, 9, 15)).relation == "equal"


@pytest.mark.parametrize(
    ("a", "b", "needle"),
    [
        ("$5.00", "EUR 5.00", "different currencies"),
        ("2026-10-12", "1,284.50", "a date with an amount"),
        ("1,284", "1284", "ambiguous"),
    ],
)
def test_compare_refuses(a: str, b: str, needle: str) -> None:
    with pytest.raises(APInputError, match=needle):
        compare(a, b)
    assert not compare_result(a, b).ok
