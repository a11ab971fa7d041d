"""A decision holds only for what its approver was shown that was read from the system
(``authority.system_reading``): the record's amount and currency, and whom it pays where the system,
not the bytes sent, says it — the vendor of the bill a payment pays, the vendor record a chosen
option sends. Each is read again when a job comes back to the request, and at the terminal once the
person approves; any change is asked again, saying what changed. The demo ERP over HTTP, a real
SQLite job store, the real CLI, and a real worker leg (scripted models, Chromium)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_eval import scripted_workplace
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority, request_payee
from taskcrew.approvals.identity import os_user
from taskcrew.approvals.rules import DEFAULT_RULES, load_rules
from taskcrew.approvals.terminal import TerminalApprovals
from taskcrew.cli import app
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.runner import LegRunner
from taskcrew.jobs.scripted import scripted_for
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.tools.human import (
    ApprovalDecision,
    ApprovalRequest,
    FieldValue,
    ScriptedHuman,
    describe_request,
)
from taskcrew.tools.policy import Policy, PolicyConfig, Submission

runner = CliRunner()
MALLORY = "Mallory Consulting LLC"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[dict[str, Any]]:
    """A job store and an approvals home shared by the CLI and the authority; ana, bob and carol can
    log in; USD above 1000.00 needs two people."""
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
    yield {"jobs": jobs, "authority": Authority(jobs, users_file=console_users), "url": url}
    jobs.close()


def _token(name: str) -> str:
    out = runner.invoke(
        app, ["approvals", "login", "--name", name, "--password", f"{name}-secret-1", "--print-token"]
    )
    assert out.exit_code == 0, out.output
    return out.output.strip()


def _move_bill(db: Path, invoice: str, vendor: str) -> None:
    """A second employee with ERP access moves the bill to another vendor record (same amount)."""
    with sqlite3.connect(db) as erp:
        erp.execute("INSERT OR IGNORE INTO vendors (name, default_currency) VALUES (?, 'USD')", (vendor,))
        (vendor_id,) = erp.execute("SELECT id FROM vendors WHERE name = ?", (vendor,)).fetchone()
        erp.execute("UPDATE bills SET vendor_id = ? WHERE invoice_number = ?", (vendor_id, invoice))


def _asked(erp: ErpServer, erp_user: Any, sub: Submission, rules: Any) -> ApprovalRequest:
    """What the worker asks each time the run reaches ``sub`` (the real Policy, reading the ERP)."""
    human = ScriptedHuman([ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url(erp.url), human, rules=rules)
    policy.page_fetch = lambda url: erp_user.http.get(url).text
    policy.submission(sub)
    return human.requests[-1]


def _park(jobs: Jobs, request: ApprovalRequest) -> tuple[str, str]:
    job = jobs.submit("Pay the Hooli bill", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return job.id, parked.value.approval_id


def _approved_then_resumed(
    env: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    ask: Callable[[], ApprovalRequest],
    change: Callable[[], None],
) -> tuple[str, ApprovalRequest, Any]:
    """bob alone approves what ``ask`` parks (CLI); the request as asked again holds it; then
    ``change`` happens in the ERP and the job comes back to the request: the parked approval."""
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _park(jobs, ask())
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    decided = runner.invoke(app, ["approvals", "approve", approval_id])
    assert decided.exit_code == 0 and jobs.approval(approval_id).status == "approved", decided.output
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    assert JobHuman(jobs, job_id, authority=authority).approve(ask()).approved  # nothing changed: it holds
    change()
    request = ask()
    assert request.key == jobs.approval(approval_id).key  # the same bytes: only the ERP changed
    human = JobHuman(jobs, job_id, authority=authority)
    with pytest.raises(Parked) as parked:
        human.approve(request)
    sent = human.gate.send_check(request.method, request.url, [(f.name, f.value) for f in request.fields])
    assert sent is not None and "was not sent" in sent
    [outdated] = [e for e in authority.audit.entries() if e.action == "decision_outdated"]
    assert outdated.target == approval_id
    return approval_id, request, jobs.approval(parked.value.approval_id)


def test_a_bill_moved_to_another_vendor_after_its_payment_was_approved_is_asked_again(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paying a bill sends only a date: bob approved paying Hooli's 499.00 bill, its vendor read from
    the bill's page. Before the job came back to it, the bill was moved to another vendor record
    (same amount, same currency): the same key, not the same decision."""
    hooli = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{hooli.id}/pay",
                     page_url=f"{erp.url}/bills/{hooli.id}",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip
    rules = env["authority"].rules
    _, _, again = _approved_then_resumed(
        env,
        monkeypatch,
        lambda: _asked(erp, erp_user, pay, rules),
        lambda: _move_bill(erp.db_path, "HCS-2026-09", MALLORY),
    )
    why = again.request.asked_again or ""
    assert why == (
        f"bob approved it when the payee read from {erp.url}/bills/{hooli.id} was Hooli Cloud Services; "
        f"it is now {MALLORY}"
    )
    assert request_payee(again.request, rules).names == [MALLORY]  # shown as it is now
    shown = runner.invoke(app, ["approvals", "show", again.id]).output
    assert f"⚠ asked again: {why}" in shown.replace("\n  ┆ ", "")
    assert f"{again.id}  pending" in runner.invoke(app, ["approvals", "list"]).output


def test_a_vendor_record_renamed_after_a_new_bill_was_approved_is_asked_again(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new bill sends the vendor's option value ("1"); the approver was shown the vendor the ERP's
    list names for it. The record behind "1" renamed in the ERP is another payee for the same bytes."""
    ids = erp_user.vendor_ids()

    def new_bill() -> ApprovalRequest:
        shown = {v: n for n, v in erp_user.vendor_ids().items()}  # the option's label as the page shows it
        label = shown[ids["Northwind Traders"]]
        fields = [
            FieldValue(name="vendor_id", value=ids["Northwind Traders"], label=label),
            FieldValue(name="invoice_number", value="INV-9001"),
            FieldValue(name="amount", value="120.00"),
            FieldValue(name="currency", value="USD"),
        ]
        sub = Submission(origin="form", method="POST", url=f"{erp.url}/bills/new",
                         page_url=f"{erp.url}/bills/new", fields=fields)  # fmt: skip
        return _asked(erp, erp_user, sub, env["authority"].rules)

    def rename() -> None:
        with sqlite3.connect(erp.db_path) as db:
            db.execute("UPDATE vendors SET name = ? WHERE name = 'Northwind Traders'", (MALLORY,))

    _, _, again = _approved_then_resumed(env, monkeypatch, new_bill, rename)
    why = again.request.asked_again or ""
    assert why == (
        f"bob approved it when the payee read from {erp.url}/vendors was Northwind Traders; it is now {MALLORY}"
    )


def test_an_amount_and_a_payee_changed_together_are_both_said(
    env: dict[str, Any], erp: ErpServer, erp_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooli = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{hooli.id}/pay",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip

    def change() -> None:
        _move_bill(erp.db_path, "HCS-2026-09", MALLORY)
        with sqlite3.connect(erp.db_path) as db:
            db.execute("UPDATE bills SET amount_cents = 950000 WHERE invoice_number = 'HCS-2026-09'")

    _, _, again = _approved_then_resumed(
        env, monkeypatch, lambda: _asked(erp, erp_user, pay, env["authority"].rules), change
    )
    why = again.request.asked_again or ""
    assert "was 499.00 USD; it is now 9500.00 USD; and the payee read from" in why
    assert f"was Hooli Cloud Services; it is now {MALLORY}" in why
    assert env["authority"].needs_two(env["authority"].assess(again.request))  # judged as it is now


class _MovedWhileDeciding(ScriptedHuman):
    """A person at the terminal approves paying Hooli's bill; while the prompt is open, another clerk
    moves the bill to another vendor in the ERP."""

    def __init__(self, move: Callable[[], None], decisions: list[ApprovalDecision]) -> None:
        super().__init__(decisions)
        self.move = move

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        if not self.requests:
            self.move()
        return super().approve(request)


def test_a_bill_moved_while_the_person_at_the_terminal_decides_is_asked_again_before_it_is_sent(
    erp: ErpServer, erp_user: Any, tmp_path: Path
) -> None:
    hooli = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{hooli.id}/pay",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip
    rules = load_rules()
    alone = Authority(None, rules, home=tmp_path / "a", users_file=tmp_path / "none.yaml")
    person = _MovedWhileDeciding(
        lambda: _move_bill(erp.db_path, "HCS-2026-09", MALLORY), [ApprovalDecision.approve()] * 2
    )
    policy = Policy(PolicyConfig.for_url(erp.url), TerminalApprovals(person, alone), rules=rules)
    policy.page_fetch = lambda url: erp_user.http.get(url).text
    assert policy.submission(pay).outcome == "approved"
    first, second = person.requests
    assert request_payee(first, rules).names == ["Hooli Cloud Services"]
    assert request_payee(second, rules).names == [MALLORY]  # asked with the record as it is now
    assert first.asked_again is None
    why = second.asked_again or ""
    assert why == (  # named as the terminal proved her (here: the OS user), as the signed entry does
        f"{os_user()} at the terminal approved it when the payee read from {erp.url}/bills/{hooli.id} was "
        f"Hooli Cloud Services; it is now {MALLORY}"
    )
    assert "⚠ asked again: " + why in describe_request(second)
    # the same payload again in this run, the record unchanged since the second approval: not asked
    assert policy.submission(pay).outcome == "allowed" and len(person.requests) == 2


# ---- a real worker leg ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory, eval_knowledge_seed: Path) -> Iterator[Workplace]:
    with scripted_workplace(tmp_path_factory.mktemp("payee-place"), eval_knowledge_seed) as workplace:
        yield workplace


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_worker_leg_does_not_pay_a_bill_moved_to_another_vendor_on_the_old_approval(
    env: dict[str, Any], place: Workplace, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs, authority = env["jobs"], env["authority"]
    place.erp_server.reset()

    def leg(job_id: str) -> str:
        return LegRunner(jobs, place, "w1", scripted=scripted_for).run_leg(job_id, jobs.leg(job_id))

    def hooli() -> Any:
        return next(b for b in fetch_state(place.erp_url).bills if b.invoice_number == "HCS-2026-09")

    task = next(c for c in load_cases() if c.id == "mark-hooli-paid").task
    options = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor")
    job = jobs.submit(task, submitted_by="ana", submitted_proof="token", options=options)
    assert leg(job.id) == "waiting"
    [asked] = jobs.approvals("pending", job_id=job.id)
    assert authority.view(asked).payee.names == ["Hooli Cloud Services"]  # what bob is shown
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    assert runner.invoke(app, ["approvals", "approve", asked.id]).exit_code == 0  # alone: under 1000
    _move_bill(place.erp_server.db_path, "HCS-2026-09", MALLORY)

    assert leg(job.id) == "waiting" and hooli().status == "unpaid"  # asked again, not paid
    [again] = jobs.approvals("pending", job_id=job.id)
    assert again.key == asked.key and again.request is not None
    assert f"was Hooli Cloud Services; it is now {MALLORY}" in (again.request.asked_again or "")
    assert authority.view(again).payee.names == [MALLORY]
    assert "decision_outdated" in [e.action for e in authority.audit.entries()]
    assert runner.invoke(app, ["approvals", "approve", again.id]).exit_code == 0  # bob, for Mallory now
    assert leg(job.id) == "finished" and hooli().status == "paid"
