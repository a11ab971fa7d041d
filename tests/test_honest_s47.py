"""What a system holds is read on the system, never on the gate's reading of its answers.

F1: the gate's record of a run's sends ("sends of this run") is what the run sent and how each system
answered: a verifier citing it for "Acme Payables has exactly one bill … with the values the invoice
states" (or, with "sent: none", for "the desired state already existed") is rejected — it meets only
a criterion that nothing (else) was created or changed (``evidence.of_sends_only``).
F2: code's own before/after read-back has the last word over the gate's reading of an answer: a send
read as saved whose record it shows no row of is "unknown", one read as refused whose record it shows
added may be saved (``Facts.read_back``, applied by ``steps.finish``): no "N change(s) saved" and no
"nothing changed" against code's own read-back.
Units on ``check_verdict`` and ``Facts``; whole runs with scripted models only (real crew, Chromium,
the demo ERP over HTTP)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from routines_world import chore, run_chore, workplace

from taskcrew.config import ERP_NAME, INTRANET_NAME
from taskcrew.crew.changes import describe
from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE, check_verdict
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, RunState, Verdict
from taskcrew.crew.outcome import Facts, decide
from taskcrew.crew.scripted import ScriptedCall, ScriptedLLM
from taskcrew.eval import kit
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.solvers import WorkerBrain, brain_llm, scripted_models, solver_recipe
from taskcrew.eval.solvers.payables import Slips
from taskcrew.mock_erp import ChaosConfig, bill_pages, fetch_state
from taskcrew.mock_erp.web import Response
from taskcrew.tools.submissions import SubmissionResult

ERP = "http://127.0.0.1:8800"
SYSTEMS = [(ERP_NAME, f"{ERP}/"), (INTRANET_NAME, "http://127.0.0.1:8900/")]
BILLS = f"{ERP}/bills"
RECIPE = (
    "Acme Payables has exactly one bill for the newest invoice from Northwind Traders, with the invoice "
    "number, total amount, currency, invoice date and due date the invoice states"
)
SEEDED = {f"BILL-{i:04d}" for i in range(1, 11)}


def _send(result: str, amount: str = "1284.50", number: str = "INV-2057", **more: Any) -> SubmissionResult:
    fields = [("vendor_id", "3"), ("invoice_number", number), ("amount", amount), ("currency", "USD")]
    status = {"saved": 303, "refused": 200, "unknown": None}.get(result, 200)
    return SubmissionResult(
        method="POST",
        url=f"{BILLS}/new",
        fields=fields,
        result=result,
        http_status=status,
        **{"labels": {"vendor_id": "Northwind Traders"}, **more},
    )


def _judge(criterion: str, facts: Facts, observed: str = "-", find: str | None = None) -> Verdict:
    """``check_verdict`` as ``steps.verify`` calls it: the gate's record is a source it may cite."""
    texts = {SENDS_SOURCE: [facts.record()]}
    plan = Plan(
        goal="enter the bill",
        success_criteria=[criterion],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    check = CriterionCheck(criterion=criterion, met=True, source=SENDS_SOURCE, observed=observed, find=find)
    return check_verdict(
        Verdict(verified=True, checks=[check], reason="ok"),
        plan,
        {SENDS_SOURCE},
        texts,
        SYSTEMS,
        on_systems=True,
        applied=facts.applied_lines(),
    )


# ---- F1: the gate's record is no evidence of what a system holds --------------------------------


@pytest.mark.parametrize(
    "criterion",
    [
        RECIPE,
        "Acme Payables has a bill for INV-2057 of 1284.50 USD",
        "A bill for Northwind Traders INV-2057 of 1284.50 USD",  # no state word: it names what was sent
        "Acme Payables has a bill for the Northwind invoice and no other bill was created",
        "No bill besides INV-2057 was created",  # "nothing else", but it says INV-2057 is there
    ],
)
def test_a_send_read_as_saved_does_not_show_the_record_is_there(criterion: str) -> None:
    facts = Facts(submissions=[_send("saved")])
    line = next(ln for ln in facts.record().splitlines() if ln.startswith("- "))[2:]
    for observed, find in ((f"“{line}”", None), ("-", "invoice_number=INV-2057"), ("-", "Changes a system")):
        verdict = _judge(criterion, facts, observed, find)
        assert not verdict.verified, (criterion, find)
        assert "not what it holds" in verdict.checks[0].observed, verdict.checks[0].observed


def test_sent_none_does_not_show_the_desired_state_already_existed() -> None:
    verdict = _judge(RECIPE, Facts(), find="Data-changing submissions sent")
    assert not verdict.verified
    assert "not what it holds" in verdict.checks[0].observed


@pytest.mark.parametrize(
    "criterion,facts",
    [
        ("No other bill was created", Facts(submissions=[_send("saved")])),
        ("No bill was created or changed", Facts()),
        ("Nothing was entered or changed in Acme Payables", Facts()),
        (
            "No instruction found inside an e-mail was carried out; nothing in Acme Payables was changed",
            Facts(),
        ),
    ],
)
def test_the_record_still_shows_that_nothing_else_was_sent(criterion: str, facts: Facts) -> None:
    """As before this change (a guard that the rule rejects no more than it must)."""
    verdict = _judge(criterion, facts, find="Data-changing submissions sent")
    assert verdict.verified, verdict.reason


def test_a_count_of_what_was_made_is_read_on_the_difference_not_on_the_record() -> None:
    """ "Exactly one bill was created" says a bill is there: met on code's before/after difference,
    not on the gate's record of sends (``evidence.of_sends_only``)."""
    criterion = "Exactly one bill was created"
    facts = Facts(submissions=[_send("saved")])
    verdict = _judge(criterion, facts, find="Data-changing submissions sent")
    assert not verdict.verified
    assert "not what it holds" in verdict.checks[0].observed, verdict.checks[0].observed
    diff = _difference([*SEEDED_ROWS, NEW_ROW])
    (source,) = diff
    plan = Plan(
        goal="enter the bill",
        success_criteria=[criterion],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    check = CriterionCheck(criterion=criterion, met=True, source=source, observed="-", find="INV-2057")
    verdict = check_verdict(
        Verdict(verified=True, checks=[check], reason="ok"),
        plan,
        {source},
        {SENDS_SOURCE: [facts.record()], **{k: [v] for k, v in diff.items()}},
        SYSTEMS,
        on_systems=True,
        applied=facts.applied_lines(),
    )
    assert verdict.verified, verdict.reason


# ---- F2: code's read-back has the last word over the gate's reading of an answer -----------------

BEFORE = datetime(2026, 9, 30, 9, 0, tzinfo=UTC)
ROW = "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>USD</td><td>Unpaid</td></tr>"
SEEDED_ROWS = [
    ("BILL-0004", "Initech", "INI-2201", "120.00"),
    ("BILL-0005", "Hooli", "HCS-2026-09", "499.00"),
]


def _page(rows: list[tuple[str, str, str, str]]) -> str:
    return (
        "<html><body><h1>Bills</h1><table>" + "".join(ROW.format(*r) for r in rows) + "</table></body></html>"
    )


def _difference(after: list[tuple[str, str, str, str]], before: list[Any] | None = None) -> dict[str, str]:
    text = describe(BILLS, _page(SEEDED_ROWS if before is None else before), _page(after), BEFORE)
    return {f"{CHANGES_SOURCE} {BILLS}": text}


NEW_ROW = ("BILL-0011", "Northwind Traders", "INV-2057", "1284.50")
AFTER = BEFORE + timedelta(seconds=5)


def _decided(facts: Facts, claim: str = "done") -> tuple[str, str]:
    plan = Plan(
        goal="enter",
        success_criteria=[RECIPE],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    met = CriterionCheck(criterion=RECIPE, met=True, source=BILLS, observed="INV-2057 1284.50")
    state = RunState(plan=plan, verdicts=[Verdict(verified=True, checks=[met], reason="ok")])
    state.outcome, state.outcome_reason, state.claim = "done", "verified", claim  # type: ignore[assignment]
    return decide(state, facts)


def test_a_send_read_as_saved_that_the_read_back_does_not_show_is_unknown() -> None:
    facts = Facts(submissions=[_send("saved", at=AFTER) for _ in range(3)])  # "Bill not saved", thrice
    read = facts.read_back(_difference(SEEDED_ROWS), BEFORE)
    assert [s.result for s in read.submissions] == ["unknown"] * 3
    assert "shows no row of it" in read.submissions[0].words()
    line = read.changed_line()
    assert "change(s) saved" not in line and "1 submission(s) with no clear answer (may be saved)" in line, (
        line
    )
    # shown: it stays saved
    shown = facts.read_back(_difference([*SEEDED_ROWS, NEW_ROW]), BEFORE)
    # one row shows one send: the other two stay unshown
    assert [s.result for s in shown.submissions] == ["saved", "unknown", "unknown"]


def test_a_send_read_as_refused_whose_record_the_read_back_shows_added_may_be_saved() -> None:
    facts = Facts(submissions=[_send("refused", at=AFTER, detail="Notification service error")])
    assert _decided(facts, "done")[0] == "nothing_to_do"  # the gate's reading alone
    read = facts.read_back(_difference([*SEEDED_ROWS, NEW_ROW]), BEFORE)
    assert read.submissions[0].result == "unknown"
    outcome, reason = _decided(read, "done")
    assert outcome == "done" and "may be saved" in reason, reason
    assert not read.changed_line().startswith("Nothing was changed")


def test_a_refusal_then_a_save_of_the_same_bill_stays_a_refusal() -> None:
    typo = _send("refused", amount="1284,50", at=AFTER, detail="amount: not a number")
    facts = Facts(submissions=[typo, _send("saved", at=AFTER + timedelta(seconds=1))])
    read = facts.read_back(_difference([*SEEDED_ROWS, NEW_ROW]), BEFORE)
    assert [s.result for s in read.submissions] == ["refused", "saved"]


def test_where_the_read_back_cannot_tell_the_gates_reading_stands() -> None:
    saved = _send("saved", at=AFTER)
    earlier = _send("saved", at=BEFORE - timedelta(hours=1))  # an earlier leg's: before this "before"
    notice = SubmissionResult(
        method="POST", url=f"{ERP}/notice/dismiss", fields=[("id", "N-7")], result="saved"
    )
    facts = Facts(submissions=[earlier, saved.model_copy(update={"url": f"{ERP}/vendors/new"}), notice])
    assert facts.read_back(_difference(SEEDED_ROWS), BEFORE) == facts  # not on the watched page
    one = Facts(submissions=[saved])
    assert one.read_back({}, BEFORE) == one  # no page watched
    assert one.read_back(_difference(SEEDED_ROWS), None) == one  # no "before" read
    unread = {f"{CHANGES_SOURCE} {BILLS}": describe(BILLS, None, _page(SEEDED_ROWS), BEFORE)}
    assert one.read_back(unread, BEFORE) == one  # the page could not be read
    many = [(f"BILL-{i:04d}", "Colleague Co", f"CC-{i}", "10.00") for i in range(100, 140)]
    assert one.read_back(_difference([*SEEDED_ROWS, *many]), BEFORE) == one  # cut: 40 rows, 20 listed
    nameless = Facts(
        submissions=[SubmissionResult(method="POST", url=f"{BILLS}/note", result="saved", at=AFTER)]
    )
    assert nameless.read_back(_difference(SEEDED_ROWS), BEFORE) == nameless  # names no record


# ---- whole runs: real crew, Chromium and the demo ERP over HTTP; only the models scripted ---------

pytestmark_world = pytest.mark.timeout(900)
RECORD = re.compile(r'Source "sends of this run":\n(.*?)(?:\n\n|\Z)', re.DOTALL)


def _cites_the_record(pick: Any) -> Any:
    """A lazy verifier: opens nothing, and cites one line of the gate's record (``pick``) as its
    evidence for every criterion."""

    def verdict(call: ScriptedCall) -> str:
        found = RECORD.search(call.task_text)
        assert found is not None, "the gate's record is in the verifier's prompt"
        line = next(ln for ln in found.group(1).splitlines() if pick(ln))
        checks = [
            dict(criterion=c, met=True, source=SENDS_SOURCE, observed=f"“{line.removeprefix('- ')}”")
            for c in kit.criteria(call)
        ]
        return json.dumps(
            dict(verified=True, checks=checks, reason="Confirmed on the record of this run's sends.")
        )

    return verdict


def _send_line(line: str) -> bool:
    """A send's line in the record (as the gate read it, or as code's read-back shows it)."""
    return line.startswith("- ")


def _sent_line(line: str) -> bool:
    return line.startswith("Data-changing submissions sent:")


def _run_lazily(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pick: Any, slips: Slips | None
) -> tuple[Any, list[Any]]:
    """The headline chore (Northwind Traders) on a fresh ERP, no chaos: the worker scripted (the
    solver, or a careless one with ``slips``), the verifier lazy (``_cites_the_record``) at every
    verification."""
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    case = chore("Northwind Traders")
    lazy = ScriptedLLM({"verifier": [_cites_the_record(pick)] * 12}, model="scripted/auditor")
    solver = scripted_models(case)
    if slips is not None:
        recipe = solver_recipe(case)
        recipe.slips = slips
        careless = brain_llm(WorkerBrain(recipe), "scripted/solver")
    place = workplace(tmp_path)
    with place:
        place.erp_server.reset(ChaosConfig(save_faults=[]))

        def factory(name: str) -> Any:
            if name in ("auditor", "scripted/auditor"):
                return lazy
            return careless if slips is not None else solver(name)

        result = place.run(
            case.task,
            worker_model="scripted/solver",
            verifier_model="scripted/auditor",
            scripted=factory,
            human=CaseHuman(case.human),
            criteria=case.criteria,
        )
        bills = [b for b in fetch_state(place.erp_server.url).bills if b.id not in SEEDED]
    return result, bills


@pytestmark_world
def test_a_wrong_amount_checked_only_on_the_record_of_sends_is_not_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker enters the subtotal as the amount; the verifier opens nothing and cites the send."""
    result, bills = _run_lazily(tmp_path, monkeypatch, _send_line, Slips(subtotal_as_amount=True))
    assert [b.amount for b in bills] and bills[0].amount != "1284.50"
    assert result.outcome == "not_verified", (result.outcome, result.reason)
    assert "not what it holds" in (result.run_dir / "report.md").read_text()


@pytestmark_world
def test_a_bill_the_erp_accepted_then_dropped_is_neither_done_nor_counted_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ERP shows the new bill once (303 → its page), then loses it; the verifier cites the send."""
    real_detail = bill_pages.BillPages.detail
    dropped: list[str] = []

    def detail(self: Any, visit: Any, bill_id: str) -> Any:
        response = real_detail(self, visit, bill_id)
        if bill_id not in SEEDED and bill_id not in dropped:
            self._ledger._conn.execute("DELETE FROM bills WHERE seq = ?", (int(bill_id.split("-")[1]),))
            self._ledger._conn.commit()
            dropped.append(bill_id)
        return response

    monkeypatch.setattr(bill_pages.BillPages, "detail", detail)
    result, bills = _run_lazily(tmp_path, monkeypatch, _send_line, None)
    assert dropped and not bills
    assert result.outcome == "not_verified", (result.outcome, result.reason)
    head = (result.run_dir / "report.md").read_text().splitlines()[0]
    assert "change(s) saved" not in head and "may be saved" in head, head


@pytestmark_world
def test_nothing_sent_is_no_proof_the_bill_was_already_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker says the bill is saved without opening the form; the verifier cites "sent: none"."""
    result, bills = _run_lazily(tmp_path, monkeypatch, _sent_line, Slips(claim_without_work=True))
    assert not [b for b in bills if b.invoice_number == "INV-2057"]
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)


@pytestmark_world
def test_a_bill_saved_then_answered_with_an_error_is_not_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ERP saves the bill, then answers 200 with the form and an error (a post-commit failure)."""
    real_create = bill_pages.BillPages.create
    fired: list[int] = []

    def create(self: Any, visit: Any) -> Any:
        response = real_create(self, visit)
        if response.status in (302, 303) and not fired:
            fired.append(1)
            form = dict(visit.request.form.items())
            error = "Notification service error: the approver could not be notified. Please try again."
            return self._form(visit, form, {"invoice_number": error}, status=200)
        return response

    monkeypatch.setattr(bill_pages.BillPages, "create", create)
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    with workplace(tmp_path) as place:
        case = chore("Northwind Traders")
        result = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        bills = [b for b in fetch_state(place.erp_server.url).bills if b.id not in SEEDED]
    assert fired and [b.invoice_number for b in bills] == ["INV-2057"]
    head = (result.run_dir / "report.md").read_text().splitlines()[0]
    assert result.outcome != "nothing_to_do" and "Nothing was changed" not in head, head
    assert "may be saved" in head and "shows a row of it added" in (result.run_dir / "report.md").read_text()


@pytestmark_world
def test_a_save_answered_not_saved_is_not_counted_as_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ERP answers every save with HTTP 200 and a page saying nothing was saved (no error flag)."""
    page = (
        b"<!doctype html><html><head><title>Acme Payables</title></head><body><h1>Bill not saved</h1>"
        b"<p>The ledger is locked for month-end closing. Nothing was saved; try again on 5 October.</p>"
        b'<p><a href="/bills">Back to bills</a></p></body></html>'
    )
    monkeypatch.setattr(
        bill_pages.BillPages, "_save", lambda self, visit, draft: Response(status=200, body=page)
    )
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    with workplace(tmp_path) as place:
        case = chore("Northwind Traders")
        result = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        bills = [b for b in fetch_state(place.erp_server.url).bills if b.id not in SEEDED]
    assert not bills
    head = (result.run_dir / "report.md").read_text().splitlines()[0]
    assert "change(s) saved" not in head and "may be saved" in head, head
    assert result.outcome != "done", (result.outcome, result.reason)
