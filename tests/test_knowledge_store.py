"""The procedures collection on a real Chroma directory: ingest, replace, skip, persist, retrieve."""

from __future__ import annotations

import gc
import os
import socket
from pathlib import Path

import pytest
from fixtures_knowledge import DENTAL_HANDBOOK, SMALL_DOC, write_pdf, write_small_doc

from taskcrew.knowledge import FileIngest, KnowledgeStore, MiniLMEmbedder, knowledge_for_task, seed_if_empty

SEED_TASK = (
    "Find the latest invoice from Northwind Traders, extract the amount and due date, enter it into "
    "our internal system, and tell me once it is done."
)


def _ids(store: KnowledgeStore) -> set[str]:
    return set(store.procedures._collection.get(include=[])["ids"])


def test_reingesting_the_same_file_is_idempotent(tmp_path: Path, knowledge_store: KnowledgeStore) -> None:
    doc = write_small_doc(tmp_path / "docs" / "rules.md")
    first = knowledge_store.procedures.ingest([doc])
    ids = _ids(knowledge_store)
    assert first.files[0].status == "added" and first.files[0].added == len(ids) == 3
    second = knowledge_store.procedures.ingest([doc])
    assert second.files[0].status == "unchanged" and second.chunks_added == 0
    assert _ids(knowledge_store) == ids


def test_a_changed_file_replaces_its_old_chunks(tmp_path: Path, knowledge_store: KnowledgeStore) -> None:
    doc = write_small_doc(tmp_path / "docs" / "rules.md")
    knowledge_store.procedures.ingest([doc])
    before = _ids(knowledge_store)
    edited = SMALL_DOC.replace("within ten business days", "within five business days")
    assert edited != SMALL_DOC
    doc.write_text(edited, encoding="utf-8")
    result = knowledge_store.procedures.ingest([doc]).files[0]
    after = _ids(knowledge_store)
    assert result.status == "replaced" and result.added == 1 and result.removed == 1
    assert len(after) == len(before) and len(after - before) == 1
    top = knowledge_store.procedures.search("how long until a refund is paid", k=1)[0]
    assert "within five business days" in top.text and "ten business days" not in top.text


def test_unreadable_files_are_skipped_with_a_message_and_the_rest_ingested(
    tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "good.md").write_text(
        "## Refunds\n\nRefunds are paid back to the original card.", encoding="utf-8"
    )
    write_pdf(folder / "scan.pdf", [""])
    (folder / "latin1.txt").write_bytes("Gebühr".encode("latin-1"))
    (folder / "picture.png").write_bytes(b"\x89PNG")  # unsupported: not picked up from a folder
    seen: list[FileIngest] = []
    report = knowledge_store.procedures.ingest([folder, tmp_path / "nowhere.md"], on_file=seen.append)
    by_name = {Path(f.path).name: f for f in report.files}
    assert set(by_name) == {"good.md", "scan.pdf", "latin1.txt", "nowhere.md"}
    assert by_name["good.md"].status == "added"
    assert "no text layer" in (by_name["scan.pdf"].message or "")
    assert "not UTF-8" in (by_name["latin1.txt"].message or "")
    assert "file not found" in (by_name["nowhere.md"].message or "")
    assert report.count("skipped") == 3 and "skipped" in report.render()
    assert [f.path for f in seen] == [f.path for f in report.files]
    assert knowledge_store.procedures.search("refund to card", k=1)[0].heading_path == ["Refunds"]


def test_the_store_persists_across_instances(tmp_path: Path, knowledge_embedder: MiniLMEmbedder) -> None:
    directory = tmp_path / "store"
    KnowledgeStore(directory, knowledge_embedder).procedures.ingest([write_small_doc(tmp_path / "rules.md")])
    reopened = KnowledgeStore(directory, knowledge_embedder)
    assert reopened.procedures.count() == 3
    assert reopened.procedures.search("where can visitors park", k=1)[0].heading_path == ["Parking"]


def test_a_store_no_longer_used_hands_back_its_open_files(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    # an eval sweep seeds a store per run in one process: each left ~6 descriptors open for ever
    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    def use_and_drop(directory: Path) -> None:
        KnowledgeStore(directory, knowledge_embedder).procedures.ingest(
            [write_small_doc(tmp_path / "rules.md")]
        )
        gc.collect()

    use_and_drop(tmp_path / "warm-up")
    before = open_files()
    for n in range(10):
        use_and_drop(tmp_path / f"store-{n}")
    assert open_files() - before <= 5


def test_first_use_seeds_the_handbook_only_when_empty(
    tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    sandbox = tmp_path / "sandbox"
    write_small_doc(sandbox / "company_context.md")
    assert seed_if_empty(knowledge_store, tmp_path / "no-sandbox-here") is None
    seeded = seed_if_empty(knowledge_store, sandbox)
    assert seeded is not None and seeded.count("added") == 1
    assert seed_if_empty(knowledge_store, sandbox) is None


@pytest.mark.parametrize(
    ("query", "section"),
    [
        (
            "Is this invoice already entered? Check before entering it.",
            "1.3 Check for duplicates before entering",
        ),
        (
            "The invoice has only Net 30 terms and no due date",
            "1.8 Computing the due date from payment terms",
        ),
        (
            "Enter the subtotal or the total including tax?",
            "1.4 The amount to enter: total payable including tax",
        ),
        (
            "Should I mark the bill as paid after entering it?",
            "1.10 Payment status: never mark a bill paid unless asked",
        ),
        ("Which document is the latest invoice from a vendor?", '1.2 Which invoice is "the latest"'),
        (
            "An email tells me to ignore the rules and mark every bill paid",
            "3. Instructions found inside documents and emails",
        ),
    ],
)
def test_the_right_procedure_is_retrieved_for_the_seed_tasks(
    handbooks_store: KnowledgeStore, query: str, section: str
) -> None:
    hits = handbooks_store.procedures.search(query, k=3)
    assert section in [h.heading_path[-1] for h in hits if h.source_name == "company_context.md"], [
        h.citation for h in hits
    ]


def test_the_planner_brief_for_the_seed_task_covers_the_procedure(handbooks_store: KnowledgeStore) -> None:
    brief = knowledge_for_task(handbooks_store, SEED_TASK, k_procedures=4)
    cited = [p.citation for p in brief.procedures]
    assert all(c.startswith("company_context.md § 1. Accounts payable") for c in cited), cited
    assert any(c.endswith('1.2 Which invoice is "the latest"') for c in cited)
    # what the top passages do not quote is named, so the planner can look it up
    assert any(c.endswith("1.3 Check for duplicates before entering") for c in cited + brief.related)
    assert not set(cited) & set(brief.related)
    text = brief.render()
    assert "Company procedures:" in text and "Other sections of the same chapters" in text
    assert len(text) < 6000


def test_every_ranking_answers_and_bm25_finds_exact_words(handbooks_store: KnowledgeStore) -> None:
    for ranking in ("hybrid", "vector", "bm25", "rrf"):
        hits = handbooks_store.procedures.search(
            "W-8BEN-E tax form for foreign vendors", k=3, ranking=ranking
        )
        assert hits and [h.rank for h in hits] == list(range(1, len(hits) + 1)), ranking
    assert (
        handbooks_store.procedures.search("W-8BEN-E", k=1, ranking="bm25")[0]
        .heading_path[-1]
        .startswith("6. Vendor")
    )


def test_a_second_company_is_told_apart(handbooks_store: KnowledgeStore) -> None:
    dental = handbooks_store.procedures.search("the autoclave spore test failed", k=1)[0]
    acme = handbooks_store.procedures.search("the scanned invoice cannot be read", k=1)[0]
    assert dental.source_name == DENTAL_HANDBOOK.name and acme.source_name == "company_context.md"


def test_an_empty_store_answers_nothing(knowledge_store: KnowledgeStore) -> None:
    assert knowledge_store.is_empty()
    assert knowledge_store.procedures.search("anything", k=3) == []
    assert knowledge_store.facts.search("anything", k=3) == []


def test_no_network_is_touched_from_cold_open_to_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh embedder and store: no DNS lookup and no socket connection of any kind."""
    attempts: list[object] = []

    def record(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "getaddrinfo", record)
    monkeypatch.setattr(socket.socket, "connect", record)
    monkeypatch.setattr(socket.socket, "connect_ex", record)
    store = KnowledgeStore(tmp_path / "store", MiniLMEmbedder())
    store.procedures.ingest([write_small_doc(tmp_path / "rules.md")])
    assert store.procedures.search("refund to the card", k=2)
    store.facts.search("anything", k=2)
    assert attempts == []
