"""`taskcrew routines learn|list|show|diff|accept|retire`: review what was learned; only an
accepted version replays. Thin wiring: the logic is in store.py and distil.py (no crewAI import)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskcrew.terminal import plain

if TYPE_CHECKING:
    from taskcrew.routines.models import Routine
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
    from taskcrew.routines.models import on_screen  # an error may quote a routine file

    typer.echo(f"error: {on_screen(message)}", err=True)
    if hint:
        typer.echo(f"hint: {on_screen(hint)}", err=True)
    return typer.Exit(USAGE_ERROR)


def _store() -> RoutineStore:
    from taskcrew.routines.store import RoutineStore

    return RoutineStore()


def _say(*lines: str) -> None:
    """Print lines holding a routine file's strings, each ``on_screen``: an ESC sequence, a carriage
    return, a line feed or a bidi control inside one is shown as a marker, never acted on."""
    from taskcrew.routines.models import on_screen

    for line in lines:
        typer.echo(on_screen(line))


def _terminal() -> bool:
    import sys

    return sys.stdin.isatty()


def _shown(store: RoutineStore, routine: Routine) -> list[str]:
    """What `show` prints of a version: why it does not replay, if so; every step; its fingerprint."""
    from taskcrew.routines.distil import describe_routine
    from taskcrew.routines.store import fingerprint

    problem = store.acceptance_problem(routine)
    return [
        *([f"NOT REPLAYED: {problem}"] if problem else []),
        *describe_routine(routine),
        *_vouched(store, routine),
        f"fingerprint: {fingerprint(routine)}",
    ]


def _vouched(store: RoutineStore, routine: Routine) -> list[str]:
    """Who wrote a version and who reviewed it, each only as far as it is signed."""
    from taskcrew.approvals.signing import KeyError_

    try:
        written = store.authorship(routine)
    except KeyError_ as exc:
        return [f"written by: cannot be checked ({exc})"]
    lines = [
        f"written by: {written.describe()} (signed)"
        if written is not None
        else "written by: NOT PROVEN (no signed record of its author: written into the routines folder by "
        "hand, or changed after it was proposed); the run it names and what it says it heals are its own "
        "word, and while the two-person rule is on nobody may accept it"
    ]
    if routine.reviewed_by:
        unproven = store.review_problem(routine)
        lines.append(f"reviewed by: {routine.reviewed_by}" + (" (NOT PROVEN)" if unproven else " (signed)"))
    return lines


@routines_app.command("learn")
def routines_learn(
    run_dir: Annotated[Path, typer.Argument(help="A verified run's folder (under runs/).")],
) -> None:
    """Distil a verified run into a draft routine (a proposal to review, like a learned fact)."""
    from taskcrew.approvals.identity import IdentityError, cli_identity
    from taskcrew.routines.distil import DistilError, distil, merge
    from taskcrew.routines.store import UNPROVEN_SUBMITTER, run_submitter

    if not run_dir.is_dir():
        raise _fail(
            f"{run_dir} is not a folder", "pass a run folder, e.g. runs/20261002-101500-find-the-latest…"
        )
    from taskcrew.eval.runs import RunRecords

    record = RunRecords.read(folder=run_dir).of(run_dir)  # read once: whether it was done, who submitted it
    try:
        learned = distil(run_dir, record=record)
    except DistilError as exc:
        raise _fail(str(exc)) from exc
    except ValueError as exc:  # what it learned is no valid routine (pydantic says why)
        raise _fail(" ".join(str(exc).split())) from exc
    try:
        who = cli_identity()  # who had it learned writes it: she may not accept it alone (two-person rule)
    except IdentityError as exc:
        raise _fail(str(exc)) from exc
    # who submitted the run: the job store's signed record of it, never the run folder's word; she
    # may not accept what was learned from it alone (two-person rule), as for a run's own proposal
    submitted = run_submitter(run_dir, record=record)
    store = _store()
    base, unvouched = store.heal_base(learned.name)  # a version whose file is signed, as for a run's own
    if base is not None:
        learned = merge(base, learned)
    elif unvouched:
        typer.echo(f"note: the draft keeps nothing of an earlier version: {plain(unvouched)}", err=True)
    draft, new = store.propose(learned, author=who, submitter=submitted.name or UNPROVEN_SUBMITTER)
    if not new:
        typer.echo(
            f"{plain(draft.name)} v{draft.version} ({draft.status}) already does this; nothing new proposed."
        )
        return
    by = f"submitted by {submitted.name}" if submitted.name else "its submitter NOT PROVEN"
    typer.echo(
        f"proposed {plain(draft.name)} v{draft.version} (draft) from run {plain(run_dir.name)} "
        f"({plain(by)}: {plain(submitted.said)}), written by {plain(f'{who.proof}:{who.name}')}"
    )
    if why := store.author_refusal(draft, ""):  # nobody may accept it (an unproven author or submitter)
        typer.echo(f"note: {plain(why)}", err=True)
    typer.echo(
        f"review: taskcrew routines show {plain(draft.name)} -v {draft.version}; then accept it with "
        f"taskcrew routines accept {plain(draft.name)} -v {draft.version} --fingerprint <the one show prints>"
    )


@routines_app.command("list")
def routines_list() -> None:
    """Every routine version: status, replays (clean / fell back), flagged when it keeps falling back."""
    from taskcrew.routines.distil import UNSIGNED
    from taskcrew.routines.models import on_screen

    store = _store()
    routines, problems = store.all()
    for r in routines:
        flag = "  FLAGGED: falls back repeatedly" if r.flagged else ""
        if problem := store.acceptance_problem(r):
            flag += f"  NOT REPLAYED: {problem}"
        _say(
            f"{r.name} v{r.version}  {r.status:<8}  {r.successes} clean / {r.fallbacks} fell back  "
            f"from {r.source_run}{flag}"
        )
    if routines:
        typer.echo(f"(replays and FLAGGED: {UNSIGNED}; `routines show` prints what a version does)")
    else:
        typer.echo(
            "No routines yet: a verified recipe run proposes one (or `taskcrew routines learn <run dir>`)."
        )
    for problem in problems:
        typer.echo(on_screen(problem), err=True)


@routines_app.command("show")
def routines_show(name: NameArg, version: VersionOpt = None) -> None:
    """What the routine will do, step by step: file rule, templates, browser steps, obstacles."""
    from taskcrew.routines.store import RoutineError, fingerprint

    store = _store()
    try:
        routine = store.get(name, version)
    except RoutineError as exc:
        raise _fail(str(exc)) from exc
    shown = fingerprint(routine)
    _say(
        *_shown(store, routine)[:-1],
        f"fingerprint: {shown} (to accept exactly what is shown: taskcrew routines accept {routine.name} "
        f"-v {routine.version} --fingerprint {shown})",
    )


@routines_app.command("diff")
def routines_diff(
    name: NameArg,
    version: VersionOpt = None,
    against: Annotated[
        int | None,
        typer.Option("--against", help="The version to compare with (default: the one that replays now)."),
    ] = None,
) -> None:
    """What a version changes against the one that replays now (else the one before it)."""
    from taskcrew.routines.store import RoutineError, diff

    store = _store()
    try:
        new = store.get(name, version)
        old, what = (store.get(name, against), "the version you named") if against else store.diff_base(new)
        if old is None:
            raise RoutineError(f"{name} v{new.version} has nothing to compare it with: {what}")
    except RoutineError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"{plain(name)} v{new.version} against v{old.version}, {what}:")
    _say(*(diff(old, new) or f"{name} v{old.version} and v{new.version} do the same work.").split("\n"))


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
            help="The fingerprint `routines show` printed: only that exact version is accepted. Needed when "
            "not at a terminal; at one, without it, the version is shown and you confirm its fingerprint.",
        ),
    ] = None,
) -> None:
    """Accept a version: from now on a run of its chore replays it (the version accepted before retires)."""
    from taskcrew.approvals.audit import AuditLogError
    from taskcrew.approvals.identity import Identity as Person
    from taskcrew.approvals.identity import IdentityError, cli_identity, os_user
    from taskcrew.approvals.rules import RiskRulesError
    from taskcrew.approvals.signing import KeyError_
    from taskcrew.routines.store import RoutineError, RoutineRefused, fingerprint

    store = _store()
    try:
        if reviewed is None and not _terminal():
            raise _fail(
                "accept takes the fingerprint of the version you reviewed (the folder can change "
                "between your review and the acceptance)",
                f"read it with `taskcrew routines show {name}{f' -v {version}' if version else ''}`, then "
                "accept with the --fingerprint it prints",
            )
        try:
            who = cli_identity()  # the same proven identity as `taskcrew approvals`, never a typed name
        except IdentityError as exc:
            store.record_refusal("accept", name, version, Person(name=os_user(), proof="os_user"), str(exc))
            raise
        # who may accept: the authority's rule, as for approvals (judged again, with who wrote it, in accept)
        if refusal := store.person_refusal(who, "routine's reviewer"):
            store.record_refusal("accept", name, version, who, refusal)
            raise RoutineRefused(refusal)
        by = f"{who.proof}:{who.name}"
        if reviewed is None:  # at a terminal: show the version, accept exactly what was shown
            routine = store.named(name, version)
            reviewed = fingerprint(routine)
            _say(*_shown(store, routine))
            if not typer.confirm(
                f"Accept {plain(routine.name)} v{routine.version} exactly as shown ({reviewed})?"
            ):
                typer.echo("nothing accepted")
                raise typer.Exit(1)
            version = routine.version
        routine = store.accept(name, version, who, reviewed=reviewed)
    except RoutineRefused as exc:
        typer.echo(f"refused: {plain(exc)}", err=True)
        raise typer.Exit(1) from exc
    except (RoutineError, IdentityError, KeyError_, RiskRulesError, AuditLogError) as exc:
        raise _fail(str(exc)) from exc
    typer.echo(
        f"accepted {plain(routine.name)} v{routine.version} (by {plain(by)}): runs of `taskcrew "
        f"{plain(routine.name)}` replay it; "
        f"fingerprint {fingerprint(routine)}"
    )


@routines_app.command("retire")
def routines_retire(name: NameArg, version: VersionOpt = None) -> None:
    """Retire a version (default: the accepted one): its chore goes back to the agent."""
    from taskcrew.approvals.audit import AuditLogError
    from taskcrew.approvals.identity import Identity as Person
    from taskcrew.approvals.identity import IdentityError, cli_identity, os_user
    from taskcrew.approvals.signing import KeyError_
    from taskcrew.routines.store import RoutineError, RoutineRefused

    store = _store()
    try:
        try:
            who = cli_identity()  # the same proven identity as `routines accept`
        except IdentityError as exc:
            store.record_refusal("retire", name, version, Person(name=os_user(), proof="os_user"), str(exc))
            raise
        routine = store.retire(name, version, who)
    except RoutineRefused as exc:
        typer.echo(f"refused: {plain(exc)}", err=True)
        raise typer.Exit(1) from exc
    except (RoutineError, IdentityError, KeyError_, AuditLogError) as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"retired {plain(routine.name)} v{routine.version} (by {plain(f'{who.proof}:{who.name}')})")
