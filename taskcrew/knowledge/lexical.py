"""Lexical ranking (BM25 via bm25s) and reciprocal rank fusion with the vector ranking.

Exact words matter in procedures ("EOM", "credit note", "Net 30"), where a small embedding model
is vague; the embedding catches paraphrases BM25 misses. Fusing the two rank lists (RRF) is
robust because it needs no score calibration between them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")
# A small English stop list: words that carry no procedure-specific meaning.
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between both but by
    can could did do does doing down during each few for from further had has have having he her here hers
    how i if in into is it its itself just me more most my no nor not of off on once only or other our ours
    out over own same she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who whom why will with
    would you your yours""".split()  # noqa: SIM905
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s")


def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'invoices'/'invoice', 'entering'/'enter'."""
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


def tokenize(text: str, stems: dict[str, str] | None = None) -> list[str]:
    """Lowercase word tokens without stop words, stemmed; ``stems`` caches stems across texts."""
    stems = {} if stems is None else stems
    out = []
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS:
            token = stems.get(word)
            if token is None:
                token = stems[word] = stem(word)
            out.append(token)
    return out


class Bm25Index:
    """An in-memory BM25 index over a fixed list of documents, identified by id."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        import bm25s

        self.ids = list(ids)
        self._retriever = bm25s.BM25()
        stems: dict[str, str] = {}
        corpus = [tokenize(t, stems) or [""] for t in texts]
        if corpus:
            self._retriever.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def all_scores(self, query: str) -> np.ndarray | None:
        """The BM25 score of every document for ``query``, in ``ids`` order (None: no query word
        is in the corpus)."""
        vocab = getattr(self._retriever, "vocab_dict", None) or {}
        tokens = [t for t in tokenize(query) if t in vocab]
        if not self.ids or not tokens:
            return None
        return np.asarray(self._retriever.get_scores(tokens), dtype=np.float32)

    def known(self, token: str) -> bool:
        vocab = getattr(self._retriever, "vocab_dict", None) or {}
        return token in vocab

    def weighted_scores(self, weights: dict[str, float]) -> np.ndarray | None:
        """The sum over tokens of weight x the token's BM25 score, per document in ``ids`` order
        (None: no token is in the corpus)."""
        vocab = getattr(self._retriever, "vocab_dict", None) or {}
        tokens = [t for t in weights if t in vocab]
        if not self.ids or not tokens:
            return None
        scores = self._retriever.scores  # per token, its documents' scores (CSC columns)
        data, indices, indptr = scores["data"], scores["indices"], scores["indptr"]
        total = np.zeros(len(self.ids), dtype=np.float32)
        for token in tokens:
            column = vocab[token]
            start, end = int(indptr[column]), int(indptr[column + 1])
            total[indices[start:end]] += weights[token] * data[start:end]  # a column: no repeats
        return total

    def rank(self, query: str, n: int) -> list[tuple[str, float]]:
        """The ``n`` best (id, score) pairs with a positive score, best first."""
        vocab = getattr(self._retriever, "vocab_dict", None) or {}
        tokens = [t for t in tokenize(query) if t in vocab]
        if not self.ids or not tokens:
            return []
        scores = np.asarray(self._retriever.get_scores(tokens))
        n = min(n, len(self.ids))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None, k: int = 60
) -> list[tuple[str, float]]:
    """Fuse rank lists of ids: score(d) = sum_i w_i / (k + rank_i(d)); best first."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])  # stable: ties keep the first ranking's order
