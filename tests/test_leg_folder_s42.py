"""A leg that lost its job writes nothing over the record of the leg that holds (or ended) it: its
run folder is named in the job's record only while it runs its job (``Jobs.note_run_dir``), and its
job's checkpoint is dropped only while the job is still on it (``Jobs.clear_checkpoint``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import LegRunner, Stopped


@pytest.fixture
def jobs(tmp_path: Path) -> Iterator[Jobs]:
    store = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield store
    store.close()


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "runs" / name
    folder.mkdir(parents=True)
    (folder / "report.md").write_text(f"# {name}\n", encoding="utf-8")
    return folder.resolve()


def _taken_over(jobs: Jobs) -> str:
    """Leg 0 claimed by w1, which stalls; the job taken over and leg 1 running on w2."""
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    assert jobs.take_over(job.id, "w1") is not None and jobs.leg(job.id) == 1
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=1, worker="w2") is not None
    return job.id


def test_a_taken_over_leg_making_its_folder_after_the_new_leg_ended_leaves_the_record_and_stops(
    jobs: Jobs, tmp_path: Path
) -> None:
    job_id = _taken_over(jobs)
    new = _folder(tmp_path, "leg1")
    LegRunner(jobs, place=None, worker_id="w2")._run_dir(job_id, 1, new, [])
    assert jobs.get(job_id).run_dir == str(new)
    assert jobs.finish(job_id, "done", "BILL-0011 saved", leg=1, run_dir=str(new)) is not None
    sealed = jobs.get(job_id)
    assert sealed.run_seal is not None

    old = _folder(tmp_path, "leg0")  # the stalled leg wakes and makes its folder
    made: list[Path] = []
    with pytest.raises(Stopped, match=r"is finished on w2 \(leg 1, this is leg 0\); this leg stops"):
        LegRunner(jobs, place=None, worker_id="w1")._run_dir(job_id, 0, old, made)
    assert made == [old]  # still its own folder: sealed and accounted for as the leg's run ends
    after = jobs.get(job_id)
    assert (after.run_dir, after.run_seal, after.record_trust) == (sealed.run_dir, sealed.run_seal, "signed")


def test_a_stale_leg_does_not_name_its_folder_while_the_new_leg_runs(jobs: Jobs, tmp_path: Path) -> None:
    job_id = _taken_over(jobs)
    new = _folder(tmp_path, "leg1")
    assert jobs.note_run_dir(job_id, str(new), leg=1, worker="w2")
    assert not jobs.note_run_dir(job_id, str(_folder(tmp_path, "leg0")), leg=0, worker="w1")
    assert not jobs.note_run_dir(job_id, str(_folder(tmp_path, "other")), leg=1, worker="w1")  # not w1's
    assert jobs.get(job_id).run_dir == str(new)


def test_a_cancelled_jobs_leg_stops_as_it_makes_its_folder_saying_who_cancelled_it(
    jobs: Jobs, tmp_path: Path
) -> None:
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.cancel(job.id, by="bob")
    with pytest.raises(Stopped, match="cancelled by bob"):
        LegRunner(jobs, place=None, worker_id="w1")._run_dir(job.id, 0, _folder(tmp_path, "leg0"), [])
    assert jobs.get(job.id).run_dir is None


def test_a_stale_leg_does_not_drop_the_new_legs_checkpoint(jobs: Jobs) -> None:
    job_id = _taken_over(jobs)
    assert jobs.save_checkpoint(job_id, {"stage": "plan"}, leg=1, worker="w2")
    jobs.clear_checkpoint(job_id, leg=0)  # the stalled leg, ending after the takeover
    assert jobs.checkpoint(job_id) == {"stage": "plan"}
    jobs.clear_checkpoint(job_id, leg=1)
    assert jobs.checkpoint(job_id) is None
