"""Every decision is judged by the risk rules in force when it is made (``rules.RulesInForce``, the
one place the authority gets its rules): a running console and a worker's leg read the rules file
again when it changed, as they read the users file; a file that cannot be used now refuses the
decision, saying so, never judged by the rules read before it broke. The console over HTTP, a real
SQLite job store, the demo ERP, and a real worker leg (scripted models, Chromium)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import client_as
from fixtures_eval import scripted_workplace

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import DEFAULT_RULES, RiskRulesError, load_rules
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.jobs import Approval, ApprovalRequest, JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.runner import LegRunner
from taskcrew.jobs.scripted import scripted_for
from taskcrew.mock_erp import fetch_state
from taskcrew.tools.human import FieldValue

ERP_URL = "http://127.0.0.1:8800"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[dict[str, Any]]:
    """ana, bob and carol can log in; USD above 1000.00 needs two people (the rules file below)."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        DEFAULT_RULES.read_text(encoding="utf-8").replace('USD: "5000.00"', 'USD: "1000.00"'),
        encoding="utf-8",
    )
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    for name, value in {
        "TASKCREW_RISK_RULES": str(rules),
        "TASKCREW_JOBS_DB": url,
        "TASKCREW_APPROVALS_DIR": str(tmp_path / "approvals"),
        "TASKCREW_CONSOLE_USERS": str(console_users),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    yield {"jobs": jobs, "rules": rules, "users": console_users}
    jobs.close()


def _edit(rules: Path, old: str, new: str) -> None:
    """The operator edits the rules file in place (the console and workers keep running)."""
    text = rules.read_text(encoding="utf-8")
    assert old in text
    rules.write_text(text.replace(old, new), encoding="utf-8")


def _parked(jobs: Jobs, amount: str, n: int = 1) -> Approval:
    """ana's job parked on entering a bill of ``amount`` USD (no flag below the threshold)."""
    job = jobs.submit(f"Enter invoice {n}", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    fields = {
        "vendor": "Northwind Traders",
        "invoice_number": f"INV-{n}",
        "amount": amount,
        "currency": "USD",
    }
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{ERP_URL}/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return jobs.approval(parked.value.approval_id)


def _csrf(client: Any, page: str) -> str:
    token = re.search(r'name="csrf" value="([^"]+)"', client.get(page).text)
    assert token
    return token.group(1)


def _flash(client: Any, sent: Any) -> str:
    assert sent.status_code == 303, sent.text
    html = client.get(sent.headers["location"]).text
    found = re.search(r'class="flash[^"]*"[^>]*>(.*?)</', html, re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split()) if found else html


def _decide(client: Any, approval_id: str) -> Any:
    return client.post(
        f"/approvals/{approval_id}/decide",
        data={"csrf": _csrf(client, f"/approvals/{approval_id}"), "action": "approve", "text": ""},
        headers={"origin": "http://testserver"},
    )


def _bulk(client: Any, ids: list[str]) -> Any:
    return client.post(
        "/approvals/bulk",
        data={"csrf": _csrf(client, "/approvals"), "ids": ids},
        headers={"origin": "http://testserver"},
    )


def test_a_threshold_lowered_while_the_console_and_a_leg_run_makes_one_approval_a_first_approval(
    env: dict[str, Any], tmp_path: Path
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    bob = client_as("bob", jobs, tmp_path / "c", env["users"], risk_rules=rules)  # the console runs
    leg = Authority(jobs)  # a worker's leg, started before the edit
    asked = _parked(jobs, "499.00")
    assert not leg.needs_two(leg.assess(asked.request))  # one person: under 1000.00 USD
    _edit(rules, 'USD: "1000.00"', 'USD: "100.00"')  # the operator lowers the threshold
    said = _flash(bob, _decide(bob, asked.id))
    stored = jobs.approval(asked.id)
    assert stored.status == "pending" and [c.name for c in stored.first_approvals] == ["bob"], said
    assert "A second, different approver must approve it" in said
    assert leg.needs_two(leg.assess(asked.request))  # the running leg judges by it too
    carol = client_as("carol", jobs, tmp_path / "c2", env["users"], risk_rules=rules)
    assert "approved; the job resumes" in _flash(carol, _decide(carol, asked.id))
    assert jobs.approval(asked.id).decided_by == "bob+carol"


def test_bulk_approval_follows_the_rules_file_while_the_console_runs(
    env: dict[str, Any], tmp_path: Path
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    bob = client_as("bob", jobs, tmp_path / "c", env["users"], risk_rules=rules)
    one, two = _parked(jobs, "120.00", 1), _parked(jobs, "120.00", 2)
    _edit(rules, "bulk_allowed: true", "bulk_allowed: false")  # an incident: each item read on its own
    assert _flash(bob, _bulk(bob, [one.id, two.id])) == "Bulk approval is switched off in the risk rules."
    assert [jobs.approval(a.id).status for a in (one, two)] == ["pending", "pending"]
    assert 'action="/approvals/bulk"' not in bob.get("/approvals").text  # no longer offered
    _edit(rules, "bulk_allowed: false", "bulk_allowed: true")  # and on again, without a restart
    assert 'action="/approvals/bulk"' in bob.get("/approvals").text
    assert _flash(bob, _bulk(bob, [one.id, two.id])).startswith("2 approvals approved")
    assert [jobs.approval(a.id).status for a in (one, two)] == ["approved", "approved"]


def test_a_rules_file_broken_while_the_console_runs_refuses_decisions_and_says_why(
    env: dict[str, Any], tmp_path: Path
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    bob = client_as("bob", jobs, tmp_path / "c", env["users"], risk_rules=rules)
    one, two = _parked(jobs, "120.00", 1), _parked(jobs, "120.00", 2)
    token = _csrf(bob, f"/approvals/{one.id}")
    jobs.mark(one.job_id, "running", only_if=("waiting",), worker="w1")
    leg = JobHuman(jobs, one.job_id, auto_approve=True)  # a worker's leg, started before the edit
    _edit(rules, "bulk_allowed: true", "bulk_allowed: maybe")  # a typo: the file cannot be validated
    sent = bob.post(
        f"/approvals/{one.id}/decide",
        data={"csrf": token, "action": "approve", "text": ""},
        headers={"origin": "http://testserver"},
    )
    page = bob.get(sent.headers["location"])  # the approval's page is not judged either: said
    assert page.status_code == 200 and f"The risk rules {rules} cannot be used: bulk_allowed" in page.text
    assert "approving is refused" in page.text and 'value="approve"' not in page.text
    assert jobs.approval(one.id).status == "pending"  # not decided by the rules read before
    authority = Authority(jobs, load_rules(DEFAULT_RULES))  # (fixed rules: to read the audit log)
    [refused] = [e for e in authority.audit.entries() if e.action == "approve_refused"]
    assert refused.who == "bob" and refused.payload["reason"].startswith(
        f"Refused, nothing was decided: The risk rules {rules} cannot be used: bulk_allowed"
    )
    bulk = bob.post(
        "/approvals/bulk",
        data={"csrf": token, "ids": [one.id, two.id]},
        headers={"origin": "http://testserver"},
    )
    assert bulk.status_code == 303 and [jobs.approval(a.id).status for a in (one, two)] == ["pending"] * 2
    rules.unlink()  # gone altogether: the same
    assert f"The risk rules {rules} cannot be used" in bob.get("/approvals").text
    with pytest.raises(RiskRulesError, match="cannot be used"):  # nor does a leg auto-approve it
        leg.approve(one.request)
    assert jobs.approvals("approved") == []
    shutil.copy(DEFAULT_RULES, rules)  # fixed: decided by the rules as they are now
    assert "approved; the job resumes" in _flash(bob, _decide(bob, one.id))


# ---- a real worker leg ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory, eval_knowledge_seed: Path) -> Iterator[Workplace]:
    with scripted_workplace(tmp_path_factory.mktemp("rules-place"), eval_knowledge_seed) as workplace:
        yield workplace


def _leg_with_edit(
    env: dict[str, Any], place: Workplace, monkeypatch: pytest.MonkeyPatch, edit: Callable[[], None]
) -> tuple[str, str, Any]:
    """ana's --auto-approve job paying Hooli's bill, run by a real leg; ``edit`` lands while the leg
    runs, after it read the rules and before the run reaches its payment."""
    jobs = env["jobs"]
    place.erp_server.reset()
    original = JobHuman.approve

    def operator_edits_first(self: JobHuman, request: ApprovalRequest) -> Any:
        edit()
        return original(self, request)

    monkeypatch.setattr(JobHuman, "approve", operator_edits_first)
    task = next(c for c in load_cases() if c.id == "mark-hooli-paid").task
    options = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor", auto_approve=True)
    job = jobs.submit(task, submitted_by="ana", submitted_proof="token", options=options)
    outcome = LegRunner(jobs, place, "w1", scripted=scripted_for).run_leg(job.id, jobs.leg(job.id))
    bill = next(b for b in fetch_state(place.erp_url).bills if b.invoice_number == "HCS-2026-09")
    return job.id, outcome, bill


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_auto_approve_taken_away_while_the_leg_runs_covers_nothing_more(
    env: dict[str, Any], place: Workplace, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit = lambda: _edit(env["rules"], "identities: ['*']", "identities: ['nobody']")  # noqa: E731
    job_id, outcome, bill = _leg_with_edit(env, place, monkeypatch, edit)
    assert outcome == "waiting" and bill.status == "unpaid"  # a person is asked
    [asked] = env["jobs"].approvals("pending", job_id=job_id)
    assert asked.request is not None and asked.request.url.endswith("/pay")
    assert env["jobs"].approvals("approved", job_id=job_id) == []


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_rules_file_broken_while_the_leg_runs_sends_nothing_and_the_run_is_told_why(
    env: dict[str, Any], place: Workplace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = env["rules"]
    edit = lambda: _edit(rules, "bulk_allowed: true", "bulk_allowed: maybe")  # noqa: E731
    job_id, outcome, bill = _leg_with_edit(env, place, monkeypatch, edit)
    assert bill.status == "unpaid" and env["jobs"].get(job_id).outcome != "done", outcome
    assert [
        a for a in env["jobs"].approvals(job_id=job_id) if a.kind == "approval"
    ] == []  # not auto-approved
    said = f"RiskRulesError: The risk rules {rules} cannot be used: bulk_allowed"
    traces = [t.read_text(encoding="utf-8") for t in place.settings.runs_dir.glob("*/trace.jsonl")]
    assert any(said in trace for trace in traces)  # the payment's tool call failed, saying why
