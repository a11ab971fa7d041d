"""Measure the offline eval sweep: the scripted solver through every case, timed.

    uv run python bench/eval_sweep.py [--repeats 3] [--parallel 1] [--cases PATTERN] [--model scripted/solver]

Prints the sweep's wall time, the per-case median run time, LLM calls and tokens, and where
results.md / results.json were written (a temporary folder unless --out is given). Figures depend on
the machine and its load; docs/eval.md records the ones measured on the 2-core dev machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--cases", default=None)
    parser.add_argument("--model", default="scripted/solver")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from taskcrew.config import Paths, quiet_crewai_env

    home = Path(tempfile.mkdtemp(prefix="taskcrew-bench-eval-"))
    quiet_crewai_env(Paths.from_env().crewai_storage)
    from taskcrew.eval.sweep import SweepSettings, run_sweep

    settings = SweepSettings(
        models=[args.model],
        case_pattern=args.cases,
        repeats=args.repeats,
        parallel=args.parallel,
        out_dir=args.out or home / "eval-results",
    )
    started = time.monotonic()
    report = run_sweep(settings)
    wall = time.monotonic() - started

    print(f"{args.model}: {len(report.case_ids)} cases × {args.repeats} repeats, parallel {args.parallel}")
    print(f"{'case':32} {'pass':>5} {'median s':>9} {'min s':>7} {'max s':>7} {'calls':>6} {'tokens in':>10}")
    medians = []
    for case in report.cases:
        runs = [r for r in report.runs if r.case_id == case.case_id and r.model == case.model]
        seconds = [r.seconds for r in runs]
        medians.append(statistics.median(seconds))
        print(
            f"{case.case_id:32} {case.successes}/{case.runs:<3} {statistics.median(seconds):9.1f} "
            f"{min(seconds):7.1f} {max(seconds):7.1f} {case.mean_llm_calls:6.0f} {case.mean_input_tokens:10.0f}"
        )
    total = report.total_for(args.model)
    print(f"pass^k: {', '.join(f'{p.k}: {p.value:.2f}' for p in total.pass_k)}")
    print(
        f"sweep wall time {wall:.1f} s (runs {total.seconds:.1f} s); one pass over all cases (sum of medians) "
        f"{sum(medians):.1f} s; per-case median of medians {statistics.median(medians):.1f} s"
    )
    print(f"results: {settings.out_dir / 'results.md'}")


if __name__ == "__main__":
    main()
