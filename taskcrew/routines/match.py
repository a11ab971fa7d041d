"""Which recipe a task is, and with which values: the task text read back through the recipe's
template (the only place a run's chore and parameters are recognised)."""

from __future__ import annotations

import re
from pathlib import Path

from taskcrew.recipes.models import Recipe


class Match:
    def __init__(self, recipe: Recipe, values: dict[str, str], criteria: list[str] | None = None) -> None:
        self.recipe = recipe
        self.values = values
        self.criteria = criteria or []  # the recipe's success criteria, expanded with the values


def _squash(text: str) -> str:
    return " ".join(text.split())


def _pattern(recipe: Recipe) -> re.Pattern[str]:
    out = []
    for part in re.split(r"(\{[a-z][a-z0-9_]*\})", _squash(recipe.task)):
        if part.startswith("{") and part.endswith("}"):
            out.append(f"(?P<{part[1:-1]}>.*?)")
        else:
            out.append(r"\s*".join(re.escape(w) for w in part.split(" ")) if part.strip() else r"\s*")
    return re.compile("".join(out), re.DOTALL)


def match_task(task: str, recipes: list[Recipe]) -> Match | None:
    """The recipe whose task text ``task`` is, with its parameter values (an optional parameter left
    out reads as its default and is not a value); None when no recipe reads it back exactly."""
    text = _squash(task)
    for recipe in recipes:
        found = _pattern(recipe).fullmatch(text)
        if found is None:
            continue
        values: dict[str, str] = {}
        for param in recipe.params:
            raw = (found.group(param.name) or "").strip()
            if not raw or raw == param.default:
                continue
            if param.phrase:
                head, _, tail = param.phrase.partition("{value}")
                if raw.startswith(head) and raw.endswith(tail):
                    raw = raw[len(head) : len(raw) - len(tail) if tail else None]
            values[param.name] = raw.strip()
        try:
            expansions = recipe.expand({k: v for k, v in values.items()})
        except ValueError:
            continue
        if expansions and _squash(expansions[0].task) == text:
            return Match(recipe, expansions[0].values, expansions[0].criteria)
    return None


def recipes_for(sandbox: Path) -> list[Recipe]:
    from taskcrew.config import Paths
    from taskcrew.recipes.loader import load_library, recipe_folders

    return list(load_library(recipe_folders(sandbox, Paths.from_env().home)).recipes.values())
