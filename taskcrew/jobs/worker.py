"""A worker process: DBOS dequeues job legs and runs them; a watch loop expires approvals and takes
over the jobs of workers that stopped heart-beating (killed with SIGKILL, machine gone).

    serve(WorkerSettings(url=..., concurrency=2), place_settings, stop)   # until stop is set

Each worker has its own DBOS executor id, unique while its process lives (``identity``). A job whose
worker died goes back on the queue as a new leg (``Jobs.take_over``; through the queue, so the limits
hold) and resumes from its last stage checkpoint, whoever takes it (the same id restarted included).
A foreground ``taskcrew run`` is never adopted: ``jobs retry`` hands it to a worker.

Stopping (SIGINT/SIGTERM, ``stop`` set): the worker takes no new work; a running leg ends at its next
checkpoint and is handed back to the queue (``Jobs.hand_back``); what has not reached one within
``stop_grace_s`` (or at once on a second signal, ``stop_now``) is handed back as it is and the process
ends. Either way the job resumes on the next worker from its last checkpoint, never failed. A leg
left dequeued by a worker that vanished before starting it is put back by any live worker's watch
loop (``reclaim_dequeued``). A job left ``queued`` on a leg that never reached DBOS's queue (its
command stopped between the two: ``enqueue_stranded``) is put on it by the same loop.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from taskcrew.approvals.authority import Authority
from taskcrew.crew.stopping import exit_now
from taskcrew.jobs.engine import QUEUE, WORKFLOW, prepare_to_enqueue, serialise_sqlite_claims, workflow_id
from taskcrew.jobs.foreground import LEG as FOREGROUND_LEG
from taskcrew.jobs.identity import IdHolder
from taskcrew.jobs.limits import check, current, join_fleet, with_client
from taskcrew.jobs.liveness import is_orphaned
from taskcrew.jobs.models import Job
from taskcrew.jobs.runner import LegRunner, ScriptedResolver
from taskcrew.jobs.store import Jobs

K = TypeVar("K")
log = logging.getLogger(__name__)


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass
class WorkerSettings:
    url: str
    concurrency: int | None = None  # None: the fleet's (``jobs.limits``)
    worker_id: str = field(default_factory=default_worker_id)
    stale_after_s: float = 15.0
    poll_s: float = 1.0
    approval_ttl: timedelta | None = timedelta(days=7)
    scripted: ScriptedResolver | None = None
    system_sessions: int | None = None  # across ALL workers: None = the fleet's (``jobs.limits``)
    stop_grace_s: float = 20.0  # on a stop, how long a running leg may take to reach a checkpoint
    stranded_after_s: float = 5.0  # a queued leg with no workflow: enqueued after (``enqueue_stranded``)
    parent_pid: int | None = None  # stop as on a signal once this process is no longer the parent


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
    settings: WorkerSettings,
    place_settings: Any,
    stop: threading.Event,
    *,
    on_ready: Any = None,
    stop_now: threading.Event | None = None,
) -> None:
    """Run legs until ``stop`` is set, then stop as the module says. Ends the process itself
    (``exit_now``) when it has to abandon legs still running."""
    from dbos import DBOS

    from taskcrew.crew.workplace import Workplace
    from taskcrew.tools.human import AutoApproveHuman

    stop_now = stop_now or threading.Event()
    fleet = with_client(settings.url, current)
    if fleet is not None:  # other workers ran here: their limits are this one's, or it does not start
        check(fleet, settings.system_sessions, settings.concurrency)
    jobs = Jobs.open(settings.url)
    holder = IdHolder(jobs, settings.worker_id, stale_after_s=settings.stale_after_s)
    holder.claim()  # WorkerIdInUse: a live process has this id
    with Workplace(place_settings, AutoApproveHuman()) as place:
        runner = LegRunner(
            jobs,
            place,
            settings.worker_id,
            scripted=settings.scripted,
            approval_ttl=settings.approval_ttl,
            token=holder.token,  # its legs are bound to this start of the worker, not to its id alone
            still_holds=holder.holds,
            token_alive=holder.token_alive,
        )
        runner.draining = stop
        _Current.runner = runner
        serialise_sqlite_claims()
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
        prepare_to_enqueue(jobs)  # a hand-back on a stop enqueues at once, no client to make first
        stranded: dict[tuple[str, int], datetime] = {}
        decided: dict[str, datetime] = {}
        try:
            # one setting for all workers (DBOS keeps the queue's limits in the job database): the
            # first worker records them; checked again here in case another started meanwhile
            limits = join_fleet(DBOS, settings.system_sessions, settings.concurrency, settings.poll_s)
            log.info("worker %s: %s", settings.worker_id, limits.describe())
            if on_ready is not None:
                on_ready()
            while not stop.wait(settings.poll_s):
                if settings.parent_pid is not None and os.getppid() != settings.parent_pid:
                    log.warning(
                        "worker %s: the process that started it is gone; stopping", settings.worker_id
                    )
                    stop.set()
                    break
                watch(jobs, settings, runner)
                reclaim_dequeued(jobs, holder)
                enqueue_stranded(jobs, stranded, settings.stranded_after_s)
                resume_decided(jobs, decided, settings.stranded_after_s)
                if not holder.beat() or runner.lost is not None:
                    lose_id(runner, settings, stop)
                    break
            _drain(runner, settings, stop_now, holder)
        finally:
            abandoned = runner.running_here()
            if abandoned:  # legs still running: hand them back and end the process now
                given = runner.hand_back_all("the worker stopped before the leg reached a checkpoint")
                holder.release()
                log.warning("worker %s stopped; %s", settings.worker_id, handed_back(jobs, abandoned, given))
                exit_now(0)
            runner.hand_back_all("the worker stopped before the leg started")
            DBOS.destroy(workflow_completion_timeout_sec=0)
            _Current.runner = None
            holder.release()
            jobs.close()


def handed_back(jobs: Jobs, abandoned: list[str], given: list[str]) -> str:
    """What became of the jobs whose legs a stopping worker abandoned: those the queue took back
    (they resume), and each other by its state now (cancelled, finished, taken over meanwhile)."""
    said = [f"handed back {', '.join(given)} (they resume on the next worker)"] if given else []
    for job_id in abandoned:
        if job_id not in given:
            try:
                now = f"{jobs.get(job_id).status} now"
            except Exception as exc:
                now = f"its state could not be read ({exc})"
            said.append(f"{job_id} not handed back: {now}")
    return "; ".join(said) or "no job handed back"


def lose_id(runner: LegRunner, settings: WorkerSettings, stop: threading.Event) -> None:
    """This process's start no longer holds its worker id (another process took it while this one
    stalled past ``stale_after_s``, or its row was deleted): every leg it runs halts now and stops at
    its next checkpoint before writing it (``LegRunner.lose_id``), and the worker stops; its legs'
    jobs, still bound to this start, are handed back as it ends (the others' are not its own)."""
    why = runner.lost or (
        f"worker id {settings.worker_id} is held by another process now (this one stalled past "
        f"{settings.stale_after_s:g} s, or its row was removed)"
    )
    runner.lose_id(why)
    log.error("worker %s: %s; its legs stop and the worker stops", settings.worker_id, why)
    stop.set()


def _drain(runner: LegRunner, settings: WorkerSettings, stop_now: threading.Event, holder: IdHolder) -> None:
    """Wait (at most the grace) for the running legs to reach a checkpoint and hand themselves back.
    The id keeps its beat meanwhile: a drain longer than ``stale_after_s`` must not free it for a
    worker on another machine, which DBOS would give the very legs still running here."""
    log.warning(
        "worker %s stopping: no new work; running legs end at their next checkpoint (at most %g s; "
        "a second Ctrl-C stops at once)",
        settings.worker_id,
        settings.stop_grace_s,
    )
    ends, beat_at = time.monotonic() + settings.stop_grace_s, 0.0
    while runner.running_here() and time.monotonic() < ends and not stop_now.wait(0.2):
        if time.monotonic() - beat_at >= settings.poll_s:
            beat_at = time.monotonic()
            with suppress(Exception):  # a database hiccup: the next beat tries again
                holder.beat()


def watch(jobs: Jobs, settings: WorkerSettings, runner: LegRunner | None = None) -> None:
    """Expire due approvals; put the jobs of workers whose heartbeat went stale back on the queue
    (this worker's own id too, when this process does not run them: a dead earlier holder's).
    Foreground runs are left alone: their person retries them. Stale by the database's clock, which
    wrote the heartbeats (never this host's), and taken over only while the heartbeat is still the
    one judged stale: a holder that beat meanwhile keeps its job.

    A takeover is recorded in the signed audit log before the job database changes (written ahead:
    the silent leg acts no more even if the watcher dies before the change, ``Authority.leg_end``);
    when the database refuses it (the holder beat meanwhile), that is recorded too and the leg acts
    on. A job the signed log says was cancelled is not put back on the queue: it ends cancelled, as
    the log says (``Authority.settle``; a row set back to before the cancel makes no new leg)."""
    here = {job_id for job_id, _ in list(runner.held)} if runner is not None else set()
    authority: Authority | None = None
    try:
        jobs.expire_due()
        now = jobs.db_now()
        for job in jobs.list(status="running"):
            beat, worker = job.heartbeat_at or job.started_at, job.worker
            if worker is None or beat is None or job.options.foreground or job.id in here:
                continue
            if worker == settings.worker_id and runner is None:
                continue
            if not is_orphaned(job, now, settings.stale_after_s):
                continue
            _, leg = jobs.get_on_leg(job.id)
            authority = authority or Authority(jobs)
            ended = authority.leg_end(job.id, leg)
            if ended is not None and ended.action == "cancel":
                if (settled := authority.settle(job.id, leg, worker)) is not None:
                    log.warning("job %s of silent worker %s: %s", job.id, worker, settled)
                continue
            entry = authority.record_take_over(job.id, leg, worker, by=f"worker {settings.worker_id}")
            if jobs.take_over(job.id, worker, silent_since=beat, leg=leg) is not None:
                log.warning("worker %s went silent; its job %s goes back on the queue", worker, job.id)
            else:  # refused by the compare-and-set: nothing changed (the holder beat meanwhile)
                authority.undo_take_over(job.id, entry, "the job database refused it: the job moved on")
    except Exception as exc:  # the watch loop must survive a database hiccup
        log.warning("watch loop: %s", exc)


def reclaim_dequeued(jobs: Jobs, holder: IdHolder) -> None:
    """Legs whose workflow is PENDING on a worker that is gone: only a restart of that very worker
    id would recover them (a default id, host-pid, never comes back), and meanwhile each holds a slot
    of the queue's session limit. A queued job's current leg (dequeued, never started: a stop or a
    kill in that instant) goes back on the queue; a leg its job went on without (handed back at a
    checkpoint, its workflow left unfinished by the exit) is cancelled."""
    from dbos import DBOS

    try:
        pending = DBOS.list_workflows(status="PENDING", queue_name=QUEUE, load_input=False, load_output=False)
        if not pending:
            return
        live = holder.live_ids()
        for wf in pending:
            job_id, _, leg = wf.workflow_id.rpartition(".")
            if wf.executor_id in live or not leg.isdigit():
                continue  # reclaim checks that the job is still queued on this leg
            if jobs.reclaim(job_id, int(leg), str(wf.executor_id)) is not None:
                log.warning(
                    "worker %s left job %s dequeued; it goes back on the queue", wf.executor_id, job_id
                )
            elif jobs.cancel_stale_leg(job_id, int(leg)):
                log.warning("worker %s left an old leg of job %s; cancelled", wf.executor_id, job_id)
    except Exception as exc:  # the watch loop must survive a database hiccup
        log.warning("watch loop: %s", exc)


def enqueue_stranded(jobs: Jobs, seen: dict[tuple[str, int], datetime], grace_s: float) -> None:
    """Jobs ``queued`` on a leg whose workflow (``<job>.<leg>``) is not on DBOS's queue: the job
    database is changed first and DBOS's queue right after (``Jobs.submit``, ``retry``, ``resume``,
    ``hand_back``), and a command stopped in between (Ctrl-C on `submit`, `jobs retry` or `approvals
    approve`; a worker's second Ctrl-C in its hand-back) leaves a job no worker would ever run. Such
    a leg goes on the queue once it has been seen without a workflow for ``grace_s`` seconds by the
    job database's clock (``seen``, kept by the caller between passes: first seen at), so a command
    still between its two writes is not raced; were it, DBOS's enqueue is idempotent per workflow id
    (the same leg is queued once; relied on). A leg the signed audit log ends is not put on the
    queue: the job is brought in line with the log (``Authority.settle``: a standing cancel ends
    it cancelled). A foreground run's own leg is its person's (``taskcrew run``). One query of the
    job database and one of DBOS per pass (more only for a leg to enqueue)."""
    from dbos import DBOS

    try:
        legs = {workflow_id(job_id, leg): (job_id, leg) for job_id, leg in jobs.queued_legs()}
        ids = list(legs)
        there: set[str] = set()
        for at in range(0, len(ids), 500):
            found = DBOS.list_workflows(workflow_ids=ids[at : at + 500], load_input=False, load_output=False)
            there |= {wf.workflow_id for wf in found}
        missing = sorted(legs[wf] for wf in ids if wf not in there)
        authority: Authority | None = None
        for job_id, leg in _seen_for(seen, missing, jobs, grace_s):
            job, current = jobs.get_on_leg(job_id)
            if job.status != "queued" or current != leg or jobs.on_enqueue is None:
                continue
            if job.options.foreground and leg == FOREGROUND_LEG:
                continue
            authority = authority or Authority(jobs)
            if authority.leg_end(job_id, leg) is not None:  # e.g. a retry of a cancel, stopped half-way
                if (settled := authority.settle(job_id, leg, job.worker or "")) is not None:
                    log.warning("job %s was queued with nothing to run it: %s", job_id, settled)
                continue
            jobs.on_enqueue(job, leg)
            log.warning(
                "job %s was queued (leg %s) but never reached the workers' queue: the command that "
                "queued it stopped first (a Ctrl-C?); it is on the queue now",
                job_id,
                leg,
            )
    except Exception as exc:  # the watch loop must survive a database hiccup
        log.warning("watch loop: %s", exc)


def resume_decided(jobs: Jobs, seen: dict[str, datetime], grace_s: float) -> None:
    """Jobs ``waiting`` with no approval pending: a decision is written, then the job resumed
    (``Jobs.decide``), and an expired approval is marked, then its job ended (``Jobs.expire_due``); a
    process killed in between leaves a job nothing would ever move. Seen so for ``grace_s`` seconds
    by the job database's clock (``seen``: first seen at, kept by the caller), such a job goes on as
    it would have: ended ``rejected`` when its newest approval expired, else back on the queue
    (``Jobs.resume``: the run finds its decisions), the decisions the signed audit log lacks signed
    into it first (``Authority.log_unrecorded``: it names who decided). One query of the pending approvals a pass; the
    approvals of a job are read only when it has none pending.

    A batch waiting for its children (never run again: ``Jobs.resume`` settles it) that the signed
    audit log says was cancelled (``cancel`` written ahead, the process stopped before the job
    database's change and the cascade) ends cancelled, its children with it, at once, grace or not
    (``Authority.settle``); the log is read once a pass for the cancels it holds. So does every child
    job queued, running or waiting whose batch's cancel ends it (``Authority.end_with_batch``: the
    cascade never reached it), with a signed cancel of its own; its pending approvals close with it."""
    try:
        listed = jobs.list(status="waiting", limit=1000)
        _finish_cancels(jobs, listed)
        # only rows a worker parked count (``Jobs.parked_here``): a row inserted or edited in the job
        # database (a pending one added, a status set to expired) holds up and ends no job
        pending = {a.job_id for a in jobs.approvals("pending") if jobs.parked_here(a)}
        waiting = [job.id for job in listed if job.id not in pending]
        for job_id in _seen_for(seen, waiting, jobs, grace_s):
            approvals = jobs.approvals(job_id=job_id)
            if any(a.status == "pending" and jobs.parked_here(a) for a in approvals):
                continue
            newest = max(approvals, key=lambda a: a.created_at, default=None)
            if (
                newest is not None
                and newest.status == "expired"
                and (why := jobs.due(newest, jobs.db_now())) is not None
            ):
                if jobs.finish(job_id, "rejected", why, only_if=("waiting",)) is not None:
                    log.warning("job %s was left waiting on an expired approval; it ends rejected", job_id)
            else:
                Authority(jobs).log_unrecorded(job_id)
                if jobs.resume(job_id) is not None:
                    log.warning(
                        "job %s was left waiting with every approval decided (its decision was written, "
                        "then the process stopped); it is back on the queue",
                        job_id,
                    )
    except Exception as exc:  # the watch loop must survive a database hiccup
        log.warning("watch loop: %s", exc)


def _finish_cancels(jobs: Jobs, waiting: list[Job]) -> None:
    """``resume_decided``'s part for cancels the signed audit log holds: each batch of ``waiting``
    (the jobs waiting) it says was cancelled is settled (``Authority.settle``), and each child queued,
    running or waiting whose batch it says was cancelled is cancelled where that cancel ends it
    (``Authority.end_with_batch``). What fails here (the authority cannot be made: its rules file;
    one job) holds up nothing else of the pass."""
    try:
        batches = [job.id for job in waiting if job.fan_out is not None]
        queued, running = jobs.list(status="queued", limit=1000), jobs.list(status="running", limit=1000)
        kids = [job for job in [*waiting, *queued, *running] if job.parent_id]
        if not batches and not kids:
            return
        authority = Authority(jobs)
        cancelled = {e.target for e in authority.audit.signed(("cancel",))}
    except Exception as exc:
        log.warning("watch loop: cancels: %s", exc)
        return
    for job_id in batches:
        if job_id not in cancelled:
            continue
        try:  # one batch that cannot be settled now holds up no other job of the pass
            _, leg = jobs.get_on_leg(job_id)
            if (settled := authority.settle(job_id, leg, "")) is not None:
                log.warning("batch %s was left waiting: %s", job_id, settled)
        except Exception as exc:
            log.warning("watch loop: batch %s: %s", job_id, exc)
    for kid in kids:  # the cascade of a batch's cancel, finished where it never reached
        if kid.parent_id not in cancelled:
            continue
        try:
            if (ended := authority.end_with_batch(jobs.get(kid.id))) is not None:
                log.warning("job %s was left %s: %s", kid.id, kid.status, ended)
        except Exception as exc:
            log.warning("watch loop: job %s: %s", kid.id, exc)


def _seen_for(seen: dict[K, datetime], found: list[K], jobs: Jobs, grace_s: float) -> list[K]:
    """Of ``found`` (what this pass of the watch loop found wrong), what has been found so for
    ``grace_s`` seconds by the job database's clock: ``seen`` keeps when each was first found, between
    passes, and forgets what is no longer found (mended meanwhile, by this loop or by its command)."""
    for gone in set(seen) - set(found):
        del seen[gone]
    if not found:
        return []
    now = jobs.db_now()
    return [key for key in found if (now - seen.setdefault(key, now)).total_seconds() >= grace_s]
