"""`taskcrew run` on the job machinery: the foreground run is recorded as a job, checkpointed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_run import run_file_question

from taskcrew.jobs import Jobs


def test_a_foreground_run_is_a_finished_job_with_who_ran_it(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKCREW_USER", "ana")
    _, worker_model = run_file_question("--read-only")
    [job] = Jobs.open().list()
    assert (job.status, job.outcome, job.submitted_by) == ("finished", "done", "ana")
    assert job.options.worker_model == worker_model and job.run_dir
    assert job.options.read_only  # recorded, so a retry on a worker is read-only too
    assert Path(job.run_dir, "report.md").is_file()
    kinds = [e.kind for e in Jobs.open().events(job.id)]
    assert kinds == ["submitted", "running", "finished"]
    assert Jobs.open().checkpoint(job.id) is None  # cleared once it ended
