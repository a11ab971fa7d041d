"""The fleet's limits: how many jobs all workers together run against the ERP (browser sessions), and
how many one worker runs at once.

DBOS keeps a queue's limits in the job database and every worker re-reads them on each poll, so they
are one setting for the whole fleet, never one per worker. To make that well defined:

- the first worker started on a job database records them (its ``--erp-sessions`` and
  ``--concurrency``, else 2 and 1); a later worker started without those options takes the fleet's;
- a later worker started with a value that differs from the fleet's does not start: it says what
  the fleet runs with and how to change it for all (it never silently changes the others' limits);
- ``taskcrew jobs limits --erp-sessions N --concurrency M`` changes them for every worker, running
  ones included (they pick it up at their next poll).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from taskcrew.jobs.engine import QUEUE, Enqueuer

T = TypeVar("T")

DEFAULT_ERP_SESSIONS = 2  # a small internal system is easily overrun
DEFAULT_PER_WORKER = 1


class LimitConflict(ValueError):
    """A worker's options disagree with the limits the fleet runs with."""


class FleetLimits(BaseModel):
    erp_sessions: int = Field(ge=1, description="jobs all workers together run against the ERP")
    per_worker: int = Field(ge=1, description="jobs one worker runs at once (at most erp_sessions)")
    poll_s: float = Field(default=1.0, gt=0)

    @classmethod
    def wanted(cls, erp_sessions: int | None, concurrency: int | None, poll_s: float = 1.0) -> FleetLimits:
        sessions = erp_sessions or DEFAULT_ERP_SESSIONS
        return cls(
            erp_sessions=sessions, per_worker=min(concurrency or DEFAULT_PER_WORKER, sessions), poll_s=poll_s
        )

    @classmethod
    def of(cls, queue: Any) -> FleetLimits | None:
        """The limits a DBOS queue row holds (None: no worker ever started on this database)."""
        if queue is None or queue._concurrency is None or queue._worker_concurrency is None:
            return None
        return cls(
            erp_sessions=queue._concurrency,
            per_worker=queue._worker_concurrency,
            poll_s=queue._polling_interval_sec,
        )

    def describe(self) -> str:
        return (
            f"at most {self.erp_sessions} ERP session(s) for all workers, {self.per_worker} job(s) per worker"
        )


def check(fleet: FleetLimits, erp_sessions: int | None, concurrency: int | None) -> FleetLimits:
    """The fleet's limits, or LimitConflict when this worker was started with other values."""
    differs = []
    if erp_sessions is not None and erp_sessions != fleet.erp_sessions:
        differs.append(f"--erp-sessions {erp_sessions}")
    if concurrency is not None and min(concurrency, fleet.erp_sessions) != fleet.per_worker:
        differs.append(f"--concurrency {concurrency}")
    if differs:
        raise LimitConflict(
            f"this worker was started with {' and '.join(differs)}, but the workers on this job database "
            f"run with {fleet.describe()} (one setting for all of them); start it without those options "
            f"to use the fleet's, or change them for every worker with "
            f"`taskcrew jobs limits --erp-sessions N --concurrency M`"
        )
    return fleet


def join_fleet(dbos: Any, erp_sessions: int | None, concurrency: int | None, poll_s: float) -> FleetLimits:
    """Register the job queue with this worker's limits if it is the first; else check them against
    the fleet's. ``dbos``: the DBOS class after launch (or a DBOSClient)."""
    wanted = FleetLimits.wanted(erp_sessions, concurrency, poll_s)
    dbos.register_queue(
        QUEUE,
        # DBOS claims queued legs under these limits in one transaction (REPEATABLE READ on Postgres,
        # the database lock on SQLite), so the global limit holds across processes and machines.
        global_concurrency=wanted.erp_sessions,
        worker_concurrency=wanted.per_worker,
        polling_interval_sec=wanted.poll_s,
        on_conflict="never_update",  # the first worker records them; nobody overwrites them by starting
    )
    fleet = FleetLimits.of(dbos.retrieve_queue(QUEUE))
    if fleet is None:  # a queue row from an older version without limits: record ours
        set_limits(dbos, wanted)
        return wanted
    return check(fleet, erp_sessions, concurrency)


def current(client: Any) -> FleetLimits | None:
    return FleetLimits.of(client.retrieve_queue(QUEUE))


def with_client(url: str, use: Callable[[Any], T]) -> T:
    """``use`` a DBOSClient on the job database (no DBOS runtime started), closed afterwards."""
    enqueuer = Enqueuer(url)
    try:
        return use(enqueuer.client())
    finally:
        enqueuer.close()


def set_limits(client: Any, limits: FleetLimits) -> FleetLimits:
    """Change the fleet's limits (running workers pick them up at their next poll)."""
    client.register_queue(
        QUEUE,
        global_concurrency=limits.erp_sessions,
        worker_concurrency=limits.per_worker,
        polling_interval_sec=limits.poll_s,
        on_conflict="always_update",
    )
    return limits
