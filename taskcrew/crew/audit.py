"""Audit mode: the verifier alone, read-only, checks a claim or a past run against the real systems."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from taskcrew.crew import steps
from taskcrew.crew.errors import AuditError
from taskcrew.crew.models import Outcome, Plan, PlanStep, RunState, Verdict
from taskcrew.crew.modelspec import verifier_spec
from taskcrew.crew.outcome import Facts
from taskcrew.crew.run import RunResources, RunSettings, build_context
from taskcrew.crew.runner import AgentTaskError
from taskcrew.crew.stopping import RunInterrupted, call_interruptibly
from taskcrew.crew.trace import PlanMade, RunStarted, SubmissionEvent, read_trace
from taskcrew.eval.runs import DEMO, RunRecords


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


class RunCriteria(list[str]):
    """A past run's success criteria, the run folder they came from and what that run sent
    (``sends``, read with them: ``sends_of_run``): its audit is shown them under that run's name.
    ``unsealed``: an older run's, whose files were not checked (its job ended before seals)."""

    def __init__(self, criteria: list[str], run_dir: Path, sends: dict[str, str], unsealed: bool) -> None:
        super().__init__(criteria)
        self.run_dir = run_dir
        self.sends = sends
        self.unsealed = unsealed  # an older run's: its job ended before run folders were sealed


def criteria_from_run(run_dir: Path, jobs: Any = None) -> tuple[str, RunCriteria]:
    """The task and the success criteria the planner wrote for a past run, and what it sent, read
    from its folder once and then held to its job's signed record as every surface holds a run
    folder (``eval.runs.RunRecords.of``: the seal made as its job ended, or the task of a record
    from before seals; ``jobs``: the job store, default the CLI's). A run folder's files are not
    signed: an audit of criteria edited after the run ended would "verify" what the run never
    claimed. So a folder changed since its run ended, or that no signed job record names (a demo's
    or an eval's run, a run of another job database, an earlier leg of a retried job), is refused:
    its criteria can still be audited as a claim, by their text."""
    trace = run_dir / "trace.jsonl"
    if not trace.is_file():
        raise AuditError(f"{run_dir} is not a run folder (no trace.jsonl); see `taskcrew runs list`")
    events = read_trace(trace)  # first: a change made after this read is told by the check below
    task = next((e.task for e in events if isinstance(e, RunStarted)), "")
    plans = [e.plan for e in events if isinstance(e, PlanMade)]
    record = RunRecords.read(jobs, run_dir).of(run_dir)
    instead = 'To check criteria anyway, give them as a claim, one per line: `taskcrew audit "<criterion>"`'
    if record.jobs and record.altered:
        raise AuditError(
            f"run {run_dir.name} cannot be audited: {record.altered}, so its success criteria and what "
            f"it sent are not the run's own. {instead} (`taskcrew runs show {run_dir.name}` shows what "
            "its job's signed record says)"
        )
    if not record.jobs:
        said = "; ".join(plans[-1].success_criteria) if plans else ""
        listed = f" Its trace lists, unvouched: {said}." if said else ""
        raise AuditError(
            f"run {run_dir.name} cannot be audited: nothing vouches that its folder is its run's own "
            f"({DEMO if record.demo else record.unvouched}), and anyone who can "
            f"write the runs folder can change its success criteria.{listed} {instead}"
        )
    if not plans:
        raise AuditError(f"run {run_dir.name} never made a plan, so it has no success criteria to audit")
    sends = sends_of_run(run_dir, events)
    return task, RunCriteria(plans[-1].success_criteria, run_dir, sends, record.unsealed)


def sends_of_run(run_dir: Path, events: list[Any]) -> dict[str, str]:
    """What a past run sent, as its trace recorded it (``events``), as a source named after that
    run. It is evidence of what that run sent and what the system answered then, never of what a
    system holds now: to the evidence check it is no system's page, so a criterion about a system's
    state cited on it is rejected (an audit's criteria are checked on the systems' own pages)."""
    sent = [e.submission for e in events if isinstance(e, SubmissionEvent)]
    head = (
        f"What run {run_dir.name} sent, as its trace recorded it: every data-changing submission that "
        "left its browser, with the system's answer then. It says what that run sent, not what any "
        "system holds now."
    )
    record = Facts(submissions=sent).record().splitlines()
    if record and "this run" in record[0]:  # the gate's head, written for a run's own verifier
        record = record[1:]
    return {f"sends of run {run_dir.name}": "\n".join([head, *record])}


def run_audit(settings: RunSettings, res: RunResources, criteria: list[str]) -> AuditResult:
    """The verifier alone checks ``criteria`` (a past run's, ``RunCriteria``, or a claim's) on the
    systems. The audit sends nothing and so has no record of sends of its own to cite
    (``steps.recorded_by_code``); an audited past run's sends are shown under that run's name."""
    spec = verifier_spec(settings.verifier_model)
    ctx = build_context(settings, res, worker=spec, verifier=spec)
    given = criteria.sends if isinstance(criteria, RunCriteria) else None
    state = RunState(
        task=settings.task,
        mode="audit",
        plan=Plan(
            goal=f"Audit: {settings.task}",
            success_criteria=list(criteria),
            steps=[PlanStep(role="file_reader", title="audit only: nothing is changed", instructions="none")],
            changes_data=False,
        ),
        claim="done",
        verify_attempts=1,
    )

    def judge() -> None:  # on a worker thread; abandoned at a signal, its late verdict is a no-op
        verdict = steps.verify(ctx, state, given)
        with steps.account_open(ctx):
            if steps.take_verdict(ctx, state, verdict):
                state.outcome = "done" if verdict.verified else "not_verified"
                state.outcome_reason = verdict.reason

    ending: tuple[Outcome, str] | None = None
    try:
        call_interruptibly(judge)  # the main thread hears Ctrl-C
    except AgentTaskError as exc:
        ending = ("error", str(exc))  # "Verifier could not finish: …"
    except RunInterrupted as stop:  # the verifier's thread is abandoned; the report says no verdict
        ending = ("interrupted", f"stopped by {stop.signal_name} before the verifier gave a verdict")
    finally:
        try:
            account = steps.finish(ctx, state, ending)
        finally:
            ctx.toolbox.close()
    return AuditResult(
        verified=account.outcome == "done",
        verdict=account.verdicts[-1] if account.verdicts else None,
        interrupted=account.outcome == "interrupted",
        reason=account.outcome_reason,
        criteria=list(criteria),
        run_dir=ctx.run_dir,
        report=ctx.run_dir / "report.md",
    )
