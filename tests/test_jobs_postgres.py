"""Scale-out on one Postgres: 3 worker processes, one SIGKILLed mid-run; its job finishes on the others
with no duplicate, and never more than 2 jobs run against the ERP at once. Needs TASKCREW_TEST_PG (a Postgres URL; .ci/run starts a throwaway cluster)."""

from __future__ import annotations

import os
import secrets
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from fixtures_jobs import SCRIPTED, Workers

from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions
from taskcrew.jobs.history import most_running_at_once
from taskcrew.mock_erp import ChaosConfig, ErpServer, fetch_state

ADMIN_URL = os.environ.get("TASKCREW_TEST_PG")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.timeout(420),
    pytest.mark.skipif(not ADMIN_URL, reason="set TASKCREW_TEST_PG to a Postgres URL (.ci/run does)"),
]
CASES = ("northwind-headline", "initech-newest", "bharat-inr")


@pytest.fixture
def pg_url() -> Iterator[str]:
    assert ADMIN_URL
    name = f"taskcrew_test_{secrets.token_hex(4)}"
    admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    yield str(sa.engine.make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False))
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_three_workers_on_postgres_one_killed_mid_run(
    tmp_path: Path, pg_url: str, erp_factory: Callable[..., ErpServer]
) -> None:
    workers = Workers(tmp_path, erp_factory(ChaosConfig()), url=pg_url)
    try:
        cases = {c.id: c for c in load_cases()}
        submitted = {
            workers.jobs.submit(
                cases[cid].task, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED)
            ).id: cid
            for cid in CASES
        }
        # 3 workers that could run 2 jobs each, at most 2 ERP sessions across them all.
        procs = {wid: workers.start(wid, sessions=2, concurrency=2) for wid in ("w1", "w2", "w3")}
        victim = workers.wait_for(
            "a job with a checkpoint",
            lambda: next(
                (
                    j
                    for j in workers.jobs.list("running")
                    if j.id in submitted and workers.jobs.checkpoint(j.id)
                ),
                None,
            ),
        )
        dead = victim.worker  # type: ignore[attr-defined]
        workers.kill(procs[dead])
        workers.wait_for(
            "every job to end",
            lambda: all(workers.jobs.get(jid).status in ("finished", "failed") for jid in submitted),
            timeout=360,
        )
        bills = fetch_state(workers.erp.url).bills
        for jid, cid in submitted.items():
            job = workers.jobs.get(jid)
            assert (job.status, job.outcome) == ("finished", "done"), (cid, job.reason)
            assert job.worker != dead or jid != victim.id  # type: ignore[attr-defined]
            [expected] = cases[cid].expect.new_bills
            assert sum(1 for b in bills if b.invoice_number == expected.invoice_number) == 1, cid
        assert workers.jobs.get(victim.id).attempts >= 2  # type: ignore[attr-defined]
        assert most_running_at_once(workers.jobs, list(submitted)) <= 2
    finally:
        for proc in workers.procs:
            if proc.poll() is None:
                workers.kill(proc, signal.SIGKILL)
        workers.jobs.close()
