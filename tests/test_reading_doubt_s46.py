"""Reading doubt, one rule for every kind of document (``documents.provenance.reading_doubt``).

A numeric date whose day/month order is ambiguous (``12/11/2026``) and an amount whose one separator
may group thousands or mark decimals (``2.500``, ``1,500``) were traced to their line with no doubt
when the document had a text layer (a PDF, an e-mail, an HTML page), while the same line read by OCR
was marked uncertain: an approver was shown "downloads/NW-40918.pdf, line 4" for a due date of
2026-12-11 that the day-first document writes as 12 November. Now the approval's origin says so,
whatever the kind of document: the document settles the reading where it can (a date of it with a
day over 12, an amount of it with cents) — a value read as it writes stays clean, one read against
it is named a misreading — and where it cannot, both readings are named.

Real PDFs (fpdf2), a real HTML page and a real scan (Tesseract), a real ``SandboxFiles`` parse, and
for the approval a real Chromium, the demo ERP over HTTP and a real job store; only the models are
scripted.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fpdf import FPDF

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.origins import field_sources
from taskcrew.config import WorkplaceSettings
from taskcrew.crew.models import Citation, Plan, PlanStep, StepReport
from taskcrew.crew.provenance import field_origin
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import LegRunner
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.specimens import Specimen
from taskcrew.tools.human import AutoApproveHuman, ValueOrigin

PDF = "downloads/NW-40918.pdf"
HEAD = ["NORTHWIND TRADERS   INVOICE", "Invoice No. NW-40918"]
DAY_FIRST = "Invoice date 14/10/2026"  # a day over 12: this document writes its dates day first
DUE = "Due date 12/11/2026"  # so: 12 November 2026
CLEAN = "downloads/NW-40918.pdf, line 4 (cited in step 1)"
MISREAD = (
    "line 4 may read 2026-11-12, not 2026-12-11: 12/11/2026 alone is ambiguous, but this document writes"
    " its dates day first (14/10/2026), so 2026-12-11 misreads it: check it"
)
BOTH = "line 4 may read 2026-11-12 or 2026-12-11 (12/11/2026: day/month order ambiguous): check it"


def make_pdf(path: Path, lines: list[str]) -> None:
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


def origin_in(root: Path, path: str, value: str, quote: str, currency: str | None = None) -> ValueOrigin:
    """Where the approval says ``value`` came from, when a step read ``path`` and cited ``quote``."""
    files = SandboxFiles(root, record_reads=True)
    report = StepReport(
        status="done", summary="read", data={"x": value}, sources=[Citation(source=path, quote=quote)]
    )

    def read(source: str) -> str | None:  # as the run reads a cited file (``Toolbox.source_text``)
        return files.read(source).full_text()

    return field_origin(value, [(1, "file_reader", report)], read, currency=currency)


def pdf_origin(
    tmp_path: Path, lines: list[str], value: str, quote: str, currency: str | None = None
) -> ValueOrigin:
    root = tmp_path / "sb"
    make_pdf(root / PDF, lines)
    return origin_in(root, PDF, value, quote, currency)


# ------------------------------------------------------------------------------------------ dates


def test_a_date_read_against_the_order_the_document_writes_is_named_a_misreading(tmp_path: Path) -> None:
    origin = pdf_origin(tmp_path, [*HEAD, DAY_FIRST, DUE], "2026-12-11", DUE)
    assert (origin.file, origin.line) == (PDF, 4), origin
    assert origin.text == f"{CLEAN} — but {MISREAD}", origin.text


def test_a_date_read_as_the_document_writes_its_dates_stays_clean(tmp_path: Path) -> None:
    lines = [*HEAD, DAY_FIRST, DUE, "TOTAL DUE 1,234.50 USD"]
    assert pdf_origin(tmp_path, lines, "2026-11-12", DUE).text == CLEAN
    # and the document's plain values too: no new words on an honest approval
    assert pdf_origin(tmp_path, lines, "2026-10-14", DAY_FIRST).text == CLEAN.replace("line 4", "line 3")
    assert pdf_origin(tmp_path, lines, "1234.50", "TOTAL DUE 1,234.50 USD", "USD").text == CLEAN.replace(
        "line 4", "line 5"
    )


@pytest.mark.parametrize("entered", ["2026-11-12", "2026-12-11"])
def test_a_date_the_document_does_not_settle_names_both_readings(tmp_path: Path, entered: str) -> None:
    # its other date is ISO: nothing says which of 12/11 is the day
    origin = pdf_origin(tmp_path, [*HEAD, "Invoice date 2026-10-14", DUE], entered, DUE)
    assert origin.text == f"{CLEAN} — but {BOTH}", origin.text


def test_dates_written_both_ways_settle_nothing(tmp_path: Path) -> None:
    lines = [*HEAD, DAY_FIRST, DUE, "Delivered 10/15/2026"]  # one day first, one month first
    assert pdf_origin(tmp_path, lines, "2026-11-12", DUE).text == f"{CLEAN} — but {BOTH}"


# ---------------------------------------------------------------------------------------- amounts


@pytest.mark.parametrize(
    ("other", "line", "value", "currency", "doubt"),
    [
        # nothing else on the page has cents: both readings are named, whichever was entered
        (
            "Invoice date 2026-10-14",
            "Gesamtbetrag 2.500 EUR",
            "2.50",
            "EUR",
            "2.50 or 2500.00 (2.500: ',' or '.' may group thousands or mark decimals)",
        ),
        (
            "Invoice date 2026-10-14",
            "TOTAL DUE 1,500 USD",
            "1500.00",
            "USD",
            "1.50 or 1500.00 (1,500: ',' or '.' may group thousands or mark decimals)",
        ),
        # the page writes cents after ',': '.' groups thousands, 2.500 is 2500
        (
            "MwSt 19 % 475,00 EUR",
            "Gesamtbetrag 2.500 EUR",
            "2.50",
            "EUR",
            "2500.00, not 2.50: 2.500 alone is ambiguous, but this document marks decimals with ','"
            " (475,00), so 2.50 misreads it",
        ),
        ("MwSt 19 % 475,00 EUR", "Gesamtbetrag 2.500 EUR", "2500.00", "EUR", None),
        # the page writes cents after '.': ',' groups thousands, 1,500 is 1500
        (
            "Freight 12.50 USD",
            "TOTAL DUE 1,500 USD",
            "1.50",
            "USD",
            "1500.00, not 1.50: 1,500 alone is ambiguous, but this document marks decimals with '.'"
            " (12.50), so 1.50 misreads it",
        ),
        ("Freight 12.50 USD", "TOTAL DUE 1,500 USD", "1500.00", "USD", None),
    ],
)
def test_an_amount_whose_separator_may_read_two_ways(
    tmp_path: Path, other: str, line: str, value: str, currency: str, doubt: str | None
) -> None:
    origin = pdf_origin(tmp_path, [*HEAD, other, line], value, line, currency)
    assert (origin.file, origin.line) == (PDF, 4), origin
    assert origin.text == CLEAN + (f" — but line 4 may read {doubt}: check it" if doubt else ""), origin.text


# ------------------------------------------------------------------------- every kind of document


def _html(root: Path, lines: list[str]) -> str:
    path = "downloads/NW-40918.html"
    (root / "downloads").mkdir(parents=True, exist_ok=True)
    body = "".join(f"<p>{line}</p>" for line in lines)
    (root / path).write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    return path


def _scan(root: Path, lines: list[str]) -> str:
    path = "scans/NW-40918.png"
    (root / "scans").mkdir(parents=True, exist_ok=True)
    Specimen("scan", [(10, 15 + 12 * k, line) for k, line in enumerate(lines)], []).render().save(root / path)
    return path


def _pdf(root: Path, lines: list[str]) -> str:
    make_pdf(root / PDF, lines)
    return PDF


@pytest.mark.parametrize("write", [_pdf, _html, _scan], ids=["pdf-text-layer", "html", "ocr-scan"])
def test_the_same_rule_for_every_kind_of_document(tmp_path: Path, write) -> None:
    root = tmp_path / "sb"
    path = write(root, [*HEAD, DAY_FIRST, DUE])
    text = SandboxFiles(root).read(path).render()
    assert DUE in text, text
    misread = origin_in(root, path, "2026-12-11", DUE)
    assert misread.file == path and misread.text.endswith(
        f" — but {MISREAD.replace('line 4', f'line {misread.line}')}"
    )
    honest = origin_in(root, path, "2026-11-12", DUE)
    assert honest.file == path and "may read" not in honest.text, honest.text


class _Field:
    def __init__(self, value: str) -> None:
        self.value = value


def test_the_ocr_note_follows_the_same_rule(tmp_path: Path) -> None:
    """The gate's note for a value read by OCR (``OcrProvenance.flag``) reads an ambiguous value as the
    origin does: settled by the scan's other values, the honest reading is no longer "ambiguous" and
    the other one is named a misreading; unsettled, both stay "day/month order ambiguous"."""
    settled = _scan(tmp_path / "a", [*HEAD, DAY_FIRST, DUE])
    files = SandboxFiles(tmp_path / "a")
    files.provenance.record(files.read(settled))
    honest, wrong = (files.provenance.flag(_Field(v)) or "" for v in ("2026-11-12", "2026-12-11"))
    assert honest.startswith("read by OCR") and "ambiguous" not in honest and "uncertain" not in honest, (
        honest
    )
    assert (
        MISREAD.removeprefix("line 4 may read ").removesuffix(": check it") in wrong and "uncertain" in wrong
    )
    unsettled = _scan(tmp_path / "b", [*HEAD, "Invoice date 2026-10-14", DUE])
    files = SandboxFiles(tmp_path / "b")
    files.provenance.record(files.read(unsettled))
    for value in ("2026-11-12", "2026-12-11"):
        assert "uncertain; day/month order ambiguous" in (files.provenance.flag(_Field(value)) or "")


def test_the_demo_vandelay_invoice_read_day_first_is_named_a_misreading(tmp_path: Path) -> None:
    """The demo inbox's VI-3301.pdf prints ``Invoice Date 09/10/2026`` and ``Due Date 10/15/2026``:
    month first, 10 September (docs/sandbox.md)."""
    mail = "Vandelay Industries - invoice.eml"
    shutil.copyfile(Path(__file__).parents[1] / "taskcrew" / "sandbox" / "inbox" / mail, tmp_path / mail)
    quote = "Invoice Date 09/10/2026"
    wrong = origin_in(tmp_path, mail, "2026-10-09", quote)
    assert (
        wrong.file == mail
        and (
            "may read 2026-09-10, not 2026-10-09: 09/10/2026 alone is ambiguous, but this document writes its"
            " dates month first (10/15/2026), so 2026-10-09 misreads it: check it"
        )
        in wrong.text
    ), wrong.text
    right = origin_in(tmp_path, mail, "2026-09-10", quote)
    assert right.file == mail and " — but " not in right.text, right.text


# -------------------------------------------------------------------------- on the approval screen

BILL = kit.Bill("Northwind Traders", "NW-40918", "1234.50", "USD", "2026-10-14", "2026-12-11")
OPTIONS = JobOptions(worker_model="scripted/w", verifier_model="scripted/v")
READ = PlanStep(role="file_reader", title="Read the invoice", instructions="Read it; report its values.")
ENTER = PlanStep(
    role="browser_operator", title="Enter the bill", instructions="Enter the bill with the values."
)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workplace]:
    tmp = tmp_path_factory.mktemp("reading-doubt")
    make_pdf(tmp / "sandbox" / PDF, [*HEAD, DAY_FIRST, DUE, "TOTAL DUE 1,234.50 USD"])
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        sandbox=tmp / "sandbox",
        runs_dir=tmp / "runs",
        erp_db=tmp / "erp.sqlite3",
        knowledge_dir=tmp / "knowledge",
        chaos=False,
    )
    with Workplace(settings, AutoApproveHuman()) as workplace:
        yield workplace


@pytest.fixture
def jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path, place: Workplace
) -> Iterator[Jobs]:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    place.erp_server.reset(ChaosConfig.off())
    store = Jobs.open(url)
    yield store
    store.close()


def _values(call: ScriptedCall) -> str:
    seen = "\n".join(str(m.get("content") or "") for m in call.messages if m.get("role") == "tool")
    assert DUE in seen, seen
    cited = [
        Citation(source=PDF, quote=q)
        for q in ("TOTAL DUE 1,234.50 USD", "Invoice No. NW-40918", DAY_FIRST, DUE)
    ]
    return kit.report(
        "done",
        "Northwind invoice NW-40918: 1234.50 USD dated 2026-10-14, due 2026-12-11.",
        cited,
        vendor="Northwind Traders",
        invoice_number="NW-40918",
        amount="1234.50",
        currency="USD",
        invoice_date="2026-10-14",
        due_date="2026-12-11",
    )


def test_the_approval_names_the_misread_due_date_and_keeps_the_honest_values_clean(
    jobs: Jobs, place: Workplace
) -> None:
    plan = Plan(
        goal="Enter NW-40918",
        success_criteria=["Acme Payables has a bill for Northwind Traders NW-40918"],
        steps=[READ, ENTER],
        changes_data=True,
    ).model_dump_json()
    worker = ScriptedLLM(
        {
            "planner": [plan],
            "file_reader": [lambda call: ToolCall(name="read_file", args={"path": PDF}), _values],
            "browser_operator": [Loop(policy=kit.EnterBill(BILL))],
        },
        model="scripted/w",
    )
    models = {"w": worker, "v": ScriptedLLM({}, model="scripted/v")}
    job = jobs.submit(
        f"Enter Northwind Traders' invoice NW-40918 ({PDF}) into Acme Payables.",
        submitted_by="ana",
        submitted_proof="token",
        options=OPTIONS,
    )
    state = LegRunner(jobs, place, "w1", scripted=lambda job: models.__getitem__).run_leg(
        job.id, jobs.leg(job.id)
    )
    assert state == "waiting", jobs.get(job.id).reason
    [approval] = jobs.approvals("pending", job_id=job.id)
    shown = field_sources(Authority(jobs).view(approval))
    assert shown["due_date"].text == f"{CLEAN} — but {MISREAD}", shown["due_date"]
    assert (shown["due_date"].file, shown["due_date"].line) == (PDF, 4)
    assert MISREAD in approval.request.summary, approval.request.summary  # the terminal's words too
    for name in ("invoice_date", "amount"):
        assert shown[name].file == PDF and " — but " not in shown[name].text, shown[name]
