"""One run, end to end: build the run context from settings, run the Flow, return the result."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from crewai.llms.base_llm import BaseLLM
from pydantic import BaseModel, Field

from taskcrew.background import warnings_to
from taskcrew.crew.changes import Snapshot, pages_to_watch
from taskcrew.crew.context import Knowledge, RunContext, RunLimits
from taskcrew.crew.flow import TaskFlow
from taskcrew.crew.llm import TracedLLM, build_provider_llm, text_ask
from taskcrew.crew.models import Outcome, RunState
from taskcrew.crew.modelspec import ModelSpec, choose_models, load_prices
from taskcrew.crew.provenance import SourcedHuman, field_origins
from taskcrew.crew.steps import finish
from taskcrew.crew.stopping import RunInterrupted, RunStopped, call_interruptibly, stop_signals
from taskcrew.crew.toolbox import System, Toolbox
from taskcrew.crew.trace import (
    RunStarted,
    SubmissionEvent,
    Tracer,
    WarningEvent,
    decision_event,
)
from taskcrew.roles import load_roles
from taskcrew.routines import hooks as routines
from taskcrew.tools.prompt_input import NoAnswer


class RunSettings(BaseModel):
    task: str = Field(min_length=3)
    worker_model: str | None = None
    verifier_model: str | None = None
    allow_same_verifier: bool = False
    sandbox: Path
    runs_dir: Path
    systems: list[System] = Field(default_factory=list)
    limits: RunLimits = Field(default_factory=RunLimits)
    criteria: list[str] = Field(default_factory=list, description="success criteria every plan keeps")
    read_only: bool = Field(default=False, description="the request changes nothing: every change is refused")
    submitted_by: str | None = Field(default=None, description="the proven identity that asked for the run")
    task_origin: str | None = Field(
        default=None,
        description="where the task's words came from when its submitter did not type them (a batch "
        "child: the batch planner's words from the inbox); what the run learns counts them as untrusted",
    )
    today: date = Field(default_factory=date.today, description="the date the crew is told it is")


class RunResult(BaseModel):
    outcome: Outcome
    reason: str
    answer: str
    run_dir: Path
    report: Path
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None
    seconds: float
    steps: int
    verify_attempts: int
    state: RunState


def slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].rstrip("-") or "task"


def new_run_dir(runs_dir: Path, task: str) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    runs_dir.mkdir(parents=True, exist_ok=True)
    suffix = 1
    while True:  # mkdir claims the name atomically: runs started in the same second by other workers
        path = runs_dir / (f"{stamp}-{slug(task)}" + (f"-{suffix}" if suffix > 1 else ""))
        try:
            path.mkdir()
            return path
        except FileExistsError:
            suffix += 1


ScriptedFactory = Callable[[str], BaseLLM]


@dataclass
class RunResources:
    """What a run uses besides its settings (built by the Workplace; tests may build their own)."""

    human: Any
    redact: Callable[[str], str] = lambda s: s
    knowledge: Knowledge | None = None
    knowledge_tools: list[Any] = field(default_factory=list)
    browser: Any = None  # RunBrowser; None for a files-only run
    research_tools: list[Any] = field(default_factory=list)
    fetch_text: Callable[[str], str | None] | None = None
    decisions: Any = None  # DecisionLog: policy decisions and approvals go into the trace
    scripted: ScriptedFactory | None = None
    listeners: list[Callable[[Any], None]] = field(default_factory=list)
    checkpoints: Any = None  # crew.stages.Checkpoints: a durable run saves and resumes its stages
    wrap_model: Callable[[str, Any], Any] | None = (
        None  # (model, provider LLM) -> LLM; e.g. shared 429 backoff
    )
    on_run_dir: Callable[[Path], None] | None = None  # told the run folder as soon as it exists
    # told the run's file reader (tools.documents.SandboxFiles) once made: a job's approvals seal
    # the bytes the run read (jobs.human.JobHuman.read_digest)
    on_files: Callable[[Any], None] | None = None
    readback: Any = None  # tools.readback.ReadBackRules: which pages show the run's changes
    check_stop: Callable[[], None] | None = None  # raises to stop a model call that is waiting


def build_context(
    settings: RunSettings, res: RunResources, *, worker: ModelSpec, verifier: ModelSpec
) -> RunContext:
    run_dir = new_run_dir(settings.runs_dir, settings.task)
    if res.on_run_dir is not None:
        res.on_run_dir(run_dir)
    tracer = Tracer(run_dir / "trace.jsonl", redact=res.redact, listeners=res.listeners)
    prices = load_prices()
    notes: list[str] = []
    toolbox = Toolbox(
        sandbox=settings.sandbox,
        human=res.human,
        notes=notes,
        systems=settings.systems,
        knowledge_tools=res.knowledge_tools,
        browser=res.browser,
        research_tools=res.research_tools,
        fetch_text=res.fetch_text,
        today=settings.today,
    )
    if res.decisions is not None:
        res.decisions.listeners.append(lambda decision: tracer.emit(decision_event(decision)))
    ctx = RunContext(
        run_id=run_dir.name,
        run_dir=run_dir,
        task=settings.task,
        roles=load_roles(),
        worker_llm=_traced(worker, res, prices),
        verifier_llm=_traced(verifier, res, prices),
        toolbox=toolbox,
        human=res.human,
        knowledge=res.knowledge,
        tracer=tracer,
        limits=settings.limits,
        redact=res.redact,
        notes=notes,
        criteria=settings.criteria,
        read_only=settings.read_only,
        checkpoints=res.checkpoints,
        submitted_by=settings.submitted_by,
        task_origin=settings.task_origin,
    )
    ctx.worker_llm.on_call = ctx.verifier_llm.on_call = ctx.record_llm_call
    if os.environ.get("TASKCREW_RERANK", "").strip().lower() not in ("", "0", "false", "no", "off"):
        # knowledge/rerank.py; its calls are counted in the run's usage and cost
        ask = text_ask(ctx.worker_llm.for_role("reranker"))
        for searcher in (res.knowledge, *res.knowledge_tools):  # the planner's brief, the agents' tool
            if hasattr(searcher, "rerank_with"):
                searcher.rerank_with(ask)
    ctx.submissions.listeners.append(lambda sent: tracer.emit(SubmissionEvent(submission=sent)))
    if res.browser is not None:  # the gate tells the run what each submission came to
        res.browser.policy.submissions = ctx.submissions
        ctx.intents = getattr(res.browser.policy, "intents", None)
        rules = res.readback if res.readback is not None else getattr(ctx.intents, "rules", None)
        if rules is not None and (pages := pages_to_watch(rules)):
            ctx.snapshot = Snapshot(pages)
            res.browser.policy.before_change = ctx.snapshot.take  # read just before the first change
    if res.on_files is not None:
        res.on_files(toolbox.files)
    if isinstance(res.human, SourcedHuman):
        res.human.explain = lambda fields: field_origins(
            fields,
            [(e.index + 1, e.role, e.report) for e in tracer.of_kind("step")],
            toolbox.source_text,
            settings.task,
            reveal=ctx.reveal,  # a quote is compared as the page held it
        )
    tracer.emit(
        RunStarted(
            task=settings.task,
            worker_model=worker.raw,
            verifier_model=verifier.raw,
            settings={"sandbox": str(settings.sandbox), **{s.name: s.url for s in settings.systems}},
        )
    )
    return ctx


def run_task(settings: RunSettings, res: RunResources) -> RunResult:
    """Run one task through the Flow and return its result (the report is in the run folder)."""
    models = choose_models(
        settings.worker_model, settings.verifier_model, allow_same=settings.allow_same_verifier
    )
    ctx = build_context(settings, res, worker=models.worker, verifier=models.verifier)
    attached = routines.attach(ctx, settings.sandbox, settings.read_only)
    flow = TaskFlow(ctx=ctx)
    quiet = warnings_to(lambda text: ctx.tracer.emit(WarningEvent(text=text)))
    quiet.__enter__()  # background threads' errors go to this run's trace, never to the terminal

    def stop(cause: str) -> tuple[Outcome, str]:
        """The run is stopped (``cause``): sealed at once (``Seal.stop``), before the Flow's thread
        runs on — nothing it writes after this is in the account, whose ending is this one."""
        ending: tuple[Outcome, str] = ctx.seal.stop(
            (
                "interrupted",
                f"{cause} after {len(flow.state.steps_done)} finished step(s) and {ctx.usage.calls} "
                "model call(s); see the trace for what was done",
            )
        )
        return ending

    def signalled(name: str) -> None:
        stop(f"stopped by {name}")

    taken: RunStopped | None = None  # its job was cancelled or taken over: raised again once finished
    try:
        try:  # the main thread stays free for SIGINT/SIGTERM; a signal seals the stop in its handler
            call_interruptibly(flow.kickoff, stop_signals(), on_signal=signalled)
        except (RunInterrupted, NoAnswer) as stopped:  # an interrupt too ends in a report of what was done
            # A prompt nobody answered (a stop, the input closed) is no decision: the run is stopped,
            # as by a signal. The Flow's thread is abandoned, not stopped: it must send nothing more,
            # or the report written now would miss it (finish() waits for the browser's step in
            # flight), and what it writes once its call in flight returns is a no-op (the stop).
            cause = (
                f"stopped by {stopped.signal_name}"
                if isinstance(stopped, RunInterrupted)
                else f"stopped: {_first_clause(stopped.why)}"
            )
            stop(cause)
            ctx.toolbox.halt(f"the run was {cause}")
            try:
                finish(ctx, flow.state)  # as the stop says
            except KeyboardInterrupt:  # a second Ctrl-C: the same ending, now, without the browser
                finish(ctx, flow.state, at_once=True)
                raise
        except RunStopped as stopped:  # its job is no longer its own: it ends as an interrupt does, in
            # a report of what was done (what it sent included), before its job's runner is told
            if not stopped.ends_run:
                raise
            taken = stopped
            stop(f"stopped: {stopped}")
            ctx.toolbox.halt(f"the run was stopped: {stopped}")
            finish(ctx, flow.state)
        except Exception as exc:  # a crash still ends in an honest report, never in silence
            finish(ctx, flow.state, ending=("error", f"the run crashed: {type(exc).__name__}: {exc}"))
        # the account that stands: the first one finished (normally the Flow's own, in its last
        # stage), never rewritten; this is what is returned and recorded (a job's row)
        state = finish(ctx, flow.state)
    finally:
        ctx.toolbox.close()
        quiet.__exit__(None, None, None)
    routines.after_run(ctx, state, attached)
    result = RunResult(
        outcome=state.outcome or "error",
        reason=state.outcome_reason,
        answer=state.answer,
        run_dir=ctx.run_dir,
        report=ctx.run_dir / "report.md",
        llm_calls=ctx.usage.calls,
        input_tokens=ctx.usage.input_tokens,
        output_tokens=ctx.usage.output_tokens,
        cost_usd=ctx.usage.cost_usd,
        seconds=ctx.elapsed(),
        steps=len(state.steps_done),
        verify_attempts=state.verify_attempts,
        state=state,
    )
    if taken is not None:
        taken.result = result
        raise taken
    return result


def _first_clause(text: str) -> str:
    """The first sentence of ``text``, without its full stop."""
    return text.split(". ")[0].rstrip(".")


def _traced(spec: ModelSpec, res: RunResources, prices: dict[str, Any]) -> TracedLLM:
    inner = build_provider_llm(spec, res.scripted)
    if res.wrap_model is not None:
        inner = res.wrap_model(spec.raw, inner)
    return TracedLLM(model=spec.raw, inner=inner, spec=spec, prices=prices, check_stop=res.check_stop)
