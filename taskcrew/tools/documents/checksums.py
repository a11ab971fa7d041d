"""Check digits of identifiers OCR reads, used to choose between readings: IBANs (ISO 13616
mod-97), German, Dutch, Belgian and Austrian VAT ids, RF creditor references (ISO 11649 mod-97) —
all three recognised by their shape — and, where a label on the line says what the number is (a bare
run of digits could be anything), payment card numbers (Luhn), GTIN/EAN/UPC article numbers (GS1
mod-10) and US ABA routing numbers (3-7-1 weights).

OCR confuses look-alike characters in identifiers (``O``/``0``, ``S``/``5``, ``I``/``l``/``1``,
``B``/``8``, ``Z``/``2``, ``G``/``6``). Where an identifier has a check digit, :func:`check` tries
the readings those confusions allow, constrained by the identifier's format (an IBAN's check digits
and a Dutch BBAN's bank code have fixed letters and digits), and says which one the checksum accepts:

    check("NL9I ABNA O417 1643 00")  # Checked(kind="IBAN", value="NL91ABNA0417164300", status="corrected")

``status`` is ``ok`` (the reading as OCR gave it passes), ``corrected`` (exactly one other reading
passes), ``ambiguous`` (several do) or ``failed`` (none does): a value no reading satisfies.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

Status = Literal["ok", "corrected", "ambiguous", "failed"]

# what a look-alike character may really be, as a digit or as a letter
AS_DIGIT = {
    "O": "0",
    "Q": "0",
    "D": "0",
    "I": "1",
    "L": "1",
    "T": "1",
    "Z": "2",
    "S": "5",
    "G": "6",
    "B": "8",
}
AS_LETTER = {"0": "O", "1": "I", "2": "Z", "5": "S", "6": "G", "8": "B"}
MAX_READINGS = 512  # readings tried per identifier; more ambiguous characters than this is "failed"

# IBAN: length and BBAN format per country (n digits, a letters, c either), from the IBAN registry
IBAN_FORMATS = {
    "AT": "16n", "BE": "12n", "CH": "5n12c", "CZ": "20n", "DE": "18n", "DK": "14n", "ES": "20n",
    "FI": "14n", "FR": "10n11c2n", "GB": "4a14n", "IE": "4a14n", "IT": "1a10n12c", "LI": "5n12c",
    "LU": "3n13c", "NL": "4a10n", "NO": "11n", "PL": "24n", "PT": "21n", "RO": "4a16c", "SE": "20n",
    "SK": "20n", "HU": "24n", "GR": "7n16c", "HR": "17n", "SI": "15n", "BG": "4a6n8c", "EE": "16n",
    "LV": "4a13c", "LT": "16n", "IS": "22n", "MT": "4a5n18c", "CY": "8n16c", "SA": "2n18c",
}  # fmt: skip
IBAN_LIKE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9OoIlSBZ]{2}(?:[ ]?[A-Za-z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
RF_LIKE = re.compile(r"(?<![A-Za-z0-9])RF[0-9OoIlSZ]{2}(?:[ ]?[A-Za-z0-9]{1,4}){1,6}(?![A-Za-z0-9])")
LOOKS_DIGIT = "0-9OoDIlTZSGB"  # digits and the letters OCR reads for them
# a number a label names, e.g. "Visa 4111 1111 1111 1111", "EAN: 4006381333931", "ABA 125000105"
LABELLED = {
    "card number": r"card|karte|visa|mastercard|maestro|amex",
    "GTIN": r"gtin|ean|upc|barcode",
    "ABA routing number": r"aba|routing|rtn",
}
LABELLED_LIKE = {
    kind: re.compile(
        rf"(?i:\b(?:{labels})\b)[^A-Za-z0-9]{{0,12}}(?:(?i:no|nr|number|code|#)\.?[^A-Za-z0-9]{{0,6}})?"
        rf"(?P<id>[{LOOKS_DIGIT}](?:[ -]?[{LOOKS_DIGIT}]){{7,22}})(?![A-Za-z0-9])"
    )
    for kind, labels in LABELLED.items()
}
VAT_LIKE = re.compile(r"(?<![A-Za-z0-9])(?:DE|NL|BE|AT)[ ]?[A-Z0-9][A-Z0-9 .]{7,13}[A-Z0-9](?![A-Za-z0-9])")


class Checked(BaseModel):
    kind: str  # "IBAN", "VAT id"
    value: str  # the reading chosen (as read when none passes), without spaces
    read_as: str  # what OCR read, without spaces
    status: Status

    def note(self) -> str:
        return {
            "ok": f"{self.kind} checksum ok",
            "corrected": f"{self.kind} checksum chose this reading of {self.read_as!r}",
            "ambiguous": f"several readings pass the {self.kind} checksum",
            "failed": f"fails the {self.kind} checksum: no reading of it is valid",
        }[self.status]


def find_identifiers(line: str) -> list[tuple[int, int, Checked]]:
    """(start, end, result) for each identifier with a checksum in a line of OCR text: shaped like an
    IBAN, a VAT id or an RF reference, or a number a label says is a card number, GTIN or ABA number."""
    found: list[tuple[int, int, Checked]] = []
    shaped = [(IBAN_LIKE, "IBAN"), (VAT_LIKE, "VAT id"), (RF_LIKE, "RF creditor reference")]
    for pattern, kind in shaped + [(p, k) for k, p in LABELLED_LIKE.items()]:
        for m in pattern.finditer(line):
            start, end = m.span("id") if "id" in pattern.groupindex else m.span()
            if any(start < e and s < end for s, e, _ in found):
                continue
            pieces = line[start:end].rstrip(" .").split(" ")
            best: tuple[int, int, Checked] | None = None
            for count in range(len(pieces), 0, -1):  # 'NL91 ABNA 0417 1643 00 BIC' is an IBAN and a word
                text = " ".join(pieces[:count])
                result = check(text, kind)
                if result is not None and (
                    best is None or PREFERENCE[result.status] < PREFERENCE[best[2].status]
                ):
                    best = (start, start + len(text), result)
            if best is not None:
                found.append(best)
    return found


def check(text: str, kind: str = "IBAN") -> Checked | None:
    """The checksum's verdict on an identifier as OCR read it, or None when it is not one of ``kind``."""
    raw = re.sub(r"[ .-]" if kind in LABELLED else r"[ .]", "", text).upper()
    slots, valid, digits = KINDS[kind]
    if sum(ch.isdigit() for ch in raw) < digits:  # 'DEUTSCHLAND' is no VAT id
        return None
    layout = slots(raw)
    if layout is None:
        return _misfit_iban(raw) if kind == "IBAN" else None
    if valid(raw):
        return Checked(kind=kind, value=raw, read_as=raw, status="ok")
    readings = _readings(raw, layout)
    if readings is None:
        return Checked(kind=kind, value=raw, read_as=raw, status="failed")
    passing = [r for r in readings if r != raw and valid(r)]
    if len(passing) == 1:
        return Checked(kind=kind, value=passing[0], read_as=raw, status="corrected")
    return Checked(kind=kind, value=raw, read_as=raw, status="ambiguous" if passing else "failed")


PREFERENCE = {"ok": 0, "corrected": 1, "ambiguous": 2, "failed": 3}


def _misfit_iban(raw: str) -> Checked | None:
    """An IBAN of a known country one or two characters too long or short: OCR added a character
    (``NL911 ABNA …``) — the one deletion the checksum accepts is taken — or lost one."""
    fmt = IBAN_FORMATS.get(raw[:2])
    if fmt is None:
        return None
    extra = len(raw) - 4 - _format_length(fmt)
    if abs(extra) > 2 or extra == 0:
        return None
    passing: set[str] = set()
    if extra == 1:
        for cut in {raw[:i] + raw[i + 1 :] for i in range(2, len(raw))}:
            slots = _iban_slots(cut)
            readings = _readings(cut, slots) if slots else None
            passing.update(r for r in readings or [] if iban_valid(r))
    if len(passing) == 1:
        return Checked(kind="IBAN", value=passing.pop(), read_as=raw, status="corrected")
    return Checked(kind="IBAN", value=raw, read_as=raw, status="ambiguous" if passing else "failed")


def iban_valid(iban: str) -> bool:
    """ISO 13616 mod-97 (and the country's length, where known)."""
    if not re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}", iban):
        return False
    fmt = IBAN_FORMATS.get(iban[:2])
    if fmt is not None and len(iban) != 4 + _format_length(fmt):
        return False
    digits = "".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])
    return int(digits) % 97 == 1


def vat_valid(vat: str) -> bool:
    """Check digits of German, Dutch, Belgian and Austrian VAT ids."""
    country, body = vat[:2], vat[2:]
    if country == "DE" and re.fullmatch(r"[1-9]\d{8}", body):
        product = 10
        for ch in body[:8]:
            total = (int(ch) + product) % 10 or 10
            product = (2 * total) % 11
        return (11 - product) % 10 == int(body[8])
    if country == "NL" and re.fullmatch(r"\d{9}B\d{2}", body):
        weighted = sum(int(d) * w for d, w in zip(body[:8], range(9, 1, -1), strict=True))
        if weighted % 11 % 10 == int(body[8]) and weighted % 11 != 10:
            return True
        return int("".join(str(int(ch, 36)) for ch in "NL" + body)) % 97 == 1  # sole traders since 2020
    if country == "BE" and re.fullmatch(r"[01]\d{9}", body):
        return 97 - int(body[:8]) % 97 == int(body[8:])
    if country == "AT" and re.fullmatch(r"U\d{8}", body):
        digits = [int(d) for d in body[1:]]
        total = sum(d if i % 2 == 0 else d * 2 // 10 + d * 2 % 10 for i, d in enumerate(digits[:7]))
        return (96 - total) % 10 == digits[7]
    return False


def rf_valid(reference: str) -> bool:
    """ISO 11649 creditor reference: RF, two check digits, up to 21 letters or digits; mod-97 like an IBAN."""
    if not re.fullmatch(r"RF[0-9]{2}[A-Z0-9]{1,21}", reference):
        return False
    return int("".join(str(int(ch, 36)) for ch in reference[4:] + reference[:4])) % 97 == 1


def luhn_valid(number: str) -> bool:
    """Payment card numbers (ISO/IEC 7812): 12-19 digits, Luhn's mod-10."""
    if not re.fullmatch(r"[0-9]{12,19}", number):
        return False
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def gtin_valid(number: str) -> bool:
    """GTIN-8, -12 (UPC-A), -13 (EAN) and -14: GS1 mod-10 with weights 3 and 1 from the right."""
    if not re.fullmatch(r"[0-9]{8}|[0-9]{12,14}", number):
        return False
    total = sum(int(ch) * (3 if i % 2 else 1) for i, ch in enumerate(reversed(number)))
    return total % 10 == 0


def aba_valid(number: str) -> bool:
    """US ABA routing numbers: nine digits, weights 3, 7, 1."""
    if not re.fullmatch(r"[0-9]{9}", number):
        return False
    return sum(int(ch) * w for ch, w in zip(number, (3, 7, 1) * 3, strict=True)) % 10 == 0


def _digits_slots(lengths: set[int]) -> Callable[[str], str | None]:
    return lambda raw: "n" * len(raw) if len(raw) in lengths else None


def _rf_slots(raw: str) -> str | None:
    return "aann" + "c" * (len(raw) - 4) if raw.startswith("RF") and 5 <= len(raw) <= 25 else None


def _format_length(fmt: str) -> int:
    return sum(int(n) for n in re.findall(r"\d+", fmt))


def _iban_slots(raw: str) -> str | None:
    """What each position must be (n digit, a letter, c either), or None when it is no IBAN."""
    country = raw[:2]
    if not country.isalpha():
        return None
    fmt = IBAN_FORMATS.get(country)
    if fmt is None:  # a country whose format we do not know: not taken for an IBAN
        return None
    slots = "aann" + "".join(kind * int(n) for n, kind in re.findall(r"(\d+)([nac])", fmt))
    return slots if len(slots) == len(raw) else None


def _vat_slots(raw: str) -> str | None:
    shapes = {"DE": "aannnnnnnnn", "NL": "aannnnnnnnnann", "BE": "aannnnnnnnnn", "AT": "aaannnnnnnn"}
    slots = shapes.get(raw[:2])
    return slots if slots is not None and len(slots) == len(raw) else None


def _readings(raw: str, slots: str) -> list[str] | None:
    """Every reading the look-alike characters allow in their slots, or None when there are too many
    (or a character fits no reading of its slot)."""
    choices: list[list[str]] = []
    for ch, slot in zip(raw, slots, strict=True):
        options = [ch]
        if slot == "n" and not ch.isdigit():
            options = [AS_DIGIT[ch]] if ch in AS_DIGIT else []
        elif slot == "a" and not ch.isalpha():
            options = [AS_LETTER[ch]] if ch in AS_LETTER else []
        elif slot == "c" and ch in AS_DIGIT:  # a letter where either may stand: perhaps a digit
            options = [ch, AS_DIGIT[ch]]
        if not options:
            return None
        choices.append(options)
    count = 1
    for options in choices:
        count *= len(options)
    if count > MAX_READINGS:
        return None
    return ["".join(r) for r in itertools.product(*choices)]


def regrouped(value: str, shown: str) -> str:
    """A corrected value spaced as OCR read it (``NL91 ABNA …``, ``4111 1111 …``) when its length
    is the same, an IBAN in groups of four otherwise."""
    bare = re.sub(r"[ .-]", "", shown)
    if " " not in shown:
        return value
    if len(bare) != len(value):
        return grouped(value) if value[:2].isalpha() else value
    out, chars = [], iter(value)
    for ch in shown:
        out.append(ch if ch in " .-" else next(chars))
    return "".join(out)


def grouped(value: str) -> str:
    """An IBAN in its printed form: groups of four."""
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4))


# kind: (what each position must be, the checksum, at least this many digits in it)
KINDS: dict[str, tuple[Callable[[str], str | None], Callable[[str], bool], int]] = {
    "IBAN": (_iban_slots, iban_valid, 6),
    "VAT id": (_vat_slots, vat_valid, 6),
    "RF creditor reference": (_rf_slots, rf_valid, 2),
    "card number": (_digits_slots(set(range(12, 20))), luhn_valid, 6),
    "GTIN": (_digits_slots({8, 12, 13, 14}), gtin_valid, 6),
    "ABA routing number": (_digits_slots({9}), aba_valid, 6),
}
