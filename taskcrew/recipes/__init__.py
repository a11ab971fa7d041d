"""Recipes: the chores a team repeats, as data (YAML validated into pydantic), each a named CLI command.

A recipe names a chore, its typed parameters, the task text it expands to, the success criteria it
adds to the planner's, and whether it changes data. It only produces a task and criteria: the crew
never learns what a recipe is about. Nothing in this package imports crewAI, and importing the
package loads nothing (the names below are imported on first use: ``taskcrew --help`` stays fast).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskcrew.recipes.loader import Library, RecipeFileError, load_file, load_library, recipe_folders
    from taskcrew.recipes.models import Expansion, Param, Recipe, RecipeInputError

_WHERE = {
    "Library": "taskcrew.recipes.loader",
    "RecipeFileError": "taskcrew.recipes.loader",
    "load_file": "taskcrew.recipes.loader",
    "load_library": "taskcrew.recipes.loader",
    "recipe_folders": "taskcrew.recipes.loader",
    "Expansion": "taskcrew.recipes.models",
    "Param": "taskcrew.recipes.models",
    "Recipe": "taskcrew.recipes.models",
    "RecipeInputError": "taskcrew.recipes.models",
}

__all__ = [
    "Expansion",
    "Library",
    "Param",
    "Recipe",
    "RecipeFileError",
    "RecipeInputError",
    "load_file",
    "load_library",
    "recipe_folders",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'taskcrew.recipes' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)
