"""Runs and jobs that are not moving say so, with what to do: parked, orphaned (a worker's or a
foreground run's), interrupted — in `jobs list`, `runs list` and the console's lists; an orphaned
foreground run is retried only when a person says so. Real job store (SQLite), real CLI, real
console over HTTP; run folders are real files."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.models import utcnow
from taskcrew.tools.human import ApprovalRequest, FieldValue

runner = CliRunner()


def _run_folder(runs: Path, name: str, task: str) -> Path:
    """A run folder as a run leaves it while it has not ended: its trace starts, nothing ends it."""
    folder = runs / name
    folder.mkdir(parents=True)
    started = {"at": utcnow().isoformat(), "kind": "run_started", "task": task, "worker_model": "m1"}
    (folder / "trace.jsonl").write_text(json.dumps(started) + "\n", encoding="utf-8")
    return folder


def test_parked_orphaned_and_interrupted_runs_and_jobs_say_so(isolated_home: Path) -> None:
    runs = isolated_home / "runs"
    jobs = Jobs.open()
    long_ago = utcnow() - timedelta(minutes=10)
    options = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")

    parked = jobs.submit("Enter the Northwind invoice", submitted_by="ana", options=options, enqueue=False)
    jobs.mark(parked.id, "running", only_if=("queued",), worker="w1", started_at=utcnow())
    jobs.note_run_dir(parked.id, str(_run_folder(runs, "20260101-000001-parked", parked.task)), leg=0)
    request = ApprovalRequest(kind="form_submission", method="POST", url="http://erp/bills", fields=[])
    request.fields.append(FieldValue(name="amount", value="1.00"))
    approval = jobs.park(parked.id, kind="approval", key="k1", request=request)
    jobs.mark(parked.id, "waiting", only_if=("running",), reason=f"waiting for approval {approval.id}")

    gone = jobs.submit("List the unpaid bills", submitted_by="ana", options=options, enqueue=False)
    jobs.mark(gone.id, "running", only_if=("queued",), worker="w-dead", started_at=long_ago)
    jobs.note_run_dir(gone.id, str(_run_folder(runs, "20260101-000002-gone", gone.task)), leg=0)

    fg_options = options.model_copy(update={"foreground": True})
    fg = jobs.submit("Pay the Acme bill", submitted_by="bob", options=fg_options, enqueue=False)
    jobs.mark(fg.id, "running", only_if=("queued",), worker="run-laptop-42", started_at=long_ago)

    _run_folder(runs, "20260101-000003-killed", "A run killed long ago")

    listed = runner.invoke(app, ["jobs", "list"])
    assert listed.exit_code == 0, listed.output
    text = " ".join(listed.output.split())
    assert f"parked: waiting for approval {approval.id}; `taskcrew approvals list`" in text
    assert "orphaned: worker w-dead went silent 10 min ago; any running worker takes it over" in text
    assert (
        f"orphaned: the `taskcrew run` (run-laptop-42) stopped 10 min ago; `taskcrew jobs retry {fg.id}`"
        in text
    )

    shown = " ".join(runner.invoke(app, ["runs", "list"]).output.split())
    assert f"parked: job {parked.id} is waiting for approval {approval.id}" in shown
    assert "orphaned: worker w-dead went silent" in shown and "orphaned: orphaned" not in shown
    assert "interrupted: the run stopped before it ended" in shown

    assert json.loads(runner.invoke(app, ["jobs", "list", "--json", "--status", "cancelled"]).output) == []
    retried = runner.invoke(app, ["jobs", "retry", fg.id])  # the person says so: an orphan may be retried
    assert retried.exit_code == 0, retried.output
    assert jobs.get(fg.id).status == "queued"
    busy = runner.invoke(app, ["jobs", "retry", parked.id])  # a parked job is not an orphan
    assert busy.exit_code == 2 and "orphaned (holder gone)" in busy.output
    jobs.close()
