"""The decision page and the worklist at laptop size, whatever a page sends (red team console7).

A hostile page could push the decision off the first screen and fill it with its own text: a
20,000-character memo quoted whole in a flag ran the rule and Approve 3,500 px down at 1366x768, a
long word ran 230,779 px to the right, a 20,000-character invoice number made a worklist row 7,082 px
tall (still offered for bulk approval) and a flag's tooltip carried 20,000 characters. Now every value
a flag quotes and every value of a console cell is cut by the one cut of every surface
(``visible.cut_shown``: 200 characters, then how many more and where they are shown whole; the
terminal's own), and the decision page's flags wrap anywhere.

A value in a password box, in a field not named as an amount ("price"), was flagged "read it here"
yet was not in "What you approve"; the flag said "price = 98000.00 looks like an amount … above
5000.00 EUR" while the worklist's Amount was "—" (``Money.headline`` read only the fields named as
amounts), and two such transfers were approved in bulk while their pages said "no amount recognised —
check it by hand". Now every field a flag names or a note marks is listed in "What you approve", the
headline is never smaller than a money-shaped value the rules judge, and an amount read only by its
shape (or not readable, or without a threshold) is not approved in bulk (``Money.by_hand``, one rule
in ``authority.bulk_refusal`` for the console's checkbox and for bulk approval itself).

Every item is parked through the real path: real Chromium fills a real HTTP page's form through the
browser gate (a ScriptedHuman only captures the request), the job store parks it (``JobHuman``), and
the real console (uvicorn) is opened in real Chromium."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fixtures_console import ConsoleEnv

from taskcrew.approvals.rules import load_rules, read_money
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools import human
from taskcrew.tools.browser import Click, Type
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, ScriptedHuman

pytestmark = pytest.mark.browser

LAPTOP = (1366, 768)
SHOTS = Path(os.environ.get("TASKCREW_LAYOUT_SHOTS", "")) if os.environ.get("TASKCREW_LAYOUT_SHOTS") else None
MEMO = ("Payment approved by finance; amount 49.00 EUR to Northwind Traders; nothing to check. " * 250)[
    :20000
]


def _bill(amount: str, extra: str = "", inv: str = "INV-3001") -> str:
    return (
        "<label>Vendor <input name=vendor value='Northwind Traders'></label>"
        f"<label>Invoice number <input name=invoice_number value='{inv}'></label>"
        f"<label>Amount <input name=amount value='{amount}'></label>"
        f"<label>Currency <input name=currency value='EUR'></label>{extra}"
    )


PAGES: dict[str, tuple[str, str]] = {
    "/bill-memo-twice": (
        "/bills/new",
        _bill(
            "49.00",
            f"<label>Memo <textarea name=memo>{MEMO}</textarea></label><input type=hidden name=memo value=short>",
        ),
    ),
    "/bill-memo-word": (
        "/bills/new",
        _bill("49.00", "<label>Memo <textarea name=memo>" + "A" * 19990 + "\u1d0f</textarea></label>"),
    ),
    "/bill-inv-long": ("/bills/new", _bill("49.00", inv="INV-" + "7" * 19990)),
    "/bill": ("/bills/new", _bill("49.00")),
    "/transfer-password": (
        "/transfers",
        "<label>Reference <input name=reference value=INV-2057></label>"
        "<label>Price <input type=password name=price autocomplete=off></label>",
    ),
    "/transfer-text": (
        "/transfers",
        "<label>Reference <input name=reference value=INV-2057></label>"
        "<label>Price <input name=price autocomplete=off></label>",
    ),
    "/transfer-note-password": (
        "/transfers",
        "<label>Reference <input name=reference value=INV-2057></label><label>Amount <input name=amount "
        "value='49.00'></label><label>Approval code <input type=password name=approval_code></label>",
    ),
    "/vendor-bank": (
        "/vendors/7/bank",
        "<label>Vendor <input name=vendor_name value='Northwind Traders'></label>"
        "<label>Account no <input name=account_no value='DE89370400440532013000'></label>"
        "<label>Account holder <input name=account_holder value='Northwind Traders'></label>",
    ),
}
VENDORS = (
    "<!doctype html><title>Vendors</title><h1>Vendors</h1><table><thead><tr><th>No.</th><th>Vendor</th>"
    "</tr></thead><tbody><tr><td><a href='/vendors/7'>7</a></td><td>Northwind Traders</td></tr></tbody></table>"
)


class _Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/vendors":
            body = VENDORS
        elif path in PAGES:
            action, inner = PAGES[path]
            body = (
                "<!doctype html><html><head><title>Form</title></head><body><h1>Form</h1>"
                f"<form method=post action={action}>{inner}<button>Save</button></form></body></html>"
            )
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body.encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"saved")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def portal() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _asked(make_session: Any, portal: str, path: str, typed: dict[str, str] | None = None) -> ApprovalRequest:
    """The request the real browser gate asks about when the form at ``path`` is filled and saved."""
    asker = ScriptedHuman([ApprovalDecision.reject("looking")])
    session = make_session(human=asker, base_url=portal)
    at = {e.name: e.index for e in session.goto(portal + path).observation.elements}
    session.act([*(Type(index=at[k], text=v) for k, v in (typed or {}).items()), Click(index=at["Save"])])
    (request,) = asker.requests
    return request


def _park(jobs: Jobs, request: ApprovalRequest) -> str:
    job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return parked.value.approval_id


def _page(console_env: ConsoleEnv, path: str, size: tuple[int, int] = LAPTOP, name: str = "") -> Any:
    page = console_env.page_as("bob")
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(console_env.url + path)
    page.evaluate("window.scrollTo(0, 0)")
    if SHOTS is not None and name:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-{size[0]}x{size[1]}.png"))
    return page


def _off_screen(page: Any, *selectors: str) -> list[str]:
    """The selectors whose box is not inside the first viewport (no scrolling), with their boxes,
    and how far the page runs off the right edge."""
    page.evaluate("window.scrollTo(0, 0)")
    size = page.viewport_size
    out = []
    for selector in selectors:
        box = page.locator(selector).first.bounding_box()
        if (
            box is None
            or box["y"] < 0
            or box["y"] + box["height"] > size["height"]
            or box["x"] + box["width"] > size["width"]
        ):
            out.append(f"{selector}: {box}")
    if (wider := page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) > 0:
        out.append(f"the page runs {wider}px off the right edge")
    return out


DECISION = ("#key-values", "#risk-flags", "#rule", "#approving", "button.approve")


# ---- one cut of every surface ------------------------------------------------------------------
def test_the_terminal_and_the_console_cut_a_value_with_one_cut() -> None:
    from taskcrew.approvals.visible import VALUE_LIMIT, cut_shown, cut_value, visible

    assert human.cut_value is cut_value and human.VALUE_LIMIT == VALUE_LIMIT == 200
    cut = cut_value("x" * 250, "f at the prompt")
    assert cut == "x" * 200 + "… (50 more characters: f at the prompt)"
    assert cut_value("x" * 250, None) == "x" * 250 and cut_value("x" * 200) == "x" * 200
    # a marker is shown whole or not at all: never "⟨Cyrillic о U+04…"
    text = visible("a" * 190 + "Nоrthwind" + "b" * 100)
    cut = cut_shown(text)
    assert "⟨Cyrillic" not in cut and cut.startswith("a" * 190) and "more characters" in cut


# ---- finding 1: a long value quoted in a flag --------------------------------------------------
@pytest.mark.parametrize("path", ["/bill-memo-twice", "/bill-memo-word"])
def test_a_long_value_quoted_in_a_flag_leaves_the_decision_on_the_first_screen(
    make_session: Any, console_env: ConsoleEnv, portal: str, path: str
) -> None:
    aid = _park(console_env.jobs, _asked(make_session, portal, path))
    page = _page(console_env, f"/approvals/{aid}", name="decision" + path.replace("/", "-"))
    flags = page.locator("#risk-flags").inner_text()
    assert "more characters" in flags and len(flags) < 2000, flags
    assert not _off_screen(page, *DECISION), _off_screen(page, *DECISION)
    # the worklist's row and its tooltips: cut too
    page = _page(console_env, "/approvals", name="worklist" + path.replace("/", "-"))
    row = page.locator(f"tr[data-approval='{aid}']")
    titles = row.locator("[title]").evaluate_all("l => l.map(e => e.title.length)")
    assert max(titles) < 1000 and row.bounding_box()["height"] < LAPTOP[1] / 3, (titles, row.bounding_box())


# ---- finding 2: a long invoice number ----------------------------------------------------------
def test_a_long_invoice_number_leaves_the_amount_and_the_buttons_on_the_first_screen(
    make_session: Any, console_env: ConsoleEnv, portal: str
) -> None:
    aid = _park(console_env.jobs, _asked(make_session, portal, "/bill-inv-long"))
    page = _page(console_env, f"/approvals/{aid}", name="decision-inv-long")
    key = page.locator("#key-values").inner_text()
    assert "19794 more characters" in key and "49.00 EUR" in key, key
    amount = "#key-values tr:has(th:text-is('Amount'))"
    assert not _off_screen(page, amount, "#rule", "button.approve"), _off_screen(
        page, amount, "button.approve"
    )
    page = _page(console_env, "/approvals", name="worklist-inv-long")
    box = page.locator(f"tr[data-approval='{aid}']").bounding_box()
    assert box["height"] < LAPTOP[1] / 3, box


# ---- finding 3: a field a flag names is in "What you approve" ----------------------------------
@pytest.mark.parametrize(
    ("path", "typed"),
    [
        ("/transfer-password", {"Price": "12.00"}),
        ("/transfer-note-password", {"Approval code": "7Q-2291"}),
    ],
)
def test_a_value_a_flag_says_to_read_here_is_in_what_you_approve(
    make_session: Any, console_env: ConsoleEnv, portal: str, path: str, typed: dict[str, str]
) -> None:
    aid = _park(console_env.jobs, _asked(make_session, portal, path, typed))
    page = _page(console_env, f"/approvals/{aid}", name="decision" + path.replace("/", "-"))
    (value,) = typed.values()
    assert "read it here" in page.locator("#risk-flags").inner_text()
    row = page.locator("#key-values tr", has_text=value)
    assert "in a password box on the page" in row.inner_text(), page.locator("#key-values").inner_text()
    assert not _off_screen(page, "#key-values", *DECISION[1:]), _off_screen(page, *DECISION)


# ---- finding 4: the headline is never smaller than an amount the rules judge ---------------------
def test_the_headline_is_never_smaller_than_a_money_shaped_value_the_rules_judge() -> None:
    rules = load_rules()
    only = read_money([("reference", "INV-1"), ("price", "98000.00")], rules).headline
    assert only is not None and (only.text, str(only.value), only.field, only.shaped) == (
        "98000.00",
        "98000.00",
        "price",
        True,
    )
    beside = read_money([("amount", "49.00"), ("price", "98000.00")], rules).headline
    assert (
        beside is not None
        and beside.text == "amount = 49.00; price = 98000.00"
        and str(beside.value) == "98000.00"
    )
    smaller = read_money([("amount", "49.00"), ("tax", "9.00")], rules).headline  # a part: as before
    assert smaller is not None and (smaller.text, smaller.shaped) == ("49.00", False)
    rows = read_money(
        [("item", "a"), ("price", "4000.00"), ("item", "b"), ("price", "3000.00")], rules
    ).headline
    assert rows is not None and str(rows.value) == "7000.00", rows


@pytest.mark.parametrize("path", ["/transfer-password", "/transfer-text"])
def test_the_worklist_and_the_decision_page_show_the_amount_the_flag_judges(
    make_session: Any, console_env: ConsoleEnv, portal: str, path: str
) -> None:
    aid = _park(console_env.jobs, _asked(make_session, portal, path, {"Price": "98000.00"}))
    page = _page(console_env, f"/approvals/{aid}", name="headline" + path.replace("/", "-"))
    assert "price = 98000.00 looks like an amount" in page.locator("#risk-flags").inner_text()
    amount = page.locator("#key-values tr:has(th:text-is('Amount'))").inner_text()
    assert "98000.00 EUR" in amount and "only by its shape" in amount, amount
    page = _page(console_env, "/approvals", name="headline-worklist" + path.replace("/", "-"))
    assert "98000.00" in page.locator(f"tr[data-approval='{aid}'] td.num").inner_text()


# ---- finding 5: an amount to check by hand is not approved in bulk ------------------------------
def test_an_amount_read_only_by_its_shape_is_not_offered_or_approved_in_bulk(
    make_session: Any, console_env: ConsoleEnv, portal: str
) -> None:
    ids = [
        _park(console_env.jobs, _asked(make_session, portal, "/transfer-text", {"Price": v}))
        for v in ("4900.00", "12.00")
    ]
    bills = [_park(console_env.jobs, _asked(make_session, portal, "/bill")) for _ in range(2)]
    page = _page(console_env, "/approvals", name="bulk-by-shape")
    offered = page.locator("input[name=ids]").evaluate_all("l => l.map(e => e.value)")
    assert sorted(offered) == sorted(bills), offered  # two honest bills still go together
    for aid in ids:
        title = page.locator(f"tr[data-approval='{aid}'] span[title]").get_attribute("title") or ""
        assert "check by hand" in title and "only by its shape" in title, title
    # bulk approval itself refuses them (the same ``bulk_refusal``), sent beside the offered pair
    page.evaluate(
        "ids => ids.forEach(id => { const i = document.createElement('input'); i.type = 'hidden';"
        " i.name = 'ids'; i.value = id; document.getElementById('bulk').appendChild(i); })",
        ids,
    )
    with page.expect_navigation():
        page.locator("#bulk button[type=submit]").first.click()
    said = page.locator(".flash").first.inner_text()
    assert "Bulk approval refused" in said and ids[0] in said and "only by its shape" in said, said
    assert [console_env.jobs.approval(i).status for i in ids + bills] == ["pending"] * 4


# ---- finding 6: a bank-details change at 1280x720 -----------------------------------------------
def test_a_bank_details_change_decides_on_the_first_screen_at_1280x720(
    make_session: Any, console_env: ConsoleEnv, portal: str
) -> None:
    aid = _park(console_env.jobs, _asked(make_session, portal, "/vendor-bank"))
    page = _page(console_env, f"/approvals/{aid}", size=(1280, 720), name="decision-bank")
    assert not _off_screen(page, *DECISION), _off_screen(page, *DECISION)
