"""Run one role on one bounded CrewAI task and get a typed answer back.

The answer must be a JSON object for a pydantic model. A malformed answer is sent back to the
model with the parse error (crewAI guardrail) a bounded number of times; after that the step
fails with a clear error instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import BaseTool
from pydantic import BaseModel, ValidationError

from taskcrew.roles import AgentSpec

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class AgentTaskError(RuntimeError):
    """The role did not produce a valid answer within its budget."""


def extract_json(text: str) -> str:
    """The JSON object in a model's answer: fenced, bare, or embedded in a sentence."""
    text = text.strip()
    if fenced := _FENCE.search(text):
        text = fenced.group(1).strip()
    if text.startswith("{"):
        return text
    start = text.find("{")
    end = text.rfind("}")
    if start == -1 or end <= start:
        raise ValueError("the answer contains no JSON object")
    return text[start : end + 1]


def parse_answer(text: str, model: type[T]) -> T:
    return model.model_validate_json(extract_json(text))


def _guardrail_for(model: type[BaseModel]) -> Callable[[Any], tuple[bool, Any]]:
    def guardrail(output: Any):  # crewAI rejects a string return annotation here
        raw = str(getattr(output, "raw", output))
        try:
            return True, parse_answer(raw, model).model_dump_json()
        except (ValueError, ValidationError) as exc:
            detail = str(exc)
            if isinstance(exc, ValidationError):
                detail = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:6]
                )
            return False, (
                f"Your final answer is not valid: {detail}. Answer again with only the JSON object "
                f"described in the expected output (fields: {', '.join(model.model_fields)})."
            )

    return guardrail


def run_role(
    spec: AgentSpec,
    *,
    llm: BaseLLM,
    description: str,
    expected_output: str,
    output: type[T],
    tools: list[BaseTool] | None = None,
    max_iter: int | None = None,
    repair_attempts: int = 2,
) -> T:
    """One agent, one task, one crew: the bounded unit every plan step runs as."""
    agent = Agent(
        role=spec.role,
        goal=spec.goal,
        backstory=spec.backstory,
        llm=llm,
        tools=tools or [],
        max_iter=max_iter or spec.max_iter,
        allow_delegation=False,
        verbose=False,
        memory=False,
    )
    task = Task(
        description=description,
        expected_output=expected_output,
        agent=agent,
        guardrail=_guardrail_for(output),
        guardrail_max_retries=repair_attempts,
    )
    try:
        result = Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    except Exception as exc:
        detail = " ".join(str(exc).split())[:500]  # one line: it ends up in a report and a terminal
        raise AgentTaskError(f"{spec.role} could not finish: {type(exc).__name__}: {detail}") from exc
    raw = str(getattr(result, "raw", result))
    try:
        return output.model_validate_json(raw) if raw.lstrip().startswith("{") else parse_answer(raw, output)
    except (ValueError, ValidationError) as exc:
        raise AgentTaskError(f"{spec.role} gave no valid answer: {exc}") from exc
