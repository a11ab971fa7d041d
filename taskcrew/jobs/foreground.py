"""``taskcrew run`` on the job machinery: the one-shot foreground run is a job in the store too.

It is recorded (``submitted_by``, status, outcome), its stages are checkpointed, its approved
submissions go through the intent log and its model calls through the shared 429 back-off — with the
person at the terminal answering at once. It heart-beats while it runs. If the process dies (Ctrl-C,
a crash, a reboot), the job is left ``finished interrupted``, ``failed`` or, after a kill, ``running``
with a stale heartbeat (``jobs list`` says it is orphaned). No worker adopts it on its own: the person
decides, and ``taskcrew jobs retry ID`` hands it to a worker, which resumes from the last checkpoint.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

from taskcrew.approvals.worker import leg_refusal, leg_refusal_of
from taskcrew.crew.errors import WorkplaceError
from taskcrew.jobs.models import JobOptions, utcnow
from taskcrew.jobs.runner import LegHalt, StoreCheckpoints, StoreIntents, readback_rules
from taskcrew.jobs.store import Jobs, JobStoreError


def run_in_foreground(
    workplace: Any, task: str, *, submitted_by: str, options: JobOptions, **run: Any
) -> Any:
    """Run ``task`` here and now as a job; returns the crew's ``RunResult``."""
    from taskcrew.crew.run import run_task
    from taskcrew.jobs.backoff import SharedBackoff
    from taskcrew.tools.intents import IntentLog
    from taskcrew.tools.readback import ReadBackFileError

    try:
        rules = readback_rules(workplace)
        jobs = Jobs.open()
    except (JobStoreError, ReadBackFileError) as exc:
        raise WorkplaceError(str(exc)) from exc
    options = options.model_copy(update={"foreground": True})
    job = jobs.submit(task, submitted_by=submitted_by, options=options, enqueue=False)
    worker_id = f"run-{socket.gethostname()}-{os.getpid()}"
    jobs.mark(
        job.id,
        "running",
        only_if=("queued",),
        worker=worker_id,
        started_at=utcnow(),
        beat=True,
        attempts=1,
    )
    listeners = run.pop("listeners", None)
    human = run.pop("human", None)
    settings = workplace.run_settings(task, submitted_by=submitted_by, **run)
    res = workplace.resources(listeners=listeners, human=human, read_only=bool(run.get("read_only")))
    res.checkpoints = StoreCheckpoints(jobs, job.id, worker_id)
    res.on_run_dir = lambda path: jobs.note_run_dir(job.id, str(Path(path).resolve()))
    res.wrap_model = lambda model, inner: SharedBackoff(jobs, model, inner)
    halt = LegHalt()  # cancelled (the console, `jobs cancel`): nothing more is sent
    if res.browser is not None:
        policy = halt.policy = res.browser.policy
        policy.intents = IntentLog(
            StoreIntents(jobs, job.id),
            job.id,
            rules,
            last_check=lambda: leg_refusal(jobs, job.id, worker_id),  # the last thing before a send
            ask_again=policy.ask_to_send_again,  # the person at the terminal may approve a repeat in doubt
        )
    done = threading.Event()
    threading.Thread(target=_beat, args=(jobs, job.id, worker_id, done, halt), daemon=True).start()
    try:
        result = run_task(settings, res)
    except BaseException as exc:
        done.set()
        jobs.mark(
            job.id,
            "failed",
            only_if=("running",),
            reason=f"the foreground run stopped ({type(exc).__name__}); `taskcrew jobs retry {job.id}` resumes it",
            finished_at=utcnow(),
        )
        raise
    done.set()
    run_dir = str(Path(result.run_dir).resolve())
    jobs.finish(job.id, result.outcome, result.reason, answer=result.answer, run_dir=run_dir)
    if result.outcome != "interrupted":  # Ctrl-C: `jobs retry` resumes it from its last checkpoint
        jobs.clear_checkpoint(job.id)
    jobs.close()
    return result


def _beat(
    jobs: Jobs, job_id: str, worker_id: str, done: threading.Event, halt: LegHalt, every_s: float = 2.0
) -> None:
    """Heart-beat; a job no longer this run's (cancelled) halts its browser's policy: nothing
    data-changing leaves any more (judged on the row the beat read)."""
    while not done.wait(every_s):
        try:
            gone = leg_refusal_of(*jobs.heartbeat(job_id, worker_id), worker_id)
        except Exception:  # a database hiccup: the next beat tries again
            continue
        if gone is not None:
            halt.set(gone)
