"""A worker started to outlive its terminal keeps working. `nohup taskcrew worker` (SIGHUP ignored)
and `taskcrew worker &` from a script (a non-interactive shell starts background commands with SIGINT
ignored) said so, yet the worker put its own handler on both and stopped when the terminal closed or
Ctrl-C was pressed in the shell that started it: jobs then sat queued with no worker. A signal the
process was started ignoring is left ignored; SIGTERM always stops it gracefully. Real worker
processes, real ERP and Chromium; the models are scripted."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from fixtures_jobs import HEADLINE, SCRIPTED, Workers

from taskcrew.jobs import JobOptions

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.mark.parametrize("ignored", [signal.SIGHUP, signal.SIGINT], ids=["nohup", "background"])
def test_a_signal_the_worker_was_started_ignoring_does_not_stop_it(
    workers: Workers, ignored: signal.Signals
) -> None:
    def ignore() -> None:  # what nohup, or a non-interactive shell's `&`, does before exec
        signal.signal(ignored, signal.SIG_IGN)

    proc = subprocess.Popen(
        workers.command("worker-a"),
        env=workers.env,
        stdout=workers.log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=ignore,
    )
    workers.procs.append(proc)
    try:
        workers.wait_for("the worker to be ready", lambda: "ready" in workers.log.read_text(errors="replace"))
        os.killpg(proc.pid, ignored)  # the terminal closes / Ctrl-C in the shell that started it
        job = workers.jobs.submit(
            HEADLINE, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED)
        )
        workers.wait_for("the worker to take the job", workers.job_in(job, "running", "finished"))
        assert proc.poll() is None, workers.log.read_text(errors="replace")[-3000:]
        assert workers.jobs.get(job.id).worker == "worker-a"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # still stops the way a service manager stops it
        assert proc.wait(timeout=120) == 0, workers.log.read_text(errors="replace")[-3000:]
