"""The models the crew calls: provider LLMs (see ``modelspec`` for the names), wrapped so every call
is compacted, measured, priced and traced.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from crewai.llms.base_llm import BaseLLM
from pydantic import BaseModel, ConfigDict, Field

from taskcrew.crew.calls import CallLimits, bounded_call, call_error
from taskcrew.crew.compaction import DEFAULT_BUDGET, compact_messages, message_chars
from taskcrew.crew.models import LlmCall
from taskcrew.crew.modelspec import ModelConfigError, ModelSpec, Price, check_credentials, cost_of
from taskcrew.crew.prose import ProseCapture, ProseMemory, tool_call_in_text
from taskcrew.tools.base import openai_parameters


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """o200k_base token count, offline (an estimate for non-OpenAI models)."""
    return len(_encoding().encode(text, disallowed_special=()))


def _tool_call_names(result: Any) -> list[str]:
    if not isinstance(result, list):
        return []
    names = []
    for call in result:
        fn = call.get("function") if isinstance(call, dict) else getattr(call, "function", None)
        name = fn.get("name") if isinstance(fn, dict) else getattr(fn, "name", None)
        names.append(str(name))
    return names


def _output_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        parts = []
        for call in result:
            fn = call.get("function") if isinstance(call, dict) else getattr(call, "function", None)
            args = fn.get("arguments") if isinstance(fn, dict) else getattr(fn, "arguments", "")
            parts.append(str(args))
        return " ".join(parts)
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return str(result)


def explain_unknown_tools(messages: list[dict[str, Any]], tools: Any) -> list[dict[str, Any]]:
    """crewAI answers a call to a tool the role lacks with a bare "Tool not found": say which exist."""
    names = [
        str(t.get("function", {}).get("name"))
        for t in tools or []
        if isinstance(t, dict) and t.get("function")
    ]
    if not names:
        return messages
    out = []
    for message in messages:
        if message.get("role") == "tool" and str(message.get("content") or "").strip() == "Tool not found":
            wanted = message.get("name") or "that tool"
            message = {
                **message,
                "content": f"ERROR: there is no tool named {wanted!r} in this step. "
                f"Your tools are: {', '.join(names)}. Call one of them, or give your final answer.",
            }
        out.append(message)
    return out


def relax_tool_schemas(tools: Any, agent: Any) -> Any:
    """crewAI marks every parameter required (strict mode): ask only for what the tool really needs."""
    if not isinstance(tools, list):
        return tools
    from crewai.utilities.string_utils import sanitize_tool_name

    schemas = {
        sanitize_tool_name(t.name): t.args_schema
        for t in getattr(agent, "tools", None) or []
        if getattr(t, "args_schema", None) is not None
    }
    out = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name") in schemas and isinstance(fn.get("parameters"), dict):
            fn = {
                **fn,
                "parameters": openai_parameters(fn["parameters"], schemas[fn["name"]]),
                "strict": False,
            }
            tool = {**tool, "function": fn}
        out.append(tool)
    return out


class TracedLLM(BaseLLM):
    """Wraps the provider's LLM: compacts the prompt, measures it, prices it and reports each call.

    The compaction is what keeps the prompt a model sees flat however long a step runs: the latest
    turn in full, older results in full up to a token budget, one line beyond (see ``compaction``).
    The text a model writes beside its tool calls is put back into the history it sees next
    (crewAI drops it), and a tool call written as text in the answer becomes a real tool call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    spec: ModelSpec
    role: str = "worker"
    context_budget: int = DEFAULT_BUDGET
    prose: ProseMemory = Field(default_factory=ProseMemory, exclude=True)
    on_call: Callable[[LlmCall], None] | None = Field(default=None, exclude=True)
    prices: dict[str, Price] = Field(default_factory=dict)
    check_stop: Callable[[], None] | None = Field(default=None, exclude=True)  # raises: stop waiting

    def for_role(self, role: str) -> TracedLLM:
        """The same model, labelled for another role (the label goes into the trace)."""
        return self.model_copy(update={"role": role})

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
        if self.prose.capture is None and isinstance(getattr(self.inner, "interceptor", None), ProseCapture):
            self.prose.capture = self.inner.interceptor
        messages = self.prose.restore(list(messages))
        messages = explain_unknown_tools(messages, tools)
        tools = relax_tool_schemas(tools, from_agent)
        if self.prose.capture is not None and isinstance(tools, list):
            for tool in tools:  # the wire hook sends these (crewAI's OpenAI client would re-strict them)
                fn = tool.get("function") if isinstance(tool, dict) else None
                if isinstance(fn, dict) and fn.get("strict") is False:
                    self.prose.capture.parameters[str(fn["name"])] = fn["parameters"]
        sent, compacted = compact_messages(messages, budget=self.context_budget, count=count_tokens)
        prompt_text = "\n".join(str(m.get("content") or "") for m in sent)
        started = time.monotonic()
        before = self.inner.get_token_usage_summary()
        error: str | None = None
        result: Any = None
        answered = False  # the provider sent an answer (a failed call before one costs nothing)
        try:
            result = bounded_call(
                lambda: self.inner.call(
                    sent,
                    tools=tools,
                    callbacks=callbacks,
                    available_functions=available_functions,
                    from_task=from_task,
                    from_agent=from_agent,
                    response_model=response_model,
                ),
                CallLimits.from_env().deadline_s,
                self.check_stop,
                f"the {self.role}'s model call to {self.spec.raw}",
            )
            answered = True
            result = self.prose.take(result)
            if isinstance(result, str) and tools:
                result = tool_call_in_text(result, tools) or result
            return result
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            clear = call_error(exc, self.role, self.spec)  # name the call, the URL and the status
            if clear is None:
                raise
            error = str(clear)
            raise clear from exc
        finally:
            after = self.inner.get_token_usage_summary()
            prompt_tokens = after.prompt_tokens - before.prompt_tokens
            output_tokens = after.completion_tokens - before.completion_tokens
            tokens_from: Literal["provider", "estimate"] = "provider"
            if not answered and prompt_tokens <= 0:
                # no answer (refused, unreachable, stalled, stopped) and no usage by the provider's
                # account: a failed call, never tokens or cost (an estimate would charge for it)
                prompt_tokens = output_tokens = 0
                if error is None:  # stopped while it waited (a cancelled job, a stopping worker)
                    stopped = sys.exc_info()[0]
                    error = f"no answer: {stopped.__name__ if stopped else 'the call ended'}"
            elif prompt_tokens <= 0:  # the provider reported nothing: count locally
                tokens_from = "estimate"
                prompt_tokens = count_tokens(prompt_text)
                output_tokens = count_tokens(_output_text(result)) if result is not None else 0
            record = LlmCall(
                role=self.role,
                model=self.spec.raw,
                prompt_chars=message_chars(sent),
                prompt_tokens=prompt_tokens,
                output_tokens=output_tokens,
                tokens_from=tokens_from,
                messages_sent=len(sent),
                messages_compacted=compacted,
                cost_usd=cost_of(self.spec, prompt_tokens, output_tokens, self.prices)
                if answered or prompt_tokens > 0
                else Decimal(0),
                seconds=round(time.monotonic() - started, 3),
                tool_calls=_tool_call_names(result),
                text_preview=result[:300] if isinstance(result, str) else self.prose.said(result)[:300],
                error=error,
            )
            if self.on_call is not None:
                self.on_call(record)

    def supports_function_calling(self) -> bool:
        return bool(self.inner.supports_function_calling())

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return int(self.inner.get_context_window_size())

    def get_input_tokens_count(self, messages: Any = None, *args: Any, **kwargs: Any) -> int:
        if isinstance(messages, list):
            return count_tokens("\n".join(str(m.get("content") or "") for m in messages))
        return count_tokens(str(messages or ""))


def text_ask(llm: BaseLLM) -> Callable[[str, str], str]:
    """(system prompt, user message) -> the model's reply text: how the knowledge store asks a
    model (questions.py, rerank.py). A failed call raises and the caller says what failed in one
    line, so crewAI's own error panel and root-logger lines are kept off the terminal."""
    from crewai_core.printer import set_suppress_console_output, should_suppress_console_output

    quiet_crewai_errors()

    def ask(system: str, user: str) -> str:
        before = should_suppress_console_output()
        set_suppress_console_output(True)  # per thread (a context variable)
        try:
            reply = llm.call([{"role": "system", "content": system}, {"role": "user", "content": user}])
        finally:
            set_suppress_console_output(before)
        return reply if isinstance(reply, str) else str(reply)

    return ask


class _NotCrewAI(logging.Filter):
    """Drops the records crewAI's providers log on the root logger (``logging.error(...)``) as a
    call fails: the exception they then raise is reported, once, by whoever made the call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "crewai" not in Path(record.pathname).parts


def quiet_crewai_errors() -> None:
    root = logging.getLogger()
    if not any(isinstance(f, _NotCrewAI) for f in root.filters):
        root.addFilter(_NotCrewAI())


def build_provider_llm(spec: ModelSpec, scripted: Callable[[str], BaseLLM] | None = None) -> BaseLLM:
    """The provider's own CrewAI LLM for a spec (never a silent default)."""
    if spec.provider == "scripted":
        if scripted is None:
            raise ModelConfigError(
                f"model {spec.raw!r} is a scripted model, only available in tests and eval"
            )
        return scripted(spec.name)
    from crewai import LLM

    key = check_credentials(spec)
    limits = CallLimits.from_env().client_params()  # connect/read timeouts, bounded retries
    if spec.provider == "anthropic":
        return LLM(model=spec.name, provider="anthropic", api_key=key, max_tokens=4096, client_params=limits)
    if spec.provider == "openai":
        return LLM(
            model=spec.name,
            provider="openai",
            api_key=key or "none",
            base_url=spec.base_url,
            client_params=limits,
            interceptor=ProseCapture(),
        )
    # ollama and any OpenAI-compatible server
    return LLM(
        model=spec.name,
        provider="openai",
        api_key=key or "none",
        base_url=spec.base_url,
        custom_openai=True,
        client_params=limits,
        interceptor=ProseCapture(),
    )
