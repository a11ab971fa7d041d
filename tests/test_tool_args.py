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
