"""Query expansion from the company's own words, by the embedder's sense of them.

Every distinct word of the ingested documents (and of their section names) gets one vector from
the same embedder, kept in ``vocabulary.sqlite3`` beside the chroma files. A query's words are
embedded too, and each brings in up to ``terms`` of the corpus's words whose vector is at least
``similarity`` close to it ("supplier" → "vendor", "vendors"; "pay" → "payment", "paid"),
weighted by that cosine, into the BM25 part of the section ranking. Nothing is written by hand:
the neighbours come from the model and the documents, so a company's own vocabulary is what the
query is expanded into. Measured: docs/knowledge.md.

Vectors are float16 (768 bytes a word). The file records which model made them; a store opened
with another model starts the vocabulary afresh (vectors of two models are never mixed).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from taskcrew.knowledge.embedder import DIMENSION
from taskcrew.knowledge.lexical import STOPWORDS, stem, tokenize

if TYPE_CHECKING:
    from taskcrew.knowledge.embedder import MiniLMEmbedder

FILE_NAME = "vocabulary.sqlite3"
_WORD = re.compile(r"[a-z]+")
_MIN_LETTERS = 3
_MAX_LETTERS = 30


def content_words(text: str) -> list[str]:
    """Distinct lowercase words of three to thirty letters that are not stop words, in order."""
    out = dict.fromkeys(
        w
        for w in _WORD.findall(text.lower())
        if _MIN_LETTERS <= len(w) <= _MAX_LETTERS and w not in STOPWORDS
    )
    return list(out)


class WordVectors:
    """One vector per distinct corpus word, persisted in SQLite; new words are embedded once."""

    def __init__(self, path: Path, embedder: MiniLMEmbedder) -> None:
        self.path = path
        self._embedder = embedder
        self._lock = threading.Lock()
        self._known: set[str] | None = None
        self.version = 0  # bumped whenever words are added: cached matrices are then stale
        try:
            self._open(embedder.model_id())
        except sqlite3.OperationalError:
            raise  # locked by another process, a read-only folder: not damage; say so, move nothing
        except sqlite3.DatabaseError:
            # Derived data (every word comes back from the documents on the next query): a damaged
            # file is set aside, not an error that stops the store from opening.
            path.replace(path.with_name(f"{path.name}.damaged"))
            self._open(embedder.model_id())

    def _open(self, model: str) -> None:
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS words (word TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            row = db.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
            if row is None or row[0] != model:
                db.execute("DELETE FROM words")
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('model', ?)", (model,))

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def _known_words(self) -> set[str]:
        if self._known is None:
            with self._connect() as db:
                self._known = {w for (w,) in db.execute("SELECT word FROM words")}
        return self._known

    def ensure(self, words: Iterable[str]) -> int:
        """Embed and store the words not stored yet; how many were added."""
        with self._lock:
            known = self._known_words()
            missing = [w for w in dict.fromkeys(words) if w not in known]
            if not missing:
                return 0
            vectors = self._embedder.embed(missing).astype(np.float16)
            with self._connect() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO words (word, vector) VALUES (?, ?)",
                    zip(missing, (v.tobytes() for v in vectors), strict=True),
                )
            known.update(missing)
            self.version += 1
            return len(missing)

    def load(self, keep: Iterable[str] | None = None) -> tuple[list[str], np.ndarray]:
        """The stored words (only those in ``keep``, when given) and their vectors (float32)."""
        wanted = None if keep is None else set(keep)
        words: list[str] = []
        blobs: list[bytes] = []
        with self._connect() as db:
            for word, blob in db.execute("SELECT word, vector FROM words"):
                if wanted is None or word in wanted:
                    words.append(word)
                    blobs.append(blob)
        if not words:
            return [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(words), -1)
        return words, matrix.astype(np.float32)


def corpus_vectors(
    vocabulary: WordVectors, words: list[str], known: Callable[[str], bool]
) -> tuple[list[str], np.ndarray]:
    """The corpus ``words`` whose stem BM25 knows (``known``), with their vectors; words no vector
    is stored for yet (a store written before the vocabulary was kept) are embedded first."""
    vocabulary.ensure(words)
    return vocabulary.load([w for w in words if known(stem(w))])


class Expander:
    """The corpus words a query may be expanded into (those BM25 knows), with their vectors."""

    def __init__(
        self, words: Sequence[str], vectors: np.ndarray, similarity: float, terms: int, scale: float = 1.0
    ) -> None:
        self.words = list(words)
        self.row = {w: n for n, w in enumerate(self.words)}
        self.scale = scale
        self.stems = [stem(w) for w in self.words]
        self.vectors = vectors
        self.similarity = similarity
        self.terms = terms

    def word_vectors(self, words: Sequence[str], embedder: MiniLMEmbedder) -> np.ndarray:
        """Vectors of query words: a corpus word's stored one, others embedded (short texts in
        one run: embedding a query's known words again cost more than the rest of the query)."""
        out = np.zeros((len(words), DIMENSION), dtype=np.float32)
        unknown = [n for n, w in enumerate(words) if w not in self.row]
        for n, w in enumerate(words):
            if w in self.row:
                out[n] = self.vectors[self.row[w]]
        if unknown:
            out[unknown] = embedder.embed([words[n] for n in unknown])
        return out

    def weights(self, query: str, word_vectors: np.ndarray) -> dict[str, float]:
        """BM25 token weights for ``query``: its own tokens 1.0, and per query word up to
        ``terms`` neighbouring corpus words (by stem, not the query's own) weighted by ``scale`` x
        cosine.

        ``word_vectors``: the vectors of ``content_words(query)``, in that order."""
        weights = dict.fromkeys(tokenize(query), 1.0)
        if not self.words or word_vectors.size == 0 or self.terms < 1:
            return weights
        own = set(weights)
        sims = word_vectors @ self.vectors.T
        for row in sims:
            candidates = np.flatnonzero(row >= self.similarity)
            taken: set[str] = set()
            for j in candidates[np.argsort(-row[candidates], kind="stable")]:
                token = self.stems[j]
                if token in own:
                    continue
                if token not in taken:
                    if len(taken) == self.terms:
                        break
                    taken.add(token)
                weights[token] = max(weights.get(token, 0.0), self.scale * float(row[j]))
        return weights
