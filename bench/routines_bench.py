"""Benchmark routines: the headline chore run by the agent vs replayed from its accepted routine.

    uv run python bench/routines_bench.py [--repeats 3] [--vendor "Northwind Traders"] [--chaos default|none]
        [--model-pace 0.5,5000,70]

In one process, on one Workplace (real Chromium, the demo ERP reset before every run, chaos as
given: by default the session expires on the first save and the second answers 503): the agent
(the scripted solver as worker, the scripted auditor as the independent verifier) works the chore
once, its draft routine is accepted, then ``--repeats`` agent runs and ``--repeats`` replays
alternate. Prints, side by side (the first run, the agent's repeats, the replays): model calls, tokens, wall time and the pass rate (the run ended
'done' and the ERP holds exactly the invoice's one bill). Only the models are scripted, so calls
and tokens are what the prompts would cost; the target is a replay at most 20% of the first run's
tokens and a third of its wall time, with the same pass rate. Figures only; nothing asserted.

Scripted models answer at once, so by default the wall time is the browser's, the files' and the
code's alone. ``--model-pace first_s,prompt_tokens_per_s,output_tokens_per_s`` makes every
scripted answer take as long as a hosted model's would at that pace (``crew.scripted.Pace``); the
table then also prints the seconds spent waiting for models and the rest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vendor", default="Northwind Traders")
    parser.add_argument("--chaos", choices=["default", "none"], default="default")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="forget parsed documents before every run, as a new process (one CLI run) would",
    )
    parser.add_argument(
        "--model-pace",
        default="",
        help="first_s,prompt_tokens_per_s,output_tokens_per_s: scripted answers take a hosted model's time",
    )
    args = parser.parse_args()
    if args.model_pace:
        os.environ["TASKCREW_SCRIPTED_PACE"] = args.model_pace
    tmp = Path(tempfile.mkdtemp(prefix="routines-bench-"))
    os.environ["TASKCREW_ROUTINES"] = str(tmp / "routines")

    from routines_world import chore, run_chore, workplace

    from taskcrew.crew.scripted import Pace
    from taskcrew.crew.trace import read_trace
    from taskcrew.mock_erp import ChaosConfig, fetch_state
    from taskcrew.routines.store import RoutineStore
    from taskcrew.sandbox.ground_truth import load_ground_truth
    from taskcrew.tools.documents.worker import PARSED

    chaos = ChaosConfig() if args.chaos == "default" else ChaosConfig(save_faults=[])
    case = chore(args.vendor)
    seeded = {f"BILL-{i:04d}" for i in range(1, 11)}
    newest = max(
        (
            d
            for d in load_ground_truth().documents
            if d.kind == "invoice" and d.vendor and args.vendor in d.vendor
        ),
        key=lambda d: d.invoice_date or d.document_date,
    )

    def passed(place: Any, result: Any) -> bool:
        bills = [b for b in fetch_state(place.erp_url).bills if b.id not in seeded]
        return result.outcome == "done" and [b.invoice_number for b in bills] == [newest.number]

    Pace.from_env()  # a malformed --model-pace stops here, before anything runs

    def model_s(result: Any) -> float:
        trace = Path(result.run_dir) / "trace.jsonl"
        return (
            sum(e.call.seconds for e in read_trace(trace) if e.kind == "llm_call") if trace.is_file() else 0.0
        )

    Row = tuple[bool, int, int, float, float]
    rows: dict[str, list[Row]] = {"agent": [], "replay": []}
    store = RoutineStore()
    with workplace(tmp) as place:
        started = time.monotonic()
        first = run_chore(place, case, chaos=chaos)
        rows["agent"].append(
            (
                passed(place, first),
                first.llm_calls,
                first.input_tokens + first.output_tokens,
                time.monotonic() - started,
                model_s(first),
            )
        )
        drafts = store.versions("enter-invoice")
        if not drafts:
            print(f"no routine was learned from the first run ({first.outcome}: {first.reason})")
            print(
                (first.run_dir / "routine.txt").read_text()
                if (first.run_dir / "routine.txt").exists()
                else ""
            )
            return
        store.accept("enter-invoice", drafts[-1].version, "bench")
        os.environ["TASKCREW_ROUTINES_LEARN"] = "0"  # the agent repeats propose nothing new
        for _ in range(args.repeats):
            for mode in ("replay", "agent"):
                # the agent's repeats see no routine (an empty folder); the replays see the accepted one
                os.environ["TASKCREW_ROUTINES"] = str(
                    tmp / ("no-routines" if mode == "agent" else "routines")
                )
                if args.cold:
                    PARSED.clear()
                started = time.monotonic()
                result = run_chore(place, case, chaos=chaos)
                rows[mode].append(
                    (
                        passed(place, result),
                        result.llm_calls,
                        result.input_tokens + result.output_tokens,
                        time.monotonic() - started,
                        model_s(result),
                    )
                )
    print(
        f"\nheadline chore for {args.vendor} (newest invoice {newest.number}), chaos {args.chaos}, "
        f"{args.repeats} repeat(s) + the learning run\n"
    )
    first, repeats, replay = rows["agent"][:1], rows["agent"][1:], rows["replay"]

    def mean(items: list[Row], i: int) -> float:
        if i == 5:  # wall time outside model calls
            return statistics.mean(x[3] - x[4] for x in items) if items else 0.0
        return statistics.mean(float(x[i]) for x in items) if items else 0.0

    def rate(items: list[Row]) -> str:
        return f"{sum(x[0] for x in items) / len(items):.0%}" if items else "-"

    heads = ("first run", "agent again", "replay", "replay/first", "replay/again")
    print(f"{'':<16}" + "".join(f"{h:>14}" for h in heads))
    lines = [
        ("LLM calls", 1),
        ("tokens", 2),
        ("wall time (s)", 3),
        ("  in model calls", 4),
        ("  the rest", 5),
    ]
    for label, i in lines:
        f, a, r = mean(first, i), mean(repeats, i), mean(replay, i)
        cells = [
            f"{f:.1f}",
            f"{a:.1f}",
            f"{r:.1f}",
            f"{r / f:.0%}" if f else "-",
            f"{r / a:.0%}" if a else "-",
        ]
        print(f"{label:<16}" + "".join(f"{c:>14}" for c in cells))
    print(f"{'pass rate':<16}" + "".join(f"{c:>14}" for c in (rate(first), rate(repeats), rate(replay))))
    print(
        "\n'first run' reads the inbox cold; 'agent again' and the replays run in the same process, where\n"
        "a document already parsed is not parsed again (tools/documents/worker.py PARSED)"
        + (", except with --cold (as here): every run parses again" if args.cold else "")
        + (
            f".\nModel pace {args.model_pace} (seconds to the first token, prompt and output tokens per"
            " second): 'in model calls' is that wait; 'the rest' is the browser, the files and the code."
            if args.model_pace
            else ".\nScripted models answer at once: a real model's seconds per call are not in these wall"
            " times (--model-pace adds them)."
        )
    )
    print(f"\nrun folders: {tmp / 'runs'}")


if __name__ == "__main__":
    main()
