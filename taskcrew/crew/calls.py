"""Limits on every model call, and what to say when one fails.

Each provider client gets a connect timeout, a read timeout (no byte from the server for this long
means the call stalled) and a bounded number of retries. The OpenAI and Anthropic SDKs retry
connection errors, timeouts, 408/409/429 and 5xx with exponential backoff and jitter (about 0.5 s,
1 s, 2 s …, capped at 8 s, honouring Retry-After). Configured in the environment:

    TASKCREW_MODEL_CONNECT_TIMEOUT   seconds to open the connection (default 10)
    TASKCREW_MODEL_TIMEOUT           seconds without an answer before the call counts as stalled (default 90)
    TASKCREW_MODEL_RETRIES           retries after the first try (default 2)

Every call also ends: ``bounded_call`` gives it a wall-clock deadline (a server that dribbles bytes
forever never trips a read timeout) and polls a stop check (a cancelled job, a stopping worker) while
it waits, and ``call_error`` turns any answer that is not a chat completion (an HTTP status, an HTML
page, a body that is not JSON, a closed socket) into one clear error naming the URL and the status.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from taskcrew.crew.modelspec import ModelConfigError

if TYPE_CHECKING:
    from taskcrew.crew.modelspec import ModelSpec

T = TypeVar("T")

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

    @property
    def deadline_s(self) -> float:
        """The longest one call may take: all tries and back-offs, plus 10 s for the client itself."""
        return (self.connect_timeout_s + self.timeout_s) * (self.retries + 1) + 8.0 * self.retries + 10.0

    def client_params(self) -> dict[str, Any]:
        """``client_params`` for crewAI's OpenAI and Anthropic clients."""
        import httpx

        return {
            "timeout": httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s),
            "max_retries": self.retries,
        }


def causes(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and the exceptions it came from, each once (a chain can loop back on itself)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def is_timeout(exc: BaseException | None) -> bool:
    return any(type(e).__name__ in TIMEOUT_NAMES or "timed out" in str(e).lower() for e in causes(exc))


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


class ModelEndpointError(ConnectionError):
    """The model's endpoint answered something that is not a chat completion, or could not be
    reached; the message names the URL, the status and what to check."""


_CONNECT_NAMES = ("APIConnectionError", "ConnectError", "RemoteProtocolError", "ConnectionRefusedError")
_DEFAULT_URLS = {"anthropic": "https://api.anthropic.com/v1", "openai": "https://api.openai.com/v1"}


def _endpoint(spec: ModelSpec, exc: BaseException) -> str:
    for e in causes(exc):
        request = getattr(e, "request", None) or getattr(getattr(e, "response", None), "request", None)
        with_url = getattr(request, "url", None)
        if with_url is not None:
            return str(with_url)
    base = spec.base_url or _DEFAULT_URLS.get(spec.provider, "")
    return f"{base}/messages" if spec.provider == "anthropic" else f"{base}/chat/completions"


def _body_hint(response: Any) -> str:
    try:
        kind = str(response.headers.get("content-type") or "no content type").split(";")[0]
        text = re.sub(r"<[^>]+>", " ", response.text or "")
    except Exception:  # a streamed or closed body: the status says enough
        return ""
    text = " ".join(text.split())[:80]
    return f" ({kind}: {text!r})" if text else f" ({kind}, empty body)"


def call_error(exc: BaseException, role: str, spec: ModelSpec) -> ConnectionError | None:
    """One clear error for a failed call (a stall, a wrong answer, no server), or None to let the
    original through (a 429 stays itself: the back-offs retry it)."""
    if (stalled := stalled_error(exc, role, spec.raw)) is not None:
        return stalled
    what = f"the {role}'s model {spec.raw}"
    fix = "check the model's URL (an OpenAI-compatible server answers POST …/v1/chat/completions)"
    for e in causes(exc):
        response = getattr(e, "response", None)
        status = getattr(e, "status_code", None) or getattr(response, "status_code", None)
        if isinstance(status, int):
            if status == 429:
                return None
            hint = _body_hint(response) if response is not None else ""
            return ModelEndpointError(
                f"{what}: {_endpoint(spec, exc)} answered HTTP {status}{hint}, not a chat completion; {fix}"
            )
        if isinstance(e, json.JSONDecodeError) or type(e).__name__ == "APIResponseValidationError":
            return ModelEndpointError(
                f"{what}: {_endpoint(spec, exc)} answered with a body that is not a chat completion "
                f"(not JSON); {fix}"
            )
        if type(e).__name__ in _CONNECT_NAMES:
            return ModelEndpointError(
                f"{what}: could not get an answer from {_endpoint(spec, exc)} ({type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else 'connection closed'}); is the server running?"
            )
    return None


def bounded_call(
    work: Callable[[], T], deadline_s: float, check_stop: Callable[[], None] | None, what: str
) -> T:
    """``work()`` on a helper thread, waited for at most ``deadline_s``; ``check_stop`` (raises to
    stop) is polled while waiting. An abandoned call's thread is a daemon: its socket times out alone."""
    done = threading.Event()
    box: dict[str, Any] = {}
    context = contextvars.copy_context()  # crewAI's event scopes live in context variables

    def target() -> None:
        try:
            box["result"] = context.run(work)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="taskcrew-model-call", daemon=True).start()
    ends = time.monotonic() + deadline_s
    while not done.wait(0.25):
        if check_stop is not None:
            check_stop()
        if time.monotonic() >= ends:
            raise ModelCallStalled(
                f"{what} did not end within {deadline_s:g} s (an answer that never finishes); "
                "check the model server, or raise TASKCREW_MODEL_TIMEOUT"
            )
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result


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
