"""Errors a user can fix. Light on imports, so the CLI can name them without loading crewai."""

from __future__ import annotations

from taskcrew.crew.modelspec import ModelConfigError
from taskcrew.inputs import UserError


class WorkplaceError(RuntimeError):
    """Something the run needs is missing or unreachable; the message says what to do."""


class AuditError(ValueError):
    """The audit cannot start (no criteria, no run folder, no model); the message says why."""


USER_ERRORS: tuple[type[Exception], ...] = (
    ModelConfigError,
    WorkplaceError,
    AuditError,
    UserError,  # bad input (taskcrew.inputs), a damaged knowledge store (knowledge.health)
)
