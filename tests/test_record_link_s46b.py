# ruff: noqa: F811 — the fixture env is imported from test_changed_payee_s45
"""A vendor link's values are dropped only for what their name says, never for how they look (red
team, fixes round 10, on 5e39080).

``record.record_link`` kept, of a link's query, only the values that looked least like how the page
was served: a vendor keyed by a UUID or a 10-digit account number beside a plainer value
("/vendors/show?org_id=1&vendor_id=<uuid>", "/vendor?id=<uuid>&company_id=1",
"/vendor.php?acct=<account>&view=full") was read as "org_id=1", "company_id=1", "view=full": every
vendor record the same link, so a bill moved after its approval to another record shown by the same
name was paid on the old approval. "sid" (a supplier id) was dropped as a session beside
"view=full", and a digit anywhere in the path ("/app2/vendor.php?v=10") emptied the whole query.
Now a value is dropped only when its name is a served-name (a time stamp, a nonce, a session, a
cache-buster, a tracker, a return address, a tab, a sort, a pager); everything else is kept, so two
links that may be two records stay two.

The demo ERP over HTTP, a real SQLite job store, the real CLI (scripted models)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from fixtures_erp import ErpUser
from test_changed_payee_s45 import _move_bill, _park, _token, env, runner  # noqa: F401 (env: the fixture)
from test_record_identity_s46 import _asked, _linked, _pay

from taskcrew.approvals import record
from taskcrew.approvals.authority import system_reading
from taskcrew.cli import app
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.mock_erp import ErpServer

ERP = "http://127.0.0.1:8800"
UUIDS = ("550e8400-e29b-41d4-a716-446655440000", "7c9e6679-7425-40de-944b-e07fc1f90ae7")
ACCOUNTS = ("1000000001", "1000000002")
TWIN = "Hooli  Cloud Services"  # another vendor record the pages show by the same name


@pytest.mark.parametrize(
    "shape",
    [
        "/vendors/show?org_id=1&vendor_id={u}",  # a multi-company ERP, the vendor keyed by a UUID
        "/vendor?id={u}&company_id=1",
        "/vendor.php?acct={n}&view=full",  # a 10-digit vendor account number
        "/b/vendor?uuid={u}&view=full",
        "/vendors/show?vendor_id={u}&ts=1765085412",  # a UUID beside a time stamp: the time goes
        "/app2/vendor.php?v={n}",  # a digit in a path segment that is not the record
        "/v2/vendors/10/contacts?vendor={n}",
        "/supplier.php?sid={s}&view=full",  # a supplier id named like a session
        "/vendor.php?t={s}",  # short names that may be a record's are kept: "t", "s", "v", "p"
        "/vendor.php?s={s}&_t=1765085412",
        "/vendor.php?p={s}",
    ],
)
def test_links_to_two_vendor_records_stay_two(shape: str) -> None:
    one = record.record_link(ERP + shape.format(u=UUIDS[0], n=ACCOUNTS[0], s="10"))
    other = record.record_link(ERP + shape.format(u=UUIDS[1], n=ACCOUNTS[1], s="11"))
    assert one != other, f"two vendor records read as one: {one}"
    assert record.record_link(one) == one  # a link read again (a parked request's) is read the same


@pytest.mark.parametrize(
    ("link", "same"),
    [
        (
            "/vendors/show?org_id=1&vendor_id={u}&_t=1765085412&PHPSESSID=a1",
            "/vendors/show?vendor_id={u}&org_id=1",
        ),
        ("/vendor.php?acct={n}&view=full&utm_source=mail&cache-buster=7", "/vendor.php?view=full&acct={n}"),
        ("/vendor;jsessionid=S1?id={u}#overview", "/vendor?id={u}"),
        ("/vendors/{u}/;jsessionid=S1?returnUrl=/bills/5&tab=notes&sort=name", "/vendors/{u}"),
        ("/vendor.php?v=10&_=1765085412000&sessionId=S9&nonce=8f3a9b0c1d2e4f5a&page=2", "/vendor.php?v=10"),
    ],
)
def test_what_says_how_the_page_was_served_is_dropped_by_its_name(link: str, same: str) -> None:
    fill = {"u": UUIDS[0], "n": ACCOUNTS[0]}
    assert record.record_link(ERP + link.format(**fill)) == record.record_link(ERP + same.format(**fill))


@pytest.mark.parametrize(
    "shape",
    [
        "/vendors/show?org_id=1&vendor_id={u}&_t={t}",
        "/vendor?id={u}&company_id=1&_={t}000",
        "/vendor.php?acct={n}&view=full&ts={t}",
        "/supplier.php?sid={n}&view=full",
        # the org's number is a look-alike's list key (the list keys vendors by number, the link by
        # UUID): never read as that listed record, so the UUID's change is a change of payee
        "/vendors/show?org_id={k}&vendor_id={u}",
        "/vendors/show?org_id={h}&vendor_id={u}&_t={t}",
    ],
)
def test_a_bill_moved_to_a_twin_record_after_approval_is_asked_again(
    env: dict[str, Any], erp: ErpServer, erp_user: ErpUser, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """The ERP links the bill's vendor by the record's UUID or account number beside a plainer value
    (and writes the time into the link on each reading): bob's approval holds while the bill is
    unchanged, and a bill moved to a twin record (the same name shown) is asked again."""
    jobs, authority = env["jobs"], env["authority"]
    rules = authority.rules
    with sqlite3.connect(erp.db_path) as db:
        db.execute("INSERT INTO vendors (name, default_currency) VALUES (?, 'USD')", (TWIN,))
        (twin,) = db.execute("SELECT id FROM vendors WHERE name = ?", (TWIN,)).fetchone()
        (hooli,) = db.execute("SELECT id FROM vendors WHERE name = 'Hooli Cloud Services'").fetchone()
    keys = {hooli: (UUIDS[0], ACCOUNTS[0]), twin: (UUIDS[1], ACCOUNTS[1])}
    times = iter(range(1765085000, 1765086000, 7))

    def link() -> str:
        with sqlite3.connect(erp.db_path) as db:
            (vendor,) = db.execute(
                "SELECT vendor_id FROM bills WHERE invoice_number = 'HCS-2026-09'"
            ).fetchone()
        u, n = keys[vendor]
        return shape.format(u=u, n=n, t=next(times), k=twin, h=hooli)

    fetch = _linked(erp_user, link)

    def ask() -> Any:
        return _asked(erp, rules, fetch, _pay(erp))

    before = system_reading(ask(), rules)["payee_record"]
    job_id, approval_id = _park(jobs, ask())
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    out = runner.invoke(app, ["approvals", "approve", approval_id])
    assert out.exit_code == 0 and jobs.approval(approval_id).status == "approved", out.output
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    assert JobHuman(jobs, job_id, authority=authority).approve(ask()).approved  # unchanged: it holds

    _move_bill(erp.db_path, "HCS-2026-09", TWIN)  # another clerk moves the bill to the twin record
    after = system_reading(ask(), rules)["payee_record"]
    assert after != before
    with pytest.raises(Parked):
        JobHuman(jobs, job_id, authority=authority).approve(ask())


@pytest.mark.parametrize(
    ("link", "key"),
    [
        ("/vendors/10", "10"),
        ("/vendors/10/edit", None),  # "edit" is a plain word as a slug is: it may tell records apart
        ("/bills?vendor=10", None),  # only a difference from the list's own address is the key
        ("/vendor.php?v=10&view=full", None),
        ("/vendors/show?org_id=10&vendor_id={u}", None),  # the UUID may tell records apart
        ("/vendors/show?vendor_id={u}&org_id=10", None),
        ("/vendor.php?v=10&acct={n}", None),
        ("/orgs/2/vendors/10", None),  # "2" may be another company's record 10
        ("/vendors/10?branch=b7", None),
        ("/vendors/10/11", None),  # two listed keys: which one is not said
    ],
)
def test_a_link_is_a_listed_record_only_where_its_key_alone_tells_it_from_the_lists_address(
    link: str, key: str | None
) -> None:
    read = record.record_link(ERP + link.format(u=UUIDS[0], n=ACCOUNTS[0]))
    assert record._listed_key(read, ["10", "11"], ERP + "/vendors") == key
