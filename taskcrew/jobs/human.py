"""The person behind a job: decisions come from the job store, never from a terminal.

A request nobody has decided yet parks the run (``Parked``): the job waits with the exact payload,
no worker slot and no browser held. When the job resumes, the same step reaches the same request
again; the decision recorded for exactly that payload (or question) is returned. A different payload
is a different request: it is asked again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from taskcrew.jobs.models import FieldSource
from taskcrew.jobs.store import Jobs, fingerprint
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

VOLATILE = ("csrf", "token", "nonce", "_ts")  # per-page-load fields: not part of what a person approves


class Parked(BaseException):
    """The run waits for a person; the job parks until the approval is decided."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(approval_id)
        self.approval_id = approval_id


def request_key(request: ApprovalRequest) -> str:
    fields = sorted(
        (f.name, f.value) for f in request.fields if not any(v in f.name.lower() for v in VOLATILE)
    )
    return fingerprint({"method": request.method.upper(), "url": request.url, "fields": fields})


def provenance(checkpoint: dict[str, Any] | None, task: str, name: str, value: str) -> str:
    """Where a submitted value came from: the earlier step whose findings hold it (with what that
    step cited), the task text, or — when neither — the browser operator itself."""
    value = value.strip()
    if not value:
        return "left empty"
    state = (checkpoint or {}).get("state") or {}
    for record in reversed(state.get("steps_done") or []):
        report = record.get("report") or {}
        for key, found in (report.get("data") or {}).items():
            found = str(found).strip()
            if len(found) >= 2 and (found == value or found in value):
                cited = ", ".join(sorted({c.get("source", "") for c in report.get("sources") or []} - {""}))
                where = f"step {record.get('index', 0) + 1} ({record.get('role')}: {record.get('title')})"
                return f"{where} found {key} = {found}" + (f", citing {cited}" if cited else "")
    if value.lower() in task.lower():
        return "the task text"
    return "chosen on the page by the browser operator (not in an earlier step's findings)"


class JobHuman:
    def __init__(
        self,
        jobs: Jobs,
        job_id: str,
        *,
        expires_in: timedelta | None = None,
        sources: dict[str, str] | None = None,
    ) -> None:
        self.jobs = jobs
        self.job_id = job_id
        self.expires_in = expires_in
        self.sources = sources or {}
        self.screenshot: str | None = None  # set by the run when it has one of the filled form

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        key = request_key(request)
        decided = self.jobs.decision_for(self.job_id, key)
        if decided is not None and decided.decision is not None:
            return decided.decision
        approval = self.jobs.park(
            self.job_id,
            kind="approval",
            key=key,
            request=request,
            sources=self._sources(request),
            screenshot=self.screenshot,
            expires_in=self.expires_in,
        )
        raise Parked(approval.id)

    def _sources(self, request: ApprovalRequest) -> list[FieldSource]:
        checkpoint = self.jobs.checkpoint(self.job_id)
        task = self.jobs.get(self.job_id).task
        return [
            FieldSource(
                name=f.name,
                value=f.value,
                source=self.sources.get(f.name) or provenance(checkpoint, task, f.name, f.value),
            )
            for f in request.fields
            if not any(v in f.name.lower() for v in VOLATILE)
        ]

    def ask(self, question: str) -> str:
        key = fingerprint({"question": question})
        decided = self.jobs.take_answer(self.job_id)
        if decided is not None and decided.decision is not None:
            if decided.decision.outcome == "answer":
                return decided.decision.text or ""
            return ""  # rejected: an empty answer stops the run
        approval = self.jobs.park(
            self.job_id, kind="question", key=key, question=question, expires_in=self.expires_in
        )
        raise Parked(approval.id)
