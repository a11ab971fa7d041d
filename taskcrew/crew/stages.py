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
    ctx.tracer.emit(
        ControlEvent(
            action="resumed",
            reason=f"resumed after '{saved.get('stage')}' with {len(state.steps_done)} step(s) done",
        )
    )
    return True


def checkpoint(ctx: Any, state: RunState, stage: str) -> None:
    """Save the run's state after ``stage`` (plan, step:N, verify:N, reflect), with what the run
    context holds that a resumed leg must not lose: the run notes and the step budget spent."""
    sink: Checkpoints | None = getattr(ctx, "checkpoints", None)
    if sink is not None:
        state.notes, state.tool_calls = list(ctx.notes), ctx.budget.used
        sink.save(stage, {"stage": stage, "state": state.model_dump(mode="json")})
