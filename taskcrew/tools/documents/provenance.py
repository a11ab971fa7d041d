"""Which values the agent read by OCR, so an approval can say "read by OCR — check it".

``SandboxFiles`` records every OCR'd passage it hands out; :meth:`OcrProvenance.flag` is a field
flagger for the policy gate: a field whose value (an amount, a date, a number — anything with
digits) appears in OCR'd text gets a note for the person who approves. Values are compared
normalised: ``4,812.75`` matches ``4812.75`` and ``September 24, 2026`` matches ``2026-09-24``.
Amounts compare signed: ``(615.00)`` matches ``-615.00``, never ``615.00``. A numeric date whose
day/month order is ambiguous (``03/04/2026``) matches both readings, noted uncertain
(``day/month order ambiguous``) — unless the file's other values settle it, as ``reading_doubt``
reads every document: then the reading it writes is plain and the other is noted a misreading. An
amount or date OCR read with a look-alike letter among its digits (``1,234.S0``) is recorded also as
the digits it resembles (``ocrlines.unmisread``): an agent that enters 1234.50 still gets its
(uncertain) reading's note.

Each value OCR read carries its own confidence (:class:`~models.OcrValue`); the note says it —
``read by OCR, 13% — uncertain — check it against the document (scans/x.png)`` — and
:meth:`OcrProvenance.reading` gives it as data (:class:`~models.OcrReading`) for an approval page.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

from taskcrew.tools.ap import CREDIT_MARK, NEGATIVE_IN_BRACKETS, TAX_WORD
from taskcrew.tools.documents.models import OCR_MARK, FileContent, OcrReading, OcrValue, PageText
from taskcrew.tools.documents.ocrlines import total_kind, unmisread_text

if TYPE_CHECKING:
    from taskcrew.tools.ap import ParsedAmount

OCR_NOTE = "read by OCR — check it against the document"
_BLOCK = re.compile(re.escape(OCR_MARK) + r"[^\]]*\]\n(.*?)\n\[end of OCR text\]", re.S)
_TOKEN = re.compile(r"[^\s]+")
AMBIGUOUS_DATE = "day/month order ambiguous"
AMBIGUOUS_AMOUNT = "',' or '.' may group thousands or mark decimals"
_NUMERIC_DATE = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")  # as ap's: 03/04/2026, 03-04-2026
# '2.500', '1,500', '(1,500)', '€2.500': one separator before three digits, nothing after them
_AMBIGUOUS_AMOUNT = re.compile(r"(?<![\d.,'])([1-9]\d{0,2})([.,])(\d{3})(?![\d.,'])")
MIN_DIGITS = 3  # '30' or '1' is too common to say where it came from
SQUASHED = "squashed:"  # the mark of a form of letters and digits alone (``_squashed``)
SQUASHED_TOKENS = 6  # an identifier written in up to six groups (an IBAN's) is one value run together


class HasValue(Protocol):
    @property
    def value(self) -> str: ...


class OcrProvenance:
    """What a run learned from OCR: each OCR'd passage's values, by the file they were read from.

    ``saved``/``restore`` carry the record over a run's checkpoint (with the file digests,
    ``SandboxFiles.reads``), so a resumed leg flags what an earlier leg read by OCR."""

    def __init__(self) -> None:
        self._forms: dict[str, str] = {}  # normalised value -> the file it was read from
        self._readings: dict[str, OcrReading] = {}  # normalised value -> the least sure reading of it
        self._values: dict[str, set[str]] = {}  # file -> each OcrValue read in it, as JSON (``saved``)
        self._seen: set[tuple[str, str]] = set()  # (file, sha256) recorded: a text is recorded once
        self._lock = threading.Lock()

    def record(self, content: FileContent) -> None:
        """Record the OCR'd passages of ``content`` (its pages and its e-mail's attachments' pages)."""
        if (content.path, content.sha256) in self._seen:
            return  # paging or searching it again: nothing new
        pages: list[PageText] = list(content.pages)
        if content.email is not None:
            stack = [content.email]
            while stack:
                email = stack.pop()
                for att in email.attachments:
                    pages += att.pages
                    if att.email is not None:
                        stack.append(att.email)
        ocr = [page for page in pages if page.ocr]
        forms: set[str] = set()
        for block in (block for page in ocr for block in _BLOCK.findall(page.text)):
            forms |= _ocr_forms(block)
        self._add(content.path, forms, [value for page in ocr for value in page.ocr_values])
        if content.sha256:
            with self._lock:
                self._seen.add((content.path, content.sha256))

    def saved(self) -> dict[str, dict[str, list[str]]]:
        """The record, as a checkpoint keeps it: ``ocr_forms`` (file -> the normalised values of its
        OCR'd text) and ``ocr_values`` (file -> each value OCR read, with its confidence, as JSON)."""
        with self._lock:
            forms: dict[str, set[str]] = {}
            for form, path in self._forms.items():
                forms.setdefault(path, set()).add(form)
            return {
                "ocr_forms": {path: sorted(found) for path, found in sorted(forms.items())},
                "ocr_values": {path: sorted(values) for path, values in sorted(self._values.items())},
            }

    def restore(self, saved: dict[str, dict[str, list[str]]]) -> None:
        """Add a record ``saved`` kept (an earlier leg's) to this one; an entry that does not read
        back is left out."""
        forms, values = saved.get("ocr_forms") or {}, saved.get("ocr_values") or {}
        for path in sorted(set(forms) | set(values)):
            read: list[OcrValue] = []
            for raw in values.get(path) or []:
                with contextlib.suppress(ValueError):  # pydantic's ValidationError is one
                    read.append(OcrValue.model_validate_json(raw))
            self._add(path, {str(form) for form in forms.get(path) or []}, read)

    def _add(self, path: str, forms: set[str], values: list[OcrValue]) -> None:
        # what settles an ambiguous reading: the lines the values stand on, their labels with them
        document = "\n".join(dict.fromkeys(value.line or value.text for value in values))
        with self._lock:
            for form in forms:
                self._forms.setdefault(form, path)
            for value in values:
                self._values.setdefault(path, set()).add(value.model_dump_json())
                reading = OcrReading(path=path, **value.model_dump())
                for form in _ocr_forms(value.text) | _value_forms(value.text):
                    known = self._readings.get(form)
                    if known is None or reading.confidence < known.confidence:
                        self._readings[form] = reading
                # 03/04/2026, 2.500: either reading may be the one the agent picks. As the origin reads
                # them (``reading_doubt``'s rule): where the document's other values settle which it
                # is, that reading is plain and the other one is a misreading; else both are uncertain
                for form, misread in _settled(value.text, document).items():
                    known = self._readings.get(form)
                    if not misread:
                        if known is None or reading.confidence < known.confidence:
                            self._readings[form] = reading
                        continue
                    wrong = reading.model_copy(
                        update={
                            "uncertain": True,
                            "check": misread,
                            "check_status": "ambiguous",
                        }
                    )
                    if known is None or known.check_status == "ambiguous":
                        self._readings[form] = wrong
                guess = reading.model_copy(
                    update={"uncertain": True, "check": AMBIGUOUS_DATE, "check_status": "ambiguous"}
                )
                for form in _ambiguous_dates(value.text) if _conventions(document)[0] is None else ():
                    known = self._readings.get(form)
                    if known is None or (
                        known.check == AMBIGUOUS_DATE and guess.confidence < known.confidence
                    ):
                        self._readings[form] = guess
                amounts = _ambiguous_amounts(value.text)
                if amounts and _conventions(document)[1] is None:
                    guess = reading.model_copy(
                        update={"uncertain": True, "check": AMBIGUOUS_AMOUNT, "check_status": "ambiguous"}
                    )
                    for form in amounts | _forms_in(value.text) | _value_forms(value.text):
                        known = self._readings.get(form)
                        if (
                            known is None
                            or not known.uncertain
                            or (known.check_status == "ambiguous" and guess.confidence < known.confidence)
                        ):
                            self._readings[form] = guess

    def flag(self, field: HasValue) -> str | None:
        """The approval's note for a field whose value was read by OCR (with that value's confidence):
        the whole value, or one written inside it ("Invoice RE-2026-0815, paid in full"), also with
        its punctuation or spacing changed (``RE20260815``, ``DE8937040044``: ``_squashed``)."""
        reading = self.reading(field.value)
        if reading is not None:
            return reading.note()
        value = field.value.strip()
        if sum(ch.isdigit() for ch in value) < MIN_DIGITS:
            return None
        within = {f for f in _forms_in(value) if _telling(f)}
        with self._lock:
            found = [self._readings[f] for f in within if f in self._readings]
            if found:
                return min(found, key=lambda r: r.confidence).note()
            for form in sorted(_value_forms(value) | within):
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


def _settled(written: str, document: str) -> dict[str, str]:
    """The readings of ``written`` — a numeric date whose day/month order is ambiguous, an amount
    whose separator may group thousands or mark decimals — that ``document`` settles (``_conventions``),
    as forms, each with its doubt: "" for the one the document writes, the misreading for the other;
    none when it is no such value or the document does not settle it."""
    order, mark = _conventions(document)
    days = {date.fromisoformat(form.split(":", 1)[1]): form for form in _ambiguous_dates(written)}
    out = {
        form: _date_doubt(written.strip(), set(days), {day}, document) for day, form in days.items() if order
    }
    for form in _ambiguous_amounts(written) if mark else ():
        out[form] = _amount_doubt(written, Decimal(form.split(":", 1)[1]), document)
    return out


_COLUMN_GAP = re.compile(r"(?<=\d)(?:[ \u00a0\u202f\u2009]{2,}|[ \u00a0\u202f\u2009]*\t\s*)(?=\d)")


def _column_gaps(text: str) -> str:
    """``text`` with each gap of two or more spaces, or a tab, between two digits written as a
    column break: a thousands group is set off by one space (``1 234.56``), while ``1   234.56``
    is a quantity and a price in two columns, and shows neither 1234.56 nor 1 234.56."""
    return _COLUMN_GAP.sub(" _ ", text)


def shows_value(text: str, value: str, document: str | None = None) -> bool:
    """Whether ``text`` shows ``value``: its words, or the same amount or date in another format
    (``1,284.50 USD`` shows ``1284.50``, ``September 12, 2026`` shows ``2026-09-12``).

    One reading of values with the verifier's (``crew.evidence.plain``: every dash and minus sign is
    a hyphen): an amount is shown by an amount of the text as ``ap.parse_amount`` reads it
    (``amounts_in``) — signed (``TOTAL −1,234.50``, ``1,234.50-`` and ``- 1,234.50`` show -1234.50,
    never 1234.50; a dash that separates words, ``Amount Due - $1,234.50``, is no minus) and in the
    currency the text states for it, if the value names one (``Total EUR 1.234,50`` does not show
    ``1234.50 USD``); a line naming no currency takes those of ``document``, the file it is a line
    of (``stated_currencies``); ``12.345`` shows 12345 and 12.345. A date is shown by a date of the
    text, a numeric one whose day/month order is ambiguous (``12/10/2026``) by either reading. Digits
    two columns apart are not one amount (``_column_gaps``); digits one space apart may be. A value
    shown only by one reading of several is shown in doubt (``reading_doubt``). Struck text — a
    reader's "[struck through: …]" (``visibility.STRUCK_RUN``) — shows no value."""
    return _shows(text, value, document)[0]


def reading_doubt(text: str, value: str, document: str | None = None) -> str | None:
    """How ``text`` shows ``value`` only in doubt — the one rule for every kind of document (a PDF's
    text layer, an e-mail, OCR'd text): None when a line of it shows the value plainly, or none
    shows it; else the readings in doubt, as words that follow "line N may read":

    - numbers one space apart that may be one amount or two (``"30 950.00 or 950.00"``: ``_doubt``);
    - a numeric date whose day/month order is ambiguous (``12/11/2026``) or an amount whose one
      separator may group thousands or mark decimals (``2.500``), read one way. ``document`` (the
      file the line is of; else ``text``) settles it where it can (``_conventions``): a date of it
      with a day over 12 (``14/10/2026``) gives its order, an amount with cents (``1.234,50``) its
      decimal mark. Read as the document writes, the value is shown plainly; read against it, the
      doubt says it misreads the line (``"2026-11-12, not 2026-12-11: … misreads it"``); unsettled,
      it names both readings (``"2026-11-12 or 2026-12-11 (12/11/2026: day/month order
      ambiguous)"``)."""
    return _shows(text, value, document)[1]


def _first_doubt(doubts: list[str]) -> str | None:
    """The doubt of the readings that show a value: none if one shows it plainly ("")."""
    return None if not doubts or "" in doubts else doubts[0]


def _shows(text: str, value: str, document: str | None) -> tuple[bool, str | None]:
    """``shows_value`` and ``reading_doubt`` in one reading. Struck text (``STRUCK_RUN``: a reader's
    "[struck through: …]") shows nothing: a figure a person sees cancelled is not the file's value."""
    from taskcrew.crew.evidence import plain  # the verifier's normaliser: one rule for both
    from taskcrew.tools import ap
    from taskcrew.tools.documents.visibility import STRUCK_RUN

    whole = text if document is None else document  # what settles an ambiguous reading
    text, value = plain(STRUCK_RUN.sub(" ", text)), plain(value).strip()
    amount = _amount(value)
    if amount is not None:
        if not _may_show(text, value, set()):
            return False, None
        stated = _stated(document) if document is not None else frozenset()
        doubts = [
            _both(spaced, _amount_doubt(written, amount.value, whole))
            for line in _column_gaps(text).splitlines()
            for spaced, written in _amount_doubts(line, amount, stated)
        ]
        return bool(doubts), _first_doubt(doubts)
    if ap.date_spans(value) == [(0, len(value))]:  # one date
        days = _dates_in(value)
        doubts = [
            _date_doubt(written, readings, days, whole)
            for line in text.splitlines()
            for written, readings in _date_readings(line)
            if days & readings
        ]
        return bool(doubts), _first_doubt(doubts)
    if (bare := _plain(value)) and _contains(_plain(text), bare):
        return True, None
    # not by a squashed form (``_squashed``): a run of groups squashed from a line may be the head of
    # a longer value ("DE89 3704 0044 0532" of a whole IBAN); tracing a value to its line is exact
    forms = {f for f in _value_forms(value) if not f.startswith(SQUASHED)}
    return _may_show(text, value, forms) and bool(forms & _forms_in(text)), None


# a line that states the currency of the amounts below it: 'Currency: SEK', 'Währung EUR'
_CURRENCY_LABEL = re.compile(
    r"\b(?:currency|curr|w[äa]hrung|devise|monnaie|valuta|moneda|moeda|waluta|valuutta|m[ěe]na)\b", re.I
)


@functools.lru_cache(maxsize=8)
def _stated(document: str) -> frozenset[str]:
    """``stated_currencies`` of ``document`` as the verifier normalises it, once per file (``_line_of``
    reads each of its lines with it)."""
    from taskcrew.crew.evidence import plain

    return frozenset(stated_currencies(plain(document)))


def stated_currencies(document: str) -> set[str]:
    """The currencies ``document`` states for an amount written with none (``ap.currencies_in``):
    those its headings name — a line naming a currency and no number (``Description Amount (SEK)``),
    or a currency line (``Currency: SEK``) — else every currency it names anywhere; none when it
    names no currency at all."""
    from taskcrew.tools import ap

    heads: set[str] = set()
    for line in document.splitlines():
        if not any(ch.isdigit() for ch in line) or _CURRENCY_LABEL.search(line):
            heads |= ap.currencies_in(line)
    return heads or ap.currencies_in(document)


def _amount(value: str) -> ParsedAmount | None:
    from taskcrew.tools import ap

    try:
        return ap.parse_amount(value)
    except (ValueError, ArithmeticError):
        return None


# 'Total:1,234.50', 'No.40917', '#40917'; never the ':' of a whole mark ('12 345:-': ``ap.WHOLE_MARKS``)
_NOT_IN_AMOUNTS = re.compile(r"[;=|#\[\]]|:(?<!\d:)|:(?!-(?!\S))|(?<=[^\W\d_]{2}\.)(?=\d)")
WIDEST = 3  # a number's words ('12 450 000,00') and up to this many words on each side ('- USD')


def _amount_doubts(line: str, want: ParsedAmount, stated: frozenset[str]) -> list[tuple[str, str]]:
    """Each reading of ``line`` that writes the amount ``want`` — signed, in a currency it may be in if
    it names one: one the amount's own sign or code may stand for (``ParsedAmount.currencies``:
    "$1,234.50" may be CAD, "A$ 1,234.50" is AUD), or else one the line names (``ap.currencies_in``),
    or else one of ``stated`` (its document's: ``stated_currencies``) — as its doubt (``_doubt``; ""
    for none) and the number as written when it is one reading of an ambiguous one (``2.500``; ""
    for none: ``_amount_readings``)."""
    from taskcrew.tools import ap

    named: set[str] | frozenset[str] | None = None
    found: list[tuple[str, str]] = []
    for number, currencies, doubt, written in _amount_readings(line):
        if number != want.value:
            continue
        if not want.currencies or set(want.currencies) & set(currencies):
            found.append((doubt, written))
        elif not currencies:
            named = (ap.currencies_in(line) or stated) if named is None else named
            if not named or named & set(want.currencies):
                found.append((doubt, written))
    return found


def _both(spaced: str, separated: str) -> str:
    """A reading's doubts: of numbers one space apart and of an ambiguous separator ("" for none)."""
    return "; ".join(d for d in (spaced, separated) if d)


# an amount with cents (``1,234.50``, ``1.234,50``, ``950,00``): its last separator marks decimals;
# not a dotted date or a version (``14.10.2026``, ``1.10.2``: more digits follow)
_DECIMALS = re.compile(r"(?<![\d.,'])\d+(?:[.,' ]\d{3})*([.,])\d\d(?!\d|[.,]\d)")
_SLASHED = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](?:\d{2}|\d{4})")  # a numeric date as ``ap`` reads one


# where an e-mail quotes another — a reply's header ("On 10/15/2026, AP Team <…> wrote:"), an original
# or forwarded message's mark — to the next part of the file (``--- attachment 1: …``)
_QUOTE_START = re.compile(
    r"^\s*(?:on|am|le|el|il)\b.*\b(?:wrote|schrieb|a\s+[ée]crit|escribi[óo]|ha\s+scritto)\b.*:\s*$"
    r"|^\s*-{2,}\s*(?:original\s+message|forwarded\s+message)|^\s*begin\s+forwarded\s+message",
    re.IGNORECASE,
)
# the header Outlook writes over the message a reply quotes: "From: AP Team <…>" with "Sent: Monday, …"
# on the same line or the next ("Von: … Gesendet: …", "De : … Envoyé : …"); an e-mail's own headers, as
# the reader renders them, say "Date:" and "To:", never "Sent:"
_REPLY_FROM = re.compile(r"\s*\**(?:from|von|de|da|van|fr[åa]n|fra|od)\s*\**\s*:", re.IGNORECASE)
_REPLY_SENT = re.compile(
    r"\b(?:sent|gesendet|envoy[ée]|enviado(?:\s+el)?|inviato|verzonden|skickat|sendt|wys[łl]ano)\s*\**\s*:",
    re.IGNORECASE,
)


def _quote_starts(lines: list[str], k: int) -> bool:
    """Whether ``lines[k]`` starts an e-mail's quoted or forwarded message (``_QUOTE_START``, or
    Outlook's "From: … / Sent: …" header over the message a reply quotes)."""
    line = lines[k]
    if _QUOTE_START.match(line):
        return True
    if not _REPLY_FROM.match(line):
        return False
    if _REPLY_SENT.search(line):
        return True
    after = next((later for later in lines[k + 1 : k + 3] if later.strip()), "")
    return _REPLY_SENT.match(after.lstrip(" >*")) is not None


def _layout(lines: list[str]) -> list[tuple[int, bool]]:
    """Of each of ``lines`` (a file as the reader renders it): the part of the file it is in, by
    number, and whether it is quoted — the one rule for what an e-mail quotes. Quoted: a line starting
    ">" (a plain-text reply's quote, and an HTML reply's ``<blockquote>``, Gmail's ``gmail_quote``,
    Outlook's ``divRplyFwdMsg`` as the HTML reader renders them: ``html.py``), and the lines from "On …
    wrote:", "-----Original Message-----", "Forwarded message" or Outlook's "From: … / Sent: …" header
    to the next part of the file. A part ends where the file's next one starts (``--- attachment 1:
    …``; an e-mail's headers and its body are one part) and where quoting starts or ends."""
    out: list[tuple[int, bool]] = []
    part, quoting, was = 0, False, False
    for k, line in enumerate(lines):
        if line.startswith("--- "):  # the next part of a rendered file (``models``): an attachment
            quoting = False
            if not line.startswith("--- body"):  # an e-mail's body is one part with its headers
                part += 1
        elif _quote_starts(lines, k):
            quoting = True
        quoted = (quoting or line.lstrip().startswith(">")) if line.strip() else was
        if quoted != was:
            part += 1
        was = quoted
        out.append((part, quoted))
    return out


def _own_lines(document: str) -> list[str]:
    """The lines of ``document`` its author writes, as what may settle its conventions: none of an
    e-mail's quoted or forwarded part (``_layout``), no struck run (``STRUCK_RUN``)."""
    from taskcrew.tools.documents.visibility import STRUCK_RUN

    lines = document.splitlines()
    return [
        STRUCK_RUN.sub(" ", line)
        for line, (_part, quoted) in zip(lines, _layout(lines), strict=True)
        if not quoted
    ]


# the title of a credit note: 'CREDIT NOTE', 'Credit memo', 'Gutschrift', 'Avoir', 'Nota de crédito'
_CREDIT_TITLE = re.compile(
    r"(?:credit[\s-]*(?:note|memo(?:randum)?|invoice)|gutschrift|(?:facture\s+d['’]\s*)?avoir|creditnota"
    r"|creditfactuur|kreditnota|kreditfaktura|hyvityslasku|nota\s+d[ei]\s+(?:cr[ée]dito|credito|abono))"
    r"(?![^\W\d_])",
    re.IGNORECASE,
)
# before a title: marks (Markdown's '#', a quote's '>', bold's '**'), an e-mail's subject and its 'Re:';
# never a list's dash ('- Credit note CN-7' is an item of a list, no title)
_TITLE_LEAD = re.compile(
    r"[\s#*=_>|]*(?:(?:subject|betreff|objet|asunto|oggetto)\s*:\s*)?(?:(?:re|aw|fwd?|wg|tr|rv)\s*:\s*)*",
    re.IGNORECASE,
)
# what may follow a title in a heading: the document's number, date and the invoice it is against
# ('Credit Note No. CN-7 against invoice INV-12 dated 2026-10-01'), never more words (a sentence)
_REFERENCE_WORD = re.compile(
    r"no|nr|n[°º]|num(?:ber|mer|[ée]ro)?|ref(?:erence)?|against|for|to|on|re|zu[rm]?|pour|sur|para|per|of|du"
    r"|del|vom|dated?|datum|fecha|invoice|rechnung|facture|factura|fattura|factuur|copy|kopie|copie",
    re.IGNORECASE,
)
_TITLE_CELL = re.compile(r"\s{2,}|\t")  # a column gap: 'NORTHWIND TRADERS   CREDIT NOTE'


def _titles_credit(line: str) -> bool:
    """Whether ``line``, or a column of it, is a credit note's title (``_CREDIT_TITLE``) — alone, after a
    few capitalised words ("TAX CREDIT NOTE", "Northwind Traders Ltd - Credit Note"), with its
    number, date, the invoice it is against and capitalised words after it (``_titled``), never an
    amount or a sentence: "We have issued a credit note for last month" and "Less credit note CN-5
    -50.00" are not."""
    if _amount_in(line):  # a row with an amount ("Less credit note CN-5   -50.00"), no title
        return False
    for cell in _TITLE_CELL.split(line):
        start = _TITLE_LEAD.match(cell).end()  # type: ignore[union-attr]  # its parts are all optional
        m = _CREDIT_TITLE.search(cell, start)
        if m is None:
            continue
        if re.match(r"\s*[-–•]\s", cell[start:]):  # an item of a list, no title
            continue
        before = [w for w in (_bare(w) for w in cell[start : m.start()].split()) if w]
        words = [_bare(w) for w in cell[m.end() :].split()]
        if (
            len(before) <= 4
            and all(w[0].isupper() for w in before)  # a name's or a kind's capitals: "TAX", "Acme Ltd"
            and len(words) <= 8
            and all(not w or _titled(w) for w in words)
        ):
            return True
    return False


def _bare(word: str) -> str:
    return word.strip(".,:;#()[]*_|/\"'-–—")


def _titled(word: str) -> bool:
    """A word that may follow a credit note's title in its heading: its number or date (never an
    amount), a reference word ("against invoice INV-12"), or a capitalised word ("Original", "Page
    1 of 1", "/ GUTSCHRIFT") — never a sentence's lower-case words."""
    if any(ch.isdigit() for ch in word):
        return not _amount_in(word)
    return bool(_REFERENCE_WORD.fullmatch(word)) or word[0].isupper()


def _amount_in(text: str) -> bool:
    """Does ``text`` hold an amount with cents, its dates aside ("vom 01.10.2026" holds none)?"""
    from taskcrew.tools import ap

    spans = ap.date_spans(text)
    return bool(
        _CENTS.search("".join(" " if any(a <= i < b for a, b in spans) else ch for i, ch in enumerate(text)))
    )


def credit_heading(document: str, line: int) -> int | None:
    """The number of the line of ``document`` (a file as the reader renders it) that titles the part
    of the file holding its line ``line`` (1-based) a credit note, at or above that line — a heading
    or a column of one ("CREDIT NOTE", "Credit memo CN-104", "NORTHWIND TRADERS   Gutschrift Nr. 12",
    an e-mail's subject "Avoir AV-7"; ``_titles_credit``); None when no line does. A part is one
    attachment, or one e-mail with its headers, or the message it quotes (``_layout``): a credit note
    attached to a mail, or quoted in it, titles nothing else of it."""
    lines = document.splitlines()
    if not 1 <= line <= len(lines):
        return None
    layout = _layout(lines)
    part = layout[line - 1][0]
    for number in range(line, 0, -1):
        if layout[number - 1][0] != part:
            return None
        if _titles_credit(lines[number - 1]):
            return number
    return None


@functools.lru_cache(maxsize=8)
def _conventions(document: str) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """How ``document`` writes what may read two ways, each with the text that shows it, or None
    when nothing shows it or its texts disagree: its numeric dates' order — ("day", "14/10/2026"):
    a date whose first number is over 12; ("month", "10/15/2026"): whose second is — and its
    decimal mark — (",", "1.234,50"), (".", "1,234.50"): the separator before an amount's cents.

    Only the document's own amounts and dates count (``_own_lines``): an amount with cents read as
    money (``amounts_in``: a currency sign or code written against it) or on a line an amount label
    names (``Gesamtbetrag``, ``Total``), never a percentage — not a clock time (``08.30 Uhr``), a
    version, a bank code or an article number; a date its line labels or dates an event by (``_dated``)."""
    from taskcrew.crew.evidence import AMOUNT_LABEL, plain
    from taskcrew.tools import ap

    orders: dict[str, str] = {}
    marks: dict[str, str] = {}
    for line in _own_lines(plain(document)):
        spans = ap.date_spans(line)
        for start, end in spans:
            m = _SLASHED.fullmatch(line[start:end])
            if m is None or not _dated(line, start):
                continue
            first, second = int(m.group(1)), int(m.group(2))
            if first > 12 >= second:
                orders.setdefault("day", m.group(0))
            elif second > 12 >= first:
                orders.setdefault("month", m.group(0))
        dates = {start for start, _end in spans}
        found = [m for m in _DECIMALS.finditer(line) if m.start() not in dates]
        found = [m for m in found if not line[m.end() :].lstrip().startswith("%")]
        if not found:
            continue
        labelled = AMOUNT_LABEL.search(line) is not None or total_kind(line) is not None
        money = {abs(number) for number, currencies, _doubt in amounts_in(line) if currencies}
        for m in found:
            if labelled or (abs(amount.value) in money if (amount := _amount(m.group(0))) else False):
                marks.setdefault(m.group(1), m.group(0))
    order = next(iter(orders.items())) if len(orders) == 1 else None
    mark = next(iter(marks.items())) if len(marks) == 1 else None
    return order, mark


def _dated(line: str, start: int) -> bool:
    """Whether the date at ``start`` of ``line`` is one of the document's by a label the invoice
    readers know: a date label (``Invoice date``, ``Rechnungsdatum``, ``Due``: ``evidence``'s and
    ``ap``'s), a due-date label before it, or an event it dates (``Delivered``, ``Shipped``)."""
    from taskcrew.crew.evidence import DATE_LABEL
    from taskcrew.tools import ap

    return bool(
        DATE_LABEL.search(line)
        or ap.DATE_WORD.search(line)
        or ap.EVENT_WORD.search(line)
        or ap.DUE_LABEL.search(line[:start].rstrip())
    )


def _date_doubt(written: str, readings: set[date], days: set[date], document: str) -> str:
    """The doubt of reading the date ``written`` (its ``readings``) as the value's (``days``): "" when
    it reads one way, or as ``document`` writes its dates (``_conventions``)."""
    if len(readings) < 2 or len(days) != 1:  # one reading; or the value is as ambiguous as the line
        return ""
    (want,) = days
    order = _conventions(document)[0]
    if order is None:
        early, late = sorted(readings)
        return f"{early} or {late} ({written}: {AMBIGUOUS_DATE})"
    kind, shown = order
    m = _SLASHED.fullmatch(written)
    lead = int(m.group(1)) if m is not None else 0  # the first number: the day if day first
    settled = next((d for d in readings if (d.day if kind == "day" else d.month) == lead), want)
    if settled == want:
        return ""
    return (
        f"{settled}, not {want}: {written} alone is ambiguous, but this document writes its dates"
        f" {kind} first ({shown}), so {want} misreads it"
    )


def _amount_doubt(written: str, value: Decimal, document: str) -> str:
    """The doubt of reading the amount ``written`` (``2.500``, one separator before three digits) as
    ``value``: "" when it is no such amount, or is read as ``document`` marks decimals
    (``_conventions``)."""
    from taskcrew.tools import ap

    m = _AMBIGUOUS_AMOUNT.search(written)
    if m is None:
        return ""
    whole, separator, frac = m.groups()
    sign = -1 if value < 0 else 1
    grouped, decimal = sign * Decimal(whole + frac), sign * Decimal(f"{whole}.{frac}")
    mark = _conventions(document)[1]
    if mark is None:
        return f"{ap.plain_amount(decimal)} or {ap.plain_amount(grouped)} ({m.group(0)}: {AMBIGUOUS_AMOUNT})"
    settled = decimal if separator == mark[0] else grouped
    if settled == value:
        return ""
    return (
        f"{ap.plain_amount(settled)}, not {ap.plain_amount(value)}: {m.group(0)} alone is ambiguous, but"
        f" this document marks decimals with {mark[0]!r} ({mark[1]}), so {ap.plain_amount(value)} misreads it"
    )


# a word after which a count comes, not an amount: 'Net 30 950.00' is 30 days and 950.00
_COUNT_WORD = re.compile(r"(?i)net|netto|qty|menge|anzahl|qt[ée]|antal|pos")
_TAX_WORD = TAX_WORD  # the one list of tax words (``ap.TAX_WORDS``)
_CENTS = re.compile(r"\d[.,]\d\d(?!\d)")


def amounts_in(line: str) -> list[tuple[Decimal, tuple[str, ...], str]]:
    """The amounts ``line`` writes, as ``ap.parse_amount`` reads them (signed, with the currencies the
    signs and codes written against them may stand for, and the doubt of a reading of numbers one
    space apart: ``_doubt``), both readings of one whose separator may group thousands or mark
    decimals (``12.345``). A number (one word, or words one space apart: ``1 234.56``, also read as
    234.56) is read with the most of the words around it that still read as one amount with it — a
    sign (``- 1,234.50``), brackets, a currency — so its digits are never read without the sign
    before them. What is no sign (``_sign_words``): a dash set apart after a label word or before
    more words (``Amount Due - $1,234.50``, ``1.234,56 EUR – zahlbar bis``), the mark after a whole
    amount (``¥12,000-``, ``12 345:-``: ``ap.parse_amount`` reads it), brackets that set off a tax or a second
    currency's amount."""
    return [(number, currencies, doubt) for number, currencies, doubt, _written in _amount_readings(line)]


def _amount_readings(line: str) -> list[tuple[Decimal, tuple[str, ...], str, str]]:
    """``amounts_in``, each reading also with the words it was read from when it is one reading of an
    amount whose separator may group thousands or mark decimals (``2.500 EUR``; "" for any other)."""
    tokens = [t.rstrip(".,") for t in _NOT_IN_AMOUNTS.sub(" ", line).split()]
    digits = [any(ch.isdigit() for ch in t) for t in tokens]
    # a word that may be read with a number: a sign, a bracket, a currency ('-', '(USD', 'US$', 'Rs.'),
    # never a longer one ('TOTAL' is no part of an amount)
    beside = [not d and len(t.strip("()")) <= 3 for t, d in zip(tokens, digits, strict=True)]
    labelled = _labelled(tokens)
    spans: dict[tuple[int, int], list[tuple[Decimal, tuple[str, ...], str]]] = {}
    for i in range(len(tokens)):
        for j in range(i + 1, min(i + WIDEST, len(tokens)) + 1):
            if not all(digits[i:j]):
                break
            best: list[tuple[Decimal, tuple[str, ...], str]] = []
            for width in range(2 * WIDEST, -1, -1):  # the widest reading wins
                for before in range(max(0, width - WIDEST), min(width, WIDEST) + 1):
                    start, end = i - before, j + width - before
                    if start < 0 or end > len(tokens) or not all(beside[start:i] + beside[j:end]):
                        continue
                    best += _readings(_sign_words(tokens, labelled, start, i, j, end))
                if best:
                    break
            spans[(i, j)] = best
    return [
        (number, currencies, _doubt(tokens, spans, i, j), written)
        for (i, j), best in spans.items()
        for number, currencies, written in best
    ]


def _labelled(tokens: list[str]) -> list[bool]:
    """For each of ``tokens``, whether a label word (a word with a letter, no currency) is before it;
    all False on a line without a dash set apart (``_sign_words`` asks only about one)."""
    from taskcrew.tools import ap

    if not any(t and not t.strip("-") for t in tokens):
        return [False] * len(tokens)
    out, seen = [], False
    for token in tokens:
        out.append(seen)
        seen = seen or (any(ch.isalpha() for ch in token) and not ap.currencies_in(token.strip("()")))
    return out


def _sign_words(tokens: list[str], labelled: list[bool], start: int, i: int, j: int, end: int) -> str:
    """The words ``tokens[start:end]`` around the number ``tokens[i:j]``, as one amount, without what
    only looks like its sign: a dash set apart before it after a label word (``Amount Due -
    $1,234.50``; ``- 1,234.50`` alone is a minus) or after it with more words on the line
    (``1.234,56 EUR – zahlbar bis``; ``1,234.50 -`` at the end is one), and brackets that are an
    aside, not the accounting minus (``_aside``). A dash that touches the number or its sign is a
    minus (``-950.00``, ``-$950.00``, ``950,00-``)."""
    for k in range(start, end):
        apart = tokens[k] and not tokens[k].strip("-")  # a dash set apart
        if apart and ((k < i and labelled[k]) or (j <= k < len(tokens) - 1)):
            return ""  # read without it (a narrower reading)
    text = " ".join(tokens[start:end])
    opening = next((k for k in range(start, end) if "(" in tokens[k]), None)
    if opening is not None and _aside(tokens, opening, text):
        if opening >= j:  # an aside after the number is no part of it: "USD 1,234.50 (CAD 1,700.00)"
            return ""
        text = text.replace("(", " ").replace(")", " ")
    return text


def _aside(tokens: list[str], opening: int, text: str) -> bool:
    """Whether the brackets opened at ``tokens[opening]`` set off an aside, not a credit: after a
    percentage or a tax word (``MwSt. 19 % (197,11 €)``, ``VAT (£205.80)``), a second currency's
    amount after another amount (``1,350.00 USD (EUR 1.234,56)``), or in a sentence — after a word, with
    more words after the closing bracket (``The remaining balance (412.50 USD) is due on 14 Dec.``,
    ``Please pay the invoice total (USD 412.50) by Friday``). A statement's cell stays a credit: the
    amount alone on its line or at its end after a label (``Credit note total (1.234,50 €)``,
    ``Total (950.00)``), or with a currency before the brackets (``USD (615.00)``). Brackets that hold
    no number of their own name the amount's own currency (``Total 1,234.50 (EUR)`` is in euros,
    whatever else the line names) when no other currency is written against it: after ``GBP 1,234.50``
    ``(EUR)`` is an aside, the amount is read in the currency it is written with, never in EUR."""
    from taskcrew.tools import ap

    before = tokens[max(0, opening - 2) : opening]
    if not before or not tokens[opening].startswith("("):
        return False
    closing = next((k for k in range(opening, len(tokens)) if ")" in tokens[k]), len(tokens))
    if not any(ch.isdigit() for token in tokens[opening : closing + 1] for ch in token):
        k = opening  # the amount before the brackets, with the signs and codes written against it
        while k > 0 and opening - k < 2 * WIDEST and (_digits(tokens[k - 1]) or len(tokens[k - 1]) <= 3):
            k -= 1
        written = ap.currencies_in(" ".join(tokens[k:opening]))  # '$1,234.50 (USD)' is one currency
        return bool(written) and not written & ap.currencies_in(" ".join(tokens[opening : closing + 1]))
    last = before[-1]
    if last.endswith("%") or _TAX_WORD.fullmatch(last):
        return True
    if _word(last) and any(_word(t) for t in tokens[closing + 1 :]):
        return True  # prose: the sentence goes on after the brackets
    inside = text[text.index("(") :]
    amount_before = any(_CENTS.search(w) or re.search(r"\d[.,' ]\d{3}", w) for w in before)
    return (
        amount_before
        and bool(ap.currencies_in(inside))
        and (any(ch.isdigit() for ch in last) or bool(ap.currencies_in(last)))
    )


def _digits(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


def _word(token: str) -> bool:
    """Whether ``token`` is a word of prose or a label: a letter in it, no currency."""
    from taskcrew.tools import ap

    return any(ch.isalpha() for ch in token) and not ap.currencies_in(token)


def _doubt(
    tokens: list[str],
    spans: dict[tuple[int, int], list[tuple[Decimal, tuple[str, ...], str]]],
    i: int,
    j: int,
) -> str:
    """Whether the reading of the number ``tokens[i:j]`` is in doubt, as the readings it has ("" for
    none): numbers one space apart may be one amount (``1 950,00``) or two (a quantity of 1 and
    950.00). Which one the line means (``_joined``): one amount, thousands grouping — its tail alone
    (950,00) is then in doubt; or two, the first a count ('Net 30 950.00') — the joined reading is
    then in doubt; or either — both are."""
    if i > 0 and spans.get((i - 1, j)) and _joined(tokens, i - 1, j) != "count":  # a tail
        return f"{' '.join(tokens[i - 1 : j])} or {' '.join(tokens[i:j])}"
    if j - i > 1 and spans.get((i, j)) and _joined(tokens, i, j) != "grouping":
        return f"{' '.join(tokens[i:j])} or {' '.join(tokens[i + 1 : j])}"
    return ""


def _joined(tokens: list[str], i: int, j: int) -> str:
    """What the numbers ``tokens[i:j]``, one space apart, are: "count" when a word before them counts
    (``Net 30 950.00``, ``Qty 1 950,00``: ``_COUNT_WORD``) — two values; "grouping" as French and
    Nordic invoices write an amount — a decimal comma or none (``1 950,00``, ``12 450 kr``; a
    decimal point, ``1 950.00``, rarely goes with spaces) and no other amount with cents on the line
    (``1 950,00 950,00`` is a table's row: a quantity, a price, an amount) — one amount; else
    "either"."""
    if i > 0 and _COUNT_WORD.fullmatch(tokens[i - 1].strip("(:")):
        return "count"
    last = re.sub(r"[^\d.,]+$", "", tokens[j - 1])
    if re.search(r"\.\d+$", last) or any(_CENTS.search(t) for k, t in enumerate(tokens) if not i <= k < j):
        return "either"
    return "grouping"


def _readings(text: str) -> list[tuple[Decimal, tuple[str, ...], str]]:
    """What ``text`` reads as, as one amount: its value and the currencies it may be in, or both
    readings of an amount whose separator may group thousands or mark decimals, each with ``text``
    (``_amount_readings``); none when it is no amount."""
    amount = _amount(text)
    if amount is not None:
        return [(amount.value, amount.currencies, "")]
    return [(Decimal(form.split(":", 1)[1]), (), text) for form in _ambiguous_amounts(text)]


def _dates_in(text: str) -> set[date]:
    """The dates ``text`` writes, both readings of a numeric one whose day/month order is ambiguous."""
    return {day for _written, readings in _date_readings(text) for day in readings}


def _date_readings(text: str) -> list[tuple[str, set[date]]]:
    """Each date ``text`` writes, as written, with what it reads as: one date, or both readings of a
    numeric one whose day/month order is ambiguous (none when it is no valid date)."""
    from taskcrew.tools import ap

    found: list[tuple[str, set[date]]] = []
    for start, end in ap.date_spans(text):
        written = text[start:end]
        try:
            found.append((written, {ap.parse_date(written).value}))
        except ValueError:
            found.append(
                (written, {date.fromisoformat(f.split(":", 1)[1]) for f in _ambiguous_dates(written)})
            )
    return found


def _may_show(text: str, value: str, forms: set[str]) -> bool:
    """A cheap test that ``text`` cannot show ``value`` in another format, before reading every
    token of it as an amount and a date (about 1 ms a line): a format keeps the value's significant
    digits in order (1284.50 is 1,284.5 and 1.284,50), except a date's (12 October 2026)."""
    if any(form.startswith("date:") for form in forms):
        return True
    if not any(ch.isdigit() for ch in value):
        return False  # every other form read from a text has a digit
    return re.sub(r"\D", "", value).strip("0") in re.sub(r"\D", "", text)


def _value_forms(value: str) -> set[str]:
    from taskcrew.tools import ap

    forms = {_plain(value), _squashed(value)}
    with contextlib.suppress(ValueError, ArithmeticError):
        forms.add("amount:" + str(ap.parse_amount(value).value.normalize()))
    with contextlib.suppress(ValueError):
        forms.add("date:" + ap.parse_date(value).value.isoformat())
    return {f for f in forms if f}


def _ocr_forms(text: str) -> set[str]:
    """The forms of an OCR'd passage (``_forms_in``), also with the look-alike letters among the
    digits of an amount or a date read as digits (``1,234.S0`` as 1,234.50: ``ocrlines.unmisread``),
    so a value the agent entered corrected still traces to the OCR'd text."""
    folded = unmisread_text(text)
    return _forms_in(text) | (_forms_in(folded) if folded != text else set())


def _forms_in(text: str) -> set[str]:
    """Every token, amount and date of an OCR'd passage, normalised."""
    from taskcrew.tools import ap

    forms: set[str] = set()
    for line in _column_gaps(text).splitlines():
        tokens = _TOKEN.findall(line)
        for i, token in enumerate(tokens):
            if sum(ch.isdigit() for ch in token) < 1:
                continue
            forms.add(_plain(token))
            # an identifier's run starts with its letters ('RE-2026-0815', 'DE89 3704 0044 0532'): one
            # starting at a bare number ('12.50 EUR') is an amount, never squashed, and costs a parse
            for width in range(1, SQUASHED_TOKENS + 1) if any(ch.isalpha() for ch in token) else ():
                run = tokens[i : i + width]
                if "_" in run:  # a column break (``_column_gaps``): nothing beyond it is the same value
                    break
                forms.add(_squashed(" ".join(run)))
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


def _squashed(text: str) -> str:
    """An identifier's letters and digits alone: the same identifier re-punctuated or re-spaced
    (``RE-2026-0815`` = ``RE20260815``, an IBAN in groups or run together); "" for a value without
    a letter (``1,234.50`` and ``12,345.0`` are not one amount) or with too few digits to say where
    it came from."""
    from taskcrew.tools import ap

    kept = re.sub(r"[\W_]", "", text.lower())
    if sum(ch.isdigit() for ch in kept) < MIN_DIGITS or not any(ch.isalpha() for ch in kept):
        return ""
    for parse in (ap.parse_amount, ap.parse_date):  # '1,234.56 USD': an amount, compared as one
        with contextlib.suppress(ValueError, ArithmeticError):
            parse(text)
            return ""
    return f"{SQUASHED}{kept}"


def _telling(form: str) -> bool:
    """Whether a value found inside a longer field says where it came from: three digits or more,
    and not a bare year (a year is on every page)."""
    value = form.split(":", 1)[-1]
    return sum(ch.isdigit() for ch in value) >= MIN_DIGITS and not re.fullmatch(r"(?:19|20)\d\d", value)


def _plain(text: str) -> str:
    return re.sub(r"[^\w\-/.]", "", NEGATIVE_IN_BRACKETS.sub(r"-\1", text.lower())).strip(".")


def _contains(text: str, part: str) -> bool:
    """Whether ``part`` is in ``text`` as a whole: not as the tail or head of a longer number
    (``IN-7731`` is not shown by ``IN-77310``)."""
    pattern = re.escape(part)
    if part[:1].isdigit():
        pattern = r"(?<!\d)(?<!\d[.,/])" + pattern
    if part[-1:].isdigit():
        pattern += r"(?!\d)(?![.,/]\d)"
    return re.search(pattern, text) is not None


def _ambiguous_amounts(text: str) -> set[str]:
    """Both readings of an amount whose one separator may group thousands or mark decimals
    (``2.500``: 2500 or 2.5; ``1,500``: 1500 or 1.5), as forms; empty for any other value."""
    from taskcrew.tools import ap

    match = _AMBIGUOUS_AMOUNT.search(text)
    if match is None or sum(ch.isdigit() for ch in text) != len(match.group(1)) + 3:
        return set()
    try:
        ap.parse_amount(text)
        return set()  # read one way only (or no amount at all)
    except ap.APInputError as exc:
        if not str(exc).startswith("ambiguous amount"):
            return set()
    whole, _, frac = match.groups()
    bare = text.strip()
    credit = NEGATIVE_IN_BRACKETS.search(bare) or CREDIT_MARK.search(bare)  # "(1,500)", "1,500 CR"
    sign = -1 if bare.startswith("-") or bare.endswith("-") or credit else 1
    readings = (Decimal(whole + frac), Decimal(f"{whole}.{frac}"))
    return {"amount:" + str((sign * number).normalize()) for number in readings}


def _ambiguous_dates(text: str) -> set[str]:
    """Both readings of a numeric date whose day/month order is ambiguous (03/04/2026), as forms."""
    from taskcrew.tools import ap

    match = _NUMERIC_DATE.fullmatch(text.strip())
    if match is None:
        return set()
    try:
        ap.parse_date(text)
        return set()
    except ValueError:
        pass
    a, b, year = (int(g) for g in match.groups())
    forms: set[str] = set()
    for day, month in ((a, b), (b, a)):
        with contextlib.suppress(ValueError):
            forms.add("date:" + date(year, month, day).isoformat())
    return forms
