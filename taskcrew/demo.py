"""`taskcrew demo`: the whole product offline, with scripted stand-ins for the models.

Everything but the models is the real thing: the demo company's files, the Acme Payables ERP with
its chaos (a fresh copy per demo), real Chromium behind the policy gate, the approval (at the
terminal, or in the web console's inbox with ``--console``), the independent verifier's check of
the ERP and the report. The "models" are small programs (the eval's scripted solver and auditor)
that read the task's particulars and then act on what the tools really show; they are not AI, and
the demo says so before and after.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel

from taskcrew.terminal import markup, say

DEFAULT_VENDOR = "Northwind Traders"
WORKER_MODEL, VERIFIER_MODEL = "scripted/solver", "scripted/auditor"
LABEL = (
    "[bold]DEMO with scripted stand-in models — not AI.[/] The planner, the workers and the verifier "
    "are small scripted programs (taskcrew's eval solver and auditor): they read the task's "
    "particulars, then act only on what the real tools show them. Everything else is real: the demo "
    "company's files, the Acme Payables ERP with its chaos (expired sessions, outages, cookie "
    "banners), Chromium behind the policy gate, your approval, the verifier's check and the report. "
    "For real models see README › Models."
)

NOT_AI = "scripted stand-in models, not AI"  # what a run by scripted models is called (console)
RUN_LABEL = f"demo ({NOT_AI})"  # what the console and report.md call a demo run
MARK = "demo.json"  # in a demo's run folder: the run is the demo's (console/artifacts.py reads it)


def mark_demo_run(run_dir: Path) -> None:
    """Mark a run folder as the demo's as soon as it exists: the console lists it as a demo."""
    record = {
        "demo": True,
        "label": RUN_LABEL,
        "worker_model": WORKER_MODEL,
        "verifier_model": VERIFIER_MODEL,
    }
    (run_dir / MARK).write_text(json.dumps(record) + "\n", encoding="utf-8")


# what report.md of a run `taskcrew demo` marked as its own says under its title, whatever its
# outcome says below it (``demo_report``), and what its routine.txt adds after a draft it proposed
REPORT_NOTE = (
    f"**{RUN_LABEL[:1].upper()}{RUN_LABEL[1:]}.** This run was made by `taskcrew demo`: the planner, "
    "the workers and the verifier are scripted programs, and the systems are the demo company's."
)
ROUTINE_NOTE = (
    "demo: the draft is in the demo's own routines folder, removed when the demo ends; your "
    "routines never get it (the demo does not write to them)."
)


def labelled_report(text: str) -> str:
    """report.md's text with the demo's label under its title (once)."""
    if REPORT_NOTE in text:
        return text
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{REPORT_NOTE}\n{rest}"


def demo_report(run_dir: Path, text: str) -> str:
    """report.md's text as the run writes it (``crew.report.write_report``): labelled when its
    folder is marked the demo's (``mark_demo_run``, as the folder was made). The label is written
    with the report, never added after the run: the run folder is sealed as its job ends
    (``jobs.runseal``), and a file changed after that reads as a folder changed after its run."""
    from taskcrew.eval.runs import demo_marked

    return labelled_report(text) if demo_marked(run_dir) else text


def demo_task(vendor: str) -> str:
    return (
        f"Find the latest invoice from {vendor}, extract the amount and due date, enter it into our "
        "internal system, and tell me once it is done."
    )


@dataclass
class DemoOptions:
    vendor: str = DEFAULT_VENDOR
    auto_approve: bool = False
    console: bool = False
    console_port: int = 0
    chaos: bool = True
    headed: bool = False
    runs_dir: Path | None = None
    wait_seconds: float = 600.0  # how long --console waits for the job to end


def run_demo(opts: DemoOptions, out: Console) -> int:
    from taskcrew.config import Paths
    from taskcrew.crew.errors import USER_ERRORS
    from taskcrew.crew.stopping import EXIT_INTERRUPTED, RunInterrupted, signals_raise
    from taskcrew.eval.solvers import NoRecipe, task_models

    if not opts.vendor.strip():
        out.print(
            '[red]error:[/] --vendor is empty: name a vendor of the demo company, e.g. --vendor "Initech"'
        )
        return 2
    task = demo_task(opts.vendor.strip())
    try:
        factory = task_models(task)
    except NoRecipe as exc:
        say(out, f"[red]error:[/] {markup(exc)}")
        return 2
    out.print(Panel(LABEL, title="taskcrew demo", border_style="yellow"), highlight=False)
    if opts.console:  # in the terminal the run's own progress says it first
        say(out, f"[bold]Task:[/] {markup(task)}")
    real = Paths.from_env()  # the user's: the runs folder (kept) and the knowledge seed (a cache)
    opts = replace(opts, runs_dir=opts.runs_dir or real.runs)
    code = 1
    with signals_raise():  # Ctrl-C and SIGTERM raise here too: the temporary folder is removed
        folders = DemoFolders(Path(tempfile.mkdtemp(prefix="taskcrew-demo-")))
        try:
            with folders.in_use():
                code = (
                    _with_console(opts, task, folders, real, out)
                    if opts.console
                    else _in_terminal(opts, task, factory, folders, real, out)
                )
        except USER_ERRORS as exc:
            say(out, f"[red]error:[/] {markup(exc)}")
            code = 2
        except (KeyboardInterrupt, RunInterrupted):
            out.print("\n[yellow]Demo interrupted.[/]")
            code = EXIT_INTERRUPTED
        finally:
            shutil.rmtree(folders.root, ignore_errors=True)
    return code


@dataclass(frozen=True)
class DemoFolders:
    """Everything a demo writes, in every mode, but its run folder: one temporary folder, removed
    when the demo ends however it ends. The demo (and its ``--console`` worker) run with
    ``environment()``, so what the code keeps in ``TASKCREW_HOME`` (routine drafts, learned facts,
    the approvals key and signed audit log, CrewAI's storage, screenshots of filled forms) lands
    here and never in the user's own folders; the demo process's own temporary files too
    (``tempfile``). Not Chromium's: its profile and socket stay in the system's temporary folder,
    since a socket's path must stay short (about 100 characters). Outside this folder the demo
    writes only its run folder under runs/ (the user's to read) and the procedures store it seeds
    once per real home (``knowledge_seed``, a cache it only copies)."""

    root: Path

    @property
    def home(self) -> Path:
        """TASKCREW_HOME of the demo and of its worker."""
        return self.root / "home"

    @property
    def knowledge_dir(self) -> Path:
        return self.home / "knowledge"

    @property
    def jobs_dir(self) -> Path:
        return self.home / "jobs"  # where a worker keeps the filled forms' screenshots

    @property
    def routines_dir(self) -> Path:
        return self.home / "routines"

    @property
    def approvals_dir(self) -> Path:
        return self.home / "approvals"

    @property
    def crewai_dir(self) -> Path:
        return self.home / "crewai"

    @property
    def erp_db(self) -> Path:
        return self.root / "erp.sqlite3"

    @property
    def jobs_url(self) -> str:
        return f"sqlite:///{(self.root / 'jobs.sqlite3').resolve()}"

    @property
    def console_dir(self) -> Path:
        return self.root / "console"

    @property
    def worker_log(self) -> Path:
        return self.root / "worker.log"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"  # the demo process's ``tempfile.tempdir`` (not TMPDIR: see above)

    def environment(self) -> dict[str, str]:
        """The variables naming these folders: a TASKCREW_ROUTINES or TASKCREW_APPROVALS_DIR of the
        user's is overridden too, so a demo draft never reaches the company's routines."""
        from taskcrew.approvals.signing import ENV_DIR
        from taskcrew.routines.store import ENV_VAR as ROUTINES

        return {
            "TASKCREW_HOME": str(self.home),
            ROUTINES: str(self.routines_dir),
            ENV_DIR: str(self.approvals_dir),
            "CREWAI_STORAGE_DIR": str(self.crewai_dir),
        }

    def console_folders(self) -> dict[str, Path]:
        """The folders the demo's console is told to read (``ConsoleSettings``)."""
        return {
            "jobs_dir": self.jobs_dir,
            "knowledge_dir": self.knowledge_dir,
            "routines_dir": self.routines_dir,
            "approvals_dir": self.approvals_dir,
        }

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """This process runs with ``environment()`` (and its ``tempfile`` files here) until the
        block ends; the process's own values are put back after it."""
        env = self.environment()
        self.tmp.mkdir(parents=True, exist_ok=True)
        saved, saved_tmp = {name: os.environ.get(name) for name in env}, tempfile.tempdir
        os.environ.update(env)
        tempfile.tempdir = str(self.tmp)
        try:
            yield
        finally:
            tempfile.tempdir = saved_tmp
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


SEED_DONE = ".seeded"


def knowledge_seed(paths: Any = None) -> Path:
    """The demo company's procedures in a knowledge store, seeded once per home (it takes a while)
    and then copied for every demo, so that what a demo run learns never reaches the company's own
    store. ``paths``: the user's (``Paths``), read before the demo's folders are in use."""
    from taskcrew.config import Paths
    from taskcrew.eval.sweep import seed_knowledge

    paths = paths or Paths.from_env()
    seed: Path = paths.home / "demo" / "knowledge-seed"
    if (seed / SEED_DONE).is_file():
        return seed
    shutil.rmtree(seed, ignore_errors=True)
    seed_knowledge(seed, paths.sandbox)
    (seed / SEED_DONE).write_text("seeded\n", encoding="utf-8")
    return seed


def _copy_knowledge(folders: DemoFolders, real: Any) -> None:
    shutil.copytree(knowledge_seed(real), folders.knowledge_dir, ignore=shutil.ignore_patterns(SEED_DONE))


def _place_settings(opts: DemoOptions, folders: DemoFolders, *, knowledge: bool) -> Any:
    from taskcrew.config import WorkplaceSettings

    values: dict[str, Any] = {
        "erp_url": "http://127.0.0.1:0",  # a fresh demo ERP on a free port: no clash, no earlier bills
        "intranet_url": "http://127.0.0.1:0",
        "erp_db": folders.erp_db,
        "knowledge_dir": folders.knowledge_dir,  # the demo's facts stay out of the company's store
        "use_knowledge": knowledge,
        "chaos": opts.chaos,
        "headless": not opts.headed,
        "runs_dir": opts.runs_dir,
    }
    return WorkplaceSettings(**values)


def _in_terminal(
    opts: DemoOptions, task: str, factory: Any, folders: DemoFolders, real: Any, out: Console
) -> int:
    from taskcrew.config import quiet_crewai_env
    from taskcrew.crew.calls import quiet_crewai_noise
    from taskcrew.crew.commands import make_human
    from taskcrew.crew.models import EXIT_CODES
    from taskcrew.crew.progress import ProgressPrinter
    from taskcrew.crew.workplace import Workplace

    quiet_crewai_env(folders.crewai_dir)
    quiet_crewai_noise()
    out.print("[dim]Starting the demo ERP, the intranet and the knowledge store…[/]")
    _copy_knowledge(folders, real)
    settings = _place_settings(opts, folders, knowledge=True)
    with Workplace(settings, make_human(opts.auto_approve, out)) as place:
        out.print(f"[dim]Acme Payables (demo ERP, chaos {'on' if opts.chaos else 'off'}): {place.erp_url}[/]")
        # marked as the folder is made: the run labels its report and routine note as it writes them
        result = place.run(
            task,
            worker_model=WORKER_MODEL,
            verifier_model=VERIFIER_MODEL,
            scripted=factory,
            listeners=[ProgressPrinter(out)],
            on_run_dir=mark_demo_run,
        )
    _print_outcome(out, result.outcome, result.reason, result.answer, str(result.report))
    return EXIT_CODES[result.outcome]


def _print_outcome(out: Console, outcome: str, reason: str, answer: str, report: str) -> None:
    colour = "green" if outcome in ("done", "nothing_to_do") else "red"
    say(out, f"\n[bold {colour}]{markup(outcome)}[/]: {markup(reason)}")
    if answer:  # its own lines, each indented under "Answer:"
        say(out, f"[bold]Answer:[/] {markup(answer, layout=True, indent=' ' * len('Answer: '))}")
    say(out, f"Report: {markup(report)}", soft_wrap=True)
    out.print(
        "[yellow]This was the demo with scripted stand-in models (not AI).[/] Configure a real model "
        "(README › Models) and `taskcrew run` does the same with your own words.",
        highlight=False,
    )


# ------------------------------------------------------------------------------ --console
def _with_console(opts: DemoOptions, task: str, folders: DemoFolders, real: Any, out: Console) -> int:
    from taskcrew.console.server import ConsoleServer, prepare
    from taskcrew.console.settings import ConsoleSettings
    from taskcrew.crew.models import EXIT_CODES
    from taskcrew.crew.workplace import Workplace
    from taskcrew.jobs.models import JobOptions
    from taskcrew.jobs.store import Jobs

    settings = _place_settings(opts, folders, knowledge=False)
    jobs = Jobs.open(folders.jobs_url)
    with Workplace(settings, None) as place:  # the ERP and intranet, for the worker to work in
        console_settings, token = prepare(
            ConsoleSettings(
                port=opts.console_port,
                state_dir=folders.console_dir,
                runs_dirs=[settings.runs_dir],
                eval_dirs=[],
                users_file=folders.console_dir / "users.yaml",
                jobs_url=folders.jobs_url,
                # the worker's screenshots, facts, routine drafts and approvals key (it signs what it parks)
                **folders.console_folders(),
                systems=settings.model_copy(
                    update={"erp_url": place.erp_url, "intranet_url": place.intranet_url}
                ).system_names(),
            )
        )
        server = ConsoleServer(console_settings, jobs).start()
        worker = _start_worker(place, settings.runs_dir, folders, real, opts.chaos)
        try:
            job = jobs.submit(
                task,
                submitted_by="demo",
                options=JobOptions(
                    worker_model=WORKER_MODEL, verifier_model=VERIFIER_MODEL, auto_approve=opts.auto_approve
                ),
            )
            out.print(
                f"Console: [bold]{server.url}[/]  log in with the token: {token}",
                highlight=False,
                soft_wrap=True,
            )
            out.print(
                f"Job {job.id} queued; a `taskcrew worker` runs it and asks in the console's inbox.",
                soft_wrap=True,
            )
            finished = _follow(jobs, job.id, server.url, opts, out, worker)
            if finished is None:
                _show_worker_log(folders, worker, out)
                return 1
            outcome = finished.outcome or "error"
            report = str(Path(finished.run_dir) / "report.md") if finished.run_dir else "(no run folder)"
            _print_outcome(out, outcome, finished.reason, finished.answer, report)
            if stays_open():
                _stay_open(out, outcome, f"{server.url}/jobs/{job.id}")
        finally:
            _stop(worker)
            server.stop()
            jobs.close()
    return EXIT_CODES.get(outcome, 1)


def stays_open() -> bool:
    """After the job, the demo's console stays open for a person at a terminal (stdin is one) until
    Ctrl-C; from a script (stdin not a terminal: a pipe, a file, /dev/null) the demo ends at once."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # closed
        return False


STAYS_OPEN = "the console stays open until you press Ctrl-C"


def _stay_open(out: Console, outcome: str, job_url: str) -> None:
    """Keep the console (and the worker, the ERP, the demo's folders) up until Ctrl-C or SIGTERM:
    the approver reads the outcome and the report there. Ending so is not an interruption: the
    demo ends with the job's exit code."""
    from taskcrew.crew.stopping import RunInterrupted

    say(
        out,
        f"Finished: {markup(outcome)}. The job in the console: {markup(job_url)} — {STAYS_OPEN}.",
        soft_wrap=True,
    )
    with contextlib.suppress(KeyboardInterrupt, RunInterrupted):
        while True:
            time.sleep(3600)
    out.print("\n[dim]Console stopped.[/]")


def _start_worker(
    place: Any, runs_dir: Path, folders: DemoFolders, real: Any, chaos: bool
) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "taskcrew.cli",
        "worker",
        "--db",
        folders.jobs_url,
        "--erp-url",
        place.erp_url,
    ]
    command += ["--intranet-url", place.intranet_url or "", "--runs-dir", str(runs_dir), "--concurrency", "1"]
    command += ([] if chaos else ["--no-chaos"]) + ["--stop-with-parent"]  # a demo killed -9 takes it along
    _copy_knowledge(folders, real)
    env = {**os.environ, **folders.environment()}  # its own session: the demo stops it, not Ctrl-C
    with folders.worker_log.open("wb") as log:
        return subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(worker: subprocess.Popen[bytes]) -> None:
    worker.terminate()
    try:
        worker.wait(30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait(30)


def _show_worker_log(folders: DemoFolders, worker: subprocess.Popen[bytes], out: Console) -> None:
    """The worker's last words when it stopped on its own: its log goes with the demo's folder."""
    if worker.poll() is None or not folders.worker_log.is_file():
        return
    lines = folders.worker_log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
    if lines:
        say(out, "[dim]The worker's log ended with:[/]")
        say(out, markup("\n".join(lines), layout=True), soft_wrap=True)


def _follow(
    jobs: Any,
    job_id: str,
    url: str,
    opts: DemoOptions,
    out: Console,
    worker: Any,
) -> Any:
    """Wait for the job to end, saying where it waits for a person. The run folder the worker made
    is marked the demo's while its run goes on (the run labels its report and routine note by the
    mark as it writes them: ``demo_report``); nothing is written to it once the job ended (it is
    sealed as it finishes: ``jobs.runseal``), so a folder first seen then stays unmarked (the
    console still calls the run scripted by its models)."""
    told: set[str] = set()
    deadline = time.monotonic() + opts.wait_seconds
    while time.monotonic() < deadline:
        job = jobs.get(job_id)
        if job.status in ("finished", "failed", "cancelled"):
            return job
        if job.run_dir and job.run_dir not in told:  # the worker made the run folder: the demo's
            told.add(job.run_dir)
            mark_demo_run(Path(job.run_dir))
        for approval in jobs.approvals("pending", job_id=job_id):
            if approval.id in told:
                continue
            told.add(approval.id)
            # with --auto-approve the worker approves what the risk rules let it (signed as
            # "--auto-approve", nobody asked); what they keep for a person waits here as it would
            uncovered = " (--auto-approve does not cover it: the risk rules keep it for a person)"
            say(
                out,
                f"[bold yellow]Waiting for you:[/] open {url}/approvals/{markup(approval.id)} and decide"
                + (uncovered if opts.auto_approve else "")
                + ".",
                soft_wrap=True,
            )
        if worker.poll() is not None:
            out.print(f"[red]error:[/] the worker stopped (exit {worker.returncode})")
            return None
        time.sleep(0.5)
    out.print(f"[red]error:[/] the job did not end within {opts.wait_seconds:.0f} s")
    return None
