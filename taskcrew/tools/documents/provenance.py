"""Which values the agent read by OCR, so an approval can say "read by OCR — check it".

``SandboxFiles`` records every OCR'd passage it hands out; :meth:`OcrProvenance.flag` is a field
flagger for the policy gate: a field whose value (an amount, a date, a number — anything with
digits) appears in OCR'd text gets a note for the person who approves. Values are compared
normalised: ``4,812.75`` matches ``4812.75`` and ``September 24, 2026`` matches ``2026-09-24``.

Each value OCR read carries its own confidence (:class:`~models.OcrValue`); the note says it —
``read by OCR, 13% — uncertain — check it against the document (scans/x.png)`` — and
:meth:`OcrProvenance.reading` gives it as data (:class:`~models.OcrReading`) for an approval page.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Protocol

from taskcrew.tools.documents.models import OCR_MARK, FileContent, OcrReading, PageText

OCR_NOTE = "read by OCR — check it against the document"
_BLOCK = re.compile(re.escape(OCR_MARK) + r"[^\]]*\]\n(.*?)\n\[end of OCR text\]", re.S)
_TOKEN = re.compile(r"[^\s]+")
MIN_DIGITS = 3  # '30' or '1' is too common to say where it came from


class HasValue(Protocol):
    @property
    def value(self) -> str: ...


class OcrProvenance:
    def __init__(self) -> None:
        self._forms: dict[str, str] = {}  # normalised value -> the file it was read from
        self._readings: dict[str, OcrReading] = {}  # normalised value -> the least sure reading of it
        self._lock = threading.Lock()

    def record(self, content: FileContent) -> None:
        pages: list[PageText] = list(content.pages)
        if content.email is not None:
            stack = [content.email]
            while stack:
                email = stack.pop()
                for att in email.attachments:
                    pages += att.pages
                    if att.email is not None:
                        stack.append(att.email)
        with self._lock:
            for page in pages:
                if not page.ocr:
                    continue
                for block in _BLOCK.findall(page.text):
                    for form in _forms_in(block):
                        self._forms.setdefault(form, content.path)
                for value in page.ocr_values:
                    reading = OcrReading(path=content.path, **value.model_dump())
                    for form in _forms_in(value.text) | _value_forms(value.text):
                        known = self._readings.get(form)
                        if known is None or reading.confidence < known.confidence:
                            self._readings[form] = reading

    def flag(self, field: HasValue) -> str | None:
        """The approval's note for a field whose value was read by OCR (with that value's confidence)."""
        reading = self.reading(field.value)
        if reading is not None:
            return reading.note()
        value = field.value.strip()
        if sum(ch.isdigit() for ch in value) < MIN_DIGITS:
            return None
        with self._lock:
            for form in _value_forms(value):
                if form in self._forms:
                    return f"{OCR_NOTE} ({self._forms[form]})"
        return None

    def reading(self, value: str) -> OcrReading | None:
        """How OCR read this value (file, confidence, uncertain, checksum), or None if it did not.

        Identifiers with a checksum count whatever their digits; other values need three digits
        ('30' or '1' is too common to say where it came from).
        """
        value = value.strip()
        forms = _value_forms(value) | {_plain(value.replace(" ", ""))}
        with self._lock:
            found = [self._readings[f] for f in forms if f in self._readings]
        found = [r for r in found if r.check_status or sum(ch.isdigit() for ch in value) >= MIN_DIGITS]
        return min(found, key=lambda r: r.confidence) if found else None

    def __len__(self) -> int:
        return len(self._forms)


def shows_value(text: str, value: str) -> bool:
    """Whether ``text`` shows ``value``: its words, or the same amount or date in another format
    (``1,284.50 USD`` shows ``1284.50``, ``September 12, 2026`` shows ``2026-09-12``)."""
    plain = _plain(value)
    if plain and plain in _plain(text):
        return True
    return bool(_value_forms(value) & _forms_in(text))


def _value_forms(value: str) -> set[str]:
    from taskcrew.tools import ap

    forms = {_plain(value)}
    with contextlib.suppress(ValueError, ArithmeticError):
        forms.add("amount:" + str(ap.parse_amount(value).value.normalize()))
    with contextlib.suppress(ValueError):
        forms.add("date:" + ap.parse_date(value).value.isoformat())
    return {f for f in forms if f}


def _forms_in(text: str) -> set[str]:
    """Every token, amount and date of an OCR'd passage, normalised."""
    from taskcrew.tools import ap

    forms: set[str] = set()
    for line in text.splitlines():
        tokens = _TOKEN.findall(line)
        for i, token in enumerate(tokens):
            if sum(ch.isdigit() for ch in token) < 1:
                continue
            forms.add(_plain(token))
            for width in (1, 2):  # '615.00', '$ 615.00', '615.00 USD'
                for piece in (
                    " ".join(tokens[i : i + width]),
                    " ".join(tokens[max(0, i - width + 1) : i + 1]),
                ):
                    with contextlib.suppress(ValueError, ArithmeticError):
                        forms.add("amount:" + str(ap.parse_amount(piece).value.normalize()))
        with contextlib.suppress(ValueError):  # an ambiguous date (10/05/2026) matches nothing
            forms.update("date:" + match.value.isoformat() for match in ap.find_dates(line))
    forms.discard("")
    return forms


def _plain(text: str) -> str:
    return re.sub(r"[^\w\-/.]", "", text.lower()).strip(".")
