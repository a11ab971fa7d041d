"""The crew's view of the knowledge store: a brief for the planner, and the reflector's writes."""

from __future__ import annotations

from typing import Any

from taskcrew.crew.context import KnowledgeContext
from taskcrew.knowledge import FactGrant, KnowledgeStore, knowledge_for_task
from taskcrew.knowledge.questions import Ask


class StoreKnowledge:
    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store
        self.rerank: Ask | None = None

    def rerank_with(self, ask: Ask | None) -> None:
        """A model picks the brief's procedures among the store's best (knowledge/rerank.py)."""
        self.rerank = ask

    def context_for(self, task: str) -> KnowledgeContext:
        brief = knowledge_for_task(self.store, task, rerank=self.rerank)
        procedures = [p.render() for p in brief.procedures]
        return KnowledgeContext(
            procedures=procedures, facts=[f.render() for f in brief.facts], related=list(brief.related)
        )

    def known_facts(self) -> list[str]:
        return [fact.text for fact in self.store.facts.all(status="accepted")]

    def learn(self, facts: list[str], verdict: Any, sources: list[str] | None = None) -> list[str]:
        """Store facts under a grant that only a verified verdict can issue (else it raises).

        ``sources``: the tools whose results the run read; facts of a run that read untrusted text
        (or whose sources are unknown) are stored as proposals for a person to accept.
        """
        grant = FactGrant.from_verdict(
            verdict, sources=sources, submitted_by=getattr(verdict, "submitted_by", None)
        )
        outcomes = [self.store.facts.learn(grant, text) for text in facts[: grant.remaining]]
        return [f"{o.action} {o.fact.id} ({o.fact.status})" for o in outcomes]
