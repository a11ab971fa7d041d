"""What the authority signs, in one place: a job's submission, a parked request, a first approval
and a decision. Each payload names the record it belongs to, so a signature cannot be moved from one
row to another, and covers every field a forger would want to change."""

from __future__ import annotations

from typing import Any

from taskcrew.jobs.models import Approval, Cosign, Job


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


def request(approval: Approval) -> dict[str, Any]:
    return {
        "seal": "request",
        "approval": approval.id,
        "job": approval.job_id,
        "kind": approval.kind,
        "key": approval.key,
        "request": approval.request.model_dump(mode="json") if approval.request else None,
        "question": approval.question,
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
