"""Worker processes for the jobs tests: real ``taskcrew worker`` processes (DBOS on SQLite or
PostgreSQL), a real ERP with chaos; only the models are scripted. Waits poll the job store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskcrew.eval.models import load_cases
from taskcrew.jobs import Job, Jobs
from taskcrew.mock_erp import ChaosConfig, ErpServer, fetch_state

__all__ = ["HEADLINE", "SCRIPTED", "Workers", "workers"]  # what conftest re-exports

HEADLINE = next(c for c in load_cases() if c.id == "northwind-headline").task
SCRIPTED = {"worker_model": "scripted/solver", "verifier_model": "scripted/auditor"}


class Workers:
    def __init__(self, tmp: Path, erp: ErpServer, url: str | None = None) -> None:
        self.url = url or f"sqlite:///{tmp / 'jobs.sqlite3'}"
        self.erp = erp
        self.env = {
            **os.environ,
            "TASKCREW_JOBS_DB": self.url,
            "TASKCREW_RUNS": str(tmp / "runs"),
            "ERP_USERNAME": "demo",
            "ERP_PASSWORD": "demo123",
        }
        self.log = tmp / "workers.log"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.jobs = Jobs.open(self.url)

    def command(self, worker_id: str, sessions: int = 3, concurrency: int = 1, *extra: str) -> list[str]:
        cmd = [
            sys.executable,
            "-m",
            "taskcrew.cli",
            "worker",
            "--worker-id",
            worker_id,
            "--erp-url",
            self.erp.url,
        ]
        cmd += ["--intranet-url", "", "--stale-after", "3", "--erp-sessions", str(sessions)]
        cmd += ["--stop-with-parent"]  # a test process killed takes its workers along
        return [*cmd, "--concurrency", str(concurrency), *extra]

    def start(
        self, worker_id: str, sessions: int = 3, concurrency: int = 1, *extra: str
    ) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            self.command(worker_id, sessions, concurrency, *extra),
            env=self.env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        proc.wait(timeout=30)

    def wait_for(self, what: str, check: Callable[[], object], timeout: float = 150) -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(
            f"timed out waiting for {what}; worker log:\n{self.log.read_text()[-3000:]}\n{self.history()}"
        )

    def history(self) -> str:
        """Every job's history and approvals: what a timed-out wait shows, to tell where it stuck."""
        lines = []
        for job in self.jobs.list():
            lines.append(f"job {job.id}: {job.status} {job.outcome or ''} {job.reason or ''}")
            lines += [
                f"  {e.at:%H:%M:%S.%f} {e.kind} {e.detail} {e.actor or ''}" for e in self.jobs.events(job.id)
            ]
            lines += [
                f"  approval {a.id} {a.key[:20]} {a.status}" for a in self.jobs.approvals(job_id=job.id)
            ]
        return "\n".join(lines)

    def job_in(self, job: Job, *statuses: str) -> Callable[[], object]:
        return lambda: self.jobs.get(job.id).status in statuses

    def bills(self) -> list[object]:
        return [b for b in fetch_state(self.erp.url).bills if b.invoice_number == "INV-2057"]

    def end_as_a_person_would(self, job: Job, timeout: float = 600) -> Job:
        """Wait for ``job`` to end; if it parks instead, it must be the one question a stopped or killed
        leg leaves: the send it had recorded may still land (stopped between recording the intent and
        the ERP's answer: how far it got is timing) and the read-back does not find the bill, so only a
        person may send it again (never --auto-approve). She looks (no bill), approves, and it ends."""
        from taskcrew.tools.human import ApprovalDecision

        self.wait_for("the job to end or park", self.job_in(job, "waiting", "finished", "failed"), timeout)
        if self.jobs.get(job.id).status == "waiting":
            [asked] = self.jobs.approvals("pending", job_id=job.id)
            assert asked.key.startswith("again-") and "MAY STILL APPLY" in (asked.request.asked_again or "")
            assert self.bills() == []
            self.jobs.decide(asked.id, ApprovalDecision.approve(), decided_by="bob")
            self.wait_for("the job to end", self.job_in(job, "finished", "failed"), timeout)
        return self.jobs.get(job.id)


@pytest.fixture
def workers(tmp_path: Path, erp_factory: Callable[..., ErpServer]) -> Iterator[Workers]:
    w = Workers(tmp_path, erp_factory(ChaosConfig()))
    yield w
    for proc in w.procs:
        if proc.poll() is None:
            w.kill(proc, signal.SIGKILL)
