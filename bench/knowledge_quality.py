"""Retrieval quality of the knowledge store on labelled queries over two handbooks.

    uv run python bench/knowledge_quality.py [--misses] [--ranking hybrid vector bm25]

Both handbooks go into one fresh store (a temp dir); every query of bench/data/knowledge/queries.yaml
is run through each ranking, and hit@1, hit@3 and MRR (over the top 10) are printed per handbook.
A hit is a chunk whose heading path ends in (or whose text contains the heading of) one of the
query's expected sections. "hybrid" is the store's default (vector + BM25 fused by RRF).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml
from pydantic import BaseModel

from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder, ProcedureHit

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "bench" / "data" / "knowledge" / "queries.yaml"
RANKINGS = ("hybrid", "vector", "bm25", "rrf")
DEPTH = 10


class LabelledQuery(BaseModel):
    handbook: str
    query: str
    expect: list[str]


class QuerySet(BaseModel):
    handbooks: dict[str, Path]
    queries: list[LabelledQuery]

    @classmethod
    def load(cls, path: Path = QUERIES) -> QuerySet:
        data = cls.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        data.handbooks = {name: ROOT / p for name, p in data.handbooks.items()}
        return data


class Scores(BaseModel):
    n: int
    hit1: float
    hit3: float
    mrr: float


def answers(hit: ProcedureHit, query: LabelledQuery, handbook: Path) -> bool:
    if Path(hit.source) != handbook.resolve():
        return False
    for title in query.expect:
        if hit.heading_path and hit.heading_path[-1] == title:
            return True
        if re.search(rf"^#+ {re.escape(title)}$", hit.text, flags=re.MULTILINE):
            return True
    return False


def first_rank(hits: list[ProcedureHit], query: LabelledQuery, handbook: Path) -> int | None:
    return next((h.rank for h in hits if answers(h, query, handbook)), None)


def score(ranks: list[int | None]) -> Scores:
    n = len(ranks)
    return Scores(
        n=n,
        hit1=sum(1 for r in ranks if r == 1) / n,
        hit3=sum(1 for r in ranks if r is not None and r <= 3) / n,
        mrr=sum(1 / r for r in ranks if r is not None) / n,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--misses", action="store_true", help="list queries whose answer is not in the top 3")
    parser.add_argument("--ranking", nargs="+", choices=RANKINGS, default=list(RANKINGS))
    args = parser.parse_args()

    qs = QuerySet.load()
    with tempfile.TemporaryDirectory(prefix="taskcrew-kbench-") as tmp:
        store = KnowledgeStore(Path(tmp) / "store", MiniLMEmbedder())
        report = store.procedures.ingest(list(qs.handbooks.values()))
        print(f"ingested: {report.render()}; {store.procedures.count()} chunks in the store")
        print(f"{len(qs.queries)} labelled queries\n")
        print(f"{'handbook':<8} {'ranking':<7} {'n':>3} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'ms/query':>9}")
        for name, handbook in qs.handbooks.items():
            queries = [q for q in qs.queries if q.handbook == name]
            for ranking in args.ranking:
                ranks: list[int | None] = []
                started = time.perf_counter()
                misses = []
                for q in queries:
                    hits = store.procedures.search(q.query, k=DEPTH, ranking=ranking)
                    rank = first_rank(hits, q, handbook)
                    ranks.append(rank)
                    if rank is None or rank > 3:
                        top = hits[0].heading_path[-1] if hits and hits[0].heading_path else "-"
                        misses.append(f"    rank {rank}: {q.query!r} (top: {top})")
                ms = (time.perf_counter() - started) * 1000 / len(queries)
                s = score(ranks)
                print(
                    f"{name:<8} {ranking:<7} {s.n:>3} {s.hit1:>6.2f} {s.hit3:>6.2f} {s.mrr:>6.2f} {ms:>9.1f}"
                )
                if args.misses:
                    print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
