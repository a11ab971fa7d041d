"""Money and dates read one way everywhere (review s43):

1. an amount in brackets with its currency after the number ("(1.234,50 €)", "(1 234,50 EUR)": how a
   European credit note writes it) was read as positive, so a credit note's total was traced with no
   "credit?" caution, while "(€1.234,50)" and "-1.234,50 €" had one: brackets are the accounting minus
   wherever the currency stands (``ap.NEGATIVE_IN_BRACKETS``);
2. three tables of currency signs (the invoice reader's, the verifier's, the approval rules') and a
   second amount reader in the rules: a sign one knew ("zł", "R$") the others did not, and "S/",
   "RM", "Rp", "Fr." none did. One table (``ap._SYMBOLS``, ``ap.SIGN_CURRENCY``), one reader
   (``ap.parse_amount``) that the verifier and the rules read through;
3. the verifier did not read a date written dd.mm.yy ("15.01.27"): it reads dotted dates with the
   invoice reader's ``ap.parse_date``.
"""

from __future__ import annotations

import pytest
from test_ocr_values_2 import _line

from taskcrew.approvals import rules
from taskcrew.crew.evidence import CURRENCY_MARK, values
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import value_origin
from taskcrew.tools import ap
from taskcrew.tools.documents.ocrlines import render_line
from taskcrew.tools.documents.provenance import shows_value

# ------------------------------------------------------------------ 1. brackets, currency after


@pytest.mark.parametrize(
    ("text", "number", "currency"),
    [
        ("(1.234,50 \u20ac)", "1234.50", "EUR"),
        ("(1 234,50 EUR)", "1234.50", "EUR"),
        ("(1\u202f234,50\u00a0EUR)", "1234.50", "EUR"),  # narrow and no-break spaces
        ("(1\u2019234.50 CHF)", "1234.50", "CHF"),
        ("(12 450,00 z\u0142)", "12450.00", "PLN"),
        ("(1.234,50 kr)", "1234.50", "SEK"),
        ("(2,310.00 USD)", "2310.00", "USD"),
    ],
)
def test_an_amount_in_brackets_with_its_currency_after_is_a_credit(
    text: str, number: str, currency: str
) -> None:
    parsed = ap.parse_amount(text)
    assert parsed.plain == f"-{number}" and parsed.currency == currency, parsed
    line = f"Gutschrift gesamt {text}"
    assert shows_value(line, f"-{number}") and not shows_value(line, number)
    _, found = render_line(_line(*[(word, 95) for word in line.split()]))
    assert found[-1].text.startswith("(") and found[-1].text.endswith(")"), found  # the brackets are its sign


def test_a_european_credit_note_total_is_traced_with_the_credit_caution() -> None:
    text = "NORDWIND HANDEL GMBH   GUTSCHRIFT GS-2026-114\nGutschrift gesamt (1.234,50 \u20ac)"
    for quote, value in [("Gutschrift gesamt (1.234,50 \u20ac)", "1234.50"), ("(1 234,50 EUR)", "1234.50")]:
        report = StepReport(status="done", summary="Read it.", data={"amount": value},
                            sources=[Citation(source="gutschrift.pdf", quote=quote)])  # fmt: skip
        origin = value_origin(value, [(1, "file_reader", report)], lambda _s: text)
        assert "line 2 shows it with a minus sign" in origin, origin  # the file's sign, whatever the quote


# ------------------------------------------------------------------ 2. one table of signs


@pytest.mark.parametrize(
    ("text", "currency", "number"),
    [
        ("S/ 1,234.50", "PEN", "1234.50"),
        ("S/.1,234.50", "PEN", "1234.50"),
        ("RM 1,234.50", "MYR", "1234.50"),
        ("Rp 1.234.500", "IDR", "1234500"),
        ("Fr. 1'234.50", "CHF", "1234.50"),
        ("SFr. 1\u2019234.50", "CHF", "1234.50"),
        ("1.234,50 Fr.", "CHF", "1234.50"),
    ],
)
def test_the_new_signs_are_read_by_the_invoice_reader_the_verifier_and_the_rules(
    text: str, currency: str, number: str
) -> None:
    parsed = ap.parse_amount(text)
    assert (parsed.currency, parsed.value) == (currency, ap.Decimal(number)), parsed
    assert CURRENCY_MARK + currency in values(f"Total due {text}")
    assert rules.parse_amount(text) == ap.Decimal(number)
    assert rules.read_currency(text) == currency


def test_every_sign_of_the_one_table_is_known_to_the_verifier_and_the_rules() -> None:
    assert {"S/", "RM", "Rp", "Fr.", "CHF"} - set(ap.SIGN_CURRENCY) == {"CHF"}  # CHF: a code, read as one
    for sign, currency in ap.SIGN_CURRENCY.items():
        for text in (f"{sign} 1,234.50", f"1,234.50 {sign}"):
            assert CURRENCY_MARK + currency in values(f"Total {text}"), text
            assert rules.read_currency(text) == currency, text
            assert rules.parse_amount(text) == ap.Decimal("1234.50"), text
            assert rules.MONEY_SHAPE.fullmatch(text), text
    for sign in ("$", "\u00a5", "kr", "Rs"):  # a sign of several currencies names none
        assert rules.read_currency(f"{sign} 1,234.50") is None
        assert not {v for v in values(f"Total {sign} 1,234.50") if v.startswith(CURRENCY_MARK)}


@pytest.mark.parametrize("text", ["1\u2019234.50", "CHF 1\u2019234.50", "1\u02bc234.50 CHF"])
def test_the_rules_read_a_swiss_amount_as_money(text: str) -> None:
    assert rules.MONEY_SHAPE.fullmatch(text)
    assert rules.parse_amount(text) == ap.Decimal("1234.50")


@pytest.mark.parametrize(
    "line",
    ["Fr. M\u00fcller, Buchhaltung", "S/N 40917-A", "RM 204, second floor", "Zahlbar bis Fr. 15.01.", "Rp"],
)
def test_a_sign_that_is_also_a_word_names_no_currency_away_from_an_amount(line: str) -> None:
    assert not ap.currencies_in(line)
    assert not {v for v in values(line) if v.startswith(CURRENCY_MARK)}


# ------------------------------------------------------------------ 3. dd.mm.yy in the verifier


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("F\u00e4llig am 15.01.27", "2027-01-15"),
        ("Rechnungsdatum: 28.10.26.", "2026-10-28"),
        ("Date 07.10.2026", "2026-10-07"),
    ],
)
def test_the_verifier_reads_dotted_dates_as_the_invoice_reader_does(text: str, day: str) -> None:
    assert day in values(text)
    assert ap.parse_date(text).value.isoformat() == day


def test_a_two_digit_dotted_date_beside_year_first_dates_stands_for_both_readings() -> None:
    assert "2015-01-27|2027-01-15" in values("Ausgestellt 2027.01.10, f\u00e4llig 15.01.27")
    assert "2031-02-26" in values("26.02.31; 2026.01.10")  # 2026-02-31 is no date: one reading only


@pytest.mark.parametrize("text", ["31.02.27", "v1.10.26", "192.168.10.26", "1.10.26"])
def test_what_is_no_dotted_date_is_not_read_as_one(text: str) -> None:
    assert not {v for v in values(text) if v[:4].isdigit() and v[4:5] == "-"}
