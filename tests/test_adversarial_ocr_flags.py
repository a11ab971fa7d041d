"""Values read by OCR keep their flag ("read by OCR — check it against the document", which also keeps
the item out of bulk approval) on every way they reach an approval: a job that parks between reading a
scan and entering its values (the OCR record is kept with the checkpoint, and a checkpoint saved before
it was restores it by reading the unchanged scan again), and values found with ``search_files`` (whose
hits say "(read by OCR)") rather than ``read_file``.

Real tesseract, real Chromium, the demo ERP over HTTP, a real SQLite job store; only the models are
scripted. One scan, rendered once, and one Workplace serve the whole module.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskcrew.approvals.authority import Authority, bulk_refusal, shown_flags
from taskcrew.approvals.origins import field_sources
from taskcrew.config import WorkplaceSettings
from taskcrew.console.worklist import work_item
from taskcrew.crew.models import Citation, Plan, PlanStep
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM, ToolCall
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import LegRunner
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.documents import SandboxFiles
from taskcrew.tools.documents.specimens import Specimen
from taskcrew.tools.human import ApprovalDecision, AutoApproveHuman, FieldValue

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract"),
]

SCAN = "scans/northwind.png"
DRAW = [
    (10, 15, "NORTHWIND TRADERS  INVOICE"),
    (10, 30, "Invoice No. NW-40917"),
    (10, 40, "Date 2026-10-14"),
    (10, 50, "Terms Net 30"),
    (10, 60, "TOTAL DUE 1,234.50 USD"),
]
BILL = kit.Bill("Northwind Traders", "NW-40917", "1234.50", "USD", "2026-10-14", "2026-11-13")
TASK = f"Enter Northwind Traders' scanned invoice NW-40917 ({SCAN}) into Acme Payables."
OPTIONS = JobOptions(worker_model="scripted/w", verifier_model="scripted/v")
READ = PlanStep(
    role="file_reader", title="Read the scanned invoice", instructions="Read it; report its values."
)
ENTER = PlanStep(
    role="browser_operator", title="Enter the bill", instructions="Enter the bill with the values."
)
ASK = PlanStep(role="file_reader", title="Confirm the due date with the person", instructions="Ask.")
CITED = [
    Citation(source=SCAN, quote="TOTAL DUE 1,234.50 USD"),
    Citation(source=SCAN, quote="Invoice No. NW-40917"),
    Citation(source=SCAN, quote="Date 2026-10-14"),
]


# ------------------------------------------------------------------------------------ the world


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ocr-flags") / "sandbox"
    (root / "scans").mkdir(parents=True)
    Specimen("nw", DRAW, []).render().save(root / SCAN)
    (root / "notes").mkdir()
    (root / "notes" / "reminder.txt").write_text("Reminder: file the Northwind scan by Friday.\n")
    return root


@pytest.fixture(scope="module")
def place(sandbox: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workplace]:
    tmp = tmp_path_factory.mktemp("place")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        sandbox=sandbox,
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


def plan(*steps: PlanStep) -> str:
    return Plan(
        goal="Enter NW-40917",
        success_criteria=["Acme Payables has a bill for Northwind Traders NW-40917"],
        steps=list(steps),
        changes_data=True,
    ).model_dump_json()


def values_report(call: ScriptedCall) -> str:
    """The honest step: the scan's values, citing the scan's OCR'd lines (after seeing them)."""
    seen = "\n".join(str(m.get("content") or "") for m in call.messages if m.get("role") == "tool")
    assert "read by OCR" in seen and "1,234.50" in seen, seen
    return kit.report(
        "done",
        "Northwind invoice NW-40917: 1234.50 USD dated 2026-10-14, Net 30, due 2026-11-13.",
        CITED,
        vendor="Northwind Traders",
        invoice_number="NW-40917",
        amount="1234.50",
        currency="USD",
        invoice_date="2026-10-14",
        due_date="2026-11-13",
    )


def read_scan(call: ScriptedCall) -> ToolCall:
    return ToolCall(name="read_file", args={"path": SCAN})


def search(query: str) -> Callable[[ScriptedCall], ToolCall]:
    return lambda call: ToolCall(name="search_files", args={"query": query})


def leg(jobs: Jobs, place: Workplace, job_id: str, worker: ScriptedLLM) -> str:
    models = {"w": worker, "v": ScriptedLLM({}, model="scripted/v")}
    return LegRunner(jobs, place, "w1", scripted=lambda job: models.__getitem__).run_leg(
        job_id, jobs.leg(job_id)
    )


def assert_flagged(jobs: Jobs, job_id: str) -> None:
    """The bill's approval flags the OCR'd values on every surface and is kept out of bulk approval."""
    [approval] = jobs.approvals("pending", job_id=job_id)
    assert approval.kind == "approval"
    authority = Authority(jobs)
    view = authority.view(approval)
    notes = {f.name: f.note or "" for f in approval.request.fields}
    for name in ("amount", "invoice_number", "invoice_date"):
        assert "read by OCR" in notes[name] and SCAN in notes[name], (name, notes)
    assert "OCR" not in notes["due_date"]  # worked out from the terms: not in the scan
    assert {n for n, r in field_sources(view).items() if r.ocr} >= {
        "amount",
        "invoice_number",
        "invoice_date",
    }
    assert any(f.rule == "ocr_value" and f.field == "amount" for f in shown_flags(view))
    assert bulk_refusal(view) is not None
    assert work_item(view, authority.rules, systems={}).bulk_refusal is not None


# ------------------------------------------------------- F1: a job that parks between read and entry


@pytest.mark.parametrize("checkpoint", ["as saved", "saved before the OCR record was kept"])
def test_a_resumed_leg_flags_what_an_earlier_leg_read_by_ocr(
    jobs: Jobs, place: Workplace, checkpoint: str
) -> None:
    job = jobs.submit(TASK, submitted_by="ana", submitted_proof="token", options=OPTIONS)
    ask = ToolCall(name="ask_user", args={"question": "The scan prints Net 30: is the due date 2026-11-13?"})
    leg1 = ScriptedLLM(
        {"planner": [plan(READ, ASK, ENTER)], "file_reader": [read_scan, values_report, ask]},
        model="scripted/w",
    )
    assert leg(jobs, place, job.id, leg1) == "waiting", jobs.get(job.id).reason
    saved = jobs.checkpoint(job.id)
    assert saved is not None
    files_read = saved["state"]["files_read"]
    kept = {key: SCAN in files_read.get(key, {}) for key in ("ocr_forms", "ocr_values")}
    if checkpoint != "as saved":  # as a version before this one saved it (still signed: it is read)
        for key in ("ocr_forms", "ocr_values"):
            files_read.pop(key, None)
        assert jobs.save_checkpoint(job.id, saved)
        assert "ocr_forms" not in jobs.checkpoint(job.id)["state"]["files_read"]  # type: ignore[index]
    [question] = jobs.approvals("pending", job_id=job.id)
    assert question.kind == "question"
    jobs.decide(question.id, ApprovalDecision.answer("Yes, 2026-11-13."), decided_by="bob")
    # leg 2: the step that asked runs again, then the bill is entered; this leg reads no file
    confirmed = kit.report("done", "The person confirmed the due date 2026-11-13.", [], due_date="2026-11-13")
    leg2 = ScriptedLLM(
        {"file_reader": [ask, confirmed], "browser_operator": [Loop(policy=kit.EnterBill(BILL))]},
        model="scripted/w",
    )
    assert leg(jobs, place, job.id, leg2) == "waiting", jobs.get(job.id).reason
    assert_flagged(jobs, job.id)
    assert kept == {"ocr_forms": True, "ocr_values": True}  # leg 1's checkpoint kept its OCR record


# ------------------------------------------------------------ F2: values found with search_files


def test_values_found_by_searching_a_scan_are_flagged(jobs: Jobs, place: Workplace) -> None:
    job = jobs.submit(TASK, submitted_by="ana", submitted_proof="token", options=OPTIONS)
    worker = ScriptedLLM(
        {
            "planner": [plan(READ, ENTER)],
            "file_reader": [search("NW-40917"), search("total due"), search("date 2026"), values_report],
            "browser_operator": [Loop(policy=kit.EnterBill(BILL))],
        },
        model="scripted/w",
    )
    assert leg(jobs, place, job.id, worker) == "waiting", jobs.get(job.id).reason
    assert_flagged(jobs, job.id)


# ----------------------------------------------------------------- the reader's record, directly


@pytest.fixture(scope="module")
def read_once(sandbox: Path) -> SandboxFiles:
    files = SandboxFiles(sandbox, record_reads=True)
    files.read(SCAN)
    return files


def amount() -> FieldValue:
    return FieldValue(name="amount", label="Amount", value="1234.50")


def test_a_search_hit_in_a_scan_records_it_and_a_miss_does_not(
    sandbox: Path, read_once: SandboxFiles
) -> None:
    files = SandboxFiles(sandbox, record_reads=True)
    files._cache = read_once._cache  # the scan as parsed once (the cache is the reader's own)
    files.search("reminder")  # a hit in the text file only: the scan's text reached nobody
    files.search("no-such-words")
    assert len(files.provenance) == 0 and files.provenance.flag(amount()) is None
    result = files.search("invoice no")
    assert {h.path for h in result.hits} == {SCAN}
    assert files.provenance.flag(amount()) == read_once.provenance.flag(amount())
    assert "read by OCR" in (files.provenance.flag(amount()) or "")
    assert files.reads()["ocr_values"] == read_once.reads()["ocr_values"]


def test_the_ocr_record_round_trips_through_reads_and_remember(
    sandbox: Path, read_once: SandboxFiles
) -> None:
    saved = read_once.reads()
    assert set(saved) == {"served", "spelled", "ocr_forms", "ocr_values"}
    later = SandboxFiles(sandbox, record_reads=True)
    later.remember(saved)
    assert later.parses == 0  # restored from the record, not read again
    for value in ("1234.50", "1,234.50", "NW-40917", "2026-10-14"):
        field = FieldValue(name="f", label="F", value=value)
        assert later.provenance.flag(field) == read_once.provenance.flag(field) is not None, value
    assert later.provenance.reading("1234.50") == read_once.provenance.reading("1234.50")
    assert later.reads() == saved
    # a record that does not read back is left out, the rest kept
    broken = SandboxFiles(sandbox, record_reads=True)
    broken.remember({**saved, "ocr_values": {SCAN: ["not json", *saved["ocr_values"][SCAN]]}})
    assert broken.provenance.flag(amount()) == read_once.provenance.flag(amount())


def test_a_record_saved_before_the_ocr_record_reads_the_unchanged_scan_again(
    sandbox: Path, read_once: SandboxFiles
) -> None:
    legacy = {k: v for k, v in read_once.reads().items() if k in ("served", "spelled")}
    later = SandboxFiles(sandbox, record_reads=True)
    later.remember(legacy)
    assert later.provenance.flag(amount()) == read_once.provenance.flag(amount()) is not None
    assert later.read_digest(SCAN) == read_once.read_digest(SCAN)  # reading again recorded no new read
    # the scan's bytes are not those the run read: nothing of it is recorded (its seal fails anyway)
    changed = SandboxFiles(sandbox, record_reads=True)
    changed.remember({"served": {SCAN: ["0" * 64]}, "spelled": {}})
    assert changed.provenance.flag(amount()) is None
    # an empty record (a run that read no file) stays empty
    empty = SandboxFiles(sandbox, record_reads=True)
    empty.remember({})
    assert len(empty.provenance) == 0 and empty.parses == 0
