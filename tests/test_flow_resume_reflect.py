"""A job handed back at its verification checkpoint still reflects, once.

A leg stopped (SIGTERM) right after the verification checkpoint resumes with the outcome already
set ("done", verified). Before, the Flow went from that checkpoint straight to the report and the
reflection a verified run makes (learned facts for the knowledge store) never happened. The reflect
stage is saved (``RunState.reflected``), so a leg handed back after it does not reflect again.

Files-only runs (fast): the real Flow restores a checkpointed state directly; models are scripted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.context import KnowledgeContext
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
from taskcrew.tools.human import ScriptedHuman

TASK = "What did Contoso send us about CO-55120?"
CRITERION = "The answer names the document Contoso sent about CO-55120, as in the file"
FACT = "Contoso sends credit memos as e-mail attachments."


class Knowledge:
    """The knowledge store as the crew sees it (``crew.context.Knowledge``): what it was taught."""

    def __init__(self) -> None:
        self.learned: list[list[str]] = []

    def context_for(self, task: str) -> KnowledgeContext:
        return KnowledgeContext()

    def known_facts(self) -> list[str]:
        return []

    def learn(self, facts: list[str], verdict: Any, sources: list[str] | None = None) -> list[str]:
        assert verdict.verified
        self.learned.append(list(facts))
        return list(facts)


class Checkpoints:
    """A durable job's checkpoint sink (``crew.stages``) holding the state a handed-back leg saved."""

    def __init__(self, state: RunState, stage: str) -> None:
        self.last: dict[str, Any] = {"stage": stage, "state": state.model_dump(mode="json")}
        self.saved: list[dict[str, Any]] = []

    def load(self) -> dict[str, Any] | None:
        return self.last

    def save(self, stage: str, state: dict[str, Any]) -> None:
        self.saved.append(state)


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


def _resume(tmp_path: Path, checkpoints: Checkpoints, worker: ScriptedLLM, knowledge: Knowledge):
    settings = RunSettings(
        task=TASK,
        worker_model="scripted/w",
        verifier_model="scripted/v",
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp_path / "runs",
    )
    models = {"w": worker, "v": ScriptedLLM({}, model="scripted/v")}
    res = RunResources(human=ScriptedHuman(), knowledge=knowledge, scripted=models.__getitem__)
    res.checkpoints = checkpoints
    return run_task(settings, res)


def test_a_run_resumed_from_its_verification_checkpoint_reflects_and_saves_that(tmp_path: Path) -> None:
    worker = ScriptedLLM({"reflector": [f'{{"facts": ["{FACT}"]}}']}, model="scripted/w")
    knowledge = Knowledge()
    checkpoints = Checkpoints(_verified_state(), "verify:1")

    result = _resume(tmp_path, checkpoints, worker, knowledge)

    assert result.outcome == "done", result.reason
    worker.assert_complete()  # before: the reflector was never asked
    assert knowledge.learned == [[FACT]]
    assert result.state.learned == [FACT] and result.state.reflected
    kinds = [e.kind for e in read_trace(result.run_dir / "trace.jsonl")]
    assert "reflection" in kinds, kinds
    assert [s["state"]["reflected"] for s in checkpoints.saved] == [True]  # saved with the reflection


def test_a_run_resumed_after_it_reflected_does_not_reflect_again(tmp_path: Path) -> None:
    worker = ScriptedLLM({}, model="scripted/w")  # a reflector call would find no script
    knowledge = Knowledge()
    checkpoints = Checkpoints(_verified_state(reflected=True), "reflect")

    result = _resume(tmp_path, checkpoints, worker, knowledge)

    assert result.outcome == "done", result.reason
    assert knowledge.learned == [] and worker.calls == []
    assert "reflection" not in [e.kind for e in read_trace(result.run_dir / "trace.jsonl")]
