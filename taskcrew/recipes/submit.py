"""`--submit`: a recipe's runs as durable jobs, one per item of its list parameter.

Needs the job store (taskcrew.jobs, issue 15); until it is there, says so and submits nothing.
"""

from __future__ import annotations

from typing import Any

import typer

from taskcrew.recipes.models import Expansion, Recipe


def submit_expansions(recipe: Recipe, expansions: list[Expansion], options: dict[str, Any]) -> int:
    try:
        import taskcrew.jobs  # noqa: F401
    except ImportError:
        typer.echo("error: --submit needs durable jobs, which this installation does not have", err=True)
        typer.echo(f"hint: run it in the foreground: taskcrew {recipe.name} (without --submit)", err=True)
        return 2
    raise NotImplementedError
