"""Past runs, as `taskcrew runs list/show` presents them: read from each run folder's files.

A run folder holds trace.jsonl (its run_started and run_finished events carry the task, models,
outcome, tokens, cost and time) and report.md. Reading them needs no crewai: this stays fast.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel

TRACE = "trace.jsonl"
REPORT = "report.md"
MAX_DEPTH = 3  # runs_dir/<run>, runs_dir/<group>/<run> (eval sweeps), one level more


class RunReadError(ValueError):
    """The folder is not a readable run; the message says why."""


class RunSummary(BaseModel):
    path: Path
    name: str
    task: str
    started_at: str = ""
    worker_model: str = ""
    verifier_model: str = ""
    outcome: str = "unfinished"
    reason: str = ""
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal | None = None
    seconds: float | None = None

    @property
    def finished(self) -> bool:
        return self.outcome != "unfinished"


def _events(trace: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    started = finished = None
    with trace.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if '"run_started"' not in line and '"run_finished"' not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash: the rest of the trace still counts
            if event.get("kind") == "run_started" and started is None:
                started = event
            elif event.get("kind") == "run_finished":
                finished = event
    return started, finished


def _cost(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def read_run(folder: Path) -> RunSummary:
    trace = folder / TRACE
    if not trace.is_file():
        raise RunReadError(f"{folder} is not a run folder (it has no {TRACE})")
    started, finished = _events(trace)
    if started is None:
        raise RunReadError(f"{trace} has no run_started event: the run did not start properly")
    summary = RunSummary(
        path=folder,
        name=folder.name,
        task=str(started.get("task", "")),
        started_at=str(started.get("at", "")),
        worker_model=str(started.get("worker_model", "")),
        verifier_model=str(started.get("verifier_model", "")),
    )
    if finished is not None:
        summary.outcome = str(finished.get("outcome", "unfinished"))
        summary.reason = str(finished.get("reason", ""))
        summary.llm_calls = int(finished.get("llm_calls", 0))
        summary.input_tokens = int(finished.get("input_tokens", 0))
        summary.output_tokens = int(finished.get("output_tokens", 0))
        summary.cost_usd = _cost(finished.get("cost_usd"))
        summary.seconds = float(finished.get("seconds", 0.0))
    return summary


def _run_folders(root: Path, depth: int) -> list[Path]:
    if (root / TRACE).is_file():
        return [root]
    if depth == 0:
        return []
    found: list[Path] = []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found += _run_folders(child, depth - 1)
    return found


def list_runs(runs_dir: Path) -> tuple[list[RunSummary], list[str]]:
    """Every run under ``runs_dir``, newest first, and a note for each folder that could not be read."""
    if not runs_dir.is_dir():
        raise RunReadError(f"the runs folder {runs_dir} does not exist")
    runs, problems = [], []
    for folder in _run_folders(runs_dir, MAX_DEPTH):
        try:
            runs.append(read_run(folder))
        except (RunReadError, OSError) as exc:
            problems.append(str(exc))
    runs.sort(key=lambda r: (r.started_at, r.name), reverse=True)
    return runs, problems


def find_run(name: Path, runs_dir: Path) -> Path:
    """A run folder given as a path, or as a name inside the runs folder."""
    for candidate in (name, runs_dir / name):
        if (candidate / TRACE).is_file():
            return candidate
    raise RunReadError(
        f"{name} is not a run folder (no {TRACE} there or in {runs_dir}); `taskcrew runs list` shows the runs"
    )
