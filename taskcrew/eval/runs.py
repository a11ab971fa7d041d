"""Past runs, as `taskcrew runs list/show` presents them: read from each run folder's files.

A run folder holds trace.jsonl (its run_started and run_finished events carry the task, models,
outcome, tokens, cost and time) and report.md. Reading them needs no crewai: this stays fast.

Those files are not signed: anyone who can write the runs folder can make its trace say "done" and
add a verified verdict. How a run ended is the job store's word: every run of `taskcrew run`,
`submit`, a recipe or the console is a job, whose record names its run folder and its outcome,
signed by the store on every write. ``RunRecords`` reads those records once (a list of runs, one
command); ``RunRecord.judge`` is the one rule every surface shows a run's outcome by (`runs
list/show`, the console's runs, run and job pages, `routines learn`): the signed record's outcome,
a plain note where the folder says otherwise or where no signed record names the folder, and
"verified" only where the signed record says the run was done.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from taskcrew.jobs.liveness import Surface
    from taskcrew.jobs.models import Job

TRACE = "trace.jsonl"
REPORT = "report.md"
_AT = re.compile(r'\{"at": "([^"]+)"')  # every event starts with its time
MAX_DEPTH = 3  # runs_dir/<run>, runs_dir/<group>/<run> (eval sweeps), one level more
RUNS_LOOKED_UP = 5000  # the newest jobs whose run folders are compared (as ``jobs.liveness``)
VERIFIED_OUTCOMES = ("done", "nothing_to_do")  # the outcomes a run ends with only once verified
UNFINISHED = ("unfinished", "running")  # a run folder without an end (``runs list``, the console)
DEMO_MARK = "demo.json"  # in a run folder of `taskcrew demo` (``demo.mark_demo_run``): not signed
DEMO = (
    "a demo run: its job record was kept in the demo's own temporary job store, so nothing here "
    "vouches for its outcome"
)
NOT_NAMED = (
    "no signed job record names its run folder (a run made outside the job store, an earlier leg of "
    "a retried job, or another job database than the workers')"
)


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
    note: str = ""  # where the signed job record does not vouch for the folder's outcome: what to know
    # the folder was changed after the run ended, or is another run's (``RunRecord.altered``): task,
    # reason and ``answer`` are the signed record's, ``decisions`` the signed audit log's; its report
    # is not shown as the run's
    altered: bool = False
    answer: str = ""
    decisions: list[str] = Field(default_factory=list)
    unsealed: bool = False  # ended before run folders were sealed: its files are not checked
    doubt: str = ""  # its job's send in doubt, as `jobs list` names it (``RunRecords.doubt``; '' none)

    @property
    def finished(self) -> bool:
        return self.outcome != "unfinished"


@dataclass(frozen=True)
class Judged:
    """A run's outcome as a surface shows it (``RunRecord.judge``): ``outcome``, the verifier's
    ``verified`` (True only where a signed record says the run was done), and ``note``: '' where
    the signed job record vouches for what the folder says, else a sentence saying what to know;
    ``brief`` says it in one short sentence (a list of runs), ``short`` in a few words (beside a
    line of the folder's trace); ``reason``: the signed record's reason where it says otherwise than
    the folder ('' to keep the folder's)."""

    outcome: str
    verified: bool | None
    note: str = ""
    short: str = ""
    reason: str = ""
    brief: str = ""
    calm: bool = False  # the note is no alarm (a demo run's: its record was kept in the demo's store)
    # the folder is not as its run left it, or not the job's run (``RunRecord.altered``): a surface
    # shows the signed record's own ``task``, outcome, ``reason`` and ``answer``, never the folder's
    # account (what it changed, who approved, its story, its report), and ``decisions`` as signed
    altered: bool = False
    task: str = ""
    answer: str = ""
    decisions: tuple[str, ...] = ()
    unsealed: bool = False  # ended before run folders were sealed: its files are not checked (said calmly)
    # an altered folder's warning in one sentence, the problem first (the console's run and job pages)
    headline: str = ""


@dataclass(frozen=True)
class RunRecord:
    """What the job store's signed records say of one run folder: the ``jobs`` whose signed record
    names it (the newest first), or ``problem``: why none can say (the store cannot be read)."""

    jobs: tuple[Job, ...] = ()
    problem: str = ""
    demo: bool = False  # the folder says it is a run of `taskcrew demo` (unsigned: it words a note only)
    # how the folder differs from what the signed record sealed or names (``folder_check``), in words
    # ('' when it does not); then ``decisions``: the decisions the signed audit log holds for the job
    altered: str = ""
    unsealed: bool = False  # an ended job's record from before its ending sealed its run folder
    decisions: tuple[str, ...] = ()

    @property
    def said(self) -> str:
        return f"the signed record of job {', '.join(j.id for j in self.jobs)}"

    @property
    def outcome(self) -> str | None:
        """How the run ended as its job's signed record says (the job's outcome once it finished,
        ``failed`` or ``cancelled``; ``queued``, ``running`` or ``waiting`` while it goes on); None
        when no signed record names the folder, or those that do disagree."""
        words = {(j.outcome or j.status) if j.status == "finished" else j.status for j in self.jobs}
        return words.pop() if len(words) == 1 else None

    @property
    def unvouched(self) -> str:
        """Why nothing vouches for the folder's outcome ('' when a signed record does)."""
        if self.outcome is not None:
            return ""
        if self.jobs:
            words = sorted({j.outcome or j.status for j in self.jobs})
            return f"the signed records naming its run folder disagree ({', '.join(words)})"
        return self.problem or NOT_NAMED

    def judge(self, outcome: str, verified: bool | None) -> Judged:
        """The one rule for showing a run's ``outcome`` and ``verified`` as its folder gives them:
        the signed job record's outcome, and where the folder says otherwise, or no signed record
        settles it, a note saying so. "Verified" comes from the folder only where the signed record
        says the run was done (taskcrew ends a run done only once its verifier verified it)."""
        from taskcrew.jobs.models import ACTIVE

        said = self.outcome
        finished = outcome not in UNFINISHED
        if self.altered and self.jobs:
            return self._altered(outcome, verified)
        if said is None:
            if not finished and not verified:
                return Judged(outcome, verified)  # nothing claimed yet (the job store says how it goes)
            if self.demo and not self.jobs:  # the demo kept its record elsewhere: said so, calmly
                return Judged(
                    outcome,
                    None if verified else verified,
                    f"{DEMO[:1].upper()}{DEMO[1:]}; the run folder's own files say {_claim(outcome, verified)}.",
                    "a demo run: nothing signed here vouches for it",
                    brief="A demo run: its job record was in the demo's own job store; nothing here vouches "
                    "for its outcome.",
                    calm=True,
                )
            return Judged(
                outcome,
                None if verified else verified,
                f"Nothing vouches for this outcome: {self.unvouched}; the run folder's own files say "
                f"{_claim(outcome, verified)}, and anyone who can write the runs folder can change them.",
                "nothing signed vouches for it",
                brief="Nothing signed vouches for this outcome: it is the run folder's own word.",
            )
        if said in ACTIVE:
            if not finished and not verified:
                return Judged(outcome, verified)
            return Judged(
                outcome,
                None if verified else verified,
                f"The run folder says {_claim(outcome, verified)}; {self.said} says it is still {said}: "
                "nothing vouches for that yet.",
                f"the signed job record says it is still {said}",
                brief=f"The run folder says {_claim(outcome, verified)}; the signed job record says it is "
                f"still {said}.",
            )
        shown = verified if said in VERIFIED_OUTCOMES or not verified else None
        if said == outcome and shown == verified:
            return Judged(said, verified, unsealed=self.unsealed)
        if (said, outcome) == ("cancelled", "interrupted"):  # a cancel stops its run as an interrupt
            return Judged(said, shown, unsealed=self.unsealed)  # does: the two agree (its verdict unshown)
        return Judged(
            said,
            shown,
            f"The run folder says {_claim(outcome, verified)}; {self.said} says {said}. The signed record is what "
            "counts: the folder's files are not signed.",
            f"the signed job record says {said}",
            self.jobs[0].reason,
            f"The run folder says {_claim(outcome, verified)}; the signed job record says {said}.",
        )

    def _altered(self, outcome: str, verified: bool | None) -> Judged:
        """A run folder changed after its run ended, or another run's (``altered``): the signed
        record's own account, and a plain note that what the folder says is not vouched for (first,
        where the folder claims another ending than the record, the two side by side)."""
        job = self.jobs[0]
        said = self.outcome or (job.outcome or job.status if job.status == "finished" else job.status)
        claim = _claim(outcome, verified)
        differs = claim != said
        decided = (
            f" The decisions the signed audit log holds for job {job.id}: {'; '.join(self.decisions)}."
            if self.decisions
            else f" The signed audit log holds no decision by a person for job {job.id}."
        )
        first = f"The run folder says {claim}; {self.said} says {said}. " if differs else ""
        note = (
            f"{first}{self.altered[:1].upper()}{self.altered[1:]}: what the run folder says — its task, what "
            "it changed, who approved, its story and its report — is not vouched for. Shown instead is "
            f"what {self.said} says: its task, its outcome ({said}), its reason and its answer.{decided}"
        )
        brief = f"The run folder says {claim}; the signed job record says {said}. " if differs else ""
        files = re.search(r"\(([^()]*) changed since job", self.altered)
        if files:
            problem = (
                f"This run's folder was changed after the run ended ({files.group(1)} changed), or another "
                "run's folder was put in its place"
            )
        elif " is not job " in self.altered:
            problem = "This run's folder is not its job's run: its trace is of another task"
        else:
            problem = f"Nothing vouches that this run's folder is as its run left it ({self.altered})"
        headline = (
            f"{problem}: rely only on {self.said} below — its outcome ({said}), its reason and its answer."
        )
        return Judged(
            said,
            None,
            note,
            f"the signed job record says {said}"
            if differs
            else "changed after the run ended: not vouched for",
            job.reason or "—",
            f"{brief}The run folder was changed after the run ended, or is another run's: what it says is "
            "not vouched for.",
            altered=True,
            task=job.task,
            answer=job.answer,
            decisions=self.decisions,
            headline=headline,
        )


def folder_check(run_dir: Path, jobs: Iterable[Job]) -> tuple[str, bool]:
    """The one rule for whether a run folder is still the account its job's signed record vouches
    for: the folder's files as sealed when the run ended or parked (``Job.run_seal``, ``jobs.
    runseal``; a seal of no folder, or of too many files to seal, vouches for none), and, for a
    record with no seal, the task its trace says against the record's. Every ending seals
    (finished, failed, cancelled: ``jobs.store.Jobs._update``), and so does parking for an approval;
    a seal is checked whatever the record's status now (a job retried after it names the sealed
    folder until its new leg makes one). A waiting or ended record with no seal vouches for nothing,
    unless it is older than seals (no ``run_seal_format``: its task alone is checked). Returns what
    differs, in words ('' when nothing does), and whether an ended record names it unsealed (ended
    before its ending sealed run folders: nothing is checked but the task)."""
    from taskcrew.jobs.liveness import _task_of
    from taskcrew.jobs.models import ENDED
    from taskcrew.jobs.runseal import changes

    unsealed = False
    for job in jobs:
        if (sealed := job.run_seal) is not None:
            if (what := changes(sealed, run_dir)) and sealed.state != "sealed":
                return f"job {job.id}'s seal vouches for no run folder here ({what})", False
            if what:
                return (
                    f"the run folder was changed after the run ended ({what} since job {job.id} "
                    f"{'parked' if sealed.parked else 'ended'} and sealed it), or another run's folder was "
                    "put in its place"
                ), False
            continue
        task = _task_of(run_dir)
        if task is not None and task != job.task:
            return (
                f"the run folder is not job {job.id}'s run: its trace is of another task ({task[:100]!r}), "
                f"while the job's signed record names this folder for {job.task[:100]!r}"
            ), False
        if job.run_seal_format and (job.status in ENDED or job.status == "waiting"):
            return (
                f"job {job.id}'s signed record is {job.status} without a seal of its run folder (every job "
                "that parks or ends has one made), so nothing vouches that the folder is as its run left it"
            ), False
        unsealed = unsealed or job.status in ENDED
    return "", unsealed


def _claim(outcome: str, verified: bool | None) -> str:
    """What a run folder claims, in words: its outcome, and that it was verified where it says so."""
    if outcome in UNFINISHED:
        return "verified (though the run did not end)" if verified else "the run did not end"
    return f"{outcome} and verified" if verified else outcome


class RunRecords:
    """The job store's records by the run folder they name, read once (``RunRecords.read``) for a
    list of runs or one command; ``of`` gives what the signed ones say of one folder."""

    def __init__(
        self,
        jobs: Iterable[Job] = (),
        problem: str = "",
        now: datetime | None = None,
        keys: Any = None,
        doubts: dict[str, Any] | None = None,
    ) -> None:
        self.jobs = list(jobs)  # every record read, signed or not (the newest first)
        self.doubts = doubts or {}  # job id -> its send in doubt (``liveness.sends_in_doubt``), if read
        self.problem = problem
        self.now = now  # the job database's clock, as read with the records (heartbeats are judged by it)
        self.keys = keys  # the key ring the store signs with: its signed audit log says who decided
        self._log: Any = None  # ``authority.SignedLog``, read once on first need (a folder changed)
        self._by_dir: dict[str, Job] | None = None
        self._named: dict[Path, list[Job]] = {}
        self.folders: list[Path] = []  # every run folder a record names (the newest job's first)
        for job in self.jobs:
            if not job.run_dir:
                continue
            folder = Path(job.run_dir).resolve()
            if folder not in self._named:
                self._named[folder] = []
                self.folders.append(folder)
            if job.record_trust == "signed":
                self._named[folder].append(job)

    @classmethod
    def read(cls, jobs: Any = None, folder: Path | None = None, doubts: bool = False) -> RunRecords:
        """The newest ``RUNS_LOOKED_UP`` records of the job store ``jobs`` (default: the CLI's,
        opened read-only), and with ``folder`` (one run, however old) every record naming it; a
        store that cannot be read vouches for no run, and says why. ``doubts``: the signed jobs'
        sends in doubt too (``liveness.sends_in_doubt``, one query: ``doubt``)."""
        from taskcrew.approvals.signing import KeyError_
        from taskcrew.jobs.liveness import parked_in, sends_in_doubt
        from taskcrew.jobs.store import Jobs, JobStoreError, NoJobDatabase, UnknownJob, default_url, where

        opened = None
        try:
            if jobs is None:
                jobs = opened = Jobs.open(create=False, make_folder=False)
            newest = jobs.list(limit=RUNS_LOOKED_UP)
            if folder is not None and len(newest) >= RUNS_LOOKED_UP:
                seen = {job.id for job in newest}
                newest += [job for job in jobs.naming(folder.name) if job.id not in seen]
                if (parked := parked_in(folder)) is not None and parked[0] not in seen:
                    with suppress(UnknownJob):  # the job its leg parked for (``jobs.liveness``)
                        newest.append(jobs.get(parked[0]))
            signed = [job for job in newest if job.record_trust == "signed"]
            found = sends_in_doubt(jobs, signed) if doubts else {}
            return cls(newest, now=jobs.db_now(), keys=jobs.keys, doubts=found)
        except NoJobDatabase:
            try:
                at = f" at {where(default_url())}" if opened is None and jobs is None else ""
            except Exception:
                at = ""
            return cls(problem=f"there is no job database yet{at} (no job has been submitted here)")
        except (JobStoreError, KeyError_) as exc:
            return cls(problem=f"the job store cannot be read ({' '.join(str(exc).split())})")
        finally:
            if opened is not None:
                opened.close()

    def of(self, run_dir: Path) -> RunRecord:
        """What the signed records say of ``run_dir``, and whether the folder is still the account they
        vouch for (``folder_check``; where it is not, the decisions the signed audit log holds)."""
        named = tuple(self._named.get(run_dir.resolve(), ()))
        altered, unsealed = folder_check(run_dir, named) if named else ("", False)
        decisions: tuple[str, ...] = ()
        if altered:
            decisions = tuple(d for job in named for d in self.signed_log().decisions(job.id))
        return RunRecord(named, self.problem, demo_marked(run_dir), altered, unsealed, decisions)

    def doubt(self, run_dir: Path) -> str:
        """What `jobs list` says of the send in doubt of the job ``run_dir`` is a run of
        (``jobs.liveness.doubt_note``, the same words, after the job's id): only a job whose signed
        record names the folder, the one link ``of`` vouches by (never the folder's own trace: a
        folder anyone can write does not claim a job's send). '' where none is in doubt, or none
        was read (``read(doubts=True)``)."""
        from taskcrew.jobs.liveness import doubt_note

        if not self.doubts:
            return ""
        jobs = self._named.get(run_dir.resolve(), ())
        found = {job.id: self.doubts[job.id] for job in jobs if job.id in self.doubts}
        return "; ".join(f"job {job_id}: {doubt_note(intent)}" for job_id, intent in found.items())

    def signed_log(self) -> Any:
        """The signed audit log beside the store's key (``authority.SignedLog``), read once."""
        if self._log is None:
            from taskcrew.approvals.authority import SignedLog
            from taskcrew.approvals.signing import KeyRing

            self._log = SignedLog.read(self.keys or KeyRing.default())
        return self._log

    def state(self, run_dir: Path, surface: Surface = "cli") -> tuple[str, str] | None:
        """What the run folder ``run_dir``, which has no end, is now, and what to know or do: the one
        rule (``jobs.liveness.unfinished_run``: running, parked, orphaned, queued, continued,
        interrupted) every surface shows; None when no job store was read (or it could not be)."""
        from taskcrew.jobs.liveness import jobs_by_run_dir, unfinished_run

        if self.problem or self.now is None:
            return None
        if self._by_dir is None:
            self._by_dir = jobs_by_run_dir(self.jobs)
        return unfinished_run(run_dir, self._by_dir, self.now, surface)


def demo_marked(run_dir: Path | None) -> bool:
    """The run folder says it is a run of `taskcrew demo` (its ``demo.json``: not signed, so it may
    change how a run is worded, never make it look more trustworthy)."""
    try:
        mark = json.loads((run_dir / DEMO_MARK).read_text(encoding="utf-8")) if run_dir else None
    except (OSError, ValueError):
        return False
    return isinstance(mark, dict) and mark.get("demo") is True


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


def read_run(folder: Path, records: RunRecords | None = None) -> RunSummary:
    """The run in ``folder``, its outcome as the job store's signed record says (``records``,
    default: read from the CLI's job store; ``RunRecord.judge``)."""
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
    if finished is not None:
        summary.outcome = str(finished.get("outcome", "unfinished"))
        summary.reason = str(finished.get("reason", ""))
        summary.changed = str(finished.get("changed", ""))
        summary.llm_calls = int(finished.get("llm_calls", 0))
        summary.input_tokens = int(finished.get("input_tokens", 0))
        summary.output_tokens = int(finished.get("output_tokens", 0))
        summary.cost_usd = _cost(finished.get("cost_usd"))
        summary.seconds = float(finished.get("seconds", 0.0))
    facts = _facts(summary)  # what its trace shows (its verdict too), before the signed record judges it
    records = records or RunRecords.read(folder=folder)
    judged = records.of(folder).judge(summary.outcome, summary.verified)
    summary.outcome, summary.verified, summary.note = judged.outcome, judged.verified, judged.note
    summary.unsealed = judged.unsealed
    summary.doubt = records.doubt(folder)
    if judged.altered:  # not the run's account: the signed record's own fields, never the folder's
        summary.altered, summary.task, summary.answer, summary.changed = True, judged.task, judged.answer, ""
        summary.decisions = list(judged.decisions)
    if finished is None:  # what it is now (the job store's word), and what its trace shows
        state = None if summary.finished else records.state(folder)
        head = f"{state[0]}: {state[1]}" if state else "the run stopped before it ended (killed?)"
        summary.reason = f"{head}; {facts}"
    if judged.reason and finished is None:  # the signed word first, and still what its trace shows was done
        summary.reason = f"{judged.reason}; {facts}"
    else:
        summary.reason = judged.reason or summary.reason
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


def _facts(run: RunSummary) -> str:
    """What an unfinished run's trace shows, said plainly."""
    parts = [f"its trace shows {run.llm_calls} model call(s)"]
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


def list_runs(runs_dir: Path, records: RunRecords | None = None) -> tuple[list[RunSummary], list[str]]:
    """Every run under ``runs_dir``, newest first, and a note for each folder that could not be read;
    their outcomes as the job store's signed records say (``records``: read once when not given)."""
    if not runs_dir.is_dir():
        raise RunReadError(f"the runs folder {runs_dir} does not exist")
    runs, problems = [], []
    records = records or RunRecords.read()
    for folder in _run_folders(runs_dir, MAX_DEPTH):
        try:
            runs.append(read_run(folder, records))
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
