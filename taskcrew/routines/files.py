"""The routine's file work: find the document by its rule over the company's files, read its values
with the issuer's template. Everything here is code; nothing asks a model."""

from __future__ import annotations

from dataclasses import dataclass

from taskcrew.routines.models import Routine, Template
from taskcrew.routines.template import ExtractionError, extract_all

MAX_FILES = 20


class FileStepFailed(Exception):
    """The file work cannot be done by the routine (the reason goes to the agent). ``new_issuer``:
    only because the routine has not learned this issuer's template yet (growth, not a defect)."""

    def __init__(self, reason: str, new_issuer: bool = False) -> None:
        super().__init__(reason)
        self.new_issuer = new_issuer


@dataclass
class Found:
    path: str
    values: dict[str, str]
    quote: str


def _fill(text: str, params: dict[str, str]) -> str:
    for name, value in params.items():
        text = text.replace(f"{{{name}}}", value)
    return text


def find_document(routine: Routine, params: dict[str, str], files: object) -> Found:
    """The document the rule picks and the values its template reads; raises FileStepFailed."""
    rule = routine.documents
    words = _fill(rule.search, params)
    template: Template | None = routine.template_for(words)
    if template is None:
        known = ", ".join(t.issuer for t in routine.templates)
        raise FileStepFailed(
            f"the routine has no extraction template for {words!r} yet (it has: {known})", new_issuer=True
        )
    hits = files.search(words).hits  # type: ignore[attr-defined]
    paths = list(dict.fromkeys(h.path for h in hits))[:MAX_FILES]
    read: list[Found] = []
    problems = []
    for path in paths:
        try:
            text = files.read(path).full_text()  # type: ignore[attr-defined]
        except Exception as exc:
            problems.append(f"{path}: cannot be read ({type(exc).__name__})")
            continue
        try:
            every = extract_all(template, text)
        except ExtractionError as exc:
            problems.append(f"{path}: {exc}")
            continue
        for values in every:
            number = values.get(template.fields[0].name, "")
            quote = next((line.strip() for line in text.splitlines() if number and number in line), number)
            read.append(Found(path=path, values=values, quote=quote))
    if rule.choose == "by_number":
        wanted = params.get(rule.number_param or "", "")
        read = [f for f in read if f.values.get(template.fields[0].name) == wanted]
        if not read:
            raise FileStepFailed(f"no document read by the template has the number {wanted!r}")
        return read[0]
    if not read:
        raise FileStepFailed(
            f"the template for {template.issuer} reads no invoice among {len(paths)} file(s) found for "
            f"{words!r}" + (f" ({problems[0]})" if problems else "")
        )
    dated = [f for f in read if f.values.get(_date_field(template), "")]
    if not dated:
        raise FileStepFailed("the template reads no printed date to order the invoices by")
    key = _date_field(template)
    newest = max(f.values[key] for f in dated)
    same_day = {f.values[template.fields[0].name]: f for f in dated if f.values[key] == newest}
    if len(same_day) > 1:  # which one to enter is a person's decision: never learned, never guessed
        listing = ", ".join(sorted(same_day))
        raise FileStepFailed(f"{len(same_day)} invoices share the newest printed date {newest} ({listing})")
    return next(f for f in dated if f.values[key] == newest)


def _date_field(template: Template) -> str:
    """The printed date that orders invoices: the first date field (the invoice date)."""
    return next((f.name for f in template.fields if f.kind == "date"), "")
