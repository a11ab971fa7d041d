"""``taskcrew run`` on the job machinery: the one-shot foreground run is a job in the store too.

It is recorded (``submitted_by``, status, outcome), its stages are checkpointed, its approved
submissions go through the intent log and its model calls through the shared 429 back-off — with the
person at the terminal answering at once. It heart-beats while it runs. Stopped by the person (Ctrl-C,
also a second one that cut the first one's ending short; SIGTERM; a prompt nobody answered) it ends
``finished interrupted``, its checkpoint kept; after a crash ``failed``; after a kill or a reboot
``running`` with a stale heartbeat (``jobs list`` says it is orphaned). Cancelled by a colleague (the
console, ``jobs cancel``) or taken over, it stops at its next checkpoint and returns its run's account
all the same (``interrupted``, what it sent, its report: ``crew.run.run_task``); the job's record is
the cancel's, or the new leg's. No worker adopts it on its own: the person
decides, and ``taskcrew jobs retry ID`` hands it to a worker, which resumes from the last checkpoint.

It is its job's leg 0, held by this process, and asks what a worker's leg asks before anything leaves
its browser and at each heartbeat (``approvals.worker.leg_refusal``: the job row, then the signed audit
log): a cancel stops it even if the job row is set back to a version from before the cancel. Each
send is signed in the audit log as it leaves, and read back before the next (``Authority.sent_before``):
a job row of its intents deleted does not make a payment it sent look unsent. Its
submitter is recorded as proven (a personal token: ``submitted_proof`` ``token``), as ``taskcrew
submit`` records her, or as the operating-system user she is taken for.
"""

from __future__ import annotations

import os
import socket
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity, submitter_as_proven
from taskcrew.approvals.worker import leg_refusal, leg_refusal_of
from taskcrew.crew.errors import WorkplaceError
from taskcrew.jobs.models import JobOptions, utcnow
from taskcrew.jobs.runner import LegHalt, Stopped, StoreCheckpoints, StoreIntents, lost, readback_rules
from taskcrew.jobs.store import Jobs, JobStoreError

LEG = 0  # a foreground run is its new job's first leg


def run_in_foreground(
    workplace: Any, task: str, *, submitted_by: Identity, options: JobOptions, **run: Any
) -> Any:
    """Run ``task`` here and now as a job, submitted by ``submitted_by`` (the terminal's identity, as
    proven: ``approvals.terminal.terminal_identity``); returns the crew's ``RunResult``."""
    from taskcrew.approvals.rules import RiskRulesError
    from taskcrew.crew.run import run_task
    from taskcrew.jobs.backoff import SharedBackoff
    from taskcrew.tools.intents import IntentLog
    from taskcrew.tools.readback import ReadBackFileError

    try:
        rules = readback_rules(workplace)
        jobs = Jobs.open()
        authority = Authority(jobs)  # the signed audit log, which a set-back job row does not undo
    except (JobStoreError, ReadBackFileError, RiskRulesError) as exc:
        raise WorkplaceError(str(exc)) from exc
    who = submitted_by
    options = options.model_copy(update={"foreground": True})
    job = jobs.submit(
        task,
        submitted_by=who.name,
        submitted_proof=who.proof,
        submitted_credential=who.credential,
        options=options,
        enqueue=False,
    )
    worker_id = f"run-{socket.gethostname()}-{os.getpid()}"
    jobs.mark(
        job.id,
        "running",
        only_if=("queued",),
        leg=LEG,
        worker=worker_id,
        started_at=utcnow(),
        beat=True,
        attempts=1,
    )
    listeners = run.pop("listeners", None)
    human = run.pop("human", None)
    settings = workplace.run_settings(task, submitted_by=submitter_as_proven(who.name, who.proof), **run)
    res = workplace.resources(listeners=listeners, human=human, read_only=bool(run.get("read_only")))
    res.checkpoints = StoreCheckpoints(jobs, job.id, worker_id, leg=LEG)
    made: list[Path] = []  # the run's folder: sealed as the run left it, however its job ended

    def noted(path: Path) -> None:
        made.append(Path(path))
        if not jobs.note_run_dir(job.id, str(Path(path).resolve()), leg=LEG, worker=worker_id):
            raise lost(jobs, job.id, LEG)  # cancelled or taken over before its run began

    res.on_run_dir = noted
    res.wrap_model = lambda model, inner: SharedBackoff(jobs, model, inner)
    halt = LegHalt()  # cancelled (the console, `jobs cancel`): nothing more is sent
    if res.browser is not None:
        policy = halt.policy = res.browser.policy
        authority.keys_by(policy.rules)  # one snapshot: the run's keys are its policy's, as its intent log's

        def leaving(method: str, url: str, fields: list[tuple[str, str]]) -> None:
            """Signed as it leaves (what the witness reads): the key it was asked and approved under, and
            the fields left out of it, by the run's one snapshot (``Authority.keys_by``)."""
            key, excluded = authority.keyed(method, url, fields)
            authority.record_send(job.id, key, method, url, job.id, excluded)

        policy.intents = IntentLog(
            StoreIntents(jobs, job.id, authority),
            job.id,
            rules,
            policy.rules,
            witness=lambda method, url, fields: authority.sent_before(job.id, method, url, fields),
            last_check=lambda: leg_refusal(authority, job.id, worker_id, LEG),  # the last thing before a send
            ask_again=policy.ask_to_send_again,  # the person at the terminal may approve a repeat in doubt
            leaving=leaving,
        )
    done = threading.Event()
    threading.Thread(target=_beat, args=(authority, job.id, worker_id, done, halt), daemon=True).start()
    try:
        result = run_task(settings, res)
    except KeyboardInterrupt:  # a Ctrl-C the run's own stop did not take (a second one cut it short):
        done.set()  # stopped by the person, as by a first Ctrl-C — interrupted, its checkpoint kept
        jobs.finish(
            job.id,
            "interrupted",
            f"stopped by Ctrl-C (a second one: at once); `taskcrew jobs retry {job.id}` resumes it "
            "from its last checkpoint",
            leg=LEG,
        )
        raise
    except Stopped as stopped:  # cancelled (the console, `jobs cancel`) or taken over: its account is
        done.set()  # finished (``run_task``: interrupted, what it sent, its report); the job's stands
        if stopped.result is None:  # (stopped before its run began: nothing to account for)
            raise WorkplaceError(f"{stopped}; see `taskcrew jobs show {job.id}`") from None
        result = stopped.result
    except BaseException as exc:
        done.set()
        jobs.mark(
            job.id,
            "failed",
            only_if=("running",),
            leg=LEG,
            reason=f"the foreground run stopped ({type(exc).__name__}); `taskcrew jobs retry {job.id}` resumes it",
            finished_at=utcnow(),
        )
        raise
    finally:  # the run is over: a job ended meanwhile (cancelled while it ran) is sealed as it left it
        if made:
            with suppress(Exception):  # a database hiccup: the seal its ending made stands
                jobs.seal_run(job.id, made[-1])
    done.set()
    run_dir = str(Path(result.run_dir).resolve())
    ended = authority.leg_end(job.id, LEG)
    if ended is not None and ended.action == "cancel":  # cancelled by the signed log alone: it says so
        authority.settle(job.id, LEG, worker_id)
    else:  # (a leg taken over meanwhile ends nothing: the new holder's account stands)
        jobs.finish(job.id, result.outcome, result.reason, leg=LEG, answer=result.answer, run_dir=run_dir)
    if result.outcome != "interrupted":  # Ctrl-C: `jobs retry` resumes it from its last checkpoint
        jobs.clear_checkpoint(job.id, leg=LEG)  # (taken over meanwhile: the new leg's stays)
    jobs.close()
    return result


def _beat(
    authority: Authority,
    job_id: str,
    worker_id: str,
    done: threading.Event,
    halt: LegHalt,
    every_s: float = 2.0,
) -> None:
    """Heart-beat; a job no longer this run's (cancelled) halts its browser's policy: nothing
    data-changing leaves any more (judged on the row the beat read, then the signed audit log)."""
    while not done.wait(every_s):
        try:
            gone = leg_refusal_of(authority, *authority.jobs.heartbeat(job_id, worker_id), worker_id, LEG)
        except Exception:  # a database hiccup: the next beat tries again
            continue
        if gone is not None:
            halt.set(gone)
