"""Past runs, as `taskcrew runs list/show` presents them: read from each run folder's files.

A run folder holds trace.jsonl (its run_started and run_finished events carry the task, models,
outcome, tokens, cost and time) and report.md. Reading them needs no crewai: this stays fast.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

TRACE = "trace.jsonl"
REPORT = "report.md"
_AT = re.compile(r'\{"at": "([^"]+)"')  # every event starts with its time
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
    changed: str = ""  # what the run changed in the systems, in one line
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal | None = None
    seconds: float | None = None
    approvals_asked: int = 0
    approvals_given: int = 0
    verified: bool | None = Field(default=None, description="the last verdict; None: never checked")

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
    _tally(trace, summary, count_calls=finished is None)
    if finished is None:
        summary.reason = _unfinished_reason(summary)
    else:
        summary.outcome = str(finished.get("outcome", "unfinished"))
        summary.reason = str(finished.get("reason", ""))
        summary.changed = str(finished.get("changed", ""))
        summary.llm_calls = int(finished.get("llm_calls", 0))
        summary.input_tokens = int(finished.get("input_tokens", 0))
        summary.output_tokens = int(finished.get("output_tokens", 0))
        summary.cost_usd = _cost(finished.get("cost_usd"))
        summary.seconds = float(finished.get("seconds", 0.0))
    return summary


def _tally(trace: Path, summary: RunSummary, *, count_calls: bool) -> None:
    """Approvals and verdicts from the whole trace; for an unfinished run also its calls, tokens,
    cost and time (a killed run never wrote its run_finished totals)."""
    cost: Decimal | None = Decimal(0)
    last_at = ""
    with trace.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            kind = next((k for k in ('"llm_call"', '"approval"', '"verdict"') if k in line), None)
            if stamp := _AT.match(line):
                last_at = stamp.group(1)
            if kind is None:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            if event.get("kind") == "approval":
                summary.approvals_asked += 1
                summary.approvals_given += event.get("answer") in ("approved", "approve")
            elif event.get("kind") == "verdict":
                summary.verified = bool(event.get("verdict", {}).get("verified"))
            elif event.get("kind") == "llm_call" and count_calls:
                call = event.get("call", {})
                summary.llm_calls += 1
                summary.input_tokens += int(call.get("prompt_tokens", 0))
                summary.output_tokens += int(call.get("output_tokens", 0))
                price = _cost(call.get("cost_usd"))
                cost = None if cost is None or price is None else cost + price
    if count_calls:
        summary.cost_usd = cost
        summary.seconds = _seconds_between(summary.started_at, last_at)


def _seconds_between(start: str, end: str) -> float | None:
    from datetime import datetime

    try:
        return round((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 1)
    except ValueError:
        return None


def _unfinished_reason(run: RunSummary) -> str:
    """What an unfinished run's trace shows, said plainly."""
    parts = [f"the run stopped before it ended (killed?); its trace shows {run.llm_calls} model call(s)"]
    if run.approvals_given:
        parts.append(f"{run.approvals_given} change(s) approved and so submitted")
    elif run.approvals_asked:
        parts.append(f"{run.approvals_asked} change(s) asked about, none approved: nothing was submitted")
    else:
        parts.append("no change submitted")
    if run.verified is True:
        parts.append("the verifier confirmed the result in the real system")
    elif run.verified is False:
        parts.append("the verifier did not confirm the result")
    elif run.approvals_given:
        parts.append("never verified: check the system before running it again")
    return "; ".join(parts)


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
