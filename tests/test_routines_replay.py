"""Routines end to end: real Chromium, the demo ERP with chaos, real files; only the models are
scripted (the eval's solver as the agent, its auditor as the independent verifier).

One agent run of the headline chore is learned and accepted (module fixture); the tests then replay
it on a fresh ERP (reset between runs) and check what the ERP holds, what the models were asked and
what the routine's record says.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from routines_world import chore, run_chore, workplace

from taskcrew.crew.trace import read_trace
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.models import HumanScript
from taskcrew.eval.solvers import scripted_models
from taskcrew.mock_erp import ChaosConfig, fetch_state
from taskcrew.routines.store import RoutineStore, diff
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]

SEEDED = {f"BILL-{i:04d}" for i in range(1, 11)}


def new_bills(url: str) -> list[tuple[str, str, str, str, str, str]]:
    return [
        (b.vendor, b.invoice_number, b.amount, b.currency, b.invoice_date, b.due_date)
        for b in fetch_state(url).bills
        if b.id not in SEEDED
    ]


def roles_called(run_dir: Path) -> list[str]:
    return [e.call.role for e in read_trace(run_dir / "trace.jsonl") if e.kind == "llm_call"]


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A workplace whose headline chore ran once with the agent (chaos on: the session expires on
    the first save, the second answers 503), was verified, and whose draft a person accepted."""
    tmp = tmp_path_factory.mktemp("routines")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKCREW_ROUTINES", str(tmp / "routines"))
        with workplace(tmp) as place:
            case = chore("Northwind Traders")
            first = run_chore(place, case)
            assert first.outcome == "done", first.reason
            store = RoutineStore()
            drafts = store.versions("enter-invoice")
            assert [(r.version, r.status) for r in drafts] == [(1, "draft")]
            yield {"place": place, "case": case, "first": first, "store": store}


def test_a_verified_run_proposes_a_draft_that_replays_only_once_accepted(learned: dict[str, Any]) -> None:
    place, case, store = learned["place"], learned["case"], learned["store"]
    draft = store.get("enter-invoice", 1)
    # what was learned: semantic targets, placeholders, the expected pages, the approval point
    dumped = draft.model_dump_json()
    assert '"index"' not in dumped and "selector" not in dumped and "demo123" not in dumped
    assert {s.target.field for s in draft.browser if s.target} >= {"invoice_number", "amount", "due_date"}
    assert [s.kind for s in draft.browser if s.approval] == ["click"]
    assert {o.kind for o in draft.obstacles} >= {"login", "expired_session", "unavailable"}
    assert draft.template_for("Northwind Traders") is not None

    store.accept("enter-invoice", 1, "reviewer")
    replay = run_chore(place, case)  # chaos again: expired session, then a 503, on the replay's saves

    assert replay.outcome == "done", replay.reason
    assert new_bills(place.erp_url) == [
        ("Northwind Traders", "INV-2057", "1284.50", "USD", "2026-09-12", "2026-10-12")
    ]
    # the planner, the workers and the reflector were not called; the verifier was, on its own model
    assert set(roles_called(replay.run_dir)) == {"verifier"}
    assert replay.input_tokens < learned["first"].input_tokens
    approvals = [e for e in read_trace(replay.run_dir / "trace.jsonl") if e.kind == "approval"]
    assert [a.answer for a in approvals] == ["approved"]  # the exact payload, asked once
    assert approvals[0].payload["invoice_number"] == "INV-2057"
    counted = store.get("enter-invoice", 1)
    assert (counted.status, counted.successes, counted.fallbacks) == ("accepted", 1, 0)


def test_a_changed_form_falls_back_to_the_agent_and_proposes_a_healed_version(
    learned: dict[str, Any],
) -> None:
    place, case, store = learned["place"], learned["case"], learned["store"]
    if store.accepted("enter-invoice") is None:
        store.accept("enter-invoice", 1, "reviewer")
    before = store.accepted("enter-invoice")
    assert before is not None
    changed = ChaosConfig(form_change="rename", shuffle_fields=True, save_faults=[])
    run = run_chore(place, case, chaos=changed)

    assert run.outcome == "done", run.reason
    assert new_bills(place.erp_url) == [
        ("Northwind Traders", "INV-2057", "1284.50", "USD", "2026-09-12", "2026-10-12")
    ]
    events = read_trace(run.run_dir / "trace.jsonl")
    fallback = [e for e in events if e.kind == "control" and e.action == "routine:fallback"]
    assert fallback and "invoice_number" in fallback[0].reason
    assert "planner" in roles_called(run.run_dir)  # the agent took over from there
    counted = store.get("enter-invoice", before.version)
    assert counted.fallbacks == 1 and counted.fallbacks_in_a_row == 1 and not counted.flagged
    healed = store.versions("enter-invoice")[-1]
    assert healed.status == "draft" and healed.based_on == before.version
    assert "field: vendor_invoice_no" in diff(before, healed)
    assert "-    field: invoice_number" in diff(before, healed)


def test_a_rejected_payload_during_replay_changes_nothing(learned: dict[str, Any]) -> None:
    place, store = learned["place"], learned["store"]
    store.accept("enter-invoice", 1, "reviewer")
    case = chore("Northwind Traders", approvals="reject")
    run = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))

    assert run.outcome == "rejected", run.reason
    assert new_bills(place.erp_url) == []
    assert set(roles_called(run.run_dir)) <= {"verifier"}


def test_a_replay_killed_after_the_save_does_not_enter_the_bill_twice(
    learned: dict[str, Any], tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys

    place, case, store = learned["place"], learned["case"], learned["store"]
    store.accept("enter-invoice", 1, "reviewer")
    place.erp_server.reset(ChaosConfig(save_faults=[]))  # the first save lands (chaos: the first test)
    child = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "routines_kill_child.py"), place.erp_url, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=350,
        env={**os.environ, "TASKCREW_ROUTINES": str(store.folder)},
    )
    assert child.returncode == -signal.SIGKILL, child.stdout[-2000:] + child.stderr[-3000:]
    saved = new_bills(place.erp_url)
    assert [b[1] for b in saved] == ["INV-2057"]  # the killed replay had saved it

    again = run_chore(place, case, reset=False)  # the chore again, on the same ERP

    assert again.outcome in ("done", "nothing_to_do"), again.reason
    assert new_bills(place.erp_url) == saved  # exactly one bill: nothing entered twice
    events = read_trace(again.run_dir / "trace.jsonl")
    fallback = [e for e in events if e.kind == "control" and e.action == "routine:fallback"]
    assert fallback and "already shows INV-2057" in fallback[0].reason


class CarefulPerson(CaseHuman):
    """Approves only the invoice the chore is about; rejects anything else it is shown."""

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        shown = " ".join(f.value for f in request.fields)
        return (
            ApprovalDecision.approve()
            if "INV-2057" in shown
            else ApprovalDecision.reject("not what I asked for")
        )


def test_a_hostile_page_during_replay_changes_nothing_unapproved(learned: dict[str, Any]) -> None:
    place, case, store = learned["place"], learned["case"], learned["store"]
    store.accept("enter-invoice", 1, "reviewer")
    place.erp_server.reset(ChaosConfig(hostile_script=True, save_faults=[]))
    person = CarefulPerson(HumanScript())
    run = place.run(
        case.task,
        worker_model="scripted/solver",
        verifier_model="scripted/auditor",
        scripted=scripted_models(case),
        human=person,
        criteria=case.criteria,
    )

    saved = new_bills(place.erp_url)
    assert all(b[1] != "HOSTILE-666" for b in saved), saved
    asked = [" ".join(f.value for f in r.fields) for r in person.requests]
    assert any("HOSTILE-666" in a for a in asked)  # the page's own request went to the person
    approved = [
        e for e in read_trace(run.run_dir / "trace.jsonl") if e.kind == "approval" and e.answer == "approved"
    ]
    for bill in saved:  # whatever is in the ERP now, the person approved exactly that payload
        assert any(a.payload.get("invoice_number") == bill[1] for a in approved), (bill, approved)


def test_a_plain_task_that_reads_as_the_recipe_is_replayed_with_the_recipes_criteria(
    learned: dict[str, Any],
) -> None:
    """`taskcrew run "<the recipe's task>"` and `taskcrew submit "<…>"` give no criteria of their
    own. The replay's plan then said only "The chore enter-invoice is carried out for Northwind
    Traders", which the inbox's e-mail could confirm: the rule that a system's state is checked on
    the system's own pages no longer held the verifier to the ERP. A task that reads as a recipe
    carries that recipe's criteria, whichever path runs it."""
    place, case, store = learned["place"], learned["case"], learned["store"]
    store.accept("enter-invoice", 1, "reviewer")
    place.erp_server.reset(ChaosConfig(save_faults=[]))
    run = place.run(  # no criteria: what the CLI passes for a plain task
        case.task,
        worker_model="scripted/solver",
        verifier_model="scripted/auditor",
        scripted=scripted_models(case),
        human=CaseHuman(case.human),
        criteria=[],
    )

    assert run.outcome == "done", run.reason
    assert set(roles_called(run.run_dir)) == {"verifier"}  # replayed
    events = read_trace(run.run_dir / "trace.jsonl")
    [plan] = [e.plan for e in events if e.kind == "plan"]
    assert case.criteria and plan.success_criteria == case.criteria  # the recipe's, as its command gives
    [verdict] = [e.verdict for e in events if e.kind == "verdict"]
    checked = {c.criterion: c.source for c in verdict.checks}
    assert all(checked[c].startswith(place.erp_url) for c in case.criteria), checked  # on the ERP


# ------------------------------------------------------------------ every vendor with an invoice
def _newest(vendor: str) -> Any:
    from taskcrew.sandbox.ground_truth import load_ground_truth

    mine = [d for d in load_ground_truth().documents if d.kind == "invoice" and d.vendor == vendor]
    return max(mine, key=lambda d: d.invoice_date)


def _truth(doc: Any) -> dict[str, str]:
    return {
        "invoice_number": doc.number,
        "amount": f"{doc.total:.2f}",
        "currency": doc.currency,
        "invoice_date": doc.invoice_date.isoformat(),
        "due_date": doc.due_date.isoformat(),
    }


# each kind of document the inbox has: an e-mail body, a PDF attachment, a PDF with an OCR'd
# letterhead, a photographed scan, another currency and language; Globex's newest invoice is in
# the ERP's seed already (nothing to do)
REPLAYED = [
    "Initech",
    "Globex Corp",
    "Vandelay Industries",
    "Contoso Office Supplies",
    "Müller Industrietechnik GmbH",
    "Bharat Components Pvt. Ltd.",
]
AGENT_EXTRACTS = "Soylent Foods"  # no template learned yet: the agent does the chore, a draft adds it


@pytest.fixture(scope="module")
def every_issuer(learned: dict[str, Any]) -> dict[str, Any]:
    """The accepted routine (learned from Northwind's run) with the templates the verified runs of
    the other vendors would have taught it: learned by the real learner from each vendor's newest
    invoice and the values a verified run entered (the ground truth)."""
    from taskcrew.config import DEFAULT_SANDBOX
    from taskcrew.routines.distil import learned_senders
    from taskcrew.routines.template import learn
    from taskcrew.tools.files import SandboxFiles

    store = learned["store"]
    routine = store.get("enter-invoice", 1)
    files = SandboxFiles(DEFAULT_SANDBOX / "inbox")
    templates = []
    for vendor in REPLAYED:
        doc = _newest(vendor)
        content = files.read(doc.path)
        template = learn(content.full_text(), _truth(doc), vendor, doc.path)
        template.senders = learned_senders(content, vendor)  # who sends its invoices, as distil does
        templates.append(template)
    store.save(routine.model_copy(update={"templates": [*routine.templates, *templates]}))
    store.accept("enter-invoice", 1, "reviewer")  # accepted as it now is: an edit after acceptance voids it
    learned["place"].erp_server.reset(ChaosConfig(save_faults=[]))
    return learned


@pytest.mark.parametrize("vendor", REPLAYED)
def test_the_routine_replays_for_each_vendor_with_an_invoice(
    every_issuer: dict[str, Any], vendor: str
) -> None:
    place, store = every_issuer["place"], every_issuer["store"]
    before = store.accepted("enter-invoice")
    assert before is not None and before.template_for(vendor) is not None
    already = {b[1] for b in new_bills(place.erp_url)}  # one ERP for all vendors: no reset between
    truth = _truth(_newest(vendor))
    seeded = {b.invoice_number for b in fetch_state(place.erp_url).bills if b.id in SEEDED}
    run = run_chore(place, chore(vendor), reset=False)

    entered = [b for b in new_bills(place.erp_url) if b[1] not in already]
    after = store.get("enter-invoice", before.version)
    if truth["invoice_number"] in seeded:  # entered before: the routine stops, the agent finds so
        assert run.outcome == "nothing_to_do", run.reason
        assert entered == []
        events = read_trace(run.run_dir / "trace.jsonl")
        fallback = [e for e in events if e.kind == "control" and e.action == "routine:fallback"]
        assert fallback and f"already shows {truth['invoice_number']}" in fallback[0].reason
        return
    assert run.outcome == "done", run.reason
    assert set(roles_called(run.run_dir)) == {"verifier"}  # no planner, no worker: all in code
    assert [dict(zip(truth, b[1:], strict=True)) for b in entered] == [truth]
    assert after.successes == before.successes + 1 and after.fallbacks == before.fallbacks


def test_a_vendor_without_a_template_falls_back_and_its_verified_run_adds_one(
    every_issuer: dict[str, Any],
) -> None:
    place, store = every_issuer["place"], every_issuer["store"]
    before = store.accepted("enter-invoice")
    assert before is not None and before.template_for(AGENT_EXTRACTS) is None
    run = run_chore(place, chore(AGENT_EXTRACTS), chaos=ChaosConfig(save_faults=[]))

    assert run.outcome == "done", run.reason
    assert "planner" in roles_called(run.run_dir)  # the agent did the chore
    truth = _truth(_newest(AGENT_EXTRACTS))
    assert [dict(zip(truth, b[1:], strict=True)) for b in new_bills(place.erp_url)] == [truth]
    counted = store.get("enter-invoice", before.version)
    assert counted.fallbacks == before.fallbacks + 1
    assert counted.fallbacks_in_a_row == before.fallbacks_in_a_row  # a new issuer is no defect
    draft = store.versions("enter-invoice")[-1]
    assert draft.status == "draft" and draft.based_on == before.version
    issuers = {t.issuer for t in draft.templates}
    assert {AGENT_EXTRACTS, "Northwind Traders", *REPLAYED} <= issuers  # added, none lost


def test_a_chore_naming_the_vendor_in_part_is_learned_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vendor="Bharat Components": the run reports the ERP's "Bharat Components Pvt. Ltd.", which is
    the parameter named in full, not a value the invoice must print after a label."""
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    with workplace(tmp_path) as place:
        case = chore("Bharat Components")
        first = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        assert first.outcome == "done", first.reason
        store = RoutineStore()
        [draft] = store.versions("enter-invoice")
        vendor = next(s for s in draft.browser if s.target and s.target.field == "vendor_id")
        assert (vendor.kind, vendor.value) == ("select", "{vendor}")  # not a literal, not a document value
        store.accept("enter-invoice", 1, "reviewer")
        replay = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        assert replay.outcome == "done", replay.reason
        assert set(roles_called(replay.run_dir)) == {"verifier"}
        assert [b[:4] for b in new_bills(place.erp_url)] == [
            ("Bharat Components Pvt. Ltd.", "INV/2026/0917", "128450.00", "INR")
        ]
