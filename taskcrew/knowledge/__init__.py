"""Company procedures and learned facts in a Chroma vector store.

    store = KnowledgeStore(directory, MiniLMEmbedder())      # or bootstrap.open_store()
    store.procedures.ingest([Path("handbook.md")])            -> IngestReport
    store.procedures.search("due date from terms", k=4)       -> list[ProcedureHit]
    store.procedures.search(q, also=["other phrasing"])      # each phrasing ranked, scores merged
    grant = FactGrant.from_verdict(verdict)                   # raises unless verdict.verified
    store.facts.learn(grant, "…", confidence=0.8)              -> LearnOutcome
    store.facts.all() / .search(q, k) / .forget(fact_id)

Modules: chunking (files → chunks), embedder (offline MiniLM ONNX), lexical (BM25 + fusion),
procedures / facts (the two collections), grant (who may write facts), store, bootstrap
(default store + first-use seeding), retrieval (cited snippets for tools and the planner).
"""

from taskcrew.knowledge.bootstrap import open_store, seed_if_empty
from taskcrew.knowledge.chunking import ChunkingConfig, UnreadableFile, chunk_file
from taskcrew.knowledge.embedder import EmbedderUnavailable, MiniLMEmbedder, ModelFiles
from taskcrew.knowledge.grant import FactGrant, GrantExhaustedError, UnverifiedRunError, VerdictLike
from taskcrew.knowledge.models import (
    Chunk,
    Fact,
    FactHit,
    FactProvenance,
    FileIngest,
    IngestReport,
    LearnOutcome,
    ProcedureHit,
)
from taskcrew.knowledge.procedures import RankingConfig
from taskcrew.knowledge.retrieval import KnowledgeBrief, knowledge_for_task, recall_facts, search_procedures
from taskcrew.knowledge.store import KnowledgeStore, StoreConfig

__all__ = [
    "Chunk",
    "ChunkingConfig",
    "EmbedderUnavailable",
    "Fact",
    "FactGrant",
    "FactHit",
    "FactProvenance",
    "FileIngest",
    "GrantExhaustedError",
    "IngestReport",
    "KnowledgeBrief",
    "KnowledgeStore",
    "LearnOutcome",
    "MiniLMEmbedder",
    "ModelFiles",
    "ProcedureHit",
    "RankingConfig",
    "StoreConfig",
    "UnreadableFile",
    "UnverifiedRunError",
    "VerdictLike",
    "chunk_file",
    "knowledge_for_task",
    "open_store",
    "recall_facts",
    "search_procedures",
    "seed_if_empty",
]
