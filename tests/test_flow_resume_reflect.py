"""A job handed back at its verification checkpoint still reflects, once.

A leg stopped (SIGTERM) right after the verification checkpoint resumes with the outcome already
set ("done", verified). Before, the Flow went from that checkpoint straight to the report and the
reflection a verified run makes (learned facts for the knowledge store) never happened. The reflect
stage is saved (``RunState.reflected``), so a leg handed back after it does not reflect again.

Files-only runs (fast): the real Flow resumes a job from the checkpoint in a real job database
(SQLite), and learns into a real knowledge store (Chroma in a temp directory); only the models
are scripted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.knowledge import StoreKnowledge
from taskcrew.crew.models import (
    Citation,
    CriterionCheck,
    Plan,
    PlanStep,
    RunState,
    StepRecord,
    StepReport,
    Verdict,
)
from taskcrew.crew.run import RunResources, RunSettings, run_task
from taskcrew.crew.scripted import ScriptedLLM
from taskcrew.crew.trace import read_trace
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreCheckpoints
from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
from taskcrew.tools.human import ScriptedHuman

TASK = "What did Contoso send us about CO-55120?"
CRITERION = "The answer names the document Contoso sent about CO-55120, as in the file"
FACT = "Contoso sends credit memos as e-mail attachments."


def _verified_state(reflected: bool = False) -> RunState:
    """The state saved at "verify:1" of a run whose work was done and verified."""
    plan = Plan(
        goal="Explain what Contoso sent about CO-55120",
        success_criteria=[CRITERION],
        steps=[PlanStep(role="file_reader", title="Read the documents", instructions="Read.")],
        changes_data=False,
    )
    report = StepReport(
        status="done",
        summary="Contoso issued credit memo CN-104 for 150.00 USD against CO-55120.",
        sources=[Citation(source="memo.eml", quote="issued credit memo CN-104")],
    )
    verdict = Verdict(
        verified=True,
        checks=[CriterionCheck(criterion=CRITERION, met=True, source="memo.eml", observed="CN-104")],
        reason="The file shows credit memo CN-104.",
    )
    return RunState(
        task=TASK,
        plan=plan,
        plan_version=1,
        steps_done=[StepRecord(index=0, role="file_reader", title="Read the documents", report=report)],
        verify_attempts=1,
        verdicts=[verdict],
        claim="done",
        outcome="done",
        outcome_reason=verdict.reason,
        reflected=reflected,
    )


def _job(tmp_path: Path, state: RunState, stage: str) -> tuple[Jobs, StoreCheckpoints]:
    """A job whose leg, handed back, saved ``state`` at ``stage``; the checkpoints of its next leg."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit(TASK, submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    assert jobs.save_checkpoint(job.id, {"stage": stage, "state": state.model_dump(mode="json")})
    return jobs, StoreCheckpoints(jobs, job.id, "w1")


def _resume(tmp_path: Path, checkpoints: StoreCheckpoints, worker: ScriptedLLM, store: KnowledgeStore) -> Any:
    settings = RunSettings(
        task=TASK,
        worker_model="scripted/w",
        verifier_model="scripted/v",
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp_path / "runs",
        submitted_by="ana",  # the job's submitter (jobs/runner.py): the facts are not hers to accept alone
    )
    models = {"w": worker, "v": ScriptedLLM({}, model="scripted/v")}
    res = RunResources(human=ScriptedHuman(), knowledge=StoreKnowledge(store), scripted=models.__getitem__)
    res.checkpoints = checkpoints
    return run_task(settings, res)


def test_a_run_resumed_from_its_verification_checkpoint_reflects_and_saves_that(
    tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    worker = ScriptedLLM({"reflector": [f'{{"facts": ["{FACT}"]}}']}, model="scripted/w")
    jobs, checkpoints = _job(tmp_path, _verified_state(), "verify:1")

    result = _resume(tmp_path, checkpoints, worker, knowledge_store)

    assert result.outcome == "done", result.reason
    worker.assert_complete()  # before: the reflector was never asked
    assert [f.text for f in knowledge_store.facts.all()] == [FACT]
    # the legs before read an e-mail, and this leg's tracer knows none of it: nothing says the run
    # read only trusted text, so what it learned waits for a person (before: stored "accepted")
    assert [(f.status, f.submitted_by) for f in knowledge_store.facts.all()] == [("proposed", "ana")]
    assert result.state.learned == [FACT] and result.state.reflected
    kinds = [e.kind for e in read_trace(result.run_dir / "trace.jsonl")]
    assert "reflection" in kinds, kinds
    saved = jobs.checkpoint(checkpoints.job_id)
    assert saved is not None and saved["stage"] == "reflect" and saved["state"]["reflected"]


def test_a_run_resumed_after_it_reflected_does_not_reflect_again(
    tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    worker = ScriptedLLM({}, model="scripted/w")  # a reflector call would find no script
    _jobs, checkpoints = _job(tmp_path, _verified_state(reflected=True), "reflect")

    result = _resume(tmp_path, checkpoints, worker, knowledge_store)

    assert result.outcome == "done", result.reason
    assert knowledge_store.facts.all() == [] and worker.calls == []
    assert "reflection" not in [e.kind for e in read_trace(result.run_dir / "trace.jsonl")]


def test_what_the_legs_before_read_is_kept_and_decides_whether_a_resumed_run_s_facts_wait_for_a_person(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    """``RunState.read_from`` is saved with each checkpoint: a fact learned after a resume is
    judged by every tool the run called, in every leg."""
    for read, status in ((["read_file", "search_files"], "proposed"), (["compute_due_date"], "accepted")):
        store_dir = tmp_path / status
        worker = ScriptedLLM({"reflector": [f'{{"facts": ["{FACT}"]}}']}, model="scripted/w")
        state = _verified_state().model_copy(update={"read_from": read})
        jobs, checkpoints = _job(store_dir, state, "verify:1")
        store = KnowledgeStore(store_dir / "knowledge", knowledge_embedder)
        result = _resume(store_dir, checkpoints, worker, store)
        assert result.outcome == "done", result.reason
        assert [(f.text, f.status) for f in store.facts.all()] == [(FACT, status)]
        saved = jobs.checkpoint(checkpoints.job_id)
        assert saved is not None and saved["state"]["read_from"] == sorted(read)
