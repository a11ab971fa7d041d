"""pytest fixtures for the knowledge area (imported by conftest.py).

The embedding model loads once per test session (``knowledge_embedder``); every store is a real
Chroma directory under tmp. ``handbooks_store`` holds both handbooks and is shared read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic import BaseModel

from taskcrew.config import DEFAULT_SANDBOX

__all__ = ["handbooks_store", "knowledge_embedder", "knowledge_store"]  # what conftest re-exports

if TYPE_CHECKING:  # the store pulls chromadb in; import it only where a fixture is used
    from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder

HANDBOOK = DEFAULT_SANDBOX / "company_context.md"
DENTAL_HANDBOOK = (
    Path(__file__).resolve().parent.parent / "bench" / "data" / "knowledge" / "brightsmile_dental_handbook.md"
)


class FakeVerdict(BaseModel):
    """What the crew's verifier verdict offers the grant protocol."""

    verified: bool
    run_id: str = "run-test-1"
    task: str = "Enter the latest invoice from Northwind Traders."


@pytest.fixture(scope="session")
def knowledge_embedder() -> MiniLMEmbedder:
    from taskcrew.knowledge import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.fixture
def knowledge_store(tmp_path: Path, knowledge_embedder: MiniLMEmbedder) -> KnowledgeStore:
    """An empty store in a fresh directory."""
    from taskcrew.knowledge import KnowledgeStore

    return KnowledgeStore(tmp_path / "knowledge", knowledge_embedder)


@pytest.fixture(scope="session")
def handbooks_store(
    tmp_path_factory: pytest.TempPathFactory, knowledge_embedder: MiniLMEmbedder
) -> KnowledgeStore:
    """A store holding both handbooks (Acme's and the dental clinic's); do not write to it."""
    from taskcrew.knowledge import KnowledgeStore

    store = KnowledgeStore(tmp_path_factory.mktemp("handbooks-knowledge"), knowledge_embedder)
    report = store.procedures.ingest([HANDBOOK, DENTAL_HANDBOOK])
    assert report.count("added") == 2, report.render()
    return store


SMALL_DOC = """# Office rules

## Retries

When the billing system answers with a temporary error, wait a few seconds and retry up to three
times before you report the outage to the helpdesk.

## Refunds

Refunds are paid back to the card the customer paid with, within ten business days, after the
manager approved them in writing.

## Parking

Visitors park in the spaces marked with a V; staff park on the upper deck of the garage.
"""


def write_small_doc(path: Path) -> Path:
    """A short handbook (three chunks): cheap to embed in tests that write to a store."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SMALL_DOC, encoding="utf-8")
    return path


def write_pdf(path: Path, pages: list[str]) -> Path:
    """A real PDF with one text page per entry; an empty entry draws a page with no text layer."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
        else:
            pdf.rect(20, 20, 120, 60, style="F")  # a "scan": ink, but no text
    pdf.output(str(path))
    return path
