"""Whole-run attacks on the approval authority: the headline job run by a real worker leg (LegRunner,
scripted models, real Chromium, the demo ERP over HTTP, a real SQLite job store), attacked as a
second employee, a user who can write the job database, and a submitter who claims another name.
Counted by bench/security_bench.py with the other adversarial cases."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import DEFAULT_RULES
from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX, WorkplaceSettings
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import LegRunner
from taskcrew.jobs.scripted import scripted_for
from taskcrew.mock_erp import fetch_state
from taskcrew.tools.human import AutoApproveHuman

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]
SCRIPTED = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")
runner = CliRunner()


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory, eval_knowledge_seed: Path) -> Iterator[Workplace]:
    tmp = tmp_path_factory.mktemp("approvals-place")
    shutil.copytree(eval_knowledge_seed, tmp / "knowledge")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp / "runs",
        erp_db=tmp / "erp.sqlite3",
        knowledge_dir=tmp / "knowledge",
        chaos=False,
    )
    with Workplace(settings, AutoApproveHuman()) as workplace:
        yield workplace


@pytest.fixture
def world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path, place: Workplace
) -> Iterator[dict[str, Any]]:
    """ana, bob and carol can log in (two-person rule on); the company's rules say USD above 1000
    needs two people, so the headline's 1284.50 bill does."""
    rules = DEFAULT_RULES.read_text(encoding="utf-8").replace('USD: "5000.00"', 'USD: "1000.00"')
    (tmp_path / "rules.yaml").write_text(rules, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    for name, value in {
        "TASKCREW_RISK_RULES": str(tmp_path / "rules.yaml"),
        "TASKCREW_JOBS_DB": url,
        "TASKCREW_APPROVALS_DIR": str(tmp_path / "approvals"),
        "TASKCREW_CONSOLE_USERS": str(console_users),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    place.erp_server.reset()
    headline = next(c for c in load_cases() if c.id == "northwind-headline")
    yield {"jobs": jobs, "authority": Authority(jobs), "task": headline.task, "url": url, "place": place}
    jobs.close()


def _leg(world: dict[str, Any], job_id: str) -> str:
    jobs = world["jobs"]
    outcome = LegRunner(jobs, world["place"], "w1", scripted=scripted_for).run_leg(job_id, jobs.leg(job_id))
    if outcome == "failed":  # the leg could not run at all (no ERP): the attack was not tried
        raise RuntimeError(f"the worker leg failed: {jobs.get(job_id).reason}")
    return outcome


def _bills(world: dict[str, Any]) -> list[Any]:
    return [b for b in fetch_state(world["place"].erp_url).bills if b.invoice_number == "INV-2057"]


def _edit(world: dict[str, Any], table: str, row_id: str, change: Any) -> None:
    db = sqlite3.connect(world["url"].removeprefix("sqlite:///"))
    (doc,) = db.execute(f"SELECT doc FROM {table} WHERE id = ?", (row_id,)).fetchone()
    data = json.loads(doc)
    change(data)
    db.execute(
        f"UPDATE {table} SET doc = ?, status = ? WHERE id = ?", (json.dumps(data), data["status"], row_id)
    )
    db.commit()
    db.close()


def _token(name: str) -> str:
    out = runner.invoke(
        app, ["approvals", "login", "--name", name, "--password", f"{name}-secret-1", "--print-token"]
    )
    assert out.exit_code == 0, out.output
    return out.output.strip()


def test_a_second_employee_alone_and_the_submitter_cannot_get_the_bill_sent(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = world["jobs"]
    job = jobs.submit(world["task"], submitted_by="ana", submitted_proof="token", options=SCRIPTED)
    assert _leg(world, job.id) == "waiting"
    [approval] = jobs.approvals("pending", job_id=job.id)
    assert approval.request is not None and "above 1000.00 USD" in " ".join(approval.request.flags)
    # bob from a shell, as his OS user: not enough for a two-person item
    assert runner.invoke(app, ["approvals", "approve", approval.id]).exit_code == 1
    # ana, the submitter, with her own token: never
    monkeypatch.setenv("TASKCREW_TOKEN", _token("ana"))
    assert runner.invoke(app, ["approvals", "approve", approval.id]).exit_code == 1
    # bob, authenticated: a first approval only; the job stays parked, nothing is sent
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    assert runner.invoke(app, ["approvals", "approve", approval.id]).exit_code == 0
    assert jobs.get(job.id).status == "waiting" and _bills(world) == []
    # a second, different person completes it: the worker verifies the signature and sends
    done = world["authority"].decide(approval.id, "approve", Identity(name="carol", proof="console"))
    assert done.status == "decided"
    assert _leg(world, job.id) == "finished"
    assert jobs.get(job.id).outcome == "done" and len(_bills(world)) == 1
    actions = [e.action for e in world["authority"].audit.entries()]
    assert {"request", "approve_refused", "approve_first", "approve", "send"} <= set(actions)
    assert world["authority"].audit.verify() == []


def test_approvals_and_auto_approve_written_into_the_job_database_send_nothing(world: dict[str, Any]) -> None:
    jobs = world["jobs"]
    job = jobs.submit(world["task"], submitted_by="ana", submitted_proof="token", options=SCRIPTED)
    assert _leg(world, job.id) == "waiting"
    [approval] = jobs.approvals("pending", job_id=job.id)
    # someone with write access to the database marks it approved by two people
    _edit(
        world,
        "taskcrew_approvals",
        approval.id,
        lambda d: d.update(status="approved", decided_by="bob+carol", decision={"outcome": "approve"}),
    )
    jobs.resume(job.id)
    assert _leg(world, job.id) == "waiting"  # asked again, not sent
    assert _bills(world) == []
    # ... and switches on auto_approve in the job's stored options: the record is not the one
    # taskcrew wrote, so no worker runs it at all
    _edit(
        world,
        "taskcrew_jobs",
        job.id,
        lambda d: d["options"].update(auto_approve=True) or d.update(status="queued"),
    )
    leg = LegRunner(jobs, world["place"], "w1", scripted=scripted_for)
    assert leg.run_leg(job.id, jobs.leg(job.id)) == "failed"
    assert _bills(world) == [] and jobs.get(job.id).record_trust == "forged"
    actions = [e.action for e in world["authority"].audit.entries()]
    assert "forged_decision_refused" in actions and "forged_job_refused" in actions


def test_a_submitter_who_claims_another_name_cannot_approve_her_own_bill(world: dict[str, Any]) -> None:
    from taskcrew.jobs.human import JobHuman, Parked
    from taskcrew.tools.human import ApprovalRequest, FieldValue

    claimed = runner.invoke(app, ["submit", world["task"], "--by", "zed"])
    assert claimed.exit_code == 2
    jobs, authority = world["jobs"], world["authority"]
    job = jobs.submit(world["task"], submitted_by="ana", submitted_proof="token", options=SCRIPTED)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{world['place'].erp_url}/bills/new",
        fields=[
            FieldValue(name="invoice_number", value="INV-2057"),
            FieldValue(name="amount", value="1284.50"),
        ],
    )
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    # she rewrites the submitter in the database, then approves under her own name
    _edit(world, "taskcrew_jobs", job.id, lambda d: d.update(submitted_by="zed"))
    ana = Identity(name="ana", proof="console")
    refused = authority.decide(parked.value.approval_id, "approve", ana)
    assert refused.status == "refused" and "not signed" in refused.message
    assert jobs.approval(parked.value.approval_id).first_approvals == []


def test_a_bill_raised_in_the_erp_after_its_payment_was_approved_is_not_paid_on_the_old_approval(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paying a bill sends only a date: bob approved paying Hooli's 499.00 bill, judged by the amount
    the worker read from the bill's page. Before the job came back to it, a second employee raised
    the bill to 9,500.00 in the ERP. The request's key is the same; the approval is not."""
    jobs, place = world["jobs"], world["place"]
    task = next(c for c in load_cases() if c.id == "mark-hooli-paid").task
    job = jobs.submit(task, submitted_by="ana", submitted_proof="token", options=SCRIPTED)
    assert _leg(world, job.id) == "waiting"
    [asked] = jobs.approvals("pending", job_id=job.id)
    assert asked.request is not None and asked.request.looked_up["amount"] == "499.00"
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    assert runner.invoke(app, ["approvals", "approve", asked.id]).exit_code == 0  # alone: under 1000
    with sqlite3.connect(place.erp_server.db_path) as erp:
        erp.execute("UPDATE bills SET amount_cents = 950000 WHERE invoice_number = 'HCS-2026-09'")

    def hooli() -> Any:
        return next(b for b in fetch_state(place.erp_url).bills if b.invoice_number == "HCS-2026-09")

    assert _leg(world, job.id) == "waiting" and hooli().status == "unpaid"  # asked again, not paid
    [again] = jobs.approvals("pending", job_id=job.id)
    assert again.key == asked.key and again.request is not None
    assert (again.request.asked_again or "").startswith("bob approved it when the amount on")
    assert "above 1000.00 USD" in " ".join(again.request.flags)  # judged by the new amount
    assert "decision_outdated" in [e.action for e in world["authority"].audit.entries()]
    # two people approve the new amount: then it is paid
    assert runner.invoke(app, ["approvals", "approve", again.id]).exit_code == 0
    done = world["authority"].decide(again.id, "approve", Identity(name="carol", proof="console"))
    assert done.status == "decided"
    assert _leg(world, job.id) == "finished" and hooli().status == "paid"
    assert world["authority"].audit.verify() == []
