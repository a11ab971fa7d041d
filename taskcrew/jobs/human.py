"""The person behind a job: decisions come from the job store, checked by the approvals authority,
never from a terminal.

A request nobody has decided yet parks the run (``Parked``): the job waits with the exact payload,
no worker slot and no browser held. When the job resumes, the same step reaches the same request
again; the decision recorded for exactly that request key (``approvals.key``) is returned if the
authority signed it. A different payload is a different request: it is asked again.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.origins import UNTRACED, origins
from taskcrew.approvals.worker import WorkerGate
from taskcrew.jobs.models import FieldSource
from taskcrew.jobs.store import Jobs, fingerprint
from taskcrew.tools.documents.models import FileAccessError
from taskcrew.tools.documents.provenance import shows_value
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

if TYPE_CHECKING:
    from taskcrew.tools.documents.reader import SandboxFiles

SCREENSHOT = re.compile(r"form-\d{8}-\d{6}-\d+\.png")  # how the worker names them (LegRunner)


def screenshot_file(job_id: str, stored: str | None, jobs_dir: Path | None = None) -> Path | None:
    """The screenshot an approval names, only if it is one the worker takes for that job
    (``<jobs_dir>/<job id>/form-<time>-<n>.png``, its folder resolved; ``jobs_dir``: the workers'
    job folders, by default ``<TASKCREW_HOME>/jobs`` of this process): the row is in the job
    database, and a path written there must not make the console serve another job's screenshot or
    any other file."""
    from taskcrew.config import Paths

    if not stored or not SCREENSHOT.fullmatch(Path(stored).name):
        return None
    folder = (jobs_dir or Paths.from_env().home / "jobs").resolve() / job_id  # the worker's
    path = Path(stored)
    if path.is_symlink() or folder.is_symlink() or path.resolve().parent != folder:
        return None  # no link (to a file, or a job folder linked to another's), no other folder
    return path if path.is_file() else None


def sealed_screenshot(
    job_id: str, stored: str | None, sha256: str | None, jobs_dir: Path | None = None
) -> bytes | None:
    """The bytes of an approval's screenshot, only when they are the ones parked with it (their
    SHA-256 is sealed with the approval's sources): a file written over afterwards in the worker's
    folder, or a screenshot parked before its content was sealed, is not shown. ``jobs_dir``: as
    for ``screenshot_file``."""
    path = screenshot_file(job_id, stored, jobs_dir)
    if path is None or sha256 is None:
        return None
    data = path.read_bytes()
    return data if hmac.compare_digest(hashlib.sha256(data).hexdigest(), sha256) else None


def source_file(files: SandboxFiles, name: str) -> Path | str:
    """A file an approval cites, checked as the run's reader checks what it opens (inside the
    company's files, a plain file, no hard link: ``SandboxFiles``' own checks), or why not. The
    seal at park time and every route of the console's source viewer use this one check."""
    try:
        return files.plain_file(name)
    except FileAccessError as exc:
        return str(exc)


def source_digest(files: SandboxFiles, name: str) -> str:
    """The SHA-256 of a cited file's bytes ("" when it cannot be read): ``SandboxFiles.digest_now``,
    the console's rule too."""
    return files.digest_now(name)


def same_file(sealed: str, digest: str) -> bool:
    return bool(sealed and digest) and hmac.compare_digest(sealed, digest)


class Parked(BaseException):
    """The run waits for a person; the job parks until the approval is decided."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(approval_id)
        self.approval_id = approval_id


def trace(
    checkpoint: dict[str, Any] | None,
    task: str,
    name: str,
    value: str,
    *,
    planned_for: str | None = None,
    label: str | None = None,
) -> tuple[str, list[str]]:
    """Where a submitted value came from: the earlier step whose findings hold it (with what that
    step cited), the task text, or — when neither — the browser operator itself; and, as data, the
    files that step cited whose quoted line shows the value (the words hold the model's: its keys
    and values). ``planned_for``: the submitter of the batch whose planner wrote the task
    (``Job.origin``): the task text is then the planner's words, not hers. A step's value is this
    one only when it is the same value (``crew.provenance.same_value``, code's rule; for a chosen
    option, ``label`` its text: the option's text or the value sent): "950.00" is not "9950.00", nor
    "12,50" 1250; the task text holds it only when it names it whole (``names_value``, the approval's
    rule for the request): "150.00" does not hold 50.00."""
    from taskcrew.crew.provenance import names_value, same_value, value_candidates

    value = value.strip()
    if not value:
        return "left empty", []
    candidates = value_candidates(value, label)
    state = (checkpoint or {}).get("state") or {}
    for record in reversed(state.get("steps_done") or []):
        report = record.get("report") or {}
        for key, found in (report.get("data") or {}).items():
            found = str(found).strip()
            if len(found) >= 2 and any(same_value(c, found) for c in candidates):
                # only the sources whose quoted line shows the value: a due date the step worked out
                # (date + terms) is not in the e-mail it cited for the date and the terms
                sources = report.get("sources") or []
                shown = {c.get("source", "") for c in sources if shows_value(str(c.get("quote", "")), found)}
                files = sorted(str(s) for s in shown - {""})
                where = f"step {record.get('index', 0) + 1} ({record.get('role')}: {record.get('title')})"
                if files:
                    return f"{where} found {key} = {found}, citing {', '.join(files)}", files
                return f"{where} found {key} = {found}" + (
                    " (worked out by the step: no line it cited shows this value)" if sources else ""
                ), []
    if any(names_value(task, c) for c in candidates[1:] or candidates):  # as ``field_origin``
        if planned_for is not None:
            return f"the task text written by the batch planner (not by {planned_for})", []
        return "the task text", []
    return UNTRACED, []


class JobHuman:
    def __init__(
        self,
        jobs: Jobs,
        job_id: str,
        *,
        expires_in: timedelta | None = None,
        sources: dict[str, str] | None = None,
        authority: Authority | None = None,
        auto_approve: bool = False,
        sandbox: Path | None = None,
    ) -> None:
        self.jobs = jobs
        self.sandbox = sandbox  # the company's files the run reads (None: TASKCREW_SANDBOX's)
        # the run's own reader (``SandboxFiles.read_digest``, set through ``RunResources.on_files``):
        # what it read is sealed
        self.read_digest: Callable[[str], str | None] | None = None
        self.job_id = job_id
        self.expires_in = expires_in
        self.sources = sources or {}
        self.screenshot: str | None = None  # set by the run when it has one of the filled form
        self.authority = authority or Authority(jobs)
        self.gate = WorkerGate(self.authority, job_id)
        self.auto_approve = auto_approve

    def key(self, request: ApprovalRequest) -> str:
        return request.key or self.authority.key_of(
            request.method, request.url, [(f.name, f.value) for f in request.fields]
        )

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        key = self.key(request)
        names = {f.name for f in request.fields}
        left_out = self.authority.key_rules.excluded_for(request.url)  # why, as the key left them out
        excluded = {n: why for n, why in left_out.items() if n in names}
        request = request.model_copy(update={"key": key, "excluded": request.excluded or excluded})
        decided = self.gate.decision(key, request)
        if decided is None and (spent := self.gate.reasks_spent.get(key)) is not None:  # as the terminal
            return ApprovalDecision(outcome="reject", text=spent, by="the record check", basis="rule")
        if key in self.gate.outdated:  # the person sees why it is asked again
            request = request.model_copy(update={"asked_again": self.gate.outdated[key]})
        if decided is not None and decided.decision is not None:
            earlier = decided.decision
            by = earlier.by or decided.decided_by or "a person"
            if earlier.basis == "auto_approve":
                return earlier
            return earlier.model_copy(update={"by": f"{by}, given while the job waited", "basis": "resumed"})
        if self.auto_approve:
            auto = self.gate.auto(request, self.jobs.get(self.job_id), self.expires_in)
            if auto is not None:
                return auto
        from taskcrew.knowledge.chunking import file_digest  # (a slow import: only when it parks)

        sources = self._sources(request)
        approval = self.jobs.park(
            self.job_id,
            kind="approval",
            key=key,
            request=request,
            sources=sources,
            files_sha256=self._sealed(request, sources),
            screenshot=self.screenshot,
            screenshot_sha256=file_digest(Path(self.screenshot)) if self.screenshot else None,
            expires_in=self.expires_in,
            reusable=self.gate.reusable,
        )
        self.authority.audit.append(
            "worker",
            "request",
            approval.id,
            {
                "job_id": self.job_id,
                "key": key,
                "method": request.method,
                "url": request.url,
                "flags": request.flags,
            },
        )
        raise Parked(approval.id)

    def _sources(self, request: ApprovalRequest) -> list[FieldSource]:
        checkpoint = self.jobs.checkpoint(self.job_id)
        job = self.jobs.get(self.job_id)
        planner = job.submitted_by if job.origin is not None else None  # the task is a model's words
        out = []
        for f in request.fields:
            if f.name in request.excluded:
                continue
            if given := self.sources.get(f.name):
                out.append(FieldSource(name=f.name, value=f.value, source=given))
                continue
            text, files = trace(checkpoint, job.task, f.name, f.value, planned_for=planner, label=f.label)
            out.append(FieldSource(name=f.name, value=f.value, source=text, files=files))
        return out

    def _sealed(self, request: ApprovalRequest, sources: list[FieldSource]) -> dict[str, str]:
        """The SHA-256 of every file the values cite (as the console reads their origins:
        ``approvals.origins``): of the bytes the run read (``read_digest``; "" when they changed
        while it read them), else of the file as it is now. The approver's viewer shows a file that
        is not the one sealed as changed: one changed between the run's read and the park too."""
        from taskcrew.config import Paths, files_root
        from taskcrew.tools.documents.reader import SandboxFiles

        cited = sorted({ref.file for ref in origins(request, sources).values() if ref.file})
        if not cited:
            return {}
        try:
            files: SandboxFiles | None = SandboxFiles(files_root(self.sandbox or Paths.from_env().sandbox))
        except ValueError:  # no such folder: nothing to seal but that it could not be read
            files = None

        def seal(name: str) -> str:
            if self.read_digest is not None and (read := self.read_digest(name)) is not None:
                return read
            return source_digest(files, name) if files else ""

        return {name: seal(name) for name in cited}

    def ask(self, question: str) -> str:
        key = fingerprint({"question": question})
        decided = self.gate.answer(key)  # only an answer the authority signed
        if decided is not None and decided.decision is not None:
            if decided.decision.outcome == "answer":
                return decided.decision.text or ""
            return ""  # rejected: an empty answer stops the run
        approval = self.jobs.park(
            self.job_id,
            kind="question",
            key=key,
            question=question,
            expires_in=self.expires_in,
            reusable=self.gate.reusable,
        )
        self.gate.asked(approval)
        raise Parked(approval.id)
