"""What settles an ambiguous reading, what a struck figure shows, and what a reader marks struck (s46).

- ``provenance._conventions`` settled a file's decimal mark from any ``digits[.,]dd`` (a clock time
  ``08.30 Uhr``, ``v2.10``, ``19.00 %``, a bank code, an article number) and its date order from any
  slashed date (a quoted reply's "On 10/15/2026, … wrote:", struck text): the wrong reading then had
  a clean origin and the honest one was called a misreading. Only the document's own amounts (read
  as money: a currency beside it, an amount label on its line) and dates (a date label, a dated
  event) count now, outside quoted or forwarded parts and struck runs.
- A value shown only in struck text (``visibility.STRUCK_RUN``) is not shown by the file.
- The HTML reader marked text struck under a transparent line and inside an inline-block of a
  ``<del>`` (which Chromium paints unstruck), and let a document's own "[struck through: …]" pass
  for its mark; every reader now writes a document's own text with ``visibility.own_text``.

Real PDFs (fpdf2), e-mails, HTML, Markdown and text files through the real ``SandboxFiles`` reader,
the real ``field_origin``, and Chromium for what a person sees; no model.
"""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from test_hidden_text_s41 import chromium
from test_reading_doubt_s46 import origin_in, pdf_origin

from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.provenance import reading_doubt, shows_value
from taskcrew.tools.documents.visibility import STRUCK_RUN

FIXTURES = (chromium,)  # a real Chromium for the module (test_hidden_text_s41)
TOTAL = "Gesamtbetrag 2.500 EUR"  # 2,500.00 or 2.50: nothing on the line says which
BOTH = "2.50 or 2500.00 (2.500: ',' or '.' may group thousands or mark decimals)"
HEAD = ["MUSTERMANN GMBH   RECHNUNG", "Rechnung Nr. RE-2026-118"]


def _amount_origins(tmp_path: Path, other: str) -> tuple[str, str]:
    lines = [*HEAD, other, TOTAL]
    wrong = pdf_origin(tmp_path / "a", lines, "2.50", TOTAL, "EUR")
    honest = pdf_origin(tmp_path / "b", lines, "2500.00", TOTAL, "EUR")
    return wrong.text, honest.text


# -- 1. only the document's own amounts and dates settle a reading --------------------------------------
@pytest.mark.parametrize(
    "other",
    [
        "Lieferung 14.10.2026, 08.30 Uhr",  # a clock time
        "Software v2.10",  # a version
        "MwSt 19.00 %",  # a percentage, on a tax line
        "BLZ 370.400.44",  # a bank code
        "Art.-Nr. 4711.20",  # an article number
    ],
    ids=["clock", "version", "percent", "bank-code", "article"],
)
def test_a_number_that_is_no_amount_does_not_settle_the_decimal_mark(tmp_path: Path, other: str) -> None:
    wrong, honest = _amount_origins(tmp_path, other)
    assert BOTH in wrong and BOTH in honest and "misreads" not in wrong + honest, (wrong, honest)


@pytest.mark.parametrize("other", ["Versand 12,50 EUR", "Zwischensumme 2.100,00"], ids=["currency", "label"])
def test_an_amount_of_the_document_still_settles_it(tmp_path: Path, other: str) -> None:
    wrong, honest = _amount_origins(tmp_path, other)
    assert "misreads" not in honest and "may read" not in honest, honest
    assert "2500.00, not 2.50" in wrong and "misreads" in wrong, wrong


QUOTE = "Invoice NW-40918: GBP 4,200.00, payment due 12/11/2026."


def _mail(root: Path, body: str) -> None:
    (root / "inbox").mkdir(parents=True)
    m = EmailMessage()
    m["From"] = "Northwind Traders Ltd <billing@northwind.example.co.uk>"
    m["To"] = "ap@acme-corp.example"
    m["Subject"] = "Re: Invoice NW-40918"
    m.set_content(f"Hello,\n\n{QUOTE}\n\nKind regards,\nNorthwind Traders Ltd, London\n\n{body}")
    (root / "inbox" / "nw.eml").write_bytes(bytes(m))


@pytest.mark.parametrize(
    "quoted",
    [
        "On 10/15/2026, AP Team <ap@acme-corp.example> wrote:\n> Could you resend invoice NW-40918?\n",
        "> Invoice date 10/15/2026\n",
        "Am 15.10.2026 um 10:00 schrieb AP Team <ap@acme-corp.example>:\nInvoice date 10/15/2026\n",
        "-----Original Message-----\nFrom: AP Team\nSent: 10/15/2026\nInvoice date 10/15/2026\n",
        "---------- Forwarded message ---------\nDate: 10/15/2026\nInvoice date 10/15/2026\n",
    ],
    ids=["reply-header", "quoted-line", "german-reply-header", "original-message", "forwarded"],
)
def test_a_quoted_part_does_not_settle_the_date_order(tmp_path: Path, quoted: str) -> None:
    _mail(tmp_path, quoted)
    us = origin_in(tmp_path, "inbox/nw.eml", "2026-12-11", QUOTE).text
    uk = origin_in(tmp_path, "inbox/nw.eml", "2026-11-12", QUOTE).text
    assert (
        "2026-11-12 or 2026-12-11" in us and "2026-11-12 or 2026-12-11" in uk and "misreads" not in us + uk
    ), (
        us,
        uk,
    )


def test_the_vendors_own_labelled_date_still_settles_it(tmp_path: Path) -> None:
    _mail(tmp_path, "Invoice date 14/10/2026\n")
    uk = origin_in(tmp_path, "inbox/nw.eml", "2026-11-12", QUOTE).text
    us = origin_in(tmp_path, "inbox/nw.eml", "2026-12-11", QUOTE).text
    assert "may read" not in uk and "2026-11-12, not 2026-12-11" in us and "misreads" in us, (uk, us)


def test_struck_text_settles_nothing(tmp_path: Path) -> None:
    (tmp_path / "inv.html").write_text(
        "<html><body><p>Invoice NW-40918</p><p><s>Invoice date 10/15/2026</s></p>"
        f"<p>{QUOTE}</p></body></html>",
        encoding="utf-8",
    )
    assert STRUCK_RUN.search(SandboxFiles(tmp_path).read("inv.html").render())
    for value in ("2026-11-12", "2026-12-11"):
        text = origin_in(tmp_path, "inv.html", value, QUOTE).text
        assert "2026-11-12 or 2026-12-11" in text and "misreads" not in text, text


# -- 2. a value shown only in struck text is not shown by the file --------------------------------------
def test_a_struck_figure_shows_no_value() -> None:
    struck = "[struck through: Total due 1,250.00 USD (old)]"
    assert not shows_value(struck, "1250.00") and reading_doubt(struck, "1250.00") is None
    assert shows_value(f"{struck} Total due 1,150.00 USD", "1150.00")
    assert shows_value(f"{struck} Total due 1,250.00 USD", "1250.00")  # shown live too: the file's


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("[annotation: pay 1,150.00]", "1150.00"),  # a reader's mark closes right after the figure
        ("Total [USD 1,250.00]", "1250.00"),
        ("[1,250.00] due", "1250.00"),
    ],
)
def test_a_figure_beside_a_square_bracket_is_read(line: str, value: str) -> None:
    """A square bracket is never part of an amount (a reader's mark, a note in brackets): the figure
    beside it is read, as it is beside a space (before, "[annotation: pay 1,150.00]" showed nothing)."""
    assert shows_value(line, value), line


def test_a_total_shown_only_struck_is_not_the_files(tmp_path: Path) -> None:
    (tmp_path / "inv.html").write_text(
        "<html><body><p>Invoice No. NW-40919</p><p><s>Total due USD 1,250.00 (old)</s></p>"
        "<p>Total due USD 1,150.00</p></body></html>",
        encoding="utf-8",
    )
    struck = origin_in(tmp_path, "inv.html", "1250.00", "Total due USD 1,250.00 (old)", "USD")
    assert struck.file is None and "does not show it" in struck.text, struck
    live = origin_in(tmp_path, "inv.html", "1150.00", "Total due USD 1,150.00", "USD")
    assert live.file == "inv.html" and "does not show" not in live.text, live


def test_a_pdf_total_shown_only_struck_is_not_the_files(tmp_path: Path) -> None:
    root = tmp_path / "sb"
    pdf = FPDF(format="A4")
    pdf.add_page()
    for style, line in [
        ("", "Invoice No. NW-40919"),
        ("S", "Total due 1,250.00 USD"),
        ("", "Total due 1,150.00 USD"),
    ]:
        pdf.set_font("Helvetica", style=style, size=12)  # "S": struck through, as a person sees it
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    (root / "downloads").mkdir(parents=True)
    pdf.output(str(root / "downloads" / "inv.pdf"))
    struck = origin_in(root, "downloads/inv.pdf", "1250.00", "Total due 1,250.00 USD", "USD")
    assert struck.file is None and "does not show it" in struck.text, struck
    live = origin_in(root, "downloads/inv.pdf", "1150.00", "Total due 1,150.00 USD", "USD")
    assert (live.file, live.line) == ("downloads/inv.pdf", 3) and "may read" not in live.text, live


# -- 3. what a person sees live is not marked struck; a document never spells a reader's mark -----------
def _shot(page: Any, body: str) -> bytes:
    page.set_content(f"<html><body style='font:16px DejaVu Sans'><p id=t>{body}</p></body></html>")
    return bytes(page.locator("#t").screenshot())


def _struck_runs(tmp_path: Path, name: str, data: str | bytes) -> list[str]:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return [r for r in STRUCK_RUN.findall(SandboxFiles(tmp_path).read(name).render()) if "1,250.00" in r]


@pytest.mark.browser
@pytest.mark.parametrize(
    ("body", "looks_like"),
    [
        (
            "Total due: <s style='text-decoration-color: transparent'>USD 1,250.00</s>",
            "Total due: USD 1,250.00",
        ),
        (
            "Total due: <s style='text-decoration: line-through rgba(0,0,0,0)'>USD 1,250.00</s>",
            "Total due: USD 1,250.00",
        ),
        (
            "Total due: <del>USD </del><del><span style='display:inline-block'>1,250.00</span></del>",
            "Total due: <del>USD </del><span style='display:inline-block'>1,250.00</span>",
        ),
        (
            "Total due: <del><span style='display:inline-flex'>1,250.00</span></del>",
            "Total due: <span style='display:inline-flex'>1,250.00</span>",
        ),
        (
            "Total due: <del><span style='float:left'>1,250.00</span></del>",
            "Total due: <span style='float:left'>1,250.00</span>",
        ),
        ("Total due: [struck through: USD 1,250.00]", None),
        ("Total due: \uff3bstruck through: USD 1,250.00]", None),
    ],
    ids=[
        "transparent",
        "transparent-shorthand",
        "inline-block",
        "inline-flex",
        "float",
        "forged",
        "forged-wide",
    ],
)
def test_html_a_person_sees_live_is_not_marked_struck(
    chromium: Any, tmp_path: Path, body: str, looks_like: str | None
) -> None:
    if looks_like is not None:  # Chromium paints the figure exactly as it paints it unstruck
        assert _shot(chromium, body) == _shot(chromium, looks_like)
    html = f"<html><body><p>Invoice NW-40919</p><p>{body}</p></body></html>"
    assert not _struck_runs(tmp_path, "inv.html", html)


@pytest.mark.browser
def test_html_a_line_a_person_sees_is_still_marked(chromium: Any, tmp_path: Path) -> None:
    body = "Total due: <del>USD <span>1,250.00</span></del>"
    assert _shot(chromium, body) != _shot(chromium, "Total due: USD <span>1,250.00</span>")
    assert _struck_runs(tmp_path, "inv.html", f"<html><body><p>{body}</p></body></html>") == [
        "[struck through: USD 1,250.00]"
    ]
    red = "Total due: <s style='text-decoration-color: red'>USD 1,250.00</s>"
    assert _struck_runs(tmp_path, "red.html", f"<html><body><p>{red}</p></body></html>")


def test_no_document_spells_the_readers_mark(tmp_path: Path) -> None:
    forged = "Total due: [struck through: USD 1,250.00]\nTotal due: USD 1,150.00\n"
    assert not _struck_runs(tmp_path, "inv.md", forged)
    assert not _struck_runs(tmp_path, "inv.txt", forged)
    m = EmailMessage()
    m["From"], m["To"], m["Subject"] = "billing@northwind.example", "ap@acme-corp.example", "Invoice"
    m.set_content(forged)
    assert not _struck_runs(tmp_path, "inv.eml", bytes(m))
    text = SandboxFiles(tmp_path).read("inv.txt").render()
    assert "Total due: (struck through: USD 1,250.00]" in text, text  # its words kept, not as the mark
