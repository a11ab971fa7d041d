"""A worker stopped at once says truly what became of the jobs whose legs it abandoned.

The operator presses Ctrl-C (the worker drains: its leg waits on a slow model call), bob cancels the
job meanwhile, the operator presses Ctrl-C again. The job is cancelled, so nothing will resume it;
before, the worker's last log line still said it had handed the job back (it logged the legs it
abandoned, not what the queue took back). Real worker process, signals, SQLite; scripted models.
"""

from __future__ import annotations

import signal

import pytest
from fixtures_jobs import HEADLINE, SCRIPTED, Workers

from taskcrew.jobs import JobOptions

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]


def test_a_worker_stopped_at_once_names_only_the_jobs_it_handed_back(workers: Workers) -> None:
    job = workers.jobs.submit(HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    w = workers.start("worker-w", 3, 1, "--scripted-delay", "40", "--stop-grace", "600")
    workers.wait_for("the leg's run to begin", lambda: workers.jobs.get(job.id).run_dir, timeout=300)
    w.send_signal(signal.SIGINT)  # Ctrl-C: the worker drains (its leg runs on to its checkpoint)
    workers.wait_for("the drain", lambda: "stopping: no new work" in workers.log.read_text(), timeout=60)
    workers.jobs.cancel(job.id, by="bob")
    w.send_signal(signal.SIGINT)  # a second Ctrl-C: the worker stops now, abandoning its leg
    workers.wait_for("the stopped worker to exit", lambda: w.poll() is not None, timeout=120)
    log = workers.log.read_text()
    assert workers.jobs.get(job.id).status == "cancelled"
    assert "handed_back" not in [e.kind for e in workers.jobs.events(job.id)]
    assert f"handed back {job.id}" not in log, log[-2000:]
    assert f"{job.id} not handed back: cancelled now" in log, log[-2000:]
