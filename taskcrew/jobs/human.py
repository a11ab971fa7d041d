"""The person behind a job: decisions come from the job store, never from a terminal.

A request nobody has decided yet parks the run (``Parked``): the job waits with the exact payload,
no worker slot and no browser held. When the job resumes, the same step reaches the same request
again; the decision recorded for exactly that payload (or question) is returned. A different payload
is a different request: it is asked again.
"""

from __future__ import annotations

from datetime import timedelta

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
            sources=[
                FieldSource(
                    name=f.name, value=f.value, source=self.sources.get(f.name, "the page's form as filled")
                )
                for f in request.fields
            ],
            screenshot=self.screenshot,
            expires_in=self.expires_in,
        )
        raise Parked(approval.id)

    def ask(self, question: str) -> str:
        key = fingerprint({"question": question})
        decided = self.jobs.decision_for(self.job_id, key)
        if decided is not None and decided.decision is not None:
            if decided.decision.outcome == "answer":
                return decided.decision.text or ""
            return ""  # rejected: an empty answer stops the run
        approval = self.jobs.park(
            self.job_id, kind="question", key=key, question=question, expires_in=self.expires_in
        )
        raise Parked(approval.id)
