"""Audit mode: the verifier alone, read-only, checks a claim or a past run against the real systems."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from taskcrew.crew import steps
from taskcrew.crew.errors import AuditError
from taskcrew.crew.models import Plan, PlanStep, RunState, Verdict
from taskcrew.crew.modelspec import verifier_spec
from taskcrew.crew.run import RunResources, RunSettings, build_context
from taskcrew.crew.runner import AgentTaskError
from taskcrew.crew.stopping import RunInterrupted, call_interruptibly
from taskcrew.crew.trace import ControlEvent, PlanMade, RunStarted, read_trace


class AuditResult(BaseModel):
    verified: bool
    verdict: Verdict | None
    reason: str
    interrupted: bool = False  # stopped by SIGINT/SIGTERM before a verdict
    criteria: list[str]
    run_dir: Path
    report: Path


def criteria_from_claim(claim: str) -> list[str]:
    """One criterion per line or bullet; a single sentence is one criterion."""
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip() for line in claim.splitlines()]
    criteria = [line for line in lines if line]
    if not criteria:
        raise AuditError("nothing to audit: give a claim or success criteria, or --run with a run folder")
    return criteria[:8]


def criteria_from_run(run_dir: Path) -> tuple[str, list[str]]:
    """The task and the success criteria the planner wrote for a past run."""
    trace = run_dir / "trace.jsonl"
    if not trace.is_file():
        raise AuditError(f"{run_dir} is not a run folder (no trace.jsonl); see `taskcrew runs list`")
    events = read_trace(trace)
    task = next((e.task for e in events if isinstance(e, RunStarted)), "")
    plans = [e.plan for e in events if isinstance(e, PlanMade)]
    if not plans:
        raise AuditError(f"run {run_dir.name} never made a plan, so it has no success criteria to audit")
    return task, plans[-1].success_criteria


def run_audit(settings: RunSettings, res: RunResources, criteria: list[str]) -> AuditResult:
    spec = verifier_spec(settings.verifier_model)
    ctx = build_context(settings, res, worker=spec, verifier=spec)
    state = RunState(
        task=settings.task,
        mode="audit",
        plan=Plan(
            goal=f"Audit: {settings.task}",
            success_criteria=criteria,
            steps=[PlanStep(role="file_reader", title="audit only: nothing is changed", instructions="none")],
            changes_data=False,
        ),
        claim="done",
        verify_attempts=1,
    )
    verdict: Verdict | None = None
    try:
        verdict = call_interruptibly(lambda: steps.verify(ctx, state))  # the main thread hears Ctrl-C
        state.verdicts.append(verdict)
        state.outcome = "done" if verdict.verified else "not_verified"
        state.outcome_reason = verdict.reason
    except AgentTaskError as exc:
        state.outcome, state.outcome_reason = "error", str(exc)  # "Verifier could not finish: …"
    except RunInterrupted as stop:  # the verifier's thread is abandoned; the report says no verdict
        state.outcome = "interrupted"
        state.outcome_reason = f"stopped by {stop.signal_name} before the verifier gave a verdict"
        ctx.tracer.emit(ControlEvent(action="end:interrupted", reason=state.outcome_reason))
    finally:
        steps.finish(ctx, state)
        ctx.toolbox.close()
    return AuditResult(
        verified=state.outcome == "done",
        verdict=verdict,
        interrupted=state.outcome == "interrupted",
        reason=state.outcome_reason,
        criteria=criteria,
        run_dir=ctx.run_dir,
        report=ctx.run_dir / "report.md",
    )
