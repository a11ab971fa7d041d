"""Real artifacts for the console tests: run folders written by the crew's own Tracer, a sweep's
results.json built by the eval's own SweepReport, approvals parked in a real job store."""

from __future__ import annotations

import hashlib
import shutil
from decimal import Decimal
from pathlib import Path

from taskcrew.config import Paths
from taskcrew.crew.models import CriterionCheck, LlmCall, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.trace import (
    ApprovalEvent,
    LlmCallEvent,
    PlanMade,
    RunFinished,
    RunStarted,
    StepEvent,
    ToolCallEvent,
    Tracer,
    VerdictEvent,
)
from taskcrew.eval.models import Check
from taskcrew.eval.results import RunRecord, SweepReport
from taskcrew.jobs import Approval, ApprovalRequest, FieldSource, Job, Jobs
from taskcrew.tools.human import FieldValue

XSS_TITLE = "<script>window.__pwned = 1</script>Invoice portal"
XSS_INVOICE = '<img src=x onerror="window.__pwned = 1">Northwind Traders'
# 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5b1f3e80000000049454e44ae426082"
)


def write_run(
    root: Path, name: str, task: str, *, finished: str | None = "done", tool_result: str = XSS_TITLE
) -> Path:
    folder = root / name
    tracer = Tracer(folder / "trace.jsonl")
    tracer.emit(RunStarted(task=task, worker_model="scripted/worker", verifier_model="scripted/verifier"))
    plan = Plan(
        goal="Enter the Northwind invoice",
        success_criteria=["a bill for INV-1 exists with amount 1,250.00"],
        steps=[
            PlanStep(
                role="browser_operator", title="Enter the bill", instructions="open the ERP and enter it"
            )
        ],
        changes_data=True,
    )
    tracer.emit(PlanMade(plan=plan))
    call = LlmCall(
        role="planner",
        model="scripted/worker",
        prompt_chars=900,
        prompt_tokens=300,
        output_tokens=80,
        messages_sent=2,
        messages_compacted=0,
        cost_usd=Decimal("0.0012"),
        seconds=0.4,
    )
    tracer.emit(LlmCallEvent(call=call))
    tracer.emit(
        ToolCallEvent(
            role="browser_operator",
            step=1,
            tool="browser_open",
            args={"url": "http://127.0.0.1:8800/bills"},
            ok=False,
            result=f"page title: {tool_result}; HTTP 500 on first try",
            seconds=0.3,
        )
    )
    tracer.emit(
        ApprovalEvent(
            question="POST http://127.0.0.1:8800/bills/new",
            payload={"vendor": XSS_INVOICE},
            answer="approved",
        )
    )
    tracer.emit(
        StepEvent(
            index=1,
            role="browser_operator",
            title="Enter the bill",
            attempt=1,
            report=StepReport(status="done", summary="bill entered"),
        )
    )
    if finished:
        verdict = Verdict(
            verified=True,
            checks=[
                CriterionCheck(
                    criterion="a bill for INV-1 exists with amount 1,250.00",
                    met=True,
                    source="http://127.0.0.1:8800/bills",
                    observed="INV-1 Northwind 1,250.00 EUR",
                )
            ],
            reason="the bills list shows it",
        )
        tracer.emit(VerdictEvent(attempt=1, verdict=verdict))
        tracer.emit(
            RunFinished(
                outcome=finished,
                reason="verified",
                llm_calls=1,
                input_tokens=300,
                output_tokens=80,
                cost_usd=Decimal("0.0012"),
                seconds=12.5,
            )
        )
    (folder / "report.md").write_text(
        f"# Run report\n\nVendor: {XSS_INVOICE}\n\n[click](javascript:alert(1))\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        encoding="utf-8",
    )
    (folder / "final_page.png").write_bytes(PNG)
    return folder


def write_sweep(root: Path) -> Path:
    runs = []
    index = 0
    for model, passes, cost in (
        ("openai/gpt-small", [True, False], "0.010"),
        ("anthropic/claude-x", [True, True], "0.030"),
    ):
        for case in ("northwind", "duplicate"):
            for repeat, passed in enumerate(passes, 1):
                runs.append(
                    RunRecord(
                        index=index,
                        model=model,
                        verifier_model="anthropic/verifier",
                        case_id=case,
                        repeat=repeat,
                        outcome="done" if passed else "not_verified",
                        passed=passed,
                        checks=[Check(name="bill", passed=passed)],
                        cost_usd=Decimal(cost),
                        seconds=20.0 + index,
                    )
                )
                index += 1
    report = SweepReport.build(
        runs,
        started_at="2026-12-01T09:00:00+00:00",
        finished_at="2026-12-01T09:10:00+00:00",
        wall_seconds=600.0,
        models=["openai/gpt-small", "anthropic/claude-x"],
        verifier_model="anthropic/verifier",
        case_ids=["northwind", "duplicate"],
        repeats=2,
        chaos=True,
        parallel=1,
    )
    out = root / "sweep-1"
    out.mkdir(parents=True)
    (out / "results.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    return out


def parked_job(
    jobs: Jobs,
    submitted_by: str,
    *,
    amount: str = "1,250.00",
    currency: str = "EUR",
    vendor: str = "Northwind Traders",
    extra: dict[str, str] | None = None,
    screenshot: Path | None = None,
    run_dir: Path | None = None,
    task: str = "Enter the latest Northwind invoice into the ERP",
    asked_again: str | None = None,
    proof: str = "console",
) -> tuple[Job, Approval]:
    """A job that a worker ran up to the approval and parked (the store's own park), submitted by a
    user the console proved (``proof``), as the two-person rule requires."""
    job = jobs.submit(task, submitted_by=submitted_by, submitted_proof=proof)
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1", run_dir=str(run_dir) if run_dir else None)
    fields = {
        "vendor": vendor,
        "invoice_number": "INV-1",
        "amount": amount,
        "currency": currency,
        **(extra or {}),
    }
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[
            FieldValue(name=k, value=v, note="read by OCR — check it" if k == "invoice_number" else None)
            for k, v in fields.items()
        ],
        page_url="http://127.0.0.1:8800/bills/new",
        asked_again=asked_again,
    )
    sources = [
        FieldSource(name="vendor", value=vendor, source="inbox/northwind.pdf, page 1, line 2"),
        FieldSource(name="amount", value=amount, source="inbox/scan.png (OCR), line 14"),
    ]
    if screenshot is not None:  # where the worker keeps it: <home>/jobs/<job id>/form-<time>-<n>.png
        kept = Paths.from_env().home / "jobs" / job.id / "form-20261201-120000-1.png"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(screenshot, kept)
        screenshot = kept
    approval = jobs.park(
        job.id,
        kind="approval",
        key=f"key-{job.id}",
        request=request,
        sources=sources,
        screenshot=str(screenshot) if screenshot else None,
        screenshot_sha256=hashlib.sha256(Path(screenshot).read_bytes()).hexdigest() if screenshot else None,
    )
    jobs.mark(job.id, "waiting", only_if=("running",))
    return jobs.get(job.id), approval
