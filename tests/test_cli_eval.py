"""`taskcrew eval` through Typer's CliRunner, with an isolated TASKCREW_HOME."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskcrew.cli import app

runner = CliRunner()


@pytest.mark.timeout(240)
def test_eval_runs_the_chosen_cases_and_writes_the_results(isolated_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    result = runner.invoke(
        app, ["eval", "--models", "scripted/solver", "--cases", "research-sum-of-squares", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "1 case(s) × 1 model(s) × 1 repeat(s) = 1 run(s)" in result.output
    assert "pass scripted/solver · research-sum-of-squares: done" in result.output
    assert "Totals per model" in result.output
    assert "scripted/solver (verifier scripted/auditor): 1/1 passed; pass^1 1.00;" in result.output
    assert "Traceback" not in result.output
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    [run] = data["runs"]
    assert (run["case_id"], run["outcome"], run["passed"]) == ("research-sum-of-squares", "done", True)
    assert data["totals"][0]["pass_k"] == [{"k": 1, "value": 1.0}]
    assert "| research-sum-of-squares | 1/1 | done |" in (out / "results.md").read_text(encoding="utf-8")
    assert (Path(run["run_dir"]) / "report.md").is_file() and Path(run["run_dir"]).parent == out / "runs"
    listed = runner.invoke(app, ["runs", "list", "--runs-dir", str(out / "runs")])
    assert listed.exit_code == 0 and "What is the sum of squares" in listed.output


def _fails(args: list[str], *expected: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for text in expected:
        assert text in result.output, result.output
    return result.output


def test_no_model_configured_is_one_clear_line(isolated_home: Path) -> None:
    output = _fails(["eval"], "error: no model configured", "hint: pass --models")
    assert output.count("\n") == 2


def test_model_errors_are_caught_before_any_run(isolated_home: Path, tmp_path: Path) -> None:
    out = ["--out", str(tmp_path / "never")]
    _fails(
        ["eval", "--models", "scripted/auditor", "--verifier-model", "scripted/auditor", *out],
        "different model",
    )
    _fails(["eval", "--models", "scripted/genius", *out], "unknown scripted model 'scripted/genius'")
    _fails(["eval", "--models", "gpt-4o", *out], "has no provider")
    _fails(["eval", "--models", "ollama/llama3.1", *out], "no verifier model for ollama/llama3.1")
    _fails(["eval", "--models", "openai/gpt-4o", *out], "needs an API key: set OPENAI_API_KEY")
    _fails(
        ["eval", "--models", "ollama/llama3.1", "--verifier-model", "anthropic/claude-sonnet-4-5", *out],
        "needs an API key: set ANTHROPIC_API_KEY",
    )
    assert not (tmp_path / "never").exists()


def test_bad_cases_and_option_values_are_refused(isolated_home: Path, tmp_path: Path) -> None:
    _fails(
        ["eval", "--models", "scripted/solver", "--cases", "no-such-*", "--out", str(tmp_path)],
        "no case matches 'no-such-*'",
        "taskcrew eval --list",
    )
    _fails(["eval", "--models", "scripted/solver", "--repeats", "0"], "--repeats")
    _fails(["eval", "--models", "scripted/solver", "--parallel", "zero"], "--parallel")


def test_a_missing_sandbox_is_named(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKCREW_SANDBOX", str(tmp_path / "nowhere"))
    _fails(
        ["eval", "--models", "scripted/solver", "--out", str(tmp_path)], "sandbox folder", "does not exist"
    )


def test_help_lists_the_commands_without_importing_crewai() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "eval" in result.output and "runs" in result.output
    code = (
        "import sys, taskcrew.cli; assert 'crewai' not in sys.modules and 'rich.progress' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    options = runner.invoke(app, ["eval", "--help"])
    for option in (
        "--models",
        "--verifier-model",
        "--cases",
        "--repeats",
        "--parallel",
        "--out",
        "--no-chaos",
    ):
        assert option in options.output
