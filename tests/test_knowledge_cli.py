"""`taskcrew knowledge ...` through Typer's CliRunner with an isolated TASKCREW_HOME."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fixtures_knowledge import FakeVerdict, write_pdf, write_small_doc
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.config import Paths
from taskcrew.knowledge import FactGrant, KnowledgeStore, MiniLMEmbedder

runner = CliRunner()


def test_first_search_seeds_the_handbook_then_ingest_search_and_skip(
    isolated_home: Path, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["knowledge", "search", "is this invoice already in the ERP", "-k", "2"])
    assert result.exit_code == 0, result.output
    assert "The knowledge store was empty: ingested the company handbook" in result.output
    assert "company_context.md § 1. Accounts payable" in result.output
    assert (isolated_home / "knowledge").is_dir()

    docs = tmp_path / "docs"
    write_small_doc(docs / "rules.md")
    write_pdf(docs / "scan.pdf", [""])
    result = runner.invoke(app, ["knowledge", "ingest", str(docs)])
    assert result.exit_code == 1, result.output  # one file had to be skipped
    assert "added" in result.output and "rules.md: 3 chunks" in result.output
    assert "skipped" in result.output and "no text layer" in result.output
    assert "was empty" not in result.output

    again = runner.invoke(app, ["knowledge", "ingest", str(docs / "rules.md")])
    assert again.exit_code == 0 and "unchanged" in again.output

    found = runner.invoke(
        app, ["knowledge", "search", "where do visitors park", "-k", "1", "--ranking", "bm25"]
    )
    assert found.exit_code == 0 and "rules.md § Parking" in found.output


def test_facts_are_listed_and_forgotten(isolated_home: Path, knowledge_embedder: MiniLMEmbedder) -> None:
    store = KnowledgeStore(Paths.from_env().knowledge_dir, knowledge_embedder)
    write_small_doc(isolated_home / "rules.md")
    store.procedures.ingest([isolated_home / "rules.md"])  # not empty: no seeding in this test

    empty = runner.invoke(app, ["knowledge", "facts"])
    assert empty.exit_code == 0 and "No learned facts yet" in empty.output

    grant = FactGrant.from_verdict(FakeVerdict(verified=True, run_id="run-cli"))
    fact = store.facts.learn(grant, "Hooli sends two invoices on the same day; ask which one is meant.").fact
    listed = runner.invoke(app, ["knowledge", "facts"])
    assert listed.exit_code == 0 and fact.id in listed.output and "run-cli" in listed.output
    related = runner.invoke(app, ["knowledge", "facts", "--query", "two invoices with one date"])
    assert related.exit_code == 0 and fact.id in related.output

    forgot = runner.invoke(app, ["knowledge", "forget", fact.id])
    assert forgot.exit_code == 0 and f"Forgot {fact.id}" in forgot.output
    assert store.facts.count() == 0
    unknown = runner.invoke(app, ["knowledge", "forget", fact.id])
    assert unknown.exit_code == 1 and "No fact with id" in unknown.output


def test_ingest_of_nothing_supported_fails_clearly(isolated_home: Path, tmp_path: Path) -> None:
    (tmp_path / "picture.png").write_bytes(b"\x89PNG")
    result = runner.invoke(app, ["knowledge", "ingest", str(tmp_path)])
    assert result.exit_code == 1 and "No supported files found" in result.output


def test_help_does_not_import_the_store() -> None:
    code = (
        "import sys, taskcrew.cli; assert 'chromadb' not in sys.modules and 'onnxruntime' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
