"""The source viewer and the runs pages attacked as a hostile colleague or document would: a cited
file replaced after the approval was parked (its text, its scan, its PDF pages), a crafted link
that makes the viewer claim any line as the source of any words, a hard-linked file served by the
image route, a huge PDF page that eats the console's memory, and a scripted demo run shown as a
real one.

The HTTP cases drive the console's app in-process (Starlette's test client, the real job store on
SQLite); the concurrent renders go through the console served by uvicorn; the demo case runs
`taskcrew demo` as a subprocess."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from console_seed import write_run
from fixtures_console import PASSWORDS
from PIL import Image
from starlette.testclient import TestClient
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.cli import app as cli_app
from taskcrew.console.app import build_app
from taskcrew.console.documents import Documents
from taskcrew.console.server import ConsoleServer
from taskcrew.console.settings import ConsoleSettings
from taskcrew.jobs import Approval, ApprovalRequest, FieldSource, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.human import FieldValue

BASE = "http://testserver"
IBAN = "GB33 BUKB 2020 1555 5555 55"
INVOICE = (
    "Invoice INV-77 from Northwind Traders\nOld bank: DE89 3704 0044 0532 0130 00\n"
    f"New bank from 1 Dec: {IBAN}\nTotal: 1,250.00 EUR\n"
)


def pdf(lines: list[tuple[int, int, int, str]], width: int = 595, height: int = 842) -> bytes:
    """A one-page PDF drawing each (x, y, size, text) in Helvetica."""
    ops = "\n".join(f"BT /F1 {size} Tf {x} {y} Td ({text}) Tj ET" for x, y, size, text in lines)
    stream = ops.encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>".encode(),
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


class App:
    def __init__(self, root: Path, users: Path) -> None:
        self.root = root
        self.sandbox = root / "company"
        (self.sandbox / "inbox").mkdir(parents=True)
        self.jobs = Jobs.open(f"sqlite:///{root / 'jobs.sqlite3'}")
        self.settings = ConsoleSettings(
            port=0,
            state_dir=root / "console",
            runs_dirs=[root / "runs"],
            eval_dirs=[root / "eval"],
            users_file=users,
            jobs_url=self.jobs.url,
            approvals_dir=root / "approvals",
            sandbox=self.sandbox,
        )
        self.app = build_app(self.settings, self.jobs)

    def inbox(self, name: str, content: str | bytes) -> Path:
        path = self.sandbox / "inbox" / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    def client(self, user: str = "bob") -> TestClient:
        client = TestClient(self.app, base_url=BASE, follow_redirects=False)
        token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
        assert token
        form = {"username": user, "password": PASSWORDS[user], "csrf": token.group(1), "next": "/"}
        assert client.post("/login", data=form, headers={"origin": BASE}).status_code == 303
        return client

    def park(self, fields: dict[str, str], summary: str, *, worker: bool = False) -> Approval:
        """An approval as a worker parks it (``worker``: ``JobHuman``, which seals the cited files),
        or as the store parks it (as approvals parked before the seal were)."""
        job = self.jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="console")
        self.jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
        request = ApprovalRequest(
            kind="form_submission",
            method="POST",
            url="http://127.0.0.1:8800/bills/new",
            fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
            page_url="http://127.0.0.1:8800/bills/new",
            summary="Save the bill\nwhere the values come from:\n" + summary,
        )
        if worker:
            human = JobHuman(self.jobs, job.id, authority=Authority(self.jobs, home=self.root / "approvals"))
            human.sandbox = self.sandbox  # the company's files the run read
            with pytest.raises(Parked) as parked:
                human.approve(request)
            approval = self.jobs.approval(parked.value.approval_id)
        else:
            sources = [
                FieldSource(name=k, value=v, source="the page's form as filled") for k, v in fields.items()
            ]
            approval = self.jobs.park(
                job.id, kind="approval", key=f"k-{job.id}", request=request, sources=sources
            )
        self.jobs.mark(job.id, "waiting", only_if=("running",))
        return approval


@pytest.fixture
def app(tmp_path: Path, console_users: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
    made = App(tmp_path, console_users)
    yield made
    made.jobs.close()


def _parked_bill(app: App) -> tuple[bytes, bytes, Path, Approval]:
    """A PDF bill whose IBAN a worker's approval cites (sealed), and another of the same size."""
    sealed = pdf([(72, 760, 14, "Invoice INV-5"), (72, 730, 14, "IBAN: DE89 3704 0044 0532 0130 00")])
    other = pdf([(72, 760, 14, "Invoice INV-5"), (72, 730, 14, "IBAN: GB33 BUKB 2020 1555 5555 55")])
    bill = app.inbox("bill.pdf", sealed)
    approval = app.park(
        {"iban": "DE89 3704 0044 0532 0130 00"},
        "  iban = DE89 3704 0044 0532 0130 00: bill.pdf, page 1, line 2 (cited in step 1)\n",
        worker=True,
    )
    return sealed, other, bill, approval


def links(page: str) -> list[str]:
    return [h.replace("&amp;", "&") for h in re.findall(r'href="(/approvals/[^"]+/source\?[^"#]+)', page)]


def about(page: str) -> str:
    """What the viewer says of the file (whether it is the one parked) and of the value's source."""
    said = re.findall(r'<p id="doc-(?:seal|about)"[^>]*>(.*?)</p>', page, re.S)
    return " ".join(re.sub(r"<[^>]+>", "", " ".join(said)).split())


def marked(page: str) -> list[list[str]]:
    """The marked lines' numbers and words (the seal badge in the row left out: ``row`` has it)."""
    rows = re.findall(r'<tr id="line-\d+" class="hit".*?</tr>', page, re.S)
    rows = [re.sub(r'<span class="rowseal.*?</span>', "", row, flags=re.S) for row in rows]
    return [re.sub(r"<[^>]+>", " ", row).split() for row in rows]


def test_a_cited_file_replaced_after_parking_is_shown_as_changed_with_no_line_marked(app: App) -> None:
    """The worker seals each cited file's SHA-256 with the approval's sources when it parks; the
    viewer marks lines only in the very file the run read, says when the file is another, and says
    that an approval parked before this cannot be checked."""
    remit = app.inbox("remit.txt", "Remittance advice\nVendor: Contoso Ltd\nAmount: 300.00 EUR\n")
    approval = app.park(
        {"vendor": "Contoso Ltd", "amount": "300.00"},
        "  vendor = Contoso Ltd: remit.txt, line 2 (cited in step 1)\n",
        worker=True,
    )
    assert approval.files_sha256 is not None and len(approval.files_sha256["remit.txt"]) == 64
    bob = app.client()
    decision = bob.get(f"/approvals/{approval.id}").text
    assert "sha256" not in decision  # the seal is not an origin, nor shown as one
    [link] = {h for h in links(decision) if "vendor" in h}
    page = bob.get(link).text
    assert "SHA-256 is the one sealed" in about(page) and "line 2 (marked)" in about(page)
    assert marked(page) == [["2", "Vendor:", "Contoso", "Ltd"]]

    remit.write_text(
        "Remittance advice\nVendor: Contoso Ltd (new bank account, see attached)\nAmount: 300.00 EUR\n"
    )
    page = bob.get(link).text
    said = about(page)
    assert "not the one the approval was parked with" in said and "no line is marked" in said
    assert "(marked)" not in said and marked(page) == [] and 'role="alert"' in page

    old = app.park({"vendor": "Contoso Ltd"}, "  vendor = Contoso Ltd: remit.txt, line 2 (cited in step 1)\n")
    page = bob.get(f"/approvals/{old.id}/source", params={"field": "vendor"}).text
    assert "parked before the files it cites were sealed" in about(page) and "cannot be checked" in about(
        page
    )


def test_a_file_swapped_and_put_back_under_the_same_size_and_mtime_is_never_shown_as_parked(
    app: App,
) -> None:
    """The seal is compared with the very bytes whose text is shown (one read), never with a second
    read of the file: a file replaced with other text of the same size, its mtime put back, is read
    by the viewer (and kept by its parse cache, which knows a file by size and mtime); put back as
    it was parked, the viewer still shows the text it read, so it must not call that the file as
    parked, nor mark a line of it as the one the run cited."""
    original = "Remittance advice\nVendor: Contoso Ltd\nIBAN: DE89 3704 0044 0532 0130 00\n"
    swapped = "Remittance advice\nVendor: Contoso Ltd\nIBAN: GB33 BUKB 2020 1555 5555 55\n"
    assert len(swapped.encode()) == len(original.encode()) and swapped != original
    remit = app.inbox("remit.txt", original)
    approval = app.park(
        {"vendor": "Contoso Ltd", "iban": "DE89 3704 0044 0532 0130 00"},
        "  iban = DE89 3704 0044 0532 0130 00: remit.txt, line 3 (cited in step 1)\n",
        worker=True,
    )
    assert approval.files_sha256 is not None and len(approval.files_sha256["remit.txt"]) == 64
    parked = remit.stat()

    bob = app.client()
    link = f"/approvals/{approval.id}/source?field=iban"
    put_back(remit, swapped.encode(), parked)
    page = bob.get(link).text
    assert "GB33" in page and "not the one the approval was parked with" in about(page), about(page)
    assert marked(page) == [] and "SHA-256 is the one sealed" not in about(page)

    put_back(
        remit, original.encode(), parked
    )  # the file is the parked one again; what the viewer read and shows is not
    page = bob.get(link).text
    shown = re.findall(r'<tr id="line-3".*?</tr>', page, re.S)
    if "GB33" in " ".join(shown):  # the text read while it was swapped (the parse cache's)
        assert "SHA-256 is the one sealed" not in about(page), about(page)
        assert "not the one the approval was parked with" in about(page) and marked(page) == []
    else:  # read anew: the file as parked, its line marked
        assert "SHA-256 is the one sealed" in about(page) and "DE89" in " ".join(shown)
        assert marked(page) == [["3", "IBAN:", "DE89", "3704", "0044", "0532", "0130", "00"]]


def test_the_viewer_says_and_marks_only_what_the_approval_records(app: App) -> None:
    """Which field, which line and which words the page names come from the approval's own
    origins: a crafted link cannot make it claim a line as the source of anything."""
    app.inbox("invoice.txt", INVOICE)
    approval = app.park(
        {"vendor": "Northwind Traders", "amount": "1,250.00", "iban": IBAN},
        f"  iban = {IBAN}: invoice.txt, line 3 (cited in step 1)\n",
    )
    bob = app.client()
    base = f"/approvals/{approval.id}/source"
    crafted = bob.get(
        base, params={"file": "invoice.txt", "line": "2", "field": "IBAN (confirmed by phone, OK to approve)"}
    )
    assert "confirmed by phone" not in crafted.text and marked(crafted.text) == []
    for params in ({"file": "invoice.txt", "line": "2", "find": "Old bank"}, {"field": "iban", "line": "2"}):
        page = bob.get(base, params=params).text
        assert marked(page) in ([], [["3", "New", "bank", "from", "1", "Dec:", *IBAN.split()]]), params
    assert "A document this approval's values came from." in about(
        bob.get(base, params={"file": "invoice.txt"}).text
    )
    [link] = {h for h in links(bob.get(f"/approvals/{approval.id}").text) if "iban" in h}
    assert re.fullmatch(rf"{base}\?field=iban", link)  # the link names the field and nothing else
    page = bob.get(link).text
    assert "The source of iban" in about(page) and "line 3 (marked), as the run cited it" in about(page)
    assert marked(page) == [["3", "New", "bank", "from", "1", "Dec:", *IBAN.split()]]
    assert bob.get(base, params={"field": "amount"}).status_code == 404  # its origin cites no file


def test_a_hard_linked_cited_file_is_refused_by_every_route(app: App) -> None:
    """The image and PDF-page routes open a cited file with the reader's own check: a hard link
    (its other name may lie outside the company's files) is refused as the text view refuses it."""
    outside = app.root / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"OUTSIDE-THE-SANDBOX-" * 4)
    (outside / "secret.pdf").write_bytes(pdf([(72, 760, 14, "Invoice INV-5 Total: 10.00 EUR")]))
    os.link(outside / "secret.png", app.sandbox / "inbox" / "scan.png")
    os.link(outside / "secret.pdf", app.sandbox / "inbox" / "bill.pdf")
    approval = app.park(
        {"amount": "10.00", "invoice_number": "INV-5"},
        "  amount = 10.00: scan.png (OCR), line 1 (cited in step 1)\n"
        "  invoice_number = INV-5: bill.pdf, page 1, line 2 (cited in step 1)\n",
    )
    bob = app.client()
    base = f"/approvals/{approval.id}/source"
    for name in ("scan.png", "bill.pdf"):
        assert bob.get(base, params={"file": name}).status_code == 404
        image = bob.get(f"{base}/image", params={"file": name})
        assert image.status_code == 404 and b"OUTSIDE" not in image.content, name
        page = bob.get(f"{base}/image", params={"file": name, "page": "1"})
        assert page.status_code == 404 and not page.content.startswith(b"\x89PNG"), name


def test_a_huge_pdf_page_is_drawn_within_a_pixel_bound_and_the_page_says_so(app: App) -> None:
    """A 600-byte PDF may declare a page of 200 × 200 inches: the console draws at most about four
    megapixels of it, and says the page is drawn smaller."""
    side = 3000  # points: drawn at 1.4 pixels per point, 17.6 megapixels
    app.inbox("big.pdf", pdf([(72, side - 80, 14, "Invoice INV-88 Total: 300.00 EUR")], side, side))
    app.inbox("small.pdf", pdf([(72, 760, 14, "Invoice INV-89 Total: 300.00 EUR")]))
    documents = Documents(app.sandbox)
    drawn = Image.open(io.BytesIO(documents.pdf_page_png("big.pdf", 1) or b""))
    assert drawn.width * drawn.height <= 4_000_000 and drawn.width >= 1900
    small = Image.open(io.BytesIO(documents.pdf_page_png("small.pdf", 1) or b""))
    assert small.size == (round(595 * 1.4), round(842 * 1.4))  # an ordinary page as before
    approval = app.park(
        {"amount": "300.00", "invoice_number": "INV-89"},
        "  amount = 300.00: big.pdf, page 1, line 2 (cited in step 1)\n"
        "  invoice_number = INV-89: small.pdf, page 1, line 2 (cited in step 1)\n",
    )
    bob = app.client()
    page = bob.get(f"/approvals/{approval.id}/source", params={"field": "amount"}).text
    assert "a very large page (3000 × 3000 pt), drawn smaller" in page
    assert (
        "drawn smaller"
        not in bob.get(f"/approvals/{approval.id}/source", params={"field": "invoice_number"}).text
    )


def test_pdf_pages_are_drawn_a_few_at_a_time(
    app: App, console_users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many requests for pages at once (a PDF of 20 pages, or someone asking on purpose) are drawn
    at most two at a time; the others wait without holding a thread."""
    app.inbox("bill.pdf", pdf([(72, 760, 14, "Invoice INV-90 Total: 300.00 EUR")]))
    approval = app.park(
        {"amount": "300.00"}, "  amount = 300.00: bill.pdf, page 1, line 1 (cited in step 1)\n"
    )
    busy, most, lock = [0], [0], threading.Lock()

    def slow_render(self: Documents, name: str, page: int, sealed: str | None = None) -> bytes:
        with lock:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        time.sleep(0.4)
        with lock:
            busy[0] -= 1
        return b"\x89PNG\r\n\x1a\n"

    monkeypatch.setattr(Documents, "pdf_page_png", slow_render)
    server = ConsoleServer(app.settings, app.jobs).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
            assert token
            form = {"username": "bob", "password": PASSWORDS["bob"], "csrf": token.group(1), "next": "/"}
            assert client.post("/login", data=form, headers={"origin": server.url}).status_code == 303
            got: list[int] = []

            def fetch() -> None:
                url = f"/approvals/{approval.id}/source/image"
                got.append(client.get(url, params={"file": "bill.pdf", "page": "1"}).status_code)

            threads = [threading.Thread(target=fetch) for _ in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
    finally:
        server.stop()
    assert got == [200] * 6 and most[0] <= 2, (got, most)


def test_a_demo_run_is_labelled_on_the_runs_list_its_page_and_its_report(app: App) -> None:
    """A run `taskcrew demo` made (its folder marked demo.json, its report labelled) is shown as a
    demo with scripted stand-in models; a run by scripted models without the mark says they are
    not AI; a run by a real model says neither."""
    from taskcrew.demo import demo_report, mark_demo_run

    runs = app.root / "runs"
    demo = write_run(runs, "run-demo", "Find the latest invoice from Northwind Traders")
    mark_demo_run(demo)
    report = demo_report(demo, "# Done, and independently verified\n\nThis was done and checked.\n")
    report = demo_report(demo, report)  # once
    (demo / "report.md").write_text(report)
    assert report.count("Demo (scripted stand-in models, not AI).") == 1 and report.startswith("# Done")
    write_run(runs, "run-scripted", "Enter Initech's newest invoice")
    real = write_run(runs, "run-real", "Enter the Globex invoice")
    trace = real / "trace.jsonl"
    trace.write_text(trace.read_text().replace('"scripted/worker"', '"openai/gpt-4o"', 1))
    bob = app.client()
    listing = bob.get("/runs").text
    text = {}
    for name in ("run-demo", "run-scripted", "run-real"):
        row = re.search(rf'<tr><td class="runname"><a href="/runs/{name}">.*?</tr>', listing, re.S)
        assert row, listing
        text[name] = " ".join(re.sub(r"<[^>]+>", " ", row.group(0)).split())
    assert "demo (scripted stand-in models, not AI)" in text["run-demo"]
    assert "scripted stand-in models, not AI" in text["run-scripted"] and "demo" not in text["run-scripted"]
    assert "not AI" not in text["run-real"]
    page = bob.get("/runs/run-demo").text
    assert re.search(r'<p id="demo"[^>]*>⚠ Demo \(scripted stand-in models, not AI\)', page)
    assert (
        "Demo (scripted stand-in models, not AI).</strong> This run was made by <code>taskcrew demo</code>"
        in page
    )
    assert 'id="demo"' not in bob.get("/runs/run-real").text


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_taskcrew_demo_marks_its_run_as_a_demo(tmp_path: Path, eval_knowledge_seed: Path) -> None:
    """The real CLI, approving by itself at the terminal: its run folder in the runs folder carries
    the mark and its report opens with the label."""
    seed = tmp_path / "home" / "demo" / "knowledge-seed"
    shutil.copytree(eval_knowledge_seed, seed)
    (seed / ".seeded").write_text("seeded\n")
    env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    env.pop("TASKCREW_MODEL", None)
    command = [sys.executable, "-m", "taskcrew.cli", "demo", "--auto-approve", "--no-chaos"]
    done = subprocess.run(
        [*command, "--runs-dir", str(tmp_path / "runs")], capture_output=True, text=True, env=env, timeout=840
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [folder] = [p.parent for p in (tmp_path / "runs").glob("*/trace.jsonl")]
    assert '"demo": true' in (folder / "demo.json").read_text()
    report = (folder / "report.md").read_text()
    assert report.splitlines()[2].startswith("**Demo (scripted stand-in models, not AI).**"), report[:500]


def png(shade: int) -> bytes:
    """A scan as stored: a grey 240 × 90 PNG, uncompressed (every shade gives the same size)."""
    out = io.BytesIO()
    Image.new("RGB", (240, 90), (shade, shade, shade)).save(out, format="PNG", compress_level=0)
    return out.getvalue()


def put_back(path: Path, data: bytes, parked: os.stat_result) -> None:
    """``data`` written over ``path`` and its mtime put back as it was parked."""
    path.write_bytes(data)
    os.utime(path, ns=(parked.st_atime_ns, parked.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (parked.st_size, parked.st_mtime_ns)


def withheld(response: httpx.Response, *not_these: bytes) -> None:
    """The picture route refused a file that is not the sealed one: 409, and in the picture's place
    a picture saying so (never the file's bytes, nor a drawing of them)."""
    assert response.status_code == 409, (response.status_code, response.headers)
    assert response.headers["content-type"] == "image/png" and response.content.startswith(b"\x89PNG")
    assert all(response.content != bad for bad in not_these)
    Image.open(io.BytesIO(response.content)).verify()


def test_a_scan_swapped_after_parking_is_never_served_as_the_sealed_one(app: App) -> None:
    """The image route compares the seal with the digest of the very bytes it would serve (one
    read): a scan replaced after parking, or replaced by one of the same size with its mtime put
    back, is not served; the scan as parked is."""
    sealed, other, bigger = png(250), png(40), png(40) + b"\0" * 64
    assert len(sealed) == len(other) and sealed != other
    scan = app.inbox("scan.png", sealed)
    approval = app.park(
        {"amount": "300.00"}, "  amount = 300.00: scan.png (OCR), line 1 (cited in step 1)\n", worker=True
    )
    assert approval.files_sha256 is not None and len(approval.files_sha256["scan.png"]) == 64
    parked = scan.stat()
    bob = app.client()
    url = f"/approvals/{approval.id}/source/image"
    for params in ({"field": "amount"}, {"file": "scan.png"}):
        shown = bob.get(url, params=params)
        assert shown.status_code == 200 and shown.content == sealed, params

    scan.write_bytes(bigger)  # another scan
    for params in ({"field": "amount"}, {"file": "scan.png"}):
        withheld(bob.get(url, params=params), bigger)
    put_back(scan, other, parked)  # another scan of the same size, the mtime put back
    for params in ({"field": "amount"}, {"file": "scan.png"}):
        withheld(bob.get(url, params=params), other)
    put_back(scan, sealed, parked)  # the scan as parked again
    assert bob.get(url, params={"field": "amount"}).content == sealed


def test_a_pdf_swapped_after_parking_has_no_page_drawn_as_the_sealed_one(app: App) -> None:
    """The PDF-page route draws the page from the very bytes whose digest it checked against the
    seal: a PDF replaced after parking, or by one of the same size with its mtime put back, has no
    page drawn; the PDF as parked has."""
    sealed, other, bill, approval = _parked_bill(app)
    bigger = pdf([(72, 760, 14, "Invoice INV-5"), (72, 730, 14, "IBAN: GB33 BUKB 2020 1555 5555 55 (new)")])
    assert len(sealed) == len(other) and sealed != other
    parked = bill.stat()
    bob = app.client()
    url = f"/approvals/{approval.id}/source/image"
    drawn = bob.get(url, params={"field": "iban", "page": "1"})
    assert drawn.status_code == 200 and drawn.content.startswith(b"\x89PNG")
    documents = Documents(app.sandbox)  # draws whatever the file is (no seal given)

    bill.write_bytes(bigger)
    swapped = documents.pdf_page_png("bill.pdf", 1)
    assert swapped is not None and swapped != drawn.content
    for params in ({"field": "iban", "page": "1"}, {"file": "bill.pdf", "page": "1"}):
        withheld(bob.get(url, params=params), swapped)
    put_back(bill, other, parked)
    swapped = documents.pdf_page_png("bill.pdf", 1)
    assert swapped is not None and swapped != drawn.content
    for params in ({"field": "iban", "page": "1"}, {"file": "bill.pdf", "page": "1"}):
        withheld(bob.get(url, params=params), swapped)
    put_back(bill, sealed, parked)
    assert bob.get(url, params={"field": "iban", "page": "1"}).content == drawn.content


def test_the_source_page_vouches_only_for_pictures_checked_against_the_seal(app: App) -> None:
    """A PDF whose text the viewer read as parked (its parse cache knows a file by size and mtime)
    may be swapped before the browser asks for its pages: the page's tick speaks of the text, and
    says each picture is checked as it is drawn; the page then refuses the swapped PDF. A file the
    page knows is changed has no picture of it on the page at all."""
    _, other, bill, approval = _parked_bill(app)
    parked = bill.stat()
    bob = app.client()
    link = f"/approvals/{approval.id}/source?field=iban"
    page = bob.get(link).text
    drawn = [h.replace("&amp;", "&") for h in pictures(page)]
    assert drawn == [f"/approvals/{approval.id}/source/image?field=iban&page=1"], drawn
    assert "SHA-256 is the one sealed" in about(page) and "checked against the seal" in about(page)
    assert bob.get(drawn[0]).status_code == 200

    put_back(bill, other, parked)  # the text page may still show the text as parked (cached) ...
    page = bob.get(link).text
    if "SHA-256 is the one sealed" in about(page):
        assert "DE89" in " ".join(marked(page)[0]) and "checked against the seal" in about(page)
    withheld(bob.get(drawn[0]))  # ... its picture is drawn from the file as it is: refused

    bill.write_bytes(other + b"\n")  # the text page reads it anew: changed, and shows no picture
    page = bob.get(link).text
    assert "not the one the approval was parked with" in about(page) and marked(page) == []
    assert "/source/image" not in page and 'id="pictures-withheld"' in page


def row(page: str, number: int) -> str:
    """The text of line ``number``'s row, as a person reads it (where a ``#line-N`` link lands)."""
    found = re.findall(rf'<tr id="line-{number}"[^>]*>.*?</tr>', page, re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", found[0]).split()) if found else ""


def pictures(page: str) -> list[str]:
    return re.findall(r'<img src="(/approvals/[^"]+/source/image\?[^"]+)"', page)


def receipt(total: str) -> bytes:
    """A scan of a receipt OCR can read: black text on white, uncompressed (one size whatever the
    total)."""
    from PIL import ImageDraw, ImageFont

    image = Image.new("RGB", (700, 200), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(("Northwind Traders", f"Total: {total} EUR")):
        draw.text((30, 30 + 70 * number), line, fill=(0, 0, 0), font=ImageFont.load_default(size=34))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=0)
    return out.getvalue()


def test_a_file_swapped_under_the_same_size_and_mtime_after_its_text_was_viewed_is_not_vouched_for(
    app: App,
) -> None:
    """The viewer's parse cache knows a file by size and mtime, and the digest it keeps is the
    parked file's: a file swapped under the same size and mtime after its text was viewed once must
    not be vouched for from that cache. The page hashes the file's bytes as they are now (the
    reader's checks), shows the text of those bytes, marks no line and draws no picture of it."""
    original = "Remittance advice\nVendor: Contoso Ltd\nIBAN: DE89 3704 0044 0532 0130 00\n"
    swapped = "Remittance advice\nVendor: Contoso Ltd\nIBAN: GB33 BUKB 2020 1555 5555 55\n"
    remit = app.inbox("remit.txt", original)
    sealed, other = receipt("1,250.00"), receipt("9,250.00")
    assert len(sealed) == len(other) and sealed != other
    scan = app.inbox("scan.png", sealed)
    approval = app.park(
        {"iban": "DE89 3704 0044 0532 0130 00", "amount": "1,250.00"},
        "  iban = DE89 3704 0044 0532 0130 00: remit.txt, line 3 (cited in step 1)\n"
        "  amount = 1,250.00: scan.png (OCR), line 3 (cited in step 1)\n",
        worker=True,
    )
    bob = app.client()
    text_link = f"/approvals/{approval.id}/source?field=iban"
    scan_link = f"/approvals/{approval.id}/source?field=amount"
    assert "SHA-256 is the one sealed" in about(bob.get(text_link).text)  # viewed once: cached
    scan_page = bob.get(scan_link).text
    assert "SHA-256 is the one sealed" in about(scan_page) and pictures(scan_page)

    put_back(remit, swapped.encode(), remit.stat())
    put_back(scan, other, scan.stat())
    page = bob.get(text_link).text
    said = about(page)
    assert "SHA-256 is the one sealed" not in said and "not the one the approval was parked with" in said
    assert marked(page) == [] and "GB33" in row(page, 3) and "DE89" not in row(page, 3)  # the text now
    page = bob.get(scan_link).text
    said = about(page)
    assert "SHA-256 is the one sealed" not in said and "not the one the approval was parked with" in said
    assert pictures(page) == [] and 'id="pictures-withheld"' in page and marked(page) == []
    withheld(bob.get(f"/approvals/{approval.id}/source/image", params={"field": "amount"}), other)


def test_a_changed_file_is_headed_and_styled_as_not_what_the_run_read_and_says_what_to_do(
    app: App,
) -> None:
    """A changed file's text is not headed as the run's reading of it, is set apart as untrusted,
    carries no OCR caution pointing at an image that is not shown nor a focus frame around nothing,
    and the alert says what to do."""
    scan = app.inbox("scan.png", receipt("1,250.00"))
    approval = app.park(
        {"amount": "1,250.00"}, "  amount = 1,250.00: scan.png (OCR), line 3 (cited in step 1)\n", worker=True
    )
    bob = app.client()
    link = f"/approvals/{approval.id}/source?field=amount"
    before = bob.get(link).text
    assert "as the run read it" in before and "Text of the file as it is now" not in before

    scan.write_bytes(receipt("9,250.00") + b"\0" * 64)
    page = bob.get(link).text
    heading = re.search(r'<h2 id="h-text"[^>]*>(.*?)</h2>', page, re.S)
    assert heading and heading.group(1) == "Text of the file as it is now — not what the run read", heading
    assert "as the run read it" not in page
    assert re.search(r'<section[^>]*class="[^"]*untrusted[^"]*"[^>]*aria-labelledby="h-text"', page), page
    assert "check the values against the image" not in page and "ocr-confidence" not in page
    assert 'class="page focus"' not in page and "<figure" not in page
    alert = re.search(r'<p id="doc-seal"[^>]*role="alert"[^>]*>(.*?)</p>', page, re.S)
    assert alert and "Reject it, or ask for the task to be run again." in alert.group(1)


def test_the_line_a_source_link_lands_on_says_whether_the_file_is_the_sealed_one(app: App) -> None:
    """The approval page links to ``#line-N``; on a PDF the browser lands there, the seal status
    above scrolled off: the row landed on says it, sealed or changed."""
    sealed, _, bill, approval = _parked_bill(app)
    bob = app.client()
    hrefs = re.findall(r'<a class="source" href="([^"]+)"', bob.get(f"/approvals/{approval.id}").text)
    [link] = {h.replace("&amp;", "&") for h in hrefs}
    assert link.endswith("#line-2"), link
    landed = row(bob.get(link.split("#")[0]).text, 2)
    assert "✓ sealed file" in landed and "DE89" in landed, landed

    bill.write_bytes(sealed + b"\n")
    landed = row(bob.get(link.split("#")[0]).text, 2)
    assert "⚠ changed since parked" in landed and "✓" not in landed, landed


def test_a_marked_line_that_does_not_show_the_value_is_said_to(app: App) -> None:
    """The run's line is marked as it cited it; where that line's text does not show the value (as
    ``shows_value`` reads values elsewhere: 1250.00 is shown by 1,250.00), the page says so."""
    app.inbox("invoice.txt", "Northwind Traders\nInvoice INV-77\nTotal: 1,250.00 EUR\n")
    wrong = app.park(
        {"amount": "1250.00"}, "  amount = 1250.00: invoice.txt, line 2 (cited in step 1)\n", worker=True
    )
    right = app.park(
        {"amount": "1250.00"}, "  amount = 1250.00: invoice.txt, line 3 (cited in step 1)\n", worker=True
    )
    bob = app.client()
    page = bob.get(f"/approvals/{wrong.id}/source", params={"field": "amount"}).text
    assert marked(page) == [["2", "Invoice", "INV-77"]]
    assert "line 2 does not show 1250.00" in about(page).lower(), about(page)
    assert "does not show" in row(page, 2)
    page = bob.get(f"/approvals/{right.id}/source", params={"field": "amount"}).text
    assert marked(page) == [["3", "Total:", "1,250.00", "EUR"]] and "does not show" not in page


def test_the_approval_page_says_which_cited_file_changed_since_parked(app: App) -> None:
    """The approval page says, by the source page's own rule (``Documents.seal``: the file's bytes
    now against the seal), when a cited file is no longer the sealed one: next to its links and once
    at the top. Who may approve is not its business: the buttons stay."""
    original = "Remittance advice\nVendor: Contoso Ltd\nIBAN: DE89 3704 0044 0532 0130 00\n"
    remit = app.inbox("remit.txt", original)
    app.inbox("invoice.txt", INVOICE)
    approval = app.park(
        {"iban": "DE89 3704 0044 0532 0130 00", "amount": "1,250.00"},
        "  iban = DE89 3704 0044 0532 0130 00: remit.txt, line 3 (cited in step 1)\n"
        "  amount = 1,250.00: invoice.txt, line 4 (cited in step 1)\n",
        worker=True,
    )
    bob = app.client()
    url = f"/approvals/{approval.id}"
    page = bob.get(url).text
    assert "changed since parked" not in page and 'id="sources-changed"' not in page
    bob.get(f"{url}/source", params={"field": "iban"})  # its text viewed once: cached

    put_back(remit, original.replace("DE89", "GB89").encode(), remit.stat())
    page = bob.get(url).text
    cells = re.findall(r'<td><a class="source"[^>]*>([^<]+)</a>(.*?)</td>', page, re.S)
    said = {name: " ".join(re.sub(r"<[^>]+>", " ", rest).split()) for name, rest in cells}
    assert said and all(
        ("⚠ changed since parked — do not decide from it" in text) == name.startswith("remit.txt")
        for name, text in said.items()
    ), said
    top = re.search(r'<p id="sources-changed"[^>]*>(.*?)</p>', page, re.S)
    assert top and "remit.txt" in top.group(1) and "invoice.txt" not in top.group(1), top
    assert 'value="approve"' in page  # shown, not decided here
    # the CLI approver is told the same, by the same rule, in `approvals show`
    env = {"TASKCREW_SANDBOX": str(app.sandbox), "TASKCREW_APPROVALS_DIR": str(app.root / "approvals")}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        shown = CliRunner().invoke(cli_app, ["approvals", "show", approval.id, "--db", app.jobs.url])
    assert shown.exit_code == 0, shown.output
    warned = [line for line in shown.output.splitlines() if "changed since the approval was parked" in line]
    assert len(warned) == 1 and "remit.txt" in warned[0] and "invoice.txt" not in warned[0], shown.output


def test_a_cited_file_gone_between_the_readers_check_and_its_read_is_said_changed_not_a_crash(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A colleague's sync replaces a cited file just after the reader checked it: the approval page
    and the source page said 500 (a stat of the file after the check raised outside the reader's
    errors). Now the file as opened is what is checked, and the page says it changed."""
    from taskcrew.tools.documents.reader import SandboxFiles

    remit = app.inbox("remit.txt", "Remittance advice\nVendor: Contoso Ltd\nAmount: 300.00 EUR\n")
    approval = app.park(
        {"vendor": "Contoso Ltd"},
        "  vendor = Contoso Ltd: remit.txt, line 2 (cited in step 1)\n",
        worker=True,
    )
    bob = app.client()
    checked = SandboxFiles.plain_file

    def gone_after_the_check(self: SandboxFiles, path: str) -> Path:
        target = checked(self, path)
        if sys._getframe(1).f_code.co_name == "plain_bytes" and target.exists():  # the bytes' read
            target.rename(target.with_suffix(".away"))
        return target

    monkeypatch.setattr(SandboxFiles, "plain_file", gone_after_the_check)
    page = bob.get(f"/approvals/{approval.id}")
    remit.with_suffix(".away").rename(remit)
    assert page.status_code == 200 and "changed since parked" in page.text, page.status_code
    source = bob.get(f"/approvals/{approval.id}/source?field=vendor")
    remit.with_suffix(".away").rename(remit)
    assert source.status_code == 404 and "cannot be opened" in source.text, source.status_code  # said
