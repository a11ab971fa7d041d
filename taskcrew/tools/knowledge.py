"""CrewAI tools over the knowledge store: search_procedures and recall_facts.

Thin edges: each ``_run`` calls the plain logic in taskcrew.knowledge.retrieval and returns
``ToolResult.to_text()`` (short cited snippets, bounded in size). Build them with the run's store:

    SearchProceduresTool(store=store), RecallFactsTool(store=store)

A run started with TASKCREW_RERANK=1 gives search_procedures the worker model as its reranker
(``rerank_with``; crew/run.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from crewai.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr, StringConstraints

from taskcrew.knowledge.procedures import MAX_ALSO
from taskcrew.knowledge.questions import Ask
from taskcrew.knowledge.retrieval import MAX_K, recall_facts, search_procedures
from taskcrew.knowledge.store import KnowledgeStore


class SearchProceduresArgs(BaseModel):
    query: str = Field(
        min_length=2,
        max_length=500,
        description="What you need to know, in plain words (e.g. 'due date when only payment terms are given').",
    )
    also: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=200)]] = (
        Field(
            default_factory=list,
            max_length=MAX_ALSO,
            description=(
                "Other ways the documents may name the same need: the accounting or business term for it, or the "
                "usual name of the feature, screen or procedure (e.g. for 'a colleague has left the company' also "
                "['employee offboarding', 'revoke user access']). Each is searched with the query and the results "
                "merged, the query counting double. Give only phrasings you are fairly sure of (a wrong term pulls "
                "in wrong passages), as general terms unless the documents' product is known; the same need, not "
                "neighbouring topics. Leave it empty when the query already uses those words."
            ),
        )
    )
    k: int = Field(4, ge=1, le=MAX_K, description="How many passages to return.")


class RecallFactsArgs(BaseModel):
    query: str = Field(min_length=2, max_length=500, description="The topic to recall learned facts about.")
    k: int = Field(3, ge=1, le=MAX_K, description="How many facts to return at most.")


class SearchProceduresTool(BaseTool):
    name: str = "search_procedures"
    description: str = (
        "Search the company's handbook and procedure documents. Returns the passages that answer the "
        "query, each cited as 'file § section'. Use it to learn what a short request leaves unstated "
        "(how to enter data, formats, what to check first, when to ask a human)."
    )
    args_schema: type[BaseModel] = SearchProceduresArgs
    _store: KnowledgeStore = PrivateAttr()
    _rerank: Ask | None = PrivateAttr(default=None)

    def __init__(self, store: KnowledgeStore, rerank: Ask | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._store = store
        self._rerank = rerank

    def rerank_with(self, ask: Ask | None) -> None:
        """A model picks among the store's best passages for each search (knowledge/rerank.py)."""
        self._rerank = ask

    def _run(self, query: str, k: int = 4, also: list[str] | None = None) -> str:
        return search_procedures(self._store, query, k, also or (), self._rerank).to_text()


class RecallFactsTool(BaseTool):
    name: str = "recall_facts"
    description: str = (
        "Recall durable facts that earlier verified runs learned (quirks of systems, vendors, documents), "
        "each with the run that learned it and a confidence. Returns nothing when no fact is related."
    )
    args_schema: type[BaseModel] = RecallFactsArgs
    _store: KnowledgeStore = PrivateAttr()

    def __init__(self, store: KnowledgeStore, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._store = store

    def _run(self, query: str, k: int = 3) -> str:
        return recall_facts(self._store, query, k).to_text()
