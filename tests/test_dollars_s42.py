"""A currency sign many countries share ("$", "¥", "Rs", "kr") stands for a set of currencies, not one.

An honest Canadian, Mexican, Australian, Chinese or Pakistani invoice prints its amount with the local
sign: "$1,234.50 CAD", "$1,234.50" (pesos), "¥1,234.50" (yuan), "Rs 1,234.50". ``ap.parse_amount``
read "$" as USD, "¥" as JPY, "Rs" as INR only, refused "$1,234.50 CAD" as "conflicting currencies",
and the check of a value's origin told the approver the cited line "does not show it in CAD: check
the currency". One table (``ap._SYMBOLS``) now maps each sign to the currencies it may stand for: a
code beside it chooses among them, a bare one reads as its usual currency marked as a guess, and a
line is refused only where its code or a one-currency sign ("A$", "€") names another currency.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from test_console_sources_redteam import App, app  # noqa: F401  (fixture)
from test_origins_s42 import _park, _report, _text

from taskcrew.crew.provenance import field_origin
from taskcrew.tools import ap
from taskcrew.tools.documents.provenance import shows_value
from taskcrew.tools.human import FieldValue


@pytest.mark.parametrize(
    ("text", "currency"),
    [
        ("$1,234.50 CAD", "CAD"),
        ("MXN $1,234.50", "MXN"),
        ("¥1,234.50 CNY", "CNY"),
        ("Rs 1,234.50 PKR", "PKR"),
        ("Rs. 1,234.50 LKR", "LKR"),
        ("kr 1.234,50 NOK", "NOK"),
        ("US$ 1,234.50 USD", "USD"),
    ],
)
def test_a_code_beside_an_ambiguous_sign_chooses_among_its_currencies(text: str, currency: str) -> None:
    parsed = ap.parse_amount(text)
    assert (parsed.value, parsed.currency, parsed.currency_guessed) == (Decimal("1234.50"), currency, False)


@pytest.mark.parametrize(
    ("text", "default", "also"),
    [
        ("$1,234.50", "USD", "CAD"),
        ("¥1,234.50", "JPY", "CNY"),
        ("Rs 1,234.50", "INR", "PKR"),
        ("kr 1.234,50", "SEK", "DKK"),
    ],
)
def test_a_bare_ambiguous_sign_reads_as_its_usual_currency_marked_a_guess(
    text: str, default: str, also: str
) -> None:
    parsed = ap.parse_amount(text)
    assert parsed.currency == default and parsed.currency_guessed and also in parsed.currencies
    assert "a guess" in parsed.render() and "a guess" in parsed.derivation
    for sure in ("A$ 1,234.50", "€1.234,50", "1,234.50 USD"):
        assert not ap.parse_amount(sure).currency_guessed, sure


@pytest.mark.parametrize("text", ["$ 1,234.50 EUR", "A$ 1,234.50 USD", "¥1,234.50 USD", "€ 1.234,50 CAD"])
def test_a_code_no_sign_of_the_text_may_stand_for_still_conflicts(text: str) -> None:
    with pytest.raises(ap.APInputError, match=r"conflicting currencies.*one currency the document means"):
        ap.parse_amount(text)


@pytest.mark.parametrize(
    ("line", "currency"),
    [
        ("Total: $1,234.50 CAD", "CAD"),
        ("TOTAL A PAGAR: $1,234.50", "MXN"),
        ("Total (inc GST): $1,234.50", "AUD"),
        ("合计: ¥1,234.50", "CNY"),
        ("Total: Rs 1,234.50", "PKR"),
        ("Amount ($): 1,234.50", "CAD"),
        ("Total: $1,234.50", "USD"),
    ],
)
def test_a_line_in_a_sign_that_may_stand_for_the_currency_shows_the_amount(line: str, currency: str) -> None:
    assert shows_value(line, f"1234.50 {currency}"), line
    read = {"invoice.txt": f"Invoice INV-88\n{line}\n"}.get
    steps = [(1, "document_reader", _report({"amount": "1234.50"}, line))]
    found = field_origin("1234.50", steps, read, currency=currency)
    assert "does not show" not in found.text and found.line == 2, found.text


@pytest.mark.parametrize(
    ("line", "currency"),
    [
        ("Total: $1,234.50 CAD", "USD"),
        ("Total: A$ 1,234.50", "USD"),
        ("Total: ¥1,234.50", "EUR"),
        ("Total: Rs 1,234.50", "USD"),
        ("Total: €1.234,50", "CAD"),
        ("Total: $1,234.50", "EUR"),
    ],
)
def test_a_line_whose_code_or_sign_names_another_currency_is_still_refused(line: str, currency: str) -> None:
    assert not shows_value(line, f"1234.50 {currency}"), line
    read = {"invoice.txt": f"Invoice INV-88\n{line}\n"}.get
    steps = [(1, "document_reader", _report({"amount": "1234.50"}, line))]
    found = field_origin("1234.50", steps, read, currency=currency)
    assert f"does not show it in {currency}" in found.text, found.text


def test_compare_reads_a_bare_dollar_as_the_dollar_it_is_compared_with() -> None:
    result = ap.compare("$1,234.50", "CAD 1,234.50")
    assert result.relation == "equal" and result.difference == "0.00 CAD", result
    with pytest.raises(ap.APInputError, match="different currencies"):
        ap.compare("$5.00", "EUR 5.00")


def test_canadian_invoice_printing_dollar_amount_CAD_is_not_warned(app: App) -> None:  # noqa: F811
    invoice = "Invoice INV-88 from Northwind Traders Ltd. (Toronto)\nNet 30\nTotal: $1,234.50 CAD\n"
    app.inbox("invoice.txt", invoice)
    report = _report({"amount": "1234.50"}, "Total: $1,234.50 CAD")
    fields = [
        FieldValue(name="vendor", value="Northwind Traders"),
        FieldValue(name="amount", value="1234.50"),
        FieldValue(name="currency", value="CAD"),
    ]
    approval = _park(app, fields, report)
    said = approval.request.origins["amount"].text
    viewer = app.client().get(f"/approvals/{approval.id}/source?field=amount").text
    warning = re.search(r'<span class="flag" id="doc-miscite">(.*?)</span>', viewer, re.S)
    assert "does not show" not in said and "line 3" in said, said
    assert warning is None, _text(warning.group(1))
