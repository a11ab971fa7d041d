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
from taskcrew.crew.citations import appears_in, check_citations, quote_words
from taskcrew.crew.models import Citation, StepReport
from taskcrew.tools.documents.provenance import credit_heading, reading_doubt, shows_value
from taskcrew.tools.human import FieldValue, ValueOrigin

if TYPE_CHECKING:
    from taskcrew.approvals.rules import RiskRules


def _bare(text: str) -> str:
    return "".join(text.split()).casefold()


def same_value(value: str, found: str) -> bool:
    """Whether ``value`` is the value a step reported (``found``), as the reader reads values: each
    shows the other (``shows_value``) — an amount as an amount ("1,250.00" is 1250.00; "12,50" is
    twelve-fifty, never 1250), a date as a date, any other value word for word but for spaces and
    case; never a value that only holds it ("9950.00" is not "950.00", "paid 950.00" is not 950.00).
    The one rule for it: ``field_origin``'s and the job's trace's (``jobs/human.trace``)."""
    value, found = value.strip(), found.strip()
    return bool(value and found) and shows_value(found, value) and shows_value(value, found)


def names_value(text: str, value: str) -> bool:
    """Whether ``text`` (a step's summary, the request) names ``value``: shows it whole, as the
    reader reads values (``shows_value``: "150.00" does not name 50.00, "1,250.00" not 250.00,
    "12,50 EUR" not 1250), a value without digits as whole words ("Initech" does not name Tech). A
    short value ("1", "30") in words proves nothing. The one rule for ``field_origin``'s summary and
    request and the job's trace's task text (``jobs/human.trace``)."""
    if len(_bare(value)) < 3 or not shows_value(text, value):
        return False
    return any(ch.isdigit() for ch in value) or appears_in(value, [text])


def quoted_lines(quote: str, text: str) -> list[list[int]]:
    """Where the citation check finds ``quote`` in ``text`` (a file; ``citations.check_citations``:
    its words in order, case, spacing and punctuation aside): the numbers of the lines of each
    shortest passage that holds it, in the file's order; none when the file does not hold it."""
    lines = text.splitlines()
    want = quote_words(quote)
    if not want:
        return []
    found: list[list[int]] = []
    words: list[str] = []  # the file's words, as the check reads them, and the line of each
    line_of: list[int] = []
    for number, line in enumerate(lines, 1):
        said = quote_words(line)
        words += said
        line_of += [number] * len(said)
    for at in range(len(words) - len(want) + 1):
        if words[at : at + len(want)] == want:
            found.append(list(range(line_of[at], line_of[at + len(want) - 1] + 1)))
    return found


def _first_line(text: str, value: str, lines: list[int] | None = None) -> int | None:
    """The first of ``lines`` (numbers; all of the file ``text`` by default) that shows ``value``,
    one that shows it plainly first (``reading_doubt``); a line naming no currency is read in the
    file's (``shows_value``'s ``document``)."""
    every = text.splitlines()
    first: int | None = None
    for number in lines if lines is not None else range(1, len(every) + 1):
        if shows_value(every[number - 1], value, text):
            if reading_doubt(every[number - 1], value, text) is None:
                return number
            first = first or number
    return first


CREDIT = "shows it with a minus sign (a credit, not an amount owed?)"
CREDIT_TITLE = "calls the document a credit note (a credit, not an amount owed?)"
AMBIGUOUS = (
    "ambiguous: the step's quote is on each of these lines, so which one it means is not known: check it"
)


def _negative(value: str) -> str | None:
    """An amount's negative ("-150.00" for "150.00"), what a credit note shows; None for a value that
    is no amount, or is negative already."""
    from taskcrew.tools import ap

    try:
        amount = ap.parse_amount(value)
    except (ValueError, ArithmeticError):
        return None
    return f"-{value.strip()}" if amount.value > 0 else None


def _credit(text: str, shown: str, named: list[int], quoted: list[int] | None = None) -> str:
    """What the file ``text`` says of the sign of the amount ``shown`` on its lines ``named``: that it
    is a credit, not an amount owed — the one rule for it. "line N shows it with a minus sign (…)":
    the first of the ``quoted`` lines, else of the file, that shows the amount negative (a credit
    note's ``TOTAL CREDIT -150.00``, whatever the quote kept of it); else "line N calls the document
    a credit note (…)": the title of the part of the file holding a ``named`` line
    (``credit_heading``: "CREDIT NOTE", "Gutschrift", "Avoir" over a total printed positive). ""
    when it says neither, or ``shown`` is no positive amount."""
    minus = _negative(shown)
    if minus is None:
        return ""
    negative = (_first_line(text, minus, quoted) if quoted else None) or _first_line(text, minus)
    if negative is not None:
        return f"line {negative} {CREDIT}"
    for line in named:
        if (heading := credit_heading(text, line)) is not None:
            return f"line {heading} {CREDIT_TITLE}"
    return ""


def _cited_lines(quote: str, shown: str, text: str, currency: str | None) -> tuple[list[int], str] | None:
    """The lines of the file ``text`` that the quote holding ``shown`` (or its negative) names, and
    what the approver must know about them; None when the file does not hold the quote, or holds it
    without the value. A line is a quoted one (``quoted_lines``), never another line of the file that
    shows the same figure: of each place the file holds the quote, the line that shows the value.
    One line, when the quote is at one place; more when it is at several, each named; of a figure
    ("1,250.00" on a credit limit's line and the total's: ``_ambiguous``) the quote does not say
    which one it means, and the origin says so. Its sign is the file's (``_credit``)."""
    passages = quoted_lines(quote, text)
    quoted = [number for passage in passages for number in passage]
    every = text.splitlines()
    want = priced(shown, currency)  # the amount with its currency
    lines: list[int] = []
    for passage in passages:
        line = _first_line(text, shown, passage)
        if line is not None and want != shown:
            line = _first_line(text, want, passage) or line
        if line is not None and line not in lines:
            lines.append(line)
    warn = ""
    for line in lines:
        if want != shown and not shows_value(every[line - 1], want, text):
            warn += f" — but line {line} does not show it in {currency}: check the currency"
        if doubt := reading_doubt(every[line - 1], shown, text):
            warn += f" — but line {line} may read {doubt}: check it"
    if not lines:  # the quoted line shows it only with a minus: named, and said
        minus = _negative(shown)
        negative = _first_line(text, minus, quoted) if minus else None
        if negative is None:
            return None
        lines = [negative]
    if _ambiguous(shown, currency, [every[n - 1] for n in lines]):  # a figure's line says what it is
        warn = f" — {AMBIGUOUS}{warn}"
    if credit := _credit(text, shown, lines, quoted):
        warn += f" — but {credit}"
    return lines, warn


def _ambiguous(value: str, currency: str | None, lines: list[str]) -> bool:
    """Does a quote found on each of ``lines`` leave open which one it means? So when the value is a
    figure — an amount (read as money: ``currency``; or written with decimals) or a date, whose
    meaning is its line's label (a credit limit, a total; an invoice date, a due date) — and the
    lines do not all read the same (a total printed again on a payment slip is one thing). An invoice
    number ("INV-2057", "40930") in the subject, the body and the attachment names the same thing
    wherever the file repeats it, whatever the quote's words."""
    from taskcrew.tools import ap

    if len({tuple(quote_words(line)) for line in lines}) < 2:
        return False
    if currency or ap.date_spans(value) == [(0, len(value))]:
        return True
    try:
        ap.parse_amount(value)
    except ap.APInputError:
        return False
    return not value.strip().lstrip("-").isdigit()  # a whole number alone may be a number that names


def _line_words(lines: list[int]) -> str:
    """The words that name ``lines``: "line 4", "lines 2 and 4", "lines 2, 4 and 9"."""
    if len(lines) == 1:
        return f"line {lines[0]}"
    return "lines " + ", ".join(str(n) for n in lines[:-1]) + f" and {lines[-1]}"


def value_candidates(value: str, label: str | None = None) -> list[str]:
    """A field's value, and for a chosen option (shown as "1 (Northwind Traders)", its text in
    ``label``: ``FieldValue.label``) the text and the value sent. A typed value is never taken
    apart: "Initrode (Northwind Traders)" is looked for whole."""
    out = [value]
    if label and value.endswith(f" ({label})"):
        out += [label, value[: -len(label) - 3]]
    return [c for c in out if _bare(c)]


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
    the origin only when code read it, found there the line the step quoted (as the citation check
    finds a quote: ``quoted_lines``) and the value on that line — never another line of the file
    that shows the same figure: a quote the file does not hold (hidden text, a made-up line) is said
    so ("it cited X, but X does not show it"); a quote it holds at several places that show the
    value names them all and no one line, as ambiguous where the value is a figure on lines that
    read differently (``_ambiguous``: "1,250.00" on a credit limit's line and the total's). The sign is the file's (``_credit``): a quoted line, or another
    line of the file, that shows the amount with a minus (a credit note's total) is named with "line
    N shows it with a minus sign", whatever the quote kept of it; else a title over it ("CREDIT
    NOTE", "Gutschrift") with "line N calls the document a credit note". A source code cannot read (a
    made-up name, a tool, a page it cannot fetch) is said to be the model's word, not checked.
    The step's data, summary and the request hold the value only as ``same_value`` and
    ``names_value`` read it (the reader's own reading of values).
    ``currency``: an amount's, as the rules read it (``amount_currencies``): a line that shows the
    amount in another currency (or, naming none, is in a file that names only others:
    ``shows_value``'s ``document``) is named with the warning that it does not show it in that one.
    A line that shows it only by reading numbers one space apart as one amount, or one as two
    (``1 950.00``: ``reading_doubt``), is named with "line N may read 1 950.00 or 950.00: check it".
    ``reveal`` (the run's ``Vault.reveal``): a quote is compared as the page held it — a value the
    run hid shows there as its placeholder, and the value sent is the real one; ``read`` reads the
    real text."""
    unshown: list[str] = []  # files cited for the value that do not hold the quoted line with it
    unread: list[str] = []  # sources cited for the value that code cannot read
    negated: list[str] = []  # what a cited source not read at the quote says of the value's sign
    unsure: list[str] = []  # images cited whose text, as OCR read it, does not hold the quote
    for shown in value_candidates(value, label):
        minus = _negative(shown)
        for number, _role, report in reversed(reports):
            for citation in report.sources:
                quote = reveal(citation.quote)
                # the whole value, not the tail or head of a longer number ('234.56' of '1,234.56')
                if not (shows_value(quote, shown) or (minus and shows_value(quote, minus))):
                    continue
                text = read(citation.source)
                if text is None:
                    unread.append(citation.source)
                    if minus and shows_value(quote, minus):
                        negated.append(f"it cited {citation.source}, quoting a line that {CREDIT}")
                    continue
                # the quoted line, found as the citation check finds it; its sign read in the file
                check = check_citations(
                    [Citation(source=citation.source, quote=quote)], {citation.source: text}.get
                )
                found = _cited_lines(quote, shown, text, currency) if check[0].status == "found" else None
                if found is None:
                    (unsure if check[0].status == "unchecked" else unshown).append(citation.source)
                    shown_on = [line] if minus and (line := _first_line(text, shown)) else []
                    if credit := _credit(text, shown, shown_on):  # the file's sign, not the quote's
                        negated.append(f"it cited {citation.source}, whose {credit}")
                    elif minus and shows_value(quote, minus):
                        negated.append(f"it cited {citation.source}, quoting a line that {CREDIT}")
                    continue
                lines, warn = found
                where = f"{citation.source}, {_line_words(lines)} (cited in step {number})"
                return ValueOrigin(
                    text=where + _as(shown, value) + warn,
                    file=citation.source,
                    line=lines[0] if len(lines) == 1 else None,  # several: the quote does not say which
                )
        for number, role, report in reversed(reports):
            for key, reported in report.data.items():
                if same_value(shown, str(reported)):
                    return ValueOrigin(
                        text=f"step {number} ({role}) reported it as {key!r}"
                        + _as(shown, value)
                        + _unshown(unshown, unread, negated, unsure)
                    )
    for shown in value_candidates(value, label)[1:] or value_candidates(value):
        for number, role, report in reversed(reports):
            if names_value(report.summary, shown):
                return ValueOrigin(
                    text=f"step {number} ({role}) named it in its summary (not as a cited value)"
                    + _as(shown, value)
                    + _unshown(unshown, unread, negated, unsure)
                )
        if names_value(request, shown):
            return ValueOrigin(
                text="your request names it" + _as(shown, value) + _unshown(unshown, unread, negated, unsure)
            )
    return ValueOrigin(text=NOT_FOUND + _unshown(unshown, unread, negated, unsure))


def _unshown(sources: list[str], unread: list[str], negated: list[str], unsure: list[str]) -> str:
    """What the approver must know when a step cited files for the value that do not hold the line
    it quoted with the value (hidden text, a made-up line), sources code cannot read (their quote is
    the model's word alone), images whose text as OCR read it does not hold the quote, and what such
    a source says of the value's sign (``negated``: a line of the file, else the quote, shows it with
    a minus — a credit note's amount entered as a bill's?)."""
    said = "".join(f" — {sign}" for sign in dict.fromkeys(negated))
    said += "".join(
        f" — it cited {source}, but {source} does not show it" for source in dict.fromkeys(sources)
    )
    said += "".join(
        f" — it cited {source}, an image whose text as OCR read it does not hold the quote: the model's"
        " word, not checked"
        for source in dict.fromkeys(unsure)
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
