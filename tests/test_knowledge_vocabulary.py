"""Query expansion from the corpus's own words (knowledge/vocabulary.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from taskcrew.knowledge.vocabulary import FILE_NAME, Expander, WordVectors, content_words

if TYPE_CHECKING:
    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_content_words_drop_stop_words_short_words_and_digits() -> None:
    assert content_words("Pay the vendor's 2 bills by EOM, then pay again") == [
        "pay",
        "vendor",
        "bills",
        "eom",
    ]


def test_a_query_word_brings_in_its_close_corpus_words_by_stem_weighted_by_cosine() -> None:
    words = ["vendor", "vendors", "supplier", "banana", "payment"]
    vectors = np.vstack(
        [_unit(1, 0.2, 0), _unit(1, 0.25, 0), _unit(1, 0, 0), _unit(0, 0, 1), _unit(0.3, 1, 0)]
    )
    expander = Expander(words, vectors, similarity=0.6, terms=3)
    weights = expander.weights("supplier payment", np.vstack([_unit(1, 0, 0), _unit(0.3, 1, 0)]))
    assert weights["supplier"] == 1.0 and weights["payment"] == 1.0  # the query's own tokens
    assert 0.97 < weights["vendor"] < 1.0  # "vendor" and "vendors" share a stem: one term
    assert "banana" not in weights
    none = Expander(words, vectors, similarity=0.6, terms=0).weights("supplier", vectors[2:3])
    assert none == {"supplier": 1.0}


def test_at_most_terms_neighbours_per_query_word() -> None:
    words = ["alpha", "bravo", "charlie", "delta"]
    vectors = np.vstack([_unit(1, 0.1 * i, 0) for i in range(1, 5)])
    weights = Expander(words, vectors, similarity=0.5, terms=2).weights("query", _unit(1, 0, 0)[None, :])
    assert set(weights) == {"query", "alpha", "bravo"}


def test_words_are_embedded_once_and_a_new_model_starts_the_vocabulary_afresh(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    path = tmp_path / FILE_NAME
    vocabulary = WordVectors(path, knowledge_embedder)
    assert vocabulary.ensure(["vendor", "supplier", "vendor"]) == 2
    assert vocabulary.ensure(["vendor", "invoice"]) == 1
    again = WordVectors(path, knowledge_embedder)  # another process opening the same store
    assert again.ensure(["supplier"]) == 0
    words, vectors = again.load(["vendor", "supplier"])
    assert sorted(words) == ["supplier", "vendor"] and vectors.shape == (2, 384)
    (v, s) = (vectors[words.index("vendor")], vectors[words.index("supplier")])
    assert float(v @ s) > 0.6  # the model's sense: close words
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'another-model' WHERE key = 'model'")
    assert WordVectors(path, knowledge_embedder).load()[0] == []  # vectors of two models never mix


def test_a_search_for_a_supplier_finds_the_vendor_section_by_the_corpus_words(
    knowledge_store: KnowledgeStore, tmp_path: Path
) -> None:
    doc = tmp_path / "ap.md"
    doc.write_text(
        "# Manual\n\n## Vendors\n\nEach vendor has an address, terms and a tax id. Keep the vendor list"
        " current and archive the vendors you no longer use.\n\n## Customers\n\nEach customer has a"
        " billing address and a credit limit. Archive customers who closed their accounts.\n",
        encoding="utf-8",
    )
    knowledge_store.procedures.ingest([doc])
    assert (knowledge_store.directory / FILE_NAME).is_file()
    words, _ = WordVectors(knowledge_store.directory / FILE_NAME, knowledge_store.embedder).load()
    assert {"vendor", "vendors", "customers", "manual"} <= set(words)  # chunk and section words
    hits = knowledge_store.procedures.search("archive a supplier", k=2)
    assert hits[0].heading_path[-1] == "Vendors"


def test_a_query_word_of_the_corpus_takes_its_stored_vector_and_others_are_embedded(
    knowledge_embedder: MiniLMEmbedder,
) -> None:
    stored = np.vstack([_unit(1, 0, 0) for _ in range(384 // 3)]).reshape(-1)[:384][None, :]
    expander = Expander(["vendor"], stored.astype(np.float32), similarity=0.6, terms=3)
    vectors = expander.word_vectors(["vendor", "supplier"], knowledge_embedder)
    assert np.array_equal(vectors[0], stored[0])  # not embedded again
    assert np.allclose(vectors[1], knowledge_embedder.embed(["supplier"])[0])


def test_a_damaged_vocabulary_file_is_set_aside_and_built_again(
    knowledge_store: KnowledgeStore, tmp_path: Path
) -> None:
    """The word vectors are derived from the documents: a damaged file does not stop the store from
    opening; it is kept beside as .damaged and the words come back on the next search."""
    from taskcrew.knowledge import KnowledgeStore

    doc = tmp_path / "ap.md"
    doc.write_text(
        "# Manual\n\n## Vendors\n\nEach vendor has an address and payment terms.\n", encoding="utf-8"
    )
    knowledge_store.procedures.ingest([doc])
    path = knowledge_store.directory / FILE_NAME
    path.write_bytes(b"not a database, twice over " * 40)
    reopened = KnowledgeStore(knowledge_store.directory, knowledge_store.embedder)
    assert reopened.procedures.search("supplier address", k=1)[0].heading_path[-1] == "Vendors"
    assert path.with_name(f"{FILE_NAME}.damaged").read_bytes().startswith(b"not a database")
    assert "vendor" in WordVectors(path, knowledge_store.embedder).load()[0]
