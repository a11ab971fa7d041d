"""Where each value of an approval came from: the file and line, or the step that reported it.

A person asked "may I send this?" should not have to trust the model's memory: each field value is
traced back to the run's own records (the steps' cited sources, read again by code, and their
reported data). A value found nowhere is said to be so. The origins are data (``ValueOrigin``),
carried on the request and signed with it; the summary's block "where the values come from:" is
their rendering (``approvals.origins.origin_lines``), each line break in a value a marker, so no value
can write a line that reads as code's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from taskcrew.approvals.origins import (
    HEADER,
    NOT_FOUND,
    SKIP,
    amount_currencies,
    field_keys,
    origin_lines,
    priced,
)
from taskcrew.crew.models import StepReport
from taskcrew.tools.documents.provenance import reading_doubt, shows_value
from taskcrew.tools.human import FieldValue, ValueOrigin

if TYPE_CHECKING:
    from taskcrew.approvals.rules import RiskRules


def _norm(text: str) -> str:
    return "".join(text.split()).replace(",", "").casefold()


def same_value(value: str, found: str) -> bool:
    """Whether ``value`` is the value a step reported (``found``): equal but for spaces, thousands
    commas and case — never a value that only holds it ("9950.00" is not "950.00"). The one rule
    for it: ``field_origin``'s and the job's trace's (``jobs/human.trace``)."""
    return bool(_norm(value)) and _norm(value) == _norm(found)


def _line_of(value: str, text: str) -> int | None:
    """The first line of ``text`` (a file) that shows ``value``, one that shows it plainly first
    (``reading_doubt``); a line naming no currency is read in the file's (``shows_value``)."""
    first: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if _norm(value) and shows_value(line, value, text):
            if reading_doubt(line, value, text) is None:
                return number
            first = first or number
    return first


def value_candidates(value: str, label: str | None = None) -> list[str]:
    """A field's value, and for a chosen option (shown as "1 (Northwind Traders)", its text in
    ``label``: ``FieldValue.label``) the text and the value sent. A typed value is never taken
    apart: "Initrode (Northwind Traders)" is looked for whole."""
    out = [value]
    if label and value.endswith(f" ({label})"):
        out += [label, value[: -len(label) - 3]]
    return [c for c in out if len(_norm(c)) >= 1]


def value_origin(
    value: str,
    reports: list[tuple[int, str, StepReport]],
    read: Callable[[str], str | None],
    request: str = "",
    label: str | None = None,
    currency: str | None = None,
) -> str:
    """``field_origin``'s words."""
    return field_origin(value, reports, read, request, label, currency).text


def field_origin(
    value: str,
    reports: list[tuple[int, str, StepReport]],
    read: Callable[[str], str | None],
    request: str = "",
    label: str | None = None,
    currency: str | None = None,
    reveal: Callable[[str], str] = lambda text: text,
) -> ValueOrigin:
    """``reports``: (step number, role, report), oldest first. Looks in the cited sources, then the
    reported data, then the steps' own words; says "not found" only when it is in none of them.
    ``label``: a chosen option's text (the value is then "sent (label)"). A cited source is named as
    the origin only when code read it and found the value there: a source code cannot read (a
    made-up name, a tool, a page it cannot fetch) is said to be the model's word, not checked.
    ``currency``: an amount's, as the rules read it (``amount_currencies``): a line that shows the
    amount in another currency (or, naming none, is in a file that names only others:
    ``shows_value``'s ``document``) is named with the warning that it does not show it in that one.
    A line that shows it only by reading numbers one space apart as one amount, or one as two
    (``1 950.00``: ``reading_doubt``), is named with "line N may read 1 950.00 or 950.00: check it".
    ``reveal`` (the run's ``Vault.reveal``): a quote is compared as the page held it — a value the
    run hid shows there as its placeholder, and the value sent is the real one; ``read`` reads the
    real text."""
    unshown: list[str] = []  # files cited for the value whose text, read by code, does not show it
    unread: list[str] = []  # sources cited for the value that code cannot read
    negated: list[str] = []  # sources whose quoted line shows the value with a minus (a credit note's)
    for shown in value_candidates(value, label):
        want = _norm(shown)
        for number, _role, report in reversed(reports):
            for citation in report.sources:
                quote = reveal(citation.quote)
                if want and not want.startswith("-") and shows_value(quote, f"-{shown}"):
                    negated.append(citation.source)
                # the whole value, not the tail or head of a longer number ('234.56' of '1,234.56')
                if want and shows_value(quote, shown):
                    text = read(citation.source)
                    if text is None:
                        unread.append(citation.source)
                        continue
                    line = _line_of(shown, text)
                    if line is None:  # the quote is the model's: the file says otherwise
                        unshown.append(citation.source)
                        continue
                    warn = ""
                    if (want_priced := priced(shown, currency)) != shown:  # the amount with its currency
                        line, warn = _line_of(want_priced, text) or line, ""
                        if not shows_value(text.splitlines()[line - 1], want_priced, text):
                            warn = f" — but line {line} does not show it in {currency}: check the currency"
                    if doubt := reading_doubt(text.splitlines()[line - 1], shown, text):
                        warn += f" — but line {line} may read {doubt}: check it"
                    where = f"{citation.source}, line {line} (cited in step {number})"
                    return ValueOrigin(text=where + _as(shown, value) + warn, file=citation.source, line=line)
        for number, role, report in reversed(reports):
            for key, reported in report.data.items():
                if same_value(shown, reported):
                    return ValueOrigin(
                        text=f"step {number} ({role}) reported it as {key!r}"
                        + _as(shown, value)
                        + _unshown(unshown, unread, negated)
                    )
    for shown in value_candidates(value, label)[1:] or value_candidates(value):
        want = _norm(shown)
        if len(want) < 3:
            continue  # a short value ("1", "USD") in a summary proves nothing
        for number, role, report in reversed(reports):
            if want in _norm(report.summary):
                return ValueOrigin(
                    text=f"step {number} ({role}) named it in its summary (not as a cited value)"
                    + _as(shown, value)
                    + _unshown(unshown, unread, negated)
                )
        if want in _norm(request):
            return ValueOrigin(
                text="your request names it" + _as(shown, value) + _unshown(unshown, unread, negated)
            )
    return ValueOrigin(text=NOT_FOUND + _unshown(unshown, unread, negated))


def _unshown(sources: list[str], unread: list[str], negated: list[str]) -> str:
    """What the approver must know when a step cited files for the value that do not show it, whose
    quoted line shows it negative (a credit note's amount entered as a bill's), or sources code
    cannot read (their quote is the model's word alone)."""
    said = "".join(
        f" — it cited {source}, quoting a line that shows it with a minus sign (a credit, not an amount owed?)"
        for source in dict.fromkeys(negated)
    )
    said += "".join(
        f" — it cited {source}, but {source} does not show it" for source in dict.fromkeys(sources)
    )
    return said + "".join(
        f" — it cited {source!r}, which code cannot read: the model's word, not checked"
        for source in dict.fromkeys(unread)
    )


def _as(shown: str, value: str) -> str:
    return f" — as {shown!r}" if shown != value else ""


def field_origins(
    fields: list[Any],
    reports: list[tuple[int, str, StepReport]],
    read: Callable[[str], str | None],
    request: str = "",
    rules: RiskRules | None = None,
    reveal: Callable[[str], str] = lambda text: text,
) -> dict[str, ValueOrigin]:
    """Where each field's value came from (``field_origin``), by the field's key (``field_keys``: its
    name, or for a name sent twice "name #k"): code's data, carried on the approval request
    (``ApprovalRequest.origins``). An amount is looked for with the currency the rules read
    (``rules``; the operator's, by default). Each value sent has its own origin."""
    from taskcrew.approvals.rules import RiskRulesError, load_rules

    if rules is None:
        try:
            rules = load_rules()
        except RiskRulesError:  # the run loaded them already; a file broken since reads no currency
            rules = None
    sent = [FieldValue(name=f.name, value=str(f.value), label=getattr(f, "label", None)) for f in fields]
    currencies = amount_currencies(sent, rules) if rules is not None else {}
    out: dict[str, ValueOrigin] = {}
    for field, key in zip(fields, field_keys([str(f.name) for f in fields]), strict=True):
        value = str(getattr(field, "value", "")).strip()
        if key is None or not value or value.startswith(SKIP):
            continue
        label = getattr(field, "label", None)
        out[key] = field_origin(value, reports, read, request, label, currencies.get(field.name), reveal)
    return out


class SourcedHuman:
    """The run's person, shown for each approval where its values came from (``explain``): carried
    on the request as data (``ApprovalRequest.origins``) and rendered in its summary."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.explain: Callable[[list[Any]], dict[str, ValueOrigin]] | None = None

    def approve(self, request: Any) -> Any:
        if self.explain is not None and request.fields:
            found = self.explain(request.fields)
            lines = origin_lines(request.fields, {name: origin.text for name, origin in found.items()})
            update: dict[str, Any] = {"origins": found}
            if lines:
                summary = (request.summary + "\n" if request.summary else "") + HEADER + "\n"
                update["summary"] = summary + "\n".join(lines)
            request = request.model_copy(update=update)
        return self.inner.approve(request)

    def ask(self, question: str) -> str:
        return str(self.inner.ask(question))

    def __getattr__(self, name: str) -> Any:  # the wrapped person's own attributes (e.g. a test's records)
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
