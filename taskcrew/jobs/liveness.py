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

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from taskcrew.jobs.models import Job, utcnow

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


def state_note(job: Job, now: datetime | None = None) -> str:
    """What a person should know about a job that is not simply moving along, with what to do;
    '' when there is nothing to say."""
    if job.record_trust == "forged":
        return (
            "not signed: changed or added in the job database, or signed with another approvals key; "
            "taskcrew does not vouch for this job"
        )
    if job.record_trust == "legacy":
        return (
            "not signed: recorded by a version before job records were signed, or its signature removed; "
            "no worker runs it: submit the task again"
        )
    silent = silent_for(job, now)
    if silent is not None and silent >= STALE_AFTER_S:
        who = job.worker or "its holder"
        if job.options.foreground:
            return (
                f"orphaned: the `taskcrew run` ({who}) stopped {_ago(silent)} ago; "
                f"`taskcrew jobs retry {job.id}` resumes it on a worker"
            )
        return (
            f"orphaned: worker {who} went silent {_ago(silent)} ago; any running worker takes it "
            "over (start one: `taskcrew worker`)"
        )
    if job.status == "waiting":
        return f"parked: {job.reason or 'waiting for a person'}; `taskcrew approvals list` shows what"
    if job.status == "finished" and job.outcome == "interrupted":
        return f"interrupted: `taskcrew jobs retry {job.id}` resumes it from its last checkpoint"
    if job.status == "queued" and job.attempts:
        return "queued again: resumes from its last checkpoint on the next free worker"
    return ""


def unfinished_run(run_dir: Path, by_dir: dict[str, Job], now: datetime | None = None) -> tuple[str, str]:
    """(status, what to do) of a run folder without an end: still running, parked, orphaned, or
    interrupted; ``by_dir`` maps jobs' current run folders (``jobs_by_run_dir``) to their jobs."""
    job = by_dir.get(str(run_dir.resolve()))
    if job is None:
        return "interrupted", (
            "the run stopped before it ended (killed, or an earlier leg of a job that went on in a "
            "later run folder); nothing runs it now"
        )
    note = state_note(job, now)
    if job.status == "waiting":
        return "parked", note
    if job.status == "running" and is_orphaned(job, now):
        return "orphaned", note
    if job.status == "running":
        return "running", f"job {job.id} on {job.worker}"
    if job.status == "queued":
        return "queued", note or f"job {job.id} waits for a free worker"
    return "interrupted", f"job {job.id} is {job.status}" + (f": {job.reason}" if job.reason else "")


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
