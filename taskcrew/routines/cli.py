"""`taskcrew routines learn|list|show|diff|accept|retire`: review what was learned; only an
accepted version replays. Thin wiring: the logic is in store.py and distil.py (no crewAI import)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from taskcrew.routines.store import RoutineStore

routines_app = typer.Typer(
    help="Routines: verified chores replayed in code (learned from runs, reviewed, accepted).",
    no_args_is_help=True,
)
USAGE_ERROR = 2
VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="The version (default: the newest).")]
NameArg = Annotated[
    str, typer.Argument(help="The routine's name (its recipe's), as `routines list` shows it.")
]


def _fail(message: str, hint: str = "") -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    if hint:
        typer.echo(f"hint: {hint}", err=True)
    return typer.Exit(USAGE_ERROR)


def _store() -> RoutineStore:
    from taskcrew.routines.store import RoutineStore

    return RoutineStore()


@routines_app.command("learn")
def routines_learn(
    run_dir: Annotated[Path, typer.Argument(help="A verified run's folder (under runs/).")],
) -> None:
    """Distil a verified run into a draft routine (a proposal to review, like a learned fact)."""
    from taskcrew.routines.distil import DistilError, distil, merge

    if not run_dir.is_dir():
        raise _fail(
            f"{run_dir} is not a folder", "pass a run folder, e.g. runs/20261002-101500-find-the-latest…"
        )
    try:
        learned = distil(run_dir)
    except DistilError as exc:
        raise _fail(str(exc)) from exc
    store = _store()
    base = store.accepted(learned.name)
    if base is not None:
        learned = merge(base, learned)
    draft, new = store.propose(learned)
    if not new:
        typer.echo(f"{draft.name} v{draft.version} already does this; nothing new proposed.")
        return
    typer.echo(f"proposed {draft.name} v{draft.version} (draft) from run {run_dir.name}")
    typer.echo(
        f"review: taskcrew routines show {draft.name} -v {draft.version}; then accept it with "
        f"taskcrew routines accept {draft.name} -v {draft.version}"
    )


@routines_app.command("list")
def routines_list() -> None:
    """Every routine version: status, replays (clean / fell back), flagged when it keeps falling back."""
    store = _store()
    routines, problems = store.all()
    for r in routines:
        flag = "  FLAGGED: falls back repeatedly" if r.flagged else ""
        if problem := store.acceptance_problem(r):
            flag += f"  NOT REPLAYED: {problem}"
        typer.echo(
            f"{r.name} v{r.version}  {r.status:<8}  {r.successes} clean / {r.fallbacks} fell back  "
            f"from {r.source_run}{flag}"
        )
    if not routines:
        typer.echo(
            "No routines yet: a verified recipe run proposes one (or `taskcrew routines learn <run dir>`)."
        )
    for problem in problems:
        typer.echo(problem, err=True)


@routines_app.command("show")
def routines_show(name: NameArg, version: VersionOpt = None) -> None:
    """What the routine will do, step by step: file rule, templates, browser steps, obstacles."""
    from taskcrew.routines.distil import describe_routine
    from taskcrew.routines.store import RoutineError, fingerprint

    store = _store()
    try:
        routine = store.get(name, version)
    except RoutineError as exc:
        raise _fail(str(exc)) from exc
    if problem := store.acceptance_problem(routine):
        typer.echo(f"NOT REPLAYED: {problem}")
    typer.echo("\n".join(describe_routine(routine)))
    shown = fingerprint(routine)
    typer.echo(
        f"fingerprint: {shown} (to accept exactly what is shown: taskcrew routines accept {routine.name} "
        f"-v {routine.version} --fingerprint {shown})"
    )


@routines_app.command("diff")
def routines_diff(
    name: NameArg,
    version: VersionOpt = None,
    against: Annotated[
        int | None, typer.Option("--against", help="The version to compare with (default: the one before).")
    ] = None,
) -> None:
    """What a version changes against another (a healed version against the one it heals)."""
    from taskcrew.routines.store import RoutineError, diff

    store = _store()
    try:
        new = store.get(name, version)
        old_version = against or new.based_on or new.version - 1
        if old_version < 1:
            raise RoutineError(f"{name} v{new.version} is the first version: nothing to compare it with")
        old = store.get(name, old_version)
    except RoutineError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(diff(old, new) or f"{name} v{old.version} and v{new.version} do the same work.")


@routines_app.command("accept")
def routines_accept(
    name: NameArg,
    version: Annotated[
        int | None,
        typer.Option(
            "--version", "-v", help="The version you reviewed (needed once the routine has more than one)."
        ),
    ] = None,
    reviewed: Annotated[
        str | None,
        typer.Option(
            "--fingerprint",
            help="The fingerprint `routines show` printed: refuse if the version changed since.",
        ),
    ] = None,
) -> None:
    """Accept a version: from now on a run of its chore replays it (the version accepted before retires)."""
    from taskcrew.approvals.authority import Authority
    from taskcrew.approvals.identity import IdentityError, cli_identity
    from taskcrew.approvals.rules import RiskRulesError
    from taskcrew.approvals.signing import KeyError_
    from taskcrew.routines.store import RoutineError, fingerprint

    try:
        who = cli_identity()  # the same proven identity as `taskcrew approvals`, never a typed name
        if refusal := Authority(None).submitter_refusal(who, role="routine's reviewer"):
            typer.echo(
                f"refused: {refusal}", err=True
            )  # who may accept: the authority's rule, as for approvals
            raise typer.Exit(1)
        by = f"{who.proof}:{who.name}"
        routine = _store().accept(name, version, by, who.credential, reviewed=reviewed)
    except (RoutineError, IdentityError, KeyError_, RiskRulesError) as exc:
        raise _fail(str(exc)) from exc
    typer.echo(
        f"accepted {routine.name} v{routine.version} (by {by}): runs of `taskcrew {routine.name}` replay it; "
        f"fingerprint {fingerprint(routine)}"
    )


@routines_app.command("retire")
def routines_retire(name: NameArg, version: VersionOpt = None) -> None:
    """Retire a version (default: the accepted one): its chore goes back to the agent."""
    from taskcrew.routines.store import RoutineError

    try:
        routine = _store().retire(name, version)
    except RoutineError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"retired {routine.name} v{routine.version}")
