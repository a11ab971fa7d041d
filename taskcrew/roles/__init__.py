"""The crew's role and task texts: YAML data (crewAI's agents.yaml / tasks.yaml), validated on load."""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, model_validator

RoleName = Literal["planner", "file_reader", "browser_operator", "verifier", "reflector"]
TaskName = Literal["plan", "work_step", "verify", "reflect"]
ROLES_DIR = Path(__file__).resolve().parent

# The placeholders each task text may use; the loader refuses texts that use others.
TASK_FIELDS: dict[str, set[str]] = {
    "plan": {"task", "procedures", "facts", "environment", "replan_context"},
    "work_step": {
        "step_number",
        "step_count",
        "goal",
        "criteria",
        "plan",
        "results",
        "notes",
        "feedback",
        "title",
        "instructions",
        "done_when",
        "environment",
    },
    "verify": {"claim", "task", "criteria", "worker_summary", "environment", "procedures", "changes"},
    "reflect": {"task", "outcome", "trail", "known_facts"},
}


class AgentSpec(BaseModel):
    role: str = Field(min_length=2)
    goal: str = Field(min_length=10)
    backstory: str = Field(min_length=10)
    max_iter: int = Field(ge=1, le=50)


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


class TaskSpec(BaseModel):
    description: str = Field(min_length=10)
    expected_output: str = Field(min_length=5)


class Roles(BaseModel):
    agents: dict[RoleName, AgentSpec]
    tasks: dict[TaskName, TaskSpec]

    @model_validator(mode="after")
    def _complete(self) -> Roles:
        missing_agents = set(RoleName.__args__) - set(self.agents)  # type: ignore[attr-defined]
        missing_tasks = set(TaskName.__args__) - set(self.tasks)  # type: ignore[attr-defined]
        if missing_agents or missing_tasks:
            raise ValueError(f"missing agents {sorted(missing_agents)} / tasks {sorted(missing_tasks)}")
        for name, spec in self.tasks.items():
            used = placeholders(spec.description) | placeholders(spec.expected_output)
            unknown = used - TASK_FIELDS[name]
            if unknown:
                raise ValueError(f"task {name!r} uses unknown placeholders {sorted(unknown)}")
        return self

    def render(self, which: TaskName, /, **values: object) -> tuple[str, str]:
        """(description, expected_output) of task ``which`` with the placeholders filled in."""
        spec = self.tasks[which]
        missing = (placeholders(spec.description) | placeholders(spec.expected_output)) - set(values)
        if missing:
            raise KeyError(f"task {which!r} needs values for {sorted(missing)}")
        text = {k: str(v) for k, v in values.items()}
        return spec.description.format_map(text), spec.expected_output.format_map(text)


@lru_cache(maxsize=4)
def load_roles(directory: Path = ROLES_DIR) -> Roles:
    agents = yaml.safe_load((directory / "agents.yaml").read_text(encoding="utf-8"))
    tasks = yaml.safe_load((directory / "tasks.yaml").read_text(encoding="utf-8"))
    return Roles.model_validate({"agents": agents, "tasks": tasks})
