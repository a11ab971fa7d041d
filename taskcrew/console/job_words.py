"""A job in plain words for the person reading its page: what each line of its history means, and
its reason only while it says something about the job's current state."""

from __future__ import annotations

from typing import Any

# The job store's history kinds (``Jobs._event``: the status a job moved to, or what happened to it),
# in words; a kind not listed is shown with its underscores as spaces.
EVENT_WORDS = {
    "submitted": "submitted",
    "queued": "queued",
    "running": "started",
    "parked": "paused to ask a person",
    "waiting": "waiting for a decision",
    "approval_approved": "approved",
    "approval_rejected": "rejected",
    "approval_answered": "answered",
    "approval_expired": "approval expired unanswered",
    "resumed": "back in the queue after the decision",
    "retried": "sent to run again",
    "cancelled": "cancelled",
    "finished": "finished",
    "failed": "failed",
    "taken_over": "taken over (its worker stopped answering)",
    "handed_back": "handed back to the queue (its worker stopped)",
}

# the statuses a job's reason describes: why it waits, why it failed, how it ended. Once a waiting
# job runs again its reason still names the approval it waited for: not shown then.
REASON_STATUSES = ("waiting", "finished", "failed", "cancelled")


def event_words(kind: str) -> str:
    return EVENT_WORDS.get(kind, kind.replace("_", " "))


def current_reason(job: Any) -> str:
    """The job's reason where it describes the job's state now ('' while it is queued or running)."""
    return str(job.reason or "") if job.status in REASON_STATUSES else ""
