"""Is a job's holder still alive, and what should a person read about a job that is not moving?

One rule for the worker's watch loop, ``jobs retry``, ``jobs list`` and the console:

- a ``running`` job whose holder (a worker or a ``taskcrew run``) has not heart-beaten for
  ``STALE_AFTER_S`` is orphaned: a worker's goes back on the queue by itself (any worker's watch loop),
  a foreground run's waits for its person (``taskcrew jobs retry ID``);
- ``waiting`` is parked on an approval or a question; ``queued`` after a hand-back resumes on the next
  worker; a run stopped by a signal ends ``interrupted``.
"""

from __future__ import annotations

from datetime import datetime

from taskcrew.jobs.models import Job, utcnow

STALE_AFTER_S = 15.0  # a holder beats every 2 s


def silent_for(job: Job, now: datetime | None = None) -> float | None:
    """Seconds since the job's holder last heart-beat (None: not running)."""
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
