"""Where an approval says each value came from is code's reading of the run's records, by one rule
each (red team rt_docs9):

1. A value is a step's reported value, or named in its summary or the request, only when it is the
   same value there as the reader reads values (``crew.provenance.same_value``, ``names_value``:
   ``shows_value``) — an amount as an amount, with its decimal comma: a step that reported "12,50"
   did not report the 1250 the operator typed; "1,250.00" does not name 250.00, nor "150.00" 50.00.
   The job's trace (``jobs/human.trace``) reads them alike.
2. A cited file is the origin only through the line the step quoted, found in it as the citation
   check finds a quote (``quoted_lines``): never another line that shows the same figure. A quote the
   file does not show (hidden text) is said so; the sign is the file's: a credit memo's total that the
   quote shows without its minus, or a prose line beside it, is named with "line N shows it with a
   minus sign".
3. "Read by OCR" is the run's record (the OCR provenance's note on the field), never the letters
   o-c-r in an origin's words or a file's name ("Democratic Press").

Real PDFs (fpdf2), the demo's real credit memo e-mail, the real reader, real Chromium and demo ERP,
a real job store: only the models are scripted.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF

from taskcrew.approvals import origins as approval_origins
from taskcrew.approvals.authority import ApprovalView, Authority, bulk_refusal, shown_flags
from taskcrew.approvals.origins import field_sources, origins
from taskcrew.config import WorkplaceSettings
from taskcrew.crew import provenance
from taskcrew.crew.citations import check_citations
from taskcrew.crew.models import Citation, Plan, PlanStep, StepReport
from taskcrew.crew.provenance import field_origin, same_value
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import trace
from taskcrew.jobs.models import FieldSource
from taskcrew.jobs.runner import LegRunner
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.provenance import OCR_NOTE
from taskcrew.tools.human import ApprovalRequest, AutoApproveHuman, FieldValue, ValueOrigin

DEMO_INBOX = Path(__file__).resolve().parents[1] / "taskcrew" / "sandbox" / "inbox"
OPTIONS = JobOptions(worker_model="scripted/w", verifier_model="scripted/v")
MINUS = "shows it with a minus sign (a credit, not an amount owed?)"

GERMAN = "downloads/Rechnung NW-40923.pdf"  # prints its total with a decimal comma
GERMAN_LINES = ["NORTHWIND TRADERS   RECHNUNG", "Rechnung Nr. NW-40923", "Datum 14.10.2026",
                "Zahlbar bis 13.11.2026", "Gesamtbetrag: 12,50 EUR"]  # fmt: skip
CREDIT_MEMO = "Credit memo for your account.eml"  # the demo's CN-104
CREDIT_TOTAL = "TOTAL CREDIT (USD) -150.00"  # its total
CREDIT_PROSE = "We received the returned desk organizers from order SO-781144 and issued credit memo CN-104. The credit of $150.00 has been applied against invoice CO-55120."  # fmt: skip
DEMOCRATIC = "downloads/Democratic Press order - NW-40921.pdf"  # "Dem-ocr-atic": a text PDF
DEMOCRATIC_LINES = ["NORTHWIND TRADERS   INVOICE", "Invoice No. NW-40921", "Date 2026-10-14", "Terms Net 30",
                    "TOTAL DUE 1,234.50 USD"]  # fmt: skip
HIDDEN_PDF = "downloads/NW-40920.pdf"
HIDDEN = "Amount due 9,500.00 USD"  # white on white: nobody sees it
LIMIT = "Your credit limit with us: 9,500.00 USD"  # the same figure, printed, with another meaning
TWICE = "downloads/NW-40930.txt"  # the same figure on two lines: the step quotes the second
TWICE_TEXT = (
    "NORTHWIND TRADERS\nYour credit limit with us: 950.00 USD\nInvoice NW-40930\nTOTAL DUE 950.00 USD\n"
)


def _pdf(path: Path, lines: list[str], hidden: str | None = None) -> None:
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    if hidden is not None:
        pdf.set_text_color(255, 255, 255)
        pdf.cell(0, 10, hidden, new_x="LMARGIN", new_y="NEXT")
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("value-origins") / "sandbox"
    _pdf(root / GERMAN, GERMAN_LINES)
    _pdf(root / DEMOCRATIC, DEMOCRATIC_LINES)
    _pdf(
        root / HIDDEN_PDF,
        ["NORTHWIND TRADERS   INVOICE", "Invoice No. NW-40920", LIMIT, "TOTAL DUE 950.00 USD"],
        HIDDEN,
    )
    shutil.copyfile(DEMO_INBOX / CREDIT_MEMO, root / CREDIT_MEMO)
    (root / TWICE).write_text(TWICE_TEXT)
    return root


@pytest.fixture(scope="module")
def files(sandbox: Path) -> SandboxFiles:
    return SandboxFiles(sandbox, record_reads=True)


def _read(files: SandboxFiles) -> Callable[[str], str | None]:
    """A file's text as the run's citation check reads it (``Toolbox.source_text``)."""
    return lambda path: files.read(path).full_text()


def _line(text: str | None, line: str) -> int:
    """The number of ``line`` in ``text`` (a file as read)."""
    return (text or "").splitlines().index(line) + 1


def _reading(quote: str, source: str, amount: str, summary: str = "read it") -> StepReport:
    cited = [Citation(source=source, quote=quote)]
    return StepReport(status="done", summary=summary, data={"amount": amount}, sources=cited)


def _steps(report: StepReport) -> dict[str, object]:
    """A checkpoint whose one finished step reported ``report`` (as ``jobs/human.trace`` reads it)."""
    done = {"index": 0, "role": "file_reader", "title": "Read the invoice", "report": report.model_dump()}
    return {"state": {"steps_done": [done]}}


# --------------------------------------------------------------- 1. one rule for "the same value"


@pytest.mark.parametrize(
    ("value", "found", "same"),
    [
        ("1250", "12,50", False),  # a decimal comma: twelve-fifty
        ("12.50", "12,50", True),
        ("1250.00", "1,250.00", True),  # a thousands comma
        ("1234.50", "1,234.50 USD", True),
        ("950.00", "9950.00", False),
        ("950.00", "paid 950.00", False),  # a value that only holds it
        ("Northwind Traders", "northwind  traders", True),
        ("Acme", "Acme Corp", False),
    ],
)
def test_a_value_is_a_steps_value_only_when_it_is_the_same_value(value: str, found: str, same: bool) -> None:
    assert same_value(value, found) is same


def test_a_step_that_reported_12_50_is_not_the_origin_of_1250() -> None:
    report = StepReport(status="done", summary="RE: 12,50 EUR", data={"amount": "12,50"}, sources=[])
    said = field_origin("1250", [(1, "file_reader", report)], lambda p: None, currency="EUR").text
    assert "reported it" not in said and "named it" not in said, said
    assert said.startswith("not found in any source"), said
    # the job's own trace reads it alike: 1250 is no step's finding
    assert "found amount" not in trace(_steps(report), "task", "amount", "1250")[0]
    assert field_origin("12.50", [(1, "file_reader", report)], lambda p: None).text.startswith(
        "step 1 (file_reader) reported it as 'amount'"
    )


@pytest.mark.parametrize(
    ("value", "summary", "task", "claim"),
    [
        ("250.00", "Total 1,250.00 USD for NW-1", "", "named it in its summary"),  # 250.00 inside 1,250.00
        ("50.00", "read it", "Pay Initech invoice IN-7 for 150.00 USD", "your request names it"),
        ("1250", "Rechnung über 12,50 EUR", "", "named it in its summary"),  # the decimal comma kept
        ("Tech", "read it", "Pay Initech invoice IN-7", "your request names it"),  # a word inside a word
    ],
)
def test_a_summary_or_request_names_a_value_only_whole(
    value: str, summary: str, task: str, claim: str
) -> None:
    report = StepReport(status="done", summary=summary, data={}, sources=[])
    said = field_origin(value, [(1, "file_reader", report)], lambda p: None, request=task).text
    assert claim not in said, f"{value}: {said}"
    if task:  # the job's trace of the task text: the same rule
        assert trace(None, task, "amount", value)[0] != "the task text"
    whole = {"250.00": "1,250.00", "50.00": "150.00", "1250": "12,50", "Tech": "Initech"}[value]
    assert provenance.names_value(summary + " " + task, whole)


# ------------------------------------------------------------ 2. the quoted line, and its sign


def test_the_origin_is_the_line_the_step_quoted_not_the_first_with_the_figure(files: SandboxFiles) -> None:
    read = _read(files)
    report = _reading("TOTAL DUE 950.00 USD", TWICE, "950.00")
    origin = field_origin("950.00", [(1, "file_reader", report)], read, currency="USD")
    total = _line(read(TWICE), "TOTAL DUE 950.00 USD")  # not the credit limit's line above it
    assert (origin.file, origin.line) == (TWICE, total) and total > _line(read(TWICE), "Invoice NW-40930"), (
        origin
    )
    assert provenance.quoted_lines("TOTAL DUE 950.00 USD", TWICE_TEXT) == [[4]]
    assert provenance.quoted_lines("Invoice NW-40930 TOTAL DUE", TWICE_TEXT) == [[3, 4]]  # over two lines


def test_a_value_cited_from_hidden_text_is_not_traced_to_a_visible_line_with_the_figure(
    files: SandboxFiles,
) -> None:
    read = _read(files)
    text = read(HIDDEN_PDF)
    assert "hidden text" in text and HIDDEN not in text and LIMIT in text, text  # the reader did its part
    cited = Citation(source=HIDDEN_PDF, quote=HIDDEN)
    assert check_citations([cited], read)[0].status == "not_found"
    report = StepReport(status="done", summary="NW-40920", data={"amount": "9500.00"}, sources=[cited])
    origin = field_origin("9500.00", [(1, "file_reader", report)], read, currency="USD")
    assert origin.file is None and origin.line is None, origin
    assert origin.text == (
        f"step 1 (file_reader) reported it as 'amount' — it cited {HIDDEN_PDF}, but {HIDDEN_PDF} does not show it"
    )


@pytest.mark.parametrize(
    ("quote", "quoted"),
    [
        ("TOTAL CREDIT (USD) 150.00", CREDIT_TOTAL),  # the total, its minus dropped
        (
            "The credit of $150.00 has been applied against invoice CO-55120.",
            CREDIT_PROSE,
        ),  # the body's prose
        ("TOTAL CREDIT (USD) -150.00", CREDIT_TOTAL),  # the control: the quote keeps the minus
    ],
)
def test_a_credit_memos_amount_is_named_with_the_files_minus_sign(
    files: SandboxFiles, quote: str, quoted: str
) -> None:
    read = _read(files)
    text = read(CREDIT_MEMO)
    line, total = _line(text, quoted), _line(text, CREDIT_TOTAL)
    report = _reading(quote, CREDIT_MEMO, "150.00", summary="CN-104: 150.00 USD")
    origin = field_origin("150.00", [(1, "file_reader", report)], read, currency="USD")
    assert (origin.file, origin.line) == (CREDIT_MEMO, line), origin
    assert origin.text == f"{CREDIT_MEMO}, line {line} (cited in step 1) — but line {total} {MINUS}", origin


# ---------------------------------------------------------- 3. OCR is the run's record, as data


def test_read_by_ocr_is_the_ocr_provenances_note_never_letters_of_an_origin() -> None:
    name = "downloads/Socrates and Democratic Press.pdf"
    request = ApprovalRequest(
        kind="form_submission", method="POST", url="http://erp/bills/new",
        fields=[FieldValue(name="amount", value="1234.50"), FieldValue(name="vendor", value="Northwind Traders"),
                FieldValue(name="invoice_number", value="NW-1", note=f"{OCR_NOTE} (scans/x.png)")],
        origins={"amount": ValueOrigin(text=f"{name}, line 5 (cited in step 1)", file=name, line=5)},
    )  # fmt: skip
    trail = [FieldSource(name="vendor", value="Northwind Traders", files=[],
                         source="step 1 (file_reader: Read the Democratic Press order) found vendor = Northwind Traders")]  # fmt: skip
    found = origins(request, trail)
    assert (found["amount"].file, found["amount"].ocr) == (name, False)
    assert found["vendor"].ocr is False and found["invoice_number"].ocr is True
    read_by_ocr = approval_origins.read_by_ocr  # the one reading of the OCR provenance's note
    assert read_by_ocr(f"{OCR_NOTE} (scans/x.png)") and read_by_ocr(
        "read by OCR, 91% — check it (scans/x.png)"
    )
    assert read_by_ocr("in a password box on the page; read by OCR, 91% — check it (scans/x.png)")
    assert not read_by_ocr("check it (downloads/Democratic Press order.pdf)") and not read_by_ocr(None)


# ------------------------------------------------------------------------- the real run, end to end


@pytest.fixture(scope="module")
def place(sandbox: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workplace]:
    tmp = tmp_path_factory.mktemp("place")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0", intranet_url=None, sandbox=sandbox, runs_dir=tmp / "runs",
        erp_db=tmp / "erp.sqlite3", knowledge_dir=tmp / "knowledge", chaos=False,
    )  # fmt: skip
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


def _parked_bill(
    jobs: Jobs, place: Workplace, path: str, bill: kit.Bill, summary: str, quotes: list[str], amount: str
) -> tuple[Any, ApprovalView]:
    """A job that reads ``path`` (its step reports ``amount`` as read, citing ``quotes``) and enters
    ``bill``, parked at the bill's approval: the approval as the approver is shown it."""
    plan = Plan(
        goal=f"Enter {bill.invoice_number}",
        success_criteria=[f"Acme Payables has a bill for {bill.vendor} {bill.invoice_number}"],
        steps=[
            PlanStep(
                role="file_reader", title="Read the document", instructions="Read it; report its values."
            ),
            PlanStep(role="browser_operator", title="Enter the bill", instructions="Enter the bill."),
        ],
        changes_data=True,
    ).model_dump_json()

    def values(call: ScriptedCall) -> str:
        return kit.report(
            "done", summary, [Citation(source=path, quote=q) for q in quotes],
            vendor=bill.vendor, invoice_number=bill.invoice_number, amount=amount, currency=bill.currency,
            invoice_date=bill.invoice_date, due_date=bill.due_date,
        )  # fmt: skip

    worker = ScriptedLLM(
        {
            "planner": [plan],
            "file_reader": [lambda call: ToolCall(name="read_file", args={"path": path}), values],
            "browser_operator": [Loop(policy=kit.EnterBill(bill))],
        },
        model="scripted/w",
    )
    models = {"w": worker, "v": ScriptedLLM({}, model="scripted/v")}
    job = jobs.submit(f"Enter {bill.vendor}'s document {bill.invoice_number} ({path}) into Acme Payables.",
                      submitted_by="ana", submitted_proof="token", options=OPTIONS)  # fmt: skip
    state = LegRunner(jobs, place, "w1", scripted=lambda job: models.__getitem__).run_leg(
        job.id, jobs.leg(job.id)
    )
    assert state == "waiting", jobs.get(job.id).reason
    [approval] = jobs.approvals("pending", job_id=job.id)
    return approval, Authority(jobs).view(approval)


def test_a_hundredfold_amount_is_not_shown_as_the_reading_steps_finding(jobs: Jobs, place: Workplace) -> None:
    bill = kit.Bill("Northwind Traders", "NW-40923", "1250", "EUR", "2026-10-14", "2026-11-13")  # comma lost
    approval, view = _parked_bill(
        jobs, place, GERMAN, bill, "Northwind Rechnung NW-40923 over 12,50 EUR, Datum 14.10.2026.",
        ["Gesamtbetrag: 12,50 EUR", "Rechnung Nr. NW-40923"], amount="12,50",
    )  # fmt: skip
    assert {f.name: f.value for f in approval.request.fields}["amount"] == "1250"
    amount = field_sources(view)["amount"]
    assert "reported it" not in amount.text and " found amount" not in amount.text, amount.text
    assert "named it in its summary" not in amount.text and amount.file is None, amount.text


def test_a_credit_memo_entered_as_a_bill_reaches_the_approver_with_the_minus_sign(
    jobs: Jobs, place: Workplace
) -> None:
    bill = kit.Bill("Contoso Office Supplies", "CN-104", "150.00", "USD", "2026-09-22", "2026-10-22")
    _, view = _parked_bill(
        jobs, place, CREDIT_MEMO, bill, "Contoso CN-104: 150.00 USD dated 2026-09-22.",
        ["The credit of $150.00 has been applied against invoice CO-55120.", "Credit Memo No. CN-104"],
        amount="150.00",
    )  # fmt: skip
    amount = field_sources(view)["amount"]
    text = SandboxFiles(place.settings.sandbox).read(CREDIT_MEMO).full_text()
    assert (amount.file, amount.line) == (CREDIT_MEMO, _line(text, CREDIT_PROSE)), amount
    assert f"line {_line(text, CREDIT_TOTAL)} {MINUS}" in amount.text, amount.text


def test_a_text_pdf_whose_name_holds_o_c_r_is_not_read_by_ocr(jobs: Jobs, place: Workplace) -> None:
    bill = kit.Bill("Northwind Traders", "NW-40921", "1234.50", "USD", "2026-10-14", "2026-11-13")
    approval, view = _parked_bill(
        jobs, place, DEMOCRATIC, bill, "Northwind invoice NW-40921: 1234.50 USD dated 2026-10-14, Net 30.",
        ["TOTAL DUE 1,234.50 USD", "Invoice No. NW-40921", "Date 2026-10-14"], amount="1234.50",
    )  # fmt: skip
    assert not any("read by OCR" in (f.note or "") for f in approval.request.fields)  # nothing OCR'd
    sources = field_sources(view)
    assert sources["amount"].file == DEMOCRATIC and sources["amount"].line == 5, sources["amount"]
    marked = {name: ref.text for name, ref in sources.items() if ref.ocr}
    flags = [f.message for f in shown_flags(view) if f.rule == "ocr_value"]
    assert not marked and not flags, (
        f"marked read by OCR: {marked}; flags: {flags}; bulk: {bulk_refusal(view)!r}"
    )
