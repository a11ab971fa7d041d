"""Is a job's holder still alive, and what should a person read about a job that is not moving?

One rule for the worker's watch loop, ``jobs retry``, ``jobs list`` and the console:

- a ``running`` job whose holder (a worker or a ``taskcrew run``) has not heart-beaten for
  ``STALE_AFTER_S`` is orphaned: a worker's goes back on the queue by itself (any worker's watch loop),
  a foreground run's waits for its person (``taskcrew jobs retry ID``);
- ``waiting`` is parked on an approval or a question; ``queued`` after a hand-back resumes on the next
  worker; a run stopped by a signal ends ``interrupted``.

Heartbeats are the database's clock (``Jobs.db_now``, which the store writes them with): pass it as
``now``. The local clock (the default) is for display only where no store is at hand: a host whose
clock is off would otherwise take a live worker's job over, or wait out its lead on a dead one's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from taskcrew.jobs.models import CANCELLABLE, Intent, Job, JobStatus, utcnow

if TYPE_CHECKING:
    from taskcrew.crew.trace import ControlEvent

STALE_AFTER_S = 15.0  # a holder beats every 2 s


def silent_for(job: Job, now: datetime | None = None) -> float | None:
    """Seconds since the job's holder last heart-beat (None: not running); ``now``: the database's
    clock (``Jobs.db_now``)."""
    beat = job.heartbeat_at or job.started_at
    if job.status != "running" or beat is None:
        return None
    return ((now or utcnow()) - beat).total_seconds()


def is_orphaned(job: Job, now: datetime | None = None, stale_after_s: float = STALE_AFTER_S) -> bool:
    silent = silent_for(job, now)
    return silent is not None and silent >= stale_after_s


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


# What a person does about a job that waits for a decision, per surface: the CLI names its command,
# the console its page (a link, drawn by the page: ``console.job_words.note_html``).
APPROVALS = {"cli": "`taskcrew approvals list` shows it", "console": "open it in Approvals"}
Surface = Literal["cli", "console"]


def _waiting(job: Job, surface: Surface) -> str:
    """What a ``waiting`` job waits for, and where to decide it."""
    return f"{job.reason or 'waiting for a person'}; {APPROVALS[surface]}"


# The jobs whose sends in doubt are named: those not ended, and a failed one (a retry resumes it).
UNSETTLED: tuple[JobStatus, ...] = CANCELLABLE


def send_in_doubt(intents: Sequence[Intent]) -> Intent | None:
    """The job's latest send that may have been saved with no answer that says so, by the intent
    log's own rules over each request's attempts (``tools.intents``): the latest attempt's answer is
    one nobody knows (none recorded yet — a worker stopped or killed mid-send —, a timeout, a 5xx, a
    gateway's 502/504, a record that does not check out), or an earlier attempt may still land
    (``IntentLog.doubt``: not covered by a resend a person approved that was answered). A held-back
    attempt (it never left) is no doubt. A request's attempts are found as the intent log finds them
    (``attempts``): by content, not by key, so a resend recorded under another key (the rules' left-out
    fields edited since) settles the attempts before it. None: nothing in doubt."""
    from taskcrew.tools.intents import IntentLog, record_of

    found: list[Intent] = []
    for ordered in attempts(intents):
        records = [record_of(intent) for intent in ordered]
        latest = records[-1]
        if latest.answer == "unknown" and latest.left:
            found.append(ordered[-1])
        elif (doubt := IntentLog.doubt(records)) is not None:
            found.append(ordered[records.index(doubt)])
    return max(found, key=lambda intent: intent.recorded_at, default=None)


def attempts(intents: Sequence[Intent]) -> list[list[Intent]]:
    """A job's intents as its requests' attempts, oldest first: each attempt joins the request of an
    earlier one of the same key (``<key>``, ``<key>.2``, ...: ``tools.intents.attempt_key``) or that
    is an earlier attempt of it by ``approvals.key.earlier_attempt`` (``counts_as_attempt``: one that
    cannot be told from it counts), judged as the intent log judged it when it recorded the attempt:
    with the fields the rules left out of its key then (recorded with it)."""
    from taskcrew.approvals.key import counts_as_attempt, earlier_attempt
    from taskcrew.tools.intents import record_of

    read = {id(intent): record_of(intent) for intent in intents}  # as the intent log reads each row

    def number(intent: Intent) -> int:
        n = intent.key.partition(".")[2]
        return int(n) if n.isdigit() else 1

    def earlier(row: Intent, of: Intent) -> bool:
        if row.key.partition(".")[0] == of.key.partition(".")[0]:
            return True
        stored, this = read[id(row)], read[id(of)]
        said = earlier_attempt(
            (stored.method, stored.url, stored.fields),
            this.method,
            this.url,
            this.fields,
            excluded=this.excluded or [],
            recorded=stored.excluded,  # None: a row written before rows recorded it
            stored_key=row.key.partition(".")[0],
            scope=row.job_id,
        )
        return counts_as_attempt(said)

    requests: list[list[Intent]] = []
    for intent in sorted(intents, key=lambda i: (i.recorded_at, number(i))):
        request = next((r for r in requests if any(earlier(row, intent) for row in r)), None)
        if request is None:
            requests.append([intent])
        else:
            request.append(intent)
    return requests


def sends_in_doubt(store: Any, jobs: Sequence[Job]) -> dict[str, Intent]:
    """Each unsettled job's send in doubt (``send_in_doubt``) by job id, for a page or a listing of
    ``jobs``: their intents read in one query (``Jobs.intents_of``)."""
    unsettled = [job.id for job in jobs if job.status in UNSETTLED]
    if not unsettled:
        return {}
    found = {job_id: send_in_doubt(intents) for job_id, intents in store.intents_of(unsettled).items()}
    return {job_id: intent for job_id, intent in found.items() if intent is not None}


def doubt_note(intent: Intent) -> str:
    """What a person reads of a job's send in doubt, the same words on every surface."""
    if not intent.trusted:
        said = "its record in the job database does not check out"
    elif intent.status == "recorded":
        said = "no answer yet"
    else:
        said = (intent.result or "no answer")[:80]
    return (
        f"a send may have been saved ({intent.payload.method} {intent.target[:120]}: {said}): look in "
        "the system before retrying or upgrading"
    )


def state_note(
    job: Job, now: datetime | None = None, surface: Surface = "cli", doubt: Intent | None = None
) -> str:
    """What a person should know about a job that is not simply moving along, with what to do;
    '' when there is nothing to say. ``surface``: where it is read (the CLI names commands; the
    console names its pages and buttons). ``doubt``: the job's send in doubt (``sends_in_doubt``),
    named first."""
    note = _state(job, now, surface)
    if doubt is None or job.status not in UNSETTLED:
        return note
    return f"{doubt_note(doubt)}; {note}" if note else doubt_note(doubt)


def _state(job: Job, now: datetime | None, surface: Surface) -> str:
    cli = surface == "cli"
    if job.record_trust == "forged":
        return (
            "not signed: changed or added in the job database, or signed with another approvals key; "
            "taskcrew does not vouch for this job"
        )
    if job.record_trust == "superseded":  # signed, but set back: the reason names the log's newest word
        return f"not the job's latest record: {job.reason.removeprefix('superseded: ')}"
    if job.record_trust == "legacy":
        return (
            "not signed: recorded by a version before job records were signed, or its signature removed; "
            "no worker runs it: submit the task again"
        )
    silent = silent_for(job, now)
    if silent is not None and silent >= STALE_AFTER_S:
        who = job.worker or "its holder"
        if job.options.foreground:
            retry = f"`taskcrew jobs retry {job.id}`" if cli else "Retry job"
            return (
                f"orphaned: the {'`taskcrew run`' if cli else 'foreground run'} ({who}) stopped "
                f"{_ago(silent)} ago; {retry} resumes it on a worker"
            )
        start = "start one: `taskcrew worker`" if cli else "start one on a worker host"
        return f"orphaned: worker {who} went silent {_ago(silent)} ago; any running worker takes it over ({start})"
    if job.status == "waiting" and job.fan_out is not None:  # a batch: it waits for its children
        n = len(job.fan_out.children)
        see = f"`taskcrew jobs show {job.id}`" if cli else "this job's page"
        return f"waiting for its {n} child job(s) to end; {see} lists them"
    if job.status == "waiting":
        return f"parked: {_waiting(job, surface)}"
    if job.status == "finished" and job.outcome == "interrupted":
        retry = f"`taskcrew jobs retry {job.id}`" if cli else "Retry job"
        return f"interrupted: {retry} resumes it from its last checkpoint"
    if job.status == "queued" and job.attempts:
        return "queued again: resumes from its last checkpoint on the next free worker"
    return ""


# A job's leg that parks (waits for a person) leaves a run folder whose run never ends: the job goes on
# in a new leg, in a new run folder, once the approval is decided. The runner ends that folder's trace
# with this event (``parked_event``), which names the job and the approval: the folder's own word (the
# trace is not signed), which only says what the folder is; how the job went on is its signed record's.
PARKED = "parked"
_PARKED_WORDS = re.compile(r"^waiting for approval (\S+) of job (\S+);")


def parked_event(job_id: str, approval_id: str) -> ControlEvent:
    """The last event of a parked leg's trace (``jobs.runner``)."""
    from taskcrew.crew.trace import ControlEvent

    return ControlEvent(
        action=PARKED,
        reason=f"waiting for approval {approval_id} of job {job_id}; the job goes on in a new run "
        "folder once it is decided",
    )


def parked_in(run_dir: Path) -> tuple[str, str] | None:
    """(job id, approval id) where the folder's trace ends with the runner's ``parked_event``."""
    try:
        lines = (run_dir / "trace.jsonl").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut short
        if not isinstance(event, dict) or event.get("kind") != "control" or event.get("action") != PARKED:
            return None
        found = _PARKED_WORDS.match(str(event.get("reason", "")))
        return (found.group(2), found.group(1)) if found else None
    return None


def _task_of(run_dir: Path) -> str | None:
    try:
        with (run_dir / "trace.jsonl").open(encoding="utf-8", errors="replace") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    return str(first.get("task")) if isinstance(first, dict) and first.get("kind") == "run_started" else None


def _job_now(job: Job) -> str:
    """A job's state in a few words: "finished: done", "running", "waiting for approval apr-…"."""
    if job.status == "finished":
        return f"finished: {job.outcome}" if job.outcome else "finished"
    if job.status == "waiting":
        return job.reason or "waiting for a person"
    return job.status


def unfinished_run(
    run_dir: Path, by_dir: dict[str, Job], now: datetime | None = None, surface: Surface = "cli"
) -> tuple[str, str]:
    """The one rule for what a run folder without an end is, every surface's (``runs list``, ``runs
    show``, the console's runs list and run page): (state, what to know and do). ``running``,
    ``parked`` (its job waits for a person), ``orphaned``, ``queued``: its job's signed record names
    the folder; ``continued``: a leg that parked, whose job went on in a later run folder (the folder
    names the job, its signed record names the later folder); ``interrupted``: nothing runs it now.
    ``by_dir`` maps jobs' current run folders (``jobs_by_run_dir``) to their jobs."""
    job = by_dir.get(str(run_dir.resolve()))
    if job is not None and job.record_trust == "signed" and job.status == "waiting":
        return "parked", f"job {job.id} is {_waiting(job, surface)}"
    if job is None:
        return _unnamed(run_dir, by_dir, surface)
    note = state_note(job, now, surface)
    if job.status == "running" and is_orphaned(job, now):
        return "orphaned", note.removeprefix("orphaned: ")
    if job.status == "running":
        return "running", f"job {job.id} on {job.worker}"
    if job.status == "queued":
        return "queued", note.removeprefix("queued again: ") or f"job {job.id} waits for a free worker"
    if job.status == "waiting":  # a record taskcrew did not sign: it says why
        return "parked", note
    return "interrupted", f"job {job.id} is {job.status}" + (f": {job.reason}" if job.reason else "")


def _unnamed(run_dir: Path, by_dir: dict[str, Job], surface: Surface) -> tuple[str, str]:
    """A run folder without an end that no job's record names: a leg that parked, whose job went on
    in a later folder (its trace says so, and the job's signed record agrees: same task, a later
    folder), else a run that stopped."""
    parked = parked_in(run_dir)
    if parked is None:
        return "interrupted", (
            "the run stopped before it ended (killed, or an earlier leg of a job that went on in a "
            "later run folder); nothing runs it now"
        )
    job_id, approval_id = parked
    job = next((j for j in by_dir.values() if j.id == job_id), None)
    if job is None or job.record_trust != "signed" or job.task != _task_of(run_dir) or not job.run_dir:
        return "interrupted", (
            f"this leg parked for approval {approval_id} of job {job_id} (its trace says so), but no "
            "signed job record at hand says how that job went on; nothing runs this run folder now"
        )
    later = Path(job.run_dir).name
    return "continued", (
        f"this leg parked for approval {approval_id}; job {job.id} went on in run {later} ({_job_now(job)})"
    )


def jobs_by_run_dir(jobs: list[Job]) -> dict[str, Job]:
    return {str(Path(j.run_dir).resolve()): j for j in jobs if j.run_dir}


def annotate_runs(runs: list[Any], find: Callable[[str], Path | None], jobs: Any) -> list[Any]:
    """Give each unfinished run its real state and what to do, from the job store ``jobs``. Runs are
    summaries with ``name`` and ``reason``, and either ``status`` (the console's: ``running`` until
    the end, replaced by the state) or ``outcome`` (``runs list``'s: stays ``unfinished``, the
    reason starts with the state). A store that cannot be read leaves them as they are."""
    console = bool(runs) and hasattr(runs[0], "status")
    pending = [r for r in runs if (r.status == "running" if console else r.outcome == "unfinished")]
    if not pending:
        return runs
    try:
        by_dir, now = jobs_by_run_dir(jobs.list(limit=5000)), jobs.db_now()
    except Exception:  # the lists still show the runs; only the notes are missing
        return runs
    for run in pending:
        folder = find(run.name)
        if folder is None:
            continue
        state, note = unfinished_run(folder, by_dir, now)
        if console:
            run.status, run.reason = state, note
        else:
            run.reason = f"{state}: {note}"
    return runs
