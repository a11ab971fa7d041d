"""Who may write facts: only the reflector of a verified run, enforced by the API.

``FactBook.learn`` takes a ``FactGrant``. The only way to get one is ``FactGrant.from_verdict``,
which refuses a verdict that is not verified; constructing a grant directly raises. A grant names
the run and task it came from (they become the facts' provenance) and allows a bounded number of
writes (the reflector keeps at most three durable facts per run).

The crew passes its verifier's verdict; anything with ``verified``, ``run_id`` and ``task``
attributes will do (``VerdictLike``).

A grant also says where the run's knowledge came from: the tools whose results it read
(``sources``), and the run's own text where it is not its submitter's (``TASK_FROM_OUTSIDERS``: a
batch child's task, which the batch planner wrote from the inbox; ``BRIEF_SOURCE``: the planner's
brief quoting documents; both named by ``crew/stages.read_from``). A run that read documents,
e-mails, pages or any tool not known to carry only a person's words or plain arithmetic learned
from untrusted text, so its facts are stored as ``proposed`` and reach no planner until a person
accepts them (``untrusted_sources`` is that rule, the only place it is decided). Unknown sources
(``None``) count as untrusted.

``submitted_by``: who submitted the run, when the caller knows it (a job's submitter as proven:
``identity.submitter_as_proven``; the crew passes its run context's ``submitted_by`` with the
verdict). It is recorded, signed, with the run's facts: where the two-person rule is on, that
person may not be the one who accepts them, and a run that read only trusted sources (its
submitter's own words) does not accept them itself either (``facts._Judge.run_refusal``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

MAX_FACTS_PER_RUN = 3
# Tools whose results carry no outside text: a person's answer, or arithmetic over values the run
# already had. recall_facts returns only facts a person accepted. Every other tool (files, e-mail,
# documents, the browser, the web, the procedures store, python) brings in text nobody vouched for.
TRUSTED_SOURCES = frozenset(
    {"ask_user", "compute_due_date", "compare_values", "parse_amount", "recall_facts"}
)
UNKNOWN_SOURCES = "(sources not given)"
# a run's task its submitter did not type: a batch child's, written by the batch planner (a model)
# from the inbox listing, names and subjects outsiders wrote (``Job.origin``)
TASK_FROM_OUTSIDERS = "task written from outsiders' words (batch)"


def untrusted_sources(sources: Iterable[str] | None) -> list[str]:
    """The sources that make a run's facts proposals (empty: the facts may be stored accepted).
    Fails closed: a run that names no source at all (none given, or a record that lost them) is
    not known to have read only trusted text, so its facts are proposals."""
    sources = set(sources or ())
    if not sources:
        return [UNKNOWN_SOURCES]
    return sorted(sources - TRUSTED_SOURCES)


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

    __slots__ = ("_used", "max_facts", "run_id", "submitted_by", "task", "untrusted")

    def __init__(
        self,
        *,
        run_id: str,
        task: str,
        max_facts: int,
        untrusted: list[str] | None = None,
        submitted_by: str | None = None,
        _issuer: object = None,
    ) -> None:
        if _issuer is not _ISSUER:
            raise TypeError(
                "A FactGrant is only issued by FactGrant.from_verdict(verdict) for a verified run."
            )
        self.run_id = run_id
        self.task = task
        self.max_facts = max_facts
        self.untrusted = untrusted_sources(None) if untrusted is None else untrusted
        self.submitted_by = submitted_by
        self._used = 0

    @classmethod
    def from_verdict(
        cls,
        verdict: VerdictLike,
        max_facts: int = MAX_FACTS_PER_RUN,
        sources: Iterable[str] | None = None,
        submitted_by: str | None = None,
    ) -> FactGrant:
        """Issue a grant for a verified run; raise ``UnverifiedRunError`` for any other.

        ``sources``: the names of the tools whose results the run read (None: unknown, untrusted);
        ``submitted_by``: the name of the run's proven submitter (None: not known).
        """
        if getattr(verdict, "verified", False) is not True:
            raise UnverifiedRunError(
                "Only a verified run may add facts to the knowledge store (this verdict is not verified)."
            )
        run_id = str(getattr(verdict, "run_id", "") or "").strip()
        task = str(getattr(verdict, "task", "") or "").strip()
        if not run_id or not task:
            raise ValueError("A verdict must carry the run_id and the task that facts are attributed to.")
        return cls(
            run_id=run_id,
            task=task,
            max_facts=max_facts,
            untrusted=untrusted_sources(sources),
            submitted_by=(submitted_by or "").strip() or None,
            _issuer=_ISSUER,
        )

    @property
    def proposes(self) -> bool:
        """True when the run read untrusted text: its facts wait for a person."""
        return bool(self.untrusted)

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
