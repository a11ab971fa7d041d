"""trace.jsonl: one typed event per line, secrets redacted before anything touches the disk."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from taskcrew.crew.models import LlmCall, Plan, StepReport, Verdict
from taskcrew.tools.submissions import SubmissionResult


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Event(BaseModel):
    at: str = Field(default_factory=_now)


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    task: str
    worker_model: str
    verifier_model: str
    settings: dict[str, str] = Field(default_factory=dict)


class KnowledgeUsed(_Event):
    kind: Literal["knowledge"] = "knowledge"
    snippets: list[str]
    procedures: int = 0  # how many of the snippets are document passages (the rest: accepted facts)


class PlanMade(_Event):
    kind: Literal["plan"] = "plan"
    plan: Plan
    replan: int = 0
    reason: str = ""


class LlmCallEvent(_Event):
    kind: Literal["llm_call"] = "llm_call"
    call: LlmCall
    step: int | None = None


class ToolCallEvent(_Event):
    kind: Literal["tool_call"] = "tool_call"
    role: str
    step: int | None
    tool: str
    args: dict[str, Any]
    ok: bool
    result: str
    seconds: float
    warning: str = ""


class PolicyEvent(_Event):
    kind: Literal["policy"] = "policy"
    decision: str
    detail: dict[str, Any] = Field(default_factory=dict)


class ApprovalEvent(_Event):
    kind: Literal["approval"] = "approval"
    question: str
    payload: dict[str, Any] = Field(default_factory=dict)
    answer: str
    note: str = ""
    flags: dict[str, str] = Field(default_factory=dict)  # field -> what the approver was warned of
    by: str = ""  # who or what decided: a named person, a rule, --auto-approve

    def decided(self) -> str:
        """The decision and who or what made it, as every place that shows an approval says it:
        "approved by ana", "approved by --auto-approve (nobody was asked)"."""
        return f"{self.answer} by {self.approver}"

    @property
    def approver(self) -> str:
        return self.by or "the person asked"


class SubmissionEvent(_Event):
    """A data-changing submission and whether the system applied it (tools/submissions.py)."""

    kind: Literal["submission"] = "submission"
    submission: SubmissionResult


class WarningEvent(_Event):
    """Something that failed on a background thread (a proxy, a server): for the trace, not the screen."""

    kind: Literal["warning"] = "warning"
    where: str = "background"
    text: str


class StepEvent(_Event):
    kind: Literal["step"] = "step"
    index: int
    role: str
    title: str
    attempt: int
    report: StepReport


class ControlEvent(_Event):
    """A decision the orchestration code made: replan, ask the human, budget exhausted, ..."""

    kind: Literal["control"] = "control"
    action: str
    reason: str


class VerdictEvent(_Event):
    kind: Literal["verdict"] = "verdict"
    attempt: int
    verdict: Verdict


class ReflectionEvent(_Event):
    kind: Literal["reflection"] = "reflection"
    facts: list[str]
    stored: list[str] = Field(default_factory=list)


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    outcome: str
    reason: str
    changed: str = ""  # what changed in the systems, in one line (crew/outcome.py)
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None
    seconds: float


TraceEvent = Annotated[
    RunStarted
    | KnowledgeUsed
    | PlanMade
    | LlmCallEvent
    | ToolCallEvent
    | PolicyEvent
    | ApprovalEvent
    | SubmissionEvent
    | WarningEvent
    | StepEvent
    | ControlEvent
    | VerdictEvent
    | ReflectionEvent
    | RunFinished,
    Field(discriminator="kind"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(TraceEvent)


def _redact_tree(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_tree(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_tree(v, redact) for v in value]
    return value


class Tracer:
    """Appends events to trace.jsonl (thread-safe) and keeps them in memory for the report.

    A run's trace ends with its ``run_finished``: nothing is taken after it (a thread abandoned at an
    interrupt, whose call in flight returns late, adds no line to the folder its job sealed as the
    run ended: ``jobs.runseal``)."""

    def __init__(
        self,
        path: Path,
        redact: Callable[[str], str] = lambda s: s,
        listeners: list[Callable[[Any], None]] | None = None,
    ) -> None:
        self.path = path
        self.redact = redact
        self.listeners = listeners or []
        self.events: list[Any] = []
        self._lock = threading.Lock()
        self._ended = False  # its run_finished is written: the trace takes no more
        path.parent.mkdir(parents=True, exist_ok=True)

    def emit(self, event: _Event) -> None:
        data = _redact_tree(event.model_dump(mode="json"), self.redact)
        clean = _ADAPTER.validate_python(data)
        line = json.dumps(data, ensure_ascii=False)
        with self._lock:
            if self._ended:
                return
            self.events.append(clean)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
            self._ended = isinstance(clean, RunFinished)
        for listener in self.listeners:
            with suppress(OSError):  # a terminal that hung up (EIO) shows no more; the trace has it all
                listener(clean)

    def of_kind(self, kind: str) -> list[Any]:
        with self._lock:
            return [e for e in self.events if e.kind == kind]


def read_trace(path: Path) -> list[Any]:
    return [_ADAPTER.validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def decision_event(decision: Any) -> _Event:
    """A policy decision (taskcrew.tools.policy.PolicyDecision) as a trace event."""
    from taskcrew.tools.policy import is_token_field

    fields = {f.name: f.value for f in decision.fields if not is_token_field(f.name)}
    if decision.outcome in ("approved", "rejected"):
        return ApprovalEvent(
            question=f"{decision.method} {decision.url}",
            payload=fields,
            answer=decision.outcome,
            note=decision.answer or "",
            flags={f.name: f.note for f in decision.fields if getattr(f, "note", None)},
            by=decision.approved_by or "",
        )
    detail = {
        "kind": decision.kind,
        "method": decision.method,
        "url": decision.url,
        "reason": decision.reason,
    }
    return PolicyEvent(decision=decision.outcome, detail=detail)
