"""Realistic scripted models: each habit really changes what reaches crewAI, and the crew copes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from taskcrew.crew.scripted import ToolCall
from taskcrew.eval.solvers.realistic import HabitLLM
from taskcrew.eval.sweep import SweepSettings, run_sweep

AGENT = SimpleNamespace(role="File reader")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {
                "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "default": 0}}
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "note", "parameters": {"properties": {"text": {"type": "string"}}}},
    },
]
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}]


def reply(habit: str, step: object) -> object:
    llm = HabitLLM(script=[step], model="scripted/x", habit=habit)
    return llm.call(MESSAGES, tools=TOOLS, from_agent=AGENT)


def args(calls: object, i: int = 0) -> dict[str, object]:
    assert isinstance(calls, list)
    return json.loads(calls[i]["function"]["arguments"])


def test_each_habit_changes_the_answer_the_way_a_real_model_would() -> None:
    read = ToolCall(name="read_file", args={"path": "a.eml", "offset": 0})
    assert args(reply("omit", read)) == {"path": "a.eml"}
    assert args(reply("strings", ToolCall(name="read_file", args={"path": "a", "offset": 10}))) == {
        "path": "a",
        "offset": "10",
    }
    text = reply("textcall", read)
    assert isinstance(text, str) and json.loads(text.split("\n", 1)[1])["name"] == "read_file"
    parallel = reply("parallel", read)
    assert [c["function"]["name"] for c in parallel] == ["note", "read_file"]  # type: ignore[index]
    assert reply("prose", read)[0]["prose"].startswith("Next I will call read_file")  # type: ignore[index]
    fenced = reply("fenced", '{"status": "done"}')
    assert isinstance(fenced, str) and '```json\n{"status": "done"}\n```' in fenced
    wrong = HabitLLM(script=[read], model="scripted/x", habit="wrongtool")
    first = wrong.call(MESSAGES, tools=TOOLS, from_agent=AGENT)
    assert first[0]["function"]["name"] == "browser_act"  # a tool the role lacks ...
    later = [*MESSAGES, {"role": "assistant", "tool_calls": first}, {"role": "tool", "content": "ERROR"}]
    assert (
        wrong.call(later, tools=TOOLS, from_agent=AGENT)[0]["function"]["name"] == "read_file"
    )  # ... then the right one
    wrong.assert_complete()


@pytest.mark.timeout(300)
def test_realistic_habits_still_answer_the_research_case(tmp_path: Path, eval_knowledge_seed: Path) -> None:
    habits = ["textcall", "wrongtool", "parallel", "fenced"]
    report = run_sweep(
        SweepSettings(
            models=[f"scripted/realistic-{h}" for h in habits],
            case_pattern="research-initech-terms",
            out_dir=tmp_path / "eval",
            knowledge_seed=eval_knowledge_seed,
        )
    )
    assert {r.model: (r.outcome, r.passed) for r in report.runs} == {
        f"scripted/realistic-{h}": ("done", True) for h in habits
    }
