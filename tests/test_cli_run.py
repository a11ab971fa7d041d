"""`taskcrew run` and `taskcrew audit` through Typer's CliRunner, with an isolated home.

Models are reached over real HTTP (a local OpenAI-compatible server answering from a script), so
the CLI runs exactly the code a user's run does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from typer.testing import CliRunner, Result

from taskcrew.cli import app
from taskcrew.crew.models import Citation, CriterionCheck, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.trace import read_trace
from taskcrew.eval import kit

runner = CliRunner()
FILE = "Credit memo for your account.eml"
CRITERION = "The answer names the document Contoso sent about CO-55120, as in the file"


def _worker() -> ScriptedLLM:
    plan = Plan(
        goal="Explain what Contoso sent about CO-55120",
        success_criteria=[CRITERION],
        steps=[PlanStep(role="file_reader", title="Read Contoso's document", instructions="Read it.")],
        changes_data=False,
    )
    answer = StepReport(
        status="done",
        summary="Contoso issued credit memo CN-104 for 150.00 USD against CO-55120.",
        sources=[Citation(source=FILE, quote="issued credit memo CN-104")],
    )
    return ScriptedLLM(
        {
            "planner": [plan],
            "file_reader": [ToolCall(name="read_file", args={"path": FILE}), answer],
            "reflector": ['{"facts": []}'],
        }
    )


def _file_verifier() -> ScriptedLLM:
    verdict = Verdict(
        verified=True,
        checks=[CriterionCheck(criterion=CRITERION, met=True, source=FILE, observed="credit memo CN-104")],
        reason="The file shows credit memo CN-104.",
    )
    return ScriptedLLM({"verifier": [ToolCall(name="read_file", args={"path": FILE}), verdict]})


def test_help_is_instant_and_loads_no_heavy_library() -> None:
    code = "import sys, taskcrew.cli; print(sorted(m for m in ('crewai', 'chromadb', 'playwright') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("run", "audit", "erp", "knowledge"):
        assert command in result.output


def test_run_without_a_model_says_which_variables_to_set(isolated_home: Path) -> None:
    result = runner.invoke(app, ["run", "Enter the latest Globex invoice"])
    assert result.exit_code == 2
    assert "TASKCREW_MODEL" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "gpt-4o", "--verifier-model", "anthropic/x"], "no provider"),
        (["--model", "openai/gpt-4o", "--verifier-model", "openai/gpt-4o"], "different model"),
        (
            ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"],
            "taskcrew eval --models scripted/solver",
        ),
        (
            ["--model", "anthropic/claude-sonnet-4-5", "--verifier-model", "openai/gpt-4o"],
            "ANTHROPIC_API_KEY",
        ),
        (
            [
                "--model",
                "m@http://127.0.0.1:9/v1",
                "--verifier-model",
                "v@http://127.0.0.1:9/v1",
                "--sandbox",
                "/nope",
            ],
            "does not exist",
        ),
        (
            [
                "--model",
                "m@http://127.0.0.1:9/v1",
                "--verifier-model",
                "v@http://127.0.0.1:9/v1",
                "--erp-url",
                "http://127.0.0.2:9",
            ],
            "unreachable",
        ),
    ],
)
def test_run_errors_are_one_clear_line(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, args, message
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = runner.invoke(app, ["run", "a task", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def run_file_question(*extra: str) -> tuple[Result, str]:
    """`taskcrew run` of a file question on local model servers: the result and the worker's model
    string (the scripted worker used every step it had)."""
    worker, verifier = _worker(), _file_verifier()
    with FakeOpenAIServer(worker) as w, FakeOpenAIServer(verifier) as v:
        result = runner.invoke(
            app,
            [
                "run",
                "What did Contoso send us about CO-55120?",
                "--model",
                f"worker@{w.base_url}",
                "--verifier-model",
                f"verifier@{v.base_url}",
                "--erp-url",
                "http://127.0.0.1:0",
                "--intranet-url",
                "",
                *extra,
            ],
        )
    assert result.exit_code == 0, result.output
    worker.assert_complete()
    return result, f"worker@{w.base_url}"


def test_run_end_to_end_prints_progress_outcome_and_report(isolated_home: Path) -> None:
    result, _ = run_file_question()
    assert "Plan" in result.output and "read_file" in result.output and "verified" in result.output
    assert "CN-104" in result.output
    report = Path(result.output.split("Report: ")[1].split()[0])
    assert report.is_file() and report.parent.parent == isolated_home / "runs"

    # audit --run re-checks that run's success criteria with the verifier alone
    auditor = _file_verifier()
    with FakeOpenAIServer(auditor) as a:
        audited = runner.invoke(
            app,
            [
                "audit",
                "--run",
                str(report.parent),
                "--verifier-model",
                f"auditor@{a.base_url}",
                "--erp-url",
                "http://127.0.0.1:0",
                "--intranet-url",
                "",
            ],
        )
    assert audited.exit_code == 0, audited.output
    auditor.assert_complete()
    assert CRITERION in auditor.calls[0].prompt
    assert "verified" in audited.output


def test_audit_needs_a_claim_or_a_run(isolated_home: Path) -> None:
    result = runner.invoke(app, ["audit", "--verifier-model", "v@http://127.0.0.1:9/v1"])
    assert result.exit_code == 2 and "give a claim" in result.output
    missing = runner.invoke(
        app,
        [
            "audit",
            "--run",
            str(isolated_home),
            "--verifier-model",
            "v@http://127.0.0.1:9/v1",
            "--erp-url",
            "http://127.0.0.1:0",
            "--intranet-url",
            "",
        ],
    )
    assert missing.exit_code == 2 and "not a run folder" in missing.output


@pytest.mark.browser
def test_audit_refuses_writes_even_when_the_verifier_tries(
    isolated_home: Path, erp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERP_USERNAME", "demo")
    monkeypatch.setenv("ERP_PASSWORD", "demo123")
    claim = "Bill BILL-0005 (Hooli Cloud Services) is marked paid"

    class PayIt:  # a verifier that tries to make the claim true instead of checking it
        def __init__(self) -> None:
            self.opened = False

        def __call__(self, call: ScriptedCall):
            text = call.last_tool_result
            if not self.opened:
                self.opened = True
                return kit.navigate(f"{kit.erp(call)}/bills/BILL-0005")
            if step := kit.login(text):
                return step
            if "Refused" in text or "read-only" in text:
                return kit.verdict(
                    [(claim, False, kit.page_url(text), "could not pay it: read-only")], "not paid"
                )
            return kit.act({"action": "click", "index": kit.button(kit.elements(text), "paid").index})

    auditor = ScriptedLLM({"verifier": [Loop(policy=PayIt())]})
    with FakeOpenAIServer(auditor) as a:
        result = runner.invoke(
            app,
            [
                "audit",
                claim,
                "--verifier-model",
                f"auditor@{a.base_url}",
                "--erp-url",
                erp.url,
                "--intranet-url",
                "",
            ],
        )
    assert result.exit_code == 4, result.output
    assert "not verified" in result.output
    assert erp.state().bill("BILL-0005").status == "unpaid"
    run_dir = next((isolated_home / "runs").iterdir())
    decisions = [e.decision for e in read_trace(run_dir / "trace.jsonl") if e.kind == "policy"]
    assert "read_only_refused" in decisions


def test_an_audit_whose_verifier_cannot_be_reached_is_an_error_not_a_no(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKCREW_MODEL_RETRIES", "0")
    result = runner.invoke(
        app,
        ["audit", "Bill INV-1 is entered", "--model", "v@http://127.0.0.1:9/v1",
         "--erp-url", "http://127.0.0.1:0", "--intranet-url", ""],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "error:" in result.output and "Verifier could not finish" in result.output
    assert "not verified" not in result.output and "could not finish: Verifier" not in result.output
