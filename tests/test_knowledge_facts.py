"""Learned facts: only a verified run may write; provenance, search, forget, near-duplicate merge."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fixtures_knowledge import FakeVerdict

from taskcrew.approvals.identity import Identity
from taskcrew.knowledge import (
    FactGrant,
    GrantExhaustedError,
    KnowledgeStore,
    MiniLMEmbedder,
    UnverifiedRunError,
)
from taskcrew.knowledge.facts import compatible, words_of

ALICE = Identity(name="alice", proof="os_user")
SESSION_FACT = "The ERP session can expire silently after saving; log in again and re-enter the form."


def _grant(run_id: str = "run-1", task: str = "Enter the latest Northwind invoice.") -> FactGrant:
    # a run that only asked a person: its facts are accepted (see test_knowledge_trust.py)
    return FactGrant.from_verdict(FakeVerdict(verified=True, run_id=run_id, task=task), sources=["ask_user"])


def test_a_run_that_was_not_verified_cannot_get_a_grant() -> None:
    with pytest.raises(UnverifiedRunError, match="Only a verified run"):
        FactGrant.from_verdict(FakeVerdict(verified=False))


def test_a_grant_cannot_be_forged() -> None:
    with pytest.raises(TypeError, match="from_verdict"):
        FactGrant(run_id="run-1", task="t", max_facts=3)
    with pytest.raises(ValueError, match="run_id"):
        FactGrant.from_verdict(FakeVerdict(verified=True, run_id=" "))


def test_learning_needs_a_grant(knowledge_store: KnowledgeStore) -> None:
    with pytest.raises(TypeError, match="FactGrant"):
        knowledge_store.facts.learn(FakeVerdict(verified=True), SESSION_FACT)  # type: ignore[arg-type]
    assert knowledge_store.facts.count() == 0


def test_a_fact_keeps_its_provenance(knowledge_store: KnowledgeStore) -> None:
    before = datetime.now(UTC)
    outcome = knowledge_store.facts.learn(
        _grant("run-42", "Enter Initech's newest invoice."), SESSION_FACT, 0.8
    )
    assert outcome.action == "added"
    [fact] = knowledge_store.facts.all()
    assert fact == outcome.fact
    assert (fact.text, fact.run_id, fact.task) == (SESSION_FACT, "run-42", "Enter Initech's newest invoice.")
    assert fact.confidence == 0.8 and fact.verified and fact.confirmations == 1
    assert before <= fact.learned_at <= datetime.now(UTC)
    assert [p.run_id for p in fact.provenance] == ["run-42"]
    assert knowledge_store.facts.get(fact.id) == fact


def test_facts_are_searched_and_forgotten_by_id(knowledge_store: KnowledgeStore) -> None:
    grant = _grant()
    session = knowledge_store.facts.learn(grant, SESSION_FACT).fact
    terms = knowledge_store.facts.learn(
        grant, "Northwind Traders invoices print only Net 30 terms, no due date."
    ).fact
    assert (
        knowledge_store.facts.search("what happens when I get logged out of the ERP", k=1)[0].fact.id
        == session.id
    )
    assert knowledge_store.facts.search("Northwind payment terms", k=1)[0].fact.id == terms.id
    assert knowledge_store.facts.forget(session.id) == session
    assert [f.id for f in knowledge_store.facts.all()] == [terms.id]
    assert knowledge_store.facts.forget(session.id) is None
    assert knowledge_store.facts.get(session.id) is None


def test_a_near_duplicate_is_merged_with_both_provenances(knowledge_store: KnowledgeStore) -> None:
    first = knowledge_store.facts.learn(_grant("run-1"), SESSION_FACT, 0.6).fact
    paraphrase = "The ERP session may expire silently after a save: log in again and re-enter the form."
    outcome = knowledge_store.facts.learn(_grant("run-2", "Enter Globex's invoice."), paraphrase, 0.9)
    assert outcome.action == "merged" and outcome.similarity is not None and outcome.similarity > 0.85
    [fact] = knowledge_store.facts.all()
    assert fact.id == first.id and fact.text == SESSION_FACT
    assert fact.confirmations == 2 and fact.confidence == 0.9
    assert [(p.run_id, p.task) for p in fact.provenance] == [
        ("run-1", "Enter the latest Northwind invoice."),
        ("run-2", "Enter Globex's invoice."),
    ]
    # the same run saying it again is recorded but is not a second confirmation
    again = knowledge_store.facts.learn(_grant("run-2"), SESSION_FACT)
    assert again.action == "merged" and again.fact.confirmations == 2 and len(again.fact.provenance) == 3


def test_facts_that_differ_in_numbers_or_names_are_kept_apart(knowledge_store: KnowledgeStore) -> None:
    grant = _grant(task="Enter invoices.")
    knowledge_store.facts.learn(grant, "Northwind Traders invoices print only Net 30 terms.")
    assert (
        knowledge_store.facts.learn(grant, "Northwind Traders invoices print only Net 45 terms.").action
        == "added"
    )
    assert knowledge_store.facts.learn(grant, "Initech invoices print only Net 30 terms.").action == "added"
    assert knowledge_store.facts.count() == 3
    assert compatible(
        "The ERP returns HTTP 503 on the second save.", "The ERP answers 503 on the second save."
    )
    assert not compatible("Invoice GX-5531 is in the ERP.", "Invoice GX-5540 is in the ERP.")


def test_a_grant_allows_three_facts(knowledge_store: KnowledgeStore) -> None:
    grant = _grant()
    for text in ("Fact one about vendors.", "Fact two about the ERP 2.", "Fact three about dates 3."):
        knowledge_store.facts.learn(grant, text)
    assert grant.remaining == 0
    with pytest.raises(GrantExhaustedError):
        knowledge_store.facts.learn(grant, "A fourth fact 4.")
    assert knowledge_store.facts.count() == 3


@pytest.mark.parametrize(("text", "confidence"), [("   ", 0.5), ("x" * 401, 0.5), ("A fact.", 1.5)])
def test_bad_facts_are_refused(knowledge_store: KnowledgeStore, text: str, confidence: float) -> None:
    with pytest.raises(ValueError):
        knowledge_store.facts.learn(_grant(), text, confidence)
    assert knowledge_store.facts.count() == 0


def test_facts_persist(tmp_path: Path, knowledge_embedder: MiniLMEmbedder) -> None:
    KnowledgeStore(tmp_path / "s", knowledge_embedder).facts.learn(_grant(), SESSION_FACT)
    [fact] = KnowledgeStore(tmp_path / "s", knowledge_embedder).facts.all()
    assert fact.text == SESSION_FACT and fact.provenance[0].run_id == "run-1"


def test_the_same_fact_in_other_case_merges_and_keeps_a_persons_decision(
    knowledge_store: KnowledgeStore,
) -> None:
    """Fact ids are made from the lower-cased text; a case variant whose capitals make its key words
    differ ("Bob" / "BOB") was written over the stored fact: an accepted one lost its acceptance and
    history, a rejected one came back accepted. It is merged into the stored one now."""
    facts = knowledge_store.facts
    good = "Pay Acme invoices to the bank account ending 4411 only after bob confirms."

    def grant(run_id: str, sources: list[str]) -> FactGrant:
        return FactGrant.from_verdict(FakeVerdict(verified=True, run_id=run_id), sources=sources)

    accepted = facts.learn(grant("run-1", ["read_file"]), good).fact
    facts.decide(accepted.id, True, ALICE, words_of(accepted.text))
    out = facts.learn(
        grant("run-evil", ["browser_observe"]),
        "pay acme invoices to the bank account ending 4411 only after BOB confirms.",
    )
    assert (out.action, out.fact.id) == ("merged", accepted.id)
    kept = facts.get(accepted.id)
    assert kept is not None and (kept.status, kept.decided_by, kept.text) == ("accepted", "os:alice", good)
    assert [p.run_id for p in kept.provenance] == ["run-1", "run-evil"] and facts.count() == 1

    rejected = facts.learn(
        grant("run-2", ["read_file"]), "Vandelay Industries bills need no approval from bob."
    ).fact
    facts.decide(rejected.id, False, ALICE)
    facts.learn(grant("run-3", ["ask_user"]), "vandelay industries bills need no approval from Bob.")
    again = facts.get(rejected.id)
    assert again is not None and again.status == "rejected"
