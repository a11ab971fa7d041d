"""The rows of a form are sent paired as they were approved.

Found (red team): a batch form sends its rows by repeated names ("description=…&amount=…", row after
row). The approver was shown "Northwind Traders: freight Oct" 4000.00 and "Mallory Ltd: stamp fee"
1.00; at submit the page swapped the two amounts, and the server received Northwind 1.00 and Mallory
4000.00. The gate let it through: ``approvals.key.normal_fields`` sorted the fields ("order aside"),
so the send check (``same_fields``) and every approval key took the swapped body for the approved one.

The rule now: the fields are compared and keyed in the order sent (``normal_fields`` keeps it), as
the risk rules (``rules.line_items``) and the systems read rows, by position. Both producers — the
form prediction (FormData) and the parser of the body the browser sends — write the page's order, so
a form sent as approved still matches (urlencoded and multipart)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fixtures_adversarial import Server, serve
from fixtures_browser import SessionFactory

from taskcrew.approvals.key import request_key, same_fields
from taskcrew.tools.browser import BrowserSession, Click
from taskcrew.tools.browser.network import body_fields
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

ROWS = [
    ("description", "Northwind Traders: freight Oct"),
    ("amount", "4000.00"),
    ("description", "Mallory Ltd: stamp fee"),
    ("amount", "1.00"),
]
SWAPPED = [ROWS[0], ROWS[3], ROWS[2], ROWS[1]]  # each row's amount given to the other row
REGROUPED = [ROWS[0], ROWS[2], ROWS[1], ROWS[3]]  # each name's values in order, the rows regrouped
URL = "http://erp.test/batch/pay"


@pytest.mark.parametrize("sent", [SWAPPED, REGROUPED], ids=["amounts-swapped", "rows-regrouped"])
def test_the_same_values_paired_otherwise_are_another_request(sent: list[tuple[str, str]]) -> None:
    assert not same_fields(sent, ROWS)
    assert request_key("POST", URL, sent) != request_key("POST", URL, ROWS)


def test_the_fields_as_sent_are_the_approved_ones() -> None:
    assert same_fields(list(ROWS), ROWS)
    assert request_key("POST", URL, list(ROWS)) == request_key("POST", URL, ROWS)
    assert same_fields([("note", "a\r\nb")], [("note", "a\nb")])  # line ends are still one


def test_a_bodys_fields_keep_the_order_they_were_sent_in() -> None:
    body = b"description=B&amount=1&description=A&amount=2"
    assert body_fields("application/x-www-form-urlencoded", body) == [
        ("description", "B"),
        ("amount", "1"),
        ("description", "A"),
        ("amount", "2"),
    ]
    assert body_fields("application/json", b'{"z": 1, "a": [2, 1]}') == [
        ("z", "1"),
        ("a[0]", "2"),
        ("a[1]", "1"),
    ]


PAGE = """<!doctype html><title>Batch payment</title>
<h1>Pay vendors</h1>
<form method="post" action="/batch/pay" enctype="{enctype}">
<input type="hidden" name="batch" value="B-7">
<table>
<tr><td><input name="description" value="Northwind Traders: freight Oct" readonly aria-label="Line 1"></td>
    <td><input name="amount" value="4000.00" aria-label="Amount 1"></td></tr>
<tr><td><input name="description" value="Mallory Ltd: stamp fee" readonly aria-label="Line 2"></td>
    <td><input name="amount" value="1.00" aria-label="Amount 2"></td></tr>
</table>
<button type="submit" name="go" value="pay">Pay all</button>
</form>
<script>{script}</script>"""

SWAP = """document.forms[0].addEventListener('submit', () => {
  const a = document.getElementsByName('amount');
  const t = a[0].value; a[0].value = a[1].value; a[1].value = t;
});"""

REGROUP = """document.forms[0].addEventListener('submit', () => {
  const second = document.getElementsByName('description')[1].closest('td');
  document.getElementsByName('description')[0].closest('td').after(second);  // N, M, 4000, 1
});"""

ENCTYPES = ["application/x-www-form-urlencoded", "multipart/form-data"]


@pytest.fixture
def hostile() -> Iterator[Server]:
    yield from serve({})


def _pay(
    make_session: SessionFactory, hostile: Server, enctype: str, script: str
) -> tuple[ScriptedHuman, BrowserSession]:
    hostile.pages["/pay.html"] = PAGE.replace("{enctype}", enctype).replace("{script}", script)
    human = ScriptedHuman([ApprovalDecision.approve()])
    session = make_session(human=human, base_url=hostile.url)
    obs = session.goto(f"{hostile.url}/pay.html").observation
    session.act([Click(index=next(e.index for e in obs.elements if e.name == "Pay all"))])
    human.assert_complete()
    return human, session


@pytest.mark.browser
@pytest.mark.parametrize("enctype", ENCTYPES)
@pytest.mark.parametrize("script", [SWAP, REGROUP], ids=["amounts-swapped", "rows-regrouped"])
def test_rows_paired_otherwise_at_submit_are_not_sent(
    make_session: SessionFactory, hostile: Server, enctype: str, script: str
) -> None:
    human, session = _pay(make_session, hostile, enctype, script)
    (asked,) = human.requests
    assert [(f.name, f.value) for f in asked.fields if f.name in ("description", "amount")] == ROWS
    assert [h.path for h in hostile.posts()] == []  # stopped: nothing reached the system
    assert any(
        d.outcome == "blocked" and "differs from the data approved" in d.reason
        for d in session.policy.decisions
    )


@pytest.mark.browser
@pytest.mark.parametrize("enctype", ENCTYPES)
def test_a_batch_form_sent_as_approved_leaves_in_the_approved_order(
    make_session: SessionFactory, hostile: Server, enctype: str
) -> None:
    """The form prediction and the browser's encoding write the same order (the hidden field first,
    the rows, the button pressed last), so an untouched form is sent: the rule refuses only a body
    paired otherwise."""
    human, _ = _pay(make_session, hostile, enctype, "")
    (asked,) = human.requests
    approved = [(f.name, f.value) for f in asked.fields]
    assert approved == [("batch", "B-7"), *ROWS, ("go", "pay")]
    (post,) = hostile.posts()
    ctype = next(v for k, v in post.headers.items() if k.lower() == "content-type")
    assert body_fields(ctype, post.body) == approved
