"""Find and load recipe files: the company's folder beside its procedures, folders named in
TASKCREW_RECIPES, and the recipes added with `taskcrew recipes add` (kept under TASKCREW_HOME).

A file that cannot be used is reported (file, what is wrong, what to do) and skipped; it never
hides the other recipes, and a recipe never replaces a built-in command or an earlier recipe.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from taskcrew.homes import RECIPES_FOLDER as FOLDER
from taskcrew.homes import recipe_folders
from taskcrew.recipes.index import SUFFIXES
from taskcrew.recipes.models import Recipe
from taskcrew.yamlfile import load_yaml

__all__ = [
    "FOLDER",
    "SUFFIXES",
    "Library",
    "Problem",
    "RecipeFileError",
    "load_file",
    "load_library",
    "recipe_folders",
]
MAX_FILE_BYTES = 64_000


class RecipeFileError(ValueError):
    """A recipe file that cannot be loaded; the message names the file and what to fix."""


class Problem(BaseModel):
    path: Path
    message: str


class Library(BaseModel):
    recipes: dict[str, Recipe]
    problems: list[Problem]

    def get(self, name: str) -> Recipe | None:
        return self.recipes.get(name)


def describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(x) for x in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def load_file(path: Path) -> Recipe:
    """One recipe from one YAML file; raises RecipeFileError saying what is wrong."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise RecipeFileError(
                f"{path}: larger than {MAX_FILE_BYTES // 1000} kB; a recipe is a short file"
            )
        data = load_yaml(path.read_text(encoding="utf-8"))  # a key written twice is refused
    except OSError as exc:
        raise RecipeFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise RecipeFileError(f"{path}: not UTF-8 text") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise RecipeFileError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise RecipeFileError(f"{path}: expected a mapping with name, summary, params, task, changes_data")
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise RecipeFileError(f"{path}: {describe(exc)}") from exc
    return recipe.model_copy(update={"source": path})


def files_in(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and not p.name.startswith("."))


def load_library(folders: list[Path], reserved: set[str] | frozenset[str] = frozenset()) -> Library:
    """Every usable recipe in ``folders`` (earlier folders win); ``reserved``: built-in command names."""
    recipes: dict[str, Recipe] = {}
    problems: list[Problem] = []
    for folder in folders:
        for path in files_in(folder):
            try:
                recipe = load_file(path)
            except RecipeFileError as exc:
                problems.append(Problem(path=path, message=str(exc).removeprefix(f"{path}: ")))
                continue
            if recipe.name in reserved:
                problems.append(
                    Problem(
                        path=path,
                        message=f"{recipe.name!r} would shadow the built-in command `taskcrew {recipe.name}`; "
                        "rename the recipe",
                    )
                )
            elif recipe.name in recipes:
                problems.append(
                    Problem(
                        path=path,
                        message=f"{recipe.name!r} is already defined by {recipes[recipe.name].source}; "
                        "rename one of them",
                    )
                )
            else:
                recipes[recipe.name] = recipe
    return Library(recipes=recipes, problems=problems)


class Added(BaseModel):
    name: str
    path: Path
    replaced: bool


def add_recipes(
    paths: list[Path], target: Path, taken: dict[str, Path], reserved: set[str]
) -> tuple[list[Added], list[Problem]]:
    """Validate recipe files (or folders of them) and copy the good ones into ``target``.

    ``taken``: names defined elsewhere (not in ``target``) that an added recipe may not reuse.
    Adding a file again replaces the copy (idempotent). A bad file is reported and not copied.
    """
    added: list[Added] = []
    problems: list[Problem] = []
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = files_in(path)
            if not found:
                problems.append(Problem(path=path, message="no .yaml recipe files in this folder"))
            files += found
        elif path.is_file():
            files.append(path)
        else:
            problems.append(Problem(path=path, message="no such file or folder"))
    for path in files:
        try:
            recipe = load_file(path)
        except RecipeFileError as exc:
            problems.append(Problem(path=path, message=str(exc).removeprefix(f"{path}: ")))
            continue
        if recipe.name in reserved:
            problems.append(Problem(path=path, message=f"{recipe.name!r} would shadow a built-in command"))
            continue
        if recipe.name in taken:
            problems.append(
                Problem(path=path, message=f"{recipe.name!r} is already defined by {taken[recipe.name]}")
            )
            continue
        target.mkdir(parents=True, exist_ok=True)
        copy = target / f"{recipe.name}.yaml"
        replaced = copy.exists()
        if path.resolve() != copy.resolve():
            for old in files_in(target):  # the same recipe under another file name
                if old != copy and _name_of(old) == recipe.name:
                    old.unlink()
                    replaced = True
            shutil.copyfile(path, copy)
        added.append(Added(name=recipe.name, path=copy, replaced=replaced))
    return added, problems


def _name_of(path: Path) -> str | None:
    try:
        return load_file(path).name
    except RecipeFileError:
        return None
