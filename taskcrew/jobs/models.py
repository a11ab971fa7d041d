"""The job store's types: what crosses the boundary between the store, the workers, the CLI,
the web console and recipes. Plain pydantic models; keep them stable (add fields, never rename)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

JobStatus = Literal["queued", "running", "waiting", "finished", "failed", "cancelled"]
"""queued: waiting for a worker; running: a worker holds it; waiting: parked on an approval or a
question (no worker, no browser held); finished: the run ended with an ``outcome``; failed: it could
not run (e.g. the ERP was down) — ``reason`` says why, ``retry`` runs it again; cancelled: by a person."""

RecordTrust = Literal["signed", "legacy", "forged", "superseded"]
"""How far the job store vouches for a job record it read: ``signed`` (taskcrew wrote it, the
signature checks out), ``legacy`` (no record signature, its submission's checks out: recorded by a
version before records were signed, or its signature removed: no write signs it and no worker runs
it), ``forged`` (changed or added in the job database), ``superseded`` (signed, but an ended
record the signed audit log has a later end of: a retry, a cancel, a takeover or a later leg's
finish; the row was set back to an earlier signed version: ``authority.SignedLog.superseding``).
Only a signed record's ending (outcome, reason, answer, run folder) is shown as it is, and only a
signed record is run."""

ENDED: tuple[JobStatus, ...] = ("finished", "failed", "cancelled")
ACTIVE: tuple[JobStatus, ...] = ("queued", "running", "waiting")
RETRYABLE: tuple[JobStatus, ...] = ENDED
CANCELLABLE: tuple[JobStatus, ...] = (*ACTIVE, "failed")
"""A cancel is how an approver takes back what was approved (a retry of a cancelled job asks again):
so every job a retry would resume with its decisions can be cancelled, a failed one too."""

ApprovalKind = Literal["approval", "question"]
ApprovalStatus = Literal["pending", "approved", "rejected", "answered", "expired"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class JobOptions(BaseModel):
    """How a job runs (the flags of ``taskcrew run``)."""

    worker_model: str | None = None
    verifier_model: str | None = None
    allow_same_verifier: bool = False
    auto_approve: bool = False
    chaos: bool = True
    criteria: list[str] = Field(default_factory=list, description="success criteria every plan keeps")
    read_only: bool = Field(default=False, description="the policy gate refuses every change")
    max_steps: int | None = Field(default=None, ge=1, description="tool calls in the whole run")
    batch: bool = Field(
        default=False, description="a batch task: planned once into items, one child job per item"
    )
    foreground: bool = Field(
        default=False,
        description="run by `taskcrew run` at a terminal: never adopted by a worker unless retried",
    )


class BatchOrigin(BaseModel):
    """Where a planned batch child's task came from: not its submitter's words but the batch planner's
    (a model's, from a listing of documents outsiders wrote), for the batch task she gave. Part of the
    child's signed record; every surface shows it beside the task (``jobs show``, the console's job
    and approval pages). Such a child never runs on the batch's ``--auto-approve``."""

    batch_id: str
    batch_task: str = Field(description="the batch task as its submitter gave it")
    planner: str = Field(description="the model that planned the batch (wrote this task's template and item)")
    generation: int | None = Field(
        default=None, description="the batch's leg its plan was made on (a retry plans a new one)"
    )


class FanOut(BaseModel):
    """A batch job's plan as fanned out: the child jobs it waits for (it finishes, with an outcome
    that follows theirs, once the last of them has ended: ``Jobs.settle_batch``) and the items the
    store refused (each with why; never submitted)."""

    generation: int | None = Field(description="the leg the plan was made on (None: by a version before)")
    planner: str = ""
    children: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list, description="'<item>: why' for each item refused")


RUN_SEAL_FORMAT = 1  # ``Job.run_seal_format`` of a record written by a version that seals run folders


class RunSeal(BaseModel):
    """A run folder as its run left it (``jobs.runseal``): made as the job ends (``Jobs._update``), or
    as it parks for an approval (its leg's folder is final then: ``parked``), and kept in the job's
    signed record, so a file of the folder changed, removed or added afterwards (a trace edited,
    another run's folder copied over it) is told from the run's own account."""

    folder: str = Field(description="the run folder sealed (resolved)")
    files: dict[str, str] = Field(
        default_factory=dict, description="each file's path inside the folder -> SHA-256 of its bytes"
    )
    state: Literal["sealed", "absent", "too_many"] = Field(
        default="sealed",
        description="sealed: ``files`` are the folder's; absent: there was no folder; too_many: it held "
        "more than ``runseal.MAX_FILES`` files, none sealed (neither vouches for a folder found there)",
    )
    parked: bool = Field(
        default=False, description="made as its job parked: kept at its ending, never made again"
    )


class Job(BaseModel):
    id: str
    task: str
    status: JobStatus
    outcome: str | None = Field(
        default=None, description="the run's outcome once finished (done, nothing_to_do…)"
    )
    reason: str = ""
    answer: str = ""
    submitted_by: str
    submitted_proof: str = Field(
        default="os_user", description="how the submitter was proven (approvals.identity)"
    )
    submitted_credential: str | None = Field(
        default=None,
        description="the fingerprint of the password the submitter proved herself with "
        "(approvals.identity.credentials): what her submission allows counts only while it is still "
        "her password",
    )
    submission_sig: str | None = Field(
        default=None, description="the authority's signature of the submission"
    )
    submitted_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    attempts: int = 0
    worker: str | None = Field(default=None, description="the worker that runs or last ran it")
    worker_token: str | None = Field(
        default=None,
        description="the worker start that runs or last ran it (``jobs.identity``: host/pid/nonce): the "
        "one process its leg's writes, heartbeat and sends are bound to",
    )
    heartbeat_at: datetime | None = None
    run_dir: str | None = None
    run_seal: RunSeal | None = Field(
        default=None,
        description="the run folder's files as the run ended or parked (``Jobs._update``; None: not sealed)",
    )
    run_seal_format: int = Field(
        default=0,
        description="RUN_SEAL_FORMAT: a record that named its run folder by a version that seals them (one "
        "waiting or ended without a seal vouches for nothing); 0: an older record",
    )
    options: JobOptions = Field(default_factory=JobOptions)
    parent_id: str | None = Field(default=None, description="the batch job that fanned this one out")
    item: str | None = Field(default=None, description="the batch item this job works on")
    origin: BatchOrigin | None = Field(
        default=None, description="a planned batch child: the batch and the model its task came from"
    )
    fan_out: FanOut | None = Field(default=None, description="a batch job: its children, once fanned out")
    cancelled_by: str | None = None
    updated_at: datetime | None = None
    record_sig: str | None = Field(
        default=None, description="the authority's signature of this record as taskcrew last wrote it"
    )
    record_trust: RecordTrust = Field(
        default="signed",
        exclude=True,
        description="set by the store as it reads the row (never stored): see RecordTrust",
    )


class FieldSource(BaseModel):
    """Where one submitted value came from (a file and page, a web page, the task text…)."""

    name: str
    value: str
    source: str
    # the files the step cited whose quoted line shows the value (``jobs/human.trace``), as data: the
    # only files an approver is shown for this trace (None: recorded before they were kept, or a
    # text given by the caller: no file is read out of ``source``, whose words hold the model's)
    files: list[str] | None = None


class Cosign(BaseModel):
    """A first approval of an item that needs two people, signed by the authority."""

    name: str
    proof: str
    at: datetime
    sig: str
    # the approver's password it was given under (a digest of her credential bound to the approval):
    # it counts only while that is still her password (None: given by a login that kept none)
    credential: str | None = None


class Approval(BaseModel):
    """A parked run's request to a person: approve/reject a submission, or answer a question."""

    id: str
    job_id: str
    kind: ApprovalKind
    status: ApprovalStatus
    request: ApprovalRequest | None = Field(default=None, description="the exact payload (kind 'approval')")
    question: str | None = Field(default=None, description="the question (kind 'question')")
    sources: list[FieldSource] = Field(default_factory=list)
    screenshot: str | None = Field(default=None, description="path of a screenshot of the filled form")
    screenshot_sha256: str | None = Field(
        default=None, description="SHA-256 of the screenshot's bytes as parked: another file is not shown"
    )
    files_sha256: dict[str, str] | None = Field(
        default=None,
        description="SHA-256 of each file the values cite, as parked ('' when it could not be read); "
        "None: parked before files were sealed",
    )
    key: str = Field(
        description="fingerprint of the exact payload or question; a decision applies only to it"
    )
    created_at: datetime
    expires_at: datetime | None = None
    decision: ApprovalDecision | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    request_sig: str | None = Field(default=None, description="the authority's signature of what was parked")
    sources_sig: str | None = Field(
        default=None, description="the authority's signature of the sources and the screenshot, as parked"
    )
    signature: str | None = Field(default=None, description="the authority's signature of the decision")
    first_approvals: list[Cosign] = Field(default_factory=list)
    used: bool = Field(default=False, description="a question's answer was handed to the resumed run")


class Intent(BaseModel):
    """A data-changing submission recorded before it is sent; ``result`` once it is known."""

    key: str
    job_id: str
    target: str
    payload: ApprovalRequest
    status: Literal["recorded", "sent", "confirmed", "not_applied", "uncertain"]
    result: str | None = None
    seen: str | None = Field(
        default=None, description="the gate's classification of the answer (tools.intents.Applied)"
    )
    approved_again: bool = Field(
        default=False, description="a person approved sending it though earlier attempts may still apply"
    )
    recorded_at: datetime
    updated_at: datetime | None = None
    sig: str | None = Field(default=None, description="the authority's signature of this record")
    trusted: bool = Field(
        default=True, exclude=True, description="set by the store as it reads the row (never stored)"
    )
    exclusions_recorded: bool = Field(
        default=False,
        description="payload.excluded is every field the rules left out of its key when it was recorded "
        "(empty: nothing left out). False: a row written before rows said so (every version wrote an "
        "empty set), read as recording none unless it names some (tools.intents.record_of)",
    )


class JobEvent(BaseModel):
    """One line of a job's history (submitted, started, parked, resumed, decided, finished…)."""

    job_id: str
    at: datetime
    kind: str
    detail: str = ""
    actor: str | None = None
    sig: str | None = Field(default=None, description="the authority's signature of this line")
