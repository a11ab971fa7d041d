"""Where each value of an approval came from, as one origin per field: the one account every
surface shows (the console's approval page, ``taskcrew approvals show``).

Two records speak of it. The run's lines in the request's summary (``crew/provenance.py``: "name =
value: file, line N (cited in step 1)") were checked by code, which read the file and found the
value on that line. The job's own trace of each value to the step that found it
(``jobs/human.provenance``) rests on the step's quote, not on the file.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from taskcrew.approvals.authority import GENERIC_SOURCES, ApprovalView
from taskcrew.jobs.models import FieldSource
from taskcrew.tools.human import ApprovalRequest

NOT_FOUND = "not found in any source or step result of this run"
DOC = r"[^,;:()\n]*?\.(?:eml|pdf|png|jpe?g|tiff?|txt|md|csv|html?)"
FILE_REF = re.compile(rf"(?:citing\s+)?(?P<file>[^\s,;:()]{DOC})\b(?P<ocr>\s*\(OCR\))?(?:,\s*page\s+(?P<page>\d+))?(?:,\s*line\s+(?P<line>\d+))?", re.IGNORECASE)  # fmt: skip
URL_REF = re.compile(r"https?://[^\s,;)]+")


class SourceRef(BaseModel):
    """Where one value came from, as recorded, and what in it can be opened."""

    text: str
    file: str | None = None
    page: int | None = None
    line: int | None = None
    url: str | None = None
    ocr: bool = False


def parse_source(text: str) -> SourceRef:
    """The file (page, line) or page an origin names. What follows " — " is a warning about files
    a step cited that do not show the value, or that code cannot read: never the origin."""
    ref = SourceRef(text=text, ocr="ocr" in text.lower())
    origin = text.split(" — ", 1)[0]
    match = FILE_REF.search(origin)
    if match:
        ref.file = match.group("file").strip()
        ref.page = int(match.group("page")) if match.group("page") else None
        ref.line = int(match.group("line")) if match.group("line") else None
    elif url := URL_REF.search(origin):
        ref.url = url.group(0)
    return ref


def field_sources(view: ApprovalView) -> dict[str, SourceRef]:
    """One origin per field of an approval as a person is shown it (``origins``)."""
    return origins(view.approval.request, view.approval.sources)


def origins(request: ApprovalRequest | None, sources: list[FieldSource]) -> dict[str, SourceRef]:
    """One origin per field. The run's lines in the request's summary ("name = value: file, line N
    (cited in step 1)") were checked by code, which read the file and found the value on that line
    (``crew/provenance.py``); where they know a field's origin, it is theirs. The job's own trace
    of each value to the step that found it (``sources``, ``jobs/human.provenance``: the step's
    quote, not the file) is used only for a field they do not mention or do not find. A precise one
    (a file and line) wins; "not found" is said only when no record knows where the value came
    from. The worker seals the files these name when it parks (``jobs/human``), before any view of
    the approval exists."""
    if request is None:
        return {}
    values = {f.name: f.value for f in request.fields}
    checked: dict[str, list[str]] = {}
    for line in request.summary.splitlines():
        name, sep, rest = line.strip().partition(" = ")
        value = values.get(name)
        if sep and value is not None and rest.startswith(f"{value}: "):
            checked.setdefault(name, []).append(rest[len(value) + 2 :])
    traced: dict[str, list[str]] = {}
    for source in sources:
        if source.source and source.source not in GENERIC_SOURCES:
            traced.setdefault(source.name, []).append(source.source)
    found: dict[str, list[str]] = {}
    for name in {**traced, **checked}:
        texts = checked.get(name, [])
        found[name] = (
            texts if any(not t.startswith(NOT_FOUND) for t in texts) else texts + traced.get(name, [])
        )
    notes = {f.name: f.note for f in request.fields if f.note}
    out: dict[str, SourceRef] = {}
    for name, texts in found.items():
        known = [t for t in texts if not t.startswith(NOT_FOUND)] or texts
        refs = [parse_source(t) for t in known]
        best = next((r for r in refs if r.file and r.line), None) or next(
            (r for r in refs if r.file), refs[0]
        )
        best.ocr = any(r.ocr for r in refs) or "ocr" in (notes.get(name) or "").lower()
        out[name] = best
    for name, note in notes.items():
        if name not in out:
            out[name] = SourceRef(text=note, ocr="ocr" in note.lower())
    return out
