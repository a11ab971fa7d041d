"""Red-team of values read from documents (review 3): a value shown to the approver as "from the
invoice" must be the whole value the invoice prints, and a value OCR read two ways must be flagged
whichever way it is entered.

- a truncated value (``234.56`` of ``1,234.56``, an IBAN cut at a group, ``IN-7731`` of
  ``IN-77310``) was traced to the invoice line that holds the longer number;
- an OCR'd amount whose one separator may group thousands or mark decimals (``2.500``, ``1,500``)
  reached the approval with no OCR note at all when entered as ``2500.00`` or ``2.50``;
- an ambiguous numeric date written with dashes (``03-04-2026``) was not flagged under either reading;
- a total labelled ``Gesamtbetrag inkl. MwSt`` was taken for a tax line, so totals that don't add up
  were not marked;
- the risk rules read ``12.500`` (EUR, twelve thousand five hundred) as 12.5: under the threshold.

Real files: a text PDF made with fpdf, pictures rendered with the project's rasteriser and read by
the real tesseract (once for the module). No model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_documents import read_scans

from taskcrew.approvals.rules import assess, load_rules
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import value_origin
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.models import FileContent, OcrValue
from taskcrew.tools.documents.ocrlines import TOTALS_MISMATCH, Line, Word, build
from taskcrew.tools.documents.provenance import AMBIGUOUS_AMOUNT, AMBIGUOUS_DATE
from taskcrew.tools.documents.specimens import Specimen


class Field:
    def __init__(self, value: str) -> None:
        self.value = value


def _values(content: FileContent) -> list[OcrValue]:
    return [v for page in content.pages for v in page.ocr_values]


# ----------------------------------------------- 1. where a value came from: the whole value only

INVOICE_LINES = [
    "Initech GmbH - Invoice IN-77310",
    "Invoice date 2026-10-12",
    "Total due 1,234.56 EUR",
    "IBAN DE89 3704 0044 0532 0130 00",
]


@pytest.fixture(scope="module")
def text_invoice(tmp_path_factory: pytest.TempPathFactory) -> tuple[SandboxFiles, str]:
    from fpdf import FPDF

    root = tmp_path_factory.mktemp("textpdf")
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for number, line in enumerate(INVOICE_LINES):
        pdf.text(20, 30 + 8 * number, line)
    (root / "invoices").mkdir()
    pdf.output(str(root / "invoices" / "inv.pdf"))
    return SandboxFiles(root), "invoices/inv.pdf"


def _origin(files: SandboxFiles, path: str, value: str, data: dict[str, str]) -> str:
    text = files.read(path).full_text()
    quotes = [line for line in text.splitlines() if line.strip() in INVOICE_LINES]
    assert len(quotes) == len(INVOICE_LINES), text  # the citations are real lines of the file
    report = StepReport(
        status="done",
        summary="Read the Initech invoice.",
        data=data,
        sources=[Citation(source=path, quote=q) for q in quotes],
    )

    def read(source: str) -> str | None:
        return files.read(source).full_text()

    return value_origin(value, [(1, "file_reader", report)], read)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("234.56", "amount"),  # '1,' lost: the tail of 1,234.56
        ("1234.5", "amount"),  # a digit lost: the head of 1234.56
        ("DE89 3704 0044 0532", "iban"),  # an IBAN cut after its fourth group
        ("IN-7731", "invoice_number"),  # the last digit of IN-77310 lost
        ("2026-10-1", "invoice_date"),  # the head of 2026-10-12
    ],
)
def test_a_truncated_value_is_not_traced_to_the_line_that_holds_the_longer_one(
    text_invoice: tuple[SandboxFiles, str], value: str, key: str
) -> None:
    files, path = text_invoice
    origin = _origin(files, path, value, {key: value})
    assert path not in origin, origin  # before: "invoices/inv.pdf, line 3 (cited in step 1)"
    assert origin == f"step 1 (file_reader) reported it as {key!r}"


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("1234.56", 3),
        ("1,234.56", 3),
        ("IN-77310", 1),
        ("DE89 3704 0044 0532 0130 00", 4),
        ("DE89370400440532013000", 4),
        ("2026-10-12", 2),
    ],
)
def test_the_whole_value_is_still_traced_to_its_line(
    text_invoice: tuple[SandboxFiles, str], value: str, line: int
) -> None:
    files, path = text_invoice
    origin = _origin(files, path, value, {"value": value})
    assert origin.startswith(f"{path}, line {line} (cited in step 1)"), origin


# ------------------------------------------------------- OCR'd pictures, read once for the module

DOCS = {
    "eu-whole": Specimen("eu-whole", [(10, 15, "GLOBEX AG  RECHNUNG"), (10, 30, "Rechnung Nr. GX-5581"),
                         (10, 40, "Gesamtbetrag 2.500 EUR")], []),
    "us-whole": Specimen("us-whole", [(10, 15, "GLOBEX INC  INVOICE"), (10, 30, "Invoice No. GX-5582"),
                         (10, 40, "Total due USD 1,500")], []),
    "dash-date": Specimen("dash-date", [(10, 15, "BLUTH CO  INVOICE"), (10, 30, "Invoice No. BC-2292"),
                          (10, 40, "Invoice date 03-04-2026"), (10, 50, "Total 1,482.90")], []),
    # 1.000,00 + 190,00 is 1.190,00, not the 1.900,00 printed (a typo, or OCR's misreading)
    "incl-vat": Specimen("incl-vat", [(10, 15, "HOOLI GMBH  RECHNUNG"), (10, 28, "Rechnung Nr. HX-40918"),
                         (10, 50, "Nettobetrag"), (70, 50, "1.000,00 EUR"), (10, 59, "MwSt 19%"),
                         (70, 59, "190,00 EUR"), (10, 68, "Gesamtbetrag inkl. MwSt"), (70, 68, "1.900,00 EUR")],
                         []),
}  # fmt: skip


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> tuple[SandboxFiles, dict[str, FileContent]]:
    return read_scans(tmp_path_factory.mktemp("redteam-scans"), DOCS)


# ----------------------------------------------- 2. an amount whose separator reads two ways


@pytest.mark.parametrize(
    ("doc", "printed", "entered"),
    [
        ("eu-whole", "2.500", "2500.00"),
        ("eu-whole", "2.500", "2.50"),
        ("eu-whole", "2.500", "2.500"),
        ("us-whole", "1,500", "1500.00"),
        ("us-whole", "1,500", "1.50"),
        ("us-whole", "1,500", "1500"),
    ],
)
def test_an_ocr_amount_whose_separator_reads_two_ways_is_flagged_under_both(
    scans: tuple[SandboxFiles, dict[str, FileContent]], doc: str, printed: str, entered: str
) -> None:
    files, contents = scans
    assert printed in [v.text for v in _values(contents[doc])], contents[doc].full_text()
    note = files.provenance.flag(Field(entered))
    assert note is not None, f"{entered!r} (read by OCR as {printed!r}) reached the approval unflagged"
    assert "uncertain" in note and AMBIGUOUS_AMOUNT in note and f"{doc}.png" in note


def test_an_unambiguous_ocr_amount_is_not_called_ambiguous(
    scans: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    files, _ = scans
    note = files.provenance.flag(Field("1482.90")) or ""
    assert note.startswith("read by OCR") and AMBIGUOUS_AMOUNT not in note and "uncertain" not in note


# ----------------------------------------------------------- 3. a dashed ambiguous date


@pytest.mark.parametrize("entered", ["2026-03-04", "2026-04-03"])
def test_a_dashed_ambiguous_date_is_flagged_under_both_readings(
    scans: tuple[SandboxFiles, dict[str, FileContent]], entered: str
) -> None:
    files, contents = scans
    assert "03-04-2026" in contents["dash-date"].full_text()
    note = files.provenance.flag(Field(entered))
    assert note is not None and "uncertain" in note and AMBIGUOUS_DATE in note


# -------------------------------------------------------- 4. a total labelled "incl. VAT"


def test_totals_labelled_incl_vat_that_do_not_add_up_are_uncertain(
    scans: tuple[SandboxFiles, dict[str, FileContent]],
) -> None:
    files, contents = scans
    content = contents["incl-vat"]
    total = next((v for v in _values(content) if v.text == "1.900,00"), None)
    assert total is not None, content.full_text()
    assert total.uncertain and total.check == TOTALS_MISMATCH, content.full_text()
    note = files.provenance.flag(Field("1900.00")) or ""
    assert "uncertain" in note and TOTALS_MISMATCH in note


def _line(*words: str) -> Line:
    line, left = Line(block=1), 10
    for text in words:
        line.words.append(Word(text, 93, left, 10, 8 * len(text), 12))
        left += 8 * len(text) + 8
    return line


@pytest.mark.parametrize(
    ("sub", "total"),
    [
        (("Total", "excl.", "VAT"), ("Total", "incl.", "VAT")),
        (("Nettobetrag",), ("Gesamtbetrag", "inkl.", "MwSt")),
        (("Subtotal",), ("Amount", "due", "including", "tax")),
    ],
)
def test_totals_labelled_with_the_tax_they_include_or_exclude_are_added_up(
    sub: tuple[str, ...], total: tuple[str, ...]
) -> None:
    def lines(total_amount: str) -> list[Line]:
        return [_line(*sub, "1,000.00"), _line("VAT", "19%", "190.00"), _line(*total, total_amount)]

    wrong = build(lines("1,900.00"))
    assert {v.text for v in wrong.values if v.check == TOTALS_MISMATCH} == {"1,000.00", "190.00", "1,900.00"}
    assert not any(v.uncertain for v in build(lines("1,190.00")).values)


# ------------------------------------------------- 5. the risk rules read grouped thousands


@pytest.mark.parametrize("amount", ["12.500", "12.500 EUR", "€ 6.000"])
def test_a_dot_grouped_amount_is_not_read_as_decimals_by_the_risk_rules(amount: str, tmp_path: Path) -> None:
    rules = load_rules()
    flags = assess([("amount", amount), ("currency", "EUR")], "http://erp/bills/new", rules)
    assert flags.needs_second_approver, f"{amount!r} EUR was read as a few euros: {flags}"
    assert [f.rule for f in flags.flags] == ["amount_above_threshold"]


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("1.500.000", "1500000"),  # was unreadable
        ("1,234,567", "1234567"),  # was 1234.567
        ("0,500", "0.500"),  # was 500
        ("1.234.567,89", "1234567.89"),
        ("1,234.56", "1234.56"),
        ("12,50", "12.50"),
    ],
)
def test_the_risk_rules_read_every_grouping_of_thousands_and_a_leading_zero_as_a_fraction(
    text: str, read: str
) -> None:
    from decimal import Decimal

    from taskcrew.approvals.rules import parse_amount

    assert parse_amount(text) == Decimal(read)


# ------------------------------------ 6. a cited file that does not show the value is not its origin


@pytest.mark.parametrize(
    ("value", "quote"),
    [
        ("9,234.56", "Total due 9,234.56 EUR"),  # a quote the model made up: the file says 1,234.56
        ("IN-77810", "Initech GmbH - Invoice IN-77810"),  # an O/0-style slip in the quote and the value
    ],
)
def test_a_value_the_cited_file_does_not_show_is_not_traced_to_that_file(
    text_invoice: tuple[SandboxFiles, str], value: str, quote: str
) -> None:
    files, path = text_invoice
    report = StepReport(
        status="done",
        summary="Read the Initech invoice.",
        data={"value": value},
        sources=[Citation(source=path, quote=quote)],
    )
    origin = value_origin(value, [(1, "file_reader", report)], lambda s: files.read(s).full_text())
    # before: "invoices/inv.pdf (cited in step 1)", as if the invoice printed it
    assert not origin.startswith(path), origin
    assert origin.startswith("step 1 (file_reader) reported it as 'value'")
    assert f"{path} does not show it" in origin
