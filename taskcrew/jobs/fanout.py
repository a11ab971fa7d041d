"""A batch task planned once, then one job per item.

    taskcrew submit --batch "Enter every invoice in the inbox that is not yet in the ERP."

The batch job runs on a worker like any job: one planner call (``plan_batch``) reads the task and a
listing of the sandbox's files and answers a template with ``{item}`` and the items. The listing is
framed as untrusted data (names and subjects outsiders wrote), and the answer is not trusted either:
each child carries where its task came from and never runs on the batch's ``--auto-approve``
(``batch.plan_children``). The plan is saved in the job's checkpoint before any child is submitted,
so a leg killed after planning fans out the same plan without asking the model again; children get
ids derived from the batch job, the plan's generation and the item, and are submitted in one
transaction with the batch set waiting for them (``Jobs.fan_out``). Each child checks the batch's
conditions for its own item (e.g. "not yet in the ERP": it reads the bills list first and ends
``nothing_to_do``; intents keep a resumed submission from sending twice).
"""

from __future__ import annotations

import email
import json
import re
from email import policy
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

MAX_ITEMS = 200
MAX_SOURCES = 300
_SKIP_SUFFIXES = {".py", ".pyc", ".yaml", ".yml"}


class BatchPlanError(ValueError):
    """The planner's answer is not a usable batch plan."""


class BatchPlan(BaseModel):
    template: str = Field(min_length=5)
    items: list[str] = Field(max_length=MAX_ITEMS)

    @field_validator("template")
    @classmethod
    def _one_placeholder(cls, value: str) -> str:
        if value.count("{item}") != 1:
            raise ValueError("the template must contain {item} exactly once")
        return value.strip()

    @field_validator("items")
    @classmethod
    def _clean(cls, value: list[str]) -> list[str]:
        seen: dict[str, None] = {}
        for item in value:
            if item.strip():
                seen.setdefault(item.strip(), None)
        return list(seen)


@cache
def _prompt() -> dict[str, str]:
    path = Path(__file__).with_name("batch_prompt.yaml")
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def describe_sources(folder: Path) -> list[str]:
    """One line per document under ``folder``: its path, and for an e-mail its sender and subject."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder)
        if any(part.startswith((".", "_")) for part in rel.parts) or path.suffix in _SKIP_SUFFIXES:
            continue
        line = str(rel)
        if path.suffix.lower() == ".eml":
            try:
                msg = email.message_from_bytes(path.read_bytes(), policy=policy.default)
                line += f" — from {msg.get('From', '?')}, subject {msg.get('Subject', '?')!r}"
            except Exception:  # an unreadable mail is still listed by name
                line += " — (unreadable e-mail)"
        lines.append(line)
        if len(lines) >= MAX_SOURCES:
            lines.append(f"… (more files; only the first {MAX_SOURCES} are listed)")
            break
    return lines


def parse_plan(text: str) -> BatchPlan:
    match = re.search(r"\{.*\}", text, re.S)
    if match is None:
        raise BatchPlanError(f"the batch planner gave no JSON plan: {text[:200]!r}")
    try:
        return BatchPlan.model_validate(json.loads(match.group(0)))
    except json.JSONDecodeError as exc:
        raise BatchPlanError(f"the batch planner's plan is not JSON ({exc}): {text[:200]!r}") from exc
    except ValidationError as exc:
        why = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise BatchPlanError(f"the batch planner's plan is not usable ({why}): {text[:200]!r}") from exc


def plan_batch(task: str, sources: list[str], llm: Any) -> BatchPlan:
    """One planner call: the batch task and the sources in, a template and items out."""
    prompt = _prompt()
    listing = "\n".join(line.replace("SOURCES>>>", "SOURCES>>") for line in sources) or "(none)"
    user = prompt["user"].format(task=task, count=len(sources), sources=listing)
    reply = llm.call([{"role": "system", "content": prompt["system"]}, {"role": "user", "content": user}])
    return parse_plan(reply if isinstance(reply, str) else str(reply))
