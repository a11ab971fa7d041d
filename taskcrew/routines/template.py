"""Per-issuer extraction templates: learned from where a verified run's values are printed, applied
to the issuer's next invoice, and checked with the deterministic AP helpers (``tools/ap.py``).

Learning looks up each verified value in the document the run used: a date where a printed date
reads as it, an amount where a printed amount parses to it, an invoice number where it stands as a
whole word. The words before it on its line become the anchor; a text value's shape becomes its
pattern ("INV-2057" → ``[A-Z]+-\\d+``). A due date that is not printed is learned as following from
the invoice date and the printed terms (``ap.due_date``); a currency that is not printed on its own
as the currency of the total. Extraction reads each anchor's line and parses what follows it; the
checks (total = subtotal + tax, due = date + terms, due not before the date) must hold, or the
values are not used.

Amounts are read as the invoice reader reads them — one reader, never a pattern of this module's: the
words of a line as ``documents.provenance`` reads their amounts (``amounts_in``: signed, bracketed
credits, every grouping of ``ap.GROUPS``), the words after a label as ``ap.parse_amount`` reads them
(``_amount_after``). A credit's total reads negative ("-9,180.00", "(9,180.00)", "9,180.00-"), and a
total that is zero or negative is no amount owed (``not_owed``): a replay enters no bill for it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from taskcrew.routines.models import Check, Derived, FieldRule, Template
from taskcrew.tools import ap

# the verifier's reading of a line's amounts (private: documents.provenance has no public one that reads a
# line; the one reader of amounts, imported, not copied)
from taskcrew.tools.documents.provenance import amounts_in

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PLAIN_AMOUNT = re.compile(r"^\d+\.\d{2}$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_CODE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
_HEADERS = ("subject:", "from:", "to:", "cc:", "date:", "attachments:")
MAX_ANCHOR = 40


class ExtractionError(ValueError):
    """The template could not read the document, or what it read fails a check."""


class LearnError(ValueError):
    """A verified value could not be found in the document (so no template can be learned)."""


def sections(text: str) -> list[list[str]]:
    """A read document's parts (the e-mail body, each attachment), each as its stripped lines."""
    parts: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("--- ") and line.rstrip().endswith("---"):
            parts.append([])
        elif line.strip():
            parts[-1].append(line.strip())
    return [p for p in parts if p]


def shape(value: str) -> str:
    """The shape of a printed identifier: runs of capitals, small letters and digits, the rest as is."""
    out = []
    for run in re.finditer(r"[A-Z]+|[a-z]+|\d+|.", value):
        text = run.group(0)
        if text[0].isupper():
            out.append("[A-Z]+")
        elif text[0].islower():
            out.append("[a-z]+")
        elif text[0].isdigit():
            out.append(r"\d+")
        else:
            out.append(re.escape(text))
    return "".join(out)


@dataclass
class _Found:
    anchor: str
    rest: str
    score: int  # lower is better: a label line ("Invoice No. INV-2057") beats a sentence
    at: int = 0  # the line it is on


_COLUMN_GAP = re.compile(r"\s{3,}")  # OCR and PDF layouts print columns side by side on one line


def _label(before: str) -> str | None:
    """The label printed just before a value: the words of its own column (after the last wide gap)."""
    before = _COLUMN_GAP.split(before.strip())[-1]
    anchor = before.strip().rstrip(":").strip()
    if not (2 <= len(anchor) <= MAX_ANCHOR) or not re.search(r"[A-Za-z]", anchor):
        return None
    if anchor.casefold().startswith(_HEADERS):
        return None
    return before.strip()


def _best(found: list[_Found], last: bool = False) -> _Found | None:
    """The best place; of equal ones the shortest label, or (``last``) the one printed last — a
    total is printed after a subtotal of the same amount."""
    if not found:
        return None
    return min(found, key=lambda f: (f.score, -f.at if last else 0, len(f.anchor)))


def _find_text(lines: list[str], value: str) -> _Found | None:
    found = []
    for line in lines:
        for match in re.finditer(rf"(?<![\w/-]){re.escape(value)}(?![\w/-])", line):
            anchor = _label(line[: match.start()])
            if anchor:
                found.append(_Found(anchor, line[match.end() :], 0 if not line[match.end() :].strip() else 1))
    return _best(found)


def _find_date(lines: list[str], value: str) -> _Found | None:
    found = []
    for line in lines:
        try:
            dates = ap.find_dates(line)
        except ValueError:
            continue
        for parsed in dates:
            if parsed.value.isoformat() != value:
                continue
            at = line.find(parsed.text)
            anchor = _label(line[:at]) if at >= 0 else None
            if anchor:
                found.append(_Found(anchor, line[at + len(parsed.text) :], 0 if len(dates) == 1 else 1))
    return _best(found)


@dataclass(frozen=True)
class _Amount:
    value: Decimal
    currency: str | None
    alone: bool  # the words after the label are this amount and nothing more

    @property
    def plain(self) -> str:
        """As ``ap.parse_amount`` writes it: no grouping, '.' decimals, at least two."""
        exponent = self.value.as_tuple().exponent
        return ap.plain_amount(self.value, decimals=max(2, -exponent if isinstance(exponent, int) else 2))


@functools.lru_cache(maxsize=2048)
def _line_amounts(text: str) -> tuple[tuple[Decimal, tuple[str, ...], str], ...]:
    """The amounts ``text`` writes as the invoice reader reads a line (``amounts_in``), in order."""
    return tuple(amounts_in(text))


def _amount_after(line: str, at: int) -> _Amount | None:
    """The amount printed after the label ``line[:at]``, as the invoice reader reads it: of the line's
    amounts (``amounts_in``, so a dash after a label is no minus and brackets after a tax word are an
    aside) those after the label, the one the words after it are as one amount (``ap.parse_amount``:
    "CHF 1 234.50" after "Total" is 1234.50, not a count and 234.50), else the one read without
    doubt. None when the words after the label write none, several, or one in doubt."""
    readings = list(_line_amounts(line))
    for value, _currencies, _doubt in _line_amounts(line[:at]):  # the label's own numbers ("VAT 20%")
        same = next((k for k, r in enumerate(readings) if r[0] == value), None)
        if same is not None:
            del readings[same]
    if not readings:
        return None
    rest = line[at:].strip().lstrip(":").strip()
    try:
        whole = ap.parse_amount(rest)
    except (ValueError, ArithmeticError):
        whole = None
    if whole is not None and any(value == whole.value for value, _c, _d in readings):
        return _Amount(whole.value, whole.currency, alone=True)
    if any(doubt for _v, _c, doubt in readings) or len({value for value, _c, _d in readings}) != 1:
        return None
    value, currencies, _doubt = readings[0]
    return _Amount(value, currencies[0] if currencies else None, alone=False)


def _amount_starts(line: str) -> list[int]:
    """Where an amount may begin on ``line`` after a label: a word with a digit, a sign or bracket, or a
    currency ("$", "-", "(", "CHF", "Rs.")."""
    return [
        word.start()
        for word in re.finditer(r"\S+", line)
        if word.start() > 0
        and (
            re.search(r"\d", word.group(0))
            or not re.search(r"[^\W\d_]", word.group(0))
            or ap.currencies_in(word.group(0))
        )
    ]


def _find_amount(lines: list[str], value: Decimal) -> _Found | None:
    found = []
    for at, line in enumerate(lines):
        for start in _amount_starts(line):
            amount = _amount_after(line, start)
            if amount is None or amount.value != value:
                continue
            anchor = _label(line[:start])
            if anchor and not re.search(r"\d", anchor.rstrip(" %")[-1:]):
                found.append(_Found(anchor, line[start:], 0 if amount.alone else 1, at))
    return _best(found, last=True)


def _split_terms(lines: list[str], issued: date, due: date) -> _Found | None:
    """The line whose words after a label are terms that give ``due`` from ``issued``."""
    for line in lines:
        words = line.split()
        for k in range(1, min(len(words), 5)):
            anchor, rest = " ".join(words[:k]), " ".join(words[k:])
            if _label(anchor) is None:
                continue
            try:
                if ap.due_date(issued, rest).due_date == due:
                    return _Found(anchor, rest, 0)
            except ValueError:
                continue
    return None


def learn(text: str, values: dict[str, str], issuer: str, source: str) -> Template:
    """A template that reads ``values`` (name → verified value) back out of ``text``: learned from
    the document's last part that has them all (an attachment before the e-mail around it).

    Raises LearnError naming a value that cannot be found where it could be read again."""
    problems = []
    for lines in reversed(sections(text)):
        try:
            return _learn(lines, text, values, issuer, source)
        except LearnError as exc:
            problems.append(str(exc))
    raise LearnError(problems[0] if problems else f"{source} has no text")


def _learn(lines: list[str], text: str, values: dict[str, str], issuer: str, source: str) -> Template:
    fields: list[FieldRule] = []
    derived: list[Derived] = []
    dates = {n: v for n, v in values.items() if _ISO.match(v)}
    amounts = {n: v for n, v in values.items() if _PLAIN_AMOUNT.match(v)}
    currencies = {n: v for n, v in values.items() if _CURRENCY.match(v)}
    texts = {n: v for n, v in values.items() if n not in dates | amounts | currencies}
    for name, value in texts.items():
        found = _find_text(lines, value)
        if found is None:
            raise LearnError(f"{name} {value!r} is not printed after a label in {source}")
        fields.append(FieldRule(name=name, kind="text", anchor=found.anchor, pattern=shape(value)))
    for name, value in amounts.items():
        found = _find_amount(lines, Decimal(value))
        if found is None:
            raise LearnError(f"{name} {value} is not printed as an amount after a label in {source}")
        fields.append(FieldRule(name=name, kind="amount", anchor=found.anchor))
    printed: dict[str, str] = {}
    for name, value in sorted(dates.items(), key=lambda kv: kv[1]):  # the earliest first: the invoice date
        found = _find_date(lines, value)
        if found is not None and found.anchor not in printed.values():
            fields.append(FieldRule(name=name, kind="date", anchor=found.anchor))
            printed[name] = found.anchor
    for name, value in dates.items():
        if name in printed:
            continue
        for start_name in printed:
            start_value = dates[start_name]
            terms = _split_terms(lines, date.fromisoformat(start_value), date.fromisoformat(value))
            if terms is not None and start_value <= value:
                fields.append(FieldRule(name="terms", kind="terms", anchor=terms.anchor))
                derived.append(Derived(name=name, rule="due_from_terms", inputs=[start_name, "terms"]))
                break
        else:
            raise LearnError(f"{name} {value} is neither printed nor follows from a printed date and terms")
    for name, value in currencies.items():
        total = next((f for f in fields if f.kind == "amount"), None)
        if total is not None and _currency_on(lines, total.anchor) == value:
            derived.append(Derived(name=name, rule="currency_of_total", inputs=[total.name]))
        else:
            raise LearnError(f"{name} {value} is not printed with the total in {source}")
    checks: list[Check] = []
    total = next((f for f in fields if f.kind == "amount"), None)
    if total is not None:
        parts = _sum_parts(lines, Decimal(amounts[total.name]), total.anchor)
        if parts is not None:
            fields += [
                FieldRule(name="subtotal", kind="amount", anchor=parts[0]),
                FieldRule(name="tax", kind="amount", anchor=parts[1]),
            ]
            checks.append("total_is_subtotal_plus_tax")
    if derived and any(d.rule == "due_from_terms" for d in derived):
        checks.append("due_is_date_plus_terms")
    template = Template(
        issuer=issuer,
        fields=fields,
        derived=derived,
        checks=checks,
        learned_from=source,
    )
    got = extract(template, text)  # what is learned must read the same values back
    wrong = {n: (got.get(n), v) for n, v in values.items() if got.get(n) != v}
    if wrong:
        raise LearnError(f"the learned template reads {wrong} back from {source}")
    return template


def _currency_on(lines: list[str], anchor: str) -> str | None:
    for line, end in _labelled(lines, anchor):
        amount = _amount_after(line, end)
        if amount is not None and amount.currency:
            return amount.currency
        codes = [c for c in _CODE.findall(line) if c in ap.ISO_CURRENCIES - ap.WORD_CODES]  # not 'ALL'
        if codes:
            return codes[0]
    return None


def _sum_parts(lines: list[str], total: Decimal, total_anchor: str) -> tuple[str, str] | None:
    """Two labelled amounts printed before the total that add up to it (subtotal and tax)."""
    labelled: list[tuple[str, Decimal]] = []
    for line in lines:
        if line.startswith(total_anchor):
            break
        for start in _amount_starts(line):
            amount = _amount_after(line, start)
            if amount is not None and _label(line[:start]) is not None:
                labelled.append((line[:start].strip(), amount.value))
                break
    for i, (a_label, a) in enumerate(labelled):
        for b_label, b in labelled[i + 1 :]:
            if a + b == total and a_label != b_label:
                return a_label, b_label
    return None


def _labelled(lines: list[str], anchor: str) -> list[tuple[str, int]]:
    """Each line that has ``anchor`` where a label sits (case as printed; not inside a word: "TOTAL"
    of "SUBTOTAL"), with where the label ends."""
    out = []
    for line in lines:
        at = next((m.start() for m in re.finditer(rf"(?<![^\W\d_]){re.escape(anchor)}", line)), -1)
        if at >= 0:
            out.append((line, at + len(anchor)))
    return out


def _read(rule: FieldRule, lines: list[str]) -> str | None:
    for line, end in _labelled(lines, rule.anchor):
        rest = line[end:].strip().lstrip(":").strip()
        if rule.kind == "text":
            match = re.match(rf"({rule.pattern})(?![\w])", rest)
            if match:
                return match.group(1)
        elif rule.kind == "date":
            try:
                found = ap.find_dates(rest)
            except ValueError:
                continue
            if found:
                return found[0].value.isoformat()
        elif rule.kind == "amount":
            amount = _amount_after(line, end)
            if amount is not None:
                return amount.plain
        elif rule.kind == "terms" and rest:
            return rest
    return None


def extract(template: Template, text: str) -> dict[str, str]:
    """The values ``template`` reads from one document's text (the first part that has them all).

    Raises ExtractionError when no part has every field, or what was read fails a check."""
    return extract_all(template, text)[0]


def extract_all(template: Template, text: str) -> list[dict[str, str]]:
    """The values of every part of ``text`` the template reads (an e-mail may carry two invoices);
    raises ExtractionError when none has every field, or what one read fails a check."""
    problems = []
    out = []
    for lines in sections(text):
        got: dict[str, str] = {}
        missing = []
        for rule in template.fields:
            value = _read(rule, lines)
            if value is None:
                missing.append(f"{rule.name} (after {rule.anchor!r})")
            else:
                got[rule.name] = value
        if missing:
            problems.append("no " + ", ".join(missing))
            continue
        for item in template.derived:
            try:
                if item.rule == "due_from_terms":
                    got[item.name] = ap.due_date(
                        got[item.inputs[0]], got[item.inputs[1]]
                    ).due_date.isoformat()
                else:
                    anchor = next(f.anchor for f in template.fields if f.name == item.inputs[0])
                    currency = _currency_on(lines, anchor)
                    if currency is None:
                        raise ValueError(f"no currency printed with {anchor!r}")
                    got[item.name] = currency
            except (ValueError, KeyError, StopIteration) as exc:
                raise ExtractionError(f"{item.name} could not be worked out: {exc}") from exc
        check(template, got)
        out.append(got)
    if not out:
        raise ExtractionError("; ".join(dict.fromkeys(problems)) or "the document has no text")
    return out


def check(template: Template, got: dict[str, str]) -> None:
    """The AP checks the template learned; raises ExtractionError on the first that fails."""
    amounts = [f.name for f in template.fields if f.kind == "amount"]
    if "total_is_subtotal_plus_tax" in template.checks:
        total, subtotal, tax = (Decimal(got[n]) for n in (amounts[0], "subtotal", "tax"))
        if subtotal + tax != total:
            raise ExtractionError(f"total {total} is not subtotal {subtotal} + tax {tax}")
    dates = sorted(v for v in got.values() if _ISO.match(v))
    for item in template.derived:
        if item.rule == "due_from_terms" and got[item.name] < got[item.inputs[0]]:
            raise ExtractionError(f"{item.name} {got[item.name]} is before {got[item.inputs[0]]}")
    if dates and any(not _valid(d) for d in dates):
        raise ExtractionError(f"a date does not exist: {dates}")


def not_owed(template: Template, values: dict[str, str]) -> str | None:
    """Why the total ``template`` read (its first amount: ``check``) is no amount owed — zero, or
    negative (a credit note prints "-9,180.00", "(9,180.00)" or "9,180.00-") — or None when it is
    owed. A replay never enters such a total as a bill: the agent and the person decide."""
    total = next((f.name for f in template.fields if f.kind == "amount"), None)
    if total is None or total not in values:
        return None
    try:
        value = Decimal(values[total])
    except ArithmeticError:
        return f"its {total} {values[total]!r} is no number"
    if value > 0:
        return None
    what = "zero" if value == 0 else "negative (a credit note or a refund, not a bill)"
    currency = next((values[d.name] for d in template.derived if d.rule == "currency_of_total"), "")
    return (
        f"the document's total is {values[total]}{' ' + currency if currency else ''}: {what}, no amount "
        "owed, so the routine enters no bill for it"
    )


def _valid(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
