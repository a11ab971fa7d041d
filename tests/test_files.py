"""SandboxFiles: confinement, listing, reading every kind of file, search, bounded output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskcrew.tools.files import (
    NO_TEXT_LAYER,
    FileMissing,
    PathRefused,
    SandboxFiles,
    Unreadable,
    confine,
    html_to_text,
    is_secret_name,
)

# ------------------------------------------------------------------------------- confinement


@pytest.fixture
def jail(tmp_path: Path) -> Path:
    """A small sandbox next to files it must never reveal."""
    root = tmp_path / "sandbox"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "note.txt").write_text("inside the sandbox\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("TOP SECRET outside\n", encoding="utf-8")
    (root / ".env").write_text("ERP_PASSWORD=hunter2\n", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.txt").write_text("hidden folder\n", encoding="utf-8")
    (root / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n", encoding="utf-8")
    (root / "credentials.json").write_text('{"token": "t"}\n', encoding="utf-8")
    (root / "escape.txt").symlink_to(tmp_path / "outside.txt")
    (root / "escape_dir").symlink_to(tmp_path)
    (root / "inner_link.txt").symlink_to(root / "docs" / "note.txt")
    return root


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("../outside.txt", "leads outside the sandbox"),
        ("docs/../../outside.txt", "leads outside the sandbox"),
        ("/etc/passwd", "absolute path outside the sandbox"),
        ("escape.txt", "symlink that points outside"),
        ("escape_dir/outside.txt", "symlink that points outside"),
        (".env", "dotfile"),
        (".hidden/x.txt", "dotfile"),
        ("docs/.env.local", "dotfile"),
        ("server.pem", "looks like a secret"),
        ("credentials.json", "looks like a secret"),
        ("keys/id_rsa", "looks like a secret"),
        ("prod.key", "looks like a secret"),
        ("a\x00b", "NUL"),
    ],
)
def test_confinement_refusals(jail: Path, path: str, needle: str) -> None:
    files = SandboxFiles(jail)
    with pytest.raises(PathRefused, match=needle):
        files.read(path)
    result = files.read_file(path)
    assert not result.ok and result.error and result.error.startswith("refused:")
    assert "TOP SECRET" not in result.to_text() and "hunter2" not in result.to_text()


def test_confinement_allows_paths_inside(jail: Path) -> None:
    files = SandboxFiles(jail)
    assert files.read("docs/note.txt").text == "inside the sandbox"
    assert files.read(str(jail / "docs" / "note.txt")).path == "docs/note.txt"  # absolute, inside
    assert files.read("docs/./note.txt").path == "docs/note.txt"
    assert files.read("inner_link.txt").text == "inside the sandbox"  # a link that stays inside


def test_absolute_paths_through_a_symlinked_root(jail: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(jail)
    files = SandboxFiles(alias)
    assert files.read(str(alias / "docs" / "note.txt")).path == "docs/note.txt"
    assert files.read(str(jail / "docs" / "note.txt")).path == "docs/note.txt"
    with pytest.raises(PathRefused, match="outside"):
        files.read(str(alias / ".." / "outside.txt"))


def test_confine_is_reusable_for_the_policy(jail: Path) -> None:
    assert confine(jail, "docs/note.txt") == (jail / "docs" / "note.txt").resolve()
    assert confine(jail, ".") == jail.resolve()
    with pytest.raises(PathRefused, match="not available to the agent"):
        confine(jail, "docs/note.txt", hidden=("docs/*",))
    assert is_secret_name("ID_RSA.pub") and is_secret_name("Credentials.csv")
    assert not is_secret_name("invoice.pdf") and not is_secret_name("keynote.txt")


def test_listing_hides_what_it_would_refuse(jail: Path) -> None:
    listing = SandboxFiles(jail).listing()
    paths = [e.path for e in listing.entries]
    assert paths == ["docs/note.txt", "inner_link.txt"]
    assert listing.skipped >= 5
    text = listing.render()
    assert "hidden or secret-looking" in text and ".env" not in text and "outside" not in text


def test_search_never_looks_outside(jail: Path) -> None:
    result = SandboxFiles(jail).search("secret")
    assert result.hits == []
    assert SandboxFiles(jail).search("inside").hits[0].path == "docs/note.txt"


def test_hidden_patterns_hide_ground_truth(tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "a.txt").write_text("a", encoding="utf-8")
    (tmp_path / "documents.yaml").write_text("answers", encoding="utf-8")
    files = SandboxFiles(tmp_path, hidden=("documents.yaml",))
    assert [e.path for e in files.listing().entries] == ["inbox/a.txt"]
    assert not files.read_file("documents.yaml").ok


def test_private_sandbox_files_stay_hidden_from_a_reader_rooted_at_the_sandbox() -> None:
    from taskcrew.sandbox.ground_truth import PRIVATE_PATTERNS, SANDBOX_DIR

    files = SandboxFiles(SANDBOX_DIR, hidden=PRIVATE_PATTERNS)
    paths = [e.path for e in files.listing().entries]
    assert paths and all(p.startswith("inbox/") or p.endswith(".md") for p in paths)
    for private in ("documents.yaml", "inbox_source.yaml", "generate.py", "ground_truth.py"):
        assert "not available to the agent" in (files.read_file(private).error or "")
    assert files.search("ground truth").hits == []


def test_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        SandboxFiles(tmp_path / "missing")


# ------------------------------------------------------------------------ missing and wrong


def test_missing_file_lists_nearby_names(inbox_files: SandboxFiles) -> None:
    with pytest.raises(FileMissing) as info:
        inbox_files.read("downloads/invoice(1).pdf")
    assert "'downloads/invoice (1).pdf'" in str(info.value)
    result = inbox_files.read_file("Invoice from Northwind.eml")
    assert not result.ok and result.error and "Invoice from Northwind Traders.eml" in result.error


def test_missing_file_without_close_names_lists_the_folder(inbox_files: SandboxFiles) -> None:
    result = inbox_files.read_file("notes/zzzzzzzzzzzzzzzzzzzzzzz.qqq")
    assert not result.ok and result.error and "notes/call notes.txt" in result.error


def test_folders_and_files_are_not_confused(inbox_files: SandboxFiles) -> None:
    assert "is a folder" in (inbox_files.read_file("notes").error or "")
    assert "not a folder" in (inbox_files.list_files("notes/call notes.txt").error or "")
    assert "no such file" in (inbox_files.list_files("nowhere").error or "")


# ---------------------------------------------------------------------------------- listing


def test_listing_shows_email_headers_and_attachments(inbox_files: SandboxFiles) -> None:
    entries = {e.path: e for e in inbox_files.listing().entries}
    entry = entries["Invoice from Northwind Traders.eml"]
    assert entry.kind == "email" and entry.email is not None
    assert entry.email.date == "2026-09-12 08:02:11-07:00"
    assert entry.email.sender == "Northwind Traders Billing <billing@northwind-traders.example>"
    assert entry.email.subject == "Invoice INV-2057 from Northwind Traders"
    assert entry.email.attachments == ["Invoice_INV-2057.pdf"]
    forward = entries["FW_ Invoice from Northwind Traders.eml"].email
    assert forward and "contains: Invoice_INV-2057.pdf" in forward.attachments[0]
    assert entries["Rechnung zu Ihrer Bestellung 4500123.eml"].email.sender.startswith("Müller")  # type: ignore[union-attr]
    assert entries["notes/vendor contacts.csv"].kind == "csv"
    assert entries["notes/AP weekly sync 2026-09-29.md"].kind == "markdown"
    assert entries["scans/SCAN_0001.pdf"].kind == "pdf"


def test_listing_is_bounded_and_pages(inbox_files: SandboxFiles) -> None:
    first = inbox_files.list_files().to_text()
    assert len(first) <= 6000 and "call list_files with offset=" in first
    offset = int(first.rsplit("offset=", 1)[1].split()[0])
    second = inbox_files.list_files(offset=offset).to_text()
    assert "Your Hooli invoices are ready.eml" in first + second
    assert second.count("\n- ") + first.count("\n- ") >= 34


def test_listing_a_subfolder(inbox_files: SandboxFiles) -> None:
    listing = inbox_files.listing("downloads")
    assert listing.folder == "downloads"
    assert [e.path for e in listing.entries] == [
        "downloads/invoice (1).pdf",
        "downloads/invoice (2).pdf",
        "downloads/invoice (3).pdf",
        "downloads/invoice (4).pdf",
        "downloads/invoice.pdf",
        "downloads/Rechnung.pdf",
    ]


def test_a_broken_email_does_not_break_the_listing(scratch_inbox: Path) -> None:
    (scratch_inbox / "broken.eml").write_bytes(b"\xff\xfe\x00garbage without headers")
    files = SandboxFiles(scratch_inbox)
    entries = {e.path: e for e in files.listing().entries}
    assert "broken.eml" in entries and len(entries) == 37


# ---------------------------------------------------------------------------------- reading


def test_read_pdf_page_by_page(scratch_inbox: Path, inbox_files: SandboxFiles) -> None:
    content = inbox_files.read("downloads/invoice.pdf")
    assert content.kind == "pdf" and len(content.pages) == 1
    assert "GX-5531" in content.pages[0].text and "2,150.00" in content.pages[0].text
    pricelist = inbox_files.read("Northwind Q4 pricing.eml")
    assert pricelist.email is not None
    pages = pricelist.email.attachments[0].pages
    assert len(pages) == 2 and "NW-7010" in pages[1].text and "[page 2 of 2]" in pricelist.full_text()


def test_read_email_with_pdf_attachment_inline(inbox_files: SandboxFiles) -> None:
    content = inbox_files.read("Invoice from Northwind Traders.eml")
    assert content.email is not None
    assert content.email.body_format == "html"  # plain and HTML alternatives: what a mail program shows
    assert "Please find attached invoice INV-2057" in content.email.body
    text = content.render()
    assert "--- attachment 1: Invoice_INV-2057.pdf (PDF, 1 page(s)) ---" in text
    assert "TOTAL PAYABLE 1,284.50 USD" in text and "Terms Net 30" in text


def test_read_html_only_email_as_text(inbox_files: SandboxFiles) -> None:
    content = inbox_files.read("Friendly reminder - open balance.eml")
    assert content.email and content.email.body_format == "html"
    body = content.email.body
    assert "INV-2057 | September 12, 2026 | 1,284.50 USD" in body
    assert "<" not in body and "ignore me" not in body  # tags and <script> gone


def test_read_encodings(inbox_files: SandboxFiles) -> None:
    latin1 = inbox_files.read("Lieferung Auftrag 4500123.eml").email
    assert latin1 and latin1.headers.subject == "Lieferung für Auftrag 4500123"
    assert "Mit freundlichen Grüßen" in latin1.body
    utf8_qp = inbox_files.read("Rechnung zu Ihrer Bestellung 4500123.eml").email
    assert utf8_qp and utf8_qp.headers.sender.startswith("Müller Industrietechnik GmbH")
    assert "Jürgen Weiß" in utf8_qp.body
    base64 = inbox_files.read("Tax Invoice.eml").email
    assert base64 and "₹1,28,450.00" in base64.body
    assert base64.attachments[0].content_type == "application/octet-stream"
    assert "Rs. 1,28,450.00" in "\n".join(p.text for p in base64.attachments[0].pages)


def test_read_forwarded_email_recursively(inbox_files: SandboxFiles) -> None:
    content = inbox_files.read("FW_ Invoice from Northwind Traders.eml")
    assert content.email is not None
    inner = content.email.attachments[0]
    assert inner.kind == "email" and inner.email is not None
    assert inner.email.headers.date == "2026-09-12 08:02:11-07:00"
    assert "INV-2057" in inner.email.attachments[0].pages[0].text
    assert "--- end of forwarded e-mail" in content.full_text()


def test_read_text_markdown_csv(inbox_files: SandboxFiles) -> None:
    assert "VI-3390" in (inbox_files.read("notes/call notes.txt").text or "")
    assert "# AP weekly sync" in (inbox_files.read("notes/AP weekly sync 2026-09-29.md").text or "")
    csv = inbox_files.read("notes/vendor contacts.csv").text or ""
    assert csv.startswith("vendor,contact,email,phone,notes") and "Jürgen Weiß" in csv


def test_read_legacy_encodings_and_binary(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_bytes("Gebühr 12,50 €".encode("cp1252"))
    (tmp_path / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    files = SandboxFiles(tmp_path)
    assert files.read("old.txt").text == "Gebühr 12,50 €"
    assert "binary data" in (files.read_file("blob.txt").error or "")
    assert "not a readable image" in (files.read_file("photo.jpg").error or "")


def test_scanned_pdf_is_read_by_ocr_and_marked(inbox_files: SandboxFiles) -> None:
    result = inbox_files.read_file("scans/SCAN_0001.pdf")
    assert result.ok
    text = result.to_text()
    assert "[read by OCR" in text and "confidence" in text and "SF-0098" in text


def test_scanned_pdf_without_an_ocr_engine_says_so(
    inbox_files: SandboxFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskcrew.tools.documents.worker import ParseWorker

    monkeypatch.setenv("TASKCREW_TESSERACT", "no-such-ocr-program")
    worker = ParseWorker()  # a fresh child sees the environment without tesseract
    try:
        files = SandboxFiles(inbox_files.root, worker=worker)
        result = files.read_file("scans/SCAN_0001.pdf")
        photo = files.read_file("scans/IMG_20260926_0931.jpg")
    finally:
        worker.close()
    assert not result.ok and result.error
    assert NO_TEXT_LAYER in result.error and "apt-get install tesseract-ocr" in result.error
    assert not photo.ok and photo.error and photo.error.startswith("scans/IMG_20260926_0931.jpg: an image;")
    assert "OCR is not available" in photo.error


def test_scanned_attachment_inside_an_email(scratch_inbox: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"] = "Soylent Foods <ar@soylentfoods.example>"
    msg["To"] = "ap@acme-corp.example"
    msg["Subject"] = "Scan"
    msg["Date"] = "Thu, 24 Sep 2026 10:00:00 -0400"
    msg.set_content("Scan attached.")
    scan = (scratch_inbox / "scans" / "SCAN_0001.pdf").read_bytes()
    msg.add_attachment(scan, maintype="application", subtype="pdf", filename="scan.pdf")
    (scratch_inbox / "scan mail.eml").write_bytes(msg.as_bytes())
    content = SandboxFiles(scratch_inbox).read("scan mail.eml")
    assert content.email and not content.email.attachments[0].error
    assert content.email.attachments[0].pages[0].ocr and content.ocr
    assert "SF-0098" in content.render() and "Scan attached." in content.render()


def test_malformed_pdf_errors_and_the_rest_still_works(inbox_files: SandboxFiles) -> None:
    result = inbox_files.read_file("downloads/invoice (3).pdf")
    assert not result.ok and result.error
    assert "damaged or incomplete PDF" in result.error and "Other files are not affected" in result.error
    assert inbox_files.read_file("downloads/invoice (2).pdf").ok
    assert "downloads/invoice (3).pdf" in inbox_files.list_files("downloads").to_text()
    search = inbox_files.search("GX-5531")
    assert any(u == "downloads/invoice (3).pdf (damaged file)" for u in search.unreadable)
    assert any(h.path == "downloads/invoice.pdf" for h in search.hits)


def test_not_a_pdf_and_empty_pdf(tmp_path: Path) -> None:
    from fpdf import FPDF

    (tmp_path / "fake.pdf").write_text("hello", encoding="utf-8")
    blank = FPDF()
    blank.add_page()
    (tmp_path / "blank.pdf").write_bytes(bytes(blank.output()))
    files = SandboxFiles(tmp_path)
    assert "not a PDF file" in (files.read_file("fake.pdf").error or "")
    assert "no text on any page" in (files.read_file("blank.pdf").error or "")


def test_long_files_are_truncated_with_a_way_to_continue(tmp_path: Path) -> None:
    lines = [f"line {i:05d} " + "x" * 60 for i in range(400)]
    (tmp_path / "long.txt").write_text("\n".join(lines), encoding="utf-8")
    files = SandboxFiles(tmp_path, max_chars=3000)
    first = files.read_file("long.txt").to_text()
    assert len(first) < 3300 and "[… truncated:" in first and "offset=3000" in first
    second = files.read_file("long.txt", offset=3000).to_text()
    assert "[showing characters 3000-6000" in second and "line 00000" not in second
    past = files.read_file("long.txt", offset=10**7).to_text()
    assert "past the end" in past


# ----------------------------------------------------------------------------------- search


def test_search_finds_text_in_pdfs_attachments_and_bodies(inbox_files: SandboxFiles) -> None:
    result = inbox_files.search("inv-2057")
    paths = {h.path for h in result.hits}
    assert {
        "Invoice from Northwind Traders.eml",
        "FW_ Invoice from Northwind Traders.eml",
        "Friendly reminder - open balance.eml",
    } <= paths
    locations = {h.location for h in result.hits if h.path == "Invoice from Northwind Traders.eml"}
    assert any(loc.startswith("attachment Invoice_INV-2057.pdf page 1") for loc in locations)
    forwarded = {h.location for h in result.hits if h.path.startswith("FW_")}
    assert any(" > " in loc for loc in forwarded)


def test_search_all_words_on_a_line_case_insensitive(inbox_files: SandboxFiles) -> None:
    hits = inbox_files.search("total PAYABLE").hits
    assert hits and all("total payable" in h.line.lower() for h in hits)
    assert {h.path for h in inbox_files.search("gesamtbetrag 1.284,50").hits} == {
        "Rechnung zu Ihrer Bestellung 4500123.eml"
    }
    assert inbox_files.search("stark logistics").render().startswith("no matches")


def test_search_is_bounded(inbox_files: SandboxFiles, inbox_dir: Path) -> None:
    files = SandboxFiles(inbox_dir, max_hits=10)
    result = files.search("a")
    assert len(result.hits) == 10 and result.truncated
    assert "more matches not shown" in result.render()
    assert "empty search query" in (inbox_files.search_files("   ").error or "")


# ---------------------------------------------------------------------------------- helpers


def test_html_to_text() -> None:
    html = (
        "<html><head><title>t</title><style>p{color:red}</style></head><body>"
        '<div style="display: none">preheader</div><p>Hello<br>World &amp; co</p>'
        "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>"
        '<ul><li>one</li><li>two</li></ul><p>see <a href="https://x.example/a">this link</a> '
        '<a href="mailto:a@b.example">mail</a></p></body></html>'
    )
    assert html_to_text(html) == (
        "Hello\nWorld & co\n\nA | B\n1 | 2\n\n- one\n- two\n\nsee this link (https://x.example/a) mail"
    )


def test_listing_follows_no_symlinked_folder_loops(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("f", encoding="utf-8")
    os.symlink(tmp_path / "a", tmp_path / "a" / "loop")
    assert [e.path for e in SandboxFiles(tmp_path).listing().entries] == ["a/f.txt"]


def test_unreadable_is_a_recoverable_result_not_an_exception(inbox_files: SandboxFiles) -> None:
    with pytest.raises(Unreadable):
        inbox_files.read("downloads/invoice (3).pdf")
    assert inbox_files.read_file("downloads/invoice (3).pdf").ok is False
