"""`taskcrew console`: serve the web console; `taskcrew console add-user NAME`: add a login (or
reset its password); `taskcrew console remove-user NAME`: take it away.

Both use the users file every process reads (TASKCREW_CONSOLE_USERS, else <console dir>/users.yaml):
the console, the workers and the CLI must agree on who may approve and whether two people must."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

USERS_ENV = "TASKCREW_CONSOLE_USERS"


def _no_users_option(users: Path | None) -> None:
    """``--users`` is gone: the users file decides who may approve (and whether two people must),
    so it is one setting every process reads — the console, the workers and the CLI — never one
    command's option that the others do not see."""
    if users is None:
        return
    typer.echo(
        f"error: --users is no longer an option: the users file is one setting for the console, the "
        f"workers and the CLI alike; set {USERS_ENV}={users} in the environment of all of them (or use "
        "the default, <console dir>/users.yaml) and leave --users out",
        err=True,
    )
    raise typer.Exit(2)


console_app = typer.Typer(
    help="The web console for approvers and auditors (approvals, jobs, runs, eval).",
    invoke_without_command=True,
)


@console_app.callback()
def console_serve(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8900,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="Address to bind (default loopback; anything else needs HTTPS in front)."
        ),
    ] = "127.0.0.1",
    runs_dir: Annotated[
        list[Path] | None,
        typer.Option("--runs-dir", help="Run folders to show (default: ./runs; repeatable)."),
    ] = None,
    eval_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--eval-dir", help="Folders with `taskcrew eval` results.json (default: ./eval-results)."
        ),
    ] = None,
    users: Annotated[Path | None, typer.Option("--users", hidden=True)] = None,
    jobs_db: Annotated[
        str | None, typer.Option("--jobs-db", help="Job store URL (default: TASKCREW_JOBS_DB).")
    ] = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from taskcrew.approvals.rules import RiskRulesError
    from taskcrew.console.auth import ConsoleUserError
    from taskcrew.console.server import serve
    from taskcrew.console.settings import ConsoleSettings
    from taskcrew.jobs import JobStoreError

    if jobs_db is not None:
        from taskcrew.jobs.store import check_url

        try:
            check_url(jobs_db)
        except JobStoreError as exc:
            typer.echo(f"error: --jobs-db: {exc}", err=True)
            raise typer.Exit(2) from exc
    _no_users_option(users)
    settings = ConsoleSettings.from_env(
        host=host, port=port, runs_dirs=runs_dir or None, eval_dirs=eval_dir or None, jobs_url=jobs_db
    )
    if os.environ.get(USERS_ENV) and not settings.users_file.is_file():  # named, so meant to exist
        typer.echo(
            f"error: {USERS_ENV}={settings.users_file}: no such file; create it with `taskcrew console "
            f"add-user NAME` (it writes the file {USERS_ENV} names), or unset {USERS_ENV}",
            err=True,
        )
        raise typer.Exit(2)
    try:
        serve(settings, say=typer.echo)
    except (ConsoleUserError, RiskRulesError, JobStoreError, OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except KeyboardInterrupt:
        pass


@console_app.command("add-user")
def console_add_user(
    name: Annotated[str, typer.Argument(help="Login name (letters, digits, . _ @ -).")],
    users: Annotated[Path | None, typer.Option("--users", hidden=True)] = None,
) -> None:
    """Add (or reset) a user of the console and the CLI; the password is asked twice and stored as a
    scrypt hash in the users file (TASKCREW_CONSOLE_USERS, else <console dir>/users.yaml)."""
    import re

    from pydantic import ValidationError

    from taskcrew.console.auth import NAME_PATTERN, ConsoleUserError, add_user
    from taskcrew.console.settings import ConsoleSettings

    _no_users_option(users)
    if not re.fullmatch(NAME_PATTERN, name):
        typer.echo(
            f"error: user name {name!r}: use 1-64 ASCII letters, digits or . _ @ - (e.g. elodie)", err=True
        )
        raise typer.Exit(2)
    path = ConsoleSettings.from_env().users_file
    password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        add_user(path, name, password)
    except (ValueError, ValidationError, ConsoleUserError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"user {name} saved in {path}")


@console_app.command("remove-user")
def console_remove_user(name: Annotated[str, typer.Argument(help="The user's login name, exactly.")]) -> None:
    """Remove a user of the console and the CLI from the users file (TASKCREW_CONSOLE_USERS, else
    <console dir>/users.yaml): her sessions, tokens, first approvals and privileges count for nothing
    from then on. Removing the last one leaves a file that lists nobody: every login and token counts
    for nothing (to lock everyone out; the console offers its start-up token after a restart)."""
    from taskcrew.approvals.identity import NO_USERS
    from taskcrew.console.auth import ConsoleUserError, load_users, remove_user
    from taskcrew.console.settings import ConsoleSettings

    path = ConsoleSettings.from_env().users_file
    try:
        remove_user(path, name)
        left = [u.name for u in load_users(path)]
    except ConsoleUserError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"user {name} removed from {path}; {len(left)} left: {', '.join(left) or 'nobody'}")
    if not left:
        typer.echo(NO_USERS)
    elif len(left) == 1:
        typer.echo(
            "with one user, two_person: auto turns the two-person rule off: one approver suffices, also "
            "for items already waiting"
        )
