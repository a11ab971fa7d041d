"""Document reading beyond the happy path: layout, encodings, OCR, limits, cache, file-system oddities."""

from __future__ import annotations

import io
import os
import random
import resource
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from taskcrew.tools.documents import SandboxFiles, TooComplex, Unreadable, decode_text
from taskcrew.tools.documents.worker import ParseWorker

# ----------------------------------------------------------------------------- helpers


def _fpdf_page(draw: list[tuple[float, float, str]], *, size: int = 12) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=size)
    for x, y, text in draw:
        pdf.text(x, y, text)
    return bytes(pdf.output())


def _raster(pdf: bytes, scale: float = 200 / 72) -> object:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        return doc[0].render(scale=scale, grayscale=True).to_pil()
    finally:
        doc.close()


def _invoice_lines() -> list[tuple[float, float, str]]:
    return [
        (20, 30, "BLUTH COMPANY INVOICE"),
        (20, 45, "Invoice No. BC-7731"),
        (20, 55, "Date 2026-09-30"),
        (20, 65, "TOTAL DUE 4,812.75 USD"),
    ]


# ------------------------------------------------------------------------------ layout


def test_values_drawn_before_their_labels_read_label_first(tmp_path: Path) -> None:
    # the value is drawn first, its label after it but to its left: plain order glues them
    rows = [("Ordernummer:", "12572103"), ("Rechnungsnummer:", "RE-7781"), ("Gesamtbetrag:", "1.234,56 EUR")]
    draw = []
    for i, (label, value) in enumerate(rows):
        draw += [(90, 40 + 9 * i, value), (20, 40 + 9 * i, label)]
    (tmp_path / "glued.pdf").write_bytes(_fpdf_page(draw))
    text = SandboxFiles(tmp_path).read("glued.pdf").full_text()
    for label, value in rows:
        assert any(line.startswith(label) and line.rstrip().endswith(value) for line in text.splitlines()), (
            text
        )
    assert "12572103Ordernummer" not in text


def test_text_drawn_in_reading_order_is_left_as_drawn(tmp_path: Path) -> None:
    (tmp_path / "plain.pdf").write_bytes(_fpdf_page([(20, 40, "Subtotal"), (90, 40, "100.00")]))
    assert SandboxFiles(tmp_path).read("plain.pdf").full_text() == "Subtotal 100.00"


# ---------------------------------------------------------------------------- encodings


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Vendor;Total\nMüller GmbH;1.234,56 €\n", "utf-16"),  # with BOM
        ("Vendor;Total\nMüller GmbH;1.234,56 €\n", "utf-16-le"),  # without BOM
        ("Vendor;Total\nMüller GmbH;1.234,56 €\n", "utf-16-be"),
        ("Vendor;Total\nMüller GmbH;1.234,56 €\n", "utf-32"),
        ("Vendor;Total\nMüller GmbH;1.234,56 €\n", "utf-8-sig"),
        ("請求書 番号 12345\n合計金額 お支払い期限 2026年10月31日\n", "shift_jis"),
        ("Счёт на оплату N 15 от 1 октября\nсумма 1500 руб. Поставщик ООО Ромашка\n", "koi8_r"),
        ("Счёт на оплату N 15 от 1 октября\nсумма 1500 руб.\n", "cp1251"),
        ("Rechnung über 12,50 € — fällig\n", "cp1252"),
    ],
)
def test_encodings_are_detected(text: str, encoding: str) -> None:
    assert decode_text(text.encode(encoding), "x.csv") == text.strip("\n")


def test_garbage_and_empty_files_are_refused(tmp_path: Path) -> None:
    rng = random.Random(7)
    (tmp_path / "random.txt").write_bytes(bytes(rng.randrange(1, 256) for _ in range(4000)))
    (tmp_path / "empty.eml").write_bytes(b"")
    (tmp_path / "report.csv").write_bytes("a,b\n1,2\n".encode("utf-16"))
    files = SandboxFiles(tmp_path)
    assert "not readable text" in (files.read_file("random.txt").error or "")
    assert "empty" in (files.read_file("empty.eml").error or "")
    assert files.read("report.csv").text == "a,b\n1,2"
    assert "empty file" in files.listing().render()


# ---------------------------------------------------------------------------------- OCR


@pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
def test_image_invoice_is_read_by_ocr_with_confidence(tmp_path: Path, fmt: str) -> None:
    image = _raster(_fpdf_page(_invoice_lines(), size=14))
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)  # type: ignore[attr-defined]
    name = f"invoice.{fmt.lower()}"
    (tmp_path / name).write_bytes(buffer.getvalue())
    files = SandboxFiles(tmp_path)
    content = files.read(name)
    assert content.kind == "image" and content.ocr
    page = content.pages[0]
    assert page.ocr_confidence is not None and page.ocr_confidence > 60
    text = content.render()
    assert "[read by OCR" in text and "BC-7731" in text and "4,812.75" in text
    assert any("(read by OCR)" in hit.location for hit in files.search("BC-7731").hits)


def test_mixed_page_reads_its_image_region_and_marks_it(tmp_path: Path) -> None:
    from fpdf import FPDF

    image = _raster(_fpdf_page(_invoice_lines(), size=14))
    buffer = io.BytesIO()
    image.crop((0, 0, image.width, image.height // 5)).save(buffer, format="PNG")  # type: ignore[attr-defined]
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(20, 100, "Please pay within 30 days. Thank you.")
    pdf.image(io.BytesIO(buffer.getvalue()), x=10, y=10, w=190)
    (tmp_path / "mixed.pdf").write_bytes(bytes(pdf.output()))
    content = SandboxFiles(tmp_path).read("mixed.pdf")
    text = content.full_text()
    assert "Please pay within 30 days" in text
    assert "[read by OCR" in text and "image region" in text and "BC-7731" in text
    assert content.pages[0].ocr


# ------------------------------------------------------------------------------- limits


def _shared_stream_pdf(pages: int, ops: int) -> bytes:
    """Many pages drawing one big content stream (parsing each page re-reads all of it)."""
    body = b"BT /F1 9 Tf 20 800 Td " + b"(Lorem ipsum dolor sit amet) Tj 0 -1 Td " * ops + b"ET"
    stream = zlib.compress(body)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
        + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 4 0 R >>"
    ] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_parse_past_its_time_limit_is_too_complex_and_remembered(tmp_path: Path) -> None:
    (tmp_path / "bomb.pdf").write_bytes(_shared_stream_pdf(pages=1, ops=400_000))  # one very slow page
    (tmp_path / "ok.txt").write_text("invoice BC-1 is fine\n", encoding="utf-8")
    worker = ParseWorker(timeout_s=2)
    files = SandboxFiles(tmp_path, worker=worker)
    try:
        result = files.read_file("bomb.pdf")
        assert not result.ok and "too complex to read" in (result.error or "")
        assert "longer than 2 s" in (result.error or "")
        assert files.read_file("ok.txt").ok  # the worker came back after the kill
        found = files.search("BC-1")
        assert found.hits and any("too complex" in u for u in found.unreadable)
        assert files.parses == 2  # the bad PDF is remembered, not parsed again by the search
    finally:
        worker.close()


def test_a_pdf_too_slow_to_parse_is_read_in_part_before_the_limit(tmp_path: Path) -> None:
    # every page re-reads one shared stream: each is slow (~0.35 s here), so reading stops at half the
    # time limit; the limit leaves a loaded machine time for the first page (at 4 s it did not once)
    (tmp_path / "slow.pdf").write_bytes(_shared_stream_pdf(pages=300, ops=1000))
    worker = ParseWorker(timeout_s=12)
    try:
        content = SandboxFiles(tmp_path, worker=worker).read("slow.pdf")
    finally:
        worker.close()
    assert 1 <= len(content.pages) < 300
    assert "the pages are too slow to parse" in content.full_text()


def test_a_parse_past_its_memory_limit_is_too_complex(tmp_path: Path) -> None:
    # a 1 MB file whose one content stream inflates to ~120 MB: past the 48 MB the parser may take
    (tmp_path / "a.pdf").write_bytes(_shared_stream_pdf(pages=1, ops=3_000_000))
    worker = ParseWorker(memory_bytes=48 * 2**20)
    try:
        with pytest.raises(TooComplex, match=r"too complex to read .*out of memory \(48 MB"):
            SandboxFiles(tmp_path, worker=worker).read("a.pdf")
    finally:
        worker.close()


_MANY_DESCRIPTORS = textwrap.dedent(
    """
    import os, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_NOFILE, (2048, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    from taskcrew.tools.documents import SandboxFiles
    from taskcrew.tools.documents.worker import ParseWorker
    from taskcrew.tools.prompt_input import TerminalLines
    worker = ParseWorker()
    try:
        print(SandboxFiles(Path(sys.argv[1]), worker=worker).read("bc.pdf").full_text().split()[0])
        print(worker._proc.stdout.fileno() > 1024)
    finally:
        worker.close()
    r, w = os.pipe()
    os.write(w, b"yes\\n")
    print(r > 1024, TerminalLines(r).readline().strip())
    """
)


@pytest.mark.skipif(resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 2048, reason="needs 2,048 descriptors")
def test_a_process_holding_many_descriptors_still_parses_and_prompts(tmp_path: Path) -> None:
    # a long-lived worker or console may hold past 1,024 descriptors: select() raises on those
    (tmp_path / "bc.pdf").write_bytes(_fpdf_page(_invoice_lines()))
    done = subprocess.run(
        [sys.executable, "-c", _MANY_DESCRIPTORS, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["BLUTH", "True", "True", "yes"]


def test_paging_and_searching_parse_each_file_once(tmp_path: Path) -> None:
    lines = [(20, 20 + 6 * i, f"line {i} of the long statement") for i in range(40)]
    (tmp_path / "long.pdf").write_bytes(_fpdf_page(lines, size=8))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    files = SandboxFiles(tmp_path, max_chars=200)
    first = files.read("long.pdf")
    files.read("long.pdf", offset=200)
    files.read("long.pdf", offset=400)
    files.search("statement")
    files.search("line 7")
    assert files.parses == 2 and "call read_file with offset=" in first.render()
    os.utime(tmp_path / "long.pdf", ns=(1, 1))  # a changed file is read again
    files.read("long.pdf")
    assert files.parses == 3


# ----------------------------------------------------------------------- file-system oddities


def test_file_system_oddities_are_clean_results(tmp_path: Path) -> None:
    root = tmp_path / "sandbox"
    root.mkdir()
    (root / "ok.txt").write_text("invoice 42\n", encoding="utf-8")
    (root / "loop").symlink_to(root / "loop")
    (root / "a").symlink_to(root / "b")
    (root / "b").symlink_to(root / "a")
    (tmp_path / "secret.txt").write_text("outside secret\n", encoding="utf-8")
    os.link(tmp_path / "secret.txt", root / "hard.txt")
    os.mkfifo(root / "pipe.txt")
    files = SandboxFiles(root)
    listing = files.listing()
    assert [e.path for e in listing.entries] == ["ok.txt"]
    assert files.search("invoice").hits and files.search("secret").hits == []
    for name, needle in [
        ("loop", "symlink loop"),
        ("a", "symlink loop"),
        ("hard.txt", "hard link"),
        ("pipe.txt", "special file"),
        ("x" * 5000, "longer than the file system allows"),
        ("missing.txt", "no such file"),
    ]:
        result = files.read_file(name)
        assert not result.ok and needle in (result.error or ""), (name, result.error)
        assert len(result.error or "") < 600


def test_private_patterns_apply_wherever_the_reader_is_rooted(tmp_path: Path) -> None:
    company = tmp_path / "company"
    (company / "sandbox").mkdir(parents=True)
    (company / "sandbox" / "documents.yaml").write_text("answers: yes\n", encoding="utf-8")
    (company / "sandbox" / "note.txt").write_text("hello\n", encoding="utf-8")
    for root in (company, company / "sandbox"):
        files = SandboxFiles(root)
        assert all("documents.yaml" not in e.path for e in files.listing().entries)
        rel = "sandbox/documents.yaml" if root == company else "documents.yaml"
        assert "not available" in (files.read_file(rel).error or "")
        assert files.search("answers").hits == []


def test_a_damaged_file_does_not_stop_a_listing_or_search(tmp_path: Path) -> None:
    (tmp_path / "bad.eml").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "good.txt").write_text("total 10\n", encoding="utf-8")
    files = SandboxFiles(tmp_path)
    assert len(files.listing().entries) == 2
    assert files.search("total").hits
    with pytest.raises(Unreadable):
        files.read("bad.eml")


# ------------------------------------------------------------------------ OCR in approvals


def test_values_read_by_ocr_are_flagged_in_the_approval(inbox_files: SandboxFiles) -> None:
    from taskcrew.tools.human import ApprovalDecision, ScriptedHuman, describe_request
    from taskcrew.tools.policy import Policy, PolicyConfig, Submission

    files = SandboxFiles(inbox_files.root)
    human = ScriptedHuman([ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url("http://127.0.0.1:8000"), human)
    policy.flaggers.append(files.provenance.flag)
    files.read("Invoice from Northwind Traders.eml")  # a text layer: nothing recorded
    assert len(files.provenance) == 0
    files.read("scans/SCAN_0001.pdf")
    fields = [("vendor", "Soylent Foods"), ("number", "SF-0098"), ("total", "615.00"), ("date", "2026-09-24")]
    fields += [("other_total", "1284.50"), ("qty", "30")]
    sub = Submission(
        origin="form",
        method="POST",
        url="http://127.0.0.1:8000/bills",
        fields=[{"name": n, "value": v} for n, v in fields],  # type: ignore[misc]
    )
    assert policy.submission(sub).outcome == "approved"
    shown = {f.name: f.note for f in human.requests[0].fields}
    assert shown["number"] and "read by OCR" in shown["number"] and "SCAN_0001.pdf" in shown["number"]
    assert shown["total"] and shown["date"]
    assert shown["vendor"] is None and shown["other_total"] is None and shown["qty"] is None
    assert "⚠ read by OCR" in describe_request(human.requests[0])
    assert policy.read_only_copy().flaggers is policy.flaggers


def test_a_pdf_longer_than_the_page_cap_is_read_in_part_with_a_note(tmp_path: Path) -> None:
    from taskcrew.tools.documents.limits import MAX_PAGES

    (tmp_path / "long.pdf").write_bytes(_shared_stream_pdf(pages=MAX_PAGES + 5, ops=1))
    worker = ParseWorker(timeout_s=900)  # the page cap is what stops it here, not a loaded machine's clock
    try:
        content = SandboxFiles(tmp_path, worker=worker).read("long.pdf")
    finally:
        worker.close()
    assert len(content.pages) == MAX_PAGES
    assert f"only the first {MAX_PAGES} of {MAX_PAGES + 5} pages were read" in content.full_text()


def test_an_icon_is_not_sent_to_ocr_and_says_why(tmp_path: Path) -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), "white").save(buffer, format="PNG")
    (tmp_path / "icon.png").write_bytes(buffer.getvalue())
    error = SandboxFiles(tmp_path).read_file("icon.png").error or ""
    assert "small picture" in error and "do not guess" in error


def test_a_photo_taken_sideways_is_turned_before_it_is_read(tmp_path: Path) -> None:
    image = _raster(_fpdf_page(_invoice_lines(), size=14))
    buffer = io.BytesIO()
    image.rotate(90, expand=True).save(buffer, format="PNG")  # type: ignore[attr-defined]
    (tmp_path / "sideways.png").write_bytes(buffer.getvalue())
    text = SandboxFiles(tmp_path).read("sideways.png").full_text()
    assert "BC-7731" in text and "4,812.75" in text
