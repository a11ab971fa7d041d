"""Limits on every model call, and what to say when one fails.

Each provider client gets a connect timeout, a read timeout (no byte from the server for this long
means the call stalled) and a bounded number of retries. The OpenAI and Anthropic SDKs retry
connection errors, timeouts, 408/409/429 and 5xx with exponential backoff and jitter (about 0.5 s,
1 s, 2 s …, capped at 8 s, honouring Retry-After). Configured in the environment:

    TASKCREW_MODEL_CONNECT_TIMEOUT   seconds to open the connection (default 10)
    TASKCREW_MODEL_TIMEOUT           seconds without an answer before the call counts as stalled (default 90)
    TASKCREW_MODEL_RETRIES           retries after the first try (default 2)
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from taskcrew.crew.modelspec import ModelConfigError

ENV = {
    "connect_timeout_s": "TASKCREW_MODEL_CONNECT_TIMEOUT",
    "timeout_s": "TASKCREW_MODEL_TIMEOUT",
    "retries": "TASKCREW_MODEL_RETRIES",
}
TIMEOUT_NAMES = ("APITimeoutError", "ReadTimeout", "ConnectTimeout", "TimeoutException", "TimeoutError")


class CallLimits(BaseModel):
    connect_timeout_s: float = Field(10.0, gt=0, le=600)
    timeout_s: float = Field(90.0, gt=0, le=3600)
    retries: int = Field(2, ge=0, le=10)

    @classmethod
    def from_env(cls) -> CallLimits:
        values = {field: os.environ[name] for field, name in ENV.items() if os.environ.get(name)}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = ENV[str(error["loc"][0])]
            raise ModelConfigError(
                f"{name}={os.environ.get(name)!r}: {error['msg'].lower()}; unset it for the default "
                f"({cls.model_fields[str(error['loc'][0])].default})"
            ) from exc

    def client_params(self) -> dict[str, Any]:
        """``client_params`` for crewAI's OpenAI and Anthropic clients."""
        import httpx

        return {
            "timeout": httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s),
            "max_retries": self.retries,
        }


def is_timeout(exc: BaseException | None) -> bool:
    while exc is not None:
        if type(exc).__name__ in TIMEOUT_NAMES or "timed out" in str(exc).lower():
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class ModelCallStalled(ConnectionError):
    """A model call got no answer within the limits; the message names the call and what to do."""


def stalled_error(exc: BaseException, role: str, model: str) -> ModelCallStalled | None:
    """A ModelCallStalled naming the call when ``exc`` is a timeout, else None."""
    if not is_timeout(exc):
        return None
    limits = CallLimits.from_env()
    retries = f"{limits.retries} retr{'y' if limits.retries == 1 else 'ies'}"
    return ModelCallStalled(
        f"the {role}'s model call to {model} stalled: no answer within {limits.timeout_s:g} s "
        f"(tried {limits.retries + 1}x: {retries}); check the model server, or raise TASKCREW_MODEL_TIMEOUT"
    )


def quiet_crewai_noise() -> None:
    """Keep crewAI's own console noise out of the user's terminal when a model endpoint fails:
    its ``ERROR:root`` log lines (the failure is in the trace and the report, naming the call) and
    its event bus's "Event pairing mismatch" warnings. Call once per command, after importing crewai."""
    import logging

    root = logging.getLogger()
    if not root.handlers:  # else the user configured logging: leave it alone
        root.addHandler(logging.NullHandler())
    try:
        from crewai.events import event_context
    except ImportError:
        return
    config = event_context._default_config
    config.mismatch_behavior = event_context.MismatchBehavior.SILENT
    config.empty_pop_behavior = event_context.MismatchBehavior.SILENT
