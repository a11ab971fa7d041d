"""Realistic scripted models: the headline task and one research case, once per habit of real models.

Each habit (parallel calls, prose beside calls, numbers as strings, ...) drives the same solver brain;
this prints outcome, pass/fail (graded on the ERP's ground truth and the report), LLM calls and
tokens per behaviour against the clean script.

    uv run python bench/realistic_models.py [--habits prose,parallel] [--cases northwind-headline]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from taskcrew.config import quiet_crewai_env
from taskcrew.crew.trace import read_trace
from taskcrew.eval.solvers.realistic import HABITS
from taskcrew.eval.sweep import SweepSettings, run_sweep

CASES = ("northwind-headline", "research-initech-terms")


def prompt_sizes(run_dir: str | None) -> list[int]:
    trace = Path(run_dir or "") / "trace.jsonl"
    if not run_dir or not trace.is_file():
        return []
    return [e.call.prompt_tokens for e in read_trace(trace) if e.kind == "llm_call"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--habits", default=",".join(HABITS))
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="realistic-bench-"))
    quiet_crewai_env(out / "crewai")
    models = ["scripted/solver"] + [f"scripted/realistic-{h}" for h in args.habits.split(",") if h]
    rows = []
    for case in args.cases.split(","):
        started = time.monotonic()
        report = run_sweep(SweepSettings(models=models, case_pattern=case, out_dir=out / case, chaos=True))
        rows += report.runs
        print(f"{case}: {len(report.runs)} runs in {time.monotonic() - started:.0f} s", flush=True)
    clean = {r.case_id: r for r in rows if r.model == "scripted/solver"}
    print(
        f"\n{'case':<26} {'behaviour':<22} {'outcome':<13} {'pass':<5} {'calls':>5} {'Δcalls':>6} "
        f"{'tokens in':>9} {'Δtokens':>8}"
    )
    for r in rows:
        base = clean.get(r.case_id)
        habit = r.model.removeprefix("scripted/").removeprefix("realistic-")
        dc = r.llm_calls - base.llm_calls if base else 0
        dt = r.input_tokens - base.input_tokens if base else 0
        print(
            f"{r.case_id:<26} {habit:<22} {r.outcome:<13} {'yes' if r.passed else 'NO':<5} "
            f"{r.llm_calls:>5} {dc:>+6} {r.input_tokens:>9} {dt:>+8}"
        )
        sizes = prompt_sizes(r.run_dir)
        if sizes:
            ratio = f"{sizes[29] / sizes[4]:.2f}" if len(sizes) >= 30 else "n/a (<30 calls)"
            print(
                f"    prompt tokens per call: median {statistics.median(sizes):.0f}, max {max(sizes)}, "
                f"call 30 / call 5 = {ratio}"
            )
        if not r.passed:
            print(f"    why: {r.reason[:300]}")


if __name__ == "__main__":
    main()
