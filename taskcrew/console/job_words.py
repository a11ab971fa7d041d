"""A job in plain words for the person reading its page: what each line of its history means, and
its reason only while it says something about the job's current state."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape

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
    "approval_first": "first of two approvals given",  # not a store line: the approval's own record
    "resumed": "back in the queue after the decision",
    "retried": "sent to run again",
    "cancelled": "cancelled",
    "finished": "finished",
    "failed": "failed",
    "taken_over": "taken over (its worker stopped answering)",
    "handed_back": "handed back to the queue (its worker stopped)",
}

FIRST_APPROVAL = "approval_first"  # a first approval, as the job page's history shows it (jobs_page.history)

# the statuses a job's reason describes: why it waits, why it failed, how it ended. Once a waiting
# job runs again its reason still names the approval it waited for: not shown then.
REASON_STATUSES = ("waiting", "finished", "failed", "cancelled")


_APPROVAL_ID = re.compile(r"waiting for approval (apr-[A-Za-z0-9_-]+)")


def event_words(kind: str, detail: str = "") -> str:
    """A history line's kind in words; a batch's "waiting" line (its detail "waiting for its …
    child job(s)": ``Jobs.fan_out``) waits for its children, not for a decision."""
    if kind == "waiting" and detail.startswith("waiting for its"):
        return "waiting for its child jobs"
    return EVENT_WORDS.get(kind, kind.replace("_", " "))


def planned_for(job: Any) -> str:
    """Who a planned batch child (``job.origin``) is for, in words: not its submitter's text."""
    who = job.submitted_by
    return f"planned for {who}'s batch {job.origin.batch_id} ({who} submitted the batch, not this text)"


def history_line(job: Any, event: Any) -> dict[str, str]:
    """One line of a job's history as its page shows it (drawn, and sent live): when, what in
    words, its detail, and by whom. A planned batch child's "submitted" line names the batch its
    submitter gave, not her as the author of the planner's text (``planned_for``)."""
    by = f"by {event.actor}" if event.actor else ""
    if event.kind == "submitted" and getattr(job, "origin", None) is not None:
        by = planned_for(job)
    return {
        "at": str(event.at)[:19],
        "kind": event.kind,
        "words": event_words(event.kind, event.detail or ""),
        "detail": event.detail or "",
        "by": by,
    }


def current_reason(job: Any) -> str:
    """The job's reason where it describes the job's state now ('' while it is queued or running)."""
    return str(job.reason or "") if job.status in REASON_STATUSES else ""


def note_html(note: str) -> Markup:
    """A job's or a run's note (``jobs.liveness``, in the console's words) as the page shows it:
    "open it in Approvals" is a link, to the approval the note names where it names one."""
    from taskcrew.jobs.liveness import APPROVALS

    ask = APPROVALS["console"]
    if not note.endswith(ask):
        return escape(note)
    named = _APPROVAL_ID.search(note)
    href = f"/approvals/{quote(named.group(1), safe='')}" if named else "/approvals"
    return escape(note[: -len("Approvals")]) + Markup('<a href="{}">Approvals</a>').format(href)


def console_note(job: Any, now: Any, doubt: Any = None) -> Markup:
    """What to know and do about a job not simply moving along, as the console says it
    (``jobs.liveness.state_note``, judged by the job database's clock ``now``; ``doubt``: its send
    in doubt, ``liveness.sends_in_doubt``)."""
    from taskcrew.jobs.liveness import state_note

    return note_html(state_note(job, now, "console", doubt))


_EARLIER = re.compile(r"\('(?P<said>[^']*)' on leg (?P<leg>\d+)\)")
_LATEST = re.compile(
    r"says (?P<entry>job \S+ (?:finished (?P<outcome>\S+)|was (?P<act>cancelled|retried|taken over))"
    r" .*?\(signed audit entry \d+\)) since"
)


def rolled_back(job: Any) -> dict[str, str] | None:
    """A job row set back to an earlier signed version (``record_trust`` superseded: ``Jobs._superseded``),
    as its pages say it: ``latest``, the newest ending the signed audit log has of it ("not_verified",
    "cancelled"), ``earlier``, what the row says ("finished done on leg 0"), and ``entry``, the log's
    entry in words ("job … finished not_verified on leg 1 (signed audit entry 12)"); None for any
    other job."""
    if getattr(job, "record_trust", "") != "superseded":
        return None
    reason = str(job.reason or "")
    latest, earlier = _LATEST.search(reason), _EARLIER.search(reason)
    return {
        "latest": (latest.group("outcome") or latest.group("act")) if latest else "see the Audit log",
        "earlier": f"{earlier.group('said')} on leg {earlier.group('leg')}"
        if earlier
        else "an earlier version",
        "entry": latest.group("entry") if latest else "",
    }
