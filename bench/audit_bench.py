"""Audit log read bench: what one send's checks cost as the signed audit log grows.

    uv run python bench/audit_bench.py --entries 1000,5000,20000

A send reads the log about six times (its leg twice, void decisions, the decisions of its key, the
earlier sends, the question's place). Per log size it prints one cold read (a new process: every
line parsed and its signature checked) and the mean of later reads (only lines not read before are
parsed: ``approvals.audit._LineCache``), and a read right after one more entry is appended.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from taskcrew.approvals import audit as audit_module
from taskcrew.approvals.audit import AuditLog

SEND_READS = (("cancel", "retry", "take_over"), ("retry", "cancel"), ("approve", "reject", "answer"), "send")


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def bench(entries: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = AuditLog(Path(tmp) / "audit.jsonl")
        for i in range(entries):
            action = ("request", "approve", "send", "question", "reject")[i % 5]
            log.append(
                "ana", action, f"apr-{i}", {"job_id": f"job-{i % 50}", "key": "k" * 40, "amount": "95.00"}
            )
        size = log.path.stat().st_size
        audit_module._LINES = audit_module._LineCache()  # as a new process finds it
        start = time.perf_counter()
        for action in SEND_READS:
            log.signed(action)
        cold = _ms(start)
        start = time.perf_counter()
        for _ in range(repeats):
            for action in SEND_READS:
                log.signed(action)
        warm = _ms(start) / repeats
        log.append("ana", "send", "apr-new", {"job_id": "job-1", "key": "k" * 40})
        start = time.perf_counter()
        for action in SEND_READS:
            log.signed(action)
        appended = _ms(start)
    print(
        f"{entries:>7} entries ({size / 1e6:5.1f} MB): one send's {len(SEND_READS)} reads: "
        f"cold {cold:7.1f} ms, warm {warm:6.1f} ms, after an append {appended:6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", default="1000,5000,20000")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    for entries in (int(n) for n in args.entries.split(",")):
        bench(entries, args.repeats)


if __name__ == "__main__":
    main()
