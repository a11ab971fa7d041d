"""Durable jobs: a queue of runs on DBOS, approvals that wait, intents, workers.

Public API (stable; add, never rename):

    from taskcrew.jobs import Jobs, Job, JobStatus, JobOptions, Approval, ApprovalDecision
    jobs = Jobs.open(url=None)      # TASKCREW_JOBS_DB ("sqlite:///…" or "postgresql://…"), else
                                    # sqlite at $TASKCREW_HOME/jobs.sqlite3
    jobs.submit(task, submitted_by=..., options=JobOptions(...)) -> Job   # status "queued", id at once
    jobs.list(status=None, limit=200, parent_id=None) -> list[Job]        # newest first
    jobs.get(job_id) -> Job                                               # UnknownJob if no such id
    jobs.cancel(job_id, by=...) / jobs.retry(job_id, by=...) -> Job       # InvalidChange if not allowed
    jobs.events(job_id) -> list[JobEvent]                                 # the job's history
    jobs.approvals(status="pending", job_id=None) -> list[Approval]
    jobs.approval(approval_id) -> Approval                                # UnknownApproval
    jobs.decide(approval_id, ApprovalDecision.approve() | .reject(why) | .answer(text), decided_by=...)

Job.status: queued | running | waiting (parked on an approval/question) | finished (see Job.outcome:
done, nothing_to_do, rejected, incomplete, not_verified, error) | failed (could not run; retryable) |
cancelled. Job.submitted_by, Approval.decided_by and Approval.decision (approve / reject / answer, an
answer kept as an answer) record who did what. Approval.kind: "approval" (Approval.request is the exact
payload, Approval.sources where each value came from, Approval.screenshot the filled form) or
"question" (Approval.question; decide with an answer). Errors: JobStoreError (database unreachable or
damaged), UnknownJob, UnknownApproval, InvalidChange — each message says what to do.
"""

from taskcrew.jobs.models import (
    Approval,
    ApprovalKind,
    ApprovalStatus,
    FieldSource,
    Intent,
    Job,
    JobEvent,
    JobOptions,
    JobStatus,
)
from taskcrew.jobs.store import InvalidChange, Jobs, JobStoreError, UnknownApproval, UnknownJob
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

__all__ = [
    "Approval",
    "ApprovalDecision",
    "ApprovalKind",
    "ApprovalRequest",
    "ApprovalStatus",
    "FieldSource",
    "Intent",
    "InvalidChange",
    "Job",
    "JobEvent",
    "JobOptions",
    "JobStatus",
    "JobStoreError",
    "Jobs",
    "UnknownApproval",
    "UnknownJob",
]
