"""`--submit`: a recipe's runs as durable jobs on the job queue (taskcrew.jobs), one per item of its
list parameter. Each job records the expanded task, its run options, and the recipe's criteria and
read-only flag, which the worker enforces as `taskcrew run` does."""

from __future__ import annotations

import secrets
from typing import Any

import typer

from taskcrew.recipes.models import Expansion, Recipe
from taskcrew.terminal import plain

OPTION_FIELDS = {  # run option -> JobOptions field
    "model": "worker_model",
    "verifier_model": "verifier_model",
    "allow_same_verifier": "allow_same_verifier",
    "auto_approve": "auto_approve",
    "chaos": "chaos",
    "max_steps": "max_steps",
    "criterion": "criteria",
    "read_only": "read_only",
}


def job_options(exp: Expansion, options: dict[str, Any]) -> dict[str, Any]:
    """The JobOptions values for one expansion: the run options given, plus the recipe's criteria
    and read-only flag (enforced by the worker's policy gate, as `taskcrew run` does)."""
    values = dict(options)
    values["criterion"] = [*exp.criteria, *(options.get("criterion") or [])]
    values["read_only"] = exp.read_only or bool(options.get("read_only"))
    return {field: values[name] for name, field in OPTION_FIELDS.items() if values.get(name) is not None}


def submit_expansions(recipe: Recipe, expansions: list[Expansion], options: dict[str, Any]) -> int:
    """Queue one job per expansion; print their ids. Exit code 0, or 2 when the store cannot be used."""
    from taskcrew.config import load_dotenv_once
    from taskcrew.jobs import InvalidChange, JobOptions, Jobs, JobStoreError

    load_dotenv_once()
    listed = next((p.name for p in recipe.params if p.many), None)
    try:
        jobs = Jobs.open()
    except JobStoreError as exc:
        typer.echo(f"error: {plain(exc)}", err=True)
        return 2
    from taskcrew.approvals.identity import IdentityError, cli_identity

    try:
        who = cli_identity()  # as `taskcrew submit` records it: a proven identity, never a typed name
    except IdentityError as exc:
        typer.echo(f"error: {plain(exc)}", err=True)
        return 2
    from taskcrew.approvals.authority import Authority

    if refusal := Authority(None).submitter_refusal(who):
        typer.echo(f"error: {plain(refusal)}", err=True)
        return 2
    batch = f"batch-{recipe.name}-{secrets.token_hex(4)}" if len(expansions) > 1 else None
    queued = 0
    try:
        for exp in expansions:
            job = jobs.submit(
                exp.task,
                submitted_by=who.name,
                submitted_proof=who.proof,
                submitted_credential=who.credential,
                options=JobOptions(**job_options(exp, options)),
                parent_id=batch,
                item=exp.values.get(listed) if listed else None,
            )
            item = f" [{plain(job.item)}]" if job.item else ""  # the item and task: a person's value,
            typer.echo(f"{job.id}{item} queued: {plain(exp.task)}")  # a recipe file's words
            queued += 1
    except InvalidChange as exc:  # a task the store refuses: a control character in the recipe's words
        typer.echo(f"error: {plain(exc)}", err=True)
        if queued:
            typer.echo("hint: the jobs listed above were queued; `taskcrew jobs list` shows them", err=True)
        return 2
    except JobStoreError as exc:
        typer.echo(f"error: {plain(exc)}", err=True)
        typer.echo("hint: the jobs listed above were queued; `taskcrew jobs list` shows them", err=True)
        return 2
    finally:
        jobs.close()
    typer.echo(
        f"{len(expansions)} job(s) queued; a worker runs them (`taskcrew worker`, `taskcrew jobs list`)."
    )
    return 0
