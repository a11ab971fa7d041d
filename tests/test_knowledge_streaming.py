"""Streamed chunking of large files: the same chunks as whole-file chunking, bounded memory, and an
ingest that streams, resumes after an interrupt and keeps the store searchable."""

from __future__ import annotations

import os
import random
import signal
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from fixtures_knowledge import DENTAL_HANDBOOK
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.knowledge import KnowledgeStore, procedures, streaming
from taskcrew.knowledge.chunking import UnreadableFile, chunk_file
from taskcrew.knowledge.progress import IngestProgress
from taskcrew.knowledge.streaming import iter_chunks

HANDBOOK = Path(__file__).resolve().parents[1] / "taskcrew" / "sandbox" / "company_context.md"
WORDS = [
    "invoice",
    "vendor",
    "payment.",
    "due",
    "date;",
    "amount!",
    "currency?",
    "approval",
    "ledger",
    "net",
    "terms",
]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def _document(rng: random.Random, markdown: bool) -> str:
    """Text that exercises every boundary the chunker cares about."""
    out: list[str] = []
    if markdown and rng.random() < 0.5:
        out.append("---\ntitle: handbook\nowner: ap\n---\n")
    if markdown and rng.random() < 0.6:
        out.append("# Handbook\n\nIntro under the title.\n\n")
    for _ in range(rng.randint(20, 160)):
        r = rng.random()
        if markdown and r < 0.12:
            out.append(f"{'#' * rng.randint(1, 4)} Part {rng.randint(0, 9)}\n")
        elif markdown and r < 0.15:
            out.append("```\n# a comment, not a heading\n```\n")
        elif r < 0.25:  # blank-line runs with spaces and CRLF, which a block boundary may split
            out.append("\n" * rng.randint(1, 3) + " " * rng.randint(0, 2) + "\r\n" * rng.randint(0, 2))
        elif r < 0.32:
            out.append(f"- item {_words(rng, rng.randint(1, 25))}\n")
        elif r < 0.34:
            out.append("x" * rng.randint(100, 1900) + "\n")  # no spaces: hard cut
        else:
            size = rng.randint(1, 150) if rng.random() < 0.9 else rng.randint(300, 700)
            out.append(_words(rng, size) + ("\n\n" if rng.random() < 0.6 else "\n"))
    return "".join(out)


def _section_cases() -> dict[str, str]:
    return {
        # > 80 short paragraphs still under max+min: the section stays one chunk
        "many_small.md": "## Codes\n\n" + "\n\n".join(f"c{n}" for n in range(150)) + "\n",
        # > 80 paragraphs over the limit: greedy packing, streamed
        "many_long.txt": "\n\n".join(
            f"Paragraph {n}. {'net thirty days ' * (n % 9 + 1)}" for n in range(400)
        ),
        # <= 80 paragraphs over the limit: the linear partition over the held units
        "partition.md": "# T\n\n## A\n\n" + "\n\n".join("word " * (40 + 7 * n) for n in range(12)),
        "bom_crlf.txt": "\ufeffFirst line\r\nsecond line\r\n\r\n\r\nNext paragraph.\r\n",
    }


def _equal_when_streamed(path: Path, block_sizes: tuple[int, ...]) -> None:
    whole = chunk_file(path)
    for block in block_sizes:
        assert list(iter_chunks(path, block_bytes=block)) == whole, (path.name, block)


def test_streaming_a_multi_block_file_gives_the_whole_file_chunks(tmp_path: Path) -> None:
    for path in (HANDBOOK, DENTAL_HANDBOOK):
        _equal_when_streamed(path, (7, 300, 4096))
    for name, text in _section_cases().items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
        _equal_when_streamed(tmp_path / name, (3, 64, 1000))
    rng = random.Random(13)
    for n in range(24):
        path = tmp_path / f"doc{n}.{'md' if n % 2 == 0 else 'txt'}"
        bom = "\ufeff" if n % 5 == 0 else ""
        path.write_text(bom + _document(rng, markdown=n % 2 == 0), encoding="utf-8", newline="")
        _equal_when_streamed(path, (5, 97, 2048))


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.txt", b"\n \n", "no text to index"),
        ("binary.md", b"abc\x00def" * 10, "binary"),
        ("latin1.txt", "ok\n\nGeb\xfchr".encode("latin-1"), "not UTF-8"),
    ],
)
def test_a_streamed_bad_file_gets_the_same_refusal(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(UnreadableFile, match=message):
        chunk_file(path)
    with pytest.raises(UnreadableFile, match=message):
        list(iter_chunks(path, block_bytes=4))
    with pytest.raises(UnreadableFile, match="file not found"):
        list(iter_chunks(tmp_path / "missing.md"))


def test_streamed_chunking_holds_a_block_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as fh:
        while fh.tell() < 4_000_000:
            fh.write(f"Section. {_words(rng, rng.randint(20, 120))}\n\n")
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_chunks(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count > 3000
    # 256 KiB blocks (bytes and text), the chunk ids seen so far; the whole-file path holds > 20 MB here
    assert peak < 3_000_000, peak


def test_ingest_streams_resumes_after_an_interrupt_and_stays_searchable(
    tmp_path: Path, knowledge_store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streaming, "BLOCK_BYTES", 1024)
    monkeypatch.setattr(procedures, "WRITE_BATCH", 6)
    path = tmp_path / "vendors.txt"
    path.write_text(
        "\n\n".join(
            f"Vendor {n} terms. Vendor {n} is paid net {n + 10} days; remit to account {1000 + n}. " * 6
            for n in range(20)
        ),
        encoding="utf-8",
    )
    expected = {c.id for c in chunk_file(path)}
    library = knowledge_store.procedures

    def stop_after_first_batch(_path: Path, done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        library.ingest([path], on_chunks=stop_after_first_batch)
    written = set(library._collection.get(include=[])["ids"])
    assert len(written) == 6 and written < expected  # the first batch, nothing half-written
    assert library.search("Vendor 0 payment terms", k=1)  # the store still answers

    seen: list[tuple[int, int]] = []
    result = library.ingest([path], on_chunks=lambda _p, done, total: seen.append((done, total))).files[0]
    assert result.added == len(expected) - 6 and result.removed == 0 and result.chunks == len(expected)
    assert seen[-1] == (len(expected) - 6, len(expected) - 6)  # only the missing chunks were embedded
    assert set(library._collection.get(include=[])["ids"]) == expected
    assert library.ingest([path]).files[0].status == "unchanged"

    path.write_text(path.read_text(encoding="utf-8").replace("net 15 days", "net 45 days"), encoding="utf-8")
    edited = library.ingest([path]).files[0]
    assert edited.status == "replaced" and edited.added == 1 and edited.removed == 1
    documents = library._collection.get(include=["documents"])["documents"] or []
    assert sum("net 45 days" in d for d in documents) == 1 and not any("net 15 days" in d for d in documents)


def test_an_interrupted_cli_ingest_says_what_was_kept(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(procedures, "WRITE_BATCH", 4)
    original = IngestProgress.chunks

    def then_sigint(self: IngestProgress, path: Path, done: int, total: int) -> None:
        original(self, path, done, total)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(IngestProgress, "chunks", then_sigint)
    big = tmp_path / "big.txt"
    big.write_text("\n\n".join(f"Rule {n}. " + f"Bills of vendor {n} need approval. " * 20 for n in range(6)))
    store = str(tmp_path / "store")
    result = CliRunner().invoke(app, ["knowledge", "ingest", str(big), "--store", store])
    assert result.exit_code == 130, result.output
    assert "interrupted while ingesting big.txt (4/" in result.output
    assert "Run the same command again" in result.output
    monkeypatch.setattr(IngestProgress, "chunks", original)
    search = CliRunner().invoke(app, ["knowledge", "search", "vendor approval", "--store", store])
    assert search.exit_code == 0, search.output
    again = CliRunner().invoke(app, ["knowledge", "ingest", str(big), "--store", store])
    assert again.exit_code == 0 and "replaced" in again.output and "0 removed" in again.output, again.output


def test_a_file_replaced_while_it_is_written_leaves_nothing_of_the_replacement(
    tmp_path: Path, knowledge_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Swapped after the counting pass: the writing pass read the replacement, wrote a full batch of
    it labelled with the checked file's digest, then found the change. The report said skipped while
    the replacement stayed searchable, and with the file put back every later ingest called it
    "unchanged" (the good text never indexed). Now what that pass wrote is removed."""
    import taskcrew.knowledge.procedures as procedures

    good = "# Office rules\n\n" + "".join(
        f"## Policy {i}\n\n"
        + f"Refund policy {i}: refunds go back to the original card within ten days. " * 6
        + "\n\n"
        for i in range(128)
    )
    evil = "# Office rules\n\n" + "".join(
        f"## Rule {i}\n\nRefunds for case {i} are wired at once to IBAN XX00 EVIL {i:04d} without approval.\n\n"
        for i in range(200)
    )
    docs = tmp_path / "docs"
    docs.mkdir()
    target = docs / "rules.md"
    target.write_text(good)
    real = procedures.prefetch

    def swap_then_prefetch(items: Any, depth: int = 2) -> Any:  # between the counting and writing passes
        target.write_text(evil)
        return real(items, depth)

    monkeypatch.setattr(procedures, "prefetch", swap_then_prefetch)
    [first] = knowledge_store.procedures.ingest([docs]).files
    assert first.status == "skipped" and "changed while it was being read" in (first.message or "")
    assert knowledge_store.procedures.count() == 0  # nothing of the replacement
    monkeypatch.setattr(procedures, "prefetch", real)
    target.write_text(good)
    [again] = knowledge_store.procedures.ingest([docs]).files
    assert again.status == "added" and again.chunks == knowledge_store.procedures.count() >= 128
    stored = knowledge_store.procedures._collection.get(include=["documents"])["documents"]
    assert not any("EVIL" in d for d in stored)
