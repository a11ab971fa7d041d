"""One run, end to end: build the run context from settings, run the Flow, return the result."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from crewai.llms.base_llm import BaseLLM
from pydantic import BaseModel, Field

from taskcrew.crew.context import Knowledge, RunContext, RunLimits
from taskcrew.crew.flow import TaskFlow
from taskcrew.crew.llm import ModelSpec, TracedLLM, build_provider_llm, choose_models, load_prices
from taskcrew.crew.models import Outcome, RunState
from taskcrew.crew.toolbox import System, Toolbox
from taskcrew.crew.trace import RunStarted, Tracer, decision_event
from taskcrew.roles import load_roles


class RunSettings(BaseModel):
    task: str = Field(min_length=3)
    worker_model: str | None = None
    verifier_model: str | None = None
    allow_same_verifier: bool = False
    sandbox: Path
    runs_dir: Path
    systems: list[System] = Field(default_factory=list)
    limits: RunLimits = Field(default_factory=RunLimits)


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
    path = runs_dir / f"{stamp}-{slug(task)}"
    suffix = 1
    while path.exists():
        suffix += 1
        path = runs_dir / f"{stamp}-{slug(task)}-{suffix}"
    path.mkdir(parents=True)
    return path


ScriptedFactory = Callable[[str], BaseLLM]


def run_task(
    settings: RunSettings,
    *,
    human: Any,
    redact: Callable[[str], str] = lambda s: s,
    knowledge: Knowledge | None = None,
    knowledge_tools: list[Any] | None = None,
    browser: Any = None,
    research_tools: list[Any] | None = None,
    fetch_text: Callable[[str], str | None] | None = None,
    decisions: Any = None,
    scripted: ScriptedFactory | None = None,
    listeners: list[Callable[[Any], None]] | None = None,
) -> RunResult:
    """Run one task. ``browser`` is the run's RunBrowser (None: a files-only run); ``decisions``
    its DecisionLog, whose policy decisions and approvals go into the trace."""
    models = choose_models(
        settings.worker_model, settings.verifier_model, allow_same=settings.allow_same_verifier
    )
    run_dir = new_run_dir(settings.runs_dir, settings.task)
    tracer = Tracer(run_dir / "trace.jsonl", redact=redact, listeners=listeners or [])
    prices = load_prices()
    worker = _traced(models.worker, scripted, prices)
    verifier = _traced(models.verifier, scripted, prices)
    notes: list[str] = []
    toolbox = Toolbox(
        sandbox=settings.sandbox,
        human=human,
        notes=notes,
        systems=settings.systems,
        knowledge_tools=knowledge_tools,
        browser=browser,
        research_tools=research_tools,
        fetch_text=fetch_text,
    )
    if decisions is not None:
        decisions.listeners.append(lambda decision: tracer.emit(decision_event(decision)))
    ctx = RunContext(
        run_id=run_dir.name or uuid.uuid4().hex,
        run_dir=run_dir,
        task=settings.task,
        roles=load_roles(),
        worker_llm=worker,
        verifier_llm=verifier,
        toolbox=toolbox,
        human=human,
        knowledge=knowledge,
        tracer=tracer,
        limits=settings.limits,
        redact=redact,
        notes=notes,
    )
    worker.on_call = verifier.on_call = ctx.record_llm_call
    tracer.emit(
        RunStarted(
            task=settings.task,
            worker_model=models.worker.raw,
            verifier_model=models.verifier.raw,
            settings={"sandbox": str(settings.sandbox), **{s.name: s.url for s in settings.systems}},
        )
    )
    flow = TaskFlow(ctx=ctx)
    try:
        flow.kickoff()
    finally:
        toolbox.close()
    state = flow.state
    return RunResult(
        outcome=state.outcome or "error",
        reason=state.outcome_reason,
        answer=state.answer,
        run_dir=run_dir,
        report=run_dir / "report.md",
        llm_calls=ctx.usage.calls,
        input_tokens=ctx.usage.input_tokens,
        output_tokens=ctx.usage.output_tokens,
        cost_usd=ctx.usage.cost_usd,
        seconds=ctx.elapsed(),
        steps=len(state.steps_done),
        verify_attempts=state.verify_attempts,
        state=state,
    )


def _traced(spec: ModelSpec, scripted: ScriptedFactory | None, prices: dict[str, Any]) -> TracedLLM:
    return TracedLLM(model=spec.raw, inner=build_provider_llm(spec, scripted), spec=spec, prices=prices)
