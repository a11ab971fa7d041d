"""A leg handed back (SIGTERM) between a checkpoint and what follows it loses nothing.

- A step's report is decided in code (next step, claim, end, replan) before the step's checkpoint is
  saved. Before, the checkpoint held the report but not the decision, and the next leg counted only
  `done` steps: it ran a `failed` or `nothing_to_do` step again (a person asked again for the same
  change, or a replan lost).
- A person's answer to the job's question is spent when the run saves the state built on it, not
  when a leg reads it: a leg handed back before its next checkpoint leaves the answer to the next
  leg, and the person is not asked again. Answers reach the run in order, whatever the leg.
- The run notes and the step budget spent are part of the checkpoint: a resumed leg sees the notes
  and goes on from the budget already spent (before: both started empty on every leg).

Files-only runs (fast): the real Flow and a real job database (SQLite); only the models are scripted.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from test_crew_control import ANSWER, FILE, TASK, plan, run, verifier_script

from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.scripted import ScriptedLLM, ToolCall
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.runner import HandBack, StoreCheckpoints
from taskcrew.jobs.store import fingerprint
from taskcrew.tools.human import ApprovalDecision

NOTE = "Contoso's memo is the .eml in the inbox, not a PDF."
PLAN = plan()


@pytest.fixture()
def job(tmp_path: Path) -> tuple[Jobs, str]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit(TASK, submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    return jobs, job.id


def _leg(
    tmp_path: Path,
    jobs: Jobs,
    job_id: str,
    worker: ScriptedLLM,
    verifier: ScriptedLLM | None = None,
    hand_back_at: int | None = None,
) -> Any:
    """One leg of the job; ``hand_back_at``: the worker is stopped (SIGTERM) while the leg saves
    its n-th checkpoint, so the leg ends right after it."""
    saves = [0]

    def stopping() -> bool:
        saves[0] += 1
        return saves[0] == hand_back_at

    checkpoints = StoreCheckpoints(jobs, job_id, "w1", hand_back=stopping)
    return run(tmp_path, worker, verifier or ScriptedLLM({}, model="scripted/v"), checkpoints=checkpoints)


def test_a_failed_step_handed_back_at_its_checkpoint_is_replanned_not_run_again(
    tmp_path: Path, job: tuple[Jobs, str]
) -> None:
    jobs, job_id = job
    failed = StepReport(status="failed", summary="The memo is not in the scans folder.").model_dump_json()
    first = ScriptedLLM({"planner": [PLAN], "file_reader": [failed]}, model="scripted/w")
    with pytest.raises(HandBack, match="step:1"):  # checkpoints: plan, step:1 (handed back here)
        _leg(tmp_path, jobs, job_id, first, hand_back_at=2)
    first.assert_complete()

    second = ScriptedLLM({"planner": [PLAN], "file_reader": [ANSWER]}, model="scripted/w")
    result = _leg(tmp_path, jobs, job_id, second, verifier_script())

    assert result.outcome == "done", result.reason
    second.assert_complete()
    assert result.state.replans == 1  # before: 0, the failed step ran again on the old plan
    (replan,) = second.calls_for("planner")
    assert "step 1 (Read the documents (1)) ended 'failed'" in replan.prompt
    assert [r.report.status for r in result.state.steps_done] == ["failed", "done"]


def test_a_nothing_to_do_step_handed_back_at_its_checkpoint_goes_to_verification(
    tmp_path: Path, job: tuple[Jobs, str]
) -> None:
    jobs, job_id = job
    nothing = StepReport(
        status="nothing_to_do",
        summary="Contoso's credit memo CN-104 is already known; nothing to change.",
        sources=[Citation(source=FILE, quote="issued credit memo CN-104")],
    ).model_dump_json()
    first = ScriptedLLM(
        {
            "planner": [PLAN],
            "file_reader": [
                ToolCall(name="list_files", args={}),
                ToolCall(name="note", args={"text": NOTE}),
                nothing,
            ],
        },
        model="scripted/w",
    )
    with pytest.raises(HandBack, match="step:1"):
        _leg(tmp_path, jobs, job_id, first, hand_back_at=2)

    second = ScriptedLLM({}, model="scripted/w")  # no step to run
    verifier = verifier_script()
    result = _leg(tmp_path, jobs, job_id, second, verifier)

    assert result.outcome == "nothing_to_do", result.reason
    second.assert_complete()
    assert second.calls_for("file_reader") == []  # before: the step ran again
    assert len(result.state.steps_done) == 1
    # what the first leg noted and spent came with the checkpoint
    assert NOTE in result.state.notes
    assert result.state.tool_calls >= 2  # the first leg's two tool calls still count


def _answered(jobs: Jobs, job_id: str, question: str, text: str) -> None:
    """A question a leg parked (as ``JobHuman.ask`` does) and a person answered."""
    human = JobHuman(jobs, job_id)
    approval = jobs.park(job_id, kind="question", key=fingerprint({"question": question}), question=question)
    human.gate.asked(approval)
    jobs.decide(approval.id, ApprovalDecision.answer(text), decided_by="bob")


def test_an_answer_taken_by_a_leg_handed_back_before_its_checkpoint_is_not_asked_again(
    job: tuple[Jobs, str],
) -> None:
    jobs, job_id = job
    _answered(jobs, job_id, "Which folder holds the memo?", "The inbox.")

    leg2 = JobHuman(jobs, job_id)
    assert leg2.ask("Where is the memo?") == "The inbox."
    # leg 2 is handed back before it saves a checkpoint: the next leg gets the same answer
    leg3 = JobHuman(jobs, job_id)
    assert leg3.ask("Where should I look for the memo?") == "The inbox."  # before: Parked (asked again)
    StoreCheckpoints(jobs, job_id, "w1", gate=leg3.gate).save("plan:2", {"stage": "plan:2", "state": {}})
    # spent with the state built on it: a later question is a new one
    with pytest.raises(Parked):
        JobHuman(jobs, job_id).ask("Which vendor is it?")
    assert [e.action for e in leg3.authority.audit.entries("answer_handed")] == ["answer_handed"]


def test_answers_reach_the_run_in_order_whatever_leg_asks(job: tuple[Jobs, str]) -> None:
    """A step asks two questions; the leg that took the first answer parks on the second. The next
    leg runs the step again from its start: the first question gets the first answer, not the second."""
    jobs, job_id = job
    _answered(jobs, job_id, "Which folder?", "The inbox.")
    leg2 = JobHuman(jobs, job_id)
    assert leg2.ask("Which folder?") == "The inbox."
    with pytest.raises(Parked) as parked:
        leg2.ask("Which currency?")
    jobs.decide(parked.value.approval_id, ApprovalDecision.answer("USD"), decided_by="bob")

    leg3 = JobHuman(jobs, job_id)
    assert leg3.ask("Which folder?") == "The inbox."  # before: "USD", the second answer
    assert leg3.ask("Which currency?") == "USD"


def test_two_questions_asked_at_once_each_get_their_own_answer(job: tuple[Jobs, str]) -> None:
    """A model's parallel tool calls run on threads: a leg may ask two questions at the same time.
    Each gets the answer to its own question, never both the same one (before: 'The inbox.' twice,
    or the two answers swapped, depending on which thread came first)."""
    jobs, job_id = job
    _answered(jobs, job_id, "Which folder?", "The inbox.")
    _answered(jobs, job_id, "Which currency?", "USD")
    for _ in range(20):
        leg = JobHuman(jobs, job_id)
        got: dict[str, str] = {}
        start = threading.Barrier(2)

        def ask(question: str, leg: JobHuman = leg, got: dict[str, str] = got, start=start) -> None:
            start.wait()
            got[question] = leg.ask(question)

        threads = [threading.Thread(target=ask, args=(q,)) for q in ("Which currency?", "Which folder?")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == {"Which folder?": "The inbox.", "Which currency?": "USD"}
        assert sorted(leg.gate.unspent()) == sorted(a.id for a in jobs.answers(job_id))


def test_answers_follow_the_order_the_audit_log_signed_not_a_date_edited_in_the_database(
    tmp_path: Path, job: tuple[Jobs, str]
) -> None:
    """The next leg words its questions anew, so the answers go by the order they were asked. That
    order is the signed audit log's: a `created_at` moved in the job database reorders nothing."""
    jobs, job_id = job
    _answered(jobs, job_id, "Which bill: CO-1 or CO-2?", "CO-1")
    _answered(jobs, job_id, "How much to pay?", "9500.00")
    first, second = jobs.answers(job_id)
    db = sqlite3.connect(tmp_path / "jobs.sqlite3")
    moved = json.loads(second.model_dump_json()) | {
        "created_at": (first.created_at - timedelta(seconds=1)).isoformat()
    }
    db.execute("UPDATE taskcrew_approvals SET doc = ? WHERE id = ?", (json.dumps(moved), second.id))
    db.commit()
    db.close()
    assert [a.id for a in jobs.answers(job_id)] == [second.id, first.id]  # the database's order now

    leg = JobHuman(jobs, job_id)
    assert leg.ask("Which of the two bills should be paid?") == "CO-1"  # before: "9500.00"
    assert leg.ask("What amount should the payment be?") == "9500.00"
