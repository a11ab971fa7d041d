"""Scripted models with the habits of real ones: the solver's brain, answered the way real models answer.

Each habit changes how the clean solver's replies reach crewAI, not what the solver decides:

- ``parallel``: a ``note`` call sent beside each tool call, in the same turn;
- ``prose``: text written beside every tool call ("Now I will ...");
- ``omit``: optional arguments left out where the model would have sent the default;
- ``strings``: every number sent as a string;
- ``fenced``: the final JSON answer wrapped in prose and a code fence;
- ``textcall``: a tool call written as JSON text in the answer instead of a real call;
- ``offbyone``: the first indexed browser action of a step aimed one element too far, then corrected;
- ``stale``: a browser action sent with an older observation id, then resent with the right one;
- ``wrongtool``: the first call of a step made to a tool the role does not have, then the right one;
- ``forget``: after a few calls the model re-reads what it saw first (a detail needed again).

A *detour* is a wrong call made first; the clean reply is held back and sent on the next turn, so the
brain never sees the detour's result (as a model that reads the error and then does the right thing).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

from crewai.llms.base_llm import BaseLLM
from pydantic import PrivateAttr

from taskcrew.crew.scripted import ScriptedLLM

Habit = Literal[
    "parallel", "prose", "omit", "strings", "fenced", "textcall", "offbyone", "stale", "wrongtool", "forget"
]
HABITS: tuple[str, ...] = get_args(Habit)
FORGET_AFTER = 5  # calls into a step before the model re-reads its first source
_OBSERVATION = re.compile(r"observation #(\d+)|\[observation (\d+)\]|Observation #?(\d+)")


def _args(call: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(call["function"]["arguments"] or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _with_args(call: dict[str, Any], args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**call, **extra, "function": {**call["function"], "arguments": json.dumps(args)}}


def _stringify(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return [_stringify(v) for v in value]
    if isinstance(value, dict):
        return {k: _stringify(v) for k, v in value.items()}
    return value


def _defaults(tools: Any) -> dict[str, dict[str, Any]]:
    """Tool name → {parameter: default} from the schemas the model was sent."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or []:
        fn = tool.get("function", {}) if isinstance(tool, dict) else {}
        props = (fn.get("parameters") or {}).get("properties") or {}
        out[str(fn.get("name"))] = {k: v["default"] for k, v in props.items() if "default" in v}
    return out


def _first_user_turn(messages: list[dict[str, Any]]) -> bool:
    return not any(m.get("role") in ("assistant", "tool") for m in messages)


class HabitLLM(ScriptedLLM):
    """A ScriptedLLM (the solver's brain) whose answers carry one habit of real models."""

    habit: str = "prose"
    _held: dict[str, Any] = PrivateAttr(default_factory=dict)  # role → the clean reply held back
    _step_calls: dict[str, int] = PrivateAttr(default_factory=dict)
    _first_read: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    _detoured: set[str] = PrivateAttr(default_factory=set)

    def call(
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        from taskcrew.crew.scripted import role_key

        role = role_key(from_agent)
        msgs = [messages] if isinstance(messages, str) else list(messages)
        if _first_user_turn([m for m in msgs if isinstance(m, dict)]):
            self._step_calls[role] = 0
            self._detoured.discard(role)
            self._first_read.pop(role, None)
        self._step_calls[role] = self._step_calls.get(role, 0) + 1
        if role in self._held:
            return self._held.pop(role)
        reply = super().call(
            messages, tools, callbacks, available_functions, from_task, from_agent, response_model
        )
        names = {str(t.get("function", {}).get("name")) for t in tools or [] if isinstance(t, dict)}
        return self._shape(role, reply, tools, names, msgs)

    # -- the habits ---------------------------------------------------------------------------
    def _shape(self, role: str, reply: Any, tools: Any, names: set[str], msgs: list[Any]) -> Any:
        habit = self.habit
        if isinstance(reply, str):
            if habit == "fenced" and reply.lstrip().startswith("{"):
                return f"Here is my answer.\n```json\n{reply}\n```\nLet me know if anything is unclear."
            return reply
        if not isinstance(reply, list) or not reply:
            return reply
        calls: list[dict[str, Any]] = reply
        if role not in self._first_read and calls[0]["function"]["name"] not in ("note", "browser_act"):
            self._first_read[role] = dict(calls[0])
        if habit == "parallel" and "note" in names:
            note = {
                "id": f"{calls[0]['id']}_note",
                "type": "function",
                "function": {
                    "name": "note",
                    "arguments": json.dumps({"text": f"working: {_summary(calls)}"}),
                },
            }
            return [note, *calls]
        if habit == "prose":
            calls[0]["prose"] = f"Next I will call {_summary(calls)} and read what comes back."
            return calls
        if habit == "omit":
            defaults = _defaults(tools)
            return [
                _with_args(
                    c,
                    {
                        k: v
                        for k, v in _args(c).items()
                        if k not in defaults.get(c["function"]["name"], {})
                        or defaults[c["function"]["name"]][k] != v
                    },
                )
                for c in calls
            ]
        if habit == "strings":
            return [_with_args(c, _stringify(_args(c))) for c in calls]
        if habit == "textcall" and len(calls) == 1:
            c = calls[0]
            return f"I will use {c['function']['name']} now.\n" + json.dumps(
                {"name": c["function"]["name"], "arguments": _args(c)}
            )
        if role in self._detoured:
            return calls
        detour = self._detour(role, calls, names, msgs)
        if detour is not None:
            self._detoured.add(role)
            self._held[role] = calls
            return detour
        return calls

    def _detour(
        self, role: str, calls: list[dict[str, Any]], names: set[str], msgs: list[Any]
    ) -> list[dict[str, Any]] | None:
        habit, first = self.habit, calls[0]
        if habit == "wrongtool":
            missing = next(n for n in ("browser_act", "read_file", "write_file") if n not in names)
            return [_with_args(first, {"path": "notes.txt"}, id=f"{first['id']}_x") | _named(missing)]
        if first["function"]["name"] != "browser_act":
            if (
                habit == "forget"
                and self._step_calls.get(role, 0) > FORGET_AFTER
                and role in self._first_read
            ):
                again = self._first_read[role]
                return [{**again, "id": f"{first['id']}_again"}]
            return None
        args = _args(first)
        raw_actions = args.get("actions")
        actions: list[Any] = raw_actions if isinstance(raw_actions, list) else []
        if habit == "offbyone":
            indexed = [
                a for a in actions if isinstance(a, dict) and a.get("action") == "type" and "index" in a
            ]
            if not indexed:
                return None
            wrong = [dict(indexed[0], index=int(indexed[0]["index"]) + 1)]
            return [_with_args(first, {**args, "actions": wrong}, id=f"{first['id']}_off")]
        if habit == "stale":
            seen = [
                int(n)
                for m in msgs
                for g in _OBSERVATION.findall(str(m.get("content") or ""))
                for n in g
                if n
            ]
            if not seen or max(seen) < 2 or not any("index" in a for a in actions if isinstance(a, dict)):
                return None
            return [_with_args(first, {**args, "observation_id": max(seen) - 1}, id=f"{first['id']}_old")]
        return None


def _named(name: str) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": json.dumps({"path": "notes.txt"})}}


def _summary(calls: list[dict[str, Any]]) -> str:
    return ", ".join(c["function"]["name"] for c in calls)


def habit_llm(brain: Any, habit: str, model: str) -> BaseLLM:
    from taskcrew.eval.solvers.base import MAX_CALLS

    if habit not in HABITS:
        raise ValueError(f"unknown habit {habit!r}: one of {', '.join(HABITS)}")
    return HabitLLM(script=[brain] * MAX_CALLS, model=model, habit=habit)
