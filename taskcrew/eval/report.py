"""results.md and results.json: the sweep's report for people and for programs."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from taskcrew.eval.results import CaseSummary, ModelSummary, PassK, SweepReport

RESULTS_MD = "results.md"
RESULTS_JSON = "results.json"


def _cost(value: Decimal | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _passk_cells(values: list[PassK], repeats: int) -> list[str]:
    by_k = {p.k: p.value for p in values}
    return [f"{by_k[k]:.2f}" if k in by_k else "—" for k in range(1, repeats + 1)]


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def _totals_table(report: SweepReport) -> list[str]:
    ks = [f"pass^{k}" for k in range(1, report.repeats + 1)]
    head = ["model", "verifier", "cases", "runs", "success", *ks, "steps", "LLM calls"]
    head += ["tokens in", "tokens out", "cost", "time (s)", "approvals"]
    lines = [_row(head), _row(["---"] * len(head))]
    for t in report.totals:
        lines.append(_row(_totals_cells(t, report.repeats)))
    return lines


def _totals_cells(t: ModelSummary, repeats: int) -> list[object]:
    return [
        f"`{t.model}`",
        f"`{t.verifier_model}`",
        t.cases,
        t.runs,
        f"{t.successes}/{t.runs} ({t.success_rate:.0%})",
        *_passk_cells(t.pass_k, repeats),
        t.steps,
        t.llm_calls,
        t.input_tokens,
        t.output_tokens,
        _cost(t.cost_usd),
        f"{t.seconds:.1f}",
        t.approvals,
    ]


def _case_table(cases: list[CaseSummary], repeats: int) -> list[str]:
    ks = [f"pass^{k}" for k in range(1, repeats + 1)]
    head = ["case", "success", "outcomes", *ks, "steps", "LLM calls", "tokens in", "tokens out"]
    head += ["cost", "time (s, median)", "approvals"]
    lines = [_row(head), _row(["---"] * len(head))]
    for c in cases:
        lines.append(
            _row(
                [
                    c.case_id,
                    f"{c.successes}/{c.runs}",
                    ", ".join(c.outcomes),
                    *_passk_cells(c.pass_k, repeats),
                    f"{c.mean_steps:g}",
                    f"{c.mean_llm_calls:g}",
                    f"{c.mean_input_tokens:.0f}",
                    f"{c.mean_output_tokens:.0f}",
                    _cost(c.cost_usd),
                    f"{c.median_seconds:.1f}",
                    f"{c.mean_approvals:g}",
                ]
            )
        )
    return lines


def render_results(report: SweepReport) -> str:
    out = [
        "# Eval results",
        "",
        f"{len(report.case_ids)} case(s) × {len(report.models)} model(s) × {report.repeats} repeat(s); "
        f"chaos {'as each case sets it' if report.chaos else 'off'}; {report.parallel} worker(s); "
        f"started {report.started_at}, wall time {report.wall_seconds:.1f} s.",
        "",
        "Success is graded on the ERP's ground truth and the run's report, never on the agent's own claim. "
        "pass^k (tau-bench): the mean over cases of C(c, k) / C(n, k) for c successes in n runs. "
        "Steps, LLM calls, tokens, cost, time and approvals are means per run (cost: total).",
        "",
        "## Totals per model",
        "",
        *_totals_table(report),
    ]
    for model in report.models:
        out += ["", f"## `{model}`", "", *_case_table(report.cases_for(model), report.repeats)]
    failed = [r for r in report.runs if not r.passed]
    out += ["", "## Failed runs", ""]
    if not failed:
        out.append("None.")
    for r in failed:
        why = r.error or "; ".join(f"{c.name}: {c.detail}" if c.detail else c.name for c in r.failures)
        where = f" — `{r.run_dir}`" if r.run_dir else ""
        out.append(f"- `{r.model}` · {r.case_id} · run {r.repeat}: `{r.outcome}` — {why}{where}")
    return "\n".join(out) + "\n"


def write_results(report: SweepReport, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    markdown = out_dir / RESULTS_MD
    data = out_dir / RESULTS_JSON
    markdown.write_text(render_results(report), encoding="utf-8")
    data.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return markdown, data
