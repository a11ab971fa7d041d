"""Speed of the knowledge store: ingest throughput, warm query latency, cold start.

    uv run python bench/knowledge_speed.py [--sizes 30 500 5000] [--queries 50]

One store grows through the sizes (default 30, 500, 5,000 chunks). At each size it prints the
ingest throughput of the chunks just added (embedding + Chroma write), the one-off rebuild of the
in-memory BM25 corpus, and the median and p95 latency of warm queries for each ranking. Chunks are
synthesised from the two handbooks' own text (a seeded bigram walk, ~120 words each, the size of a
real chunk). Then a fresh Python process measures the cold start: imports, opening the store,
loading the model and answering its first query.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from knowledge_quality import Labelled, handbook_queries

from taskcrew.knowledge import Chunk, KnowledgeStore, MiniLMEmbedder

ROOT = Path(__file__).resolve().parent.parent
RANKINGS = ("section", "section+also", "hybrid", "vector", "bm25")  # +also: with a model's other phrasings

COLD_START = """
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
t1 = time.perf_counter()
store = KnowledgeStore(Path(sys.argv[1]), MiniLMEmbedder())
t2 = time.perf_counter()
store.embedder.load()
t3 = time.perf_counter()
hits = store.procedures.search("how do I work out the due date from the payment terms", k=4)
t4 = time.perf_counter()
store.procedures.search("who approves a large payment", k=4)
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "model": t3 - t2, "first_query": t4 - t3,
                  "second_query": t5 - t4, "total_to_first_answer": t4 - t0, "hits": len(hits)}))
"""


def synthetic_chunks(n: int, start: int, corpus: str, seed: int = 7) -> list[Chunk]:
    words = re.findall(r"[A-Za-z][A-Za-z'-]*|\d+|[.,;:]", corpus)
    following: dict[str, list[str]] = {}
    for a, b in itertools.pairwise(words):
        following.setdefault(a.lower(), []).append(b)
    rng = random.Random(seed + start)
    chunks = []
    for i in range(start, start + n):
        word = rng.choice(words)
        out = [word]
        while len(out) < 120:
            word = rng.choice(following.get(word.lower()) or words)
            out.append(word)
        text = re.sub(r" ([.,;:])", r"\1", " ".join(out))
        chunks.append(
            Chunk(
                id=hashlib.sha256(f"synthetic-{i}".encode()).hexdigest()[:24],
                text=text,
                source=f"/synthetic/handbook-{i // 200}.md",
                heading_path=[f"Chapter {i // 40}", f"Section {i}"],
                kind="markdown",
                ordinal=i % 200,
                file_sha256="0" * 64,
            )
        )
    return chunks


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 500, 5000])
    parser.add_argument("--queries", type=int, default=50, help="timed queries per ranking and size")
    args = parser.parse_args()

    books, labelled = handbook_queries()
    corpus = "\n".join(p.read_text(encoding="utf-8") for p in books)
    queries = labelled[: args.queries]
    acme_file = next(e.file for q in labelled if q.set == "acme" for e in q.expect)
    embedder = MiniLMEmbedder()
    started = time.perf_counter()
    embedder.load()
    print(
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start (the machine may be shared)"
    )
    print(f"model load: {time.perf_counter() - started:.2f} s")

    print("chunks/s: embedding + Chroma write of the chunks added at that size; p50/p95: warm k=4 queries")
    with tempfile.TemporaryDirectory(prefix="taskcrew-kspeed-") as tmp:
        directory = Path(tmp) / "store"
        store = KnowledgeStore(directory, embedder)
        print(
            f"{'chunks':>6} {'added':>6} {'chunks/s':>9} {'bm25 rebuild':>13}  "
            + "  ".join(f"{r + ' p50/p95 ms':>22}" for r in RANKINGS)
            + "  load"
        )
        have = 0
        for size in sorted(args.sizes):
            new = synthetic_chunks(size - have, have, corpus)
            started = time.perf_counter()
            store.procedures.add_chunks(new)
            rate = len(new) / (time.perf_counter() - started)
            have = size
            started = time.perf_counter()
            store.procedures.search("warm up the corpus cache", k=4)  # builds the BM25 corpus once
            rebuild = time.perf_counter() - started
            cells = []
            for name in RANKINGS:
                ranking, _, plus = name.partition("+")

                def ask(q: Labelled, ranking: str = ranking, plus: str = plus) -> None:
                    store.procedures.search(q.query, k=4, ranking=ranking, also=q.also if plus else ())  # type: ignore[arg-type]

                for q in queries[:3]:
                    ask(q)
                times = []
                for q in queries:
                    t = time.perf_counter()
                    ask(q)
                    times.append((time.perf_counter() - t) * 1000)
                cells.append(f"{statistics.median(times):>10.1f} / {percentile(times, 0.95):>8.1f}")
            print(
                f"{size:>6} {len(new):>6} {rate:>9.1f} {rebuild * 1000:>10.0f} ms  "
                + "  ".join(f"{c:>22}" for c in cells)
                + f"  {os.getloadavg()[0]:.1f}"
            )

        handbook_store = Path(tmp) / "handbook"
        KnowledgeStore(handbook_store, embedder).procedures.ingest([p for p in books if p.name == acme_file])
        for label, path in ((f"{have} chunks", directory), ("handbook", handbook_store)):
            out = subprocess.run(
                [sys.executable, "-c", COLD_START, str(path)], capture_output=True, text=True, check=True
            )
            cold = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"cold start ({label}, load {os.getloadavg()[0]:.1f}): imports {cold['import']:.2f} s, open store {cold['open']:.2f} s, "
                f"model {cold['model']:.2f} s, first query {cold['first_query'] * 1000:.0f} ms "
                f"(second {cold['second_query'] * 1000:.0f} ms); first answer {cold['total_to_first_answer']:.2f} s "
                "after process start"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
