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


def test_a_foreground_job_cancelled_by_a_colleague_sends_nothing_more(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `taskcrew run` wired no last check and its heartbeat ignored the row it read: a job
    cancelled in the console kept sending approved submissions until its next checkpoint. Now the
    beat halts the run's policy, and the intent log's last check refuses the send. The real
    ``run_in_foreground``, job store and authority; the crew is a stand-in that sends as the gate would."""
    import time
    from types import SimpleNamespace

    import taskcrew.crew.run as crew_run
    from taskcrew.approvals.authority import Authority
    from taskcrew.approvals.identity import Identity
    from taskcrew.config import DEFAULT_SANDBOX
    from taskcrew.jobs import JobOptions
    from taskcrew.jobs.foreground import run_in_foreground
    from taskcrew.tools.human import AutoApproveHuman
    from taskcrew.tools.policy import Policy, PolicyConfig

    erp = "http://127.0.0.1:8800"
    policy = Policy(PolicyConfig.for_url(erp), AutoApproveHuman())
    res = SimpleNamespace(browser=SimpleNamespace(policy=policy), checkpoints=None, on_run_dir=None)
    place = SimpleNamespace(
        erp_url=erp,
        intranet_url="",
        settings=SimpleNamespace(sandbox=DEFAULT_SANDBOX),
        run_settings=lambda task, **kw: None,
        resources=lambda **kw: res,
    )
    seen: dict[str, object] = {}

    def crew(settings: object, r: SimpleNamespace) -> SimpleNamespace:
        jobs = Jobs.open()
        [job] = jobs.list()
        Authority(jobs).act_on_job(job.id, "cancel", Identity(name="bob", proof="console"))
        deadline = time.monotonic() + 30  # the beat (every 2 s) sees it
        while r.browser.policy.halted is None and time.monotonic() < deadline:
            time.sleep(0.1)
        seen["halted"] = r.browser.policy.halted
        fields = [("csrf_token", "t"), ("paid_on", "2026-10-02")]
        seen["send"] = r.browser.policy.intents.before_send(
            "POST", f"{erp}/bills/BILL-0004/pay", fields, lambda p: None
        )
        seen["intents"] = [i.status for i in jobs.intents(job.id)]
        return SimpleNamespace(run_dir=str(isolated_home), outcome="done", reason="", answer="")

    monkeypatch.setattr(crew_run, "run_task", crew)
    run_in_foreground(
        place,
        "Mark BILL-0004 paid on 2026-10-02",
        submitted_by=Identity(name="ana", proof="os_user"),
        options=JobOptions(),
    )
    assert "cancelled by bob" in str(seen["halted"]), seen
    assert isinstance(seen["send"], str) and "was not sent" in seen["send"], seen
    assert seen["intents"] == ["not_applied"], seen
    [job] = Jobs.open().list()
    assert job.status == "cancelled"


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
