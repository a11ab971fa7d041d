"""The engine wiring: DBOS runs each leg of a job as a queued, durable workflow.

A job's legs: leg 0 on submit; a new leg on retry, on resume after an approval, on takeover. The
workflow id is ``<job id>.<leg>`` so enqueueing is idempotent (DBOS SetWorkflowID semantics).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskcrew.jobs.models import Job

QUEUE = "taskcrew-jobs"
WORKFLOW = "taskcrew_job_leg"

_clients: dict[str, Any] = {}
_lock = threading.Lock()


def workflow_id(job_id: str, leg: int) -> str:
    return f"{job_id}.{leg}"


def client_for(url: str) -> Any:
    """One DBOSClient per database URL (it enqueues without launching a DBOS runtime)."""
    with _lock:
        if url not in _clients:
            from dbos import DBOSClient

            client = DBOSClient(system_database_url=url)
            # A submit may come before any worker ever launched: create DBOS's tables if needed.
            client._sys_db.run_migrations()
            _clients[url] = client
        return _clients[url]


def enqueue_leg_for(url: str) -> Callable[[Job, int], None]:
    def enqueue(job: Job, leg: int) -> None:
        client_for(url).enqueue(
            {"queue_name": QUEUE, "workflow_name": WORKFLOW, "workflow_id": workflow_id(job.id, leg)},
            job.id,
            leg,
        )

    return enqueue
