"""Who may write facts: only the reflector of a verified run, enforced by the API.

``FactBook.learn`` takes a ``FactGrant``. The only way to get one is ``FactGrant.from_verdict``,
which refuses a verdict that is not verified; constructing a grant directly raises. A grant names
the run and task it came from (they become the facts' provenance) and allows a bounded number of
writes (the reflector keeps at most three durable facts per run).

The crew passes its verifier's verdict; anything with ``verified``, ``run_id`` and ``task``
attributes will do (``VerdictLike``).
"""

from __future__ import annotations

from typing import Protocol

MAX_FACTS_PER_RUN = 3
_ISSUER = object()  # private capability key: only from_verdict holds it


class VerdictLike(Protocol):
    @property
    def verified(self) -> bool: ...

    @property
    def run_id(self) -> str: ...

    @property
    def task(self) -> str: ...


class UnverifiedRunError(PermissionError):
    """A run that was not verified tried to write to the fact store."""


class GrantExhaustedError(PermissionError):
    """A grant was used for more facts than it allows."""


class FactGrant:
    """Permission for one verified run to write at most ``max_facts`` facts."""

    __slots__ = ("_used", "max_facts", "run_id", "task")

    def __init__(self, *, run_id: str, task: str, max_facts: int, _issuer: object = None) -> None:
        if _issuer is not _ISSUER:
            raise TypeError(
                "A FactGrant is only issued by FactGrant.from_verdict(verdict) for a verified run."
            )
        self.run_id = run_id
        self.task = task
        self.max_facts = max_facts
        self._used = 0

    @classmethod
    def from_verdict(cls, verdict: VerdictLike, max_facts: int = MAX_FACTS_PER_RUN) -> FactGrant:
        """Issue a grant for a verified run; raise ``UnverifiedRunError`` for any other."""
        if getattr(verdict, "verified", False) is not True:
            raise UnverifiedRunError(
                "Only a verified run may add facts to the knowledge store (this verdict is not verified)."
            )
        run_id = str(getattr(verdict, "run_id", "") or "").strip()
        task = str(getattr(verdict, "task", "") or "").strip()
        if not run_id or not task:
            raise ValueError("A verdict must carry the run_id and the task that facts are attributed to.")
        return cls(run_id=run_id, task=task, max_facts=max_facts, _issuer=_ISSUER)

    @property
    def remaining(self) -> int:
        return self.max_facts - self._used

    def spend(self) -> None:
        """Count one write against the grant (called by the fact store)."""
        if self._used >= self.max_facts:
            raise GrantExhaustedError(
                f"Run {self.run_id} already wrote {self.max_facts} facts; a run keeps at most {self.max_facts}."
            )
        self._used += 1

    def __repr__(self) -> str:
        return f"FactGrant(run_id={self.run_id!r}, remaining={self.remaining})"
