"""Throughput bench: N jobs with scripted models that sleep like real ones, on 1, 2 and 4 workers.

    uv run python bench/jobs_throughput.py --jobs 200 --delay 2 --workers 1,2,4 [--db postgresql+psycopg://…]

Each worker is its own process (concurrency 1), with --erp-sessions equal to the worker count;
most_at_once is the most jobs that ran at the same moment (from the jobs' histories). Per worker count: a fresh database (SQLite file, or a
fresh Postgres database created from --db), the same N jobs (a read-only report task, so every job
does the same work), wall time, jobs/min, queue wait p50/p95 (submit → start), run time p50, and the
database rows and bytes per job (our tables and DBOS's).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.history import most_running_at_once
from taskcrew.mock_erp import ChaosConfig, ErpServer, ErpSettings

CASE = "unpaid-before-date-report"


def fresh_db(base: str | None, tmp: Path, n: int) -> tuple[str, sa.Engine | None, str | None]:
    if not base:
        return f"sqlite:///{tmp / f'jobs-{n}.sqlite3'}", None, None
    name = f"taskcrew_bench_{secrets.token_hex(4)}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    return sa.engine.make_url(base).set(database=name).render_as_string(hide_password=False), admin, name


def size(url: str, engine: sa.Engine) -> tuple[int, int]:
    """(rows, bytes) of the job database: our tables and DBOS's."""
    with engine.connect() as conn:
        if url.startswith("sqlite"):
            tables = [
                r[0] for r in conn.execute(sa.text("SELECT name FROM sqlite_master WHERE type='table'"))
            ]
            rows = sum(conn.execute(sa.text(f'SELECT COUNT(*) FROM "{t}"')).scalar_one() for t in tables)
            return rows, Path(url.removeprefix("sqlite:///")).stat().st_size
        rows = conn.execute(
            sa.text(
                "SELECT COALESCE(SUM(n_live_tup),0) FROM pg_stat_user_tables WHERE schemaname IN ('public','dbos')"
            )
        ).scalar_one()
        nbytes = conn.execute(sa.text("SELECT pg_database_size(current_database())")).scalar_one()
        return int(rows), int(nbytes)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--delay", type=float, default=2.0, help="seconds each scripted model call sleeps")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument(
        "--db", default=os.environ.get("TASKCREW_TEST_PG"), help="a Postgres URL (default: SQLite)"
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="taskcrew-throughput-"))
    task = next(c for c in load_cases() if c.id == CASE).task
    erp = ErpServer(tmp / "erp.sqlite3", settings=ErpSettings(), chaos=ChaosConfig.off()).start()
    opts = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor", auto_approve=True)
    print(
        f"{args.jobs} jobs, scripted calls sleep {args.delay} s, database: {'postgres' if args.db else 'sqlite'}"
    )
    print("workers  wall_s  jobs/min  wait_p50  wait_p95  run_p50  ok  rows/job  bytes/job  most_at_once")
    for n in [int(x) for x in args.workers.split(",")]:
        url, admin, name = fresh_db(args.db, tmp, n)
        os.environ["TASKCREW_APPROVALS_DIR"] = str(tmp / "home" / "approvals")
        jobs = Jobs.open(url)
        rows0, bytes0 = size(url, jobs.engine)
        env = {**os.environ, "TASKCREW_JOBS_DB": url, "TASKCREW_RUNS": str(tmp / f"runs-{n}")}
        env |= {"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123", "TASKCREW_HOME": str(tmp / "home")}
        # the workers verify the bench's signed submissions (auto-approve): one approvals key for both
        env["TASKCREW_APPROVALS_DIR"] = os.environ["TASKCREW_APPROVALS_DIR"] = str(tmp / "home" / "approvals")
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "taskcrew.cli", "worker", "--worker-id", f"bench-{n}-{i}", "--erp-url", erp.url,
                 "--intranet-url", "", "--scripted-delay", str(args.delay), "--erp-sessions", str(n)],
                env=env, stdout=(tmp / f"worker-{n}-{i}.log").open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
            )
            for i in range(n)
        ]  # fmt: skip
        while not all("ready" in (tmp / f"worker-{n}-{i}.log").read_text() for i in range(n)):
            time.sleep(0.5)  # measure the queue, not the workers' start-up
        started = time.monotonic()
        ids = [jobs.submit(task, submitted_by="bench", options=opts).id for _ in range(args.jobs)]
        while True:
            done = [jobs.get(i) for i in ids]
            if all(j.status in ("finished", "failed", "cancelled") for j in done):
                break
            time.sleep(1)
        wall = time.monotonic() - started
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait()
        waits = [(j.started_at - j.submitted_at).total_seconds() for j in done if j.started_at]
        runs = [
            (j.finished_at - j.started_at).total_seconds() for j in done if j.finished_at and j.started_at
        ]
        ok = sum(1 for j in done if j.outcome == "done")
        rows, nbytes = size(url, jobs.engine)
        print(
            f"{n:7d}  {wall:6.0f}  {args.jobs / wall * 60:8.2f}  {statistics.median(waits):8.1f}  "
            f"{pct(waits, 0.95):8.1f}  {statistics.median(runs):7.1f}  {ok:2d}  "
            f"{(rows - rows0) / args.jobs:8.1f}  {(nbytes - bytes0) / args.jobs:9.0f}  "
            f"{most_running_at_once(jobs, ids):12d}",
            flush=True,
        )
        jobs.close()
        if admin is not None:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
    erp.stop()


if __name__ == "__main__":
    main()
