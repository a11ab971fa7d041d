"""What a sweep measures: one record per model × case × repeat, and the summaries built from them.

pass^k follows tau-bench: for a case run n times with c successes, the chance that k runs drawn
without replacement all succeed is C(c, k) / C(n, k); a model's pass^k is the mean over its cases.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from decimal import Decimal
from math import comb

from pydantic import BaseModel, Field

from taskcrew.crew.models import Outcome
from taskcrew.eval.models import Check


def pass_hat_k_case(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k): all of k runs drawn from n (c of them successful) succeed."""
    if not 0 <= c <= n:
        raise ValueError(f"successes must be between 0 and the number of runs: c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of runs: k={k}, n={n}")
    return comb(c, k) / comb(n, k)


def pass_hat_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """The mean over cases of C(c, k) / C(n, k); ``counts`` holds (n, c) per case."""
    values = [pass_hat_k_case(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("pass^k needs at least one case")
    return sum(values) / len(values)


class RunRecord(BaseModel):
    """One run of one case by one model, graded."""

    index: int = Field(description="position in the sweep's job list (model, case, repeat order)")
    model: str
    verifier_model: str
    case_id: str
    repeat: int = Field(ge=1)
    outcome: Outcome
    passed: bool
    checks: list[Check] = Field(default_factory=list)
    reason: str = ""
    steps: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)
    seconds: float = 0.0
    approvals: int = 0
    questions: int = 0
    run_dir: str | None = None
    error: str | None = Field(default=None, description="set when the run could not be carried out")

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


class PassK(BaseModel):
    k: int
    value: float


class CaseSummary(BaseModel):
    model: str
    case_id: str
    runs: int
    successes: int
    outcomes: list[Outcome]
    pass_k: list[PassK]
    mean_steps: float
    mean_llm_calls: float
    mean_input_tokens: float
    mean_output_tokens: float
    cost_usd: Decimal | None
    median_seconds: float
    mean_approvals: float


class ModelSummary(BaseModel):
    model: str
    verifier_model: str
    cases: int
    runs: int
    successes: int
    success_rate: float
    pass_k: list[PassK]
    steps: int
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None
    seconds: float
    approvals: int


def _total_cost(records: list[RunRecord]) -> Decimal | None:
    total = Decimal(0)
    for record in records:
        if record.cost_usd is None:
            return None
        total += record.cost_usd
    return total


def _mean(values: list[float] | list[int]) -> float:
    return round(statistics.fmean(values), 2) if values else 0.0


def summarize_case(records: list[RunRecord]) -> CaseSummary:
    first = records[0]
    n, c = len(records), sum(r.passed for r in records)
    return CaseSummary(
        model=first.model,
        case_id=first.case_id,
        runs=n,
        successes=c,
        outcomes=[r.outcome for r in records],
        pass_k=[PassK(k=k, value=pass_hat_k_case(n, c, k)) for k in range(1, n + 1)],
        mean_steps=_mean([r.steps for r in records]),
        mean_llm_calls=_mean([r.llm_calls for r in records]),
        mean_input_tokens=_mean([r.input_tokens for r in records]),
        mean_output_tokens=_mean([r.output_tokens for r in records]),
        cost_usd=_total_cost(records),
        median_seconds=round(statistics.median(r.seconds for r in records), 2),
        mean_approvals=_mean([r.approvals for r in records]),
    )


def summarize_model(records: list[RunRecord]) -> ModelSummary:
    by_case: dict[str, list[RunRecord]] = {}
    for record in records:
        by_case.setdefault(record.case_id, []).append(record)
    counts = [(len(rs), sum(r.passed for r in rs)) for rs in by_case.values()]
    max_k = min(n for n, _ in counts)
    first = records[0]
    successes = sum(r.passed for r in records)
    return ModelSummary(
        model=first.model,
        verifier_model=first.verifier_model,
        cases=len(by_case),
        runs=len(records),
        successes=successes,
        success_rate=successes / len(records),
        pass_k=[PassK(k=k, value=pass_hat_k(counts, k)) for k in range(1, max_k + 1)],
        steps=sum(r.steps for r in records),
        llm_calls=sum(r.llm_calls for r in records),
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        cost_usd=_total_cost(records),
        seconds=round(sum(r.seconds for r in records), 2),
        approvals=sum(r.approvals for r in records),
    )


class SweepReport(BaseModel):
    """Everything a sweep produced; results.json is this model."""

    started_at: str
    finished_at: str
    wall_seconds: float
    models: list[str]
    verifier_model: str | None
    case_ids: list[str]
    repeats: int
    chaos: bool
    parallel: int
    runs: list[RunRecord]
    cases: list[CaseSummary]
    totals: list[ModelSummary]

    @classmethod
    def build(cls, runs: list[RunRecord], **fields: object) -> SweepReport:
        runs = sorted(runs, key=lambda r: r.index)
        grouped: dict[tuple[str, str], list[RunRecord]] = {}
        per_model: dict[str, list[RunRecord]] = {}
        for record in runs:
            grouped.setdefault((record.model, record.case_id), []).append(record)
            per_model.setdefault(record.model, []).append(record)
        return cls(
            runs=runs,
            cases=[summarize_case(rs) for rs in grouped.values()],
            totals=[summarize_model(rs) for rs in per_model.values()],
            **fields,
        )

    def total_for(self, model: str) -> ModelSummary:
        return next(t for t in self.totals if t.model == model)

    def cases_for(self, model: str) -> list[CaseSummary]:
        return [c for c in self.cases if c.model == model]
