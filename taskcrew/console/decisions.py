"""What a person's click on an approval does, with the risk rules applied in code:

- approve: decided at once when no rule asks for a second approver; otherwise the first approval is
  recorded and a second, different person completes it; the job's submitter may not approve it;
- reject: one person suffices (stopping is always allowed);
- answer: the text goes back to the run as an answer (never stored as a rejection);
- bulk approve: only pending, low-risk approvals that are identical in method, target and field names.
Every click, granted or refused, goes to the audit log.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from taskcrew.console.audit import AuditLog
from taskcrew.console.cosign import CosignStore
from taskcrew.console.risk import Assessment, RiskRules, assess, bulk_key
from taskcrew.jobs.models import Approval, Job
from taskcrew.jobs.store import InvalidChange, Jobs, UnknownApproval, UnknownJob
from taskcrew.tools.human import ApprovalDecision

Action = Literal["approve", "reject", "answer"]
ACTIONS: tuple[Action, ...] = ("approve", "reject", "answer")
GENERIC_SOURCES = ("the page's form as filled",)  # what the worker records when it knows no better


class DecisionResult(BaseModel):
    approval_id: str
    status: Literal["decided", "first_approval", "refused"]
    message: str


class ApprovalView(BaseModel):
    """An approval as the console shows it: the store's record plus its job, risk and co-signers."""

    approval: Approval
    job: Job | None
    assessment: Assessment
    first_approvers: list[str] = Field(default_factory=list)

    @property
    def fields(self) -> list[tuple[str, str]]:
        request = self.approval.request
        return [(f.name, f.value) for f in request.fields] if request else []

    @property
    def origins(self) -> dict[str, str]:
        """Where each field's value came from: the worker's recorded source, or else the line the
        run wrote into the request's summary ("  name = value: file, line N (cited in step 2)")."""
        found: dict[str, str] = {}
        request = self.approval.request
        if request is not None:
            values = {f.name: f.value for f in request.fields}
            for line in request.summary.splitlines():
                name, sep, rest = line.strip().partition(" = ")
                value = values.get(name)
                if sep and value is not None and rest.startswith(f"{value}: "):
                    found[name] = rest[len(value) + 2 :]
        for source in self.approval.sources:
            if (source.source and source.source not in GENERIC_SOURCES) or source.name not in found:
                found[source.name] = source.source
        return found


class Approver:
    def __init__(self, jobs: Jobs, rules: RiskRules, audit: AuditLog, cosign: CosignStore) -> None:
        self.jobs = jobs
        self.rules = rules
        self.audit = audit
        self.cosign = cosign

    def view(self, approval: Approval) -> ApprovalView:
        try:
            job: Job | None = self.jobs.get(approval.job_id)
        except UnknownJob:
            job = None
        request = approval.request
        fields = [(f.name, f.value) for f in request.fields] if request else []
        assessment = assess(fields, request.url if request else "", self.rules)
        return ApprovalView(
            approval=approval,
            job=job,
            assessment=assessment,
            first_approvers=self.cosign.approvers(approval.id, approval.key),
        )

    def pending(self) -> list[ApprovalView]:
        return [self.view(a) for a in self.jobs.approvals("pending")]

    def _refuse(self, user: str, approval_id: str, action: str, why: str) -> DecisionResult:
        self.audit.append(user, f"{action}_refused", approval_id, {"reason": why})
        return DecisionResult(approval_id=approval_id, status="refused", message=why)

    def decide(self, approval_id: str, action: Action, user: str, text: str = "") -> DecisionResult:
        try:
            view = self.view(self.jobs.approval(approval_id))
        except UnknownApproval as exc:
            return self._refuse(user, approval_id, action, str(exc))
        approval = view.approval
        payload = {
            "job_id": approval.job_id,
            "key": approval.key,
            "kind": approval.kind,
            "request": approval.request.model_dump(mode="json") if approval.request else None,
            "question": approval.question,
            "flags": [f.rule for f in view.assessment.flags],
        }
        if approval.status != "pending":
            return self._refuse(user, approval_id, action, f"This approval is already {approval.status}.")
        text = text.strip()
        if action == "answer":
            if not text:
                return self._refuse(
                    user, approval_id, action, "An answer needs a message: write what the worker should do."
                )
            decision = ApprovalDecision.answer(text)
        elif action == "reject":
            decision = ApprovalDecision.reject(text or None)
        else:
            if approval.kind == "question":
                return self._refuse(
                    user, approval_id, action, "This is a question: answer it with a message, or reject."
                )
            if view.assessment.needs_second_approver:
                submitter = view.job.submitted_by if view.job else None
                if submitter == user:
                    return self._refuse(
                        user,
                        approval_id,
                        action,
                        "Two-person rule: you submitted this task, so another person must approve it.",
                    )
                others = [u for u in view.first_approvers if u != user]
                if user in view.first_approvers and not others:
                    return self._refuse(
                        user,
                        approval_id,
                        action,
                        "You already approved this; a second, different person must approve it too.",
                    )
                if not others:
                    self.cosign.add(approval.id, approval.key, user)
                    self.audit.append(user, "approve_first", approval_id, payload)
                    return DecisionResult(
                        approval_id=approval_id,
                        status="first_approval",
                        message="Your approval is recorded. A second, different approver must approve it before it is sent.",
                    )
                payload["first_approver"] = others[0]
            decision = ApprovalDecision.approve()
            if text:
                decision = ApprovalDecision(outcome="approve", text=text)
        decided_by = user if "first_approver" not in payload else f"{payload['first_approver']}+{user}"
        try:
            self.jobs.decide(approval_id, decision, decided_by=decided_by)
        except (InvalidChange, UnknownApproval) as exc:
            return self._refuse(user, approval_id, action, str(exc))
        payload["decision"] = decision.model_dump(mode="json")
        self.audit.append(user, action, approval_id, payload)
        verb = {"approve": "approved", "reject": "rejected", "answer": "answered"}[action]
        return DecisionResult(
            approval_id=approval_id,
            status="decided",
            message=f"Approval {approval_id} {verb}; the job resumes.",
        )

    def bulk_approve(self, approval_ids: list[str], user: str) -> list[DecisionResult]:
        """All or nothing: every item must be pending, low-risk and identical in shape."""
        views: list[ApprovalView] = []
        for approval_id in dict.fromkeys(approval_ids):
            try:
                views.append(self.view(self.jobs.approval(approval_id)))
            except UnknownApproval as exc:
                return [self._refuse(user, approval_id, "bulk_approve", str(exc))]
        if not self.rules.bulk_allowed:
            return [
                self._refuse(user, "bulk", "bulk_approve", "Bulk approval is switched off in the risk rules.")
            ]
        if len(views) < 2:
            return [
                self._refuse(
                    user, "bulk", "bulk_approve", "Select at least two approvals for a bulk approval."
                )
            ]
        problems = []
        keys = set()
        for v in views:
            a = v.approval
            if a.status != "pending" or a.kind != "approval" or a.request is None:
                problems.append(f"{a.id} is not a pending approval of a submission")
                continue
            if not v.assessment.low_risk:
                problems.append(f"{a.id} is flagged ({', '.join(f.rule for f in v.assessment.flags)})")
            keys.add(bulk_key(a.request.method, a.request.url, [f.name for f in a.request.fields]))
        if len(keys) > 1:
            problems.append("the selected items are not identical (method, target or fields differ)")
        if problems:
            why = "Bulk approval refused: " + "; ".join(problems) + ". Decide these one by one."
            return [self._refuse(user, ",".join(v.approval.id for v in views), "bulk_approve", why)]
        return [self.decide(v.approval.id, "approve", user) for v in views]
