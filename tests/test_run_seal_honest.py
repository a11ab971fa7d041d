"""Honest work the run-folder seal and the superseded rule must not flag (a red team's false alarms).

1. `taskcrew demo --console`: the demo labelled report.md and routine.txt after the job read
   finished — after ``Jobs.finish`` sealed the folder — so every demo run read "changed after the
   run ended", its report withheld. Now the run writes the labels itself, by the folder's demo mark
   (``demo.demo_report``, ``routines.hooks``), and the demo writes nothing to a run folder once its
   job ended.
2. A cancel that lost the race to a finish (it read the job running, the finish landed, its entry
   was written ahead and its database change refused: ``RecordedOnly``) made the honest finished row
   read ``superseded``. A cancel of the leg a row finished on, written after that finish, ended
   nothing (``SignedLog.superseding``); it still holds back what it holds back (``leg_over``).
3. A runs folder moved to another disk with a symbolic link at its old path read "the seal in the
   signed record is of another folder": ``runseal.changes`` compared absolute paths. It compares the
   files (and the folder's name); another run's folder put in its place is still told.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from fixtures_foreground import BOB
from test_demo import DemoUser, Output, demo_user, stop  # noqa: F401  (the fixture)
from test_demo_console import STAYS, TOKEN, demo_at_a_terminal

from taskcrew.approvals.authority import Authority, RecordedOnly
from taskcrew.eval.runs import RunRecords, read_run
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.models import Job

TASK = "Pay BILL-0004 to Initrode"
LABEL = "**Demo (scripted stand-in models, not AI).** This run was made by `taskcrew demo`"
DRAFT = "demo: the draft is in the demo's own routines folder"


@pytest.fixture
def store(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Jobs:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_JOBS_DB", f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    return Jobs.open()


def _run_folder(runs: Path, name: str, task: str = TASK) -> Path:
    run = runs / name
    run.mkdir(parents=True)
    started = {"kind": "run_started", "task": task, "at": "2026-12-06T12:00:00Z"}
    (run / "trace.jsonl").write_text(json.dumps(started) + "\n", encoding="utf-8")
    (run / "report.md").write_text(f"# Done\n\n**Task:** {task}\n", encoding="utf-8")
    return run


def _finished(jobs: Jobs, run: Path | None = None, task: str = TASK) -> Job:
    job = jobs.submit(
        task, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    if run is not None:
        jobs.note_run_dir(job.id, str(run.resolve()), leg=0)
    jobs.finish(
        job.id, "done", "Paid; verified", leg=0, answer="paid", run_dir=str(run.resolve()) if run else None
    )
    return jobs.get(job.id)


# ---- 3. a runs folder moved behind a symbolic link -----------------------------------------------
def test_a_runs_folder_moved_to_another_disk_behind_a_symlink_still_reads_as_sealed(
    store: Jobs, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    run = _run_folder(runs, "20261206-120000-pay-bill-0004")
    job = _finished(store, run)
    assert job.run_seal is not None and not read_run(run, RunRecords.read(store)).altered
    bigger = tmp_path / "bigdisk" / "runs"
    bigger.parent.mkdir()
    shutil.move(str(runs), str(bigger))
    os.symlink(bigger, runs)
    records = RunRecords.read(store)
    summary = read_run(run, records)
    assert records.of(run).altered == "" and not summary.altered, summary.note
    assert summary.outcome == "done"
    # edited there, it is still told
    (bigger / run.name / "report.md").write_text("# Done — and BILL-0005 paid too\n", encoding="utf-8")
    assert "report.md changed" in RunRecords.read(store).of(run).altered
    store.close()


def test_another_jobs_folder_linked_in_under_the_jobs_name_is_still_told(store: Jobs, tmp_path: Path) -> None:
    """Job A's folder replaced by a symbolic link to job B's (B's files, as B's seal has them): the
    folder read is not the one A's seal is of."""
    runs = tmp_path / "runs"
    mine = _run_folder(runs, "20261206-120000-pay-bill-0004")
    other = _run_folder(runs, "20261206-130000-pay-bill-0004")
    _finished(store, mine)
    _finished(store, other)
    shutil.rmtree(mine)
    os.symlink(other, mine)
    altered = RunRecords.read(store).of(mine).altered
    assert "changed after the run ended" in altered, altered  # as before: by its name (and files)
    store.close()


# ---- 2. a cancel that lost the race to a finish --------------------------------------------------
def test_a_cancel_that_lost_the_race_to_the_finish_leaves_the_finished_job_signed(store: Jobs) -> None:
    """bob presses Cancel as the worker finishes: the cancel read the job running, the worker's finish
    lands (signed), then the cancel's entry is written ahead and the database refuses it."""
    authority = Authority(store)
    job = store.submit(
        TASK, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    store.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    real = authority._given

    def worker_finishes_now(job_id: str):  # type: ignore[no-untyped-def]
        store.finish(job.id, "done", "Paid BILL-0004; verified", leg=0, answer="paid")
        return real(job_id)

    authority._given = worker_finishes_now  # type: ignore[method-assign]
    with pytest.raises(RecordedOnly):
        authority.act_on_job(job.id, "cancel", BOB)
    got = store.get(job.id)
    assert (got.record_trust, got.status, got.outcome, got.answer) == (
        "signed",
        "finished",
        "done",
        "paid",
    ), got.reason
    assert [j.record_trust for j in store.list()] == ["signed"]
    # the cancel still holds back what it holds back: no leg of the job acts until a retry
    assert "cancelled by bob" in (authority.leg_over(job.id, 0) or "")
    # a retry after it supersedes the finished row (set back to it, it reads superseded)
    authority.act_on_job(job.id, "retry", BOB)
    log = store.signed_log()
    entry = log.superseding(job.id, "finished", 0)
    assert entry is not None and entry.action == "retry"
    store.close()


def test_a_cancel_of_a_later_leg_still_supersedes_a_finished_row() -> None:
    """The rule is by leg: a finished row of leg 0 is superseded by a cancel of leg 1 (the job was
    retried and cancelled since), not by a cancel of its own leg written after its finish."""
    from taskcrew.approvals.audit import AuditEntry
    from taskcrew.approvals.authority import SignedLog

    def entry(seq: int, action: str, leg: int) -> AuditEntry:
        return AuditEntry(
            seq=seq,
            at="2026-12-06T12:00:00Z",
            who="bob",
            action=action,
            target="job-1",
            payload={"leg": leg},
            prev="",
        )

    finished, own_cancel = entry(1, "finished", 0), entry(2, "cancel", 0)
    assert SignedLog([finished, own_cancel]).superseding("job-1", "finished", 0) is None
    later = entry(3, "cancel", 1)
    assert SignedLog([finished, own_cancel, later]).superseding("job-1", "finished", 0) == later
    # a failed row's own leg cancelled after it failed: superseded, as before
    assert SignedLog([own_cancel]).superseding("job-1", "failed", 0) == own_cancel


# ---- 1. the demo's labels, written by the run -----------------------------------------------------
def test_the_demo_label_is_written_with_the_report_of_a_marked_folder_only(tmp_path: Path) -> None:
    from taskcrew.demo import REPORT_NOTE, demo_report, mark_demo_run

    marked, plain = tmp_path / "demo-run", tmp_path / "run"
    marked.mkdir()
    plain.mkdir()
    mark_demo_run(marked)
    text = "# Done, and independently verified\n\n**Task:** enter the invoice\n"
    assert demo_report(plain, text) == text
    labelled = demo_report(marked, text)
    assert labelled.splitlines()[:3] == ["# Done, and independently verified", "", REPORT_NOTE]
    assert demo_report(marked, labelled) == labelled  # once


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_demo_console_run_reads_as_its_run_left_it(
    demo_user: DemoUser,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real `taskcrew demo --console --auto-approve` at a terminal (its console stays open after
    the job): its job's record is sealed, the run folder still matches the seal (labels included),
    and every surface reads it as the run left it."""
    with demo_at_a_terminal(demo_user, tmp_path / "runs", "--auto-approve") as (process, output):
        output.wait_for(TOKEN, 120)
        stays = output.wait_for(STAYS, 400)
        [root] = demo_user.tmp.glob("taskcrew-demo-*")  # the demo's job store and key, while it is open
        monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(root / "home" / "approvals"))
        jobs = Jobs.open(f"sqlite:///{root / 'jobs.sqlite3'}", create=False)
        try:
            job = jobs.get(stays["id"])
            records = RunRecords.read(jobs)
        finally:
            jobs.close()
        assert job.run_dir and job.run_seal is not None, job
        folder = Path(job.run_dir)
        altered = records.of(folder).altered
        summary = read_run(folder, records)
        process.send_signal(signal.SIGINT)
        process.wait(120)
    output.finish(30)
    assert stays["outcome"] == "done"
    assert {"report.md", "demo.json", "routine.txt"} <= set(job.run_seal.files)
    assert altered == "" and not summary.altered, summary.note
    assert summary.outcome == "done" and "changed after the run ended" not in summary.note
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert report.splitlines()[2].startswith(LABEL) and report.count(LABEL) == 1, report[:500]
    note = (folder / "routine.txt").read_text(encoding="utf-8")
    assert "proposed" in note and note.count(DRAFT) == 1, note
