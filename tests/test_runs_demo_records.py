"""`runs list/show` of the runs `taskcrew demo` leaves in the runs folder: the demo keeps its job
record in a temporary job store of its own, so nothing here vouches for their outcome. They say so
plainly, as a demo run (its folder's demo.json, which is not signed: it changes the words, never
what is vouched for); a run with no job database at all says there is none yet, not an error. Real
run folders (the scripted solver and auditor), a real SQLite job store, the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.demo import mark_demo_run
from taskcrew.eval.runs import RunRecords, read_run
from taskcrew.jobs import JobOptions, Jobs

runner = CliRunner()
DEMO_NOTE = (
    "A demo run: its job record was kept in the demo's own temporary job store, so nothing here vouches "
    "for its outcome; the run folder's own files say done and verified."
)


def _runs(home: Path, finished_run: Path) -> tuple[Path, Path]:
    """The demo's run (marked as `taskcrew demo` marks it) and a run made here, in the runs folder."""
    runs = home / "runs"
    runs.mkdir(exist_ok=True)
    demo = Path(shutil.copytree(finished_run, runs / finished_run.name))
    mark_demo_run(demo)
    here = Path(shutil.copytree(finished_run, runs / "20260101-000000-made-here"))
    return demo, here


def test_demo_runs_and_runs_without_a_job_database_say_so_plainly(
    isolated_home: Path, finished_run: Path
) -> None:
    demo, here = _runs(isolated_home, finished_run)
    listed = runner.invoke(app, ["runs", "list"])
    assert listed.exit_code == 0, listed.output
    text = " ".join(listed.output.split())
    assert DEMO_NOTE in text
    assert "cannot be read" not in text
    assert (
        f"Nothing vouches for this outcome: there is no job database yet at {isolated_home / 'jobs.sqlite3'} "
        "(no job has been submitted here); the run folder's own files say done and verified" in text
    )
    shown = runner.invoke(app, ["runs", "show", str(demo)])
    assert shown.exit_code == 0 and DEMO_NOTE in " ".join(shown.output.split())
    # still nothing vouches for it: the verifier's "verified" is not shown as the signed word
    for run in (read_run(demo), read_run(here)):
        assert run.outcome == "done" and run.verified is None and run.note


def test_a_demo_mark_never_makes_a_run_look_more_trustworthy(isolated_home: Path, finished_run: Path) -> None:
    demo, _ = _runs(isolated_home, finished_run)
    jobs = Jobs.open()
    try:  # a job of this job store ran in that folder and its signed record says error
        job = jobs.submit(
            "What is the sum of squares 1..20?", submitted_by="ana", options=JobOptions(), enqueue=False
        )
        jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
        jobs.finish(job.id, "error", "the verifier could not confirm it", leg=0, answer="", run_dir=str(demo))
        run = read_run(demo, RunRecords.read(jobs))
    finally:
        jobs.close()
    assert (run.outcome, run.verified) == ("error", None)
    assert f"the signed record of job {job.id} says error" in run.note and "demo" not in run.note
