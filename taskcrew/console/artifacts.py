"""Read-only views of what runs and sweeps left on disk: runs/<dir>/{trace.jsonl, report.md, *.png}
and eval results.json. The trace's event types are the artifact's schema (taskcrew.crew.trace)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from taskcrew.crew.models import Plan, Verdict
from taskcrew.crew.trace import _ADAPTER as TRACE_ADAPTER
from taskcrew.eval.results import SweepReport

RUN_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}"


class RunSummary(BaseModel):
    name: str
    task: str = ""
    status: str = "running"  # the outcome once finished
    reason: str = ""
    changed: str = ""  # what the run changed in the systems, from the gate's facts (crew/outcome.py)
    started_at: str = ""
    worker_model: str = ""
    cost_usd: Decimal | None = None
    tokens: int = 0
    seconds: float | None = None
    llm_calls: int = 0
    demo: str = ""  # "demo (scripted stand-in models, not AI)" for a run of `taskcrew demo`


class TimelineItem(BaseModel):
    at: str
    kind: str
    title: str
    detail: str = ""
    ok: bool | None = None


class RunDetail(BaseModel):
    summary: RunSummary
    plan: Plan | None = None
    verdicts: list[Verdict] = Field(default_factory=list)
    timeline: list[TimelineItem] = Field(default_factory=list)  # every event: the raw trace
    story: list[TimelineItem] = Field(default_factory=list)  # the same, in words for a person
    report_md: str | None = None
    screenshots: list[str] = Field(default_factory=list)
    unreadable_lines: int = 0


def read_events(path: Path) -> tuple[list[Any], int]:
    """The trace's events; a torn or foreign line (a run still writing, a damaged file) is counted, not fatal."""
    events: list[Any] = []
    bad = 0
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return [], 1
    for line in lines:
        if not line.strip():
            continue
        try:
            events.append(TRACE_ADAPTER.validate_json(line))
        except (ValidationError, ValueError):
            bad += 1
    return events, bad


def _summarize(name: str, events: list[Any]) -> RunSummary:
    summary = RunSummary(name=name)
    tokens = 0
    for event in events:
        if event.kind == "run_started":
            summary.task, summary.started_at, summary.worker_model = event.task, event.at, event.worker_model
        elif event.kind == "llm_call":
            tokens += event.call.prompt_tokens + event.call.output_tokens
            summary.llm_calls += 1
            if event.call.cost_usd is not None:
                summary.cost_usd = (summary.cost_usd or Decimal(0)) + event.call.cost_usd
        elif event.kind == "run_finished":
            summary.status, summary.reason, summary.changed = event.outcome, event.reason, event.changed
            summary.cost_usd, summary.seconds = event.cost_usd, event.seconds
            summary.llm_calls = event.llm_calls
            tokens = event.input_tokens + event.output_tokens
    summary.tokens = tokens
    if summary.seconds is None and summary.started_at:
        try:
            started = datetime.fromisoformat(summary.started_at)
            last = datetime.fromisoformat(events[-1].at)
            summary.seconds = round((last - started).total_seconds(), 1)
        except ValueError:
            pass
    return summary


def _demo(path: Path, summary: RunSummary) -> RunSummary:
    """A run folder `taskcrew demo` marked as its own (demo.json) says so; a run by scripted models
    without it (a demo from before the mark, `--model scripted/solver`) says they are not AI."""
    from taskcrew.demo import MARK, NOT_AI, RUN_LABEL

    try:
        marked = json.loads((path / MARK).read_text(encoding="utf-8")).get("demo") is True
    except (OSError, ValueError, AttributeError):
        marked = False
    if marked:
        summary.demo = RUN_LABEL
    elif summary.worker_model.startswith("scripted/"):
        summary.demo = NOT_AI
    return summary


def _timeline(events: list[Any]) -> list[TimelineItem]:
    items: list[TimelineItem] = []
    for e in events:
        if e.kind == "plan":
            title = "replanned" if e.replan else "planned"
            items.append(TimelineItem(at=e.at, kind="plan", title=title, detail=e.reason or e.plan.goal))
        elif e.kind == "tool_call":
            args = json.dumps(e.args, ensure_ascii=False)[:300]
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="action",
                    title=f"{e.role}: {e.tool}",
                    detail=f"{args} → {e.result[:500]}",
                    ok=e.ok,
                )
            )
        elif e.kind == "policy":
            ok = e.decision in ("allowed", "approved")
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="policy",
                    title=f"policy: {e.decision}",
                    detail=" ".join(str(v) for v in e.detail.values())[:500],
                    ok=ok,
                )
            )
        elif e.kind == "approval":
            detail = f"{e.question}: " + ", ".join(f"{k}={v}" for k, v in e.payload.items())
            if e.note:
                detail += f" — {e.note}"
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="approval",
                    title=f"approval: {e.decided()}",
                    detail=detail,
                    ok=e.answer == "approved",
                )
            )
        elif e.kind == "step":
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="step",
                    title=f"step {e.index + 1} ({e.role}, attempt {e.attempt}): {e.report.status}",
                    detail=f"{e.title} — {e.report.summary}",
                    ok=e.report.status in ("done", "nothing_to_do"),
                )
            )
        elif e.kind == "control":
            items.append(TimelineItem(at=e.at, kind="control", title=e.action, detail=e.reason))
        elif e.kind == "verdict":
            v = e.verdict
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="verdict",
                    title=f"verifier (attempt {e.attempt}): {'verified' if v.verified else 'not verified'}",
                    detail=v.reason,
                    ok=v.verified,
                )
            )
        elif e.kind == "reflection":
            items.append(
                TimelineItem(
                    at=e.at, kind="reflection", title="learned", detail="; ".join(e.stored or e.facts)
                )
            )
        elif e.kind == "run_finished":
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="finished",
                    title=f"finished: {e.outcome}",
                    detail=e.reason,
                    ok=e.outcome in ("done", "nothing_to_do"),
                )
            )
        elif e.kind == "submission":
            s = e.submission
            items.append(
                TimelineItem(
                    at=e.at,
                    kind="submission",
                    title=f"submission: {s.result}",
                    detail=s.line(),
                    ok={"saved": True, "unknown": None}.get(s.result, False),
                )
            )
        else:  # every other event, as recorded: the raw trace leaves none out
            data = e.model_dump(mode="json", exclude={"at", "kind"})
            items.append(
                TimelineItem(
                    at=e.at, kind=e.kind, title=e.kind, detail=json.dumps(data, ensure_ascii=False)[:500]
                )
            )
    return items


class RunsDir:
    """Run folders under one or more roots; a run is named by its folder name."""

    def __init__(self, roots: list[Path], extra: Callable[[], list[Path]] | None = None) -> None:
        self.roots = roots
        self.extra = extra

    def _dirs(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for path in self.extra() if self.extra else []:
            if (path / "trace.jsonl").is_file():
                found.setdefault(path.name, path)
        for root in self.roots:
            if not root.is_dir():
                continue
            for trace in root.glob("*/trace.jsonl"):
                found.setdefault(trace.parent.name, trace.parent)
        return found

    def find(self, name: str) -> Path | None:
        return self._dirs().get(name)

    def list(self) -> list[RunSummary]:
        runs = [
            _demo(path, _summarize(name, read_events(path / "trace.jsonl")[0]))
            for name, path in self._dirs().items()
        ]
        return sorted(runs, key=lambda r: (r.started_at, r.name), reverse=True)

    def detail(self, name: str) -> RunDetail | None:
        from taskcrew.console.story import story

        path = self.find(name)
        if path is None:
            return None
        events, bad = read_events(path / "trace.jsonl")
        plans = [e.plan for e in events if e.kind == "plan"]
        report = path / "report.md"
        return RunDetail(
            summary=_demo(path, _summarize(name, events)),
            plan=plans[-1] if plans else None,
            verdicts=[e.verdict for e in events if e.kind == "verdict"],
            timeline=_timeline(events),
            story=story(events),
            report_md=report.read_text(encoding="utf-8", errors="replace") if report.is_file() else None,
            screenshots=sorted(p.relative_to(path).as_posix() for p in path.rglob("*.png")),
            unreadable_lines=bad,
        )

    def event_count(self, name: str) -> int:
        path = self.find(name)
        if path is None:
            return 0
        try:
            with (path / "trace.jsonl").open("rb") as fh:
                return sum(1 for line in fh if line.strip())
        except OSError:
            return 0

    def screenshot(self, name: str, rel: str) -> Path | None:
        """A .png inside the run folder (never outside it)."""
        base = self.find(name)
        if base is None or not rel.endswith(".png"):
            return None
        target = (base / rel).resolve()
        if not target.is_relative_to(base.resolve()) or not target.is_file():
            return None
        return target


class EvalFile(BaseModel):
    key: str  # unique among all folders: the URL names a sweep by it
    path: Path
    modified: datetime


class EvalResults:
    """results.json files of `taskcrew eval` under the given folders (the folder itself or one level
    down). Two sweeps in folders of the same name (under different roots) are both listed: the
    second one's key carries its root's position."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots

    def listing(self) -> list[EvalFile]:
        found: list[EvalFile] = []
        keys: set[str] = set()
        for index, root in enumerate(self.roots):
            for path in [root / "results.json", *sorted(root.glob("*/results.json"))]:
                if not path.is_file():
                    continue
                key = path.parent.name or "results"
                if key in keys:
                    key = f"{key}~{index + 1}"
                keys.add(key)
                try:
                    modified = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
                except OSError:
                    continue
                found.append(EvalFile(key=key, path=path, modified=modified))
        return sorted(found, key=lambda f: f.modified, reverse=True)

    def files(self) -> dict[str, Path]:
        return {f.key: f.path for f in self.listing()}

    def load(self, key: str) -> SweepReport | str:
        """The report, or a sentence saying why it cannot be shown."""
        path = self.files().get(key)
        if path is None:
            return f"No eval results named {key!r}."
        try:
            return SweepReport.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError) as exc:
            return f"{path.name} in {key} is not a readable sweep result ({type(exc).__name__}); re-run `taskcrew eval`."
