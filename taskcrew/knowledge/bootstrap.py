"""Open the user's knowledge store, seeding it with the demo company's handbook on first use."""

from __future__ import annotations

from pathlib import Path

from taskcrew.config import Paths
from taskcrew.knowledge.embedder import EmbedderUnavailable, MiniLMEmbedder
from taskcrew.knowledge.health import StoreDamaged, check_store
from taskcrew.knowledge.models import IngestReport
from taskcrew.knowledge.store import KnowledgeStore, StoreConfig

HANDBOOK_NAME = "company_context.md"


def open_store(
    directory: Path | None = None,
    embedder: MiniLMEmbedder | None = None,
    config: StoreConfig | None = None,
) -> KnowledgeStore:
    """The store in ``directory`` (default: ``Paths.from_env().knowledge_dir``).

    A damaged store raises StoreDamaged (see ``health``) instead of being silently replaced.
    """
    chosen = directory or Paths.from_env().knowledge_dir
    check_store(chosen)
    try:
        return KnowledgeStore(chosen, embedder or MiniLMEmbedder(), config)
    except EmbedderUnavailable:
        raise
    except Exception as exc:  # chroma's own errors on a store it cannot read
        raise StoreDamaged(
            f"the knowledge store {chosen} cannot be opened: {type(exc).__name__}: {exc}"
        ) from exc


def seed_if_empty(store: KnowledgeStore, sandbox: Path | None = None) -> IngestReport | None:
    """Ingest ``<sandbox>/company_context.md`` when the store has no procedures yet.

    Returns the ingest report, or None when the store already had procedures (or there is no
    handbook to seed from).
    """
    if not store.is_empty():
        return None
    handbook = (sandbox or Paths.from_env().sandbox) / HANDBOOK_NAME
    if not handbook.is_file():
        return None
    return store.procedures.ingest([handbook])
