"""OCR values an approver can trust: each value with its own confidence, marked when uncertain (never
dropped), identifiers chosen by their checksums, crooked, faint, photographed and two-column pages,
German formats, boxed values, logos not OCR'd. On pictures the project renders itself
(:mod:`taskcrew.tools.documents.specimens`) and on the demo's scan and photo.

OCR is slow: every picture is read once per module (``readings``) and the tests look at the results.
"""

from __future__ import annotations

import difflib
import io
import random
import re
from pathlib import Path

import pytest

from taskcrew.sandbox.ground_truth import GroundTruth
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.models import OCR_MARK, FileContent, OcrValue, PageText
from taskcrew.tools.documents.ocrlines import Line, Word, build, parse_tsv
from taskcrew.tools.documents.ocrtables import find_tables, mark_columns
from taskcrew.tools.documents.provenance import OcrProvenance
from taskcrew.tools.documents.specimens import SPECIMENS, Specimen

BY_NAME = {s.name: s for s in SPECIMENS}


@pytest.fixture(scope="module")
def readings(tmp_path_factory: pytest.TempPathFactory) -> tuple[SandboxFiles, dict[str, FileContent]]:
    root = tmp_path_factory.mktemp("specimens")
    for specimen in SPECIMENS:
        specimen.render().save(root / f"{specimen.name}.png")
    files = SandboxFiles(root)
    return files, {s.name: files.read(f"{s.name}.png") for s in SPECIMENS}


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _values(content: FileContent) -> list[OcrValue]:
    return [v for page in content.pages for v in page.ocr_values]


def _found_or_marked(content: FileContent, expected: str) -> OcrValue | None:
    """The value read for ``expected``: read as printed, or read otherwise and marked uncertain in the text."""
    values = _values(content)
    for value in values:
        if _norm(value.text) == _norm(expected):
            return value
    text = content.full_text()
    for value in values:
        close = difflib.SequenceMatcher(None, _norm(value.text), _norm(expected)).ratio() >= 0.5
        if value.uncertain and close and f"{value.text} [OCR {value.confidence:.0f}% — uncertain" in text:
            return value
    return None


@pytest.mark.parametrize("name", [s.name for s in SPECIMENS])
def test_every_value_is_found_or_marked_uncertain_with_its_confidence(
    readings: tuple[SandboxFiles, dict[str, FileContent]], name: str
) -> None:
    content = readings[1][name]
    specimen: Specimen = BY_NAME[name]
    for expected in specimen.expected:
        value = _found_or_marked(content, expected)
        assert value is not None, (
            f"{name}: {expected!r} neither read nor marked uncertain:\n{content.full_text()}"
        )
        assert 0 < value.confidence <= 100
        assert f"{value.text} {value.confidence:.0f}%" in content.full_text()  # shown with the value


@pytest.mark.parametrize(
    "name", ["rotated", "faint", "photo", "two-column", "german", "boxed", "table", "narrow-columns"]
)
def test_damaged_and_laid_out_pages_read_their_values_as_printed(
    readings: tuple[SandboxFiles, dict[str, FileContent]], name: str
) -> None:
    values = {_norm(v.text) for v in _values(readings[1][name])}
    assert [e for e in BY_NAME[name].expected if _norm(e) not in values] == []


def test_a_two_column_header_keeps_its_columns_apart(
    readings: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    text = readings[1]["two-column"].full_text()
    assert "Bluebird Software SRL   Invoice number:" in text
    assert "SRL Invoice" not in text


def test_table_columns_found_from_word_boxes_stay_apart_however_narrow_the_gutter(
    readings: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    """A photographed item table and a two-column header with close columns: the first pass glued
    neighbouring columns ('Qty Unit', '250 pcs', 'Invoice number: BB-2291') and misread a quantity
    ('1:5'); the gutters found from the word boxes keep columns apart, and the column-by-column
    second pass reads the quantity."""
    table = readings[1]["table"].full_text()
    for row in (
        "Item   Qty   Unit   Price   Amount",
        "250   pcs   0.12",
        "1.5   t   38.00",
        "12   pr   2.10",
    ):
        assert row in table, f"{row!r} not in:\n{table}"
    header = readings[1]["narrow-columns"].full_text()
    for row in ("Invoice number:   BB-2291", "Date:   2026-11-03", "Cluj-Napoca 400001   Due:   2026-12-03"):
        assert row in header, f"{row!r} not in:\n{header}"
    assert "ACME SUPPLY DELIVERY NOTE" in table  # a title above the table is no part of it


def _row(top: int, cells: list[tuple[int, str]]) -> Line:
    """One line of words at these x positions (12 px a character, 30 px high)."""
    return Line(block=1, words=[Word(t, 90.0, x, top, 12 * len(t), 30) for x, t in cells])


def test_tables_are_found_from_word_boxes_and_prose_is_not_a_table() -> None:
    prose = [
        "Thank you for your order. The goods were shipped on Monday and",
        "should reach you by Friday; please check the delivery against",
        "the packing list and tell us of any damage within seven days.",
        "Payment is due thirty days after the date of this invoice.",
    ]
    rng, lines = random.Random(3), []
    for n, text in enumerate(prose):  # justified: the spaces between words vary from line to line
        x, cells = 40, []
        for word in text.split():
            cells.append((x, word))
            x += 12 * len(word) + rng.randint(8, 26)
        lines.append(_row(40 + 45 * n, cells))
    assert find_tables(lines) == []
    grid = [
        _row(300 + 45 * n, [(40, a), (400, b), (470, c)])
        for n, (a, b, c) in enumerate(
            [("Item", "Qty", "Unit"), ("Bolts", "250", "pcs"), ("Cable", "40", "m"), ("Sand", "1.5", "t")]
        )
    ]
    tables = find_tables(lines + grid)
    assert [t.rows for t in tables] == [[4, 5, 6, 7]] and len(tables[0].cuts) == 2
    mark_columns(lines + grid, tables)
    assert build(grid).text == "Item   Qty   Unit\nBolts   250   pcs\nCable   40   m\nSand   1.5   t"


def test_vat_id_and_iban_are_checked_by_their_checksums(
    readings: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    vat = next(v for v in _values(readings[1]["german"]) if v.text == "DE136695976")
    assert vat.check_status == "ok" and vat.check == "VAT id checksum ok"
    iban = _found_or_marked(readings[1]["iban"], "NL91 ABNA 0417 1643 00")
    assert iban is not None and (iban.check_status in ("ok", "corrected") or iban.uncertain)


def test_the_approval_note_and_reading_carry_the_value_confidence(
    readings: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    files, contents = readings
    uncertain = [v for content in contents.values() for v in _values(content) if v.uncertain]
    assert uncertain, "the small blurred IBAN specimen has values OCR is unsure of"
    for content in contents.values():  # what the agent was shown is what the approval knows
        files.provenance.record(content)
    value = min(uncertain, key=lambda v: v.confidence)
    reading = files.provenance.reading(value.text)
    assert reading is not None and reading.uncertain and reading.confidence == value.confidence
    note = files.provenance.flag(_Field(value.text)) or ""
    assert f"read by OCR, {value.confidence:.0f}% — uncertain" in note and ".png" in note
    sure = next(v for v in _values(contents["german"]) if v.text == "RE-2026-0412")
    assert f"read by OCR, {sure.confidence:.0f}% — check it" in (
        files.provenance.flag(_Field(sure.text)) or ""
    )


class _Field:
    def __init__(self, value: str) -> None:
        self.value = value


# ------------------------------------------------------------- values from tesseract's TSV


def _tsv(words: list[tuple[str, float]]) -> str:
    """One line of tesseract TSV with these words (as tesseract writes it)."""
    rows = ["level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"]
    x = 10
    for number, (text, conf) in enumerate(words, start=1):
        rows.append(f"5\t1\t1\t1\t1\t{number}\t{x}\t10\t{12 * len(text)}\t30\t{conf}\t{text}")
        x += 12 * len(text) + 12
    return "\n".join(rows)


def test_a_word_tesseract_is_unsure_of_is_kept_and_marked_not_dropped() -> None:
    words = [("IBAN:", 91.0), ("NL91", 13.0), ("ABNA", 88.0), ("0417", 90.0), ("1643", 92.0), ("00", 93.0)]
    result = build(parse_tsv(_tsv([*words, ("BIC:", 95.0), ("RABONL2U", 90.0)])))
    assert result.text == "IBAN: NL91 ABNA 0417 1643 00 [OCR 13%; IBAN checksum ok] BIC: RABONL2U"
    order = build(parse_tsv(_tsv([("Order", 95.0), ("SO-78139O", 22.0), ("~", 12.0)])))
    assert order.text == "Order SO-78139O [OCR 22% — uncertain]"  # the speck '~' goes, the value stays
    assert [(v.text, v.confidence, v.uncertain) for v in order.values] == [("SO-78139O", 22.0, True)]


def test_a_checksum_chooses_between_readings_and_flags_a_value_none_satisfies() -> None:
    misread = build(
        parse_tsv(
            _tsv(
                [("IBAN", 95.0), ("NL9I", 55.0), ("ABNA", 90.0), ("O417", 70.0), ("1643", 92.0), ("00", 93.0)]
            )
        )
    )
    value = misread.values[0]
    assert value.text == "NL91 ABNA 0417 1643 00" and value.read_as == "NL9I ABNA O417 1643 00"
    assert value.check_status == "corrected" and not value.uncertain and value.confidence == 55.0
    assert (
        "IBAN NL91 ABNA 0417 1643 00 [OCR 55%; IBAN checksum chose this reading of 'NL9IABNAO417164300']"
        in misread.text
    )
    wrong = build(
        parse_tsv(
            _tsv(
                [
                    ("IBAN", 95.0),
                    ("DE89", 93.0),
                    ("3704", 94.0),
                    ("0044", 95.0),
                    ("0532", 91.0),
                    ("0130", 92.0),
                    ("01", 90.0),
                ]
            )
        )
    )
    assert wrong.values[0].uncertain and wrong.values[0].check_status == "failed"
    assert "[OCR 90% — uncertain; fails the IBAN checksum" in wrong.text
    extra = build(
        parse_tsv(_tsv([("NL911", 47.0), ("ABNA", 90.0), ("0417", 27.0), ("1643", 94.0), ("00", 86.0)]))
    )
    assert [(v.text, v.confidence, v.check_status) for v in extra.values] == [
        ("NL91 ABNA 0417 1643 00", 27.0, "corrected")  # one value, its weakest word's confidence
    ]
    vat = build(parse_tsv(_tsv([("USt-IdNr.", 90.0), ("DE136695976", 80.0)])))
    assert vat.values[0].check == "VAT id checksum ok"


def test_checksums_where_defined_choose_readings_and_leave_bare_numbers_alone() -> None:
    """RF creditor references by their shape; card numbers, GTINs and ABA routing numbers only where a
    label names them (a bare run of digits — an account number, an order id — has no checksum)."""

    def line(*words: str, conf: float = 88.0) -> list[OcrValue]:
        return build(parse_tsv(_tsv([(w, conf) for w in words]))).values

    rf = line("Reference", "RF18", "539O", "0754", "7O34")
    assert [(v.text, v.check_status, v.uncertain) for v in rf] == [
        ("RF18 5390 0754 7034", "corrected", False)
    ]
    assert rf[0].read_as == "RF18 539O 0754 7O34"
    card = line("Visa", "4111", "1111", "1111", "111l")[0]
    assert card.text == "4111 1111 1111 1111" and card.check == (
        "card number checksum chose this reading of '411111111111111L'"
    )
    wrong = line("Card", "no.", "4111", "1111", "1111", "1112")[0]
    assert (
        wrong.uncertain
        and wrong.check_status == "failed"
        and "fails the card number checksum" in (wrong.check or "")
    )
    assert line("EAN:", "4006381333931")[0].check == "GTIN checksum ok"
    aba = line("ABA", "125000106", "Account", "ending", "4471")
    assert aba[0].check_status == "failed" and aba[1].check is None
    bare = line("Account", "no:", "5531", "0098", "7712", "4471")  # fails Luhn, but no label says card
    assert all(v.check is None and not v.uncertain for v in bare)
    assert line("Order", "RF-3305")[0].check is None  # an order id: its confidence is all there is


# ---------------------------------------------------------------- pictures without text


def test_pictures_without_text_are_not_sent_to_ocr(tmp_path: Path) -> None:
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    logo = Image.new("RGB", (320, 320), "white")
    ImageDraw.Draw(logo).ellipse((20, 20, 300, 300), fill=(200, 30, 40))
    ImageDraw.Draw(logo).rectangle((120, 120, 200, 200), fill="white")
    buffer = io.BytesIO()
    logo.save(buffer, format="PNG")
    pdf = FPDF()
    pdf.add_page()
    pdf.image(io.BytesIO(buffer.getvalue()), x=10, y=10, w=30)
    pdf.set_font("Helvetica", size=11)
    pdf.text(20, 60, "Invoice No. LG-1001   Total 99.00")
    (tmp_path / "logo.pdf").write_bytes(bytes(pdf.output()))
    (tmp_path / "logo.png").write_bytes(buffer.getvalue())
    files = SandboxFiles(tmp_path)
    page = files.read("logo.pdf").pages[0]
    assert "LG-1001" in page.text and not page.ocr and page.notes == []
    assert "no lines of text" in (files.read_file("logo.png").error or "")


# ------------------------------------------------------------------- the demo's scan and photo


@pytest.mark.parametrize("path", ["scans/SCAN_0001.pdf", "scans/IMG_20260926_0931.jpg"])
def test_the_demo_scan_and_photo_values_carry_their_confidence(
    inbox_files: SandboxFiles, ground_truth: GroundTruth, path: str
) -> None:
    doc = next(d for d in ground_truth.documents if d.path == path)
    content = inbox_files.read(path)
    for expected in (doc.number, doc.invoice_date_as_printed, doc.total_as_printed):
        value = _found_or_marked(content, str(expected))
        assert value is not None, f"{path}: {expected!r} neither read nor marked:\n{content.full_text()}"
        assert value.confidence > 0 and f"{value.text} {value.confidence:.0f}%" in content.full_text()
    reading = inbox_files.provenance.reading(str(doc.number))
    assert reading is not None and reading.path == path and reading.confidence > 0


def test_a_search_finds_the_value_not_its_confidence_list(
    readings: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    hits = readings[0].search("RE-2026-0412").hits
    assert [h.path for h in hits] == ["german.png"] and "Rechnungsnummer" in hits[0].line


def _scan_read(*values: tuple[str, float]) -> FileContent:
    """What a reader hands out for a scan: its OCR'd passage (as ``OcrPage.render`` writes it) and
    the values OCR read in it, each with its confidence."""
    lines = "\n".join(
        ["Rechnung Nr. RE-2026-0815", "IBAN DE89 3704 0044 0532 0130 00", "Betrag 1.234,50 EUR"]
    )
    text = f"{OCR_MARK} — scan, mean confidence 90% — check values against the image]\n{lines}\n[end of OCR text]"
    page = PageText(
        number=1,
        text=text,
        ocr=True,
        ocr_confidence=90,
        ocr_values=[OcrValue(text=t, confidence=c) for t, c in values],
    )
    return FileContent(path="scans/mueller.png", kind="image", size=1, pages=[page], sha256="0" * 64)


@pytest.mark.parametrize(
    ("entered", "confidence"),
    [
        ("RE20260815", 71),  # the invoice number with its hyphens left out
        ("re 2026 0815", 71),  # or re-spaced
        ("Invoice RE-2026-0815, paid in full", 71),  # written inside a longer field (a memo)
        ("DE89370400440532013000", 88),  # the IBAN run together
        ("Pay 1234.50 for the October delivery", None),  # an amount inside a sentence
    ],
)
def test_a_value_read_by_ocr_is_flagged_however_it_is_written_into_a_field(
    entered: str, confidence: int | None
) -> None:
    provenance = OcrProvenance()
    provenance.record(_scan_read(("RE-2026-0815", 71.0), ("DE89 3704 0044 0532 0130 00", 88.0)))
    note = provenance.flag(_Field(entered)) or ""
    assert "check it against the document (scans/mueller.png)" in note
    assert confidence is None or f"read by OCR, {confidence}%" in note


def test_other_values_are_not_flagged_as_read_by_ocr() -> None:
    provenance = OcrProvenance()
    provenance.record(_scan_read(("RE-2026-0815", 71.0)))
    for entered in ("RE-2026-0816", "12345.0", "12,345.0 EUR", "Invoice 2026", "Acme GmbH", "123450"):
        assert provenance.flag(_Field(entered)) is None, entered
