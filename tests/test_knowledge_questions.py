"""Questions a section answers: written by a model once per section, matched by the ranking."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.crew.scripted import ScriptedCall, ScriptedLLM
from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
from taskcrew.knowledge.procedures import RankingConfig
from taskcrew.knowledge.questions import parse_questions, sections_of, write_questions
from taskcrew.knowledge.store import StoreConfig

runner = CliRunner()

MANUAL = """# Business features

## Accounts Payable

### Bills

Enter each bill from a vendor with its number, date and terms. Posting the bill puts the amount
into the A/P account until it is paid through Process Payment.

## Accounts Receivable

### Invoices

Create an invoice for a customer, add the entries and post it; the customer then owes the amount
until their payment is recorded.

## Office

### Visitor parking

Visitors park in the spaces by the main entrance; reception hands out day passes.
"""

# what a model would write for each section, in a clerk's words (none of them the manual's)
WRITTEN = {
    "Bills": [
        "how do I record a supplier's invoice that we settle later",
        "where does money we owe a supplier show up",
    ],
    "Invoices": ["how do I charge a client for work we did"],
    "Visitor parking": ["where can guests leave their car"],
}
QUERY = "a supplier sent an invoice we will settle next month, how do I record it"


def _ask(system: str, user: str) -> str:
    assert "questions a person at work would type" in system
    assert re.match(r"Document: \S+\.md — [^\n]+\nSection: [^\n]+\n\n\S", user), user[:200]
    section = user.split("Section: ", 1)[1].splitlines()[0].split(" > ")[-1]
    return json.dumps({"questions": WRITTEN.get(section, [])})


def _answer(record: ScriptedCall) -> str:
    """The scripted model behind the local OpenAI-compatible server: ``_ask`` on each request."""
    return _ask(str(record.messages[0]["content"]), str(record.messages[-1]["content"]))


def _store(tmp_path: Path, embedder: MiniLMEmbedder, weight: float | None = None) -> KnowledgeStore:
    """The manual in a new store; ``weight``: the question weight (None: the shipped one)."""
    doc = tmp_path / "manual.md"
    if not doc.exists():
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(MANUAL, encoding="utf-8")
    ranking = RankingConfig() if weight is None else RankingConfig(question_weight=weight)
    store = KnowledgeStore(tmp_path / f"store-{weight}", embedder, StoreConfig(ranking=ranking))
    store.procedures.ingest([doc])
    return store


def test_a_question_in_everyday_words_finds_the_section_the_manual_names_otherwise(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    store = _store(tmp_path, knowledge_embedder)
    before = store.procedures.search(QUERY, k=1)[0].heading_path[-1]
    report = write_questions(store, _ask)
    assert (report.asked, report.written, report.failed) == (3, 4, [])
    assert store.procedures.search(QUERY, k=1)[0].heading_path[-1] == "Bills"
    assert before != "Bills"  # the manual's words alone put the customers' invoices first
    # asked once: a second run asks nothing; a limited run says what it left
    limited = _store(tmp_path / "limited", knowledge_embedder)
    first = write_questions(limited, _ask, limit=2)
    assert (first.asked, first.fresh, first.left) == (2, 0, 1) and "1 left for the next run" in first.render()
    rest = write_questions(limited, _ask, limit=2)
    assert (rest.asked, rest.fresh, rest.left) == (1, 2, 0)
    again = write_questions(store, _ask)
    assert (again.asked, again.fresh) == (0, 3)
    # without the weight the questions are stored but not used
    plain = _store(tmp_path, knowledge_embedder, 0.0)
    write_questions(plain, _ask)
    assert plain.procedures.search(QUERY, k=1)[0].heading_path[-1] == before


def test_a_changed_section_is_asked_again_and_its_old_questions_are_not_used(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    store = _store(tmp_path, knowledge_embedder)
    write_questions(store, _ask)
    doc = tmp_path / "manual.md"
    doc.write_text(
        MANUAL.replace("Enter each bill from a vendor", "Scan each bill from a vendor"), encoding="utf-8"
    )
    store.procedures.ingest([doc])
    # the Bills section changed: its questions wait for the next run, the others still count
    assert store.procedures.search(QUERY, k=1)[0].heading_path[-1] != "Bills"
    assert store.procedures.search("where can guests leave their car", k=1)[0].heading_path[-1] == (
        "Visitor parking"
    )
    asked: list[str] = []

    def ask(system: str, user: str) -> str:
        asked.append(user)
        return _ask(system, user)

    report = write_questions(store, ask)
    assert report.asked == 1 and "Scan each bill" in asked[0]
    assert store.procedures.search(QUERY, k=1)[0].heading_path[-1] == "Bills"


def test_an_unreadable_reply_is_reported_and_the_section_asked_next_time(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    store = _store(tmp_path, knowledge_embedder)
    report = write_questions(store, lambda s, u: "Sure! Here:")
    assert report.asked == 3 and report.written == 0 and len(report.failed) == 3
    assert "not JSON" in report.failed[0]
    assert write_questions(store, _ask).asked == 3
    # a section a model found nothing to ask about is marked asked, not asked forever
    store2 = _store(tmp_path / "b", knowledge_embedder)
    nothing = write_questions(store2, lambda s, u: '{"questions": []}')
    assert (nothing.asked, nothing.written, nothing.failed) == (3, 0, [])
    assert write_questions(store2, _ask).asked == 0


def test_parse_questions() -> None:
    assert parse_questions('```json\n{"questions": ["a b", " a  b ", "c", "d", "e"]}\n```') == [
        "a b",
        "c",
        "d",
    ]
    assert parse_questions('{"questions": []}') == []
    for bad in ("no json", '{"q": []}', '{"questions": [1, 2]}', '["a"]'):
        with pytest.raises(ValueError):
            parse_questions(bad)
    assert len(parse_questions(json.dumps({"questions": ["x" * 500]}))[0]) == 200


def test_sections_hold_their_chunks_text_in_order(tmp_path: Path, knowledge_embedder: MiniLMEmbedder) -> None:
    store = _store(tmp_path, knowledge_embedder)
    keys = {s.key: s for s in sections_of(store.procedures)}
    assert set(keys) == {
        "Business features > Accounts Payable > Bills",
        "Business features > Accounts Receivable > Invoices",
        "Business features > Office > Visitor parking",
    }
    assert "Enter each bill from a vendor" in keys["Business features > Accounts Payable > Bills"].text


def test_the_cli_asks_a_model_over_http_and_reports(isolated_home: Path, tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    doc.write_text(MANUAL, encoding="utf-8")
    assert runner.invoke(app, ["knowledge", "ingest", str(doc)]).exit_code == 0

    model = ScriptedLLM([_answer] * 100)  # the handbook seeded on first use has its sections too
    with FakeOpenAIServer(model) as server:
        result = runner.invoke(app, ["knowledge", "questions", "--model", f"writer@{server.base_url}"])
    assert result.exit_code == 0, result.output
    sections = len(server.requests)
    assert (
        sections > 3 and f"{sections} section(s): 0 already had questions, {sections} asked" in result.output
    )
    assert "Business features > Accounts Payable > Bills: 2 question(s)" in result.output
    assert "questions a person at work would type" in json.dumps(server.requests[0])
    again = runner.invoke(app, ["knowledge", "questions", "--model", "writer@http://127.0.0.1:9/v1"])
    assert again.exit_code == 0 and f"{sections} already had questions, 0 asked" in again.output


def test_the_cli_without_a_model_or_with_one_that_is_down_says_what_to_do(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TASKCREW_MODEL", raising=False)
    result = runner.invoke(app, ["knowledge", "questions"])
    assert result.exit_code == 2 and "pass --model provider/name or set TASKCREW_MODEL" in result.output
    down = runner.invoke(app, ["knowledge", "questions", "--model", "writer@http://127.0.0.1:9/v1"])
    assert down.exit_code == 2, down.output
    assert "is the server running?" in down.output and "Traceback" not in down.output


def test_ingest_says_when_new_sections_wait_for_their_questions(isolated_home: Path, tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    doc.write_text(MANUAL, encoding="utf-8")
    assert runner.invoke(app, ["knowledge", "ingest", str(doc)]).exit_code == 0
    store_dir = isolated_home / "knowledge"
    with FakeOpenAIServer(ScriptedLLM([_answer] * 100)) as server:
        assert (
            runner.invoke(app, ["knowledge", "questions", "--model", f"w@{server.base_url}"]).exit_code == 0
        )
    more = tmp_path / "more.md"
    more.write_text("# Travel\n\n## Mileage\n\nOwn cars are paid per kilometre.\n", encoding="utf-8")
    result = runner.invoke(app, ["knowledge", "ingest", str(more), "--store", str(store_dir)])
    assert result.exit_code == 0, result.output
    assert "1 section(s) have no questions for their text yet" in result.output


def test_a_new_file_without_questions_yet_is_found_by_its_text(
    tmp_path: Path, knowledge_embedder: MiniLMEmbedder
) -> None:
    store = _store(tmp_path, knowledge_embedder)
    write_questions(store, _ask)
    more = tmp_path / "travel.md"
    more.write_text(
        "# Travel\n\n## Mileage\n\nTrips in your own car are paid at 0.30 a kilometre; write the route "
        "and the purpose on the expense report.\n\n## Hotels\n\nBook hotels through the travel desk.\n",
        encoding="utf-8",
    )
    store.procedures.ingest([more])
    # the new sections wait for their questions; their text still ranks them among the asked ones
    for query, section in (
        ("I drove my own car to a client, what do I get back", "Mileage"),  # Invoices without the placing
        ("who books my hotel room", "Hotels"),
    ):
        assert store.procedures.search(query, k=1)[0].heading_path[-1] == section, query
