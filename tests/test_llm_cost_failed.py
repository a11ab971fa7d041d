"""A model call that got no answer (the key refused, no server, a stall) used no tokens and cost
nothing by the provider's account: it is counted as a failed call, never as tokens or cost.

The real provider path (crewAI's OpenAI client over HTTP, a priced model) against local servers;
the only fakes are those servers.
"""

from __future__ import annotations

import socket
from decimal import Decimal
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, MisbehavingServer
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.crew.calls import ModelCallStalled, ModelEndpointError
from taskcrew.crew.llm import TracedLLM, build_provider_llm
from taskcrew.crew.models import LlmCall
from taskcrew.crew.modelspec import ModelSpec, load_prices
from taskcrew.crew.scripted import ScriptedLLM
from taskcrew.crew.trace import read_trace

pytestmark = pytest.mark.timeout(120)

PRICED = "openai/gpt-4o"  # in prices.yaml: an estimate would cost money


@pytest.fixture(autouse=True)
def _short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "TASKCREW_MODEL_TIMEOUT": "1",
        "TASKCREW_MODEL_CONNECT_TIMEOUT": "1",
        "TASKCREW_MODEL_RETRIES": "0",
        "OPENAI_API_KEY": "sk-fake-not-a-key",
        "CREWAI_DISABLE_TELEMETRY": "true",
        "OTEL_SDK_DISABLED": "true",
        "CREWAI_TRACING_ENABLED": "false",
    }.items():
        monkeypatch.setenv(name, value)


def _closed_port() -> str:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _priced(base_url: str, monkeypatch: pytest.MonkeyPatch, calls: list[LlmCall]) -> TracedLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    spec = ModelSpec.parse(PRICED)
    return TracedLLM(
        model=spec.raw,
        inner=build_provider_llm(spec),
        spec=spec,
        role="planner",
        prices=load_prices(),
        on_call=calls.append,
    )


PROMPT = [{"role": "system", "content": "You are Planner. " + "Plan the work carefully. " * 200}]


def _assert_unanswered(call: LlmCall) -> None:
    assert call.error, call
    assert (call.prompt_tokens, call.output_tokens) == (0, 0), call
    assert call.cost_usd == Decimal(0), call


def test_a_call_the_provider_refuses_with_401_uses_no_tokens_and_costs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[LlmCall] = []
    with MisbehavingServer("unauthorized") as server, pytest.raises(ModelEndpointError, match="HTTP 401"):
        _priced(server.base_url, monkeypatch, calls).call(PROMPT)
    assert server.requests == 1
    assert len(calls) == 1
    _assert_unanswered(calls[0])


def test_a_call_to_a_closed_port_uses_no_tokens_and_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[LlmCall] = []
    with pytest.raises(ModelEndpointError, match="could not get an answer"):
        _priced(_closed_port(), monkeypatch, calls).call(PROMPT)
    assert len(calls) == 1
    _assert_unanswered(calls[0])


def test_a_call_that_stalls_uses_no_tokens_and_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[LlmCall] = []
    with MisbehavingServer("hang") as server, pytest.raises(ModelCallStalled):
        _priced(server.base_url, monkeypatch, calls).call(PROMPT)
    assert len(calls) == 1
    _assert_unanswered(calls[0])


def test_a_call_that_answered_is_counted_by_the_providers_usage_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[LlmCall] = []
    with FakeOpenAIServer(ScriptedLLM({"planner": ["The plan is ready."]})) as server:
        reply = _priced(server.base_url, monkeypatch, calls).call(PROMPT)
    assert reply == "The plan is ready."
    [call] = calls
    assert call.error is None and call.tokens_from == "provider"
    # fake_openai's usage: a quarter of the characters sent, a quarter of the answer's JSON
    assert call.prompt_tokens == len(PROMPT[0]["content"]) // 4 + 1
    assert call.output_tokens > 0
    price = load_prices()[PRICED]
    assert call.cost_usd == (
        price.input_per_mtok * call.prompt_tokens + price.output_per_mtok * call.output_tokens
    ) / Decimal(1_000_000)
    assert call.cost_usd > 0


def test_a_run_whose_calls_all_failed_reports_no_tokens_no_cost_and_says_none_answered(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new user's walkthrough: a run whose key the provider refuses ends with a clear error and
    charges nothing, on the terminal, in report.md and in the trace."""
    with MisbehavingServer("unauthorized") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = CliRunner().invoke(
            app,
            ["run", "What did Contoso send us about CO-55120?", "--model", PRICED,
             "--verifier-model", "openai/gpt-4o-mini", "--erp-url", "http://127.0.0.1:0",
             "--intranet-url", ""],
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert server.requests >= 1
    out = " ".join(result.output.split())
    assert "HTTP 401" in out
    assert "0+0 tokens, $0.0000" in out, out
    assert f"{server.requests} model call(s) failed, none answered" in out, out

    report = Path(result.output.split("Report: ")[1].split()[0])
    text = report.read_text(encoding="utf-8")
    assert "- Tokens: 0 in, 0 out" in text and "- Cost: $0.0000" in text, text
    llm_calls = [e.call for e in read_trace(report.parent / "trace.jsonl") if e.kind == "llm_call"]
    assert len(llm_calls) == server.requests
    for call in llm_calls:
        _assert_unanswered(call)
