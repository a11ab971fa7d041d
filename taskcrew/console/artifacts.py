"""Read-only views of what runs and sweeps left on disk: runs/<dir>/{trace.jsonl, report.md, *.png}
and eval results.json. The trace's event types are the artifact's schema (taskcrew.crew.trace).
A run's outcome is the job store's signed word, not its folder's (``eval.runs.RunRecord.judge``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from taskcrew.crew.models import Plan, Verdict
from taskcrew.crew.trace import _ADAPTER as TRACE_ADAPTER
from taskcrew.eval.results import SweepReport
from taskcrew.eval.runs import TRACE, Judged, RunRecord, RunRecords, _claim, demo_marked

RUN_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}"
JOB_FOLDERS = 500  # the newest jobs' run folders listed beside the runs folders' own


def run_key(place: Path) -> str:
    """The key of the run folder at ``place`` (resolved) where another folder has its name: the
    name and an id of its path, the same on every page and every restart."""
    return f"{place.name}~{hashlib.sha256(str(place).encode()).hexdigest()[:10]}"


class RunSummary(BaseModel):
    name: str
    key: str = ""  # what the run's page is found by (/runs/<key>): its name, or ``run_key``
    path: Path | None = None
    task: str = ""
    status: str = "running"  # the outcome once finished; before, what it is now (``RunRecords.state``)
    reason: str = ""
    changed: str = ""  # what the run changed in the systems, from the gate's facts (crew/outcome.py)
    started_at: str = ""
    worker_model: str = ""
    cost_usd: Decimal | None = None
    tokens: int = 0
    seconds: float | None = None
    llm_calls: int = 0
    demo: str = ""  # "demo (scripted stand-in models, not AI)" for a run of `taskcrew demo`
    verified: bool | None = None  # the verifier's verdict, shown only where a signed record vouches
    note: str = ""  # where the signed job record does not vouch for the folder's outcome: what to know
    brief: str = ""  # the same in one short sentence (the list of runs)
    unvouched: bool = False  # the outcome shown is the folder's own word, not a signed record's
    calm: bool = False  # the note is no alarm (a demo run's: its job record was in the demo's own store)
    now: str = ""  # a run without an end: what it is now and what to do (``RunRecords.state``)
    # the folder was changed after the run ended, or is another run's (``RunRecord.altered``): task and
    # reason are the signed record's, ``answer`` too; the folder's account is not shown
    altered: bool = False
    answer: str = ""
    headline: str = ""  # an altered folder's one warning, the problem first (``Judged.headline``)
    claim: str = ""  # an altered folder's own ending, where not the signed one ("done and verified")
    unsealed: bool = False  # ended before run folders were sealed: its files are not checked
    # what the last step's words claim that the run did not record (``unsupported_claim``), '' if nothing
    unsupported: str = ""


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
    decisions: list[str] = Field(default_factory=list)  # a changed folder's: the signed audit log's


UNSUPPORTED = "Not supported by what this run recorded"
_IN_ANSWER = re.compile(r"\[" + UNSUPPORTED + r": (?P<what>.+)\]\s*$", re.DOTALL)
_IN_REPORT = re.compile(r"^\*\*" + UNSUPPORTED + r":\*\* (?P<what>.+)$", re.MULTILINE)


def unsupported_claim(answer: str | None = None, report_md: str | None = None) -> str:
    """What a run's last-step words claim that the run did not record, as flagged in its job's
    answer (``crew.steps``: "[Not supported by what this run recorded: …]") or, failing that, its
    report.md's "**Not supported by what this run recorded:** …" line; a sentence ending in a full
    stop ('' where nothing is flagged)."""
    found = _IN_ANSWER.search(answer or "") or _IN_REPORT.search(report_md or "")
    if found is None:
        return ""
    what = " ".join(found.group("what").split()).rstrip()
    return what if what[-1:] in ".!?" else f"{what}."


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


def _summarize(name: str, events: list[Any], record: RunRecord | None = None) -> RunSummary:
    """A run's figures from its trace; its outcome as the job store's signed ``record`` of it says."""
    summary = RunSummary(name=name, key=name)
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
    judged = _judged(events, record)
    summary.status, summary.verified, summary.note = judged.outcome, judged.verified, judged.note
    summary.brief, summary.calm = judged.brief, judged.calm
    # a note, and an outcome no signed record gives: never shown in the colour of a success
    summary.unvouched = bool(judged.note) and judged.outcome != (record or RunRecord()).outcome
    summary.reason = judged.reason or summary.reason
    summary.unsealed = judged.unsealed
    if judged.altered:  # not the run's account: the signed record's own fields, never the folder's
        summary.altered, summary.task, summary.answer, summary.changed = True, judged.task, judged.answer, ""
        summary.headline = judged.headline
        verdicts = [e.verdict.verified for e in events if e.kind == "verdict"]
        said = _claim(next((e.outcome for e in reversed(events) if e.kind == "run_finished"), "running"),
                      verdicts[-1] if verdicts else None)  # fmt: skip
        summary.claim = "" if said == judged.outcome else said
    if record is not None and record.jobs:  # the signed answer's flag (never the folder's word alone)
        summary.unsupported = unsupported_claim(record.jobs[0].answer)
    return summary


def _judged(events: list[Any], record: RunRecord | None) -> Judged:
    """How the run ended and its last verdict as its trace says, judged by the job store's signed
    ``record`` of it (none given: nothing vouches for it)."""
    finished = [e.outcome for e in events if e.kind == "run_finished"]
    verdicts = [e.verdict.verified for e in events if e.kind == "verdict"]
    outcome = finished[-1] if finished else "running"
    return (record or RunRecord()).judge(outcome, verdicts[-1] if verdicts else None)


def _vouched(items: list[TimelineItem], judged: Judged) -> list[TimelineItem]:
    """The trace's lines in words, where the signed job record does not vouch for what the folder
    says: its ending and a "verified" verdict marked as the folder's word (not shown as success)."""
    if not judged.note:
        return items
    for item in items:
        if item.kind == "finished" or (item.kind == "verdict" and item.ok and not judged.verified):
            item.title = f"{item.title} (the run folder's word; {judged.short})"
            item.ok = None
    return items


def _unnamed(events: list[Any], judged: Judged) -> list[Any]:
    """The trace of a run folder changed after its run ended (``Judged.altered``), as its story and
    raw trace show it: who approved is the signed audit log's word (the page lists its decisions),
    never a name the folder gives, and its ending says the signed record's reason, not the folder's
    (nor what the folder says it changed)."""
    shown = []
    for event in events:
        if event.kind == "approval":
            event = event.model_copy(update={"by": "someone the run folder names (not vouched for)"})
        elif event.kind == "run_finished":
            event = event.model_copy(update={"reason": judged.reason, "changed": ""})
        shown.append(event)
    return shown


def demo_words(run_dir: Path | None, worker_model: str | None) -> str:
    """What every page calls a run, or a job, of scripted stand-in models ('' for any other): a run
    folder `taskcrew demo` marked as its own (demo.json) says "demo (scripted stand-in models, not
    AI)"; a run by scripted models without it (a demo from before the mark, `--model
    scripted/solver`) says they are not AI."""
    from taskcrew.demo import NOT_AI, RUN_LABEL

    if demo_marked(run_dir):  # the folder's word (not signed): it only names the run
        return RUN_LABEL
    return NOT_AI if (worker_model or "").startswith("scripted/") else ""


def job_demo(job: Any) -> str:
    """``demo_words`` of a job: its run folder's mark, else the model it was submitted with (a job
    not yet started has no run folder)."""
    if job is None:
        return ""
    return demo_words(Path(job.run_dir) if job.run_dir else None, job.options.worker_model)


def _demo(path: Path, summary: RunSummary) -> RunSummary:
    summary.demo = demo_words(path, summary.worker_model)
    return summary


def _now(path: Path, summary: RunSummary, records: RunRecords) -> RunSummary:
    """A run without an end: what it is now (running, parked, continued, orphaned, interrupted) and
    what to know, by the rule every surface shows it by (``RunRecords.state``)."""
    if summary.status == "running" and (state := records.state(path, "console")) is not None:
        summary.status, summary.reason = state
        summary.now = summary.reason
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
                    detail=f"{e.title} — the worker's words: {e.report.summary}",
                    ok=None if e.report.status in ("done", "nothing_to_do") else False,  # a model's word
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
    """Run folders under one or more roots, and those the job store's newest records name. A run is
    found by its key: its folder name, or where two folders have the same name (two worker hosts,
    each with its own runs folder), ``run_key`` of its path; a job's own run by the folder its record
    names (``job_run``), never by name. ``records`` reads the job store's records once (a page)."""

    def __init__(self, roots: list[Path], records: Callable[[], RunRecords] | None = None) -> None:
        self.roots = roots
        self.read_records = records

    def records(self) -> RunRecords:
        return self.read_records() if self.read_records else RunRecords()

    def _dirs(self, records: RunRecords) -> dict[str, Path]:
        found: dict[Path, Path] = {}  # resolved path -> the path as found
        for path in records.folders[:JOB_FOLDERS]:
            if (path / TRACE).is_file():
                found.setdefault(path, path)
        for root in self.roots:
            if not root.is_dir():
                continue
            for trace in root.glob(f"*/{TRACE}"):
                found.setdefault(trace.parent.resolve(), trace.parent)
        names = Counter(path.name for path in found.values())
        return {
            (path.name if names[path.name] == 1 else run_key(place)): path for place, path in found.items()
        }

    def find(self, key: str, records: RunRecords | None = None) -> Path | None:
        dirs = self._dirs(records or self.records())
        if key in dirs:
            return dirs[key]
        return next((path for path in dirs.values() if run_key(path.resolve()) == key), None)

    def key_of(self, path: Path, records: RunRecords) -> str:
        """The key ``path``'s run page is found by (the name, while no other folder has it)."""
        place = path.resolve()
        others = [p for p in self._dirs(records).values() if p.name == path.name and p.resolve() != place]
        return run_key(place) if others else path.name

    def list(self, records: RunRecords | None = None) -> list[RunSummary]:
        records = records or self.records()
        runs = []
        for key, path in self._dirs(records).items():
            summary = _summarize(path.name, read_events(path / TRACE)[0], records.of(path))
            summary.key, summary.path = key, path
            runs.append(_now(path, _demo(path, summary), records))
        return sorted(runs, key=lambda r: (r.started_at, r.name, r.key), reverse=True)

    def detail(self, key: str) -> RunDetail | None:
        records = self.records()
        path = self.find(key, records)
        return None if path is None else self.open(path, records, key)

    def job_run(self, job: Any, records: RunRecords | None = None) -> tuple[RunDetail | None, str | None]:
        """The run in the folder ``job``'s record names (not another of its name) and the key of its
        run page (None: not found there: an older job's run outside the runs folders). ``records``:
        read once by the page; without them, only ``job``'s own record vouches (a live page's poll)."""
        if not job.run_dir or not (Path(job.run_dir) / TRACE).is_file():
            return None, None
        path = Path(job.run_dir)
        if records is None:
            return self.open(path, RunRecords([job]), path.name), None
        key = self.key_of(path, records)
        found = self.find(key, records)
        linked = key if found is not None and found.resolve() == path.resolve() else None
        return self.open(path, records, linked or path.name), linked

    def open(self, path: Path, records: RunRecords, key: str) -> RunDetail:
        """The run in ``path``, judged by the job store's ``records`` (read once by the page)."""
        from taskcrew.console.story import story

        events, bad = read_events(path / TRACE)
        plans = [e.plan for e in events if e.kind == "plan"]
        report = path / "report.md"
        record = records.of(path)
        summary = _now(path, _demo(path, _summarize(path.name, events, record)), records)
        summary.key, summary.path = key, path
        judged = _judged(events, record)
        shown = _unnamed(events, judged) if judged.altered else events
        report_md = None if judged.altered or not report.is_file() else report.read_text("utf-8", "replace")
        if not summary.unsupported and report_md:  # a run no job names: its report's own flag, as a warning
            summary.unsupported = unsupported_claim(report_md=report_md)
        timeline, told = _vouched(_timeline(shown), judged), _vouched(story(shown), judged)
        if judged.altered:  # the changed folder's account: never in the colour of a success
            for item in (*timeline, *told):
                item.ok = None if item.ok else item.ok
        return RunDetail(
            summary=summary,
            plan=plans[-1] if plans else None,
            verdicts=[e.verdict for e in events if e.kind == "verdict"],
            timeline=timeline,
            story=told,
            # a folder changed after its run ended: its report and screenshots are not shown as the run's
            report_md=report_md,
            screenshots=[]
            if judged.altered
            else sorted(p.relative_to(path).as_posix() for p in path.rglob("*.png")),
            unreadable_lines=bad,
            decisions=list(judged.decisions),
        )

    def screenshot(self, key: str, rel: str) -> Path | None:
        """A .png inside the run folder (never outside it)."""
        base = self.find(key)
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
