"""The verifier's evidence, checked in code wherever code can, and its verdict decided per criterion.

Every check that says "met" must cite a source the verifier itself opened (successfully) in THIS
verification; what it says it ``observed`` there must be in what it saw:

- a pointer (``find``): code copies the whole line it points at as the evidence;
- quoted words ("…", “…”, `…`): each must appear word for word;
- values (identifiers such as INV-2057, amounts, dates, a record's status: Paid, Unpaid, Overdue …
  word for word, a negated or former one — "not paid", "from Unpaid" — no claim, but "not unpaid" is
  "paid", ``_statuses``; quoted in a criterion, still a claim; of a table row, the cell that starts
  with it, not a note's word, ``_row_values``):
  each must appear, compared after
  normalising number formats (1,284.50 = 1284.50 = 1.284,50) and date formats (12 September 2026 =
  2026-09-12 = 12.09.2026; 09/12/2026 matches either reading, ``_pool``), and currencies (€ = EUR,
  ``CURRENCY_MARK``), every text — claim and page alike — read through one normaliser first
  (``plain``: "BILL–0002" with an en dash is BILL-0002); a record named by an identifier that has
  a table row takes its other values from its own row (``_other_row``), not from a neighbour's — a
  statement naming no record, from the observation's one record's row; read as a system's state, a
  record a page shows by its fields ("Amount: 494.00 USD") gives its amounts, currencies, dates and
  status only from its fields of that kind, never from a note or any other mention on the page
  (``_off_field``);
- an observation with nothing code can compare (no quote, no value, or values it says are absent)
  stays met, marked as the verifier's word (``MODELS_WORD``); the report says so — except that a
  criterion about a system's state naming an identifier is never met on that word where code can
  read the source: the identifier must be shown there as a record (``_record_unshown``);
- a clause that speaks of something absent exempts only the absent record's identifier
  (``_absent_record``), not the clause's other values.

The rules read the plan's words of the criterion (``_criterion_of``), never the verifier's
restatement. A criterion about a system's state (its words say so, or it names an identifier or an
amount the run sent) must be checked on that system's own pages — a system the run sent to or
watched, or one the criterion names, else the run's first system; never merely any system's host
(``_targets``) — or on what code recorded of the run, cited by its exact name: its before/after
difference, or the gate's record of its sends; that record is what the run sent and how a system
answered, never that a record is there or with which values, so it meets only a criterion each
clause of which, in full, says in the past tense that the run created or changed nothing (else) — no
count of what it made ("exactly one bill was created"), no record described or named, no value, no
present tense or state ("no bill is paid", "no other bills in Acme Payables"), no record defined by
those a system holds ("no duplicate bill was entered") (``of_sends_only``). What
those show a system holds (``_holds``) is chosen from the facts, whatever the criterion's words: of
the record, the lines of submissions it applied (``Facts.applied_lines``: a refused one is no
evidence); of the difference, every line but those as they were before. Only a "nothing else"
criterion reads every send and every line; it is never met when the record shows the same submission
saved twice (``_saved_twice``), nor when code counts more records touched than the criterion names
(``_more_touched``). Whatever the
criteria's words, a data-changing plan's verdict is never verified when code counts more records
the run created or changed than the plan's criteria name (``_more_than_planned``).
What the verifier saw at a page is the page's own text: its browser tools record nothing else
(``browsing.page_data``: no form field's value, nothing it typed or selected). Nor what the page
shows back of the verifier's own input (``unechoed``, the one rule, applied where its browser records
a page and here to every page with its own address): a value it typed, selected, pressed, that a
form field holds, or in an address it opened or landed on (path, query, fragment) — "No pages match
499.00", a 404 repeating the path, a live preview — counts only on a record the system returned: a
table row that also shows a value it did not put in (searched by GX-7781, the row's BILL-0011 …
494.00), or a record shown by its fields with such a value, on a field that shows one too or only
names the record (opened at /bills/BILL-0011: "Bill: BILL-0011"). Every other line showing one is
no evidence at all.
Read as a system's state, the record the criterion names (by an identifier, else by its amounts:
"Globex Corp's invoice of 2150.00 USD") must be there as the criterion says
(``_criterion_unshown``): its amounts, dates and status on that record's own row, whatever the
observation names or leaves out, and none of them only on a refused send or a row as it was before.
The rules hold wherever the run could have changed a system or the claim is about one: a
data-changing plan, a run that sent a submission (whatever its plan said), every audit, and a
criterion about a system's state whatever the plan said (its "changes nothing" is a model's word;
only ``_record_unshown`` stays with the first three: a question's "whether INI-7781 has a bill" is
answered by its absence too).
A question's answer is held to the verified evidence: what it states of a record must be what the
met checks showed of it (``answer_unsupported``, applied by ``steps.check_cited_facts``).
The verdict is per plan criterion: a criterion is met when a valid check of it is met; an extra
check that code rejected adds nothing but fails nothing; a check the verifier itself judged unmet
fails the verdict.
The reason names each criterion that failed and why.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import NamedTuple
from urllib.parse import unquote, unquote_plus, urlsplit

from taskcrew.approvals.visible import visible
from taskcrew.crew.citations import about_system_state, is_web, lines_with, quoted, quotes_unseen
from taskcrew.crew.models import CriterionCheck, Plan, Verdict
from taskcrew.tools.ap import (
    INDIAN_INT,
    ISO_CURRENCIES,
    MONTH_PATTERN,
    MONTHS,
    SIGN_CURRENCY,
    WORD_CODES,
    APInputError,
    parse_date,
    signs_pattern,
)

MODELS_WORD = "[not checked by code: the verifier's word]"
REJECTED = "[rejected: "


# How a check stands, one rule for every place that shows it (report, terminal, console): a check
# code rejected is neither a "yes" nor the verifier's "no" — it is not counted as evidence at all.
STANDINGS = {
    "met": ("✓", "yes"),
    "word": ("✓", "yes — the verifier's word, not checked by code"),
    "not_met": ("✗", "NO"),
    "rejected": ("–", "not counted — rejected by code"),
}


def standing(check: CriterionCheck) -> str:
    """``met``, ``word`` (met on the verifier's word), ``not_met`` (the verifier judged it unmet) or
    ``rejected`` (code rejected its evidence)."""
    if check.met:
        return "word" if MODELS_WORD in check.observed else "met"
    return "rejected" if REJECTED in check.observed else "not_met"


def standing_mark(check: CriterionCheck) -> str:
    return STANDINGS[standing(check)][0]


def standing_words(check: CriterionCheck) -> str:
    return STANDINGS[standing(check)][1]


def same_source(cited: str, seen: set[str]) -> bool:
    cited = cited.strip().strip("<>`'\"")
    if cited in seen:
        return True
    parts = urlsplit(cited)
    if parts.scheme in ("http", "https"):
        key = (parts.netloc, parts.path.rstrip("/"))
        return any((urlsplit(s).netloc, urlsplit(s).path.rstrip("/")) == key for s in seen)
    name = cited.lstrip("./")
    return any(s.lstrip("./").endswith(name) or name.endswith(s.lstrip("./")) for s in seen if s)


def _on_system(source: str, urls: list[str]) -> bool:
    host = urlsplit(source.strip().strip("<>`'\"")).netloc
    return bool(host) and any(urlsplit(url).netloc == host for url in urls)


def check_verdict(
    verdict: Verdict,
    plan: Plan,
    seen: set[str],
    texts: dict[str, list[str]] | None = None,
    systems: list[tuple[str, str]] | None = None,
    on_systems: bool | None = None,
    applied: list[str] | None = None,
) -> Verdict:
    """Code has the last word on the verifier's verdict (``seen``: sources it opened; ``texts``: what
    it saw at each; ``systems``: name and URL of each system; ``on_systems``: criteria about a
    system's state must be checked on it — default: the plan changes data; ``applied``: the lines
    of the gate's record that speak of what a system holds, ``Facts.applied_lines``)."""
    state_rule = plan.changes_data if on_systems is None else on_systems
    texts = _pages_unechoed(texts)
    # what the plan's criteria name: the records "no other bill" is other than, where it names none
    planned = _plan_names(plan.success_criteria)
    checks = [
        _checked(
            c, plain(_criterion_of(c, plan)), state_rule, seen, texts, systems or [], applied or [], planned
        )
        for c in verdict.checks
    ]
    decided = decide_per_criterion(verdict, plan, checks)
    # whatever the criteria say (and in whatever words): a data-changing run that touched more records
    # than its plan names did something else
    more = _more_than_planned(planned, applied or [], texts) if plan.changes_data else None
    if more is None:
        return decided
    source, why = more
    failed = f"something else was created or changed: {why}"
    return Verdict(
        verified=False,
        checks=[*decided.checks, CriterionCheck(criterion=COUNTED, met=False, source=source, observed=why)],
        reason=f"{decided.reason}; {failed}" if not decided.verified else f"Not verified: {failed}",
    )


# the check code adds to a verdict when it counts more records touched than the plan names
COUNTED = "Nothing the plan did not name was created or changed (counted by code)"


def _criterion_of(check: CriterionCheck, plan: Plan) -> str:
    """The plan's words of the criterion a check is about: what the rules below read (never the
    verifier's restatement — "criterion 1", or one with "nothing else was created" added)."""
    index = match_criterion(check.criterion, plan.success_criteria)
    return plan.success_criteria[index] if index is not None else check.criterion


def _checked(
    check: CriterionCheck,
    criterion: str,
    state_rule: bool,
    seen: set[str],
    texts: dict[str, list[str]] | None,
    systems: list[tuple[str, str]],
    applied: list[str],
    planned: _Planned | None,
) -> CriterionCheck:
    if not check.met:
        return check
    code = _code_source(check.source, texts)
    if code is not None:  # exactly what code recorded: never a file whose name merely ends alike
        there = list((texts or {}).get(code, []))
    else:
        there = [t for source, ts in (texts or {}).items() if same_source(check.source, {source}) for t in ts]
    recorded = there
    holds = _holds(code, there, applied)  # what code recorded that a system holds now
    if code is not None and not NOTHING_ELSE.search(criterion):
        # whatever the criterion's words: only what a system holds (a refused send, a row as it was
        # before, is no evidence of it); that nothing else was created is read from every send
        there = holds
    targets = _targets(criterion, systems, texts)
    about_state = bool(systems) and (
        about_system_state(criterion, [name for name, _ in systems]) or _names_a_send(criterion, texts)
    )
    # a criterion about a system's state is read on it whatever the plan says: "changes nothing" is
    # a model's word, and what a system holds is no truer for being asked about than for being changed.
    # (That the record it names must be shown stays with a run that could have made it: a question's
    # "whether INI-7781 has a bill" is rightly answered by its absence.)
    # A criterion that states what the record holds (its amount, status, date: "BILL-0002 is paid")
    # needs the record shown whatever the plan says.
    states_values = any(_kind(v) != "id" for v in _claimed(criterion))
    record_rule, state_rule = state_rule or states_values, state_rule or about_state
    rejection = None
    if not same_source(check.source, seen):
        rejection = f"{check.source!r} was not opened (successfully) during this verification"
    elif state_rule and about_state and code is None and not _on_system(check.source, targets):
        rejection = (
            f"a criterion about the state of a system must be checked on that system's own pages "
            f"({', '.join(targets)}), not in {check.source!r}"
        )
    elif code == SENDS_SOURCE and not of_sends_only(criterion, [name for name, _ in systems]):
        # whatever the criterion's words: the record is no page of a system, nor a document
        where = (
            f"on that system's own pages ({', '.join(targets)}) or on code's before/after read-back of them"
            if about_state and targets
            else "on the page or file that shows it"
        )
        rejection = (
            f"{SENDS_SOURCE!r} is what this run sent and how each system answered, not what it holds (a "
            "system may drop a record it accepted, or hold other values) nor what a document says: it meets "
            "only a criterion each clause of which says no more than that this run created or changed nothing "
            "(else), in the past tense (not how many records were made, nor which, nor what a system holds now: "
            f"'no bill is paid', 'no duplicate bill'); check this one {where}"
        )
    elif check.find and texts is not None:
        lines = lines_with(check.find, _unnoted(there))
        if not lines:
            rejection = (
                f"the verifier never saw {check.find!r} at {check.source!r} in this verification"
                f"{_echo_note(there)}"
            )
        else:
            check = check.model_copy(update={"observed": " / ".join(f"“{ln}”" for ln in lines)})
    elif texts is not None:
        # read as a system's state, a record shown by its fields ("Amount: 494.00 USD") is read by them
        by_field = state_rule and (code is not None or _on_system(check.source, targets))
        rejection = _unseen(check.observed, there, check.source, code == SENDS_SOURCE, by_field)
        if rejection is None and not quoted(check.observed) and not _compared(check.observed):
            check = check.model_copy(update={"observed": f"{check.observed} {MODELS_WORD}"})
    if rejection is None and texts is not None and state_rule and (code or _on_system(check.source, targets)):
        # read as a system's state: the record the criterion names must be there as it says
        if about_state and record_rule:
            rejection = _record_unshown(criterion, check, code, holds, texts)
        rejection = rejection or _criterion_unshown(
            criterion, holds, check.source, code == SENDS_SOURCE, recorded if code else None
        )
    if rejection is None and NOTHING_ELSE.search(criterion):
        rejection = _saved_twice(applied) or _more_touched(criterion, planned, applied, texts)
    if rejection is None:
        rejection = _more_than_counted(criterion, applied, texts)
    if rejection:
        observed = check.observed.replace(f" {MODELS_WORD}", "")
        return check.model_copy(update={"met": False, "observed": f"{observed} {REJECTED}{rejection}]"})
    return check


def _record_unshown(
    criterion: str, check: CriterionCheck, code: str | None, holds: list[str], texts: dict[str, list[str]]
) -> str | None:
    """A criterion about a system's state that names a record (an identifier: INV-2057, BILL-0011)
    is met only where that identifier is shown as a record: on a line of the page's data, or of what
    code recorded the system holds — never in a message, nor where the page merely repeats the
    request (``_record_lines``), whatever the observation says or leaves out. A ``find`` pointer must
    land on a line naming it."""
    ids = {v for v in _claimed(criterion) if _kind(v) == "id"}
    if not ids:
        return None
    if check.find:  # the lines code copied as the evidence
        pointed = set().union(*(values(ln) for ln in _SEPARATED.split(check.observed)))
        if not ids & pointed:
            return (
                f"the line {check.find!r} points at in {check.source!r} does not name "
                f"{', '.join(sorted(v.upper() for v in ids))}, the record the criterion is about"
            )
    if code is not None:
        lines = [ln for t in holds for ln in t.splitlines()]
    else:
        lines = _record_lines(check.source, texts)
    shown = set().union(*(values(ln) for ln in lines)) if lines else set()
    if missing := sorted(ids - shown):
        return (
            f"{check.source!r} does not show {', '.join(v.upper() for v in missing[:3])} as a record (a line "
            "of its data; not a message, nor the request repeated)"
        )
    return None


_SEPARATED = re.compile(r"” / “")  # how code joins the lines a pointer copied
# lines of a rendered page that are not its data: what code writes around it, the messages it showed
_NOT_DATA = re.compile(
    r"^\s*(Observation #|Messages shown:|Not read:|Obstacle:|Scroll:|Not the page's data:)"
)


def _record_lines(source: str, texts: dict[str, list[str]]) -> list[str]:
    """The lines of a system's page that show its data: not the lines code writes around a page, nor
    a message it showed (an error, a notice). (What the page repeats of the verifier's own input —
    ``?status=VI-3390`` echoed back as "Unknown status 'VI-3390'" — is already gone: ``unechoed``.)"""
    out: list[str] = []
    for key, ts in texts.items():
        if not same_source(source, {key}):
            continue
        for text in ts:
            lines = text.splitlines()
            messages = [
                m.strip()
                for ln in lines
                if ln.lstrip().startswith("Messages shown:")
                for m in quoted(ln.split(":", 1)[1])
                if m.strip()
            ]
            for line in lines:
                if not line.strip() or _NOT_DATA.match(line) or any(m in line for m in messages):
                    continue
                out.append(line)
    return out


# ---- what the verifier put in: never the page's data --------------------------------------------

ECHO_NOTE = "Not the page's data:"  # the line ``unechoed`` leaves where it took lines out
_ECHO_LINE = (
    f"{ECHO_NOTE} lines repeating what the verifier put in (typed, selected, or in an address it opened)"
)
_SMALL_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?![\w]|[.,]\d)")  # "499" typed, "499.00" shown


def input_values(inputs: Iterable[str]) -> set[str]:
    """The values in what the verifier put into its session (``values``, as a page would show them:
    an address decoded as a server or a page's script decodes it, and small numbers too — "499"
    typed is "499.00" shown)."""
    found: set[str] = set()
    for raw in inputs:
        parts = urlsplit(raw.strip())
        if parts.scheme in ("http", "https"):  # of an address, what follows the host: path, query, fragment
            raw = raw.strip()[len(f"{parts.scheme}://{parts.netloc}") :]
        forms = [raw]
        for _ in range(3):  # %2520 → %20 → " ": what any layer of decoding makes of it
            forms += [unquote_plus(forms[-1]), unquote(forms[-1])]
        for form in dict.fromkeys(forms):
            found |= values(form)
            bare = _ID.sub(" ", _NUMERIC.sub(" ", _DOTTED.sub(" ", _ISO.sub(" ", form))))
            found |= {v for m in _SMALL_NUMBER.finditer(bare) if (v := _plain_number(m.group(0) + ".0"))}
    return _pool(found)


def unechoed(text: str, inputs: Iterable[str]) -> str:
    """What a page shows of a system's data, once what the verifier itself put in is taken out: a
    value it typed, selected or pressed, that a form field holds, or that is in an address it
    opened or landed on (path, query, fragment: ``inputs``, ``browsing.put_in``,
    ``browsing.field_values``), shown back to it by the page — a search's "No pages match
    499.00", a 404 repeating the path, a preview script fills from what it types, a notice
    quoting a filter — proves nothing a system holds. Such a value counts only on a record
    the system returned: a row of a table that also shows a value the verifier did not put in
    (a search by GX-7781 whose row says BILL-0011 … 494.00), or, of a record shown by its
    fields (a run of "label: value" lines) of which a field shows such a value, a field that
    shows one too or only names the record by its identifiers (a bill opened at
    /bills/BILL-0011: "Bill: BILL-0011"). Every other line that shows one is left out, whole
    (its other words with it: a page that repeats the request is no witness to anything on
    that line). Where lines were left out, ``ECHO_NOTE`` says so (it shows no value). The one
    rule: the verifier's browser applies it to every page it records, with all it put in so
    far (``browsing.page_data``), and ``check_verdict`` to every page with its own address."""
    echoed = input_values(inputs)
    if not echoed:
        return text
    lines = text.splitlines()

    def own(i: int) -> bool:  # does the line show a value the verifier did not put in (a status
        # word alone is no record: a row's "Unpaid" does not make a repeated request a returned row)?
        return any(v not in echoed and _kind(v) != "status" for v in values(lines[i]))

    returned = {i for i, line in enumerate(lines) if line.count(" | ") >= 2 and own(i)}  # a table's row
    for run in _field_runs(lines):  # a record by its fields: a field of its own, or one naming it
        if any(own(i) for i in run):  # (BILL-0011, opened at its address, with its amount)
            returned |= {i for i in run if own(i) or all(_kind(v) == "id" for v in values(lines[i]))}
    kept = [line for i, line in enumerate(lines) if i in returned or not (values(line) & echoed)]
    if len(kept) == len(lines):
        return text
    if _ECHO_LINE not in kept:
        kept.append(_ECHO_LINE)
    return "\n".join(kept)


def _pages_unechoed(texts: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
    """Every page recorded (by any tool) with what its own address put in taken out (``unechoed``)."""
    if texts is None:
        return None
    return {key: [unechoed(t, [key]) if is_web(key) else t for t in ts] for key, ts in texts.items()}


def _unnoted(there: list[str]) -> list[str]:
    """The texts without ``unechoed``'s note: neither a quote nor a pointer can be backed by it."""
    return [t.replace(f"\n{_ECHO_LINE}", "").replace(_ECHO_LINE, "") for t in there]


def _echo_note(there: list[str]) -> str:
    return (
        "; lines repeating what the verifier put in (typed, selected, or in an address it opened) are "
        "not the page's data"
        if any(_ECHO_LINE in t for t in there)
        else ""
    )


def _saved_twice(applied: list[str]) -> str | None:
    """That nothing else was created or changed is contradicted by the run's own record of its sends
    when a system saved the same submission twice (the same method, address and fields): the second
    made a record, or a change, of its own — whatever the verifier says it saw, and wherever."""
    sends = [line.split(" — ", 1)[0] for line in applied if line.startswith("- ")]
    twice = next((send for i, send in enumerate(sends) if send in sends[:i]), None)
    if twice is None:
        return None
    return (
        f"the record of this run's sends ({SENDS_SOURCE!r}) shows the same submission saved more than once "
        f"({_short(twice[2:], 160)}), so something else was created or changed"
    )


# ---- "nothing else": the records the run touched, counted by code -------------------------------

# a "nothing else" criterion that allows the records the task is about ("no other bill", "nothing
# else"), not one that says nothing at all was changed ("Nothing was changed in any system")
_OTHER_THAN = re.compile(
    r"\b(other|else|second|further|besides|apart|except|additional|duplicated?|extra|more|only|exactly|just|"
    r"single)\b",
    re.IGNORECASE,
)
# a criterion about creating only ("No bill was created"): a change of an existing record is no create
_MADE = re.compile(r"\b(created|added|entered|new)\b", re.IGNORECASE)
_CHANGED = re.compile(
    r"\b(chang\w*|modif\w*|updat\w*|sent|paid|edit\w*|delet\w*|removed|touched)\b", re.IGNORECASE
)
_ADDRESS = re.compile(r"(?:https?://[^\s/]+)?(/[^\s)\]\"'>]*)")


def _more_touched(
    criterion: str, planned: _Planned | None, applied: list[str], texts: dict[str, list[str]] | None
) -> str | None:
    """That nothing else was created or changed is contradicted by what code recorded when it shows
    more records touched than the criterion names: the sends the system applied (``_send_records``:
    a create each, a change per record its address names), or, of a before/after difference, the
    record rows added or removed (a row changed counts once) that show what this run sent — a row a
    colleague's job added meanwhile on a shared system is not this run's (``diff_records``).
    Before, only the same submission saved twice was caught: a bill saved as GX-5513 (a typo) and
    again as GX-5531 met "a bill for GX-5531 and no other bill was created". How many records the
    criterion names (``_named_records``): its identifiers (else amounts) shown on those records,
    those shown together on one record counting once; none shown, the plan's ("no other bill":
    other than the task's, ``_planned_records``); never fewer than a count of all it states ("a
    single bill was created", "exactly two bills were created"); none at all, the verifier's word for
    "no other …", none for "nothing was changed". (A data-changing plan is held to the records its
    criteria name whatever their words: ``_more_than_planned``.)"""
    made = _MADE.search(criterion) is not None and _CHANGED.search(criterion) is None  # creates only
    sends, diffs = _touched(applied, texts, made)
    touched = [*sends, *(row for rows in diffs.values() for row in rows)]
    known = _Known(touched, _touched(applied, texts, made, references=True)[0], texts)
    other = _OTHER_THAN.search(criterion) is not None
    allowed = _named_records(_claimed(criterion), touched, known)
    if allowed is None and other:
        allowed = _planned_records(planned, touched, known)
    total = _total_count(criterion)  # "a single bill was created", "exactly two bills were created"
    if allowed is None and other and total is None:
        # how many records the task is about, code cannot tell (bills named by vendor only: "the
        # Globex bill and the Initech bill"): the verifier's word, not a guess of one
        return None
    allowed = max(allowed or 0, total or 0)
    counted = [
        (
            len(sends),
            f"the record of this run's sends ({SENDS_SOURCE!r}) shows {len(sends)} record(s) created or changed",
        )
    ]
    counted += [
        (len(rows), f"{name!r} shows {len(rows)} record row(s) of this run's sends added, removed or changed")
        for name, rows in diffs.items()
    ]
    for count, what in counted:
        if count > allowed:
            return f"{what}, but the criterion names {allowed}: something else was created or changed"
    return None


def _touched(
    applied: list[str], texts: dict[str, list[str]] | None, made: bool = False, references: bool = False
) -> tuple[list[set[str]], dict[str, list[set[str]]]]:
    """The records this run touched, as code recorded them: by its sends the system applied
    (``_send_records``), and by each before/after difference (``diff_records``: the rows that show
    what this run sent). ``made``: those created only; ``references``: a send's records with the
    values it sent as references to others (a bill's vendor number)."""
    sent = set().union(
        set(), *(_send_ids(url, rest) for url, rest in _sends(texts) or _sends({SENDS_SOURCE: applied}))
    )
    changes = {name: ts for name, ts in (texts or {}).items() if _is_change(name)}
    diffs = {name: [row for row in diff_records(ts, made) if row & sent] for name, ts in changes.items()}
    rows = [row for rows in diffs.values() for row in rows]
    before = _there_before(list(changes.values()))
    return _send_records(applied, rows, made, before, references), diffs


def _there_before(changes: list[list[str]]) -> set[str]:
    """The identifiers on the record rows a before/after difference shows as they were before the
    run's first change: records that existed before it, so none this run created."""
    return {
        v
        for ts in changes
        for t in ts
        for ln in t.splitlines()
        if ln.startswith("- ") and ln.count(" | ") >= 2
        for v in _ids(values(ln[2:]))
    }


# what a stated number counts: records only where the noun right after it (after "new"/"additional",
# an aside, a proper name or an identifier: "exactly one GX-5531 bill", "exactly one Globex Corp bill")
# is a record's ("exactly 2 decimal places", "30 calendar days", "at most 45 business days", "only 1
# line item" count no record) — one list, read by every count of records in this module
_RECORD_NOUN = (
    r"(?:bill|invoice|record|row|payment|entr(?:y|ie)|vendor|supplier|customer|client|order|"
    r"transaction|expense|receipt|account|contact|change|submission|credit\s+note|purchase\s+order)s?"
)
_BEFORE_NOUN = (
    r"(?:\s+(?:new|additional))?(?:\s*\([^)]*\))?"
    r"(?:\s+(?:(?-i:[A-Z])[\w&.'-]*|[^\s()]*\d[^\s()]*)){0,3}?\s+"
)
# what a participle takes after it: a preposition or a determiner, in English, German, French
_TAKEN = (
    r"to|of|at|about|around|over|under|above|below|from|for|with|without|by|in|on|into|within|between|"
    r"across|through|via|per|against|up|out|near|like|the|a|an|this|that|these|those|its|their|some|all|"
    r"both|each|exactly|approximately|roughly|nearly|almost|just|more|less|no|über|von|für|mit|zu|auf|"
    r"aus|bei|nach|insgesamt|à|de|du|des|pour|par|avec|sur|en|au|aux|le|la|les|un|une|environ|plus|moins"
)
# a record noun names a record only as the head of its phrase: before the end, a mark ("exactly one
# bill, GX-5531", "a single bill (GX-5531)"), an identifier ("exactly one invoice GX-5531") or a word
# that is no noun — a verb, preposition, conjunction or adverb ("only one invoice was entered", "exactly
# one bill for …", "exactly one bill created"). Before any other word, in whatever language, it is a
# modifier of a noun of its own ("exactly 2 invoice lines", "one payment term", "one contact person",
# "one expense account", "a bill number", "invoice-line", "the vendor's contact"): no record
_NOT_A_NOUN = (
    r"was|were|is|are|be|been|being|has|have|had|got|gets?|will|would|shall|should|must|can|could|may|"
    r"might|do|does|did|exists?|remains?|appears?|shows?|stays?|matches|contains?|includes?|carries|"
    r"holds?|needs?|requires?|reads|says|references|belongs|and|or|but|nor|than|that|which|who|whose|"
    r"where|when|while|if|for|from|of|to|with|without|in|into|at|on|onto|by|under|against|about|"
    r"regarding|per|as|via|over|after|before|since|until|within|between|across|through|towards?|like|"
    r"besides?|except|including|matching|showing|naming|referencing|covering|carrying|containing|"
    r"bearing|only|also|too|now|then|today|yesterday|here|there|again|already|still|yet|left|remaining|"
    r"more|instead|altogether|overall|apiece|respectively|each|ever|not|paid|made|sent|done|set|kept|"
    r"held|shown|seen|found|split|[^\W\d_]*[^\W\d_e]ed|[^\W\d_]{2,}ly|"
    # a word after its noun that modifies it and is no noun: a participle before what it takes ("two
    # bills totalling 5570.00 USD", "bills amounting to …", "bills coming from Initech", "deux factures
    # totalisant …"), an adjective or adverb that follows its noun ("bills worth …", "one bill due on …",
    # "two bills outstanding", "bills combined"), and the function words of German and French ("zwei
    # bills über …", "deux bills pour …"); a noun in -ing before a verb stays one ("one payment booking
    # was made")
    rf"(?:[^\W\d_]{{2,}}ing|totalisant|s'?élevant|concernant|correspondant|portant|datant)"
    rf"(?=\s+(?:[^\s()]*\d|(?-i:[A-Z])|(?:{_TAKEN})\b))|"
    r"worth|due|payable|outstanding|overdue|unpaid|open|pending|together|combined|alone|apart|"
    r"über|von|vom|für|mit|zum|zur|im|am|auf|aus|bei|nach|seit|ohne|gegen|und|oder|sind|ist|wurden?|"
    r"werden|wird|insgesamt|je|jeweils|de|du|des|pour|par|avec|sans|sur|dans|en|au|aux|et|ou|est|sont|"
    r"ont|été|d'une?|chacune?"
)
_HEAD = rf"(?![-'’][^\W\d_])(?:\s*(?:$|[^\w\s])|\s+(?:{_NOT_A_NOUN})\b|\s+[^\s()]*\d)"
# a count the criterion states of the records it names: "exactly one bill for invoice GX-5531",
# "exactly one GX-5531 bill", "a single bill for invoice GX-5531", "GX-5531 is the only bill" — in
# any words: the number after "exactly/only/just/at most", "a single", "the only", of a record noun
# heading its phrase (``_HEAD``; the noun: group "noun")
_COUNTED_NUMBER = r"one|a single|two|three|four|five|six|seven|eight|nine|ten|\d{1,2}"
_COUNT_OF = re.compile(
    rf"\b(?:(?:exactly|only|just|at most)\s+({_COUNTED_NUMBER})|(a single|one single|the only))\b"
    rf"(?={_BEFORE_NOUN}(?P<noun>{_RECORD_NOUN})\b{_HEAD})",
    re.IGNORECASE,
)
_COUNT_WORDS = {
    "one": 1,
    "a single": 1,
    "one single": 1,
    "the only": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
# a count of records of some description ("exactly one bill for the latest invoice from Initech"),
# not of them all ("exactly one bill was created"), also after its verb and system ("exactly one bill
# was created in Acme Payables for Globex Corp")
_QUALIFIED = re.compile(
    rf"\b(?:{_COUNTED_NUMBER}|single){_BEFORE_NOUN}{_RECORD_NOUN}(?:\s*\([^)]*\))?"
    r"(?:\s+(?:was|were|has been|have been|is|are|got)\s+[^\W\d_]+)?"
    r"(?:\s+(?:in|into|at)\s+(?:[^\W\d_]+\s+){0,3}?[^\W\d_]+)?,?\s+"
    r"(?:for|from|of|to|with|about|regarding|against|matching|by|on|under)\b",
    re.IGNORECASE,
)
_EACH = re.compile(r"\b(each|every|per|all|both|any)\b", re.IGNORECASE)


# What the gate's record of sends can show: in every clause, in full, that this run created or
# changed nothing (else) — "No other bill was created or changed in Acme Payables", "Nothing in Acme
# Payables was changed", "No record was created, changed or deleted", "No bill was paid", "The ERP was
# not modified", "No instruction found inside an e-mail was carried out", "No data-changing submission
# was sent". Each clause is a past-tense statement of what the run did: "No bill is paid", "No payment
# is recorded in Acme Payables", "The remaining bills are not paid", "Acme Payables is unchanged" (the
# present tense: what a system holds now, whoever did it), "No other bills in Acme Payables", "There
# are no additional bills" (no verb: a state), and "No bill paid" (a participle with no auxiliary that
# reads as a state: paid, entered, recorded … only an act's — created, changed, touched — is allowed
# bare) are claims of what a system holds. A clause may hold only the kind of record (a short noun
# phrase: "no second bill", "no new bill", "no data-changing submission" — "second, other, further,
# additional, extra, more, new" are relative to what this run itself sent), a system by its name or in
# generic words (the ERP, the system) and filler words. A record noun defined by the other records a
# system holds is not the run's act: "duplicate/duplicated", "existing", "remaining", "twice/again"
# (the run's GX-5532 saved beside a GX-5531 someone entered before is a duplicate no record of sends
# shows). Anything else — a count of what was made ("Exactly one bill was created", "A single bill",
# "Only one bill"), a description, a vendor, a date, an amount in words, "besides/other than/for/with/
# at …" — is a claim of what a system holds, not of what was sent.
_WAS_DONE = (
    r"created|added|entered|made|saved|recorded|booked|posted|sent|submitted|changed|modified|updated|"
    r"edited|altered|touched|deleted|removed|carried\s+out|acted\s+(?:up)?on|followed|executed|obeyed|"
    r"paid|approved|rejected|cancell?ed|voided|archived|imported|uploaded|registered|"
    r"marked\s+(?:as\s+)?(?:paid|approved|void|cancell?ed)"
)
# the same, where no auxiliary says it was done ("No other bill touched", "Nothing else changed"): only
# a verb of an act — a bare "paid", "entered", "recorded", "approved" reads as a state ("no bill paid")
_ACTED = (
    r"created|added|made|sent|submitted|changed|modified|updated|edited|altered|touched|deleted|removed|"
    r"carried\s+out|acted\s+(?:up)?on|followed|executed|obeyed"
)
_DO = (  # the same, as the run's own verb: "the run did not create or change anything"
    r"create|add|enter|make|save|record|book|post|send|submit|change|modify|update|edit|alter|touch|"
    r"delete|remove|carry\s+out|follow|execute|obey|pay|approve|reject|cancel|void|archive|import|upload|"
    r"register"
)
_ADVERB = r"(?:(?:newly|otherwise|further|ever|yet|also|then|wrongly|mistakenly|accidentally)\s+)?"
_AND_OR = r"(?:\s*,\s*(?:or\s+|and\s+|nor\s+)?|\s+(?:or|and|nor|and/or)\s+)"
_WAS_DONE_LIST = rf"{_ADVERB}(?:{_WAS_DONE})(?:{_AND_OR}{_ADVERB}(?:{_WAS_DONE}))*"
_ACTED_LIST = rf"{_ADVERB}(?:{_ACTED})(?:{_AND_OR}{_ADVERB}(?:{_ACTED}))*"
_DO_LIST = rf"(?:{_DO})(?:{_AND_OR}(?:{_DO}))*"
# the kind of record, in a short noun phrase: no qualifier ("for", "of", "with", "besides", "whose" …)
_KIND_WORD = (
    rf"(?:{_RECORD_NOUN}|instructions?|data|forms?|items?|lines?|documents?|notes?|files?|messages?|"
    r"e-?mails?|sends?|requests?|writes?|edits?|modifications?|updates?|deletions?)"
)
# relative to what this run itself sent; never to what a system holds ("duplicate", "existing",
# "remaining": the records someone entered before)
_ELSE_WORD = r"(?:other|second|further|additional|extra|more|new)"
_KIND_MODIFIER = (
    rf"(?:{_ELSE_WORD}|single|unplanned|unexpected|unintended|data[-\s]changing|changing|e-?mail)"
)
_ARTICLE = r"(?:(?:a|an|any|the)\s+)?"
_KIND_ONE = rf"{_ARTICLE}(?:{_KIND_MODIFIER}\s+){{0,3}}{_KIND_WORD}(?:\s+{_KIND_WORD})?"
_KIND = rf"{_KIND_ONE}(?:{_AND_OR}{_KIND_ONE})*"
# "no instruction found inside an e-mail": where an instruction came from, the one qualifier allowed
_INSTRUCTION = (
    r"(?:e-?mail\s+)?instructions?(?:\s+(?:found|given|contained|written|embedded|hidden))?\s+"
    r"(?:in|inside|within|from)\s+(?:an?|the|any)\s+"
    r"(?:e-?mails?|messages?|documents?|invoices?|attachments?|pdfs?|files?)"
)
_GENERIC_SYSTEM = (
    r"(?:the\s+)?(?:erp|(?:payables\s+)?systems?|intranet|database|books|ledger|app|application)|"
    r"any(?:\s+other)?\s+systems?|any\s+of\s+the\s+systems|either\s+system|both\s+systems"
)
_WHEN = r"(?:\s+(?:at\s+all|either|otherwise|anywhere|whatsoever|as\s+well|in\s+addition))?"
_BY_RUN = r"(?:\s+(?:by|in|during)\s+(?:this|the)\s+run)?"
# past tense only: "is/are", "gets", "must be" say what a system holds (now, or ought to)
_BE = (
    r"(?:was|were|has\s+been|have\s+been|had\s+been|got|"
    r"(?:may|must|should|can|could|will|would|shall|might)\s+have\s+been)(?:\s+(?:ever|yet))?"
)
_BE_NOT = (
    r"(?:(?:was|were|has|have|had)(?:\s*n't|\s+not|\s+never)(?:\s+been)?|"
    r"(?:must|should|may|will|shall|can|could|would|might)(?:\s*n't|\s+not|\s+never)\s+have\s+been)"
)
# "Acme Payables was left unchanged", "… remained unchanged": the run's past; "is/remains unchanged"
# is what a system holds now
_UNCHANGED = (
    r"(?:(?:was|were)(?:\s+left)?|remained|stayed|(?:has|have)\s+(?:been\s+left|remained|stayed))"
    r"\s+(?:unchanged|untouched|unmodified|as\s+it\s+was|as\s+they\s+were)"
)
_QUOTE_MARK = "[\"“”']"
_LEAD = r"(?:(?:also|otherwise|additionally|moreover|furthermore|in\s+addition|and|but)\s*,?\s+)?"
_CLAUSE_BREAK = r"(?:\s*[;,.!:]\s*|\s*[;,]?\s+(?:and|but|nor|while|whereas)(?:\s+also)?\s+|\s+-+\s+)"


@functools.lru_cache(maxsize=16)
def _sends_only_grammar(names: tuple[str, ...]) -> re.Pattern[str]:
    """The whole-criterion grammar of ``of_sends_only``, naming these systems."""
    named = "|".join(
        r"\s+".join(re.escape(w) for w in plain(n).split())
        for n in sorted(names, key=len, reverse=True)
        if n.strip()
    )
    system = (
        rf"(?:(?:the\s+)?{_QUOTE_MARK}?(?:{named}){_QUOTE_MARK}?"
        rf"(?:\s+(?:erp|system|app|application|database))?|{_GENERIC_SYSTEM})"
        if named
        else rf"(?:{_GENERIC_SYSTEM})"
    )
    where = rf"(?:\s+(?:in|on|to|into|at|within|across|from)\s+{system})?"
    tail = rf"{_WHEN}{where}{_BY_RUN}{_WHEN}"
    nothing = r"nothing(?:\s+(?:else|more|further|new|other))?"
    clause = "|".join(
        (
            # "No other bill was created or changed in Acme Payables", "Nothing in Acme Payables changed"
            rf"(?:{nothing}|none(?:\s+of\s+(?:the|its|their)\s+{_KIND})?|no\s+(?:{_KIND}|{_INSTRUCTION}))"
            rf"{where}(?:\s+{_BE}\s+{_WAS_DONE_LIST}|\s+{_ACTED_LIST}){tail}",  # also "no other bill touched"
            # "nothing else" (after a clause saying what was not done)
            r"nothing\s+else",
            # "Acme Payables was not changed", "The ERP was left unchanged", "other bills were not touched"
            rf"(?:{system}|everything\s+else|the\s+rest|(?:all\s+)?(?:the\s+)?other\s+{_KIND}){where}\s+"
            rf"(?:{_BE_NOT}\s+{_WAS_DONE_LIST}|{_UNCHANGED}|did(?:\s*n't|\s+not)\s+change){tail}",
            # "The run created or changed nothing else", "this run did not change anything in the ERP"
            rf"(?:the|this)\s+run\s+(?:{_WAS_DONE_LIST}\s+{nothing}|(?:did|has)(?:\s*n't|\s+not)\s+"
            rf"{_DO_LIST}\s+(?:anything(?:\s+else)?|any\s+{_KIND}))(?:\s+else)?{tail}",
            # "There were no changes to Acme Payables", "there were no other bills created"
            rf"there\s+(?:was|were|has\s+been|have\s+been)\s+no\s+(?:(?:{_KIND_MODIFIER}\s+){{0,3}}"
            rf"(?:changes?|modifications?|edits?|writes?|updates?|deletions?|submissions?|sends?){where}|"
            rf"{_KIND}\s+{_ACTED_LIST}){tail}",
        )
    )
    one = rf"{_LEAD}(?:{clause})"
    return re.compile(rf"\s*{one}(?:{_CLAUSE_BREAK}{one})*[\s.!]*", re.IGNORECASE)


def of_sends_only(criterion: str, systems: Iterable[str] = ()) -> bool:
    """Does a criterion claim only what the gate's record of this run's sends can show — every clause
    of it, in full, that this run created or changed nothing (else) (the grammar above), naming no
    record by an identifier or an amount? ``systems``: the systems' names a clause may name. The
    record is what the run sent and how each system answered (an answer read as "saved" is the gate's
    reading of a page): never that a record is there, with its values, nor that it was there
    already, nor how many there are. Those are read on the system's own pages, or on code's
    before/after read-back."""
    if any(_kind(v) in ("id", "number") and not _YEAR.match(v) for v in _claimed(criterion)):
        return False
    text = " ".join(plain(criterion).split())
    return bool(text) and _sends_only_grammar(tuple(systems)).fullmatch(text) is not None


def _stated_count(criterion: str) -> int | None:
    """The number of records a criterion states ("exactly one", "only 2", "a single", "the only"),
    None where it states none."""
    counted = _counted(criterion)
    return counted[0] if counted else None


def _counted(criterion: str) -> tuple[int, re.Match[str]] | None:
    """The first count of records a criterion states (``_stated_count``), with its match (the noun
    counted: group "noun"): a count of a record noun heading its phrase (``_COUNT_OF``), not one in a
    clause about what a record the plan names holds (``_of_its_record``: "The bill has exactly 2
    lines", "The bill is to be paid in a single payment")."""
    for m in _COUNT_OF.finditer(criterion):
        if _of_its_record(criterion, m.start()):
            continue
        word = " ".join((m.group(1) or m.group(2)).casefold().split())
        return _COUNT_WORDS.get(word) or int(word), m
    return None


def _total_count(criterion: str) -> int | None:
    """How many records a "nothing else" criterion says were created or changed in all ("exactly two
    bills were created"); None for one counting records of some description ("exactly one new bill
    for the Initech invoice") or stating no number ("no other bill")."""
    if not NOTHING_ELSE.search(criterion) or _QUALIFIED.search(criterion):
        return None
    return _stated_count(criterion)


def _more_than_counted(criterion: str, applied: list[str], texts: dict[str, list[str]] | None) -> str | None:
    """ "Exactly one bill for invoice GX-5531" is contradicted when code recorded more records
    showing an identifier it names than it counts: two bills saved for GX-5531 (a wrong amount,
    then the right one) met it before. A criterion naming no identifier, or stating no count, is
    left to the other rules (a count of all records: ``_more_than_planned``, ``NOTHING_ELSE``)."""
    allowed = _stated_count(criterion)
    ids = _ids(_claimed(criterion))
    if allowed is None or not ids:
        return None
    sends, diffs = _touched(applied, texts, references=True)  # "exactly one bill for vendor V-1042"
    counted = [(sends, f"the record of this run's sends ({SENDS_SOURCE!r})")]
    counted += [(rows, repr(name)) for name, rows in diffs.items()]
    for records, where in counted:
        for named in sorted(ids):
            count = sum(1 for r in records if named in r)
            if count > allowed:
                return (
                    f"{where} shows {count} records created or changed for {named.upper()}, but the "
                    f"criterion says {allowed}"
                )
    return None


class _Planned(NamedTuple):
    """What a plan's criteria name (``_plan_names``)."""

    named: list[set[str]]  # the values of each criterion naming its records by identifiers
    more: int  # records named by a count only ("exactly one bill for the latest invoice from Initech")
    total: int  # the most records a count of all states ("exactly two bills were created"): never fewer


def _plan_names(criteria: list[str]) -> _Planned | None:
    """What the plan's criteria name, read by code whatever their words: each criterion naming its
    records by identifiers, their values; one naming them by a count only ("exactly one bill for the
    latest invoice from Initech": one record code cannot tell by name), that count; a "nothing else"
    criterion stating no value but a status ("No other bill was created", "A single bill was created",
    "No other bill was paid") names no record (its count of all is kept as a floor). None where a criterion names its records by neither
    ("the Globex bill and the Initech bill are paid and nothing else was changed", "a bill for each
    vendor"): how many, code cannot tell — nor when no criterion names any record."""
    named: list[set[str]] = []
    more = total = 0
    criteria = [plain(c) for c in criteria]
    kinds = _kinds_planned(criteria)
    for criterion in criteria:
        claimed = _claimed(criterion)
        whole = _total_count(criterion)
        total = max(total, whole or 0)
        counted = _counted(criterion)
        if _ids(claimed):
            named.append(claimed)
        elif (
            not {v for v in claimed if _kind(v) != "status"}
            and NOTHING_ELSE.search(criterion)
            and (whole is not None or counted is None)
        ):
            # it names no record: "No other bill was created", "A single bill was created", "No other
            # bill was paid" (what was not done to it, no status a record holds)
            continue
        elif (
            counted is not None and not _EACH.search(criterion) and _of_the_plan(criterion, counted[1], kinds)
        ):
            more += counted[0]
        elif not _describes_a_record(criterion, but=counted[1].start("noun") if counted else None):
            # it names no record of its own, only what the records the plan names hold ("The amount
            # is entered with exactly 2 decimal places", "Payment terms are at most 45 business
            # days", "Only 1 line item is on the bill"): its number is no count of records
            continue
        else:
            return None
    if not named and not more and not total:
        return None
    return _Planned(named, more, total)


# what a record noun may be followed by where it names no record but a field of one ("the invoice
# date", "payment terms", "the vendor name")
_FIELD_OF = re.compile(
    r"\s+(?:dates?|numbers?|no\b|nr\b|amounts?|totals?|terms?|lines?|items?|status|currency|ids?|"
    r"references?|fields?|names?|details?|values?|types?|methods?|periods?|address(?:es)?|pages?|lists?|"
    r"forms?|counts?|codes?)\b",
    re.IGNORECASE,
)
# "the bill", "the new bill": the record the plan names elsewhere, not one of its own
_THE = re.compile(r"\b(?:the|this|that|its|their|said)\s+(?:new\s+)?$", re.IGNORECASE)
_HEADS = re.compile(_HEAD, re.IGNORECASE)
# a clause whose subject is a record ("the bill", "the new vendor", "the Globex bill") or a field of
# one ("the amount", "its due date") says what that record holds or is tied to: a count or record
# noun after its verb is of that ("The bill has exactly 2 lines", "The bill is to be paid in a single
# payment", "The bill is recorded against a single purchase order", "The amount is booked to exactly
# one Expense Account", "The vendor has exactly one contact"), no record the plan creates or changes —
# until a clause of its own begins ("…; exactly one bill was created", "… and only one bill was …")
_ITS_SUBJECT = re.compile(
    r"\b(?:the|this|that|its|their|said)\s+(?:[^\W\d_][\w&.'’-]*\s+){0,3}?"
    rf"(?:{_RECORD_NOUN}|amounts?|totals?|dates?|numbers?|terms?|lines?|items?|status|currency|"
    r"references?|names?|details?|values?|types?|methods?|periods?|address(?:es)?|descriptions?|memos?)"
    r"(?:\s*\([^)]*\)|\s*,[^,;]*,)?\s+(?:(?:[^\W\d_]+ly|only|now|also|still|then|not)\s+)?"
    r"(?:is|are|was|were|has|have|had|will|would|shall|should|must|can|may|does|do|did|gets?|got|lists?|"
    r"contains?|includes?|shows?|carries|holds?|applies|references|belongs|needs|requires|uses|goes)\b",
    re.IGNORECASE,
)
_NEW_CLAUSE = re.compile(
    r";|[.!?](?:\s|$)|\b(?:and|but|while|whereas)\s+(?=(?:exactly|only|just|at most|a single|one single|"
    r"the only|no)\b)",
    re.IGNORECASE,
)


def _of_its_record(criterion: str, at: int) -> bool:
    """Is the text at ``at`` in a clause about what a record (or a field of one) holds or is tied to
    (``_ITS_SUBJECT``), after its verb?"""
    ends = [m.end() for m in _ITS_SUBJECT.finditer(criterion, 0, at)]
    return bool(ends) and _NEW_CLAUSE.search(criterion, ends[-1], at) is None


def _heads(criterion: str) -> Iterator[re.Match[str]]:
    """The record nouns of a criterion that name a record: each heading its phrase (``_HEAD``: not
    "invoice lines", "payment terms", "contact person"), not in a clause about what a record holds
    (``_of_its_record``)."""
    for m in re.finditer(rf"\b{_RECORD_NOUN}\b", criterion, re.IGNORECASE):
        if _FIELD_OF.match(criterion, m.end()) or not _HEADS.match(criterion, m.end()):
            continue
        if not _of_its_record(criterion, m.start()):
            yield m


def _describes_a_record(criterion: str, but: int | None = None) -> bool:
    """Does a criterion naming no identifier name a record by description ("a bill for the latest
    invoice from Initech", "the Globex Corp bill", "Initech's bill", "both bills")? A record noun
    (``_heads``) does, but not as a field of one ("the invoice date", "payment terms", "2 invoice
    lines"), nor as what a record holds ("The bill is paid in a single payment"), nor as "the bill"
    alone (the one the plan names elsewhere: "Only 1 line item is on the bill"), nor (``but``: where it
    starts) as a count of things of another kind the plan does not create (``_of_the_plan``)."""
    for m in _heads(criterion):
        if m.start() == but:
            continue
        if not m.group(0).casefold().endswith("s") and _THE.search(criterion[: m.start()]):
            continue
        return True
    return False


# one kind of record by any of its nouns (an invoice entered is a bill); a generic noun is of any kind
_KIND_OF = {"invoice": "bill", "supplier": "vendor", "client": "customer", "purchase order": "order"}
_ANY_KIND = {"record", "row", "entry", "transaction", "change", "submission"}
# a count of records said to be created or changed: "exactly one payment was made", "only 3 vendors
# were added", "exactly one bill created" — or, before the count, "entered exactly two bills"
_SAID_MADE = re.compile(
    r"(?:\s*\([^)]*\))?(?:,?\s+(?:was|were|is|are|has been|have been|will be|gets|got|(?:is |are )?to be))?"
    r"\s+(?:created|added|entered|made|saved|recorded|booked|posted|registered|issued|set up|opened|"
    r"changed|modified|updated|edited|paid|sent|deleted|removed)\b",
    re.IGNORECASE,
)
_MADE_BEFORE = re.compile(
    r"\b(?:creat|add|enter|mak|made|sav|record|book|post|register|issu|chang|modif|updat|edit|pa[iy]|"
    r"delet|remov)\w*\s+$",
    re.IGNORECASE,
)


def _record_kind(noun: str) -> str:
    word = " ".join(noun.casefold().split())
    word = word[:-3] + "y" if word.endswith("ies") else word.removesuffix("s")
    return _KIND_OF.get(word, word)


def _kinds_planned(criteria: list[str]) -> set[str]:
    """The kinds of record the plan creates or changes: those its criteria naming records by
    identifier ("a bill for Globex Corp GX-5531", "vendor V-1042") or claiming nothing else ("No
    other bill was created") name."""
    return {
        _record_kind(m.group(0))
        for c in criteria
        if _ids(_claimed(c)) or NOTHING_ELSE.search(c)
        for m in _heads(c)
    }


def _of_the_plan(criterion: str, count: re.Match[str], kinds: set[str]) -> bool:
    """Does a count (``_counted``) count records the plan creates or changes, so allow as many more?
    A count of the kind its other criteria name ("Acme Payables has exactly one bill for the latest
    invoice from Initech" beside "a bill for GX-5531"), of a generic noun, or of records said to be
    created or changed ("exactly one payment was made") does; one of things of another kind that are
    there ("Exactly one purchase order is referenced", "Only one Expense Account is used") does not.
    Where no criterion names a kind, any count does."""
    kind = _record_kind(count.group("noun"))
    if not kinds or kind in _ANY_KIND or kind in kinds or kinds & _ANY_KIND:
        return True
    return bool(
        _SAID_MADE.match(criterion, count.end("noun")) or _MADE_BEFORE.search(criterion, 0, count.start())
    )


def _planned_records(
    planned: _Planned | None, touched: list[set[str]], known: _Known | None = None
) -> int | None:
    """How many of the records ``touched`` the plan names (``_plan_names``): those its identifiers
    name on them (``_named_records``), with those it names by a count only, and never fewer than a
    count of all it states. None: code cannot tell — a criterion names its records by no identifier
    and no count ("the Globex bill and the Initech bill"), or none of its identifiers is shown where
    code knows no identifier of a record touched."""
    if planned is None:
        return None
    named = _named_records(set().union(set(), *planned.named), touched, known) if planned.named else 0
    if named is None:
        return None  # a criterion naming its record by no identifier: how many, code cannot tell
    return max(named + planned.more, planned.total)


def _more_than_planned(
    planned: _Planned | None, applied: list[str], texts: dict[str, list[str]] | None
) -> tuple[str, str] | None:
    """(where, why) when code counts more records this data-changing run created or changed — by the
    sends a system applied, or by a before/after difference (``_touched``) — than its plan names
    (``_planned_records``), whatever its criteria's words: "Exactly 1 bill was created … GX-5531",
    "Only one bill (GX-5531 …) was created", "GX-5531 is the only bill created" or no such words at
    all each let a typo'd GX-5513 bill through before. None where code cannot tell how many the plan
    names: the verifier's word."""
    sends, diffs = _touched(applied, texts)
    touched = [*sends, *(row for rows in diffs.values() for row in rows)]
    if not touched:
        return None
    allowed = _planned_records(
        planned, touched, _Known(touched, _touched(applied, texts, references=True)[0], texts)
    )
    if allowed is None:
        return None
    names = _ids(set().union(set(), *planned.named)) if planned else set()
    counted = [(SENDS_SOURCE, sends, "the record of this run's sends shows {n} record(s) created or changed")]
    counted += [
        (name, rows, f"{name!r} shows {{n}} record row(s) of this run's sends added, removed or changed")
        for name, rows in diffs.items()
    ]
    for source, records, what in counted:
        if len(records) <= allowed:
            continue
        unnamed = [r for r in records if not r & names]  # else the same identifiers on more records
        shown = "; ".join(_described(r, "a") for r in unnamed[:3]) or _described(records[-1], "another")
        return source, (
            f"{what.format(n=len(records))} and the plan's criteria name {allowed}: {shown}, which the "
            "plan did not name"
        )
    return None


def _described(record: set[str], article: str) -> str:
    """A record touched, in a few words: its identifiers, else its values."""
    shown = sorted(v.upper() for v in _ids(record)) or sorted(record)
    return f"{article} record with " + ", ".join(shown[:4])


def _named_records(named: set[str], touched: list[set[str]], known: _Known | None = None) -> int | None:
    """How many of the records ``touched`` the values ``named`` name: its identifiers (else its
    amounts) that a touched record shows, those shown together on one record counting as one
    ("GX-5531 (BILL-0013)"); a value on two records names one (the same invoice number saved twice is
    one record named, two touched). Where none of its identifiers is on a touched record but code
    knows an identifier of every one (``known``: its send's, its rows'), a record carrying none of
    them is another record: the plan names BILL-0003, the run paid BILL-0004 — 0, not "cannot
    tell" (a page's or a difference's row showing BILL-0011 with INV-2057 makes a payment sent to
    /bills/BILL-0011/pay the plan's INV-2057). None when none of them is on a touched record and
    code cannot tell: it knows no identifier of one, or one carries a named identifier only as a
    reference to another record (a bill's vendor V-1042)."""
    groups = _groups(_ids(named), touched)
    if groups:
        return len(groups)
    if _ids(named) and known is not None and (ids := known.ids()) is not None:
        groups = _groups(_ids(named), ids)
        if groups or not any(record & _ids(named) for record in known.wide):
            return len(groups)
        return None
    groups = _groups({v for v in named if _kind(v) == "number" and not _YEAR.match(v)}, touched)
    return len(groups) if groups else None


def _groups(names: set[str], records: list[set[str]]) -> list[set[str]]:
    """The values ``names`` shown on ``records``, those shown together on one record joined."""
    groups: list[set[str]] = []
    for shown in (record & names for record in records):
        if shown:
            joined = [g for g in groups if g & shown]
            groups = [g for g in groups if not g & shown] + [shown.union(*joined)]
    return groups


class _Known(NamedTuple):
    """What code knows of the records a run touched (``_touched``), to tell one the plan names from
    another: ``touched``, each record's values; ``wide``, the same with the values its sends sent as
    references to other records (a bill's vendor); ``texts``, what the verifier saw, whose rows show
    more of a record's identifiers."""

    touched: list[set[str]]
    wide: list[set[str]]
    texts: dict[str, list[str]] | None

    def ids(self) -> list[set[str]] | None:
        """Each touched record's identifiers: its own and those of every row of a page or a
        before/after difference (a table's row, a record shown by its fields, not its free text)
        that shows one of them ("BILL-0011 | Northwind Traders | INV-2057 | …": BILL-0011 is
        INV-2057). None when code knows none of one record."""
        rows = _row_ids(self.texts)
        out = []
        for record in self.touched:
            own = _ids(record)
            if not own:
                return None
            out.append(own.union(*(row for row in rows if row & own)))
        return out or None


def _row_ids(texts: dict[str, list[str]] | None) -> list[set[str]]:
    """The identifiers of each record the pages and before/after differences show: a table's row, or
    the fields of a record shown by them (not a note's or comment's words) — never the gate's record of
    sends (what was sent, not what a system holds)."""
    out: list[set[str]] = []
    for name, ts in (texts or {}).items():
        if name == SENDS_SOURCE:
            continue
        for text in ts:
            lines = text.splitlines()
            out += [_ids(values(ln)) for ln in lines if ln.count(" | ") >= 2 and not _NOT_DATA.match(ln)]
            for run in _field_runs(lines):
                fields = [m for i in run if (m := _field(lines[i])) is not None]
                out.append(
                    set().union(
                        set(),
                        *(
                            _ids(values(m.group(2)))
                            for m in fields
                            if not _FREE_TEXT_LABEL.search(m.group(1))
                        ),
                    )
                )
    return [ids for ids in out if ids]


def diff_records(texts: list[str], made: bool = False) -> list[set[str]]:
    """The records a before/after difference shows touched, each as the values of its rows: a row
    added, a row removed, and a row changed (removed as it was, added as it is, sharing an
    identifier) counted once. A row naming no record (a totals line) is none. ``made``: only the
    rows added that were not there before (a criterion about creating only)."""
    rows = [
        (ln[0], values(ln[2:]))
        for t in texts
        for ln in t.splitlines()
        if ln[:2] in ("+ ", "- ") and ln.count(" | ") >= 2
    ]
    added = [found for sign, found in rows if sign == "+" and _ids(found)]
    records = [set(found) for found in added]
    paired: set[int] = set()
    for found in (found for sign, found in rows if sign == "-" and _ids(found)):
        same = next((i for i, a in enumerate(added) if i not in paired and _ids(found) & a), None)
        if same is None:
            records.append(set(found))
        else:
            paired.add(same)
            records[same] |= found
    if made:
        return [r for i, r in enumerate(records[: len(added)]) if i not in paired]
    return records


def _ids(found: set[str]) -> set[str]:
    return {v for v in found if _kind(v) == "id"}


def _record_keys(address: str) -> set[str]:
    """The records an address names: its path's segments with a digit ("/bills/BILL-0013/pay":
    BILL-0013), not an API version ("v2")."""
    segments = unquote(urlsplit(address).path).split("/")
    return {plain(s).casefold() for s in segments if re.search(r"\d", s) and not re.fullmatch(r"[vV]\d+", s)}


def _send_ids(url: str, rest: str) -> set[str]:
    """The records a send in the gate's record names: by its address, the identifiers it sent, and
    the record its answer showed ("then showed /bills/BILL-0013")."""
    answer_keys = set().union(set(), *(_record_keys(a) for a in _ADDRESS.findall(rest)))
    return _record_keys(url) | _ids(values(rest)) | answer_keys


def send_keys(url: str, fields: list[tuple[str, str]], answer: str = "") -> set[str]:
    """The identifiers of the record one send is about, to find it on a before/after row: those its
    address names (``/bills/BILL-0013/pay``), those it sent as the record's own (``invoice_number``;
    not one naming another record, a bill's ``vendor_id``: ``is_reference``) and the record its answer
    showed ("then showed /bills/BILL-0013")."""
    own = set().union(set(), *(values(v) for n, v in fields if not is_reference(n, url)))
    answered = set().union(set(), *(_record_keys(a) for a in _ADDRESS.findall(answer)))
    return _record_keys(url) | _ids(own) | answered


def _send_records(
    applied: list[str],
    rows: list[set[str]],
    only_created: bool = False,
    before: set[str] | None = None,
    references: bool = False,
) -> list[set[str]]:
    """The records the sends a system applied touched, each as the values its sends sent: a send
    whose address names a record changes it (those naming the same record, one); any other that sent
    a field creates one, each its own (two bills entered are two, whatever they share) — the record
    its answer showed ("then showed /bills/BILL-0013", a 201's Location), which a later change of
    BILL-0013 is, as is a change of a record a before/after row (``rows``) shows with an identifier
    the create sent.
    A change code cannot link to any record so is the record an earlier create of this run made
    whose answer named no record (HTTP 200 with the new bill's page) and no row shows, when there is
    one: entered, then paid, is one record touched — never a record of its own by that alone (the
    verifier's word which), unless a row as it was before the run (``before``) shows it existed, or
    what it sent contradicts what the create sent (another invoice number, amount or vendor in the
    same field: an edit of another bill, ``_contradicts``). Creates are never merged: two bills
    entered are two. A value sent as a reference to another record (``is_reference``: a bill's
    ``vendor=V-1042``) is not the record's own, so it joins no two records into one; ``references``
    keeps such values too (a count of the records showing an identifier at all).
    ``only_created``: only the records a send created (a criterion about creating only: a payment
    created none)."""
    # (its keys, the values its sends sent as its own, created, what its create sent by field, refs)
    records: list[tuple[set[str], set[str], bool, dict[str, str], set[str]]] = []

    def unnamed(record: tuple[set[str], set[str], bool, dict[str, str], set[str]]) -> bool:
        keys, named, created, _, _ = record  # a create nothing names yet
        return created and not keys and not any(row & _ids(named) for row in rows)

    for line in applied:
        m = _SEND_LINE.match(line)
        if m is None:
            continue
        fields, saved, answer = m.group(2).rpartition(" — saved — ")  # the last: a field may hold any words
        fields, answer = (fields, answer) if saved else (answer, "")
        changes = _record_keys(m.group(1))
        if not changes and not fields.strip():
            continue  # it names no record and sent no field (a logout): it made none
        made = (
            set().union(set(), *(_record_keys(a) for a in _ADDRESS.findall(answer))) if not changes else set()
        )
        sent = _sent_fields(fields)
        refs = {n for n in sent if is_reference(n, m.group(1))}
        own = {n: v for n, v in sent.items() if n not in refs}
        # all it sent as the record's own (amounts too); linked by identifiers
        named = changes | made | (set().union(set(), *map(values, own.values())) if sent else values(fields))
        referred = set().union(set(), *(values(sent[n]) for n in refs))
        same = None
        if changes:
            same = next(
                (
                    r
                    for r in records
                    if r[0] & changes or any(row & changes and row & _ids(r[1]) for row in rows)
                ),
                None,
            )
            if same is None and not changes & (before or set()):
                same = next(
                    (r for r in reversed(records) if unnamed(r) and not _contradicts(sent, r[3], refs)), None
                )
        if same is None:
            records.append((changes | made, named, not changes, sent if not changes else {}, referred))
        else:
            same[0].update(changes)
            same[1].update(named)
            same[4].update(referred)
    return [
        named | (refs if references else set())
        for _, named, created, _, refs in records
        if created or not only_created
    ]


_FIELD_PAIR = re.compile(r"(?:^|, )([^\s=,\[\]]+(?:\[[^\]=]*\])*)=")


def _sent_fields(fields: str) -> dict[str, str]:
    """The fields of a send in the gate's record (`` [vendor=V-1042, amount=500.00]``), by name; {}
    where it shows none so."""
    text = fields.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return {}
    text = text[1:-1]
    marks = list(_FIELD_PAIR.finditer(text))
    return {
        m.group(1).casefold(): text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        for i, m in enumerate(marks)
    }


# a field that names another record the one sent is about: its vendor, its customer, its parent
_REFERENCE = re.compile(
    r"(?:^|[_\-\[.])(vendor|supplier|customer|client|account|parent|payee|payer|company|contact|owner|"
    r"partner|creditor|debtor)s?(?:[_\-.]?(?:id|number|no|nr|code|ref|key|name))?\]?$",
    re.IGNORECASE,
)


def is_reference(field: str, address: str) -> bool:
    """Is a field sent to ``address`` a reference to another record (a bill's ``vendor``,
    ``vendor_id``, ``supplier_code``; not ``vendor_number`` sent to ``/vendors/new``, the vendor's
    own)?"""
    m = _REFERENCE.search(field)
    if m is None:
        return False
    noun = m.group(1).casefold()
    path = unquote(urlsplit(address).path).casefold()
    return re.search(rf"(?<![a-z]){noun}", path) is None


def _contradicts(sent: dict[str, str], created: dict[str, str], refs: set[str]) -> bool:
    """Does a change send, in a field the create sent too, another identifier or amount (another
    invoice number, another amount) or another record referred to (another vendor)? Then it is no
    change of that create's record, whatever else links them (a date or a status may change)."""
    for name, value in sent.items():
        if name not in created:
            continue
        if name in refs:
            if " ".join(value.casefold().split()) != " ".join(created[name].casefold().split()):
                return True
            continue
        mine = {v for v in values(value) if _kind(v) in ("id", "number")}
        theirs = {v for v in values(created[name]) if _kind(v) in ("id", "number")}
        if mine and theirs and mine != theirs:
            return True
    return False


def _holds(code: str | None, there: list[str], applied: list[str]) -> list[str]:
    """What a source code recorded says a system holds now: of the gate's record, the lines code
    writes before its first send (what it is, how many were sent) and the sends the system applied
    (``Facts.applied_lines``, chosen from the facts, not from the words of a line); of a before/after
    difference, all but the lines as they were before."""
    if code == SENDS_SOURCE:
        head = [
            ln
            for t in there
            for ln in itertools.takewhile(lambda ln: not ln.startswith("- "), t.splitlines())
        ]
        return ["\n".join([*head, *applied])]
    if code is not None:
        return ["\n".join(ln for t in there for ln in t.splitlines() if not ln.startswith("- "))]
    return there


_SEND_LINE = re.compile(r"^- [A-Z]+ (\S+)(.*)$", re.MULTILINE)  # a send in the gate's record (Facts._line)


def _sends(texts: dict[str, list[str]] | None) -> list[tuple[str, str]]:
    """(URL, the rest of its line) of each send in the gate's record."""
    return [
        (m.group(1), m.group(2)) for t in (texts or {}).get(SENDS_SOURCE, []) for m in _SEND_LINE.finditer(t)
    ]


def _targets(criterion: str, systems: list[tuple[str, str]], texts: dict[str, list[str]] | None) -> list[str]:
    """The systems a claim about a system's state is read on: those this run sent a change to (the
    gate's record) or watched for one (a before/after difference), and those the criterion names;
    when neither gives one, the run's first system. Never merely any system's host: a reference
    site (the intranet, with vendors' announcements on it) proves nothing of what the ERP holds."""
    hosts = [urlsplit(url).netloc for url, _ in _sends(texts)]
    hosts += [
        urlsplit(name[len(CHANGES_SOURCE) :].strip()).netloc for name in texts or {} if _is_change(name)
    ]
    urls = [url for name, url in systems if urlsplit(url).netloc in hosts or _names(criterion, name)]
    known = {urlsplit(url).netloc for url in urls}
    urls += [f"http://{host}/" for host in dict.fromkeys(hosts) if host and host not in known]
    return urls or [url for _, url in systems[:1]]


def _is_change(name: str) -> bool:
    return name.startswith(f"{CHANGES_SOURCE} ")


def _names(criterion: str, system: str) -> bool:
    return (
        bool(system) and re.search(rf"(?<!\w){re.escape(system)}(?!\w)", criterion, re.IGNORECASE) is not None
    )


def _names_a_send(criterion: str, texts: dict[str, list[str]] | None) -> bool:
    """Does the criterion name an identifier or an amount this run sent to a system (refused or
    not)? Then it speaks of what that system holds, whatever its words."""
    sent = {v for _, rest in _sends(texts) for v in values(rest) if _kind(v) in ("id", "number")}
    return bool(sent & {v for v in values(criterion) if _kind(v) in ("id", "number")})


def _code_source(cited: str, texts: dict[str, list[str]] | None) -> str | None:
    """The source code wrote that ``cited`` names exactly (the gate's record, a before/after
    difference it registered), quotes and backticks aside; None for anything else."""
    name = cited.strip().strip("<>`'\"").strip()
    if name == SENDS_SOURCE or (name.startswith(f"{CHANGES_SOURCE} ") and name in (texts or {})):
        return name
    return None


def _unseen(
    observed: str, there: list[str], source: str, every_line_a_row: bool = False, by_field: bool = False
) -> str | None:
    if missing := quotes_unseen(observed, _unnoted(there)):
        return f"the verifier never saw {missing[0]!r} at {source!r} in this verification{_echo_note(there)}"
    have = _pool(set().union(*(values(t) for t in there))) if there else set()
    if missing_values := sorted(_compared(observed) - have):
        return (
            f"{source!r} does not show {', '.join(map(_shown, missing_values[:3]))} (not in what the verifier saw "
            f"there{_echo_note(there)})"
        )
    return _other_row(observed, there, source, every_line_a_row, by_field)


_SENTENCE = re.compile(r";\s*|\.\s+|\n")  # what one statement of an observation ends at (not commas)


def _other_row(
    observed: str, there: list[str], source: str, every_line_a_row: bool, by_field: bool = False
) -> str | None:
    """A table's values belong to their row: where a statement of the observation names a record
    that has a row (an identifier such as GX-7781 or BILL-0011 on a ``| … | … |`` line, or on a line
    of the gate's record), each other value it states that sits in the table must be on one of those
    rows, not taken from a neighbour (499.00 from Hooli's row for a Globex bill saved as 494.00).
    ``by_field`` (read as a system's state): where it names a record a page shows by its fields, each
    amount, currency and date it states must be that record's field of its kind (``_off_field``).
    Quoted words and clauses of absence count here: they still name the record."""
    lines = [line for text in there for line in text.splitlines()]
    row_lines = [line for line in lines if every_line_a_row or line.count(" | ") >= 2]
    rows = [_pool(_row_values(line)) for line in row_lines]
    records = _records(there) if by_field and not every_line_a_row else []
    in_table = set().union(*rows)
    # a statement naming no record ("GX-7781 is there; amount 499.00") speaks of the observation's
    # record when the observation names exactly one row's, and it names no other row by its words
    # ("Hooli Cloud Services' bill is 499.00" speaks of Hooli's row): it is held to that row
    observed_ids = {v for v in values(observed) if _kind(v) == "id"}
    one = [i for i, row in enumerate(rows) if row & observed_ids]
    for statement in _SENTENCE.split(observed):
        said = values(statement)
        ids = {v for v in said if _kind(v) == "id"}
        if off := _off_field(said - ids, ids, records, source):
            return off
        if ids:
            own = [row for row in rows if row & ids]
        elif len(one) == 1 and not _names_another_row(statement, row_lines, one[0]):
            own = [rows[one[0]]]
        else:
            own = []
        for value in sorted(said - ids) if own else []:
            contrary = _kind(value) == "status" and _refuted(value, set().union(*own))
            if (value in in_table or contrary) and not any(value in row for row in own):
                on = set().union(*own)
                named = ", ".join(sorted(v.upper() for v in (ids or on) & on if _kind(v) == "id"))
                return (
                    f"{source!r} shows {_shown(value)} on another row than {named}: a record's values "
                    "come from its own row"
                )
    return None


def _row_values(line: str) -> set[str]:
    """A table row's values; its status only from a cell that starts with one ("Unpaid", "Paid on
    2026-09-05"), never a status word in another cell ("| Unpaid | vendor says paid |": a note)."""
    found = values(line)
    if line.count(" | ") < 2:
        return found
    cells = [re.sub(r"^\s*(?:\[\d+\]\s*)?", "", cell) for cell in line.split("|")]
    status = set().union(*(values(cell) for cell in cells if _STATUS.match(plain(cell))))
    return {v for v in found if _kind(v) != "status"} | {v for v in status if _kind(v) == "status"}


def _names_another_row(statement: str, row_lines: list[str], mine: int) -> bool:
    """Does ``statement`` name a row other than row ``mine`` by a word only that other row shows
    (a vendor's name)?"""
    words = {w for w in re.findall(r"[^\W\d_]{4,}", statement.casefold())}
    own = set(re.findall(r"[^\W\d_]{4,}", row_lines[mine].casefold()))
    return any(
        words & (set(re.findall(r"[^\W\d_]{4,}", line.casefold())) - own)
        for i, line in enumerate(row_lines)
        if i != mine
    )


def _criterion_unshown(
    criterion: str, there: list[str], source: str, every_line_a_row: bool, recorded: list[str] | None
) -> str | None:
    """Read as a system's state, the record the criterion names must be there as the criterion
    says, whatever the observation names (or leaves out). Where the criterion names a record (an
    identifier; naming none, by its amounts: the rows showing them all) that has a row, each amount or date it states must be on that record's row — when it
    sits on another row (499.00 is Hooli's), and when the row shows a value of its kind (an amount, a
    date) that is not it (GX-7781's row shows 494.00). ``recorded``: all that code recorded (``there``
    being what of it a system holds): a value the criterion states that it shows only on a send the
    system did not apply, or on a row as it was before, is no evidence, also for "nothing else".
    Clauses that speak of something absent ("no other bill", "INI-7781 has no bill") are left out."""
    claimed = _claimed(criterion)
    if not claimed:
        return None
    lines = [line for text in there for line in text.splitlines()]
    if recorded is not None:
        held = _pool(set().union(*(values(ln) for ln in lines)))
        told = _pool(set().union(*(values(t) for t in recorded))) if recorded else set()
        if gone := sorted((claimed & told) - held):
            return (
                f"{source!r} shows {', '.join(map(_shown, gone[:3]))} only where a system does not hold it (a send it "
                "did not apply, a row as it was before)"
            )
    rows = [_pool(_row_values(line)) for line in lines if every_line_a_row or line.count(" | ") >= 2]
    ids = {v for v in claimed if re.search(r"[a-z]", v)}
    # a record the criterion names by no identifier is named by its amounts ("Globex Corp's invoice
    # of 2150.00 USD"): the rows (the records shown by their fields) showing them all are its own
    amounts = {v for v in claimed if _kind(v) == "number" and not _YEAR.match(v)}
    names = ids or amounts
    if not every_line_a_row and (off := _off_field(claimed - ids, names, _records(there), source)):
        return off
    own = [row for row in rows if row & ids] if ids else [row for row in rows if amounts and amounts <= row]
    if not own:
        return None
    in_table = set().union(*rows)
    kinds = {_kind(v) for row in own for v in row}
    for value in sorted(claimed - ids):
        if any(value in row for row in own):
            continue
        if _kind(value) == "status":  # only its contrary refutes a status: a system need not use "open"
            wrong = value in in_table or _refuted(value, set().union(*own))
        else:
            wrong = value in in_table or (_kind(value) in kinds and not _YEAR.match(value))
        if wrong:
            named = ", ".join(sorted(v.upper() for v in names if any(v in row for row in own)))
            return (
                f"{source!r} does not show {_shown(value)} on the row of {named}, as the criterion says: a "
                "record's values come from its own row"
            )
    return None


class _Record:
    """A record a page shows by its fields, one "label: value" line each: every value it shows, and
    by kind (an amount, a currency, a date) the values of its fields of that kind."""

    def __init__(self) -> None:
        self.shown: set[str] = set()
        self.held: dict[str, set[str]] = {"number": set(), "currency": set(), "date": set(), "status": set()}

    def add(self, label: str, value: str) -> None:
        found = values(value)
        self.shown |= _pool(found)
        kinds = _field_kinds(label, value, found) - {"status"}
        if _STATUS_LABEL.search(label):  # "Status: Paid (paid on 2026-09-02)": its status, and its date
            kinds |= {"status"}
        for kind in kinds & set(self.held):
            self.held[kind] |= _pool({v for v in found if _kind(v) == kind})


# a line of a page showing one record by its fields, label and value: "Amount: 494.00 USD" (a <dl>,
# as the browser renders it), "| Due date | 2026-10-20" (a table of two cells); "+ " in a difference
_FIELD_LINE = re.compile(r"^(?:\+ )?([A-Za-z][^:|\[\]\n]{0,39}?):\s+(\S.*)$")
_PAIR_LINE = re.compile(r"^(?:\+ )?\|\s*([A-Za-z][^|\[\]\n]{0,39}?)\s*\|\s*([^|\n]*\S)\s*\|?\s*$")
# what a field is, by its label's meaning (not only the mock ERP's words): free text (a note is any
# words, anyone's), an amount (its currency with it), a date, a currency, an identifier
_FREE_TEXT_LABEL = re.compile(
    r"\b(notes?|comments?|remarks?|memo|descriptions?|messages?|narrative|instructions?|text|"
    r"bemerkung(en)?|notiz(en)?|remarques?|notas?|commentaires?)\b",
    re.IGNORECASE,
)
AMOUNT_LABEL = re.compile(
    r"\b(amount|total|sum|balance|price|cost|gross|net|subtotal|tax|vat|payable|owed|owing|betrag|"
    r"summe|montant|importe)\b",
    re.IGNORECASE,
)
DATE_LABEL = re.compile(
    r"\b(dates?|dated|due|paid|on|issued|posted|created|entered|updated|day|datum|fällig\w*|fecha)\b",
    re.IGNORECASE,
)
_STATUS_LABEL = re.compile(r"\b(status|state|stage)\b", re.IGNORECASE)
_CURRENCY_LABEL = re.compile(r"\b(currency|ccy|währung|devise|moneda)\b", re.IGNORECASE)
_ID_LABEL = re.compile(r"\b(number|no|nr|id|ref|reference|code)\b|#", re.IGNORECASE)


def _field_kinds(label: str, value: str, found: set[str]) -> set[str]:
    """The kinds of value a field holds as the record's own: by its label's meaning — never a free-text
    field's ("Notes: list price 499.00") nor an identifier's; a field whose label says no kind
    ("Status") by the words of its value ("Paid (paid on 2026-09-02)"), or, words it has none, by the
    kinds of the values it shows."""
    if _FREE_TEXT_LABEL.search(label):
        return set()
    for pattern, kinds in ((AMOUNT_LABEL, {"number", "currency"}), (DATE_LABEL, {"date"})):
        if pattern.search(label):
            return kinds
    if _CURRENCY_LABEL.search(label):
        return {"currency"}
    if _ID_LABEL.search(label):
        return set()
    words = _CURRENCY.sub(" ", _ID.sub(" ", value))
    if AMOUNT_LABEL.search(words):
        return {"number", "currency"}
    if DATE_LABEL.search(words):
        return {"date"}
    return set() if re.search(r"[^\W\d_]{2,}", words) else {_kind(v) for v in found}


def _records(there: list[str]) -> list[_Record]:
    """The records the pages show by their fields: each run of two or more "label: value" lines."""
    out: list[_Record] = []
    for text in there:
        lines = text.splitlines()
        for run in _field_runs(lines):
            record = _Record()
            for i in run:
                m = _field(lines[i])
                assert m is not None
                record.add(m.group(1), m.group(2))
            out.append(record)
    return out


def _field(line: str) -> re.Match[str] | None:
    return None if _NOT_DATA.match(line) else _FIELD_LINE.match(line) or _PAIR_LINE.match(line)


def _field_runs(lines: list[str]) -> list[list[int]]:
    """Where a page shows records by their fields: the line numbers of each run of two or more
    "label: value" lines."""
    runs: list[list[int]] = []
    run: list[int] = []
    for i, line in enumerate([*lines, ""]):
        if i < len(lines) and _field(line):
            run.append(i)
            continue
        if len(run) >= 2:
            runs.append(run)
        run = []
    return runs


_KIND_WORDS = {"number": "amount", "currency": "currency", "date": "date", "status": "status"}


def _off_field(said: set[str], ids: set[str], records: list[_Record], source: str) -> str | None:
    """On a page showing a record by its fields, an amount, currency or date stated of that record
    (named by an identifier it shows) must be the value of its field of that kind — the line
    labelled Amount, Due date … — not any mention on the page (the bill's note "list price 499.00")."""
    own = [record for record in records if record.shown & ids]
    if not own:
        return None
    named = ", ".join(sorted(v.upper() for v in ids if any(v in r.shown for r in own)))
    for value in sorted(said):
        kind = _kind(value)
        if kind not in _KIND_WORDS or (kind == "number" and _YEAR.match(value)):
            continue
        if kind == "status" and not any(_refuted(value, record.held[kind]) for record in own):
            continue  # no status field, or one that does not say the contrary ("open" of an unpaid bill)
        if not any(value in record.held[kind] for record in own):
            return (
                f"{source!r} does not show {_shown(value)} as the {_KIND_WORDS[kind]} of {named}: on a page showing "
                f"a record by its fields, its {_KIND_WORDS[kind]} is the value of its field of that kind, "
                "not any mention on the page (a note, a heading)"
            )
    return None


_ISO_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}(\|\d{4}-\d{2}-\d{2})?$")  # a date (or its two readings)
_YEAR = re.compile(r"^(19|20)\d\d$")  # "the September 2026 invoice": a year, not an amount


def _refuted(status: str, shown: set[str]) -> bool:
    """Whether a record showing ``shown`` refutes ``status``: only the status's contrary does
    (``_CONTRARY``: an unpaid row refutes "paid", not "overdue")."""
    word = status[len(STATUS_MARK) :]
    return status not in shown and any(
        frozenset({word, v[len(STATUS_MARK) :]}) in _CONTRARY for v in shown if _kind(v) == "status"
    )


def _shown(value: str) -> str:
    """A value as a reason names it: "EUR", "Paid" (not its kind's mark)."""
    if value.startswith(STATUS_MARK):
        return value[len(STATUS_MARK) :].capitalize()
    return value.removeprefix(CURRENCY_MARK)


def _kind(value: str) -> str:
    if value.startswith(CURRENCY_MARK):
        return "currency"
    if value.startswith(STATUS_MARK):
        return "status"
    return "date" if _ISO_VALUE.match(value) else "id" if re.search(r"[a-z]", value) else "number"


# where a criterion's clause of absence starts after a conjunction ("… exists and no other bill …")
_ABSENT_AFTER = re.compile(
    r"\s+(?:and|but|with|while|whereas)\s+(?=(?:there\s+(?:is|are|was|were)\s+)?"
    r"(?:no|not|none|nothing|never|without)\b)",
    re.IGNORECASE,
)


def _claimed(criterion: str) -> set[str]:
    """The values a criterion says a system holds: outside quotes, in clauses that speak of nothing
    absent ("Invoice No. INV-2057" is a number, not an absence)."""
    text = re.sub(r"\b(no|nr)\.\s*(?=[#\w])", "number ", plain(criterion), flags=re.IGNORECASE)
    text = _BESIDES.sub(r"\1\2 ", text)
    # a quoted status is still the status it claims ('has the status "Paid"')
    text = _QUOTE.sub(lambda m: m.group(0)[1:-1] if _statuses(m.group(0)) else m.group(0), text)
    return _checkable_values(_ABSENT_AFTER.sub("; ", text))


_QUOTE = re.compile(r'"[^"]*"|“[^”]*”|`[^`]*`')


# a criterion that the run created or changed nothing besides (not "Invoice No. …", "not paid")
NOTHING_ELSE = re.compile(
    r"\b(no other|no second|no further|nothing else|nothing (was|were|has been) (changed|created|added|sent)|"
    rf"no {_RECORD_NOUN} (was|were|has been|have been) (created|added|changed|sent)|"
    # the same claim in other words a planner writes: "no additional/duplicate/extra/more bill", "no
    # bills other than it", "only one bill was created", "exactly one new bill was added"
    rf"no (additional|duplicate|duplicated|extra|more|new|further) {_RECORD_NOUN}|"
    rf"{_RECORD_NOUN} other than|"
    rf"(only|exactly|just) (one|a single) new {_RECORD_NOUN}|"
    # … and in any noun, figure or aside: "Exactly 1 bill was created", "A single bill was created",
    # "only one invoice was entered", "Only one bill (GX-5531 from Globex Corp) was created", "No bill
    # besides/except GX-5531", "GX-5531 is the only bill created" (each let a typo'd bill through)
    rf"((only|exactly|just|at most)\s+({_COUNTED_NUMBER})|a single|one single)\s+"
    rf"(new\s+|additional\s+)?{_RECORD_NOUN}(\s*\([^)]*\))?\s+(was|were|has been|have been|is|are|got)\s+"
    r"(created|added|entered|made|saved|recorded|booked|posted|changed|modified|updated)|"
    r"no\s+([^\W\d_]+\s+){1,3}?(besides|except|apart from|other than)|"
    rf"the only\s+(new\s+)?{_RECORD_NOUN}\s+((that|which)\s+(was|were|has been|have been)\s+)?"
    r"(created|added|entered|made|saved|recorded|booked|posted|changed))\b",
    re.IGNORECASE,
)
# "No bill besides GX-5531 was created" claims GX-5531 (it is the bill), not an absence
_BESIDES = re.compile(
    r"\bno\s+((?:[^\W\d_]+\s+){1,3}?)(besides|except(?:\s+for)?|apart from|other than)\s+", re.IGNORECASE
)
ABSENCE = re.compile(
    r"\b(no|not|none|never|without|absent|missing|nothing|cannot|isn't|doesn't|wasn't|n't)\b", re.IGNORECASE
)


# where an observation's clauses part: "; ", ". ", " — ", and ", " unless a year follows (a date)
_CLAUSE = re.compile(r";\s*|\.\s+|\s[—–]\s|\s-\s|,\s+(?!\d{4}\b)|\n")


def _checkable_values(observed: str) -> set[str]:
    """The values outside quotes that an observation says it saw. A clause that speaks of something
    absent ("no bill for INI-7781") names a record it did not see: code cannot check its identifier;
    every other value ("BILL-0099 INV-2057 1284.50 not paid": BILL-0099, 1284.50) is checked."""
    unquoted = _QUOTE.sub(" ", plain(observed))
    found = set().union(*(values(c) - _absent_record(c) for c in _CLAUSE.split(unquoted)))
    # a status is read in its whole sentence: "which was unpaid, is now paid" says unpaid was before
    return {v for v in found if _kind(v) != "status"} | (found & _statuses(unquoted))


def _compared(observed: str) -> set[str]:
    """The values an observation states that must appear in what the verifier saw — a status word
    aside: prose says "approved" or "open" of many things, and a record's status is held where it
    counts, to the record's own row or field and to what the criterion states (``_other_row``,
    ``_off_field``, ``_criterion_unshown``), never merely to its word being somewhere on the page."""
    return {v for v in _checkable_values(observed) if _kind(v) != "status"}


def _absent_record(clause: str) -> set[str]:
    """Of a clause that speaks of something absent, the identifier of the absent record — the one
    after the word of absence ("no bill for INI-7781"), else the last one before it ("INI-7781: not
    found") — and only it: "BILL-0099 INV-2057 1284.50 not paid" still states BILL-0099 and 1284.50."""
    word = ABSENCE.search(clause)
    if word is None:
        return set()
    after = [
        m.group(0).casefold()
        for m in _ID.finditer(clause[word.end() :])
        if re.search(r"[A-Za-z]", m.group(0))
    ]
    if after:
        return set(after[:1]) & values(clause)
    before = [
        m.group(0).casefold()
        for m in _ID.finditer(clause[: word.start()])
        if re.search(r"[A-Za-z]", m.group(0))
    ]
    return set(before[-1:]) & values(clause)


def answer_unsupported(
    answer: str, checks: list[CriterionCheck], recorded: Recorded | None = None
) -> str | None:
    """A question's answer is what a clerk takes away from a "done, verified": each amount and
    currency it states of a record ("GX-5531 is for 2310.00 EUR") must be one the verification's
    code-checked met checks (``standing`` "met") showed for that record — in one statement naming
    it, the same-row rule; of statements naming several records with an amount each, its own
    (``_stated_of``) — whenever they show a value of that kind for it. What an answer states of a
    record (``_stated_of``): the values after it up to the next record, and before it ("2310.00
    EUR is the amount of GX-5531"); and what the clauses after it state while they name no record
    and are bare values (``_bare``: "GX-5531 — 2310.00 EUR", "GX-5531. Status: paid"), an amount
    only until it has one (a second is a computation: "with the discount 1935.00 USD").
    Where they show none, the answer's value is the verifier's judgement, as before; so is a clause
    that speaks of something absent ("not 2310.00"), one naming several records (a sum, a list), an
    approximate value or a bound ("approx. 1980.00 EUR", "over 1000.00 USD"), and a date or status
    (a record has several: due, issued, paid; "unpaid and overdue") — a status is refused only where
    the evidence shows its contrary. Given what code ``recorded`` of the run, the records and the
    approvers the answer names are held to it too (``_unrecorded``). None, or the reason."""
    shown: dict[str, set[str]] = {}
    for check in checks:
        if standing(check) != "met":
            continue
        for statement in re.split(f"{_SENTENCE.pattern}|{_SEPARATED.pattern}", plain(check.observed)):
            stated = _stated_of(statement)
            if sum(bool(_amounts(said)) for _, said in stated) < 2:  # one record's values, by any name
                stated = [([i for ids, _ in stated for i in ids], set().union(*(s for _, s in stated)))]
            for ids, said in stated:
                for ident in ids:
                    shown.setdefault(ident, set()).update(_pool(said))
    last: list[str] = []  # the record the answer named last, and whether it stated its amount
    has_amount = False
    for clause in _CLAUSE.split(_NOT_ITS_VALUE.sub(" ", plain(answer))):
        absent = ABSENCE.search(clause) is not None
        stated = [] if absent else _stated_of(clause)
        if stated:
            last, has_amount = stated[-1][0], bool(_amounts(stated[-1][1]))
        elif last and not absent and _bare(clause):
            said = values(clause)
            stated = [(last, {v for v in said if _kind(v) == "status" or not has_amount})]
            has_amount = has_amount or bool(_amounts(said))
        else:
            last = []
        for ids, said in stated:
            if problem := _unsupported(ids, said, shown):
                return problem
    if recorded is not None:
        return "; ".join(_unrecorded(answer, recorded, shown)) or None
    return None


class Recorded(NamedTuple):
    """What code recorded of a run, that an answer's records and approvers are read against
    (``answer_unsupported``, ``report.recorded``): ``touched`` — the sends a system applied or may
    have (address, fields, the system's answer) and the lines of a before/after difference that
    changed; ``read`` — every text it read (pages, files, tool results, the task) and its approved
    decisions (what was asked, with its values); ``approvers`` — who or what approved each approved decision ("ana",
    "--auto-approve (nobody was asked)", "the person asked")."""

    touched: str
    read: str
    approvers: tuple[str, ...] = ()


# A verb saying that the run did something to a record, in the words and languages a model writes it:
# paid, settled, entered, deleted, approved … A status word among them ("paid", "approved", "closed":
# ``_STATUS_VERB``) says a record's state as often ("BILL-0004 paid on 2026-09-01", "Status: Paid") and
# is an act only after a word that makes it one (``_act``).
_ACT_VERB = re.compile(
    r"(?<![^\W\d_])(?:"
    # English
    r"paid|pays|settled|remitted|refunded|reimbursed|transferred|wired|disbursed|credited|debited|charged|"
    r"approved|authori[sz]ed|signed[ -]off|released|cleared|entered|created|added|saved|recorded|booked|"
    r"posted|registered|submitted|filed|logged|issued|deleted|removed|voided|cancell?ed|reversed|"
    r"written[ -]off|wrote[ -]off|updated|changed|edited|modified|amended|corrected|marked|closed|"
    r"reopened|archived|processed|executed|scheduled|reconciled|went\s+out|gone\s+out|"
    r"sent|completed|handled|made|initiated|performed|carried\s+out|finali[sz]ed|took\s+care\s+of|"
    r"taken\s+care\s+of|dealt\s+with|squared\s+away|sorted\s+out|(?:received|got)\s+(?:its|their|the)\s+"
    r"(?:money|payment|funds)|"
    # German, French, Spanish, Portuguese, Italian, Dutch
    r"bezahlt|zahlte|beglichen|überwiesen|gebucht|verbucht|erfasst|angelegt|gespeichert|gelöscht|"
    r"storniert|genehmigt|freigegeben|eingetragen|erstellt|geändert|ausgeglichen|"
    r"pay[ée]e?s?|r[ée]gl[ée]e?s?|acquitt[ée]e?s?|vir[ée]e?s?|enregistr[ée]e?s?|cr[ée]{2}e?s?|saisie?s?|"
    r"supprim[ée]e?s?|annul[ée]e?s?|approuv[ée]e?s?|valid[ée]e?s?|sold[ée]e?s?|"
    r"pagad[oa]s?|pagu[ée]|pag[óo]|pagamos|abonad[oa]s?|liquidad[oa]s?|saldad[oa]s?|registrad[oa]s?|"
    r"cread[oa]s?|guardad[oa]s?|eliminad[oa]s?|borrad[oa]s?|anulad[oa]s?|aprobad[oa]s?|autorizad[oa]s?|"
    r"transferid[oa]s?|contabilizad[oa]s?|quitad[oa]s?|registad[oa]s?|criad[oa]s?|exclu[ií]d[oa]s?|"
    r"cancelad[oa]s?|aprovad[oa]s?|pagat[oaie]|saldat[oaie]|registrat[oaie]|creat[oaie]|salvat[oaie]|"
    r"eliminat[oaie]|annullat[oaie]|approvat[oaie]|autorizzat[oaie]|bonificat[oaie]|"
    r"betaald|voldaan|geboekt|aangemaakt|opgeslagen|verwijderd|geannuleerd|goedgekeurd|overgemaakt"
    r")(?![^\W\d_])",
    re.IGNORECASE,
)
_STATUS_VERB = re.compile(
    r"^(?:paid|settled|remitted|approved|closed|cancell?ed|voided|scheduled|cleared|released|bezahlt|"
    r"pay[ée]e?s?|pagad[oa]s?|pagat[oaie]|betaald|approuv[ée]e?s?|aprobad[oa]s?|approvat[oaie]|"
    r"genehmigt|freigegeben|goedgekeurd|sold[ée]e?s?|saldad[oa]s?|saldat[oaie]|squared\s+away|sorted\s+out)$",
    re.IGNORECASE,
)
# a verb of the run's act as often as of another's ("Initrode sent credit note CN-0042", "the vendor
# made a correction"): an act only where its sentence makes it one, as a status verb, and never before
# "by" someone else ("was sent by Northwind Traders")
_WEAK_VERB = re.compile(
    r"^(?:sent|completed|handled|made|initiated|performed|carried\s+out|finali[sz]ed|"
    r"(?:received|got)\s+(?:its|their|the)\s+(?:money|payment|funds))$",
    re.IGNORECASE,
)
_BY_ANOTHER = re.compile(r"\s+(?:by|from)\s+(?!(?:me|us|myself|ourselves)\b)", re.IGNORECASE)
# the words a reason says an act in ("BILL-0004 was taken care of", "was sent out")
_ACT_SAID = {"took care of": "taken care of", "went out": "sent out", "gone out": "sent out"}
_OF_A_PAYMENT = {"made", "initiated", "performed", "carried out"}  # "made the payment on BILL-0004"
# the word before a verb that makes it a state, not an act: "is paid", "already entered", "listed as paid"
_STATE_WORD = re.compile(
    r"^(?:is|are|am|being|already|still|previously|earlier|formerly|as|status|state|ist|sind|bereits|"
    r"schon|noch|est|sont|d[ée]j[àa]|es|son|est[áa]|est[áa]n|ya|todav[ií]a|[èe]|sono|gi[àa]|ancora|"
    r"[ée]|s[ãa]o|j[áa]|al|reeds|nog|zijn)$",
    re.IGNORECASE,
)
# the word before a status verb that makes it an act: "was paid", "I paid", "also paid", "wurde bezahlt"
_ACT_WORD = re.compile(
    r"^(?:was|were|been|be|got|get|has|have|had|i|we|also|then|and|just|successfully|fully|finally|"
    r"wurde|wurden|worden|habe|haben|hat|ich|wir|auch|außerdem|zudem|vollständig|komplett|"
    r"a|ai|avons|ont|été|j'ai|aussi|également|enti[èe]rement|fue|fueron|se|he|hemos|ha|han|sido|"
    r"tambi[ée]n|totalmente|foi|foram|tamb[ée]m|stato|stata|stati|state|ho|abbiamo|anche|"
    r"inoltre|completamente|werd|werden|heb|hebben|heeft|ook|volledig|nu|now)$",
    re.IGNORECASE,
)
# what a claim's word of approval names as the one who approved: "approved by alice", "sign-off from
# Bob", "freigegeben von Alice", "approuvé par alice", "aprobado por Ana", "approvato da …", "Alice approved"
_APPROVAL = (
    r"(?:approv\w*|authori[sz]\w*|sign(?:ed)?[ -]?off|sanction\w*|ok(?:ay)?(?:'?e?d)?|green[ -]?lit|"
    r"go[ -]ahead|consent\w*|permission|genehmig\w*|freigegeben|freigabe|bewillig\w*|approuv\w*|"
    r"approbation|valid[ée]\w*|autoris\w*|aprob\w*|autoriz\w*|aprova\w*|approvat\w*|approvazione|"
    r"autorizzat\w*|goedgekeurd|goedkeuring|toestemming)"
)
_NAME = r"(?P<name>-{0,2}[^\W\d_][\w.@'-]*(?:\s+(?-i:[A-Z])[\w.'-]*){0,2})"
# the words between an approval and the one who approved it ("approved by …", "approval from …"):
# after "by" a few words that join no other clause ("approved the payment by …", not "approved and
# paid by bank transfer"); after "von/durch/par/por/da/door" an auxiliary at most ("Freigabe wurde von
# …"); "from/von" only right after the approval ("sign-off from Bob", not "the approved bill from
# Northwind Traders")
_NO_CLAUSE = r"(?!(?:and|or|then|but|und|oder|dann|et|ou|puis|y|o|e|en)\b)"
_AUX_WORD = r"(?:was|were|is|been|wurde|wurden|ist|war|worden|est|été|fue|fueron|sido|foi|è|stato|stata|werd)"
_APPROVED_BY = re.compile(
    rf"(?<![^\W\d_]){_APPROVAL}(?:(?:\s+{_NO_CLAUSE}[^\W\d_]+){{0,3}}?\s+(?P<by>by):?|"
    rf"(?:\s+{_AUX_WORD})?\s+(?P<agent>von|durch|par|por|da|door)|\s+(?P<from>from))\s+{_NAME}",
    re.IGNORECASE,
)
# "von Maria Schmidt freigegeben", "door Jan goedgekeurd"
_BY_APPROVED = re.compile(
    r"(?<![^\W\d_])(?:von|durch|door|par|da)\s+(?P<name>[^\W\d_][\w.'-]*(?:\s+[^\W\d_][\w.'-]*)?)\s+"
    r"(?:genehmigt|freigegeben|bewilligt|goedgekeurd|approuv[ée]e?s?|approvat[oaie])(?![^\W\d_])",
    re.IGNORECASE,
)
# a name before its verb of approval: "Alice approved the payment", "Bob signed off on it", "Carlos
# aprobó", "Alice a approuvé", "Marco ha approvato", "Ana's approval", "Alice gave the go-ahead" — the
# name a capitalised word (``_name_like``), a participle only after its auxiliary ("Alice hat
# genehmigt", not "Die Zahlung wurde genehmigt"), a noun of approval only after a possessive ("Ana's
# approval", not "your explicit approval", "with approval", "after receiving approval")
_A_NAME = r"(?<![\w@.'’-])([^\W\d_]+(?:-[^\W\d_]+)*)"
_APPROVAL_NOUN = (
    r"(?:approval|sign-?off|go-?ahead|ok|okay|green[ -]light|consent|permission|authori[sz]ation|"
    r"nod|thumbs[ -]up|freigabe|genehmigung|zustimmung|approbation|autorisation|accord|aval|feu vert|"
    r"aprobaci[óo]n|autorizaci[óo]n|aprova[çc][ãa]o|autoriza[çc][ãa]o|approvazione|autorizzazione|"
    r"goedkeuring|toestemming)"
)
# an English verb of approval after its approver: "approved", "approving", "signed it off" (never
# before "by": "Hooli, the cloud vendor, approved by ana" names what was approved)
_APPROVING = (
    r"(?:approved|approving|authori[sz](?:ed|ing)|signed[ -]off|signing[ -]off|okayed|ok'?d|sanctioned|"
    r"signed\s+(?:it|this|that|them|these|those|(?:the|this|that)\s+[^\W\d_]+)\s+off)"
)
_APPROVER_FIRST = re.compile(
    rf"{_A_NAME}\s+(?:(?:has|had|also|then|just|finally|now|already|auch|aussi|también|também|anche|ook)\s+)?"
    rf"(?P<verb>{_APPROVING}|aprob[óo]|aprovou|autoriz[óo]|autorizou)(?![^\W\d_])(?!\s+by\b)"
    rf"|{_A_NAME}\s+(?:has|have|had|hat|a|ha|heeft|tem)\s+(?:(?:also|auch|aussi|anche|ook)\s+)?"
    r"(?:genehmigt|freigegeben|bewilligt|approuv[ée]|autoris[ée]|valid[ée]|aprobado|aprovado|autorizado|"
    r"approvato|autorizzato|goedgekeurd)(?![^\W\d_])"
    rf"|{_A_NAME}['’]s\s+(?:(?:explicit|express|written|formal|final|prior)\s+)?{_APPROVAL_NOUN}(?![^\W\d_])"
    rf"|{_A_NAME}\s+(?:(?:has|had|also|then|finally|now|hat|a)\s+)?"
    r"(?:gave|given|granted|provided|gab|erteilte|donné|donn[ée]|dio|deu|diede|gaf)\s+(?:(?:the|her|his|their|"
    r"its|an?|final|explicit|formal|written|die|ihre|seine|son|sa|l'|le|la|leur|su|la|il|sua|zijn|haar)\s*)*"
    rf"{_APPROVAL_NOUN}(?![^\W\d_])"
    rf"|{_A_NAME}\s+hat\s+(?:(?:die|ihre|seine|auch)\s+)*(?:freigabe|genehmigung|zustimmung)\s+(?:erteilt|gegeben)"
    r"(?![^\W\d_])",
    re.IGNORECASE,
)
# an approver in apposition: "with the CFO, Alice, approving it", "Alice, the CFO, approved it"
_APPOSED = re.compile(
    rf"(?<![^\W\d_])(?:the|our|your|their|his|her|its)\s+[^,;()]{{1,30}}?,\s*{_A_NAME}\s*,\s+"
    rf"(?:(?:who|has|had|also)\s+)*{_APPROVING}(?![^\W\d_])(?!\s+by\b)"
    rf"|{_A_NAME}\s*,\s+(?:the|our|your|their|his|her|its)\s+[^,;]{{1,40}}?,\s+(?:(?:who|has|had|also)\s+)*"
    rf"{_APPROVING}(?![^\W\d_])(?!\s+by\b)",
    re.IGNORECASE,
)
# an approver after a label: "(approver: alice)", "Approvers: ana"
_APPROVER_LABEL = re.compile(
    rf"(?<![^\W\d_])(?:approvers?|freigeber(?:in)?|genehmiger(?:in)?)\s*[:=]\s*{_NAME}", re.IGNORECASE
)
# an approval said of what comes first in its sentence, naming no one: "Payment approved.", "Once
# approved, …" — the word before it there is no name
_ELLIPTIC = re.compile(
    r"\s*(?:$|[,;:.!?)]|\s+(?:and|by|for|with|after|before|in|at|via|today|yesterday|on\s+\d|und|et|y|e|en)\b)",
    re.IGNORECASE,
)
# words that name no one in particular, never a person's name, in every language the verbs above
# cover: pronouns, articles, possessives, prepositions, conjunctions, auxiliaries, adverbs and
# adjectives an approval takes ("once approved", "your explicit approval", "wurde genehmigt", "a été
# approuvé", "è stato approvato", "after receiving approval"); a role, not a person ("the team lead",
# "your manager", "die Buchhaltung"); the means or time of an approval ("by email", "by Friday"); what
# was approved ("Payment approved", "Die Zahlung")
_NO_ONE = frozenset(
    re.findall(
        r"\S+",
        """
    the a an you me us him her them i we it its my our your their his this that these those yourself myself
    themselves itself one someone somebody anyone anybody everyone everybody nobody none all both
    each every either neither other any some who whom whose which what everything nothing
    was were is are be been being am has had have having do does did will would shall should can
    could may might must get got gets and or but nor so then also too as if once when after before
    upon until since while because though although whether for from with without within by via per
    of to in on at into onto over under about through during against between among across than like
    plus not no never only just even still already again finally first later now today yesterday
    soon here there thus hence therefore however meanwhile eventually upon receiving received getting
    obtaining obtained requested requesting request pending awaiting asked asking given giving granted
    granting explicit express prior written verbal formal final full proper required necessary due
    prompt separate own same such your new
    person people user human approver approvers operator reviewer manager owner team lead leader head
    supervisor controller cfo ceo coo cto cfo finance accounting accounts payable ap ar department
    dept office admin administrator staff colleague colleagues boss management director clerk
    accountant treasurer requester requestor signer signatory authority committee board
    policy rule rules system default email e-mail mail phone telephone chat slack message prompt
    terminal console cli tool app ui interface link click button form portal web browser
    automatically hand writing letter transfer bank wire check cheque card ach sepa cash mistake
    deadline noon midnight morning afternoon evening tonight eod monday tuesday wednesday thursday
    friday saturday sunday january february march june july august september october november
    december week month year day
    payment payments bill bills invoice invoices requests change changes transaction transactions
    entry entries order orders record records submission amount sum total transfer expense purchase
    refund reimbursement budget vendor supplier customer everything he she they else
    der die das dem den des ein eine einem einen einer eines mein meine meinem meinen dein deine
    ihr ihre ihrem ihren sein seine seinem seinen unser unsere euer ihnen ich du er es wir man
    jemand niemand alle jeder jede und oder aber dann auch sowie nach vor mit ohne von vom durch für
    zur zum im am an auf aus bei bis seit über unter wurde wurden worden wird werden ist sind war
    waren hat haben hatte habe bereits schon noch erst jetzt heute gestern einmal sobald nachdem als
    wenn da dass weil nicht kein keine ausdrücklich ausdrückliche erhalten erteilt eingeholt
    angefordert buchhaltung vorgesetzte vorgesetzten vorgesetzter leitung abteilung abteilungsleiter
    abteilungsleiterin geschäftsführung freigeber freigeberin prüfer prüferin chef chefin
    finanzabteilung kreditorenbuchhaltung nutzer benutzer zahlung zahlungen rechnung rechnungen
    buchung überweisung änderung änderungen anfrage antrag freigabe genehmigung beleg lieferant
    betrag
    le la les l un une du de d au aux ce cet cette ces mon ma mes ton ta tes son sa ses notre nos
    votre vos leur leurs je tu il elle on nous vous ils elles lui moi toi et ou mais puis donc aussi
    avec sans par pour sur dans en après avant depuis dès lors fois été est sont ont avait était
    étaient déjà ensuite enfin bien tout tous toute toutes personne utilisateur responsable équipe
    service comptabilité direction paiement facture virement demande modification
    el los las lo unos unas del al y o pero con sin por para tras desde ya luego también fue fueron
    ha han sido es son su sus mi mis tus nuestro nuestra usted ustedes él ella ellos nosotros yo
    usuario equipo pago factura solicitud cambio
    os as um uma da do das dos na no em com pelo pela já foram tem é são seu sua você vocês ele
    nós eu pagamento fatura pedido também
    lo gli uno di della dei degli delle dal dalla senza per su e ma poi anche già stato stata stati
    state è sono hanno suo mio mia tuo tua lei lui voi noi io utente richiesta
    het een van door met zonder voor op aan bij of maar dan ook al zijn werd werden heeft hebben
    mijn uw jouw jij u hij zij wij ik betaling factuur verzoek ti jou sie ihnen vous toi usted
    te dir dich euch uns mich mir ihm mí mim mij ons hen eux loro défaut écrit courriel téléphone
    defecto escrito correo teléfono telefone telefono iscritto schriftlich telefonisch mündlich standaard
    """,
    )
)
# the words that make what follows a role, not a name: "approved by the team lead", "von der Buchhaltung"
_DETERMINER = frozenset(
    re.findall(
        r"\S+",
        """
    the a an my our your their his her this that der die das dem den ein eine einem einer meine ihre
    seine unsere le la les l un une mon ma mes son sa ses notre votre leur el los las una mi su lo il
    gli i uno mio suo de het een mijn uw zijn haar onze o os um uma meu seu sua nosso
    """,
    )
)


# what a lower-case word before a verb of approval names besides a person ("the task approved
# earlier", "values approved: …"): never a name there (kept out of ``_NO_ONE``, whose words no party's
# name begins with: "Data Systems Ltd" is "Data")
_THINGS = frozenset(
    re.findall(
        r"\S+",
        """
    run runs task tasks plan plans step steps job jobs action actions item items line lines data detail
    details value values field fields quote quotes estimate cost costs expenses batch draft document
    documents file files auto yes qui que wer se chi quien
    """,
    )
)
# words before a noun that make it a thing, never a person's name: "each quote approved", "no one else"
_QUANTIFIER = frozenset({"each", "every", "any", "no", "some", "all", "other", "another", "both", "either"})


def _name_like(word: str) -> bool:
    """Can ``word``, before a verb of approval, be a person's name: a word of any case (a login
    name is written lower-case: "alice approved") that is no function word, role, record or thing
    approved (``_NO_ONE``, ``_THINGS``) and no adverb ("Finally", "Explicitly", "Également")?"""
    w = word.casefold()
    return w not in _NO_ONE | _THINGS and not w.endswith(("ly", "ment", "mente", "ing"))


# a number that names a record: "invoice 88123", "payment #5521", "bill no. 417"
_NUMBERED = re.compile(
    rf"\b{_RECORD_NOUN}\s*(?:(?:no|nr|number|num)\.?\s*|#\s*)?(\d{{3,}})(?![\w.,]\d|\w)", re.IGNORECASE
)
_ALREADY = re.compile(
    r"\b(already|previously|earlier|before|existing|exists|unchanged|untouched|bereits|schon|d[ée]j[àa]|"
    r"ya|gi[àa]|reeds)\b",
    re.IGNORECASE,
)


def _names_in(text: str) -> set[str]:
    """The records ``text`` names: identifiers ("BILL-0004", "PAY-77") and numbers after a record's noun."""
    ids = {
        m.group(0).casefold()
        for m in _ID.finditer(text)
        if re.search(r"[A-Za-z]", m.group(0)) and len(re.findall(r"\d", m.group(0))) >= 2
    }
    return ids | {m.group(1) for m in _NUMBERED.finditer(text)}


def _in(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


# an auxiliary of the passive: "BILL-0003 was paid on 2026-09-18" may say what the record is
_PASSIVE = re.compile(
    r"^(?:was|were|been|be|wurde|wurden|worden|fue|fueron|sido|foi|foram|stato|stata|stati|state|"
    r"werd|werden|été)$",
    re.IGNORECASE,
)
_VERB_LAST = re.compile(
    r"(?<![^\W\d_])(?:habe|haben|hat|hatte|wurde|wurden|heb|hebben|heeft|werd|werden)(?![^\W\d_])",
    re.IGNORECASE,
)
# "on" a date, after what was paid at most ("was paid 96000.00 INR on 2026-09-26")
_ON_A_DATE = re.compile(
    r"(?:\s+[^\s,;]+){0,3}?,?\s*(?:on|am|le|el|il|op|em|since|seit|depuis|desde|dal)\s+(\S+(?:\s+\S+){0,2})",
    re.IGNORECASE,
)


def _acts(sentence: str, dates: set[str] | None = None) -> list[re.Match[str]]:
    """The verbs with which ``sentence`` says the run did something to a record ("Also paid BILL-0004",
    "BILL-0004 wurde bezahlt", "Saved bill BILL-0011"). Not an act: a verb after a word that
    makes it a state ("is paid", "already entered", "listed as paid"); a status word ("paid",
    "approved") or a verb of another's act as often as the run's ("sent", "made", "completed":
    ``_WEAK_VERB``) but at the start of the sentence, after a word that makes it an act ("was",
    "also", "wurde", "fully") or, a status word, before the record or amount it acted on ("paid
    BILL-0004", "paid 980.00") — "BILL-0004: paid", "BILL-0004 paid on 2026-09-01", "(…, paid)",
    "Initrode sent credit note CN-0042" state what a record is or another did; so does a verb after an
    auxiliary of the passive before a date the run read (``dates``; any date without them):
    "BILL-0003 was paid on 2026-09-18", "INV-2031 was entered on 2026-08-10" answer a question of what
    the records are."""
    return [m for m in _ACT_VERB.finditer(sentence) if _is_act(sentence, m, dates)]


def _is_act(sentence: str, m: re.Match[str], dates: set[str] | None) -> bool:
    before = re.findall(r"\S+", sentence[: m.start()])
    last = before[-1] if before else ""
    word = last.strip("()[],;:\"'“”")
    if _STATE_WORD.match(word) or _dated_or_due(sentence, m, dates):
        return False
    weak = _WEAK_VERB.match(m.group(0))
    if not (weak or _STATUS_VERB.match(m.group(0))):
        return True
    after = sentence[m.end() :]
    if weak and _BY_ANOTHER.match(after):
        return False  # "was sent by Northwind Traders": another's act
    if re.match(r"(?:\s+[^\W\d_]+){0,2}:", after) or last.endswith((":", ",", "(")):
        return False  # a label ("Paid: GX-5531", "Paid bills: …", "Status: Paid") or an item of a row ("USD, paid")
    if not before or _ACT_WORD.match(word):
        return True
    if weak:
        return False  # "Northwind Traders sent invoice INV-2031": another's act
    # a verb at the end of its clause after its auxiliary ("Außerdem wurde die Rechnung von
    # Initrode bezahlt", "habe ich BILL-0004 bezahlt"), but at a date the run read ("wurde am
    # 2026-09-18 bezahlt")
    clause = re.split(r"[,;:(]", sentence[: m.start()])[-1]
    if re.match(r"\s*(?:[.;,!?)]|$)", after) and (aux := _VERB_LAST.search(clause)):
        said = {v for v in values(clause[aux.end() :]) if _kind(v) == "date"}
        if not said or (dates is not None and not said <= dates):
            return True
    head = " ".join(after.split()[:2])
    return not re.match(r"(?i)(on|am|le|el|il|op|since|seit|depuis|desde|dal)\b", head) and bool(
        _names_in(head) or _amounts(values(head))
    )


# what makes a verb a plan or a need, not an act: "needs to be paid", "will be paid next week"
_NOT_YET = re.compile(
    r"(?<![^\W\d_])(?:to|will|shall|would|should|must|can|could|may|might|needs?|yet\s+to)\s+"
    r"(?:(?:also|still|then|now)\s+)?(?:be\s+|get\s+)?$",
    re.IGNORECASE,
)


def _dated_or_due(sentence: str, m: re.Match[str], dates: set[str] | None) -> bool:
    """Is the verb ``m`` a plan ("to be paid", "will be paid": ``_NOT_YET``) or after an auxiliary of
    the passive at a date the run read ("BILL-0003 was (also) paid (too,) on 2026-09-18": what the
    record is)?"""
    if _NOT_YET.search(sentence[: m.start()]):
        return True
    before = _EXTENDS.sub(" ", sentence[: m.start()]).split()  # "was also entered on …"
    if (
        before
        and _PASSIVE.match(before[-1].strip("()[],;:\"'“”"))
        and (on := _ON_A_DATE.match(sentence, m.end()))
    ):
        said = {v for v in values(on.group(1)) if _kind(v) == "date"}
        return bool(said) and (dates is None or said <= dates)
    return False


# a sentence that extends an act of an earlier one to what it names: "BILL-0004 is paid too", "I dealt
# with BILL-0004 as well", "Did the same for BILL-0004"; and the words that are that act there
_EXTENDS = re.compile(
    r"(?<![^\W\d_])(?:too|as\s+well|also|likewise|(?:the\s+)?same|ditto|similarly|auch|ebenfalls|aussi|"
    r"également|de\s+même|también|igualmente|também|anche|ook|eveneens)(?![^\W\d_])",
    re.IGNORECASE,
)
_SAME = re.compile(
    r"(?<![^\W\d_])(?:(?:did|do|does|done)\s+the\s+same|(?:the\s+)?same\s+(?:for|with|goes\s+for)|"
    r"(?:likewise|ditto|similarly)\s+(?:for|with)|dasselbe|das\s+gleiche|de\s+même|lo\s+mismo|o\s+mesmo|"
    r"lo\s+stesso|hetzelfde)(?![^\W\d_])",
    re.IGNORECASE,
)
# the words besides records, amounts and names of an extension that says no verb: "And BILL-0004 too."
_ELLIPSIS = frozenset(
    {"and", "the", "a", "an", "plus", "for", "of", "to", "with", "bill", "bills", "invoice"}
)


def _extended(sentence: str, dates: set[str] | None) -> list[re.Match[str]]:
    """The acts of a sentence that says no act of its own but extends an earlier one (``_EXTENDS``):
    every verb of ``_ACT_VERB`` in it, a status word too ("BILL-0004 is paid too", "is squared away
    as well") — but a plan or a dated state (``_dated_or_due``) — and "the same", "likewise" (``_SAME``).
    Where it has no word but records, amounts, names and a few others (``_ELLIPSIS``: "And BILL-0004
    too.", "Also the Initrode bill."), the extension is the act. None where it says something was
    not done, or says no act ("There is also BILL-0004 …", "BILL-0004 is also open")."""
    if not _EXTENDS.search(sentence) or _NOT_DONE.search(sentence):
        return []
    acts = [m for m in _ACT_VERB.finditer(sentence) if not _dated_or_due(sentence, m, dates)]
    acts += _SAME.finditer(sentence)
    rest = _EXTENDS.sub(" ", sentence)
    words = [w for w in re.findall(r"[^\W\d_]{2,}", rest) if not values(w) and w.casefold() not in _ELLIPSIS]
    if not acts and all(w[:1].isupper() and w.casefold() not in _NO_ONE for w in words):
        acts = list(_EXTENDS.finditer(sentence))
    return sorted(acts, key=lambda m: m.start())


def _unrecorded(answer: str, recorded: Recorded, shown: dict[str, set[str]]) -> list[str]:
    """What ``answer`` names that nothing code ``recorded`` of the run shows, each said once:
    a record no send, approved decision, code-checked evidence (``shown``) or text the run read
    shows; in a sentence that says the run did something (``_acts``), every record, amount and party
    it names must be one the run touched — a record a send, decision, changed line of a difference or
    code-checked evidence shows (or on a row it read beside one), an amount one of those carried, a
    party a send or a touched row names — unless a word of absence, of a former state or of what
    stays as it was covers it (``_covered``); a record listed under a status ("Paid: BILL-0004",
    "Payments sent: …") the run did not touch, unless what it read shows it in that status
    (``_listed_unrecorded``); an approver ("approved by alice") no approved decision names. A sentence
    after one of an act that extends it ("BILL-0004 is paid too", "Did the same for BILL-0004":
    ``_extended``) is a sentence of that act."""
    touched, read = plain(recorded.touched), plain(recorded.read)
    carried = _pool(values(touched)) | set().union(*shown.values()) if shown else _pool(values(touched))
    dates = {v for v in values(read) if _kind(v) == "date"}
    # the rows the run read of the records it touched: their other identifiers (a paid bill's invoice
    # number), amounts and parties are that record's
    rows_touched = _rows_touched(touched, read, shown)
    on_rows = set().union(*(_names_in(ln) for ln in rows_touched))
    carried |= _pool({v for ln in rows_touched for v in values(ln)})
    vendors = _vendors(read, rows_touched, touched)
    read_amounts = _pool(values(read))
    out: list[str] = []
    earlier = ""  # the verb of the last act an earlier sentence said
    for sentence in _SENTENCE.split(_NOT_ITS_VALUE.sub(" ", plain(answer))):
        acts = _acts(sentence, dates)
        if acts:
            earlier = " ".join(acts[-1].group(0).casefold().split())
        elif earlier:
            acts = _extended(sentence, dates)
        # the records of this sentence the run touched; an identifier shown beside one of them on a
        # line it read (a touched bill's invoice number, on its row) names that record too
        kept = [n for n in _names_in(sentence) if _in(n, touched) or n in shown or n in on_rows]
        rows = [ln for ln in read.splitlines() if any(_in(k, ln) for k in kept)]
        negated = False  # a word of absence covers the amounts and parties of its clause and those after it
        for at, clause in _clauses(sentence):
            absent = ABSENCE.search(clause) is not None
            for name in sorted(_names_in(clause) - (_absent_record(clause) if absent else set())):
                if name in kept:
                    continue
                where = _where(clause, name)
                if not _in(name, read):
                    out.append(
                        f"the last step's words name {name.upper()}, which no send, signed decision or "
                        "evidence of this run shows"
                    )
                elif (
                    acts
                    and not absent
                    and not _ALREADY.search(clause)
                    and not any(_in(name, ln) for ln in rows)
                    and not _covered(clause, where, at, acts)
                ):
                    out.append(
                        f"the last step's words say {_was(name.upper(), acts, at + where[0], earlier)}, but no "
                        f"send of this run that a system applied touched {name.upper()} (the run only read it)"
                    )
            negated = negated or _NOT_DONE.search(clause) is not None
            if not acts or negated or _ALREADY.search(clause) or _AGGREGATE.search(clause):
                continue
            for amount in sorted(_amounts(values(clause)) - carried - _names_in(clause)):
                where = _where(clause, amount)
                if amount in read_amounts and _breakdown(clause, where):
                    continue  # "(subtotal 1,050.00 USD + VAT 234.50 USD)": what it read of the record, no act
                if not _covered(clause, where, at, acts):
                    out.append(
                        f"the last step's words say {_was(_shown(amount), acts, at + where[0], earlier)}, but "
                        "no send, signed decision or evidence of this run carried that amount"
                    )
            # a record named by whose it is: "Also paid the Initrode bill", "settled Globex Corp's bill"
            for party in sorted(v for v, t in vendors.items() if not t):
                said = re.search(_vendor_word(party), clause)
                if said and not _covered(clause, said.span(), at, acts):
                    out.append(
                        f"the last step's words say {_was(f'a record of {party}', acts, at + said.start(), earlier)}, "
                        f"but no send of this run that a system applied touched a record of {party} (the run "
                        "only read its records)"
                    )
        out += _listed_unrecorded(sentence, kept, read)
        out += _approvers_unrecorded(sentence, recorded.approvers)
    return list(dict.fromkeys(out))


# a label of a part of a record's amount — its net, tax, total, shipping, a line item's price:
# "subtotal 1,050.00 USD", "+ VAT 234.50", "of which 234.50 USD is VAT", "2 × Widget Pro at 500.00"
_PART = (
    r"(?:net|netto|gross|brutto|vat|tax(?:es)?|sub-?total|total|shipping|freight|delivery|discount|"
    r"ht|tva|ttc|mwst|ust|iva|btw|fee|fees|surcharge)"
)
_PART_BEFORE = re.compile(
    rf"(?:(?<![^\W\d_]){_PART}|of\s+which|incl(?:\.|uding)?|plus|\+|(?:×|(?<![^\W\d_])x)\s+[^\d,;()]{{1,40}}?"
    rf"(?:\sat|@|\sà|\szu|\sa))\s*[:=]?\s*(?:[A-Z]{{3}}\s*|[€$£]\s*)?$",
    re.IGNORECASE,
)
_PART_AFTER = re.compile(
    rf"^\s*(?:[A-Z]{{3}}|[€$£])?\s*(?:(?:is|was|of\s+it|in|for)\s+)?{_PART}(?![^\W\d_])", re.IGNORECASE
)


def _breakdown(clause: str, where: tuple[int, int]) -> bool:
    """Is the amount at ``where`` of ``clause`` a part of a record's amount, by its label (``_PART``,
    "of which", "plus", "+", a line item's "× … at") — a description of what the act entered or
    paid, not an amount of an act of its own ("paid 12,500.00 USD … and 48,900.00 USD to Initrode")?"""
    return where != (0, 0) and bool(
        _PART_BEFORE.search(clause[: where[0]]) or _PART_AFTER.match(clause[where[1] :])
    )


def _clauses(sentence: str) -> list[tuple[int, str]]:
    """The clauses of a sentence (``_CLAUSE``), each with where it starts in it."""
    out, at = [], 0
    for m in _CLAUSE.finditer(sentence):
        out.append((at, sentence[at : m.start()]))
        at = m.end()
    return [*out, (at, sentence[at:])]


def _where(clause: str, value: str) -> tuple[int, int]:
    """Where a record or an amount (as ``values`` gives it) is written in ``clause``; (0, 0) if code
    cannot find it."""
    if _kind(value) == "id" or not re.fullmatch(r"[\d.]+", value):
        m = re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", clause, re.IGNORECASE)
        return m.span() if m else (0, 0)
    return next((m.span() for m in _NUMBER.finditer(clause) if _plain_number(m.group(0)) == value), (0, 0))


def _was(what: str, acts: list[re.Match[str]], at: int, earlier: str = "") -> str:
    """What a reason says the words claim of ``what`` (at ``at`` of its sentence), in the verb of the
    act that speaks of it — the last one before it, else the first after it: "BILL-0004 was paid",
    "… was taken care of"; a verb whose object is the payment, not the record: "a payment or change
    for BILL-0004 was made"; "the same", "too" in the verb of the ``earlier`` act they extend."""
    verb = ([m for m in acts if m.start() < at] or acts[:1])[-1]
    said = " ".join(verb.group(0).casefold().split())
    said = earlier if (_SAME.fullmatch(said) or _EXTENDS.fullmatch(said)) and earlier else said
    said = "paid" if re.match(r"(?:received|got)\s", said) else _ACT_SAID.get(said, said)  # "got its money"
    return f"a payment or change for {what} was {said}" if said in _OF_A_PAYMENT else f"{what} was {said}"


# what makes a value in a sentence of an act no claim that the run acted on it: a word of reading or
# of what stays, with no act between it and the value ("leaving 0.00 USD due", "I saw BILL-0004",
# "instead of the Initrode one", "Open: BILL-0004"); or after the value, in its clause, what it still
# is ("BILL-0004 is still open", "… 48,900.00 USD remains outstanding", "left BILL-0004 unpaid.")
_STATE_BEFORE = re.compile(
    r"(?<![^\W\d_])(?:leav(?:e|es|ing)|left|read|found|checked|saw|seen|viewed|reviewed|looked\s+at|listed|"
    r"show(?:s|ed|n)?|instead\s+of|rather\s+than|except(?:\s+for)?|besides|other\s+than|apart\s+from|"
    r"(?:open|unpaid|outstanding|due|remaining|pending|balance|owed|left)\s*:)(?![^\W\d_])",
    re.IGNORECASE,
)
_STATE_AFTER = re.compile(
    r"^[^;]{0,40}?(?<![^\W\d_])(?:remains?|remaining|stays?|still|untouched|unchanged|"
    r"(?:is|are|was|were)\s+(?:now\s+|also\s+)?(?:open|unpaid|due|outstanding|pending|overdue)|"
    r"(?:open|unpaid|outstanding|due|owed|pending|overdue)[\s).!]*$)(?![^\W\d_])",
    re.IGNORECASE,
)


def _covered(clause: str, where: tuple[int, int], at: int, acts: list[re.Match[str]]) -> bool:
    """Does a word of state or reading (``_STATE_BEFORE``, ``_STATE_AFTER``) cover the value at
    ``where`` of ``clause`` (which starts at ``at`` of its sentence), with no act of ``acts`` between?"""
    verbs = [m.start() - at for m in acts if 0 <= m.start() - at < len(clause)]
    state = [m.end() for m in _STATE_BEFORE.finditer(clause[: where[0]])]
    if state and not any(state[-1] <= v < where[0] for v in verbs):
        return True
    until = min((v for v in verbs if v >= where[1]), default=len(clause))
    return _STATE_AFTER.match(clause[where[1] : until]) is not None


# a label of records in a status the run gives them ("Paid: BILL-0005, BILL-0004", "Settled bills:
# …", "Payments sent: …"), up to the next label or the sentence's end
_LISTED = re.compile(
    rf"(?<![^\W\d_])(?P<verb>{_STATUS_VERB.pattern[1:-1]}|{_WEAK_VERB.pattern[1:-1]})"
    r"(?:\s+[^\W\d_]+){0,2}\s*:(?!\d)(?P<list>.*?)(?=(?<![^\W\d_])[^\W\d_]+(?:\s+[^\W\d_]+)?\s*:(?!\d)|$)",
    re.IGNORECASE | re.DOTALL,
)
# the same label after its list, ending its clause: "BILL-0004 and BILL-0005: paid."
_LABELLED = re.compile(
    rf"(?P<list>[^:;]*?)\s*:\s*(?P<verb>{_STATUS_VERB.pattern[1:-1]})(?:\s+(?:in\s+full|today|now))?"
    r"\s*(?=[.!;,)]|$)",
    re.IGNORECASE,
)


def _listed_unrecorded(sentence: str, kept: list[str], read: str) -> list[str]:
    """Records listed under a status or an act, or before a status ("BILL-0004, BILL-0005: paid":
    ``_LISTED``, ``_LABELLED``), that the run did not touch (``kept``), unless what it read shows
    each in that status ("Paid: BILL-0001, BILL-0003" answering which bills are paid, their rows
    showing Paid)."""
    out = []
    for m in [*_LISTED.finditer(sentence), *_LABELLED.finditer(sentence)]:
        verb = " ".join(m.group("verb").casefold().split())
        if _WEAK_VERB.match(verb) and (
            sentence[m.end("verb") :].lstrip()[:1] != ":" or len(sentence[: m.start()].split()) > 1
        ):
            continue  # "Sent:", "Payments sent:" list the run's acts; "Stark Logistics sent two invoices:" not
        status = next(iter(_statuses(verb)), None) if _STATUS_VERB.match(verb) else None
        for name in sorted(_names_in(m.group("list")) - _absent_record(m.group("list")) - set(kept)):
            lines = [ln for ln in read.splitlines() if _in(name, ln)]
            if not lines:
                continue  # named nowhere: the rule for records nothing shows says so
            seen = set().union(*(_statuses(ln) for ln in lines))
            if status is not None and status in seen:
                continue
            shows = f" and saw it {' / '.join(sorted(map(_shown, seen)))}" if seen else ""
            out.append(
                f"the last step's words list {name.upper()} as {verb}, but no send of this run that a "
                f"system applied touched {name.upper()} (the run only read it{shows})"
            )
    return out


# a sentence that says something was not done, in the languages of ``_ACT_VERB``
_NOT_DONE = re.compile(
    rf"{ABSENCE.pattern}|(?<![^\W\d_])(?:nicht|kein\w*|nichts|niemals|pas|aucun\w*|rien|jamais|nada|"
    r"ning[uú]n\w*|nunca|nessun\w*|niente|mai|niet|geen|nooit|nenhum\w*|n[ãa]o)(?![^\W\d_])",
    re.IGNORECASE,
)
# words of a party's name that tell no party apart ("Globex Corp", "Bharat Components Pvt. Ltd.")
_NOT_ITS_NAME = frozenset(
    re.findall(
        r"\S+",
        """
    the and of corp corporation co company inc incorporated ltd limited llc llp plc gmbh ag kg se sa sas
    sarl srl spa bv nv pvt group holding holdings services service solutions systems international
    global trading traders industries supplies office cloud logistics partners
    """,
    )
)
# what a row's cell is that names no party: a status, a currency, a record's kind
_NOT_A_PARTY = re.compile(
    r"^(?:paid|unpaid|open|overdue|draft|void|voided|pending|approved|cancell?ed|closed|partial(?:ly paid)?|"
    r"due|scheduled|active|inactive|yes|no|none|n/a|total.*|bezahlt|offen|[A-Z]{3})$",
    re.IGNORECASE,
)


def _rows_touched(touched: str, read: str, shown: dict[str, set[str]]) -> list[str]:
    """The rows the run read ("| BILL-0002 | Globex Corp | GX-5531 | 2150.00 | …") of a record it
    touched: a row of at most three identifiers one of which a send, a changed line or evidence code
    checked names."""
    rows = []
    for line in read.splitlines():
        names = _names_in(line) if "|" in line else set()
        if names and len(names) <= 3 and any(_in(n, touched) or n in shown for n in names):
            rows.append(line)
    return rows


def _vendors(read: str, rows_touched: list[str], touched: str) -> dict[str, bool]:
    """The parties (vendors, customers) whose records the run read, each with whether the run touched
    one: a cell naming no record, amount or date ("Initrode", "Globex Corp") of a row the run read
    that names a record ("| BILL-0004 | Initrode | IN-7781 | 980.00 | USD | Unpaid |"); touched where
    a send or a changed line of a difference names it, or it is on a row of a record the run touched
    (``_rows_touched``)."""
    parties: dict[str, bool] = {}
    for line in read.splitlines():
        if "|" not in line or not _names_in(line):
            continue
        for cell in (c.strip() for c in line.split("|")):
            if not cell[:1].isupper() or re.search(r"\d", cell) or _NOT_A_PARTY.match(cell):
                continue
            if _vendor_key(cell):
                parties[cell] = False
    for party in parties:
        said = _vendor_word(party)
        parties[party] = bool(re.search(said, touched, re.IGNORECASE)) or any(
            re.search(said, ln) for ln in rows_touched
        )
    return parties


def _vendor_key(party: str) -> str:
    """The word of a party's name that tells it apart: its first word that is no word of a company's
    form, trade or kind (``_NOT_ITS_NAME``: "Globex" of "Globex Corp", "Müller" of "Müller
    Industrietechnik GmbH"), "" where none is."""
    for word in re.findall(r"[^\W\d_][\w&'-]*", party):
        if len(word) >= 3 and word[:1].isupper() and word.casefold() not in _NOT_ITS_NAME | _NO_ONE:
            return word
    return ""


def _vendor_word(party: str) -> str:
    return rf"(?<![\w@./-]){re.escape(_vendor_key(party))}(?![^\W_]|[-.@]\w*\.\w)"


def _approvers_named(sentence: str) -> list[tuple[str, bool]]:
    """Who ``sentence`` says approved, each with whether it names them after a word of agency ("by",
    "von", "par": ``_APPROVED_BY``); "" where those words name no one in particular — a role after a
    determiner ("by the team lead", "von der Buchhaltung"), a pronoun ("by you"). A name before its
    verb must be name-like (``_name_like``), and is none where the sentence begins with it and the
    verb takes no object ("Payment approved.", "Invoice approved and saved")."""
    out: list[tuple[str, bool]] = []
    for m in _APPROVED_BY.finditer(sentence):
        words = m.group("name").split()
        login = len(words) == 1 and re.match(r"\s*(?:[,;:!?)]|$)", sentence[m.end() :])  # "… von alice."
        if m.group("agent") and not words[0].lstrip("-")[:1].isupper() and not login:
            words = []  # "aprovação da fatura", "approuvé par l'équipe": no name after a preposition of another
        elif words and words[0].casefold() in _DETERMINER:
            words = []
        out.append((" ".join(words), True))
    for m in _BY_APPROVED.finditer(sentence):
        words = m.group("name").split()
        named = words[0][:1].isupper() and words[0].casefold() not in _DETERMINER
        out.append((" ".join(words) if named else "", True))
    for m in _APPROVER_LABEL.finditer(sentence):
        words = m.group("name").split()
        out.append(("" if words[0].casefold() in _DETERMINER else " ".join(words), True))
    for m in _APPOSED.finditer(sentence):
        name = next(n for n in m.groups() if n)
        if _name_like(name):
            out.append((name, False))
    for m in _APPROVER_FIRST.finditer(sentence):
        name = next(n for n in m.groups() if n)  # the name of the alternative that matched
        before = sentence[: m.start()].split()
        if not _name_like(name) or (before and before[-1].casefold() in _DETERMINER | _QUANTIFIER):
            continue  # "the task approved earlier", "each quote approved": a thing approved, no one
        at = m.start()
        took = m.group("verb") and re.search(r"\s(?!off\b)\S", m.group("verb"))  # "signed it off": an object
        if (
            not sentence[:at].strip(" \t\"'“”(*-")
            and m.group("verb")
            and not took
            and _ELLIPTIC.match(sentence, m.end())
        ):
            continue
        out.append((name, False))
    return out


def _approvers_unrecorded(sentence: str, approvers: tuple[str, ...]) -> list[str]:
    """Who ``sentence`` says approved, where no approved decision of the run names them: a person's
    name must be a word of an approver's ("ana", "--auto-approve"); words naming no one ("you", "the
    person asked", "the team lead") need only some approved decision."""
    known = {w for a in approvers for w in re.findall(r"[^\W_]+", a.casefold())}
    out = []
    for name, by in _approvers_named(sentence):
        name = name.strip(" .,;:'\"“”()")
        words = {w for w in re.findall(r"[^\W_]+", name.casefold()) if not any(c.isdigit() for c in w)}
        someone = words - _NO_ONE
        if someone and not someone & known:
            held = ", ".join(dict.fromkeys(approvers)) or "none: nothing was approved"
            out.append(
                f"the last step's words say {name} approved, but the signed decisions of this run name {held}"
            )
        elif not someone and not approvers and by:
            out.append(
                "the last step's words speak of an approval, but no signed decision of this run approved anything"
            )
    return out


def _unsupported(ids: list[str], said: set[str], shown: dict[str, set[str]]) -> str | None:
    """Why what an answer ``said`` of the records ``ids`` is not what the evidence ``shown`` of them, or None."""
    known = [v for v in ids if v in shown]
    amounts = [_amounts(shown[i]) for i in known]
    if any(a != amounts[0] for a in amounts):
        return None  # several records ("GX-5531 and INV-2031 total 3130.00"): a sum, a list
    evidence = set().union(*(shown[v] for v in known)) if known else set()
    for value in sorted(said):
        kind = _kind(value)
        # an amount and its currency; a status only where the evidence shows its contrary
        # ("paid" of an unpaid row); a date never: a record has several (due, issued, paid)
        # and a status may be said in words the system does not use ("unpaid and overdue")
        if kind == "status" and known and _refuted(value, evidence):
            return (
                f"the answer says {', '.join(v.upper() for v in known)} is {_shown(value)}, but the "
                f"verified evidence shows {', '.join(sorted(_shown(v) for v in evidence if _kind(v) == kind))}"
            )
        if kind not in ("number", "currency") or (kind == "number" and _YEAR.match(value)):
            continue
        mine = {v for v in evidence if _kind(v) == kind}
        if mine and value not in mine:
            return (
                f"the answer states {_shown(value)} as the {_KIND_WORDS[kind]} of "
                f"{', '.join(v.upper() for v in known)}, but the verified evidence shows "
                f"{', '.join(sorted(map(_shown, mine))[:3])} for it"
            )
    return None


def _amounts(found: set[str]) -> set[str]:
    return {v for v in found if _kind(v) == "number" and not _YEAR.match(v)}


# a value that is no record's own: an approximation or a bound ("approx. 1980.00 EUR", "over 1000 USD")
_NOT_ITS_VALUE = re.compile(
    r"(?:\b(?:approx(?:imately)?|about|around|roughly|circa|ca|nearly|almost|over|above|under|below|"
    r"more\s+than|less\s+than|at\s+(?:least|most)|up\s+to|exceeding)\b\.?|[~≈<>≤≥])\s*"
    r"(?:[€£]|US\$)?\s*\d(?:[\d.,'\u00a0]*\d)?(?:\s*(?:[A-Z]{3}\b|[€£]))?",
    re.IGNORECASE,
)
# a clause about several records at once ("Total outstanding: 2270.00 USD")
_AGGREGATE = re.compile(
    r"\b(total\w*|sum|together|combined|overall|altogether|in\s+all|all)\b", re.IGNORECASE
)
_LIST = re.compile(r",\s+|\s+(?:and|&)\s+")  # how records or values are listed one after another


def _bare(clause: str) -> bool:
    """Is ``clause`` bare values, with at most a label or a name besides ("Amount: 2310.00 EUR",
    "Status: paid", "Globex Corp"), and about no several records ("Total: 3130.00 USD")?"""
    words = [w for w in re.findall(r"[^\W\d_]{2,}", clause) if not values(w) and w.casefold() not in _MONTHS]
    return len(words) <= 2 and not _AGGREGATE.search(clause)


def _stated_of(clause: str) -> list[tuple[list[str], set[str]]]:
    """What a clause states of each record it names: the values that follow its identifiers (those
    named one after another: "GX-5531 (BILL-0002) is 2150.00 USD") up to the next identifier; the
    first also takes those before it ("Paid: GX-5531", "2310.00 EUR is the amount of GX-5531"),
    an amount only where it states none after it ("3 bills due before 2026-10-01: GX-5531 2150.00
    USD", "Total: 3130.00 USD (BILL-0002 2150.00 …)"). Records listed with as many amounts
    ("BILL-0002 and BILL-0001: 2150.00 USD and 980.00 USD") take one each, in order."""
    found = [m for m in _ID.finditer(clause) if re.search(r"[A-Za-z]", m.group(0))]
    out: list[tuple[list[str], set[str]]] = []
    run: int | None = None  # where the run of identifiers named one after another starts
    for i, m in enumerate(found):
        run = m.start() if run is None else run
        end = found[i + 1].start() if i + 1 < len(found) else len(clause)
        said = {v for v in values(clause[m.end() : end]) if _kind(v) != "id"}
        if said or i + 1 == len(found):
            out += _respectively(clause[run : m.end()], clause[m.end() : end], said)
            run = None
    if out:
        head = {v for v in values(clause[: found[0].end()]) if _kind(v) != "id"}  # "Paid: GX-5531"
        ids, said = out[0]
        out[0] = (ids, said | {v for v in head if _kind(v) == "status" or not _amounts(said)})
    return out


def _respectively(names: str, rest: str, said: set[str]) -> list[tuple[list[str], set[str]]]:
    """The records ``names`` lists ("BILL-0002 and BILL-0001") and what ``rest`` states of them:
    with as many amounts listed ("2150.00 USD and 980.00 USD"), one each in order; else all of it."""
    ids = [
        [m.group(0).casefold() for m in _ID.finditer(p) if re.search(r"[A-Za-z]", m.group(0))]
        for p in _LIST.split(names)
    ]
    ids = [each for each in ids if each]
    listed = [v for v in map(values, _LIST.split(rest)) if _amounts(v)]
    if 1 < len(ids) == len(listed) and all(len(_amounts(v)) == 1 for v in listed):
        rest_values = said - set().union(*listed)
        return [(each, v | rest_values) for each, v in zip(ids, listed, strict=True)]
    return [([i for each in ids for i in each], said)]


def decide_per_criterion(verdict: Verdict, plan: Plan, checks: list[CriterionCheck]) -> Verdict:
    """Each plan criterion is met when one of its valid checks is met; the reason names what failed."""
    by_criterion: dict[int, list[CriterionCheck]] = {}
    extra: list[CriterionCheck] = []
    for check in checks:
        index = match_criterion(check.criterion, plan.success_criteria)
        (by_criterion.setdefault(index, []) if index is not None else extra).append(check)
    failed: list[str] = []
    for i, criterion in enumerate(plan.success_criteria):
        mine = by_criterion.get(i, [])
        valid_met = [c for c in mine if c.met]
        judged_unmet = [c for c in mine if not c.met and REJECTED not in c.observed]
        if not mine:
            failed.append(f"criterion {i + 1} ({_short(criterion)}) was not checked")
        elif judged_unmet:
            failed.append(
                f"criterion {i + 1} ({_short(criterion)}) is not met: {_short(judged_unmet[0].observed, 300)}"
            )
        elif not valid_met:
            failed.append(f"criterion {i + 1} ({_short(criterion)}) has no valid check: {_why(mine[0])}")
    failed += [
        f"the verifier found a problem: {_short(c.criterion)}: {_short(c.observed, 300)}"
        for c in extra
        if not c.met and REJECTED not in c.observed
    ]
    checked = len(plan.success_criteria) - sum(
        1 for i in range(len(plan.success_criteria)) if i not in by_criterion
    )
    if checked < len(plan.success_criteria):
        failed.insert(0, f"only {checked} of {len(plan.success_criteria)} success criteria were checked")
    if not failed and not verdict.verified:
        failed.append(f"the verifier did not confirm it: {verdict.reason}")
    if failed:
        return Verdict(verified=False, checks=checks, reason="Not verified: " + "; ".join(failed))
    return Verdict(verified=True, checks=checks, reason=verdict.reason)


def match_criterion(text: str, criteria: list[str]) -> int | None:
    """Which plan criterion a check is about: the same words, its number ("1." / "criterion 1"), or
    the criterion sharing most of its words (at least half); None for an extra check."""
    want = _words(text)
    for i, criterion in enumerate(criteria):
        if _words(criterion) == want:
            return i
    number = re.match(r"^\s*(?:criterion\s*)?(\d+)[.):]?\s*", text, re.IGNORECASE)
    if (
        number
        and 1 <= int(number.group(1)) <= len(criteria)
        and (
            len(want) <= 2
            or _overlap(_words(text[number.end() :]), _words(criteria[int(number.group(1)) - 1])) >= 0.5
        )
    ):
        return int(number.group(1)) - 1
    scored = [(_overlap(want, _words(c)), i) for i, c in enumerate(criteria)]
    best = max(scored, default=(0.0, -1))
    return best[1] if best[0] >= 0.5 else None


CHANGES_SOURCE = "before/after"  # the run's before/after difference of a system (crew/changes.py)
SENDS_SOURCE = "sends of this run"  # the network gate's record of what the run sent (Facts.record)
APPLIED_HEAD = "Changes a system applied:"  # its line counting the applied ones (Facts.record)
SENT_HEAD = "Data-changing submissions sent:"  # its line counting the sends (Facts.record)


# ---- values: identifiers, amounts and dates, normalised ----------------------------------------

# the month names of every locale the invoice reader knows (``ap.MONTH_NAMES``: one table for both)
_MONTHS = MONTHS
_MONTH = rf"({MONTH_PATTERN})"
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b|(?<![\w/])(\d{4})/(\d{1,2})/(\d{1,2})(?![\w/])")
_DMY = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\.?\s+(?:de\s+)?{_MONTH}\.?,?\s+(?:del?\s+)?(\d{{4}})\b", re.IGNORECASE
)
_CJK = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")  # 2026年12月13日
_MDY = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
# 07.10.2026, 15.01.27: day first, 2027.01.15: year first, read by the invoice reader (``ap.parse_date``:
# one rule for both)
_DOTTED = re.compile(
    r"(?<![\w.])(?:\d{1,2}\.\d{1,2}\.\d{4}|\d\d\.\d\d\.\d\d|\d{4}\.\d{1,2}\.\d{1,2})(?!\w|\.\d)"
)
_YEAR_FIRST = re.compile(r"(?<![\w.])\d{4}\.\d{1,2}\.\d{1,2}(?!\w|\.\d)")  # 2027.01.15
_NUMERIC = re.compile(r"(?<![\w/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\w/])")  # 10/07/2026: day or month first
_ID = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)*[-_/]?\d[A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)*\b")
_NUMBER = re.compile(
    r"(?<![\w.,])\d{1,3}(?:([,.\u00a0' ])\d{3})*(?:([.,])\d{1,4})?(?![\w]|[.,]\d)|(?<![\w.,])\d+(?:[.,]\d{1,4})?(?![\w]|[.,]\d)"
    rf"|(?<![\w.,]){INDIAN_INT.pattern}(?:\.\d{{1,4}})?(?![\w]|[.,]\d)"  # 1,28,450.00: as the invoice reader reads it
)


# What makes two texts that read alike compare alike (``plain``). An identifier pasted from Word or
# Outlook ("BILL–0002", an en dash) or carrying an invisible character ("GX-55<ZWSP>31") was no
# identifier to any rule below, so a claim about it was checked against nothing. Every dash (Unicode
# category Pd, and the minus sign) is the ASCII hyphen — but a long one (—, ―) only where it joins
# a code to digits ("INV—2057", "Bill—0002"; not an amount after a word: "Globex Corp—2150.00"):
# elsewhere it is prose punctuation ("the bill—BILL-0002—is paid").
# A character that draws nothing (category Cf: zero-width, bidi controls, the soft hyphen; the
# other default-ignorable ones) is dropped. A typographic apostrophe (U+2019, U+02BC, the prime U+2032)
# is the ASCII one (Swiss thousands: "1’329.63"), and dot leaders ("Total due.........1,234.50", "…")
# are a gap of two spaces between the label and its value (a column's: "Item 1.......234.50" is no
# "1 234.50").
_APOSTROPHES = "\u2019\u02bc\u2032"
_LEADER = re.compile(r"\.(?: ?\.){2,}")
_LONG_DASHES = "\u2014\u2015\u2e3a\u2e3b"
_IGNORABLE = re.compile(
    r"[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
_LONG_DASH_IN_ID = re.compile(rf"(?<![^\W_])([^\W_]{{0,30}}[^\W\d_])[{_LONG_DASHES}](?=(\d+)([.,]\d)?)")


def _long_dash(m: re.Match[str]) -> str:
    joined = not m.group(3) or not re.search(r"[a-z]", m.group(1))  # an amount after a word: prose
    return m.group(1) + ("-" if joined else m.group(0)[-1])


class _PlainChars(dict[int, str | None]):
    """``str.translate``'s table for the characters above, each looked up once: dropped, a hyphen,
    or itself."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        category = unicodedata.category(char)
        if category == "Cf" or _IGNORABLE.match(char):
            value = None
        elif (category == "Pd" or char == "\u2212") and char not in _LONG_DASHES:
            value = "-"
        elif char in _APOSTROPHES:
            value = "'"
        else:
            value = char
        self[code] = value
        return value


_PLAIN_CHARS = _PlainChars()


def plain(text: str) -> str:
    """``text`` as the rules compare it, one normaliser for the claim and the page alike (they must
    still match each other): NFKC ("ＧＸ－５５３１" is GX-5531), every dash a hyphen, every apostrophe
    the ASCII one, invisible characters dropped and dot leaders a space (above), and a currency code
    written against its amount split from it ("USD2310.00", "2310.00EUR": else an identifier, or no
    amount at all)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_PLAIN_CHARS)
        if any(dash in text for dash in _LONG_DASHES):
            text = _LONG_DASH_IN_ID.sub(_long_dash, text)
    if ".." in text or ". ." in text:
        text = _LEADER.sub("  ", text)
    return _GLUED_AFTER.sub(r"\1 \2", _GLUED_BEFORE.sub(r"\1 ", text))


CURRENCY_MARK = "¤"  # a currency as a value: "¤USD" (no lowercase letter: never taken for an identifier)
STATUS_MARK = "§"  # a record's status as a value: "§PAID" (upper case: never taken for an identifier)
_CODES = "|".join(sorted(ISO_CURRENCIES - WORD_CODES))  # the invoice reader's codes (tools.ap), no word
# and its signs that name one currency ("€", "R$", "zł", "RM 1,234.50"; a bare "$" may be any dollar:
# not a value), from the one table (``ap.SIGN_CURRENCY``)
_CURRENCY = re.compile(rf"(?<![\w$/-])(?:{_CODES})(?![\w$/-])|{signs_pattern(one_currency=True)}")
# a currency code against its amount, before or after it: "USD2310.00", "EUR2,310.00", "2310.00EUR"
_GLUED_BEFORE = re.compile(rf"(?<![\w$/-])({_CODES})(?=\d+(?:[.,']\d+)*(?![\w/-]))")
_GLUED_AFTER = re.compile(rf"(?<![\w.,/-])(\d+(?:[.,']\d+)*)({_CODES})(?![\w$/-])")
# a record's status, in the words any payables system uses (not only the mock ERP's), as one value:
# a letter or digit next to it makes it another word ("unpaid" is not "paid", "PAID-7" an identifier)
_STATUS = re.compile(
    r"(?<![A-Za-z0-9-])(partially[ -]paid|part(?:ly)?[ -]paid|unpaid|paid|settled|remitted|unbezahlt|bezahlt|"
    r"overdue|open|offen|closed|pending|approved|rejected|declined|draft|void(?:ed)?|cancell?ed|scheduled|"
    r"on[ -]hold|disputed)(?![A-Za-z0-9-])",
    re.IGNORECASE,
)
_STATUS_SAME = {
    "PART PAID": "PARTIALLY PAID",
    "PARTLY PAID": "PARTIALLY PAID",
    "VOIDED": "VOID",
    "CANCELED": "CANCELLED",
    "SETTLED": "PAID",  # the same state in other words: a criterion's "settled" is a claim of "paid"
    "REMITTED": "PAID",
    "BEZAHLT": "PAID",
    "UNBEZAHLT": "UNPAID",
    "OFFEN": "OPEN",
}
# a status and the one that says the contrary of it: where a row (or a record's status field) shows
# one, a claim of the other is refuted by it. Other status words ("open", "overdue", "approved" of an
# unpaid bill) are not judged against a row showing another status: a system need not use them.
_CONTRARY = {
    frozenset({"PAID", "UNPAID"}),
    frozenset({"PAID", "PARTIALLY PAID"}),
    frozenset({"OPEN", "CLOSED"}),
    frozenset({"APPROVED", "REJECTED"}),
    frozenset({"APPROVED", "DECLINED"}),
}
# what makes a status word no claim that the record has it: a negation ("not paid", "no longer
# open", "isn't yet approved") or what it was before ("from Unpaid to Paid", "previously open").
# Such a word is left out (the verifier's word), never read as the status itself, nor as its opposite —
# but for a status that is itself a negation (``_NEGATED``: "not unpaid" is "paid").
_NOT_STATUS = re.compile(
    r"(?:\b(?P<negated>not|never|no\s+longer|no\s+more|nor)\b|(?P<nt>n't)|"
    r"\b(?:from|previously|formerly|instead\s+of|rather\s+than))"
    r"(?:\s+(?:yet|been|be|being|marked|shown|listed|set|left|as|to|fully|still|already|ever|currently|"
    r"the|status|state))*[\s:]+$"
    r"|\bmark\s+(?:as\s+)?$",  # "the Mark paid button", "mark as paid": an action offered, no state
    re.IGNORECASE,
)
# what follows a status word that labels a field: up to two words and a colon ("Paid on:")
_LABEL = re.compile(r"(?:[ \t]+[^\W\d_]+){0,2}[ \t]*:(?!:)")
# a status that is itself a negation: negated ("not unpaid", "no longer unpaid"), it claims the other
_NEGATED = {"UNPAID": "PAID"}
# what follows a status that was the record's before another ("Unpaid → Paid", "was Unpaid and is now
# Paid", "unpaid, now paid"): the first is a former status, no claim
_THEN_STATUS = re.compile(r"^\s*(?:→|->|=>|⇒|\bto\b|,?\s*(?:and\s+)?(?:is\s+)?now\b)", re.IGNORECASE)


def _statuses(text: str) -> set[str]:
    """The statuses ``text`` says a record has (``_STATUS``), a negated or former one left out, and
    one that labels a field ("Paid on: —", "Paid so far: 0.00 USD"; "Paid: GX-5531" is a claim)."""
    found = set()
    text = plain(text)  # a fullwidth "Ｐａｉｄ" is "Paid", "Pa<ZWSP>id" too
    for m in _STATUS.finditer(text):
        word = re.sub(r"[ -]+", " ", m.group(1).upper())
        word = _STATUS_SAME.get(word, word)
        before = _NOT_STATUS.search(text[max(0, m.start() - 60) : m.start()])
        if before and (before.group("negated") or before.group("nt")) and word in _NEGATED:
            word = _NEGATED[word]
        elif before or _THEN_STATUS.match(text[m.end() :]):
            continue
        after = text[m.end() :]
        if (label := _LABEL.match(after)) and not _ID.match(after[label.end() :].lstrip()):
            continue
        found.add(STATUS_MARK + word)
    return found


def values(text: str) -> set[str]:
    """The values in ``text`` code can compare: dates as ISO, identifiers as written (case aside),
    amounts and numbers as plain decimals, currencies and a record's statuses (``_statuses``) marked.
    Small bare integers (counts, days) are left out."""
    return set(_values(text))


@functools.lru_cache(maxsize=256)
def _values(text: str) -> frozenset[str]:
    """``values``, read once per text: a run's answer is held to all it read (tens of kB, ~50 ms a
    reading) several times a run (``_unrecorded``, for the verdict and again for the report)."""
    found: set[str] = set()
    text = plain(text)

    def date(y: str, m: int, d: str) -> str:
        return f"{int(y):04d}-{m:02d}-{int(d):02d}"

    def take_iso(m: re.Match[str]) -> str:
        y, mo, d = m.groups()[:3] if m.group(1) else m.groups()[3:]
        found.add(date(y, int(mo), d))
        return " "

    def take_dmy(m: re.Match[str]) -> str:
        found.add(date(m.group(3), _MONTHS[m.group(2).lower().rstrip(".")], m.group(1)))
        return " "

    def take_mdy(m: re.Match[str]) -> str:
        found.add(date(m.group(3), _MONTHS[m.group(1).lower().rstrip(".")], m.group(2)))
        return " "

    def take_dotted(m: re.Match[str]) -> str:
        try:
            read = parse_date(m.group(0))
        except APInputError:  # no calendar date: 31.02.2026 is none, 12.34.56 a number as before
            return " " if len(m.group(0)) > 8 else m.group(0)
        readings = {read.value.isoformat()}
        # a text that writes its dates year first (2027.01.15) does not show that 15.01.27 is day first:
        # both readings stand (as 07/10/2026's do), and a claim of either matches, never another date
        if read.format == "dotted_dmy_short" and year_first:
            with contextlib.suppress(APInputError):
                readings.add(parse_date("20" + m.group(0).replace(".", "-")).value.isoformat())
        found.add("|".join(sorted(readings)))
        return " "

    def take_numeric(m: re.Match[str]) -> str:
        # day or month first: 31/10/2026 and 10/31/2026 say which; 07/10/2026 may be either, and
        # stands for both readings (``_pool`` lets it match either one, never another date)
        a, b, y = m.group(1), m.group(2), m.group(3)
        readings = sorted({date(y, int(mo), d) for d, mo in ((a, b), (b, a)) if _valid(y, int(mo), d)})
        if readings:
            found.add("|".join(readings))
        return " "

    found |= _statuses(text)  # Paid, Unpaid, Overdue …: a kind of its own, compared like an amount
    for m in _CURRENCY.finditer(text):  # USD, EUR, €, £: a kind of its own, never an identifier
        found.add(CURRENCY_MARK + SIGN_CURRENCY.get(m.group(0), m.group(0)))
    year_first = _YEAR_FIRST.search(text) is not None
    text = _ISO.sub(take_iso, text)
    text = _CJK.sub(take_iso, text)
    text = _DMY.sub(take_dmy, text)
    text = _MDY.sub(take_mdy, text)
    text = _DOTTED.sub(take_dotted, text)
    text = _NUMERIC.sub(take_numeric, text)
    for ident in _ID.findall(text):
        if re.search(r"[A-Za-z]", ident):
            found.add(ident.casefold())
    text = _ID.sub(lambda m: m.group(0) if not re.search(r"[A-Za-z]", m.group(0)) else " ", text)
    for m in _NUMBER.finditer(text):
        number = _plain_number(m.group(0))
        if number is not None:
            found.add(number)
    return frozenset(found)


def _valid(year: str, month: int, day: str) -> bool:
    return 1 <= month <= 12 and 1 <= int(day) <= 31 and int(year) > 0


def _pool(found: set[str]) -> set[str]:
    """What a source shows, as a claim is compared with it: a date written 07/10/2026 (day or month
    first) matches either reading, and a date the source gives plainly matches a claim written
    either way round (2026-10-07 is "07/10/2026" and "10/07/2026")."""
    out = set(found)
    for value in found:
        if "|" in value:
            out.update(value.split("|"))
        elif m := re.match(r"^(\d{4})-(\d{2})-(\d{2})$", value):
            y, mo, d = m.groups()
            if int(d) <= 12:
                out.add("|".join(sorted({value, f"{y}-{d}-{mo}"})))
    return out


def _plain_number(raw: str) -> str | None:
    digits = raw.replace("\u00a0", " ")
    if INDIAN_INT.fullmatch(digits.partition(".")[0]):  # 1,28,450.00: lakh/crore grouping (``ap``)
        digits = digits.replace(",", "")
    groups = re.match(r"^\d{1,3}(?:([,. '])\d{3})+(?:([.,])(\d{1,4}))?$", digits)
    if groups and groups.group(1) != groups.group(2):  # 1,284.50 / 1.284,50 / 1 284,50
        whole = re.sub(
            r"[,. ']", "", digits[: len(digits) - (len(groups.group(3)) + 1 if groups.group(3) else 0)]
        )
        frac = groups.group(3) or ""
    else:
        whole, _, frac = digits.replace(",", ".").partition(".")
        if not whole.isdigit():
            return None
    frac = frac.rstrip("0")
    if not frac and len(whole.lstrip("0") or "0") < 4 and "." not in digits and "," not in digits:
        return None  # a small bare integer: a count or a number of days, not a value to compare
    whole = whole.lstrip("0") or "0"
    return f"{whole}.{frac}" if frac else whole


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.casefold())) - {
        "the",
        "a",
        "an",
        "of",
        "in",
        "and",
        "is",
        "for",
        "to",
    }


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(b) if b else 0.0


def _short(text: str, limit: int = 120) -> str:
    """``text`` on one line for a reason, at most ``limit`` characters: whitespace (line feeds too)
    read as one space, and a character that draws nothing (ESC, which starts a terminal's control
    sequences, a bidi control …) shown as its code (``approvals.visible``), so that the reason a
    run ends with says what the model wrote and cannot steer a terminal that prints it."""
    flat = "".join(c if c.isprintable() else visible(c) for c in " ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def _why(check: CriterionCheck) -> str:
    _, _, why = check.observed.partition(REJECTED)
    return _short(why.rstrip("]") or check.observed, 300)
