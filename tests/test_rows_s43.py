"""Line items, repeats and amounts that explain one another (``rules.headline``, ``line_items``,
``repeated``).

The headline's text is built from the amount it is judged by: a total booked beside rows that is
not their sum is shown. A field read as one value per submission (a date, an invoice number, the
payee, the currency, bank details, a status) sent twice is *repeated* even beside rows or as a
group of ticked boxes. A form's spare blank row is no row; a total is the rows' money columns with
what is sent once added or (a discount) taken off. Honest amounts that explain one another (whole
numbers, 0.01 rounding, a quantity, a rate, a part paid or due, a base-currency twin) are no
disagreement; an amount nothing explains still is."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from test_amounts_lookalikes_s42 import _park, _text
from test_console_sources_redteam import App, app  # noqa: F401  (fixture)

from taskcrew.approvals.rules import assess, load_rules, read_money

URL = "http://127.0.0.1:8800/bills/new"
ROWS = [("description", "Paper"), ("amount", "100.00"), ("description", "Toner"), ("amount", "200.00")]


def _flags(
    fields: list[tuple[str, str]], options: list[bool] | None = None, currency: str = "EUR"
) -> list[str]:
    sent = [("vendor", "Initech"), *fields, ("currency", currency)]
    return [f"{f.rule}: {f.message}" for f in assess(sent, URL, load_rules(), options=options or []).flags]


# ---- (1) the headline's text is the amount it is judged by -------------------------------------
def test_a_total_booked_beside_the_rows_is_shown_with_them() -> None:
    fields = [*ROWS, ("shipping", "4699.00"), ("total", "4999.00")]
    head = read_money(fields, load_rules()).headline
    assert head is not None
    assert (head.text, head.value) == ("100.00 + 200.00 = 300.00; total = 4999.00", Decimal("4999.00"))


def test_the_worklist_and_decision_page_show_the_total_booked(app: App) -> None:  # noqa: F811
    sent = [("vendor", "Initech"), *ROWS, ("shipping", "4699.00"), ("total", "4999.00"), ("currency", "EUR")]
    approval = _park(app, sent)
    page = app.client().get("/approvals").text
    row = re.search(rf'<tr[^>]*data-approval="{approval}".*?</tr>', page, re.S)
    assert row and "total = 4999.00" in _text(row.group(0)), row
    decision = app.client().get(f"/approvals/{approval}").text
    key = re.search(r'<table id="key-values".*?</table>', decision, re.S)
    assert key and "total = 4999.00" in _text(key.group(0))


# ---- (2, 3) a field of one value per submission is judged beside rows and as a set -------------
@pytest.mark.parametrize("name", ["due_date", "invoice_number", "payee", "status"])
def test_a_one_value_field_beside_rows_is_repeated(name: str) -> None:
    fields = [(name, "2027-03-01"), ("amount", "100.00"), (name, "2026-12-08"), ("amount", "0.00")]
    assert any(flag.startswith("repeated_field") for flag in _flags(fields)), _flags(fields)


def test_a_one_value_field_as_ticked_boxes_is_repeated() -> None:
    fields = [("amount", "100.00"), ("due_date", "2027-03-01"), ("due_date", "2026-12-08")]
    flags = _flags(fields, options=[False, False, True, True])
    assert any(flag.startswith("repeated_field") for flag in flags), flags


def test_row_columns_and_a_box_group_of_tags_are_still_no_repeat() -> None:
    assert _flags([*ROWS, ("total", "300.00")]) == []
    assert (
        _flags([("amount", "100.00"), ("tags", "a"), ("tags", "b")], options=[False, False, True, True]) == []
    )


# ---- (4) a spare blank row, a discount, each row's tax -----------------------------------------
@pytest.mark.parametrize(
    "fields",
    [
        [*ROWS, ("description", ""), ("amount", ""), ("total", "300.00")],
        [*ROWS, ("discount", "10.00"), ("total", "290.00")],
        [*ROWS[:2], ("tax", "19.00"), *ROWS[2:], ("tax", "38.00"), ("total", "357.00")],
    ],
)
def test_honest_line_items_are_not_flagged(fields: list[tuple[str, str]]) -> None:
    assert _flags(fields) == []


def test_rows_that_do_not_add_up_are_still_flagged() -> None:
    flags = _flags([*ROWS, ("discount", "10.00"), ("total", "4990.00")])
    assert any("the rows do not add up" in flag for flag in flags), flags


# ---- (5) amounts that explain one another -----------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "currency"),
    [
        ([("net", "10000"), ("tax", "1000"), ("total", "11000")], "JPY"),
        ([("net", "1000"), ("tax", "190"), ("total", "1190")], "USD"),
        ([("net", "33.33"), ("tax", "6.33"), ("total", "39.67")], "EUR"),
        ([("quantity", "8"), ("unit_amount", "12.50"), ("line_amount", "100.00")], "USD"),
        ([("invoice_total", "1000.00"), ("amount_due", "700.00")], "USD"),
        ([("bill_total", "1000.00"), ("amount_paid", "400.00")], "USD"),
        ([("net", "100.00"), ("vat_rate", "19"), ("total", "119.00")], "EUR"),
        ([("subtotal", "1000.00"), ("discount_percent", "2"), ("total", "980.00")], "USD"),
        ([("amount", "100.00"), ("amount_base", "92.31")], "USD"),
    ],
)
def test_amounts_that_explain_one_another_do_not_disagree(
    fields: list[tuple[str, str]], currency: str
) -> None:
    assert not [flag for flag in _flags(fields, currency=currency) if "disagree" in flag]


@pytest.mark.parametrize(
    "fields",
    [
        [("net", "400.00"), ("amount", "4900.00")],
        [("net", "400"), ("tax", "76"), ("amount", "4900.00")],
        [("total", "400.00"), ("amount_due", "4900.00")],  # a balance above the total
        [("amount", "400.00"), ("amount_base", "4900.00")],  # the twin is the largest: nothing explains 400
        [("net", "33.33"), ("tax", "6.33"), ("total", "39.70")],  # more than rounding
        # a count in Arabic-Indic digits is no count a person reads as 4 (only 0-9 are digits)
        [("quantity", "\u0664"), ("unit_amount", "1000.00"), ("line_amount", "4000.00")],
    ],
)
def test_amounts_nothing_explains_still_disagree(fields: list[tuple[str, str]]) -> None:
    assert [flag for flag in _flags(fields) if "disagree" in flag], _flags(fields)
    head = read_money(fields, load_rules()).headline
    assert head is not None and head.value == max(
        Decimal(v) for n, v in fields if "amount" in n or n == "total"
    )


def test_an_amount_grouped_with_a_thin_space_in_a_field_of_any_name_is_money() -> None:
    """A value shaped like money is judged by the threshold whatever its field's name, grouped with
    any separator the invoice reader reads as grouping (a thin space too: "9 500.00")."""
    for value in ["EUR 9\u2009500.00", "EUR 9 500.00"]:
        flags = _flags([("x", value)])
        assert any(flag.startswith("amount_above_threshold") for flag in flags), (value, flags)


def test_bank_details_and_the_payee_beside_rows_are_read_by_the_rules_that_read_them() -> None:
    """A field is one value per submission as bank details (``bank_field``: the rules' bank_fields,
    or an IBAN) or a payee (``PAYEE_FIELD``) everywhere else: a sort code or a creditor's
    beneficiary sent per row is repeated; a ledger account code per row is a row's column."""
    for name in ["sort_code", "routing", "beneficiary_name"]:
        fields = [(name, "40-47-84"), ("amount", "100.00"), (name, "20-00-00"), ("amount", "200.00")]
        assert any(flag.startswith("repeated_field") for flag in _flags(fields)), (name, _flags(fields))
    rows = [("account", "6000"), ("amount", "100.00"), ("account", "6100"), ("amount", "200.00")]
    assert not any(flag.startswith("repeated_field") for flag in _flags(rows)), _flags(rows)
