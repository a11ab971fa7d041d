"""Whole amounts and the marks that close them, read one way (review s43):

1. the mark a country prints after a whole amount was read as unreadable or as a minus: the Indian
   "/-" ("Rs. 1,23,456/-": no amount, and typed into a form an unreadable_amount for a second
   approver), the Swedish ":-" ("12 345:-": a credit), only "1.234,-" was whole. One list
   (``ap.WHOLE_MARKS``: ",-", ".-", "/-", ":-", with an en or em dash too) read by ``ap.parse_amount``,
   its brackets ("(1.234,- €)" a credit as "(1.234,00 €)" is: ``ap.NEGATIVE_IN_BRACKETS``) and the
   approval rules' money shape (``rules.MONEY_SHAPE``);
2. a currency without decimals (ISO 4217: JPY, KRW, CLP …; ``ap.ZERO_DECIMAL_CURRENCIES``): "¥12,000"
   was refused as ambiguous, "12,000円" was no amount, "¥12,000-" a credit. The "," (or ".") before
   three digits groups thousands there, "円"/"元"/"원" are signs written after the number, and a "-"
   after such an amount closes it — with decimals ("¥12,000.00-") it stays the trailing minus, as
   "950,00-" and "500- EUR" do.
"""

from __future__ import annotations

import pytest
from test_origins_s42 import _report

from taskcrew.approvals import rules
from taskcrew.crew.evidence import CURRENCY_MARK, values
from taskcrew.crew.provenance import field_origin
from taskcrew.tools import ap

# ------------------------------------------------------------------ the reader


@pytest.mark.parametrize(
    ("text", "plain", "currency"),
    [
        ("Rs. 1,23,456/-", "123456.00", "INR"),
        ("\u20b91,23,456/-", "123456.00", "INR"),
        ("Rs. 12,000/-", "12000.00", "INR"),  # the mark says whole: ',' groups thousands
        ("12 345:-", "12345.00", None),
        ("SEK 12\u00a0345:-", "12345.00", "SEK"),
        ("1.234,-", "1234.00", None),
        ("1.234,\u2013 \u20ac", "1234.00", "EUR"),
        ("Fr. 15.\u2013", "15.00", "CHF"),
        ("1\u2019234.\u2014", "1234.00", None),
        ("\u00a512,000", "12000.00", "JPY"),
        ("\uffe512,000", "12000.00", "JPY"),  # the fullwidth yen sign
        ("12,000\u5186", "12000.00", "JPY"),  # 円 after the number
        ("\u20a91,234,000", "1234000.00", "KRW"),
        ("12,000\uc6d0", "12000.00", "KRW"),  # 원
        ("CLP 12.000", "12000.00", "CLP"),
        ("\u00a512,000-", "12000.00", "JPY"),  # the closing dash of a Japanese amount
        ("\uffe512,000\uff0d", "12000.00", "JPY"),
        ("12,000\u5186-", "12000.00", "JPY"),
        ("\u00a51,234.56", "1234.56", "JPY"),  # decimals as written (¥ may be the yuan)
    ],
)
def test_a_whole_amount_is_read_with_its_closing_mark(text: str, plain: str, currency: str | None) -> None:
    parsed = ap.parse_amount(text)
    assert (parsed.plain, parsed.currency) == (plain, currency), parsed.derivation


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("950,00-", "-950.00"),  # the German trailing minus: decimals, so no closing mark
        ("1.234,00-", "-1234.00"),
        ("500-", "-500.00"),
        ("500- EUR", "-500.00"),  # a currency with decimals: the "-" is a minus
        ("$12,000.00-", "-12000.00"),
        ("\u00a512,000.00-", "-12000.00"),  # yen with decimals: a trailing minus again
        ("(\u00a512,000)", "-12000.00"),
        ("-\u00a512,000", "-12000.00"),
        ("(1.234,- \u20ac)", "-1234.00"),  # brackets around a whole amount: a credit, as "(1.234,00 €)"
        ("(Rs. 1,23,456/-)", "-123456.00"),
    ],
)
def test_a_trailing_minus_stays_a_minus(text: str, plain: str) -> None:
    assert ap.parse_amount(text).plain == plain


@pytest.mark.parametrize("text", ["12,000-", "USD 12,000-", "KWD 1,234", "1,234.50/-", "12.50,-"])
def test_what_stays_refused(text: str) -> None:
    # "12,000-" in dollars: never read as a positive twelve thousand (a minus, and ',' ambiguous);
    # the dinar has three decimals; a whole amount's mark after decimals contradicts itself
    with pytest.raises(ap.APInputError):
        ap.parse_amount(text)


def test_the_working_says_why_a_dash_is_no_minus() -> None:
    assert "the '-' closes a JPY amount, no minus" in ap.parse_amount("\u00a512,000-").derivation


# ------------------------------------------------------------------ the approval rules and the verifier


@pytest.mark.parametrize(
    ("typed", "currency", "number"),
    [
        ("Rs. 1,23,456/-", "INR", "123456"),
        ("\u20b91,23,456/-", "INR", "123456"),
        ("12 345:-", "SEK", "12345"),
        ("12,000\u5186", "JPY", "12000"),
        ("\u00a512,000-", "JPY", "12000"),
    ],
)
def test_the_amount_typed_into_a_form_is_read_as_the_reader_reads_it(
    typed: str, currency: str, number: str
) -> None:
    assert rules.parse_amount(typed) == ap.parse_amount(typed).value == int(number)
    got = rules.assess(
        [("amount", typed), ("currency", currency)], "http://127.0.0.1:8800/bills/new", rules.load_rules()
    )
    assert not [f for f in got.flags if f.rule == "unreadable_amount"], got.flags


@pytest.mark.parametrize("typed", ["1.234.567,-", "\u20ac 1.234.567,-", "Rs. 12,34,567/-", "1 234 567:-"])
def test_a_whole_amount_in_a_field_of_another_name_is_shaped_like_money(typed: str) -> None:
    assert rules.MONEY_SHAPE.fullmatch(typed)
    got = rules.assess(
        [("price", typed), ("currency", "EUR")], "http://127.0.0.1:8800/bills/new", rules.load_rules()
    )
    assert [f for f in got.flags if f.rule == "amount_above_threshold" and f.field == "price"], got.flags


def test_the_verifier_knows_the_sign_after_a_yen_amount() -> None:
    assert CURRENCY_MARK + "JPY" in values("\u3054\u8acb\u6c42\u91d1\u984d 12,000\u5186")
    assert not any(
        v.startswith(CURRENCY_MARK) for v in values("\u5186\u5f62\u306e\u30c6\u30fc\u30d6\u30eb 2")
    )


# ------------------------------------------------------------------ the trace


@pytest.mark.parametrize(
    ("line", "value", "currency"),
    [
        ("Grand Total: Rs. 1,23,456/-", "123456.00", "INR"),
        ("Summa att betala: 12 345:-", "12345.00", "SEK"),
        ("\u3054\u8acb\u6c42\u91d1\u984d 12,000\u5186", "12000", "JPY"),
    ],
)
def test_the_total_is_traced_to_its_line_and_not_called_a_credit(
    line: str, value: str, currency: str
) -> None:
    read = {"invoice.txt": f"Invoice\n{line}\n"}.get
    found = field_origin(
        value, [(1, "document_reader", _report({"amount": value}, line))], read, currency=currency
    )
    assert found.text.startswith("invoice.txt, line 2") and "minus sign" not in found.text, found.text
