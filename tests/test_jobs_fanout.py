"""A batch task planned once into items, one child job per item (the planner is a scripted model;
the store, the sandbox inbox and the DBOS enqueue are real)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.cli import app
from taskcrew.config import WorkplaceSettings
from taskcrew.crew.scripted import ScriptedCall, ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.jobs import Job, JobOptions, Jobs
from taskcrew.jobs.batch import submit_each
from taskcrew.jobs.fanout import BatchPlanError, describe_sources, parse_plan
from taskcrew.jobs.runner import LegRunner
from taskcrew.jobs.scripted import scripted_for
from taskcrew.tools.human import AutoApproveHuman

SANDBOX = Path(__file__).resolve().parents[1] / "taskcrew" / "sandbox"
BATCH = "Enter every invoice in the inbox that is not yet in the ERP."
OPTIONS = JobOptions(worker_model="scripted/planner", verifier_model="scripted/auditor", batch=True)
TEMPLATE = "Enter the invoice in the inbox e-mail {item} into the ERP, unless it is already there."


@pytest.fixture
def jobs(tmp_path: Path) -> Any:
    store = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield store
    store.close()


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A real workplace: the demo ERP over HTTP, the demo sandbox, knowledge in a temp folder."""
    tmp = tmp_path_factory.mktemp("place")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        sandbox=SANDBOX,
        runs_dir=tmp / "runs",
        erp_db=tmp / "erp.sqlite3",
        knowledge_dir=tmp / "knowledge",
    )
    with Workplace(settings, AutoApproveHuman()) as workplace:
        yield workplace


def _runner(jobs: Jobs, place: Workplace, llm: ScriptedLLM) -> LegRunner:
    return LegRunner(jobs, place, "w1", scripted=lambda job: lambda name: llm)


def _planner(record: ScriptedCall) -> str:
    """Picks the invoices from the listing it is shown, as a model would."""
    listing = record.messages[-1]["content"]
    assert BATCH in listing
    names = [line.split(" — ")[0] for line in listing.splitlines() if line.endswith(".eml") or " — " in line]
    invoices = [n for n in names if "Invoice" in n or "invoice" in n]
    return json.dumps({"template": TEMPLATE, "items": [*invoices, invoices[0]]})  # a repeat is dropped


def test_the_inbox_is_described_by_sender_and_subject() -> None:
    lines = describe_sources(SANDBOX)
    mail = next(line for line in lines if line.startswith("inbox/Invoice from Northwind Traders.eml"))
    assert "from " in mail and "subject" in mail
    assert not any(line.endswith((".py", ".yaml")) or "__" in line for line in lines)


def test_a_batch_job_is_planned_once_and_fans_out_one_job_per_item(jobs: Jobs, place: Workplace) -> None:
    llm = ScriptedLLM([_planner])
    batch = jobs.submit(BATCH, submitted_by="ana", options=OPTIONS)
    assert _runner(jobs, place, llm).run_leg(batch.id, 0) == "waiting"  # for its children
    llm.assert_complete()  # exactly one planner call
    children = jobs.list(parent_id=batch.id)
    items = sorted(c.item or "" for c in children)
    assert len(items) == len(set(items)) >= 3 and all("nvoice" in i for i in items)
    for child in children:
        assert child.status == "queued" and child.id.startswith(batch.id)
        assert child.task == TEMPLATE.replace("{item}", child.item or "")
        assert not child.options.batch and child.options.worker_model == "scripted/planner"
    waiting = jobs.get(batch.id)
    assert all(c.id in waiting.answer for c in children)
    assert jobs.checkpoint(batch.id) is None
    for child in children:  # the batch ends once its last child has (test_adversarial_batches.py)
        jobs.mark(child.id, "running", only_if=("queued",), worker="w2", beat=True)
        assert jobs.get(batch.id).status == "waiting"
        jobs.finish(child.id, "done", "entered")
    done = jobs.get(batch.id)
    assert (done.status, done.outcome) == ("finished", "done")


def test_a_leg_killed_after_planning_fans_out_the_saved_plan_without_asking_again(
    jobs: Jobs, place: Workplace
) -> None:
    batch = jobs.submit(BATCH, submitted_by="ana", options=OPTIONS)
    plan = {"template": TEMPLATE, "items": ["Payment advice.eml", "Invoice from Northwind Traders.eml"]}
    jobs.save_checkpoint(batch.id, {"batch_plan": plan})  # what the killed leg had saved
    # ... and the first child it had submitted before it died (as the leg submits them: the batch's
    # options; another submission under that id would be an error, not this child)
    child = OPTIONS.model_copy(update={"batch": False})
    submit_each(jobs, TEMPLATE, plan["items"][:1], submitted_by="ana", batch_id=batch.id, options=child)
    llm = ScriptedLLM([])  # any model call would fail the job
    assert _runner(jobs, place, llm).run_leg(batch.id, 0) == "waiting", jobs.get(batch.id).reason
    assert llm.calls == []
    children = jobs.list(parent_id=batch.id)
    assert sorted(c.item or "" for c in children) == sorted(plan["items"])  # nothing twice


def test_a_plan_that_is_not_usable_fails_the_batch_with_a_clear_reason(jobs: Jobs, place: Workplace) -> None:
    batch = jobs.submit(BATCH, submitted_by="ana", options=OPTIONS)
    llm = ScriptedLLM(['{"template": "Enter every invoice.", "items": ["a"]}'])
    assert _runner(jobs, place, llm).run_leg(batch.id, 0) == "failed"
    failed = jobs.get(batch.id)
    assert "planning the batch failed" in failed.reason and "{item}" in failed.reason
    assert f"taskcrew jobs retry {batch.id}" in failed.reason
    assert jobs.list(parent_id=batch.id) == []
    with pytest.raises(BatchPlanError, match="no JSON plan"):
        parse_plan("I would rather not.")
    empty = jobs.submit(BATCH + " (again)", submitted_by="ana", options=OPTIONS)
    llm = ScriptedLLM([json.dumps({"template": TEMPLATE, "items": []})])
    assert _runner(jobs, place, llm).run_leg(empty.id, 0) == "finished"
    assert jobs.get(empty.id).outcome == "nothing_to_do"


def test_cli_submit_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_MODEL", "scripted/solver")  # the operator's models (submit checks them)
    monkeypatch.setenv("TASKCREW_VERIFIER_MODEL", "scripted/auditor")
    runner = CliRunner()
    out = runner.invoke(app, ["submit", BATCH, "--batch"])
    assert out.exit_code == 0, out.output
    jobs = Jobs.open(url)
    assert jobs.get(out.output.strip()).options.batch
    jobs.close()
    both = runner.invoke(app, ["submit", "Enter {item}", "--batch", "--for-each", "Initech"])
    assert both.exit_code == 2 and "either --batch or --for-each" in both.output


def test_a_job_whose_run_cannot_be_set_up_fails_with_the_reason(jobs: Jobs, place: Workplace) -> None:
    """Set-up errors (here a scripted model that knows no such task) end the job `failed` with the
    reason and how to retry; they do not escape into the worker's workflow."""
    options = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")
    job = jobs.submit("Enter the invoice", submitted_by="ana", options=options)  # no eval case
    assert LegRunner(jobs, place, "w1", scripted=scripted_for).run_leg(job.id, 0) == "failed"
    failed = jobs.get(job.id)
    assert failed.status == "failed" and "LookupError: no scripted models" in (failed.reason or "")
    assert f"taskcrew jobs retry {job.id}" in (failed.reason or "")


def test_a_batch_job_edited_in_the_database_is_not_fanned_out_into_signed_children(
    jobs: Jobs, place: Workplace, tmp_path: Path
) -> None:
    """The worker signs each child it submits: a batch whose row was edited (here --auto-approve
    written into it) would launder the edit into children that check out. Refused: first because the
    record is not the one taskcrew wrote, and, were the record re-signed, because the submission is not."""
    llm = ScriptedLLM([_planner])
    for resigned in (False, True):
        batch = jobs.submit(BATCH, submitted_by="ana", options=OPTIONS)
        db = sqlite3.connect(tmp_path / "jobs.sqlite3")
        (doc,) = db.execute("SELECT doc FROM taskcrew_jobs WHERE id = ?", (batch.id,)).fetchone()
        data = json.loads(doc)
        data["options"]["auto_approve"] = True
        if resigned:  # a record signed over the edit (a process with the key): the submission still fails
            data = json.loads(jobs._job_text(Job.model_validate(data), 0))
        db.execute("UPDATE taskcrew_jobs SET doc = ? WHERE id = ?", (json.dumps(data), batch.id))
        db.commit()
        assert _runner(jobs, place, llm).run_leg(batch.id, 0) == "failed"
        assert jobs.list(parent_id=batch.id) == [] and llm.calls == []
        failed = jobs.get(batch.id)
        if resigned:
            assert "not signed by the approvals authority" in (failed.reason or "")
        else:
            assert failed.record_trust == "forged" and "cannot vouch" in failed.reason
    actions = [e.action for e in Authority(jobs).audit.entries()]
    assert "forged_job_refused" in actions and "forged_submission_refused" in actions
