"""ScriptedLLM: the one test double in taskcrew. It stands in for a model and nothing else.

It speaks CrewAI's native tool calling (returns OpenAI-style tool calls or a final text), records
every prompt it was shown, and fails loudly when its script runs out or is left unused
(like openai-agents' ScriptedModel.assert_complete). A script entry may be a callable that reads
the call (role, latest tool result, prompt) and decides, so scripts can react to real pages.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from crewai.llms.base_llm import BaseLLM
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


class ToolCall(BaseModel):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None  # send these bytes verbatim (to test malformed JSON)


class Said(BaseModel):
    """Tool calls with text beside them, as real models often answer."""

    text: str
    calls: list[ToolCall]


class ScriptedCall(BaseModel):
    """What the scripted model was shown on one call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    role: str
    messages: list[dict[str, Any]]
    tools: list[str]

    @property
    def prompt(self) -> str:
        return "\n".join(str(m.get("content") or "") for m in self.messages)

    @property
    def task_text(self) -> str:
        return next((str(m.get("content") or "") for m in self.messages if m.get("role") == "user"), "")

    @property
    def last_tool_result(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "tool":
                return str(message.get("content") or "")
        return ""

    @property
    def turn_results(self) -> list[str]:
        """The results of the model's latest turn, in the order of its calls (parallel calls give
        several)."""
        results: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") != "tool":
                break
            results.append(str(message.get("content") or ""))
        return results[::-1]

    def element(self, pattern: str, text: str | None = None) -> int:
        """Number of the first element line in the latest observation matching ``pattern`` (regex)."""
        source = self.last_tool_result if text is None else text
        for line in source.splitlines():
            match = re.match(r"\s*\[(\d+)\]", line)
            if match and re.search(pattern, line, re.IGNORECASE):
                return int(match.group(1))
        raise ScriptError(f"no element matching {pattern!r} in the latest observation:\n{source[:3000]}")


Reply = str | ToolCall | list[ToolCall] | Said | BaseModel
Policy = Callable[[ScriptedCall], Reply]


class Loop(BaseModel):
    """A reactive step: ``policy`` answers every call until it gives a final answer (not a tool call).

    ``max_calls`` bounds it, so a policy that never finishes fails the test instead of hanging.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: Policy
    max_calls: int = 40
    calls: int = 0


Step = Reply | Policy | Loop


class ScriptError(AssertionError):
    """The script and the run disagree: ran out, left steps unused, or could not find what it expected."""


def role_key(agent: Any) -> str:
    role = getattr(agent, "role", None) or "direct"
    return re.sub(r"[^a-z0-9]+", "_", str(role).lower()).strip("_")


_ids = itertools.count(1)


def _as_tool_calls(reply: ToolCall | list[ToolCall]) -> list[dict[str, Any]]:
    calls = [reply] if isinstance(reply, ToolCall) else reply
    return [
        {
            "id": f"call_{next(_ids)}",
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": c.raw_arguments if c.raw_arguments is not None else json.dumps(c.args),
            },
        }
        for c in calls
    ]


PACE_ENV = "TASKCREW_SCRIPTED_PACE"


class Pace(BaseModel):
    """How long a scripted answer takes, as a hosted model's would: a wait before the first token,
    then the prompt read and the answer written at given rates. Off unless asked for (tests answer
    at once); ``TASKCREW_SCRIPTED_PACE="first_s,prompt_tokens_per_s,output_tokens_per_s"`` sets it,
    so a benchmark's wall time can include the model's share of a real run."""

    first_s: float = Field(ge=0)
    prompt_tokens_per_s: float = Field(gt=0)
    output_tokens_per_s: float = Field(gt=0)

    @classmethod
    def from_env(cls) -> Pace | None:
        raw = os.environ.get(PACE_ENV, "").strip()
        if not raw:
            return None
        try:
            first, prompt, output = (float(x) for x in raw.split(","))
            return cls(first_s=first, prompt_tokens_per_s=prompt, output_tokens_per_s=output)
        except ValueError as exc:
            raise ValueError(
                f"{PACE_ENV}={raw!r}: give three numbers, e.g. 0.5,5000,70 (seconds to the first "
                "token, prompt tokens read per second, output tokens written per second)"
            ) from exc

    def seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        return (
            self.first_s + prompt_tokens / self.prompt_tokens_per_s + output_tokens / self.output_tokens_per_s
        )


def _paced(messages: list[dict[str, Any]], answer: Any) -> None:
    """Wait as long as the configured pace says this call would take (nothing when unset)."""
    pace = Pace.from_env()
    if pace is None:
        return
    from taskcrew.crew.llm import count_tokens

    prompt = "\n".join(str(m.get("content") or "") for m in messages)
    output = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    time.sleep(pace.seconds(count_tokens(prompt), count_tokens(output)))


class ScriptedLLM(BaseLLM):
    """Replays a script. ``script`` is one list for every role, or a mapping role → list."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    llm_type: str = "scripted"
    model: str = "scripted/test"
    script: Any = None
    _queues: dict[str, deque[Step]] = PrivateAttr(default_factory=dict)
    _calls: list[ScriptedCall] = PrivateAttr(default_factory=list)

    def __init__(self, script: Any = None, model: str = "scripted/test", **kwargs: Any) -> None:
        super().__init__(model=model, script=script, **kwargs)

    def model_post_init(self, __context: Any) -> None:
        self.load(self.script or [])

    def load(self, script: Iterable[Step] | Mapping[str, Iterable[Step]]) -> None:
        if isinstance(script, Mapping):
            self._queues = {k: deque(v) for k, v in script.items()}
        else:
            self._queues = {"*": deque(script)}

    @property
    def calls(self) -> list[ScriptedCall]:
        return self._calls

    def calls_for(self, role: str) -> list[ScriptedCall]:
        return [c for c in self._calls if c.role == role]

    def remaining(self) -> dict[str, int]:
        return {k: len(q) for k, q in self._queues.items() if q}

    def assert_complete(self) -> None:
        if left := self.remaining():
            raise ScriptError(f"scripted model {self.model!r} finished with unused steps: {left}")

    def call(
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        tool_names = [t.get("function", {}).get("name", "?") for t in tools or [] if isinstance(t, dict)]
        record = ScriptedCall(
            role=role_key(from_agent), messages=[dict(m) for m in messages], tools=tool_names
        )
        self._calls.append(record)
        queue = self._queues.get(record.role) if record.role in self._queues else self._queues.get("*")
        if not queue:
            raise ScriptError(
                f"scripted model {self.model!r} has no step left for role {record.role!r} "
                f"(call #{len(self._calls)}); last tool result:\n{record.last_tool_result[:2000]}"
            )
        step = queue[0]
        if isinstance(step, Loop):
            step.calls += 1
            if step.calls > step.max_calls:
                raise ScriptError(
                    f"a Loop step for role {record.role!r} did not finish in {step.max_calls} calls"
                )
            reply = step.policy(record)
            if not isinstance(reply, (ToolCall, list, Said)):
                queue.popleft()
        else:
            queue.popleft()
            reply = step(record) if callable(step) else step
        answer = self._answer(reply)
        _paced(record.messages, answer)
        return answer

    @staticmethod
    def _answer(reply: Any) -> Any:
        if isinstance(reply, Said):
            calls = _as_tool_calls(reply.calls)
            calls[0]["prose"] = reply.text  # TracedLLM keeps it; crewAI would drop it
            return calls
        if isinstance(reply, (ToolCall, list)):
            return _as_tool_calls(reply)
        if isinstance(reply, BaseModel):
            return reply.model_dump_json()
        return reply

    def supports_function_calling(self) -> bool:
        return True

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 128_000
