"""`--submit`: a recipe's runs as durable jobs on the job queue (taskcrew.jobs), one per item of its
list parameter. Each job records the expanded task, its run options, and the recipe's criteria and
read-only flag when the job store carries them (otherwise they are written into the task text, so
the planner still sees them)."""

from __future__ import annotations

import getpass
import os
import secrets
from typing import Any

import typer

from taskcrew.recipes.models import Expansion, Recipe

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


def job_request(exp: Expansion, options: dict[str, Any], fields: set[str]) -> tuple[str, dict[str, Any]]:
    """The task text and JobOptions values for one expansion; what the store cannot carry as an
    option (criteria, read-only) goes into the task text instead of being lost."""
    values = dict(options)
    values["criterion"] = [*exp.criteria, *(options.get("criterion") or [])]
    values["read_only"] = exp.read_only or bool(options.get("read_only"))
    task = exp.task
    if values["criterion"] and "criteria" not in fields:
        task += "\nSuccess criteria: " + "; ".join(values["criterion"])
    if values["read_only"] and "read_only" not in fields:
        task += "\nRead only: do not change anything in any system."
    chosen = {
        field: values[name]
        for name, field in OPTION_FIELDS.items()
        if field in fields and values.get(name) is not None
    }
    return task, chosen


def submit_expansions(recipe: Recipe, expansions: list[Expansion], options: dict[str, Any]) -> int:
    """Queue one job per expansion; print their ids. Exit code 0, or 2 when the store cannot be used."""
    from taskcrew.config import load_dotenv_once
    from taskcrew.jobs import JobOptions, Jobs, JobStoreError

    load_dotenv_once()
    listed = next((p.name for p in recipe.params if p.many), None)
    try:
        jobs = Jobs.open()
    except JobStoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    fields = set(JobOptions.model_fields)
    by = os.environ.get("TASKCREW_USER") or getpass.getuser()  # as `taskcrew submit` records it
    batch = f"batch-{recipe.name}-{secrets.token_hex(4)}" if len(expansions) > 1 else None
    try:
        for exp in expansions:
            task, chosen = job_request(exp, options, fields)
            job = jobs.submit(
                task,
                submitted_by=by,
                options=JobOptions(**chosen),
                parent_id=batch,
                item=exp.values.get(listed) if listed else None,
            )
            item = f" [{job.item}]" if job.item else ""
            typer.echo(f"{job.id}{item} queued: {exp.task}")
    except JobStoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        typer.echo("hint: the jobs listed above were queued; `taskcrew jobs list` shows them", err=True)
        return 2
    finally:
        jobs.close()
    typer.echo(
        f"{len(expansions)} job(s) queued; a worker runs them (`taskcrew worker`, `taskcrew jobs list`)."
    )
    return 0
