"""pass^k, the per-case and per-model summaries, results.md and results.json (no runs needed)."""

from __future__ import annotations

import json
from decimal import Decimal
from math import comb
from pathlib import Path

import pytest

from taskcrew.eval.models import Check
from taskcrew.eval.report import RESULTS_JSON, RESULTS_MD, render_results, write_results
from taskcrew.eval.results import (
    RunRecord,
    SweepReport,
    pass_hat_k,
    pass_hat_k_case,
    summarize_case,
)


def test_pass_hat_k_of_one_case_is_the_chance_that_k_draws_all_succeed() -> None:
    assert pass_hat_k_case(4, 4, 4) == 1.0
    assert pass_hat_k_case(4, 0, 1) == 0.0
    assert pass_hat_k_case(4, 3, 1) == 0.75  # pass^1 is the success rate
    assert pass_hat_k_case(4, 3, 2) == pytest.approx(3 / 6)  # C(3,2)/C(4,2)
    assert pass_hat_k_case(4, 3, 4) == 0.0  # one failure: never 4 out of 4
    assert pass_hat_k_case(5, 2, 3) == 0.0  # fewer successes than k
    assert pass_hat_k_case(8, 5, 3) == pytest.approx(comb(5, 3) / comb(8, 3))


def test_pass_hat_k_averages_over_cases_and_falls_with_k() -> None:
    counts = [(4, 4), (4, 2), (4, 0)]
    assert pass_hat_k(counts, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert pass_hat_k(counts, 2) == pytest.approx((1 + 1 / 6 + 0) / 3)
    values = [pass_hat_k(counts, k) for k in range(1, 5)]
    assert values == sorted(values, reverse=True)
    assert values[-1] == pytest.approx(1 / 3)  # only the always-passing case survives k = n


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 2, 0), (3, 2, 4)])
def test_pass_hat_k_refuses_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k_case(n, c, k)


def test_pass_hat_k_needs_a_case() -> None:
    with pytest.raises(ValueError):
        pass_hat_k([], 1)


def _record(index: int, model: str, case: str, repeat: int, passed: bool, **extra: object) -> RunRecord:
    fields: dict[str, object] = {
        "index": index,
        "model": model,
        "verifier_model": "scripted/auditor",
        "case_id": case,
        "repeat": repeat,
        "outcome": "done" if passed else "not_verified",
        "passed": passed,
        "checks": [
            Check(name="outcome", passed=passed, detail="" if passed else "not_verified (expected ['done'])")
        ],
        "steps": 3,
        "llm_calls": 10,
        "input_tokens": 1000,
        "output_tokens": 100,
        "cost_usd": Decimal("0.0100"),
        "seconds": 2.0 + repeat,
        "approvals": 1,
        "run_dir": f"runs/{case}-{repeat}",
    }
    fields.update(extra)
    return RunRecord.model_validate(fields)


def _report() -> SweepReport:
    records = []
    plan = [("a/one", "case-x", [True, True, True]), ("a/one", "case-y", [True, False, False])]
    plan += [("b/two", "case-x", [False, False, False]), ("b/two", "case-y", [True, True, False])]
    for model, case, outcomes in plan:
        for repeat, passed in enumerate(outcomes, 1):
            records.append(_record(len(records), model, case, repeat, passed))
    records[-1] = _record(len(records) - 1, "b/two", "case-y", 3, False, cost_usd=None, error="boom: no key")
    return SweepReport.build(
        list(reversed(records)),  # out of order on purpose: the report sorts by job index
        started_at="2026-10-02T09:00:00+00:00",
        finished_at="2026-10-02T09:01:00+00:00",
        wall_seconds=60.0,
        models=["a/one", "b/two"],
        verifier_model=None,
        case_ids=["case-x", "case-y"],
        repeats=3,
        chaos=True,
        parallel=2,
    )


def test_summaries_per_case_and_per_model() -> None:
    report = _report()
    assert [r.index for r in report.runs] == list(range(12))
    one, two = report.total_for("a/one"), report.total_for("b/two")
    assert (one.runs, one.successes, one.cases) == (6, 4, 2)
    assert [p.value for p in one.pass_k] == pytest.approx([(1 + 1 / 3) / 2, (1 + 0) / 2, (1 + 0) / 2])
    assert [p.value for p in two.pass_k] == pytest.approx([(0 + 2 / 3) / 2, (0 + 1 / 3) / 2, 0.0], abs=1e-4)
    assert one.cost_usd == Decimal("0.0600") and two.cost_usd is None  # one unknown price: total unknown
    assert one.llm_calls == 60 and one.approvals == 6 and one.seconds == pytest.approx(6 * 2 + 2 * 6)
    y = next(c for c in report.cases_for("a/one") if c.case_id == "case-y")
    assert (y.runs, y.successes, y.outcomes) == (3, 1, ["done", "not_verified", "not_verified"])
    assert y.median_seconds == 4.0 and y.mean_steps == 3


def test_a_case_summary_has_pass_k_for_each_k_up_to_its_runs() -> None:
    summary = summarize_case([_record(i, "m/x", "c", i + 1, i != 1) for i in range(4)])
    assert [p.k for p in summary.pass_k] == [1, 2, 3, 4]
    assert [p.value for p in summary.pass_k] == pytest.approx([0.75, 0.5, 0.25, 0.0])


def test_results_markdown_has_totals_a_table_per_model_and_the_failures() -> None:
    text = render_results(_report())
    assert text.startswith("# Eval results")
    assert "| model | verifier | cases | runs | success | pass^1 | pass^2 | pass^3 |" in text
    assert "## `a/one`" in text and "## `b/two`" in text
    assert "| case-y | 1/3 | done, not_verified, not_verified | 0.33 | 0.00 | 0.00 |" in text
    assert "| `a/one` | `scripted/auditor` | 2 | 6 | 4/6 (67%) | 0.67 | 0.50 | 0.50 |" in text
    assert "`b/two` · case-y · run 3: `not_verified` — boom: no key" in text
    assert "unknown" in text  # the cost of b/two
    assert "`b/two` · case-x · run 1: `not_verified` — outcome: not_verified (expected ['done'])" in text


def test_results_files_round_trip(tmp_path: Path) -> None:
    report = _report()
    markdown, data = write_results(report, tmp_path / "out")
    assert (markdown.name, data.name) == (RESULTS_MD, RESULTS_JSON)
    assert markdown.read_text(encoding="utf-8") == render_results(report)
    raw = json.loads(data.read_text(encoding="utf-8"))
    assert set(raw) >= {"runs", "cases", "totals", "models", "repeats", "wall_seconds"}
    assert raw["runs"][0]["checks"][0]["name"] == "outcome"
    assert SweepReport.model_validate_json(data.read_text(encoding="utf-8")) == report
