# ruff: noqa: F811 — `place` is the fixture imported from test_outcome_facts
"""A run's account is finished once, and an audit proves nothing from a record of its own.

- A signal stops a run while its verifier thinks: the "interrupted" report is written and returned
  at once, but the Flow's thread is abandoned, not stopped. When the verdict comes back later, it
  must change nothing: not the report, not the returned result (a job's row), not the trace, not
  the job's checkpoint. Before, that thread set the outcome to "done" and wrote the report again.
- An audit sends nothing, so the gate's record of its own sends always read "sent: none"; a
  "no bill was created" claim was verified from it without looking at any system. An audit of a
  past run is shown that run's sends, under that run's name: what it sent, never what a system holds.

Scripted models; real crew, Chromium and ERP. The races are made with events, not sleeps: the
verifier's answer is held until the run has been finished, and the test joins the abandoned thread."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_outcome_facts import CRITERION, VANDELAY, _plan, place  # noqa: F401 — `place`: the fixture

from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.run import run_task
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM
from taskcrew.crew.toolbox import Toolbox
from taskcrew.crew.trace import PlanMade, RunStarted, SubmissionEvent, Tracer, read_trace
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.submissions import SubmissionResult

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAIT = 90  # seconds: only a guard against a hang, never what a test measures
VERIFIED = Verdict(
    verified=True,
    checks=[CriterionCheck(criterion=CRITERION, met=True, source="sends of this run", observed="VI-3390")],
    reason="VI-3390 is saved",
)


def _interrupted_while_verifying(release: threading.Event) -> Callable[[ScriptedCall], str]:
    """The verifier's model: Ctrl-C arrives while it thinks; it answers once ``release`` is set."""

    def verifier(call: ScriptedCall) -> str:
        os.kill(os.getpid(), signal.SIGINT)
        assert release.wait(WAIT), "the run never ended"
        return VERIFIED.model_dump_json()

    return verifier


def _worker() -> ScriptedLLM:
    return ScriptedLLM(
        {
            "planner": [_plan("Enter the bill").model_dump_json()],
            "browser_operator": [Loop(policy=kit.EnterBill(VANDELAY))],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )


def _abandoned(before: set[threading.Thread]) -> threading.Thread:
    """The run's Flow (or audit) thread that the interrupt abandoned (``stopping.call_interruptibly``)."""
    [thread] = [t for t in threading.enumerate() if t.name == "taskcrew-run" and t not in before]
    return thread


def _kinds(run_dir: Path) -> list[str]:
    return [e.kind for e in read_trace(run_dir / "trace.jsonl")]


class Checkpoints:
    """A durable job's checkpoint sink (``crew.stages``): what the run saved, stage by stage."""

    def __init__(self) -> None:
        self.saved: list[tuple[str, str | None]] = []

    def load(self) -> dict[str, Any] | None:
        return None

    def save(self, stage: str, state: dict[str, Any]) -> None:
        self.saved.append((stage, state.get("outcome")))


def test_a_verdict_that_comes_back_after_the_interrupted_run_ended_changes_nothing(place: Workplace) -> None:
    assert threading.current_thread() is threading.main_thread()  # signals reach the main thread
    place.erp_server.reset(ChaosConfig.off())
    release = threading.Event()
    verifier = ScriptedLLM({"verifier": [_interrupted_while_verifying(release)]}, model="scripted/v")
    models = {"w": _worker(), "v": verifier}
    settings = place.run_settings(
        "Enter Vandelay Industries' invoice VI-3390.", worker_model="scripted/w", verifier_model="scripted/v"
    )
    res = place.resources(
        scripted=models.__getitem__, human=ScriptedHuman(decisions=[ApprovalDecision.approve()])
    )
    res.checkpoints = checkpoints = Checkpoints()
    before = set(threading.enumerate())

    result = run_task(settings, res)
    report, returned = result.report.read_text(), result.model_dump()
    saved = list(checkpoints.saved)
    release.set()  # now the verifier answers "verified" to the abandoned Flow thread
    thread = _abandoned(before)
    thread.join(WAIT)
    assert not thread.is_alive()
    verifier.assert_complete()  # its verdict came back, after the run had ended

    assert result.outcome == "interrupted", result.reason
    assert report.startswith("# Interrupted"), report.splitlines()[0]
    assert result.report.read_text() == report  # before: rewritten as "# Done, and independently verified"
    assert result.model_dump() == returned and result.state.verdicts == []  # what a job's row is made of
    kinds = _kinds(result.run_dir)
    after = kinds[kinds.index("run_finished") + 1 :]  # the verifier's late model call is still counted
    assert "run_finished" not in after and set(after) <= {"llm_call", "tool_call"}, after
    assert "verdict" not in kinds
    assert checkpoints.saved == saved  # before: "verify:1" saved with the outcome "done"
    assert len([b for b in place.erp_server.state().bills if b.invoice_number == "VI-3390"]) == 1


def test_a_verdict_that_lands_while_the_browser_closes_is_not_what_the_run_returns(
    place: Workplace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other way round: the report says "interrupted"; the verdict lands after it was written,
    while run_task closes the browser. What run_task returns is the report's account, not the verdict's."""
    assert threading.current_thread() is threading.main_thread()
    place.erp_server.reset(ChaosConfig.off())
    reported = threading.Event()
    verifier = ScriptedLLM({"verifier": [_interrupted_while_verifying(reported)]}, model="scripted/v")
    before = set(threading.enumerate())
    closing = Toolbox.close

    def close_after_the_verdict(self: Toolbox) -> None:
        thread = _abandoned(before)
        thread.join(WAIT)  # the verdict has landed and the abandoned Flow has ended
        assert not thread.is_alive()
        closing(self)

    monkeypatch.setattr(Toolbox, "close", close_after_the_verdict)
    place.human = ScriptedHuman(decisions=[ApprovalDecision.approve()])
    result = place.run(
        "Enter Vandelay Industries' invoice VI-3390.",
        worker_model="scripted/w",
        verifier_model="scripted/v",
        scripted={"w": _worker(), "v": verifier}.__getitem__,
        listeners=[lambda event: reported.set() if event.kind == "run_finished" else None],
    )
    verifier.assert_complete()
    first = result.report.read_text().splitlines()[0]
    assert result.outcome == "interrupted", (result.outcome, first)  # before: "done"
    assert first.startswith("# Interrupted"), first
    assert result.state.outcome == "interrupted" and result.state.verdicts == []
    assert _kinds(result.run_dir).count("run_finished") == 1


def test_an_audits_late_verdict_after_an_interrupt_is_not_recorded(place: Workplace) -> None:
    assert threading.current_thread() is threading.main_thread()
    place.erp_server.reset(ChaosConfig.off())
    release = threading.Event()
    verifier = ScriptedLLM({"verifier": [_interrupted_while_verifying(release)]}, model="scripted/v")
    before = set(threading.enumerate())
    result = place.audit(CRITERION, verifier_model="scripted/v", scripted={"v": verifier}.__getitem__)
    report = result.report.read_text()
    release.set()
    thread = _abandoned(before)
    thread.join(WAIT)
    assert not thread.is_alive()
    verifier.assert_complete()
    assert result.interrupted and not result.verified and result.verdict is None
    assert result.report.read_text() == report
    kinds = _kinds(result.run_dir)
    assert "verdict" not in kinds and kinds.count("run_finished") == 1, kinds  # before: a verdict after it


def test_an_audit_cannot_prove_that_nothing_was_created_from_a_record_of_its_own(place: Workplace) -> None:
    """GX-5531 is in the ERP; the claim that no bill was created for it is false."""
    place.erp_server.reset(ChaosConfig.off())
    assert [b for b in place.erp_server.state().bills if b.invoice_number == "GX-5531"]
    claim = "No bill was created for Globex Corp GX-5531"
    verdict = Verdict(
        verified=True,
        reason="none was created",
        checks=[
            CriterionCheck(criterion=claim, met=True, source="sends of this run", observed="-", find="sent")
        ],
    )
    verifier = ScriptedLLM({"verifier": [verdict.model_dump_json()]}, model="scripted/v")
    result = place.audit(claim, verifier_model="scripted/v", scripted={"v": verifier}.__getitem__)
    prompt = verifier.calls_for("verifier")[0].task_text
    assert 'Source "sends of this run"' not in prompt and "an audit sends nothing" in prompt
    assert not result.verified, result.reason  # before: "Audit: verified", without a single tool call
    row = next(ln for ln in result.report.read_text().splitlines() if ln.startswith(f"| {claim}"))
    assert "'sends of this run' was not opened" in row, row


def test_an_audit_of_a_past_run_sees_what_it_sent_but_not_as_proof_of_what_a_system_holds(
    place: Workplace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    place.erp_server.reset(ChaosConfig.off())
    assert not [b for b in place.erp_server.state().bills if b.invoice_number == "VI-3390"]
    nothing_else = "No other bill was created or changed"
    past = tmp_path / "20261001-090000-enter-vandelay"
    trace = Tracer(past / "trace.jsonl")
    trace.emit(RunStarted(task="Enter Vandelay's invoice VI-3390", worker_model="w", verifier_model="v"))
    step = PlanStep(role="browser_operator", title="Enter the bill", instructions="Enter it.")
    plan = Plan(
        goal="Enter VI-3390", success_criteria=[CRITERION, nothing_else], steps=[step], changes_data=True
    )
    trace.emit(PlanMade(plan=plan))
    sent = SubmissionResult(
        method="POST",
        url=f"{place.erp_server.url}/bills/new",
        fields=[("invoice_number", "VI-3390"), ("amount", "2640.00"), ("currency", "USD")],
        result="saved",
        http_status=303,
        detail="then showed /bills/BILL-0099",
    )
    trace.emit(SubmissionEvent(submission=sent))
    _sealed_by_its_job(past, "Enter Vandelay's invoice VI-3390", tmp_path, monkeypatch)
    name = f"sends of run {past.name}"  # what the audit is shown of that run (audit.sends_of_run)

    def judge(call: ScriptedCall) -> str:
        return Verdict(
            verified=True,
            reason="the run saved it",
            checks=[
                CriterionCheck(criterion=CRITERION, met=True, source=name, observed="VI-3390 2640.00 USD"),
                CriterionCheck(
                    criterion=nothing_else, met=True, source="sends of this run", observed="-", find="sent"
                ),
            ],
        ).model_dump_json()

    verifier = ScriptedLLM({"verifier": [judge]}, model="scripted/v")
    result = place.audit(run_dir=past, verifier_model="scripted/v", scripted={"v": verifier}.__getitem__)
    prompt = verifier.calls_for("verifier")[0].task_text
    assert f'Source "{name}"' in prompt and "invoice_number=VI-3390" in prompt  # before: not shown
    assert 'Source "sends of this run"' not in prompt
    assert not result.verified, result.reason
    rows = {
        ln.split(" | ")[0][2:]: ln for ln in result.report.read_text().splitlines() if ln.startswith("| ")
    }
    # what the run sent is no proof that the ERP holds it now (VI-3390 is not there)
    assert "must be checked on that system's own pages" in rows[CRITERION], rows[CRITERION]
    assert "'sends of this run' was not opened" in rows[nothing_else], rows[nothing_else]


def _sealed_by_its_job(run: Path, task: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` as a job's run, ended and sealed in its signed record: what `audit --run` audits
    (a folder nothing vouches for is refused: ``audit.criteria_from_run``)."""
    from taskcrew.jobs import JobOptions, Jobs

    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    jobs = Jobs.open()
    job = jobs.submit(
        task, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.note_run_dir(job.id, str(run.resolve()), leg=0)
    jobs.finish(job.id, "done", "entered", leg=0)
    jobs.close()
