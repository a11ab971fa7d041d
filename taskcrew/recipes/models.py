"""A recipe, validated on load: its parameters, the task and criteria it expands to, whether it writes.

    name: check-invoice
    summary: Check whether a vendor's invoice is already entered in the payables system.
    changes_data: false
    params:
      - {name: vendor, type: vendor, help: The vendor, as its invoices name it.}
      - {name: invoice, type: text, required: false, phrase: "invoice {value}",
         default: the newest invoice, help: An invoice number (default the newest).}
    task: Is {invoice} from {vendor} already entered in our payables system? Do not change anything.
    criteria:
      - The answer says whether {invoice} from {vendor} is entered, naming the bill if it is

``expand`` turns the values a person typed into one ``Expansion`` per item of the recipe's list
parameter (a parameter with ``many: true``), or one when it has none.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from taskcrew.recipes.params import METAVARS, ParamType, ParamValueError, check_value

NAME = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
PARAM_NAME = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"
MAX_ITEMS = 50
# The options every recipe command shares with `taskcrew run` (and its own): no parameter may take them.
RESERVED_PARAMS = frozenset(
    {
        "task",
        "model",
        "verifier_model",
        "allow_same_verifier",
        "auto_approve",
        "chaos",
        "no_chaos",
        "headed",
        "slow_mo",
        "max_steps",
        "erp_url",
        "intranet_url",
        "sandbox",
        "runs_dir",
        "web_search",
        "criterion",
        "read_only",
        "submit",
        "dry_run",
        "help",
    }
)


class RecipeInputError(ValueError):
    """Values a recipe cannot be run with; the message is one line that says what to pass."""


def _fields(template: str) -> list[str]:
    """The placeholders of a template; raises ValueError on anything but plain ``{name}``."""
    names = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"{template!r}: {exc} (write a literal brace as {{{{ or }}}})") from exc
    for _text, field, spec, conversion in parsed:
        if field is None:
            continue
        if not re.match(PARAM_NAME, field) or spec or conversion:
            raise ValueError(f"{template!r}: placeholder {{{field}}} must be a plain {{parameter_name}}")
        names.append(field)
    return names


class Param(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=PARAM_NAME, max_length=30)
    type: ParamType = "text"
    help: str = Field(min_length=3, max_length=300)
    required: bool = True
    default: str | None = Field(default=None, description="the text used when no value is given")
    choices: list[str] = Field(default_factory=list, description="allowed values (choice, currency)")
    many: bool = Field(default=False, description="a list: the recipe runs once per item")
    phrase: str | None = Field(
        default=None, description="how a given value reads in the task, e.g. 'invoice {value}'"
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        if name in RESERVED_PARAMS:
            raise ValueError(f"parameter name {name!r} is taken by a run option; choose another name")
        return name

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.type == "choice" and len(self.choices) < 2:
            raise ValueError(f"choice parameter {self.name!r} needs at least two choices")
        if self.choices and self.type not in ("choice", "currency"):
            raise ValueError(f"parameter {self.name!r}: choices only apply to choice and currency parameters")
        if self.choices:
            self.choices = [
                check_value("currency", c) if self.type == "currency" else c for c in self.choices
            ]
        if self.default is not None:
            self.required = False
        if self.phrase is not None and _fields(self.phrase) != ["value"]:
            raise ValueError(f"parameter {self.name!r}: phrase must contain {{value}} once, and nothing else")
        return self

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def metavar(self) -> str:
        if self.type == "choice":
            return "[" + "|".join(self.choices) + "]"
        return METAVARS[self.type]

    def check(self, raw: str) -> str:
        try:
            return check_value(self.type, raw, self.choices)
        except ParamValueError as exc:
            raise RecipeInputError(f"{self.option}: {exc}") from exc

    def reads(self, value: str | None) -> str:
        """How the parameter reads in the task: the value (through its phrase), else the default."""
        if value is None:
            return self.default or ""
        return self.phrase.format(value=value) if self.phrase else value


class Expansion(BaseModel):
    """One run of a recipe: the task text and the criteria the planner must keep."""

    recipe: str
    values: dict[str, str]
    task: str
    criteria: list[str]
    read_only: bool


class Recipe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME, max_length=40)
    summary: str = Field(min_length=3, max_length=160, description="the first line of the command's help")
    help: str = Field(default="", max_length=2000)
    params: list[Param] = Field(default_factory=list, max_length=12)
    task: str = Field(min_length=10, max_length=2000)
    criteria: list[str] = Field(default_factory=list, max_length=4)
    changes_data: bool
    source: Path | None = Field(default=None, exclude=True, description="the file it was loaded from")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        names = [p.name for p in self.params]
        if len(names) != len(set(names)):
            raise ValueError(f"parameter names repeat: {', '.join(sorted(names))}")
        if sum(p.many for p in self.params) > 1:
            raise ValueError("at most one parameter can be a list (many: true): the recipe fans out over it")
        used = set(_fields(self.task))
        for criterion in self.criteria:
            used |= set(_fields(criterion))
        unknown = used - set(names)
        if unknown:
            raise ValueError(f"the task or criteria use undeclared parameters: {', '.join(sorted(unknown))}")
        unused = [p.name for p in self.params if p.name not in _fields(self.task)]
        if unused:
            raise ValueError(f"parameters not used in the task text: {', '.join(unused)}")
        return self

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def expand(self, given: dict[str, str | list[str] | None]) -> list[Expansion]:
        """Check the values a person gave (raw text by parameter name) and write the task(s).

        Raises RecipeInputError with one line naming every problem and what to pass.
        """
        problems: list[str] = []
        unknown = set(given) - {p.name for p in self.params}
        if unknown:
            problems.append(f"{self.name} has no parameter {', '.join(sorted(unknown))}")
        values: dict[str, list[str] | str | None] = {}
        for param in self.params:
            raw = given.get(param.name)
            items = [] if raw is None else [raw] if isinstance(raw, str) else list(raw)
            if not items:
                if param.required:
                    problems.append(f"{param.option} is required: {param.help.rstrip('.')}")
                values[param.name] = None
                continue
            if len(items) > 1 and not param.many:
                problems.append(f"{param.option} takes one value, got {len(items)}")
                continue
            if len(items) > MAX_ITEMS:
                problems.append(f"{param.option}: at most {MAX_ITEMS} items, got {len(items)}")
                continue
            checked = []
            for item in items:
                try:
                    checked.append(param.check(item))
                except RecipeInputError as exc:
                    problems.append(str(exc))
            values[param.name] = checked if param.many else checked[0] if checked else None
        if problems:
            raise RecipeInputError("; ".join(problems))
        listed = next((p for p in self.params if p.many and values[p.name]), None)
        many = values[listed.name] if listed else None
        rounds: list[str | None] = list(dict.fromkeys(many)) if isinstance(many, list) else [None]
        out = []
        for one in rounds:
            chosen = {
                p.name: (one if p is listed else values[p.name]) for p in self.params
            }  # one value per parameter
            out.append(self._render(chosen))
        return out

    def _render(self, chosen: dict[str, str | list[str] | None]) -> Expansion:
        words = {p.name: p.reads(_one(chosen[p.name])) for p in self.params}
        return Expansion(
            recipe=self.name,
            values={k: v for k, v in ((k, _one(v)) for k, v in chosen.items()) if v is not None},
            task=_tidy(self.task.format_map(words)),
            criteria=[_tidy(c.format_map(words)) for c in self.criteria],
            read_only=not self.changes_data,
        )


def _one(value: str | list[str] | None) -> str | None:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _tidy(text: str) -> str:
    """Collapse the spaces an empty optional parameter leaves behind."""
    text = " ".join(text.split())
    return re.sub(r"\s+([,.;:?!)])", r"\1", text)
