"""`taskcrew run` on the job machinery: the foreground run is recorded as a job, checkpointed."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from test_cli_run import _file_verifier, _worker, run_file_question
from typer.testing import CliRunner

from taskcrew.approvals.identity import os_user
from taskcrew.cli import app
from taskcrew.jobs import Jobs


def test_a_foreground_run_is_a_finished_job_with_who_ran_it(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKCREW_USER", "ana")  # a typed name is not an identity: ignored
    _, worker_model = run_file_question("--read-only")
    [job] = Jobs.open().list()
    assert (job.status, job.outcome, job.submitted_by) == ("finished", "done", os_user())
    assert job.options.worker_model == worker_model and job.run_dir
    assert job.options.read_only  # recorded, so a retry on a worker is read-only too
    assert Path(job.run_dir, "report.md").is_file()
    kinds = [e.kind for e in Jobs.open().events(job.id)]
    assert kinds == ["submitted", "running", "finished"]
    assert Jobs.open().checkpoint(job.id) is None  # cleared once it ended


def test_a_bad_read_back_rule_file_stops_the_run_before_anything_is_sent(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = isolated_home / "readback.yaml"
    rules.write_text("rules:\n  - target: '{erp}/bills/new'\n    read_back: '{erp}/bills'\n")
    monkeypatch.setenv("TASKCREW_READBACK", str(rules))
    with FakeOpenAIServer(_worker()) as w, FakeOpenAIServer(_file_verifier()) as v:
        models = ["--model", f"worker@{w.base_url}", "--verifier-model", f"verifier@{v.base_url}"]
        places = ["--erp-url", "http://127.0.0.1:0", "--intranet-url", ""]
        result = CliRunner().invoke(
            app, ["run", "What did Contoso send us about CO-55120?", *models, *places]
        )
        assert w.requests == []  # no model was called
    assert result.exit_code != 0
    assert str(rules) in result.output and "say what on" in result.output, result.output
    assert Jobs.open().list() == []  # nothing recorded
