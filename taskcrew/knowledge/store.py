"""The knowledge store: one persistent chroma directory.

``procedures`` holds chunks of company documents, ``facts`` what verified runs learned
(``sections`` and ``questions`` serve the ranking). The store
owns the chroma client; the embedder is injected (load it once per process and share it).
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field

from taskcrew.knowledge.changes import ChangeMark, LiveCollections
from taskcrew.knowledge.chunking import ChunkingConfig
from taskcrew.knowledge.embedder import MiniLMEmbedder
from taskcrew.knowledge.facts import FactBook, Keys
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

    def __init__(
        self,
        directory: Path,
        embedder: MiniLMEmbedder,
        config: StoreConfig | None = None,
        keys: Keys | None = None,
    ) -> None:
        """``keys`` seal accepted facts (default: the operator's key ring, ``KeyRing.default()``)."""
        config = config or StoreConfig()
        self.directory = directory
        self.embedder = embedder
        directory.mkdir(parents=True, exist_ok=True)
        self._open = _open(directory, embedder)  # reopened after another process's write
        self._live = self._open.live
        marks = self._live.marks
        self.questions = QuestionBook(self._live.collection(QUESTIONS), marks[QUESTIONS])
        vocabulary = WordVectors(directory / FILE_NAME, embedder)
        self.procedures = ProcedureLibrary(
            self._live.collection(PROCEDURES),
            embedder,
            config.chunking,
            config.ranking,
            self._live.collection(SECTIONS),
            vocabulary,
            self.questions,
            marks[PROCEDURES],
        )
        self.facts = FactBook(
            self._live.collection(FACTS), merge_similarity=config.fact_merge_similarity, keys=keys
        )

    @property
    def _client(self) -> Any:
        """The chroma client this process has open on the directory (benchmarks read it)."""
        self._live.current(PROCEDURES)
        return self._open.chroma.client

    def is_empty(self) -> bool:
        return self.procedures.count() == 0


class _Open:
    """A store directory as this process has it open: its chroma client and live collections."""

    def __init__(self, directory: Path, embedder: MiniLMEmbedder) -> None:
        chunks = ChangeMark(directory / "procedures.changed")  # the chunks and their sections' names
        marks = {
            PROCEDURES: chunks,
            SECTIONS: chunks,
            QUESTIONS: ChangeMark(directory / "questions.changed"),
            FACTS: ChangeMark(directory / "facts.changed"),
        }
        self.chroma = _Chroma(directory, embedder)
        self.live = LiveCollections(self.chroma.open_all, marks)


_OPEN: weakref.WeakValueDictionary[Path, _Open] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()


def _open(directory: Path, embedder: MiniLMEmbedder) -> _Open:
    """One open per store directory in a process, shared by every store object on it: when
    another process writes, one chroma client is closed and one reopened (a client per store
    object would leave each stale one's memory behind, ~4 MB)."""
    key = directory.resolve()
    with _OPEN_LOCK:
        opened = _OPEN.get(key)
        if opened is None:
            opened = _OPEN[key] = _Open(directory, embedder)
        return opened


def _close_clients(held: list[Any]) -> None:
    from chromadb.api.shared_system_client import SharedSystemClient

    while held:
        client = held.pop()
        client.close()  # stops chroma's instance for the directory when nothing else holds it
        # held elsewhere too (another client made on the directory): still not handed back stale
        SharedSystemClient._identifier_to_system.pop(client._identifier, None)


class _Chroma:
    """The chroma client on one directory; each ``open_all`` after the first closes the last one."""

    def __init__(self, directory: Path, embedder: MiniLMEmbedder) -> None:
        self.directory = directory
        self.embedder = embedder
        self.client: Any = None
        # the open client is closed when nothing uses this directory any more: chroma's shared
        # cache keeps every client's files open for the process's life (a sweep seeds a store per
        # run: ~10 descriptors each, until the process ran out)
        self._held: list[Any] = []
        weakref.finalize(self, _close_clients, self._held)

    def open_all(self) -> dict[str, Any]:
        import chromadb
        from chromadb.config import Settings

        self.client = None
        _close_clients(self._held)
        self.client = chromadb.PersistentClient(
            path=str(self.directory), settings=Settings(anonymized_telemetry=False, allow_reset=False)
        )
        self._held.append(self.client)
        space: Any = {"hnsw": {"space": "cosine"}}
        function = cast(Any, self.embedder)  # chroma's generic EmbeddingFunction type is invariant
        return {
            name: self.client.get_or_create_collection(name, embedding_function=function, configuration=space)
            for name in (PROCEDURES, FACTS, SECTIONS, QUESTIONS)
        }
