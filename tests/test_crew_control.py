"""The orchestration's limits, in code: malformed output, repeats, budgets, prompt size, provider path.

Files-only runs (fast): the real Flow, real file tools and documents, a real knowledge store; only
the models are scripted.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from fake_openai import FakeOpenAIServer

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.context import RunLimits
from taskcrew.crew.models import Citation, CriterionCheck, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.run import RunResources, RunSettings, run_task
from taskcrew.crew.scripted import ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.trace import read_trace
from taskcrew.tools.human import ScriptedHuman

FILE = "Credit memo for your account.eml"
QUOTE = "issued credit memo CN-104"
TASK = "What did Contoso send us about CO-55120?"
CRITERION = "The answer names the document Contoso sent about CO-55120, as in the file"


def plan(steps: int = 1) -> str:
    return Plan(
        goal="Explain what Contoso sent about CO-55120",
        success_criteria=[CRITERION],
        steps=[
            PlanStep(role="file_reader", title=f"Read the documents ({i + 1})", instructions="Read.")
            for i in range(steps)
        ],
        changes_data=False,
    ).model_dump_json()


ANSWER = StepReport(
    status="done",
    summary="Contoso issued credit memo CN-104 for 150.00 USD against CO-55120.",
    sources=[Citation(source=FILE, quote=QUOTE)],
).model_dump_json()


def verifier_script() -> ScriptedLLM:
    def verdict(call: ScriptedCall) -> str:
        seen = "CN-104" in call.last_tool_result
        return Verdict(
            verified=seen,
            checks=[
                CriterionCheck(criterion=CRITERION, met=seen, source=FILE, observed="credit memo CN-104")
            ],
            reason="The file shows credit memo CN-104.",
        ).model_dump_json()

    return ScriptedLLM(
        {"verifier": [ToolCall(name="read_file", args={"path": FILE}), verdict]}, model="scripted/v"
    )


def run(
    tmp_path: Path,
    worker: ScriptedLLM,
    verifier: ScriptedLLM,
    limits: RunLimits | None = None,
    human=None,
    checkpoints=None,
):
    settings = RunSettings(
        task=TASK,
        worker_model="scripted/w",
        verifier_model="scripted/v",
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp_path / "runs",
        limits=limits or RunLimits(),
    )
    models = {"w": worker, "v": verifier}
    res = RunResources(human=human or ScriptedHuman(), scripted=models.__getitem__)
    res.checkpoints = checkpoints  # a durable run's (None: a plain run)
    return run_task(settings, res)


def test_malformed_output_is_answered_with_the_error_and_repaired(tmp_path: Path) -> None:
    worker = ScriptedLLM(
        {
            "planner": ["Sure, here is my plan: step one, read the files.", plan()],
            "file_reader": [
                ToolCall(name="open_file", args={"path": FILE}),  # unknown tool
                ToolCall(name="read_file", args={"file": FILE}),  # wrong arguments
                ToolCall(name="read_file", raw_arguments='{"path": "Credit memo'),  # bad JSON
                ToolCall(name="read_file", args={"path": FILE}),
                '{"status": "finished", "summary": "done"}',  # invalid status
                ANSWER,
            ],
        },
        model="scripted/w",
    )
    result = run(tmp_path, worker, verifier_script())
    worker.assert_complete()
    assert result.outcome == "done", result.reason
    planner_retry = worker.calls_for("planner")[1].prompt
    assert "not valid" in planner_retry and "no JSON object" in planner_retry
    reader = [c.last_tool_result for c in worker.calls_for("file_reader")]
    assert "no tool named 'open_file'" in reader[1] and "read_file" in reader[1]  # unknown tool: which exist
    assert "validation" in reader[2].lower() or "path" in reader[2].lower()  # wrong arguments
    assert "CN-104" in reader[4]
    assert "status" in worker.calls_for("file_reader")[5].prompt  # the step's JSON error came back


def test_the_same_action_three_times_gets_a_warning(tmp_path: Path) -> None:
    read = ToolCall(name="read_file", args={"path": FILE})
    worker = ScriptedLLM({"planner": [plan()], "file_reader": [read, read, read, ANSWER]}, model="scripted/w")
    result = run(tmp_path, worker, verifier_script())
    results = [c.last_tool_result for c in worker.calls_for("file_reader")]
    assert "WARNING" not in results[2] and "WARNING: you have made exactly this call 3 times" in results[3]
    assert result.outcome == "done"


def test_step_budget_ends_in_an_honest_incomplete_and_nothing_is_learned(tmp_path: Path) -> None:
    listing = [ToolCall(name="list_files", args={"offset": i}) for i in range(4)]
    gave_up = StepReport(status="failed", summary="I ran out of budget before finding the document.")
    worker = ScriptedLLM(
        {"planner": [plan()], "file_reader": [*listing, gave_up.model_dump_json()]}, model="scripted/w"
    )
    verifier = ScriptedLLM({}, model="scripted/v")
    result = run(tmp_path, worker, verifier, limits=RunLimits(max_steps=3))
    worker.assert_complete()
    assert result.outcome == "incomplete"
    assert (
        "STOP: the run's step budget (3 tool calls) is used up" in worker.calls_for("file_reader")[4].prompt
    )
    report = result.report.read_text()
    assert report.startswith("# Incomplete") and "Done" not in report.splitlines()[0]
    assert not verifier.calls  # no verification, no reflection for an unfinished run
    kinds = [e.kind for e in read_trace(result.run_dir / "trace.jsonl")]
    assert "verdict" not in kinds and "reflection" not in kinds


def test_consecutive_failures_force_a_replan_then_the_human_then_incomplete(tmp_path: Path) -> None:
    missing = [ToolCall(name="read_file", args={"path": f"missing-{i}.pdf"}) for i in range(4)]
    failed = StepReport(status="failed", summary="The file does not exist.").model_dump_json()
    worker = ScriptedLLM(
        {
            "planner": [plan(), plan(), plan(), plan()],
            "file_reader": [*missing, failed, failed, failed, failed],
        },
        model="scripted/w",
    )
    human = ScriptedHuman(answers=["Look in the scans folder.", ""])
    result = run(tmp_path, worker, ScriptedLLM({}, model="scripted/v"), human=human)
    worker.assert_complete()
    assert "STOP: 4 consecutive failed actions" in worker.calls_for("file_reader")[4].prompt
    assert result.outcome == "incomplete"
    assert len(human.questions) == 1 and "stuck" in human.questions[0]
    # the person's guidance reached the next plan and step
    assert "Look in the scans folder." in worker.calls_for("planner")[3].prompt
    assert result.state.replans == 3


def test_prompt_size_stays_flat_over_a_30_action_run(tmp_path: Path) -> None:
    reads = [ToolCall(name="read_file", args={"path": FILE, "offset": i * 10}) for i in range(10)]
    done = StepReport(
        status="done", summary="Read it.", sources=[Citation(source=FILE, quote=QUOTE)]
    ).model_dump_json()
    worker = ScriptedLLM({"planner": [plan(3)], "file_reader": [*reads, done] * 3}, model="scripted/w")
    result = run(tmp_path, worker, verifier_script(), limits=RunLimits(max_steps=40))
    assert result.outcome == "done", result.reason
    calls = [e.call for e in read_trace(result.run_dir / "trace.jsonl") if e.kind == "llm_call"]
    sizes = [c.prompt_tokens for c in calls if c.role == "file_reader"]
    assert len(sizes) == 33
    early, late = statistics.median(sizes[5:11]), statistics.median(sizes[-6:])
    print(f"\nfile_reader prompt tokens per call over 30 actions: {sizes}")
    print(f"median of calls 6-11: {early}, of the last 6: {late}, max {max(sizes)}")
    assert max(sizes) <= 8000 and statistics.median(sizes) <= 5000  # bounded by the context budget
    assert late <= early * 1.2  # 3 steps and 30 actions later, the prompt is about the same size


def test_the_real_provider_path_over_http(tmp_path: Path) -> None:
    worker = ScriptedLLM(
        {"planner": [plan()], "file_reader": [ToolCall(name="read_file", args={"path": FILE}), ANSWER]}
    )
    verifier = verifier_script()
    with FakeOpenAIServer(worker, fail_first=1) as w, FakeOpenAIServer(verifier) as v:
        settings = RunSettings(
            task=TASK,
            worker_model=f"worker-model@{w.base_url}",
            verifier_model=f"verifier-model@{v.base_url}",
            sandbox=DEFAULT_SANDBOX,
            runs_dir=tmp_path / "runs",
        )
        result = run_task(settings, RunResources(human=ScriptedHuman()))
    worker.assert_complete()
    verifier.assert_complete()
    assert result.outcome == "done", result.reason
    assert w.requests[0] == w.requests[1]  # the 429 was retried
    assert {r["model"] for r in w.requests} == {"worker-model"}
    assert any(t["function"]["name"] == "read_file" for t in w.requests[2]["tools"])
    assert result.input_tokens > 0
    calls = [e.call for e in read_trace(result.run_dir / "trace.jsonl") if e.kind == "llm_call"]
    assert all(c.tokens_from == "provider" for c in calls)


def test_guard_failure_prefixes_are_recognised() -> None:
    from taskcrew.crew.guard import is_failure

    assert is_failure("ERROR: the file does not exist")
    assert is_failure("  BLOCKED: foreign host")
    assert not is_failure("Amount 1,284.50 (no error)")


def test_a_crash_outside_the_models_still_ends_in_an_error_report(tmp_path: Path) -> None:
    failed = StepReport(status="failed", summary="Nothing found.").model_dump_json()
    worker = ScriptedLLM({"planner": [plan()] * 3, "file_reader": [failed] * 3}, model="scripted/w")
    human = ScriptedHuman()  # has no answer when the stuck run asks it: raises
    result = run(tmp_path, worker, ScriptedLLM({}, model="scripted/v"), human=human)
    assert result.outcome == "error" and "crashed" in result.reason
    assert result.report.read_text().startswith("# Error")
    assert human.questions  # it was asked, and the crash is in the report, not lost
