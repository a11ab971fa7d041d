"""Open the user's knowledge store, seeding it with the demo company's handbook on first use; the
one door documents come into its procedures by (``ingest_as``)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from taskcrew.config import Paths
from taskcrew.homes import DEFAULT_SANDBOX
from taskcrew.inputs import UserError
from taskcrew.knowledge.embedder import EmbedderUnavailable, MiniLMEmbedder
from taskcrew.knowledge.health import StoreDamaged, check_store
from taskcrew.knowledge.models import FileIngest, IngestReport
from taskcrew.knowledge.store import KnowledgeStore, StoreConfig

if TYPE_CHECKING:
    from taskcrew.approvals.identity import Identity

HANDBOOK_NAME = "company_context.md"
INGESTED = "knowledge_ingest"  # the audit log's action: documents written into the procedures store
SEEDING = "the sandbox's company handbook, seeded on the knowledge store's first use"
_log = logging.getLogger(__name__)


class IngestRefused(UserError, PermissionError):
    """Documents the knowledge store does not take from this identity; the message says what to do."""


def ingest_as(
    store: KnowledgeStore,
    paths: Sequence[Path],
    who: Identity,
    on_file: Callable[[FileIngest], None] | None = None,
    on_chunks: Callable[[Path, int, int], None] | None = None,
    seeding: str | None = None,
) -> IngestReport:
    """Ingest ``paths`` into the procedures store as ``who``: the one door documents come in by, for
    what every planner's brief quotes is guarded as a fact is. While the two-person rule is on, an
    identity not proven (an operating-system user, taken on her word) adds nothing (the authority's
    rule on who decides, ``Authority.submitter_refusal``: else anyone could put words two people
    rejected as a fact into every brief as a company procedure), nor does a removed or reset login;
    raises ``IngestRefused``. What the ingest is about to write is recorded first, signed, in the
    audit log (``knowledge_ingest``: who and how she was proven, each file's path, SHA-256 and
    added / replaced / unchanged / skipped / removed): a log that cannot be written ingests nothing
    (its error is raised). ``seeding``: taskcrew's own first-use seeding (``seed_if_empty``), which
    is recorded as that and checks nobody only when every file is the handbook taskcrew ships (by
    its SHA-256, the bytes stored: ``ProcedureLibrary.ingest``); any other file is judged as above."""
    from taskcrew.approvals.audit import AuditLog, AuditLogError
    from taskcrew.approvals.authority import Authority
    from taskcrew.approvals.rules import RiskRulesError
    from taskcrew.approvals.signing import KeyRing, approvals_dir

    def check_who() -> None:
        try:
            why = Authority(None).submitter_refusal(
                who, role="person adding documents to the knowledge store"
            )
        except RiskRulesError as exc:
            why = f"who may add documents cannot be judged: {exc}"
        if why:
            raise IngestRefused(
                f"{who.describe()} may not add documents to the knowledge store: {why} (it gives you a "
                "personal token, which this command then uses; or set TASKCREW_TOKEN to one). Nothing "
                "was ingested"
            )

    if seeding is None:
        check_who()
    audit = AuditLog(approvals_dir() / "audit.jsonl", KeyRing.default())

    def record(files: list[dict[str, str]]) -> None:
        if seeding is not None and not all(f["sha256"] == shipped_handbook_sha256() for f in files):
            check_who()  # not the shipped handbook: seeded only by whom an ingest would take it from
        said = {"seeding": seeding} if seeding else {}
        try:
            audit.append(
                who.name, INGESTED, "/knowledge/procedures", {"proof": who.proof, **said, "files": files}
            )
        except OSError as exc:
            raise AuditLogError(
                f"the audit log {audit.path} cannot be written ({type(exc).__name__}: {exc}): nothing was "
                "ingested; make it writable and run the command again"
            ) from exc

    return store.procedures.ingest(paths, on_file=on_file, on_chunks=on_chunks, before=record)


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


@cache
def shipped_handbook_sha256() -> str:
    """The SHA-256 of the company handbook shipped in the package (``taskcrew/sandbox``)."""
    return hashlib.sha256((DEFAULT_SANDBOX / HANDBOOK_NAME).read_bytes()).hexdigest()


def seed_if_empty(
    store: KnowledgeStore,
    sandbox: Path | None = None,
    who: Identity | None = None,
    say: Callable[[str], None] | None = None,
) -> IngestReport | None:
    """Ingest ``<sandbox>/company_context.md`` when the store has no procedures yet.

    The handbook taskcrew ships (the same bytes) is seeded as anyone; any other file only as an
    ingest would take it (``ingest_as``: ``who``, default this process's OS user, must be proven
    while the two-person rule is on). Returns the ingest report, or None when the store already had
    procedures (or there is no handbook to seed from, or it was refused, or the audit log, where the
    seeding is recorded first, cannot be written: nothing is seeded then, ``say`` (default: the log)
    is told why in a line, and the next first use tries again).
    """
    from taskcrew.approvals.audit import AuditLogError
    from taskcrew.approvals.identity import Identity, os_user

    if not store.is_empty():
        return None
    handbook = (sandbox or Paths.from_env().sandbox) / HANDBOOK_NAME
    if not handbook.is_file():
        return None
    who = who or Identity(name=os_user(), proof="os_user")
    try:
        return ingest_as(store, [handbook], who, seeding=SEEDING)
    except IngestRefused:
        why = (
            f"the knowledge store was not seeded with {handbook}: it is not the handbook taskcrew ships, "
            f"and {who.describe()} may not add it; ingest it with a personal token (`taskcrew approvals "
            f"login`, then `taskcrew knowledge ingest {handbook}`)"
        )
    except AuditLogError as exc:
        why = f"the knowledge store was not seeded with {handbook}: the audit log cannot be written ({exc})"
    (say or _log.warning)(why)
    return None
