"""Where each value of an approval came from: the file and line, or the step that reported it.

A person asked "may I send this?" should not have to trust the model's memory: each field value is
traced back to the run's own records (the steps' cited sources, read again by code, and their
reported data). A value found nowhere is said to be so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskcrew.crew.models import StepReport

SKIP = ("{{secret:", "(left out of the approval")  # a field a rule leaves out of the key


def _norm(text: str) -> str:
    return "".join(text.split()).replace(",", "").casefold()


def _line_of(value: str, text: str) -> int | None:
    want = _norm(value)
    for number, line in enumerate(text.splitlines(), 1):
        if want and want in _norm(line):
            return number
    return None


def value_origin(
    value: str, reports: list[tuple[int, str, StepReport]], read: Callable[[str], str | None]
) -> str:
    """``reports``: (step number, role, report), oldest first."""
    want = _norm(value)
    for number, _role, report in reversed(reports):
        for citation in report.sources:
            if want and want in _norm(citation.quote):
                text = read(citation.source)
                line = _line_of(value, text) if text else None
                return (
                    f"{citation.source}" + (f", line {line}" if line else "") + f" (cited in step {number})"
                )
    for number, role, report in reversed(reports):
        for key, reported in report.data.items():
            if want and want == _norm(reported):
                return f"step {number} ({role}) reported it as {key!r}"
    return "not found in any source or step result of this run"


def origins(
    fields: list[Any], reports: list[tuple[int, str, StepReport]], read: Callable[[str], str | None]
) -> list[str]:
    lines = []
    for field in fields:
        value = str(getattr(field, "value", "")).strip()
        if not value or value.startswith(SKIP):
            continue
        lines.append(f"  {field.name} = {value}: {value_origin(value, reports, read)}")
    return lines


class SourcedHuman:
    """The run's person, shown for each approval where its values came from (``explain``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.explain: Callable[[list[Any]], list[str]] | None = None

    def approve(self, request: Any) -> Any:
        if self.explain is not None and request.fields:
            lines = self.explain(request.fields)
            if lines:
                summary = (
                    request.summary + "\n" if request.summary else ""
                ) + "where the values come from:\n"
                request = request.model_copy(update={"summary": summary + "\n".join(lines)})
        return self.inner.approve(request)

    def ask(self, question: str) -> str:
        return str(self.inner.ask(question))

    def __getattr__(self, name: str) -> Any:  # the wrapped person's own attributes (e.g. a test's records)
        if name == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
