"""The worker's side of the authority: "may I send exactly this?".

- ``decision``: the decided approval of this job for exactly this key, and only if the authority's
  signature over it checks out and it holds under this worker's own rules (two people where they
  are needed: a CLI with laxer rules of its own decides nothing here); a row marked approved without
  one (or edited since) is refused and recorded, never obeyed; ``answer``: the same for the answers
  to the job's questions (each spent by the checkpoint that holds what the run made of it);
- ``auto``: ``--auto-approve`` is a signed property of the submission and holds only for the
  identities and paths the rules permit (and, while the two-person rule is on, never for an item that
  needs two people unless a rule says so), for the submitter while she is still a user and for
  whoever retried the job as well (``Authority.auto_approve_refusal``); anything else goes to a person;
- ``send_check`` (or ``may_send`` then ``sending``, around a durable run's intent log): the last check
  before a data-changing request leaves the browser, recorded as a send only when it leaves: the job must
  still run on this leg (``leg_refusal``: running, on this worker, this leg — not cancelled, taken
  over or handed back meanwhile — by the job row and by the signed audit log, ``Authority.leg_over``),
  and the request key of the bytes really sent must have a signed
  approval in this job (a cancel voids every decision not yet used: ``Authority.act_on_job``) — the
  key made by the run's one rules snapshot, as it was asked and approved, and signed with the send
  with the fields left out of it (``Authority.keys_by``); a
  leg whose job is gone asks nothing more either (``decision``, ``answer``: it stops);
- ``again``: sending again what an earlier attempt may still apply (its answer never came: the intent
  log, ``tools.intents``) is a request of its own that says so, for a person: ``auto`` never approves it;
- a person's approval holds only while every person it names still counts under the credential
  they gave it with (``Authority.approvers_refusal``): a password reset or a removal that lands
  while it is given, or after it and before the send, voids it; checked by ``decision`` and again by
  ``send_check``/``may_send``; the person is asked again (a rejection always stands);
- a decision taken back by a cancel (given before the cancel landed, or while it stands:
  ``Authority.void_decisions``), or by a retry that started the run over, is not obeyed;
- a rejection is final, against a database writer too: an approval the signed audit log records
  rejected is never obeyed, whatever its row says, and a run never parks again on a row the log
  records decided (``Authority.recorded_refusal``);
- a decision holds only for what its approver was shown: when the run reaches the same request again
  and the record amount read for it has changed since (``Authority.outdated``), it is asked again;
- a decision that stores its request holds only for that request, keyed by today's rule, and only
  if it was stored under a key that request has had (``_covers``), never by its key alone: a version
  before this one keyed the fields sorted (``approvals.key``), and its key of one request is today's
  key of another (the rows regrouped); one such decision that does not hold is asked again, saying
  why (``LEGACY_ASKED_AGAIN``).
"""

from __future__ import annotations

import hashlib
import threading
import time
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Any

from taskcrew.approvals.audit import AuditEntry
from taskcrew.approvals.authority import Authority
from taskcrew.approvals.key import LEGACY_ASKED_AGAIN, legacy_keys, request_keys
from taskcrew.jobs.models import Approval, Job
from taskcrew.jobs.store import Jobs, holds
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue
from taskcrew.tools.policy import CHANGED_EACH_TIME, REASKS

DECIDED = ("approved", "rejected", "answered")
DECISIONS = ("approve", "reject", "answer")  # the audit log's entries of a decision (target: its approval)
AGAIN = "again-"  # the key of a request to send again what an earlier attempt may still apply
VOID = "taken back: by a cancel (given before it landed, or while it stood), or by a retry that started the job over"
TAKE_OVER_SETTLES_S = 5.0
"""How long a leg the job database still gives its job waits for the outcome of a takeover signed
against it (``leg_refusal_of``): the watch loop's compare-and-set and its ``take_over_undone`` are
one statement and one append apart."""


def leg_refusal(
    authority: Authority, job_id: str, worker: str, leg: int, token: str | None = None
) -> str | None:
    """Why ``job_id`` is no longer ``worker``'s to act for in ``leg`` (None: it is): cancelled,
    finished, handed back, or taken over by another worker or a newer leg, or claimed by another
    start of the same worker id (``token``: this process's, ``jobs.store.holds``). The one rule for every
    runner's "may this leg still act?" — a worker's leg (``LegRunner``: its heartbeat, and the last
    check before a data-changing request leaves its browser, ``WorkerGate.sending``) and ``taskcrew
    run`` in the foreground (its leg, the same two) — always bound to a worker and a leg. The job
    and its leg are one row, read once: they are of one moment."""
    job, current = authority.jobs.get_on_leg(job_id)
    return leg_refusal_of(authority, job, current, worker, leg, token)


def leg_refusal_of(
    authority: Authority, job: Job, current: int, worker: str, leg: int, token: str | None = None
) -> str | None:
    """``leg_refusal`` judged on ``job`` and ``current``, its leg, as read together (by
    ``Jobs.get_on_leg``, or by the heartbeat: ``Jobs.heartbeat``), then by the signed audit log
    (``Authority.leg_over``; a batch child's, its batch's standing cancel too): a job row set back to
    an earlier signed version (a database writer replaying it) gives no leg back what a cancel, a
    retry or a takeover ended."""
    if (moved := _row_refusal(job, current, worker, leg, token)) is not None:
        return moved
    # a batch's child acts no more once its batch's cancel ends it (``Authority.batch_cancel``: one
    # that stands, or one made after the child's generation was planned, a retry of the batch since
    # or not), whether or not the cancel went on to it: a process stopped between the two leaves the
    # child's own row untouched
    if job.parent_id and (cancel := authority.batch_cancel(job)) is not None:
        return (
            f"job {job.id}'s batch {job.parent_id} was cancelled by {cancel.who} (audit entry "
            f"{cancel.seq}): its child jobs act no more"
        )
    # A takeover is signed ahead of the watch loop's compare-and-set, which this leg's own beat may
    # make fail (then it is signed undone): while the row still gives the job to this leg, wait for
    # that outcome rather than stop a live leg. One that stands past the wait (its watcher died, or
    # the row was set back) ends the leg, as a cancel or a retry does at once.
    ends = time.monotonic() + TAKE_OVER_SETTLES_S
    while (entry := authority.leg_end(job.id, leg)) is not None and entry.action == "take_over":
        if time.monotonic() >= ends:
            break
        time.sleep(0.1)
        if (moved := _row_refusal(*authority.jobs.get_on_leg(job.id), worker, leg, token)) is not None:
            return moved
    return authority.leg_over(job.id, leg)


def _row_refusal(job: Job, current: int, worker: str, leg: int, token: str | None = None) -> str | None:
    """Why the job row (read with its leg, ``current``) no longer gives ``job`` to ``worker``'s ``leg``
    (in the worker start ``token``, given)."""
    if not holds(job, worker, token) or current != leg:
        if job.status == "running" and job.worker == worker and current == leg:
            return (
                f"job {job.id} is no longer this process's: another start of worker {worker} runs leg "
                f"{leg} ({job.worker_token})"
            )
        by = f" by {job.cancelled_by}" if job.status == "cancelled" and job.cancelled_by else ""
        return f"job {job.id} is no longer this leg's ({job.status}{by}, leg {current} on {job.worker})"
    return None


def sent_fields(request: ApprovalRequest) -> list[tuple[str, str]]:
    """The fields of a stored request as they were sent (what its key was made of): a chosen
    option's value is shown as "VALUE (ITS TEXT)" with the text in ``label`` (``tools.human.FieldValue``):
    the text is cut off."""
    cut = [
        f.value[: -len(f.label) - 3] if f.label is not None and f.value.endswith(f" ({f.label})") else f.value
        for f in request.fields
    ]
    return [(f.name, v) for f, v in zip(request.fields, cut, strict=True)]


class WorkerGate:
    def __init__(self, authority: Authority, job_id: str) -> None:
        self.authority = authority
        self.job_id = job_id
        self._refused: set[str] = set()
        self._shown: dict[str, ApprovalRequest] = {}  # key -> the request as last built for it
        self.outdated: dict[str, str] = {}  # key -> why its approval no longer covers it
        # key -> why it is not asked again: its record changed after each of more than REASKS
        # decisions (``tools.policy``: the terminal's limit and words); the request is not sent
        self.reasks_spent: dict[str, str] = {}
        # what ``may_send`` cleared, for ``sending``: per route handler, which Playwright's sync API
        # runs each in a greenlet of its own on one thread (a thread-local would hand one request's
        # clearance to another's handler while the first waits in a read-back)
        self._cleared: ContextVar[tuple[dict[str, Any], str] | None] = ContextVar(
            f"cleared-{job_id}", default=None
        )
        self._taken: list[str] = []  # answers handed to this leg's run, not yet spent (``spend``)
        self._lock = threading.Lock()
        # (worker id, leg, worker start token or None) it sends for: set by LegRunner
        self.holder: tuple[str, int, str | None] | None = None
        self._pinned: tuple[str, int, str | None] | None = None  # unbound: the leg that held the job first

    @property
    def jobs(self) -> Jobs:
        return self.authority.jobs

    def decision(self, key: str, now: ApprovalRequest | None = None) -> Approval | None:
        """The newest decision of this job for exactly ``key`` that the authority signed and that
        covers ``now``, the request as the run built it this time (else as last built in this run).

        Newest by the signed audit log (``_decided``: the order the decisions were given), never by a
        date in the job database; and a decision the log holds but the job database no longer does
        (its row deleted, moved or edited) is not passed over for an older one: the person is asked
        again (a rejection stands, even against a database writer)."""
        self._stop_if_gone()
        return self._decision(key, now)

    def _decision(self, key: str, now: ApprovalRequest | None = None) -> Approval | None:
        """``decision`` without its check that the leg still holds the job (for ``send_check``, which
        has just made it)."""
        if now is not None:
            self._shown[key] = now
        now = self._shown.get(key)
        every = [a for a in self.jobs.approvals(job_id=self.job_id) if a.status in DECIDED]
        found = [a for a in every if self._covers(a, key)]
        for forged in [a for a in every if a.key == key and a not in found]:
            if not self.authority.decision_ok(forged):  # its stored request edited: recorded, not obeyed
                self._not_obeyed(forged)
        before = self._keyed_before(key, now, every) if now is not None else []
        void = self.authority.void_decisions(self.job_id) if found or before else set()
        if stale := [a for a in before if a.id not in void]:  # the person sees why it is asked again
            self.outdated[key] = LEGACY_ASKED_AGAIN.format(
                who=f"{stale[-1].id}, {stale[-1].status} by {stale[-1].decided_by or 'a person'}"
            )
        found, order, missing = self._decided(key, found, void, every)
        told = False
        for approval in reversed(found):
            newer = [e for e in missing if e.seq > order.get(approval.id, 0)]
            if approval.id in void:
                self._not_obeyed(approval, "decision_void", VOID)
            elif newer:
                self._not_obeyed(
                    approval,
                    "decision_superseded",
                    f"a later decision ({newer[-1].action} of {newer[-1].target} by {newer[-1].who}, audit "
                    f"entry {newer[-1].seq}) is not in the job database as it was given",
                )
                return None
            elif (why := self.authority.recorded_refusal(approval)) is not None:
                self._not_obeyed(approval, "decision_overruled", why)  # a rejection is final
                return None
            elif not self.authority.decision_ok(approval):
                self._not_obeyed(approval)
                if approval.id in order:  # given (the log says so), then edited: asked again
                    return None
            elif (why := self.authority.decided_late(approval)) is not None:
                self._not_obeyed(approval, "decision_late", why)
            elif (why := self.authority.rules_refusal(approval)) is not None:
                self._not_obeyed(approval, "decision_refused_by_rules", why)
            elif (why := self.authority.approvers_refusal(approval)) is not None:
                self._not_obeyed(approval, "decision_no_longer_counts", why)
            elif now is not None and (why := self.authority.outdated(approval, now)) is not None:
                if not told:  # the newest decision's reading is the one the person is told of
                    told = True
                    self.outdated[key] = why
                self._not_obeyed(approval, "decision_outdated", why)
                if self._reasked(found) > REASKS:
                    self.reasks_spent[key] = f"{self.outdated[key]}: {CHANGED_EACH_TIME}"
            else:
                return approval
        return None

    def _covers(self, approval: Approval, key: str) -> bool:
        """Whether ``approval`` is a decision of ``key``. One that stores its request (every approval
        parked for a send does) covers ``key`` only when today's key of the request it stored is
        ``key`` and it was stored under a key that request has had (today's, or a version before this
        one's: ``approvals.key.request_keys``) — never by its key alone, even when that is ``key``: a
        version before this one keyed the rows sorted, so its key of one request is today's key of
        another (the same rows regrouped). Key equality alone only for a row that stores no request
        and for a request to send again (``again``: its key is its own)."""
        stored = approval.request
        if stored is None or approval.key.startswith(AGAIN):
            return approval.key == key
        excluded = self.authority.excluded_for(stored.url)
        keys = request_keys(stored.method, stored.url, sent_fields(stored), excluded=excluded)
        return keys[-1] == key and approval.key in keys

    def _reasked(self, found: list[Approval]) -> int:
        """How many of ``found`` (this job's decisions of one request) the signed audit log records
        outdated when a leg reached the request (``decision_outdated``: the record read beside it had
        changed since), in any leg: each was followed by asking again."""
        ids = {a.id for a in found}
        entries = self.authority.audit.signed(("decision_outdated",))
        return len({e.target for e in entries if e.payload.get("job_id") == self.job_id and e.target in ids})

    def _keyed_before(self, key: str, now: ApprovalRequest, every: list[Approval]) -> list[Approval]:
        """The decisions of this job that a version before this one stored (under a key only its rule
        made of the request they stored: fields sorted) under a key ``now`` has had, and that do not
        cover it (``_covers``: the request they stored is another order of its fields): ``now`` is
        asked again, saying why. A decision given under today's rule is never said to be one given
        before the upgrade."""
        excluded = self.authority.excluded_for(now.url)
        keys = request_keys(now.method, now.url, sent_fields(now), excluded=excluded)
        return [a for a in every if a.key in keys and self._legacy(a) and not self._covers(a, key)]

    def _legacy(self, approval: Approval) -> bool:
        """Whether ``approval`` was stored by a version before this one: under a key only that
        version's rule (fields sorted) made of the request it stored."""
        stored = approval.request
        if stored is None:
            return False
        excluded = self.authority.excluded_for(stored.url)
        return approval.key in legacy_keys(stored.method, stored.url, sent_fields(stored), excluded=excluded)

    def _decided(
        self, key: str, found: list[Approval], void: set[str], every: list[Approval]
    ) -> tuple[list[Approval], dict[str, int], list[AuditEntry]]:
        """``found`` (this job's decided approvals of ``key``, ``_covers``) oldest first by the signed
        audit log's decision entries (one the log does not hold, given before it was kept, counts as
        older than every one it holds); each one's place in the log; and the log's decisions in this
        job of ``key`` (or of a key a decision in ``found`` was stored under by a version before this
        one), not void, whose approval is not among this job's decided ones (``every``) as signed
        (deleted, moved to another job or edited in the job database)."""
        audit = self.authority.audit
        keys = {key} | {a.key for a in found}
        entries = [
            e
            for e in audit.signed(DECISIONS)
            if e.payload.get("job_id") == self.job_id and e.payload.get("key") in keys
        ]
        order = {e.target: e.seq for e in entries}
        ordered = sorted(found, key=lambda a: (a.id in order, order.get(a.id, 0), a.created_at))
        intact = {a.id for a in every if a.key in keys and self.authority.decision_ok(a)}
        missing = [e for e in entries if e.target not in intact and e.target not in void]
        return ordered, order, missing

    def answer(self, key: str = "") -> Approval | None:
        """The next answer (or rejection) to this job's questions that the authority signed; one
        written into the job database is refused, recorded and skipped (the person is asked again).

        The answer to exactly this question (``key``, the question's fingerprint) first; else the
        oldest not yet handed to this leg, in the order the questions were asked by the signed audit
        log (a question's wording can differ when the resumed run asks it anew; a date edited in the
        job database reorders nothing). One is spent when the run saves the state built on it
        (``spend``, with the checkpoint): a leg handed back before that leaves it to the next leg,
        which asks again and gets the same answer, and the person is not asked twice. A spent answer
        is marked used in the job database and in the audit log, which a row set back to unused in
        the database cannot undo (a replay is refused, recorded). Thread-safe: a model's parallel
        tool calls may ask two questions at once, and each gets its own answer."""
        self._stop_if_gone()
        audit = self.authority.audit
        with self._lock:
            handed = {e.target for e in audit.signed("answer_handed")}
            asked: dict[str, int] = {}  # a question parked again (still pending) keeps its first place
            for entry in audit.signed("question"):
                if entry.payload.get("job_id") == self.job_id:
                    asked.setdefault(entry.target, entry.seq)
            void = self.authority.void_decisions(self.job_id)
            waiting = [a for a in self.jobs.answers(self.job_id) if a.id not in self._taken]
            waiting.sort(key=lambda a: (a.key != key, asked.get(a.id, float("inf")), a.created_at))
            for taken in waiting:
                if taken.id in void:  # an answer is for the run it was asked in, as an approval is
                    self._not_obeyed(taken, "decision_void", VOID)
                elif taken.id in handed:
                    self._not_obeyed(taken, "answer_replay_refused", "it was handed to the run before")
                elif (why := self.authority.recorded_refusal(taken)) is not None:
                    self._not_obeyed(taken, "decision_overruled", why)  # a rejection is final
                elif self.authority.decision_ok(taken) and (why := self.authority.approvers_refusal(taken)):
                    self._not_obeyed(taken, "decision_no_longer_counts", why)
                elif self.authority.decision_ok(taken):
                    self._taken.append(taken.id)
                    return taken
                else:
                    self._not_obeyed(taken)
            return None

    def asked(self, approval: Approval) -> None:
        """A question parked for a person: recorded, so answers come back in the order asked."""
        self.authority.audit.append(
            "worker", "question", approval.id, {"job_id": self.job_id, "key": approval.key}
        )

    def unspent(self) -> list[str]:
        """The answers this leg's run took that no saved checkpoint has spent yet."""
        with self._lock:
            return list(self._taken)

    def spend(self, ids: list[str]) -> None:
        """The checkpoint that holds what the run made of these answers was saved: recorded."""
        with self._lock:
            for approval_id in ids:
                self.authority.audit.append("worker", "answer_handed", approval_id, {"job_id": self.job_id})
                self._taken.remove(approval_id)

    def _not_obeyed(self, approval: Approval, action: str = "forged_decision_refused", why: str = "") -> None:
        if approval.id in self._refused:  # recorded once per run
            return
        self._refused.add(approval.id)
        self.authority.audit.append(
            "worker",
            action,
            approval.id,
            {
                "job_id": self.job_id,
                "key": approval.key,
                "status": approval.status,
                "decided_by": approval.decided_by,
                **({"reason": why} if why else {}),
            },
        )

    def auto(
        self, request: ApprovalRequest, job: Job, expires_in: timedelta | None
    ) -> ApprovalDecision | None:
        """Approve under the job's signed ``--auto-approve`` when the rules permit it (recorded as a
        signed decision by "--auto-approve"), else None: a person must decide."""
        authority = self.authority.one_reading()  # one decision, one reading of the rules in force
        why = None
        if not authority.submission_ok(job):
            why = (
                "the submission's --auto-approve is not signed by the authority (edited in the job database)"
            )
        elif request.key.startswith(AGAIN):
            why = "an earlier attempt of exactly this may still apply: only a person may approve sending it again"
        else:
            why = authority.auto_approve_refusal(job, request)
        if why is not None:
            authority.audit.append(
                "worker",
                "auto_approve_refused",
                self.job_id,
                {"reason": why, "key": request.key, "url": request.url},
            )
            return None
        approval = self.jobs.park(
            self.job_id,
            kind="approval",
            key=request.key,
            request=request,
            expires_in=expires_in,
            reusable=self.reusable,
        )
        retried = sorted({w.name for w in authority.run_owners(job) if w} - {job.submitted_by})
        also = f", retried by {', '.join(retried)}" if retried else ""
        decision = ApprovalDecision.approve(
            by=f"--auto-approve (submitted by {job.submitted_by}{also}; nobody was asked)",
            basis="auto_approve",
        )
        self.jobs.decide(approval.id, decision, decided_by="--auto-approve")
        authority.audit.append(
            "--auto-approve",
            "approve",
            approval.id,
            {"job_id": self.job_id, "key": request.key, "url": request.url},
        )
        return decision

    def reusable(self, pending: Approval) -> bool:
        """Whether a run may park on ``pending``, a pending approval of its job for the same request
        (``Jobs.park``, which only offers one a worker parked: ``Jobs.parked_here``): not when the
        signed audit log records it decided (its row was set back: ``Authority.recorded_refusal``);
        the run parks a new one, and a person is asked again."""
        return self.authority.recorded_refusal(pending) is None

    def sent_before(self, method: str, url: str, fields: list[tuple[str, str]]) -> datetime | None:
        """When this job sent exactly this, by the signed audit log (``Authority.sent_before``), this
        leg's own earlier sends included. (``send_check`` records as it clears: a run with an intent log
        clears with ``may_send`` instead, as ``LegRunner`` wires it, and is recorded as it leaves.)"""
        return self.authority.sent_before(self.job_id, method, url, fields)

    def leg_refusal(self) -> str | None:
        """Why this gate's job is no longer its leg's (``leg_refusal``: by the job database and by the
        signed audit log). Bound to its leg (``holder``); a gate nobody bound (a test's, a tool's) is
        bound by its first check to the leg that held the job then: no check is of "any leg"."""
        job, current = self.jobs.get_on_leg(self.job_id)
        holder = self.holder or self._pinned
        if holder is None:
            if job.status != "running" or job.worker is None:
                return leg_refusal_of(self.authority, job, current, job.worker or "", current)
            holder = self._pinned = (job.worker, current, job.worker_token)
        return leg_refusal_of(self.authority, job, current, *holder)

    def _stop_if_gone(self) -> None:
        """A leg that lost its job asks nobody anything more (no approval parked on a cancelled job):
        it stops, as at its next checkpoint."""
        if self.holder is not None and (gone := self.leg_refusal()) is not None:
            from taskcrew.jobs.runner import Stopped  # (jobs.runner imports this module)

            raise Stopped(f"{gone}; this leg stops")

    def again(
        self, method: str, url: str, fields: list[tuple[str, str]], attempt: str, warning: str
    ) -> ApprovalRequest:
        """What a person is asked before ``attempt`` (its intent record) sends again what an earlier
        attempt may still apply: the request as this run last built it, under a key of its own (one
        approval, one attempt), ``warning`` shown on every surface (``asked_again``: never bulk)."""
        key = self.authority.key_of(method, url, fields)
        built = [FieldValue(name=n, value=v) for n, v in fields]
        shown = self._shown.get(key) or ApprovalRequest(
            kind="form_submission", method=method, url=url, fields=built
        )
        again = AGAIN + hashlib.sha256(f"{self.job_id}\0{key}\0{attempt}".encode()).hexdigest()[:32]
        return shown.model_copy(update={"key": again, "asked_again": warning})

    def send_check(self, method: str, url: str, fields: list[tuple[str, str]]) -> str | None:
        """None: send it (recorded in the audit log as sent). A text: the job is no longer this
        leg's, or it was not approved as it is (recorded); nothing is sent. A run with an intent log
        checks in two halves instead: ``may_send`` before it, ``sending`` as its last check."""
        if (refused := self.may_send(method, url, fields)) is not None:
            return refused
        self._record_send()  # the leg was just checked
        return None

    def may_send(self, method: str, url: str, fields: list[tuple[str, str]]) -> str | None:
        """``send_check`` without recording a send: the job still this leg's, and a signed approval
        of exactly these values, remembered for ``sending`` in this route handler (its own context:
        ``_cleared``). A refusal is recorded."""
        key, excluded = self.authority.keyed(method, url, fields)
        self._cleared.set(None)
        if (gone := self._leg_gone(key, method, url)) is not None:
            return f"{method} {url} was not sent: {gone}. Nothing was sent."
        approval = self._decision(key)  # the leg was just checked: its job row is not read again
        if approval is not None and approval.status == "approved":
            cleared = {"job_id": self.job_id, "key": key, "method": method, "url": url}
            self._cleared.set(({**cleared, "excluded": excluded}, approval.id))
            return None
        self.authority.audit.append(
            "worker",
            "send_refused",
            self.job_id,
            {"key": key, "method": method, "url": url, "fields": [list(f) for f in fields]},
        )
        return (
            f"{method} {url} was not sent: the approvals authority has no signed approval for exactly these "
            "values in this job (they differ from what was approved, or the approval was not given by an "
            "entitled person). Nothing was sent; ask for approval again if it is still wanted."
        )

    def sending(self) -> str | None:
        """The last check before the request ``may_send`` cleared in this handler leaves (the intent
        log's ``last_check``, after its read-back): the job still this leg's; then the send is
        recorded in the audit log, so the log says "send" only of what left (a repeat the intent log
        held back was cleared, never sent). A text: why it does not leave."""
        cleared = self._cleared.get()
        if cleared is None:
            return "it was not checked against its approval first"
        if (gone := self._leg_gone(cleared[0]["key"], cleared[0]["method"], cleared[0]["url"])) is not None:
            self._cleared.set(None)
            return gone
        self._record_send()
        return None

    def _record_send(self) -> None:
        """Record in the audit log the send ``may_send`` cleared in this handler (spent)."""
        cleared = self._cleared.get()
        assert cleared is not None
        self._cleared.set(None)
        self.authority.record_send(**cleared[0], target=cleared[1])

    def _leg_gone(self, key: str, method: str, url: str) -> str | None:
        """``leg_refusal``, recorded as a refused send."""
        if (gone := self.leg_refusal()) is None:
            return None
        self.authority.audit.append(
            "worker", "send_refused", self.job_id, {"key": key, "method": method, "url": url, "reason": gone}
        )
        return gone
