"""Kill bench: the headline job (scripted models, ERP chaos on) is SIGKILLed at random points and restarted.

    uv run python bench/jobs_kill.py --points 100 [--seed 1]

Per point: reset the ERP, submit the job, start a worker, SIGKILL its whole process group (worker and
Chromium) after a random delay within one clean run's duration, restart the worker (same id: DBOS
recovers its pending leg), wait for the job to end. Prints the table by kill point (what the store
showed at the kill: job status, last checkpoint, intent) and the totals: outcomes and duplicate bills.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.mock_erp import ChaosConfig, ErpServer, ErpSettings, fetch_state

TERMINAL = ("finished", "failed", "cancelled")


def start_worker(env: dict[str, str], erp_url: str, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "taskcrew.cli", "worker", "--worker-id", "kill-bench", "--erp-url", erp_url]
    cmd += ["--intranet-url", "", "--stale-after", "5"]
    return subprocess.Popen(
        cmd, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_end(jobs: Jobs, job_id: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = jobs.get(job_id)
        if job.status in TERMINAL:
            return f"{job.status}:{job.outcome or ''}"
        time.sleep(0.5)
    return "timeout"


def snapshot(jobs: Jobs, job_id: str) -> str:
    job = jobs.get(job_id)
    ck = jobs.checkpoint(job_id)
    intents = jobs.intents(job_id)
    stage = ck["stage"] if ck else "-"
    intent = ",".join(i.status for i in intents) or "-"
    return f"{job.status}/{stage}/{intent}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=180)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="taskcrew-killbench-"))
    case = next(c for c in load_cases() if c.id == "northwind-headline")
    erp = ErpServer(tmp / "erp.sqlite3", settings=ErpSettings(), chaos=ChaosConfig()).start()
    url = f"sqlite:///{tmp / 'jobs.sqlite3'}"
    env = {
        **os.environ,
        "TASKCREW_HOME": str(tmp / "home"),
        "TASKCREW_RUNS": str(tmp / "runs"),
        "TASKCREW_JOBS_DB": url,
        "ERP_USERNAME": "demo",
        "ERP_PASSWORD": "demo123",
    }
    os.environ.update({k: env[k] for k in ("TASKCREW_HOME", "TASKCREW_JOBS_DB")})
    jobs = Jobs.open(url)
    opts = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor", auto_approve=True)
    log = tmp / "worker.log"

    def one(delay: float | None) -> tuple[str, str, int, float]:
        erp.reset(ChaosConfig())
        job = jobs.submit(case.task, submitted_by="kill-bench", options=opts)
        started = time.monotonic()
        worker = start_worker(env, erp.url, log)
        at_kill = "-"
        if delay is not None:
            end = started + delay
            while time.monotonic() < end and jobs.get(job.id).status not in TERMINAL:
                time.sleep(0.05)
            at_kill = snapshot(jobs, job.id)
            stop(worker)
            worker = start_worker(env, erp.url, log)
        result = wait_end(jobs, job.id, args.timeout)
        stop(worker, signal.SIGTERM)
        bills = [b for b in fetch_state(erp.url).bills if b.invoice_number == "INV-2057"]
        return at_kill, result, len(bills), time.monotonic() - started

    _, result, count, clean = one(None)
    print(
        f"clean run: {result}, {count} bill(s), {clean:.1f} s (kill delays drawn from 0..{0.9 * clean:.1f} s)"
    )
    rows = []
    for point in range(1, args.points + 1):
        delay = rng.uniform(0, 0.9 * clean)
        at_kill, result, count, seconds = one(delay)
        rows.append((point, delay, at_kill, result, count))
        print(
            f"{point:3d}  kill at {delay:5.1f} s  store then: {at_kill:<40} end: {result:<28} bills: {count}  ({seconds:.0f} s)",
            flush=True,
        )
    outcomes = Counter(r[3] for r in rows)
    by_stage = Counter(r[2].split("/")[1] if "/" in r[2] else r[2] for r in rows)
    good = sum(1 for r in rows if r[3] in ("finished:done", "finished:nothing_to_do") and r[4] == 1)
    dup = sum(1 for r in rows if r[4] > 1)
    print("\nkill points by last checkpoint:", dict(by_stage))
    print(
        "by job status/intent at kill:",
        dict(Counter("/".join(([*r[2].split("/"), "", "", ""])[::2][:2]) for r in rows)),
    )
    print("outcomes:", dict(outcomes))
    print(f"{good}/{len(rows)} ended done or nothing_to_do with exactly one correct bill; duplicates: {dup}")
    erp.stop()


if __name__ == "__main__":
    main()
