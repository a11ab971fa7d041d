"""Figures of runs with a model in the loop (docs/real-models.md), read from each run's trace.jsonl:

    uv run python bench/real_model_stats.py runs/<dir> [runs/<dir> ...] [--queue DIR ...]

Per run: outcome, LLM calls per role, prompt tokens per call (median / largest, as the trace records
them), the run's own time, and what it changed. With ``--queue`` (the relay's queue folder of that
run, same order) the prompts are also counted offline with o200k from the requests as sent.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any


def _events(run: Path) -> list[dict[str, Any]]:
    with (run / "trace.jsonl").open() as f:
        return [json.loads(line) for line in f if line.strip()]


def _o200k(queue: Path) -> list[int]:
    import bpe_openai

    enc = bpe_openai.get_encoding("o200k_base")
    counts = []
    for raw in sorted(queue.glob("*.raw.json")):
        body = json.loads(raw.read_text())
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        counts.append(len(enc.encode(text, disallowed_special=())))
    return counts


def run_figures(run: Path, queue: Path | None = None) -> dict[str, Any]:
    events = _events(run)
    calls = [e["call"] for e in events if e.get("kind") == "llm_call"]
    prompts = [int(c.get("prompt_tokens") or 0) for c in calls]
    finished = next((e for e in events if e.get("kind") == "run_finished"), {})
    figures: dict[str, Any] = {
        "run": run.name,
        "outcome": finished.get("outcome", "(unfinished)"),
        "changed": finished.get("changed", ""),
        "calls": len(calls),
        "per_role": dict(Counter(str(c.get("role")) for c in calls)),
        "prompt_median": int(statistics.median(prompts)) if prompts else 0,
        "prompt_max": max(prompts, default=0),
        "tokens_in": sum(prompts),
        "seconds": finished.get("seconds"),
        "warnings": sum(1 for e in events if e.get("kind") == "warning"),
    }
    if queue is not None:
        counts = _o200k(queue)
        figures["o200k_median"] = int(statistics.median(counts)) if counts else 0
        figures["o200k_max"] = max(counts, default=0)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--queue", nargs="*", type=Path, default=[])
    args = parser.parse_args(argv)
    for i, run in enumerate(args.runs):
        if not (run / "trace.jsonl").is_file():
            print(f"{run}: no trace.jsonl there; pass a run folder (runs/<timestamp>-<task>)")
            return 2
        queue = args.queue[i] if i < len(args.queue) else None
        print(json.dumps(run_figures(run, queue), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
