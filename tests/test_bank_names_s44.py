"""Bank and currency field names read by their words, and a bracketed currency that is not the
amount's own (red team after 820f3d2, review s44):

1. "account_number2", "accountNumber1", "account_numbers" set no bank details any more (the pattern
   wanted "_" or the end right after "number"), while ledger columns "gl_acct", "acct_code" on each
   line item did (bank details and a repeated field on honest bills), and "vendor_account",
   "remit_account", "acctno" never did. Names are matched by their words as meant
   (``rules.name_words``: a number or plural at a word's end dropped): an account word followed by
   number/no/nr/num/holder, or after a payee-side word, is bank details; a ledger account is not.
2. ``Total: GBP 1,234.50 (EUR)`` showed 1234.50 EUR as well: brackets holding no number are the
   amount's own currency only when no other currency is written against it (``provenance._aside``).
"""

from __future__ import annotations

import pytest

from taskcrew.approvals.rules import assess, bank_field, field_matches, load_rules, read_money
from taskcrew.tools.documents.provenance import shows_value

URL = "http://127.0.0.1:8000/vendors/7/edit"


def _flags(fields: list[tuple[str, str]]) -> set[str]:
    return {f.rule for f in assess(fields, URL, load_rules()).flags}


# ------------------------------------------------------------ 1. bank details by the name's words

BANK = [
    "account_number2",
    "accountNumber1",
    "account_numbers",
    "new_account_number1",
    "vendor_account_number2",
    "account_nos",
    "acctno",
    "AccountNo",
    "vendor_account",
    "supplier_account",
    "creditor_account",
    "remit_account",
    "payout_account",
    "payee_acct",
    "payment_accounts",
    "acct2",
    "bic",
    "beneficiaryBIC",
    "iban_2",
]


@pytest.mark.parametrize("name", BANK)
def test_a_payee_account_named_in_any_form_is_bank_details(name: str) -> None:
    value = "021000021 4455667788"
    assert bank_field(name, value, load_rules()), name
    flags = _flags([("vendor", "Northwind Traders"), ("amount", "120.00"), (name, value)])
    assert "bank_details" in flags, (name, flags)


@pytest.mark.parametrize(
    "column", ["gl_acct", "expense_acct", "acct_code", "cost_acct", "gl_account", "account_codes", "account1"]
)
def test_a_ledger_account_per_row_is_no_bank_detail(column: str) -> None:
    rows = [
        ("vendor", "Northwind Traders"),
        ("description", "Paper"), (column, "6000"), ("amount", "100.00"),
        ("description", "Toner"), (column, "6100"), ("amount", "200.00"),
    ]  # fmt: skip
    flags = {f.rule for f in assess(rows, "http://127.0.0.1:8000/bills/new", load_rules()).flags}
    assert not flags & {"bank_details", "repeated_field"}, (column, flags)


def test_a_word_that_only_holds_bic_is_no_bank_detail() -> None:
    rules = load_rules()
    for name in ["cubic_meters", "public_note", "account_notes", "accounting"]:
        assert not bank_field(name, "12", rules), name


@pytest.mark.parametrize("name", ["currency2", "currencies", "currencyCode1", "ccys"])
def test_a_currency_field_with_a_number_or_plural_is_the_currency(name: str) -> None:
    rules = load_rules()
    assert read_money([("amount", "100.00"), (name, "USD")], rules).currency == "USD"
    assert not field_matches(name, rules.amount_fields)


# ------------------------------------------------------------ 2. a bracketed currency


@pytest.mark.parametrize(
    ("line", "written"),
    [
        ("Total: GBP 1,234.50 (EUR)", "GBP"),
        ("Total USD 1,234.50 (EUR)", "USD"),
        ("Total GBP 1 234.50 (EUR)", "GBP"),
        ("Total £1,234.50 (EUR)", "GBP"),
        ("Total 1,234.50 CHF (EUR)", "CHF"),
    ],
)
def test_brackets_naming_another_currency_than_the_amounts_are_no_second_currency(
    line: str, written: str
) -> None:
    assert not shows_value(line, "1234.50 EUR"), f"{line!r} was read as showing 1234.50 EUR"
    assert shows_value(line, f"1234.50 {written}")


@pytest.mark.parametrize(
    ("line", "shown", "not_shown"),
    [
        ("Total $1,234.50 (USD)", "1234.50 USD", "1234.50 CAD"),
        ("Total $1,234.50 (CAD)", "1234.50 CAD", "1234.50 USD"),
        ("Total 1,234.50 EUR (EUR)   Shipping 20.00 USD", "1234.50 EUR", "1234.50 USD"),
    ],
)
def test_brackets_naming_the_amounts_own_currency_still_name_it(
    line: str, shown: str, not_shown: str
) -> None:
    assert shows_value(line, shown) and not shows_value(line, not_shown)
