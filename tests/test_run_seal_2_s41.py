"""A run folder is vouched for only by a seal that covers it, made as its leg parks or its job ends.

1. A job waiting for an approval named an unsealed folder: an edit made while it waited was audited
   (`taskcrew audit --run`) as the run's own, and sealed in by the rejection or expiry that ended the
   job. A parked leg's folder is final as it parks (the job resumes in a new folder): it is sealed as
   the job is set waiting (``Jobs._update``), that seal is kept at the ending and never made again
   (``Jobs.seal_run``), so an edit while the job waits is told.
2. A folder not there as its job ended left the record unsealed for good, then trusted on its task
   alone (`routines learn` read forged earlier legs from it). It is sealed ``absent`` now, and a
   waiting or ended record of this version without a seal vouches for nothing (``run_seal_format``);
   only a record older than seals is read on its task, said as older.
3. Past ``runseal.MAX_FILES`` files only the first were sealed: a folder that full is sealed
   ``too_many`` and vouched for by none.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_run_seal_s41 import KEPT, TASK, WEAK, _folder, _running, _weaken

from taskcrew.crew.audit import criteria_from_run
from taskcrew.crew.errors import AuditError
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.crew.trace import PlanMade, RunStarted, Tracer
from taskcrew.eval.runs import RunRecords
from taskcrew.jobs import Jobs, runseal
from taskcrew.jobs.liveness import parked_event
from taskcrew.routines.distil import LEGS_FILE, DistilError, read_legs, vouched_done


@pytest.fixture
def store(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Jobs:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    return Jobs.open()


def _parked_leg(runs: Path, jobs: Jobs) -> tuple[str, Path]:
    """A leg that made its plan, parked for an approval (its trace's last line says so) and set its
    job waiting, as ``jobs.runner`` does."""
    run = runs / "20261206-120000-pay-bill-0005"
    trace = Tracer(run / "trace.jsonl")
    trace.emit(RunStarted(task=TASK, worker_model="w", verifier_model="v"))
    step = PlanStep(role="browser_operator", title="Pay it", instructions="Pay BILL-0005.")
    trace.emit(PlanMade(plan=Plan(goal="Pay", success_criteria=[KEPT], steps=[step], changes_data=True)))
    job_id = _running(jobs, run)
    trace.emit(parked_event(job_id, "apr-1"))
    jobs.mark(job_id, "waiting", only_if=("running",), leg=0, reason="waiting for approval apr-1")
    return job_id, run


def test_a_parked_legs_folder_is_sealed_as_it_parks_and_an_edit_while_it_waits_is_told(
    store: Jobs, tmp_path: Path
) -> None:
    job_id, run = _parked_leg(tmp_path / "runs", store)
    sealed = store.get(job_id).run_seal
    assert sealed is not None and sealed.parked and sorted(sealed.files) == ["trace.jsonl"]
    store.seal_run(job_id, run)  # the parked leg's own end: its folder reads as it parked
    assert store.get(job_id).run_seal == sealed
    assert RunRecords.read(store, run).of(run).altered == ""
    assert list(criteria_from_run(run, store)[1]) == [KEPT]

    _weaken(run, WEAK)  # the criteria rewritten while the job waits
    with pytest.raises(AuditError, match=r"trace.jsonl changed since job \S+ parked and sealed it"):
        criteria_from_run(run, store)
    store.seal_run(job_id, run)  # nothing seals the edit in: not the leg's end ...
    store.finish(job_id, "rejected", "rejected by bob", only_if=("waiting",))  # ... nor the rejection
    assert store.get(job_id).run_seal == sealed
    assert "parked and sealed it" in RunRecords.read(store, run).of(run).altered
    with pytest.raises(AuditError, match="changed after the run ended"):
        criteria_from_run(run, store)


def test_an_honest_parked_folder_stays_vouched_for_when_its_job_is_rejected(
    store: Jobs, tmp_path: Path
) -> None:
    job_id, run = _parked_leg(tmp_path / "runs", store)
    store.finish(job_id, "rejected", "rejected by bob", only_if=("waiting",))
    record = RunRecords.read(store, run).of(run)
    assert (record.altered, record.unsealed, record.outcome) == ("", False, "rejected")


def test_a_folder_absent_as_its_job_ends_is_sealed_absent_and_one_put_there_later_is_refused(
    store: Jobs, tmp_path: Path
) -> None:
    run = _folder(tmp_path / "runs")
    job_id = _running(store, run)
    aside = run.with_name(run.name + ".aside")
    run.rename(aside)  # the folder is not there the instant the job ends
    store.finish(job_id, "done", "ok", leg=0)
    sealed = store.get(job_id).run_seal
    assert sealed is not None and sealed.state == "absent" and not sealed.files
    aside.rename(run)
    (run / LEGS_FILE).write_text('[{"run": "20261206-110000-other-job", "reported": {"iban": "GB33"}}]')

    record = RunRecords.read(store, run).of(run)
    assert "there was no run folder when it was sealed" in record.altered and not record.unsealed
    with pytest.raises(DistilError, match=r"cannot be learned from: job .* seal vouches for no run folder"):
        vouched_done(run, store)
    with pytest.raises(AuditError, match=r"cannot be audited: job .* seal vouches for no run folder"):
        criteria_from_run(run, store)
    assert read_legs(run)  # still on disk, but `routines learn` never gets past ``vouched_done``


def test_a_waiting_or_ended_record_without_a_seal_vouches_for_nothing_unless_it_is_older_than_seals(
    store: Jobs, tmp_path: Path
) -> None:
    run = _folder(tmp_path / "runs")
    job_id = _running(store, run)
    store.finish(job_id, "done", "Paid", leg=0, run_seal=None)  # ended by this version, yet unsealed
    record = RunRecords.read(store, run).of(run)
    assert "without a seal of its run folder" in record.altered and not record.unsealed
    with pytest.raises(DistilError, match="without a seal of its run folder"):
        vouched_done(run, store)
    with pytest.raises(AuditError, match="without a seal of its run folder"):
        criteria_from_run(run, store)

    older = _folder(tmp_path / "runs", "20261001-090000-pay-bill-0005")  # ended before seals existed
    store.finish(_running(store, older), "done", "Paid", leg=0, run_seal=None, run_seal_format=0)
    record = RunRecords.read(store, older).of(older)
    assert (record.altered, record.unsealed) == ("", True)
    vouched_done(older, store)  # its task checks out: read as an older run, said so
    assert criteria_from_run(older, store)[1].unsealed


def test_a_folder_past_the_file_cap_is_sealed_too_many_and_vouched_for_by_none(
    store: Jobs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runseal, "MAX_FILES", 3)  # a run leaves a handful; the cap itself is 2000
    small = _folder(tmp_path / "runs", "20261206-110000-pay-bill-0005")  # trace and report: under it
    store.finish(_running(store, small), "done", "ok", leg=0)
    assert RunRecords.read(store, small).of(small).altered == ""

    run = _folder(tmp_path / "runs")
    (run / "downloads").mkdir()
    for i in range(3):  # sorted before report.md and trace.jsonl: they were the ones left unsealed
        (run / "downloads" / f"{i:05d}.txt").write_text("x")
    job_id = _running(store, run)
    store.finish(job_id, "done", "ok", leg=0)
    assert "held more than 3 files when it was sealed" in RunRecords.read(store, run).of(run).altered
    sealed = store.get(job_id).run_seal
    assert sealed is not None and sealed.state == "too_many" and not sealed.files
    with pytest.raises(AuditError, match="more than 3 files"):
        criteria_from_run(run, store)
    with pytest.raises(DistilError, match="more than 3 files"):
        vouched_done(run, store)

    for i in range(3):  # files added past the cap to a folder sealed file by file: told
        (small / f"extra{i}.txt").write_text("x")
    assert "more than 3 files are in the run folder now, 2 when it was sealed" in (
        RunRecords.read(store, small).of(small).altered
    )
