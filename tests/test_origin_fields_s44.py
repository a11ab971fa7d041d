"""Two readings a refactor round (188f117, 8103584) lost, and the one rule each now has (review s44):

1. An amount's own currency in brackets after it ("Total 1,234.50 (EUR)") was dropped as an aside,
   so the amount took a currency the line names elsewhere ("Shipping 20.00 USD") and the approval's
   origin lost its "check the currency" warning. Brackets are an aside only when they hold a number
   of their own ("USD 1,234.50 (CAD 1,700.00)" still shows no 1234.50 CAD): ``provenance._aside``.
2. A payee's account number or a currency code sent twice beside line items (or as ticked boxes)
   was no longer *repeated*: "account_no", "payment_account", "currency_iso" were in no one list.
   Bank details and currency fields are named once, in the risk rules' ``bank_fields`` and
   ``currency_fields``, and read by ``bank_field``, ``read_money`` and ``one_value`` alike; a ledger
   "account" code per row is still a row's column, and honest rows set no bank details.
"""

from __future__ import annotations

import pytest
from test_line_reading_s43 import _origin

from taskcrew.approvals.rules import assess, bank_field, field_matches, load_rules, read_money
from taskcrew.tools.documents.provenance import shows_value

URL = "http://127.0.0.1:8000/bills/new"


# ------------------------------------------------------- 1. a bracketed currency after an amount


@pytest.mark.parametrize(
    ("line", "shown", "not_shown"),
    [
        ("Total 1,234.50 (EUR)   Shipping 20.00 USD", "1234.50 EUR", "1234.50 USD"),
        ("Amount due -1,234.50 (EUR)   Bank fee 20.00 USD", "-1234.50 EUR", "-1234.50 USD"),
        ("Total 1,234.50 (EUR) / shipping USD 20.00", "1234.50 EUR", "1234.50 USD"),
        ("Summe 1.234,50 (EUR)   Versand 20,00 CHF", "1234.50 EUR", "1234.50 CHF"),
        ("Total 950 (GBP)   Fee 20.00 USD", "950.00 GBP", "950.00 USD"),
    ],
)
def test_a_bracketed_currency_after_an_amount_is_its_own(line: str, shown: str, not_shown: str) -> None:
    assert shows_value(line, shown), f"{line!r} does not show {shown}"
    assert not shows_value(line, not_shown), f"{line!r} was read as showing {not_shown}"


@pytest.mark.parametrize(
    ("line", "shown", "not_shown"),
    [
        ("Total: USD 1,234.50 (CAD 1,700.00)", "1700.00 CAD", "1234.50 CAD"),
        ("Total 1,234.50 USD (CAD 1,700.00)", "1234.50 USD", "1234.50 CAD"),
        ("Total 1.234,50 € (1.350,00 USD)", "1350.00 USD", "1234.50 USD"),
    ],
)
def test_brackets_holding_an_amount_of_their_own_are_still_an_aside(
    line: str, shown: str, not_shown: str
) -> None:
    assert shows_value(line, shown) and not shows_value(line, not_shown)


def test_the_approval_origin_warns_of_an_amount_in_another_currency_than_its_bracketed_one() -> None:
    document = "Invoice INV-88 from Northwind Traders\nTotal 1,234.50 (EUR)   Shipping 20.00 USD\nNet 30\n"
    quote = document.splitlines()[1]
    said = _origin(document, quote, "1234.50", "USD")
    assert "does not show it in USD: check the currency" in said, said
    assert "check the currency" not in _origin(document, quote, "1234.50", "EUR")


# --------------------------------------------- 2. bank details and the currency, named once


ACCOUNTS = [
    "account_no",
    "accountNo",
    "acct",
    "acct_no",
    "payment_account",
    "account_number",
    "account_holder",
]
CURRENCIES = ["currency", "currency_iso", "currencyCode", "ccy", "invoice_currency"]


def _rows(column: str, first: str, last: str) -> list[tuple[str, str]]:
    return [
        ("vendor", "Northwind Traders"),
        ("amount", "100.00"),
        (column, first),
        ("amount", "200.00"),
        (column, last),
        ("total", "300.00"),
    ]


def _rules(fields: list[tuple[str, str]], options: tuple[bool, ...] = ()) -> set[str]:
    return {f"{f.rule}:{f.field}" for f in assess(fields, URL, load_rules(), options=options).flags}


@pytest.mark.parametrize("name", ACCOUNTS)
def test_a_payee_account_is_bank_details_and_one_value_everywhere(name: str) -> None:
    rules = load_rules()
    assert bank_field(name, "12345678", rules)
    assert f"bank_details:{name}" in _rules([("vendor", "Northwind Traders"), (name, "12345678")])
    assert f"repeated_field:{name}" in _rules(_rows(name, "12345678", "87654321"))
    boxes = [("amount", "100.00"), (name, "12345678"), (name, "87654321")]
    assert f"repeated_field:{name}" in _rules(boxes, options=(False, True, True))


@pytest.mark.parametrize("name", CURRENCIES)
def test_a_currency_field_is_read_as_the_currency_and_one_value(name: str) -> None:
    rules = load_rules()
    assert field_matches(name, rules.currency_fields)
    assert read_money([("amount", "100.00"), (name, "USD")], rules).currency == "USD"
    assert f"repeated_field:{name}" in _rules(_rows(name, "EUR", "USD"))


def test_a_ledger_account_per_row_is_a_column_and_no_bank_detail() -> None:
    """8103584's fix holds: an expense account code per line item is a row's column."""
    for name in ["account", "gl_account", "expense_account", "account_code"]:
        rows = [
            ("vendor", "Northwind Traders"),
            ("description", "Paper"),
            (name, "6000"),
            ("amount", "100.00"),
            ("description", "Toner"),
            (name, "6100"),
            ("amount", "200.00"),
        ]
        flags = _rules(rows)
        assert not any(f.startswith(("repeated_field", "bank_details")) for f in flags), (name, flags)


def test_words_that_only_look_like_an_account_or_a_currency_are_neither() -> None:
    rules = load_rules()
    for name in ["account", "accounting_note", "current", "cursor", "currency_amount", "discount"]:
        assert not field_matches(name, rules.bank_fields), name
        assert not field_matches(name, rules.currency_fields), name
