"""The real Flow, real file tools, real sandbox documents; only the models are scripted."""

from __future__ import annotations

import re
from pathlib import Path

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.models import Citation, CriterionCheck, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.run import RunResources, RunSettings, run_task
from taskcrew.crew.scripted import ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.trace import read_trace
from taskcrew.tools.human import ScriptedHuman

TASK = "Contoso sent us something about bill CO-55120. What is it and what does it change?"

PLAN = Plan(
    goal="Explain what Contoso sent about CO-55120",
    success_criteria=[
        "The answer names the document Contoso sent about CO-55120 and its amount, as in the file"
    ],
    steps=[
        PlanStep(
            role="file_reader",
            title="Find and read Contoso's document about CO-55120",
            instructions="Search.",
        )
    ],
    changes_data=False,
)


def _first_hit(call: ScriptedCall) -> ToolCall:
    match = re.search(r"^- (.+?) \[", call.last_tool_result, re.MULTILINE)
    assert match, call.last_tool_result
    return ToolCall(name="read_file", args={"path": match.group(1)})


def _answer(call: ScriptedCall) -> str:
    text = call.last_tool_result
    assert "CN-104" in text and "150.00" in text
    return StepReport(
        status="done",
        summary="Contoso issued credit note CN-104 for 150.00 USD against invoice CO-55120.",
        data={"document": "CN-104", "amount": "-150.00", "applies_to": "CO-55120"},
        sources=[Citation(source="Credit memo for your account.eml", quote="issued credit memo CN-104")],
    ).model_dump_json()


def _verdict(path_holder: list[str]):
    def decide(call: ScriptedCall) -> str:
        seen = call.last_tool_result
        return Verdict(
            verified="CN-104" in seen,
            checks=[
                CriterionCheck(
                    criterion=PLAN.success_criteria[0],
                    met="CN-104" in seen,
                    source=path_holder[0],
                    observed="credit memo CN-104, $150.00 applied against CO-55120",
                )
            ],
            reason="The file shows credit memo CN-104 for 150.00 against CO-55120.",
        ).model_dump_json()

    return decide


def _verifier_reads(path_holder: list[str]):
    def read(call: ScriptedCall) -> ToolCall:
        path_holder.append("Credit memo for your account.eml")
        return ToolCall(name="read_file", args={"path": path_holder[0]})

    return read


def test_read_only_question_answered_verified_and_reported(tmp_path: Path) -> None:
    path: list[str] = []
    worker = ScriptedLLM(
        {
            "planner": [PLAN.model_dump_json()],
            "file_reader": [ToolCall(name="search_files", args={"query": "CO-55120"}), _first_hit, _answer],
        },
        model="scripted/worker",
    )
    verifier = ScriptedLLM({"verifier": [_verifier_reads(path), _verdict(path)]}, model="scripted/verifier")
    models = {"worker": worker, "verifier": verifier}
    settings = RunSettings(
        task=TASK,
        worker_model="scripted/worker",
        verifier_model="scripted/verifier",
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp_path / "runs",
    )
    result = run_task(settings, RunResources(human=ScriptedHuman(), scripted=models.__getitem__))

    worker.assert_complete()
    verifier.assert_complete()
    assert result.outcome == "done", result.reason
    assert "CN-104" in result.answer
    report = result.report.read_text()
    assert "Done, and independently verified" in report
    assert "Credit memo for your account.eml" in report
    kinds = [e.kind for e in read_trace(result.run_dir / "trace.jsonl")]
    for kind in ("run_started", "plan", "llm_call", "tool_call", "step", "verdict", "run_finished"):
        assert kind in kinds
    # the verifier saw only read-only tools
    assert set(verifier.calls[0].tools) <= {
        "list_files",
        "read_file",
        "search_files",
        "parse_amount",
        "compute_due_date",
        "compare_values",
        "note",  # its own working notes: they change nothing outside the run
    }
    # planner got no tools; the file reader got its tools and run tools
    assert worker.calls_for("planner")[0].tools == []
    assert {"read_file", "note", "ask_user"} <= set(worker.calls_for("file_reader")[0].tools)
