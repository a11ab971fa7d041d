"""Eval cases as data (cases/*.yaml), validated on load, and the graded result of one run."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from taskcrew.crew.models import Outcome

CASES_DIR = Path(__file__).resolve().parent / "cases"


class ChaosSetting(BaseModel):
    """The ERP's faults at the start of a case (see mock_erp's ChaosConfig)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    seed: int = 0
    save_faults: list[Literal["none", "expire_session", "service_unavailable"]] | None = None
    modal: bool = False
    shuffle_fields: bool = False
    latency_ms: int = 0
    error_rate: float = 0.0


class HumanScript(BaseModel):
    """How the (simulated) person answers during the case."""

    model_config = ConfigDict(extra="forbid")

    approvals: Literal["approve", "reject"] = "approve"
    answers: list[str] = Field(default_factory=list)
    default_answer: str = "I have no more information; use your judgement, and stop if unsure."


class BillExpectation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vendor: str
    invoice_number: str
    amount: str | None = None
    currency: str | None = None
    invoice_date: str | None = None
    due_date: str | None = None


class Expectation(BaseModel):
    """The end state, read from the ERP's ground truth and the run's report — never the agent's claim."""

    model_config = ConfigDict(extra="forbid")

    outcomes: list[Outcome]
    new_bills: list[BillExpectation] = Field(default_factory=list)
    paid: list[str] = Field(default_factory=list, description="bill ids that must end up paid")
    paid_on: str | None = None
    answer_contains: list[str | list[str]] = Field(
        default_factory=list,
        description="each entry must appear; a list entry means any one of its spellings",
    )
    answer_excludes: list[str] = Field(default_factory=list)
    sources_cited: list[str] = Field(default_factory=list, description="URLs/files the report must cite")
    asked_human: bool | None = None


class EvalCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    task: str
    tags: list[str] = Field(default_factory=list)
    chaos: ChaosSetting = Field(default_factory=ChaosSetting)
    human: HumanScript = Field(default_factory=HumanScript)
    max_steps: int = 60
    expect: Expectation


class CaseFile(BaseModel):
    cases: list[EvalCase]


def load_cases(directory: Path = CASES_DIR, pattern: str | None = None) -> list[EvalCase]:
    """Every case in every YAML file of ``directory``; ``pattern`` filters ids: comma-separated
    parts, each a substring or a glob (``a,b``, ``invoice-*``, ``north*,duplicate``)."""
    from fnmatch import fnmatch

    cases: list[EvalCase] = []
    for path in sorted(directory.glob("*.yaml")):
        cases += CaseFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))).cases
    ids = [c.id for c in cases]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate case ids in {directory}")
    parts = [p.strip() for p in (pattern or "").split(",") if p.strip()]
    if parts:
        cases = [c for c in cases if any(fnmatch(c.id, p) or p in c.id for p in parts)]
    return cases


class Check(BaseModel):
    name: str
    passed: bool
    detail: str = ""


class Grade(BaseModel):
    passed: bool
    checks: list[Check]

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def no_case_matches(selection: str | None, cases_dir: Path) -> str:
    """What to say when a --cases selection picks nothing, and how to see the cases there are."""
    return (
        f"no case matches {selection!r} in {cases_dir.name}/; `taskcrew eval --list` lists the cases "
        "(give ids or parts of ids, comma-separated; * patterns work)"
    )
