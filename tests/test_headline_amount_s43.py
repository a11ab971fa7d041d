"""The headline "Amount" of an approval is never smaller than an amount it sends, and one value in two
spellings is one value.

Before, the headline was the first field named as an amount: a form that sent "net=400.00" (or
"subtotal", "total") before "amount=4900.00" showed "Amount 400.00 USD" on the worklist row, the
decision page and the bulk approval's message, with no flag, bulk-approvable, while the system
booked 4,900.00. Now the rules read one headline (``rules.Money.headline``, ``read_money``): judged
by the largest amount sent; amounts sent under different names that differ and do not add up (net
+ tax = total, rows = total) are each shown ("net = 400.00; amount = 4900.00") and flagged *amounts
disagree*, kept out of bulk approval. Honest net / tax / total that add up are not flagged, and the
total is the headline.

And ``rules.repeated`` compared a currency code and a date by their text: "currency=eur" in the
address beside the form's "EUR", "2026-10-14" beside "14.10.2026" were flagged "sent twice with
different values". A currency code is now compared in any case, a date by the date it names (the
invoice reader's ``ap.parse_date``, only when unambiguous)."""

from __future__ import annotations

import re
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from test_amounts_lookalikes_s42 import _park, _text
from test_console_redteam import csrf, flash_of
from test_console_sources_redteam import BASE, App, app  # noqa: F401  (fixture)
from test_vendor_twins_s42 import approver, park  # noqa: F401  (fixture)

from taskcrew.approvals.authority import Authority, bulk_refusal
from taskcrew.approvals.rules import assess, load_rules, read_money
from taskcrew.console.worklist import work_item
from taskcrew.jobs import ApprovalRequest
from taskcrew.mock_erp.web import Request
from taskcrew.tools.human import FieldValue

ERP = "http://127.0.0.1:8800"
URL = f"{ERP}/bills/new"


def _flags(fields: list[tuple[str, str]], url: str = URL) -> list[str]:
    sent = [("vendor", "Northwind Traders"), *fields, ("currency", "USD")]
    return [f.rule for f in assess(sent, url, load_rules()).flags]


# ---- the rule ------------------------------------------------------------------------------------
HOSTILE = [
    ([("net", "400.00"), ("amount", "4900.00")], "net = 400.00; amount = 4900.00"),
    ([("subtotal", "400.00"), ("amount", "4900.00")], "subtotal = 400.00; amount = 4900.00"),
    ([("total", "400.00"), ("amount", "4900.00")], "total = 400.00; amount = 4900.00"),  # a total smaller
    ([("gross", "400.00"), ("net", "4900.00")], "gross = 400.00; net = 4900.00"),  # gross and net swapped
    ([("amount", "4900.00"), ("total", "400.00")], "amount = 4900.00; total = 400.00"),  # the real one first
    ([("invoice.net", "400.00"), ("invoice.amount", "4900")], "invoice.net = 400.00; invoice.amount = 4900"),
    ([("net", "400.00"), ("tax", "76.00"), ("amount", "4900.00")], "net = 400.00; amount = 4900.00"),
]


@pytest.mark.parametrize(("fields", "shown"), HOSTILE)
def test_amounts_under_different_names_that_differ_are_each_shown_judged_by_the_largest_and_flagged(
    fields: list[tuple[str, str]], shown: str
) -> None:
    head = read_money(fields, load_rules()).headline
    assert head is not None
    assert (head.text, head.value) == (shown, Decimal("4900")), head
    assert _flags(fields) == ["unclear_amount"]
    (flag,) = assess(fields, URL, load_rules()).flags
    assert str(flag.message).startswith(f"amounts disagree: check each by hand ({shown}: ")
    assert "judged by the largest, 4900" in str(flag.message)


def test_an_amount_in_the_address_is_one_of_them() -> None:
    assert _flags([("net", "400.00")], URL + "?amount=4900.00") == ["unclear_amount"]


@pytest.mark.parametrize(
    ("fields", "shown", "value"),
    [
        ([("net", "400.00"), ("tax", "76.00"), ("total", "476.00")], "476.00", "476.00"),
        ([("net_amount", "1000.00"), ("vat_amount", "190.00"), ("gross", "1190.00")], "1190.00", "1190.00"),
        ([("total", "1190.00"), ("subtotal", "1000.00"), ("vat", "190.00")], "1190.00", "1190.00"),
        (
            [("subtotal", "300.00"), ("shipping", "12.00"), ("tax", "57.00"), ("total", "369.00")],
            "369.00",
            "369.00",
        ),
        ([("subtotal", "300.00"), ("discount", "-30.00"), ("total", "270.00")], "300.00", "300.00"),
        ([("amount", "950.00"), ("total", "950.00")], "950.00", "950.00"),  # one value under two names
        ([("amount", "950.00"), ("amount_paid", "0.00")], "950.00", "950.00"),
        (
            [("lines[0].amount", "400.00"), ("lines[1].amount", "600.00"), ("total", "1000.00")],
            "400.00 + 600.00 = 1000.00",
            "1000.00",
        ),  # a JSON body's rows and their total
        (
            [("lines[0].amount", "400.00"), ("lines[1].amount", "600.00")],
            "400.00 + 600.00 = 1000.00",
            "1000.00",
        ),
        ([("amount[]", "400.00"), ("amount[]", "600.00")], "400.00 + 600.00 = 1000.00", "1000.00"),
        (
            [
                *[
                    ("description", "Paper"),
                    ("amount", "100.00"),
                    ("description", "Toner"),
                    ("amount", "200.00"),
                ],
                *[("net", "300.00"), ("tax", "57.00"), ("total", "357.00")],
            ],
            "100.00 + 200.00 = 300.00; total = 357.00",
            "357.00",
        ),  # line items beside their net, tax and total: the total judged by is shown
    ],
)
def test_honest_amounts_that_add_up_are_not_flagged_and_the_largest_is_shown(
    fields: list[tuple[str, str]], shown: str, value: str
) -> None:
    head = read_money(fields, load_rules()).headline
    assert head is not None and (head.text, head.value) == (shown, Decimal(value)), head
    assert _flags(fields) == []


def test_the_record_amount_read_for_a_payment_is_no_amount_sent() -> None:
    """Paying part of a bill: what the form sends is the headline, the record's is judged besides."""
    looked_up = {"amount": "4950.00", "currency": "EUR", "source": f"{ERP}/bills/BILL-7"}
    head = read_money([("amount", "950.00")], load_rules(), looked_up).headline
    assert head is not None and (head.text, head.field) == ("950.00", "amount")
    alone = read_money([("vendor", "x")], load_rules(), looked_up).headline
    assert alone is not None and (alone.text, alone.value) == ("4950.00", Decimal("4950.00"))


# ---- what the approver sees ----------------------------------------------------------------------
@pytest.mark.parametrize("extra", ["net", "subtotal", "total"])
def test_the_headline_shows_what_the_system_books_and_bulk_approval_refuses_it(
    approver: Authority,  # noqa: F811
    extra: str,
) -> None:
    fields = [
        FieldValue(name="vendor", value="Northwind Traders"),
        FieldValue(name="invoice_number", value="INV-2057"),
        FieldValue(name=extra, value="400.00"),
        FieldValue(name="amount", value="4900.00"),
        FieldValue(name="currency", value="USD"),
    ]
    request = ApprovalRequest(kind="form_submission", method="POST", url=URL, fields=fields, page_url=URL)
    view = approver.view(approver.jobs.approval(park(approver.jobs, request).id))
    item = work_item(view, approver.rules)
    body = urlencode([(f.name, f.value) for f in fields]).encode()
    booked = Request.parse("POST", "/bills/new", {"content-type": "application/x-www-form-urlencoded"}, body)
    assert booked.form["amount"] == "4900.00"  # what the mock ERP books
    assert item.amount_text == f"{extra} = 400.00; amount = 4900.00", item.amount_text
    assert (item.amount, item.amount_field) == (Decimal("4900.00"), "amount")
    assert "amounts" in item.flag_codes
    assert bulk_refusal(view) is not None


def test_the_worklist_reads_an_amount_in_the_address_as_the_rules_do(approver: Authority) -> None:  # noqa: F811
    fields = [FieldValue(name="vendor", value="Northwind Traders"), FieldValue(name="net", value="400.00")]
    url = f"{URL}?amount=4900.00"
    request = ApprovalRequest(kind="form_submission", method="POST", url=url, fields=fields, page_url=URL)
    item = work_item(approver.view(approver.jobs.approval(park(approver.jobs, request).id)), approver.rules)
    assert (item.amount_text, item.amount) == (
        "net = 400.00; amount (in the address) = 4900.00",
        Decimal("4900.00"),
    )
    assert "amounts" in item.flag_codes and item.bulk_refusal is not None


def _row(page: str, approval: str) -> str:
    row = re.search(rf'<tr[^>]*data-approval="{approval}".*?</tr>', page, re.S)
    assert row
    return row.group(0)


def test_every_surface_shows_each_amount_and_the_item_stays_out_of_bulk_approval(app: App) -> None:  # noqa: F811
    sent = [("vendor", "Northwind Traders"), ("net", "400.00"), ("amount", "4900.00"), ("currency", "USD")]
    ids = [_park(app, [*sent, ("invoice_number", f"INV-{i}")]) for i in (1, 2)]
    bob = app.client()
    page = bob.get("/approvals").text
    row = _row(page, ids[0])
    assert "net = 400.00; amount = 4900.00 USD" in _text(row) and "amounts disagree" in _text(row)
    assert f'name="ids" value="{ids[0]}"' not in row  # not offered for bulk approval
    decision = bob.get(f"/approvals/{ids[0]}").text
    key = re.search(r'<table id="key-values".*?</table>', decision, re.S)
    assert key and "net = 400.00; amount = 4900.00 USD" in _text(key.group(0))
    assert "(amount 4900.00 USD is within 5000.00 USD)" in _text(decision)  # judged by the largest
    bob.post("/approvals/bulk", data={"csrf": csrf(page), "ids": ids}, headers={"origin": BASE})
    assert [app.jobs.approval(i).status for i in ids] == ["pending", "pending"]


def test_honest_net_tax_and_total_show_the_total_and_are_approved_in_bulk(app: App) -> None:  # noqa: F811
    sent = [
        ("vendor", "Northwind Traders"),
        ("net", "400.00"),
        ("tax", "76.00"),
        ("total", "476.00"),
        ("currency", "USD"),
    ]
    ids = [_park(app, [*sent, ("invoice_number", f"INV-{i}")]) for i in (1, 2)]
    bob = app.client()
    page = bob.get("/approvals").text
    row = _text(_row(page, ids[0]))
    assert "476.00 USD" in row and "400.00" not in row and "amounts disagree" not in row, row
    said = bob.post("/approvals/bulk", data={"csrf": csrf(page), "ids": ids}, headers={"origin": BASE})
    told = flash_of(bob, said.headers["location"])
    assert "2 approvals approved" in told and "Northwind Traders, 476.00 USD" in told, told


# ---- one value in two spellings ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "fields"),
    [
        (f"{URL}?currency=eur", [("currency", "EUR")]),
        (URL, [("currency", "usd"), ("Currency", "USD")]),
        (f"{URL}?invoice_date=2026-10-14", [("invoice_date", "14.10.2026")]),
        (URL, [("due_date", "2026-10-14"), ("due_date", "14 Oct 2026")]),
        (URL, [("due_date", "10/14/2026"), ("due_date", "2026-10-14")]),  # the 14th is no month
    ],
)
def test_one_value_in_two_spellings_is_one_value(url: str, fields: list[tuple[str, str]]) -> None:
    flags = assess([*fields, ("amount", "1234.56")], url, load_rules()).flags
    assert [f.rule for f in flags] == [], [str(f.message) for f in flags]


@pytest.mark.parametrize(
    ("url", "fields"),
    [
        (f"{URL}?currency=eur", [("currency", "USD")]),
        (f"{URL}?invoice_date=2026-10-14", [("invoice_date", "15.10.2026")]),
        (f"{URL}?invoice_date=2026-03-04", [("invoice_date", "03.04.2026")]),  # 3 April, not 4 March
        (URL, [("due_date", "04/03/2026"), ("due_date", "2026-04-03")]),  # either could be the month
        (URL, [("invoice_number", "inv-88"), ("invoice_number", "INV-88")]),  # only a currency's case
    ],
)
def test_two_values_or_an_ambiguous_date_stay_flagged(url: str, fields: list[tuple[str, str]]) -> None:
    flags = assess([*fields, ("amount", "1234.56")], url, load_rules()).flags
    assert [f.rule for f in flags if f.rule in ("repeated_field", "unreadable_currency")], [
        str(f.message) for f in flags
    ]
