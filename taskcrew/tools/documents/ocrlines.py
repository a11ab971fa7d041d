"""Tesseract's TSV as words with boxes and confidences, and lines of them turned into text with a
confidence per value.

Every word is kept, however unsure tesseract is of it, except specks (a low-confidence "word" with
no letter or digit in it). A *value* is what an approver checks: each word with a digit or an ``@``
in it, a date written over several words (``September 24, 2026``), an IBAN or VAT id (with its
checksum, :mod:`checksums`), an amount written over several words (``12 450,00``). A matching pair
of brackets around an amount is its minus sign and stays part of it (``(615.00)``). Its confidence is
that of its weakest word. A value below :data:`UNCERTAIN_BELOW` % — or one whose checksum no reading
satisfies, a labelled subtotal, tax and total that don't add up, two totals in one currency that
differ with nothing between them, or an amount or date with a look-alike letter among its digits (``1,234.S0``: :func:`unmisread`) — is marked in
the text right after it: ``IBAN: NL91 ABNA 0417 1643 00 [OCR 13% — uncertain]``.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import dataclass, field
from decimal import Decimal

from taskcrew.tools import ap
from taskcrew.tools.documents.checksums import Checked, find_identifiers, regrouped
from taskcrew.tools.documents.models import OcrText, OcrValue

MIN_WORD_CONFIDENCE = 30  # below this a word with no letter or digit is a speck of dust, dropped
UNCERTAIN_BELOW = 60  # a value whose weakest word is below this is marked uncertain
EDGE_PUNCTUATION = ",.;:()[]\"'"  # not part of a value: '62704,' is 62704 (but '(615.00)' is -615.00)
# what a pair of brackets makes negative: ap's one rule (an amount with cents or grouped thousands and at
# most a currency before it: '(615.00)', '(1,234)', '($615.00)', '(USD 615.00)'; not a footnote or
# reference number, '(2)', '(4471)', nor an amount set off in prose, '(412.50 USD)')
NEGATIVE_IN_BRACKETS = ap.NEGATIVE_IN_BRACKETS
TOTALS_MISMATCH = "totals don't add up: subtotal + tax ≠ total"
TOTALS_DIFFER = "two totals differ: check which one is due"
LOOKALIKE = "a letter among its digits: a misread digit?"
# letters OCR reads for the digits they resemble (checksums.py tries them in identifiers): among an
# amount's or a date's digits they are misread digits ('1,234.S0' is 1,234.50, '2O26-10-14' 2026-10-14)
_LOOKALIKES = str.maketrans("OoSIlBZG", "00511826")
# only a letter a digit or a decimal part follows ('1,234.S0', '2O26', 'O.75'): one at a token's end is
# a unit ('0.75l', '1,5l' litres)
# a look-alike letter where a digit or a decimal part follows it, or an O ending a number (no unit is
# written O: '1,234.5O'; '0.75l' is litres)
_LOOKALIKE_RUN = re.compile(r"(?<![A-Za-z])[OoSIlBZG]+(?=\d|[.,'-]\d)|(?<=\d)[Oo]+(?![A-Za-z])")
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
    rendered = [(line, *render_line(line)) for line in lines if line.words]
    for index, note in _totals_check([(shown, found) for _, shown, found in rendered]).items():
        line = rendered[index][0]
        rendered[index] = (line, *render_line(line, note))
    for line, shown, found in rendered:
        if last_block is not None and line.block != last_block:
            text_lines.append("")
        last_block = line.block
        text_lines.append(shown)
        values += found
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    return OcrText(text="\n".join(text_lines).strip(), confidence=mean, words=len(confidences), values=values)


def render_line(line: Line, doubt: tuple[int, str] | None = None) -> tuple[str, list[OcrValue]]:
    """The line as text with uncertain values marked, and its values. ``doubt`` (the index of one of
    its values, why) marks that value uncertain."""
    text, spans = _joined(line)
    found: list[tuple[int, int, Checked | None]] = list(find_identifiers(text))

    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e, _ in found)

    for start, end in ap.date_spans(text):
        if free(start, end):
            found.append((start, end, None))
    words = line.words
    i = 0
    while i < len(words):
        core = words[i].text.strip(EDGE_PUNCTUATION)
        if not core or not (any(ch.isdigit() for ch in core) or "@" in core):
            i += 1
            continue
        start = spans[i][0] + words[i].text.index(core)
        end = start + len(core)
        # '12 450,00', '1 234.50': words that are one space-grouped amount together are one value
        j = i
        while j + 1 < len(words) and core[:1].isdigit():
            nxt = words[j + 1].text.strip(EDGE_PUNCTUATION)
            if not nxt[:1].isdigit():
                break
            nxt_start = spans[j + 1][0] + words[j + 1].text.index(nxt)
            if text[end:nxt_start] != " " or not _space_grouped(text[start : nxt_start + len(nxt)]):
                break
            end, j = nxt_start + len(nxt), j + 1
        # '(615.00)', '($615.00)', '(1.234,50 €)': a pair of brackets that is its minus sign is part of it
        opening = text.rfind("(", 0, start)
        minus = NEGATIVE_IN_BRACKETS.match(text, opening) if opening >= 0 else None
        if minus and minus.end(1) == end and is_amount(minus.group(0)):
            start, end = opening, minus.end()
        if free(start, end):
            found.append((start, end, None))
        i = j + 1
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
        elif unmisread(shown) is not None:  # '1,234.S0': whatever its confidence, not a number as read
            value.uncertain, value.check = True, LOOKALIKE
        if doubt is not None and doubt[0] == len(values):
            value.uncertain, value.check = True, doubt[1]
        values.append(value)
        notable = value.uncertain or value.read_as is not None or (value.check and conf < UNCERTAIN_BELOW)
        mark = value.label() if notable else ""
        if value.text != shown or mark:
            edits.append((start, end, value.text + (f" {mark}" if mark else "")))
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    return text, values


_SUBTOTAL = re.compile(
    r"\b(sub-?total|zwischensumme|net\s+(?:amount|total)|(?:total|amount|summe|gesamt|montant)\s+(?:net|netto|HT)"
    r"|netto(betrag|summe)?|HT|hors\s+taxes?)\b",
    re.I,
)
_TAX = re.compile(r"\b(vat|tax|mwst|ust|gst|tva|iva)\b", re.I)
_TOTAL = re.compile(r"^(?!.*\bsub-?total).*\b(total|amount due|gesamtbetrag|brutto(?:betrag)?|ttc)\b", re.I)
# a 'total' of something other than money: 'Total hours 37.50', 'Total qty 12.00', 'Gesamtgewicht 3,50 kg'
_NOT_MONEY = re.compile(
    r"\b(hours?|hrs|qty|quantity|quantities|weight|items?|units?|pieces|pcs|stunden|menge|gewicht|st[üu]ck"
    r"|heures|quantit[ée]|poids|kg|lbs?)\b|gewicht",
    re.I,
)
# what makes two differing totals honest, on a line between them: a payment, deposit, credit or discount
# taken off ('Amount paid', 'Deposit received', 'Balance', 'Less credit note')
_DEDUCTION = re.compile(
    r"\b(paid|payments?|deposit|balance|credit|discount|received|less|prepaid|advance|bezahlt|anzahlung"
    r"|gutschrift|skonto|rabatt|acompte|avoir|remise|d[ée]j[àa]\s+pay[ée])\b",
    re.I,
)
_TOTAL_LABELS = (("sub", _SUBTOTAL), ("tax", _TAX), ("total", _TOTAL))  # the first that matches a line
# a total whose label names the tax it includes or leaves out is a total or a subtotal, not a tax line:
# 'Gesamtbetrag inkl. MwSt', 'Total incl. VAT', 'Total excl. tax', 'Summe netto zzgl. USt'
_TAX_QUALIFIED = re.compile(
    r"\b(?:(?P<incl>incl|inkl|including|inclusive|included|einschl|einschließlich)|"
    r"(?P<excl>excl|exkl|excluding|exclusive|zzgl|ohne|without|before|net\s+of|vor))\b\.?\s*"
    r"(?:of\s+|the\s+|all\s+|\d+(?:[.,]\d+)?\s*%\s*)?(?:vat|tax(?:es)?|mwst|ust|gst)\b",
    re.I,
)


def total_kind(text: str) -> str | None:
    """Which of subtotal ('sub'), tax line ('tax') or total ('total') a line's label names, if any
    (none for a total of hours, quantities, weight or items)."""
    if _NOT_MONEY.search(text):
        return None
    qualified = _TAX_QUALIFIED.search(text)
    if qualified is not None and not _SUBTOTAL.search(text) and _TOTAL.search(text[: qualified.start()]):
        return "total" if qualified.group("incl") else "sub"
    return next((k for k, label in _TOTAL_LABELS if label.search(text)), None)


def _totals_check(lines: list[tuple[str, list[OcrValue]]]) -> dict[int, tuple[int, str]]:
    """When a page labels a subtotal, tax and total whose amounts don't add up, or totals that differ
    from each other, the amounts involved (line index -> (value index, note)): one of them was misread,
    or the document is wrong."""
    found: dict[str, list[tuple[int, int, Decimal]]] = {"sub": [], "tax": [], "total": []}
    for index, (text, values) in enumerate(lines):
        kind = total_kind(text)
        if kind is None:
            continue
        for position in range(len(values) - 1, -1, -1):
            if "%" in values[position].text:
                continue
            with contextlib.suppress(ValueError, ArithmeticError):
                amount = ap.parse_amount(values[position].text).value
                found[kind].append((index, position, amount))
                break
    # 'Total 1,190.00' and 'Amount due 1,910.00' one after the other: one is misread. A total is an
    # amount with cents or grouped thousands ('Total items 3' is a count); two differ honestly in two
    # currencies, or with a line between them that takes something off or shows an amount ('Amount
    # paid 1,284.50', 'Deposit received 284.50')
    totals = [t for t in found["total"] if re.search(r"\d[.,']\d", lines[t[0]][1][t[1]].text)]
    differ: dict[int, tuple[int, str]] = {}
    for (first, at, amount), (second, at2, amount2) in itertools.pairwise(totals):
        currencies = [ap.currencies_in(lines[i][0]) for i in (first, second)]
        between = lines[first + 1 : second]
        if (
            amount == amount2
            or (all(currencies) and not currencies[0] & currencies[1])
            or any(
                _DEDUCTION.search(text) or any(is_amount(v.text) for v in values) for text, values in between
            )
        ):
            continue
        differ |= {first: (at, TOTALS_DIFFER), second: (at2, TOTALS_DIFFER)}
    if differ:
        return differ
    if len(found["sub"]) != 1 or len(found["total"]) != 1 or not found["tax"]:
        return {}
    involved = found["sub"] + found["tax"] + found["total"]
    if found["sub"][0][2] + sum(t[2] for t in found["tax"]) == found["total"][0][2]:
        return {}
    if len({index for index, _, _ in involved}) != len(involved):
        return {}  # two of them on one line: not a simple subtotal / tax / total list
    lines_of = {index for index, _, _ in involved}
    for index in range(min(lines_of), max(lines_of)):
        if index not in lines_of and any(is_amount(v.text) for v in lines[index][1]):
            return {}  # a discount, shipping or deposit in between: not ours to add up
    return {index: (position, TOTALS_MISMATCH) for index, position, _ in involved}


def is_amount(text: str) -> bool:
    """Whether ``text`` reads as one amount."""
    try:
        ap.parse_amount(text)
    except (ValueError, ArithmeticError):
        return False
    return True


def unmisread(token: str) -> str | None:
    """``token`` with the look-alike letters among its digits read as the digits they resemble, when
    that makes it an amount (with a decimal or grouping mark: '12l' may be litres; a letter only where a
    digit or a decimal part follows it: '0.75l' is litres too) or a date
    (``1,234.S0`` → ``1,234.50``, ``2O26-1O-14`` → ``2026-10-14``); None for any other token
    (an identifier, ``SO-78139O``, is left to its checksum, if it has one)."""
    if not any(ch.isdigit() for ch in token):
        return None
    folded = _LOOKALIKE_RUN.sub(lambda m: m.group(0).translate(_LOOKALIKES), token)
    core = folded.strip(EDGE_PUNCTUATION.replace("(", "").replace(")", ""))
    if folded == token or not core:
        return None
    if (is_amount(core) and re.search(r"\d[.,']\d", core)) or ap.date_spans(core) == [(0, len(core))]:
        return folded
    return None


def unmisread_text(text: str) -> str:
    """``text`` with each token :func:`unmisread` reads as an amount or a date so read."""
    return re.sub(r"\S+", lambda m: unmisread(m.group(0)) or m.group(0), text)


def _space_grouped(text: str) -> bool:
    try:
        return ap.parse_amount(text).format == "space_grouped"
    except (ValueError, ArithmeticError):
        return False


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
