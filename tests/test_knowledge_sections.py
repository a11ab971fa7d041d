"""Section-aware chunks: RST, HTML, PDF outline and e-mail parts keep their structure; hits name it."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from taskcrew.knowledge import KnowledgeStore
from taskcrew.knowledge.chunking import chunk_file
from taskcrew.knowledge.models import Chunk

RST = """.. _chapter_bus:

#################
Business Features
#################

Introduction text of the chapter that explains what business features are for and who uses
them in a small company with customers and vendors.

.. _bus-ar:

Accounts Receivable
===================

Customers owe you money for invoices you sent. See :ref:`the setup <bus-setup>` first and use
``Business > Customer``.

Process Payment
---------------

Eventually, you will receive payment from your customers for outstanding invoices. To register
these payments, use the Process Payment application found in Business > Customer > Process Payment.
Choose the customer, the amount received and the account the money went into; the payment is
matched against the oldest open invoices first.

.. figure:: figures/bus_ar_payment.png
   :alt: Process Payment window
   :width: 510px

   Process Payment window

Accounts Payable
================

Vendors are owed money for the bills they sent you; record each bill when it arrives.

Process Payment
---------------

Eventually, you need to pay your bills. To do so, use the Process Payment application found in
Business > Vendor > Process Payment, choose the bill and the account the money leaves from.
The payment is matched against the vendor's open bills, oldest first, and the bill is marked
paid once nothing is left owing on it.
"""

HTML = """<!doctype html><html><head><title>Dolly Ledger Manual</title>
<style>h1 { color: red }</style><script>var x = "<h2>not a heading</h2>";</script></head>
<body><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<h1>Dolly Ledger Manual</h1><p>How to keep the books with Dolly Ledger, for small offices.</p>
<h2>Bank accounts</h2><p>Add each bank account once with its IBAN and opening balance.</p>
<h3>Reconcile</h3><p>Tick each statement line that matches a booked transaction, then close the
statement when the difference is zero.</p>
<ul><li>Import the statement</li><li>Match the lines</li></ul>
<h2>Reports</h2><p>The balance sheet and the profit and loss report are under Reports.</p>
</body></html>"""


def _chunks_of(path: Path, text: str) -> list[Chunk]:
    path.write_text(text, encoding="utf-8")
    return chunk_file(path)


def test_rst_headings_become_the_chunks_sections_and_markup_is_dropped(tmp_path: Path) -> None:
    chunks = _chunks_of(tmp_path / "ch_bus.rst", RST)
    assert {c.title for c in chunks} == {"Business Features"}
    paths = [c.heading_path for c in chunks]
    assert ["Accounts Receivable", "Process Payment"] in paths
    assert ["Accounts Payable", "Process Payment"] in paths
    text = "\n".join(c.text for c in chunks)
    assert ".. _" not in text and "figure::" not in text and ":width:" not in text
    assert ":ref:" not in text and "``" not in text and "the setup" in text and "Business > Customer" in text
    vendor = next(c for c in chunks if c.heading_path == ["Accounts Payable", "Process Payment"])
    assert vendor.section_text() == "Business Features > Accounts Payable > Process Payment"
    assert vendor.embed_text().startswith("Accounts Payable > Process Payment\n")


def test_html_headings_title_and_no_scripts_or_navigation(tmp_path: Path) -> None:
    chunks = _chunks_of(tmp_path / "manual.html", HTML)
    assert {c.title for c in chunks} == {"Dolly Ledger Manual"}
    assert ["Bank accounts"] in [c.heading_path for c in chunks] or any(
        c.heading_path == ["Bank accounts", "Reconcile"] for c in chunks
    )
    reconcile = next(c for c in chunks if "Tick each statement line" in c.text)
    assert reconcile.heading_path[0] == "Bank accounts"
    assert "Reconcile" in reconcile.heading_path or "## Reconcile" in reconcile.text
    text = "\n".join(c.text for c in chunks)
    assert "not a heading" not in text and "color: red" not in text and "Home" not in text
    assert "- Import the statement" in text


# the shape of a Sphinx page (Python's, Frappe's, most projects' manuals): navigation bars and a
# sidebar marked only by role="navigation", a permalink after each heading, code in <pre>
SPHINX = """<!DOCTYPE html><html><head><title>Payments &#8212; Ledgerly 2.1 documentation</title></head>
<body>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3>
<ul><li><a href="genindex.html">index</a></li><li><a href="bills.html">next</a> |</li></ul></div>
<div class="document"><div class="body" role="main">
<section id="payments"><h1>Payments<a class="headerlink" href="#payments" title="Permalink">¶</a></h1>
<p>Payments settle bills. A payment run pays every approved bill that is due (§ 14: the bill
names the supplier's VAT id).</p>
<section id="run"><h2>Start a payment run<a class="headerlink" href="#run">¶</a></h2>
<p>Open <em>Payments</em> and choose the bank account; the run lists the bills due this week.</p>
<div class="highlight"><pre><span></span># a run from the command line
ledgerly pay --account main

# the file goes to the bank
ledgerly export --format sepa
</pre></div>
</section></section></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation">
<h3>Table of Contents</h3><ul><li><a href="#">Payments</a></li></ul>
<div role="search"><h3>Quick search</h3><form><input type="text" name="q"></form></div></div>
</body></html>
"""


def test_a_sphinx_page_keeps_its_sections_and_code_and_drops_its_navigation(tmp_path: Path) -> None:
    chunks = _chunks_of(tmp_path / "payments.html", SPHINX)
    assert {c.title for c in chunks} == {"Payments"}
    paths = [c.heading_path for c in chunks]
    assert all(not any(h in ("Navigation", "Table of Contents", "Quick search") for h in p) for p in paths)
    text = "\n".join(c.text for c in chunks)
    assert "¶" not in text + repr(paths) and "genindex" not in text and "index" not in text.split()
    assert "(§ 14: the bill names" in text  # a section sign in the text is not a permalink
    run = next(c for c in chunks if "ledgerly pay" in c.text)
    assert run.heading_path == ["Start a payment run"]
    # the code keeps its lines, and its "# comment" lines are not headings
    assert "# a run from the command line\nledgerly pay --account main\n" in run.text
    assert "ledgerly export --format sepa" in run.text


# a region of a PDF page under min_chars (200) joins the next one; these keep each region whole
FILLER = "Ask the supplier desk when in doubt; the desk answers within one working day. " * 2


def test_pdf_outline_names_the_section_of_each_page_region(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Northwind Supplier Guide")
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.start_section("Ordering")
    pdf.multi_cell(
        0,
        6,
        new_x="LMARGIN",
        new_y="NEXT",
        text="Ordering\nPlace orders through the portal before noon for next-day delivery. " + FILLER,
    )
    pdf.start_section("Returns", level=1)
    pdf.multi_cell(
        0,
        6,
        new_x="LMARGIN",
        new_y="NEXT",
        text="Returns\nDamaged goods are returned within 14 days with the delivery note. " + FILLER,
    )
    pdf.add_page()
    pdf.start_section("Invoices")
    pdf.multi_cell(
        0,
        6,
        new_x="LMARGIN",
        new_y="NEXT",
        text="Invoices\nInvoices are sent on the first working day of the month, Net 30. " + FILLER,
    )
    path = tmp_path / "guide.pdf"
    pdf.output(str(path))

    chunks = chunk_file(path)
    assert {c.title for c in chunks} == {"Northwind Supplier Guide"}
    by_text = {c.heading_path[-2] if len(c.heading_path) > 1 else "": c for c in chunks}
    assert "next-day delivery" in by_text["Ordering"].text and "Damaged" not in by_text["Ordering"].text
    returns = next(c for c in chunks if "Damaged goods" in c.text)
    assert returns.heading_path == ["Ordering", "Returns", "page 1"]
    invoices = next(c for c in chunks if "Net 30" in c.text)
    assert invoices.heading_path == ["Invoices", "page 2"]


def _guide_without_outline(path: Path) -> None:
    """A PDF with no bookmarks whose headings are only set larger, as a word processor prints it:
    a title, chapters and sections, a heading long enough to wrap, and a running header on every
    page at a heading size."""
    from fpdf import FPDF

    class Guide(FPDF):
        def header(self) -> None:
            self.set_font("helvetica", "B", 14)
            self.cell(0, 8, "Northwind internal", new_x="LMARGIN", new_y="NEXT")

    pdf = Guide()

    def write(size: int, text: str, width: float = 0) -> None:
        pdf.set_font("helvetica", "B" if size > 11 else "", size)
        pdf.multi_cell(width, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")

    pdf.add_page()
    write(24, "Northwind Supplier Guide")
    write(16, "1 Ordering")
    write(11, "Place orders through the portal before noon for next-day delivery. " + FILLER)
    write(13, "1.1 Returns of damaged goods that arrive after the delivery note was signed", width=90)
    write(11, "Damaged goods are returned within 14 days with the delivery note. " + FILLER)
    pdf.add_page()
    write(16, "2 Invoices")
    write(13, "2.1 Payment terms")
    write(11, "Invoices are sent on the first working day of the month and are due Net 30. " + FILLER)
    write(13, "2.2 Disputes")
    write(11, "A disputed line is put on hold; the rest of the invoice is paid on time. " + FILLER)
    pdf.add_page()
    write(11, "Short payments are settled with a credit note from the supplier. " + FILLER)
    pdf.output(str(path))


def test_a_pdf_without_outline_is_split_by_the_headings_its_font_sizes_show(tmp_path: Path) -> None:
    path = tmp_path / "guide.pdf"
    _guide_without_outline(path)
    chunks = chunk_file(path)
    assert {c.title for c in chunks} == {"Northwind Supplier Guide"}

    def path_of(words: str) -> list[str]:
        return next(c for c in chunks if words in c.text).heading_path

    assert path_of("next-day delivery") == ["1 Ordering", "page 1"]
    returns = "1.1 Returns of damaged goods that arrive after the delivery note was signed"
    assert path_of("Damaged goods are returned") == ["1 Ordering", returns, "page 1"]
    assert path_of("due Net 30") == ["2 Invoices", "2.1 Payment terms", "page 2"]
    assert path_of("put on hold") == ["2 Invoices", "2.2 Disputes", "page 2"]
    assert path_of("credit note from the supplier") == ["2 Invoices", "2.2 Disputes", "page 3"]
    # the running header is on every page at a heading size: not a section
    assert not any("Northwind internal" in part for c in chunks for part in c.heading_path)


def test_a_search_names_the_section_of_a_pdf_without_outline(
    tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    path = tmp_path / "guide.pdf"
    _guide_without_outline(path)
    knowledge_store.procedures.ingest([path])
    [hit] = knowledge_store.procedures.search("when is a supplier's invoice due", k=1)
    assert hit.citation == "guide.pdf § 2 Invoices > 2.1 Payment terms > page 2"


def test_email_parts_keep_their_own_structure(tmp_path: Path) -> None:
    message = EmailMessage()
    message["Subject"] = "New payment rules"
    message["From"] = "ap@acme.example"
    message.set_content("Plain part.")
    message.add_alternative("<p>Hello team, the <b>new rules</b> are attached.</p>", subtype="html")
    message.add_attachment(
        "# Payment rules\n\n## Approvals\n\nBills over 5,000.00 need two approvers, always.\n",
        subtype="markdown",
        filename="rules.md",
    )
    path = tmp_path / "rules.eml"
    path.write_bytes(bytes(message))
    chunks = chunk_file(path)
    assert all(c.title == "New payment rules" for c in chunks)
    approvals = next(c for c in chunks if "two approvers" in c.text)
    assert approvals.heading_path == ["New payment rules", "rules.md", "Approvals"]
    assert approvals.section_text() == "New payment rules > rules.md > Approvals"


def test_a_search_finds_and_names_the_right_one_of_two_same_named_sections(
    tmp_path: Path, knowledge_store: KnowledgeStore
) -> None:
    doc = tmp_path / "ch_bus.rst"
    doc.write_text(RST, encoding="utf-8")
    knowledge_store.procedures.ingest([doc])
    [hit] = knowledge_store.procedures.search("pay a vendor's bill", k=1)
    assert (
        hit.citation == "ch_bus.rst § Accounts Payable > Process Payment" and hit.title == "Business Features"
    )
    [hit] = knowledge_store.procedures.search("record a payment received from a customer", k=1)
    assert hit.citation == "ch_bus.rst § Accounts Receivable > Process Payment"


EXPENSES = """# Staff handbook

## Expense reports

File an expense report in the finance portal within 30 days of the expense. Attach every receipt
as a photo or PDF; a report without receipts is sent back to you. Choose the cost center of the
project the expense was for, and write one line of purpose for each item.

Meals with clients are reimbursed up to 60.00 a person, alcohol excluded. Taxi fares are
reimbursed when no public transport runs or you carry equipment; write the reason on the line.
Mileage for your own car is paid at the national rate per kilometre, with the route and purpose.

Your manager approves the report in the portal; finance pays approved reports with the next
payroll. A report filed after 90 days needs the finance director's approval as well.
Expense reports in another currency are converted at the rate of the day on the receipt.

Lost a receipt? Write a short note with the date, the amount and what it was for, and sign it;
one missing receipt a quarter is accepted this way. Hotel bills must show the nights and the room
rate; minibar and films are not reimbursed. Ask finance before you book anything unusual.

## Corporate cards

A corporate card is for business expenses only. Each card transaction still needs an expense
report line with its receipt by the end of the month, or the amount is deducted from your pay.

## Visitor parking

Visitors park in the spaces by the main entrance; reception hands out day passes.
"""


def test_results_name_different_sections_before_a_second_chunk_of_one(
    tmp_path: Path, knowledge_embedder: object
) -> None:
    from taskcrew.knowledge import KnowledgeStore
    from taskcrew.knowledge.procedures import RankingConfig
    from taskcrew.knowledge.store import StoreConfig

    doc = tmp_path / "staff.md"
    doc.write_text(EXPENSES, encoding="utf-8")
    spread = KnowledgeStore(tmp_path / "spread", knowledge_embedder)  # type: ignore[arg-type]
    spread.procedures.ingest([doc])
    hits = spread.procedures.search("how do I get my expenses paid back", k=2)
    assert [h.heading_path[-1] for h in hits] == ["Expense reports", "Corporate cards"]
    # without the limit the long section's second chunk comes before the other section
    crowded = KnowledgeStore(
        tmp_path / "crowded",
        knowledge_embedder,  # type: ignore[arg-type]
        StoreConfig(ranking=RankingConfig(per_section=0)),
    )
    crowded.procedures.ingest([doc])
    hits = crowded.procedures.search("how do I get my expenses paid back", k=2)
    assert [h.heading_path[-1] for h in hits] == ["Expense reports", "Expense reports"]


def test_odd_font_sizes_do_not_cost_a_pdf_its_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskcrew.knowledge import formats
    from taskcrew.knowledge.pdf_headings import _Sizes

    sizes = _Sizes()  # what a hostile or broken PDF can hand the visitor: no exception
    for size, matrix in ((float("nan"), [1, 0, 0, 1, 0, 0]), (12.0, [float("inf")] * 6), (0, [0] * 6)):
        sizes.visit("Text", matrix, matrix, None, size)
    path = tmp_path / "guide.pdf"
    _guide_without_outline(path)

    def broken(reader: object) -> None:
        raise ZeroDivisionError("a reading nobody expected")

    monkeypatch.setattr(formats, "font_outline", broken)
    chunks = chunk_file(path)  # the headings are lost, the text is not
    assert any("due Net 30" in c.text for c in chunks)
    assert {c.heading_path[-1] for c in chunks} == {"page 1", "page 2", "page 3"}
