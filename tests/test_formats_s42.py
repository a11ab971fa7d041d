"""Honest formats a run's values are traced to (review s42): the approval names "file, line N" for a
value only when code finds it on that line (``tools.documents.provenance.shows_value``, reading
amounts and dates with ``tools.ap``). Honest documents wrote them in ways that were not traced, were
read as a credit, or were refused:

1. an amount in brackets in prose ("(invoice NW-40917: 412.50 USD)") was read as negative: brackets are
   the accounting minus only around the amount alone, with its currency (``ap.NEGATIVE_IN_BRACKETS``,
   one rule for parse_amount, the OCR'd lines and the trace; s43: the currency before or after);
2. typographic forms: "CHF 1’329.63", dot leaders, "1.234,- €", a two-digit year "28.10.26";
3. currencies: "A$", "CA$", "HK$", "R$", "₪", RON, TRY … (and "A$ 1,234.50" was traced as USD);
4. due-date phrasings: "bis zum …", "Payment deadline: …", "Vervaldatum: …", "À régler avant le …",
   a discount with its day count first ("14 Tage 2% Skonto, 30 Tage netto").
"""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest
from fpdf import FPDF
from test_ocr_values_2 import _line

from taskcrew.crew.evidence import plain
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import value_origin
from taskcrew.jobs.human import trace as job_trace
from taskcrew.tools import ap
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.ocrlines import render_line
from taskcrew.tools.documents.provenance import shows_value

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _origin(files: SandboxFiles, path: str, quote: str, value: str) -> tuple[str, str]:
    """Where the approval (crew.provenance) and the job's account (jobs.human) say a value came from."""
    report = StepReport(status="done", summary="Read it.", data={"amount": value},
                        sources=[Citation(source=path, quote=quote)])  # fmt: skip
    origin = value_origin(value, [(1, "file_reader", report)], lambda s: files.read(s).full_text())
    done = {"index": 0, "role": "file_reader", "title": "Read it", "report": report.model_dump()}
    said = job_trace({"state": {"steps_done": [done]}}, "task", "amount", value)[0]
    return origin, said


def _pdf(tmp_path: Path, lines: list[str]) -> SandboxFiles:
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DV", "", DEJAVU)
    pdf.set_font("DV", size=11)
    for i, line in enumerate(lines):
        pdf.text(20, 20 + 8 * i, line)
    pdf.output(str(tmp_path / "invoice.pdf"))
    return SandboxFiles(tmp_path)


# ------------------------------------------------------------------------ 1. brackets in prose


def test_an_amount_in_brackets_in_an_email_sentence_is_traced_not_called_a_credit(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["From"] = "billing@northwind.example"
    msg["To"] = "ap@acme.example"
    msg["Subject"] = "Invoice NW-40917"
    msg["Date"] = "Mon, 12 Oct 2026 09:00:00 +0000"
    msg.set_content(
        "Dear Acme,\n\nplease find attached (invoice NW-40917: 412.50 USD), due 2026-11-12.\n"
        "The amount is 832,05 \u20ac (after the early-payment discount).\n"
        "Our credit note CN-88 is for (19,90 USD).\n\nKind regards"
    )
    (tmp_path / "mail.eml").write_bytes(bytes(msg))
    files = SandboxFiles(tmp_path)
    for quote, value in [
        ("please find attached (invoice NW-40917: 412.50 USD), due 2026-11-12.", "412.50"),
        ("The amount is 832,05 \u20ac (after the early-payment discount).", "832.05"),
    ]:
        origin, said = _origin(files, "mail.eml", quote, value)
        assert origin.startswith("mail.eml, line") and "minus" not in origin, origin
        assert "no line it cited" not in said, said
    # brackets around the amount and its currency alone are the accounting minus, wherever the
    # currency stands (s43: "(1.234,50 \u20ac)" on a European credit note)
    origin, _ = _origin(files, "mail.eml", "Our credit note CN-88 is for (19,90 USD).", "19.90")
    assert "minus sign" in origin, origin


@pytest.mark.parametrize(
    ("text", "negative"),
    [
        ("(615.00)", True),
        ("($615.00)", True),
        ("(USD 615.00)", True),
        ("USD (615.00)", True),
        ("(615.00) USD", True),
        ("(1,234,567)", True),  # grouped thousands, no cents
        ("(615.00 USD)", True),  # the currency after the number, inside: a credit too (s43)
        ("(832,05 \u20ac)", True),
        ("(4471)", False),  # a reference's number, as the OCR'd lines always read it
    ],
)
def test_one_rule_for_brackets_in_parse_amount_the_ocr_lines_and_the_trace(text: str, negative: bool) -> None:
    assert (ap.parse_amount(text).value < 0) is negative, ap.parse_amount(text)
    line = f"Credit {text}"
    number = str(abs(ap.parse_amount(text).value))
    assert shows_value(line, f"-{number}") is negative and shows_value(line, number) is not negative
    words = [(word, 95) for word in line.split()]
    _, values = render_line(_line(*words))
    assert values[-1].text.startswith("(") is negative, values  # the brackets belong to the value


def test_a_credit_note_total_in_brackets_still_warns() -> None:
    files_line = "TOTAL (1,234.50) USD"
    report = StepReport(status="done", summary="Read it.", data={"amount": "1234.50"},
                        sources=[Citation(source="credit.pdf", quote=files_line)])  # fmt: skip
    text = "NORTHWIND TRADERS   CREDIT NOTE\n" + files_line
    origin = value_origin("1234.50", [(1, "file_reader", report)], lambda _s: text)
    # the quoted line is named, with the sign it shows (crew.provenance: the file's sign, not the quote's)
    assert origin.startswith("credit.pdf, line 2") and "line 2 shows it with a minus sign" in origin, origin


# ------------------------------------------------------------------------ 2. typographic forms


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("Total CHF 1\u2019329.63", "1329.63"),  # Swiss typographic apostrophe
        ("Total CHF 1\u02bc329.63", "1329.63"),  # modifier letter apostrophe
        ("Total CHF 1\u2032329.63", "1329.63"),  # prime
        ("Total amount due.........1,234.50 USD", "1234.50"),  # dot leaders
        ("Total amount due \u2026\u2026 1,234.50 USD", "1234.50"),  # leaders as ellipses
        ("Gesamtbetrag 1.234,- \u20ac", "1234.00"),  # a whole-euro amount
        ("Gesamtbetrag 1.234,\u2014 \u20ac", "1234.00"),
        ("F\u00e4llig am 28.10.26", "2026-10-28"),  # a two-digit year
    ],
)
def test_an_honest_value_is_traced_to_its_line(tmp_path: Path, line: str, value: str) -> None:
    files = _pdf(tmp_path, ["Muster AG   Rechnung RE-2026-0042", line])
    origin, said = _origin(files, "invoice.pdf", line, value)
    assert origin.startswith("invoice.pdf, line 2"), origin
    assert "no line it cited" not in said, said


def test_the_typographic_forms_read_as_their_plain_ones() -> None:
    assert ap.parse_amount("1\u2019329.63 CHF").value == ap.parse_amount("1'329.63 CHF").value
    assert ap.parse_amount("Fr 1'234.\u2013".removeprefix("Fr ")).plain == "1234.00"
    assert ap.parse_amount("1.234,-").plain == "1234.00" and ap.parse_amount("1.234,00-").plain == "-1234.00"
    assert ap.due_date("2026-09-28", "F\u00e4llig am 28.10.26").due_date.isoformat() == "2026-10-28"
    assert "CHF 1'329.63" in plain("CHF 1\u2019329.63")  # the verifier reads it alike


def test_what_is_no_two_digit_year_or_leader_amount_stays_so() -> None:
    assert ap.find_dates("version v1.10.26, host 192.168.10.26, 12.34.56") == []
    assert not shows_value("Item 1.......234.50", "1234.50")  # leaders are a gap, not a grouping space
    assert shows_value("Item 1.......234.50", "234.50")


# ------------------------------------------------------------------------------ 3. currencies


@pytest.mark.parametrize(
    ("text", "value", "currency"),
    [
        ("A$1,234.50", "1234.50", "AUD"),
        ("AU$ 1,234.50", "1234.50", "AUD"),
        ("CA$1,234.50", "1234.50", "CAD"),
        ("C$1,234.50", "1234.50", "CAD"),
        ("HK$1,234.50", "1234.50", "HKD"),
        ("NZ$1,234.50", "1234.50", "NZD"),
        ("S$1,234.50", "1234.50", "SGD"),
        ("R$ 1.234,56", "1234.56", "BRL"),
        ("\u20aa1,234.50", "1234.50", "ILS"),
        ("1.234,56 RON", "1234.56", "RON"),
        ("1.234,56 TRY", "1234.56", "TRY"),
        ("1,234.50 ILS", "1234.50", "ILS"),
        ("KRW 1,234,500", "1234500", "KRW"),
        ("$1,234.50", "1234.50", "USD"),
        ("US$1,234.50", "1234.50", "USD"),
    ],
)
def test_parse_amount_reads_the_currencies_of_iso_4217_and_the_dollar_family(
    text: str, value: str, currency: str
) -> None:
    parsed = ap.parse_amount(text)
    assert (str(parsed.value), parsed.currency) == (value, currency), parsed


def test_a_dollar_with_a_country_prefix_is_never_a_us_dollar() -> None:
    for line, code in [("Total due: A$ 1,234.50", "AUD"), ("Total due: HK$1,234.50", "HKD")]:
        assert shows_value(line, f"1234.50 {code}"), line
        assert not shows_value(line, "1234.50 USD"), line
        assert ap.currencies_in(line) == {code}
    with pytest.raises(ap.APInputError, match="not an amount"):
        ap.parse_amount("ZZ$ 1,234.50")  # an unknown dollar is refused, not read as USD


def test_a_code_that_is_also_a_word_names_a_currency_only_against_an_amount() -> None:
    assert ap.currencies_in("TOTAL FOR ALL ITEMS 1,234.50") == set()
    assert shows_value("TOTAL FOR ALL ITEMS 1,234.50", "1234.50 USD")
    with pytest.raises(ap.APInputError, match="contains the word 'try'"):
        ap.parse_amount("1,234.50 try")


# -------------------------------------------------------------------------- 4. due-date phrasings


@pytest.mark.parametrize(
    "terms",
    [
        "Bitte \u00fcberweisen Sie den Betrag bis zum 28.10.2026.",
        "Zahlungsbedingungen: 14 Tage 2% Skonto, 30 Tage netto",
        "Payment deadline: 28.10.2026",
        "Payment must be received by 28.10.2026",
        "Vervaldatum: 28-10-2026",
        "Te betalen v\u00f3\u00f3r 28-10-2026",
        "\u00c0 r\u00e9gler avant le 28/10/2026",
        "Pagar antes del 28/10/2026",
        "Pagamento entro il 28/10/2026",
        "Zahlungsfrist: 28.10.2026",
    ],
)
def test_due_date_reads_common_invoice_phrasings(terms: str) -> None:
    assert ap.due_date("2026-09-28", terms).due_date.isoformat() == "2026-10-28"


@pytest.mark.parametrize(
    "terms",
    [
        "Payment terms: goods delivered by 28.10.2026",  # a delivery date in a clause about paying
        "Delivery deadline: 28.10.2026",
        "Please pay the invoice dated 28.10.2026",
        "Paid on 28.10.2026",
        "Skonto bis 28.10.2026",
    ],
)
def test_a_date_no_label_says_is_due_is_still_refused(terms: str) -> None:
    with pytest.raises(ap.APInputError, match="ask a human"):
        ap.due_date("2026-09-28", terms)


def test_a_rate_after_a_day_count_is_a_discount_only_when_called_one() -> None:
    result = ap.due_date("2026-09-28", "Zahlungsbedingungen: 14 Tage 2% Skonto, 30 Tage netto")
    assert result.note and "2%" in result.note and "14 days" in result.note
    late = ap.due_date("2026-09-28", "Net 30 days 1.5% interest on overdue amounts")
    assert late.due_date.isoformat() == "2026-10-28" and late.note is None
