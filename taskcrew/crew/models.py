"""The typed things that cross the crew's boundaries: plan, step report, verdict, reflection, run state."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

WorkerRole = Literal["browser_operator", "file_reader"]
StepStatus = Literal["done", "failed", "blocked", "nothing_to_do"]
# what the orchestration makes of a step's report (``StepRecord.then``)
StepThen = Literal["next", "claim", "rejected", "out_of_budget", "replan"]
Outcome = Literal["done", "nothing_to_do", "incomplete", "not_verified", "rejected", "error", "interrupted"]

# Exit codes the CLI returns for each outcome (0 = success of either kind).
EXIT_CODES: dict[str, int] = {
    "done": 0,
    "nothing_to_do": 0,
    "incomplete": 3,
    "not_verified": 4,
    "rejected": 5,
    "error": 1,
    "interrupted": 130,  # SIGINT/SIGTERM (see crew/stopping.py)
}


MAX_GIVEN = 6  # success criteria a request may give (a recipe's, --criterion)
MAX_CRITERIA = 8 + MAX_GIVEN  # a plan's own with those a request gives


class PlanStep(BaseModel):
    role: WorkerRole
    title: str = Field(min_length=3, max_length=200)
    instructions: str = Field(min_length=3, max_length=2000)
    done_when: str = Field(default="", max_length=500)


class Plan(BaseModel):
    goal: str = Field(min_length=3)
    success_criteria: list[str] = Field(min_length=1, max_length=MAX_CRITERIA)
    steps: list[PlanStep] = Field(min_length=1, max_length=12)
    assumptions: list[str] = Field(default_factory=list, max_length=8)
    changes_data: bool

    def keeping(self, criteria: list[str], *, read_only: bool = False) -> Plan:
        """This plan with ``criteria`` given by the request (a recipe, --criterion) kept first, and
        ``changes_data`` off for a read-only request: the planner adds to them, never drops them."""
        if not criteria and not read_only:
            return self
        given = [c.strip() for c in criteria if c.strip()][:MAX_GIVEN]
        seen = {c.casefold() for c in given}
        own = [c for c in self.success_criteria if c.strip().casefold() not in seen]
        return self.model_copy(
            update={
                "success_criteria": [*given, *own][:MAX_CRITERIA],
                "changes_data": self.changes_data and not read_only,
            }
        )

    def render(self) -> str:
        lines = [f"Goal: {self.goal}", "Success criteria:"]
        lines += [f"  {i}. {c}" for i, c in enumerate(self.success_criteria, 1)]
        lines.append("Steps:")
        lines += [f"  {i}. [{s.role}] {s.title}" for i, s in enumerate(self.steps, 1)]
        if self.assumptions:
            lines.append("Assumptions: " + "; ".join(self.assumptions))
        lines.append(f"Changes data: {'yes' if self.changes_data else 'no'}")
        return "\n".join(lines)


class Citation(BaseModel):
    """Where a stated fact comes from: a file path or URL, and the words quoted from it.

    Instead of typing the quote, a model may point at it: ``find`` is a few exact words of the line,
    and code copies that whole line from the source into ``quote`` (``steps.resolve_citations``).
    """

    source: str = Field(min_length=1)
    quote: str = Field(default="", max_length=500)
    find: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _quote_or_pointer(self) -> Citation:
        if not self.quote.strip() and not (self.find or "").strip():
            raise ValueError("a source needs a quote, or find: a few exact words of the line to quote")
        return self


class StepReport(BaseModel):
    """What a worker says at the end of one step. ``data`` holds the values later steps need."""

    status: StepStatus
    summary: str = Field(min_length=1, max_length=3000)
    data: dict[str, str] = Field(default_factory=dict)
    sources: list[Citation] = Field(default_factory=list, max_length=12)
    caveats: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="anything the person should know: doubts, unreadable sources, assumptions",
    )

    @field_validator("data", mode="before")
    @classmethod
    def _stringify(cls, value: object) -> object:
        if isinstance(value, dict):
            return {str(k): "" if v is None else str(v) for k, v in value.items()}
        return value


class CriterionCheck(BaseModel):
    criterion: str
    met: bool
    source: str = Field(min_length=1, description="The page URL or file the verifier looked at")
    observed: str = Field(min_length=1, description="What it saw there: the values, quoted")
    find: str | None = Field(
        default=None,
        max_length=200,
        description="a few exact words of the line that shows it; code copies the whole line as evidence",
    )


class Verdict(BaseModel):
    verified: bool
    checks: list[CriterionCheck] = Field(min_length=1)
    reason: str = Field(min_length=1)


class Reflection(BaseModel):
    facts: list[str] = Field(default_factory=list, max_length=3)

    @field_validator("facts")
    @classmethod
    def _short(cls, facts: list[str]) -> list[str]:
        cleaned = [f.strip() for f in facts if f.strip()]
        for fact in cleaned:
            if len(fact) > 300:
                raise ValueError("each fact must be one short sentence (at most 300 characters)")
        return cleaned


class StepRecord(BaseModel):
    index: int
    role: WorkerRole
    title: str
    plan_version: int = 1
    report: StepReport
    # what the orchestration decided the report means, decided before the step's checkpoint (a leg
    # handed back right after it carries the decision out, not the step again): "next" step,
    # "claim" the report's status, "rejected" by a person, "out_of_budget", or "replan"
    then: StepThen = "next"


class RunState(BaseModel):
    """The Flow's state: everything the orchestration decides on, nothing a model can grow unboundedly."""

    task: str = ""
    mode: Literal["run", "audit"] = "run"
    plan: Plan | None = None
    steps_done: list[StepRecord] = Field(default_factory=list)
    plan_version: int = 0
    replans: int = 0
    asked_human: bool = False
    verify_attempts: int = 0
    verifier_feedback: str = ""
    verdicts: list[Verdict] = Field(default_factory=list)
    claim: StepStatus | None = None
    outcome: Outcome | None = None
    outcome_reason: str = ""
    changed: str = ""  # what changed in the systems (crew/outcome.py), set when the run ends
    answer: str = ""
    learned: list[str] = Field(default_factory=list)
    reflected: bool = False  # the reflect stage ran (saved with it: a resumed run does not repeat it)
    # what the run context holds that a resumed leg must not lose (saved with every checkpoint):
    notes: list[str] = Field(default_factory=list)  # the run notes (bounded: run_tools.MAX_NOTES)
    tool_calls: int = 0  # the step budget already spent: the budget is the run's, not each leg's
    read_from: list[str] = Field(default_factory=list)  # the tools (and brief) its text came from
    # the digests of the files it read (``SandboxFiles.reads``): a resumed leg's approval seals the
    # bytes the legs before it read, not the file as it is when that leg parks
    files_read: dict[str, dict[str, list[str]]] = Field(default_factory=dict)


class LlmCall(BaseModel):
    """One model call, as the trace and the usage totals see it."""

    role: str
    model: str
    prompt_chars: int
    prompt_tokens: int
    output_tokens: int
    tokens_from: Literal["provider", "estimate"] = "estimate"
    messages_sent: int
    messages_compacted: int
    cost_usd: Decimal | None
    seconds: float
    tool_calls: list[str] = Field(default_factory=list)
    text_preview: str = ""
    error: str | None = None
