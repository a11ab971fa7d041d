"""How a cited document line is read when an approval says a value was "checked by code against
line N" (review s43, ``tools/documents/provenance.py``, ``crew/provenance.py``):

1. a line naming no currency took any currency: 4,900.00 on an invoice whose "Currency: SEK" (or
   column heading "Amount (SEK)") is on another line was shown as checked for 4900.00 CHF. A line
   naming no currency now takes the currencies its file states (``stated_currencies``);
2. numbers one space apart were read as one amount, no doubt: "Consulting services 1 950.00 950.00"
   (1 x 950.00) showed 1950.00, "Net 30 950.00 EUR" 30950.00. Such a reading is now named with
   "line N may read 30 950.00 or 950.00: check it", unless the line writes a French or Nordic amount
   (``_joined``);
3. a dash that separates words ("Amount Due - $1,234.50", "1.234,56 EUR – zahlbar bis"), brackets
   around a tax or a second currency's amount ("MwSt. 19 % (197,11 €)", "1,350.00 USD (EUR
   1.234,56)") and the whole-amount marks ("¥12,000-", "12 345:-") were read as a minus: an honest bill was
   called "a credit, not an amount owed?".
"""

from __future__ import annotations

import pytest

from taskcrew.approvals.origins import origins
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import field_origin, field_origins
from taskcrew.tools.documents import provenance
from taskcrew.tools.documents.provenance import shows_value
from taskcrew.tools.human import ApprovalRequest, FieldValue

CREDIT = "minus sign"


def _origin(document: str, quote: str, value: str, currency: str) -> str:
    report = StepReport(
        status="done",
        summary="read the invoice",
        data={"amount": value},
        sources=[Citation(source="invoice.txt", quote=quote)],
    )
    return field_origin(
        value, [(1, "document_reader", report)], {"invoice.txt": document}.get, currency=currency
    ).text


# ------------------------------------------------------------------ 1. the currency on another line


@pytest.mark.parametrize(
    "document",
    [
        "Invoice INV-88 from Northwind Traders\nCurrency: SEK\nNet 30\nTotal: 4,900.00\n",
        "Invoice INV-88 from Northwind Traders\nDescription Amount (SEK)\nConsulting 4,900.00\nTotal due 4,900.00\n",
        "Rechnung RE-88\nWährung: SEK   Datum 02.11.2026\nSumme 4.900,00\n",  # a currency line with a date
        "Invoice INV-88\nTotal 4,900.00\nPlease pay in SEK to our account\n",  # named only in passing
    ],
)
def test_an_amount_in_another_currency_than_its_file_states_is_named_with_the_warning(document: str) -> None:
    quote = next(line for line in document.splitlines() if line.startswith(("Total", "Summe")))
    said = _origin(document, quote, "4900.00", "CHF")
    assert "does not show it in CHF: check the currency" in said, said
    assert "check the currency" not in _origin(document, quote, "4900.00", "SEK")


def test_a_file_naming_no_currency_takes_any_and_a_heading_wins_over_a_passing_mention() -> None:
    document = "Invoice INV-88\nTotal: 4,900.00\n"
    assert "check the currency" not in _origin(document, "Total: 4,900.00", "4900.00", "CHF")
    assert provenance.stated_currencies("Invoice\nCurrency: SEK\nTotal 4,900.00\nEUR 1 = SEK 11.2\n") == {
        "SEK"
    }
    assert provenance.stated_currencies("Invoice\nTotal 4,900.00\nEUR 1 = SEK 11.2\n") == {"EUR", "SEK"}
    assert provenance.stated_currencies("Invoice\nTotal 4,900.00\n") == set()
    assert provenance.stated_currencies(
        "Währung: SEK  Datum 02.11.2026\nSumme 4.900,00\nKurs 1 EUR = 11,2 SEK"
    ) == {"SEK"}
    # the line's own currency comes first; without a file, a bare line takes any (as before)
    assert not shows_value("Total EUR 4.900,00", "4900.00 SEK", "Currency: SEK")
    assert shows_value("Total: 4,900.00", "4900.00 CHF")


def test_the_approval_names_the_currency_on_another_line_end_to_end() -> None:
    document = "Invoice INV-88 from Northwind Traders\nCurrency: SEK\nNet 30\nTotal: 4,900.00\n"
    report = StepReport(
        status="done",
        summary="read the invoice",
        data={"amount": "4900.00"},
        sources=[Citation(source="invoice.txt", quote="Total: 4,900.00")],
    )
    fields = [FieldValue(name="amount", value="4900.00"), FieldValue(name="currency", value="CHF")]
    found = field_origins(fields, [(1, "document_reader", report)], {"invoice.txt": document}.get)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=fields,
        origins=found,
    )
    shown = origins(request, [])["amount"]
    assert shown.line == 4 and "does not show it in CHF" in shown.text, shown


# ------------------------------------------------------------------ 2. numbers one space apart


@pytest.mark.parametrize(
    ("line", "value", "doubt"),
    [
        ("Consulting services 1 950.00 950.00", "1950.00", "1 950.00 or 950.00"),  # qty, price, amount
        ("Payment terms Net 30 950.00 EUR", "30950.00", "30 950.00 or 950.00"),
        ("Netto 30 950,00 EUR", "30950.00", "30 950,00 or 950,00"),  # a word that counts
        ("Qty 1 950,00 EUR", "1950.00", "1 950,00 or 950,00"),
        ("Beratung 1 950,00 950,00", "1950.00", "1 950,00 or 950,00"),  # a table's row
        ("Total 1 950.00 EUR", "1950.00", "1 950.00 or 950.00"),  # spaces with a decimal point
        ("Montant TTC 1 950,00 EUR", "950.00", "1 950,00 or 950,00"),  # the tail of a grouped amount
    ],
)
def test_numbers_one_space_apart_that_may_be_two_are_traced_with_a_doubt(
    line: str, value: str, doubt: str
) -> None:
    assert shows_value(line, value)  # still traced to its line
    assert provenance.reading_doubt(line, value) == doubt
    said = _origin(f"Invoice INV-88\n{line}\n", line, value, "EUR")
    assert said.startswith("invoice.txt, line 2") and f"line 2 may read {doubt}: check it" in said, said


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("Montant TTC : 1 950,00 €", "1950.00"),  # French
        ("Att betala 12 450,00 kr", "12450.00"),  # Swedish
        ("Totalt 12 450 kr", "12450"),  # whole crowns
        ("Summe 1 234 567,89 EUR", "1234567.89"),
        ("Payment terms Net 30 950.00 EUR", "950.00"),  # the count's own amount
        ("Consulting services 1 950.00 950.00", "950.00"),  # shown plainly by the amount column
    ],
)
def test_a_french_or_nordic_amount_and_a_counted_amount_are_traced_plainly(line: str, value: str) -> None:
    assert shows_value(line, value) and provenance.reading_doubt(line, value) is None
    said = _origin(f"Invoice INV-88\n{line}\n", line, value, "")
    assert said == "invoice.txt, line 2 (cited in step 1)", said


def test_a_line_that_shows_the_amount_plainly_is_named_before_one_in_doubt() -> None:
    document = "Invoice INV-88\nConsulting 1 950.00\nTotal due 1,950.00 EUR\n"
    said = _origin(document, "Consulting 1 950.00\nTotal due 1,950.00 EUR", "1950.00", "EUR")
    assert said == "invoice.txt, line 3 (cited in step 1)", said  # of the lines quoted, the plain one
    # a quote of the line in doubt names that line, with its doubt: never another line of the file
    said = _origin(document, "Consulting 1 950.00", "1950.00", "EUR")
    assert said == "invoice.txt, line 2 (cited in step 1) — but line 2 may read 1 950.00 or 950.00: check it"


# ------------------------------------------------------------------ 3. a dash or brackets that are no minus


@pytest.mark.parametrize(
    ("line", "value", "currency"),
    [
        ("Zahlbetrag: 1.234,56 EUR – zahlbar bis 13.11.2026", "1234.56", "EUR"),
        ("Rechnungsbetrag 1.234,56 EUR - fällig am 13.11.2026", "1234.56", "EUR"),
        ("Total: 1,350.00 USD (EUR 1.234,56)", "1234.56", "EUR"),
        ("Gesamt 1.234,56 EUR (USD 1,350.00)", "1350.00", "USD"),
        ("TOTAL – 1.234,56 €", "1234.56", "EUR"),
        ("Amount Due - $1,234.50", "1234.50", "USD"),
        ("Amount due — USD 1,234.50", "1234.50", "USD"),
        ("合計 ￥12,000-", "12000", "JPY"),
        ("合計 ¥480,000-", "480000", "JPY"),
        ("Summa att betala: 12 345:-", "12345", "SEK"),  # the Swedish whole-amount mark
        ("Grand Total: Rs. 1,23,456/-", "123456", "INR"),  # the Indian one
        ("zzgl. MwSt. 19 % (197,11 €)", "197.11", "EUR"),
        ("USt. 19% (234,57 EUR)", "234.57", "EUR"),
        ("VAT @ 20% (£205.80)", "205.80", "GBP"),
        ("VAT (£205.80)", "205.80", "GBP"),
    ],
)
def test_a_separating_dash_or_an_aside_in_brackets_is_no_credit(line: str, value: str, currency: str) -> None:
    assert shows_value(line, value) and not shows_value(line, f"-{value}")
    said = _origin(f"Invoice INV-88\n{line}\n", line, value, currency)
    assert CREDIT not in said and said.startswith("invoice.txt, line 2"), said


@pytest.mark.parametrize(
    "line",
    [
        "-950.00 EUR",
        "Total −950.00 EUR",  # a typeset minus
        "(950.00)",
        "Credit total (950.00)",
        "Total USD (950.00)",
        "950,00- EUR",  # the German (SAP) trailing minus
        "Betrag 950,00 EUR -",  # a trailing minus set apart, nothing after it
        "- 950.00 EUR",  # set apart, no label before it
        "$-950.00",
        "- $950.00",
        "Total -$950.00",
        "Gutschrift gesamt −950,00 €",
        "Credit note CN-7 total (950,00 €)",
        "Gutschrift gesamt (950,00 €)",
    ],
)
def test_a_credit_is_still_read_as_one(line: str) -> None:
    assert shows_value(line, "-950.00") and not shows_value(line, "950.00")
    said = _origin(f"Credit note CN-7\n{line}\n", line, "950.00", "")
    assert CREDIT in said, said


@pytest.mark.parametrize("line", ["Gutschrift 500- EUR", "Gutschrift gesamt 1.234,00- €"])
def test_a_bare_dash_after_a_whole_amount_in_a_currency_with_cents_stays_a_minus(line: str) -> None:
    """Only ':-' and '/-' close a whole amount in any currency; a bare '-' is read by
    ``ap.parse_amount`` by its currency (it closes only a yen or won amount): here it is a credit."""
    amount = "500" if line.startswith("Gutschrift 500") else "1234.00"
    assert not shows_value(line, amount) and shows_value(line, f"-{amount}")


@pytest.mark.parametrize(
    ("line", "shown", "not_shown"),
    [
        ("Total: USD 1,234.50 (CAD 1,700.00)", "1700.00 CAD", "1234.50 CAD"),
        ("Total 1.234,50 € (1.350,00 USD)", "1350.00 USD", "1234.50 USD"),
    ],
)
def test_a_bracketed_second_currency_does_not_lend_its_currency_to_the_amount_before_it(
    line: str, shown: str, not_shown: str
) -> None:
    assert shows_value(line, shown) and not shows_value(line, not_shown)


@pytest.mark.parametrize(
    ("line", "value", "not_shown"),
    [
        ("Rs. 12,000/-", "12000", "12.00"),  # '12,000' cut from its '/-' was read as 12.000 too
        ("Rs. 1,23,456/-", "123456", "123.456"),
        ("Summa 12 345:- kr", "12345", "12345 EUR"),  # kr names no euro
    ],
)
def test_a_whole_amount_closed_with_a_mark_is_read_whole(line: str, value: str, not_shown: str) -> None:
    """The mark is read by ``ap.parse_amount`` with the number, as one rule."""
    assert shows_value(line, value) and not shows_value(line, not_shown)
