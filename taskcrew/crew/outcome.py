"""The outcome of a run, decided in ONE place from facts, never from a step's word.

The facts: every data-changing submission and what the system answered (this leg's ``SubmissionLog``
and, for a durable job, every other attempt in its intent log), the verifier's verdict, and the plan.
What a system answered is the gate's reading of a page; where code read the system back (the
before/after difference of a watched page, ``Facts.read_back``), that has the last word: a send it
shows no row of is never "saved", and one read as refused whose row it shows added may be saved.
That reading is made in one place (``steps.read_back``, once per verification and at the finish) and
kept on the run (``RunContext.checked_facts``): the verifier's record of sends, the outcome, the
answer and the report all read the same.

- A run whose send was read as saved but that code's read-back shows no row of (``Facts.unshown``)
  is never ``done`` or ``nothing_to_do``: ``not_verified``, whatever the verifier said.

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
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from taskcrew.approvals.rules import RiskRulesError, load_rules
from taskcrew.crew.evidence import (
    AMOUNT_LABEL,
    APPLIED_HEAD,
    CHANGES_SOURCE,
    CURRENCY_MARK,
    SENT_HEAD,
    STATUS_MARK,
    diff_records,
    is_reference,
    plain,
    send_keys,
    values,
)
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
    def unshown(self) -> list[SubmissionResult]:
        """Sends read as saved that code's read-back shows no row of (``SubmissionResult.unshown``)."""
        return [s for s in self.submissions if s.unshown]

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
                        "labels": {redact(n): redact(v) for n, v in s.labels.items()},
                    }
                )
                for s in items
            ]

        return Facts(submissions=read(self.submissions), untrusted=read(self.untrusted))

    def read_back(self, differences: dict[str, str], since: datetime | None) -> Facts:
        """These facts with code's own read-back of the systems over the gate's reading of their
        answers (``differences``: the before/after difference of each watched page, read by code now,
        ``steps.read_back``; ``since``: when the "before" was read, just before this leg's first send).
        For each send of this leg to a watched page whose record it can name: one read as ``saved``
        that no row of the difference shows is ``unknown``, never ``saved`` (a 200 page saying "not
        saved", a record the system dropped); one read as refused or bounced that a row added or
        changed shows is ``unknown`` too: it may be saved (a system that saved and then showed the
        form with an error). Which row shows which send (``_Send.shows``): the row of the record the
        send named, by its address or the one its answer showed ("then showed /bills/BILL-0013"),
        where it named one; else a row holding all its own identifiers, an amount it sent and every
        party it referred to (``_Send.parties``: "Northwind Traders", the chosen vendor's label) — and
        such a row shows one send only (a send read as saved first, then one with no clear answer, then
        a refused one; each oldest first): a colleague's bill of another vendor with the same invoice
        number and amount shows none of this run's, nor does one row two sends. A row holding its
        identifiers and amount may show a send whose party code cannot read (a reference with no
        label): that row is the send's as the gate read it, never shown on a guess (a refusal stays
        one); one lacking them shows it not. Where no page is watched, none could be read, or a send
        names no record: as the gate read it."""
        if since is None or not differences:
            return self
        pages = [_Page.of(name, text) for name, text in differences.items()]
        watched = [p for p in pages if p is not None]
        if not watched:
            return self
        covered = [[p for p in watched if s.at >= since and p.covers(s.url)] for s in self.submissions]
        sends = [_Send.of(s) for s in self.submissions]
        # the rows that show each send (True), then those that may (None: a party code cannot read)
        seen = [
            [
                (p.name, i, send.shows(row, text))
                for p in ps
                for i, (row, text) in enumerate(zip(p.rows, p.texts, strict=True))
            ]
            for ps, send in zip(covered, sends, strict=True)
        ]
        found = [[(name, i) for name, i, shows in rows if shows] for rows in seen]
        maybe = [[(name, i) for name, i, shows in rows if shows is None] for rows in seen]
        # a named record's row is that record's, shared by every send naming it (an edit, then a payment)
        shown = [set(rows) if send.named else set() for send, rows in zip(sends, found, strict=True)]
        taken = set().union(set(), *shown)
        undecided: set[int] = set()
        order = sorted(
            (i for i, send in enumerate(sends) if not send.named and send.ids),
            key=lambda i: (_CLAIMS.get(self.submissions[i].result, len(_CLAIMS)), self.submissions[i].at),
        )
        for i in order:
            if self.submissions[i].result not in _CLAIMS:
                continue
            if row := next((r for r in found[i] if r not in taken), None):
                shown[i] = {row}
                taken.add(row)
            elif row := next((r for r in maybe[i] if r not in taken), None):
                undecided.add(i)  # its row, if its party is the row's: left as the gate read it
                taken.add(row)
        read: list[SubmissionResult] = []
        for n, (s, pages_of, send, rows) in enumerate(
            zip(self.submissions, covered, sends, shown, strict=True)
        ):
            names = ", ".join(p.name for p in pages_of)
            if not pages_of or not (send.named or send.ids) or n in undecided:
                read.append(s)
            elif s.result == "saved" and not rows and all(p.whole for p in pages_of):
                read.append(
                    _unknown(
                        s, f"its answer read as saved, but code's read-back of {names} shows no row of it"
                    )
                )
            elif s.result in ("refused", "bounced") and rows:
                read.append(
                    _unknown(
                        s,
                        f"its answer read as {s.result}, but code's read-back of {names} shows a row of it added "
                        "or changed",
                    )
                )
            else:
                read.append(s)
        return self.model_copy(update={"submissions": read})

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
                + "; ".join(_what(s) + (f" ({s.read_back})" if s.read_back else "") for s in unknown[:3])
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
        if unshown := facts.unshown:  # code read the system back: whatever the verdict, it is not there
            return "not_verified", (
                f"code's read-back of the systems shows no row of {len(unshown)} submission(s) whose answer "
                f"read as saved ({'; '.join(_what(s) for s in unshown[:3])}): the system may not hold "
                f"{'it' if len(unshown) == 1 else 'them'}; look in it before sending again. The verifier "
                f"said: {reason}"
            )
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
    fields = _business_fields(s)
    if len(fields) > _SHOWN_FIELDS:
        first = sorted(range(len(fields)), key=lambda i: not any(c.isdigit() for c in fields[i][1]))
        fields = [fields[i] for i in sorted(first[:_SHOWN_FIELDS])]
    shown = ", ".join(f"{k}={' '.join(v.split())}" for k, v in fields)  # a value stays on its line
    return f"{s.method} {s.url}" + (f" [{shown}]" if shown else "")


def _business_fields(s: SubmissionResult) -> list[tuple[str, str]]:
    """A submission's fields but a CSRF token and those the risk rules leave out of the request key
    as a per-page token."""
    try:
        excluded = load_rules().excluded_for(s.url)
    except RiskRulesError:  # the run loaded them already; a file broken since names nothing more
        excluded = {}
    return [(k, v) for k, v in s.fields if not is_token_field(k) and k not in excluded]


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


def _unknown(s: SubmissionResult, why: str) -> SubmissionResult:
    return s.model_copy(update={"result": "unknown", "read_back": why, "read_as": s.result})


class ReadBack(NamedTuple):
    """Code's read-back of the watched pages at one moment (``steps.read_back``), kept on the run
    (``RunContext.read_back``) so that every reader of it reads the same."""

    gate: Facts  # the facts as the gate read the answers, when code read the pages back
    differences: dict[str, str]  # ``before/after <page>`` → its difference (``crew.changes``)
    facts: Facts  # ``gate`` with the read-back over it (``Facts.read_back``)


# the sends that may claim a row their values match, first to last (``Facts.read_back``)
_CLAIMS = {"saved": 0, "unknown": 1, "refused": 2, "bounced": 2}
# the record a system's answer showed, in the gate's words (``tools.submissions.classify``): "then
# showed /bills/BILL-0013", "its answer named /bills/BILL-0013" (not "then showed the form again")
_ANSWER_NAMED = re.compile(r"\b(?:then showed|its answer named) (/[^\s,;]*)")


class _Send(NamedTuple):
    """What of one send a row of a before/after difference must show to show it (``Facts.read_back``)."""

    named: set[str]  # the record it names: by its address or the one its answer showed
    ids: set[str]  # its own identifiers (``evidence.send_keys``: not a reference to another record)
    amounts: set[str]  # the values of the fields it sent as amounts
    # the text a row shows of each record it referred to (``evidence.is_reference``: a bill's vendor_id)
    # by the chosen option's label ("Northwind Traders"); None where one has no label code can match
    parties: list[str] | None

    @classmethod
    def of(cls, s: SubmissionResult) -> _Send:
        fields = _business_fields(s)
        answered = " ".join(_ANSWER_NAMED.findall(s.detail))
        # an identifier as a row shows one (a letter in it: ``evidence.diff_records``), not a table's
        # own key ("/bills/13"), which a list need not show
        named = {k for k in send_keys(s.url, [], answered) if any(c.isalpha() for c in k)}
        ids = send_keys(s.url, fields) - send_keys(s.url, [])
        amounts = {
            v
            for name, value in fields
            if AMOUNT_LABEL.search(re.sub(r"[\W_]+", " ", name))
            for v in values(value)
            if not v.startswith((CURRENCY_MARK, STATUS_MARK))
        } - ids
        referred = [(name, value) for name, value in fields if value.strip() and is_reference(name, s.url)]
        labels = [" ".join(s.labels.get(name, "").split()) for name, _ in referred]
        return cls(named, ids, amounts, labels if all(labels) else None)

    def shows(self, row: set[str], text: str) -> bool | None:
        """Does a row (its values, ``evidence.diff_records``, and its ``text``) show this send? The
        record it named is on the row; else all its own identifiers are, an amount it sent (a list
        need not show every one: a tax, a subtotal) and every party it referred to, as whole words
        whatever their case and spacing (``_names``). None: the row holds its identifiers and amount,
        but the send refers to a party code cannot read (a reference with no label) — it may be its row,
        or another party's."""
        if self.named:
            return bool(row & self.named)
        if not (self.ids and self.ids <= row and (not self.amounts or row & self.amounts)):
            return False
        if self.parties is None:
            return None
        return all(_names(text, party) for party in self.parties)


def _names(text: str, party: str) -> bool:
    """Does ``text`` (a row) name ``party`` (a chosen option's label): its words, whole, in order,
    whatever their case and the spaces between them ("Northwind Traders" in "northwind  traders |
    INV-2057"; not "Northwind" in "Northwinds Ltd", nor in "Initech")?"""
    words = plain(party).casefold().split()
    pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)"
    return bool(words) and re.search(pattern, plain(text).casefold()) is not None


# the counts a before/after difference states of its lines (``crew.changes.describe``)
_ADDED = re.compile(r"^Lines of the page added \((\d+)\):$", re.MULTILINE)
_REMOVED = re.compile(r"^Lines removed or changed \((\d+);", re.MULTILINE)


class _Page(NamedTuple):
    """A watched page's before/after difference, as ``Facts.read_back`` reads it."""

    name: str  # the page's address
    rows: list[set[str]]  # the record rows it shows added, removed or changed (``evidence.diff_records``)
    texts: list[str]  # the text of each of ``rows``: its lines of the difference (a changed row's two)
    whole: bool  # every line added or removed is listed (a long difference lists only the first)

    @classmethod
    def of(cls, source: str, text: str) -> _Page | None:
        """None: no difference of a page code read both times (it could not be read, before or now)."""
        added, removed = _ADDED.search(text), _REMOVED.search(text)
        if not source.startswith(f"{CHANGES_SOURCE} ") or added is None or removed is None:
            return None
        listed = sum(1 for ln in text.splitlines() if ln.startswith(("+ ", "- ")))
        whole = int(added.group(1)) + int(removed.group(1)) <= listed
        rows = diff_records([text])
        lines = [(ln[2:], values(ln[2:])) for ln in text.splitlines() if ln.startswith(("+ ", "- "))]
        # a row's lines: those whose values are all the record's (a changed row's, as it was and is)
        texts = [" | ".join(ln for ln, found in lines if found and found <= row) for row in rows]
        return cls(source[len(CHANGES_SOURCE) :].strip(), rows, texts, whole)

    def covers(self, url: str) -> bool:
        """Does a send to ``url`` change what this page lists (its address is the page's or below it)?"""
        page, sent = urlsplit(self.name), urlsplit(url)
        base = page.path.rstrip("/")
        return page.netloc == sent.netloc and (sent.path == base or sent.path.startswith(f"{base}/"))
