"""What the browser did in a run, by meaning: each action with the element it addressed described
as a person sees it (role, accessible name, form field name), the page before and after, and what
the policy gate decided. Written to ``browser_steps.jsonl`` in the run folder, beside the trace;
the distiller reads it (element numbers are kept only as what they were: numbers of one page).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

FILE_NAME = "browser_steps.jsonl"


class Addressed(BaseModel):
    role: str
    name: str = ""
    field: str | None = None
    field_type: str | None = None
    options: list[str] = Field(default_factory=list)


class ActRecord(BaseModel):
    action: dict[str, Any]
    target: Addressed | None = None
    page_url: str = ""
    page_title: str = ""
    obstacles: list[str] = Field(default_factory=list)
    ok: bool = True
    message: str = ""
    after_url: str = ""
    after_title: str = ""
    after_obstacles: list[str] = Field(default_factory=list)
    http_status: int | None = None
    decisions: list[tuple[str, str, str]] = Field(
        default_factory=list, description="(outcome, method, url) of data-changing decisions"
    )
    sent_fields: list[list[str]] = Field(
        default_factory=list,
        description="the field names of each of ``decisions``, in order: every one the gate saw (a "
        "token, a field the page filled); none in a record written before they were kept",
    )


class Recorder:
    """A listener for ``LazySession.act_listeners``: one line per action that ran."""

    def __init__(self, path: Path, redact: Any = lambda s: s) -> None:
        self.path = path
        self.redact = redact
        self._lock = threading.Lock()

    def __call__(self, before: Any, result: Any) -> None:
        after = result.observation
        changing = [d for d in result.policy if d.kind in ("submission", "request")]
        decisions = [(d.outcome, d.method, d.url) for d in changing]
        sent_fields = [[f.name for f in d.fields] for d in changing]
        lines = []
        for outcome in result.ran:
            action = outcome.action.model_dump(mode="json")
            if isinstance(action.get("text"), str):
                action["text"] = self.redact(action["text"])
            index = action.get("index")
            element = before.element(index) if before is not None and isinstance(index, int) else None
            target = None
            if element is not None:
                field = element.field
                target = Addressed(
                    role=element.role,
                    name=self.redact(element.name),
                    field=field.name if field is not None else None,
                    field_type=field.type if field is not None else None,
                    options=[o.label for o in (field.options or [])] if field is not None else [],
                )
            record = ActRecord(
                action=action,
                target=target,
                page_url=self.redact(before.url) if before is not None else "",
                page_title=before.title if before is not None else "",
                obstacles=[o.kind for o in before.obstacles] if before is not None else [],
                ok=outcome.ok,
                message=self.redact(outcome.message)[:300],
                after_url=self.redact(after.url),
                after_title=after.title,
                after_obstacles=[o.kind for o in after.obstacles],
                http_status=result.http_status,
                decisions=decisions,
                sent_fields=sent_fields,
            )
            lines.append(record.model_dump_json())
        if lines:
            with self._lock, self.path.open("a", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")


def read_records(run_dir: Path) -> list[ActRecord]:
    path = run_dir / FILE_NAME
    if not path.exists():
        return []
    return [
        ActRecord.model_validate(json.loads(line)) for line in path.read_text("utf-8").splitlines() if line
    ]
