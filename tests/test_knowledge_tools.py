"""The CrewAI tools search_procedures and recall_facts: cited, bounded snippets; clear failures."""

from __future__ import annotations

import pytest
from fixtures_knowledge import FakeVerdict
from pydantic import ValidationError

from taskcrew.knowledge import FactGrant, KnowledgeStore
from taskcrew.knowledge.retrieval import RESULT_CHARS, SNIPPET_CHARS, recall_facts, search_procedures
from taskcrew.tools.base import MAX_TEXT
from taskcrew.tools.knowledge import (
    RecallFactsTool,
    SearchProceduresArgs,
    SearchProceduresTool,
)


def test_search_procedures_tool_returns_cited_bounded_snippets(handbooks_store: KnowledgeStore) -> None:
    tool = SearchProceduresTool(store=handbooks_store)
    assert tool.name == "search_procedures"
    text = tool.run(query="the invoice shows only Net 30, which due date do I enter", k=3)
    assert text.count("[company_context.md § ") == 3
    assert "1.8 Computing the due date from payment terms" in text
    assert len(text) <= MAX_TEXT
    result = search_procedures(handbooks_store, "vendor onboarding and bank details", k=8)
    assert result.ok and all(len(s.text) <= SNIPPET_CHARS for s in result.data.snippets)
    assert 4 <= len(result.data.snippets) <= 8 and len(result.data.render()) <= RESULT_CHARS + SNIPPET_CHARS


def test_tool_arguments_are_validated() -> None:
    with pytest.raises(ValidationError):
        SearchProceduresArgs(query="x", k=3)
    with pytest.raises(ValidationError):
        SearchProceduresArgs(query="credit notes", k=50)


def test_search_on_an_empty_store_is_a_clear_failure(knowledge_store: KnowledgeStore) -> None:
    result = search_procedures(knowledge_store, "credit notes", 3)
    assert not result.ok and "taskcrew knowledge ingest" in (result.error or "")
    assert SearchProceduresTool(store=knowledge_store).run(query="credit notes").startswith("ERROR:")
    assert not search_procedures(knowledge_store, "   ", 3).ok


def test_recall_facts_tool_cites_the_run_and_ignores_unrelated_facts(knowledge_store: KnowledgeStore) -> None:
    tool = RecallFactsTool(store=knowledge_store)
    assert "No learned fact matches" in tool.run(query="ERP session expiry")
    grant = FactGrant.from_verdict(FakeVerdict(verified=True, run_id="run-7"), sources=["ask_user"])
    fact = knowledge_store.facts.learn(grant, "The ERP session expires silently on the first save.", 0.8).fact
    text = tool.run(query="what happens when the ERP session expires", k=3)
    assert fact.id in text and "run-7" in text and "confidence 0.80" in text
    unrelated = recall_facts(knowledge_store, "dental x-ray safety for pregnant patients", 3)
    assert unrelated.ok and unrelated.data.facts == []
