"""The ``facts`` collection: short durable statements learned by verified runs, with provenance.

Writing needs a ``FactGrant`` (see grant.py). A new fact that says the same as a stored one is
merged into it: the stored wording stays, the new run is appended to its provenance and counted
as a confirmation. "The same" means cosine similarity at or above the merge threshold AND
``compatible``: the same numbers, codes and negating words, the names of one all in the other's
(the embedding alone rates "Net 30" vs "Net 45" or "GX-5531" vs "GX-5540" at 0.96-0.98; measured
figures: docs/knowledge.md). A fact of a run that read only trusted sources is never merged into a
row of less trust (``_less_trusted``: rejected, or an untrusted proposal): it is stored on its own.

A fact taught by a run that read untrusted text (see ``grant.untrusted_sources``) is stored as
``proposed``; only ``accepted`` facts are returned by ``search`` (what the planner, the tools and
the reflector read) unless a caller asks for every status. A run that read only trusted sources
learned its submitter's own words: its own acceptance counts as hers (``_Judge.run_refusal``), so
while the two-person rule is on its facts are proposed too (``SUBMITTERS_WORDS``), and one stored
accepted before the rule was on reads as proposed. A person accepts or rejects with ``decide``,
naming the words she was shown (``words_of``), or forgets with ``forget``; every such decision is
refused where the approval authority does not count her (``_Judge.decider_refusal``: a removed or
reset login; while the two-person rule is on, an identity not proven). A fact is only ever advice
in a prompt: nothing here feeds an approval rule.

Nothing in the chroma directory is taken on its word (anyone who can write the directory can write
a row). A store has an identity (``FactBook.store_id``: the facts collection's id, made by chroma
with the collection, kept in its database, not in any row): what the store signs and seals names
it, and so does every decision it writes to the audit log (one log per host, shared by every store
on it), so a row or a decision counts only in the store it was made in. Every read (``_read``, the
one place) judges each row:

- damaged (``DamagedRow``, listed, never a fact): a row that does not parse, or whose words are not
  one normalised line of at most ``MAX_FACT_CHARS``, or whose id is not the hash of its words;
- of unknown origin (``unverified``, a proposal): its record (``record``: words, run, task,
  sources, submitter, confirmations, the store) is not signed for this store (a row copied from
  another store is said to be one); its claimed provenance is dropped, and who submitted its run
  reads as not proven (``UNPROVEN_SUBMITTER``): while the two-person rule is on, nobody may accept
  it (``Authority.proposal_refusal``); rejecting or forgetting it may (``_Judge.decider_refusal``);
- its status is the audit log's latest signed decision on the fact in this store, whatever the row
  says (a row that says otherwise is shown so: "bob rejected it at ...; the row says proposed"):
  rejected when that is a rejection; accepted only when that is an acceptance, the row carries it
  under a seal of the operator's key over ``acceptance`` (words, who, when, the credential her login
  was proven with, the store) that is the one in the log, and while the approval authority still
  counts the person who accepted it (``Authority.submitter_refusal``: a removed or reset user's
  acceptance is void; with the two-person rule, not the run's submitter; a run's own acceptance is
  its submitter's: ``_Judge.run_refusal``); else proposed, with the
  reason (``Fact.problem``).

Rows and decisions from before stores had identities are adopted once per store (``_upgrade``, at
its first read by a process holding the key that can write the audit log): an acceptance the old
rules counted (its seal, the log's latest decision on the fact, adopted by no other store before)
is sealed again with the store's id and recorded (``fact_adopt``); a rejection is kept; then the
log records that the store was opened (``fact_store``) and no row without the store's id is
adopted after that.

Every write of a row holds one lock between processes (``FactBook._locked``): a decision's read,
audit entry and row write, and ``learn``'s read-merge-write, so the log and the row never disagree
and no decision is written over. A merge writes a row's record only, never its decision (status,
seal, who decided): only a decision, or the upgrade, writes that.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from pydantic import BaseModel

from taskcrew.approvals.identity import UNPROVEN_SUBMITTER, Identity, os_user, recorded
from taskcrew.knowledge.grant import FactGrant
from taskcrew.knowledge.lexical import STOPWORDS
from taskcrew.knowledge.models import Fact, FactHit, FactProvenance, FactStatus, LearnOutcome

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from taskcrew.approvals.audit import AuditEntry, AuditLog

MAX_FACT_CHARS = 400
READ_BY_PLANNERS: FactStatus = "accepted"
UNKNOWN_ORIGIN = "(unknown origin)"
# where a fact of a run that read only trusted sources came from, when its run's own acceptance
# does not count (the two-person rule: its submitter's words, another person accepts them)
SUBMITTERS_WORDS = "its run's submitter's own words (task, answers): another person accepts them"
DECISIONS = ("fact_accept", "fact_reject", "fact_forget")  # the audit log's actions on a fact
ADOPTED = "fact_adopt"  # a decision from before stores had ids, adopted by a store at its upgrade
OPENED = "fact_store"  # a store's upgrade done: no row without its id is adopted after it
_ACTIONS = (*DECISIONS, ADOPTED, OPENED)
_DECISION_KEYS = ("status", "decided_by", "decided_at", "seal", "decider_credential")  # only decisions write
_EARLIER = (
    "stored by an earlier taskcrew, before facts were signed and their acceptances checked "
    "against the audit log: read its words and accept or reject it again"
)
_NOT_SIGNED = (
    "its record is not signed by the store (written into the chroma directory by something "
    "else, or edited there): its run, sources and decision are not shown"
)
_LABELS = {"console": "console", "token": "token"}  # how decided_by names a proof (else "os")
_PROOFS = {"console": "console", "token": "token", "os": "os_user"}
_NUMBER_OR_CODE = re.compile(r"[A-Za-z]*\d[\w./-]*")
_NAME = re.compile(r"\b[A-Z][\w-]+")
_WORD = re.compile(r"[a-z]+(?:['\u2019]t)?")
# words that turn a statement around or restrict it: "saved without approval" / "saved only with
# approval", "is" / "is not" ("isn't", "cannot": not)
_NEGATIONS = frozenset(
    "no not never none nor neither nothing nobody without cannot except unless only".split()  # noqa: SIM905
)
_SPACE = re.compile(r"\s+")


class Keys(Protocol):
    """What signs and checks an acceptance (``approvals.signing.KeyRing``)."""

    def sign(self, payload: Any) -> str: ...

    def verify(self, payload: Any, signature: str | None) -> bool: ...


class FactRefused(ValueError):
    """A decision the store does not record; the message says why and what to do."""


class DamagedRow(BaseModel):
    """A row of the facts collection that is not a fact: listed so a person can forget it."""

    id: str
    text: str
    problem: str


class FactRows(BaseModel):
    """Every row of the collection as read: the facts (oldest first) and the damaged rows."""

    facts: list[Fact]
    damaged: list[DamagedRow]


def normalised(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def fact_id_of(text: str) -> str:
    """A fact's id: the hash of its lower-cased words (the same words in other case are one fact)."""
    return "fact-" + hashlib.sha256(text.lower().encode()).hexdigest()[:12]


def words_of(text: str) -> str:
    """The digest of a fact's exact words, as a person is shown them: a decision names it, and
    ``decide`` refuses one whose fact no longer has those words (128 bits: no two texts share one)."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def shape_problem(fact_id: str, text: str) -> str | None:
    """Why a row's words or id are not a fact's (None: they are)."""
    if not text.strip():
        return "it has no words"
    if normalised(text) != text:
        return "its words are not one line (line breaks or runs of spaces)"
    if len(text) > MAX_FACT_CHARS:
        return f"its words are longer than {MAX_FACT_CHARS} characters"
    if fact_id != fact_id_of(text):
        return "its id is not the hash of its words (the words were changed in the store)"
    return None


def record(fact: Fact, store: str | None = None) -> dict[str, Any]:
    """What the store signs of every fact it writes: its words, where they came from, and which
    store it is in (``store``; None: the form written before stores had ids)."""
    return {
        **({"store": store} if store is not None else {}),
        "seal": "fact_record",
        "id": fact.id,
        "text": fact.text,
        "run_id": fact.run_id,
        "task": fact.task,
        "learned_at": fact.learned_at.isoformat(),
        "derived_from": list(fact.derived_from),
        "submitted_by": fact.submitted_by or "",
        "confidence": fact.confidence,
        "verified": fact.verified,
        "confirmations": fact.confirmations,
        "provenance": [p.model_dump(mode="json") for p in fact.provenance],
    }


def acceptance(fact: Fact, store: str | None = None) -> dict[str, Any]:
    """What the seal of an accepted fact covers: which fact, its exact words, who accepted it, with
    which credential, and when (none: the run that taught it read only trusted sources), the run,
    and in which store (``store``; None: the form sealed before stores had ids, which no store
    counts unless it adopted it at its upgrade)."""
    return {
        **({"store": store} if store is not None else {}),
        "seal": "fact_accepted",
        "id": fact.id,
        "text": fact.text,
        "decided_by": fact.decided_by or "",
        "decided_at": fact.decided_at.isoformat() if fact.decided_at else "",
        "credential": fact.decider_credential or "",
        "run_id": fact.run_id,
    }


def _now() -> datetime:
    return datetime.now(UTC)


def _codes(text: str) -> frozenset[str]:
    """Numbers and codes (30, 5000, INV-2057, GX-5531), lower-cased."""
    return frozenset(t.lower().rstrip(".") for t in _NUMBER_OR_CODE.findall(text))


def _names(text: str) -> frozenset[str]:
    """Capitalised words (Northwind, ERP), lower-cased, but for capitalised stopwords ("The")."""
    return frozenset(t.lower() for t in _NAME.findall(text) if t.lower() not in STOPWORDS)


def _negations(text: str) -> frozenset[str]:
    """The negating or restricting words (``_NEGATIONS``; "n't" and "cannot" read as "not")."""
    words = {
        "not" if w == "cannot" or w[-3:] in ("n't", "n\u2019t") else w for w in _WORD.findall(text.lower())
    }
    return frozenset(words & _NEGATIONS)


def compatible(a: str, b: str) -> bool:
    """True when two similar facts may be one: the same numbers and codes, the same negating words
    (``_NEGATIONS``), and the capitalised names of one all in the other ("Hooli" / "Hooli Cloud
    Services"). A number or code only one names ("saved without approval" / "saved over 5000 USD
    only with approval"), or another one, keeps them apart: the embedding alone rates such pairs,
    and "Net 30" / "Net 45", as near-duplicates."""
    if _codes(a) != _codes(b) or _negations(a) != _negations(b):
        return False
    na, nb = _names(a), _names(b)
    return na <= nb or nb <= na


def decider(fact: Fact) -> Identity | None:
    """Who accepted or rejected ``fact``, as the record names her (None: no person)."""
    label, _, name = (fact.decided_by or "").partition(":")
    if not name:
        return None
    return recorded(name, _PROOFS.get(label, label), fact.decider_credential)


def _when(at: str) -> str:
    """An audit entry's or a row's ISO time as a person reads it ("2026-05-01 09:05 UTC")."""
    with contextlib.suppress(ValueError):
        return f"{datetime.fromisoformat(at).astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    return at


def _iso(when: datetime | None) -> str:
    return when.isoformat() if when else ""


@dataclass(frozen=True)
class Decision:
    """The audit log's latest signed decision on a fact in one store, as the reads judge by it."""

    status: str  # accepted, rejected, forgotten
    who: str  # the name of who decided
    at: str  # when (ISO)
    seal: str  # an acceptance's seal
    decided_by: str | None  # as a row records it ("console:bob")
    adopted: bool  # made before stores had ids, adopted at the store's upgrade

    @classmethod
    def of(cls, entry: AuditEntry) -> Decision:
        payload = entry.payload
        by = str(payload.get("decided_by") or "") or None
        at = str(payload.get("decided_at") or "") or entry.at
        if entry.action == ADOPTED:
            status = "rejected" if payload.get("status") == "rejected" else "accepted"
            who = (by or "").partition(":")[2] or entry.who
            return cls(status, who, at, str(payload.get("seal") or ""), by, True)
        status = {"fact_accept": "accepted", "fact_reject": "rejected"}.get(entry.action, "forgotten")
        if status == "rejected" and by is None:
            by = f"{_LABELS.get(str(payload.get('proof')), 'os')}:{entry.who}"
        return cls(status, entry.who, at, str(payload.get("seal") or ""), by, False)

    def says(self, since: bool = False) -> str:
        """How a person reads it: "bob rejected it at 2026-05-01 09:05 UTC (audit log)"; ``since``:
        "bob rejected it since (2026-05-01 09:05 UTC, audit log)"."""
        verb = {"accepted": "accepted", "rejected": "rejected", "forgotten": "forgot"}[self.status]
        before = "before stores had ids, " if self.adopted else ""
        if since:
            return f"{self.who} {verb} it since ({_when(self.at)}, {before}audit log)"
        return f"{self.who} {verb} it at {_when(self.at)} ({before}audit log)"


class _Judge:
    """What one read of the store checks rows against, each read once: the audit log's signed
    decisions on facts (this store's latest on each fact, those from before stores had ids, which
    store adopted which of those, whether this store was opened), and the approval authority's word
    on each person."""

    def __init__(self, book: FactBook) -> None:
        self._book = book
        self._loaded = False
        self._mine: dict[str, Decision] = {}
        self._legacy: dict[str, AuditEntry] = {}
        self._adopted: dict[str, str] = {}  # a seal from before stores had ids -> the store that adopted it
        self._opened = False
        self.blind: str | None = None  # why the audit log could not be read (None: it was)
        self._authority: Any = None
        self._refusals: dict[tuple[str, str, str | None, str | None, bool], str | None] = {}

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        store = self._book.store_id
        try:
            entries = self._book.audit.signed(_ACTIONS)
        except OSError as exc:
            self.blind = f"the audit log cannot be read ({type(exc).__name__}: {exc})"
            return
        for entry in entries:
            named = entry.payload.get("store")
            if entry.action == OPENED:
                self._opened = self._opened or named == store
                continue
            if not entry.target.startswith("/facts/"):
                continue
            fact_id = entry.target.removeprefix("/facts/")
            if entry.action == ADOPTED and entry.payload.get("legacy_seal"):
                self._adopted.setdefault(str(entry.payload["legacy_seal"]), str(named))
            if "store" not in entry.payload:
                self._legacy[fact_id] = entry
            elif named == store:
                self._mine[fact_id] = Decision.of(entry)

    def decision(self, fact_id: str) -> Decision | None:
        """The latest signed decision on ``fact_id`` in this store (None: none)."""
        self._load()
        return self._mine.get(fact_id)

    def legacy(self, fact_id: str) -> AuditEntry | None:
        """The latest signed decision on ``fact_id`` made before stores had ids (in any store)."""
        self._load()
        return self._legacy.get(fact_id)

    def adopted_by(self, seal: str) -> str | None:
        """The store that adopted this acceptance from before stores had ids (None: none did)."""
        self._load()
        return self._adopted.get(seal)

    def opened(self) -> bool:
        """This store's upgrade is recorded (``OPENED``): no row without its id is adopted any more."""
        self._load()
        return self._opened

    def refusal(self, who: Identity, submitted_by: str | None) -> str | None:
        """Why ``who``'s acceptance does not count (None: it does), by the authority's rule on who
        decides (``decider_refusal``) and the two-person rule on the run's submitter."""
        return self._judged(who, submitted_by, accepting=True)

    def decider_refusal(self, who: Identity) -> str | None:
        """Why ``who`` may decide nothing on a fact (accept, reject, forget; None: she may), by the
        authority's rule on who decides (``Authority.submitter_refusal``): a login of someone removed
        from the users file or whose password was reset counts for nothing, and while the two-person
        rule is on, an identity not proven (an operating-system user, taken on her word) decides
        nothing: else one person could undo, as her OS user, what another decided."""
        return self._judged(who, None, accepting=False)

    def run_refusal(self, submitted_by: str | None) -> str | None:
        """Why the acceptance a run gives its own facts does not count (None: it does). A run that
        read only trusted sources learned its submitter's own words (the task she typed, her answers),
        so its acceptance counts as one by its submitter (not proven where the run names none),
        judged by the same rule as a person's (``Authority.proposal_refusal``): while the two-person
        rule is on, never (she may not accept her own run's facts; an unproven submitter, nothing)."""
        from taskcrew.approvals.rules import RiskRulesError

        name = submitted_by or UNPROVEN_SUBMITTER
        key = (name, "run", None, name, True)
        if key not in self._refusals:
            try:
                self._refusals[key] = self._authority_of().proposal_refusal(
                    name, name, "that taught it", remedy=""
                )
            except RiskRulesError as exc:
                self._refusals[key] = f"whether its run's own acceptance counts cannot be judged: {exc}"
        return self._refusals[key]

    def _authority_of(self) -> Any:
        from taskcrew.approvals.authority import Authority

        if self._authority is None:
            self._authority = Authority(None)
        return self._authority

    def _judged(self, who: Identity, submitted_by: str | None, accepting: bool) -> str | None:
        key = (who.name, who.proof, who.credential, submitted_by, accepting)
        if key not in self._refusals:
            self._refusals[key] = self._judge(who, submitted_by, accepting)
        return self._refusals[key]

    def _judge(self, who: Identity, submitted_by: str | None, accepting: bool) -> str | None:
        from taskcrew.approvals.rules import RiskRulesError

        role = "fact's acceptor" if accepting else "person deciding on a fact"
        try:
            if why := self._authority_of().submitter_refusal(who, role=role):
                return str(why)
            # what to do about an unproven submitter depends on the fact (``_unproven_advice``)
            if accepting and (
                why := self._authority_of().proposal_refusal(
                    who.name, submitted_by, "that proposed it", remedy=""
                )
            ):
                return str(why)
        except RiskRulesError as exc:
            return f"who may {'accept' if accepting else 'decide on'} it cannot be judged: {exc}"
        return None


class FactBook:
    """Learned facts: learn (with a grant), rows, all, get, search, decide, forget."""

    def __init__(
        self,
        collection: Collection,
        merge_similarity: float = 0.85,
        clock: Callable[[], datetime] = _now,
        keys: Keys | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self._collection = collection
        self._merge_similarity = merge_similarity
        self._clock = clock
        self._keys = keys
        self._audit = audit
        self._store_id: str | None = None
        self._upgraded = False  # this store's upgrade is recorded (seen or made by this object)
        self._upgrade_problem: str | None = None  # why it could not be made (None: not tried, or made)
        self._held = threading.local()  # this thread holds ``_locked`` (depth)

    @property
    def keys(self) -> Keys:
        """The operator's key ring (``KeyRing.default()`` unless one was given); read on first use."""
        if self._keys is None:
            from taskcrew.approvals.signing import KeyRing

            self._keys = KeyRing.default()
        return self._keys

    @property
    def audit(self) -> AuditLog:
        """The signed audit log beside the operator's key (the one every process shares), where each
        decision on a fact is recorded and read back (``_Judge``)."""
        if self._audit is None:
            from taskcrew.approvals.audit import AuditLog
            from taskcrew.approvals.signing import KeyRing, approvals_dir

            self._audit = AuditLog(approvals_dir() / "audit.jsonl", cast(KeyRing, self.keys))
        return self._audit

    @property
    def store_id(self) -> str:
        """The store's identity: the facts collection's id, which chroma made with the collection
        and keeps in its own database (a row written into the collection cannot change it; a copy
        of the whole directory, a backup, is the same store). Every record, seal and audit entry
        names it: a row or a decision counts only in its store."""
        if self._store_id is None:
            self._store_id = str(self._collection.id)
        return self._store_id

    def _signed(self, fact: Fact, seal: bool = False) -> Fact:
        """``fact`` as the store writes it: its record signed; ``seal``: its acceptance sealed too."""
        store = self.store_id
        update: dict[str, Any] = {"record_sig": self.keys.sign(record(fact, store)), "unverified": False}
        if seal:
            update["seal"] = self.keys.sign(acceptance(fact, store)) if fact.status == "accepted" else ""
        return fact.model_copy(update=update)

    def _read(self, fact_id: str, document: Any, metadata: Any, judge: _Judge) -> Fact | DamagedRow:
        """A row as every reader gets it: damaged, of unknown origin, or judged (module docstring)."""
        shown = str(document or "")[: 2 * MAX_FACT_CHARS]  # as stored: a damaged row's line breaks show
        try:
            fact, signed, claimed = _fact(fact_id, document, metadata)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            said = (str(exc).splitlines() or [""])[0][:200]
            return DamagedRow(
                id=fact_id, text=shown, problem=f"it cannot be read ({type(exc).__name__}: {said})"
            )
        if problem := shape_problem(fact.id, fact.text):
            return DamagedRow(id=fact_id, text=shown, problem=problem)
        origin = self._origin(fact, signed, claimed, judge)
        if origin is None:  # written before stores had ids, and this store's upgrade not made yet
            return self._not_upgraded(fact, judge)
        return self._status(origin, fact, judge)

    def _origin(self, fact: Fact, signed: bool, claimed: str | None, judge: _Judge) -> Fact | None:
        """``fact`` if its record is this store's, else as of unknown origin (``_unknown_origin``);
        None: a record signed before stores had ids, in a store not upgraded yet."""
        store = self.store_id
        if not signed:
            return _unknown_origin(fact, _EARLIER)
        if claimed == store and self.keys.verify(record(fact, store), fact.record_sig):
            return fact
        if claimed is None and self.keys.verify(record(fact), fact.record_sig):
            if not judge.opened():
                return None
            return _unknown_origin(
                fact,
                "its record names no knowledge store, and this store's one-time upgrade that adopts such "
                "rows was already made: it was written since by a taskcrew older than this one still "
                "running on the store (restart it with this version), or copied from another store's "
                "backup. Its run, sources and decision are not shown",
            )
        if claimed not in (None, store) and self.keys.verify(record(fact, claimed), fact.record_sig):
            return _unknown_origin(
                fact,
                f"it was copied from another knowledge store ({claimed}): a fact, and a person's decision "
                "on it, count only in the store they were made in. Here its run, sources and decision are "
                "not shown",
            )
        return _unknown_origin(fact, _NOT_SIGNED)

    def _status(self, fact: Fact, row: Fact, judge: _Judge) -> Fact:
        """``fact`` (its origin judged) with the status the audit log's latest signed decision on it
        in this store gives, whatever ``row`` (as written) says; a row that says otherwise is shown
        so. Accepted only with this store's seal of that very acceptance (``_acceptance_problem``)."""
        latest = judge.decision(fact.id)
        said = _says(row)
        if latest is not None and latest.status == "rejected":
            edited = row.status != "rejected" or row.decided_by != latest.decided_by
            edit = f"{latest.says()}; the row says {said}: it was edited in the store, or an older copy"
            edit += " written back"
            problems = [edit] if edited else []
            if fact.unverified and fact.problem:
                problems.append(fact.problem)
            return fact.model_copy(
                update={
                    **UNDECIDED,
                    "status": "rejected",
                    "decided_by": latest.decided_by,
                    "decided_at": _parsed(latest.at),
                    "problem": ". ".join(problems) or None,
                }
            )
        if fact.unverified:
            return fact
        if row.status == "accepted":
            if why := self._acceptance_problem(fact, latest, judge):
                return fact.model_copy(update={**UNDECIDED, "problem": why})
            return fact
        if judge.blind and row.status == "rejected":  # the row's word for a rejection hides it: kept
            return fact.model_copy(update={"problem": f"its decision cannot be checked now: {judge.blind}"})
        why = None
        if latest is not None and latest.status == "accepted":
            why = (
                f"{latest.says()}, but the row says {said}: it was edited in the store. No planner sees "
                "it until a person accepts it again"
            )
        elif row.status == "rejected":
            since = f"; {latest.says(since=True)}" if latest is not None else ""
            why = (
                f"the row says {said}, but the audit log holds no such decision in this store{since}: it "
                "was edited in the store, or written back; it reads as a proposal"
            )
        return fact.model_copy(update={**UNDECIDED, "problem": why})

    def _acceptance_problem(self, fact: Fact, latest: Decision | None, judge: _Judge) -> str | None:
        """Why an accepted row's acceptance does not count (None: it counts)."""
        if not self.keys.verify(acceptance(fact, self.store_id), fact.seal):
            if self.keys.verify(acceptance(fact), fact.seal):  # sealed before stores had ids
                elsewhere = judge.adopted_by(fact.seal)
                reason = (
                    f"another knowledge store ({elsewhere}) adopted that acceptance first"
                    if elsewhere and elsewhere != self.store_id
                    else "it was not the audit log's latest decision on the fact then"
                )
                name = (fact.decided_by or "").partition(":")[2]
                was = (
                    f"{name} accepted it at {_when(_iso(fact.decided_at))}"
                    if name
                    else "a run that read only trusted sources stored it accepted"
                )
                return (
                    f"{was}, before acceptances named their knowledge store, and this store did not adopt "
                    f"that acceptance at its upgrade ({reason}): a person reads it and accepts it again here"
                )
            return (
                "its acceptance is not sealed by the operator key for this store (written into the store, "
                "edited since, copied from another store, or sealed with another key): a person accepts "
                "it again"
            )
        if judge.blind:
            return f"its acceptance cannot be checked now: {judge.blind}. No planner sees it until it can"
        if latest is None:
            return "the audit log holds no signed decision accepting it: a person accepts it again"
        if latest.status != "accepted" or latest.seal != fact.seal:
            return f"{latest.says(since=True)}: this accepted row is an older copy written back"
        who = decider(fact)
        if who is not None and (why := judge.refusal(who, fact.submitted_by)):
            return (
                f"{who.name} ({who.proof}) accepted it, but that acceptance no longer counts ({why}). "
                "No planner sees it until someone accepts it again"
            )
        if who is None and (why := judge.run_refusal(fact.submitted_by)):
            return (
                "a run that read only trusted sources stored it accepted: that counts as its submitter's "
                f"acceptance, which does not count now ({why}). No planner sees it until another person "
                "accepts it"
            )
        return None

    def _not_upgraded(self, fact: Fact, judge: _Judge) -> Fact:
        """A row written before stores had ids, read while this store's upgrade cannot be made (the
        audit log cannot be written): never accepted, rejected when it or the log says so."""
        legacy = judge.legacy(fact.id)
        rejected = fact.status == "rejected" or (legacy is not None and legacy.action == "fact_reject")
        why = self._upgrade_problem or judge.blind or "it has not been made yet"
        was = f"{_says(fact)}; " if fact.status == "accepted" else ""
        return fact.model_copy(
            update={
                **UNDECIDED,
                **({"status": "rejected", "decided_by": fact.decided_by} if rejected else {}),
                "problem": (
                    f"{was}stored before facts named their knowledge store; this store's one-time upgrade, "
                    f"which adopts its accepted facts, cannot be made now ({why}). Until it is, this fact "
                    f"counts as {'rejected' if rejected else 'not accepted'}; a process that can write the "
                    "audit log makes it at its next read of the store (e.g. `taskcrew knowledge facts`)"
                ),
            }
        )

    def _upgrade(self) -> None:
        """Make this store's one-time upgrade if no process has (``_adopt``); a store whose upgrade
        cannot be made now (the audit log cannot be written) reads its older rows as not accepted,
        saying why, and the next read tries again. Not while this thread holds the lock."""
        if self._upgraded or self._holding():
            return
        from taskcrew.approvals.audit import AuditLogError

        if _Judge(self).opened():
            self._upgraded = True
            return
        try:
            with self._locked():
                judge = _Judge(self)  # read again under the lock: another process may have made it
                if judge.blind:
                    raise OSError(judge.blind)
                if not judge.opened():
                    self._adopt(judge)
        except (AuditLogError, OSError) as exc:
            self._upgrade_problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return
        self._upgraded, self._upgrade_problem = True, None

    def _adopt(self, judge: _Judge) -> None:
        """The upgrade of a store whose rows were written before stores had ids: each such row whose
        record the key signed gets this store's id in its record; an acceptance the old rules counted
        (sealed, the log's latest decision on the fact, and adopted by no other store before) is
        sealed again for this store and recorded (``fact_adopt``, its old seal named); a rejection (the
        row's, or the log's latest decision) is recorded for this store. Then ``fact_store``: after
        it, no row without this store's id is adopted. Each entry is written before its row."""
        store = self.store_id
        got = self._collection.get(include=["documents", "metadatas"])
        adopted: list[str] = []
        rejected: list[str] = []
        for fact_id, document, metadata in zip(
            got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True
        ):
            try:
                fact, signed, claimed = _fact(fact_id, document, metadata)
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            if not signed or claimed is not None or shape_problem(fact.id, fact.text):
                continue
            if not self.keys.verify(record(fact), fact.record_sig):
                continue
            legacy = judge.legacy(fact.id)
            if (
                fact.status == "accepted"
                and self.keys.verify(acceptance(fact), fact.seal)
                and legacy is not None
                and legacy.action == "fact_accept"
                and legacy.payload.get("seal") == fact.seal
                and judge.adopted_by(fact.seal) in (None, store)
            ):
                new = self._signed(fact, seal=True)
                payload = {"status": "accepted", "seal": new.seal, "legacy_seal": fact.seal}
                adopted.append(fact.id)
            elif fact.status == "rejected" or (legacy is not None and legacy.action == "fact_reject"):
                logged = (
                    Decision.of(legacy) if legacy is not None and legacy.action == "fact_reject" else None
                )
                # the row's own rejection where it names one, else the log's
                mine = (fact.status == "rejected" and bool(fact.decided_by)) or logged is None
                by = fact.decided_by if mine or logged is None else logged.decided_by
                at = fact.decided_at if mine or logged is None else _parsed(logged.at)
                update = {**UNDECIDED, "status": "rejected", "decided_by": by, "decided_at": at}
                new = self._signed(fact.model_copy(update=update), seal=True)
                payload = {"status": "rejected", "seal": ""}
                rejected.append(fact.id)
            else:  # its record names the store now; its decision stays as it was (not counted)
                self._collection.update(
                    ids=[fact.id], metadatas=[_record_metadata(self._signed(fact), store)]
                )
                continue
            details = {
                "text": new.text,
                "decided_by": new.decided_by or "",
                "decided_at": _iso(new.decided_at),
            }
            self._log("upgrade", ADOPTED, fact.id, {**payload, **details})
            self._collection.update(ids=[fact.id], metadatas=[_metadata(new, store)])
        done: dict[str, Any] = {"store": store, "adopted": adopted, "rejected": rejected}
        self.audit.append("upgrade", OPENED, "/facts", {**done, "rows": len(got["ids"])})

    def _awaits_upgrade(self, fact_id: str, judge: _Judge) -> bool:
        """The row ``fact_id`` was written before stores had ids and this store's upgrade, which
        adopts it, is not made yet."""
        if judge.opened():
            return False
        got = self._collection.get(ids=[fact_id], include=["metadatas"])
        meta = dict((got["metadatas"] or [{}])[0] or {})
        return "record_sig" in meta and "store" not in meta

    def _rows(self, got: Any, judge: _Judge) -> list[Fact | DamagedRow]:
        return [
            self._read(i, d, m, judge)
            for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
        ]

    def _row(self, fact_id: str, judge: _Judge | None = None) -> Fact | DamagedRow | None:
        got = self._collection.get(ids=[fact_id], include=["documents", "metadatas"])
        rows = self._rows(got, judge or _Judge(self))
        return rows[0] if rows else None

    def _holding(self) -> int:
        """How deep this thread is in ``_locked`` (0: it does not hold the lock)."""
        return int(getattr(self._held, "depth", 0))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The one lock between processes (workers' reflectors, the console, the CLI) around every
        write of a row: a decision's read, audit entry and row write (``decide``, ``forget``), and
        ``learn``'s read, merge and write back. So the signed log's latest decision on a fact and
        its row always agree, and a merge never writes back a row read before a decision. The lock
        file (``facts.lock``) is beside the audit log, which every process that decides shares."""
        from taskcrew.approvals.signing import locked

        depth = self._holding()
        self._held.depth = depth + 1
        try:
            with locked(self.audit.path.with_name("facts")):
                yield
        finally:
            self._held.depth = depth

    def _log(self, who: str, action: str, fact_id: str, payload: dict[str, Any]) -> None:
        self.audit.append(who, action, f"/facts/{fact_id}", {**payload, "store": self.store_id})

    def count(self) -> int:
        return self._collection.count()

    def learn(self, grant: FactGrant, text: str, confidence: float = 0.7) -> LearnOutcome:
        """Store a fact for the grant's run, or merge it into a near-duplicate already stored."""
        if not isinstance(grant, FactGrant):
            raise TypeError("learn() needs a FactGrant from FactGrant.from_verdict(verdict).")
        text = normalised(text)
        if not text:
            raise ValueError("A fact needs text.")
        if len(text) > MAX_FACT_CHARS:
            raise ValueError(f"A fact is one short statement (at most {MAX_FACT_CHARS} characters).")
        if not 0.0 <= confidence <= 1.0:
            raise ValueError("confidence must be between 0 and 1.")
        grant.spend()
        provenance = FactProvenance(
            run_id=grant.run_id,
            task=grant.task,
            learned_at=self._clock(),
            confidence=confidence,
            verified=True,
        )
        self._upgrade()
        with self._locked():  # read, merge and write back as one: no decision made meanwhile is lost
            return self._learn(grant, text, confidence, provenance)

    def _learn(
        self, grant: FactGrant, text: str, confidence: float, provenance: FactProvenance
    ) -> LearnOutcome:
        fact_id = fact_id_of(text)
        judge = _Judge(self)
        # the same words in other case: never overwrite its status or history
        same = self._row(fact_id, judge)
        near = None if same else self._near_duplicate(text, trusted=not grant.proposes)
        twin = (same, 1.0) if isinstance(same, Fact) else near
        if twin is not None:
            fact, similarity = twin
            # the record only: the row's decision stays as written (a row read while its decision
            # could not be checked, e.g. the audit log unreadable, is not written back as proposed)
            merged = _merge(fact, provenance, grant.untrusted)
            # a row from before stores had ids, in a store whose upgrade is not made yet, stays in
            # that form (the upgrade adopts it later)
            store = None if self._awaits_upgrade(fact.id, judge) else self.store_id
            signed = {"record_sig": self.keys.sign(record(merged, store)), "unverified": False}
            merged = merged.model_copy(update=signed)
            self._collection.update(ids=[fact.id], metadatas=[_record_metadata(merged, store)])
            return LearnOutcome(action="merged", fact=merged, similarity=similarity)
        latest = judge.decision(fact_id)
        # a rejected fact stays rejected when taught again, also where its row was removed meanwhile
        rejected = latest if latest is not None and latest.status == "rejected" else None
        # a run that read only trusted sources accepts its facts itself: as its submitter would
        # (``_Judge.run_refusal``); where that does not count, they wait for another person
        own = None if grant.proposes or same is not None else judge.run_refusal(grant.submitted_by)
        fact = Fact(
            id=fact_id,
            text=text,
            confidence=confidence,
            verified=True,
            learned_at=provenance.learned_at,
            run_id=grant.run_id,
            task=grant.task,
            confirmations=1,
            provenance=[provenance],
            # a damaged row under this id (its words were changed) is replaced by a proposal
            status="rejected"
            if rejected
            else "proposed"
            if grant.proposes or same is not None or own
            else "accepted",
            decided_by=rejected.decided_by if rejected else None,
            decided_at=_parsed(rejected.at) if rejected else None,
            derived_from=[*grant.untrusted, *([SUBMITTERS_WORDS] if own else [])],
            submitted_by=grant.submitted_by,
        )
        fact = self._signed(fact, seal=True)
        self._collection.upsert(ids=[fact.id], documents=[text], metadatas=[_metadata(fact, self.store_id)])
        if fact.status == "accepted":  # no person decided: the run read only trusted sources
            from taskcrew.approvals.audit import AuditLogError

            # not recorded (a damaged log): it reads as proposed, with the reason, until a person accepts it
            with contextlib.suppress(AuditLogError):
                payload = {"text": text, "run_id": grant.run_id, "seal": fact.seal, "decided_by": ""}
                self._log("reflector", "fact_accept", fact.id, payload)
        return LearnOutcome(action="added", fact=fact)

    def rows(self) -> FactRows:
        """Every row as read: the facts of every status (oldest first) and the damaged rows."""
        self._upgrade()
        rows = self._rows(self._collection.get(include=["documents", "metadatas"]), _Judge(self))
        facts = [r for r in rows if isinstance(r, Fact)]
        return FactRows(
            facts=sorted(facts, key=lambda f: (f.learned_at, f.id)),
            damaged=sorted((r for r in rows if isinstance(r, DamagedRow)), key=lambda r: r.id),
        )

    def all(self, status: FactStatus | None = None) -> list[Fact]:
        """All facts (or those with ``status``), oldest first; damaged rows are not facts."""
        return [f for f in self.rows().facts if status is None or f.status == status]

    def decide(self, fact_id: str, accept: bool, who: Identity, words: str | None = None) -> Fact | None:
        """A person's decision on a fact, from any surface (the CLI, the console), made as ``who``, the
        surface's proven identity: recorded with the fact ("console:ana", "token:ana" or "os:ana",
        and the credential her login was proven with) and in the signed audit log (``fact_accept`` /
        ``fact_reject``, naming this store). An acceptance names ``words``, the digest of the words she
        was shown (``words_of``): it is refused if the fact's words are not those now, and where the
        approval authority does not count her (``_Judge.refusal``). Returns the fact as stored (None:
        none). The row read, the log's entry and the row written are one step (``_locked``)."""
        self._upgrade()
        with self._locked():
            return self._decide(fact_id, accept, who, words)

    def _decide(self, fact_id: str, accept: bool, who: Identity, words: str | None) -> Fact | None:
        judge = _Judge(self)
        fact = self._row(fact_id, judge)
        if fact is None:
            return None
        if isinstance(fact, DamagedRow):
            raise FactRefused(
                f"{fact_id} is a damaged row ({fact.problem}), not a fact; it can only be forgotten: "
                f"taskcrew knowledge forget {fact_id}"
            )
        if accept and not (words or "").strip():
            raise FactRefused(
                f"accepting {fact_id} names the words accepted (the digest the page or the list showed); "
                "nothing decided"
            )
        if accept and (words or "").strip().lower() != words_of(fact.text):
            raise FactRefused(
                f"{fact_id} no longer has the words you were shown (they changed in the store); nothing "
                "decided: read it again and decide on what it says now"
            )
        if accept and (why := judge.refusal(who, fact.submitted_by)):
            raise FactRefused(f"{who.describe()} may not accept it: {why}{_unproven_advice(fact)}")
        if not accept and (why := judge.decider_refusal(who)):
            raise FactRefused(f"{who.describe()} may not reject {fact_id}: {why}; nothing decided")
        label = _LABELS.get(who.proof, "os")
        decided = self._signed(
            fact.model_copy(
                update={
                    "status": "accepted" if accept else "rejected",
                    "decided_by": f"{label}:{who.name}",
                    "decided_at": self._clock(),
                    "decider_credential": who.credential if accept else None,
                    "problem": None,
                }
            ),
            seal=True,
        )
        payload = {
            "text": decided.text,
            "proof": who.proof,
            "words": words_of(decided.text),
            "seal": decided.seal,
            "decided_by": decided.decided_by,
            "decided_at": _iso(decided.decided_at),
        }
        self._log(who.name, "fact_accept" if accept else "fact_reject", fact_id, payload)  # first: a log
        # that cannot be written decides nothing; the row gets the very words that were sealed
        self._collection.update(
            ids=[fact_id], documents=[decided.text], metadatas=[_metadata(decided, self.store_id)]
        )
        return decided

    def get(self, fact_id: str) -> Fact | None:
        """The fact with this id as read (None: no such fact, or a damaged row)."""
        self._upgrade()
        row = self._row(fact_id)
        return row if isinstance(row, Fact) else None

    def search(
        self,
        query: str,
        k: int = 3,
        min_similarity: float = -1.0,
        status: FactStatus | None = READ_BY_PLANNERS,
    ) -> list[FactHit]:
        """The ``k`` facts most similar to ``query`` with at least ``min_similarity``, best first.

        Only accepted facts unless ``status`` says otherwise (None: every status); never a damaged row.
        Each row is judged (``_read``) before the cut at ``k``: a row that says accepted but does not
        read so (an acceptance that no longer counts) does not take a place, the next rows are read
        instead (asking chroma for twice as many each time, until ``k`` are found or none is left).
        """
        size = self.count()
        if not query.strip() or size == 0 or k < 1:
            return []
        self._upgrade()
        # a row reads accepted only where it says so; any other status is judged from every row
        where: Any = {"status": status} if status == "accepted" else None
        judge = _Judge(self)
        read: dict[str, Fact | DamagedRow] = {}
        n = min(k, size)
        while True:
            result = self._collection.query(
                query_texts=[query],
                n_results=n,
                where=where,
                include=["documents", "metadatas", "distances"],
            )
            ids = result["ids"][0]
            hits: list[FactHit] = []
            below = False
            for i, d, m, dist in zip(
                ids,
                (result["documents"] or [[]])[0],
                (result["metadatas"] or [[]])[0],
                (result["distances"] or [[]])[0],
                strict=True,
            ):
                similarity = 1.0 - float(dist)
                if similarity < min_similarity:  # best first: no row after it qualifies either
                    below = True
                    break
                if i not in read:
                    read[i] = self._read(i, d, m, judge)
                row = read[i]
                if isinstance(row, Fact) and (status is None or row.status == status):
                    hits.append(FactHit(fact=row, similarity=similarity))
                    if len(hits) == k:
                        break
            if len(hits) == k or below or len(ids) < n or n >= size:
                return hits
            n = min(2 * n, size)

    def forget(self, fact_id: str, who: Identity | None = None) -> Fact | DamagedRow | None:
        """Delete a fact or a damaged row, recorded in the audit log as ``fact_forget`` (by ``who``,
        else this process's OS user): a copy of it written back later stays forgotten. A decision
        like any other: refused (``FactRefused``) where the approval authority does not count ``who``
        (``_Judge.decider_refusal``). Returns what was deleted, or None if there was no such row."""
        who = who or Identity(name=os_user(), proof="os_user")
        self._upgrade()
        with self._locked():
            judge = _Judge(self)
            row = self._row(fact_id, judge)
            if row is not None:
                if why := judge.decider_refusal(who):
                    raise FactRefused(f"{who.describe()} may not forget {fact_id}: {why}; nothing forgotten")
                self._log(who.name, "fact_forget", fact_id, {"text": row.text, "proof": who.proof})
                self._collection.delete(ids=[fact_id])
        return row

    def _near_duplicate(self, text: str, trusted: bool) -> tuple[Fact, float] | None:
        """The stored fact ``text`` is merged into (None: it is stored on its own): similar enough and
        ``compatible``. A fact of a run that read only trusted sources (``trusted``) is never merged
        into a row of less trust (``_less_trusted``): it would lend it a confirmation, and its own
        words would reach neither a planner nor a reviewer."""
        for hit in self.search(text, k=3, min_similarity=self._merge_similarity, status=None):
            if compatible(hit.fact.text, text) and not (trusted and _less_trusted(hit.fact)):
                return hit.fact, hit.similarity
        return None


UNDECIDED = {
    "status": "proposed",
    "seal": "",
    "decided_by": None,
    "decided_at": None,
    "decider_credential": None,
}


def _unknown_origin(fact: Fact, why: str) -> Fact:
    """A row whose record is not the store's: its words, as a proposal, with none of its claimed
    provenance (run, task, sources, confidence, confirmations, who decided). Who submitted the run
    that proposed it is not proven (``UNPROVEN_SUBMITTER``): where the two-person rule is on, nobody
    may accept it (``Authority.proposal_refusal``; a broken signature must not drop the submitter the
    rule refuses). A decision on it is signed with that, so it stays so after a rejection."""
    return fact.model_copy(
        update={
            **UNDECIDED,
            "run_id": "",
            "task": "",
            "provenance": [],
            "derived_from": [UNKNOWN_ORIGIN],
            "confirmations": 1,
            "confidence": 0.0,
            "verified": False,
            "submitted_by": UNPROVEN_SUBMITTER,
            "record_sig": "",
            "unverified": True,
            "problem": why,
        }
    )


def _less_trusted(fact: Fact) -> bool:
    """A row a fact of a run that read only trusted sources is not merged into: rejected, or not
    accepted and proposed from untrusted text or of unknown origin (a source other than a
    submitter's own words)."""
    if fact.status == "rejected":
        return True
    return fact.status != "accepted" and any(s != SUBMITTERS_WORDS for s in fact.derived_from)


def _unproven_advice(fact: Fact) -> str:
    """What to do with a fact whose run's submitter is not proven, which nobody may accept while two
    people decide (else nothing to add). Submitting the task again does not help: a run that proposes
    the same words is merged into this fact, which keeps its submitter."""
    if fact.submitted_by != UNPROVEN_SUBMITTER:
        return ""
    unknown = (
        " (it is of unknown origin: its record is not signed by the store, so which run proposed it, "
        "and who asked for that run, cannot be told)"
        if UNKNOWN_ORIGIN in fact.derived_from
        else ""
    )
    return (
        f". Submitting the task again does not change that for this fact{unknown}: a run with the same "
        f"words is merged into it. Reject it; if its words are right, forget it (`taskcrew knowledge forget "
        f"{fact.id}`) and have a run submitted after `taskcrew approvals login` propose them again, or have "
        "the person responsible for the company's documents add them (`taskcrew knowledge ingest FILE`)"
    )


def _merge(fact: Fact, provenance: FactProvenance, untrusted: list[str]) -> Fact:
    """The stored wording and status stay (an accepted fact stays accepted, a proposed or rejected
    one is not promoted by another run saying it again)."""
    repeat = any(p.run_id == provenance.run_id for p in fact.provenance)
    return fact.model_copy(
        update={
            "derived_from": sorted({*fact.derived_from, *untrusted}),
            "confidence": max(fact.confidence, provenance.confidence),
            "verified": fact.verified and provenance.verified,
            "confirmations": fact.confirmations if repeat else fact.confirmations + 1,
            "provenance": [*fact.provenance, provenance],
        }
    )


def _says(row: Fact) -> str:
    """What a row says of its decision ("proposed", "rejected by console:bob at ...")."""
    if row.status == "proposed" or not row.decided_by:
        return row.status
    return f"{row.status} by {row.decided_by}" + (
        f" at {_when(_iso(row.decided_at))}" if row.decided_at else ""
    )


def _parsed(at: str) -> datetime | None:
    try:
        return datetime.fromisoformat(at)
    except ValueError:
        return None


def _record_metadata(fact: Fact, store: str | None) -> dict[str, Any]:
    """A row's record as written (and signed), without its decision: what a merge writes (``store``
    None: in the form from before stores had ids, naming none)."""
    written = _metadata(fact, store or "")
    if store is None:
        del written["store"]
    return {k: v for k, v in written.items() if k not in _DECISION_KEYS}


def _metadata(fact: Fact, store: str) -> dict[str, Any]:
    return {
        "store": store,
        "confidence": fact.confidence,
        "verified": fact.verified,
        "learned_at": fact.learned_at.isoformat(),
        "run_id": fact.run_id,
        "task": fact.task,
        "confirmations": fact.confirmations,
        "provenance": json.dumps([p.model_dump(mode="json") for p in fact.provenance], ensure_ascii=False),
        "status": fact.status,
        "derived_from": json.dumps(fact.derived_from),
        "decided_by": fact.decided_by or "",
        "decided_at": fact.decided_at.isoformat() if fact.decided_at else "",
        "seal": fact.seal,
        "decider_credential": fact.decider_credential or "",
        "submitted_by": fact.submitted_by or "",
        "record_sig": fact.record_sig,
    }


def _fact(fact_id: str, document: Any, metadata: Any) -> tuple[Fact, bool, str | None]:
    """A row as a ``Fact`` (raises on anything that does not parse), whether its record is signed
    (False: written before records were signed, no ``record_sig`` key), and the store it names
    (None: written before stores had ids)."""
    meta = dict(metadata or {})
    if not isinstance(document, str):
        raise TypeError("its words are not text")
    fact = Fact(
        id=fact_id,
        text=document,
        confidence=float(meta.get("confidence", 0.0)),
        verified=bool(meta.get("verified", False)),
        learned_at=datetime.fromisoformat(str(meta["learned_at"])),
        run_id=str(meta.get("run_id", "")),
        task=str(meta.get("task", "")),
        confirmations=int(meta.get("confirmations", 1)),
        provenance=[
            FactProvenance.model_validate(p) for p in json.loads(str(meta.get("provenance") or "[]"))
        ],
        status=meta.get("status") if meta.get("status") in ("accepted", "rejected") else "proposed",
        derived_from=[str(s) for s in json.loads(str(meta.get("derived_from") or "[]"))],
        decided_by=str(meta.get("decided_by") or "") or None,
        decided_at=datetime.fromisoformat(str(meta["decided_at"])) if meta.get("decided_at") else None,
        seal=str(meta.get("seal") or ""),
        decider_credential=str(meta.get("decider_credential") or "") or None,
        submitted_by=str(meta.get("submitted_by") or "") or None,
        record_sig=str(meta.get("record_sig") or ""),
    )
    return fact, "record_sig" in meta, str(meta["store"]) if "store" in meta else None
