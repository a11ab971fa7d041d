"""The run context: the one object through which every dependency of a run is injected."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from taskcrew.crew.guard import Budget
from taskcrew.crew.llm import TracedLLM
from taskcrew.crew.models import LlmCall
from taskcrew.crew.outcome import Facts, ReadBack, gather
from taskcrew.crew.stopping import Seal
from taskcrew.crew.toolbox import Toolbox
from taskcrew.crew.trace import LlmCallEvent, Tracer
from taskcrew.roles import RoleName, Roles
from taskcrew.tools.human import Human
from taskcrew.tools.submissions import SubmissionLog


class RunLimits(BaseModel):
    max_steps: int = Field(default=60, ge=1, description="tool calls in the whole run")
    failure_budget: int = Field(default=4, ge=1, description="consecutive failed tool calls before a replan")
    repeat_limit: int = Field(default=3, ge=2)
    max_replans: int = Field(default=2, ge=0)
    max_reworks: int = Field(default=2, ge=0, description="times a failed verification goes back to work")
    repair_attempts: int = Field(default=2, ge=0, description="retries for a malformed final answer")


class KnowledgeContext(BaseModel):
    procedures: list[str] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list, description="sections of the same chapters, not shown")

    def procedures_for(self, tools: set[str]) -> list[str]:
        """The procedures, and the names of related sections with how to read them: a tool is named
        only when ``tools`` (the tools the reader of the prompt, or its workers, really have) has it.
        Each name is a citation in brackets, as a passage's is: no heading can close its bracket
        (``knowledge.models.cite``), so none adds words of its own to the line."""
        if not self.related:
            return list(self.procedures)
        how = " (look them up with search_procedures)" if "search_procedures" in tools else ""
        return [
            *self.procedures,
            f"Other sections of the same chapters, not shown here{how}: "
            + "; ".join(f"[{c}]" for c in self.related),
        ]


class Knowledge(Protocol):
    """What the crew needs from the knowledge store."""

    def context_for(self, task: str) -> KnowledgeContext: ...

    def known_facts(self) -> list[str]: ...

    def learn(self, facts: list[str], verdict: Any, sources: list[str] | None = None) -> list[str]:
        """Store facts; ``verdict`` (verified, run_id, task) must be a verified run's; ``sources``
        (the tools the run read) decide whether they are stored accepted or proposed."""
        ...


@dataclass
class Usage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)
    max_prompt_tokens: int = 0
    by_role: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, call: LlmCall) -> None:
        with self._lock:
            self.calls += 1
            self.input_tokens += call.prompt_tokens
            self.output_tokens += call.output_tokens
            self.max_prompt_tokens = max(self.max_prompt_tokens, call.prompt_tokens)
            self.by_role[call.role] = self.by_role.get(call.role, 0) + 1
            if self.cost_usd is not None:
                self.cost_usd = None if call.cost_usd is None else self.cost_usd + call.cost_usd


@dataclass
class RunContext:
    run_id: str
    run_dir: Path
    task: str
    roles: Roles
    worker_llm: TracedLLM
    verifier_llm: TracedLLM
    toolbox: Toolbox
    human: Human
    knowledge: Knowledge | None
    tracer: Tracer
    limits: RunLimits = field(default_factory=RunLimits)
    redact: Callable[[str], str] = field(default=lambda text: text)
    notes: list[str] = field(default_factory=list)
    criteria: list[str] = field(default_factory=list)  # given by the request; every plan keeps them
    read_only: bool = False
    submitted_by: str | None = None  # who asked for the run: the facts it learns are not hers to accept alone
    task_origin: str | None = None  # set: a task its submitter did not type (a batch child's): untrusted
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)
    checkpoints: Any = None  # crew.stages.Checkpoints for a durable run (taskcrew.jobs); None otherwise
    submissions: SubmissionLog = field(default_factory=SubmissionLog)  # what this leg sent, and the answers
    intents: Any = None  # tools.intents.IntentLog of a durable job: its earlier legs' sends
    snapshot: Any = None  # crew.changes.Snapshot: the watched pages before the first change
    read_back: ReadBack | None = None  # code's latest read-back of the watched pages (steps.read_back)
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    replay: Any = None  # routines.replay.Replayer: an accepted routine replayed instead of the first plan
    seal: Seal = field(default_factory=Seal)  # the run's account is finished once (steps.account_open)
    budget: Budget = field(init=False)

    def __post_init__(self) -> None:
        vault: Any = getattr(self.toolbox.browser, "vault", None)
        if hasattr(vault, "know"):  # a page value the task names is the model's already: not hidden
            vault.know(self.task)
        self.budget = Budget(
            max_steps=self.limits.max_steps,
            failure_budget=self.limits.failure_budget,
            repeat_limit=self.limits.repeat_limit,
        )

    def reveal(self, text: str) -> str:
        """``text`` (read through ``redact``) with the run's hidden values back (``Vault.reveal``):
        for code that compares a quote with its source, never for text that leaves the run."""
        vault: Any = getattr(self.toolbox.browser, "vault", None)
        return str(vault.reveal(text)) if hasattr(vault, "reveal") else text

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 2)

    def record_llm_call(self, call: LlmCall) -> None:
        self.usage.add(call)
        self.tracer.emit(LlmCallEvent(call=call, step=self.budget.step))

    def facts(self) -> Facts:
        """What this run did to the systems (every leg of a durable job), for its outcome and report:
        read through ``redact`` (an intent row keeps a send as the person approved it)."""
        return gather(self.submissions.all(), self.intents, self.started_at, self.redact)

    def checked_facts(self) -> Facts:
        """What this run did to the systems as code's latest read-back of them shows it
        (``read_back``: read at each verification and at the finish, ``steps.read_back``): what the
        verifier's record of sends, the outcome, the answer and the report are read from. The gate's
        reading (``facts``) when code has not read the systems back since this run's last send."""
        gate, checked = self.facts(), self.read_back
        return checked.facts if checked is not None and checked.gate == gate else gate

    def llm_for(self, role: RoleName) -> TracedLLM:
        base = self.verifier_llm if role == "verifier" else self.worker_llm
        return base.for_role(role)
