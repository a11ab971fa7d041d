"""The taskcrew command line. Thin: each command parses options and calls into a module.

Keep heavy imports (crewai, chromadb, playwright) inside the command bodies so that
``taskcrew --help`` and ``taskcrew erp serve`` start instantly.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn, cast

import typer

from taskcrew.jobs import cli as _jobs_cli
from taskcrew.recipes.commands import RecipeGroup
from taskcrew.terminal import markup, plain, say

app = typer.Typer(
    name="taskcrew",
    cls=RecipeGroup,  # the company's recipes become commands beside the built-in ones
    help="An autonomous task worker with a human in the loop and an independent verifier.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion: commands, recipes and their choices complete in the shell
    pretty_exceptions_enable=False,
)
erp_app = typer.Typer(help="The demo company's mock ERP, 'Acme Payables'.", no_args_is_help=True)
app.add_typer(erp_app, name="erp")
intranet_app = typer.Typer(
    help="The demo company's intranet, 'Acme Connect' (vendor portal and news).", no_args_is_help=True
)
app.add_typer(intranet_app, name="intranet")
knowledge_app = typer.Typer(
    help="Company procedures and learned facts (a Chroma store; the first use ingests the demo handbook).",
    no_args_is_help=True,
)
app.add_typer(knowledge_app, name="knowledge")
_jobs_cli.register(app)  # submit, worker, jobs …, approvals … (taskcrew.jobs.cli)
from taskcrew.recipes.cli import recipes_app  # noqa: E402

app.add_typer(recipes_app, name="recipes")

from taskcrew.routines.cli import routines_app  # noqa: E402

app.add_typer(routines_app, name="routines")


def _workplace(
    erp_url: str,
    intranet_url: str,
    sandbox: Path | None,
    runs_dir: Path | None,
    chaos: bool,
    headed: bool,
    slow_mo: int,
) -> Any:
    from taskcrew.config import WorkplaceSettings

    values: dict[str, Any] = {
        "erp_url": erp_url,
        "intranet_url": intranet_url or None,
        "chaos": chaos,
        "headless": not headed,
        "slow_mo_ms": slow_mo,
    }
    if sandbox is not None:
        values["sandbox"] = sandbox
    if runs_dir is not None:
        values["runs_dir"] = runs_dir
    return WorkplaceSettings(**values)


class WebSearch(StrEnum):
    intranet = "intranet"
    web = "web"


ErpUrl = Annotated[
    str, typer.Option("--erp-url", help="The ERP; the local demo ERP is started if not running.")
]
IntranetUrl = Annotated[
    str, typer.Option("--intranet-url", help="The intranet ('' for none); the local demo one is started.")
]
Sandbox = Annotated[
    Path | None,
    typer.Option("--sandbox", help="Company files folder (default: the demo company, TASKCREW_SANDBOX)."),
]
RunsDir = Annotated[Path | None, typer.Option("--runs-dir", help="Where run folders go (default: ./runs).")]
Headed = Annotated[bool, typer.Option("--headed", help="Show the browser window.")]
SlowMo = Annotated[int, typer.Option("--slow-mo", min=0, help="Slow each browser action by this many ms.")]
VerifierModel = Annotated[
    str | None,
    typer.Option("--verifier-model", help="provider/model for the verifier (TASKCREW_VERIFIER_MODEL)."),
]
AuditModel = Annotated[
    str | None,
    typer.Option(
        "--model", "--verifier-model", help="provider/model for the verifier (TASKCREW_VERIFIER_MODEL)."
    ),
]


@app.command("run")
def run(
    task: Annotated[str, typer.Argument(help="The task, in plain language.")],
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="provider/model for the crew (TASKCREW_MODEL), e.g. anthropic/claude-sonnet-4-5."
        ),
    ] = None,
    verifier_model: VerifierModel = None,
    allow_same_verifier: Annotated[
        bool, typer.Option("--allow-same-verifier", help="Let the verifier use the worker's model.")
    ] = False,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Approve every change without asking.")
    ] = False,
    chaos: Annotated[
        bool, typer.Option("--chaos/--no-chaos", help="Faults in the demo ERP, if started here.")
    ] = True,
    headed: Headed = False,
    slow_mo: SlowMo = 0,
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="Tool calls allowed in the whole run.")
    ] = 60,
    erp_url: ErpUrl = "http://127.0.0.1:8800",
    intranet_url: IntranetUrl = "http://127.0.0.1:8801",
    sandbox: Sandbox = None,
    runs_dir: RunsDir = None,
    web_search: Annotated[
        WebSearch,
        typer.Option("--web-search", help="What web_search searches: the intranet, or the public web."),
    ] = WebSearch.intranet,
    criterion: Annotated[
        list[str] | None,
        typer.Option("--criterion", help="A success criterion every plan must keep (repeatable)."),
    ] = None,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Change nothing: every data-changing step is refused.")
    ] = False,
) -> None:
    """Do a task end to end: plan, work, get approval for changes, verify, report."""
    from rich.console import Console

    _before_models()
    from taskcrew.crew.commands import run_command

    place = _workplace(erp_url, intranet_url, sandbox, runs_dir, chaos, headed, slow_mo)
    place = place.model_copy(update={"web_search": web_search.value})
    code = run_command(
        task,
        place=place,
        worker_model=model,
        verifier_model=verifier_model,
        allow_same_verifier=allow_same_verifier,
        auto_approve=auto_approve,
        max_steps=max_steps,
        console=Console(),
        criteria=criterion or [],
        read_only=read_only,
    )
    _end(code)


def _before_models() -> None:
    """Before a command builds a model: the working directory's .env (keys, model names), and
    crewAI told not to phone home or prompt (before it is imported)."""
    from taskcrew.config import Paths, load_dotenv_once, quiet_crewai_env

    load_dotenv_once()
    quiet_crewai_env(Paths.from_env().crewai_storage)


def _end(code: int) -> NoReturn:
    """Leave a run's (or an audit's) command with ``code``. An interrupted run has written its report
    and closed its browser; crewAI's abandoned threads (a tool call still waiting on the closed
    browser) must not hold the process: Python's exit joins pool threads, which kept `taskcrew demo`
    alive 2 minutes."""
    from taskcrew.crew.stopping import EXIT_INTERRUPTED, exit_now

    if code == EXIT_INTERRUPTED:
        exit_now(code)
    raise typer.Exit(code)


@app.command("demo")
def demo(
    vendor: Annotated[
        str, typer.Option("--vendor", help="Whose latest invoice to enter (a vendor of the demo company).")
    ] = "Northwind Traders",
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Approve without asking (for scripts).")
    ] = False,
    console: Annotated[
        bool,
        typer.Option(
            "--console", help="Run it as a job: it waits in the web console's inbox until approved there."
        ),
    ] = False,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="The console's port (0: a free one).")
    ] = 0,
    chaos: Annotated[bool, typer.Option("--chaos/--no-chaos", help="Faults in the demo ERP.")] = True,
    headed: Headed = False,
    runs_dir: RunsDir = None,
) -> None:
    """The whole product offline, with scripted stand-in models (not AI): no API key needed."""
    from rich.console import Console

    from taskcrew.config import load_dotenv_once
    from taskcrew.demo import DemoOptions, run_demo

    load_dotenv_once()
    options = DemoOptions(
        vendor=vendor,
        auto_approve=auto_approve,
        console=console,
        console_port=port,
        chaos=chaos,
        headed=headed,
        runs_dir=runs_dir,
    )
    _end(run_demo(options, Console()))


RecipeGroup.run_command = staticmethod(run)  # every recipe takes run's options (recipes never import the CLI)


@app.command("audit")
def audit(
    claim: Annotated[str | None, typer.Argument(help="A claim or success criteria (one per line).")] = None,
    run_dir: Annotated[
        Path | None, typer.Option("--run", help="Re-check a past run's success criteria (a runs/ folder).")
    ] = None,
    verifier_model: AuditModel = None,
    erp_url: ErpUrl = "http://127.0.0.1:8800",
    intranet_url: IntranetUrl = "http://127.0.0.1:8801",
    sandbox: Sandbox = None,
    runs_dir: RunsDir = None,
    headed: Headed = False,
) -> None:
    """The verifier alone, read-only: does the real system show what is claimed?"""
    from rich.console import Console

    _before_models()
    from taskcrew.crew.commands import audit_command

    place = _workplace(erp_url, intranet_url, sandbox, runs_dir, False, headed, 0)
    code = audit_command(
        claim, run_dir=run_dir, place=place, verifier_model=verifier_model, console=Console()
    )
    _end(code)


@erp_app.command("serve")
def erp_serve(
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="TCP port on 127.0.0.1 (0 picks a free one).")
    ] = 8800,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    db: Annotated[Path | None, typer.Option(help="SQLite file (default: under TASKCREW_HOME).")] = None,
    chaos: Annotated[bool, typer.Option("--chaos/--no-chaos", help="Inject real-world faults.")] = True,
    seed: Annotated[int, typer.Option(help="Seed that makes every fault reproducible.")] = 0,
    reset: Annotated[bool, typer.Option(help="Reseed the database before serving.")] = False,
    latency_ms: Annotated[
        int, typer.Option(min=0, max=30_000, help="Chaos: delay every page by this many ms.")
    ] = 0,
    error_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Chaos: chance (0-1) of a random 5xx per page.")
    ] = 0.0,
    modal: Annotated[
        bool, typer.Option(help="Chaos: a notice overlay covers pages until dismissed.")
    ] = False,
    shuffle_fields: Annotated[bool, typer.Option(help="Chaos: shuffle the new-bill form's fields.")] = False,
) -> None:
    """Serve the mock ERP until Ctrl-C (log in as demo / demo123 unless ACME_ERP_* say otherwise)."""
    from pydantic import ValidationError

    from taskcrew.mock_erp import ChaosConfig, ErpError, serve_forever

    try:
        config = ChaosConfig(
            enabled=chaos,
            seed=seed,
            latency_ms=latency_ms,
            error_rate=error_rate,
            modal=modal,
            shuffle_fields=shuffle_fields,
        )
        serve_forever(host=host, port=port, db_path=db, chaos=config, reset=reset)
    except (ErpError, ValidationError) as exc:
        typer.echo(f"erp serve: {plain(exc)}", err=True)
        raise typer.Exit(1) from exc


@intranet_app.command("serve")
def intranet_serve(
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port on 127.0.0.1.")] = 8801,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    pages: Annotated[
        Path | None, typer.Option(help="Folder of page files (default: the built-in site).")
    ] = None,
) -> None:
    """Serve the intranet (read-only) until Ctrl-C."""
    from taskcrew.intranet.content import PageError
    from taskcrew.intranet.server import serve_forever

    try:
        serve_forever(host=host, port=port, pages_dir=pages)
    except PageError as exc:
        typer.echo(f"error: {plain(exc)}", err=True)
        raise typer.Exit(2) from exc
    except OSError as exc:
        typer.echo(f"error: cannot serve on {plain(host)}:{port}: {plain(exc)}", err=True)
        raise typer.Exit(1) from exc


class KnowledgeRanking(StrEnum):
    section = "section"
    hybrid = "hybrid"
    vector = "vector"
    bm25 = "bm25"
    rrf = "rrf"


KnowledgeStoreOption = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default: TASKCREW_HOME/knowledge).")
]


@knowledge_app.command("ingest")
def knowledge_ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (.md, .txt, .pdf, .eml).")],
    store: KnowledgeStoreOption = None,
) -> None:
    """Add company documents to the procedures collection (re-ingesting is idempotent)."""
    from rich.console import Console

    from taskcrew.knowledge import commands

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise _user_error(f"{', '.join(missing)}: no such file or folder", "give files or folders that exist")

    raise typer.Exit(commands.ingest(paths, store, Console(soft_wrap=True)))


@knowledge_app.command("search")
def knowledge_search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    k: Annotated[int, typer.Option("-k", min=1, max=20, help="How many passages.")] = 4,
    ranking: Annotated[
        KnowledgeRanking | None, typer.Option(help="How to rank passages (default: the store's, section).")
    ] = None,
    store: KnowledgeStoreOption = None,
    also: Annotated[
        list[str] | None,
        typer.Option(
            "--also",
            help="Another phrasing of the same need, in the documents' words (up to 3 times); the results are merged.",
        ),
    ] = None,
    rerank: Annotated[
        bool, typer.Option("--rerank", help="A model picks the answering passages among the store's best 20.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="The model that reranks (default: TASKCREW_MODEL).")
    ] = None,
) -> None:
    """Search the company procedures."""
    from rich.console import Console

    from taskcrew.knowledge import commands
    from taskcrew.knowledge.models import Ranking

    if rerank:
        _before_models()
    chosen = cast(Ranking, ranking.value) if ranking is not None else None
    console = Console(soft_wrap=True)
    raise typer.Exit(commands.search(query, k, chosen, store, console, also or (), rerank, model))


@knowledge_app.command("questions")
def knowledge_questions(
    model: Annotated[
        str | None, typer.Option("--model", help="The model that writes them (default: TASKCREW_MODEL).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Ask at most this many sections.")] = None,
    store: KnowledgeStoreOption = None,
) -> None:
    """Have a model write the questions each section answers, so searches in everyday words find it
    (sections asked before, with unchanged text, are skipped)."""
    from rich.console import Console

    _before_models()
    from taskcrew.knowledge import commands

    raise typer.Exit(commands.questions(model, limit, store, Console(soft_wrap=True)))


class FactAction(StrEnum):
    accept = "accept"
    reject = "reject"


@knowledge_app.command("facts")
def knowledge_facts(
    action: Annotated[
        FactAction | None, typer.Argument(help="accept or reject a proposed fact (then give its ID).")
    ] = None,
    fact_id: Annotated[str | None, typer.Argument(help="The fact's id, as the list shows it.")] = None,
    query: Annotated[str | None, typer.Option("--query", "-q", help="Only facts related to this.")] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=50, help="How many facts with --query.")] = 10,
    words: Annotated[
        str | None,
        typer.Option(
            "--words",
            help="accept: the words digest the list printed; accepted only if the fact still says "
            "exactly that (without it, the words are printed and you confirm them).",
        ),
    ] = None,
    store: KnowledgeStoreOption = None,
) -> None:
    """List learned facts (proposed, accepted, rejected), or accept/reject one: `facts accept ID`."""
    from rich.console import Console

    from taskcrew.knowledge import commands

    console = Console(soft_wrap=True)
    if action is None:
        raise typer.Exit(commands.facts(query, k, store, console))
    if not fact_id:
        console.print(f"[red]error:[/red] give the fact's id: `taskcrew knowledge facts {action.value} ID`.")
        raise typer.Exit(2)
    raise typer.Exit(commands.decide(fact_id, action is FactAction.accept, store, console, words))


@knowledge_app.command("forget")
def knowledge_forget(
    fact_id: Annotated[str, typer.Argument(help="The fact's id, as `taskcrew knowledge facts` shows it.")],
    store: KnowledgeStoreOption = None,
) -> None:
    """Delete a learned fact."""
    from rich.console import Console

    from taskcrew.knowledge import commands

    raise typer.Exit(commands.forget(fact_id, store, Console(soft_wrap=True)))


# ------------------------------------------------------------------------------ eval and past runs
runs_app = typer.Typer(help="Past runs: outcome, task, tokens, cost and time of each.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")

RunsDirOption = Annotated[
    Path | None,
    typer.Option("--runs-dir", help="Folder of run folders (default: TASKCREW_RUNS, else ./runs)."),
]


def _user_error(message: str, hint: str = "") -> typer.Exit:
    """One clear line (and a hint) on stderr, no traceback."""
    typer.echo(f"error: {plain(message)}", err=True)
    if hint:
        typer.echo(f"hint: {plain(hint)}", err=True)
    return typer.Exit(2)


@app.command("eval")
def eval_sweep(
    models: Annotated[
        str | None,
        typer.Option(
            "--models",
            help="Worker models, comma-separated provider strings (default: TASKCREW_MODEL). "
            "scripted/solver and scripted/sloppy run offline.",
        ),
    ] = None,
    verifier_model: Annotated[
        str | None,
        typer.Option(
            "--verifier-model",
            help="The verifier (default: TASKCREW_VERIFIER_MODEL; scripted/auditor for scripted workers).",
        ),
    ] = None,
    cases: Annotated[
        str | None,
        typer.Option(
            "--cases", help="Only these cases: comma-separated ids, substrings or globs (a,b,inv*)."
        ),
    ] = None,
    list_cases: Annotated[
        bool, typer.Option("--list", help="List the cases (those --cases selects) and exit.")
    ] = False,
    repeats: Annotated[
        int, typer.Option(min=1, max=100, help="Runs per model and case (pass^k up to k).")
    ] = 1,
    parallel: Annotated[
        int, typer.Option(min=1, max=32, help="Worker processes, each with its own ERP and Chromium.")
    ] = 1,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for results.md, results.json and the runs.")
    ] = Path("eval-results"),
    chaos: Annotated[
        bool, typer.Option("--chaos/--no-chaos", help="--no-chaos runs every case without ERP faults.")
    ] = True,
) -> None:
    """Run the eval cases with each model; grade every run on the ERP's ground truth; report."""
    import os

    from taskcrew.config import Paths, load_dotenv_once, quiet_crewai_env

    load_dotenv_once()
    paths = Paths.from_env()
    if list_cases:
        from taskcrew.eval.listing import print_cases

        raise typer.Exit(print_cases(cases))
    quiet_crewai_env(paths.crewai_storage)
    names = [m.strip() for m in (models or os.environ.get("TASKCREW_MODEL", "")).split(",") if m.strip()]
    if not names:
        raise _user_error(
            "no model configured",
            "pass --models provider/name[,provider/name...] or set TASKCREW_MODEL "
            "(offline: --models scripted/solver)",
        )
    from rich.console import Console

    from taskcrew.crew.stopping import EXIT_INTERRUPTED, RunInterrupted, exit_now, signals_raise
    from taskcrew.eval.console import SweepProgress, print_totals
    from taskcrew.eval.sweep import SweepError, SweepSettings, plan_sweep, run_sweep
    from taskcrew.inputs import InputError, check_writable_dir

    console = Console(soft_wrap=True)
    settings = SweepSettings(
        models=names,
        verifier_model=verifier_model,
        case_pattern=cases,
        repeats=repeats,
        parallel=parallel,
        out_dir=out,
        chaos=chaos,
        sandbox=paths.sandbox,
    )
    try:
        check_writable_dir(out, "--out")
        plan = plan_sweep(settings)
        console.print(
            f"{len(plan.cases)} case(s) × {len(names)} model(s) × {repeats} repeat(s) = {len(plan.jobs)} run(s)"
        )
        with signals_raise(), SweepProgress(console, total=len(plan.jobs)) as progress:
            report = run_sweep(settings, progress, plan)
    except (SweepError, InputError) as exc:
        raise _user_error(str(exc), "`taskcrew eval --help` lists the options") from exc
    except RunInterrupted as stop:  # temp folders are gone (finally clauses ran); results are not written
        say(
            console,
            f"[red]interrupted[/]: {markup(stop)}; the finished runs are under {markup(out / 'runs')}",
        )
        exit_now(EXIT_INTERRUPTED)
    print_totals(report, console)
    say(
        console,
        f"results: {markup(out / 'results.md')} and {markup(out / 'results.json')}; "
        f"runs under {markup(out / 'runs')}",
    )
    if all(r.error for r in report.runs):
        raise _user_error(f"no run could be carried out: {report.runs[0].error}")
    failed = sum(not r.passed for r in report.runs)
    if failed:
        console.print(f"[red]{failed} of {len(report.runs)} run(s) failed their checks[/]")
        raise typer.Exit(1)


@runs_app.command("list")
def runs_list(
    runs_dir: RunsDirOption = None,
    limit: Annotated[int, typer.Option(min=1, help="Show at most this many (newest first).")] = 20,
) -> None:
    """List past runs: when, outcome, task, models, tokens, cost, time."""
    from rich.console import Console

    from taskcrew.config import Paths
    from taskcrew.eval.console import print_runs
    from taskcrew.eval.runs import RunReadError, RunRecords, list_runs

    folder = runs_dir or Paths.from_env().runs
    try:  # a run's job whose send is in doubt says so, as `jobs list` does
        runs, problems = list_runs(folder, RunRecords.read(doubts=True) if folder.is_dir() else None)
    except RunReadError as exc:
        raise _user_error(str(exc), "pass --runs-dir with the folder your runs are in") from exc
    if any(not r.finished for r in runs):  # parked, running, orphaned or interrupted: the job store knows
        from taskcrew.jobs.liveness import annotate_runs
        from taskcrew.jobs.store import Jobs, JobStoreError

        paths = {r.name: r.path for r in runs}
        try:
            store = Jobs.open(create=False, make_folder=False)  # reading runs creates no job database
        except JobStoreError:
            store = None
        if store is not None:
            annotate_runs(runs, paths.get, store)
            store.close()
    console = Console(soft_wrap=True)
    if not runs:
        say(console, f"No runs in {markup(folder)} yet.")
    else:
        print_runs(runs[:limit], console)
        if len(runs) > limit:
            console.print(f"… and {len(runs) - limit} older run(s); --limit shows more.")
    for problem in problems:
        say(console, f"[yellow]skipped:[/] {markup(problem)}")


@runs_app.command("show")
def runs_show(
    run: Annotated[Path, typer.Argument(help="A run folder, or its name inside the runs folder.")],
    runs_dir: RunsDirOption = None,
) -> None:
    """Show one run: outcome, models, tokens, cost, time, and its report."""
    from rich.console import Console

    from taskcrew.config import Paths
    from taskcrew.eval.console import print_run
    from taskcrew.eval.runs import REPORT, RunReadError, RunRecords, find_run, read_run

    try:
        folder = find_run(run, runs_dir or Paths.from_env().runs)
        summary = read_run(folder, RunRecords.read(folder=folder, doubts=True))
    except RunReadError as exc:
        raise _user_error(str(exc)) from exc
    report = folder / REPORT
    text = report.read_text(encoding="utf-8", errors="replace") if report.is_file() else None
    print_run(summary, text, Console(soft_wrap=True))


from taskcrew.console.commands import console_app  # noqa: E402  (light: typer only)

app.add_typer(console_app, name="console")


def main() -> None:
    from taskcrew.crew.stopping import quiet_exit

    try:
        app()
    finally:  # a Ctrl-C while the interpreter tears down prints no traceback
        quiet_exit()


if __name__ == "__main__":
    main()
