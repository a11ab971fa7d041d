# ruff: noqa: F811
"""Which vendor record a link names, and vendor lists paged by numbers (red team, round 9).

1. An honest bill page linking its vendor as "/vendors/10;jsessionid=<session>" (or "/vendors/10/",
   "?back=…&_t=<time>", "#overview") was read as another vendor record on every leg: the approval
   was "outdated" and, after 3 re-asks, the durable job rejected the payment ("the record changed
   each time it was approved"). A link is now read as the record it names (``record.record_link``:
   its path's segments, as the vendor list's rows are read, and a query value named as a record's
   id), never compared as written.
2. A vendor list paged only by numbers ("1 2", "Page 2", "Show more") was read as complete from its
   first page: a look-alike record on page 2 went unseen and the payee read clear. A page whose pager
   leads to a page not read is never the last: the pages it leads to are read, up to the page limit.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_changed_payee_s45 import _park, _token, env, runner  # noqa: F401 (env: the fixture)

from taskcrew.approvals import record
from taskcrew.approvals.authority import request_payee, system_reading
from taskcrew.approvals.rules import load_rules, lookup_change
from taskcrew.cli import app
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, ScriptedHuman
from taskcrew.tools.policy import REASKS, Policy, PolicyConfig, Submission

ERP = "http://127.0.0.1:8800"


# ---- 1: one record, linked in any form -----------------------------------------------------------
@pytest.mark.parametrize(
    "link",
    [
        "/vendors/10/",
        "/vendors/10;jsessionid=S1004",
        "/vendors/10?back=/bills/BILL-0005&_t=1765085412",
        "/vendors/10#overview",
        "/vendors//10",
    ],
)
def test_a_record_linked_in_another_form_is_the_same_record(link: str) -> None:
    assert (
        record.record_link(f"{ERP}{link}") == record.record_link(f"{ERP}/vendors/10") == f"{ERP}/vendors/10"
    )


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("/vendors/10", "/vendors/11"),
        ("/vendors/10", "/suppliers/10"),
        ("/vendor?id=10&_t=1", "/vendor?id=11&_t=1"),
        ("/bills?vendor=3", "/bills?vendor=4"),
        ("/vendor.php?v=10", "/vendor.php?v=11"),  # no number in the path: the query names it
        ("/vendors/10", "http://127.0.0.1:8801/vendors/10"),
    ],
)
def test_links_to_two_records_stay_two_records(one: str, other: str) -> None:
    assert record.record_link(urljoin_erp(one)) != record.record_link(urljoin_erp(other))
    assert record.record_link(f"{ERP}/vendor?_t=5&id=10") == f"{ERP}/vendor?id=10"


def urljoin_erp(link: str) -> str:
    return link if link.startswith("http") else f"{ERP}{link}"


def _bill_asked(page: str, link: str) -> ApprovalRequest:
    html = (
        f'<dl><dt>Vendor</dt><dd><a href="{link}">Hooli Cloud Services</a></dd>'
        "<dt>Amount</dt><dd>499.00 USD</dd></dl>"
    )
    return ApprovalRequest(
        kind="form_submission", method="POST", url=f"{page}/pay", page_url=page,
        fields=[FieldValue(name="paid_on", value="2026-10-01")],
        record=record.read_record(page, lambda url: html),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("then_link", "now_link"),
    [
        ("/vendors/10", "/vendors/10/"),
        ("/vendors/10;jsessionid=S1003", "/vendors/10;jsessionid=S1004"),
        (
            "/vendors/10?back=/bills/BILL-0005&_t=1765085000",
            "/vendors/10?back=/bills/BILL-0005&_t=1765085412",
        ),
        ("/vendors/10", "/vendors/10#overview"),
    ],
)
def test_a_bills_vendor_linked_in_another_form_is_not_another_payee(then_link: str, now_link: str) -> None:
    rules, page = load_rules(), f"{ERP}/bills/BILL-0005"
    then, now = (system_reading(_bill_asked(page, link), rules) for link in (then_link, now_link))
    assert then["payee_record"] == now["payee_record"] == f"vendor record {ERP}/vendors/10"
    assert lookup_change(then, now) is None
    moved = system_reading(_bill_asked(page, "/vendors/11;jsessionid=S1004"), rules)
    assert "vendors/11" in (lookup_change(then, moved) or "")  # another record is still another payee


def test_a_parked_record_holding_a_link_as_written_reads_as_the_record(env: dict[str, Any]) -> None:
    """A request parked before links were read as records holds the link as the page wrote it."""
    rules, page = env["authority"].rules, f"{ERP}/bills/BILL-0005"
    asked = _bill_asked(page, "/vendors/10")
    assert asked.record is not None
    old = asked.model_copy(
        update={
            "record": asked.record.model_copy(
                update={"links": {"Vendor": f"{ERP}/vendors/10/;jsessionid=1#x"}}
            )
        }
    )
    assert lookup_change(system_reading(old, rules), system_reading(asked, rules)) is None


def test_a_durable_job_pays_a_bill_whose_vendor_link_carries_each_legs_session(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each leg signs in afresh and the ERP writes its session into its links: nothing about the
    bill changes, so the approval covers the next leg."""
    jobs, authority = env["jobs"], env["authority"]
    bill = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill.id}/pay",
                     page_url=f"{erp.url}/bills/{bill.id}",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip
    session = iter(range(1000, 2000))

    def asked() -> ApprovalRequest:
        sid = f"S{next(session)}"

        def fetch(url: str) -> str:
            return re.sub(
                r'(<dd id="bill-vendor">)([^<]*)(</dd>)',
                lambda m: f'{m[1]}<a href="/vendors/10;jsessionid={sid}">{m[2]}</a>{m[3]}',
                erp_user.http.get(url).text,
            )

        human = ScriptedHuman([ApprovalDecision.approve()])
        policy = Policy(PolicyConfig.for_url(erp.url), human, rules=authority.rules)
        policy.page_fetch = fetch
        policy.submission(pay)
        return human.requests[-1]

    job_id, approval_id = _park(jobs, asked())
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    parks = [approval_id]
    for _ in range(REASKS + 2):
        assert runner.invoke(app, ["approvals", "approve", parks[-1]]).exit_code == 0
        jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
        try:
            decision = JobHuman(jobs, job_id, authority=authority).approve(asked())
        except Parked as parked:
            parks.append(parked.approval_id)
            jobs.mark(job_id, "waiting", only_if=("running",))
            continue
        assert decision.approved, decision.text
        assert len(parks) == 1, jobs.approval(parks[-1]).request.asked_again  # never asked again
        return
    pytest.fail(f"asked {len(parks)} times: {jobs.approval(parks[-1]).request.asked_again}")


# ---- 2: a vendor list paged by numbers -----------------------------------------------------------
def rows(*names: str) -> str:
    cells = "".join(f"<tr><td>{n}</td></tr>" for n in names)
    return f"<html><body><table><tr><th>Vendor</th></tr>{cells}</table>"


def pager(*pages: str) -> str:
    return '<nav class="pagination">' + " ".join(pages) + "</nav></body></html>"


NUMBERS = pager('<a href="/vendors?page=1">1</a>', '<a href="/vendors?page=2">2</a>')


@pytest.mark.parametrize("said", ["2", "Page 2", "Show more"])
def test_a_list_paged_by_numbers_is_read_whole(said: str) -> None:
    numbers = NUMBERS.replace(">2<", f">{said}<")
    pages = {
        f"{ERP}/vendors": rows("Northwind Traders") + numbers,
        f"{ERP}/vendors?page=2": rows("Globex Corp") + numbers,
    }
    pages[f"{ERP}/vendors?page=1"] = pages[f"{ERP}/vendors"]  # the first page, linked as "1"
    found = record.vendor_list(f"{ERP}/bills/new", load_rules(), pages.get)
    assert found.names == ["Northwind Traders", "Globex Corp"]
    pages.pop(f"{ERP}/vendors?page=2")  # a page its pager leads to unread: the list is not read
    assert record.vendor_list(f"{ERP}/bills/new", load_rules(), pages.get).names is None


def test_numbered_pages_and_next_links_count_each_page_once() -> None:
    three = pager(*(f'<a href="/vendors?page={n}">{n}</a>' for n in (1, 2, 3)))
    pages = {
        f"{ERP}/vendors": rows("A Corp") + three.replace("</nav>", '<a href="/vendors?page=2">Next</a></nav>'),
        f"{ERP}/vendors?page=2": rows("B Corp") + three.replace("</nav>", '<a href="/vendors?page=3">Next</a></nav>'),
        f"{ERP}/vendors?page=3": rows("C Corp") + three,  # the last: no "Next", every page read
    }  # fmt: skip
    pages[f"{ERP}/vendors?page=1"] = pages[f"{ERP}/vendors"]
    read: list[str] = []

    def fetch(url: str) -> str | None:
        read.append(url)
        return pages.get(url)

    assert record.vendor_list(f"{ERP}/bills/new", load_rules(), fetch).names == ["A Corp", "B Corp", "C Corp"]
    # "?page=1", linked from the last page, shows the rows of "/vendors": read once, counted once
    assert read == [
        f"{ERP}/vendors",
        f"{ERP}/vendors?page=2",
        f"{ERP}/vendors?page=3",
        f"{ERP}/vendors?page=1",
    ]
    # other links on the list's path (a sort, a row's record) are no pager
    sort = '<a href="/vendors?sort=name">Name</a> <a href="/vendors?vendor=3">Globex</a></body></html>'
    assert record.vendor_list(
        f"{ERP}/bills/new", load_rules(), {f"{ERP}/vendors": rows("A Corp") + sort}.get
    )[0] == ["A Corp"]


def test_a_list_past_the_page_limit_by_numbers_is_not_read() -> None:
    last = record.VENDOR_PAGES + 1
    links = pager(*(f'<a href="/vendors?page={n}">{n}</a>' for n in range(1, last + 1)))
    pages = {f"{ERP}/vendors": rows("P1 Corp") + links}
    pages.update({f"{ERP}/vendors?page={n}": rows(f"P{n} Corp") + links for n in range(1, last + 1)})
    pages[f"{ERP}/vendors?page=1"] = pages[f"{ERP}/vendors"]
    assert record.vendor_list(f"{ERP}/bills/new", load_rules(), pages.get).names is None
    # within the limit (the first page read twice: "/vendors" and "?page=1"): read whole
    last = record.VENDOR_PAGES - 1
    links = pager(*(f'<a href="/vendors?page={n}">{n}</a>' for n in range(1, last)))
    pages = {url: html.split('<nav class="pagination">')[0] + links for url, html in pages.items()}
    names = record.vendor_list(f"{ERP}/bills/new", load_rules(), pages.get).names
    assert names == [f"P{n} Corp" for n in range(1, last)]


def test_a_look_alike_on_page_two_of_the_real_erps_numbered_list_makes_the_payee_unclear(
    env: dict[str, Any], erp: ErpServer, erp_user: Any
) -> None:
    twin = "Hooli  Cloud Services"  # two spaces: the ERP allows it
    page2 = (
        rows(twin).replace("<td>", '<td><a href="/bills?vendor=42">').replace("</td>", "</a></td>") + NUMBERS
    )
    rules = env["authority"].rules
    bill = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill.id}/pay",
                     page_url=f"{erp.url}/bills/{bill.id}",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip

    def fetch(url: str) -> str:
        if url.endswith("/vendors?page=2"):
            return page2
        page = erp_user.http.get(url).text
        return page.replace("</table>", "</table>" + NUMBERS) if "/vendors" in url else page

    human = ScriptedHuman([ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url(erp.url), human, rules=rules)
    policy.page_fetch = fetch
    policy.submission(pay)
    request = human.requests[-1]
    assert (request.vendor_records or {}).get("42") == "Hooli Cloud Services"  # page 2 read: the twin
    assert request_payee(request, rules).unclear
