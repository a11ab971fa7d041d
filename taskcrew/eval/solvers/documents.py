"""Reading vendor documents the way a careful clerk does: by their printed labels.

These functions work on what ``read_file`` returned (e-mail headers, bodies and attached PDFs as
text). They find each document in it (a PDF attachment, a forwarded e-mail's attachment, the file
itself), tell invoices from credit memos, quotes, statements and price lists by their heading, and
read the printed number, date, terms and totals exactly as printed. Turning printed amounts and
dates into plain values is left to the calculator tools, as a model would.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from taskcrew.tools import ap

INVOICE_HEADINGS = ("INVOICE", "TAX INVOICE", "RECHNUNG")
OTHER_HEADINGS = (
    "CREDIT MEMO",
    "CREDIT NOTE",
    "QUOTATION",
    "QUOTE",
    "STATEMENT",
    "PRICE LIST",
    "LIEFERSCHEIN",
)

_NUMBER = re.compile(
    r"^(?:Invoice No\.?|Invoice #|Invoice Number|Invoice number|Rechnungsnummer|Invoice|"
    r"Credit Memo No\.?|Credit Note No\.?)\s+([A-Z0-9][\w/\-.]*\d[\w/\-.]*)$"
)
_DATE = re.compile(r"^(?:Invoice Date|Date of issue|Rechnungsdatum|Date)\s+(.+)$")
_TERMS = re.compile(r"^(?:Payment Terms|Payment terms|Terms|Zahlungsbedingungen:)\s+(.+)$")
_DUE = re.compile(r"^(?:Due date:|Due Date|Fällig am|zahlbar bis)\s*(.+)$")
_TOTAL = re.compile(
    r"^(TOTAL PAYABLE|TOTAL DUE|TOTAL CREDIT|Grand Total|Gesamtbetrag|Amount due|Amount Due|TOTAL)"
    r"(?:\s*\(([A-Z]{3})\))?\s+(.+)$",
    re.IGNORECASE,
)
_SUBTOTAL = re.compile(r"^(?:Subtotal|Nettobetrag|Taxable Value)\s+(.+)$")
_REFERENCE = re.compile(r"^Applies to Invoice\s+(\S+)$")


@dataclass
class PrintedDocument:
    """One document inside a file, with its values exactly as printed."""

    path: str
    heading: str
    issuer: str
    lines: list[str]
    number: str = ""
    number_line: str = ""
    date: str = ""
    terms: str = ""
    due: str = ""
    total: str = ""
    total_line: str = ""
    total_currency: str = ""
    subtotal: str = ""
    references: list[str] = field(default_factory=list)
    forwarded: bool = False

    @property
    def is_invoice(self) -> bool:
        return self.heading.upper() in INVOICE_HEADINGS and bool(self.number)

    @property
    def amount_text(self) -> str:
        """The total as printed, with its currency when the label carries it ('TOTAL (USD)')."""
        return f"{self.total} {self.total_currency}".strip()

    @property
    def terms_text(self) -> str:
        """What compute_due_date needs: an explicit printed due date wins over the terms."""
        if self.due:
            return f"Due date: {self.due}"
        return self.terms

    def issued(self) -> dt.date | None:
        """The invoice date, for ordering candidates (None when it cannot be read)."""
        try:
            return ap.parse_date(self.date).value
        except ValueError:
            return None


def _sections(text: str) -> list[tuple[bool, list[str]]]:
    """The parts of a read_file result (the file, each body, each attachment), each flagged when it
    sits inside a forwarded e-mail (a copy of a message that exists in its own right)."""
    sections: list[tuple[bool, list[str]]] = [(False, [])]
    depth = 0
    for line in text.splitlines():
        if line.startswith("--- ") and line.rstrip().endswith("---"):
            if "(forwarded e-mail)" in line:
                depth += 1
            elif line.startswith("--- end of forwarded e-mail"):
                depth = max(depth - 1, 0)
            sections.append((depth > 0, []))
        else:
            sections[-1][1].append(line)
    return [(fwd, lines) for fwd, lines in sections if any(line.strip() for line in lines)]


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[a-z0-9])\. ", text.strip(), maxsplit=1)[0].rstrip(".")


_OCR_START, _OCR_END = "[read by OCR", "[end of OCR text]"
# where a label may start inside an OCR'd line ("ar@soylentfoods.example Invoice No. SF-0098")
_LABEL_START = re.compile(
    r"(?<=\s)(?=(?:Invoice|Rechnungs|Date|Terms|Payment|Due|Fällig|TOTAL|Total|Grand|Gesamt|Amount|Subtotal|Netto))"
)


def _lines(lines: list[str]) -> list[tuple[str, bool]]:
    """The document's lines, stripped, each flagged when OCR read it; the reader's header dropped."""
    out: list[tuple[str, bool]] = []
    in_ocr = header = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("File: "):
            header = True
            continue
        if header and line.startswith("Note: "):
            continue
        header = False
        if line.startswith(_OCR_START):
            in_ocr = True
        elif line.startswith(_OCR_END):
            in_ocr = False
        elif line:
            out.append((line, in_ocr))
    return out


def _heading(line: str, ocr: bool) -> tuple[str, str] | None:
    """(heading, issuer before it) when the line is a document title; OCR often joins the two."""
    if line.upper() in INVOICE_HEADINGS + OTHER_HEADINGS:
        return line, ""
    for title in sorted(INVOICE_HEADINGS + OTHER_HEADINGS, key=len, reverse=True):
        if ocr and len(line) < 80 and line.endswith(" " + title):
            return title, line[: -len(title)].strip()
    return None


def _read(path: str, lines: list[str], forwarded: bool) -> PrintedDocument | None:
    marked = _lines(lines)
    found = next(((i, h) for i, (line, ocr) in enumerate(marked) if (h := _heading(line, ocr))), None)
    if found is None:
        return None
    index, (heading, issuer) = found
    stripped = [line for line, _ in marked]
    doc = PrintedDocument(
        path=path, heading=heading, issuer=issuer or stripped[0], lines=stripped, forwarded=forwarded
    )
    for line, ocr in marked[index + 1 :]:
        pieces = [line] + ([line[m.start() :] for m in _LABEL_START.finditer(line)] if ocr else [])
        for piece in pieces:
            _take(doc, piece, line)
    return doc


def _take(doc: PrintedDocument, piece: str, line: str) -> None:
    if not doc.number and (m := _NUMBER.match(piece)):
        doc.number, doc.number_line = m.group(1), line
    elif not doc.date and (m := _DATE.match(piece)):
        doc.date = m.group(1).strip()
    elif not doc.terms and (m := _TERMS.match(piece)):
        doc.terms = _first_sentence(m.group(1))
    elif not doc.due and (m := _DUE.match(piece)):
        doc.due = m.group(1).strip()
    elif not doc.subtotal and (m := _SUBTOTAL.match(piece)):
        doc.subtotal = m.group(1).strip()
    elif m := _REFERENCE.match(piece):
        doc.references.append(m.group(1))
    if m := _TOTAL.match(piece):
        doc.total, doc.total_currency, doc.total_line = m.group(3).strip(), m.group(2) or "", line


def documents_in(path: str, text: str) -> list[PrintedDocument]:
    """Every titled document (invoice, credit memo, quote, ...) in one read_file result."""
    found = [_read(path, lines, forwarded) for forwarded, lines in _sections(text)]
    return [d for d in found if d is not None]


def invoices_in(path: str, text: str) -> list[PrintedDocument]:
    return [d for d in documents_in(path, text) if d.is_invoice]


def distinct(invoices: list[PrintedDocument]) -> list[PrintedDocument]:
    """One entry per invoice number (a forwarded copy is the same invoice; the original is kept)."""
    seen: dict[str, PrintedDocument] = {}
    for invoice in sorted(invoices, key=lambda d: d.forwarded):
        seen.setdefault(re.sub(r"[^a-z0-9]", "", invoice.number.lower()), invoice)
    return list(seen.values())


def latest(invoices: list[PrintedDocument]) -> list[PrintedDocument]:
    """The invoices with the newest invoice date (more than one: the request is ambiguous)."""
    dated = [(d.issued(), d) for d in invoices]
    dates: list[dt.date] = [when for when, _ in dated if when is not None]
    if not dates:
        return invoices
    newest = max(dates)
    return [d for when, d in dated if when == newest]
