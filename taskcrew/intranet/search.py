"""The intranet's site search: BM25 over title, tags, summary and body, with a text snippet per hit.

Words are lower-cased, accents folded (Müller matches Muller) and lightly stemmed (raises/raised →
rais), so plain-language queries such as "vendor price increase" find the announcements.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

from pydantic import BaseModel

from taskcrew.intranet.content import Page
from taskcrew.tools.documents.models import Unreadable
from taskcrew.tools.documents.visibility import visible_html
from taskcrew.tools.readback import visible_text

_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has", "have", "how",
     "in", "is", "it", "its", "of", "on", "or", "our", "the", "this", "that", "to", "was", "were", "what",
     "when", "which", "who", "with", "will", "about", "we", "us", "me", "my", "i", "you", "your"}
)  # fmt: skip
_FIELD_WEIGHTS = {"title": 3.0, "tags": 2.0, "summary": 1.5, "body": 1.0}
_K1, _B = 1.2, 0.75
_ARCHIVED_FACTOR = 0.5
_SYNONYM_WEIGHT = 0.6
# Words people use for the same thing on a vendor portal; a query word also finds its synonyms.
_SYNONYM_GROUPS = (
    ("increase", "raise", "rise", "revise", "revision", "adjustment", "hike", "higher"),
    ("price", "pricing", "cost"),
    ("fx", "exchange", "currency", "conversion"),
    ("deadline", "cutoff", "cut-off"),
    ("terms", "condition"),
    ("bank", "remittance", "account"),
)


class Hit(BaseModel):
    page: Page
    score: float
    snippet: str


def fold(text: str) -> str:
    """Lower-case and strip accents: 'Müller' → 'muller'."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stem(word: str) -> str:
    if word.endswith("ss") or word.isdigit():
        return word
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(fold(text)) if w not in _STOPWORDS]


def _synonym_table() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for group in _SYNONYM_GROUPS:
        stems = {t for word in group for t in terms(word)}
        for stem_ in stems:
            table.setdefault(stem_, set()).update(stems - {stem_})
    return table


def html_text(html: str) -> str:
    """The text a reader of the page sees (``visibility.visible_html``): what the page hides is
    neither found nor quoted in a snippet. A body whose styles are too costly to judge is not
    indexed (its title, tags and summary still are)."""
    try:
        seen = visible_html(html)
    except Unreadable:
        return ""
    return visible_text(seen)


class SiteIndex:
    """An in-memory index of the site's pages; built once, read by many request threads."""

    def __init__(self, pages: list[Page]) -> None:
        self._pages = pages
        self._texts = [html_text(p.body_html) for p in pages]
        self._docs: list[dict[str, float]] = []
        for page, text in zip(pages, self._texts, strict=True):
            weighted: dict[str, float] = {}
            fields = {"title": page.title, "tags": " ".join(page.tags), "summary": page.summary, "body": text}
            for field, value in fields.items():
                for term in terms(value):
                    weighted[term] = weighted.get(term, 0.0) + _FIELD_WEIGHTS[field]
            self._docs.append(weighted)
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg_length = sum(self._lengths) / max(1, len(self._lengths))
        self._df: Counter[str] = Counter()
        for doc in self._docs:
            self._df.update(doc.keys())
        self._synonyms = _synonym_table()

    def search(self, query: str, limit: int = 10) -> list[Hit]:
        query_terms = list(dict.fromkeys(terms(query)))
        if not query_terms:
            return []
        weights = {term: 1.0 for term in query_terms}
        for term in query_terms:
            for synonym in self._synonyms.get(term, ()):
                weights.setdefault(synonym, _SYNONYM_WEIGHT)
        scored = [(self._score(i, weights), i) for i in range(len(self._docs))]
        scored = [(s, i) for s, i in scored if s > 0]
        scored.sort(key=lambda item: (-item[0], self._pages[item[1]].path))
        return [
            Hit(
                page=self._pages[i],
                score=round(s, 4),
                snippet=snippet(self._texts[i], list(weights), self._pages[i]),
            )
            for s, i in scored[:limit]
        ]

    def _score(self, index: int, weights: dict[str, float]) -> float:
        doc, total = self._docs[index], len(self._docs)
        norm = _K1 * (1 - _B + _B * self._lengths[index] / self._avg_length)
        score = 0.0
        for term, weight in weights.items():
            tf = doc.get(term, 0.0)
            if tf:
                idf = math.log(1 + (total - self._df[term] + 0.5) / (self._df[term] + 0.5))
                score += weight * idf * tf * (_K1 + 1) / (tf + norm)
        return score * (_ARCHIVED_FACTOR if self._pages[index].archived else 1.0)


def snippet(text: str, query_terms: list[str], page: Page, width: int = 220) -> str:
    """The sentence-ish window of ``text`` with the most query terms; the summary if none match."""
    sentences = re.split(r"(?<=[.!?])\s+", text)
    best, best_hits = "", 0
    wanted = set(query_terms)
    for sentence in sentences:
        hits = len(wanted & set(terms(sentence)))
        if hits > best_hits:
            best, best_hits = sentence, hits
    chosen = best or page.summary or text
    return chosen if len(chosen) <= width else chosen[: width - 1].rsplit(" ", 1)[0] + " …"
