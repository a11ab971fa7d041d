"""Values an approver is told were "checked by code" (review s41): a line shows an amount only with
its sign and currency, whatever dash or minus prints the sign; either reading of an ambiguous date or
amount, as the verifier reads them; a look-alike letter in an OCR'd amount keeps the value flagged;
two totals that differ are marked; and a date in the payment terms is the due date only when the
terms say so.

Lines built from words are checked directly (fast); a PDF with a typeset minus and a scan are read
with the project's own reader (pypdf, tesseract).
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from test_ocr_values_2 import _line

from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import value_origin
from taskcrew.jobs.human import trace as job_trace
from taskcrew.tools import ap
from taskcrew.tools.documents import SandboxFiles, ocrlines
from taskcrew.tools.documents.ocrlines import build, render_line
from taskcrew.tools.documents.provenance import shows_value
from taskcrew.tools.documents.specimens import Specimen


class Field:
    def __init__(self, value: str) -> None:
        self.value = value


# ------------------------------------------------------------------- 1. the sign and the currency


@pytest.mark.parametrize(
    "line",
    [
        "TOTAL -1,234.50 USD",
        "TOTAL \u22121,234.50 USD",  # a typeset minus sign
        "TOTAL \u20131,234.50 USD",  # an en dash
        "TOTAL \u20121,234.50 USD",  # a figure dash
        "TOTAL \ufe631,234.50 USD",  # a small hyphen-minus (NFKC)
        "TOTAL 1,234.50- USD",  # a trailing minus
        "- 1,234.50 USD",  # a minus set off by a space, no label before it ("TOTAL - 1,234.50": a separator)
        "TOTAL (1,234.50) USD",
    ],
)
def test_a_line_that_prints_an_amount_negative_does_not_show_the_positive_one(line: str) -> None:
    assert not shows_value(line, "1234.50") and not shows_value(line, "1,234.50 USD")
    assert shows_value(line, "-1234.50") and shows_value(line, "-1,234.50 USD")


def test_a_line_shows_an_amount_only_in_the_currency_it_states() -> None:
    assert not shows_value("Total EUR 1.234,50", "1234.50 USD")
    assert not shows_value("Total (EUR): 1.234,50", "1234.50 USD")  # the line's currency, apart
    assert shows_value("Total EUR 1.234,50", "1234.50 EUR") and shows_value("Total EUR 1.234,50", "1234.50")
    assert shows_value("Total 1.234,50", "1234.50 USD")  # no currency on the line: nothing to contradict
    assert shows_value("Total (EUR): 1.234,50", "1234.50 EUR")  # a bracketed currency is no minus sign


def test_a_line_shows_either_reading_the_verifier_accepts() -> None:
    assert shows_value("Invoice date 12/10/2026", "2026-10-12")
    assert shows_value("Invoice date 12/10/2026", "2026-12-10")
    assert not shows_value("Invoice date 12/10/2026", "2026-10-13")
    assert shows_value("Invoice date 2026-12-10", "12/10/2026")
    assert shows_value("Total 12.345", "12345.00") and shows_value("Total 12.345", "12.345")
    assert not shows_value("Total 12.345", "1234.50")


def test_what_a_line_showed_before_it_still_shows() -> None:
    assert shows_value("Total: 1,234.50.", "1234.50") and shows_value("Total:1,234.50", "1234.50")
    assert shows_value("Invoice #40917", "40917") and shows_value("Invoice No.40917", "40917")
    assert shows_value("USD1,234.50", "1234.50 USD") and shows_value("Terms Net 30", "30")
    assert not shows_value("Total 1,234.56", "234.56") and not shows_value("Invoice IN-77310", "IN-7731")


@pytest.fixture(scope="module")
def credit_note(tmp_path_factory: pytest.TempPathFactory) -> tuple[SandboxFiles, str]:
    from fpdf import FPDF

    root = tmp_path_factory.mktemp("credit")
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DejaVu", fname="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    pdf.set_font("DejaVu", size=12)
    for i, text in enumerate(
        ["NORTHWIND TRADERS   CREDIT NOTE", "Credit note NW-40917", "TOTAL \u22121,234.50 USD"]
    ):
        pdf.text(20, 20 + 10 * i, text)
    pdf.output(str(root / "credit.pdf"))
    return SandboxFiles(root), "credit.pdf"


def test_a_positive_amount_is_not_traced_to_the_line_of_a_credit_note(credit_note) -> None:
    files, path = credit_note
    text = files.read(path).full_text()
    assert "\u22121,234.50" in text  # the PDF's text layer keeps the typeset minus

    def read(source: str) -> str | None:
        return files.read(source).full_text()

    def report(amount: str) -> StepReport:
        quote = Citation(source=path, quote="TOTAL \u22121,234.50 USD")
        return StepReport(status="done", summary="Read it.", data={"amount": amount}, sources=[quote])

    wrong = value_origin("1234.50", [(1, "file_reader", report("1234.50"))], read)
    # the quoted line is named (crew.provenance: the line the step quoted), never as a clean origin
    assert wrong == f"{path}, line 3 (cited in step 1) — but line 3 shows it with a minus sign (a credit, not an amount owed?)", wrong  # fmt: skip
    right = value_origin("-1234.50", [(1, "file_reader", report("-1234.50"))], read)
    assert right.startswith(f"{path}, line 3"), right
    # the job's own account of where a submitted value came from (jobs.human) reads it alike
    done = {"index": 0, "role": "file_reader", "title": "Read it", "report": report("1234.50").model_dump()}
    said = job_trace({"state": {"steps_done": [done]}}, "task", "amount", "1234.50")[0]
    assert "no line it cited shows this value" in said and path not in said, said


# ----------------------------------------------------------------- 2. look-alike letters in OCR


def test_an_amount_or_date_with_a_look_alike_letter_is_marked_uncertain() -> None:
    text, values = render_line(_line(("TOTAL", 95), ("1,234.S0", 91), ("USD", 95)))
    assert values[0].uncertain and values[0].check == ocrlines.LOOKALIKE, values
    assert "1,234.S0 [OCR 91% — uncertain;" in text and "1,234.50" not in text  # not guessed for the model
    _, values = render_line(_line(("Date", 95), ("2O26-10-14", 93)))
    assert values[0].uncertain and values[0].check == ocrlines.LOOKALIKE
    _, values = render_line(_line(("Order", 95), ("SO-78139O", 93), ("12l", 93)))
    assert not any(v.uncertain for v in values)  # an identifier (or a unit) is no amount or date


def test_two_totals_that_differ_are_both_marked() -> None:
    lines = [
        _line(("Subtotal", 95), ("1,000.00", 95), block=1),
        _line(("VAT", 95), ("19%", 95), ("190.00", 95), block=1),
        _line(("Total", 95), ("1,190.00", 97), block=1),
        _line(("Amount", 95), ("due", 95), ("1,910.00", 96), ("USD", 95), block=1),
        _line(("Total", 95), ("items", 95), ("3", 95), block=1),  # a count, not a total
    ]
    marked = {v.text: v for v in build(lines).values}
    assert marked["1,190.00"].uncertain and marked["1,190.00"].check == ocrlines.TOTALS_DIFFER
    assert marked["1,910.00"].uncertain and marked["1,910.00"].check == ocrlines.TOTALS_DIFFER
    assert not marked["1,000.00"].uncertain and not marked["3"].uncertain
    same = [_line(("Total", 95), ("1,190.00", 97)), _line(("Amount", 95), ("due", 95), ("1,190.00", 96))]
    assert not any(v.uncertain for v in build(same).values)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract")
def test_an_amount_entered_corrected_from_a_look_alike_keeps_its_ocr_flag(tmp_path: Path) -> None:
    draw = [
        (10, 15, "NORTHWIND TRADERS  INVOICE"),
        (10, 30, "Invoice No. NW-40917"),
        (10, 40, "Date 2026-10-14"),
        (10, 60, "TOTAL DUE 1,234.S0 USD"),
    ]
    Specimen("nw", draw, []).render().save(tmp_path / "scan.png")
    files = SandboxFiles(tmp_path)
    content = files.read("scan.png")
    files.provenance.record(content)
    [value] = [v for page in content.pages for v in page.ocr_values if "234" in v.text]
    assert value.text == "1,234.S0" and value.uncertain, content.full_text()
    note = files.provenance.flag(Field("1234.50")) or ""
    assert "read by OCR" in note and "uncertain" in note and "scan.png" in note, note
    # the record a checkpoint keeps flags it too, in a resumed leg
    again = type(files.provenance)()
    again.restore(files.provenance.saved())
    assert "uncertain" in (again.flag(Field("1,234.50 USD")) or "")


# ---------------------------------------------------------------------- 3. a date in the terms


@pytest.mark.parametrize(
    "terms",
    [
        "30 days from delivery (delivered 2026-10-20)",  # the delivery date: the count's start unsaid
        "Net 30, due 2026-11-20",  # a due date its day count does not give: which one is meant is the document's
        "Skonto bis 24.10.2026",
        "Delivered 2026-10-20",
    ],
)
def test_a_date_the_terms_do_not_label_as_the_due_date_is_refused(terms: str) -> None:
    with pytest.raises(ap.APInputError, match="ask a human"):
        ap.due_date("2026-10-14", terms)


@pytest.mark.parametrize(
    ("terms", "due"),
    [
        ("2% 10 Net 30 (discount until 2026-10-24)", date(2026, 11, 13)),  # the discount's deadline, not due
        ("2% if paid by 2026-10-24, net 30", date(2026, 11, 13)),
        ("Net 30, due 2026-11-13", date(2026, 11, 13)),  # a due date its day count gives too
        ("Zahlbar innerhalb 14 Tagen bis 28.10.2026", date(2026, 10, 28)),  # the date the count gives
        ("Net 30 from 2026-10-20", date(2026, 11, 19)),
        ("Payable 30 days from 2026-10-14", date(2026, 11, 13)),
        ("30 Tage ab 20.10.2026", date(2026, 11, 19)),
    ],
)
def test_a_day_count_gives_the_due_date_where_a_date_does_not_say_otherwise(terms: str, due: date) -> None:
    result = ap.due_date("2026-10-14", terms)
    assert (result.due_date, result.rule) == (due, "net_days")
    assert "printed" not in result.derivation and due.isoformat() in result.derivation


@pytest.mark.parametrize(
    "terms",
    [
        "Due date: 2026-11-20",
        "Payment due by November 20, 2026",
        "payable before 2026-11-20",
        "zahlbar bis 20.11.2026 ohne Abzug",
        "fällig am 20.11.2026",
        "Échéance le 20 novembre 2026",
    ],
)
def test_a_date_labelled_as_the_due_date_is_the_due_date(terms: str) -> None:
    result = ap.due_date("2026-10-14", terms)
    assert (result.due_date, result.rule) == (date(2026, 11, 20), "explicit_date")
    assert result.derivation.startswith("due date printed in the terms: 2026-11-20")
