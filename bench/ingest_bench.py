"""Memory and speed of `knowledge ingest` on one large text file.

    uv run python bench/ingest_bench.py [--chunk-mb 30] [--ingest-mb 1]

Two measurements, each in a fresh process: chunking a ``--chunk-mb`` file (read, split, chunk ids;
no embedding) and ingesting a ``--ingest-mb`` file into a new store (chunk, embed, write), sampling
RSS after every embedded batch. Prints peak RSS over the process's baseline, chunks/s, and RSS at
quarters of the ingest (flat = bounded by the batch, not the file). Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "invoice",
    "vendor",
    "payment",
    "due",
    "date",
    "amount",
    "currency",
    "approval",
    "ledger",
    "account",
    "terms",
    "net",
    "discount",
    "remittance",
    "purchase",
    "order",
    "receipt",
    "credit",
    "memo",
    "reminder",
    "supplier",
    "bank",
    "transfer",
    "reference",
    "period",
]


def write_text(path: Path, megabytes: float, seed: int = 0) -> None:
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    with path.open("w", encoding="utf-8") as fh:
        written = 0
        n = 0
        while written < target:
            n += 1
            sentences = [
                " ".join(rng.choices(WORDS, k=rng.randint(8, 20))).capitalize() + "." for _ in range(6)
            ]
            paragraph = f"Section {n}. " + " ".join(sentences) + "\n\n"
            fh.write(paragraph)
            written += len(paragraph)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_chunk(path: str) -> dict[str, float]:
    from taskcrew.knowledge.chunking import chunk_file

    base = rss_mb()
    started = time.perf_counter()
    chunks = chunk_file(Path(path))
    return {"chunks": len(chunks), "seconds": time.perf_counter() - started, "base": base, "peak": peak_mb()}


def child_ingest(path: str, store: str) -> dict[str, object]:
    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.load()
    knowledge = KnowledgeStore(Path(store), embedder)
    knowledge.procedures.search("warm up", k=1)
    base = rss_mb()
    samples: list[tuple[int, int, float]] = []
    started = time.perf_counter()

    def on_chunks(_file: Path, done: int, total: int) -> None:
        samples.append((done, total, rss_mb()))

    report = knowledge.procedures.ingest([Path(path)], on_chunks=on_chunks)
    seconds = time.perf_counter() - started
    total = report.files[0].chunks
    quarters = [next((s for s in samples if s[0] >= total * q / 4), samples[-1]) for q in (1, 2, 3, 4)]
    return {"chunks": total, "seconds": seconds, "base": base, "peak": peak_mb(),
            "quarters": [(d, round(r)) for d, _, r in quarters]}  # fmt: skip


def run_child(*args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-mb", type=float, default=30.0)
    parser.add_argument("--ingest-mb", type=float, default=1.0)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        print(json.dumps(child_chunk(*rest) if kind == "chunk" else child_ingest(*rest)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        big, small = folder / "big.txt", folder / "small.txt"
        write_text(big, args.chunk_mb)
        write_text(small, args.ingest_mb, seed=1)
        c = run_child("chunk", str(big))
        print(f"chunking {args.chunk_mb:g} MB: {c['chunks']} chunks in {c['seconds']:.1f} s; "
              f"RSS {c['base']:.0f} MB before, peak {c['peak']:.0f} MB (+{c['peak'] - c['base']:.0f} MB)")  # type: ignore[operator]  # fmt: skip
        i = run_child("ingest", str(small), str(folder / "store"))
        rate = i["chunks"] / i["seconds"]  # type: ignore[operator]
        print(f"ingest {args.ingest_mb:g} MB: {i['chunks']} chunks in {i['seconds']:.0f} s ({rate:.1f} chunks/s); "
              f"RSS {i['base']:.0f} MB after loading, peak {i['peak']:.0f} MB; "
              f"RSS at each quarter (chunks, MB): {i['quarters']}")  # fmt: skip


if __name__ == "__main__":
    main()
