"""A field sent more than once with different values, and a target's query read as fields.

A name sent twice with different values ("price=950.00&price=4950.00", "invoice_number=INV-88 …
INV-4410") is flagged "sent twice with different values" (amounts: "amounts disagree"), except a
list the form declares ("[]") and the chosen options of one multi-choice control
(``rules.repeated``). The target's query pairs are judged as fields, by every rule
("amount (in the address)": ``rules.query_fields``). A money-shaped field is checked against its
source with the request's currency (``Money.values``, ``origins.amount_currencies``)."""

from __future__ import annotations

import re

import pytest
from test_amounts_lookalikes_s42 import _park, _text
from test_console_sources_redteam import App, app  # noqa: F401  (fixture)

from taskcrew.approvals.origins import amount_currencies
from taskcrew.approvals.rules import assess, load_rules
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import field_origins
from taskcrew.tools.human import FieldValue

URL = "http://127.0.0.1:8800/bills/new"


def _flags(
    fields: list[tuple[str, str]], url: str = URL, options: list[bool] | None = None
) -> list[tuple[str, bool]]:
    return [
        (f.rule, f.second_approver) for f in assess(fields, url, load_rules(), options=options or []).flags
    ]


def test_a_money_shaped_field_sent_twice_with_different_values_is_flagged() -> None:
    fields = [("vendor", "Northwind Traders"), ("price", "950.00"), ("price", "4950.00"), ("currency", "EUR")]
    flags = assess(fields, URL, load_rules()).flags
    assert [(f.rule, f.second_approver) for f in flags] == [("unclear_amount", False)]
    assert "price = 950.00; price = 4950.00" in flags[0].message


def test_any_field_sent_twice_with_different_values_is_flagged_naming_each() -> None:
    fields = [
        ("vendor", "Northwind Traders"),
        ("invoice_number", "INV-88"),
        ("amount", "950.00"),
        ("invoice_number", "INV-4410"),
    ]
    flags = assess(fields, URL, load_rules()).flags
    assert [(f.rule, f.second_approver) for f in flags] == [("repeated_field", False)]
    assert flags[0].message.startswith(
        "sent twice with different values: check each by hand (invoice_number = INV-88; invoice_number = INV-4410"
    )


@pytest.mark.parametrize(
    ("fields", "options"),
    [
        ([("invoice_number", "INV-88"), ("invoice_number", "INV-88")], []),  # the same value twice
        ([("tags[]", "urgent"), ("tags[]", "review")], []),  # a list the form declares
        (
            [("tags", "1 (Urgent)"), ("tags", "2 (Review)")],
            [False, True, True],
        ),  # a multi-choice control's options
    ],
)
def test_the_same_value_a_declared_list_and_a_multi_choice_control_are_not_flagged(
    fields: list[tuple[str, str]], options: list[bool]
) -> None:
    assert _flags([("vendor", "Northwind Traders"), *fields, ("amount", "950.00")], options=options) == []


def test_a_typed_value_beside_a_chosen_option_of_the_same_name_is_flagged() -> None:
    fields = [("tags", "1 (Urgent)"), ("tags", "hold payment")]
    assert _flags([("amount", "950.00"), *fields], options=[False, True, False]) == [
        ("repeated_field", False)
    ]


def test_an_amount_in_the_target_query_is_judged_like_a_field() -> None:
    fields = [("vendor", "Northwind Traders"), ("amount", "950.00"), ("currency", "EUR")]
    flags = assess(fields, URL + "?amount=9500.00", load_rules()).flags
    assert [(f.rule, f.second_approver) for f in flags] == [
        ("unclear_amount", False),
        ("amount_above_threshold", True),
    ]
    assert "amount = 950.00; amount (in the address) = 9500.00" in flags[0].message
    assert flags[1].message.startswith("amount (in the address) 9500.00 EUR is above 5000")


def test_every_rule_reads_the_query_and_a_query_repeating_the_body_adds_nothing() -> None:
    fields = [("vendor", "Northwind Traders"), ("amount", "950.00")]
    assert _flags(fields, URL + "?amount=950.00") == []  # a GET form's own fields in its address
    assert _flags(fields, URL + "?iban=DE89370400440532013000") == [("bank_details", True)]
    assert _flags(fields, URL + "?currency=JPY&currency=EUR")[0] == ("unreadable_currency", True)


def test_the_approver_sees_the_repeated_and_the_address_values(app: App) -> None:  # noqa: F811
    sent = [
        ("vendor", "Northwind Traders"),
        ("amount", "950.00"),
        ("currency", "EUR"),
        ("invoice_number", "INV-88"),
        ("invoice_number", "INV-4410"),
    ]
    approval = _park(app, sent)
    bob = app.client()
    row = re.search(rf'<tr[^>]*data-approval="{approval}".*?</tr>', bob.get("/approvals").text, re.S)
    assert row and "sent twice with different values" in _text(row.group(0))
    decision = _text(bob.get(f"/approvals/{approval}").text)
    assert (
        "sent twice with different values: check each by hand (invoice_number = INV-88; "
        "invoice_number = INV-4410" in decision
    )


SEK = "Invoice INV-88 from Northwind Traders\nNet 30\nTotal: 4,900.00 SEK\n"


def test_a_money_shaped_field_is_checked_with_the_requests_currency() -> None:
    fields = [
        FieldValue(name="vendor", value="Northwind Traders"),
        FieldValue(name="price", value="4900.00"),
        FieldValue(name="currency", value="CHF"),
    ]
    assert amount_currencies(fields, load_rules()) == {"price": "CHF"}
    report = StepReport(
        status="done",
        summary="read the invoice",
        data={"price": "4900.00"},
        sources=[Citation(source="invoice.txt", quote="Total: 4,900.00 SEK")],
    )
    origin = field_origins(fields, [(1, "document_reader", report)], {"invoice.txt": SEK}.get)["price"]
    assert origin.file == "invoice.txt" and "does not show it in CHF" in origin.text, origin.text
