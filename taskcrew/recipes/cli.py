"""`taskcrew recipes list|show|add`: what recipes exist, what one does, and adding a company's own."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from taskcrew.terminal import plain

recipes_app = typer.Typer(
    help="Recipes: the company's repeated chores as commands (`taskcrew <recipe> --help`).",
    no_args_is_help=True,
)


def _builtin() -> set[str]:
    """The built-in command names of the running CLI (its top-level group, whatever imports this)."""
    from typer._click.globals import get_current_context

    from taskcrew.recipes.commands import RecipeGroup

    ctx = get_current_context(silent=True)
    root = ctx.find_root().command if ctx is not None else None
    return root.builtin() if isinstance(root, RecipeGroup) else set()


@recipes_app.command("list")
def recipes_list() -> None:
    """List the recipes (name, what it does, whether it changes data, its file) and unusable files."""
    # every value below is a recipe file's words (or a file's name): printed through terminal.plain
    from taskcrew.recipes.commands import current_library

    library = current_library(_builtin())
    width = max((len(name) for name in library.recipes), default=0)
    for recipe in library.recipes.values():
        writes = "changes data" if recipe.changes_data else "read-only"
        typer.echo(f"{recipe.name:<{width}}  {plain(recipe.summary)} [{writes}]  ({plain(recipe.source)})")
    if not library.recipes:
        typer.echo("No recipes yet: add a folder of recipe files with `taskcrew recipes add <folder>`.")
    for problem in library.problems:
        typer.echo(f"skipped {plain(problem.path)}: {plain(problem.message, flat=True)}", err=True)


@recipes_app.command("show")
def recipes_show(
    name: Annotated[str, typer.Argument(help="The recipe's name, as `recipes list` shows it.")],
) -> None:
    """Show one recipe: its parameters, the task and criteria it expands to, and its file."""
    from taskcrew.recipes.commands import current_library

    library = current_library(_builtin())
    recipe = library.get(name)
    if recipe is None:
        known = ", ".join(sorted(library.recipes)) or "none"
        bad = [p for p in library.problems if p.path.stem == name]
        typer.echo(f"error: no recipe named {plain(repr(name))} (recipes: {known})", err=True)
        for problem in bad:
            typer.echo(
                f"hint: {plain(problem.path)} is skipped: {plain(problem.message, flat=True)}", err=True
            )
        raise typer.Exit(2)
    lines = [f"{recipe.name}: {plain(recipe.summary)}", f"file: {plain(recipe.source)}"]
    lines.append(
        f"changes data: {'yes (asks before each change)' if recipe.changes_data else 'no (read-only)'}"
    )
    lines.append("parameters:")
    for p in recipe.params:
        flags = ["required" if p.required else f"default: {plain(p.default)}" if p.default else "optional"]
        if p.many:
            flags.append("repeatable: one run per value")
        lines.append(
            f"  {p.option} {plain(p.metavar)} ({p.type}; {', '.join(flags)}): {plain(p.help, flat=True)}"
        )
    lines.append(f"task: {plain(recipe.task, flat=True)}")
    lines += [f"criterion: {plain(c, flat=True)}" for c in recipe.criteria]
    example = " ".join(f'{p.option} "…"' for p in recipe.params if p.required)
    lines.append(f"run: taskcrew {recipe.name} {example}".rstrip())
    typer.echo("\n".join(lines))


@recipes_app.command("add")
def recipes_add(
    paths: Annotated[list[Path], typer.Argument(help="Recipe files (.yaml) or folders of them.")],
) -> None:
    """Check recipe files and add them to this machine's recipes (TASKCREW_HOME/recipes); adding a
    recipe again replaces it."""
    from taskcrew.config import Paths
    from taskcrew.recipes.commands import current_library
    from taskcrew.recipes.loader import FOLDER, add_recipes

    target = Paths.from_env().home / FOLDER
    library = current_library(_builtin())
    taken = {
        n: r.source for n, r in library.recipes.items() if r.source is not None and r.source.parent != target
    }
    added, problems = add_recipes(paths, target, taken, _builtin())
    for item in added:
        typer.echo(f"{'replaced' if item.replaced else 'added'} {item.name}: taskcrew {item.name} --help")
    for problem in problems:
        typer.echo(f"error: {plain(problem.path)}: {plain(problem.message, flat=True)}", err=True)
    if problems:
        typer.echo("hint: fix the file(s) and add them again; nothing else was changed", err=True)
        raise typer.Exit(2)
