# ruff: noqa: F811 — the fixture env is imported from test_changed_payee_s45
"""A vendor link's plain words and ";" parameters may be the record: twin records stay two (red team,
fixes round 11, on d57220f).

``record._listed_key`` read a link as the vendor list's record it holds the key of wherever every
other place of it was a plain word (no digit: ``PLAIN_WORD``): a digit-free slug that tells twin
records apart ("/vendors/hooli-cloud-services?org_id=3" and "…/hooli-cloud-servlces?org_id=3",
"/orgs/3/vendors/initech" and "…/lnitech") was read as "vendor record 3 listed at …/vendors" for
both, so a bill moved to the twin after bob's approval was paid on it. And ``record_link`` cut every
";" parameter of a path segment whatever its name ("/vendors/3;v=one" and "…;v=two",
"/vendors;vendor_id=<uuid>"), the same hole. Now a place of a link other than its key counts as
shared by every record only where the vendor list's own address holds the same there (one address
every record shares: "/vendors/3" beside the list "/vendors" is record 3); a slug, an org, a view
may tell records apart and the link is said as read. A ";" parameter is cut only by its name, as a
query value is (``SERVED_NAMES``: ";jsessionid=…").

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
TWIN = "Hooli  Cloud Services"  # another vendor record the pages show by the same name
SLUGS = ("hooli-cloud-services", "hooli-cloud-servlces")  # the twin's: "l" for "i", no digit
UUIDS = ("550e8400-e29b-41d4-a716-446655440000", "7c9e6679-7425-40de-944b-e07fc1f90ae7")


@pytest.mark.parametrize(
    "shape",
    [
        "/vendors/{s}?org_id={h}",  # the org's number is the list's key of Hooli; the slug is the record
        "/orgs/{h}/vendors/{s}",
        "/vendors/{h}/{s}",
        "/vendors/show?org_id={h}&vendor={s}",
        "/vendors/{h};v={s}",  # a ";" parameter that names the record
        "/vendors;vendor_id={u}",
        "/vendors/{h};vendor={s};jsessionid=S{t}",  # the session (new each leg) cut, the record kept
    ],
)
def test_a_bill_moved_to_a_twin_record_told_apart_by_a_slug_or_a_path_parameter_is_held(
    env: dict[str, Any], erp: ErpServer, erp_user: ErpUser, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """The ERP links the bill's vendor by a digit-free slug or a ";" parameter beside the number the
    vendor list keys Hooli by: bob's approval holds while the bill is unchanged (each leg's session
    in the link aside), and a bill moved to the twin record (the same name shown) is held and asked
    again, never paid on his approval."""
    jobs, authority = env["jobs"], env["authority"]
    rules = authority.rules
    with sqlite3.connect(erp.db_path) as db:
        db.execute("INSERT INTO vendors (name, default_currency) VALUES (?, 'USD')", (TWIN,))
        (twin,) = db.execute("SELECT id FROM vendors WHERE name = ?", (TWIN,)).fetchone()
        (hooli,) = db.execute("SELECT id FROM vendors WHERE name = 'Hooli Cloud Services'").fetchone()
    keys = {hooli: (SLUGS[0], UUIDS[0]), twin: (SLUGS[1], UUIDS[1])}
    times = iter(range(1765085000, 1765086000, 7))

    def link() -> str:
        with sqlite3.connect(erp.db_path) as db:
            (vendor,) = db.execute(
                "SELECT vendor_id FROM bills WHERE invoice_number = 'HCS-2026-09'"
            ).fetchone()
        s, u = keys[vendor]
        return shape.format(s=s, u=u, h=hooli, t=next(times))

    fetch = _linked(erp_user, link)

    def ask() -> Any:
        return _asked(erp, rules, fetch, _pay(erp))

    before = system_reading(ask(), rules)["payee_record"]
    job_id, approval_id = _park(jobs, ask())
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    out = runner.invoke(app, ["approvals", "approve", approval_id])
    assert out.exit_code == 0 and jobs.approval(approval_id).status == "approved", out.output
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1", leg=jobs.leg(job_id))
    human = JobHuman(jobs, job_id, authority=authority)
    human.gate.holder = ("w1", jobs.leg(job_id))  # the worker's leg, as LegRunner binds it
    assert human.approve(ask()).approved  # unchanged: it holds

    _move_bill(erp.db_path, "HCS-2026-09", TWIN)  # another clerk moves the bill to the twin record
    after = system_reading(ask(), rules)["payee_record"]
    request = ask()
    assert request.key == jobs.approval(approval_id).key  # the same bytes: only the ERP changed
    try:
        human.approve(request)
    except Parked:
        outcome = "held"
    else:
        sent = human.gate.send_check(request.method, request.url, [(f.name, f.value) for f in request.fields])
        outcome = "sent" if sent is None else "held"
    assert outcome == "held", f"paid on bob's approval: the payee read as {before!r} then {after!r}"
    assert after != before


@pytest.mark.parametrize(
    ("link", "same"),
    [
        ("/vendors/10;jsessionid=S1", "/vendors/10"),
        ("/vendors/10;JSESSIONID=S1;_t=1765085412/edit", "/vendors/10/edit"),
        ("/vendors/10;v=2;sessionId=S9?_t=1765085412", "/vendors/10;v=2"),
        ("/vendors/10;b=2;a=1", "/vendors/10;a=1;b=2"),  # one record in two orders
        ("/vendors;vendor_id={u}/;jsessionid=S1", "/vendors;vendor_id={u}"),
    ],
)
def test_a_path_parameter_is_cut_only_when_its_name_says_how_the_page_was_served(
    link: str, same: str
) -> None:
    read = record.record_link(ERP + link.format(u=UUIDS[0]))
    assert read == record.record_link(ERP + same.format(u=UUIDS[0]))
    assert record.record_link(read) == read  # a link read again (a parked request's) is read the same


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("/vendors/7;v=1", "/vendors/7;v=2"),
        ("/vendors;vendor_id={u}", "/vendors;vendor_id={w}"),
        ("/vendors/7;hooli", "/vendors/7;hoolj"),
        ("/vendors/7;v=a%3Bb", "/vendors/7;v=a;b"),  # an escaped ";" is a value's, not a parameter
    ],
)
def test_links_told_apart_by_a_path_parameter_stay_two(one: str, other: str) -> None:
    fill = {"u": UUIDS[0], "w": UUIDS[1]}
    assert record.record_link(ERP + one.format(**fill)) != record.record_link(ERP + other.format(**fill))


@pytest.mark.parametrize(
    ("link", "listed_at", "key"),
    [
        ("/vendors/10", "/vendors", "10"),
        ("/vendors/10;jsessionid=S1?_t=1765085412", "/vendors", "10"),
        ("/erp/vendors/10?status=active", "/erp/vendors?status=active", "10"),
        ("/vendors/view?id=10", "/vendors/view", "10"),
        ("/vendors/initech?org_id=10", "/vendors", None),  # the slug may be the record
        ("/orgs/10/vendors/initech", "/vendors", None),
        ("/vendors/10/initech", "/vendors", None),
        ("/vendors/show?org_id=10&vendor=acme-corp", "/vendors", None),
        ("/vendors/10/edit", "/vendors", None),  # "edit" is a plain word, as a slug is
        ("/bills?vendor=10", "/vendors", None),
        ("/vendors/10;v=2", "/vendors", None),
        ("/vendors/10?status=archived", "/vendors?status=active", None),
        ("/vendors?v=ACME&v=1nitech", "/vendors", None),  # a name given twice: neither value hidden
        ("/vendors/10;v=ACME;v=1nitech", "/vendors", None),
    ],
)
def test_a_link_is_a_listed_record_only_where_all_else_in_it_is_the_lists_own_address(
    link: str, listed_at: str, key: str | None
) -> None:
    read = record.record_link(ERP + link)
    assert record._listed_key(read, ["10", "11", "ACME"], ERP + listed_at) == key


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://erp.example/#/vendors/10", "https://erp.example/#/vendors/11"),
        ("https://erp.example/app#!/vendors/initech", "https://erp.example/app#!/vendors/lnitech"),
        ("https://erp.example/#/vendors?id=10", "https://erp.example/#/vendors?id=11"),
    ],
)
def test_a_single_page_applications_route_tells_records_apart(one: str, other: str) -> None:
    """A "#/…" part is the page's route on a single-page application: two vendors' links differ
    only there, and are two records, never one (a bill moved to the other would be paid)."""
    assert record.record_link(one) != record.record_link(other)
    assert record.record_link(one) == record.record_link(one.replace("#!/", "#/"))  # one route, two spellings


def test_a_place_on_the_page_is_no_part_of_the_record() -> None:
    assert record.record_link("https://erp.example/vendors/10#top") == "https://erp.example/vendors/10"
    assert record.record_link("https://erp.example/vendors/10#details") == "https://erp.example/vendors/10"
