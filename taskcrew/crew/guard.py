"""Control limits that live in code, around every tool a model can call.

A GuardedTool wraps any CrewAI tool: it counts the run's global step budget, notices the same call
repeated (a warning goes back to the model), counts consecutive failures (past the budget the step
is told to stop so the orchestration can replan), redacts secrets from what the model sees, and
writes each call to the trace.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from crewai.tools import BaseTool
from pydantic import ConfigDict, Field

from taskcrew.crew.trace import ToolCallEvent, Tracer
from taskcrew.tools.base import validate_args

FAILURE_PREFIXES = ("ERROR", "BLOCKED", "REJECTED", "REFUSED")


def is_failure(text: str) -> bool:
    return text.lstrip().upper().startswith(FAILURE_PREFIXES)


class Budget:
    """Shared by every tool of a run. Thread-safe: CrewAI may run tools on worker threads."""

    def __init__(self, max_steps: int, failure_budget: int, repeat_limit: int = 3) -> None:
        self.max_steps = max_steps
        self.failure_budget = failure_budget
        self.repeat_limit = repeat_limit
        self.used = 0
        self.step: int | None = None
        self.consecutive_failures = 0
        self.exhausted = False
        self._recent: deque[str] = deque(maxlen=repeat_limit)
        self._lock = threading.Lock()

    def start_step(self, index: int | None) -> None:
        with self._lock:
            self.step = index
            self.consecutive_failures = 0
            self._recent.clear()

    def claim(self) -> bool:
        with self._lock:
            if self.used >= self.max_steps:
                self.exhausted = True
                return False
            self.used += 1
            return True

    def note_call(self, signature: str) -> bool:
        """Record a call; True when it is the same call ``repeat_limit`` times in a row."""
        with self._lock:
            self._recent.append(signature)
            return len(self._recent) == self.repeat_limit and len(set(self._recent)) == 1

    def note_result(self, ok: bool) -> bool:
        """Record success/failure; True when the consecutive-failure budget is now spent."""
        with self._lock:
            self.consecutive_failures = 0 if ok else self.consecutive_failures + 1
            return self.consecutive_failures >= self.failure_budget


STOP_BUDGET = (
    "STOP: the run's step budget ({n} tool calls) is used up. Do not call any more tools. "
    "Give your final answer now with status 'failed' and say exactly what is still left to do."
)
STOP_STUCK = (
    "\nSTOP: {n} consecutive failed actions. Do not try again. Give your final answer now with status "
    "'failed' and explain what went wrong, so the plan can be changed."
)
REPEAT_WARNING = (
    "\nWARNING: you have made exactly this call {n} times in a row. It is not getting you anywhere: "
    "do something different, or give your final answer and explain the problem."
)


class GuardedTool(BaseTool):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseTool
    role: str
    budget: Any = Field(exclude=True)
    tracer: Tracer | None = Field(default=None, exclude=True)
    redact: Callable[[str], str] = Field(default=lambda s: s, exclude=True)

    @classmethod
    def wrap(
        cls, tool: BaseTool, *, role: str, budget: Budget, tracer: Tracer | None, redact: Callable[[str], str]
    ) -> GuardedTool:
        return cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            inner=tool,
            role=role,
            budget=budget,
            tracer=tracer,
            redact=redact,
        )

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Lenient arguments: coerced where the intent is clear, else the corrected call as the result."""
        if not args and self.args_schema is not None and self.args_schema.model_fields:
            checked = validate_args(self.name, self.args_schema, kwargs)
            if isinstance(checked, str):
                return self._observe(kwargs, checked)
            kwargs = checked
        return super().run(*args, **kwargs)

    def _run(self, *args: Any, **kwargs: Any) -> str:
        budget: Budget = self.budget
        if not budget.claim():
            return STOP_BUDGET.format(n=budget.max_steps)
        signature = self.name + json.dumps(kwargs, sort_keys=True, default=str)
        repeated = budget.note_call(signature)
        started = time.monotonic()
        try:
            text = str(self.inner.run(*args, **kwargs))
        except Exception as exc:  # a crashed tool is an observation for the model, and a trace entry
            text = f"ERROR: the tool {self.name} failed: {type(exc).__name__}: {exc}"
        return self._observe(kwargs, text, started, repeated)

    def _observe(
        self, kwargs: dict[str, Any], text: str, started: float = 0.0, repeated: bool = False
    ) -> str:
        budget: Budget = self.budget
        started = started or time.monotonic()
        ok = not is_failure(text)
        warning = ""
        if repeated:
            warning += REPEAT_WARNING.format(n=budget.repeat_limit)
        if budget.note_result(ok):
            warning += STOP_STUCK.format(n=budget.failure_budget)
        text = self.redact(text + warning)
        if self.tracer is not None:
            self.tracer.emit(
                ToolCallEvent(
                    role=self.role,
                    step=budget.step,
                    tool=self.name,
                    args=kwargs,
                    ok=ok,
                    result=text[:4000],
                    seconds=round(time.monotonic() - started, 3),
                    warning=warning.strip(),
                )
            )
        return text
