"""The ``procedures`` collection: ingest company documents and rank their chunks for a query."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from taskcrew.knowledge.chunking import ChunkingConfig, UnreadableFile
from taskcrew.knowledge.embedder import MiniLMEmbedder
from taskcrew.knowledge.folders import collect
from taskcrew.knowledge.lexical import Bm25Index, reciprocal_rank_fusion
from taskcrew.knowledge.models import (
    HEADING_SEPARATOR,
    Chunk,
    FileIngest,
    IngestReport,
    ProcedureHit,
    Ranking,
)
from taskcrew.knowledge.streaming import chunk_passes

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

WRITE_BATCH = 128  # chunks embedded and written per Chroma upsert
OnFile = Callable[[FileIngest], None]
OnChunks = Callable[[Path, int, int], None]  # (file, chunks embedded so far, chunks to embed)
_Entry = tuple[Any, dict[str, Any]]  # (stored document, metadata)
_Scored = tuple[str, float, _Entry]  # (chunk id, score, entry)


class RankingConfig(BaseModel):
    """How chunks are ranked (figures for each choice: docs/knowledge.md).

    hybrid: cosine similarity + ``bm25_weight`` x BM25 score (normalised to the query's best),
    over the union of both rankers' candidates. rrf: reciprocal rank fusion of the two lists.
    """

    ranking: Ranking = "hybrid"
    candidates: int = Field(30, ge=1, description="Hits each ranker contributes before fusion.")
    bm25_weight: float = Field(0.1, ge=0.0, description="Weight of the normalised BM25 score (hybrid).")
    rrf_k: int = Field(60, ge=1, description="The k of reciprocal rank fusion (rrf).")


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files to ingest: folders are walked for supported files (links out of them refused, see
    folders.py); named files are kept as given."""
    return collect(paths).files


class _Corpus:
    """All chunk texts and metadata in memory with a BM25 index over them; rebuilt when the
    collection changes."""

    def __init__(self, got: Any) -> None:
        ids = list(got["ids"])
        documents = list(got["documents"] or [])
        self.entries: dict[str, _Entry] = {
            i: (d, dict(m)) for i, d, m in zip(ids, documents, got["metadatas"] or [], strict=True)
        }
        self.bm25 = Bm25Index(ids, documents)


class ProcedureLibrary:
    """Chunks of company documents in one chroma collection, searchable by hybrid ranking."""

    def __init__(
        self,
        collection: Collection,
        embedder: MiniLMEmbedder,
        chunking: ChunkingConfig | None = None,
        ranking: RankingConfig | None = None,
    ) -> None:
        self._collection = collection
        self._embedder = embedder
        self._chunking = chunking or ChunkingConfig()
        self._ranking = ranking or RankingConfig()
        self._lock = threading.Lock()
        self._corpus: _Corpus | None = None
        self._corpus_size = -1

    def count(self) -> int:
        return self._collection.count()

    def sections(self, source: str) -> list[list[str]]:
        """The distinct heading paths of one source file, in document order."""
        corpus = self._current_corpus(self.count())
        entries = sorted(
            (int(meta.get("ordinal", 0)), json.loads(str(meta.get("heading_path") or "[]")))
            for _, meta in corpus.entries.values()
            if meta.get("source") == source
        )
        out: list[list[str]] = []
        for _, path in entries:
            if path not in out:
                out.append(path)
        return out

    def sources(self) -> list[str]:
        metadatas = self._collection.get(include=["metadatas"])["metadatas"] or []
        return sorted({str(m["source"]) for m in metadatas})

    # -- ingest ----------------------------------------------------------------------------------
    def ingest(
        self, paths: Sequence[Path], on_file: OnFile | None = None, on_chunks: OnChunks | None = None
    ) -> IngestReport:
        """Ingest files and folders; one bad file is reported and skipped, the rest go on.
        ``on_chunks`` hears about each batch embedded (progress within a large file)."""
        started = time.perf_counter()
        report = IngestReport()
        collected = collect(paths)
        for refused in collected.refused:
            result = FileIngest(path=refused.path, status="skipped", message=refused.message)
            report.files.append(result)
            if on_file is not None:
                on_file(result)
        for path in collected.files:
            result = self.ingest_file(path, on_chunks)
            report.files.append(result)
            if on_file is not None:
                on_file(result)
        report.seconds = time.perf_counter() - started
        return report

    def ingest_file(self, path: Path, on_chunks: OnChunks | None = None) -> FileIngest:
        """Add a file's chunks; unchanged chunks are kept, stale ones removed, new ones embedded.

        The file is streamed (``knowledge/streaming.py``): a first pass checks it, a second counts
        its chunks and finds the new ones, a third embeds and writes those ``WRITE_BATCH`` at a
        time, so memory does not grow with the file. Chunks are written before stale ones are
        deleted: an interrupted ingest leaves the store searchable (old chunks plus the new ones
        written so far), and running it again embeds only the chunks not yet written.
        """
        try:
            passes = chunk_passes(path, self._chunking)
            source = str(path.resolve())
            existing = set(self._collection.get(where={"source": source}, include=[])["ids"])
            wanted: set[str] = set()
            todo = 0
            for chunk in passes():
                wanted.add(chunk.id)
                todo += chunk.id not in existing
        except UnreadableFile as exc:
            return FileIngest(path=str(path), status="skipped", message=str(exc))
        if existing == wanted:
            return FileIngest(path=str(path), status="unchanged", chunks=len(wanted))
        stale = sorted(existing - wanted)
        added = 0
        with self._lock:
            try:
                batch: list[Chunk] = []
                for chunk in passes() if todo else ():
                    if chunk.id in existing:
                        continue
                    batch.append(chunk)
                    if len(batch) == WRITE_BATCH:
                        self.add_chunks(batch)
                        added += len(batch)
                        batch = []
                        if on_chunks is not None:
                            on_chunks(path, added, todo)
                if batch:
                    self.add_chunks(batch)
                    added += len(batch)
                    if on_chunks is not None:
                        on_chunks(path, added, todo)
                if stale:
                    self._collection.delete(ids=stale)
            except UnreadableFile as exc:  # it changed since the first passes
                return FileIngest(
                    path=str(path), status="skipped", chunks=added, added=added, message=str(exc)
                )
            finally:
                self._corpus = None
        return FileIngest(
            path=str(path),
            status="replaced" if existing else "added",
            chunks=len(wanted),
            added=added,
            removed=len(stale),
        )

    def add_chunks(
        self, chunks: Sequence[Chunk], batch: int = WRITE_BATCH, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Embed and write chunks (upsert by id), ``batch`` at a time so memory stays bounded by
        the batch, not the file. Used by ingest and by the benchmarks."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            self._collection.upsert(
                ids=[c.id for c in part],
                documents=[c.embed_text() for c in part],
                metadatas=[_metadata(c, now) for c in part],
            )
            if on_batch is not None:
                on_batch(start + len(part))
        self._corpus = None

    # -- search ----------------------------------------------------------------------------------
    def search(self, query: str, k: int = 4, ranking: Ranking | None = None) -> list[ProcedureHit]:
        """The ``k`` chunks that best answer ``query``, best first."""
        query = query.strip()
        size = self.count()
        if not query or size == 0 or k < 1:
            return []
        mode = ranking or self._ranking.ranking
        n = min(size, max(self._ranking.candidates, k))
        if mode == "vector":
            return self._rank(self._vector(query, n), k)
        corpus = self._current_corpus(size)
        lexical = corpus.bm25.rank(query, n)
        if mode == "bm25":
            return self._rank([(i, s, corpus.entries[i]) for i, s in lexical], k)
        query_vector = self._embedder.embed([query])[0]
        vector = self._vector(query_vector, n)
        if mode == "rrf":
            fused = reciprocal_rank_fusion(
                [[i for i, _, _ in vector], [i for i, _ in lexical]], k=self._ranking.rrf_k
            )
            return self._rank([(i, s, corpus.entries[i]) for i, s in fused], k)
        return self._rank(self._blend(query_vector, vector, lexical, corpus), k)

    def _blend(
        self,
        query_vector: np.ndarray,
        vector: list[_Scored],
        lexical: list[tuple[str, float]],
        corpus: _Corpus,
    ) -> list[_Scored]:
        """Cosine + weight x normalised BM25 for every candidate of either ranker."""
        cosine = {i: s for i, s, _ in vector}
        missing = [i for i, _ in lexical if i not in cosine]
        if missing:  # BM25 candidates outside the vector top n: their cosine from their stored vectors
            got = self._collection.get(ids=missing, include=["embeddings"])
            vectors = np.asarray(got["embeddings"], dtype=np.float32).reshape(len(got["ids"]), -1)
            cosine.update(zip(got["ids"], (vectors @ query_vector).tolist(), strict=True))
        best = lexical[0][1] if lexical else 1.0
        lexical_score = {i: s / best for i, s in lexical}
        weight = self._ranking.bm25_weight
        blended = [(i, c + weight * lexical_score.get(i, 0.0), corpus.entries[i]) for i, c in cosine.items()]
        return sorted(blended, key=lambda item: -item[1])

    def _vector(self, query: str | np.ndarray, n: int) -> list[_Scored]:
        include: Any = ["documents", "metadatas", "distances"]
        if isinstance(query, str):
            result = self._collection.query(query_texts=[query], n_results=n, include=include)
        else:
            result = self._collection.query(query_embeddings=[query], n_results=n, include=include)
        return [
            (i, 1.0 - float(dist), (d, dict(m)))
            for i, d, m, dist in zip(
                result["ids"][0],
                (result["documents"] or [[]])[0],
                (result["metadatas"] or [[]])[0],
                (result["distances"] or [[]])[0],
                strict=True,
            )
        ]

    @staticmethod
    def _rank(scored: list[_Scored], k: int) -> list[ProcedureHit]:
        return [_hit(i, entry, rank, score) for rank, (i, score, entry) in enumerate(scored[:k], 1)]

    def _current_corpus(self, size: int) -> _Corpus:
        with self._lock:
            if self._corpus is None or self._corpus_size != size:
                self._corpus = _Corpus(self._collection.get(include=["documents", "metadatas"]))
                self._corpus_size = size
            return self._corpus


def _metadata(chunk: Chunk, ingested_at: str) -> dict[str, str | int]:
    return {
        "source": chunk.source,
        "heading_path": json.dumps(chunk.heading_path, ensure_ascii=False),
        "kind": chunk.kind,
        "ordinal": chunk.ordinal,
        "file_sha256": chunk.file_sha256,
        "ingested_at": ingested_at,
    }


def _hit(chunk_id: str, entry: _Entry, rank: int, score: float) -> ProcedureHit:
    document, metadata = entry
    heading_path = json.loads(str(metadata.get("heading_path") or "[]"))
    text = str(document or "")
    if heading_path:
        head, _, body = text.partition("\n")
        text = body if head == HEADING_SEPARATOR.join(heading_path) else text
    return ProcedureHit(
        id=chunk_id,
        rank=rank,
        score=score,
        source=str(metadata.get("source", "")),
        heading_path=heading_path,
        text=text,
    )
