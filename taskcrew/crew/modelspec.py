"""Model names, credentials and prices — no crewai import, so the CLI can check them instantly.

A model is named by a provider string:

    anthropic/claude-sonnet-4-5          ANTHROPIC_API_KEY
    openai/gpt-4o                        OPENAI_API_KEY (OPENAI_BASE_URL optional)
    ollama/llama3.1                      OLLAMA_HOST (default http://localhost:11434/v1), no key
    NAME@http://host:port/v1             any OpenAI-compatible server; key from TASKCREW_API_KEY if set
    NAME                                 an entry of the operator's models file (``modellist``)
    scripted/NAME                        a scripted policy (tests and the offline eval sweep)

Nothing ever falls back to a default provider: no model configured is an error naming the variables.
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from taskcrew.yamlfile import load_yaml

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
    key_env: str | None = None  # the operator's models file names the variable with its key
    listed: bool = False  # the operator configured this model (models file or TASKCREW_MODEL…)

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
    chosen = path or Path(os.environ.get("TASKCREW_PRICES") or PRICES_FILE)
    fix = f"fix the file or unset TASKCREW_PRICES (the format is that of {PRICES_FILE.name})"
    try:
        raw = load_yaml(chosen.read_text(encoding="utf-8")) or {}  # a key written twice is refused
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelConfigError(
            f"prices file {chosen} cannot be read ({exc.__class__.__name__}); {fix}"
        ) from exc
    except yaml.YAMLError as exc:
        raise ModelConfigError(f"prices file {chosen} is not valid YAML; {fix}") from exc
    if not isinstance(raw, dict):
        raise ModelConfigError(f"prices file {chosen} is not a mapping of model to prices; {fix}")
    try:
        return {str(k): Price.model_validate(v) for k, v in raw.items()}
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
        raise ModelConfigError(
            f"prices file {chosen}: an entry has no valid input_per_mtok/output_per_mtok ({where}); {fix}"
        ) from exc


def cost_of(
    spec: ModelSpec, input_tokens: int, output_tokens: int, prices: dict[str, Price]
) -> Decimal | None:
    price = prices.get(spec.raw) or prices.get(f"{spec.provider}/{spec.name}") or prices.get(spec.name)
    if price is None:
        return Decimal(0) if spec.provider in ("scripted", "ollama") else None
    return (price.input_per_mtok * input_tokens + price.output_per_mtok * output_tokens) / Decimal(1_000_000)


def _api_key(names: tuple[str, ...], spec: ModelSpec, required: bool) -> str | None:
    for name in names:
        if value := os.environ.get(name):
            return value
    if required:
        raise ModelConfigError(
            f"model {spec.raw!r} needs an API key: set {' or '.join(names)} in the environment or in .env"
        )
    return None


def check_credentials(spec: ModelSpec) -> str | None:
    """The API key a spec needs (None when it needs none); raises ModelConfigError when missing."""
    if spec.key_env:  # a models file entry: its own key, sent to its own endpoint only
        return _api_key((spec.key_env,), spec, required=True)
    if spec.provider == "anthropic":
        return _api_key(("ANTHROPIC_API_KEY",), spec, required=True)
    if spec.provider == "openai":  # OpenAI's endpoint, or the operator's OPENAI_BASE_URL
        return _api_key(("OPENAI_API_KEY",), spec, required=spec.base_url is None)
    if spec.provider in ("ollama", "compat"):  # never OpenAI's key to another server
        return _api_key(("TASKCREW_API_KEY",), spec, required=False)
    return None


class ModelChoice(BaseModel):
    worker: ModelSpec
    verifier: ModelSpec


def choose_models(worker: str | None, verifier: str | None, *, allow_same: bool = False) -> ModelChoice:
    """Resolve worker and verifier models from flags, then TASKCREW_MODEL / TASKCREW_VERIFIER_MODEL,
    then the operator's models file (names from it resolve to its entries: ``crew.modellist``)."""
    from taskcrew.crew.modellist import default_name, resolve

    chosen = worker_spec(worker)
    verifier_text = verifier or os.environ.get("TASKCREW_VERIFIER_MODEL") or default_name("verifier")
    if not verifier_text:
        raise ModelConfigError(
            "no verifier model configured: pass --verifier-model provider/name or set TASKCREW_VERIFIER_MODEL; "
            "it must be a different model from the worker's"
        )
    choice = ModelChoice(worker=chosen, verifier=resolve(verifier_text))
    if choice.worker.raw == choice.verifier.raw and not allow_same:
        raise ModelConfigError(
            f"the verifier must be a different model from the worker ({choice.worker.raw}); "
            "pass another --verifier-model, or --allow-same-verifier to force it"
        )
    return choice


def worker_spec(worker: str | None) -> ModelSpec:
    """The worker's model: the flag, else TASKCREW_MODEL, else the operator's models file."""
    from taskcrew.crew.modellist import default_name, resolve

    text = worker or os.environ.get("TASKCREW_MODEL") or default_name("worker")
    if not text:
        raise ModelConfigError(
            "no model configured: pass --model provider/name or set TASKCREW_MODEL (and "
            "TASKCREW_VERIFIER_MODEL for the verifier), e.g. in .env; plus the provider's key "
            "(ANTHROPIC_API_KEY or OPENAI_API_KEY). No key at hand? `taskcrew demo` shows the whole "
            "product offline with scripted stand-in models"
        )
    return resolve(text)


def verifier_spec(verifier_model: str | None) -> ModelSpec:
    from taskcrew.crew.modellist import default_name, resolve

    text = (
        verifier_model
        or os.environ.get("TASKCREW_VERIFIER_MODEL")
        or os.environ.get("TASKCREW_MODEL")
        or default_name("verifier")
    )
    if not text:
        raise ModelConfigError(
            "no model configured for the audit: pass --verifier-model provider/name or set "
            "TASKCREW_VERIFIER_MODEL (e.g. in .env), plus the provider's API key"
        )
    return resolve(text)
