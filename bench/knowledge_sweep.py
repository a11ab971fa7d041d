"""Choose the section ranking's weights by measurement, on one half of the labelled sets.

    uv run python bench/knowledge_sweep.py [--store DIR]

Every chunk of each store is scored exactly for each query (no candidate cut), from features
computed once: the chunk's cosine, its section name's cosine ("title > heading path"), its last
heading's cosine, BM25 over the chunk and BM25 over the section name (both normalised to the
query's best), and BM25 over the chunk with the query expanded into its neighbouring corpus words
(knowledge/vocabulary.py) for each (similarity, terms, scale) in ``EXPANSIONS``. A grid of weights is scored on the TUNE half (the even-numbered queries of each
set, 0, 2, 4, ...) and the best few combinations by mean MRR over the three sets are printed with
their figures on the HELD-OUT half (the odd-numbered ones) and on all queries. Nothing here is
used at run time: the chosen weights are copied into ``RankingConfig`` by hand.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from knowledge_quality import Labelled, answers, foreign_queries, handbook_queries

from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
from taskcrew.knowledge.lexical import Bm25Index
from taskcrew.knowledge.procedures import _hit
from taskcrew.knowledge.ranking import DenseIndex
from taskcrew.knowledge.vocabulary import Expander, content_words, corpus_vectors

FEATURES = ("chunk", "section", "heading", "bm25", "bm25_section", "section_best", "feedback")
EXPANSIONS = tuple(  # (similarity, terms, scale)
    (sim, terms, scale) for sim in (0.6, 0.65, 0.7) for terms in (3, 5) for scale in (0.25, 0.5, 1.0)
)


def features(store: KnowledgeStore, queries: list[Labelled]) -> tuple[list[np.ndarray], np.ndarray]:
    """Per query a (features x chunks) array, and per query and chunk whether the chunk answers."""
    library = store.procedures
    corpus = library._current_corpus(library.count())
    sections = store._client.get_collection("sections")
    dense = DenseIndex.build(
        corpus.ids, corpus.section_texts(), library._collection, sections, store.embedder
    )
    lasts = [json.loads(str(corpus.entries[i][1].get("heading_path") or "[]")) for i in corpus.ids]
    last_text = [
        (p[-1] if p else str(corpus.entries[i][1].get("title") or ""))
        for p, i in zip(lasts, corpus.ids, strict=True)
    ]
    keys = list(dict.fromkeys(last_text))
    key_vectors = store.embedder.embed(keys)
    key_row = np.asarray([keys.index(t) for t in last_text])
    section_bm25 = Bm25Index(corpus.ids, corpus.section_texts())
    qv = store.embedder.embed([q.query for q in queries])
    section_of = np.unique(np.asarray(corpus.section_texts()), return_inverse=True)[1]
    vocabulary = library._vocabulary
    assert vocabulary is not None
    known, word_vectors = corpus_vectors(vocabulary, corpus.words(), corpus.bm25.known)
    expanders = [Expander(known, word_vectors, sim, terms, scale) for sim, terms, scale in EXPANSIONS]
    out = []
    truth = np.zeros((len(queries), len(corpus.ids)), dtype=bool)
    hits = [_hit(i, corpus.entries[i], 1, 0.0) for i in corpus.ids]
    for n, q in enumerate(queries):
        v = qv[n]
        chunk = dense.chunk_vectors @ v
        section = (dense.section_vectors @ v)[dense.section_rows]
        heading = (key_vectors @ v)[key_row]
        rows = [chunk, section, heading]
        for index in (corpus.bm25, section_bm25):
            s = index.all_scores(q.query)
            s = np.zeros(len(corpus.ids), dtype=np.float32) if s is None else s
            rows.append(s / s.max() if s.max() > 0 else s)
        best = np.full(section_of.max() + 1, -1.0, dtype=np.float32)
        np.maximum.at(best, section_of, chunk)
        rows.append(best[section_of])
        base = chunk + 0.5 * section
        centroid = dense.chunk_vectors[np.argsort(-base)[:3]].mean(axis=0)
        rows.append(dense.chunk_vectors @ (centroid / np.linalg.norm(centroid)))
        qwords = content_words(q.query)
        qwv = store.embedder.embed(qwords)
        for index in (corpus.bm25, section_bm25):  # over the chunks, then over the section names
            for expander in expanders:
                s = index.weighted_scores(expander.weights(q.query, qwv))
                s = np.zeros(len(corpus.ids), dtype=np.float32) if s is None else s
                rows.append(s / s.max() if s.max() > 0 else s)
        out.append(np.vstack(rows))
        truth[n] = [answers(h, q) for h in hits]
    return out, truth


def ranks(feats: list[np.ndarray], truth: np.ndarray, weights: np.ndarray) -> list[int | None]:
    result: list[int | None] = []
    for f, t in zip(feats, truth, strict=True):
        score = weights @ f
        good = score[t]
        if good.size == 0:
            result.append(None)
            continue
        rank = int((score > good.max()).sum()) + 1
        result.append(rank if rank <= 10 else None)
    return result


def figures(r: list[int | None]) -> tuple[float, float, float]:
    n = len(r) or 1
    return (
        sum(x == 1 for x in r) / n,
        sum(x is not None and x <= 3 for x in r) / n,
        sum(1 / x for x in r if x) / n,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="the stores of knowledge_quality.py --store")
    args = parser.parse_args()
    embedder = MiniLMEmbedder()
    sets: dict[str, tuple[list[np.ndarray], np.ndarray]] = {}
    with tempfile.TemporaryDirectory(prefix="taskcrew-ksweep-") as scratch:
        root = args.store or Path(scratch)
        books, queries = handbook_queries()
        store = KnowledgeStore(root / "handbooks", embedder)
        store.procedures.ingest(books)
        for name in ("acme", "dental"):
            sets[name] = features(store, [q for q in queries if q.set == name])
        foreign = foreign_queries()
        if foreign is not None:
            folder, fq = foreign
            store = KnowledgeStore(root / "foreign", embedder)
            store.procedures.ingest([folder])
            sets["foreign"] = features(store, fq)
        else:
            print("foreign: not staged (run bench/stage_foreign_docs.py first); swept on the handbooks")
    # The last-heading cosine and the feedback never entered the best combinations (the round
    # before); they stay at 0. "lexical" picks plain BM25 (0) or one of EXPANSIONS (1..).
    grid = {
        "section": [0.25, 0.5, 0.75, 1.0],
        "bm25": [0.1, 0.2, 0.3],
        "lexical": list(range(len(EXPANSIONS) + 1)),
        "bm25_section": [0.0, 0.05, 0.1, 0.2],
        "section_best": [0.0, 0.25, 0.5],
    }
    results = []
    for section, bm25, lexical, bm25_section, best in itertools.product(*grid.values()):
        combo = (section, bm25, EXPANSIONS[lexical - 1] if lexical else "plain", bm25_section, best)
        w = np.zeros(len(FEATURES) + 2 * len(EXPANSIONS), dtype=np.float32)
        w[0], w[1], w[5] = 1.0, section, best
        w[3 if lexical == 0 else len(FEATURES) + lexical - 1] = bm25
        w[4 if lexical == 0 else len(FEATURES) + len(EXPANSIONS) + lexical - 1] = bm25_section
        per = {}
        for name, (feats, truth) in sets.items():
            tune = ranks(feats[0::2], truth[0::2], w)
            held = ranks(feats[1::2], truth[1::2], w)
            every = ranks(feats, truth, w)
            per[name] = (figures(tune), figures(held), figures(every))
        tune_mrr = float(np.mean([p[0][2] for p in per.values()]))
        results.append((tune_mrr, combo, per))
    results.sort(key=lambda r: -r[0])
    base = next(r for r in results if r[1] == (0.75, 0.2, "plain", 0.0, 0.5))
    print(
        "weights (section, bm25, lexical: plain or (similarity, terms, scale), bm25_section, section_best);"
        " chunk cosine 1; per set hit@1/hit@3/MRR: tune | held-out | all"
    )
    for tune_mrr, combo, per in [*results[:10], base]:
        label = "before " if combo == base[1] else "       "
        print(f"{label} {combo} tune MRR {tune_mrr:.3f}")
        for name, (t, h, a) in per.items():
            print(f"    {name:<8} " + " | ".join("/".join(f"{x:.2f}" for x in f) for f in (t, h, a)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
