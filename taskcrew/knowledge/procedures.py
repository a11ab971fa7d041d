"""The ``procedures`` collection: ingest company documents and rank their chunks for a query."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import numpy as np
from pydantic import BaseModel, Field

from taskcrew.knowledge.changes import ChangeMark
from taskcrew.knowledge.chunking import CHUNKER_VERSION, ChunkingConfig, UnreadableFile, file_digest
from taskcrew.knowledge.embedder import MiniLMEmbedder
from taskcrew.knowledge.folders import Collected, collect
from taskcrew.knowledge.lexical import Bm25Index, reciprocal_rank_fusion
from taskcrew.knowledge.models import (
    HEADING_SEPARATOR,
    Chunk,
    FileIngest,
    IngestReport,
    ProcedureHit,
    Ranking,
    head_line,
    source_labels,
)
from taskcrew.knowledge.pipeline import batches, prefetch
from taskcrew.knowledge.questions import AskedQuestions, QuestionBook, section_digests
from taskcrew.knowledge.ranking import DenseIndex, Weights, ensure_sections, top
from taskcrew.knowledge.seen import seen
from taskcrew.knowledge.streaming import chunk_passes
from taskcrew.knowledge.vocabulary import Expander, WordVectors, content_words, corpus_vectors
from taskcrew.tools.documents.visibility import StylesTooComplex

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

RANKINGS: tuple[str, ...] = get_args(Ranking)
MAX_ALSO = 3  # other phrasings a search takes with its query
WRITE_BATCH = 128  # chunks embedded and written per Chroma upsert
OnFile = Callable[[FileIngest], None]
OnChunks = Callable[[Path, int, int], None]  # (file, chunks embedded so far, chunks to embed)
_Entry = tuple[Any, dict[str, Any]]  # (stored document, metadata)
_Scored = tuple[str, float, _Entry]  # (chunk id, score, entry)
CHANGED = (
    "the file changed after this ingest hashed it (the SHA-256 the audit log records): nothing of it "
    "was ingested; run the ingest again"
)


class RankingConfig(BaseModel):
    """How chunks are ranked (figures for each choice: docs/knowledge.md).

    section: every chunk scored by cosine + ``section_weight`` x cosine to its section's name +
    ``section_best_weight`` x the best cosine in its section + ``section_bm25_weight`` x
    normalised BM25 (ranking.py; weights chosen by bench/knowledge_sweep.py), the BM25 over the query
    expanded into neighbouring corpus words (vocabulary.py: up to ``expansion_terms`` per query
    word at cosine >= ``expansion_similarity``, weighted ``expansion_scale`` x cosine). hybrid:
    cosine similarity +
    ``bm25_weight`` x BM25 score (normalised to the query's best), over the union of both
    rankers' candidates. rrf: reciprocal rank fusion of the two lists. A search with other
    phrasings (``also``) ranks each the same way and merges them, the query weighing
    ``query_weight`` and each other phrasing 1.
    """

    ranking: Ranking = "section"
    section_weight: float = Field(0.75, ge=0.0, description="Weight of the section-name cosine (section).")
    section_bm25_weight: float = Field(0.2, ge=0.0, description="Weight of the normalised BM25 (section).")
    section_best_weight: float = Field(
        0.5, ge=0.0, description="Weight of the best chunk cosine within the chunk's section (section)."
    )
    expansion_similarity: float = Field(
        0.65,
        ge=0.0,
        le=1.0,
        description="A corpus word this close (cosine) to a query word joins the query's BM25 (section).",
    )
    expansion_scale: float = Field(
        0.5, ge=0.0, description="An expansion word's BM25 weight is this x its cosine (a query word's: 1)."
    )
    expansion_terms: int = Field(
        3, ge=0, description="At most this many corpus words per query word (0: no expansion) (section)."
    )
    candidates: int = Field(30, ge=1, description="Hits each ranker contributes before fusion.")
    question_weight: float = Field(
        2.5,
        ge=0.0,
        description="Weight of the best cosine of a question the section answers (section; questions.py).",
    )
    per_section: int = Field(
        1, ge=0, description="At most this many chunks of one section before other sections' (0: no limit)."
    )
    bm25_weight: float = Field(0.1, ge=0.0, description="Weight of the normalised BM25 score (hybrid).")
    rrf_k: int = Field(60, ge=1, description="The k of reciprocal rank fusion (rrf).")
    query_weight: float = Field(
        2.0,
        gt=0.0,
        description="With other phrasings (also): the query's weight in the merged score; each other phrasing's is 1.",
    )


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files to ingest: folders are walked for supported files (links out of them refused, see
    folders.py); named files are kept as given."""
    return collect(paths).files


class _Corpus:
    """All chunk texts and metadata in memory with a BM25 index over them (and, once the section
    ranking asks, every vector); rebuilt when the collection changes."""

    def __init__(self, got: Any) -> None:
        self.ids = list(got["ids"])
        documents = list(got["documents"] or [])
        self.entries: dict[str, _Entry] = {
            i: (d, dict(m)) for i, d, m in zip(self.ids, documents, got["metadatas"] or [], strict=True)
        }
        self.bm25 = Bm25Index(self.ids, documents)
        self.row = {chunk_id: n for n, chunk_id in enumerate(self.ids)}
        self.dense: DenseIndex | None = None
        # the questions' version ``dense`` was built with (QuestionBook.version)
        self.dense_questions: tuple[int, int, str] = (0, 0, "")
        self.expander: Expander | None = None
        self.expander_version = -1
        # how each file is cited: its name, or more of its path where another file has that name
        self.labels = source_labels(str(m.get("source", "")) for _, m in self.entries.values())

    def words(self) -> list[str]:
        """The distinct content words of every chunk and section name."""
        out: dict[str, None] = {}
        for document, meta in self.entries.values():
            out.update(dict.fromkeys(content_words(f"{_section_text(meta)}\n{document}")))
        return list(out)

    def section_texts(self) -> list[str]:
        return [_section_text(self.entries[i][1]) for i in self.ids]


class ProcedureLibrary:
    """Chunks of company documents in one chroma collection, searchable by hybrid ranking."""

    def __init__(
        self,
        collection: Collection,
        embedder: MiniLMEmbedder,
        chunking: ChunkingConfig | None = None,
        ranking: RankingConfig | None = None,
        sections: Collection | None = None,
        vocabulary: WordVectors | None = None,
        questions: QuestionBook | None = None,
        mark: ChangeMark | None = None,
    ) -> None:
        self._collection = collection
        self._mark = mark or ChangeMark(None)  # changed by every write, this process's or another's
        self._sections = sections
        self._questions = questions
        self._vocabulary = vocabulary
        self._embedder = embedder
        self._chunking = chunking or ChunkingConfig()
        self._ranking = ranking or RankingConfig()
        self._lock = threading.Lock()
        self._corpus: _Corpus | None = None
        self._corpus_key: tuple[int, str] = (-1, "")  # (chunk count, change mark) it was built at

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
        self,
        paths: Sequence[Path],
        on_file: OnFile | None = None,
        on_chunks: OnChunks | None = None,
        before: Callable[[list[dict[str, str]]], None] | None = None,
    ) -> IngestReport:
        """Ingest files and folders; one bad file is reported and skipped, the rest go on.
        ``on_chunks`` hears about each batch embedded (progress within a large file); ``before`` is
        told what the ingest is about to do (``planned``) before it writes anything: what it raises
        stops the ingest with nothing written (``bootstrap.ingest_as`` records it in the audit log).
        Each file is hashed once, first: only chunks of bytes with that SHA-256 (the one ``before``
        is told) are stored; a file that reads otherwise later is skipped (``ingest_file``)."""
        started = time.perf_counter()
        report = IngestReport()
        collected = collect(paths)
        digests = {path: _digest(path) for path in collected.files}
        if before is not None:
            before(self.planned(paths, collected, digests))
        for refused in collected.refused:
            result = FileIngest(path=refused.path, status="skipped", message=refused.message)
            report.files.append(result)
            if on_file is not None:
                on_file(result)
        for path in collected.files:
            result = self.ingest_file(path, on_chunks, digests[path])
            report.files.append(result)
            if on_file is not None:
                on_file(result)
        for result in self._remove_gone(paths, collected, report):  # after: a moved file is read first
            if on_file is not None:
                on_file(result)
        report.seconds = time.perf_counter() - started
        return report

    def planned(
        self, paths: Sequence[Path], collected: Collected, digests: dict[Path, str]
    ) -> list[dict[str, str]]:
        """What an ingest of ``paths`` (``collected``) is about to do, as the audit log records it:
        each file's path, the SHA-256 of its bytes (``digests``: "" if it cannot be read), the only
        bytes of it the ingest stores (``ingest_file``), and whether its
        chunks are ``added``, ``replaced`` or kept ``unchanged``; each file refused (``skipped``);
        each stored file whose chunks go because it is gone (``removed``)."""
        files: list[dict[str, str]] = []
        for path in collected.files:
            source = str(path.resolve())
            sha = digests[path]
            stored = bool(self._collection.get(where={"source": source}, include=[], limit=1)["ids"])
            action = (
                "unchanged" if self._unchanged(source, sha) is not None else "replaced" if stored else "added"
            )
            files.append({"file": str(path), "sha256": sha, "action": action})
        gone = self._gone(paths, collected)
        for r in collected.refused:  # a refused file's stored chunks go too (``_remove_gone``)
            removed = " (its stored chunks removed)" if str(_place(Path(r.path))) in gone else ""
            files.append({"file": r.path, "sha256": "", "action": f"skipped{removed}"})
        refused = {str(_place(Path(r.path))) for r in collected.refused}
        files += [{"file": s, "sha256": "", "action": "removed"} for s in gone if s not in refused]
        return files

    def _gone(self, paths: Sequence[Path], collected: Collected) -> list[str]:
        """The stored files whose chunks an ingest of ``paths`` removes (``_remove_gone``)."""
        missing = {str(p.resolve()) for p in paths if not p.exists() and not p.is_symlink()}
        folders = tuple(f"{p.resolve()}{os.sep}" for p in paths if p.is_dir()) + tuple(
            f"{m}{os.sep}" for m in missing
        )
        named = {str(p.resolve()) for p in paths if not p.is_dir()}
        present = {str(f.resolve()) for f in collected.files if _regular(f)}
        refused = {str(_place(Path(r.path))) for r in collected.refused}
        return [
            source
            for source in self.sources()
            if (source in named or source.startswith(folders))
            and source not in present
            and (source in refused or not _regular(Path(source)))
        ]

    def _remove_gone(
        self, paths: Sequence[Path], collected: Collected, report: IngestReport
    ) -> list[FileIngest]:
        """Remove the chunks of the files an ingest was pointed at that are gone: stored under a
        folder given, as a file named, or at or under a path that no longer exists (a folder moved
        away), and no longer a regular file there (deleted, moved, renamed to a hidden name,
        replaced by a link) or now refused (a link out, a hard link). Their passages would
        otherwise reach every planner after the file was removed. A file still there that cannot be
        read keeps its chunks (a passing error must not empty the store). A refused file's line
        counts the chunks removed; a gone path's "cannot read" line gives way to "removed" lines.
        Returns the lines added."""
        missing = {str(p.resolve()): p for p in paths if not p.exists() and not p.is_symlink()}
        refused = {str(_place(Path(r.path))): r for r in collected.refused}
        lines = {f.path: f for f in report.files if f.status == "skipped"}
        added: list[FileIngest] = []
        # a file still there, not read this time (hidden, or named on its own before), is kept
        for source in self._gone(paths, collected):
            with self._lock:
                ids = self._collection.get(where={"source": source}, include=[])["ids"]
                for start in range(0, len(ids), WRITE_BATCH):
                    self._collection.delete(ids=ids[start : start + WRITE_BATCH])
                self._corpus = None
            if source in refused:  # reported as refused already: say what went with it
                lines[refused[source].path].removed += len(ids)
                continue
            line = FileIngest(path=source, status="removed", removed=len(ids), message="the file is gone")
            report.files.append(line)
            added.append(line)
        gone = [
            str(p)
            for m, p in missing.items()
            if any(a.path == m or a.path.startswith(m + os.sep) for a in added)
        ]
        report.files = [f for f in report.files if not (f.status == "skipped" and f.path in gone)]
        return added

    def ingest_file(
        self, path: Path, on_chunks: OnChunks | None = None, sha256: str | None = None
    ) -> FileIngest:
        """Add a file's chunks; unchanged chunks are kept, stale ones removed, new ones embedded.

        ``sha256``: the digest the ingest hashed the file to first and recorded (``ingest``; default:
        hashed now). Only chunks of bytes with that digest are stored: a file that reads otherwise
        here (changed since) is skipped, nothing of it written.

        The file is streamed (``knowledge/streaming.py``): a first pass checks it, a second counts
        its chunks and finds the new ones, a third embeds and writes those ``WRITE_BATCH`` at a
        time, so memory does not grow with the file. Chunks are written before stale ones are
        deleted: an interrupted ingest leaves the store searchable (old chunks plus the new ones
        written so far), and running it again embeds only the chunks not yet written. A file that
        changed between the passes is skipped and what the last pass wrote of it is removed again.
        """
        source = str(path.resolve())
        sha256 = _digest(path) if sha256 is None else sha256
        unchanged = self._unchanged(source, sha256)
        if unchanged is not None:
            return FileIngest(path=str(path), status="unchanged", chunks=unchanged)
        try:
            passes = chunk_passes(path, self._chunking)
            existing = set(self._collection.get(where={"source": source}, include=[])["ids"])
            wanted: set[str] = set()
            todo = 0
            for chunk in passes():  # a later pass checks its bytes hash as this one's (streaming.py)
                if chunk.file_sha256 != sha256:
                    raise UnreadableFile(CHANGED)
                wanted.add(chunk.id)
                todo += chunk.id not in existing
        except (UnreadableFile, StylesTooComplex) as exc:
            return FileIngest(path=str(path), status="skipped", message=str(exc))
        if existing == wanted:
            return FileIngest(path=str(path), status="unchanged", chunks=len(wanted))
        stale = sorted(existing - wanted)
        added = 0
        written: list[str] = []
        with self._lock:
            try:
                new = (c for c in passes() if c.id not in existing) if todo else iter(())
                for batch in prefetch(batches(new, WRITE_BATCH)):
                    self.add_chunks(batch, file_chunks=len(wanted))
                    written += [c.id for c in batch]
                    added += len(batch)
                    if on_chunks is not None:
                        on_chunks(path, added, todo)
                if stale:
                    self._collection.delete(ids=stale)
            except UnreadableFile as exc:  # it changed since the first passes
                # what this pass wrote came from other bytes than the ones checked (and is labelled
                # with their digest: a later ingest would call it "unchanged"): none of it is kept
                for start in range(0, len(written), WRITE_BATCH):
                    self._collection.delete(ids=written[start : start + WRITE_BATCH])
                return FileIngest(path=str(path), status="skipped", chunks=0, added=0, message=str(exc))
            finally:
                self._corpus = None  # other processes: the store's change mark (changes.py)
        return FileIngest(
            path=str(path),
            status="replaced" if existing else "added",
            chunks=len(wanted),
            added=added,
            removed=len(stale),
        )

    def _unchanged(self, source: str, sha: str) -> int | None:
        """The file's chunk count when the store holds it already, chunked from bytes with the
        SHA-256 ``sha`` by this chunker with these sizes: no chunking, no embedding (None: ingest it)."""
        if not sha:
            return None  # the passes report why it cannot be read
        got = self._collection.get(where={"source": source}, include=["metadatas"])
        metas = got["metadatas"] or []
        tag = self._chunker_tag()
        complete = all(m.get("file_chunks") == len(metas) for m in metas)  # not an interrupted ingest
        if metas and complete and all(m.get("file_sha256") == sha and m.get("chunker") == tag for m in metas):
            return len(metas)
        return None

    def _chunker_tag(self) -> str:
        return f"{CHUNKER_VERSION}:{self._chunking.max_chars}:{self._chunking.min_chars}"

    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        batch: int = WRITE_BATCH,
        on_batch: Callable[[int], None] | None = None,
        file_chunks: int = 0,
    ) -> None:
        """Embed and write chunks (upsert by id), ``batch`` at a time so memory stays bounded by
        the batch, not the file. Used by ingest and by the benchmarks."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            self._collection.upsert(
                ids=[c.id for c in part],
                documents=[c.embed_text() for c in part],
                metadatas=[_metadata(c, now, self._chunker_tag(), file_chunks) for c in part],
            )
            if self._sections is not None:
                ensure_sections([c.section_text() for c in part], self._sections, self._embedder)
            if self._vocabulary is not None:
                self._vocabulary.ensure(
                    w for c in part for w in content_words(f"{c.section_text()}\n{c.embed_text()}")
                )
            if on_batch is not None:
                on_batch(start + len(part))
        self._corpus = None

    # -- search ----------------------------------------------------------------------------------
    def search(
        self, query: str, k: int = 4, ranking: Ranking | None = None, also: Sequence[str] = ()
    ) -> list[ProcedureHit]:
        """The ``k`` chunks that best answer ``query``, best first.

        ``also``: up to ``MAX_ALSO`` other phrasings of the same need (the asking model's guess at
        the documents' own words). Each phrasing is ranked the same way and the scores merged
        (``merge_phrasings``: ``query_weight`` for the query, 1 for each other phrasing)."""
        query = query.strip()
        size = self.count()
        if not query or size == 0 or k < 1:
            return []
        others = [also] if isinstance(also, str) else list(also)  # one phrasing given bare, not in a list
        phrasings = list(dict.fromkeys(p.strip() for p in (query, *others[:MAX_ALSO]) if p.strip()))
        mode = ranking or self._ranking.ranking
        n = min(size, max(self._ranking.candidates, k))
        if mode == "section" and self._sections is None:
            mode = "hybrid"  # a library without a sections collection (tests of the parts)
        vectors = self._embedder.embed(phrasings) if mode != "bm25" else [None] * len(phrasings)  # one run
        lists = [self._scored(p, v, n, mode, size) for p, v in zip(phrasings, vectors, strict=True)]
        merged = lists[0] if len(lists) == 1 else merge_phrasings(lists, self._ranking.query_weight)
        return self._rank(spread_sections(merged, self._ranking.per_section), k)

    def _scored(
        self, query: str, query_vector: np.ndarray | None, n: int, mode: Ranking, size: int
    ) -> list[_Scored]:
        """The ``n`` best chunks for one phrasing (``query_vector``: its embedding; None for bm25),
        with their scores, best first."""
        if mode == "section":
            assert query_vector is not None
            return self._by_section(query, query_vector, n, self._current_corpus(size))
        if mode == "vector":
            assert query_vector is not None
            return self._vector(query_vector, n)
        corpus = self._current_corpus(size)
        lexical = corpus.bm25.rank(query, n)
        if mode == "bm25":
            return [(i, s, corpus.entries[i]) for i, s in lexical]
        assert query_vector is not None
        vector = self._vector(query_vector, n)
        if mode == "rrf":
            fused = reciprocal_rank_fusion(
                [[i for i, _, _ in vector], [i for i, _ in lexical]], k=self._ranking.rrf_k
            )
            return [(i, s, corpus.entries[i]) for i, s in fused]
        return self._blend(query_vector, vector, lexical, corpus)

    def _by_section(self, query: str, query_vector: np.ndarray, k: int, corpus: _Corpus) -> list[_Scored]:
        """Candidates: the vector and BM25 top ``candidates`` and every chunk of the best-named
        sections; each scored by chunk cosine + section cosine + normalised BM25 (ranking.py)."""
        assert self._sections is not None
        asked = self._questions.version() if self._questions is not None else (0, 0, "")
        with self._lock:
            if corpus.dense is None or corpus.dense_questions != asked:
                corpus.dense = DenseIndex.build(
                    corpus.ids,
                    corpus.section_texts(),
                    self._collection,
                    self._sections,
                    self._embedder,
                    self._question_vectors(corpus) if asked[0] else None,
                )
                corpus.dense_questions = asked
            dense = corpus.dense
        n = min(len(corpus.ids), max(self._ranking.candidates, k))
        expander = self._expander(corpus)
        vector = self._collection.query(query_embeddings=[query_vector], n_results=n, include=[])["ids"][0]
        if expander is not None:
            words = content_words(query)
            tokens = expander.weights(query, expander.word_vectors(words, self._embedder))
            lexical_scores = corpus.bm25.weighted_scores(tokens)
        else:
            lexical_scores = corpus.bm25.all_scores(query)
        lexical = (
            {} if lexical_scores is None else {r: float(lexical_scores[r]) for r in top(lexical_scores, n)}
        )
        lexical = {r: s for r, s in lexical.items() if s > 0}
        row = corpus.row
        rows, scores = dense.rank(
            query_vector,
            [*(row[i] for i in vector if i in row), *lexical],
            lexical,
            Weights(
                section=self._ranking.section_weight,
                bm25=self._ranking.section_bm25_weight,
                section_best=self._ranking.section_best_weight,
                question=self._ranking.question_weight,
            ),
        )
        return [
            (corpus.ids[rows[i]], float(scores[i]), corpus.entries[corpus.ids[rows[i]]])
            for i in top(scores, k)
        ]

    def _question_vectors(self, corpus: _Corpus) -> AskedQuestions:
        """The questions of sections whose chunks are as they were when they were asked."""
        assert self._questions is not None
        return self._questions.vectors(section_digests(corpus.ids, corpus.section_texts()))

    def _expander(self, corpus: _Corpus) -> Expander | None:
        """The corpus words BM25 knows, with their vectors; words no vector is stored for (a
        store written before the vocabulary was kept) are embedded once, here."""
        vocabulary = self._vocabulary
        if vocabulary is None or self._ranking.expansion_terms < 1:
            return None
        with self._lock:
            if corpus.expander is None or corpus.expander_version != vocabulary.version:
                got, vectors = corpus_vectors(vocabulary, corpus.words(), corpus.bm25.known)
                corpus.expander = Expander(
                    got,
                    vectors,
                    self._ranking.expansion_similarity,
                    self._ranking.expansion_terms,
                    self._ranking.expansion_scale,
                )
                corpus.expander_version = vocabulary.version
            return corpus.expander

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

    def _vector(self, query_vector: np.ndarray, n: int) -> list[_Scored]:
        include: Any = ["documents", "metadatas", "distances"]
        result = self._collection.query(query_embeddings=[query_vector], n_results=n, include=include)
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

    def _rank(self, scored: list[_Scored], k: int) -> list[ProcedureHit]:
        labels = self._current_corpus(self.count()).labels
        return [_hit(i, entry, rank, score, labels) for rank, (i, score, entry) in enumerate(scored[:k], 1)]

    def source_label(self, source: str) -> str:
        """How ``source`` is named in citations (``models.source_labels``)."""
        return self._current_corpus(self.count()).labels.get(source) or Path(source).name

    def _current_corpus(self, size: int) -> _Corpus:
        key = (size, self._mark.token())
        with self._lock:
            if self._corpus is None or self._corpus_key != key:
                self._corpus = _Corpus(self._collection.get(include=["documents", "metadatas"]))
                self._corpus_key = key
            return self._corpus


def _metadata(chunk: Chunk, ingested_at: str, chunker: str, file_chunks: int) -> dict[str, str | int]:
    return {
        "source": chunk.source,
        "heading_path": json.dumps(chunk.heading_path, ensure_ascii=False),
        "kind": chunk.kind,
        "ordinal": chunk.ordinal,
        "file_sha256": chunk.file_sha256,
        "ingested_at": ingested_at,
        "title": chunk.title,
        "chunker": chunker,
        "file_chunks": file_chunks,  # how many chunks the whole file has (0: not known)
    }


def _section_text(metadata: dict[str, Any]) -> str:
    return head_line(str(metadata.get("title") or ""), json.loads(str(metadata.get("heading_path") or "[]")))


def _hit(chunk_id: str, entry: _Entry, rank: int, score: float, labels: dict[str, str]) -> ProcedureHit:
    document, metadata = entry
    heading_path = json.loads(str(metadata.get("heading_path") or "[]"))
    title = str(metadata.get("title") or "")
    text = str(document or "")
    if heading_path:
        head, _, body = text.partition("\n")
        text = body if head == HEADING_SEPARATOR.join(heading_path) else text
    text = seen(text)  # ingest keeps only what a reader sees; a store chunked before that too
    return ProcedureHit(
        id=chunk_id,
        rank=rank,
        score=score,
        source=str(metadata.get("source", "")),
        heading_path=heading_path,
        text=text,
        title=title,
        source_label=labels.get(str(metadata.get("source", "")), ""),
    )


def merge_phrasings(lists: Sequence[Sequence[_Scored]], first_weight: float) -> list[_Scored]:
    """One ranking from the rankings of several phrasings of one need: each chunk's weighted mean
    score, the first phrasing (the asker's own words) weighing ``first_weight`` and every other 1.
    A chunk missing from a phrasing's list takes that list's lowest score (it ranked below it)."""
    weights = [first_weight, *[1.0] * (len(lists) - 1)]
    whole = sum(weights)
    entries: dict[str, _Entry] = {}
    for scored in lists:
        entries.update((i, entry) for i, _, entry in scored)
    total = dict.fromkeys(entries, 0.0)
    for weight, scored in zip(weights, lists, strict=True):
        floor = min((s for _, s, _ in scored), default=0.0)
        got = {i: s for i, s, _ in scored}
        for i in total:
            total[i] += weight * got.get(i, floor)
    merged = [(i, score / whole, entries[i]) for i, score in total.items()]
    return sorted(merged, key=lambda item: -item[1])


def spread_sections(scored: list[_Scored], most: int) -> list[_Scored]:
    """At most ``most`` chunks of one section (file and heading path) first, in score order, then
    the others, also in score order (0: ``scored`` as it is)."""
    if most < 1:
        return scored
    seen: dict[tuple[str, str], int] = {}
    first: list[_Scored] = []
    later: list[_Scored] = []
    for item in scored:
        metadata = item[2][1]
        key = (str(metadata.get("source") or ""), str(metadata.get("heading_path") or ""))
        seen[key] = seen.get(key, 0) + 1
        (first if seen[key] <= most else later).append(item)
    return first + later


def _digest(path: Path) -> str:
    """The SHA-256 of the file's bytes now ("" if it cannot be read: the passes say why)."""
    try:
        return file_digest(path)
    except OSError:
        return ""


def _regular(path: Path) -> bool:
    """A regular file at ``path`` itself (not a link, not gone)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _place(path: Path) -> Path:
    """Where ``path`` is, its folders resolved but not its last part (a link stays the link)."""
    return path.absolute().parent.resolve() / path.name
