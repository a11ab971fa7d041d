"""The fleet's limits are one setting in the job database: the first worker records them, a worker
with other values refuses to start, `jobs limits` changes them for all (real SQLite, real DBOS)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.jobs.limits import FleetLimits, LimitConflict, current, join_fleet, with_client


def test_the_first_worker_sets_the_limits_and_a_conflicting_one_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    runner = CliRunner()
    shown = runner.invoke(app, ["jobs", "limits", "--db", url])
    assert shown.exit_code == 0 and "no worker has started" in shown.output and "at most 2" in shown.output

    first = with_client(url, lambda c: join_fleet(c, None, None, 1.0))  # what a worker does at start
    assert (first.erp_sessions, first.per_worker) == (2, 1)
    assert with_client(url, lambda c: join_fleet(c, 2, 1, 1.0)) == first  # the same values: fine
    for sessions, concurrency, named in ((3, None, "--erp-sessions 3"), (None, 2, "--concurrency 2")):
        with pytest.raises(LimitConflict) as caught:
            with_client(url, lambda c, s=sessions, n=concurrency: join_fleet(c, s, n, 1.0))
        text = str(caught.value)
        assert named in text and "at most 2 ERP session(s)" in text and "taskcrew jobs limits" in text
    assert with_client(url, current) == first  # a refused worker changed nothing

    too_many = runner.invoke(
        app, ["jobs", "limits", "--erp-sessions", "3", "--concurrency", "5", "--db", url]
    )
    assert too_many.exit_code == 2 and "--concurrency 3 or less" in too_many.output  # not silently cut to 3
    assert with_client(url, current) == first  # the refusal changed nothing
    changed = runner.invoke(app, ["jobs", "limits", "--erp-sessions", "3", "--concurrency", "3", "--db", url])
    assert changed.exit_code == 0, changed.output
    assert "at most 3 ERP session(s) for all workers, 3 job(s) per worker" in changed.output
    assert with_client(url, current) == FleetLimits(erp_sessions=3, per_worker=3, poll_s=1.0)
    assert with_client(url, lambda c: join_fleet(c, None, None, 1.0)).erp_sessions == 3  # adopted

    # a real worker process with a conflicting option stops before it starts anything
    worker = subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", "worker", "--db", url, "--erp-sessions", "4"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == 2, worker.stderr[-2000:]  # bad input, like an unusable database
    assert "--erp-sessions 4" in worker.stderr and "at most 3 ERP session(s)" in worker.stderr


def test_a_claim_of_queued_legs_on_sqlite_holds_the_write_lock_from_its_count(tmp_path: Path) -> None:
    """DBOS counts the running legs and then claims the next ones in one `_begin` block. On SQLite the
    driver began its transaction only at the claim's UPDATE, so two workers could count the same free
    session and both take it (CI saw 3 legs at once under a limit of 2). With the claims serialised,
    the count already holds the write lock: another worker's claim cannot start until it commits."""
    import sqlite3

    import sqlalchemy as sa
    from dbos import DBOSClient

    from taskcrew.jobs.engine import serialise_sqlite_claims

    path = tmp_path / "jobs.sqlite3"
    client = DBOSClient(system_database_url=f"sqlite:///{path}")
    client._sys_db.run_migrations()
    serialise_sqlite_claims()
    serialise_sqlite_claims()  # a second worker in the same process: no double wrap
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        with client._sys_db._begin(None) as c:
            c.execute(
                sa.text("SELECT count(*) FROM workflow_status")
            ).scalar()  # the count, before any UPDATE
            assert c.connection.dbapi_connection.in_transaction
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")  # a second worker's claim waits
        other.execute("BEGIN IMMEDIATE")  # committed: the next claim goes ahead
        other.execute("ROLLBACK")
    finally:
        other.close()
        client.destroy()
