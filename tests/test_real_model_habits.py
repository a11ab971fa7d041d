"""Habits of real models over the real OpenAI-compatible path: parallel calls, text beside calls,
a tool call written as text, loose argument types. Files-only runs (fast); only the model is scripted.
"""

from __future__ import annotations

from pathlib import Path

from fake_openai import FakeOpenAIServer
from test_crew_control import ANSWER, FILE, TASK, plan, verifier_script

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.run import RunResources, RunSettings, run_task
from taskcrew.crew.scripted import Said, ScriptedLLM, ToolCall
from taskcrew.crew.trace import read_trace
from taskcrew.tools.human import ScriptedHuman


def run_over_http(tmp_path: Path, worker: ScriptedLLM) -> tuple[object, FakeOpenAIServer]:
    verifier = verifier_script()
    with FakeOpenAIServer(worker) as w, FakeOpenAIServer(verifier) as v:
        settings = RunSettings(
            task=TASK,
            worker_model=f"worker-model@{w.base_url}",
            verifier_model=f"verifier-model@{v.base_url}",
            sandbox=DEFAULT_SANDBOX,
            runs_dir=tmp_path / "runs",
        )
        result = run_task(settings, RunResources(human=ScriptedHuman()))
    worker.assert_complete()
    return result, w


def test_parallel_calls_with_text_beside_them_reach_the_model_in_full(tmp_path: Path) -> None:
    said = Said(
        text="Two sources to compare; CO-55120 is the order number.",
        calls=[
            ToolCall(name="search_files", args={"query": "CO-55120"}),
            ToolCall(name="read_file", args={"path": FILE}),
        ],
    )
    worker = ScriptedLLM({"planner": [plan()], "file_reader": [said, ANSWER]})
    result, server = run_over_http(tmp_path, worker)
    assert result.outcome == "done", result.reason
    second = next(r for r in server.requests if any(m.get("role") == "tool" for m in r["messages"]))
    assistant = next(m for m in second["messages"] if m.get("role") == "assistant")
    assert assistant["content"] == said.text  # crewAI dropped it; the history has it back
    results = [m["content"] for m in second["messages"] if m.get("role") == "tool"]
    assert len(results) == 2 and not any("shortened" in r for r in results)
    assert "CN-104" in results[1]
    calls = [e.call for e in read_trace(result.run_dir / "trace.jsonl") if e.kind == "llm_call"]
    assert any(c.text_preview == said.text for c in calls)  # and it is in the trace


def test_a_tool_call_written_as_text_and_numbers_as_strings_still_work(tmp_path: Path) -> None:
    as_text = (
        f'I will open the file now: {{"name": "read_file", "arguments": {{"path": "{FILE}", "offset": "0"}}}}'
    )
    worker = ScriptedLLM({"planner": [plan()], "file_reader": [as_text, ANSWER]})
    result, server = run_over_http(tmp_path, worker)
    assert result.outcome == "done", result.reason
    results = [m["content"] for r in server.requests for m in r["messages"] if m.get("role") == "tool"]
    assert any("CN-104" in r for r in results)


def test_wrong_arguments_get_the_corrected_call_in_one_line(tmp_path: Path) -> None:
    calls = [
        ToolCall(name="read_file", args={"file": FILE, "offset": "ten"}),  # wrong name, wrong type
        ToolCall(name="read_file", args={"args": {"path": FILE, "offset": None}}),  # wrapped, null optional
    ]
    worker = ScriptedLLM({"planner": [plan()], "file_reader": [*calls, ANSWER]})
    result, server = run_over_http(tmp_path, worker)
    assert result.outcome == "done", result.reason
    results = [m["content"] for m in server.requests[-1]["messages"] if m.get("role") == "tool"]
    first = results[0]
    assert first.startswith("ERROR: wrong arguments for read_file:") and len(first.splitlines()) == 1
    assert (
        "path: Field required" in first and "offset" in first and "Unknown argument(s) ignored: file" in first
    )
    assert 'read_file({"path": "<str: file path exactly as list_files shows it>"' in first
    assert "CN-104" in results[1]
    params = {t["function"]["name"]: t["function"]["parameters"] for t in server.requests[1]["tools"]}
    assert (
        params["read_file"]["required"] == ["path"]
        and params["read_file"]["properties"]["offset"]["default"] == 0
    )


def test_a_tool_the_role_lacks_then_a_fenced_answer(tmp_path: Path) -> None:
    lacking = ToolCall(name="browser_act", args={"actions": [{"action": "navigate", "url": "http://x"}]})
    fenced = f"Here is what I found.\n```json\n{ANSWER}\n```\nAnything else?"
    worker = ScriptedLLM(
        {
            "planner": [plan()],
            "file_reader": [lacking, ToolCall(name="read_file", args={"path": FILE}), fenced],
        }
    )
    result, server = run_over_http(tmp_path, worker)
    assert result.outcome == "done", result.reason
    results = [m["content"] for m in server.requests[-1]["messages"] if m.get("role") == "tool"]
    assert results[0].startswith("ERROR: there is no tool named 'browser_act' in this step. Your tools are:")
    assert "read_file" in results[0]
