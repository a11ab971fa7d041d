"""The job commands: submit, worker, jobs list|show|cancel|retry (the approvals commands are in
``taskcrew.approvals.cli``).

Thin: each command parses options and calls the job store (``taskcrew.jobs.store``) or the worker.
What it prints of a job (its task, history, approvals, submissions: a submitter's, a model's or
whoever wrote the job database's words) goes through ``taskcrew.terminal.plain``: control
characters are shown, never obeyed by the terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import typer

from taskcrew.approvals.cli import approvals_app, identity
from taskcrew.crew.stopping import signals_deferred, stop_signals
from taskcrew.jobs.engine import prepare_to_enqueue
from taskcrew.terminal import plain

jobs_app = typer.Typer(help="Queued, running and finished jobs.", no_args_is_help=True)

DbUrl = Annotated[
    str | None,
    typer.Option(
        "--db", help="The job database URL (default: TASKCREW_JOBS_DB, else SQLite in TASKCREW_HOME)."
    ),
]
By = Annotated[
    str | None, typer.Option("--by", hidden=True, help="Refused: who acts is proven, never typed.")
]


def _who(by: str | None) -> Any:
    """The proven identity that acts (a free-text --by is refused: a name anyone could type)."""
    if by is not None:
        raise _fail(
            "--by is not accepted: you act as who you are — `taskcrew approvals login` (a personal token, "
            "or TASKCREW_TOKEN), else your operating-system user"
        )
    return identity()


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {plain(message)}", err=True)
    return typer.Exit(code)


def _open(db: str | None, *, create: bool = False, say_created: bool = True) -> Any:
    """The job store. Only the commands that start work (``submit``, ``worker``, ``jobs limits``)
    create a job database, and say so (``say_created``); the others say there is none (a mistyped
    path)."""
    from taskcrew.jobs.store import Jobs, JobStoreError, where

    try:
        jobs = Jobs.open(db, create=create, make_folder=False)
    except JobStoreError as exc:
        raise _fail(str(exc)) from exc
    if jobs.created and say_created:
        typer.echo(f"note: created a new job database at {where(jobs.url)}", err=True)
    return jobs


def _guard(fn: Any) -> Any:
    from taskcrew.jobs.store import InvalidChange, JobStoreError, UnknownApproval, UnknownJob

    try:
        return fn()
    except (UnknownJob, UnknownApproval) as exc:
        raise _fail(str(exc.args[0] if exc.args else exc), 1) from exc
    except (InvalidChange, JobStoreError) as exc:
        raise _fail(str(exc)) from exc


def submit(
    task: Annotated[
        str | None,
        typer.Argument(help="The task, in plain language; with --for-each, a template with {item}."),
    ] = None,
    for_each: Annotated[
        list[str] | None,
        typer.Option(
            "--for-each", help="Submit one job per item ({item} in the task is replaced); repeatable."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="provider/model for the crew.")] = None,
    verifier_model: Annotated[
        str | None, typer.Option("--verifier-model", help="provider/model for the verifier.")
    ] = None,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Approve every change without asking.")
    ] = False,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch", help="A batch task ('every invoice in the inbox…'): planned once, one job per item."
        ),
    ] = False,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key",
            help="The same key (with the same task, items and person) submits once: a call retried "
            "with it queues nothing again and says what is there. Without one, every call is new.",
        ),
    ] = None,
    db: DbUrl = None,
    by: By = None,
) -> None:
    """Queue a task for the workers and print its job id at once."""
    from taskcrew.inputs import InputError, check_job_models, check_plain, check_task
    from taskcrew.jobs.models import JobOptions

    if batch and for_each:
        raise _fail("--batch plans the items itself; give either --batch or --for-each items, not both")
    from taskcrew.jobs.store import InvalidChange, check_item

    try:
        task = check_task(task or "", "submit")
        for item in for_each or []:  # each becomes part of a task, and a line of its own
            check_plain(item, f"the --for-each item {item!r}")
            check_item(item, f"the --for-each item {item!r}")
        if idempotency_key is not None:
            check_item(idempotency_key, "--idempotency-key")
        check_job_models(model, verifier_model)
    except (InputError, InvalidChange) as exc:
        raise _fail(str(exc)) from exc
    # said to a person at a terminal; a script reads the job id alone
    jobs = _open(db, create=True, say_created=sys.stderr.isatty())
    options = JobOptions(
        worker_model=model, verifier_model=verifier_model, auto_approve=auto_approve, batch=batch
    )
    who = _who(by)
    _two_person_check(who)
    prepare_to_enqueue(jobs)  # the queue's client is made before anything is written
    with signals_deferred():  # a Ctrl-C waits until the job is queued for the workers and its id said
        _submit(jobs, task, for_each, who, options, idempotency_key)


def _submit(
    jobs: Any, task: str, for_each: list[str] | None, who: Any, options: Any, key: str | None
) -> None:
    """Submit and print each job's id (stdout: what a script reads). With an idempotency key, a job
    that was already submitted is not queued again: its id is printed all the same, and stderr says
    so, with its state now (it may have finished long ago)."""
    from taskcrew.jobs.store import fingerprint

    if for_each:
        from taskcrew.jobs.batch import batch_id_for, clean_items, submit_each

        before: set[str] = set()
        if key is not None:  # what this key submitted before, if anything
            batch = batch_id_for(task, clean_items(for_each), who.name, key)
            before = {j.id for j in _guard(lambda: jobs.list(parent_id=batch, limit=100_000))}
        found = _guard(
            lambda: submit_each(
                jobs,
                task,
                for_each,
                submitted_by=who.name,
                submitted_proof=who.proof,
                submitted_credential=who.credential,
                options=options,
                key=key,
            )
        )
    else:
        job_id = "job-" + fingerprint({"t": task, "by": who.name, "key": key})[:12] if key else None
        before = {job_id} if job_id and _guard(lambda: _stored(jobs, job_id)) else set()
        found = [
            _guard(
                lambda: jobs.submit(
                    task,
                    submitted_by=who.name,
                    submitted_proof=who.proof,
                    submitted_credential=who.credential,
                    options=options,
                    job_id=job_id,
                )
            )
        ]
    for job in found:
        typer.echo(job.id)
        if job.id in before:
            state = f"{job.status}: {job.outcome}" if job.outcome else job.status
            typer.echo(
                f"note: {job.id} was already submitted with this --idempotency-key (it is {plain(state)} "
                "now): it was not queued again; submit without the key to run it anew",
                err=True,
            )


def _stored(jobs: Any, job_id: str) -> bool:
    from taskcrew.jobs.store import UnknownJob

    try:
        jobs.get(job_id)
    except UnknownJob:
        return False
    return True


def _two_person_check(who: Any) -> None:
    from taskcrew.approvals.authority import Authority
    from taskcrew.approvals.rules import RiskRulesError

    try:
        refusal = Authority(None).submitter_refusal(who)
    except RiskRulesError as exc:  # whether a submitter must prove who they are is the rules' to say
        raise _fail(f"{exc} Nothing was submitted.") from exc
    if refusal:
        raise _fail(refusal)


def worker(
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            min=1,
            help="Jobs one worker runs at once (default 1; one setting for all workers: `jobs limits`).",
        ),
    ] = None,
    worker_id: Annotated[str | None, typer.Option("--worker-id", help="A stable id for this worker.")] = None,
    erp_url: Annotated[
        str, typer.Option("--erp-url", help="The ERP the jobs work in.")
    ] = "http://127.0.0.1:8800",
    intranet_url: Annotated[
        str, typer.Option("--intranet-url", help="The intranet ('' for none).")
    ] = "http://127.0.0.1:8801",
    chaos: Annotated[
        bool, typer.Option("--chaos/--no-chaos", help="Faults in the demo ERP, if started here.")
    ] = True,
    runs_dir: Annotated[Path | None, typer.Option("--runs-dir", help="Where run folders go.")] = None,
    approval_hours: Annotated[
        float,
        typer.Option("--approval-hours", min=0.01, help="Approvals expire after this many hours."),
    ] = 168.0,
    erp_sessions: Annotated[
        int | None,
        typer.Option(
            "--erp-sessions",
            min=1,
            help="Jobs all workers together may run against the ERP at once (default 2; a hard limit; `jobs limits`).",
        ),
    ] = None,
    stale_after: Annotated[
        float,
        typer.Option(
            "--stale-after",
            min=1.0,
            help="Seconds without a heartbeat before another worker takes a job over.",
        ),
    ] = 15.0,
    stop_grace: Annotated[
        float,
        typer.Option(
            "--stop-grace",
            min=0.0,
            max=600.0,
            help="On Ctrl-C/SIGTERM: seconds a running job may take to reach its next checkpoint "
            "before it is handed back as it is (a second Ctrl-C: at once).",
        ),
    ] = 20.0,
    with_parent: Annotated[
        bool,
        typer.Option(
            "--stop-with-parent",
            help="Stop as on Ctrl-C when the process that started this worker ends, however it ended "
            "(a supervisor's or the demo's worker).",
        ),
    ] = False,
    scripted_delay: Annotated[
        float, typer.Option("--scripted-delay", hidden=True, help="Benches: seconds per scripted model call.")
    ] = 0.0,
    db: DbUrl = None,
) -> None:
    """Run queued jobs until stopped (Ctrl-C or SIGTERM); start as many workers as you like."""
    from datetime import timedelta

    from taskcrew.config import Paths, WorkplaceSettings, load_dotenv_once, quiet_crewai_env
    from taskcrew.crew.errors import WorkplaceError
    from taskcrew.crew.stopping import exit_now
    from taskcrew.inputs import InputError, check_url
    from taskcrew.jobs.identity import WorkerIdInUse
    from taskcrew.jobs.limits import LimitConflict
    from taskcrew.jobs.scripted import scripted_for
    from taskcrew.jobs.store import default_url
    from taskcrew.jobs.worker import WorkerSettings, default_worker_id, serve

    load_dotenv_once()
    quiet_crewai_env(Paths.from_env().crewai_storage)
    try:
        check_url(erp_url, "--erp-url")
        if intranet_url:
            check_url(intranet_url, "--intranet-url")
    except InputError as exc:
        raise _fail(str(exc)) from exc
    _open(db, create=True).close()  # a clear error before anything starts
    _check_erp(erp_url)
    values: dict[str, Any] = {"erp_url": erp_url, "intranet_url": intranet_url or None, "chaos": chaos}
    if runs_dir is not None:
        values["runs_dir"] = runs_dir
    settings = WorkerSettings(
        url=db or default_url(),
        concurrency=concurrency,
        worker_id=worker_id or default_worker_id(),
        stale_after_s=stale_after,
        system_sessions=erp_sessions,
        approval_ttl=timedelta(hours=approval_hours),
        scripted=lambda job: scripted_for(job, delay_s=scripted_delay),
        stop_grace_s=stop_grace,
        parent_pid=os.getppid() if with_parent else None,
    )
    stop, stop_now = threading.Event(), threading.Event()

    def on_signal(*_: Any) -> None:  # the first stops taking work, the second stops at once
        (stop_now if stop.is_set() else stop).set()

    # SIGHUP: the terminal the worker runs in was closed; it stops as on Ctrl-C, not dies mid-stage
    # (unless started ignoring it: ``stop_signals``)
    for sig in stop_signals():
        signal.signal(sig, on_signal)

    def say(text: str) -> None:  # its terminal may be gone (SIGHUP): the worker goes on regardless
        with contextlib.suppress(OSError):
            typer.echo(plain(text), err=True)

    say(f"worker {settings.worker_id}: Ctrl-C stops it (running jobs are handed back)")
    try:
        serve(
            settings,
            WorkplaceSettings(**values),
            stop,
            on_ready=lambda: say("ready"),
            stop_now=stop_now,
        )
    except (LimitConflict, WorkplaceError, WorkerIdInUse) as exc:
        raise _fail(str(exc)) from exc
    say(f"worker {settings.worker_id} stopped")
    exit_now(0)  # crewAI's and DBOS's pool threads would keep the process alive


def _check_erp(erp_url: str) -> None:
    """Another web app at --erp-url, or no login for it: said before the worker takes any job (the
    local demo ERP, not running yet, is started by the worker itself)."""
    from taskcrew.crew.errors import WorkplaceError
    from taskcrew.crew.workplace import SECRET_NAMES, erp_login, reachable
    from taskcrew.tools.vault import Vault

    if not reachable(erp_url) or len(Vault.from_env(SECRET_NAMES)) == len(SECRET_NAMES):
        return
    try:
        erp_login(erp_url)
    except WorkplaceError as exc:
        raise _fail(str(exc)) from exc


def _job_line(job: Any, note: str) -> str:
    """``note``: the job's state note (``_notes``)."""
    end = f" {plain(job.outcome)}" if job.outcome else ""
    line = (
        f"{plain(job.id)}  {plain(job.status)}{end}  {job.submitted_at:%Y-%m-%d %H:%M}  "
        f"{plain(job.submitted_by)}  {plain(job.task[:60])}"
    )
    return f"{line}\n    {plain(note)}" if note else line


def _notes(jobs: Any, found: list[Any]) -> dict[str, str]:
    """Each job's state note (``jobs.liveness.state_note``), judged by the job database's clock
    (``Jobs.db_now``, which heartbeats are judged by), its send in doubt named (one read of their
    intents: ``liveness.sends_in_doubt``)."""
    from taskcrew.jobs.liveness import sends_in_doubt, state_note

    now, doubts = _guard(lambda: (jobs.db_now(), sends_in_doubt(jobs, found)))
    return {job.id: state_note(job, now, doubt=doubts.get(job.id)) for job in found}


def _job_json(job: Any, note: str) -> dict[str, Any]:
    """A job as JSON, with how far the store vouches for its record (``signed``, ``legacy``,
    ``forged``, ``superseded``: see jobs.models.RecordTrust) and its state note (``_notes``)."""
    return {**job.model_dump(mode="json"), "record_trust": job.record_trust, "note": note}


@jobs_app.command("list")
def jobs_list(
    status: Annotated[
        str | None, typer.Option("--status", help="queued, running, waiting, finished, failed, cancelled")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array of the jobs ([] for none).")] = False,
    db: DbUrl = None,
) -> None:
    """The jobs, newest first."""
    from taskcrew.jobs.models import JobStatus

    if status is not None and status not in get_args(JobStatus):
        raise _fail(f"no job status {status!r}; use one of: {', '.join(get_args(JobStatus))}")
    jobs = _open(db)
    found = _guard(lambda: jobs.list(status))
    notes = _notes(jobs, found)
    if as_json:
        typer.echo(json.dumps([_job_json(job, notes[job.id]) for job in found], indent=2))
        return
    for job in found:
        typer.echo(_job_line(job, notes[job.id]))
    if not found:
        typer.echo(f"No {status} jobs." if status else 'No jobs yet: `taskcrew submit "<task>"` adds one.')


@jobs_app.command("show")
def jobs_show(job_id: str, db: DbUrl = None) -> None:
    """One job: its state, outcome, approvals, submissions and history."""
    from taskcrew.jobs.liveness import sends_in_doubt, state_note
    from taskcrew.jobs.models import ACTIVE

    jobs = _open(db)
    job, leg = _guard(lambda: jobs.get_on_leg(job_id))
    authority = _authority(jobs)
    doubt = _guard(lambda: sends_in_doubt(jobs, [job])).get(job.id)
    note = state_note(job, _guard(jobs.db_now), doubt=doubt)
    typer.echo(json.dumps(_job_json(job, note), indent=2))  # JSON: every control character escaped
    if job.origin is not None:  # the planner's words, not the submitter's: said beside the task
        typer.echo(f"note: {plain(origin_note(job))}")
    if job.fan_out is not None and job.status == "waiting":
        active = _guard(lambda: jobs.children(job_id, ACTIVE))
        typer.echo(
            f"note: batch of {len(job.fan_out.children)} child job(s), {len(active)} not ended yet; "
            f"it finishes when the last one ends (`taskcrew jobs cancel {plain(job_id)}` stops them all)"
        )
    if job.record_trust != "signed" or doubt is not None:
        typer.echo(f"note: {plain(note)}")
    if job.status in ACTIVE and (over := authority.leg_over(job_id, leg)) is not None:
        # an entry written ahead whose change did not reach the job database (or a row set back)
        typer.echo(
            f"note: the signed audit log says leg {leg} acts no more ({plain(over)}); the job database "
            "is brought in line when a worker takes the job up"
        )
    approvals = jobs.approvals(job_id=job_id)
    if approvals and (unreadable := authority.rules_unreadable()):  # no risk is judged meanwhile
        typer.echo(f"note: {plain(unreadable)}")
    for approval in approvals:
        # judged as `approvals list` judges it: a row the authority did not sign says so
        problem = authority.problem(approval)
        said = f"CANNOT BE TRUSTED: {problem}" if problem else f"{approval.kind} {approval.status}"
        typer.echo(f"approval {plain(approval.id)}: {plain(said)}")
    for intent in jobs.intents(job_id):  # what it submitted, and what the system answered
        said = intent.result or "no answer recorded"
        typer.echo(
            f"submission {plain(intent.payload.method)} {plain(intent.target)}: {plain(intent.status)} "
            f"({plain(said)})"
        )
    for event in jobs.events(job_id):  # one line each: a line feed in a detail is shown, not obeyed
        who = f" by {plain(event.actor)}" if event.actor else ""
        typer.echo(f"{event.at:%Y-%m-%d %H:%M:%S}  {plain(event.kind)}{who}  {plain(event.detail)}")


def origin_note(job: Any) -> str:
    """What a planned batch child's task is: the batch planner's words for its submitter's batch."""
    origin = job.origin
    return (
        f"from batch {origin.batch_id}: {origin.batch_task!r}; this task was written by the batch "
        f"planner ({origin.planner}), not by {job.submitted_by}, and runs without --auto-approve: "
        "a person approves each change it makes"
    )


def _authority(jobs: Any) -> Any:
    """The approvals authority over ``jobs`` (its keys judge the approval rows), its rules read when
    first used (``lazy_authority``): a job is shown and cancelled while the rules file cannot be read."""
    from taskcrew.approvals.authority import lazy_authority

    return lazy_authority(jobs)


@jobs_app.command("cancel")
def jobs_cancel(job_id: str, db: DbUrl = None, by: By = None) -> None:
    """Cancel a queued, running, waiting or failed job (a retry of it then asks its approvals again)."""
    _act(job_id, "cancel", db, by)


@jobs_app.command("retry")
def jobs_retry(job_id: str, db: DbUrl = None, by: By = None) -> None:
    """Run a finished, failed or cancelled job again."""
    _act(job_id, "retry", db, by)


def _act(job_id: str, action: Literal["cancel", "retry"], db: str | None, by: str | None) -> None:
    who = _who(by)
    jobs = _open(db)
    authority = _authority(jobs)
    if action == "retry":
        prepare_to_enqueue(jobs)  # the workers mend what a stop leaves: worker.enqueue_stranded
    with signals_deferred():  # a Ctrl-C waits for the signed entry, the change and the queue
        done = _guard(lambda: authority.act_on_job(job_id, action, who))
        typer.echo(_job_line(done, _notes(jobs, [done])[done.id]))


def _more_than(concurrency: int, sessions: int) -> str:
    return (
        f"--concurrency {concurrency} is more than the {sessions} ERP session(s) all workers share: "
        f"give --concurrency {sessions} or less, or raise --erp-sessions"
    )


@jobs_app.command("limits")
def jobs_limits(
    erp_sessions: Annotated[
        int | None,
        typer.Option("--erp-sessions", min=1, help="Jobs all workers together run against the ERP."),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, help="Jobs one worker runs at once.")
    ] = None,
    db: DbUrl = None,
) -> None:
    """Show the limits every worker runs with, or change them for all (running ones included)."""
    from taskcrew.jobs.limits import FleetLimits, current, set_limits, with_client
    from taskcrew.jobs.store import InvalidChange, default_url

    if erp_sessions is not None and concurrency is not None and concurrency > erp_sessions:
        raise _fail(_more_than(concurrency, erp_sessions))
    _open(db, create=True).close()  # a clear error for a database that cannot be used
    url = db or default_url()

    def apply(client: Any) -> FleetLimits | None:
        fleet = current(client)
        if erp_sessions is None and concurrency is None:
            return fleet
        base = fleet or FleetLimits.wanted(None, None)
        sessions = erp_sessions or base.erp_sessions
        if concurrency is not None and concurrency > sessions:
            raise InvalidChange(_more_than(concurrency, sessions))
        wanted = FleetLimits(
            erp_sessions=sessions,
            per_worker=min(concurrency or base.per_worker, sessions),
            poll_s=base.poll_s,
        )
        return set_limits(client, wanted)

    limits = _guard(lambda: with_client(url, apply))
    if limits is None:
        defaults = FleetLimits.wanted(None, None)
        typer.echo(
            f"no worker has started on this job database yet; the first one sets: {defaults.describe()}"
        )
        return
    typer.echo(limits.describe())


def register(app: typer.Typer) -> None:
    """Wire the job commands into the main CLI."""
    app.command("submit")(submit)
    app.command("worker")(worker)
    app.add_typer(jobs_app, name="jobs")
    app.add_typer(approvals_app, name="approvals")
