"""Every model call ends: an endpoint that answers anything but a chat completion gives one clear
error naming the URL and the status (no spinning), and a stop check reaches a call that waits.

The real provider path (crewAI's OpenAI client over HTTP) against a local server that misbehaves;
the only fake is that server."""

from __future__ import annotations

import threading
import time

import pytest
from fake_openai import MisbehavingServer

from taskcrew.crew.calls import ModelCallStalled, ModelEndpointError
from taskcrew.crew.llm import TracedLLM, build_provider_llm
from taskcrew.crew.modelspec import ModelSpec

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "TASKCREW_MODEL_TIMEOUT": "1",
        "TASKCREW_MODEL_CONNECT_TIMEOUT": "1",
        "TASKCREW_MODEL_RETRIES": "0",
        "CREWAI_DISABLE_TELEMETRY": "true",
        "OTEL_SDK_DISABLED": "true",
        "CREWAI_TRACING_ENABLED": "false",
    }.items():
        monkeypatch.setenv(name, value)


def _traced(server: MisbehavingServer, check_stop: object = None) -> TracedLLM:
    spec = ModelSpec.parse(f"m1@{server.base_url}")
    return TracedLLM(
        model=spec.raw, inner=build_provider_llm(spec), spec=spec, role="planner", check_stop=check_stop
    )


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("405", "answered HTTP 405"),
        ("html404", "answered HTTP 404 (text/html: 'Not Found nginx')"),
        ("not_json", "not a chat completion (not JSON)"),
        ("close", "could not get an answer from"),
    ],
)
def test_an_endpoint_that_does_not_answer_a_chat_completion_is_one_clear_error(mode: str, says: str) -> None:
    with MisbehavingServer(mode) as server, pytest.raises(ModelEndpointError) as caught:
        _traced(server).call([{"role": "user", "content": "hi"}])
    message = str(caught.value)
    assert says in message, message
    assert server.chat_url in message and "m1@" in message and "\n" not in message
    assert "Model m1 not found" not in message and "<html>" not in message


def test_an_answer_that_never_ends_stops_at_the_call_deadline() -> None:
    with MisbehavingServer("endless") as server, pytest.raises(ModelCallStalled) as caught:
        _traced(server).call([{"role": "user", "content": "hi"}])
    assert "did not end within" in str(caught.value) and "planner" in str(caught.value)


class _Stop(BaseException):
    pass


def test_a_stop_reaches_a_call_that_waits_on_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job cancelled (or a worker stopping) while its leg waits on a model that never answers: the
    call ends as soon as the stop check says so, not when the model's timeouts run out."""
    monkeypatch.setenv("TASKCREW_MODEL_TIMEOUT", "600")  # the call alone would wait 10 minutes
    stopped = threading.Event()

    def check_stop() -> None:
        if stopped.is_set():
            raise _Stop

    with MisbehavingServer("hang") as server:
        threading.Thread(target=_stop_once_asked, args=(server, stopped), daemon=True).start()
        with pytest.raises(_Stop):
            _traced(server, check_stop).call([{"role": "user", "content": "hi"}])
    assert server.requests == 1


def _stop_once_asked(server: MisbehavingServer, stopped: threading.Event) -> None:
    while server.requests == 0:
        time.sleep(0.05)
    stopped.set()
