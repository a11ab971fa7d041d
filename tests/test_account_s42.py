"""A run's account of what it did is true on every surface, and never a traceback on the terminal.

- a leg stopped by a cancel or a takeover (``jobs.runner.Stopped`` at its next checkpoint) ends its
  account as an interrupted run's (``crew.run.run_task``): outcome ``interrupted``, the sends it made,
  report.md and run_finished, no exception out of ``taskcrew run``; a taken-over leg writes nothing over
  the job's record (the new leg's); `runs show` shows the signed "cancelled" with what was changed;
- the console's story says "saved X" only from the gate's submission events with result ``saved``;
- a run's reason (report.md's "Why:", `runs show`, `jobs show`, the terminal) is code's words only:
  never the worker model's step summary.

Real Chromium, the demo ERP over HTTP, a real SQLite job store and audit log; only the models are
scripted (the person at the terminal too: tests/fixtures_foreground.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures_foreground import BOB, HOOLI, Foreground, Person
from test_outcome_facts import place  # noqa: F401 — the fixture: a Workplace (ERP, Chromium), no chaos

from taskcrew.approvals.authority import Authority
from taskcrew.console.artifacts import read_events
from taskcrew.console.story import story
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.crew.scripted import Loop, ScriptedLLM
from taskcrew.crew.trace import ApprovalEvent, RunStarted, SubmissionEvent, ToolCallEvent, Tracer
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.eval.runs import RunRecord, RunRecords, read_run
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.submissions import SubmissionResult

PAID = "/bills/BILL-0005/pay"  # HOOLI's payment, approved at the terminal


class ActsWhenVerifierStarts:
    """The scripted verifier model, unchanged; on its first call ``act(jobs, job)`` happens (a
    colleague's cancel, a takeover): it lands while the run verifies, after the bill was paid."""

    def __init__(self, inner: Any, act: Any) -> None:
        self.inner, self.act, self.done = inner, act, False

    def call(self, messages: Any, **kw: Any) -> Any:
        if not self.done:
            self.done = True
            jobs = Jobs.open()
            [job] = jobs.list()
            self.act(jobs, job)
            jobs.close()
        return self.inner.call(messages, **kw)


def _run(tmp_path: Path, erp: ErpServer, act: Any) -> tuple[Any, Any]:
    models = scripted_models(HOOLI)
    with Foreground(erp.url, tmp_path, Person()) as workplace:
        result = workplace.taskcrew_run(
            HOOLI.task, models("solver"), ActsWhenVerifierStarts(models("auditor"), act)
        )
    assert [p for p in erp.state().payments if p.bill_id == "BILL-0005"], "setup: paid before the stop"
    jobs = Jobs.open()
    [job] = jobs.list()
    jobs.close()
    return result, job


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_foreground_run_cancelled_while_verifying_ends_with_its_account(
    tmp_path: Path, isolated_home: Path, erp: ErpServer
) -> None:
    result, job = _run(tmp_path, erp, lambda jobs, job: Authority(jobs).act_on_job(job.id, "cancel", BOB))
    # `taskcrew run` returns its account (no exception out of it: no traceback on the terminal)
    assert result.outcome == "interrupted" and "cancelled by bob" in result.reason, result.reason
    assert PAID in result.answer  # what it changed, from the facts
    report = result.report.read_text()
    assert "`interrupted`" in report and "cancelled by bob" in report and PAID in report
    events, _ = read_events(result.run_dir / "trace.jsonl")
    assert [e for e in events if e.kind == "run_finished"]
    assert (job.status, job.reason) == ("cancelled", "cancelled by bob")  # the signed record stands
    shown = read_run(Path(job.run_dir or ""))  # `runs show`: the signed word, and what was changed
    assert shown.outcome == "cancelled" and PAID in shown.changed, (shown.outcome, shown.changed)
    assert "cancelled by bob" in shown.reason and not shown.note, (shown.reason, shown.note)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_foreground_run_taken_over_ends_its_own_account_and_leaves_the_new_legs_record(
    tmp_path: Path, isolated_home: Path, erp: ErpServer
) -> None:
    result, job = _run(tmp_path, erp, lambda jobs, job: jobs.take_over(job.id, str(job.worker)))
    assert result.outcome == "interrupted" and PAID in result.answer, (result.outcome, result.reason)
    assert (result.run_dir / "report.md").is_file()
    # the job is the new leg's: the stopped leg 0 finished nothing over it and kept its checkpoint
    assert (job.status, job.outcome) == ("queued", None), (job.status, job.outcome, job.reason)
    jobs = Jobs.open()
    assert jobs.leg(job.id) == 1 and jobs.checkpoint(job.id) is not None
    jobs.close()


def test_a_cancelled_record_and_an_interrupted_folder_agree(isolated_home: Path) -> None:
    """A cancel stops its run as an interrupt does: no "the folder says otherwise" note, and the
    folder's own reason (with what it changed) is kept."""
    jobs = Jobs.open()
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    jobs.cancel(job.id, by="bob")
    cancelled = jobs.get(job.id)
    jobs.close()
    for verified in (False, True):
        judged = RunRecord(jobs=(cancelled,)).judge("interrupted", verified)
        assert (judged.outcome, judged.note, judged.reason) == ("cancelled", "", ""), judged
        assert judged.verified is (False if not verified else None)  # a cancelled run's verdict unshown
    other = RunRecord(jobs=(cancelled,)).judge("done", True)  # a folder claiming another ending: said
    assert other.outcome == "cancelled" and other.note


def test_an_unfinished_folder_of_a_cancelled_job_keeps_what_its_trace_shows(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leg killed before it ended (no run_finished), its job cancelled since: `runs show` gives the
    signed reason and still what the folder's trace shows was done (a change approved and sent)."""
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    jobs = Jobs.open()
    run = tmp_path / "runs" / "20261206-120000-pay-bill-0005"
    trace = Tracer(run / "trace.jsonl")
    trace.emit(RunStarted(task="Pay BILL-0005", worker_model="w", verifier_model="v"))
    trace.emit(
        ApprovalEvent(question="POST http://127.0.0.1:9/bills/BILL-0005/pay", answer="approved", by="ana")
    )
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", options=JobOptions(), enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.note_run_dir(job.id, str(run.resolve()), leg=0)
    Authority(jobs).act_on_job(job.id, "cancel", BOB)
    shown = read_run(run, RunRecords.read(jobs))
    jobs.close()
    assert shown.outcome == "cancelled", shown.outcome
    assert "cancelled by bob" in shown.reason and "1 change(s) approved and so submitted" in shown.reason, (
        shown.reason
    )


def test_the_story_says_saved_only_from_the_gates_submissions(tmp_path: Path) -> None:
    tracer = Tracer(tmp_path / "trace.jsonl")
    tracer.emit(RunStarted(task="Enter VI-3390", worker_model="w", verifier_model="v"))
    erp = "http://127.0.0.1:8800"

    def act(actions: list[dict[str, Any]], result: str) -> None:
        tracer.emit(
            ToolCallEvent(
                role="browser_operator", step=1, tool="browser_act", args={"actions": actions}, ok=True,
                result=result, seconds=0.1,
            )
        )  # fmt: skip

    def sent(url: str, result: str, detail: str) -> None:  # the gate, during the action
        tracer.emit(SubmissionEvent(submission=SubmissionResult(method="POST", url=url, result=result,
                                                                http_status=303, detail=detail)))  # fmt: skip

    typed = {"action": "type", "index": 3, "text": "VI-3390"}
    # filled in, then went to another bill's page: nothing was sent
    act(
        [typed, {"action": "navigate", "url": f"{erp}/bills/BILL-0004"}],
        f"Page changed: /bills/new → {erp}/bills/BILL-0004",
    )
    # sent and refused: the page it went to is no record saved
    sent(f"{erp}/bills/new", "refused", "then showed the form again at /bills/BILL-0006: duplicate")
    act([typed, {"action": "click", "index": 9}], f"Page changed: /bills/new → {erp}/bills/BILL-0006")
    # sent and saved: the record its answer named
    sent(f"{erp}/bills/new", "saved", "then showed /bills/BILL-0011")
    act([typed, {"action": "click", "index": 9}], f"Page changed: /bills/new → {erp}/bills/BILL-0011")
    # a payment saved with no record in its answer: the record it was sent to
    sent(f"{erp}/bills/BILL-0005/pay", "saved", "")
    act([{"action": "click", "index": 4}], "Result: OK")
    events, _ = read_events(tmp_path / "trace.jsonl")
    told = [i.title for i in story(events)]
    saved = [t for t in told if t.startswith("saved ")]
    assert saved == ["saved BILL-0011", "saved BILL-0005"], told


GOOD = kit.Bill("Vandelay Industries", "VI-3390", "2640.00", "USD", "2026-09-01", "2026-10-01")
LIE = "Saved bill BILL-0013 for Vandelay Industries VI-3390, 2640.00 USD; alice approved it in the console."


class LiesAfterRejection(kit.EnterBill):
    def on_rejected(self, text):  # type: ignore[no-untyped-def]
        return kit.report("blocked", LIE)


@pytest.mark.browser
@pytest.mark.slow
def test_a_runs_reason_is_codes_words_not_the_models_summary(place: Workplace) -> None:  # noqa: F811
    place.erp_server.reset(ChaosConfig.off())
    place.human = ScriptedHuman(decisions=[ApprovalDecision.reject("not now")])
    plan = Plan(
        goal="Enter Vandelay's invoice VI-3390",
        success_criteria=["Acme Payables has a bill for Vandelay Industries VI-3390: 2640.00 USD"],
        steps=[PlanStep(role="browser_operator", title="Enter the bill", instructions="Enter it.")],
        changes_data=True,
    ).model_dump_json()
    worker = ScriptedLLM(
        {"planner": [plan], "browser_operator": [Loop(policy=LiesAfterRejection(GOOD))], "reflector": ['{"facts": []}']},
        model="scripted/w",
    )  # fmt: skip
    models = {"w": worker, "v": ScriptedLLM({"verifier": []}, model="scripted/v")}
    result = place.run(
        "Enter Vandelay Industries' invoice VI-3390.",
        worker_model="scripted/w",
        verifier_model="scripted/v",
        scripted=models.__getitem__,
    )
    assert result.outcome == "rejected"
    assert not [b for b in place.erp_server.state().bills if b.invoice_number == "VI-3390"]
    assert result.reason == "a person rejected a change during step 1, which ended 'blocked'", result.reason
    report = result.report.read_text()
    why = next(ln for ln in report.splitlines() if ln.startswith("Why:"))
    assert "BILL-0013" not in why, why
    # the model's words stay where they are labelled as its own
    assert "not checked by code" in report and "BILL-0013" in report
