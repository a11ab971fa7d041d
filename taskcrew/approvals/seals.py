"""What the authority signs, in one place: a job's submission, its record, its history and its checkpoint, a submission's intent, a parked request, a first approval,
a decision and a routine's acceptance. Each payload names the record it belongs to, so a signature cannot be moved from one
row to another, and covers every field a forger would want to change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from taskcrew.jobs.models import Approval, Cosign, Intent, Job, JobEvent

if TYPE_CHECKING:
    from taskcrew.routines.models import Routine


def submission(job: Job) -> dict[str, Any]:
    return {
        "seal": "submission",
        "job": job.id,
        "task": job.task,
        "by": job.submitted_by,
        "proof": job.submitted_proof,
        "parent": job.parent_id,
        "item": job.item,
        "options": job.options.model_dump(mode="json"),
    }


def job_record(job: Job, leg: int) -> dict[str, Any]:
    """A job's whole record as the store last wrote it (state, outcome, reason, answer, run folder,
    worker…), on its leg: an edited field, a record copied from another job or an earlier leg, or a
    record added in the job database does not check out."""
    return {"seal": "job", "leg": leg, "doc": job.model_dump(mode="json", exclude={"record_sig"})}


def intent(recorded: Intent) -> dict[str, Any]:
    """A submission's record before and after it is sent (what it is, what the system answered):
    a job decides by it whether a repeat is sent, so an edited answer must not check out."""
    return {"seal": "intent", **recorded.model_dump(mode="json", exclude={"sig", "updated_at"})}


def checkpoint(job_id: str, state: dict[str, Any]) -> dict[str, Any]:
    """A run's state saved after a stage (its plan, finished steps, verdicts): what a resumed leg of
    this job builds on."""
    return {"seal": "checkpoint", "job": job_id, "state": state}


def event(line: JobEvent) -> dict[str, Any]:
    """One line of a job's history, of its job."""
    return {"seal": "event", **line.model_dump(mode="json", exclude={"sig"})}


def request(approval: Approval) -> dict[str, Any]:
    return {
        "seal": "request",
        "approval": approval.id,
        "job": approval.job_id,
        "kind": approval.kind,
        "key": approval.key,
        "request": approval.request.model_dump(mode="json") if approval.request else None,
        "question": approval.question,
        # a deadline moved in the job database would revive an approval that expired unanswered
        "expires": approval.expires_at.isoformat() if approval.expires_at else None,
    }


def sources(approval: Approval) -> dict[str, Any]:
    """What the approver is shown beside the payload: where each value came from, and the screenshot
    of the filled form (a forged one would show another form than the payload)."""
    return {
        "seal": "sources",
        "approval": approval.id,
        "job": approval.job_id,
        "sources": [s.model_dump(mode="json") for s in approval.sources],
        "screenshot": approval.screenshot,
    }


def cosign(approval: Approval, first: Cosign) -> dict[str, Any]:
    return {
        "seal": "cosign",
        "approval": approval.id,
        "key": approval.key,
        "name": first.name,
        "proof": first.proof,
    }


def decision(approval: Approval) -> dict[str, Any]:
    return {
        "seal": "decision",
        "approval": approval.id,
        "job": approval.job_id,
        "key": approval.key,
        "status": approval.status,
        "decision": approval.decision.model_dump(mode="json") if approval.decision else None,
        "by": approval.decided_by,
    }


def routine(accepted: Routine, work: dict[str, Any]) -> dict[str, Any]:
    """A routine version's acceptance: which version, who accepted it, and ``work``, everything it
    does (the routine without its status and counters, which change as it replays)."""
    return {
        "seal": "routine",
        "name": accepted.name,
        "version": accepted.version,
        "by": accepted.reviewed_by,
        "work": work,
    }


def current_routine(name: str, version: int | None) -> dict[str, Any]:
    """Which version of a routine replays (None: none, it was retired), as ``routines accept`` and
    ``retire`` last set it."""
    return {"seal": "routine-current", "name": name, "version": version}
