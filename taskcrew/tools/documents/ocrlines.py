"""Tesseract's TSV as words with boxes and confidences, and lines of them turned into text with a
confidence per value.

Every word is kept, however unsure tesseract is of it, except specks (a low-confidence "word" with
no letter or digit in it). A *value* is what an approver checks: each word with a digit or an ``@``
in it, a date written over several words (``September 24, 2026``), an IBAN or VAT id (with its
checksum, :mod:`checksums`). Its confidence is that of its weakest word. A value below
:data:`UNCERTAIN_BELOW` % — or one whose checksum no reading satisfies — is marked in the text right
after it: ``IBAN: NL91 ABNA 0417 1643 00 [OCR 13% — uncertain]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from taskcrew.tools.documents.checksums import Checked, find_identifiers, regrouped
from taskcrew.tools.documents.models import OcrText, OcrValue

MIN_WORD_CONFIDENCE = 30  # below this a word with no letter or digit is a speck of dust, dropped
UNCERTAIN_BELOW = 60  # a value whose weakest word is below this is marked uncertain
EDGE_PUNCTUATION = ",.;:()[]\"'"  # not part of a value: '62704,' is the value 62704
COLUMN_GAP = 2.0  # a gap between words wider than this many line heights separates columns


@dataclass
class Word:
    text: str
    conf: float
    left: int
    top: int
    width: int
    height: int
    column: int = -1  # its column in a table-like run of lines (ocrtables), -1 outside one

    @property
    def right(self) -> int:
        return self.left + self.width


@dataclass
class Line:
    block: int
    words: list[Word] = field(default_factory=list)

    @property
    def box(self) -> tuple[int, int, int, int]:
        return (
            min(w.left for w in self.words),
            min(w.top for w in self.words),
            max(w.right for w in self.words),
            max(w.top + w.height for w in self.words),
        )

    @property
    def weakest(self) -> float:
        return min((w.conf for w in self.words), default=0.0)

    @property
    def mean(self) -> float:
        return sum(w.conf for w in self.words) / len(self.words) if self.words else 0.0


def parse_tsv(tsv: str) -> list[Line]:
    """The lines of one tesseract TSV, in its reading order."""
    lines: dict[tuple[int, int, int, int], Line] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = cols[11].strip()
        try:
            conf = float(cols[10])
            left, top, width, height = (int(c) for c in cols[6:10])
        except ValueError:
            continue
        if not text or (conf < MIN_WORD_CONFIDENCE and not any(ch.isalnum() for ch in text)):
            continue
        key = (int(cols[1]), int(cols[2]), int(cols[3]), int(cols[4]))
        lines.setdefault(key, Line(block=key[1])).words.append(
            Word(text, max(conf, 0.0), left, top, width, height)
        )
    return [lines[key] for key in sorted(lines)]


def build(lines: list[Line]) -> OcrText:
    """Text (blocks apart by a blank line), the mean word confidence, and every value with its own."""
    text_lines: list[str] = []
    values: list[OcrValue] = []
    last_block: int | None = None
    confidences = [w.conf for line in lines for w in line.words]
    for line in lines:
        if not line.words:
            continue
        if last_block is not None and line.block != last_block:
            text_lines.append("")
        last_block = line.block
        shown, found = render_line(line)
        text_lines.append(shown)
        values += found
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    return OcrText(text="\n".join(text_lines).strip(), confidence=mean, words=len(confidences), values=values)


def render_line(line: Line) -> tuple[str, list[OcrValue]]:
    """The line as text with uncertain values marked, and its values."""
    text, spans = _joined(line)
    found: list[tuple[int, int, Checked | None]] = list(find_identifiers(text))

    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e, _ in found)

    from taskcrew.tools import ap

    for start, end in ap.date_spans(text):
        if free(start, end):
            found.append((start, end, None))
    for (start, _end), word in zip(spans, line.words, strict=True):
        core = word.text.strip(EDGE_PUNCTUATION)
        if core and (any(ch.isdigit() for ch in core) or "@" in core):
            start += word.text.index(core)
            if free(start, start + len(core)):
                found.append((start, start + len(core), None))
    found.sort(key=lambda f: f[0])
    values: list[OcrValue] = []
    edits: list[tuple[int, int, str]] = []
    plain = " ".join(text.split())
    for start, end, checked in found:
        conf = min(w.conf for (s, e), w in zip(spans, line.words, strict=True) if s < end and start < e)
        shown = text[start:end]
        value = OcrValue(text=shown, confidence=round(conf, 1), uncertain=conf < UNCERTAIN_BELOW, line=plain)
        if checked is not None:
            value.check, value.check_status = checked.note(), checked.status
            if checked.status == "corrected":
                value.read_as = shown
                value.text = regrouped(checked.value, shown)
            value.uncertain = checked.status in ("failed", "ambiguous")  # a passing checksum outweighs
        values.append(value)
        notable = value.uncertain or value.read_as is not None or (value.check and conf < UNCERTAIN_BELOW)
        mark = value.label() if notable else ""
        if value.text != shown or mark:
            edits.append((start, end, value.text + (f" {mark}" if mark else "")))
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    return text, values


def _joined(line: Line) -> tuple[str, list[tuple[int, int]]]:
    """The words joined by a space (three across a column gap or a table's gutter), with each word's
    span in the text."""
    height = max(w.height for w in line.words)
    text = ""
    spans: list[tuple[int, int]] = []
    previous: Word | None = None
    for word in line.words:
        if previous is not None:
            wide = word.left - previous.right > COLUMN_GAP * height
            text += "   " if wide or word.column != previous.column else " "
        spans.append((len(text), len(text) + len(word.text)))
        text += word.text
        previous = word
    return text, spans
