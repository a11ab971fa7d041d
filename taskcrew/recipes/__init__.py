"""Recipes: the chores a team repeats, as data (YAML validated into pydantic), each a named CLI command.

A recipe names a chore, its typed parameters, the task text it expands to, the success criteria it
adds to the planner's, and whether it changes data. It only produces a task and criteria: the crew
never learns what a recipe is about. Nothing in this package imports crewAI.
"""

from taskcrew.recipes.loader import Library, RecipeFileError, load_file, load_library, recipe_folders
from taskcrew.recipes.models import Expansion, Param, Recipe, RecipeInputError

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
