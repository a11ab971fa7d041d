"""The knowledge store: one persistent chroma directory.

``procedures`` holds chunks of company documents, ``facts`` what verified runs learned
(``sections`` and ``questions`` serve the ranking). The store
owns the chroma client; the embedder is injected (load it once per process and share it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field

from taskcrew.knowledge.chunking import ChunkingConfig
from taskcrew.knowledge.embedder import MiniLMEmbedder
from taskcrew.knowledge.facts import FactBook
from taskcrew.knowledge.procedures import ProcedureLibrary, RankingConfig
from taskcrew.knowledge.questions import QUESTIONS, QuestionBook
from taskcrew.knowledge.vocabulary import FILE_NAME, WordVectors

PROCEDURES = "procedures"
FACTS = "facts"
SECTIONS = "sections"  # one vector per distinct section name (title > heading path)


class StoreConfig(BaseModel):
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    ranking: RankingConfig = Field(default_factory=RankingConfig)
    fact_merge_similarity: float = Field(
        0.85, ge=0.0, le=1.0, description="Cosine similarity at which a new fact merges into a stored one."
    )


class KnowledgeStore:
    """Company procedures and learned facts in a chroma directory.

    ``store.procedures`` ingests and searches documents; ``store.facts`` lists, searches, forgets
    and (with a ``FactGrant``) learns facts.
    """

    def __init__(self, directory: Path, embedder: MiniLMEmbedder, config: StoreConfig | None = None) -> None:
        import chromadb
        from chromadb.config import Settings

        config = config or StoreConfig()
        self.directory = directory
        self.embedder = embedder
        directory.mkdir(parents=True, exist_ok=True)
        self._client = chromadb.PersistentClient(
            path=str(directory), settings=Settings(anonymized_telemetry=False, allow_reset=False)
        )
        space: Any = {"hnsw": {"space": "cosine"}}
        function = cast(Any, embedder)  # chroma's generic EmbeddingFunction type is invariant
        procedures = self._client.get_or_create_collection(
            PROCEDURES, embedding_function=function, configuration=space
        )
        facts = self._client.get_or_create_collection(FACTS, embedding_function=function, configuration=space)
        sections = self._client.get_or_create_collection(
            SECTIONS, embedding_function=function, configuration=space
        )
        self.questions = QuestionBook(
            self._client.get_or_create_collection(QUESTIONS, embedding_function=function, configuration=space)
        )
        vocabulary = WordVectors(directory / FILE_NAME, embedder)
        self.procedures = ProcedureLibrary(
            procedures, embedder, config.chunking, config.ranking, sections, vocabulary, self.questions
        )
        self.facts = FactBook(facts, merge_similarity=config.fact_merge_similarity)

    def is_empty(self) -> bool:
        return self.procedures.count() == 0
