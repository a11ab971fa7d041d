"""CrewAI tools over the knowledge store: search_procedures and recall_facts.

Thin edges: each ``_run`` calls the plain logic in taskcrew.knowledge.retrieval and returns
``ToolResult.to_text()`` (short cited snippets, bounded in size). Build them with the run's store:

    SearchProceduresTool(store=store), RecallFactsTool(store=store)
"""

from __future__ import annotations

from typing import Any

from crewai.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr

from taskcrew.knowledge.retrieval import MAX_K, recall_facts, search_procedures
from taskcrew.knowledge.store import KnowledgeStore


class SearchProceduresArgs(BaseModel):
    query: str = Field(
        min_length=2,
        max_length=500,
        description="What you need to know, in plain words (e.g. 'due date when only payment terms are given').",
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

    def __init__(self, store: KnowledgeStore, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._store = store

    def _run(self, query: str, k: int = 4) -> str:
        return search_procedures(self._store, query, k).to_text()


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
