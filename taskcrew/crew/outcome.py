"""The outcome of a run, decided in ONE place from facts, never from a step's word.

The facts: every data-changing submission and what the system answered (this leg's ``SubmissionLog``
and, for a durable job, every other attempt in its intent log), the verifier's verdict, and the plan.

- A run that sent a change the system accepted (or may have: no answer) is never ``nothing_to_do``:
  verified it is ``done``; the verifier's refusal keeps it ``not_verified``.
- ``nothing_to_do`` needs a verified verdict and no change applied, and either a step that said so,
  a data-changing plan or a submission sent (the plan's word alone does not decide it): a run
  that says "done" but whose every submission was refused (or that sent none) did not do it —
  the state was already there.
- Every other ending (incomplete, rejected, error, interrupted) keeps the reason the Flow stopped,
  and the report and ``runs list`` say what changed in the system beside it (``Facts.changed_line``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from taskcrew.approvals.rules import RiskRulesError, load_rules
from taskcrew.crew.evidence import APPLIED_HEAD, SENT_HEAD
from taskcrew.crew.models import Outcome, RunState
from taskcrew.tools.intents import reconcile
from taskcrew.tools.policy import is_token_field
from taskcrew.tools.submissions import SubmissionResult

log = logging.getLogger(__name__)


class Facts(BaseModel):
    """What the run did to the systems: every submission with the system's answer, oldest first."""

    submissions: list[SubmissionResult] = Field(default_factory=list)
    # rows of the job database's intent log that neither the store nor the signed audit log vouches
    # for (``tools.intents.reconcile``): named in the account, never counted as the run's sends
    untrusted: list[SubmissionResult] = Field(default_factory=list)

    @property
    def saved(self) -> list[SubmissionResult]:
        return [s for s in self.submissions if s.result == "saved"]

    @property
    def unknown(self) -> list[SubmissionResult]:
        return [s for s in self.submissions if s.result == "unknown"]

    @property
    def changed_something(self) -> bool:
        """The system accepted a change from this run, or may have (no answer)."""
        return bool(self.saved or self.unknown)

    def redacted(self, redact: Callable[[str], str]) -> Facts:
        """A copy with every submission's target, fields and answer read through ``redact``."""

        def read(items: list[SubmissionResult]) -> list[SubmissionResult]:
            return [
                s.model_copy(
                    update={
                        "url": redact(s.url),
                        "fields": [(redact(n), redact(v)) for n, v in s.fields],
                        "detail": redact(s.detail),
                    }
                )
                for s in items
            ]

        return Facts(submissions=read(self.submissions), untrusted=read(self.untrusted))

    def changed_line(self) -> str:
        """One line: what changed in the systems (for the report's first line and ``runs list``)."""
        line = self._changed()
        if self.untrusted:  # their values are anyone's words: counted, never quoted
            line += (
                f". Not counted: {len(self.untrusted)} record(s) of a send in the job database that "
                "neither the store's signature nor the signed audit log vouches for (changed or added outside "
                "taskcrew, or written before rows were signed)"
            )
        return line

    def _changed(self) -> str:
        saved = self.saved  # each one: two identical posts the system saved twice are two changes
        unknown = [s for s in _distinct(self.unknown) if not any(_same(s, x) for x in saved)]
        if not saved and not unknown:
            tried = len(self.submissions)
            return "Nothing was changed in any system" + (
                f" ({tried} submission(s) sent, none applied)" if tried else ""
            )
        parts = []
        if saved:
            parts.append(f"{len(saved)} change(s) saved: " + "; ".join(_what(s) for s in saved[:4]))
        if unknown:
            parts.append(
                f"{len(unknown)} submission(s) with no clear answer (may be saved): "
                + "; ".join(_what(s) for s in unknown[:3])
            )
        return ". ".join(parts)

    def record(self) -> str:
        """The gate's record of what this run sent, as a source the verifier may cite
        (``evidence.SENDS_SOURCE``): every data-changing submission that left the browser's network
        gate (the only way a tool changes a system), with what the system answered."""
        lines = [
            "The network gate's record of this run: every data-changing submission that left the "
            "browser (no tool changes a system any other way), with the system's answer, recorded by "
            "code as it happened (every leg of a durable job).",
            f"{SENT_HEAD} {len(self.submissions) or 'none'}",
        ]
        lines += [_line(s) for s in self.submissions[:20]]
        lines.append(self._applied_head())
        return "\n".join(lines)

    def applied_lines(self) -> list[str]:
        """The lines of ``record`` that speak of what a system holds — each submission it saved, the
        count of those, and "sent: none" — chosen from the facts, not by reading the text (a field
        value may hold any words): the only lines a criterion about a system's state may cite there."""
        lines = [_line(s) for s in self.submissions[:20] if s.result == "saved"]
        return [*([f"{SENT_HEAD} none"] if not self.submissions else []), *lines, self._applied_head()]

    def _applied_head(self) -> str:
        return f"{APPLIED_HEAD} {len(self.saved) or 'none'}" + (
            f"; with no clear answer (may be applied): {len(self.unknown)}" if self.unknown else ""
        )


def gather(
    submissions: list[SubmissionResult],
    intents: Any,
    since: datetime | None,
    redact: Callable[[str], str] | None = None,
) -> Facts:
    """This leg's submissions, and every other send in a durable job's intent log: each attempt is a
    record of its own (``tools.intents``), left out only when this leg (since ``since``) recorded it
    and its answer came back, so its own log has it. An earlier leg's attempt, one a leg still
    running elsewhere sent meanwhile (a frozen worker that thawed) and one of this leg's whose answer
    never came all count: one with no clear answer may have changed something. A job's rows are
    checked against its signed sends first (``_checked``): a deleted row does not hide a send, an
    added one does not make one. ``redact`` (the run's ``Vault.redact``): every record is read
    through it — an intent row keeps a send as stored, a value the page held in a password box in
    it, for the person who approves it; the facts go to the verifier's prompt, the report and
    ``runs list``, which show the run's hidden values as placeholders."""
    earlier: list[SubmissionResult] = []
    untrusted: list[SubmissionResult] = []
    sink = getattr(intents, "sink", None)
    records = getattr(sink, "records", None)
    mine: set[str] = getattr(intents, "mine", set())
    if callable(records):
        rows, unvouched = _checked(sink, records())
        untrusted = [_result(record, mine) for record in unvouched]
        for record in rows:
            at = _utc(record.at)
            if since is not None and at >= since and record.key in mine and record.status != "recorded":
                continue  # sent by this leg and answered: its own log has the system's answer
            earlier.append(_result(record, mine))
    facts = Facts(submissions=sorted([*earlier, *submissions], key=lambda s: s.at), untrusted=untrusted)
    return facts if redact is None else facts.redacted(redact)


def _checked(sink: Any, rows: list[Any]) -> tuple[list[Any], list[Any]]:
    """A job's intent rows against the signed audit log's sends of the job, where its store has that
    log (``StoreIntents.signed_sends``; ``tools.intents.reconcile``): (its sends, rows nobody vouches
    for). A log that cannot be read leaves the rows as the store read them: one that does not check
    out is then an answer nobody knows (may be saved), never less."""
    sends, send_key = getattr(sink, "signed_sends", None), getattr(sink, "send_key", None)
    if not callable(sends) or not callable(send_key):
        return rows, []
    try:
        return reconcile(rows, sends(), send_key)
    except Exception as exc:  # the account is still given, from the rows alone
        log.warning("the intent log was not checked against the signed audit log: %s", exc)
        return rows, []


def _result(record: Any, mine: set[str]) -> SubmissionResult:
    return SubmissionResult(
        method=record.method,
        url=record.url,
        fields=[(n, v) for n, v in record.fields if not is_token_field(n)],  # as the gate's
        result=record.answer,  # the gate's classification, kept by the intent log
        http_status=record.http_status,
        detail=f"{'sent' if record.key in mine else 'in another leg of this job'}: "
        f"{record.result or 'no answer recorded'}",
        at=_utc(record.at),
    )


def _utc(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def decide(state: RunState, facts: Facts) -> tuple[Outcome, str]:
    """The final outcome and its reason, from the Flow's ending (``state.outcome``), the verdict and
    the facts."""
    ending: Outcome = state.outcome or "error"
    reason = state.outcome_reason or "the run ended without an outcome"
    verified = bool(state.verdicts) and state.verdicts[-1].verified
    if ending in ("done", "nothing_to_do"):
        if not verified:  # only a verified verdict ends a run done
            return "not_verified", f"no verification confirmed the result: {reason}"
        if facts.changed_something:
            return "done", f"{reason} ({facts.changed_line()})"
        if state.claim == "nothing_to_do":
            return "nothing_to_do", reason
        if facts.submissions or (state.plan is not None and state.plan.changes_data):
            # verified in place, yet nothing this run sent was applied: it was there already (a
            # "done" would claim a change the systems never received; a plan that said it changes
            # nothing does not make a refused submission a "done")
            return "nothing_to_do", (
                f"the verifier found the desired state in place, but this run changed nothing "
                f"({facts.changed_line()}): {reason}"
            )
        return "done", reason
    return ending, reason


def answer(state: RunState, facts: Facts) -> str:
    """The answer the job and the report give: for a run that changed data, what the system holds
    (the facts) comes first; the last step's words follow."""
    last = state.steps_done[-1].report.summary if state.steps_done else ""
    changes = state.plan is None or state.plan.changes_data or facts.submissions
    if not changes:
        return last
    head = facts.changed_line() + "."
    return f"{head} The last step reported: {last}" if last else head


_SHOWN_FIELDS = 8  # a submission's fields named in a line, at most


def _what(s: SubmissionResult) -> str:
    """A submission in one line: its business fields (never a CSRF token or a field the risk rules
    leave out of the request key as a per-page token), those with figures first (amounts,
    identifiers, dates) when there are more than fit."""
    try:
        excluded = load_rules().excluded_for(s.url)
    except RiskRulesError:  # the run loaded them already; a file broken since names nothing more
        excluded = {}
    fields = [(k, v) for k, v in s.fields if not is_token_field(k) and k not in excluded]
    if len(fields) > _SHOWN_FIELDS:
        first = sorted(range(len(fields)), key=lambda i: not any(c.isdigit() for c in fields[i][1]))
        fields = [fields[i] for i in sorted(first[:_SHOWN_FIELDS])]
    shown = ", ".join(f"{k}={' '.join(v.split())}" for k, v in fields)  # a value stays on its line
    return f"{s.method} {s.url}" + (f" [{shown}]" if shown else "")


def _line(s: SubmissionResult) -> str:
    return f"- {_what(s)} — {s.words()}"


def _same(a: SubmissionResult, b: SubmissionResult) -> bool:
    return (a.method, a.url, sorted(a.fields)) == (b.method, b.url, sorted(b.fields))


def _distinct(items: list[SubmissionResult]) -> list[SubmissionResult]:
    out: list[SubmissionResult] = []
    for item in items:
        if not any(_same(item, x) for x in out):
            out.append(item)
    return out
