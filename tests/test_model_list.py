"""The operator's models: jobs use only configured names, a submitter never chooses a URL, and a key
goes only to the endpoint it is configured for (seen on the wire by a local server: the real
provider client sends the request)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai import MisbehavingServer
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.crew.calls import ModelEndpointError
from taskcrew.crew.llm import TracedLLM, build_provider_llm
from taskcrew.crew.modellist import offered_model, resolve
from taskcrew.crew.modelspec import ModelConfigError, choose_models
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.store import InvalidChange


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"TASKCREW_MODEL_RETRIES": "0", "CREWAI_DISABLE_TELEMETRY": "true"}.items():
        monkeypatch.setenv(name, value)


def _call(server: MisbehavingServer, model: str) -> str:
    spec = resolve(model)
    llm = TracedLLM(model=spec.raw, inner=build_provider_llm(spec), spec=spec)
    with pytest.raises(ModelEndpointError):
        llm.call([{"role": "user", "content": "hi"}])
    return server.headers[-1].get("Authorization", "")


def test_keys_go_only_to_the_endpoint_they_are_configured_for(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("QWEN_KEY", "qwen-secret")
    with MisbehavingServer("405") as server, MisbehavingServer("405") as other:
        (isolated_home / "models.yaml").write_text(
            f"models:\n  qwen: {{model: 'qwen2.5@{server.base_url}', api_key_env: QWEN_KEY}}\n"
            "  claude: {model: anthropic/claude-sonnet-4-5}\n"
            "default_worker: qwen\ndefault_verifier: claude\n",
            encoding="utf-8",
        )
        assert _call(server, "qwen") == "Bearer qwen-secret"  # the entry's own key, to its own server
        sent = _call(other, f"m1@{other.base_url}")  # the person at the terminal, another server
        assert "sk-openai-secret" not in sent and "qwen-secret" not in sent
    models = choose_models(None, None)
    assert (models.worker.raw, models.worker.base_url) == ("qwen", server.base_url)
    monkeypatch.delenv("QWEN_KEY")
    with pytest.raises(ModelConfigError, match="set QWEN_KEY"):
        build_provider_llm(resolve("qwen"))


def test_jobs_name_the_operators_models_never_a_url(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = Jobs.open()
    evil = JobOptions(worker_model="m1@http://evil.example/v1", verifier_model="scripted/auditor")
    with pytest.raises(InvalidChange, match="names its own server"):
        jobs.submit("Enter the bill", submitted_by="mallory", options=evil)
    monkeypatch.setenv("TASKCREW_MODEL", "m1@http://10.0.0.5:8000/v1")  # the operator's own server
    assert offered_model("m1@http://10.0.0.5:8000/v1") == "m1@http://10.0.0.5:8000/v1"
    assert offered_model("anthropic/claude-sonnet-4-5") == "anthropic/claude-sonnet-4-5"  # a fixed endpoint
    (isolated_home / "models.yaml").write_text("models:\n  claude: {model: anthropic/claude-sonnet-4-5}\n")
    with pytest.raises(InvalidChange, match="use one of claude"):  # with a list, only its names
        jobs.submit(
            "Enter the bill",
            submitted_by="ana",
            options=JobOptions(worker_model="m1@http://10.0.0.5:8000/v1"),
        )
    job = jobs.submit("Enter the bill", submitted_by="ana", options=JobOptions(worker_model="claude"))
    assert job.options.worker_model == "claude"
    result = CliRunner().invoke(app, ["submit", "Enter the bill", "--model", "m1@http://evil.example/v1"])
    assert result.exit_code == 2 and "not one of the operator's models" in result.output
    jobs.close()
