"""`taskcrew run` on the job machinery: the foreground run is recorded as a job, checkpointed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer
from fixtures_foreground import BOB, HOOLI, Foreground, Person, after_a_beat, wait_for
from test_cli_run import _file_verifier, _worker, run_file_question
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import os_user
from taskcrew.cli import app
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import Stopped
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import ApprovalRequest


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


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("answered", ["once the heartbeat saw it", "at once"])
def test_a_foreground_job_cancelled_by_a_colleague_sends_nothing_more(
    isolated_home: Path, tmp_path: Path, erp: ErpServer, answered: str
) -> None:
    """Before, `taskcrew run` wired no last check and its heartbeat ignored the row it read: a job
    cancelled in the console kept sending approved submissions until its next checkpoint. Now the
    beat halts the run's policy, and the intent log's last check refuses the send.

    `taskcrew run` pays the Hooli bill for real (``run_in_foreground``, its workplace: Chromium, the
    ERP over HTTP, the job store and signed audit log); the models are scripted. While the person at
    the terminal is asked to approve the payment, bob cancels the job in the console; she then says
    yes: once the run's heartbeat has halted it (its policy says why), or at once, right after a beat
    (the next is two seconds away: the last check before the send is what refuses it)."""
    seen: dict[str, Any] = {}

    def at_prompt(request: ApprovalRequest, asked: int) -> None:
        if asked > 1:
            return
        jobs = Jobs.open()
        [job] = jobs.list()
        if answered == "at once":
            after_a_beat(jobs, job.id)
        Authority(jobs).act_on_job(job.id, "cancel", BOB)  # bob, in the console
        jobs.close()
        if answered != "at once":
            try:
                seen["halted"] = wait_for("the heartbeat to halt the run", lambda: place.policy.halted)
            except AssertionError as exc:
                seen["halted"] = exc

    models = scripted_models(HOOLI)
    person = Person(at_prompt)
    with Foreground(erp.url, tmp_path, person) as place:
        try:
            ended = place.taskcrew_run(HOOLI.task, models("solver"), models("auditor")).outcome
        except Stopped as exc:  # its next checkpoint found the job cancelled: the run stops there
            ended = f"stopped: {exc}"
    assert person.asked and person.asked[0].url.endswith("/bills/BILL-0005/pay"), ended  # she said yes
    assert [p for p in erp.state().payments if p.bill_id == "BILL-0005"] == []  # nothing was paid
    jobs = Jobs.open()
    [job] = jobs.list()
    intents = jobs.intents(job.id)
    jobs.close()
    assert job.status == "cancelled" and job.cancelled_by == "bob", job
    pays = [d for d in place.policy.decisions if d.url.endswith("/pay") and d.outcome == "blocked"]
    if answered == "at once" and intents:  # the intent log's last check refused it as it was leaving
        first = intents[0]
        assert (first.status, first.seen) == ("not_applied", "not_sent"), first
        assert "cancelled by bob" in (first.result or ""), first.result
    else:  # the beat halted the run's policy: the approved payment never left its browser ("at once":
        # only when the machine stalled for a beat's length between her yes and the send)
        if answered != "at once":
            assert "cancelled by bob" in str(seen["halted"]), seen
        assert intents == [], intents
        assert pays and "cancelled by bob" in pays[0].reason and "nothing was sent" in pays[0].reason, pays


def test_a_foreground_job_a_worker_takes_on_keeps_its_signed_submission(isolated_home: Path) -> None:
    """`jobs retry` of an interrupted `taskcrew run` hands it to a worker, which clears its
    ``foreground`` flag as it claims it: where it runs is not what was submitted, so the signed
    submission (and with it the job's approvals and --auto-approve) must still check out."""
    from taskcrew.approvals.authority import Authority
    from taskcrew.jobs.models import JobOptions

    jobs = Jobs.open()
    job = jobs.submit("Pay INV-1", submitted_by="ana", options=JobOptions(foreground=True), enqueue=False)
    authority = Authority(jobs)
    assert authority.submission_ok(jobs.get(job.id))
    claimed = jobs.mark(
        job.id, "running", only_if=("queued",), options=job.options.model_copy(update={"foreground": False})
    )
    assert claimed is not None and not jobs.get(job.id).options.foreground
    assert authority.submission_ok(jobs.get(job.id))
    moved = jobs.get(job.id).model_copy(update={"options": JobOptions(foreground=True, auto_approve=True)})
    assert not authority.submission_ok(moved)  # what was submitted still may not change
