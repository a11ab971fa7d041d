"""Each stage of the Flow as a checkpoint: a durable run saves its state after the plan, every work
step and every verification, and a resumed run restores it instead of starting over.

The sink is injected through the run context (``ctx.checkpoints``, None for a plain run): anything
with ``load() -> dict | None`` and ``save(stage: str, state: dict)``. The job engine
(``taskcrew.jobs``) stores it in the job database; a run without one behaves exactly as before.
"""

from __future__ import annotations

from typing import Any, Protocol

from taskcrew.crew.models import RunState
from taskcrew.crew.trace import ControlEvent
from taskcrew.knowledge.grant import TASK_FROM_OUTSIDERS


class Checkpoints(Protocol):
    def load(self) -> dict[str, Any] | None: ...

    def save(self, stage: str, state: dict[str, Any]) -> None: ...


def restore(ctx: Any, state: RunState) -> bool:
    """Load the last checkpoint into ``state``; True when there was one (the plan is then not redone)."""
    sink: Checkpoints | None = getattr(ctx, "checkpoints", None)
    if sink is None:
        return False
    saved = sink.load()
    if not saved:
        return False
    restored = RunState.model_validate(saved["state"])
    for name in RunState.model_fields:
        setattr(state, name, getattr(restored, name))
    ctx.notes[:] = state.notes  # what the context held when it was saved
    ctx.budget.used = state.tool_calls
    if (files := _files(ctx)) is not None:
        files.remember(state.files_read)  # the digests read, and what was read by OCR
    ctx.tracer.emit(
        ControlEvent(
            action="resumed",
            reason=f"resumed after '{saved.get('stage')}' with {len(state.steps_done)} step(s) done",
        )
    )
    return True


BRIEF_SOURCE = "procedures in the planner's brief"  # a source of the run's facts (knowledge/grant.py)


def read_from(ctx: Any, state: RunState) -> list[str]:
    """Where the run's text came from, over all its legs: the tools it called, a brief that quoted
    documents, and the task itself when its submitter did not type it (``ctx.task_origin``: a batch
    child's task, the batch planner's words from the inbox). A resumed leg's tracer holds only its
    own events, so what the legs before read is kept in the checkpointed state: a fact learned after
    a resume is judged by everything the run read, not only by what it read since
    (``knowledge/grant.py``)."""
    sources = set(state.read_from) | {e.tool for e in ctx.tracer.of_kind("tool_call")}
    if any(e.procedures for e in ctx.tracer.of_kind("knowledge")):
        sources.add(BRIEF_SOURCE)  # a brief quoted documents too (no tool call shows it)
    if getattr(ctx, "task_origin", None):
        sources.add(TASK_FROM_OUTSIDERS)  # the task is outsiders' words, as the planner picked them
    return sorted(sources)


def _files(ctx: Any) -> Any:
    """The run's file reader (``SandboxFiles``), if it has one."""
    return getattr(getattr(ctx, "toolbox", None), "files", None)


def checkpoint(ctx: Any, state: RunState, stage: str) -> None:
    """Save the run's state after ``stage`` (plan, step:N, verify:N, reflect), with what the run
    context holds that a resumed leg must not lose: the run notes, the step budget spent, where its
    text came from, the digests of the files it read and the values it read by OCR (``files.reads``:
    a resumed leg's approvals flag them as the first leg's would)."""
    sink: Checkpoints | None = getattr(ctx, "checkpoints", None)
    if sink is not None:
        state.notes, state.tool_calls = list(ctx.notes), ctx.budget.used
        state.read_from = read_from(ctx, state)
        if (files := _files(ctx)) is not None:
            state.files_read = files.reads()  # the legs before's too: ``restore`` gave them to it
        sink.save(stage, {"stage": stage, "state": state.model_dump(mode="json")})
