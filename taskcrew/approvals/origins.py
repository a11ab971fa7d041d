"""Where each value of an approval came from, as one origin per field: the one account every
surface shows (the console's approval page, ``taskcrew approvals show``).

Two records speak of it. The run's origins (``crew/provenance.py``), carried as data on the request
(``ApprovalRequest.origins``, signed with it) were checked by code, which read the file a step cited
and found the value on that line. The job's own trace of each value to the step that found it
(``jobs/human.trace``) rests on the step's quote, not on the file.

An origin is never read back out of text a value could have written: the summary's block "where the
values come from:" is only their rendering. A request parked before origins were carried as data is
read from that block safely (``summary_origins``).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from taskcrew.approvals.authority import GENERIC_SOURCES, ApprovalView
from taskcrew.approvals.rules import RiskRules, read_money
from taskcrew.approvals.visible import visible
from taskcrew.jobs.models import FieldSource
from taskcrew.tools.human import ApprovalRequest, FieldValue

NOT_FOUND = "not found in any source or step result of this run"
# the job's trace of a value no step reported (``jobs/human.trace``): it knows no origin either
UNTRACED = "chosen on the page by the browser operator (not in an earlier step's findings)"
HEADER = "where the values come from:"  # the summary's block of origins, as code renders them
SKIP = ("{{secret:", "(left out of the approval")  # a field a rule leaves out of the key: no origin
# what ``str.splitlines`` breaks a line at: a value holding one could write a line of its own
LINE_BREAK = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
DOC = r"[^,;:()\n]*?\.(?:eml|pdf|png|jpe?g|tiff?|txt|md|csv|html?)"
FILE_REF = re.compile(rf"(?:citing\s+)?(?P<file>[^\s,;:()]{DOC})\b(?P<ocr>\s*\(OCR\))?(?:,\s*page\s+(?P<page>\d+))?(?:,\s*line\s+(?P<line>\d+))?", re.IGNORECASE)  # fmt: skip
URL_REF = re.compile(r"https?://[^\s,;)]+")


class SourceRef(BaseModel):
    """Where one value came from, as recorded, and what in it can be opened. ``ocr``: the value was
    read by OCR, as the run recorded it (``read_by_ocr``), never read out of the origin's words."""

    text: str
    file: str | None = None
    page: int | None = None
    line: int | None = None
    url: str | None = None
    ocr: bool = False


def parse_source(text: str) -> SourceRef:
    """The file (page, line) or page an origin names. What follows " — " is a warning about files
    a step cited that do not show the value, or that code cannot read: never the origin."""
    ref = SourceRef(text=text)
    origin = text.split(" — ", 1)[0]
    match = FILE_REF.search(origin)
    if match:
        ref.file = match.group("file").strip()
        ref.ocr = bool(match.group("ocr"))  # the mark "(OCR)" after the file, not a word of its name
        ref.page = int(match.group("page")) if match.group("page") else None
        ref.line = int(match.group("line")) if match.group("line") else None
    elif url := URL_REF.search(origin):
        ref.url = url.group(0)
    return ref


def field_keys(names: list[str]) -> list[str | None]:
    """The key each field's origin is stored, signed and shown under, by its place in the request:
    its name when the request sends the name once, "name #k" for the k-th of a name sent more than
    once (each value has its own origin: one's line is never shown beside the other). None for a
    field whose key another field would have too (a field named "name #2" beside a name sent
    twice): it then has no origin, never another's. A request stored before names sent twice were
    told apart has its origins by name: a name sent once reads the same."""
    count: dict[str, int] = {}
    for name in names:
        count[name] = count.get(name, 0) + 1
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        keys.append(name if count[name] == 1 else f"{name} #{seen[name]}")
    return [k if keys.count(k) == 1 else None for k in keys]


def field_sources(view: ApprovalView) -> dict[str, SourceRef]:
    """One origin per field of an approval as a person is shown it (``origins``)."""
    return origins(view.approval.request, view.approval.sources)


def origins(request: ApprovalRequest | None, sources: list[FieldSource]) -> dict[str, SourceRef]:
    """One origin per field, by its key (``field_keys``: its place in the request). The run's
    origins (``ApprovalRequest.origins``, ``crew/provenance.py``) were checked by code, which read
    the file and found the value on that line; where they know a field's origin, it is theirs, and
    where they say the value is found nowhere, that stands: the job's own trace of each value to the
    step that found it (``sources``, ``jobs/human.trace``: the step's quote, not the file) may
    then only add a note, never a file. The trace is the origin only of a field code's origins do
    not mention; a precise one (a file and line) wins. The worker seals the files these name when it
    parks (``jobs/human``), before any view of the approval exists."""
    if request is None:
        return {}
    keys = field_keys([f.name for f in request.fields])
    checked: dict[str, list[SourceRef]] = {}
    if request.origins is not None:  # code's, as data
        for key, origin in request.origins.items():
            checked[key] = [SourceRef(text=origin.text, file=origin.file, line=origin.line)]
    else:  # parked before origins were carried as data
        for key, text in summary_origins(request):
            checked.setdefault(key, []).append(parse_source(text))
    by_name: dict[str, list[str | None]] = {}
    for field, place in zip(request.fields, keys, strict=True):
        by_name.setdefault(field.name, []).append(place)
    traced: dict[str, list[SourceRef]] = {}
    told: dict[str, int] = {}
    for source in sources:  # one a field sent, in the request's order (``JobHuman._sources``)
        at = told[source.name] = told.get(source.name, -1) + 1
        named = by_name.get(source.name, [source.name])
        own = named[at] if at < len(named) else None
        if own is not None and source.source and source.source not in GENERIC_SOURCES:
            traced.setdefault(own, []).append(traced_source(source))
    notes = {k: f.note for f, k in zip(request.fields, keys, strict=True) if f.note and k is not None}
    out: dict[str, SourceRef] = {}
    for key in {**traced, **checked}:
        refs = [r for r in checked.get(key, []) if not r.text.startswith(NOT_FOUND)]
        if not refs and key in checked:  # code found it nowhere: a trace adds a note, not an origin
            said = [t.text for t in traced.get(key, []) if t.text != UNTRACED]
            text = checked[key][0].text + "".join(f" — the job's trace: {t}" for t in said)
            refs = [SourceRef(text=text, ocr=any(r.ocr for r in checked[key] + traced.get(key, [])))]
        refs = refs or traced[key]
        best = next((r for r in refs if r.file and r.line), None) or next(
            (r for r in refs if r.file), refs[0]
        )
        best.ocr = any(r.ocr for r in refs) or read_by_ocr(notes.get(key))
        out[key] = best
    for key, note in notes.items():
        if key not in out:
            out[key] = SourceRef(text=note, ocr=read_by_ocr(note))
    return out


def read_by_ocr(note: str | None) -> bool:
    """Whether a field's note (the policy gate's: its own, then its flaggers', joined by "; ") holds
    the OCR provenance's note (``OcrProvenance.flag``: ``OCR_NOTE`` or ``OcrReading.note``, each
    starting "read by OCR"): the run's record that it read the value by OCR. OCR is never inferred
    from the letters of an origin, a trace or a file's name ("Democratic Press order.pdf")."""
    from taskcrew.tools.documents.provenance import OCR_NOTE

    head = OCR_NOTE.split(" — ", 1)[0]  # "read by OCR"
    return any(part.startswith(head) for part in (note or "").split("; "))


STEP_TRACE = re.compile(r"step \d+ \(")  # a step's trace (``jobs/human.trace``): it holds the model's words


def traced_source(source: FieldSource) -> SourceRef:
    """A job's trace of one value as an origin. Its file is data (``FieldSource.files``: a file the
    step cited whose quoted line shows the value), never read out of a step's trace words, which
    hold the model's own (the keys and values it reported). A trace recorded before its files were
    kept as data names no file; another text (one given as the value's source, not a step's) is read
    as it is written."""
    if source.files is not None or STEP_TRACE.match(source.source):
        ref = SourceRef(text=source.source)  # the model's words: no file, no OCR read out of them
        ref.file = source.files[0] if source.files else None
        return ref
    return parse_source(source.source)


def summary_origins(request: ApprovalRequest) -> list[tuple[str, str]]:
    """(field key (``field_keys``), origin text) as the block "where the values come from:" at the
    end of the summary of a request parked before origins were carried as data (``crew/provenance.py``
    wrote one line "  name = value: origin" a field; a line is its value's, a name sent twice told
    apart by the value). Only the last block is read: what precedes it is the
    request's own summary (a page's or a model's words). Where no value holds a line break, each of
    its lines is code's. Where one does, a value could have written a line that reads as code's
    ("…\namount = 9500.00: invoice.txt, line 3"): the block is then read as code wrote it, field
    after field in the request's order, each value taken whole, line breaks and all; a block that
    does not read so to its end gives no origin at all (each field shows its trace, or none)."""
    _, header, block = request.summary.rpartition(HEADER + "\n")
    if not header:
        return []
    keys = field_keys([f.name for f in request.fields])
    written = [
        (f, k)
        for f, k in zip(request.fields, keys, strict=True)
        if (v := f.value.strip()) and not v.startswith(SKIP) and k
    ]
    if not any(LINE_BREAK.search(f.value) for f in request.fields):
        out = []
        for line in block.splitlines():
            name, sep, rest = line.strip().partition(" = ")
            for field, key in written if sep else []:  # a name sent twice: the line of its value
                value = field.value.strip()
                shown = next((s for s in (value, visible(value)) if rest.startswith(f"{s}: ")), None)
                if field.name == name and shown is not None:
                    out.append((key, rest[len(shown) + 2 :]))
                    break
        return out
    out, at = [], 0
    for field, key in written:
        value = field.value.strip()
        heads = (f"  {field.name} = {value}: ", f"  {visible(field.name)} = {visible(value)}: ")
        head = next((h for h in heads if block.startswith(h, at)), None)
        if head is None:
            return []
        end = block.find("\n", at + len(head))
        end = len(block) if end < 0 else end
        out.append((key, block[at + len(head) : end]))
        at = end + 1
    return out if not block[at:].strip() else []


def origin_lines(fields: list[Any], texts: dict[str, str]) -> list[str]:
    """Origins (``texts``: field key (``field_keys``) -> origin) as the summary's block shows them,
    one line a field ("  name = value: origin"), each name, value and origin shown as ``visible``
    shows a value: a line break inside one is a marker, never a line of its own."""
    lines = []
    for field, key in zip(fields, field_keys([str(f.name) for f in fields]), strict=True):
        value = str(getattr(field, "value", "")).strip()
        if key in texts and value and not value.startswith(SKIP):
            shown = (visible(str(field.name)), visible(value), visible(texts[key]))
            lines.append("  {} = {}: {}".format(*shown))
    return lines


def shown_summary(request: ApprovalRequest) -> str:
    """A request's summary as a prompt shows it (``describe_request``): its own words, then its
    block "where the values come from:" rendered again from the origins as data
    (``ApprovalRequest.origins``; for a request parked before, ``summary_origins``), never as stored."""
    own, header, _ = request.summary.rpartition(HEADER + "\n")
    if not header:
        return request.summary
    if request.origins is not None:
        texts = {name: origin.text for name, origin in request.origins.items()}
    else:
        texts = dict(summary_origins(request))
    lines = origin_lines(request.fields, texts)
    return own + (HEADER + "\n" + "\n".join(lines) if lines else "")


def amount_currencies(fields: list[FieldValue], rules: RiskRules) -> dict[str, str]:
    """By field name, the currency of each money value the rules read (``Money.values``: the fields
    named as amounts and the money-shaped ones; the request's currency fields, else the rules'
    default): what the one value-to-source check looks for beside the amount (``priced``). None for
    a currency the rules cannot read."""
    pairs = [(f.name, f.value) for f in fields]
    money = read_money(pairs, rules, None, {f.name: f.label for f in fields if f.label})
    return {found.field: money.currency for found in money.values if money.currency}


def priced(value: str, currency: str | None) -> str:
    """What a source must show for ``value``: an amount that names no currency of its own, with
    ``currency`` (``amount_currencies``): "4900.00 CHF", which "Total: 4,900.00 SEK" does not show;
    any other value as it is."""
    from taskcrew.tools import ap

    if not currency:
        return value
    try:
        amount = ap.parse_amount(value)
    except (ValueError, ArithmeticError):
        return value
    return value if amount.currency else f"{value} {currency}"
