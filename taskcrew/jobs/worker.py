"""A worker process: DBOS dequeues job legs and runs them; a watch loop expires approvals and takes
over the jobs of workers that stopped heart-beating (killed with SIGKILL, machine gone).

    serve(WorkerSettings(url=..., concurrency=2), place_settings)   # until stop is set

Each worker has its own DBOS executor id. A leg whose worker died is recovered by DBOS on a live
worker (``DBOS._recover_pending_workflows``) and resumes from the job's last stage checkpoint.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from taskcrew.jobs.engine import QUEUE, WORKFLOW
from taskcrew.jobs.models import utcnow
from taskcrew.jobs.runner import LegRunner, ScriptedResolver
from taskcrew.jobs.store import Jobs

log = logging.getLogger(__name__)


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass
class WorkerSettings:
    url: str
    concurrency: int = 1
    worker_id: str = field(default_factory=default_worker_id)
    stale_after_s: float = 15.0
    poll_s: float = 1.0
    approval_ttl: timedelta | None = timedelta(days=7)
    scripted: ScriptedResolver | None = None


class _Current:
    """The leg runner of this process, set by ``serve`` for the DBOS workflow to use."""

    runner: LegRunner | None = None


def _register() -> Any:
    from dbos import DBOS

    @DBOS.step(name="taskcrew_run_leg")
    def run_leg_step(job_id: str, leg: int) -> str:
        if _Current.runner is None:
            raise RuntimeError("no job runner in this process")
        return _Current.runner.run_leg(job_id, leg)

    @DBOS.workflow(name=WORKFLOW)
    def job_leg(job_id: str, leg: int) -> str:
        return run_leg_step(job_id, leg)

    return job_leg


def serve(
    settings: WorkerSettings, place_settings: Any, stop: threading.Event, *, on_ready: Any = None
) -> None:
    from dbos import DBOS

    from taskcrew.crew.workplace import Workplace
    from taskcrew.tools.human import AutoApproveHuman

    jobs = Jobs.open(settings.url)
    with Workplace(place_settings, AutoApproveHuman()) as place:
        _Current.runner = LegRunner(
            jobs, place, settings.worker_id, scripted=settings.scripted, approval_ttl=settings.approval_ttl
        )
        DBOS(
            config={
                "name": "taskcrew",
                "system_database_url": settings.url,
                "executor_id": settings.worker_id,
                "application_version": "taskcrew-jobs-1",
                "log_level": "WARNING",
            }
        )
        _register()
        DBOS.launch()
        DBOS.register_queue(
            QUEUE, worker_concurrency=settings.concurrency, polling_interval_sec=settings.poll_s
        )
        if on_ready is not None:
            on_ready()
        recovered: set[str] = set()
        try:
            while not stop.wait(settings.poll_s):
                watch(jobs, settings, recovered)
        finally:
            DBOS.destroy(workflow_completion_timeout_sec=0)
            _Current.runner = None
            jobs.close()


def watch(jobs: Jobs, settings: WorkerSettings, recovered: set[str]) -> None:
    """Expire due approvals; recover the legs of workers whose heartbeat went stale."""
    from dbos import DBOS

    try:
        jobs.expire_due()
        now = utcnow()
        for job in jobs.list(status="running"):
            beat, worker = job.heartbeat_at or job.started_at, job.worker
            if worker is None or worker == settings.worker_id or beat is None or worker in recovered:
                continue
            if (now - beat).total_seconds() < settings.stale_after_s:
                continue
            log.warning("worker %s went silent; taking over its jobs", worker)
            recovered.add(worker)
            DBOS._recover_pending_workflows([worker])
    except Exception as exc:  # the watch loop must survive a database hiccup
        log.warning("watch loop: %s", exc)
