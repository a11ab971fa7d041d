"""Each recipe as a real command: ``taskcrew <recipe> --param ... [run options]``.

``RecipeGroup`` is the CLI's top-level group: it lists the built-in commands, then the recipes found
at start-up (YAML and pydantic only: no crewAI, so ``--help`` stays fast). A recipe's command takes
its typed parameters plus exactly the options of ``taskcrew run`` (taken from that command's own
signature, so they never drift apart); it checks every value first (a bad one is a one-line error,
exit 2, before anything starts), then runs ``taskcrew run`` with the task and criteria it expands to,
once per item of a list parameter — or submits one job per item with ``--submit``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer import _click as click  # typer 0.29 vendors click: its types, not the package's
from typer.core import TyperCommand, TyperGroup

from taskcrew.homes import data_home, recipe_folders, sandbox_dir
from taskcrew.terminal import help_markup, help_text, plain

if TYPE_CHECKING:  # loading recipes (YAML, pydantic) waits until a recipe is really used
    from taskcrew.recipes.loader import Library
    from taskcrew.recipes.models import Expansion, Param, Recipe

PANEL = "Recipes (the company's chores)"
USAGE_ERROR = 2


def current_library(reserved: set[str] | frozenset[str] = frozenset()) -> Library:
    from taskcrew.recipes.loader import Problem, load_library

    folders = recipe_folders(sandbox_dir(), data_home())
    library = load_library(folders, reserved)
    for folder in folders[1:-1]:  # named in TASKCREW_RECIPES: a typo should not pass in silence
        if not folder.is_dir():
            message = "no such folder (named in TASKCREW_RECIPES)"
            library.problems.append(Problem(path=folder, message=message))
    return library


class RecipeGroup(TyperGroup):
    """The top-level group: built-in commands first, then one command per recipe.

    The list of recipes comes from a cached index (``recipes.index``), and each recipe's command is
    built only when it is used, so ``taskcrew --help`` reads no recipe file. ``run_command`` is the
    function whose options every recipe shares; the CLI sets it (the CLI depends on recipes, not back).
    """

    run_command: Callable[..., Any] | None = None
    _library: Library | None = None
    _index: dict[str, str] | None = None

    def builtin(self) -> set[str]:
        return set(self.commands)

    def library(self) -> Library:
        if self._library is None:
            self._library = current_library(self.builtin())
        return self._library

    def index(self) -> dict[str, str]:
        if self._index is None:
            from taskcrew.recipes.index import recipe_index

            folders = recipe_folders(sandbox_dir(), data_home())
            self._index = recipe_index(folders, self.builtin(), data_home())
        return self._index

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *sorted(self.index())]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        if cmd_name in self.index():
            return LazyRecipeCommand(cmd_name, self.index()[cmd_name], self._build)
        return self._build(cmd_name)  # not in the index (changed meanwhile): look in the files

    def _build(self, name: str) -> click.Command | None:
        recipe = self.library().get(name)
        if recipe is None or self.run_command is None:
            return None
        return build_command(recipe, self.run_command)


class RecipeCommand(TyperCommand):
    """A recipe's command. Its help holds a recipe file's words as ``terminal.help_text``, which
    Typer's help draws as text; a shell's completion reads help as rich markup instead, so there it
    gets them escaped (``terminal.help_markup``)."""

    def get_short_help_str(self, limit: int = 45) -> str:
        return help_markup(super().get_short_help_str(limit))

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        items = super().shell_complete(ctx, incomplete)
        for item in items:
            if item.help:
                item.help = help_markup(item.help)
        return items


class LazyRecipeCommand(RecipeCommand):
    """A recipe's name and summary for the help listing; the real command is built when it is
    parsed, invoked, completed or asked for its own help."""

    def __init__(self, name: str, summary: str, build: Callable[[str], click.Command | None]) -> None:
        summary = help_text(summary)  # a recipe file's words
        super().__init__(name, help=summary, short_help=summary, rich_help_panel=PANEL)
        self._build = build
        self._real: click.Command | None = None

    def real(self) -> click.Command:
        if self._real is None:
            self._real = self._build(self.name or "")
            if self._real is None:
                typer.echo(
                    f"error: recipe {plain(repr(self.name))} can no longer be loaded: `taskcrew recipes list`",
                    err=True,
                )
                raise typer.Exit(USAGE_ERROR)
        return self._real

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        return self.real().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        return self.real().invoke(ctx)

    def get_params(self, ctx: click.Context) -> list[Any]:
        return self.real().get_params(ctx)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        return self.real().shell_complete(ctx, incomplete)


def _param_option(param: Param) -> inspect.Parameter:
    """A parameter's option; its help, default and choices are a recipe file's words, shown in the
    help as written (``terminal.help_text``: no markup, no emoji code, no control character)."""
    words = param.help
    if param.required:
        words += " (required)"
    elif param.default:
        words += f" (default: {param.default})"
    if param.many:
        words += " Repeat for several: one run per value."
    complete = (
        (lambda incomplete: [c for c in param.choices if c.startswith(incomplete)]) if param.choices else None
    )
    option = typer.Option(
        param.option,
        help=help_text(words),
        metavar=plain(param.metavar),  # drawn as text (no markup), but the choices' controls are shown
        show_default=False,
        autocompletion=complete,
    )
    kind = list[str] | None if param.many else str | None
    return inspect.Parameter(
        param.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind, option]
    )


def _extra_options() -> list[inspect.Parameter]:
    submit = typer.Option(
        "--submit", help="Queue the run as a durable job (one per item) and return at once."
    )
    dry = typer.Option("--dry-run", help="Show the task(s) and criteria the recipe expands to; run nothing.")
    return [
        inspect.Parameter(
            "submit", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[bool, submit]
        ),
        inspect.Parameter(
            "dry_run", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[bool, dry]
        ),
    ]


def build_command(recipe: Recipe, run: Callable[..., Any]) -> click.Command:
    """The click command of one recipe: its parameters, then ``run``'s options (all but the task)."""
    from taskcrew.recipes.models import RecipeInputError

    shared = [p for name, p in inspect.signature(run, eval_str=True).parameters.items() if name != "task"]
    clash = {p.name for p in recipe.params} & {p.name for p in shared}
    if clash:  # the loader refuses these names; this guards a run option added later
        raise RecipeInputError(
            f"recipe {recipe.name}: parameter(s) {', '.join(sorted(clash))} clash with run options"
        )
    params = [_param_option(p) for p in recipe.params] + _extra_options()
    params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in shared]

    def callback(**values: Any) -> None:
        from taskcrew.recipes.models import RecipeInputError

        given = {p.name: values.pop(p.name) for p in recipe.params}
        submit, dry_run = values.pop("submit"), values.pop("dry_run")
        try:
            expansions = recipe.expand(given)
        except RecipeInputError as exc:
            typer.echo(f"error: {recipe.name}: {plain(exc)}", err=True)
            typer.echo(f"hint: `taskcrew {recipe.name} --help` lists its parameters", err=True)
            raise typer.Exit(USAGE_ERROR) from exc
        if dry_run:
            show_expansions(expansions, extra=values.get("criterion") or [])
            return
        if submit:
            from taskcrew.recipes.submit import submit_expansions

            raise typer.Exit(submit_expansions(recipe, expansions, values))
        raise typer.Exit(run_expansions(expansions, values, run))

    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__doc__ = help_text(recipe.summary + ("\n\n" + recipe.help.strip() if recipe.help else ""))
    callback.__name__ = recipe.name.replace("-", "_")
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    sub.command(recipe.name, rich_help_panel=PANEL, cls=RecipeCommand)(callback)
    command = typer.main.get_command(sub)
    command.name = recipe.name
    return command


def show_expansions(expansions: list[Expansion], extra: list[str]) -> None:
    for i, exp in enumerate(expansions, 1):
        head = f"[{i}/{len(expansions)}] " if len(expansions) > 1 else ""
        typer.echo(f"{head}task: {plain(exp.task)}")
        for criterion in [*exp.criteria, *extra]:
            typer.echo(f"  criterion: {plain(criterion)}")
        typer.echo(f"  read-only: {'yes' if exp.read_only else 'no'}")


def run_expansions(expansions: list[Expansion], options: dict[str, Any], run: Callable[..., Any]) -> int:
    """Run each expansion in turn through ``taskcrew run``; the exit code is the first failure's."""
    worst = 0
    for i, exp in enumerate(expansions, 1):
        if len(expansions) > 1:
            typer.echo(f"\n── run {i} of {len(expansions)}: {plain(exp.task)}")
        args = dict(options)
        args["criterion"] = [*exp.criteria, *(options.get("criterion") or [])]
        args["read_only"] = exp.read_only or bool(options.get("read_only"))
        try:
            run(task=exp.task, **args)
            code = 0
        except typer.Exit as done:
            code = done.exit_code
        if code == USAGE_ERROR:  # a setup problem applies to every item: stop here
            return code
        worst = worst or code
    return worst
