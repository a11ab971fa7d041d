"""What the approval says of a document's words (review s47, docwords):

1. The reading rules ``tools/documents/provenance.py`` shares with the invoice readers are public
   names of their modules (``evidence.AMOUNT_LABEL``, ``evidence.DATE_LABEL``, ``ap.DATE_WORD``,
   ``ap.EVENT_WORD``, ``ap.DUE_LABEL``): no module of these reads another's private name.
2. A credit note that prints its total positive under its title ("CREDIT NOTE", "Credit memo",
   "Gutschrift", "Avoir", "Nota de crédito") is named with the same warning as a minus-signed total
   (``crew.provenance._credit``, the one rule; ``credit_heading`` reads the title): "line N calls the
   document a credit note (a credit, not an amount owed?)". Prose that mentions a credit note, and a
   credit note attached to or quoted in an e-mail, title nothing else.
3. A quote the file holds at several places (the figure alone, "950.00", on a credit limit's line
   and the total's) does not say which line it means: the origin names them all, as ambiguous, and
   no one line.
4. An HTML e-mail's quoted reply (``<blockquote>``, Gmail's ``gmail_quote``, Outlook's
   ``divRplyFwdMsg`` and its "From: … Sent: …" header) is read as quoted, as "On … wrote:" is: the
   HTML reader writes it after "> ", and figures only in it settle nothing of the e-mail's own.

Real PDFs (fpdf2), real e-mails read by the real reader: nothing is faked here.
"""

from __future__ import annotations

import ast
from email.message import EmailMessage
from pathlib import Path

import pytest
from fpdf import FPDF

from taskcrew.approvals.origins import origins
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import field_origin
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.provenance import reading_doubt
from taskcrew.tools.human import ApprovalRequest, FieldValue, ValueOrigin

ROOT = Path(__file__).resolve().parents[1]
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
MINUS = "shows it with a minus sign (a credit, not an amount owed?)"
TITLED = "calls the document a credit note (a credit, not an amount owed?)"
AMBIGUOUS = (
    "ambiguous: the step's quote is on each of these lines, so which one it means is not known: check it"
)


def _pdf(path: Path, lines: list[str]) -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DV", "", DEJAVU)
    pdf.set_font("DV", size=11)
    for i, line in enumerate(lines):
        pdf.text(20, 20 + 8 * i, line)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path.read_bytes()


def _origin(
    files: SandboxFiles, path: str, quote: str, value: str, currency: str | None = None
) -> ValueOrigin:
    """Where the approval says ``value`` came from when a step read it in ``path``, quoting ``quote``."""
    report = StepReport(status="done", summary="Read it.", data={"amount": value},
                        sources=[Citation(source=path, quote=quote)])  # fmt: skip
    return field_origin(
        value, [(1, "file_reader", report)], lambda s: files.read(s).full_text(), currency=currency
    )


def _line(files: SandboxFiles, path: str, line: str) -> int:
    return files.read(path).full_text().splitlines().index(line) + 1


# ------------------------------------------------------------------ 1. no private names across modules

SCOPE = [
    "taskcrew/tools/documents/provenance.py",
    "taskcrew/tools/ap.py",
    "taskcrew/crew/evidence.py",
    "taskcrew/crew/provenance.py",
    "taskcrew/crew/citations.py",
    "taskcrew/tools/documents/html.py",
    "taskcrew/tools/documents/mail.py",
    "taskcrew/tools/documents/ocrlines.py",
]


@pytest.mark.parametrize("module", SCOPE)
def test_no_module_reads_another_modules_private_name(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text())
    imported: set[str] = set()  # names bound to a taskcrew module or its members
    private: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("taskcrew"):
            for alias in node.names:
                imported.add(alias.asname or alias.name)
                if alias.name.startswith("_"):
                    private.append(f"line {node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            private.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    assert not private, private


def test_the_shared_reading_rules_are_public_names() -> None:
    from taskcrew.crew import evidence
    from taskcrew.tools import ap

    assert evidence.AMOUNT_LABEL.search("Total 1,234.50") and evidence.DATE_LABEL.search(
        "Invoice date 14/10/2026"
    )
    assert ap.DATE_WORD.search("Datum") and ap.EVENT_WORD.search("Delivered 10/15/2026")
    assert ap.DUE_LABEL.search("Zahlbar bis")


# ----------------------------------------------------------- 2. a credit note's title, its total positive


@pytest.mark.parametrize(
    ("heading", "total", "value"),
    [
        ("CREDIT NOTE", "Total 1,250.00 EUR", "1250.00"),
        ("NORTHWIND TRADERS   Credit memo CM-118", "Amount 1,250.00 USD", "1250.00"),  # a column of the head
        ("Gutschrift Nr. GS-2026-114", "Gesamtbetrag 1.250,00 EUR", "1250.00"),
        ("AVOIR N° AV-12 sur facture F-2026-88", "Total TTC 1 250,00 €", "1250.00"),
        ("Nota de crédito 0001-00012345", "Total 1.250,00 EUR", "1250.00"),
        # a kind or the issuer's name before the title, a language's or a page's words after it
        ("TAX CREDIT NOTE", "Total 1,250.00 EUR", "1250.00"),
        ("SALES CREDIT NOTE", "Total 1,250.00 EUR", "1250.00"),
        ("CREDIT NOTE / GUTSCHRIFT", "Total 1,250.00 EUR", "1250.00"),
        ("Credit Note CN-7 (Original)", "Total 1,250.00 EUR", "1250.00"),
        ("Northwind Traders Ltd - Credit Note", "Total 1,250.00 EUR", "1250.00"),
        ("Credit Note #CN-7 Page 1 of 1", "Total 1,250.00 EUR", "1250.00"),
        ("Gutschrift Nr. 12 vom 01.10.2026", "Gesamtbetrag 1.250,00 EUR", "1250.00"),
    ],
)
def test_a_credit_notes_positive_total_is_named_with_the_credit_warning(
    tmp_path: Path, heading: str, total: str, value: str
) -> None:
    lines = ["Northwind Traders", heading, "Date 2026-10-14", "Against invoice NW-40917", total]
    _pdf(tmp_path / "credit.pdf", lines)
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "credit.pdf", total, value)
    at, head = _line(files, "credit.pdf", total), _line(files, "credit.pdf", heading)
    assert (origin.file, origin.line) == ("credit.pdf", at), origin
    assert origin.text == f"credit.pdf, line {at} (cited in step 1) — but line {head} {TITLED}", origin.text


def test_a_minus_signed_total_under_a_credit_title_keeps_the_minus_warning(tmp_path: Path) -> None:
    lines = ["CREDIT NOTE", "Credit note no. CN-7", "TOTAL CREDIT (USD) -150.00"]
    _pdf(tmp_path / "credit.pdf", lines)
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "credit.pdf", "TOTAL CREDIT (USD) 150.00", "150.00")
    assert origin.text == f"credit.pdf, line 3 (cited in step 1) — but line 3 {MINUS}", origin.text


@pytest.mark.parametrize(
    "mention",
    [
        "We have issued a credit note for last month's overcharge.",
        "Credit note for last month attached separately.",
        "Less credit note CN-5   -50.00",
        "Hinweis: Die Gutschrift GS-12 wurde bereits verrechnet.",
        "- Credit note CN-7",  # an item of a list, no title
    ],
)
def test_an_invoice_that_mentions_a_credit_note_is_not_called_one(tmp_path: Path, mention: str) -> None:
    lines = ["NORTHWIND TRADERS   INVOICE", "Invoice No. NW-40931", mention, "TOTAL DUE 1,250.00 USD"]
    (tmp_path / "invoice.txt").write_text("\n".join(lines) + "\n")
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "invoice.txt", "TOTAL DUE 1,250.00 USD", "1250.00", "USD")
    assert origin.text == "invoice.txt, line 4 (cited in step 1)", origin.text


def _mail(html: str, attachments: dict[str, bytes] | None = None, subject: str = "Documents") -> bytes:
    msg = EmailMessage()
    msg["From"] = "Northwind Traders <billing@northwind.example>"
    msg["To"] = "ap@acme-corp.example"
    msg["Subject"] = subject
    msg["Date"] = "Wed, 14 Oct 2026 09:00:00 +0000"
    msg.set_content("See the HTML part.")
    msg.add_alternative(html, subtype="html")
    for name, data in (attachments or {}).items():
        msg.add_attachment(data, maintype="application", subtype="pdf", filename=name)
    return msg.as_bytes()


def test_a_credit_note_attached_to_a_mail_titles_only_itself(tmp_path: Path) -> None:
    note = _pdf(
        tmp_path / "build" / "CN-7.pdf", ["CREDIT NOTE", "Credit note CN-7", "Total credit 300.00 USD"]
    )
    bill = _pdf(
        tmp_path / "build" / "NW-40932.pdf", ["INVOICE", "Invoice NW-40932", "Amount due: 1,250.00 USD"]
    )
    body = "<p>Please find invoice NW-40932 and credit note CN-7 attached.</p>"
    (tmp_path / "mail.eml").write_bytes(_mail(body, {"CN-7.pdf": note, "NW-40932.pdf": bill}))
    files = SandboxFiles(tmp_path)
    own = _origin(files, "mail.eml", "Amount due: 1,250.00 USD", "1250.00", "USD")  # below the credit note
    assert (
        own.text == f"mail.eml, line {_line(files, 'mail.eml', 'Amount due: 1,250.00 USD')} (cited in step 1)"
    )
    credit = _origin(files, "mail.eml", "Total credit 300.00 USD", "300.00", "USD")
    head = _line(files, "mail.eml", "Credit note CN-7")  # the nearest title above it
    assert credit.text.endswith(f" — but line {head} {TITLED}"), credit.text


def test_an_html_mail_titled_a_credit_note_is_one(tmp_path: Path) -> None:
    body = "<h1>Credit Note CN-8</h1><p>Returned goods, order SO-1.</p><p>Total: 300.00 USD</p>"
    (tmp_path / "mail.eml").write_bytes(_mail(body))
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "mail.eml", "Total: 300.00 USD", "300.00", "USD")
    assert origin.text.endswith(f" — but line {_line(files, 'mail.eml', 'Credit Note CN-8')} {TITLED}"), (
        origin
    )


def test_a_mail_whose_subject_titles_it_a_credit_note_is_one(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = (
        "billing@northwind.example",
        "ap@acme-corp.example",
        "Credit note CN-10",
    )
    msg.set_content("Returned goods from order SO-2.\nTotal: 300.00 USD\n")
    (tmp_path / "mail.eml").write_bytes(msg.as_bytes())
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "mail.eml", "Total: 300.00 USD", "300.00", "USD")
    head = _line(files, "mail.eml", "Subject: Credit note CN-10")
    assert origin.text.endswith(f" — but line {head} {TITLED}"), origin.text


def test_a_quote_the_credit_note_does_not_hold_still_hears_its_title(tmp_path: Path) -> None:
    (tmp_path / "credit.txt").write_text("Gutschrift\nGutschrift Nr. GS-9\nGesamt 300,00 EUR\n")
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "credit.txt", "Rechnungsbetrag 300,00 EUR", "300.00", "EUR")  # a made-up line
    assert f"it cited credit.txt, whose line 2 {TITLED}" in origin.text, origin.text
    assert "but credit.txt does not show it" in origin.text, origin.text


# ------------------------------------------------------------- 3. a bare figure quoted from several lines

TWICE = "NORTHWIND TRADERS\nYour credit limit with us: 950.00 USD\nInvoice NW-40930\nTOTAL DUE 950.00 USD\n"


def test_a_bare_figure_on_two_lines_is_ambiguous_not_the_first_line(tmp_path: Path) -> None:
    _pdf(tmp_path / "NW-40930.pdf", TWICE.splitlines())
    files = SandboxFiles(tmp_path)
    limit = _line(files, "NW-40930.pdf", "Your credit limit with us: 950.00 USD")
    total = _line(files, "NW-40930.pdf", "TOTAL DUE 950.00 USD")
    origin = _origin(files, "NW-40930.pdf", "950.00", "950.00", "USD")
    assert (origin.file, origin.line) == ("NW-40930.pdf", None), origin  # no line pretends to be the one
    assert origin.text == f"NW-40930.pdf, lines {limit} and {total} (cited in step 1) — {AMBIGUOUS}", (
        origin.text
    )
    # as the approver is shown it: the file, no line marked
    request = ApprovalRequest(kind="form_submission", method="POST", url="http://erp/bills/new",
                              fields=[FieldValue(name="amount", value="950.00")], origins={"amount": origin})  # fmt: skip
    shown = origins(request, [])["amount"]
    assert (shown.file, shown.line) == ("NW-40930.pdf", None), shown
    # the control: a quote of the total's line names that line
    whole = _origin(files, "NW-40930.pdf", "TOTAL DUE 950.00 USD", "950.00", "USD")
    assert (whole.line, whole.text) == (total, f"NW-40930.pdf, line {total} (cited in step 1)"), whole


def test_a_bare_figure_on_one_line_is_that_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(
        "Invoice NW-1\nYour credit limit with us: 5,000.00 USD\nTOTAL DUE 950.00 USD\n"
    )
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "a.txt", "950.00", "950.00", "USD")
    assert (origin.line, origin.text) == (3, "a.txt, line 3 (cited in step 1)"), origin


@pytest.mark.parametrize("quote", ["INV-2057", "Northwind Traders INV-2057"])
def test_words_the_file_repeats_name_each_line_and_are_not_ambiguous(tmp_path: Path, quote: str) -> None:
    """An invoice number in the subject, the body and the attachment is one thing wherever it is
    printed: each line is named, with no warning (only a figure alone needs its line's label)."""
    (tmp_path / "a.txt").write_text(
        "Subject: Northwind Traders INV-2057\nPlease find Northwind Traders INV-2057 attached.\n"
        "Invoice No. Northwind Traders INV-2057\nTOTAL DUE 950.00 USD\n"
    )
    origin = _origin(SandboxFiles(tmp_path), "a.txt", quote, "INV-2057")
    assert origin.text == "a.txt, lines 1, 2 and 3 (cited in step 1)", origin.text
    assert AMBIGUOUS not in origin.text


def test_a_number_that_names_the_invoice_repeated_is_not_ambiguous(tmp_path: Path) -> None:
    """An invoice number of digits alone ("40930") is no figure of money: repeated in the subject,
    the body and the heading it names one thing."""
    (tmp_path / "a.txt").write_text(
        "Subject: Invoice 40930 from Northwind\nPlease find invoice 40930 attached.\nInvoice No. 40930\n"
    )
    origin = _origin(SandboxFiles(tmp_path), "a.txt", "40930", "40930")
    assert origin.text == "a.txt, lines 1, 2 and 3 (cited in step 1)", origin.text


@pytest.mark.parametrize("quote", ["US$ 950.00", "950.00 dollars", "amount 950.00", "950.00 USD"])
def test_a_figure_quoted_with_a_currency_word_on_two_lines_is_ambiguous(tmp_path: Path, quote: str) -> None:
    """What a figure is, its line's label says: a quote that holds the figure with words both lines
    print around it does not say which one it means."""
    (tmp_path / "a.txt").write_text(
        "Your credit limit with us: amount 950.00 USD (US$ 950.00 dollars)\nInvoice NW-2\n"
        "TOTAL DUE: amount 950.00 USD (US$ 950.00 dollars)\n"
    )
    origin = _origin(SandboxFiles(tmp_path), "a.txt", quote, "950.00", "USD")
    assert origin.text.startswith(f"a.txt, lines 1 and 3 (cited in step 1) — {AMBIGUOUS}"), origin.text


def test_a_total_printed_again_alike_is_not_ambiguous(tmp_path: Path) -> None:
    """The same line printed twice (the page and its payment slip) is one thing."""
    (tmp_path / "a.txt").write_text(
        "Invoice NW-2\nTOTAL DUE 950.00 USD\n--- payment slip ---\nTOTAL DUE 950.00 USD\n"
    )
    origin = _origin(SandboxFiles(tmp_path), "a.txt", "950.00", "950.00", "USD")
    assert origin.text == "a.txt, lines 2 and 4 (cited in step 1)", origin.text


def test_each_line_of_an_ambiguous_quote_keeps_its_own_warning(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Credit limit 950.00 EUR\nInvoice NW-2\nTOTAL DUE 950.00 USD\n")
    files = SandboxFiles(tmp_path)
    origin = _origin(files, "a.txt", "950.00", "950.00", "USD")
    assert origin.text == (
        f"a.txt, lines 1 and 3 (cited in step 1) — {AMBIGUOUS}"
        " — but line 1 does not show it in USD: check the currency"
    ), origin.text


# ------------------------------------------------------------------- 4. an HTML reply's quoted message

OLD = "<p>Invoice NW-40933</p><p>Invoice total 1.234,50 EUR</p>"  # the older message: a decimal comma
OWN = "<p>Please note the corrected amount: 2.500 EUR.</p>"  # '2.500': 2500 or 2.50?
OWN_LINE = "Please note the corrected amount: 2.500 EUR."
QUOTES = {
    "blockquote": f'{OWN}<blockquote style="margin:0 0 0 .8ex;border-left:1px #ccc solid">{OLD}</blockquote>',
    "apple": f'{OWN}<blockquote type="cite">{OLD}</blockquote>',
    "gmail": f'{OWN}<div class="gmail_quote"><blockquote class="gmail_quote">{OLD}</blockquote></div>',
    "outlook": (
        f'{OWN}<div id="appendonsend"></div><hr style="display:inline-block;width:98%">'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri"><b>From:</b> Northwind Billing'
        " &lt;billing@northwind.example&gt;<br><b>Sent:</b> Tuesday, October 13, 2026 4:12 PM<br>"
        f"<b>To:</b> AP<br><b>Subject:</b> Invoice NW-40933</font><div>&nbsp;</div></div><div>{OLD}</div>"
    ),
    "outlook desktop": (  # Word's HTML: the header block in a bordered div, the older message after it
        f'{OWN}<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0in 0in 0in">'
        '<p class="MsoNormal"><b>From:</b> Northwind Billing<br><b>Sent:</b> Tuesday, October 13, 2026'
        f"<br><b>To:</b> AP</p></div>{OLD}"
    ),
}


@pytest.mark.parametrize("kind", sorted(QUOTES))
def test_a_figure_only_in_an_html_replys_quoted_message_settles_nothing(tmp_path: Path, kind: str) -> None:
    (tmp_path / "reply.eml").write_bytes(_mail(QUOTES[kind], subject="RE: Invoice NW-40933"))
    text = SandboxFiles(tmp_path).read("reply.eml").full_text()
    assert OWN_LINE in text.splitlines(), text
    if kind != "outlook desktop":  # Word's bordered div is known by its "From: … Sent: …" words alone
        assert "> Invoice total 1.234,50 EUR" in text.splitlines(), text
    # as the quoted reply "On … wrote:" is read: both readings of 2.500 are in doubt
    assert reading_doubt(OWN_LINE, "2500.00 EUR", text) == (
        "2.50 or 2500.00 (2.500: ',' or '.' may group thousands or mark decimals)"
    ), text


def test_the_same_figure_in_the_mails_own_words_settles_it(tmp_path: Path) -> None:
    """The control: the e-mail's own amount with cents gives its decimal mark."""
    (tmp_path / "mail.eml").write_bytes(_mail(OWN + OLD))
    text = SandboxFiles(tmp_path).read("mail.eml").full_text()
    assert "Invoice total 1.234,50 EUR" in text.splitlines(), text
    assert reading_doubt(OWN_LINE, "2500.00 EUR", text) is None


def test_an_indenting_blockquote_is_no_quote(tmp_path: Path) -> None:
    indented = f'{OWN}<blockquote style="margin:0 0 0 40px;border:none;padding:0px">{OLD}</blockquote>'
    (tmp_path / "mail.eml").write_bytes(_mail(indented))
    text = SandboxFiles(tmp_path).read("mail.eml").full_text()
    assert "Invoice total 1.234,50 EUR" in text.splitlines(), text
    assert reading_doubt(OWN_LINE, "2500.00 EUR", text) is None


def test_a_plain_text_outlook_reply_header_starts_the_quote(tmp_path: Path) -> None:
    body = (
        f"{OWN_LINE}\n\nFrom: Northwind Billing <billing@northwind.example>\n"
        "Sent: Tuesday, October 13, 2026 4:12 PM\nTo: AP\nSubject: Invoice NW-40933\n\n"
        "Invoice total 1.234,50 EUR\n"
    )
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = (
        "billing@northwind.example",
        "ap@acme-corp.example",
        "RE: NW-40933",
    )
    msg.set_content(body)
    (tmp_path / "reply.eml").write_bytes(msg.as_bytes())
    text = SandboxFiles(tmp_path).read("reply.eml").full_text()
    assert reading_doubt(OWN_LINE, "2500.00 EUR", text) == (
        "2.50 or 2500.00 (2.500: ',' or '.' may group thousands or mark decimals)"
    ), text
    # and the approval, naming the line, says it may read either
    origin = _origin(SandboxFiles(tmp_path), "reply.eml", OWN_LINE, "2500.00", "EUR")
    assert "may read 2.50 or 2500.00" in origin.text, origin.text


def test_a_credit_note_quoted_in_a_reply_titles_nothing_of_the_reply(tmp_path: Path) -> None:
    html = (  # answered below the quote
        '<blockquote type="cite"><h2>Credit Note CN-9</h2><p>Total 80.00 USD</p></blockquote>'
        "<p>That credit is settled. Our new invoice NW-40934:</p><p>Amount due: 1,250.00 USD</p>"
    )
    (tmp_path / "reply.eml").write_bytes(_mail(html, subject="RE: CN-9"))
    files = SandboxFiles(tmp_path)
    own = _origin(files, "reply.eml", "Amount due: 1,250.00 USD", "1250.00", "USD")
    assert (
        own.text
        == f"reply.eml, line {_line(files, 'reply.eml', 'Amount due: 1,250.00 USD')} (cited in step 1)"
    )
    quoted = _origin(files, "reply.eml", "Total 80.00 USD", "80.00", "USD")
    assert quoted.text.endswith(f"line {_line(files, 'reply.eml', '> Credit Note CN-9')} {TITLED}"), (
        quoted.text
    )
