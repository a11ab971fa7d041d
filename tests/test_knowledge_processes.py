"""One store, several processes: a store held open (a worker's, the console's) sees what another
process wrote meanwhile (knowledge/changes.py). The other process is a real one: the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from fake_openai import FakeOpenAIServer
from test_knowledge_questions import MANUAL, QUERY, _answer

from taskcrew.crew.scripted import ScriptedLLM
from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
from taskcrew.knowledge.changes import ChangeMark

HANDBOOK = """# Payments

## Supplier payments

Suppliers are paid every Tuesday by bank transfer. The payment run is prepared by the AP clerk
and approved by the controller before noon on the same day.

## Petty cash

Petty cash is counted every Friday afternoon; the box holds at most 200 EUR and is kept in the
safe of the finance office.
"""


def _cli(tmp_path: Path, *args: str) -> str:
    """`taskcrew ...` in its own process, as an operator runs it while a worker is up."""
    env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "TASKCREW_RUNS": str(tmp_path / "runs")}
    done = subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", *args], env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _held(tmp_path: Path, embedder: MiniLMEmbedder, name: str, text: str) -> tuple[KnowledgeStore, Path]:
    """A store held open in this process (as a worker holds it) with one document ingested."""
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    held = KnowledgeStore(tmp_path / "store", embedder)
    held.procedures.ingest([doc])
    return held, doc


def test_a_store_held_open_sees_another_process_edit_and_add_files(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    held, doc = _held(tmp_path, knowledge_embedder, "payments.md", HANDBOOK)
    assert "every Tuesday" in held.procedures.search("when are suppliers paid", k=1)[0].text

    # an edit that keeps the number of chunks: a count would not show it
    doc.write_text(HANDBOOK.replace("every Tuesday", "every Thursday"), encoding="utf-8")
    assert "1 replaced" in _cli(tmp_path, "knowledge", "ingest", str(doc), "--store", str(tmp_path / "store"))
    assert held.procedures.count() == 2
    assert "every Thursday" in held.procedures.search("when are suppliers paid", k=1)[0].text

    # a new file: new ids the held process's own vector index never had
    more = tmp_path / "travel.md"
    more.write_text("# Travel\n\n## Mileage\n\nOwn cars are paid 0.30 EUR per kilometre.\n", encoding="utf-8")
    _cli(tmp_path, "knowledge", "ingest", str(more), "--store", str(tmp_path / "store"))
    [hit] = held.procedures.search("how much per kilometre for my own car", k=1)
    assert "0.30 EUR per kilometre" in hit.text

    # and the held store's own writes go on working, and are seen by the next process
    doc.write_text(HANDBOOK.replace("every Tuesday", "every Monday"), encoding="utf-8")
    assert held.procedures.ingest([doc]).files[0].status == "replaced"
    out = _cli(
        tmp_path,
        "knowledge",
        "search",
        "when are suppliers paid",
        "-k",
        "1",
        "--store",
        str(tmp_path / "store"),
    )
    assert "every Monday" in out


def test_questions_another_process_writes_rank_in_a_store_held_open(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    held, _ = _held(tmp_path, knowledge_embedder, "manual.md", MANUAL)
    assert held.procedures.search(QUERY, k=1)[0].heading_path[-1] != "Bills"  # the manual's words alone

    with FakeOpenAIServer(ScriptedLLM([_answer] * 20)) as server:
        args = [
            "knowledge",
            "questions",
            "--model",
            f"w@{server.base_url}",
            "--store",
            str(tmp_path / "store"),
        ]
        assert "3 asked, 4 question(s) written" in _cli(tmp_path, *args)
    assert held.procedures.search(QUERY, k=1)[0].heading_path[-1] == "Bills"


def test_a_reopen_waits_for_the_searches_in_flight(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    """A worker's runs search in threads; another process's write reopens the store under them."""
    held, _ = _held(tmp_path, knowledge_embedder, "payments.md", HANDBOOK)
    other = ChangeMark(tmp_path / "store" / "procedures.changed")  # as another process's writes change it
    failures: list[BaseException] = []
    texts: set[str] = set()

    def search() -> None:
        try:
            for _ in range(15):
                texts.add(held.procedures.search("when are suppliers paid", k=1)[0].text[:30])
                held.facts.search("suppliers", k=1)
        except BaseException as exc:  # collected, reported below
            failures.append(exc)

    threads = [threading.Thread(target=search) for _ in range(4)]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        other.bump()
        time.sleep(0.02)
    assert not failures, failures[0]
    assert texts == {"Suppliers are paid every Tuesd"}
