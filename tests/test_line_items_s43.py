"""Line items sent by plain repeated names, and checkbox groups, are no disagreement.

A bill form whose rows repeat plain names ("description=Paper&amount=100.00&description=Toner&
amount=200.00&total=300.00": Django's ``getlist``, Go's ``r.Form``, a servlet's
``getParameterValues``) is read as rows (``rules.line_items``): every row is shown with its sum, a
total sent beside them must equal it, and the sum is judged by the threshold. One amount sent twice
with different values and nothing row-shaped beside it stays *amounts disagree*; a fake second row
cannot hide an amount (each row is shown, a total that is not their sum is flagged, the sum needs a
second approver above the threshold). The values of the page's checkboxes of one name, or of a
multi-select, are a set (``FieldValue.choice``), unless one is money."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from fixtures_browser import RecordingSite, SessionFactory
from test_amounts_lookalikes_s42 import _park, _text
from test_browser_policy import idx
from test_console_sources_redteam import App, app  # noqa: F401  (fixture)
from test_vendor_twins_s42 import approver, flags_of  # noqa: F401  (fixture)

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import assess, load_rules, read_money
from taskcrew.jobs import ApprovalRequest
from taskcrew.tools.browser import Click
from taskcrew.tools.human import ApprovalDecision, FieldValue, ScriptedHuman

URL = "http://127.0.0.1:8800/bills/new"


def _flags(fields: list[tuple[str, str]], options: list[bool] | None = None) -> list[tuple[str, bool]]:
    flags = assess(
        [("vendor", "Initech"), *fields, ("currency", "EUR")], URL, load_rules(), options=options or []
    )
    return [(f.rule, f.second_approver) for f in flags.flags]


def _messages(fields: list[tuple[str, str]]) -> dict[str, str]:
    flags = assess([("vendor", "Initech"), *fields, ("currency", "EUR")], URL, load_rules()).flags
    return {f.rule: str(f.message) for f in flags}


def _rows(*rows: tuple[str, str]) -> list[tuple[str, str]]:
    return [
        pair for description, amount in rows for pair in (("description", description), ("amount", amount))
    ]


# ---- honest line items ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fields",
    [
        [*_rows(("Paper, A4, 10 boxes", "100.00"), ("Toner cartridges", "200.00")), ("total", "300.00")],
        _rows(("Paper", "100.00"), ("Toner", "200.00")),  # no total sent: the server adds them up
        _rows(("Paper", "100.00"), ("Paper", "100.00")),  # the same row twice
        [("total", "300.00"), *_rows(("Paper", "100.00"), ("Toner", "200.00"))],  # the total first
        [*_rows(("Paper", "100.00"), ("Toner", "200.00")), ("tax", "57.00"), ("total", "357.00")],
        [
            *_rows(("Paper", "100.00"), ("Toner", "200.00")),
            ("subtotal", "300.00"),
            ("tax", "57.00"),
            ("grand_total", "357.00"),
        ],
        [
            *[
                pair
                for row in (("Paper", "2", "50.00", "100.00"), ("Toner", "1", "200.00", "200.00"))
                for pair in zip(("description", "quantity", "unit_price", "amount"), row, strict=True)
            ],
            ("total", "300.00"),
        ],  # each row's quantity, unit price and amount
        [*[pair for amount in ("100.00", "200.00") for pair in (("amount", amount), ("approve_lines", "1"))]],
    ],
)
def test_line_items_by_plain_repeated_names_are_not_flagged(fields: list[tuple[str, str]]) -> None:
    assert _flags(fields) == []


def test_the_rows_and_their_sum_are_what_the_rules_read() -> None:
    fields = [*_rows(("Paper", "100.00"), ("Toner", "200.00")), ("total", "300.00")]
    (lines,) = read_money(fields, load_rules()).lines
    assert [row.text for row in lines.rows] == ["100.00", "200.00"]
    assert (lines.sum, lines.agrees, lines.text) == (Decimal("300.00"), True, "100.00 + 200.00 = 300.00")
    assert read_money(fields, load_rules()).disagreeing == []


def test_the_red_teams_bill_parked_with_the_authority_is_not_flagged(approver: Authority) -> None:  # noqa: F811
    sent = [
        ("vendor", "Initech"),
        ("invoice_number", "INV-2057"),
        *_rows(("Paper, A4, 10 boxes", "100.00"), ("Toner cartridges", "200.00")),
        ("total", "300.00"),
        ("currency", "EUR"),
    ]
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=URL,
        page_url=URL,
        fields=[FieldValue(name=n, value=v) for n, v in sent],
    )
    flags = flags_of(approver, request)
    assert "unclear_amount" not in flags and "repeated_field" not in flags, flags


# ---- one amount sent twice, and rows made up to hide one ----------------------------------------
@pytest.mark.parametrize(
    "fields",
    [
        [("description", "Consulting"), ("amount", "950.00"), ("amount", "4950.00")],  # nothing row-shaped
        [
            ("description", "a"),
            ("description", "b"),
            ("amount", "950.00"),
            ("amount", "4950.00"),
        ],  # not row by row
        [*_rows(("a", "950.00"), ("b", "4950.00")), ("description", "c")],  # three descriptions, two amounts
        [("amount", "950.00"), ("tags", "x"), ("tags", "y"), ("amount", "4950.00")],  # not row by row
        [*_rows(("a", "-4000.00"), ("b", "4950.00"))],  # a row below zero
        [*_rows(("a", "950.00"), ("b", "abc"))],  # a row that is not an amount
        [
            ("amount", "950.00"),
            ("description", "a"),
            ("Amount", "4950.00"),
            ("description", "b"),
        ],  # two names
        [
            ("price", "950.00"),
            ("unit_price", "950.00"),
            ("price", "4950.00"),
            ("unit_price", "4950.00"),
        ],  # only money
    ],
)
def test_one_amount_sent_twice_without_rows_stays_flagged(fields: list[tuple[str, str]]) -> None:
    assert ("unclear_amount", False) in _flags(fields)


def test_an_amount_in_the_address_beside_rows_in_the_body_stays_flagged() -> None:
    fields = [("vendor", "Initech"), *_rows(("a", "950.00"), ("b", "100.00")), ("currency", "EUR")]
    flags = assess(fields, URL + "?amount=4950.00&description=c", load_rules()).flags
    assert "unclear_amount" in [f.rule for f in flags]


def test_a_fake_row_beside_a_total_that_is_not_the_sum_is_flagged_with_each_value() -> None:
    said = _messages([*_rows(("Consulting", "950.00"), ("Services", "3950.00")), ("total", "950.00")])
    assert list(said) == ["unclear_amount"], said
    assert said["unclear_amount"] == (
        "amounts disagree: the rows do not add up to the total: check each by hand (amount = 950.00; "
        "amount = 3950.00: rows summing to 4900.00; total = 950.00: the system may book the total, the "
        "rows or one of them)"
    )


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (_rows(("a", "950.00"), ("b", "4950.00")), [("amount_above_threshold", True)]),
        (_rows(("a", "4000.00"), ("b", "4000.00")), [("amount_above_threshold", True)]),  # the same row twice
        (
            [*_rows(("a", "950.00"), ("b", "4950.00")), ("total", "950.00")],
            [("unclear_amount", False), ("amount_above_threshold", True)],
        ),
        (
            [*_rows(("a", "950.00"), ("b", "4950.00")), ("tax", "-4950.00"), ("total", "950.00")],
            [("unclear_amount", False), ("amount_above_threshold", True)],
        ),  # a "tax" below zero does not make the total the sum
        (
            [*_rows(("a", "2000.00"), ("b", "4000.00")), ("total", "6000.00")],
            [("amount_above_threshold", True)],  # the total, judged as itself: the sum is not said twice
        ),
    ],
)
def test_rows_whose_sum_is_above_the_threshold_need_a_second_approver(
    fields: list[tuple[str, str]], expected: list[tuple[str, bool]]
) -> None:
    assert _flags(fields) == expected


def test_the_rows_sum_above_the_threshold_is_said_with_each_row() -> None:
    said = _messages(_rows(("a", "4000.00"), ("b", "4000.00")))
    assert said["amount_above_threshold"] == (
        "the rows (amount = 4000.00; amount = 4000.00) sum to 8000.00 EUR, above 5000.00 EUR: needs a "
        "second approver"
    )


# ---- what the approver sees ----------------------------------------------------------------------
def _row(console: App, approval: str) -> str:
    page = console.client().get("/approvals").text
    row = re.search(rf'<tr[^>]*data-approval="{approval}".*?</tr>', page, re.S)
    assert row
    return _text(row.group(0))


def test_the_approver_sees_every_row_and_their_sum(app: App) -> None:  # noqa: F811
    honest = [
        ("vendor", "Initech"),
        *_rows(("Paper", "100.00"), ("Toner", "200.00")),
        ("total", "300.00"),
        ("currency", "EUR"),
    ]
    approval = _park(app, honest)
    row = _row(app, approval)
    assert "100.00 + 200.00 = 300.00 EUR" in row and "amounts disagree" not in row, row
    decision = _text(app.client().get(f"/approvals/{approval}").text)
    assert "100.00 + 200.00 = 300.00 EUR" in decision
    assert "(amount 300.00 EUR is within 5000.00 EUR)" in decision


@pytest.mark.parametrize(
    ("fields", "shown", "flag"),
    [
        (_rows(("Consulting", "950.00"), ("Services", "3950.00")), "950.00 + 3950.00 = 4900.00 EUR", None),
        (
            [("net_amount", "950.00"), *_rows(("Consulting", "950.00"), ("Services", "3950.00"))],
            "950.00 + 3950.00 = 4900.00 EUR",
            "amounts disagree",
        ),  # another amount sent first: net 950.00 is not the rows' 4900.00
        (
            [*_rows(("Consulting", "950.00"), ("Services", "3950.00")), ("total", "950.00")],
            "950.00 + 3950.00 = 4900.00 (total = 950.00) EUR",
            "amounts disagree",
        ),
    ],
)
def test_a_made_up_row_is_shown_to_the_approver(
    app: App,  # noqa: F811
    fields: list[tuple[str, str]],
    shown: str,
    flag: str | None,
) -> None:
    approval = _park(app, [("vendor", "Initech"), *fields, ("currency", "EUR")])
    row = _row(app, approval)
    assert shown in row, row
    decision = _text(app.client().get(f"/approvals/{approval}").text)
    assert shown in decision
    assert "(amount 4900.00 EUR is within 5000.00 EUR)" in decision  # judged by the sum, never by 950.00
    if flag:
        assert flag in row and flag in decision
    else:
        assert "amounts disagree" not in row and "amounts disagree" not in decision, row


# ---- checkbox groups and multi-selects -----------------------------------------------------------
@pytest.mark.parametrize(
    "group",
    [
        [("tags", "urgent"), ("tags", "q4")],
        [("approve_lines", "1"), ("approve_lines", "2")],
    ],
)
def test_the_values_of_a_checkbox_group_are_a_set(group: list[tuple[str, str]]) -> None:
    assert _flags([*group, ("amount", "300.00")], options=[False, True, True, False, False]) == []
    assert _flags([*group, ("amount", "300.00")]) == [("repeated_field", False)]  # not known as a group


def test_a_checkbox_group_of_money_values_and_a_typed_value_beside_one_are_flagged() -> None:
    assert _flags([("price", "950.00"), ("price", "4950.00")], options=[False, True, True]) == [
        ("unclear_amount", False)
    ]
    assert _flags([("tags", "urgent"), ("tags", "hold payment")], options=[False, True, False]) == [
        ("repeated_field", False)
    ]


def test_a_checkbox_group_parked_with_the_authority_is_not_flagged(approver: Authority) -> None:  # noqa: F811
    fields = [
        FieldValue(name="vendor", value="Initech"),
        FieldValue(name="amount", value="300.00"),
        FieldValue(name="tags", value="urgent", choice=True),
        FieldValue(name="tags", value="q4", choice=True),
    ]
    request = ApprovalRequest(kind="form_submission", method="POST", url=URL, page_url=URL, fields=fields)
    assert "repeated_field" not in flags_of(approver, request)
    assert (
        "choice" not in FieldValue(name="tags", value="urgent").model_dump()
    )  # parked before: sealed the same


BILL = """<h1>New bill</h1>
<form method="post" action="/record/bills">
  <label>Vendor <input name="vendor" value="Initech"></label>
  <table>
    <tr><td><input name="description" value="Paper" aria-label="Description 1"></td>
        <td><input name="amount" value="100.00" aria-label="Amount 1"></td>
        <td><input type="checkbox" name="approve_lines" value="1" checked aria-label="Approve line 1"></td></tr>
    <tr><td><input name="description" value="Toner" aria-label="Description 2"></td>
        <td><input name="amount" value="200.00" aria-label="Amount 2"></td>
        <td><input type="checkbox" name="approve_lines" value="2" checked aria-label="Approve line 2"></td></tr>
  </table>
  <label>Total <input name="total" value="300.00"></label>
  <label><input type="checkbox" name="tags" value="urgent" checked> urgent</label>
  <label><input type="checkbox" name="tags" value="q4" checked> q4</label>
  <label>Teams <select name="teams" multiple><option selected>ap</option><option selected>audit</option></select></label>
  %s
  <button type="submit">Save bill</button>
</form>"""


def _asked(make_session: SessionFactory, site: RecordingSite, extra: str = "") -> ApprovalRequest:
    human = ScriptedHuman([ApprovalDecision.reject("only looking")])
    session = make_session(human=human)
    session.goto(site.page("form.html"))
    session.run(lambda page: page.evaluate("(html) => { document.body.innerHTML = html; }", BILL % extra))
    obs = session.observe()
    result = session.act([Click(index=idx(obs, "Save bill"))])
    assert not result.ok and not site.posts()
    (request,) = human.requests
    return request


@pytest.mark.browser
def test_the_browser_marks_checkbox_groups_and_a_multi_select_and_the_bill_is_not_flagged(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    request = _asked(make_session, site)
    chosen = sorted({f.name for f in request.fields if f.choice})
    assert chosen == ["approve_lines", "tags", "teams"], [(f.name, f.value, f.choice) for f in request.fields]
    assert [(f.name, f.value) for f in request.fields if f.name == "tags"] == [
        ("tags", "urgent"),
        ("tags", "q4"),
    ]
    assert request.flags == [], request.flags


@pytest.mark.browser
def test_a_page_that_adds_a_typed_value_or_money_to_a_checkbox_name_is_flagged(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    extra = (
        '<input name="tags" value="hold payment" aria-label="Hold">'
        '<input type="checkbox" name="price" value="950.00" checked aria-label="Price A">'
        '<input type="checkbox" name="price" value="4950.00" checked aria-label="Price B">'
    )
    request = _asked(make_session, site, extra)
    assert not any(f.choice for f in request.fields if f.name == "tags")  # not every "tags" is a box
    flags = " | ".join(request.flags)
    assert (
        "sent twice with different values: check each by hand (tags = urgent; tags = q4; tags = hold payment"
        in flags
    )
    assert "amounts disagree: check each by hand (price = 950.00; price = 4950.00" in flags
