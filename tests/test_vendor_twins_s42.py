"""A vendor record named like another: someone who can add vendors to the ERP (a second employee, a
vendor's self-onboarding form) adds "NORTHWIND TRADERS" or "Northwind  Traders" beside the real
Northwind Traders. The bill form's drop-down lists it first; a bill chosen so was asked for as
"vendor_id: 11 (Northwind Traders)" with no flag (the vendor list the gate read dropped the second
"Northwind Traders" row as a repeat), and the scripted models took the first option named so.

Now (``rules.lookalike_vendor``, read by ``authority.payee_flags`` for every surface): a payee named
like more than one record of the vendor list the worker read (case, spaces, punctuation and a
record's number beside its name aside) is flagged "payee named like another vendor record", kept out
of bulk approval and --auto-approve; distinct names ("Initech", "Initech Europe GmbH") are not. The
scripted models choose a drop-down option by the replay's rule (``replay.options_like``) and stop
when several could be the vendor (``eval.kit.could_be``)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_browser import SessionFactory
from test_browser_erp import VAULT, fill_bill, login
from test_console_redteam import App

from taskcrew.approvals.authority import Authority, bulk_refusal
from taskcrew.approvals.record import vendor_names
from taskcrew.approvals.rules import load_rules
from taskcrew.console.worklist import work_item
from taskcrew.eval import kit
from taskcrew.jobs import Approval, ApprovalRequest, Jobs
from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.tools.human import ApprovalDecision, FieldValue, ScriptedHuman
from taskcrew.tools.vault import Vault

ERP = "http://127.0.0.1:8800"
VENDORS = f"{ERP}/vendors"
LOOKALIKES = ["NORTHWIND TRADERS", "Northwind  Traders"]
WORDS = "payee named like another vendor record"


def park(jobs: Jobs, request: ApprovalRequest) -> Approval:
    """ana's job, parked by its worker on ``request``, as the store parks it."""
    job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    approval = jobs.park(job.id, kind="approval", key=request.key or f"key-{job.id}", request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def bill(vendor: FieldValue, known: list[str] | None, invoice: str = "INV-2057") -> ApprovalRequest:
    fields = [
        vendor,
        FieldValue(name="invoice_number", value=invoice),
        FieldValue(name="amount", value="40.00"),
    ]
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{ERP}/bills/new",
        fields=[*fields, FieldValue(name="currency", value="USD")],
        page_url=f"{ERP}/bills/new",
        known_vendors=known,
        vendors_page=VENDORS,
    )


def chosen(value: str, label: str) -> FieldValue:
    """A chosen option as the browser gate records it: what is sent, then its text; the text alone."""
    return FieldValue(name="vendor_id", value=f"{value} ({label})", label=label)


@pytest.fixture
def approver(tmp_path: Path) -> Iterator[Authority]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield Authority(jobs, load_rules().model_copy(update={"two_person": "on"}), home=tmp_path / "approvals")
    jobs.close()


def flags_of(approver: Authority, request: ApprovalRequest) -> dict[str, str]:
    view = approver.view(approver.jobs.approval(park(approver.jobs, request).id))
    return {f.rule: str(f.message) for f in view.assessment.flags}


# ---- the rule ------------------------------------------------------------------------------------
def logged_in(make_session: SessionFactory, erp: ErpServer, human: ScriptedHuman) -> Any:
    """A real browser session logged in to the ERP as the demo user, asking ``human``."""
    session = make_session(base_url=erp.url, vault=Vault(VAULT), human=human)
    login(session, erp)
    return session


@pytest.mark.parametrize("lookalike", LOOKALIKES)
@pytest.mark.parametrize("picked", ["1", "11"])  # the real record or the look-alike: both need a look
def test_a_payee_named_like_two_listed_records_is_flagged(
    approver: Authority, lookalike: str, picked: str
) -> None:
    known = ["Northwind Traders", "Initech", lookalike]
    label = "Northwind Traders" if picked == "1" else lookalike
    flags = flags_of(approver, bill(chosen(picked, label), known))
    assert set(flags) == {"lookalike_vendor"}, flags
    said = flags["lookalike_vendor"]
    assert f"2 are called “{label}” (as listed: “Northwind Traders”; “{lookalike}”)" in said, said
    assert VENDORS in said and f"vendor_id = {picked} ({label})" in said, said
    assert "check in the system which record this pays" in said


def test_listed_records_and_payees_with_their_numbers_are_compared_by_name(approver: Authority) -> None:
    """A vendor list whose entries carry the record's number ("Northwind Traders (#3)"), and a payee
    read from the value sent ("11 (Northwind Traders)", no option label: a request parked before the
    gate kept labels, or a script's), are compared by their names."""
    from taskcrew.approvals.rules import listed_name

    known = ["Northwind Traders (#3)", "Initech (#4)", "Northwind Traders (#11)"]
    flags = flags_of(approver, bill(FieldValue(name="vendor_id", value="11 (Northwind Traders)"), known))
    assert "lookalike_vendor" in flags and "2 are called “Northwind Traders”" in flags["lookalike_vendor"]
    assert (
        listed_name("11 - Northwind Traders")
        == listed_name("Northwind Traders (id: 11)")
        == "Northwind Traders"
    )
    assert listed_name("7-Eleven") == "7-Eleven" and listed_name("Initrode (Northwind Traders)").startswith(
        "Initrode"
    )


@pytest.mark.parametrize(
    ("payee", "known"),
    [
        ("Initech", ["Initech", "Initech Europe GmbH", "Northwind Traders"]),  # two companies
        ("Initech Europe GmbH", ["Initech", "Initech Europe GmbH"]),
        ("Northwind Traders", ["Northwind Traders", "Northwind Traders Logistics", "Initech"]),
        ("Northwind Traders", ["Northwind Traders", "Initech"]),
        ("Northwind Traders", None),  # the list could not be read: nothing to compare with
    ],
)
def test_distinct_vendors_are_not_flagged(approver: Authority, payee: str, known: list[str] | None) -> None:
    assert "lookalike_vendor" not in flags_of(approver, bill(chosen("1", payee), known))


def test_the_flag_keeps_it_from_bulk_approval_auto_approval_and_shows_on_the_worklist(
    approver: Authority,
) -> None:
    request = bill(chosen("11", "NORTHWIND TRADERS"), ["Northwind Traders", "NORTHWIND TRADERS"])
    view = approver.view(approver.jobs.approval(park(approver.jobs, request).id))
    flag = next(f for f in view.assessment.flags if f.rule == "lookalike_vendor")
    assert not flag.second_approver and not view.needs_two  # one person checks which record it is
    assert "flagged (lookalike_vendor: " in (bulk_refusal(view) or "")
    assert approver.payee_refusal(request) is not None  # --auto-approve and the terminal read payee_flags
    item = work_item(view, approver.rules, systems={})
    assert [(f.code, f.words) for f in item.flags] == [("lookalike", WORDS)]


def test_the_console_worklist_and_decision_page_show_it(tmp_path: Path, console_users: Path) -> None:
    console = App(tmp_path, console_users)
    try:
        twins = [
            park(console.jobs, bill(chosen("11", "Northwind Traders"), ["Northwind Traders"] * 2, f"INV-{n}"))
            for n in (1, 2)
        ]
        plain = [
            park(console.jobs, bill(chosen("1", "Northwind Traders"), ["Northwind Traders"], f"INV-{n}"))
            for n in (3, 4)
        ]
        bob = console.client("bob")
        page = bob.get("/approvals").text
        rows = {}
        for approval in (*twins, *plain):
            found = re.search(rf'<tr[^>]*data-approval="{approval.id}".*?</tr>', page, re.S)
            assert found, page
            rows[approval.id] = found.group(0)
        assert all(WORDS in rows[a.id] and 'name="ids"' not in rows[a.id] for a in twins), page
        assert all(WORDS not in rows[a.id] and 'name="ids"' in rows[a.id] for a in plain), page
        flags = bob.get(f"/approvals/{twins[0].id}").text
        assert WORDS in flags and "2 are called “Northwind Traders”" in flags
    finally:
        console.jobs.close()


def test_a_vendor_list_keeps_each_record_and_counts_a_page_listing_them_twice_once() -> None:
    table = (
        "<table><tr><th>Vendor</th><th>Bills</th></tr><tr><td>Northwind Traders</td><td>3</td></tr>"
        "<tr><td>Initech</td><td>1</td></tr><tr><td>Northwind  Traders</td><td>0</td></tr></table>"
    )
    assert vendor_names(table) == ["Northwind Traders", "Northwind Traders", "Initech"]  # two records
    select = (
        "<select name=vendor_id><option value=''>Choose a vendor…</option><option value=1>Northwind Traders"
        "</option><option value=4>Initech</option><option value=11>Northwind  Traders</option></select>"
    )
    assert vendor_names(table + select) == ["Northwind Traders", "Northwind Traders", "Initech"]
    assert vendor_names(table.replace("Northwind  Traders", "Globex Corp") + select) == [
        "Northwind Traders",
        "Northwind Traders",  # the select lists two records named so, the table one
        "Initech",
        "Globex Corp",
    ]


# ---- the scripted models choose as a replay does -------------------------------------------------
def test_the_scripted_models_never_guess_between_options_named_alike() -> None:
    erp = ["Choose a vendor…", "NORTHWIND TRADERS", "Northwind Traders", "Initech", "Initech Europe GmbH"]
    assert kit.choose_option(erp, "Northwind Traders") is None
    assert kit.could_be(erp, "Northwind Traders") == ["NORTHWIND TRADERS", "Northwind Traders"]
    assert kit.choose_option(["Northwind Traders", "Northwind  Traders"], "Northwind Traders Ltd") is None
    assert kit.choose_option(erp, "Initech") == "Initech"  # distinct names are distinct vendors
    assert kit.choose_option(erp[2:], "NORTHWIND TRADERS LTD.") == "Northwind Traders"
    # the looser reading by shared words refuses twins too
    assert kit.choose_option(["Hooli Cloud Services", "Globex Corp"], "Hooli") == "Hooli Cloud Services"
    assert kit.choose_option(["Hooli Cloud Services", "HOOLI CLOUD SERVICES"], "Hooli") is None


# ---- through the real ERP and Chromium -------------------------------------------------------------
def add_vendor(erp: ErpServer, name: str) -> int:
    with sqlite3.connect(erp.db_path) as db:  # the look-alike vendor record
        cursor = db.execute("INSERT INTO vendors (name, default_currency) VALUES (?, 'USD')", (name,))
        return int(cursor.lastrowid or 0)


@pytest.mark.browser
@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_a_bill_for_a_lookalike_record_of_the_real_erp_is_flagged_when_asked(
    make_session: SessionFactory, erp: ErpServer, approver: Authority, lookalike: str
) -> None:
    """The real gate reads the real ERP's vendor list when it asks: both rows are kept, and the
    bill chosen with the look-alike's option is flagged; the person rejects it, nothing is saved."""
    impostor = add_vendor(erp, lookalike)
    human = ScriptedHuman([ApprovalDecision.reject("which Northwind is this?")])
    session = logged_in(make_session, erp, human)
    form = session.goto(f"{erp.url}/bills/new").observation
    sent = session.act(fill_bill(form, vendor_id=str(impostor)))
    assert not sent.ok and "which Northwind is this?" in sent.render()
    assert not [b for b in erp.state().bills if b.invoice_number == "INV-2057"]
    [asked] = human.requests
    assert asked.known_vendors is not None and len(asked.known_vendors) == len(erp.state().vendors)
    shown = {f.name: f.value for f in asked.fields}
    assert shown["vendor_id"].startswith(f"{impostor} (")
    view = approver.view(approver.jobs.approval(park(approver.jobs, asked).id))
    said = {f.rule: str(f.message) for f in view.assessment.flags}
    assert "lookalike_vendor" in said, said
    message = said["lookalike_vendor"]  # the option's text as the page drew it, and both records as listed
    assert re.search(
        r"2 are called “(?:Northwind Traders|NORTHWIND TRADERS)” \(as listed: “[^”]+”; “[^”]+”\)", message
    )
    assert f"{erp.url}/vendors" in message and f"vendor_id = {impostor} (" in message, message
    assert "lookalike" in [f.code for f in work_item(view, approver.rules, systems={}).flags]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_the_scripted_agent_stops_rather_than_pick_one_of_two_vendor_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookalike: str
) -> None:
    """The headline chore with a look-alike vendor record in the real ERP: the agent (no routine to
    replay) does not choose between the two options, saves nothing, and says why."""
    from routines_world import chore, run_chore, workplace
    from test_routines_replay import new_bills

    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    with workplace(tmp_path) as place:
        place.erp_server.reset(ChaosConfig.off())
        add_vendor(place.erp_server, lookalike)
        run: Any = run_chore(place, chore("Northwind Traders"), reset=False)
        assert new_bills(place.erp_url) == []
        assert run.outcome != "done", run.reason
        said = run.report.read_text(encoding="utf-8")  # the step's report, as the person reads it
        assert "2 options that could be 'Northwind Traders'" in said, said
