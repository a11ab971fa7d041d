"""Whom a chosen vendor option pays, and vendor records drawn alike in plain ASCII (red team, round 4).

1. A page script renamed Globex's option (value 3) "Northwind Traders": the approval showed payee
   "Northwind Traders", no flag, bulk-approvable, and the ERP booked the bill to Globex Corp — though
   the vendor list the gate read links record 3 to Globex Corp. Now the gate keeps the vendor list as
   what a form sends for each record -> its name (``record.vendor_records``: an option's value, the
   record's number in its link; never a display number column: test_records_s43.py), and a chosen option of a payee field pays the
   listed name of the value it sends (``rules.option_payee``): the approval shows the vendor the
   system books, and a label naming another vendor makes the payee unclear (flagged, kept out of bulk
   approval). With no vendor list read, the option is read by its label, as before.
2. "Northwincl Traders" beside "Northwind Traders" ("cl" drawn like "d") was not flagged as a
   look-alike record, while "rn" for "m" and "vv" for "w" were: the skeleton's pairs are now a reviewed
   list (``routines/drawn_alike.txt``), and honest names holding "cl" are flagged only beside a listed
   record drawn like them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures_browser import SessionFactory
from fixtures_erp import ErpUser
from test_browser_erp import fill_bill
from test_vendor_twins_s42 import bill, chosen, flags_of, logged_in, park

from taskcrew.approvals import record
from taskcrew.approvals.authority import Authority, bulk_refusal
from taskcrew.approvals.rules import load_rules
from taskcrew.jobs import Jobs
from taskcrew.mock_erp import ErpServer
from taskcrew.routines.models import name_key
from taskcrew.routines.replay import options_like
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, ScriptedHuman

LISTED = {"1": "Northwind Traders", "3": "Globex Corp", "4": "Initech"}
NAMES = list(LISTED.values())


@pytest.fixture
def approver(tmp_path: Path) -> Iterator[Authority]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield Authority(jobs, load_rules(), home=tmp_path / "approvals")
    jobs.close()


def keyed(vendor: FieldValue, records: dict[str, str] | None = LISTED) -> ApprovalRequest:
    """A bill whose vendor list was read with its records' keys (``records``; None: without)."""
    return bill(vendor, NAMES).model_copy(update={"vendor_records": records})


# ---- 1: the record an option sends --------------------------------------------------------------
def test_a_relabelled_option_pays_the_listed_record_and_is_flagged(approver: Authority) -> None:
    request = keyed(chosen("3", "Northwind Traders"))
    view = approver.view(approver.jobs.approval(park(approver.jobs, request).id))
    assert view.payee.names == ["Globex Corp"]  # the vendor the system books, not the page's label
    flags = {f.rule: str(f.message) for f in view.assessment.flags}
    assert set(flags) == {"unclear_payee"}, flags  # Globex Corp is listed: no new vendor
    said = flags["unclear_payee"]
    assert "vendor_id sends 3, the record the vendor list" in said and "“Globex Corp”" in said, said
    assert "showed that option as “Northwind Traders”" in said and "check whom it pays" in said, said
    assert "unclear_payee" in (bulk_refusal(view) or "")
    assert approver.payee_refusal(request) is not None  # the terminal and --auto-approve read it too


@pytest.mark.parametrize(
    "label", ["Northwind Traders", "NORTHWIND TRADERS", "1 - Northwind Traders", "Northwind Traders Ltd"]
)
def test_an_option_labelled_as_its_listed_record_is_not_flagged(approver: Authority, label: str) -> None:
    view = approver.view(approver.jobs.approval(park(approver.jobs, keyed(chosen("1", label))).id))
    assert view.payee.names == ["Northwind Traders"] and not view.assessment.flags, view.assessment.flags
    assert bulk_refusal(view) is None


@pytest.mark.parametrize("records", [None, {}])
def test_without_the_record_it_sends_listed_an_option_is_read_by_its_label(
    approver: Authority, records: dict[str, str] | None
) -> None:
    """No vendor list read, or one with no keys at all: as before. (A list with keys that does not
    key what the option sends makes the payee unclear: tests/test_records_s43.py.)"""
    view = approver.view(
        approver.jobs.approval(park(approver.jobs, keyed(chosen("3", "Initech"), records)).id)
    )
    assert view.payee.names == ["Initech"] and not view.assessment.flags, view.assessment.flags


def test_only_a_payee_field_is_read_by_the_vendor_list(approver: Authority) -> None:
    """A currency option sending "3" is no vendor record; a field that picks no vendor keeps its label."""
    request = keyed(chosen("1", "Northwind Traders"))
    request.fields[-1] = FieldValue(name="currency", value="3 (USD)", label="USD")
    assert flags_of(approver, request) == {}


def test_a_request_parked_without_vendor_records_seals_as_before() -> None:
    request = bill(chosen("1", "Northwind Traders"), NAMES)
    assert "vendor_records" not in request.model_dump()
    assert keyed(chosen("1", "Northwind Traders")).model_dump()["vendor_records"] == LISTED


# ---- the keys of a vendor list -------------------------------------------------------------------
def records_of(html: str) -> dict[str, str]:
    return record.vendor_records(record._vendor_lists(f"<html><body>{html}</body></html>"))


def rows(*cells: str, head: str = "<tr><th>Vendor</th><th></th></tr>") -> str:
    return f"<table>{head}{''.join(cells)}</table>"


def test_a_vendor_list_is_kept_by_what_a_form_sends_for_each_record() -> None:
    linked = rows(
        '<tr><td>Northwind Traders</td><td><a href="/bills?vendor=1&amp;page=2">Bills</a></td></tr>',
        '<tr><td>Globex Corp</td><td><a href="/bills?vendor=3&amp;page=2">Bills</a></td></tr>',
    )
    # the place that names one vendor whatever it holds; never "bills" nor the page's "2"
    assert records_of(linked) == {"1": "Northwind Traders", "3": "Globex Corp"}
    in_path = rows(
        '<tr><td><a href="/vendors/1/edit">Northwind Traders</a></td></tr>',
        '<tr><td><a href="/vendors/3/edit">Globex Corp</a></td></tr>',
    )
    assert records_of(in_path) == {"1": "Northwind Traders", "3": "Globex Corp"}
    numbered = rows(
        "<tr><td>V-01</td><td>Northwind Traders</td></tr>",
        "<tr><td>V-03</td><td>Globex Corp</td></tr>",
        head="<tr><th>No.</th><th>Vendor</th></tr>",
    )
    # a number column is shown, never known to be what a form sends: its values are uncertain ("")
    assert records_of(numbered) == {"V-01": "", "V-03": ""}
    select = (
        "<select name=vendor_id><option value=''>Choose a vendor…</option>"
        "<option value=1>Northwind Traders</option><option value=3>Globex Corp</option></select>"
    )
    assert records_of(select) == {"1": "Northwind Traders", "3": "Globex Corp"}
    # a "Recently paid" table repeating a row, and a select on the same page: one record each
    assert records_of(linked + linked + select) == {"1": "Northwind Traders", "3": "Globex Corp"}
    # a key the page gives two vendors tells no one record: uncertain ("")
    other = select.replace("value=3>Globex Corp", "value=3>Initech")
    assert records_of(linked + other) == {"1": "Northwind Traders", "3": ""}
    # rows with no link and no number: names only, as before
    assert records_of(rows("<tr><td>Northwind Traders</td><td>3</td></tr>")) == {}


def test_a_vendor_list_of_several_pages_is_kept_whole() -> None:
    erp = "http://127.0.0.1:8800"
    pages = {
        f"{erp}/vendors": rows('<tr><td><a href="/vendors/1">Northwind Traders</a></td></tr>')
        + '<a rel="next" href="/vendors?page=2">Next</a>',
        f"{erp}/vendors?page=2": rows('<tr><td><a href="/vendors/3">Globex Corp</a></td></tr>'),
    }
    found = record.vendor_list(f"{erp}/bills/new", load_rules(), pages.get)
    assert found.names == ["Northwind Traders", "Globex Corp"] and found.page == f"{erp}/vendors"
    assert found.records == {"1": "Northwind Traders", "3": "Globex Corp"}
    pages.pop(f"{erp}/vendors?page=2")  # a list that cannot be read whole is not read
    assert record.vendor_list(f"{erp}/bills/new", load_rules(), pages.get) == (None, f"{erp}/vendors", None)


def test_the_real_erps_vendor_list_names_each_option_it_serves(erp: ErpServer) -> None:
    user = ErpUser(erp.url)
    try:
        assert user.login().status_code in (302, 303)
        found = record.vendor_list(f"{erp.url}/bills/new", load_rules(), lambda url: user.http.get(url).text)
        ids = user.vendor_ids()  # the bill form's options: name -> value
        assert found.records == {value: name for name, value in ids.items()}, (found.records, ids)
    finally:
        user.close()


# ---- through the real ERP and Chromium -------------------------------------------------------------
RELABEL = """([value, label]) => {
    const option = document.querySelector(`select[name="vendor_id"] option[value="${value}"]`);
    option.textContent = label;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("relabel", [True, False])
def test_the_approval_shows_the_vendor_the_erp_books(
    make_session: SessionFactory, erp: ErpServer, approver: Authority, relabel: bool
) -> None:
    """A script relabels Globex's option "Northwind Traders" before it is chosen: the gate reads the
    real vendor list, the approval shows Globex Corp — the vendor the ERP books — and flags the label."""
    human = ScriptedHuman([ApprovalDecision.approve("ana")])
    session = logged_in(make_session, erp, human)
    globex = next(v.id for v in erp.state().vendors if v.name == "Globex Corp")
    form = session.goto(f"{erp.url}/bills/new").observation
    if relabel:
        session.run(lambda page: page.evaluate(RELABEL, [str(globex), "Northwind Traders"]))
    sent = session.act(fill_bill(form, vendor_id=str(globex), invoice_number="INV-7001", amount="84.50"))
    assert sent.ok, sent.render()
    [asked] = human.requests
    label = "Northwind Traders" if relabel else "Globex Corp"
    assert {f.name: f.value for f in asked.fields}["vendor_id"] == f"{globex} ({label})"
    [booked] = [b for b in erp.state().bills if b.invoice_number == "INV-7001"]
    view = approver.view(approver.jobs.approval(park(approver.jobs, asked).id))
    assert view.payee.names == [booked.vendor] == ["Globex Corp"]
    assert asked.vendor_records is not None and asked.vendor_records[str(globex)] == "Globex Corp"
    flags = {f.rule for f in view.assessment.flags}
    assert flags == ({"unclear_payee"} if relabel else set()), view.assessment.flags


# ---- 2: look-alike records in plain ASCII --------------------------------------------------------
@pytest.mark.parametrize(
    ("real", "impostor"),
    [
        ("Northwind Traders", "Northwincl Traders"),  # "cl" drawn like "d"
        ("Cyberdyne Systems", "Cyberclyne Systems"),
        ("Dunder Mifflin", "Clunder Mifflin"),
        ("Northwind Traders", "Northwlnd Traders"),  # and the pairs before still
        ("Northwind Traders", "Northvvind Traders"),
        ("Umbrella Corp", "Urnbrella Corp"),
        ("Globex Corp", "Gl0bex Corp"),
    ],
)
@pytest.mark.parametrize("pays", ["real", "impostor"])
def test_a_record_drawn_like_another_in_ascii_is_flagged(
    approver: Authority, real: str, impostor: str, pays: str
) -> None:
    known = [real, "Initech", impostor]
    name = real if pays == "real" else impostor
    assert "lookalike_vendor" in flags_of(approver, bill(chosen("11", name), known))
    assert sorted(options_like(known, real)) == sorted([real, impostor])  # a replay does not choose


HONEST = ["Clarke & Sons", "McLeod Russel", "Cleveland Cliffs", "Barclays", "Clorox", "Dunder Mifflin"]


@pytest.mark.parametrize("payee", HONEST)
def test_honest_names_holding_cl_are_not_flagged_alone(approver: Authority, payee: str) -> None:
    assert flags_of(approver, bill(chosen("5", payee), [*HONEST, "Initech"])) == {}
    assert options_like(HONEST, payee) == [payee]


def test_an_honest_name_beside_a_record_drawn_like_it_is_flagged(approver: Authority) -> None:
    known = ["Clarke & Sons", "Darke & Sons", "Initech"]
    assert name_key("Clarke & Sons") == name_key("Darke & Sons")
    assert "lookalike_vendor" in flags_of(approver, bill(chosen("5", "Clarke & Sons"), known))
