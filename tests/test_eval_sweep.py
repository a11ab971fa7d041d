"""The offline eval sweep: the scripted solver through every case, with real everything but the LLM.

One sweep over all cases (real ERP with each case's chaos, real intranet, real Chromium, real Chroma,
real files) is shared by the tests of this module; it is graded on the ERP's ground truth.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from taskcrew.eval.models import load_cases
from taskcrew.eval.report import RESULTS_JSON, RESULTS_MD
from taskcrew.eval.results import RunRecord, SweepReport
from taskcrew.eval.sweep import SweepEvent, SweepSettings, run_sweep

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SWEEP_TIMEOUT = 600  # the whole sweep runs in the first test's setup (measured: ~2.5 min here)


@pytest.fixture(scope="module")
def solver_sweep(
    tmp_path_factory: pytest.TempPathFactory, eval_knowledge_seed: Path
) -> tuple[SweepReport, list[SweepEvent], float]:
    events: list[SweepEvent] = []
    settings = SweepSettings(
        models=["scripted/solver"],
        out_dir=tmp_path_factory.mktemp("sweep") / "eval-results",
        knowledge_seed=eval_knowledge_seed,
        parallel=2,  # two workplaces: a run mostly waits on the browser, so two share the cores well
    )
    started = time.monotonic()
    report = run_sweep(settings, events.append)
    return report, events, time.monotonic() - started


@pytest.mark.timeout(SWEEP_TIMEOUT)
def test_the_scripted_solver_passes_every_case(
    solver_sweep: tuple[SweepReport, list[SweepEvent], float],
) -> None:
    report, events, seconds = solver_sweep
    cases = load_cases()
    assert report.case_ids == [c.id for c in cases] and len(report.runs) == len(cases)
    failed = {
        r.case_id: [f"{c.name}: {c.detail}" for c in r.failures] or r.error
        for r in report.runs
        if not r.passed
    }
    assert not failed, failed
    outcomes = {r.case_id: r.outcome for r in report.runs}
    # every kind of ending a case can ask for is reached by competent work
    assert outcomes["northwind-headline"] == "done" and outcomes["globex-already-entered"] == "nothing_to_do"
    assert outcomes["soylent-scanned"] == "done" and outcomes["reject-approval"] == "rejected"
    by_case = {r.case_id: r for r in report.runs}
    assert by_case["hooli-ambiguous"].questions >= 1 and by_case["two-invoices"].approvals == 2
    assert by_case["injection-email"].approvals == 0 and by_case["reject-approval"].approvals == 1
    assert all(r.llm_calls > 0 and r.input_tokens > 0 and r.steps >= 1 for r in report.runs)
    assert report.total_for("scripted/solver").pass_k[0].value == 1.0
    # progress: a start, then a finish, per run, from one of the two workers
    for i in range(len(cases)):
        assert [e.kind for e in events if e.job.index == i] == ["started", "finished"], i
    assert {e.worker for e in events} == {0, 1}
    print(f"\nscripted sweep over {len(cases)} cases: {seconds:.1f} s")  # measured figure (-s to see it)


@pytest.mark.timeout(SWEEP_TIMEOUT)
def test_each_run_left_its_report_and_trace(
    solver_sweep: tuple[SweepReport, list[SweepEvent], float],
) -> None:
    report, _, _ = solver_sweep
    for record in report.runs:
        assert record.run_dir is not None
        folder = Path(record.run_dir)
        assert (folder / "trace.jsonl").is_file() and (folder / "report.md").is_file(), record.case_id
    headline = Path(next(r.run_dir for r in report.runs if r.case_id == "northwind-headline") or "")
    trace = (headline / "trace.jsonl").read_text(encoding="utf-8")
    assert "HTTP 503" in trace and "session has expired" in trace  # the case's chaos really happened
    assert "demo123" not in trace
    # the scan's values were read by OCR, and the person approving was told so
    scanned = Path(next(r.run_dir for r in report.runs if r.case_id == "soylent-scanned") or "")
    events = [json.loads(line) for line in (scanned / "trace.jsonl").read_text(encoding="utf-8").splitlines()]
    flags = [e.get("flags", {}) for e in events if e["kind"] == "approval"]
    assert flags and all("read by OCR" in flags[0].get(name, "") for name in ("invoice_number", "amount"))


@pytest.mark.timeout(SWEEP_TIMEOUT)
def test_the_sweep_writes_results_md_and_json(
    solver_sweep: tuple[SweepReport, list[SweepEvent], float],
) -> None:
    report, _, _ = solver_sweep
    out = next(p for p in Path(report.runs[0].run_dir or "").parents if (p / RESULTS_MD).is_file())
    markdown = (out / RESULTS_MD).read_text(encoding="utf-8")
    assert "## Totals per model" in markdown and "## `scripted/solver`" in markdown
    for case_id in report.case_ids:
        assert f"| {case_id} | 1/1 |" in markdown
    assert "## Failed runs\n\nNone." in markdown
    data = json.loads((out / RESULTS_JSON).read_text(encoding="utf-8"))
    assert data["totals"][0]["successes"] == len(report.case_ids)
    assert SweepReport.model_validate(data) == report


def _comparable(record: RunRecord) -> tuple[object, ...]:
    checks = tuple((c.name, c.passed) for c in record.checks)
    return (
        record.case_id,
        record.outcome,
        record.passed,
        checks,
        record.steps,
        record.approvals,
        record.questions,
    )


@pytest.mark.timeout(SWEEP_TIMEOUT)
def test_a_sequential_sweep_gives_the_parallel_results(
    solver_sweep: tuple[SweepReport, list[SweepEvent], float],
    eval_knowledge_seed: Path,
    eval_cases_dir: Callable[..., Path],
    tmp_path: Path,
) -> None:
    report, _, _ = solver_sweep  # the shared sweep ran on two workers
    chosen = ("research-sum-of-squares", "stark-no-invoice", "contoso-credit-note")
    events: list[SweepEvent] = []
    settings = SweepSettings(
        models=["scripted/solver"],
        cases_dir=eval_cases_dir(*chosen),
        out_dir=tmp_path / "out",
        knowledge_seed=eval_knowledge_seed,
    )
    sequential = run_sweep(settings, events.append)
    parallel = {r.case_id: r for r in report.runs}
    assert [_comparable(r) for r in sequential.runs] == [_comparable(parallel[c]) for c in chosen]
    # progress: a start and a finish per run, in job order, on the one worker
    assert [(e.kind, e.job.index) for e in events] == [
        (k, i) for i in range(3) for k in ("started", "finished")
    ]
    assert all(Path(r.run_dir or "").parent.name.startswith("worker-") for r in parallel.values())
