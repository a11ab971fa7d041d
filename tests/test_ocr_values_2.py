"""OCR values an approver can trust, part 2 (review 25): a credit note's bracketed amount keeps its
sign, space-grouped thousands are one value, an ambiguous date is flagged under both readings, and a
subtotal + tax that doesn't make the total marks the amounts uncertain.

Lines built from words are checked directly (fast); four small pictures rendered with the project's
rasteriser are OCR'd once for the module.
"""

from __future__ import annotations

import io

import pytest
from fixtures_documents import read_scans
from PIL import Image, ImageFilter

from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.models import FileContent, OcrValue
from taskcrew.tools.documents.ocrlines import TOTALS_MISMATCH, Line, Word, build, render_line
from taskcrew.tools.documents.provenance import shows_value
from taskcrew.tools.documents.specimens import Specimen


def _line(*words: tuple[str, float], block: int = 1) -> Line:
    line, left = Line(block=block), 10
    for text, conf in words:
        line.words.append(Word(text, conf, left, 10, 8 * len(text), 12))
        left += 8 * len(text) + 8
    return line


def _fax(im: Image.Image) -> Image.Image:
    im = im.filter(ImageFilter.GaussianBlur(0.9))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=30)
    buf.seek(0)
    return Image.open(buf).convert("L")


DOCS = {
    "credit-note": Specimen("credit-note", [(10, 15, "INITECH LLC  CREDIT NOTE"), (10, 30, "Credit note CN-7731"),
                            (10, 40, "Refers to invoice IN-77310"), (10, 50, "Amount credited (615.00) USD")], []),
    "space-grouped": Specimen("space-grouped", [(10, 15, "ACME GMBH  RECHNUNG"), (10, 30, "Rechnung Nr. AC-1182"),
                              (10, 40, "Gesamtbetrag 12 450,00 EUR")], []),
    "ambiguous-date": Specimen("ambiguous-date", [(10, 15, "BLUTH CO  INVOICE"), (10, 30, "Invoice No. BC-2291"),
                               (10, 40, "Invoice date 03/04/2026"), (10, 50, "Total 1,482.90")], []),
    # 9,412.35 + 1,788.35 = 11,200.70; the fax makes OCR read the subtotal without its ',' and '.'
    "totals": Specimen("totals", [(10, 15, "HOOLI XYZ GMBH  INVOICE"), (10, 28, "Invoice No. HX-40917"),
                                  (10, 37, "Date 2026-10-14"), (10, 50, "Subtotal"), (60, 50, "9,412.35 EUR"),
                                  (10, 59, "VAT 19%"), (60, 59, "1,788.35 EUR"), (10, 68, "TOTAL DUE"),
                                  (60, 68, "11,200.70 EUR")], [], dpi=110, size=9, damage=_fax),
}  # fmt: skip


class Field:
    def __init__(self, value: str) -> None:
        self.value = value


@pytest.fixture(scope="module")
def read(tmp_path_factory: pytest.TempPathFactory) -> tuple[SandboxFiles, dict[str, FileContent]]:
    return read_scans(tmp_path_factory.mktemp("ocr2"), DOCS)


def _values(content: FileContent) -> list[OcrValue]:
    return [v for page in content.pages for v in page.ocr_values]


# ----------------------------------------------------------------------------- 1. bracketed amounts


def test_a_bracketed_amount_keeps_its_brackets_as_its_sign() -> None:
    text, values = render_line(_line(("Amount", 95), ("credited", 95), ("(615.00)", 93), ("USD", 95)))
    assert [v.text for v in values] == ["(615.00)"]
    assert "(615.00)" in text
    _, values = render_line(_line(("see", 95), ("note", 95), ("(2),", 95)))
    assert [v.text for v in values] == ["2"]  # a footnote number is no amount: brackets trimmed as before


def test_a_bracketed_amount_does_not_match_the_positive_one() -> None:
    assert not shows_value("Amount credited (615.00) USD", "615.00")
    assert shows_value("Amount credited (615.00) USD", "-615.00")
    assert shows_value("Amount 615.00 USD", "615.00")


def test_digits_two_columns_apart_are_not_one_amount() -> None:
    """One space may group thousands; a wider gap or a tab is a column break (a quantity and a
    price), so 1234.56 is not shown where the page has a quantity of 1 and a price of 234.56."""
    for line in ("Widget   1   234.56 USD", "Widget\t1\t234.56", "Widget 1 \u00a0 234.56"):
        assert not shows_value(line, "1234.56") and not shows_value(line, "1,234.56 USD")
        assert shows_value(line, "234.56")
    assert shows_value("Total 1 234.56 USD", "1234.56") and shows_value("Total 1\u202f234,56", "1234.56")
    assert shows_value("Total:   1 234.56", "1,234.56")
    assert shows_value("IBAN DE89  3704 0044", "DE8937040044")  # not an amount: spacing is not read


def test_a_credit_note_read_by_ocr_keeps_its_sign_in_the_approval(read) -> None:
    files, contents = read
    content = contents["credit-note"]
    assert "(615.00)" in content.full_text()
    assert not any(v.summary().startswith("615.00 ") for v in _values(content))
    assert files.provenance.flag(Field("615.00")) is None
    reading = files.provenance.reading("-615.00")
    assert reading is not None and reading.text == "(615.00)"


# ---------------------------------------------------------------------------- 2. space-grouped amounts


def test_space_grouped_words_are_one_amount_at_the_weakest_confidence() -> None:
    _, values = render_line(_line(("Gesamtbetrag", 95), ("12", 71), ("450,00", 93), ("EUR", 95)))
    assert [(v.text, v.confidence) for v in values] == [("12 450,00", 71)]
    _, values = render_line(_line(("Total", 95), ("1", 90), ("234.50", 88)))
    assert [v.text for v in values] == ["1 234.50"]
    _, values = render_line(_line(("Total", 95), ("(1", 90), ("234.50)", 88)))
    assert [v.text for v in values] == ["(1 234.50)"]
    _, values = render_line(_line(("Invoice", 95), ("2026", 90), ("1,482.90", 88)))
    assert [v.text for v in values] == ["2026", "1,482.90"]  # not an amount together: apart


def test_a_space_grouped_amount_read_by_ocr_shows_its_confidence_in_the_approval(read) -> None:
    files, contents = read
    assert "12 450,00" in [v.text for v in _values(contents["space-grouped"])]
    reading = files.provenance.reading("12450.00")
    assert reading is not None and reading.text == "12 450,00"


# -------------------------------------------------------------------------------- 3. ambiguous dates


@pytest.mark.parametrize("entered", ["2026-03-04", "2026-04-03"])
def test_an_ambiguous_date_is_flagged_under_both_readings(read, entered) -> None:
    files, contents = read
    assert "03/04/2026" in contents["ambiguous-date"].full_text()
    note = files.provenance.flag(Field(entered))
    assert note is not None and "uncertain" in note and "day/month order ambiguous" in note


# ------------------------------------------------------------------------------------- 4. totals


def _totals(sub: str, tax: str, total: str) -> list[Line]:
    return [
        _line(("Subtotal", 95), (sub, 93), ("EUR", 95), block=1),
        _line(("VAT", 95), ("19%", 95), (tax, 93), ("EUR", 95), block=1),
        _line(("TOTAL", 95), ("DUE", 95), (total, 93), ("EUR", 95), block=1),
    ]


def test_totals_that_do_not_add_up_mark_their_amounts_uncertain() -> None:
    result = build(_totals("941235", "1,788.35", "11,200.70"))
    marked = {v.text: v.check for v in result.values if v.uncertain}
    assert marked == dict.fromkeys(["941235", "1,788.35", "11,200.70"], TOTALS_MISMATCH)
    assert "941235 [OCR 93% — uncertain; totals don't add up" in result.text
    assert not any(v.uncertain for v in build(_totals("9,412.35", "1,788.35", "11,200.70")).values)


def test_a_fax_quality_total_that_does_not_add_up_is_uncertain_in_the_approval(read) -> None:
    files, contents = read
    wrong = [
        v
        for v in _values(contents["totals"])
        if v.text in {"941235", "9412.35", "94123.5"} or "," not in v.text
    ]
    for value in wrong:
        if value.text.replace(",", "").replace(".", "").isdigit() and len(value.text) > 4:
            assert value.uncertain, contents["totals"].full_text()
    note = files.provenance.flag(Field("11200.70"))
    assert note is not None
    if any(v.check == TOTALS_MISMATCH for v in _values(contents["totals"])):
        assert "uncertain" in note
