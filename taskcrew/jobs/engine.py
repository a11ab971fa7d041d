"""The engine wiring: DBOS runs each leg of a job as a queued, durable workflow.

A job's legs: leg 0 on submit; a new leg on retry, on resume after an approval, on takeover. The
workflow id is ``<job id>.<leg>`` so enqueueing is idempotent (DBOS SetWorkflowID semantics).

Each ``Jobs`` store owns its ``Enqueuer`` (one DBOSClient, made on first use or by ``prepare``,
destroyed with the store). No client is shared between stores or cached per URL: a cached client
outlived its store and kept a connection to the old file when an SQLite job database was moved aside
and created anew at the same path, so its enqueues went into the deleted file and no worker ever saw
them.

A job goes ``queued`` on a new leg in the job database first and on DBOS's queue right after; a
process stopped in between (Ctrl-C) leaves a leg with no workflow. ``prepare`` before the change
makes that instant a few milliseconds (making the client, 0.4-1 s, is then behind it); what is left
of it the workers' watch loop mends (``worker.enqueue_stranded``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskcrew.jobs.models import Job

QUEUE = "taskcrew-jobs"
WORKFLOW = "taskcrew_job_leg"


def workflow_id(job_id: str, leg: int) -> str:
    return f"{job_id}.{leg}"


class Enqueuer:
    """Enqueues job legs and cancels dead ones through a DBOSClient (no DBOS runtime needed)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                from dbos import DBOSClient

                client = DBOSClient(system_database_url=self.url)
                # A submit may come before any worker ever launched: create DBOS's tables if needed.
                client._sys_db.run_migrations()
                self._client = client
            return self._client

    def prepare(self) -> None:
        """Make the client now, before the job database is changed: a command that will enqueue a
        leg calls this first, so its Ctrl-C lands before anything is written, not between the
        job's commit and its enqueue."""
        self.client()

    def __call__(self, job: Job, leg: int) -> None:
        self.client().enqueue(
            {"queue_name": QUEUE, "workflow_name": WORKFLOW, "workflow_id": workflow_id(job.id, leg)},
            job.id,
            leg,
        )

    def cancel(self, job_id: str, leg: int) -> None:
        """Cancel a leg's workflow (its worker died): it no longer holds a slot of the queue's
        global concurrency, and a restarted worker does not recover it."""
        self.client().cancel_workflow(workflow_id(job_id, leg))

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.destroy()
                self._client = None


def prepare_to_enqueue(jobs: Any) -> None:
    """``Enqueuer.prepare`` for the store ``jobs`` (a no-op for a store without one)."""
    prepare = getattr(jobs.on_enqueue, "prepare", None)
    if prepare is not None:
        prepare()


def serialise_sqlite_claims() -> None:
    """Make DBOS's claim of queued legs one transaction on SQLite, so the fleet's ERP-session limit
    holds across worker processes.

    DBOS counts the queue's running workflows and then marks the next ones running inside one
    ``_begin`` block; on Postgres that block is REPEATABLE READ with row locks. On SQLite the driver
    opens its transaction only at the first UPDATE, so the count ran outside it: two workers could
    both count 1 of 2 sessions in use and both start one (3 ran at once). Here the block starts with
    ``BEGIN IMMEDIATE`` instead, which takes SQLite's write lock before the count; a second worker's
    claim waits for the first to commit (DBOS sets a 30 s busy timeout). Only the claim uses
    ``_begin``, so other reads are not serialised. Idempotent."""
    from contextlib import contextmanager

    from dbos._sys_db_sqlite import SQLiteSystemDatabase

    if getattr(SQLiteSystemDatabase, "_taskcrew_claims_serialised", False):
        return

    @contextmanager
    def _begin(self: Any, isolation: str | None) -> Any:
        with self.engine.connect() as c, c.begin():
            c.exec_driver_sql("BEGIN IMMEDIATE")
            yield c

    SQLiteSystemDatabase._begin = _begin  # type: ignore[method-assign]
    SQLiteSystemDatabase._taskcrew_claims_serialised = True  # type: ignore[attr-defined]
