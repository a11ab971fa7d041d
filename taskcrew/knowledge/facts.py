"""The ``facts`` collection: short durable statements learned by verified runs, with provenance.

Writing needs a ``FactGrant`` (see grant.py). A new fact that says the same as a stored one is
merged into it: the stored wording stays, the new run is appended to its provenance and counted
as a confirmation. "The same" means cosine similarity at or above the merge threshold AND no
conflicting key tokens (numbers, codes, names): the embedding alone rates "Net 30" vs "Net 45"
or "GX-5531" vs "GX-5540" at 0.96-0.98, so the key tokens of one fact must be a subset of the
other's (measured figures: docs/knowledge.md).

A fact taught by a run that read untrusted text (see ``grant.untrusted_sources``) is stored as
``proposed``; only ``accepted`` facts are returned by ``search`` (what the planner, the tools and
the reflector read) unless a caller asks for every status. A person accepts or rejects with
``decide``. A fact stored before statuses existed reads as proposed. A fact is only ever advice
in a prompt: nothing here feeds an approval rule.

"Accepted" is signed: the store seals an accepted fact (a person's decision, or a run that read only
trusted sources) with the operator's key (``approvals/signing.py``; ``acceptance`` is what is
signed: id, words, who decided, when, the run). A row written into the chroma directory by anything
else, an accepted fact whose words were edited afterwards, or one accepted before seals existed
reads as proposed: it reaches no planner until a person accepts it here.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from taskcrew.knowledge.grant import FactGrant
from taskcrew.knowledge.lexical import STOPWORDS
from taskcrew.knowledge.models import Fact, FactHit, FactProvenance, FactStatus, LearnOutcome

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from taskcrew.approvals.audit import AuditLog
    from taskcrew.approvals.identity import Identity

MAX_FACT_CHARS = 400
READ_BY_PLANNERS: FactStatus = "accepted"
_NUMBER_OR_CODE = re.compile(r"[A-Za-z]*\d[\w./-]*")
_NAME = re.compile(r"\b[A-Z][\w-]+")
_SPACE = re.compile(r"\s+")


class Keys(Protocol):
    """What signs and checks an acceptance (``approvals.signing.KeyRing``)."""

    def sign(self, payload: Any) -> str: ...

    def verify(self, payload: Any, signature: str | None) -> bool: ...


def acceptance(fact: Fact) -> dict[str, Any]:
    """What the seal of an accepted fact covers: which fact, its exact words, who accepted it and
    when (none: the run that taught it read only trusted sources), the run that taught it."""
    return {
        "seal": "fact_accepted",
        "id": fact.id,
        "text": fact.text,
        "decided_by": fact.decided_by or "",
        "decided_at": fact.decided_at.isoformat() if fact.decided_at else "",
        "run_id": fact.run_id,
    }


def _now() -> datetime:
    return datetime.now(UTC)


def key_tokens(text: str) -> frozenset[str]:
    """Numbers, codes and capitalised names (30, INV-2057, Northwind): what tells facts apart."""
    codes = {t.lower().rstrip(".") for t in _NUMBER_OR_CODE.findall(text)}
    names = {t.lower() for t in _NAME.findall(text) if t.lower() not in STOPWORDS}
    return frozenset(codes | names)


def compatible(a: str, b: str) -> bool:
    """True when neither fact names a number, code or name the other contradicts."""
    ka, kb = key_tokens(a), key_tokens(b)
    return ka <= kb or kb <= ka


class FactBook:
    """Learned facts: learn (with a grant), all, get, search, forget."""

    def __init__(
        self,
        collection: Collection,
        merge_similarity: float = 0.85,
        clock: Callable[[], datetime] = _now,
        keys: Keys | None = None,
    ) -> None:
        self._collection = collection
        self._merge_similarity = merge_similarity
        self._clock = clock
        self._keys = keys

    @property
    def keys(self) -> Keys:
        """The operator's key ring (``KeyRing.default()`` unless one was given); read on first use."""
        if self._keys is None:
            from taskcrew.approvals.signing import KeyRing

            self._keys = KeyRing.default()
        return self._keys

    def _sealed(self, fact: Fact) -> Fact:
        """``fact`` as stored: an accepted one carries the seal of its acceptance."""
        seal = self.keys.sign(acceptance(fact)) if fact.status == "accepted" else ""
        return fact.model_copy(update={"seal": seal})

    def _checked(self, fact: Fact) -> Fact:
        """``fact`` as read: "accepted" only under a seal that checks out, else a proposal."""
        if fact.status != "accepted" or self.keys.verify(acceptance(fact), fact.seal):
            return fact
        return fact.model_copy(update={"status": "proposed", "seal": ""})

    def _read(self, fact_id: str, document: Any, metadata: Any) -> Fact:
        return self._checked(_fact(fact_id, document, metadata))

    def count(self) -> int:
        return self._collection.count()

    def learn(self, grant: FactGrant, text: str, confidence: float = 0.7) -> LearnOutcome:
        """Store a fact for the grant's run, or merge it into a near-duplicate already stored."""
        if not isinstance(grant, FactGrant):
            raise TypeError("learn() needs a FactGrant from FactGrant.from_verdict(verdict).")
        text = _SPACE.sub(" ", text).strip()
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
        fact_id = "fact-" + hashlib.sha256(text.lower().encode()).hexdigest()[:12]
        same = self.get(fact_id)  # the same words in other case: never overwrite its status or history
        twin = (same, 1.0) if same is not None else self._near_duplicate(text)
        if twin is not None:
            fact, similarity = twin
            merged = _merge(fact, provenance, grant.untrusted)
            self._collection.update(ids=[fact.id], metadatas=[_metadata(merged)])
            return LearnOutcome(action="merged", fact=merged, similarity=similarity)
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
            status="proposed" if grant.proposes else "accepted",
            derived_from=list(grant.untrusted),
        )
        fact = self._sealed(fact)
        self._collection.add(ids=[fact.id], documents=[text], metadatas=[_metadata(fact)])
        return LearnOutcome(action="added", fact=fact)

    def all(self, status: FactStatus | None = None) -> list[Fact]:
        """All facts (or those with ``status``), oldest first."""
        got = self._collection.get(include=["documents", "metadatas"])
        facts = [
            self._read(i, d, m)
            for i, d, m in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
        ]
        return sorted(
            (f for f in facts if status is None or f.status == status), key=lambda f: (f.learned_at, f.id)
        )

    def decide(self, fact_id: str, accept: bool, by: str) -> Fact | None:
        """A person accepts or rejects a fact; returns it as stored now (None: no such fact)."""
        fact = self.get(fact_id)
        if fact is None:
            return None
        if not by.strip():
            raise ValueError("A decision on a fact names who made it.")
        decided = self._sealed(
            fact.model_copy(
                update={
                    "status": "accepted" if accept else "rejected",
                    "decided_by": by,
                    "decided_at": self._clock(),
                }
            )
        )
        self._collection.update(ids=[fact_id], metadatas=[_metadata(decided)])
        return decided

    def decide_as(self, fact_id: str, accept: bool, who: Identity, audit: AuditLog) -> Fact | None:
        """A person's decision on a fact, from any surface (the CLI, the console): made as ``who``,
        the surface's proven identity (recorded with the fact as "console:ana", "token:ana" or
        "os:ana"), and recorded in the signed audit log as ``fact_accept`` / ``fact_reject``."""
        label = {"console": "console", "token": "token"}.get(who.proof, "os")
        decided = self.decide(fact_id, accept, by=f"{label}:{who.name}")
        if decided is not None:
            action = "fact_accept" if accept else "fact_reject"
            audit.append(who.name, action, f"/facts/{fact_id}", {"text": decided.text, "proof": who.proof})
        return decided

    def get(self, fact_id: str) -> Fact | None:
        got = self._collection.get(ids=[fact_id], include=["documents", "metadatas"])
        if not got["ids"]:
            return None
        return self._read(got["ids"][0], (got["documents"] or [""])[0], (got["metadatas"] or [{}])[0])

    def search(
        self,
        query: str,
        k: int = 3,
        min_similarity: float = -1.0,
        status: FactStatus | None = READ_BY_PLANNERS,
    ) -> list[FactHit]:
        """The ``k`` facts most similar to ``query`` with at least ``min_similarity``, best first.

        Only accepted facts unless ``status`` says otherwise (None: every status).
        """
        size = self.count()
        if not query.strip() or size == 0 or k < 1:
            return []
        where: Any = {"status": status} if status is not None else None
        result = self._collection.query(
            query_texts=[query],
            n_results=min(k, size),
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        hits = [
            FactHit(fact=self._read(i, d, m), similarity=1.0 - float(dist))
            for i, d, m, dist in zip(
                result["ids"][0],
                (result["documents"] or [[]])[0],
                (result["metadatas"] or [[]])[0],
                (result["distances"] or [[]])[0],
                strict=True,
            )
        ]
        # a row that says accepted without a valid seal reads as proposed (``_checked``): not here
        return [
            h for h in hits if h.similarity >= min_similarity and (status is None or h.fact.status == status)
        ]

    def forget(self, fact_id: str) -> Fact | None:
        """Delete a fact; returns what was deleted, or None if there was no such fact."""
        fact = self.get(fact_id)
        if fact is not None:
            self._collection.delete(ids=[fact_id])
        return fact

    def _near_duplicate(self, text: str) -> tuple[Fact, float] | None:
        for hit in self.search(text, k=3, min_similarity=self._merge_similarity, status=None):
            if compatible(hit.fact.text, text):
                return hit.fact, hit.similarity
        return None


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


def _metadata(fact: Fact) -> dict[str, Any]:
    return {
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
    }


def _fact(fact_id: str, document: Any, metadata: Any) -> Fact:
    meta = dict(metadata or {})
    return Fact(
        id=fact_id,
        text=str(document or ""),
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
        derived_from=json.loads(str(meta.get("derived_from") or "[]")),
        decided_by=str(meta.get("decided_by") or "") or None,
        decided_at=datetime.fromisoformat(str(meta["decided_at"])) if meta.get("decided_at") else None,
        seal=str(meta.get("seal") or ""),
    )
