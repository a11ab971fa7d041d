"""The one result type every tool returns.

Tools return a typed ``ToolResult``; it becomes text only at the CrewAI edge (``to_text``).
Recoverable failures (a 503, a validation message, a blocked URL) are ``ok=False`` results the
model can react to. Programming errors raise.
"""

from __future__ import annotations

import functools
import json
from typing import Any, get_origin

from pydantic import BaseModel, ValidationError

MAX_TEXT = 6000


class ToolResult(BaseModel):
    ok: bool
    data: Any = None
    error: str | None = None

    @classmethod
    def success(cls, data: Any = None) -> ToolResult:
        return cls(ok=True, data=data)

    @classmethod
    def failure(cls, error: str, data: Any = None) -> ToolResult:
        return cls(ok=False, error=error, data=data)

    def to_text(self, limit: int = MAX_TEXT) -> str:
        """Render for a model: plain text, bounded in size."""
        if self.ok:
            body = _render(self.data)
            text = body if body else "OK"
        else:
            text = f"ERROR: {self.error}"
            if self.data is not None:
                text += "\n" + _render(self.data)
        if len(text) > limit:
            text = text[: limit - 40] + f"\n… [truncated, {len(text) - limit + 40} more chars]"
        return text


def _render(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, BaseModel):
        render = getattr(data, "render", None)
        if callable(render):
            return str(render())
        return data.model_dump_json(indent=1, exclude_none=True)
    try:
        return json.dumps(data, indent=1, default=str, ensure_ascii=False)
    except TypeError:
        return str(data)


# --- Arguments a mid-size model gets right -----------------------------------------------------
# Models send numbers as strings, null for an optional field, a bare object where a list is wanted,
# or wrap the arguments in {"args": ...}. Those are coerced; anything else gets one line that says
# what was wrong and the corrected call, with the model's own good values filled in.

_WRAPPERS = ("args", "arguments", "input", "parameters", "kwargs")


def _is_list_field(info: Any) -> bool:
    return get_origin(info.annotation) is list or info.annotation is list


def coerce_args(schema: type[BaseModel], raw: Any) -> dict[str, Any]:
    """Lenient pre-processing of a model's tool arguments (validation proper stays pydantic's)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {}
    args = dict(raw) if isinstance(raw, dict) else {}
    fields = schema.model_fields
    if len(args) == 1:
        ((key, value),) = args.items()
        if key in _WRAPPERS and key not in fields and isinstance(value, dict):
            args = dict(value)
    out: dict[str, Any] = {}
    for key, value in args.items():
        info = fields.get(key)
        if info is None:
            out[key] = value
            continue
        if value is None and not info.is_required():
            continue  # null for an optional field: use its default
        if _is_list_field(info) and not isinstance(value, list):
            value = [value]  # a bare item where a list is wanted
        out[key] = value
    return out


def _placeholder(info: Any) -> Any:
    annotation = getattr(info.annotation, "__name__", str(info.annotation))
    return f"<{annotation}: {info.description or 'value'}>"


def corrected_call(name: str, schema: type[BaseModel], args: dict[str, Any], error: ValidationError) -> str:
    """One line: what was wrong, and the call that would work (good values kept, the rest shown as slots)."""
    wrong = {str(e["loc"][0]) for e in error.errors() if e["loc"]}
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
        + (f" (you sent {e['input']!r:.60})" if e["type"] != "missing" else "")
        for e in error.errors()[:5]
    )
    example: dict[str, Any] = {}
    for key, info in schema.model_fields.items():
        if key in args and key not in wrong:
            example[key] = args[key]
        elif info.is_required() or key in wrong:
            example[key] = _placeholder(info)
    unknown = sorted(set(args) - set(schema.model_fields))
    extra = f" Unknown argument(s) ignored: {', '.join(unknown)}." if unknown else ""
    optional = [k for k, i in schema.model_fields.items() if not i.is_required() and k not in example]
    opt = f" Optional: {', '.join(optional)}." if optional else ""
    return (
        f"ERROR: wrong arguments for {name}: {problems}.{extra} Call it like this: "
        f"{name}({json.dumps(example, ensure_ascii=False, default=str)}){opt}"
    )


def validate_args(name: str, schema: type[BaseModel], raw: Any) -> dict[str, Any] | str:
    """Coerced, validated keyword arguments, or the one-line corrected-call message."""
    args = coerce_args(schema, raw)
    try:
        schema.model_validate(args)
    except ValidationError as exc:
        return corrected_call(name, schema, args, exc)
    return {k: v for k, v in args.items() if k in schema.model_fields}


def openai_parameters(schema: dict[str, Any], args_schema: type[BaseModel]) -> dict[str, Any]:
    """A tool's JSON schema with only the truly required fields required, and defaults shown."""
    params = dict(schema)
    properties = {k: dict(v) for k, v in (params.get("properties") or {}).items()}
    required = []
    for key, info in args_schema.model_fields.items():
        if key not in properties:
            continue
        if info.is_required():
            required.append(key)
        elif info.default is not None and isinstance(info.default, (str, int, float, bool)):
            properties[key]["default"] = info.default
    params["properties"] = properties
    params["required"] = required
    return _relax_nested(params, _own_definitions(args_schema))


@functools.lru_cache(maxsize=256)
def _own_definitions(args_schema: type[BaseModel]) -> dict[str, Any]:
    """A tool model's own JSON schema definitions, made once per model (not once per tool per model
    call, ~1 ms each: pydantic does not keep them); read only."""
    defs: dict[str, Any] = args_schema.model_json_schema().get("$defs", {})
    return defs


def _relax_nested(node: Any, own: dict[str, Any]) -> Any:
    """Nested models (a list of actions) keep only their truly required fields required too: each
    object schema named like one of the model's own definitions takes that definition's list; a
    constant (the tag of a discriminated union) stays required."""
    if isinstance(node, list):
        return [_relax_nested(x, own) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _relax_nested(v, own) for k, v in node.items()}
    title = out.get("title")
    if isinstance(title, str) and title in own and isinstance(out.get("properties"), dict):
        props = out["properties"]
        tags = [k for k, v in props.items() if isinstance(v, dict) and ("const" in v or k == "action")]
        truly = own[title].get("required", [])
        out["required"] = [k for k in props if k in truly or k in tags]
    return out
