"""Arguments a mid-size model gets right: lenient coercion, one-line corrected calls, relaxed schemas."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from taskcrew.tools.base import openai_parameters, validate_args


class Act(BaseModel):
    action: Literal["click", "type"]
    index: int


class Args(BaseModel):
    actions: list[Act] = Field(min_length=1, description="what to do")
    observation_id: int | None = Field(default=None, description="the observation")
    clear: bool = True


def test_lenient_coercion() -> None:
    bare = validate_args("act", Args, {"actions": {"action": "click", "index": "3"}, "observation_id": None})
    assert bare == {"actions": [{"action": "click", "index": "3"}]}  # a list now; "3" is pydantic's to coerce
    assert Args.model_validate(bare).actions[0].index == 3
    wrapped = validate_args(
        "act", Args, {"args": {"actions": [{"action": "type", "index": 2}], "clear": "false"}}
    )
    assert isinstance(wrapped, dict) and Args.model_validate(wrapped).clear is False
    assert validate_args("act", Args, '{"actions": [{"action": "click", "index": 1}]}') == {
        "actions": [{"action": "click", "index": 1}]
    }


def test_a_wrong_call_gets_the_corrected_call_in_one_line() -> None:
    message = validate_args("act", Args, {"acts": [], "clear": "maybe"})
    assert isinstance(message, str) and "\n" not in message
    assert message.startswith("ERROR: wrong arguments for act: actions: Field required; clear:")
    assert "(you sent 'maybe')" in message and "Unknown argument(s) ignored: acts." in message
    assert 'Call it like this: act({"actions": "<list: what to do>", "clear": "<bool: value>"})' in message
    assert message.endswith("Optional: observation_id.")


def test_only_truly_required_parameters_are_required() -> None:
    strict = {
        "properties": {"actions": {}, "observation_id": {}, "clear": {}},
        "required": ["actions", "observation_id", "clear"],
    }
    relaxed = openai_parameters(strict, Args)
    assert relaxed["required"] == ["actions"] and relaxed["properties"]["clear"]["default"] is True


def _required_paths(strict: object, loose: object, path: str = "") -> list[str]:
    """Parameters the model is told are required although the tool gives them a default."""
    wrong: list[str] = []
    if isinstance(strict, dict) and isinstance(loose, dict):
        props = strict.get("properties")
        if isinstance(props, dict):
            truly = set(loose.get("required", []))
            wrong += [f"{path}{k}" for k in strict.get("required", []) if k not in truly]
            for k, v in props.items():
                wrong += _required_paths(v, loose.get("properties", {}).get(k, {}), f"{path}{k}.")
        if "items" in strict:
            wrong += _required_paths(strict["items"], loose.get("items", {}), f"{path}[]")
        for key in ("anyOf", "oneOf"):
            for i, (s, lo) in enumerate(
                zip(strict.get(key, []), loose.get(key, loose.get("anyOf", [])), strict=False)
            ):
                wrong += _required_paths(s, lo, f"{path}<{i}>")
    return wrong


def _inline(schema: dict, defs: dict | None = None) -> object:  # type: ignore[type-arg]
    defs = schema.get("$defs", {}) if defs is None else defs
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].split("/")[-1]], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}  # type: ignore[arg-type]
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]  # type: ignore[arg-type]
    return schema


def test_every_non_browser_tool_tells_the_model_only_its_truly_required_parameters(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from crewai.utilities.agent_utils import convert_tools_to_openai_schema

    from taskcrew.crew.guard import Budget, GuardedTool
    from taskcrew.crew.llm import relax_tool_schemas
    from taskcrew.crew.toolbox import Toolbox
    from taskcrew.tools.human import ScriptedHuman
    from taskcrew.tools.research.crew_tools import PythonTool, WebFetchTool
    from taskcrew.tools.research.python_sandbox import PythonSandbox
    from taskcrew.tools.research.web import WebFetcher

    research = [WebFetchTool(WebFetcher(lambda url: None)), PythonTool(PythonSandbox())]
    toolbox = Toolbox(sandbox=tmp_path, human=ScriptedHuman(), notes=[], research_tools=research)
    budget = Budget(max_steps=10, failure_budget=3)
    checked, bites = 0, []
    for role in ("file_reader", "browser_operator", "verifier"):
        tools = [
            GuardedTool.wrap(t, role=role, budget=budget, tracer=None, redact=str)
            for t in toolbox.tools_for(role)
        ]
        strict, _, _ = convert_tools_to_openai_schema(tools)
        sent = relax_tool_schemas(strict, SimpleNamespace(tools=tools))
        bites += [
            _required_paths(s["function"]["parameters"], _inline(t.args_schema.model_json_schema()))
            for t, s in zip(tools, strict, strict=True)
        ]
        for tool, spec in zip(tools, sent, strict=True):
            loose = _inline(tool.args_schema.model_json_schema())
            wrong = _required_paths(spec["function"]["parameters"], loose)
            assert not wrong, f"{role}: {tool.name} marks defaulted parameters required: {wrong}"
            checked += 1
    assert checked >= 12
    assert any(bites), "crewAI's strict schema marks defaults required: the check must see that"
