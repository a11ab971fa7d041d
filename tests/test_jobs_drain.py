"""A stopping worker's legs that DBOS dequeues while it drains are handed back, whenever they arrive:
before the worker's final hand-back (it gives them back) or after it (each gives itself back); a leg
handed back before its claim does not claim the job. Real job store and DBOS client on SQLite; no
worker process, no browser."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import LegRunner

OPTIONS = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")


@pytest.fixture
def jobs(tmp_path: Path) -> Iterator[Jobs]:
    store = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield store
    store.close()


def _stopping(jobs: Jobs) -> LegRunner:
    runner = LegRunner(jobs, place=None, worker_id="w1")
    runner.draining.set()
    return runner


def _handed_back(jobs: Jobs, job_id: str) -> int:
    return [e.kind for e in jobs.events(job_id)].count("handed_back")


def test_a_leg_dequeued_after_the_final_hand_back_gives_itself_back(jobs: Jobs) -> None:
    """The race that left a job queued forever: the worker had already handed back what it held; a leg
    DBOS dequeued just then returned "handed_back" without handing anything back."""
    job = jobs.submit("Enter the invoice", submitted_by="ana", options=OPTIONS)
    runner = _stopping(jobs)
    assert runner.hand_back_all("the worker stopped before the leg started") == []  # nothing held yet
    assert runner.run_leg(job.id, 0) == "handed_back"
    back = jobs.get(job.id)
    assert (back.status, jobs.leg(job.id), _handed_back(jobs, job.id)) == ("queued", 1, 1)


def test_a_leg_held_while_draining_is_handed_back_once(jobs: Jobs) -> None:
    job = jobs.submit("Enter the invoice", submitted_by="ana", options=OPTIONS)
    runner = _stopping(jobs)
    leg = threading.Thread(target=runner.run_leg, args=(job.id, 0))
    leg.start()
    deadline = time.monotonic() + 30
    while not runner.holds(job.id) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert runner.hand_back_all("the worker stopped before the leg started") == [job.id]
    leg.join(timeout=30)
    assert not leg.is_alive()
    assert (jobs.get(job.id).status, jobs.leg(job.id), _handed_back(jobs, job.id)) == ("queued", 1, 1)


def test_a_leg_handed_back_before_it_claimed_the_job_does_not_run_it(jobs: Jobs) -> None:
    """A leg that passed the draining check just as the stop came, and was handed back before its
    claim: the claim is refused (the newer leg on the queue runs the job), not taken as well."""
    job = jobs.submit("Enter the invoice", submitted_by="ana", options=OPTIONS)
    assert jobs.hand_back(job.id, 0, "w1", "the worker stopped before the leg started") is not None
    assert jobs.mark(job.id, "running", only_if=("queued", "running"), leg=0, worker="w1") is None
    assert jobs.get(job.id).status == "queued"
    assert jobs.mark(job.id, "running", only_if=("queued", "running"), leg=1, worker="w2") is not None


def test_a_running_leg_abandoned_by_the_worker_sends_nothing_more(jobs: Jobs) -> None:
    """The grace ran out (or a second Ctrl-C): the leg's thread is abandoned, not stopped. Its browser
    policy is halted as the job is handed back, so a submission it still tries is refused unasked."""
    from taskcrew.tools.human import AutoApproveHuman
    from taskcrew.tools.policy import Policy, PolicyConfig, Submission

    job = jobs.submit("Enter the invoice", submitted_by="ana", options=OPTIONS)
    runner = _stopping(jobs)
    policy = Policy(PolicyConfig.for_url("http://127.0.0.1:8800"), AutoApproveHuman())
    runner.held[(job.id, 0)], runner.policies[(job.id, 0)] = True, policy  # as _run leaves them
    assert runner.hand_back_all("the worker stopped before the leg reached a checkpoint") == [job.id]
    sent = Submission(origin="form", method="POST", url="http://127.0.0.1:8800/bills/new", fields=[])
    decision = policy.submission(sent)
    assert decision.outcome == "blocked" and "handed the job back" in decision.reason


def test_an_older_leg_that_ends_does_not_drop_the_newer_legs_hold(jobs: Jobs) -> None:
    """An older leg of a job may still be ending in this process while its newer leg runs here: the
    older one's end must not forget the newer one (it would not be handed back when the worker stops)."""
    from taskcrew.tools.human import AutoApproveHuman
    from taskcrew.tools.policy import Policy, PolicyConfig

    job = jobs.submit("Enter the invoice", submitted_by="ana", options=OPTIONS)
    runner = LegRunner(jobs, None, "w1")
    newer = Policy(PolicyConfig.for_url("http://127.0.0.1:8800"), AutoApproveHuman())
    runner.held[(job.id, 1)], runner.policies[(job.id, 1)] = True, newer  # leg 1, running here
    with pytest.raises(AttributeError):  # leg 0 ends at once here (no workplace to run in)
        runner.run_leg(job.id, 0)
    assert runner.running_here() == [job.id] and runner.policies == {(job.id, 1): newer}
    runner.hand_back_all("the worker stopped")
    assert newer.halted
