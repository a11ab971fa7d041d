"""What the authority signs, in one place: a job's submission, its record, its history and its
checkpoint, a submission's intent, a parked request and what is shown beside it, a first approval,
a decision and a routine's acceptance. Each payload names the record it belongs to, so a signature
cannot be moved from one row to another, and covers every field a forger would want to change.

Rows of the job database (``stored``, ``checkpoint``) are signed as stored, so a field added to a
model later does not void them. The other payloads are built from models (a job's options, an
approval request, its sources, a decision): those are signed ``settled``, without the fields that
hold their defaults, so a field added later with a default leaves every payload signed before as
it was, while a forger who sets it still changes the payload. ``check`` also accepts a signature
over the whole dump, as versions before this one signed them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from taskcrew.jobs.models import Approval, Cosign, Job

if TYPE_CHECKING:
    from taskcrew.approvals.signing import KeyRing
    from taskcrew.routines.models import Routine

Dump = Callable[..., dict[str, Any]]


def settled(model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    """A model as signed: the fields that differ from their defaults (nested models alike)."""
    return model.model_dump(mode="json", exclude=exclude, exclude_defaults=True)


def whole(model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    """A model as versions before ``settled`` signed it: every field."""
    return model.model_dump(mode="json", exclude=exclude)


class Build(Protocol):
    def __call__(self, subject: Any, dump: Dump = ..., /) -> dict[str, Any]: ...


def check(keys: KeyRing, build: Build, subject: Any, signature: str | None) -> bool:
    """Whether ``signature`` is the authority's over ``build(subject)``, settled or (made by an
    earlier version) whole."""
    return any(keys.verify(build(subject, dump), signature) for dump in (settled, whole))


def submission(job: Job, dump: Dump = settled) -> dict[str, Any]:
    """A job as submitted: by whom, how proven and under which password (``credential``, left out
    when it has none, so a submission signed before it was kept checks out as it was), and its
    options but ``foreground``: where it runs is not what was submitted (a worker that takes on an
    interrupted `taskcrew run`, `jobs retry`, clears it)."""
    return _submission(job, dump, {"foreground"})


def submitted(keys: KeyRing, job: Job) -> bool:
    """Whether ``job``'s submission is the authority's, as signed now (``submission``) or by
    versions that sealed ``foreground`` too (a job signed so, and still where it was submitted)."""
    return check(keys, submission, job, job.submission_sig) or check(
        keys, lambda job, dump=settled: _submission(job, dump, None), job, job.submission_sig
    )


def _submission(job: Job, dump: Dump, exclude: set[str] | None) -> dict[str, Any]:
    sealed: dict[str, Any] = {
        "seal": "submission",
        "job": job.id,
        "task": job.task,
        "by": job.submitted_by,
        "proof": job.submitted_proof,
        "parent": job.parent_id,
        "item": job.item,
        "options": dump(job.options, exclude),
    }
    if job.submitted_credential is not None:
        sealed["credential"] = job.submitted_credential
    return sealed


def stored(kind: str, bound: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """A row of the job database as the store wrote it: a job's record (``bound``: its leg), a
    submission's intent, a line of a job's history. The whole document, as stored: an edited field,
    a record copied from another row or an earlier leg, or a row added does not check out. Where a
    row belongs (a job's id, an intent's key and job) is in the document and checked against the row."""
    return {"seal": kind, **bound, "doc": doc}


def checkpoint(job_id: str, state: dict[str, Any]) -> dict[str, Any]:
    """A run's state saved after a stage (its plan, finished steps, verdicts): what a resumed leg of
    this job builds on."""
    return {"seal": "checkpoint", "job": job_id, "state": state}


def request(approval: Approval, dump: Dump = settled) -> dict[str, Any]:
    return {
        "seal": "request",
        "approval": approval.id,
        "job": approval.job_id,
        "kind": approval.kind,
        "key": approval.key,
        "request": dump(approval.request) if approval.request else None,
        "question": approval.question,
        # a deadline moved in the job database would revive an approval that expired unanswered
        "expires": approval.expires_at.isoformat() if approval.expires_at else None,
    }


def parked(keys: KeyRing, approval: Approval) -> bool:
    """Whether ``approval``'s stored request (its payload, key and deadline) is the one a worker
    parked: its ``request`` seal checks out. The one rule for acting on an approval row: a row
    inserted or edited in the job database (``expires_at`` moved, a pending row added for a key a
    run will ask) is shown with its problem, never acted on — not expired, not parked on, not waited
    on (``Jobs.parked_here``, ``Authority.parked_here``)."""
    return check(keys, request, approval, approval.request_sig)


def sources(approval: Approval, dump: Dump = settled) -> dict[str, Any]:
    """What the approver is shown beside the payload: where each value came from, the cited files'
    digests, and the screenshot of the filled form, by name and by content (a forged one would show
    another form than the payload; a digest is left out when there is none, so sources sealed before
    it check out)."""
    sealed: dict[str, Any] = {
        "seal": "sources",
        "approval": approval.id,
        "job": approval.job_id,
        "sources": [dump(s) for s in approval.sources],
        "screenshot": approval.screenshot,
    }
    if approval.screenshot_sha256 is not None:
        sealed["screenshot_sha256"] = approval.screenshot_sha256
    if approval.files_sha256 is not None:
        sealed["files_sha256"] = dict(sorted(approval.files_sha256.items()))
    return sealed


def cosign(approval: Approval, first: Cosign) -> dict[str, Any]:
    """A first approval: who gave it, how, and under which password (``credential``, left out when
    it has none, so a first approval signed before it was kept checks out as it was)."""
    sealed = {
        "seal": "cosign",
        "approval": approval.id,
        "key": approval.key,
        "name": first.name,
        "proof": first.proof,
    }
    if first.credential is not None:
        sealed["credential"] = first.credential
    return sealed


def decision(approval: Approval, dump: Dump = settled) -> dict[str, Any]:
    return {
        "seal": "decision",
        "approval": approval.id,
        "job": approval.job_id,
        "key": approval.key,
        "status": approval.status,
        "decision": dump(approval.decision) if approval.decision else None,
        "by": approval.decided_by,
    }


def routine(accepted: Routine, work: dict[str, Any]) -> dict[str, Any]:
    """A routine version's acceptance: which version, who accepted it, and ``work``, everything it
    does (the routine without its status and counters, which change as it replays)."""
    sealed: dict[str, Any] = {
        "seal": "routine",
        "name": accepted.name,
        "version": accepted.version,
        "by": accepted.reviewed_by,
        "work": work,
    }
    if accepted.reviewer_credential is not None:  # left out when none: older acceptances check out
        sealed["credential"] = accepted.reviewer_credential
    return sealed


def current_routine(name: str, version: int | None) -> dict[str, Any]:
    """Which version of a routine replays (None: none, it was retired), as ``routines accept`` and
    ``retire`` last set it."""
    return {"seal": "routine-current", "name": name, "version": version}
