"""A careless model is caught: the graders fail it, and the honest auditor never confirms its claims."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from taskcrew.eval.solvers.payables import Slips
from taskcrew.eval.solvers.registry import SLOPPY_SLIPS
from taskcrew.eval.sweep import SweepSettings, run_sweep

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# case → the check its mistake must fail
MISTAKES = {
    "northwind-headline": "bill INV-2057",  # entered the subtotal 1070.42 instead of the total
    "mueller-decimal-comma": "bill RE-2026-0412",  # typed 1.284,50, the form refused it, claimed it saved
    "globex-already-entered": "new bills",  # forced a second Globex bill past the duplicate warnings
    "initech-newest": "bill INI-7781",  # claimed the bill saved without opening the form
}


@pytest.mark.timeout(300)
def test_the_sloppy_model_fails_the_graders_and_its_claims_end_not_verified(
    eval_knowledge_seed: Path, eval_cases_dir: Callable[..., Path], tmp_path: Path
) -> None:
    settings = SweepSettings(
        models=["scripted/sloppy"],
        cases_dir=eval_cases_dir(*MISTAKES),
        out_dir=tmp_path / "out",
        knowledge_seed=eval_knowledge_seed,
    )
    report = run_sweep(settings)
    for record in report.runs:
        failed = {c.name: c.detail for c in record.failures}
        assert not record.passed and record.error is None, record.case_id
        assert record.outcome == "not_verified", (record.case_id, record.reason)
        assert MISTAKES[record.case_id] in failed, (record.case_id, failed)
        trace = Path(record.run_dir or "") / "trace.jsonl"
        verdicts = [
            e
            for e in map(json.loads, trace.read_text(encoding="utf-8").splitlines())
            if e["kind"] == "verdict"
        ]
        assert len(verdicts) == 3 and not any(v["verdict"]["verified"] for v in verdicts)  # 1 + 2 reworks
    by_case = {r.case_id: r for r in report.runs}
    assert "1070.42" in {c.name: c.detail for c in by_case["northwind-headline"].checks}["bill INV-2057"]
    assert "GX5531" in {c.name: c.detail for c in by_case["globex-already-entered"].checks}["new bills"]
    assert report.total_for("scripted/sloppy").successes == 0


@pytest.mark.timeout(300)
def test_the_auditor_takes_the_cited_file_as_a_pointer_not_as_proof(
    eval_knowledge_seed: Path,
    eval_cases_dir: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker did the work right but names a payment reminder (which lists INV-2057 in a table)
    as the invoice's file: the auditor opens it first, finds no such invoice printed there, searches
    the files itself and confirms the bill from the invoice, never from the reminder."""
    reminder = "Friendly reminder - open balance.eml"
    monkeypatch.setitem(SLOPPY_SLIPS, "northwind-headline", Slips(cites_another_file=reminder))
    settings = SweepSettings(
        models=["scripted/sloppy"],
        cases_dir=eval_cases_dir("northwind-headline"),
        out_dir=tmp_path / "out",
        knowledge_seed=eval_knowledge_seed,
    )
    (record,) = run_sweep(settings).runs
    assert record.passed and record.outcome == "done", (record.reason, record.failures)
    events = [
        json.loads(line) for line in (Path(record.run_dir or "") / "trace.jsonl").open(encoding="utf-8")
    ]
    audit = [(e["tool"], e["args"]) for e in events if e["kind"] == "tool_call" and e["role"] == "verifier"]
    assert audit[0] == ("read_file", {"path": reminder, "offset": 0})  # the pointer, opened first
    assert ("search_files", {"query": "INV-2057", "folder": "."}) in audit  # not there: looked itself
    (verdict,) = [e["verdict"] for e in events if e["kind"] == "verdict"]
    sources = {c["source"] for c in verdict["checks"]}
    assert verdict["verified"] and reminder not in sources, sources
