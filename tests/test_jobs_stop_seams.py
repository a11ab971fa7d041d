"""Workers and foreground runs stopped the ordinary ways a person or a machine stops them: a terminal
closed under a worker (SIGHUP), Ctrl-C in `taskcrew run`. Real processes and signals, real Chromium
and demo ERP; only the models are scripted (in-process for workers, over HTTP for `taskcrew run`).
Waits poll for conditions."""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing, suppress
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from fixtures_jobs import HEADLINE, SCRIPTED, Workers
from proc_tree import descendants

from taskcrew.eval.models import load_cases
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import JobOptions, Jobs

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]


def _wait_for(what: str, check: Callable[[], bool], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; log:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_ctrl_c_in_a_foreground_run_keeps_what_jobs_retry_resumes_from(
    tmp_path: Path, isolated_home: Path
) -> None:
    """`taskcrew run` stopped by Ctrl-C leaves its job `finished interrupted`, and every surface says
    `taskcrew jobs retry ID` resumes it from its last checkpoint. The run cleared its checkpoint as
    it recorded the interruption (and `retry` of a finished job cleared it again), so the retried job
    started over: planned again and repeated the steps it had finished."""
    db = tmp_path / "jobs.sqlite3"
    case = next(c for c in load_cases() if c.id == "northwind-headline")
    models = scripted_models(case)
    env = {**os.environ, "TASKCREW_JOBS_DB": f"sqlite:///{db}"}
    jobs = Jobs.open(f"sqlite:///{db}")  # the store made before the run opens it
    with FakeOpenAIServer(models("solver")) as worker, FakeOpenAIServer(models("auditor")) as verifier:
        command = [sys.executable, "-m", "taskcrew.cli", "run", case.task, "--auto-approve"]
        command += [
            "--model",
            f"worker@{worker.base_url}",
            "--verifier-model",
            f"verifier@{verifier.base_url}",
        ]
        command += ["--erp-url", "http://127.0.0.1:0", "--intranet-url", ""]
        log = tmp_path / "run.log"
        proc = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
        try:

            def saved() -> bool:
                listed = jobs.list()
                return bool(listed) and jobs.checkpoint(listed[0].id) is not None

            _wait_for("the run's plan to be saved", saved, log, timeout=240)
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    [job] = jobs.list()
    assert job.options.foreground
    if (job.status, job.outcome) != ("finished", "interrupted"):
        pytest.skip(f"the run ended before the Ctrl-C reached it: {job.status} {job.outcome}")
    assert proc.returncode == 130, log.read_text()[-3000:]
    assert jobs.checkpoint(job.id) is not None  # what `jobs retry` resumes from
    jobs.retry(job.id, by="ana")
    assert jobs.checkpoint(job.id) is not None  # resumed, not started over
    jobs.close()


ON_ANOTHER_HOST = (
    "import runpy, socket, sys; socket.gethostname = lambda: 'another-host'; "
    "sys.argv = ['taskcrew', *sys.argv[1:]]; runpy.run_module('taskcrew.cli', run_name='__main__')"
)


def test_a_draining_worker_keeps_its_id_from_a_worker_on_another_host(workers: Workers) -> None:
    """A worker stopping (SIGTERM, a long grace) runs its leg on to the next checkpoint. Its id's
    beat stopped with its watch loop, so after `--stale-after` a worker started with the same id on
    another machine (a container replaced while the old one drains) took the id, and DBOS gave it the
    very leg the first was still running: two runs of one job at once."""
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    first = workers.start("worker-a", 3, 1, "--stop-grace", "600", "--scripted-delay", "45")
    workers.wait_for("the leg to run", lambda: workers.jobs.get(job.id).status == "running", timeout=240)
    first.send_signal(signal.SIGTERM)
    workers.wait_for("the drain to start", lambda: "stopping: no new work" in workers.log.read_text())
    began = time.monotonic()
    # longer than --stale-after (3 s) twice over, the leg still running to its next checkpoint
    workers.wait_for("the drain to outlast --stale-after", lambda: time.monotonic() - began > 7)
    if first.poll() is not None or workers.jobs.get(job.id).status != "running":
        pytest.skip("the leg reached its checkpoint before the drain outlasted --stale-after")
    cmd = [sys.executable, "-c", ON_ANOTHER_HOST, "worker", "--worker-id", "worker-a"]
    cmd += ["--erp-url", workers.erp.url, "--intranet-url", "", "--stale-after", "3"]
    second = subprocess.Popen(
        cmd, env=workers.env, stdout=workers.log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True
    )
    workers.procs.append(second)

    def holder() -> str | None:
        with closing(sqlite3.connect(workers.url.removeprefix("sqlite:///"))) as db:
            row = db.execute("SELECT host FROM taskcrew_workers WHERE worker_id = 'worker-a'").fetchone()
        return None if row is None else str(row[0])

    workers.wait_for(
        "the second worker to take the id or be refused",
        lambda: second.poll() is not None or holder() == "another-host",
        timeout=240,
    )
    assert first.poll() is None, "the first worker ended first: no overlap tested"
    assert second.poll() == 2 and "is in use by pid" in workers.log.read_text(), workers.log.read_text()[
        -3000:
    ]


def test_a_worker_whose_real_terminal_closes_hands_its_job_back_and_exits_0(workers: Workers) -> None:
    """Closing the terminal a worker runs in (its controlling pty) hangs the session up: SIGHUP, after
    which every write to the terminal fails (EIO). The worker died of SIGHUP at once (Python's default
    action), so its job stayed `running` on a worker that was gone, its stage to be re-run after
    another worker noticed the silence; then its last words to the closed terminal made a clean stop
    exit 1. It must stop as on Ctrl-C: hand the job back at its next checkpoint, exit 0, and leave no
    browser behind."""
    import pty

    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    cmd = workers.command("worker-a")
    pid, leader = pty.fork()
    if pid == 0:  # the child: its own session, the pty its controlling terminal
        os.execve(sys.executable, cmd, workers.env)
    status: int | None = None
    try:
        seen = bytearray()

        def drained_then(check: Callable[[], bool]) -> Callable[[], bool]:
            def poll() -> bool:
                with suppress(OSError):
                    while select.select([leader], [], [], 0)[0]:
                        seen.extend(os.read(leader, 65536))
                return check()

            return poll

        ended = workers.job_in(job, "finished", "failed")
        workers.wait_for(
            "the plan to be saved",
            drained_then(lambda: workers.jobs.checkpoint(job.id) is not None or ended()),
        )
        browser = workers.wait_for("the worker's browser", lambda: descendants(pid))
        assert isinstance(browser, set)
        os.close(leader)  # the terminal window is closed
        leader = -1

        def exited() -> bool:
            nonlocal status
            done, code = os.waitpid(pid, os.WNOHANG)
            status = code if done else None
            return done != 0

        workers.wait_for("the worker to exit", exited, timeout=120)
    finally:
        if status is None:
            with suppress(ProcessLookupError, ChildProcessError):
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        if leader >= 0:
            os.close(leader)
    assert status is not None and os.waitstatus_to_exitcode(status) == 0, (status, bytes(seen)[-2000:])
    stopped = workers.jobs.get(job.id)
    if stopped.status != "finished":
        assert stopped.status == "queued", (stopped.status, stopped.reason)
        assert "handed_back" in [e.kind for e in workers.jobs.events(job.id)]
    workers.wait_for(
        "the worker's driver and Chromium to end", lambda: not any(_alive(p) for p in browser), timeout=60
    )
