"""A worker id held by two processes, and a process with another approvals folder (s43).

- Each start of a worker has its own token (``IdHolder.token``); the job's leg is bound to it (claim,
  heartbeat, writes, sends: ``store.holds``); a start whose id another process took learns it at its
  next beat and stops; a leg recovered for the id whose job another live start runs is not claimed.
- The job database keeps the mark of the key ring that signs it: a process with another approvals
  folder is refused at start (exit 2, naming the folder and what to set) and makes no key.
- `jobs retry` refuses a record taskcrew did not sign, with the worker's words.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.worker import leg_refusal
from taskcrew.jobs import Jobs
from taskcrew.jobs.identity import IdHolder
from taskcrew.jobs.runner import LegRunner, Stopped, StoreCheckpoints
from taskcrew.jobs.store import J


@pytest.fixture
def jobs(tmp_path: Path) -> Jobs:
    return Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _running(jobs: Jobs, token: str, worker: str = "worker-w") -> str:
    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    assert jobs.mark(
        job.id, "running", only_if=("queued",), leg=0, worker=worker, worker_token=token, beat=True
    )
    return job.id


def test_a_start_whose_id_another_process_took_learns_it_at_its_next_beat(jobs: Jobs) -> None:
    first = IdHolder(jobs, "worker-w", stale_after_s=3)
    first.claim()
    assert first.beat() and first.holds()
    second = IdHolder(jobs, "worker-w", stale_after_s=3)  # the same id, another start (a fail-over)
    assert second.token != first.token
    with jobs.engine.begin() as conn:  # its beat judged stale on another host: the id is taken
        old = (jobs.db_now() - timedelta(hours=1)).isoformat()
        conn.execute(
            sa.text("update taskcrew_workers set host='far-host', pid=1, beat_at=:old"), {"old": old}
        )
    second.claim()
    assert second.beat() and second.holds()
    assert not first.beat() and not first.holds()  # was: the beat updated no row and said nothing
    first.release()  # releases nothing of the new holder's
    assert second.holds()


def test_a_leg_is_bound_to_its_worker_start_not_to_the_worker_id(jobs: Jobs) -> None:
    """Two starts of worker-w on leg 0 of one job: only the one that claimed it last may beat, save,
    name its run folder or send for it."""
    job_id = _running(jobs, "host-a/11/aaaa")
    authority = Authority(jobs)
    assert leg_refusal(authority, job_id, "worker-w", 0, "host-a/11/aaaa") is None
    gone = leg_refusal(authority, job_id, "worker-w", 0, "host-b/22/bbbb")
    assert gone is not None and "another start of worker worker-w" in gone
    assert not jobs.save_checkpoint(job_id, {"s": 1}, leg=0, worker="worker-w", token="host-b/22/bbbb")
    assert not jobs.note_run_dir(job_id, "/runs/x", leg=0, worker="worker-w", token="host-b/22/bbbb")
    assert jobs.hand_back(job_id, 0, "worker-w", "stopping", token="host-b/22/bbbb") is None
    before = jobs.get(job_id).heartbeat_at
    seen, _ = jobs.heartbeat(job_id, "worker-w", "host-b/22/bbbb")
    assert seen.heartbeat_at == before  # not beaten by the other start
    assert jobs.save_checkpoint(job_id, {"s": 1}, leg=0, worker="worker-w", token="host-a/11/aaaa")


def test_a_recovered_leg_whose_job_another_live_start_runs_is_not_claimed(jobs: Jobs) -> None:
    """DBOS hands a restarted worker-w every leg pending for worker-w, the one a woken stalled start
    of worker-w runs right now included: it is left to that start (its job's heartbeat is fresh);
    a leg whose start is dead on this host is claimed at once, as before."""
    restarted = IdHolder(jobs, "worker-w", stale_after_s=60)
    restarted.claim()
    place = SimpleNamespace(erp_url="http://127.0.0.1:9")  # nothing there: a claimed leg fails at once
    runner = LegRunner(
        jobs,
        place,
        "worker-w",
        token=restarted.token,
        still_holds=restarted.holds,
        token_alive=restarted.token_alive,
    )
    woken = _running(jobs, "stalled-host/4242/cafe")  # no id row (taken since), beating its job
    assert runner.run_leg(woken, 0) == "running_elsewhere"
    assert jobs.get(woken).worker_token == "stalled-host/4242/cafe"
    dead = _running(jobs, f"{restarted.host}/{_dead_pid()}/dead")  # a killed start on this host
    assert runner.run_leg(dead, 0) == "failed"
    assert jobs.get(dead).worker_token == restarted.token


def test_a_start_that_lost_its_id_runs_nothing_more(jobs: Jobs) -> None:
    """Its legs stop before their next checkpoint is written; a leg it dequeues goes back on the
    queue unstarted."""
    holder = IdHolder(jobs, "worker-w", stale_after_s=60)
    holder.claim()
    runner = LegRunner(jobs, None, "worker-w", token=holder.token, still_holds=holder.holds)
    job_id = _running(jobs, holder.token)
    checkpoints = StoreCheckpoints(
        jobs, job_id, "worker-w", leg=0, token=holder.token, lost=lambda: runner.lost
    )
    with jobs.engine.begin() as conn:
        conn.execute(sa.text("update taskcrew_workers set token='far-host/1/new'"))
    assert not holder.beat()
    runner.lose_id("worker id worker-w is held by another process now")
    with pytest.raises(Stopped, match="held by another process"):
        checkpoints.save("plan", {"s": 1})
    assert jobs.checkpoint(job_id) is None  # nothing written
    queued = jobs.submit("enter the Initech bill", submitted_by="ana", enqueue=False)
    assert runner.run_leg(queued.id, 0) == "handed_back"
    assert (jobs.get(queued.id).status, jobs.leg(queued.id)) == ("queued", 1)


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_process_with_another_approvals_folder_is_refused_at_start_and_makes_no_key(
    jobs: Jobs, tmp_path: Path
) -> None:
    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    other = tmp_path / "other-approvals"
    env = {**os.environ, "TASKCREW_JOBS_DB": jobs.url, "TASKCREW_APPROVALS_DIR": str(other)}
    for args in (
        ["worker", "--worker-id", "w9", "--erp-url", "http://127.0.0.1:9", "--intranet-url", ""],
        ["jobs", "list"],
    ):
        done = _cli(*args, env=env)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        said = " ".join(done.stderr.split())
        assert str(other) in said and "TASKCREW_APPROVALS_DIR" in said, said
    assert not (other / "operator.key").exists()  # was: made silently, then every job read forged
    after = jobs.get(job.id)
    assert (after.status, after.record_trust) == ("queued", "signed")


def test_retry_of_a_record_taskcrew_did_not_sign_is_refused_with_the_workers_words(jobs: Jobs) -> None:
    job = jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    with jobs.engine.begin() as conn:  # a record changed in the job database: failed, unsigned
        doc = json.loads(conn.execute(sa.select(J.c.doc).where(J.c.id == job.id)).scalar_one())
        doc["status"] = "failed"
        conn.execute(J.update().where(J.c.id == job.id).values(status="failed", doc=json.dumps(doc)))
    assert jobs.get(job.id).record_trust == "forged"
    env = {**os.environ, "TASKCREW_JOBS_DB": jobs.url}
    done = _cli("jobs", "retry", job.id, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "submit the task again" in " ".join(done.stderr.split())
    assert jobs.get(job.id).status == "failed" and jobs.leg(job.id) == 0


def test_a_start_of_this_pid_before_it_is_no_live_start(jobs: Jobs) -> None:
    """A container's worker restarted after a crash often gets the same pid (1): its earlier start's
    token names this host and this pid, and is no other live start — the leg is claimed at once, not
    left until the watch loop takes it over as gone silent."""
    restarted = IdHolder(jobs, "worker-w", stale_after_s=60)
    restarted.claim()
    earlier = f"{restarted.host}/{restarted.pid}/before-the-crash"
    assert not restarted.token_alive(earlier, jobs.db_now())
    place = SimpleNamespace(erp_url="http://127.0.0.1:9")  # nothing there: a claimed leg fails at once
    runner = LegRunner(jobs, place, "worker-w", token=restarted.token, token_alive=restarted.token_alive)
    job_id = _running(jobs, earlier)
    assert runner.run_leg(job_id, 0) == "failed"
    assert jobs.get(job_id).worker_token == restarted.token


def test_a_start_that_lost_its_leg_to_another_start_ends_nothing(jobs: Jobs) -> None:
    """Start A of worker-w ran leg 0; start B of worker-w claimed the same leg since (a recovered
    leg): A's ending (failed, finished) writes nothing over B's running job."""
    job_id = _running(jobs, "host-b/22/bbbb")
    stale = LegRunner(jobs, None, "worker-w", token="host-a/11/aaaa")
    stale._fail(job_id, 0, "the browser would not start")
    assert jobs.finish(job_id, "done", "A's account", leg=0, if_token="host-a/11/aaaa") is None
    assert (jobs.get(job_id).status, jobs.get(job_id).worker_token) == ("running", "host-b/22/bbbb")
