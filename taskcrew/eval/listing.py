"""`taskcrew eval --list`: the eval's cases (those a --cases selection picks), one line each."""

from __future__ import annotations

import typer

from taskcrew.eval.models import CASES_DIR, load_cases, no_case_matches


def print_cases(selection: str | None) -> int:
    """Print the selected cases; exit code 2 when the selection matches none (and how to list them)."""
    chosen = load_cases(CASES_DIR, selection)
    if not chosen:
        typer.echo(f"error: {no_case_matches(selection, CASES_DIR)}", err=True)
        return 2
    width = max(len(c.id) for c in chosen)
    for case in chosen:
        typer.echo(f"{case.id:<{width}}  {case.task.strip().splitlines()[0][:100]}")
    typer.echo(f"{len(chosen)} case(s)")
    return 0
