"""The approval authority: the one place that decides who may approve what, whatever the surface
(the terminal, ``taskcrew approvals``, the console, the job worker).

- approve: decided at once when no rule asks for a second approver; otherwise a signed first
  approval is recorded and a second, different, authenticated person completes it; the job's
  submitter never counts;
- reject: one person suffices (stopping is always allowed, even while the risk rules cannot be read:
  a rejection sends nothing); answer: text back to the run;
- bulk approve: all or nothing, only pending approvals without a flag (``bulk_refusal``: the flags a
  person is shown, ``Authority.view``) that are identical in method, target (the whole URL the key
  binds: scheme, host, path and query) and field names, each judged first by the verdict ``decide``
  obeys (``approve_verdict``); one refused as it is decided (a race) stops it, and the approver is
  told which were approved and which not (``bulk_partial``);
- an approval whose stored payload or signature does not check out is shown as such and not decided;
- an approval counts only while every person it names still counts under the credential they gave
  it with (``approvers_refusal``: a reset voids the logins and tokens from before it, and what they
  approved, until it is sent), and only for the run it was given in (a cancel takes back what is
  decided until it lands or while it stands: ``void_decisions``); the worker checks both before it
  obeys a decision, and the decider is told the outcome as judged after her decision is written;
- what a cancel or a retry takes back is read from the signed audit log, never from the job
  database's rows; a rejection is final, whatever the row of its approval says
  (``recorded_refusal``).
Every decision, granted or refused, goes to the tamper-evident audit log. The worker side (may I send
exactly this?) is in ``approvals.worker``.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from taskcrew.approvals import seals
from taskcrew.approvals.audit import AuditEntry, AuditLog, AuditLogError
from taskcrew.approvals.identity import (
    AUTHENTICATED,
    NO_USERS,
    UNPROVEN_SUBMITTER,
    Identity,
    current_users,
    identity_refusal,
    os_user,
    person,
    recorded,
    same_person,
    standing_refusal,
    user_names,
)
from taskcrew.approvals.key import earlier_send, request_key
from taskcrew.approvals.rules import (
    UNCLEAR,
    Assessment,
    Payee,
    RiskFlag,
    RiskRules,
    RiskRulesError,
    RulesInForce,
    approved_when,
    assess,
    bulk_key,
    load_rules,
    lookalike_vendor,
    new_vendor,
    option_payee,
    read_money,
    read_payee,
    rules_digest,
    sent_part,
    with_address,
)
from taskcrew.approvals.signing import KEY_FILE, KeyRing, approvals_dir
from taskcrew.approvals.visible import Shown, cut_value, quoted, shown
from taskcrew.jobs.models import CANCELLABLE, Approval, Cosign, Job, utcnow
from taskcrew.jobs.store import (
    InvalidChange,
    Jobs,
    JobStoreError,
    UnknownApproval,
    UnknownJob,
    cancel_refusal,
    past_deadline,
    retry_refusal,
    too_late,
)
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue

log = logging.getLogger(__name__)
# the rules each process read last, by (audit log, rules file) -> digest (``Authority._rules_read``)
_RULES_SEEN: dict[tuple[Path, Path], str] = {}
_RULES_LOCK = threading.Lock()

Action = Literal["approve", "reject", "answer"]
ACTIONS: tuple[Action, ...] = ("approve", "reject", "answer")
# a retry of a job in these states voids what was decided before it (``Authority.act_on_job``): an
# interrupted run (finished by Ctrl-C) resumes from its checkpoint (``store.starts_over``), but a stop
# is how the person at the terminal takes back what she approved, so it asks again, as after a cancel
VOIDED_BY_RETRY = ("finished", "cancelled")
GENERIC_SOURCES = ("the page's form as filled",)  # what the worker records when it knows no better
# the signed audit log's entries that end a job's legs (``Authority.leg_end``): a cancel (every leg until
# a later retry), a retry begun (``retrying``, written before the job database changes) and done
# (``retry``: the legs after it act again), a takeover (unless ``take_over_undone``: it did not happen)
LEG_ENDS = ("cancel", "retrying", "retry", "take_over", "take_over_undone")
# the signed audit log's entries that show a decision was used (target: the approval, payload: its job):
# an answer handed to the run (``WorkerGate.spend``), a request sent on an approval (``record_send``)
USED = ("answer_handed", "send")
# what a retry's ``retrying`` entry says when it takes back everything given in the job before it
# (a retry of a job in ``VOIDED_BY_RETRY``): its decisions and first approvals (``void_decisions``,
# ``_firsts_standing``), by the order of the signed log, whatever its void list names
TAKES_BACK = "takes_back"


class RecordedOnly(InvalidChange):
    """A cancel, retry or takeover is recorded in the signed audit log, and its change to the job
    database did not happen (the job changed meanwhile, or the database failed): what the entry
    ends or voids stays ended and void (it can only hold more back, never less); the message says so."""


def cosign_credential(approval_id: str, credential: str) -> str:
    """What a first approval stores of its approver's credential: a digest bound to the approval
    (the job database holds no fingerprint of a password that could be compared across rows)."""
    return hashlib.sha256(f"cosign\0{approval_id}\0{credential}".encode()).hexdigest()[:32]


def decision_credential(approval_id: str, credential: str) -> str:
    """What a decision stores of its decider's credential (``ApprovalDecision.credential``, sealed
    with the decision): a digest bound to the approval, as ``cosign_credential`` is."""
    return hashlib.sha256(f"decision\0{approval_id}\0{credential}".encode()).hexdigest()[:32]


def _still_counts(
    users: dict[str, str] | None, name: str, given: str | None, bound: Callable[[str], str]
) -> bool:
    """Whether what ``name`` gave under ``given`` (a credential digest bound to its approval by
    ``bound``: ``cosign_credential``, ``decision_credential``) still counts against ``users``
    (``identity.current_users``), by ``identity.standing_refusal``, the rule a login is judged by: she
    is still a user, under that password (None: given by a login that kept no credential, which
    rests on her name); with no users, nothing but the console's start-up-token login counts."""
    return standing_refusal(users, name, given, bound) is None


class DecisionResult(BaseModel):
    approval_id: str
    status: Literal["decided", "first_approval", "refused"]
    message: str


class ApproveOutcome(NamedTuple):
    """What approving an approval by one person would do (``Authority.approve_outcome``): ``refused``
    (``reason`` says why), ``first`` (a first of two approvals: nothing is sent yet) or ``sends``."""

    kind: Literal["refused", "first", "sends"]
    reason: str = ""


class ApprovalView(BaseModel):
    """An approval as a person is shown it: the record, its job, risk, co-signers, and whether its
    stored payload is the one that was parked (``problem`` says why not; then nothing is shown).
    ``assessment`` holds every flag a person is shown (``Authority.view``), ``payee`` whom it pays."""

    approval: Approval
    job: Job | None
    assessment: Assessment
    needs_two: bool = False
    # why one approver suffices though a flag asks for a second one ("" when none does, or two are
    # needed): the two-person rule is off here (``Authority.two_person_off``); every surface says it
    rule_off: str = ""
    first_approvers: list[str] = Field(default_factory=list)
    problem: str | None = None
    payee: Payee = Field(default_factory=Payee)

    def said(self, flag: RiskFlag) -> str:
        """A flag's message as every surface shows it: one that asks for a second approver where the
        two-person rule is off here says so (``rule_off``), so no surface says "needs a second
        approver" and then lets one person send it."""
        if flag.second_approver and self.rule_off:
            cut = flag.message.removesuffix(": needs a second approver")
            message = Shown(cut) if isinstance(flag.message, Shown) else cut
            return shown(
                "{}: a second approver would be needed, but {}: one approver suffices", message, self.rule_off
            )
        return flag.message

    @property
    def fields(self) -> list[tuple[str, str]]:
        request = self.approval.request
        return [(f.name, f.value) for f in request.fields] if request and not self.problem else []


def _excluded_of(send: dict[str, object]) -> list[str] | None:
    """The fields a signed send records the rules left out of its key (``record_send``): None when it
    records none (a send signed before sends recorded them)."""
    left = send.get("excluded")
    return [str(n) for n in left] if isinstance(left, list) else None


def request_fields(request: ApprovalRequest) -> list[tuple[str, str]]:
    """The fields the rules judge: the values (a select's shown label cut off)."""
    return [(f.name, f.value) for f in request.fields]


PASSWORD_BOX = "in a password box on the page (the page showed it only as dots)"
"""The note the browser gate puts on a field whose value sits in a password-type box and is not a
vault secret (``actions.ActionExecutor._gate``): typed there by the model or put there by the page.
It is shown like any other value; ``assess_request`` flags it."""


def password_box(field: FieldValue) -> bool:
    """Does the gate's note say ``field`` sits in a password-type box (``PASSWORD_BOX``)?"""
    return PASSWORD_BOX in (field.note or "").split("; ")


def assess_request(request: ApprovalRequest, rules: RiskRules) -> Assessment:
    """The risk rules' flags for ``request``: the one assessment of every surface (the run's gate,
    the worker, the console, ``taskcrew approvals``, bulk approval). The rules judge the values sent
    (``request_fields``: only a vault secret is shown as its placeholder), and a value that sat in a
    password-type box (``password_box``: not a vault secret) is flagged for a second approver: the
    person who looked at the page could not read it, and a page can hide any value that way; a
    flag keeps it out of bulk approval, and --auto-approve covers it only where a rule says
    ``flagged: true``."""
    assessment = assess(
        request_fields(request),
        request.url,
        rules,
        request.looked_up,
        request.option_labels(),
        [f.label is not None or f.choice for f in request.fields],
    )
    if boxed := [f.name for f in request.fields if password_box(f)]:
        assessment.flags.append(
            RiskFlag(
                rule="password_box",
                field=boxed[0],
                message=shown(
                    "{} was in a password box on the page, which shows it only as dots (typed there or "
                    "put there by the page; not a vault secret): read it here: needs a second approver",
                    Shown(cut_value(", ".join(boxed))),
                ),
                second_approver=True,
            )
        )
    return assessment


def shown_value(field: FieldValue) -> str:
    """What a field is read as: a chosen option's label ("Northwind Traders" for the option whose
    value is "1", recorded by the browser gate as ``label``), else the value exactly as sent. A
    value is never taken apart: a typed "Initrode (Northwind Traders)" reads as all of it."""
    return field.label if field.label else field.value


def request_payee(request: ApprovalRequest, rules: RiskRules) -> Payee:
    """Whom ``request`` pays (``rules.read_payee``): its fields as a person reads them
    (``shown_value``), a chosen option of a payee field by the name the vendor list the worker read
    gives the record it sends (``rules.option_payee``: the one the system books; a label naming
    another vendor makes the payee unclear, ``Payee.doubt`` says why); where none names a payee
    (paying a bill sends only ``paid_on``), the record it changes, as the system showed it when the
    worker asked. That record must be the one the request changes and the request sent from its
    page (``record.changed_record_read``): else the payee is unclear (``Payee.doubt`` says why), as
    shown to a person and kept out of bulk approval. A payee named like more than one vendor record
    the system lists (``rules.lookalike_vendor``) is unclear too: its name does not say which record
    it pays (flagged as a look-alike on every surface, ``payee_flags``)."""
    payee = _payee_read(request, rules)
    if lookalike_vendor(payee, request.known_vendors, request.vendors_page):
        payee.unclear = True
    return payee


def _payee_read(request: ApprovalRequest, rules: RiskRules) -> Payee:
    from taskcrew.approvals.record import changed_record_read  # record reads pages (rules, documents)

    shown: list[tuple[str, str]] = []
    relabelled: dict[tuple[str, str], str] = {}  # (field, the listed name it pays) -> why
    for f in request.fields:
        read = (
            option_payee(
                f.name, sent_part(f.value, f.label), f.label, request.vendor_records, request.vendors_page
            )
            if f.label
            else None
        )
        shown.append((f.name, shown_value(f) if read is None else read[0]))
        if read is not None and read[1] is not None:
            relabelled[(f.name, read[0])] = read[1]
    chosen = {f.name for f in request.fields if f.label}
    payee = read_payee(shown, chosen, rules, request.known_vendors)
    if doubts := list(dict.fromkeys(why for field, why in relabelled.items() if field in payee.fields)):
        payee.doubt, payee.unclear = "; ".join(doubts), True  # each made visible (``option_payee``)
    if payee.fields:
        return payee
    changed = changed_record_read(request, rules)
    if changed.record is not None:
        record = [(label.replace(" ", "_"), value) for label, value in changed.record.values.items()]
        payee = read_payee(record, set(), rules, request.known_vendors)
        payee.from_record = bool(payee.fields)
    if changed.doubt is not None:
        payee.doubt, payee.unclear = changed.doubt, True
    return payee


def system_reading(request: ApprovalRequest, rules: RiskRules) -> dict[str, str]:
    """What an approver of ``request`` is shown beside the bytes that was read from the system, not
    sent: the record's amount and currency (``looked_up``), and whom it pays where the system says
    it (``request_payee``): the record it changes (paying a bill sends only a date), a chosen
    option's vendor record as the vendor list names it, or a doubt about either. The one reading
    a decision is held to (``rules.approved_when``): a resumed job's (``Authority.outdated``), the
    terminal's after its prompt and a run's repeat of an approved payload (``Policy``). Whom it pays
    is read with which vendor record that is (``payee_record``), so a bill moved to another record
    named alike is another payee. {}: it read nothing from the system."""
    reading = dict(request.looked_up)
    payee = request_payee(request, rules)
    chosen = {f.name for f in request.fields if f.label}
    if (
        payee.from_record
        or payee.unclear
        or payee.doubt is not None
        or any(n in chosen for n, _ in payee.fields)
    ):
        reading["payee"] = (", ".join(payee.names) or "not known") + (UNCLEAR if payee.unclear else "")
        where = request.record.page if payee.from_record and request.record else request.vendors_page
        reading["payee_source"] = where or request.page_url or "the system"
        if record := payee_record(payee, request):
            reading["payee_record"] = record
    return reading


def payee_record(payee: Payee, request: ApprovalRequest) -> str | None:
    """Which vendor record ``payee`` (``request_payee``) is, in one form whichever way the system
    showed it (``record.payee_record``). None: the system showed no record for it."""
    from taskcrew.approvals.record import payee_record  # record reads pages (rules, documents)

    return payee_record(payee, request)


def shown_flags(view: ApprovalView) -> list[RiskFlag]:
    """The flags a person is shown beside the risk rules' (``assess``), judged from the whole
    approval: a value read by OCR (its origin or the gate's note says so), a payee read from fields
    that name more than one (``read_payee``), a new vendor (``rules.new_vendor``), a payee named like
    more than one vendor record (``rules.lookalike_vendor``). None of them asks for a second person;
    each keeps the item out of bulk approval (``bulk_refusal``)."""
    from taskcrew.approvals.origins import field_sources  # origins reads this module's views

    request = view.approval.request
    if request is None or view.problem:
        return []
    flags: list[RiskFlag] = []
    if ocr := sorted(name for name, ref in field_sources(view).items() if ref.ocr):
        flags.append(
            RiskFlag(
                rule="ocr_value",
                field=ocr[0],
                message="check " + ", ".join(ocr) + " against the document",
                second_approver=False,
            )
        )
    return flags + payee_flags(view.payee, request)


def payee_flags(payee: Payee, request: ApprovalRequest) -> list[RiskFlag]:
    """What a person must look at about whom ``request`` pays (``payee``: ``request_payee``): a payee
    the fields or the record cannot name as one, a new vendor, one named like more than one vendor
    record the system lists (a look-alike record beside the real vendor's). The one rule for every
    surface that shows flags (``shown_flags``: the console, ``approvals show``, bulk approval; the
    terminal) and for ``--auto-approve``, which does not cover them (``Authority.auto_approve_refusal``)."""
    flags: list[RiskFlag] = []
    if payee.doubt is not None or len(payee.names) > 1:  # unclear, unless only named alike (below)
        flags.append(_unclear_payee(payee))
    if why := new_vendor(payee, request.url, request.known_vendors, request.vendors_page):
        flags.append(RiskFlag(rule="new_vendor", message=why, second_approver=False))
    sent = [(f.name, f.value) for f in request.fields]
    if why := lookalike_vendor(payee, request.known_vendors, request.vendors_page, sent):
        # one person can check which record it is (a look-up in the system, as for a new vendor);
        # a second one would be asked for every bill of the real vendor while the look-alike stays
        field = payee.fields[0][0] if payee.fields else None
        flags.append(RiskFlag(rule="lookalike_vendor", field=field, message=why, second_approver=False))
    return flags


def _unclear_payee(payee: Payee) -> RiskFlag:
    """The flag of a payee ``read_payee`` or ``request_payee`` could not read as one."""
    named = quoted(payee.fields)  # each value cut, as every value a flag quotes
    if payee.doubt is None:
        message = f"the fields that name the payee disagree ({named}): check whom it pays"
    elif payee.fields:
        message = f"{payee.doubt}; the payee shown is read from that record ({named}): check whom it pays"
    else:
        message = f"{payee.doubt}; whom it pays is not known: check it in the system before approving"
    field = payee.fields[0][0] if payee.fields else None
    return RiskFlag(rule="unclear_payee", field=field, message=message, second_approver=False)


def bulk_refusal(view: ApprovalView, rules: RiskRules | None = None) -> str | None:
    """Why ``view``'s approval may not be approved in bulk (None: it may, with identical others):
    the one rule for ``Authority.bulk_approve`` and for every page that offers it. It must be a
    pending approval that checks out, with no flag a person is shown, not asked again, and no
    amount its page says to check by hand (``Money.by_hand``: money sent, and no readable headline
    amount read from a field named as one, or no threshold for it). ``rules``: the authority's
    (None: ``load_rules``)."""
    approval = view.approval
    if (
        approval.status != "pending"
        or approval.kind != "approval"
        or approval.request is None
        or view.problem
    ):
        return f"{approval.id} is not a pending approval of a submission that checks out"
    why = []
    if not view.assessment.low_risk:
        why.append("flagged (" + "; ".join(f"{f.rule}: {f.message}" for f in view.assessment.flags) + ")")
    if approval.request.asked_again:  # its record changed since it was approved: look at it alone
        why.append(f"asked again ({approval.request.asked_again})")
    request = approval.request
    sent = with_address(view.fields, request.url)
    money = read_money(sent, rules or load_rules(), request.looked_up, request.option_labels())
    if by_hand := money.by_hand:  # the amounts as every surface reads them (``worklist.work_item``)
        why.append(f"an amount to check by hand on its own page ({by_hand})")
    return f"{approval.id} is " + ", and ".join(why) if why else None


def unreadable_said(exc: RiskRulesError) -> str:
    """What is said while the rules file cannot be read or validated: why, what to do, and that only
    a rejection is decided meanwhile (``Authority.decide``), never anything by older rules."""
    return (
        f"{exc} Until the file is fixed, approving is refused (nothing is judged by rules read before, "
        "and no risk flag is read); rejecting still works."
    )


def lazy_authority(jobs: Jobs) -> Authority:
    """The authority a command line acts through (``taskcrew approvals …``, ``taskcrew jobs …``): its
    rules file read when first used, so what needs no rules (listing, showing unjudged, rejecting,
    cancelling a job) still works while the file cannot be read; what needs them is refused."""
    return Authority(jobs, RulesInForce(at_start=False))


class Authority:
    def __init__(
        self,
        jobs: Jobs | None,
        rules: RiskRules | RulesInForce | None = None,
        *,
        home: Path | None = None,
        users_file: Path | None = None,
    ) -> None:
        self.home = home or approvals_dir()
        self.keys = KeyRing(self.home / KEY_FILE)
        self.audit = AuditLog(self.home / "audit.jsonl", self.keys)
        self._rules = rules if rules is not None else RulesInForce()  # the file read now: said at start
        self._rules_key: tuple[Path, Path] | None = None  # (audit log, rules file): ``_rules_read``
        self._key_rules: RiskRules | None = None  # the run's snapshot its keys are made by (``keys_by``)
        self._digest: str | None = None  # the file's digest of one reading (``one_reading``)
        self.users_file = users_file
        self._jobs = jobs
        if jobs is not None:
            jobs.keys = self.keys
            jobs.on_finish = self._record_finish
            jobs.on_batch_settle = self.settle

    @property
    def jobs(self) -> Jobs:
        if self._jobs is None:
            raise RuntimeError("this authority has no job store")
        return self._jobs

    @property
    def rules(self) -> RiskRules:
        """The risk rules each decision is judged by: those in force when it is made. The rules
        file's (``RulesInForce``: read again when it changed, in every process — a running console,
        a worker's leg, the CLI — as the users file is), unless fixed rules were given. A file that
        cannot be read or validated now raises ``RiskRulesError``: nothing is judged by older rules
        (``decide`` and ``bulk_approve`` refuse, saying so; a rejection is decided all the same: it
        sends nothing). A process that reads a changed file signs a ``rules_changed`` entry into the
        audit log, once per change (``_rules_read``). A run's request keys are made by its one
        snapshot (``keys_by``); one decision reads one reading of them (``one_reading``)."""
        if not isinstance(self._rules, RulesInForce):
            return self._rules
        return self._reading(self._rules)[1]

    @property
    def rules_digest(self) -> str:
        """The digest of the rules in force (``rules.rules_digest``: of the rules file's bytes; of
        the rules' JSON where fixed rules were given), as each decision's signed entry says it."""
        if not isinstance(self._rules, RulesInForce):
            return self._digest or rules_digest(self._rules.model_dump_json().encode())
        return self._reading(self._rules)[0]

    def _reading(self, in_force: RulesInForce) -> tuple[str, RiskRules]:
        """One reading of the rules file: its digest and its rules (``RulesInForce.read``), a change
        since this process read it last signed (``_rules_read``)."""
        digest, rules = in_force.read()
        self._rules_read(in_force, digest)
        return digest, rules

    def one_reading(self) -> Authority:
        """This authority judging by one reading of the rules in force, its digest with them: what
        one decision reads (``decide``, ``bulk_approve``, the terminal's), so no part of it is judged
        by rules another part was not, and its signed entry names the rules that judged it. Raises
        ``RiskRulesError`` as ``rules`` does. (Itself where fixed rules were given.)"""
        if not isinstance(self._rules, RulesInForce):
            return self
        one = copy.copy(self)  # the same audit log, keys and job store
        one._digest, one._rules = self._reading(self._rules)
        return one

    def _rules_read(self, in_force: RulesInForce, digest: str) -> None:
        """Sign a ``rules_changed`` entry (the digests before and after, the file) when this process
        reads rules (``digest``) other than those it read last for this audit log: once per change
        per process, whatever number of authorities or threads read it (the first read of a process
        is none)."""
        if self._rules_key is None:
            self._rules_key = (self.audit.path.resolve(), in_force.path.resolve())
        seen = self._rules_key
        with _RULES_LOCK:
            before = _RULES_SEEN.get(seen)
            if before == digest:
                return
            if before is not None:
                payload = {
                    "from": before,
                    "to": digest,
                    "path": str(in_force.path),
                    "pid": os.getpid(),
                }
                self.audit.append(os_user(), "rules_changed", str(in_force.path), payload)
            _RULES_SEEN[seen] = digest

    # ---- rules --------------------------------------------------------------------------------
    def two_person_active(self) -> bool:
        """Whether an item the rules flag for a second approver needs two people here: by the risk
        rules' ``two_person``; ``auto``: while the users file lists two or more people, as it does
        now (an item parked while it listed more is judged by who is a user when it is decided)."""
        if self.rules.two_person != "auto":
            return self.rules.two_person == "on"
        try:
            return len(user_names(self.users_file)) >= 2
        except ValueError:
            return True  # a users file that cannot be read: assume several people

    def two_person_off(self) -> str:
        """Why no second approver is needed here whatever a flag asks ("": the two-person rule is on),
        in words every surface shows beside such a flag (``ApprovalView.rule_off``)."""
        if self.two_person_active():
            return ""
        if self.rules.two_person == "off":
            return "the two-person rule is off here (two_person: off in the risk rules)"
        return (
            "the two-person rule is off here (the users file lists fewer than two people; two_person: auto)"
        )

    def identity_refusal(self, who: Identity) -> str | None:
        """Whether a login or token still counts (None: it counts): ``identity.identity_refusal``,
        against this authority's users file."""
        return identity_refusal(who, self.users_file)

    def _first_approvers(self, approval: Approval, users: dict[str, str] | None = None) -> list[str]:
        """Who gave the first approvals that still count: signed by the authority, by someone who is
        still a user, under the password she has now (a reset voids the logins and tokens from
        before it, and what they approved: ``identity_refusal``'s rule; with no users, none counts).
        ``users``: ``current_users``, when already read (else one read of the users file)."""
        if not approval.first_approvals:
            return []
        if users is None:
            try:
                users = current_users(self.users_file)
            except ValueError:
                return []
        given = self._firsts_standing(approval)
        return [
            c.name
            for c in approval.first_approvals
            if c.name in given
            and self.keys.verify(seals.cosign(approval, c), c.sig)
            and _still_counts(users, c.name, c.credential, lambda now: cosign_credential(approval.id, now))
        ]

    def _firsts_standing(self, approval: Approval) -> set[str]:
        """Who gave a first approval of ``approval`` that no cancel or retry took back, by the signed
        log's order: a cancel takes back the first approvals given before it (as it takes back
        decisions: ``void_decisions``), and one given while it stands counts for nothing — a retry,
        reusing the still-pending approval, must not be completed by one more person on a yes given
        to the cancelled run (nor on a first approval a database writer set pending again after a
        cancel expired it). A retry that takes back what was given before it (its ``retrying`` entry
        says so: ``TAKES_BACK``, a job started over or put back after a stop) takes back the first
        approvals too, as a cancel does: a row set pending again (with its first approval on it)
        for the new run is asked of two people again. A first approval with no signed
        ``approve_first`` entry counts for nothing."""
        names: set[str] = set()
        standing = False
        for entry in self.audit.signed(("retrying", "retry", "cancel", "approve_first")):
            if entry.action == "approve_first":
                if entry.target == approval.id and not standing:
                    names.add(entry.who)
            elif entry.target == approval.job_id:
                standing = entry.action == "cancel"
                if standing or (entry.action == "retrying" and entry.payload.get(TAKES_BACK)):
                    names = set()
        return set() if standing else names

    def approvers_refusal(self, approval: Approval) -> str | None:
        """Why a person's approval no longer counts (None: it does). The one rule on who an approval
        rests on, checked where the worker obeys a decision (``WorkerGate``: each time it reads it,
        and again as the request is cleared to leave), so it holds whatever surface decided and
        however a decision and a password reset interleave: every person the approval names must
        still count under the credential they gave it with: each first approver through her signed
        first approval (``_first_approvers``), the final decider through the digest sealed in the
        decision (``ApprovalDecision.credential``; None: given before it was kept, or by a login that
        keeps none, which counts as before). A reset (or a removal) voids the logins and tokens from
        before it and what they approved, complete or not, until it is sent: the worker does not
        obey it, records why, and the person is asked again. A rejection always stands; an
        auto-approval is judged by ``rules_refusal`` (``auto_approve_refusal``). A process with no
        users file at all (a worker not given the console's: ``current_users`` is None) can check
        nobody's password: there, only ``rules_refusal``'s names count, as before. A users file that
        exists and lists nobody is no such case: nobody counts, so an approval given by a login is
        refused (the console's start-up-token login aside)."""
        decision = approval.decision
        if (
            approval.status not in ("approved", "answered")
            or decision is None
            or decision.basis == "auto_approve"
        ):
            return None  # an answer is a person's word to the run too: it rests on her login as much
        try:
            users = current_users(self.users_file)
        except ValueError as exc:
            return f"the users file cannot be read, so who approved it cannot be checked ({exc})"
        if users is None:  # no users file here (a worker not given the console's users file):
            return None  # nobody's password can be checked here; ``rules_refusal`` judges the names
        *firsts, final = (approval.decided_by or "").split("+")
        counted = self._first_approvers(approval, users) if firsts else []  # reads the signed log: once
        if gone := [n for n in firsts if n not in counted]:
            why = NO_USERS if not users else "removed from the users file, or the password changed since"
            return (
                f"the first approval of {', '.join(gone)} no longer counts ({why}): it was completed on "
                "one person's word"
            )
        if decision.credential is None:  # an OS user's word, or given before credentials were kept
            return None
        gone_why = standing_refusal(
            users, final, decision.credential, lambda now: decision_credential(approval.id, now)
        )
        return None if gone_why is None else f"what {final} approved no longer counts ({gone_why})"

    def _current(self, names: list[str]) -> list[str]:
        """``names`` that are still users (first approvals of someone removed no longer count), by
        ``identity.standing_refusal``: none when the users file lists nobody; all of them where this
        process has no users file at all (``current_users``: it cannot check; the decision's
        signature says the process that gave it did)."""
        try:
            users = current_users(self.users_file)
        except ValueError:
            return []
        return names if users is None else [n for n in names if standing_refusal(users, n, None) is None]

    def submitter_refusal(self, who: Identity, role: str = "submitter") -> str | None:
        """Where several people approve (the two-person rule is on), a submitter (or a ``role`` such
        as a routine's reviewer) must be proven: else one person could submit as her OS user and
        approve under her login. A login of someone who left counts for nothing anywhere."""
        if who.authenticated:
            return self.identity_refusal(who)
        if not self.two_person_active():
            return None
        return (
            f"the two-person rule is on here, so a {role} must be authenticated ({who.describe()} is "
            "not): `taskcrew approvals login` first"
        )

    def unproven_submitter(self, job: Job | None) -> str | None:
        """Why the two-person rule cannot be kept for ``job`` (None: it can): its signed submission
        does not prove who submitted it (an OS user, taken on her word), so the rule cannot tell the
        submitter from the approvers. Judged here, under this process's rules, whatever the rules of
        the CLI that submitted it said."""
        if job is not None and job.submitted_proof in AUTHENTICATED and self.submission_ok(job):
            return None
        who = f"{job.submitted_proof.replace('_', ' ')} {job.submitted_by}" if job else "unknown"
        return (
            f"it needs two people and its job was submitted by an unproven identity ({who}); the "
            "two-person rule cannot tell the submitter from the approvers; submit it again after "
            "`taskcrew approvals login`"
        )

    def proposal_refusal(
        self,
        who: str,
        submitter: str | None,
        run: str,
        remedy: str = "Submit the task again after `taskcrew approvals login`",
    ) -> str | None:
        """Why the person named ``who`` may not accept what a run proposed (a fact it learned, a routine
        learned from it) under the two-person rule (None: she may, or the rule is off): she submitted
        that run, or who did is not proven (``UNPROVEN_SUBMITTER``: the rule cannot tell that person
        from the accepter, so nobody may). ``submitter``: as the proposal records it (None: it names
        no one: a run taskcrew itself made); ``run``: which run, as the message goes on after "the run";
        ``remedy``: what to do about a submitter not proven, where that proposal can be made again."""
        if not self.two_person_active():
            return None
        if submitter == UNPROVEN_SUBMITTER:
            return (
                f"who submitted the run {run} is not proven (an operating-system user, taken on her word, "
                "or no signed job record says), and the two-person rule is on here: it cannot tell that "
                "person from whoever accepts it, so nobody may accept it" + (f". {remedy}" if remedy else "")
            )
        if submitter and same_person(submitter, who):
            return (
                f"{who} submitted the run {run}, and the two-person rule is on here: someone else accepts it"
            )
        return None

    def sent_before(
        self, job_id: str, method: str, url: str, fields: list[tuple[str, str]]
    ) -> datetime | None:
        """When ``job_id`` sent exactly this, by the signed audit log (None: never): the job database's
        record of sends (``tools.intents``) can lose a row; this log cannot. Every signed send of this
        job and key counts (``record_send``: written as a send leaves, so the attempt being checked is
        never among them), by ``approvals.key.earlier_send``: under any key the request has had (a
        send signed by a version that keyed it otherwise is this request's too), whatever fields the
        rules left out then (recorded with the send: an ordinary edit of ``excluded_fields`` since
        does not hide it; a send stores no fields, so one whose key kept a field today's rules leave
        out counts for its method and address)."""
        now = self.excluded_for(url)
        times = [
            e.at
            for e in self.sends_of(job_id)
            if earlier_send(
                (
                    str(e.payload.get("key")),
                    str(e.payload.get("method", "")),
                    str(e.payload.get("url", "")),
                    _excluded_of(e.payload),
                ),
                method,
                url,
                fields,
                excluded=now,
            )
        ]
        return datetime.fromisoformat(max(times)) if times else None

    def sends_of(self, job_id: str) -> list[AuditEntry]:
        """Every signed send of ``job_id`` (``record_send``), in the order written."""
        return [e for e in self.audit.signed("send") if e.payload.get("job_id") == job_id]

    def record_send(
        self,
        job_id: str,
        key: str,
        method: str,
        url: str,
        target: str,
        excluded: list[str] | None = None,
    ) -> None:
        """A send of ``job_id`` (its request key, ``key_of``) leaving now, after its last check, signed:
        what ``sent_before`` reads. ``target``: the approval it was sent on (else the job);
        ``excluded``: the fields left out of ``key`` (None: ``excluded_for``, those the run's rules leave
        out), recorded with it so a later edit of the rules does not hide it."""
        left = sorted(self.excluded_for(url) if excluded is None else excluded)
        self.audit.append(
            "worker",
            "send",
            target,
            {"job_id": job_id, "key": key, "method": method, "url": url, "excluded": left},
        )

    def key_of(self, method: str, url: str, fields: list[tuple[str, str]]) -> str:
        return self.keyed(method, url, fields)[0]

    def keyed(self, method: str, url: str, fields: list[tuple[str, str]]) -> tuple[str, list[str]]:
        """The request key (``key_of``) and the fields left out of it (``excluded_for``)."""
        excluded = self.excluded_for(url)
        return request_key(method, url, fields, excluded=excluded), excluded

    def keys_by(self, rules: RiskRules) -> Authority:
        """Make every request key of the run this authority gates by ``rules`` (returned: itself), the
        one snapshot the run asks by: its policy's (``Policy.rules``, read once when the run's browser
        is made; its intent log is given the same). The one rule for every run (a worker's leg,
        ``taskcrew run``): the key a send was asked and approved under, the key and the fields left out
        of it that the send check matches and the signed send records (``keyed``, ``record_send``), and
        what ``sent_before`` and the worker gate compare by are made from that one snapshot, so an edit
        of ``excluded_fields`` while the run goes on changes no key within it (the next leg reads the
        new rules whole). What each decision is judged by (thresholds, two people, --auto-approve, a
        file that cannot be used) is still the rules in force when it is made (``rules``)."""
        self._key_rules = rules
        return self

    @property
    def key_rules(self) -> RiskRules:
        """The rules this authority's request keys are made by: the run's snapshot (``keys_by``), else
        the rules in force."""
        return self._key_rules if self._key_rules is not None else self.rules

    def excluded_for(self, url: str) -> list[str]:
        """The fields a request key to ``url`` leaves out (sorted), by ``key_rules``."""
        return sorted(self.key_rules.excluded_for(url))

    def assess(self, request: ApprovalRequest) -> Assessment:
        return assess_request(request, self.rules)

    def needs_two(self, assessment: Assessment) -> bool:
        return self.two_person_active() and assessment.needs_second_approver

    # ---- integrity ----------------------------------------------------------------------------
    def submission_ok(self, job: Job) -> bool:
        return seals.submitted(self.keys, job)

    def unsigned_refusal(self, job: Job, what: str) -> str | None:
        """Why ``job`` may not ``what`` — its submission is not signed by the authority (edited or
        inserted in the job database) — recorded; None: it checks out. For what the worker would sign
        on the job's behalf (the child jobs of a batch), where a forged row must not be laundered."""
        if self.submission_ok(job):
            return None
        self.audit.append(
            "worker", "forged_submission_refused", job.id, {"refused": what, "submitted_by": job.submitted_by}
        )
        return (
            "the job's submission is not signed by the approvals authority (edited or added in the job "
            f"database), so it may not {what}; submit the task again"
        )

    def problem(self, approval: Approval) -> str | None:
        """Why this stored approval cannot be trusted (None: it checks out)."""
        if not self.parked_here(approval):
            return (
                "its stored payload is not the one the worker parked (unsigned or edited in the job "
                "database); it is not shown and cannot be approved"
            )
        if approval.request is not None and approval.request.key and approval.request.key != approval.key:
            return "its payload does not match the key that would be approved; it cannot be approved"
        if approval.status in ("approved", "rejected", "answered") and not self.decision_ok(approval):
            return "its decision is not signed by the authority (edited in the job database); it is void"
        return self.recorded_refusal(approval)

    def parked_here(self, approval: Approval) -> bool:
        """Whether ``approval``'s stored request is the one a worker parked (its seal checks out): a
        row inserted or edited in the job database is not, and nothing reads its request as a run's
        (``problem``; ``jobs.runner.hide_approved``; the store's ``Jobs.parked_here``: ``seals.parked``)."""
        return seals.parked(self.keys, approval)

    def recorded_refusal(self, approval: Approval) -> str | None:
        """Why ``approval``'s row does not stand against the decisions the signed audit log records of
        it (None: it does). The one rule, read by every surface that decides (``problem``: ``decide``,
        bulk approval, the console, ``jobs show``), by the worker before it obeys a decision
        (``WorkerGate``) and by a run that would park on a pending row again (``Jobs.park``):

        - a rejection is final: an approval the log records rejected stays rejected whatever its row
          says (approved, answered, or pending again); nothing of it is obeyed or decided again;
        - a row that reads pending after the log recorded a decision of it was set back to an earlier
          signed version (a database writer replaying it): it is not decided again (a rejection
          aside: stopping is always allowed), and no run parks on it again.

        A rejection voided by a retry (``void_decisions``) no longer stops the new run, which asks
        again in an approval of its own; the approval it rejected stays rejected."""
        if approval.status in ("rejected", "expired"):
            return None
        entries = [e for e in self.audit.signed(ACTIONS) if e.target == approval.id]
        if rejected := next((e for e in entries if e.action == "reject"), None):
            return (
                f"it was rejected by {rejected.who} (audit entry {rejected.seq}), and a rejection is final: "
                f"its row in the job database reads {approval.status} (set back or edited there)"
            )
        if entries and approval.status == "pending":
            last = entries[-1]
            return (
                f"the signed audit log records it decided ({last.action} by {last.who}, audit entry "
                f"{last.seq}), and its row in the job database reads pending again (set back there): it "
                "is not decided again"
            )
        return None

    def decision_ok(self, approval: Approval) -> bool:
        return seals.check(self.keys, seals.decision, approval, approval.signature) and self.parked_here(
            approval
        )

    def outdated(self, approval: Approval, now: ApprovalRequest) -> str | None:
        """Why an approval does not cover ``now``, the same request (same key) built again when the
        run reached it again, maybe hours later (None: it covers it). The key binds the bytes sent,
        not what the approver read beside them from the system (``system_reading``): the record
        amount the rules look up (paying ``/bills/<id>/pay`` sends no amount) and whom it pays (the
        bill's vendor). A bill edited or moved to another vendor after it was approved for payment
        is a new decision, judged as it is now (two people above the threshold)."""
        if approval.status != "approved" or approval.request is None:
            return None  # a rejection stands: stopping is always allowed
        then, read = system_reading(approval.request, self.rules), system_reading(now, self.rules)
        return approved_when(approval.decided_by, then, read)

    def decided_late(self, approval: Approval) -> str | None:
        """Why the worker must not obey ``approval``'s decision: it was given after the approval's
        deadline (``store.past_deadline``, sealed with the request) by the job database's clock, as
        the signed audit log's entry of that decision records it (``decided_at``, stamped by
        ``Jobs.decide``); a decision whose entry records no time (an auto-approval, or one given
        before it was recorded) is judged by the job database's ``decided_at``. None: in time."""
        if approval.expires_at is None or approval.status != "approved":
            return None  # a rejection stands: stopping is always allowed
        when = [
            str(e.payload["decided_at"])
            for e in self.audit.signed(ACTIONS)
            if e.target == approval.id and e.payload.get("decided_at")
        ]
        try:
            at = datetime.fromisoformat(when[-1]) if when else approval.decided_at
        except ValueError:
            return "the time its decision was given cannot be read in the signed audit log"
        if at is None:
            return None
        why = past_deadline(approval, at if at.tzinfo else at.replace(tzinfo=UTC))
        return None if why is None else f"{why}, and it was decided at {at:%Y-%m-%d %H:%M:%S} UTC, too late"

    def rules_refusal(self, approval: Approval) -> str | None:
        """Why a signed approval does not hold under THIS process's rules (None: it holds). Rules
        and users are read by each process (a CLI can point TASKCREW_RISK_RULES or the users file
        at its own copy), so the worker checks a decision again before it obeys it: an item that
        needs two people here needs two current users, neither of them the submitter. (Whether
        those people still count under the credentials they gave it with is ``approvers_refusal``.)"""
        if approval.status != "approved" or approval.request is None:
            return None
        try:
            job: Job | None = self.jobs.get(approval.job_id)
        except UnknownJob:
            job = None
        submitter = job.submitted_by if job else None
        if approval.decision is not None and approval.decision.basis == "auto_approve":
            # signed by a worker, maybe another one with other rules: what WorkerGate.auto allows here
            if (why := self.auto_approve_refusal(job, approval.request)) is None:
                return None
            return f"under this worker's rules --auto-approve does not cover it: {why}"
        needs_two = self.needs_two(self.assess(approval.request))
        if not needs_two:
            return None
        if unproven := self.unproven_submitter(job):
            return f"under this worker's rules {unproven}"
        names = (approval.decided_by or "").split("+")
        people = {person(n) for n in names}  # one person in two spellings is one person
        if (
            len(names) == 2
            and len(people) == 2
            and (submitter is None or person(submitter) not in people)
            and len(self._current(names)) == 2
        ):
            return None
        return (
            f"under this worker's rules it needs two people other than the submitter, and it was approved "
            f"by {approval.decided_by or 'nobody'}"
        )

    def run_owners(self, job: Job) -> list[Identity | None]:
        """Whom the run of ``job`` now on the queue acts for: its submitter and whoever put it back
        on the queue last (the newest ``retry`` of it, and of each batch it belongs to, in the signed
        audit log ``act_on_job`` writes), and whoever began a retry since (``retrying``: written
        before the job database changed, its ``retry`` may never have been written). None: a retry
        whose audit line does not check out, where it stands (not an entry of the signed chain,
        ``AuditLog.checked``: edited, or a genuine line copied there): who retried it is unknown."""
        owners: list[Identity | None] = [
            recorded(job.submitted_by, job.submitted_proof, job.submitted_credential)
        ]
        retries = self.audit.checked(("retry", "retrying"))
        seen: set[str] = set()
        current: Job | None = job
        while current is not None and current.id not in seen:
            seen.add(current.id)
            for last, in_chain in _last_retries([(e, ok) for e, ok in retries if e.target == current.id]):
                if not in_chain:
                    owners.append(None)
                    continue
                proof, credential = last.payload.get("proof", "os_user"), last.payload.get("credential")
                owners.append(recorded(last.who, str(proof), str(credential) if credential else None))
            try:
                current = self.jobs.get(current.parent_id) if current.parent_id else None
            except UnknownJob:
                current = None
        return owners

    def auto_approve_refusal(self, job: Job | None, request: ApprovalRequest) -> str | None:
        """Why ``--auto-approve`` does not cover ``request`` in ``job``'s run (None: it does). The one
        rule, for the worker that would auto-approve (``WorkerGate.auto``) and for the worker that
        obeys an auto-approval (``rules_refusal``): the rules must let every person the run acts for
        (``run_owners``: the submitter, and whoever retried it: a retry borrows no one's privilege)
        auto-approve its target, each must still count (``identity_refusal``: someone removed from
        the users file, or whose password was reset after she submitted or retried the job, takes
        the privilege with her), and an item that needs two people is covered
        only where each one's rule says ``flagged: true``."""
        if job is None:
            return "its job is not in the job store"
        if refusal := self.payee_refusal(request):
            return refusal
        needs_two = self.needs_two(self.assess(request))
        for who in self.run_owners(job):
            if who is None:
                return (
                    "the audit entry of a retry of the job does not check out, so who retried it is unknown"
                )
            role = "submitted" if same_person(who.name, job.submitted_by) else "retried"
            if gone := self.identity_refusal(who):
                return f"the job was {role} by {who.name}, who no longer counts ({gone})"
            rule = self.rules.auto_approve_rule(who.name, request.url)
            if rule is None:
                return f"the rules do not let {who.name} (who {role} the job) auto-approve {request.url}"
            if needs_two and not rule.flagged:
                flags = "; ".join(request.flags) or "the risk rules"
                return f"it needs two people ({flags}); --auto-approve does not cover it"
        return None

    def payee_flags(self, request: ApprovalRequest) -> list[RiskFlag]:
        """``payee_flags`` of ``request`` under this process's rules."""
        return payee_flags(request_payee(request, self.rules), request)

    def payee_refusal(self, request: ApprovalRequest, flags: list[RiskFlag] | None = None) -> str | None:
        """Why ``--auto-approve`` does not cover ``request``'s payee (None: it may): whom it pays
        needs a person's eye (``payee_flags``, or ``flags`` as already read), whatever a rule lets
        auto-approve."""
        if flags := self.payee_flags(request) if flags is None else flags:
            said = "; ".join(f"{f.rule}: {f.message}" for f in flags)
            return f"whom it pays needs a person's eye ({said}); --auto-approve does not cover it"
        return None

    def view(self, approval: Approval) -> ApprovalView:
        try:
            job: Job | None = self.jobs.get(approval.job_id)
        except UnknownJob:
            job = None
        request = approval.request
        assessment = self.assess(request) if request else Assessment()
        firsts = self._first_approvers(approval)
        needs_two = self.needs_two(assessment)
        view = ApprovalView(
            approval=approval,
            job=job,
            assessment=assessment,
            needs_two=needs_two,
            rule_off=self.two_person_off() if assessment.needs_second_approver and not needs_two else "",
            first_approvers=firsts,
            problem=self.problem(approval),
        )
        if request is not None and view.problem is None:
            view.payee = request_payee(request, self.rules)
            view.assessment.flags += shown_flags(view)  # what the rules' flags do not say: OCR, the payee
        return view

    def pending(self) -> list[ApprovalView]:
        return [self.view(a) for a in self.jobs.approvals("pending")]

    def rules_unreadable(self) -> str | None:
        """None while the rules in force can be read; else what every surface says meanwhile: why
        (``RiskRulesError``), what to do, and what is still decided (``decide``: a rejection only)."""
        try:
            _ = self.rules
        except RiskRulesError as exc:
            return unreadable_said(exc)
        return None

    def unjudged(self, approval: Approval) -> ApprovalView:
        """``approval`` as ``view`` shows it without the rules (no flags, no payee): what a rejection
        is decided on, and what a surface lists, while the rules cannot be read (``decide``)."""
        try:
            job: Job | None = self.jobs.get(approval.job_id)
        except UnknownJob:
            job = None
        return ApprovalView(
            approval=approval, job=job, assessment=Assessment(), problem=self.problem(approval)
        )

    # ---- decisions ----------------------------------------------------------------------------
    def _refuse(self, who: Identity, approval_id: str, action: str, why: str) -> DecisionResult:
        self.audit.append(who.name, f"{action}_refused", approval_id, {"reason": why, "proof": who.proof})
        return DecisionResult(approval_id=approval_id, status="refused", message=why)

    def decide(self, approval_id: str, action: Action, who: Identity, text: str = "") -> DecisionResult:
        """``who`` decides ``approval_id`` by ``action``, judged by one reading of the rules in force
        (``one_reading``); while they cannot be read, nothing but a rejection is decided."""
        try:
            one = self.one_reading()
        except RiskRulesError:
            one = self  # its reads raise again: refused, saying why (a rejection aside)
        return one._decide(approval_id, action, who, text)

    def _decide(self, approval_id: str, action: Action, who: Identity, text: str) -> DecisionResult:
        try:
            self.jobs.expire_due()  # by the job database's clock (``store.past_deadline``)
            approval = self.jobs.approval(approval_id)
        except UnknownApproval as exc:
            return self._refuse(who, approval_id, action, str(exc.args[0] if exc.args else exc))
        unreadable: dict[str, str] = {}
        try:
            view = self.view(approval)
            judged_by: str | None = self.rules_digest  # the rules in force, said in the signed entry
        except RiskRulesError as exc:  # the rules in force cannot be read: never judged by older ones
            if action != "reject":
                return self._refuse(
                    who, approval_id, action, f"Refused, nothing was decided: {unreadable_said(exc)}"
                )
            # stopping is always allowed: a rejection sends nothing, so it needs no rules' view (no
            # flags are read); its signed entry says the rules could not be read
            view, judged_by, unreadable = self.unjudged(approval), None, {"rules_unreadable": str(exc)}
        approval = view.approval
        payload = {
            "job_id": approval.job_id,
            "key": approval.key,
            "kind": approval.kind,
            "request": approval.request.model_dump(mode="json") if approval.request else None,
            "question": approval.question,
            "flags": [f.rule for f in view.assessment.flags],
            "proof": who.proof,
            "rules": judged_by,
            **unreadable,
        }
        if action == "approve":  # the one verdict on approving it, as bulk approval judges each item
            outcome = self.approve_verdict(view, who)
            if outcome.kind == "refused":
                return self._refuse(who, approval_id, action, outcome.reason)
        elif why := self.decision_refusal(view, who, action):
            return self._refuse(who, approval_id, action, why)
        text = text.strip()
        decided_by = who.name
        if action == "answer":
            if not text:
                return self._refuse(
                    who, approval_id, action, "An answer needs a message: write what the worker should do."
                )
            decision = ApprovalDecision(outcome="answer", text=text, by=who.describe(), basis="person")
        elif action == "reject":
            decision = ApprovalDecision(
                outcome="reject", text=text or None, by=who.describe(), basis="person"
            )
        else:
            by = who.describe()
            if view.needs_two:
                others = [n for n in view.first_approvers if not same_person(n, who.name)]
                if not others:
                    bound = cosign_credential(approval.id, who.credential) if who.credential else None
                    first = Cosign(name=who.name, proof=who.proof, at=utcnow(), sig="", credential=bound)
                    first.sig = self.keys.sign(seals.cosign(approval, first))
                    try:  # a cancel (or another decision) may land first: a refusal, not a crash
                        self.jobs.add_first_approval(approval.id, first)
                    except (InvalidChange, UnknownApproval) as exc:
                        return self._refuse(who, approval_id, action, str(exc))
                    self.audit.append(who.name, "approve_first", approval_id, payload)
                    return DecisionResult(
                        approval_id=approval_id,
                        status="first_approval",
                        message="Your approval is recorded. A second, different approver must approve it before it is sent.",
                    )
                payload["first_approver"] = others[0]
                decided_by = f"{others[0]}+{who.name}"
                by = f"{others[0]} and {by} (two people)"
            decision = ApprovalDecision(outcome="approve", text=text or None, by=by, basis="person")
        if who.credential is not None:  # what it rests on (``approvers_refusal``), sealed with it
            decision.credential = decision_credential(approval.id, who.credential)
        payload["decision"] = decision.model_dump(mode="json")

        def recorded(stored: Approval) -> None:  # signed before the job goes back on the queue
            if stored.decided_at is not None:  # by the job database's clock (``decided_late``)
                payload["decided_at"] = stored.decided_at.isoformat()
            self.audit.append(who.name, action, approval_id, payload)

        try:
            stored = self.jobs.decide(approval_id, decision, decided_by=decided_by, recorded=recorded)
        except (InvalidChange, UnknownApproval) as exc:
            return self._refuse(who, approval_id, action, str(exc))
        verb = {"approve": "approved", "reject": "rejected", "answer": "answered"}[action]
        return DecisionResult(
            approval_id=approval_id,
            status="decided",
            message=f"Approval {approval_id} {verb}; {self._then(stored)}",
        )

    def _then(self, stored: Approval) -> str:
        """What happens to a decision just written, as its decider is told: judged after the write, by
        the rules the worker obeys it by, so a cancel or a password reset that landed while it was
        given is said, never "the job resumes" for a job that does not."""
        if (cancel := self.standing_cancel(stored.job_id)) is not None:
            void = " and this decision is void with it" if stored.status != "rejected" else ""
            return (
                f"but job {stored.job_id} was cancelled by {cancel.who} meanwhile (audit entry {cancel.seq}){void}: "
                f"the job does not resume; `taskcrew jobs retry {stored.job_id}` runs it again, and asks again."
            )
        if (why := self.approvers_refusal(stored)) is not None:
            return f"but it does not count: {why}. The job resumes and asks again."
        return "the job resumes."

    def log_unrecorded(self, job_id: str) -> list[AuditEntry]:
        """Sign into the audit log the decisions of ``job_id`` written to the job database whose own
        entry is missing (``decide`` writes the decision, then its entry: a process killed in between
        left a signed decision the log does not name). Each entry names who decided as the decision's
        own seal does, and says it was recorded late, with no time (the job database's ``decided_at``
        is not sealed; ``decided_late`` reads it as before). The worker obeys such a decision either
        way (it is signed); one whose seal does not check out is left to the worker to refuse."""
        logged = {e.target for e in self.audit.signed(ACTIONS)}
        added = []
        for approval in self.jobs.approvals(job_id=job_id):
            decision = approval.decision
            if approval.id in logged or decision is None or not self.decision_ok(approval):
                continue
            payload = {
                "job_id": approval.job_id,
                "key": approval.key,
                "kind": approval.kind,
                "decision": decision.model_dump(mode="json"),
                "recorded_late": "the process that decided stopped before it recorded the decision; "
                "recorded from the decision's seal",
            }
            who = (approval.decided_by or "").rpartition("+")
            if who[0]:
                payload["first_approver"] = who[0]
            added.append(self.audit.append(who[2] or "unknown", decision.outcome, approval.id, payload))
        return added

    def decision_refusal(self, view: ApprovalView, who: Identity, action: Action) -> str | None:
        """Why ``who`` may not decide ``view`` by ``action`` at all (None: she may), by what ``decide``
        checks first whatever the action: the approval is pending (one past its deadline is expired
        by ``Jobs.expire_due``, which the caller runs first), checks out (a rejection aside: stopping
        is always allowed), and her login still counts (also for a rejection)."""
        approval = view.approval
        if approval.status == "expired":
            if (cancel := self.standing_cancel(approval.job_id)) is not None:
                why = f"job {approval.job_id} was cancelled by {cancel.who} (audit entry {cancel.seq}); its "
                return f"Refused: {why}approvals closed with it."
            return f"Refused: {too_late(approval)}."
        if approval.status != "pending":
            return f"This approval is already {approval.status}."
        if view.problem and action != "reject":
            return f"Refused: this approval {view.problem}."
        if gone := self.identity_refusal(who):  # a login that no longer counts decides nothing
            return f"Refused: {gone}."
        return None

    def approve_verdict(self, view: ApprovalView, who: Identity) -> ApproveOutcome:
        """The one verdict on ``who`` approving ``view`` (as read after ``Jobs.expire_due``): its
        status, deadline, record and her login (``decision_refusal``), then what approving it would do
        (``approve_outcome``: the job's submission seal, the two-person rule, a standing cancel).
        ``decide`` obeys it for one item; ``bulk_approve`` judges every item by it before it decides
        any."""
        if why := self.decision_refusal(view, who, "approve"):
            return ApproveOutcome("refused", why)
        return self.approve_outcome(view, who)

    def approve_outcome(self, view: ApprovalView, who: Identity) -> ApproveOutcome:
        """What approving ``view`` (pending, its record checked) by ``who`` would do, by the rule
        ``decide`` applies: refused and why, a first of two approvals, or the decision that lets the
        worker send. Shown before the click (the console's decision page); ``decide`` obeys it."""
        if view.approval.kind == "question":
            return ApproveOutcome("refused", "This is a question: answer it with a message, or reject.")
        if view.job is None or not self.submission_ok(view.job):
            return ApproveOutcome(
                "refused",
                "Refused: the job's submission is not signed by the authority (edited or added in the "
                "job database); nothing of it may be approved.",
            )
        if not view.needs_two:
            return ApproveOutcome("sends")
        if refusal := self._two_person_refusal(view, who):
            return ApproveOutcome("refused", refusal)
        if [n for n in view.first_approvers if not same_person(n, who.name)]:
            return ApproveOutcome("sends")
        if (cancel := self.standing_cancel(view.approval.job_id)) is not None:  # it would count for nothing
            why = f"job {view.approval.job_id} was cancelled by {cancel.who} (audit entry {cancel.seq})"
            return ApproveOutcome("refused", f"Refused: {why}; its approvals closed with it.")
        return ApproveOutcome("first")

    def _two_person_refusal(self, view: ApprovalView, who: Identity) -> str | None:
        flags = "; ".join(f.message for f in view.assessment.flags if f.second_approver)
        if unproven := self.unproven_submitter(view.job):
            return f"Two-person rule ({flags}): {unproven}. It can only be rejected."
        if not who.authenticated:
            return (
                f"Two-person rule ({flags}): {who.describe()} cannot approve it. Log in first "
                "(`taskcrew approvals login`, or the console)."
            )
        if view.job is not None and same_person(who.name, view.job.submitted_by):
            return "Two-person rule: you submitted this task, so another person must approve it."
        if view.first_approvers and all(same_person(n, who.name) for n in view.first_approvers):
            return "You already approved this; a second, different person must approve it too."
        return None

    def act_on_job(
        self,
        job_id: str,
        action: Literal["cancel", "retry"],
        who: Identity,
        *,
        batch_cancel: AuditEntry | None = None,
    ) -> Job:
        """Cancel or retry a job, from any surface: who acts is proven where the two-person rule is
        on and is a current user (the submitter's rule), and it is recorded (who retried it is what
        ``run_owners`` reads: a retry borrows nobody's ``--auto-approve``). A cancel voids at once every
        approval and answer of the job the signed log does not show used (``_given``; recorded with
        it, and what it spares as ``kept``: a leg still running sends
        nothing on them, ``WorkerGate``; it also finds the job no longer its own). A retry of a finished job
        (started over) or of a cancelled one (a cancel is how an approver takes an approval back)
        voids the decisions, answers and first approvals given before it (recorded here, in the
        signed log the worker reads, ``WorkerGate``: ``TAKES_BACK``): an approval is for the run it
        was asked in, not for a run started
        again later or put back after a stop; the new run asks again. A failed or orphaned job
        resumes with them unless someone took them back (a failed job can be cancelled:
        ``models.CANCELLABLE``).

        Written ahead: the signed entry (``cancel``; ``retrying`` for a retry) goes to the audit log
        first, naming the leg it ends and what it voids, and only then is the job database changed,
        on the condition that the job is still as judged (a retry: on that leg, in that state). An
        interrupt or a failure between the two leaves an entry that can only hold more back (a leg
        stopped, decisions void), never a new leg that resumes on what the entry takes back. What
        lets the legs after a cancel act again is written last, once the retry is in the job
        database (``retry``: ``leg_end``). Raises InvalidChange (with why; ``RecordedOnly``: the
        entry was written and the change did not happen) or UnknownJob.

        ``batch_cancel``: a child's cancel that its batch's signed cancel entry goes on to, made from
        the log (``settle``, ``_cancel_children``, ``end_with_batch``): who cancelled was judged when
        that entry was written, so it is not judged again (a login may have lapsed since); its entry
        names it (``batch_cancel``: the batch's entry). A retry of a child its batch's cancel ends is
        refused (``child_retry_refusal``)."""
        try:
            if batch_cancel is None and (refusal := self._actor_refusal(who, action)):
                raise InvalidChange(refusal)
            job, leg = self.jobs.get_on_leg(job_id)
            if batch_cancel is not None and (
                action != "cancel" or batch_cancel.action != "cancel" or batch_cancel.target != job.parent_id
            ):
                raise InvalidChange(
                    f"job {job_id} is not a child of the batch entry {batch_cancel.seq} cancels"
                )
            refusal = cancel_refusal(job) if action == "cancel" else retry_refusal(job, self.jobs.db_now())
            if refusal is None and action == "retry":  # a cancelled batch's child runs only with its batch
                refusal = self.child_retry_refusal(job)
            if refusal is not None:
                raise InvalidChange(refusal)
        except (InvalidChange, UnknownJob) as exc:
            reason = str(exc.args[0] if exc.args else exc)
            self.audit.append(who.name, f"{action}_refused", job_id, {"reason": reason, "proof": who.proof})
            raise
        proven = {"proof": who.proof, **({"credential": who.credential} if who.credential else {})}
        # what it takes back is read from the signed audit log (the job database's rows only add to
        # it: a row moved out of the job, or marked used, for the moment of the cancel or the retry
        # hides nothing): ``_given``
        given, used = self._given(job_id)
        said: dict[str, Any] = {}
        if action == "cancel":  # what was decided and not yet used is taken back at once
            decided = [a for a, outcome in given.items() if outcome != "reject"]
            void = [a for a in decided if a not in used]
            # so is whatever is decided until it lands or while it stands (``void_decisions``), but
            # for what the log shows already used (an answer handed to the run, a request sent on
            # it): named here
            said["kept"] = [a for a in decided if a in used]
        elif job.status in VOIDED_BY_RETRY or self._standing(job_id, ("cancel", "finished")) is not None:
            # everything given before it (``void_decisions``); a cancel the signed log says stands,
            # or a finish since the last retry, is a stop whatever state the job's row reads (set
            # back to an earlier signed version: failed, or running with its holder gone)
            void, said[TAKES_BACK] = list(given), "all"
        else:
            void = []
        if batch_cancel is not None:
            said["batch_cancel"] = batch_cancel.seq
        details: dict[str, Any] = {**proven, "void": void, **said, "leg": leg}  # ``leg_end``
        ahead = self.audit.append(who.name, "cancel" if action == "cancel" else "retrying", job_id, details)
        if action == "retry" and said.get(TAKES_BACK) and job.options.batch:
            # a plan the stopped run made is taken back with it: the retry plans anew, on its own leg
            # (its generation, after the cancel's: ``batch_cancel``), never on a plan the cancel ended
            self.jobs.clear_checkpoint(job_id)
        try:
            if action == "cancel":  # every leg ends (``leg_end``): on whatever leg it is now
                done = self.jobs.cancel(job_id, by=who.name)
            else:
                done = self.jobs.retry(job_id, by=who.name, leg=leg, was=job.status)
        except (InvalidChange, UnknownJob, JobStoreError) as exc:
            if action == "cancel":  # holding more back is always safe
                self._cancel_children(job_id, who, ahead)
            raise RecordedOnly(_recorded_only(job_id, action, leg, ahead, exc)) from exc
        if action == "retry":  # in the job database: the legs after ``leg`` may act again
            self.audit.append(who.name, "retry", job_id, details)
        else:
            self._cancel_children(job_id, who, ahead)
        return done

    def _actor_refusal(self, who: Identity, action: Literal["cancel", "retry"]) -> str | None:
        """Whether ``who`` may cancel or retry a job (``submitter_refusal``). While the rules cannot be
        read, only a stop is allowed, as only a rejection is decided (``unreadable_said``): a retry
        starts work, as a submission does, and is refused in words (nothing is queued); for a cancel
        the two-person rule is taken as on: an authenticated user acts, anyone else is refused in
        words (never an exception: a stop is always allowed to whoever proves who she is)."""
        role = "person who cancels or retries a job"
        try:
            if action == "retry":
                _ = self.rules  # read whoever retries: an authenticated user too
            return self.submitter_refusal(who, role=role)
        except RiskRulesError as exc:
            if action == "retry":
                return (
                    f"{exc} Nothing was queued again: a retry starts work, as a submission does, and "
                    "waits until the file is fixed; cancelling a job still works."
                )
            return (
                f"{exc} Until it is fixed the two-person rule is taken as on here, so a {role} must be "
                f"authenticated ({who.describe()} is not): `taskcrew approvals login` first"
            )

    def _cancel_children(self, job_id: str, who: Identity, entry: AuditEntry) -> None:
        """A batch's cancel (its signed ``entry``) goes on to its children (queued, running, waiting or
        failed, by their signed documents: ``Jobs.children``), each with a signed cancel of its own
        (``act_on_job``, naming ``entry``): stopping a batch stops what it fanned out. Read after the
        batch's own change: ``Jobs.fan_out`` submits children only while the batch still runs on its
        leg, so none appears after this read."""
        try:
            children = self.jobs.children(job_id)
        except JobStoreError as exc:
            log.warning(
                "batch %s is cancelled; its children could not be read to cancel them: %s", job_id, exc
            )
            return
        for child in children:
            try:
                self.act_on_job(child.id, "cancel", who, batch_cancel=entry)
            except (InvalidChange, UnknownJob):  # ended meanwhile, or recorded only (its entry stands)
                continue

    def _given(self, job_id: str) -> tuple[dict[str, str], set[str]]:
        """The decisions of ``job_id`` (approval id -> approve, reject or answer; in the order given)
        and which of them the signed audit log shows used (``USED``: an answer handed to the run, a
        request sent on it). Its decision entries, by the job their signed payload names, then the
        rows the job database holds decided for it (a decision whose entry a stopped process never
        wrote: ``log_unrecorded``), which can only add to them; used: by the log alone (the job
        database's ``used`` flag is in no seal)."""
        log = self.audit.signed((*ACTIONS, *USED))
        given: dict[str, str] = {
            e.target: e.action for e in log if e.action in ACTIONS and e.payload.get("job_id") == job_id
        }
        outcome = {"approved": "approve", "rejected": "reject", "answered": "answer"}
        for approval in self.jobs.approvals(job_id=job_id):
            if approval.status in outcome:
                given.setdefault(approval.id, outcome[approval.status])
        used = {e.target for e in log if e.action in USED and e.payload.get("job_id") == job_id}
        return given, used

    def leg_end(self, job_id: str, leg: int) -> AuditEntry | None:
        """The signed audit log's entry that ends ``leg`` of ``job_id`` (None: none does), in the order
        the entries were written (``seq``):

        - a ``cancel`` ends every leg of the job: the legs up to the one it names for good, every
          later one until a later ``retry`` (done: in the job database) names a leg before it;
        - a retry (``retrying``, begun; ``retry``, done) ends the legs up to the one it names;
        - a ``take_over`` ends the legs up to the one it names, unless a ``take_over_undone`` says
          its change to the job database did not happen (the holder beat meanwhile).

        A standing cancel is the one returned when there is one. The job database says so too, but
        a row set back to an earlier signed version (a database writer replaying it) would undo that
        there, and a takeover of the replayed row would make a new leg; neither can here. Only
        signed entries count."""
        entries = [e for e in self.audit.signed(LEG_ENDS) if e.target == job_id]
        undone = {e.payload.get("entry") for e in entries if e.action == "take_over_undone"}
        cancel: AuditEntry | None = None
        ended: AuditEntry | None = None
        for entry in entries:
            over = entry.payload.get("leg")
            over = over if isinstance(over, int) and not isinstance(over, bool) else None
            if entry.action == "cancel":
                if over is not None and over >= leg:
                    return entry
                cancel = cancel or entry
            elif entry.action == "take_over_undone" or (entry.action == "take_over" and entry.seq in undone):
                continue
            elif over is not None and over >= leg:
                ended = ended or entry
            elif entry.action == "retry" and over is not None:
                cancel = None  # retried after the cancel: the legs after ``over`` are the retry's
        return cancel or ended

    def leg_over(self, job_id: str, leg: int) -> str | None:
        """Why the signed audit log says ``leg`` of ``job_id`` may act no more (None: it says nothing
        against it): ``leg_end``'s entry, as a person reads it."""
        entry = self.leg_end(job_id, leg)
        if entry is None:
            return None
        what = {"cancel": "cancelled", "retrying": "retried", "retry": "retried", "take_over": "taken over"}
        said = f"job {job_id} was {what[entry.action]} by {entry.who} on leg {entry.payload.get('leg')}"
        since = (
            ", and not retried since" if entry.action == "cancel" and entry.payload.get("leg") != leg else ""
        )
        return f"{said} (audit entry {entry.seq}){since}"

    def record_take_over(self, job_id: str, leg: int, dead_worker: str, by: str) -> AuditEntry:
        """Leg ``leg`` of ``job_id`` is taken from ``dead_worker`` (silent): recorded, signed, before the
        job database is changed (``Jobs.take_over``), so that leg acts no more even if its job row is
        set back (``leg_end``). ``undo_take_over`` when the change did not happen."""
        return self.audit.append(by, "take_over", job_id, {"leg": leg, "from": dead_worker})

    def undo_take_over(self, job_id: str, entry: AuditEntry, why: str) -> None:
        """The takeover ``entry`` recorded was refused by the job database's compare-and-set (nothing
        was changed there: the holder beat meanwhile, or the job moved on): recorded, so the leg it
        named acts on. Only for a refusal the database gave: a failure whose outcome is unknown leaves
        the entry standing (the leg stops and hands the job on: ``settle``)."""
        self.audit.append(entry.who, "take_over_undone", job_id, {"entry": entry.seq, "reason": why})

    def settle(self, job_id: str, leg: int, worker: str) -> str | None:
        """Bring the job database in line with the signed audit log when the log ends ``leg`` of
        ``job_id`` (``leg_end``) and the database still gives it to ``worker`` (queued on that leg,
        or running on it there; a batch waiting on it for its children, whoever ``worker``): an
        entry written ahead whose change did not happen (interrupted, or the job changed meanwhile),
        or a row set back. A standing cancel is made (the job ends cancelled by whoever cancelled
        it; a batch's children are cancelled too, each with a signed cancel of its own naming the
        batch's entry: ``_cancel_children``); any other end hands the job on to a new leg (as a
        takeover or a retry would have; a waiting batch holds no leg to hand on: left as it is). What
        was done (None: nothing: the log lets the leg act, or the database no longer gives it to
        ``worker``): a job is never left on a leg nobody may run, and a batch never finishes over a
        cancel (``Jobs.settle_batch`` asks here first; so does the watch loop, ``resume_decided``).
        A batch's child its batch's cancel ends is cancelled first, whatever its leg (``end_with_batch``):
        the cascade finished for it (a retry of the child is refused: ``child_retry_refusal``)."""
        entry = self.leg_end(job_id, leg)
        job, current = self.jobs.get_on_leg(job_id)
        if (ended := self.end_with_batch(job)) is not None:  # whatever leg it is on, whoever holds it
            return ended
        if entry is None:
            return None
        batch = job.status == "waiting" and job.fan_out is not None
        if current != leg or not (
            job.status == "queued" or (job.status == "running" and job.worker == worker) or batch
        ):
            return None
        why = self.leg_over(job_id, leg) or ""
        if entry.action == "cancel":
            try:
                self.jobs.cancel_on_leg(
                    job_id, by=entry.who, leg=leg, why=f"recorded in the signed audit log, entry {entry.seq}"
                )
            except InvalidChange:
                return None
            if job.fan_out is not None:  # what the batch fanned out stops with it
                self._cancel_children(job_id, _canceller(entry), entry)
                return f"{why}; the job database says so now too, and of its children too"
            return f"{why}; the job database says so now too"
        if batch:
            return None
        if self.jobs.hand_back(job_id, leg, worker, why, leg_ends=True) is None:
            return None
        return f"{why}; the job goes on on a new leg"

    def void_decisions(self, job_id: str) -> set[str]:
        """The approvals and answers of ``job_id`` taken back: by a cancel, or given before a retry
        that voided them (of a run it was started over from, or put back after a cancel:
        ``act_on_job``; recorded as it begins: ``retrying``). Only entries the key signed count
        (``AuditLog.signed``): a line added to the file voids nothing.

        A cancel takes back every approval and answer of its job given before the job is retried
        after it (the retry's first entry), by the order of the signed log: those given before it
        landed (read by the cancel while still pending, or parked after it read them) and those
        given while it stands, but for the answers it names as already handed to the run
        (``kept``). So a decision racing a cancel never stands for the cancelled run, however the
        two interleave. (A cancel signed before it named ``kept`` voids what it lists.) What it names
        kept is spared only where the log itself shows it so: decided before the cancel and used
        before it (``USED``: an answer handed to the run, a request sent on it) — never because a row
        of the job database said so.

        A retry that takes back what was given before it (``TAKES_BACK``: of a job started over, or
        put back after a cancel) voids every decision of the job signed before its ``retrying``
        entry, rejections too (the new run asks again), by the log's order, whatever its void list
        names: a row moved out of the job, or set back to pending, for the moment of the retry
        hides nothing."""
        log = self.audit.signed(("retrying", "retry", "cancel", *ACTIONS, *USED))
        ends = [e for e in log if e.target == job_id and e.action in ("retrying", "retry", "cancel")]
        mine = [e for e in log if e.payload.get("job_id") == job_id]
        given = [e for e in mine if e.action in ("approve", "answer")]
        void = {approval for entry in ends for approval in entry.payload.get("void", [])}
        for end in ends:
            if end.action == "retrying" and end.payload.get(TAKES_BACK):
                void |= {e.target for e in mine if e.action in ACTIONS and e.seq < end.seq}
            kept = end.payload.get("kept")
            if end.action != "cancel" or not isinstance(kept, list):
                continue
            used = {e.target for e in mine if e.action in USED and e.seq < end.seq}
            spared = {e.target for e in given if e.seq < end.seq and e.target in kept and e.target in used}
            until = min((e.seq for e in ends if e.seq > end.seq and e.action != "cancel"), default=None)
            void |= {
                e.target
                for e in given
                if (until is None or e.seq < until) and not (e.seq < end.seq and e.target in spared)
            }
        return void

    def batch_cancel(self, job: Job) -> AuditEntry | None:
        """The signed cancel of ``job``'s batch that ends ``job`` (None: none, or ``job`` is no batch's
        child): the batch's standing cancel (``standing_cancel``: every child of it, whatever its
        generation), else the newest cancel of the batch made on a leg at or after the one the
        child's plan was made on (``BatchOrigin.generation``; a child with none recorded, of
        ``--for-each`` or planned by a version before generations: any cancel of its batch). A
        batch's retry lifts its cancel for the generations it plans after it (on legs after the
        cancel's: ``act_on_job`` drops a plan the cancelled run made), never for the children that
        cancel ended: they act no more (``approvals.worker.leg_refusal_of``), are cancelled where the
        cascade never reached them (``end_with_batch``) and are not retried on their own
        (``child_retry_refusal``): their items run again as the batch's new generation. Only
        entries the key signed count."""
        parent = job.parent_id
        if not parent:
            return None
        origin = job.origin
        generation = origin.generation if origin is not None and origin.batch_id == parent else None
        standing: AuditEntry | None = None
        ended: AuditEntry | None = None
        for entry in self.audit.signed(("retrying", "retry", "cancel")):
            if entry.target != parent:
                continue
            standing = entry if entry.action == "cancel" else None
            if entry.action == "cancel" and (generation is None or _leg_of(entry) >= generation):
                ended = entry
        return standing or ended

    def child_retry_refusal(self, job: Job) -> str | None:
        """Why ``job``, a batch's child, may not be retried on its own (None: it may): its batch's
        cancel ends it (``batch_cancel``), so every leg of it would be refused
        (``approvals.worker.leg_refusal_of``). The one rule for every surface (``act_on_job``: the
        CLI's ``jobs retry``, the console's retry button); one line, saying what to run instead."""
        if (cover := self.batch_cancel(job)) is None:
            return None
        batch = job.parent_id or ""
        said = (
            f"job {job.id} is a child of batch {batch}, which {cover.who} cancelled (audit entry {cover.seq})"
        )
        standing = self.standing_cancel(batch)
        if standing is not None and standing.seq == cover.seq:
            return f"{said}: its child jobs run again only with it: `taskcrew jobs retry {batch}`"
        return (
            f"{said}; the batch was retried since and runs its items as a new generation of child jobs "
            f"(`taskcrew jobs show {batch}` lists them)"
        )

    def end_with_batch(self, job: Job) -> str | None:
        """Cancel ``job`` when its batch's signed cancel ends it (``batch_cancel``) and the job database
        still shows it queued, running, waiting or failed: the cascade (``_cancel_children``) never
        reached it (the process stopped between the batch's change and it; a row set back), or it
        was retried on its own before such retries were refused. As the cascade would have: a
        signed cancel of its own naming the batch's entry, its pending approvals closed with it,
        whatever leg it is on. What was done (None: nothing). The one rule for a worker that claims
        such a child or whose leg of it stops (``settle``) and for the watch loop's pass over the
        active children of cancelled batches (``worker.resume_decided``)."""
        if job.status not in CANCELLABLE or (cover := self.batch_cancel(job)) is None:
            return None
        said = f"job {job.id}'s batch {job.parent_id} was cancelled by {cover.who} (audit entry {cover.seq})"
        try:
            self.act_on_job(job.id, "cancel", _canceller(cover), batch_cancel=cover)
        except RecordedOnly as exc:  # its own cancel stands in the signed log: no leg of it acts
            return f"{said}; {exc}"
        except (InvalidChange, UnknownJob):  # ended meanwhile
            return None
        return f"{said}; the job is cancelled with it"

    def standing_cancel(self, job_id: str) -> AuditEntry | None:
        """The signed cancel of ``job_id`` that stands (None: none, or the job was retried after it,
        the retry's first entry written): what a decision given now is voided by (``void_decisions``)."""
        return self._standing(job_id, ("cancel",))

    def _standing(self, job_id: str, ends: tuple[str, ...]) -> AuditEntry | None:
        """The newest signed entry of ``job_id`` among ``ends`` (a cancel; a finish) with no retry
        after it (None: none, or the job was retried since)."""
        standing: AuditEntry | None = None
        log = [e for e in self.audit.signed(("retrying", "retry", *ends)) if e.target == job_id]
        retried = max((_leg_of(e) for e in log if e.action in ("retrying", "retry")), default=-1)
        for entry in log:
            if entry.action == "finished" and _leg_of(entry) <= retried:
                continue  # a finish signed late, of a leg a retry has ended since: not the job's now
            standing = entry if entry.action in ends else None
        return standing

    def _record_finish(self, job: Job, leg: int) -> None:
        """A job ended finished (``Jobs.finish``): signed in the audit log, on its leg, so that a retry
        judges it finished (its decisions taken back: ``act_on_job``) even if its row is set back to
        an earlier signed version. Written once the job database says so; a log that cannot be
        written is warned about (the job stays finished)."""
        try:
            self.audit.append(
                job.worker or "taskcrew", "finished", job.id, {"leg": leg, "outcome": job.outcome}
            )
        except (AuditLogError, OSError) as exc:
            log.warning("job %s finished; the audit log could not record it: %s", job.id, exc)

    def bulk_approve(self, approval_ids: list[str], who: Identity) -> list[DecisionResult]:
        """All or nothing: the approvals past their deadline are expired first (deciding one must not
        expire another), then every item is judged before any is decided: no flag (``bulk_refusal``),
        what approving it alone would do (``approve_verdict``: it must send), all identical in shape.
        One refused result then stands for the whole bulk. Should an item still be refused as it is
        decided (its deadline passed or a cancel landed meanwhile), the rest are not decided and the
        results say, item by item, which were approved and which not (``bulk_partial``). Every item
        is judged and decided by one reading of the rules in force (``one_reading``)."""
        try:
            one = self.one_reading()
            allowed = one.rules.bulk_allowed  # the rules in force now (``rules``)
        except RiskRulesError as exc:
            why = f"Refused, nothing was approved: {unreadable_said(exc)}"
            return [self._refuse(who, "bulk", "bulk_approve", why)]
        return one._bulk_approve(approval_ids, who, allowed)

    def _bulk_approve(self, approval_ids: list[str], who: Identity, allowed: bool) -> list[DecisionResult]:
        if not allowed:
            return [
                self._refuse(who, "bulk", "bulk_approve", "Bulk approval is switched off in the risk rules.")
            ]
        self.jobs.expire_due()  # by the job database's clock, as ``decide`` does
        views: list[ApprovalView] = []
        for approval_id in dict.fromkeys(approval_ids):
            try:
                views.append(self.view(self.jobs.approval(approval_id)))
            except UnknownApproval as exc:
                return [self._refuse(who, approval_id, "bulk_approve", str(exc))]
        if len(views) < 2:
            return [
                self._refuse(
                    who, "bulk", "bulk_approve", "Select at least two approvals for a bulk approval."
                )
            ]
        problems = []
        for v in views:
            verdict = self.approve_verdict(v, who)
            if verdict.kind == "refused":
                problems.append(f"{v.approval.id} ({verdict.reason.rstrip('.')})")  # as ``decide`` says it
            elif why := bulk_refusal(v, self.rules):
                problems.append(why)
            elif verdict.kind != "sends":
                problems.append(f"{v.approval.id} needs a second approver")
        keys = {
            bulk_key(r.method, r.url, [f.name for f in r.fields])
            for v in views
            if (r := v.approval.request) is not None and not v.problem
        }
        if len(keys) > 1:
            problems.append(
                "the selected items are not identical (method, target with its query, or fields differ)"
            )
        if problems:
            why = (
                "Bulk approval refused: "
                + "; ".join(problems)
                + ". Nothing was approved: decide these one by one."
            )
            return [self._refuse(who, ",".join(v.approval.id for v in views), "bulk_approve", why)]
        results: list[DecisionResult] = []
        for v in views:
            if results and results[-1].status != "decided":  # refused as it was decided (a race)
                stopped = f"not decided: the bulk approval stopped at {results[-1].approval_id}"
                results.append(self._refuse(who, v.approval.id, "bulk_approve", stopped))
            else:
                results.append(self.decide(v.approval.id, "approve", who))
        return results

    def bulk_partial(self, results: list[DecisionResult]) -> str | None:
        """What a bulk approval stopped part-way did (None: it approved every item, or was refused as
        a whole and approved none), as every surface that bulk-approves tells the approver, never the
        refusal alone: how many were approved, each approved item's outcome (its job resumes) and
        which job to cancel to stop it, and each item not approved with why."""
        decided = [r for r in results if r.status == "decided"]
        if len(results) < 2 or len(decided) == len(results):
            return None
        jobs = []
        for result in decided:
            try:
                jobs.append(self.jobs.approval(result.approval_id).job_id)
            except UnknownApproval:
                continue
        refused = "; ".join(f"{r.approval_id} ({r.message.rstrip('.')})" for r in results if r not in decided)
        said = f"Bulk approval stopped part-way: {len(decided)} of {len(results)} approved."
        said += "".join(f" {r.message}" for r in decided) + f" Not approved: {refused}."
        if jobs:
            said += f" To stop an approved one, cancel its job ({', '.join(jobs)})."
        return said


def _canceller(entry: AuditEntry) -> Identity:
    """Who a signed cancel entry says cancelled, with the proof it names (an operating-system user's
    where it names none it knows): whom a batch's cancel made from the log cancels its children as."""
    proof = entry.payload.get("proof")
    return Identity(
        name=entry.who, proof=proof if proof in ("console", "token", "os_user", "worker") else "os_user"
    )


def _leg_of(entry: AuditEntry) -> int:
    """The leg a signed entry names (``leg``; -1: none)."""
    leg = entry.payload.get("leg")
    return leg if isinstance(leg, int) else -1


def _last_retries(lines: list[tuple[AuditEntry, bool]]) -> list[tuple[AuditEntry, bool]]:
    """Of one job's ``retry`` and ``retrying`` lines (in the order written, each with whether it is
    an entry of the chain: ``AuditLog.checked``), the newest ``retry`` and every ``retrying`` after
    it (begun, maybe never done): whoever of them put the run back."""
    done = max((i for i, (e, _) in enumerate(lines) if e.action == "retry"), default=-1)
    return [line for i, line in enumerate(lines) if i == done or (i > done and line[0].action == "retrying")]


def _recorded_only(job_id: str, action: str, leg: int, ahead: AuditEntry, exc: BaseException) -> str:
    """What a person is told when ``ahead`` (written first) stands and its change to the job database
    did not happen (or, the database failing, may not have)."""
    why = str(exc.args[0] if exc.args else exc)
    unknown = isinstance(exc, JobStoreError)
    if action == "cancel":
        happened = (
            "the job database failed, so whether the job shows it cancelled is not known"
            if unknown
            else f"the job database was not changed ({why})"
        )
        return (
            f"job {job_id}: {happened}; the cancel is recorded in the signed audit log (entry {ahead.seq}) "
            "all the same: no leg of the job acts any more and what was approved for it and not yet used "
            f"is void; `taskcrew jobs retry {job_id}` runs it again"
        )
    happened = (
        "the job database failed, so whether it was retried is not known"
        if unknown
        else f"it was not retried ({why})"
    )
    return (
        f"job {job_id}: {happened}; the signed audit log records the retry as begun (entry {ahead.seq}): "
        f"leg {leg} acts no more and the decisions it takes back stay void; retry it again if it should run"
    )


# the signed audit log's entries that end a job as a row shows it ended (``SignedLog.superseding``)
ENDINGS = ("finished", "cancel", "retry", "take_over", "take_over_undone")
# a decision at the terminal (``approvals.terminal``): its target is the request's key, not a job
TERMINAL_DECISIONS = ("terminal_approve", "terminal_reject", "terminal_answer")


class SignedLog:
    """What the signed audit log says of jobs' endings and decisions, read once for a listing or a
    page (the log's lines are parsed and checked once per process: ``audit._LINES``): the one rule by
    which an ended job row is the job's newest (``superseding``), and the decisions signed for a job
    (``decisions``: who approved, not what a run folder says)."""

    def __init__(self, entries: Iterable[AuditEntry] = ()) -> None:
        self.ends: dict[str, list[AuditEntry]] = {}
        self.decided: dict[str, list[AuditEntry]] = {}
        self.terminal: dict[str, list[AuditEntry]] = {}  # terminal decisions by request key
        self.sends: dict[str, list[AuditEntry]] = {}  # signed sends by request key (``record_send``)
        for entry in entries:
            if entry.action in ENDINGS:
                self.ends.setdefault(entry.target, []).append(entry)
            elif entry.action in ACTIONS and isinstance(job := entry.payload.get("job_id"), str):
                self.decided.setdefault(job, []).append(entry)
            elif entry.action in TERMINAL_DECISIONS:
                self.terminal.setdefault(entry.target, []).append(entry)
            elif entry.action == "send" and isinstance(entry.payload.get("key"), str):
                self.sends.setdefault(entry.payload["key"], []).append(entry)

    @classmethod
    def read(cls, keys: KeyRing) -> SignedLog:
        """The signed entries of the audit log beside the key ring ``keys`` (the approvals folder the
        job store signs with); none when there is no log or it cannot be read (nothing to say)."""
        from taskcrew.approvals.signing import KeyError_

        path = keys.path.parent / "audit.jsonl"
        if not path.is_file():
            return cls()
        try:
            return cls(AuditLog(path, keys).signed((*ENDINGS, *ACTIONS, *TERMINAL_DECISIONS, "send")))
        except (OSError, KeyError_) as exc:
            log.warning("the audit log %s could not be read to check job records against it: %s", path, exc)
            return cls()

    def superseding(self, job_id: str, status: str, leg: int) -> AuditEntry | None:
        """The newest signed entry saying a job row that ended (``status`` finished, failed or
        cancelled, on ``leg``) is not how the job stands now (None: the row is the newest the log
        knows): a ``retry`` or a takeover (not undone) of that leg or a later one; a ``finished`` or a
        ``cancel`` of a later leg (of that leg too, for a row that did not end so: a ``finished`` of
        a failed or cancelled row's leg, a ``cancel`` of a failed one's). Never an entry of an
        earlier leg: the retry, takeover or resume that made the row's leg came after it (a cancel
        of leg 0 is undone by the retry that made leg 1). Entries before the row's own
        signed ending (its leg's ``finished``, its ``cancel``) do not count: a row set back to an
        earlier signed version is told from the job's own history by the order the log was written
        in. A cancel of the leg a row finished on, written after that finish, ended nothing: it lost
        the race to the finish (read the job running, its entry written ahead, its database change
        refused: ``RecordedOnly``); the leg's signed finish is the job's ending until a retry, which
        counts. It still holds back what it holds back (``leg_end``, ``void_decisions``): that is
        always safe, and of a finished leg there is nothing left to run."""
        entries = self.ends.get(job_id, [])
        undone = {e.payload.get("entry") for e in entries if e.action == "take_over_undone"}
        own = -1
        for entry in entries:
            if (status == "finished" and entry.action == "finished" and _leg_of(entry) == leg) or (
                status == "cancelled" and entry.action == "cancel" and 0 <= _leg_of(entry) <= leg
            ):
                own = entry.seq
        found: AuditEntry | None = None
        for entry in entries:
            over = _leg_of(entry)
            if entry.seq <= own or over < 0 or entry.action == "take_over_undone":
                continue
            if entry.action == "take_over" and entry.seq in undone:
                continue
            later = (
                (entry.action in ("retry", "take_over") and over >= leg)
                or (entry.action == "finished" and (over > leg or (over == leg and status != "finished")))
                or (
                    entry.action == "cancel"
                    and status != "cancelled"
                    and (over > leg or (over == leg and status != "finished"))
                )
            )
            if later:
                found = entry
        return found

    def terminal_decisions(self, job_id: str) -> list[AuditEntry]:
        """The terminal approvals (``approvals.terminal``: signed with the request's key as target, no
        job named) that ``job_id``'s signed sends rest on: for each send of the job that names no
        approval (a foreground run's), the newest terminal approval of exactly that key before it, with
        no other send of the key in between. A terminal rejection or answer leads to no send: it is
        tied to no job (the audit log lists it)."""
        tied: dict[int, AuditEntry] = {}
        for key, sends in self.sends.items():
            for send in sends:
                if send.payload.get("job_id") != job_id or send.target != job_id:
                    continue
                after = max((s.seq for s in sends if s.seq < send.seq), default=-1)
                asked = [
                    e
                    for e in self.terminal.get(key, [])
                    if after < e.seq < send.seq and e.action == "terminal_approve"
                ]
                if asked:
                    tied[asked[-1].seq] = asked[-1]
        return [tied[seq] for seq in sorted(tied)]

    def decisions(self, job_id: str) -> list[str]:
        """The decisions signed for ``job_id``, oldest first, in words: "approved by ana at … (POST
        …/bills/new)"; a terminal approval its sends rest on (``terminal_decisions``) says so:
        "approved at the terminal by ana at … (POST …)"."""
        verbs = {"approve": "approved", "reject": "rejected", "answer": "answered"}
        verbs |= {f"terminal_{a}": f"{w} at the terminal" for a, w in list(verbs.items())}
        said = []
        entries = [*self.decided.get(job_id, []), *self.terminal_decisions(job_id)]
        entries.sort(key=lambda e: e.seq)
        for entry in entries:
            request = entry.payload.get("request")
            if entry.action in TERMINAL_DECISIONS:
                request = entry.payload
            what = ""
            if isinstance(request, dict) and request.get("method") and request.get("url"):
                what = f" ({request['method']} {request['url']})"
            elif entry.payload.get("question"):
                what = f" (question: {str(entry.payload['question'])[:120]})"
            said.append(f"{verbs[entry.action]} by {entry.who} at {entry.at[:19].replace('T', ' ')}{what}")
        return said


def superseded_words(job_id: str, entry: AuditEntry) -> str:
    """What a set-back row's newest signed entry says, as a person reads it."""
    leg = entry.payload.get("leg")
    if entry.action == "finished":
        outcome = entry.payload.get("outcome") or "(no outcome named)"
        return f"job {job_id} finished {outcome} on leg {leg} (signed audit entry {entry.seq})"
    what = {"cancel": "cancelled", "retry": "retried", "take_over": "taken over"}[entry.action]
    return f"job {job_id} was {what} by {entry.who} after leg {leg} (signed audit entry {entry.seq})"
