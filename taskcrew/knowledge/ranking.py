"""The section-aware ranking: every chunk scored exactly, by its text, its section's name and BM25.

    score = cos(query, chunk) + section_weight x cos(query, title > heading path)
            + section_best_weight x max cos(query, c) over the chunks c of the same section
            + bm25_weight x BM25(query, chunk) / best BM25 of the query
            + question_weight x max cos(query, q) over the questions q the section answers
              (questions.py; its name's cosine for a section without; nothing without any)

A section's name ("Accounts Payable > Process Payment") says what the section is for in a few
words the chunk's own text may never repeat; matched on its own vector it tells near-miss
sections apart (paying a vendor vs receiving a customer's payment) where the chunk vectors are
close. The best chunk of a section lifts its siblings: the section as a whole answers (a long
section's answer may sit in its second chunk while its first matches the words). The candidates
are every chunk of the sections of the vector (HNSW) and BM25 top lists and of the ``SECTIONS``
best-named sections (a section whose name fits is found even when its chunks' own vectors are
far); only they are scored, so a query costs one product with the distinct sections'
vectors and one with the candidates' (a full product with every chunk took 50-90 ms at 5,000
chunks on the loaded machine). Chunk vectors are held in memory (1.5 KB a chunk: 7.5 MB at
5,000); section vectors are embedded once per distinct section at ingest and kept in the store's
``sections`` collection (ids: content hashes of the section text).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from taskcrew.knowledge.embedder import MiniLMEmbedder
    from taskcrew.knowledge.questions import AskedQuestions


SECTIONS = 8  # the best-named sections whose every chunk is a candidate


def section_id(text: str) -> str:
    return "s-" + hashlib.sha256(text.encode()).hexdigest()[:24]


class DenseIndex:
    """Chunk vectors and, for each chunk, the row of its section's vector."""

    def __init__(
        self,
        chunk_vectors: np.ndarray,
        section_rows: np.ndarray,
        section_vectors: np.ndarray,
        question_rows: np.ndarray | None = None,
        question_vectors: np.ndarray | None = None,
        asked: np.ndarray | None = None,
    ) -> None:
        self.chunk_vectors = chunk_vectors
        self.section_rows = section_rows
        self.section_vectors = section_vectors
        # questions.py: each question's section row and vector (none: no question feature), and
        # for each section whether it was asked for its current text
        self.question_rows = question_rows if question_rows is not None else np.zeros(0, dtype=np.int64)
        self.question_vectors = question_vectors
        self.asked = asked if asked is not None else np.zeros(section_vectors.shape[0], dtype=bool)

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        section_texts: Sequence[str],
        chunks: Collection,
        sections: Collection,
        embedder: MiniLMEmbedder,
        questions: AskedQuestions | None = None,
    ) -> DenseIndex:
        """Load the vectors of ``ids`` (in that order) and of their sections; a section missing
        from the collection (a store written before sections were kept) is embedded and added.
        ``questions``: the questions sections answer and which were asked (questions.py)."""
        got = chunks.get(ids=list(ids), include=["embeddings"])
        order = {chunk_id: row for row, chunk_id in enumerate(got["ids"])}
        stored = np.asarray(got["embeddings"], dtype=np.float32).reshape(len(got["ids"]), -1)
        chunk_vectors = stored[[order[i] for i in ids]] if len(ids) else stored
        keys = list(dict.fromkeys(section_texts))
        vectors = load_sections(keys, sections, embedder)
        row_of = {text: row for row, text in enumerate(keys)}
        rows = np.asarray([row_of[t] for t in section_texts], dtype=np.int64)
        if not questions or not questions.sections:
            return cls(chunk_vectors, rows, vectors)
        known = [n for n, key in enumerate(questions.sections) if key in row_of]
        question_rows = np.asarray([row_of[questions.sections[n]] for n in known], dtype=np.int64)
        asked = np.asarray([key in questions.asked for key in keys], dtype=bool)
        return cls(chunk_vectors, rows, vectors, question_rows, questions.vectors[known], asked)

    def rank(
        self,
        query_vector: np.ndarray,
        candidate_rows: list[int],
        lexical: dict[int, float],
        weights: Weights,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(chunk rows, their fused scores) over every chunk of the candidates' sections and of
        the best-named sections."""
        section = self.section_vectors @ query_vector
        named = top(section, SECTIONS)
        questions = None  # (question score per section, whether it waits for its questions)
        if weights.question > 0 and self.question_vectors is not None and self.question_rows.size:
            questions = question_scores(
                section, self.question_rows, self.question_vectors @ query_vector, self.asked
            )
            named = [*named, *top(questions[0], SECTIONS)]
        candidates = np.asarray(candidate_rows, dtype=np.int64)
        wanted = np.union1d(self.section_rows[candidates], np.asarray(named, dtype=np.int64))
        rows = np.flatnonzero(np.isin(self.section_rows, wanted))
        chunk = self.chunk_vectors[rows] @ query_vector
        owner = np.searchsorted(wanted, self.section_rows[rows])
        best = np.full(wanted.size, -1.0, dtype=np.float32)
        np.maximum.at(best, owner, chunk)
        lex = np.zeros(self.section_rows.size, dtype=np.float32)
        if lexical:
            lex[np.fromiter(lexical.keys(), dtype=np.int64)] = np.fromiter(lexical.values(), dtype=np.float32)
        score = fuse(chunk, section[self.section_rows[rows]], lex[rows], best[owner], weights)
        if questions is not None:
            question, waits = questions[0][wanted], questions[1][wanted]
            if waits.any():
                base = np.full(wanted.size, -np.inf, dtype=np.float32)
                np.maximum.at(base, owner, score)
                question = on_question_scale(base, question, waits)
            score = score + weights.question * question[owner]
        return rows, score


def question_scores(
    section: np.ndarray, question_rows: np.ndarray, question_cosines: np.ndarray, asked: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per section, the best cosine of its questions (a section asked that got none, as it
    answers nothing, counts its name's cosine), and which sections wait to be asked (new, or
    changed since; their name's cosine stands in until ``DenseIndex.rank`` places them)."""
    best = np.full(section.size, -np.inf, dtype=np.float32)
    np.maximum.at(best, question_rows, question_cosines)
    has = np.isfinite(best)
    return np.where(has, best, section), ~asked & ~has


def on_question_scale(base: np.ndarray, question: np.ndarray, waiting: np.ndarray) -> np.ndarray:
    """Per candidate section, its question score; a section that waits for its questions gets
    one estimated from the rest of its score: its best chunk score (``base``) carried to the
    question score at the same quantile among the candidate sections that do not wait. A new file
    then ranks by its text among files that have questions, instead of losing to them for having
    none yet."""
    has = ~waiting
    if int(has.sum()) < 2:
        return question
    placed = np.interp(base, np.sort(base[has]), np.sort(question[has]))
    return np.where(waiting, placed, question)


def load_sections(texts: list[str], sections: Collection, embedder: MiniLMEmbedder) -> np.ndarray:
    """Vectors of section texts, from the collection; missing ones are embedded and stored."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    ids = [section_id(t) for t in texts]
    got = sections.get(ids=ids, include=["embeddings"])
    found: dict[str, Any] = dict(
        zip(got["ids"], got["embeddings"] if got["embeddings"] is not None else [], strict=True)
    )
    missing = [t for t, i in zip(texts, ids, strict=True) if i not in found]
    if missing:
        vectors = embedder.embed(missing)
        store_sections(missing, vectors, sections)
        found.update(zip((section_id(t) for t in missing), vectors, strict=True))
    return np.asarray([found[i] for i in ids], dtype=np.float32)


def store_sections(texts: list[str], vectors: np.ndarray, sections: Collection) -> None:
    for start in range(0, len(texts), 256):
        part = texts[start : start + 256]
        sections.upsert(
            ids=[section_id(t) for t in part],
            documents=part,
            embeddings=vectors[start : start + 256],
        )


def ensure_sections(texts: Sequence[str], sections: Collection, embedder: MiniLMEmbedder) -> None:
    """Embed and store the sections of newly written chunks that are not stored yet."""
    keys = list(dict.fromkeys(texts))
    if not keys:
        return
    have = set(sections.get(ids=[section_id(t) for t in keys], include=[])["ids"])
    missing = [t for t in keys if section_id(t) not in have]
    if missing:
        store_sections(missing, embedder.embed(missing), sections)


class Weights(NamedTuple):
    section: float  # the section name's cosine
    bm25: float  # BM25 over the chunk, normalised to the query's best
    section_best: float  # the best chunk cosine within the chunk's section
    question: float = 0.0  # the best cosine of a question the section answers (questions.py)


def fuse(
    chunk: np.ndarray,
    section: np.ndarray,
    lexical: np.ndarray | None,
    section_best: np.ndarray,
    weights: Weights,
) -> np.ndarray:
    score = chunk + weights.section * section + weights.section_best * section_best
    if lexical is not None and lexical.size and float(lexical.max()) > 0:
        score = score + weights.bm25 * (lexical / float(lexical.max()))
    return score


def top(scores: np.ndarray, k: int) -> list[int]:
    k = min(k, scores.size)
    if k <= 0:
        return []
    best = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in best[np.argsort(-scores[best], kind="stable")]]
