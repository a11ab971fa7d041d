"""Other phrasings of a search (``also``): the asking model's guess at the documents' own words.

Each phrasing is ranked like the query and the scores merged, the query counting double, so a
right term finds a section the plain words miss and a wrong one does not bury what the query
itself matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.knowledge import KnowledgeStore
from taskcrew.knowledge.procedures import MAX_ALSO, merge_phrasings
from taskcrew.knowledge.retrieval import search_procedures
from taskcrew.tools.knowledge import SearchProceduresArgs, SearchProceduresTool

RULES = """# Bookkeeping rules

## Petty cash

Small purchases under 50.00 are paid from the petty cash box. Keep every receipt in the box and
count the cash every Friday with a second person.

## Purchase returns

Goods we send back to a supplier are listed on a return note. Ask the supplier for a credit note
and enter it against the original bill when it arrives.

## Suspense account

An amount whose proper account is not known yet is posted to account 9990 (Suspense). Clear the
suspense account within five working days, once the right account is known.

## Visitor parking

Visitors park in the spaces marked "Guest" in front of the building; reception hands out the
permit.
"""
QUERY = "where can I book an amount I cannot place yet"


@pytest.fixture
def rules_store(tmp_path: Path, knowledge_store: KnowledgeStore) -> KnowledgeStore:
    doc = tmp_path / "rules.md"
    doc.write_text(RULES, encoding="utf-8")
    knowledge_store.procedures.ingest([doc])
    return knowledge_store


def _lasts(store: KnowledgeStore, query: str, also: list[str] | str, **kw: object) -> list[str]:
    return [h.heading_path[-1] for h in store.procedures.search(query, k=4, also=also, **kw)]  # type: ignore[arg-type]


def test_the_documents_term_finds_the_section_the_plain_words_miss(rules_store: KnowledgeStore) -> None:
    assert _lasts(rules_store, QUERY, [])[0] == "Petty cash"  # "amount", "cash": the words, not the need
    assert _lasts(rules_store, QUERY, ["suspense account"])[0] == "Suspense account"
    for ranking in ("vector", "bm25", "hybrid", "rrf"):  # every ranking merges the phrasings
        assert _lasts(rules_store, QUERY, ["suspense account"], ranking=ranking)[0] == "Suspense account"


def test_a_wrong_term_does_not_bury_what_the_query_matches(rules_store: KnowledgeStore) -> None:
    assert _lasts(rules_store, "where do visitors leave their car", ["petty cash"])[0] == "Visitor parking"


def test_blank_repeated_and_surplus_phrasings_are_dropped(rules_store: KnowledgeStore) -> None:
    plain = rules_store.procedures.search(QUERY, k=4)
    same = rules_store.procedures.search(QUERY, k=4, also=["  ", QUERY, f" {QUERY} "])
    assert [(h.id, round(h.score, 6)) for h in same] == [(h.id, round(h.score, 6)) for h in plain]
    surplus = ["petty cash", "petty cash box", "cash count", "suspense account"]  # the 4th is not used
    three = rules_store.procedures.search(QUERY, k=4, also=surplus[:MAX_ALSO])
    four = rules_store.procedures.search(QUERY, k=4, also=surplus)
    assert [(h.id, round(h.score, 6)) for h in four] == [(h.id, round(h.score, 6)) for h in three]
    assert _lasts(rules_store, QUERY, surplus)[0] == "Petty cash"
    assert rules_store.procedures.search("  ", k=4, also=["suspense account"]) == []
    assert _lasts(rules_store, QUERY, "suspense account")[0] == "Suspense account"  # a bare string: one


def test_merge_weighs_the_query_double_and_floors_a_missing_chunk() -> None:
    entry: tuple[str, dict[str, object]] = ("text", {})
    query = [("a", 1.0, entry), ("b", 0.5, entry)]
    other = [("c", 1.2, entry), ("b", 1.1, entry)]  # "a" is not here: it gets 1.1, this list's floor
    merged = merge_phrasings([query, other], first_weight=2.0)  # "c" gets 0.5 for the query
    assert [(i, round(s, 4)) for i, s, _ in merged] == [("a", 1.0333), ("c", 0.7333), ("b", 0.7)]


def test_the_tool_takes_at_most_three_other_phrasings(rules_store: KnowledgeStore) -> None:
    args = SearchProceduresArgs(query=QUERY, also=["  suspense account  "])
    assert args.also == ["suspense account"]
    with pytest.raises(ValidationError):
        SearchProceduresArgs(query=QUERY, also=["a b"] * (MAX_ALSO + 1))
    with pytest.raises(ValidationError):
        SearchProceduresArgs(query=QUERY, also=["x"])
    tool = SearchProceduresTool(store=rules_store)
    text = tool.run(query=QUERY, k=1, also=["suspense account"])
    assert "rules.md § Suspense account" in text
    # as a model's tool call arrives: JSON arguments, validated by crewai against the schema
    called = tool.to_structured_tool().invoke(
        json.dumps({"query": QUERY, "k": 1, "also": ["suspense account"]})
    )
    assert "rules.md § Suspense account" in str(called)
    with pytest.raises(ValueError, match="also"):
        tool.to_structured_tool().invoke({"query": QUERY, "also": ["a b", "c d", "e f", "g h"]})
    assert "Suspense account" in search_procedures(rules_store, QUERY, 1, ["suspense account"]).to_text()


def test_the_cli_searches_other_phrasings_and_refuses_a_fourth(isolated_home: Path) -> None:
    runner = CliRunner()
    doc = isolated_home / "rules.md"
    doc.write_text(RULES, encoding="utf-8")
    assert runner.invoke(app, ["knowledge", "ingest", str(doc)]).exit_code == 0
    found = runner.invoke(app, ["knowledge", "search", QUERY, "-k", "1", "--also", "suspense account"])
    assert found.exit_code == 0 and "rules.md § Suspense account" in found.output, found.output
    many = ["--also", "petty cash"] * (MAX_ALSO + 1)
    refused = runner.invoke(app, ["knowledge", "search", QUERY, *many])
    assert refused.exit_code == 2 and "at most 3 other phrasings" in refused.output, refused.output
