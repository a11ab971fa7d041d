"""Workers stopped the documented way lose nothing: SIGINT/SIGTERM at several points of a real job
(real worker processes, DBOS on SQLite, real Chromium and demo ERP; only the models are scripted or a
local server that never answers). Plus worker identity and takeover. Waits poll for conditions."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from fake_openai import MisbehavingServer
from fixtures_jobs import HEADLINE, SCRIPTED, Workers

from taskcrew.jobs import Job, JobOptions
from taskcrew.jobs.models import utcnow

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]


def _start(workers: Workers, worker_id: str, *extra: str) -> subprocess.Popen[bytes]:
    return workers.start(worker_id, 3, 1, *extra)


def _signal(proc: subprocess.Popen[bytes], *signals: int, group: bool = False) -> None:
    """To the worker alone, or (``group``) to its whole process group, as a terminal's Ctrl-C goes."""
    for sig in signals:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)


def _kinds(workers: Workers, job: Job) -> list[str]:
    return [e.kind for e in workers.jobs.events(job.id)]


POINTS = {
    "after the plan was saved": lambda w, job: w.jobs.checkpoint(job.id) is not None,
    "after the submission was recorded": lambda w, job: bool(w.jobs.intents(job.id)),
}


@pytest.mark.parametrize(
    ("point", "signals", "group"),
    [
        ("after the plan was saved", (signal.SIGTERM,), False),
        ("after the submission was recorded", (signal.SIGINT, signal.SIGINT), False),
        # Ctrl-C in the worker's terminal: the whole group gets it (Playwright's driver died of it)
        ("after the submission was recorded", (signal.SIGINT,), True),
    ],
    ids=["sigterm-after-plan", "two-sigints-after-submission", "terminal-ctrl-c-after-submission"],
)
def test_a_stopped_worker_hands_its_job_back_and_the_next_worker_finishes_it_once(
    workers: Workers, point: str, signals: tuple[int, ...], group: bool
) -> None:
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    first = workers.start("worker-a")
    ended = workers.job_in(job, "finished", "failed")
    workers.wait_for(point, lambda: POINTS[point](workers, job) or ended())
    _signal(first, *signals, group=group)
    workers.wait_for("the stopped worker to exit", lambda: first.poll() is not None, timeout=90)
    assert first.returncode == 0
    stopped = workers.jobs.get(job.id)
    if stopped.status != "finished":  # it may have reached its end before the next checkpoint
        assert stopped.status == "queued", (stopped.status, stopped.reason)
        assert "handed_back" in _kinds(workers, job) and "failed" not in _kinds(workers, job)
        workers.start("worker-a")  # the same id again: its job resumes there
    done = workers.end_as_a_person_would(job)
    assert (done.status, done.outcome) == ("finished", "done"), done.reason
    assert len(workers.bills()) == 1  # nothing lost, nothing sent twice


def test_a_leg_waiting_on_a_model_is_cancelled_within_seconds_and_a_stop_hands_one_back(
    workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model server that never answers: `jobs cancel` ends the leg (a stop with a long grace then
    exits at once: nothing left running); a stop with a short grace hands the waiting leg back."""
    with MisbehavingServer("hang") as server:
        models = {
            "TASKCREW_MODEL": f"m1@{server.base_url}",
            "TASKCREW_VERIFIER_MODEL": f"m2@{server.base_url}",
        }
        for name, value in models.items():  # the operator's models, here and in the workers
            monkeypatch.setenv(name, value)
            workers.env[name] = value
        options = JobOptions(
            worker_model=models["TASKCREW_MODEL"],
            verifier_model=models["TASKCREW_VERIFIER_MODEL"],
            read_only=True,
        )
        cancelled = workers.jobs.submit("List the unpaid bills.", submitted_by="ana", options=options)
        first = _start(workers, "worker-a", "--stop-grace", "600")
        workers.wait_for("the leg to wait on the model", lambda: server.requests >= 1)
        workers.jobs.cancel(cancelled.id, by="bob")
        first.send_signal(signal.SIGTERM)  # with a leg still waiting this would take 10 minutes
        workers.wait_for("the worker to exit", lambda: first.poll() is not None, timeout=90)
        assert workers.jobs.get(cancelled.id).status == "cancelled"
        assert "handed_back" not in _kinds(workers, cancelled)

        waiting = workers.jobs.submit("List the unpaid bills.", submitted_by="ana", options=options)
        second = _start(workers, "worker-b", "--stop-grace", "1")
        workers.wait_for("the leg to wait on the model", lambda: server.requests >= 2)
        second.send_signal(signal.SIGTERM)
        workers.wait_for("the worker to exit", lambda: second.poll() is not None, timeout=90)
        back = workers.jobs.get(waiting.id)
        assert back.status == "queued" and "handed_back" in _kinds(workers, waiting)


def test_a_worker_id_is_held_by_one_live_process(workers: Workers) -> None:
    first = workers.start("worker-a")
    workers.wait_for("the first worker to be ready", lambda: "ready" in workers.log.read_text())
    second = workers.start("worker-a")
    second.wait(timeout=120)
    assert second.returncode == 2
    assert f"is in use by pid {first.pid}" in workers.log.read_text()
    workers.kill(first)  # SIGKILL: the id is free at once
    again = workers.start("worker-a")
    workers.wait_for("the id to be taken again", lambda: workers.log.read_text().count("ready") >= 2)
    assert again.poll() is None


def test_a_foreground_run_that_died_is_not_adopted_by_a_worker(workers: Workers) -> None:
    """Two jobs whose holders went silent an hour ago: a worker's (taken over) and a `taskcrew run`'s
    (left for its person: `jobs retry`)."""
    report = "List the unpaid bills."
    long_ago = utcnow() - timedelta(hours=1)
    # as `taskcrew run` records it: not on the queue (enqueued, its leg was the worker's to claim, and
    # on a loaded machine the worker got to it before this test looked)
    fg = workers.jobs.submit(
        HEADLINE, submitted_by="ana", options=JobOptions(foreground=True, **SCRIPTED), enqueue=False
    )
    workers.jobs.mark(fg.id, "running", only_if=("queued",), worker="run-gone-1", started_at=long_ago)
    options = JobOptions(read_only=True, **SCRIPTED)
    orphan = workers.jobs.submit(report, submitted_by="ana", options=options, enqueue=False)
    workers.jobs.mark(orphan.id, "running", only_if=("queued",), worker="gone", started_at=long_ago)
    workers.start("worker-a")
    workers.wait_for("the worker's orphan to be taken over", lambda: "taken_over" in _kinds(workers, orphan))
    held = workers.jobs.get(fg.id)
    assert (held.status, held.worker) == ("running", "run-gone-1")
    assert "taken_over" not in _kinds(workers, fg)
    workers.jobs.retry(fg.id, by="ana")  # the person says so: now a worker runs it
    workers.wait_for("a worker to take the retried run", lambda: workers.jobs.get(fg.id).worker == "worker-a")


def test_a_leg_left_dequeued_by_a_worker_that_is_gone_goes_back_on_the_queue(workers: Workers) -> None:
    """A worker stopped or killed in the instant after DBOS gave it a leg, before the leg claimed the
    job: the job is queued and its workflow PENDING on an executor no process holds (the state is
    written here as DBOS leaves it). Another worker puts it back on the queue and runs it; before, only
    a restart of that very worker id recovered it. A leg handed back at a checkpoint whose workflow
    the exit left unfinished is cancelled (it held a slot of the session limit)."""
    options = JobOptions(read_only=True, **SCRIPTED)
    job = workers.jobs.submit("List the unpaid bills.", submitted_by="ana", options=options)
    old = workers.jobs.submit("List the unpaid bills.", submitted_by="bob", options=options)
    db = sqlite3.connect(workers.url.removeprefix("sqlite:///"))
    with db:
        db.executemany(
            "UPDATE workflow_status SET status = 'PENDING', executor_id = 'worker-gone' WHERE workflow_uuid = ?",
            [(f"{job.id}.0",), (f"{old.id}.0",)],
        )
    assert workers.jobs.hand_back(old.id, 0, "worker-gone", "stopping", leg_ends=True) is not None

    def status(job: Job, leg: int) -> str:
        [(value,)] = db.execute(
            "SELECT status FROM workflow_status WHERE workflow_uuid = ?", (f"{job.id}.{leg}",)
        )
        return str(value)

    workers.start("worker-a")
    workers.wait_for("the left leg to go back on the queue", lambda: "taken_over" in _kinds(workers, job))
    workers.wait_for("worker-a to take the job", lambda: workers.jobs.get(job.id).worker == "worker-a")
    assert status(job, 0) == "CANCELLED"  # it no longer holds a slot of the queue
    workers.wait_for("the old leg to be cancelled", lambda: status(old, 0) == "CANCELLED")
    assert "taken_over" not in _kinds(workers, old) and workers.jobs.leg(old.id) == 1
    db.close()


def _alive(pid: int) -> bool:
    """Running (a zombie no one reaps yet is not): the worker is not this test's child."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_a_worker_told_to_stop_with_its_parent_stops_when_the_parent_is_killed(workers: Workers) -> None:
    """The demo's worker (``--stop-with-parent``): a demo killed -9 cannot stop it, so it notices its
    parent is gone and stops as on Ctrl-C, instead of polling a deleted queue for ever."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import json, subprocess, sys, time\n"
            "p = subprocess.Popen(json.loads(sys.argv[1]), stdout=open(sys.argv[2], 'ab'),"
            " stderr=subprocess.STDOUT, start_new_session=True)\n"
            "print(p.pid, flush=True)\ntime.sleep(600)",
            json.dumps(workers.command("worker-orphan", 3, 1)),  # --stop-with-parent: every test worker
            str(workers.log),
        ],
        env=workers.env,
        stdout=subprocess.PIPE,
    )
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    try:
        workers.wait_for("the worker to be ready", lambda: "ready" in workers.log.read_text())
        assert _alive(pid)
        parent.kill()
        parent.wait(timeout=30)
        workers.wait_for("the orphaned worker to stop", lambda: not _alive(pid), timeout=120)
        log = workers.log.read_text()
        assert "the process that started it is gone" in log and "worker-orphan stopped" in log
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
