"""Memory and speed of `knowledge ingest` on large text files: streamed, so RSS does not grow with size.

    uv run python bench/ingest_bench.py [--chunk-mb 30] [--ingest-mb 1 5] [--bounded-mb 30]
                                        [--bounded-s 360] [--threads 1] [--index-chunks 0]

Each measurement runs in a fresh process:
- chunking a ``--chunk-mb`` file with no embedding, whole-file (``chunk_file``) and streamed
  (``iter_chunks``, what ingest uses): chunks, seconds, peak RSS over the process's baseline;
- a full ingest of each ``--ingest-mb`` size into a new store: chunks/s, peak RSS, RSS at quarters;
- an ingest of a ``--bounded-mb`` file stopped after ``--bounded-s`` seconds (as Ctrl-C would: the
  interrupt is raised between batches): RSS once a minute, peak RSS, then whether the store is
  consistent (chunk count = chunks written, a search answers).
- ``--index-chunks N``: Chroma alone (ready-made vectors, no embedding): RSS as the collection grows.
- ``--folder-mb X --folder-files N``: a folder of N Markdown files (headings every few paragraphs)
  of X MB in all, ingested like `taskcrew knowledge ingest FOLDER`: chunks/s, peak RSS, progress
  reports seen; then the same folder again (content hashes: nothing chunked twice or embedded).
  ``--folder DIR`` does the same with a real folder (e.g. a product's HTML manual).
- ``--search-chunks N`` (default 5,000; 0 skips it): warm search latency (p50/p95 of 50 queries,
  k=4) per ranking on a store of N chunks (real texts and sections, vectors written ready-made so
  the set-up takes minutes, not hours; latency does not depend on the vectors' values), then the
  section ranking again once every section has 3 questions a chunk (knowledge/questions.py).
- ``--vocabulary N`` (default 20,000): one word in ten of the folder's and the search store's
  texts (and queries) is one of N made-up words, so the query expansion's vocabulary (one vector
  per distinct word, knowledge/vocabulary.py) is the size of a real manual's, not 25 words.
Figures, not assertions. ``--threads``: onnxruntime threads (1 keeps a shared machine usable; 0:
onnxruntime's choice, both cores).
"""

from __future__ import annotations

import argparse
import json
import os
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


def cpu_s() -> float:
    """CPU seconds of this process (all threads): a rate per CPU second says what two idle cores
    would do when the machine is shared."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_chunk(mode: str, path: str) -> dict[str, float]:
    from taskcrew.knowledge.chunking import chunk_file
    from taskcrew.knowledge.streaming import iter_chunks

    base = rss_mb()
    started = time.perf_counter()
    count = len(chunk_file(Path(path))) if mode == "whole" else sum(1 for _ in iter_chunks(Path(path)))
    return {"chunks": count, "seconds": time.perf_counter() - started, "base": base, "peak": peak_mb()}


def child_ingest(path: str, store: str, threads: str, bounded_s: str) -> dict[str, object]:
    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder

    embedder = MiniLMEmbedder(threads=int(threads) or None)
    embedder.load()
    knowledge = KnowledgeStore(Path(store), embedder)
    knowledge.procedures.search("warm up", k=1)
    base = rss_mb()
    limit = float(bounded_s)
    samples: list[tuple[float, int, int, float]] = []  # (seconds, done, total, RSS MB)
    started = time.perf_counter()

    def on_chunks(_file: Path, done: int, total: int) -> None:
        now = time.perf_counter() - started
        samples.append((now, done, total, rss_mb()))
        if limit and now > limit:
            raise KeyboardInterrupt

    interrupted = False
    try:
        report = knowledge.procedures.ingest([Path(path)], on_chunks=on_chunks)
        total = report.files[0].chunks
    except KeyboardInterrupt:
        interrupted, total = True, samples[-1][2]
    seconds = time.perf_counter() - started
    done = samples[-1][1]
    result: dict[str, object] = {"chunks": total, "done": done, "seconds": seconds, "base": base,
                                 "peak": peak_mb(), "interrupted": interrupted}  # fmt: skip
    if interrupted:
        minutes = [next(s for s in samples if s[0] >= m * 60) for m in range(int(samples[-1][0] // 60) + 1)]
        result["minutes"] = [(round(t), d, round(r)) for t, d, _, r in minutes]
        result["store_count"] = knowledge.procedures.count()  # consistent: every written batch, whole
        result["search_ok"] = bool(knowledge.procedures.search("vendor payment terms", k=3))
    else:
        quarters = [next((s for s in samples if s[1] >= done * q / 4), samples[-1]) for q in (1, 2, 3, 4)]
        result["quarters"] = [(d, round(r)) for _, d, _, r in quarters]
    return result


def child_index(store: str, count: str) -> dict[str, object]:
    """RSS of the Chroma collection alone as it grows: chunks written with ready-made vectors."""
    import numpy as np

    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder

    knowledge = KnowledgeStore(Path(store), MiniLMEmbedder())
    collection = knowledge.procedures._collection
    rng = np.random.default_rng(0)
    base = rss_mb()
    steps: list[tuple[int, int]] = []
    for start in range(0, int(count), 128):
        vectors = rng.standard_normal((128, 384)).astype(np.float32)
        ids = [f"c{start + i}" for i in range(128)]
        collection.upsert(ids=ids, embeddings=vectors, documents=["word " * 120] * 128,
                          metadatas=[{"source": "x"}] * 128)  # fmt: skip
        if (start + 128) % 5120 == 0:
            steps.append((start + 128, round(rss_mb())))
    return {"base": base, "steps": steps, "peak": peak_mb()}


def pseudo_words(count: int, seed: int = 7) -> list[str]:
    """``count`` distinct made-up words: a real manual's vocabulary (tens of thousands of words,
    each embedded once for the query expansion) that the 25 words of ``WORDS`` lack."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        out["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 11)))] = None
    return list(out)


def sentence_words(rng: random.Random, n: int, vocabulary: list[str]) -> str:
    """``n`` words of ``WORDS``, one in ten replaced by a word of ``vocabulary`` (when given)."""
    return " ".join(
        rng.choice(vocabulary) if vocabulary and rng.random() < 0.1 else rng.choice(WORDS) for _ in range(n)
    )


def write_folder(folder: Path, megabytes: float, files: int, seed: int = 3, vocabulary: int = 0) -> None:
    rng = random.Random(seed)
    extra = pseudo_words(vocabulary)
    folder.mkdir(parents=True, exist_ok=True)
    per_file = int(megabytes * 1_000_000 / files)
    for n in range(files):
        parts, size, section = [f"# Manual part {n}\n"], 0, 0
        while size < per_file:
            if rng.random() < 0.25:
                section += 1
                parts.append(f"\n## {rng.choice(WORDS).title()} {rng.choice(WORDS)} {section}\n")
            sentence = sentence_words(rng, rng.randint(60, 110), extra)
            parts.append(f"\n{sentence.capitalize()}.\n")
            size += len(sentence) + 2
        (folder / f"part-{n:03d}.md").write_text("".join(parts), encoding="utf-8")


def child_folder(folder: str, store: str, threads: str) -> dict[str, object]:
    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder

    embedder = MiniLMEmbedder(threads=int(threads) or None)
    embedder.load()
    knowledge = KnowledgeStore(Path(store), embedder)
    knowledge.procedures.search("warm up", k=1)
    base = rss_mb()
    reports = 0

    def on_chunks(_file: Path, done: int, total: int) -> None:
        nonlocal reports
        reports += 1

    started, cpu = time.perf_counter(), cpu_s()
    report = knowledge.procedures.ingest([Path(folder)], on_chunks=on_chunks)
    seconds, cpu = time.perf_counter() - started, cpu_s() - cpu
    again_started = time.perf_counter()
    again = knowledge.procedures.ingest([Path(folder)])
    return {"files": len(report.files), "chunks": report.chunks_added, "seconds": seconds, "cpu": cpu, "base": base,
            "peak": peak_mb(), "reports": reports, "again_s": time.perf_counter() - again_started,
            "again_added": again.chunks_added, "again_unchanged": again.count("unchanged")}  # fmt: skip


def child_search(store: str, count: str, vocabulary: str = "0") -> dict[str, object]:
    import statistics

    import numpy as np

    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
    from taskcrew.knowledge.models import Chunk
    from taskcrew.knowledge.ranking import ensure_sections

    embedder = MiniLMEmbedder()
    knowledge = KnowledgeStore(Path(store), embedder)
    library = knowledge.procedures
    rng = random.Random(4)
    extra = pseudo_words(int(vocabulary))
    vectors = np.random.default_rng(4).standard_normal((int(count), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = []
    for i in range(int(count)):
        path = [f"Chapter {i // 200}", f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i // 20}"]
        text = sentence_words(rng, 120, extra)
        chunks.append(Chunk(id=f"c{i}", text=text, source=f"/manual/part-{i // 200}.md", heading_path=path,
                            kind="markdown", ordinal=i % 200, file_sha256="0", title="Manual"))  # fmt: skip
    for start in range(0, len(chunks), 500):
        part = chunks[start : start + 500]
        library._collection.upsert(ids=[c.id for c in part], embeddings=vectors[start : start + 500],
                                   documents=[c.embed_text() for c in part],
                                   metadatas=[{"source": c.source, "heading_path": json.dumps(c.heading_path),
                                               "title": c.title, "ordinal": c.ordinal} for c in part])  # fmt: skip
    ensure_sections(
        [c.section_text() for c in chunks], knowledge._client.get_collection("sections"), embedder
    )
    queries = [sentence_words(rng, rng.randint(4, 12), extra) for _ in range(50)]
    out: dict[str, object] = {"chunks": library.count()}

    def timed(ranking: str, key: str) -> None:
        started = time.perf_counter()
        library.search("first query builds the corpus", k=4, ranking=ranking)  # type: ignore[arg-type]
        first = time.perf_counter() - started
        times = []
        for q in queries:
            started = time.perf_counter()
            library.search(q, k=4, ranking=ranking)  # type: ignore[arg-type]
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        out[key] = (
            round(first, 2),
            round(statistics.median(times), 1),
            round(times[int(len(times) * 0.95)], 1),
        )

    for ranking in ("section", "hybrid"):
        timed(ranking, ranking)
    out["peak_plain"] = peak_mb()
    # then 3 questions a chunk for every section (knowledge/questions.py; a generous count: a
    # model writes at most 3 a section), ready-made vectors, and the section ranking again
    from taskcrew.knowledge.questions import sections_of

    written = 0
    for section in sections_of(library):
        n = 3 * section.text.count("\n\n") + 3
        made = np.random.default_rng(written).standard_normal((n, 384)).astype(np.float32)
        made /= np.linalg.norm(made, axis=1, keepdims=True)
        knowledge.questions.replace(section, [f"question {written + k}" for k in range(n)], made)
        written += n
    timed("section", "section+questions")
    out["questions"] = written
    expander = library._current_corpus(library.count()).expander
    out["words"] = len(expander.words) if expander is not None else 0
    out["peak"] = peak_mb()
    return out


def run_child(*args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-mb", type=float, default=30.0)
    parser.add_argument("--ingest-mb", type=float, nargs="*", default=[1.0, 5.0])
    parser.add_argument("--bounded-mb", type=float, default=30.0)
    parser.add_argument("--bounded-s", type=float, default=360.0, help="0: skip the bounded run")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--index-chunks", type=int, default=0, help="Chroma's own RSS for N chunks")
    parser.add_argument("--folder-mb", type=float, default=0.0, help="ingest a folder of this size")
    parser.add_argument("--folder-files", type=int, default=40)
    parser.add_argument(
        "--folder", type=Path, default=None, help="ingest this real folder (read, not changed)"
    )
    parser.add_argument(
        "--search-chunks", type=int, default=5000, help="warm search latency at N chunks (0: skip)"
    )
    parser.add_argument("--vocabulary", type=int, default=20000, help="made-up words mixed into the texts")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        children = {
            "ingest": child_ingest,
            "index": child_index,
            "folder": child_folder,
            "search": child_search,
        }
        print(json.dumps(children[kind](*rest) if kind in children else child_chunk(kind, *rest)))
        return
    threads = str(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.chunk_mb:
            big = folder / "chunk.txt"
            write_text(big, args.chunk_mb)
            for mode in ("whole", "streamed"):
                c = run_child(mode, str(big))
                print(f"chunking {args.chunk_mb:g} MB {mode}: {c['chunks']} chunks in {c['seconds']:.1f} s; "
                      f"RSS {c['base']:.0f} MB before, peak {c['peak']:.0f} MB "
                      f"(+{c['peak'] - c['base']:.0f} MB)", flush=True)  # type: ignore[operator]  # fmt: skip
        if args.folder_mb or args.folder:
            docs = args.folder or folder / "docs"
            if not args.folder:
                write_folder(docs, args.folder_mb, args.folder_files, vocabulary=args.vocabulary)
            megabytes = sum(p.stat().st_size for p in docs.rglob("*") if p.is_file()) / 1e6
            f = run_child("folder", str(docs), str(folder / "folder-store"), threads)
            print(f"ingest folder {docs.name} ({megabytes:.1f} MB) in {f['files']} files: {f['chunks']} chunks in "
                  f"{f['seconds']:.0f} s ({f['chunks'] / f['seconds']:.1f} chunks/s wall, {f['chunks'] / f['cpu']:.1f} per CPU second); RSS {f['base']:.0f} MB "  # type: ignore[operator]
                  f"after loading, peak {f['peak']:.0f} MB; {f['reports']} progress reports; again: "
                  f"{f['again_unchanged']} unchanged, {f['again_added']} embedded, {f['again_s']:.1f} s; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        if args.search_chunks:
            r = run_child(
                "search", str(folder / "search-store"), str(args.search_chunks), str(args.vocabulary)
            )
            print(f"search at {r['chunks']} chunks, (first query s, warm p50 ms, p95 ms): section {r['section']}, "
                  f"hybrid {r['hybrid']}, section with {r['questions']} questions {r['section+questions']}; {r['words']} corpus words; peak RSS {r['peak_plain']:.0f} MB before the questions, {r['peak']:.0f} MB after; load {os.getloadavg()[0]:.1f}", flush=True)  # type: ignore[operator]  # fmt: skip
        if args.index_chunks:
            x = run_child("index", str(folder / "index-store"), str(args.index_chunks))
            print(f"Chroma alone, {args.index_chunks} chunks with ready vectors: RSS {x['base']:.0f} MB "
                  f"after opening; RSS every 5120 chunks (chunks, MB): {x['steps']}", flush=True)  # fmt: skip
        if args.bounded_s:
            path = folder / "bounded.txt"
            write_text(path, args.bounded_mb, seed=2)
            b = run_child("ingest", str(path), str(folder / "bounded-store"), threads, str(args.bounded_s))
            print(f"ingest {args.bounded_mb:g} MB stopped after {b['seconds']:.0f} s: {b['done']}/{b['chunks']} "
                  f"chunks written ({b['done'] / b['seconds']:.1f}/s); RSS {b['base']:.0f} MB after loading, "  # type: ignore[operator]
                  f"peak {b['peak']:.0f} MB; RSS each minute (s, chunks, MB): {b.get('minutes')}; "
                  f"store after the interrupt: {b.get('store_count')} chunks, search answers: "
                  f"{b.get('search_ok')}", flush=True)  # fmt: skip
        for n, megabytes in enumerate(args.ingest_mb):
            path = folder / f"ingest{n}.txt"
            write_text(path, megabytes, seed=1)
            i = run_child("ingest", str(path), str(folder / f"store{n}"), threads, "0")
            rate = i["chunks"] / i["seconds"]  # type: ignore[operator]
            print(f"ingest {megabytes:g} MB: {i['chunks']} chunks in {i['seconds']:.0f} s ({rate:.1f} chunks/s); "
                  f"RSS {i['base']:.0f} MB after loading, peak {i['peak']:.0f} MB; "
                  f"RSS at each quarter (chunks, MB): {i.get('quarters')}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
