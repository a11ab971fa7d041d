"""The operator's models: which model names jobs may use, with their endpoints and keys.

A models file (``TASKCREW_MODELS_FILE``, else ``models.yaml`` in TASKCREW_HOME) lists them:

    models:
      claude:  {model: anthropic/claude-sonnet-4-5}                 # key: ANTHROPIC_API_KEY
      qwen:    {model: qwen2.5@http://10.0.0.5:8000/v1, api_key_env: QWEN_KEY}
    default_worker: claude
    default_verifier: qwen

The one rule (``offered_model``), called by ``submit``, the console's submit form and the worker
before it runs a job: a job names a model from this list; without a list, a model the operator set
(TASKCREW_MODEL / TASKCREW_VERIFIER_MODEL) or a provider whose endpoint the operator sets
(anthropic/, openai/, ollama/). A submitter never chooses a URL: ``NAME@http://…`` is refused unless
the operator configured exactly that. A key goes only with the entry it is configured for (an
entry's ``api_key_env``; TASKCREW_API_KEY only to an endpoint the operator set; OPENAI_API_KEY only
to OpenAI's endpoint or OPENAI_BASE_URL). ``taskcrew run`` on a laptop works as before.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from taskcrew.crew.modelspec import ModelConfigError, ModelSpec
from taskcrew.yamlfile import load_yaml

ENV_FILE = "TASKCREW_MODELS_FILE"


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="a provider string: anthropic/…, openai/…, ollama/…, NAME@URL")
    api_key_env: str | None = Field(default=None, description="the variable that holds its key")

    @field_validator("model")
    @classmethod
    def _parses(cls, value: str) -> str:
        ModelSpec.parse(value)  # ModelConfigError is a ValueError: reported with the entry's name
        return value


class ModelsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelEntry] = Field(min_length=1)
    default_worker: str | None = None
    default_verifier: str | None = None

    @model_validator(mode="after")
    def _defaults_listed(self) -> ModelsConfig:
        for field in ("default_worker", "default_verifier"):
            name = getattr(self, field)
            if name is not None and name not in self.models:
                raise ValueError(f"{field} {name!r} is not one of the models listed")
        return self


def models_file() -> Path:
    if path := os.environ.get(ENV_FILE):
        return Path(path).expanduser()
    from taskcrew.homes import data_home

    return data_home() / "models.yaml"


def load_models(path: Path | None = None) -> ModelsConfig | None:
    """The operator's list, or None when there is none (single user: the environment decides)."""
    chosen = path or models_file()
    explicit = path is not None or bool(os.environ.get(ENV_FILE))
    fix = f"fix {chosen} (see docs/jobs.md, 'Models')"
    if not chosen.is_file():
        if explicit:
            raise ModelConfigError(f"models file {chosen} does not exist; create it or unset {ENV_FILE}")
        return None
    try:
        raw = load_yaml(chosen.read_text(encoding="utf-8"))  # a key written twice is refused
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        why = getattr(exc, "problem", None) or type(exc).__name__
        raise ModelConfigError(f"models file {chosen} cannot be read ({why}); {fix}") from exc
    try:
        return ModelsConfig.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "the file"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ModelConfigError(f"models file {chosen}: {where}: {message}; {fix}") from exc


def _operator_set() -> set[str]:
    return {v.strip() for k in ("TASKCREW_MODEL", "TASKCREW_VERIFIER_MODEL") if (v := os.environ.get(k))}


def offered_model(text: str | None, role: str = "worker") -> str | None:
    """The model a job may carry for ``role`` (``worker`` or ``verifier``): ``text`` when the operator
    offers it, the operator's default when ``text`` is None; raises ModelConfigError otherwise."""
    config = load_models()
    flag = "--model" if role == "worker" else "--verifier-model"
    if text is None or not text.strip():
        default = getattr(config, f"default_{role}", None) if config else None
        if default or os.environ.get("TASKCREW_MODEL" if role == "worker" else "TASKCREW_VERIFIER_MODEL"):
            return None  # the worker's own default applies
        if role == "verifier" and (config or os.environ.get("TASKCREW_MODEL")):
            return None  # the verifier may fall back on the run's rules (choose_models says why not)
        listed = f"one of: {', '.join(config.models)}" if config else "provider/name"
        raise ModelConfigError(
            f"no model configured for the job: pass {flag} {listed}, or set TASKCREW_MODEL "
            f"(or default_{role} in the models file)"
        )
    text = text.strip()
    if text.startswith("scripted/"):
        return text  # tests and benches: no endpoint, no key
    if config is not None:
        if text in config.models:
            return text
        raise ModelConfigError(
            f"{flag} {text!r} is not one of the operator's models: use one of {', '.join(config.models)}"
        )
    spec = ModelSpec.parse(text)
    if spec.provider == "compat" and text not in _operator_set():
        raise ModelConfigError(
            f"{flag} {text!r} names its own server: a job may only use a model the operator configured "
            f"(TASKCREW_MODEL, or a models file: {models_file()})"
        )
    return text


def resolve(text: str) -> ModelSpec:
    """The spec for a name from the models file, or for a provider string."""
    config = load_models()
    if config is not None and text in config.models:
        entry = config.models[text]
        spec = ModelSpec.parse(entry.model)
        return spec.model_copy(update={"raw": text, "key_env": entry.api_key_env, "listed": True})
    spec = ModelSpec.parse(text)
    return spec.model_copy(update={"listed": text in _operator_set()})


def default_name(role: str) -> str | None:
    config = load_models()
    return getattr(config, f"default_{role}", None) if config else None
