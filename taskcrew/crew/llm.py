"""Models: provider strings → CrewAI LLMs, wrapped so every call is bounded, measured and traced.

A model is named by a provider string:

    anthropic/claude-sonnet-4-5          ANTHROPIC_API_KEY
    openai/gpt-4o                        OPENAI_API_KEY (OPENAI_BASE_URL optional)
    ollama/llama3.1                      OLLAMA_HOST (default http://localhost:11434/v1), no key
    NAME@http://host:port/v1             any OpenAI-compatible server; key from TASKCREW_API_KEY if set
    scripted/NAME                        a scripted policy (tests and the offline eval sweep)

Nothing ever falls back to a default provider: no model configured is an error naming the variables.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from crewai.llms.base_llm import BaseLLM
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from taskcrew.crew.compaction import compact_messages, message_chars

Provider = Literal["anthropic", "openai", "ollama", "compat", "scripted"]
PRICES_FILE = Path(__file__).with_name("prices.yaml")


class ModelConfigError(ValueError):
    """A model is missing or misconfigured; the message says what to set."""


class ModelSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    raw: str
    provider: Provider
    name: str
    base_url: str | None = None

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        raw = text.strip()
        if "@" in raw and "://" in raw.split("@", 1)[1]:
            name, url = raw.split("@", 1)
            name = name.removeprefix("openai/")
            if not name:
                raise ModelConfigError(
                    f"model {raw!r}: write NAME@URL, e.g. qwen2.5@http://127.0.0.1:8000/v1"
                )
            return cls(raw=raw, provider="compat", name=name, base_url=url.rstrip("/"))
        prefix, sep, name = raw.partition("/")
        if not sep or not name:
            raise ModelConfigError(
                f"model {raw!r} has no provider: write provider/model, e.g. anthropic/claude-sonnet-4-5, "
                "openai/gpt-4o, ollama/llama3.1, or NAME@http://host:port/v1 for an OpenAI-compatible server"
            )
        if prefix not in ("anthropic", "openai", "ollama", "scripted"):
            raise ModelConfigError(
                f"model {raw!r}: unknown provider {prefix!r} (use anthropic/, openai/, ollama/, scripted/ "
                "or NAME@URL)"
            )
        base_url = None
        if prefix == "ollama":
            base_url = os.environ.get("OLLAMA_HOST", "http://localhost:11434").rstrip("/")
            if not base_url.endswith("/v1"):
                base_url += "/v1"
        elif prefix == "openai":
            base_url = os.environ.get("OPENAI_BASE_URL") or None
        return cls(raw=raw, provider=prefix, name=name, base_url=base_url)


class Price(BaseModel):
    input_per_mtok: Decimal
    output_per_mtok: Decimal


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """Price table (USD per million tokens); ``TASKCREW_PRICES`` points at an override file."""
    chosen = path or Path(os.environ.get("TASKCREW_PRICES", PRICES_FILE))
    raw = yaml.safe_load(chosen.read_text(encoding="utf-8")) or {}
    return {str(k): Price.model_validate(v) for k, v in raw.items()}


def cost_of(
    spec: ModelSpec, input_tokens: int, output_tokens: int, prices: dict[str, Price]
) -> Decimal | None:
    price = prices.get(spec.raw) or prices.get(f"{spec.provider}/{spec.name}") or prices.get(spec.name)
    if price is None:
        return Decimal(0) if spec.provider in ("scripted", "ollama") else None
    return (price.input_per_mtok * input_tokens + price.output_per_mtok * output_tokens) / Decimal(1_000_000)


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """o200k_base token count, offline (an estimate for non-OpenAI models)."""
    return len(_encoding().encode(text, disallowed_special=()))


class LlmCall(BaseModel):
    """One model call, as the trace and the usage totals see it."""

    role: str
    model: str
    prompt_chars: int
    prompt_tokens: int
    output_tokens: int
    tokens_from: Literal["provider", "estimate"] = "estimate"
    messages_sent: int
    messages_compacted: int
    cost_usd: Decimal | None
    seconds: float
    tool_calls: list[str] = Field(default_factory=list)
    text_preview: str = ""
    error: str | None = None


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


class TracedLLM(BaseLLM):
    """Wraps the provider's LLM: compacts the prompt, measures it, prices it and reports each call.

    The compaction is what keeps the prompt a model sees flat however long a step runs: the latest
    tool result in full, older ones one line each (see ``compaction``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    spec: ModelSpec
    role: str = "worker"
    keep_full: int = 1
    keep_exchanges: int = 8
    on_call: Callable[[LlmCall], None] | None = Field(default=None, exclude=True)
    prices: dict[str, Price] = Field(default_factory=dict)
    _calls: int = PrivateAttr(default=0)

    def for_role(self, role: str) -> TracedLLM:
        """The same model, labelled for another role (the label goes into the trace)."""
        return TracedLLM(
            model=self.model,
            inner=self.inner,
            spec=self.spec,
            role=role,
            keep_full=self.keep_full,
            keep_exchanges=self.keep_exchanges,
            on_call=self.on_call,
            prices=self.prices,
        )

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
        sent, compacted = compact_messages(list(messages), keep_full=self.keep_full, keep=self.keep_exchanges)
        prompt_text = "\n".join(str(m.get("content") or "") for m in sent)
        started = time.monotonic()
        before = self.inner.get_token_usage_summary()
        error: str | None = None
        result: Any = None
        try:
            result = self.inner.call(
                sent,
                tools=tools,
                callbacks=callbacks,
                available_functions=available_functions,
                from_task=from_task,
                from_agent=from_agent,
                response_model=response_model,
            )
            return result
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            after = self.inner.get_token_usage_summary()
            prompt_tokens = after.prompt_tokens - before.prompt_tokens
            output_tokens = after.completion_tokens - before.completion_tokens
            tokens_from: Literal["provider", "estimate"] = "provider"
            if prompt_tokens <= 0:  # the provider reported nothing: count locally
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
                cost_usd=cost_of(self.spec, prompt_tokens, output_tokens, self.prices),
                seconds=round(time.monotonic() - started, 3),
                tool_calls=_tool_call_names(result),
                text_preview=result[:300] if isinstance(result, str) else "",
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


def _api_key(names: tuple[str, ...], spec: ModelSpec, required: bool) -> str | None:
    for name in names:
        if value := os.environ.get(name):
            return value
    if required:
        raise ModelConfigError(
            f"model {spec.raw!r} needs an API key: set {' or '.join(names)} in the environment or in .env"
        )
    return None


def build_provider_llm(spec: ModelSpec, scripted: Callable[[str], BaseLLM] | None = None) -> BaseLLM:
    """The provider's own CrewAI LLM for a spec (never a silent default)."""
    if spec.provider == "scripted":
        if scripted is None:
            raise ModelConfigError(
                f"model {spec.raw!r} is a scripted model, only available in tests and eval"
            )
        return scripted(spec.name)
    from crewai import LLM

    if spec.provider == "anthropic":
        key = _api_key(("ANTHROPIC_API_KEY",), spec, required=True)
        return LLM(model=spec.name, provider="anthropic", api_key=key, max_tokens=4096)
    if spec.provider == "openai":
        key = _api_key(("OPENAI_API_KEY",), spec, required=spec.base_url is None)
        return LLM(model=spec.name, provider="openai", api_key=key or "none", base_url=spec.base_url)
    # ollama and any OpenAI-compatible server
    key = _api_key(("TASKCREW_API_KEY", "OPENAI_API_KEY"), spec, required=False) or "none"
    return LLM(model=spec.name, provider="openai", api_key=key, base_url=spec.base_url, custom_openai=True)


class ModelChoice(BaseModel):
    worker: ModelSpec
    verifier: ModelSpec


def choose_models(worker: str | None, verifier: str | None, *, allow_same: bool = False) -> ModelChoice:
    """Resolve worker and verifier models from flags, then TASKCREW_MODEL / TASKCREW_VERIFIER_MODEL."""
    worker_text = worker or os.environ.get("TASKCREW_MODEL")
    if not worker_text:
        raise ModelConfigError(
            "no model configured: pass --model provider/name or set TASKCREW_MODEL (and "
            "TASKCREW_VERIFIER_MODEL for the verifier), e.g. in .env; plus the provider's key "
            "(ANTHROPIC_API_KEY or OPENAI_API_KEY)"
        )
    verifier_text = verifier or os.environ.get("TASKCREW_VERIFIER_MODEL")
    if not verifier_text:
        raise ModelConfigError(
            "no verifier model configured: pass --verifier-model provider/name or set TASKCREW_VERIFIER_MODEL; "
            "it must be a different model from the worker's"
        )
    choice = ModelChoice(worker=ModelSpec.parse(worker_text), verifier=ModelSpec.parse(verifier_text))
    if choice.worker.raw == choice.verifier.raw and not allow_same:
        raise ModelConfigError(
            f"the verifier must be a different model from the worker ({choice.worker.raw}); "
            "pass another --verifier-model, or --allow-same-verifier to force it"
        )
    return choice
