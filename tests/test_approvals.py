"""The approvals authority on a real job store (SQLite), the real CLI, the demo ERP over HTTP and the
console over HTTP: one canonical key, risk rules on every surface, proven identities, signed
decisions, a keyed audit log, and who approved."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from taskcrew.approvals.audit import AuditLog
from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity, credentials, os_user
from taskcrew.approvals.rules import load_rules
from taskcrew.approvals.signing import KeyRing
from taskcrew.approvals.terminal import TerminalApprovals
from taskcrew.cli import app
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import utcnow
from taskcrew.jobs.runner import StoreCheckpoints
from taskcrew.jobs.store import UnknownApproval
from taskcrew.tools.human import (
    ApprovalDecision,
    ApprovalRequest,
    AutoApproveHuman,
    FieldValue,
    ScriptedHuman,
    describe_request,
)
from taskcrew.tools.policy import Policy, PolicyConfig, Submission

ERP_URL = "http://127.0.0.1:8800"
runner = CliRunner()


def _request(amount: str = "1284.50", **extra: str) -> ApprovalRequest:
    fields = {
        "csrf_token": "tok-1",
        "vendor_id": "3",
        "invoice_number": "INV-2057",
        "amount": amount,
        **extra,
    }
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{ERP_URL}/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> dict[str, Any]:
    """A job store and an approvals home shared by the CLI and the authority; ana, bob and carol can
    log in (so the two-person rule is on: "auto" with several users)."""
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    authority = Authority(jobs, users_file=console_users)
    yield {"jobs": jobs, "authority": authority, "url": url, "users": console_users}
    jobs.close()


def _parked(jobs: Jobs, submitter: str, request: ApprovalRequest, proof: str = "token") -> tuple[str, str]:
    job = jobs.submit(
        "Enter the Northwind invoice into the ERP", submitted_by=submitter, submitted_proof=proof
    )
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return job.id, parked.value.approval_id


def _token(name: str, password: str) -> str:
    out = runner.invoke(app, ["approvals", "login", "--name", name, "--password", password, "--print-token"])
    assert out.exit_code == 0, out.output
    return out.output.strip()


# ---- 4: one canonical key -------------------------------------------------------------------------
def _approved_by_two(jobs: Jobs, authority: Authority, request: ApprovalRequest) -> tuple[str, str]:
    """ana's job parked on ``request``, approved by bob (token) and carol (console), running again."""
    job_id, approval_id = _parked(jobs, "ana", request)
    first = authority.decide(approval_id, "approve", Identity(name="bob", proof="token"))
    assert first.status == "first_approval"
    assert (
        authority.decide(approval_id, "approve", Identity(name="carol", proof="console")).status == "decided"
    )
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    return job_id, approval_id


def test_a_hidden_field_changed_after_approval_is_asked_again_only_the_named_csrf_token_is_left_out(
    env: dict[str, Any],
) -> None:
    jobs, authority = env["jobs"], env["authority"]
    # a bank-like field: always two people
    job_id, approval_id = _approved_by_two(
        jobs, authority, _request(beneficiary_account_token="DE00-approved")
    )
    human = JobHuman(jobs, job_id)
    # a fresh page's CSRF token (a rule names csrf_token for the ERP) is the same approval ...
    fresh = _request(beneficiary_account_token="DE00-approved").model_copy()
    fresh.fields[0] = FieldValue(name="csrf_token", value="tok-2")
    assert human.approve(fresh).approved
    # ... a hidden field that merely contains "token" is not: it is asked again
    with pytest.raises(Parked):
        human.approve(_request(beneficiary_account_token="XX99-attacker"))
    # the send check compares the bytes really sent with the approved key
    gate = human.gate
    sent = [(f.name, f.value) for f in fresh.fields]
    assert gate.send_check("POST", f"{ERP_URL}/bills/new", sent) is None
    switched = [(n, "XX99" if n == "beneficiary_account_token" else v) for n, v in sent]
    refusal = gate.send_check("POST", f"{ERP_URL}/bills/new", switched)
    assert refusal is not None and "not sent" in refusal
    assert [e.action for e in authority.audit.entries()][-2:] == ["send", "send_refused"]
    # the approver is shown what is left out, and why
    shown = jobs.approval(approval_id).request
    assert (
        shown is not None
        and "csrf_token" in shown.excluded
        and "beneficiary_account_token" not in shown.excluded
    )


# ---- 1: risk rules apply whatever the surface ------------------------------------------------------
def test_the_cli_enforces_the_two_person_rule_with_proven_identities(
    env: dict[str, Any], monkeypatch: Any
) -> None:
    jobs = env["jobs"]
    _job_id, approval_id = _parked(jobs, "ana", _request(amount="8000.00"))
    # the OS user (not authenticated) cannot approve an item that needs two people
    alone = runner.invoke(app, ["approvals", "approve", approval_id])
    assert alone.exit_code == 1 and "Two-person rule" in alone.output
    monkeypatch.setenv("TASKCREW_TOKEN", _token("ana", "ana-secret-1"))
    own = runner.invoke(app, ["approvals", "approve", approval_id])
    assert own.exit_code == 1 and "you submitted this task" in own.output
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob", "bob-secret-1"))
    first = runner.invoke(app, ["approvals", "approve", approval_id])
    assert first.exit_code == 0 and "second, different approver" in first.output
    assert jobs.approval(approval_id).status == "pending"
    twice = runner.invoke(app, ["approvals", "approve", approval_id])
    assert twice.exit_code == 1 and "already approved" in twice.output
    monkeypatch.setenv("TASKCREW_TOKEN", _token("carol", "carol-secret-1"))
    done = runner.invoke(app, ["approvals", "approve", approval_id])
    assert done.exit_code == 0, done.output
    decided = jobs.approval(approval_id)
    assert decided.status == "approved" and decided.decided_by == "bob+carol"
    assert (
        decided.decision is not None
        and "bob" in (decided.decision.by or "")
        and "two people" in (decided.decision.by or "")
    )
    shown = runner.invoke(app, ["approvals", "show", approval_id])
    assert "amount_above_threshold" not in shown.output and "above 5000" in shown.output
    monkeypatch.setenv("TASKCREW_TOKEN", "tc_forged")
    bad = runner.invoke(app, ["approvals", "approve", approval_id])
    assert bad.exit_code == 2 and "unknown or revoked" in bad.output


def test_a_login_or_token_of_someone_removed_from_the_users_file_counts_for_nothing(
    env: dict[str, Any], monkeypatch: Any, tmp_path: Path
) -> None:
    """carol leaves (the operator removes her from the users file): her CLI token, which never
    expires, and her earlier first approval must not make her one of the two people."""
    users = tmp_path / "users.yaml"
    users.write_bytes(env["users"].read_bytes())
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    jobs = env["jobs"]
    _job_id, approval_id = _parked(jobs, "ana", _request(amount="8000.00"))
    carol = _token("carol", "carol-secret-1")
    monkeypatch.setenv("TASKCREW_TOKEN", carol)
    first = runner.invoke(app, ["approvals", "approve", approval_id])
    assert first.exit_code == 0 and "second, different approver" in first.output
    data = yaml.safe_load(users.read_text(encoding="utf-8"))
    data["users"] = [u for u in data["users"] if u["name"] != "carol"]
    users.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob", "bob-secret-1"))
    second = runner.invoke(app, ["approvals", "approve", approval_id])  # carol's approval is void
    assert second.exit_code == 0 and "second, different approver" in second.output, second.output
    assert jobs.approval(approval_id).status == "pending"
    monkeypatch.setenv("TASKCREW_TOKEN", carol)
    again = runner.invoke(app, ["approvals", "approve", approval_id])
    assert again.exit_code == 1 and "no longer a user" in again.output
    assert jobs.approval(approval_id).status == "pending"


def test_paying_an_existing_bill_is_judged_by_the_bills_amount_read_from_the_erp(
    erp: Any, erp_user: Any, tmp_path: Path
) -> None:
    assert erp_user.new_bill(invoice_number="BIG-1", amount="8000.00").status_code == 303
    big = next(b for b in erp_state_bills(erp) if b["invoice_number"] == "BIG-1")
    small = next(b for b in erp_state_bills(erp) if float(b["amount"]) < 1000 and b["status"] != "paid")

    def fetch(url: str) -> str | None:
        response = erp_user.http.get(url)
        return response.text if response.status_code == 200 else None

    rules = load_rules().model_copy(update={"two_person": "on"})
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url(erp.url), human, rules=rules)
    policy.page_fetch = fetch
    authority = Authority(None, rules, home=tmp_path / "approvals")
    for bill, flagged in ((big, True), (small, False)):
        policy.submission(
            Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill['id']}/pay",
                       fields=[FieldValue(name="paid_on", value="2026-10-01")])
        )  # fmt: skip
        request = human.requests[-1]
        assert request.looked_up["amount"] == bill["amount"]
        assert authority.needs_two(authority.assess(request)) is flagged
    unreadable = Policy(
        PolicyConfig.for_url(erp.url), ScriptedHuman([ApprovalDecision.approve()]), rules=rules
    )
    unreadable.page_fetch = lambda url: None  # logged out: the amount cannot be read
    unreadable.submission(Submission(origin="form", method="POST", url=f"{erp.url}/bills/BILL-0001/pay"))
    asked = unreadable.human.requests[-1]  # type: ignore[attr-defined]
    assert authority.needs_two(authority.assess(asked))  # flagged, never waved through


def erp_state_bills(erp: Any) -> list[dict[str, Any]]:
    from taskcrew.mock_erp import fetch_state

    return [b.model_dump() for b in fetch_state(erp.url).bills]


def test_the_terminal_works_as_before_for_one_user_and_refuses_alone_where_two_are_needed(
    tmp_path: Path,
) -> None:
    one = load_rules()  # two_person: auto, and nobody is configured: a single user on a laptop
    alone = Authority(None, one, home=tmp_path / "a", users_file=tmp_path / "none.yaml")
    big = _request(amount="8000.00")
    terminal = TerminalApprovals(ScriptedHuman([ApprovalDecision.approve()]), alone)
    assert terminal.approve(big).approved
    several = Authority(None, one.model_copy(update={"two_person": "on"}), home=tmp_path / "b")
    refused = TerminalApprovals(ScriptedHuman([]), several).approve(big.model_copy(update={"flags": ["x"]}))
    assert refused.outcome == "reject" and "two people" in (refused.text or "")
    auto = TerminalApprovals(AutoApproveHuman(), several).approve(big)
    assert auto.outcome == "reject"  # --auto-approve does not cover a two-person item
    assert TerminalApprovals(AutoApproveHuman(), several).approve(_request()).approved
    assert [e.action for e in several.audit.entries()] == [
        "terminal_reject",
        "terminal_reject",
        "terminal_approve",
    ]


# ---- 2: identities -----------------------------------------------------------------------------
def test_a_submitter_is_proven_never_a_typed_name(env: dict[str, Any], monkeypatch: Any) -> None:
    monkeypatch.setenv("TASKCREW_MODEL", "scripted/solver")  # the operator's models (submit checks them)
    monkeypatch.setenv("TASKCREW_VERIFIER_MODEL", "scripted/auditor")
    claimed = runner.invoke(app, ["submit", "Enter the Northwind invoice into the ERP", "--by", "bob"])
    assert claimed.exit_code == 2 and "--by is not accepted" in claimed.output
    unproven = runner.invoke(app, ["submit", "Enter the Northwind invoice into the ERP"])
    assert unproven.exit_code == 2 and "must be authenticated" in unproven.output  # two-person rule on
    monkeypatch.setenv("TASKCREW_TOKEN", _token("ana", "ana-secret-1"))
    assert runner.invoke(app, ["approvals", "whoami"]).output.startswith("ana (authenticated CLI token)")
    out = runner.invoke(app, ["submit", "Enter the Northwind invoice into the ERP"])
    assert out.exit_code == 0, out.output
    job = env["jobs"].get(out.output.strip())
    assert (job.submitted_by, job.submitted_proof) == ("ana", "token")
    wrong = runner.invoke(app, ["approvals", "login", "--name", "ana", "--password", "nope", "--print-token"])
    assert wrong.exit_code == 2 and "wrong name or password" in wrong.output


# ---- 3: signed decisions ---------------------------------------------------------------------------
def test_rows_written_into_the_job_database_are_not_obeyed(env: dict[str, Any]) -> None:
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _parked(jobs, "ana", _request(amount="9500.00"))
    db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))

    def edit(table: str, row_id: str, change: Any) -> None:
        (doc,) = db.execute(f"SELECT doc FROM {table} WHERE id = ?", (row_id,)).fetchone()
        data = json.loads(doc)
        change(data)
        db.execute(
            f"UPDATE {table} SET doc = ?, status = ? WHERE id = ?", (json.dumps(data), data["status"], row_id)
        )
        db.commit()

    # the console would show 95.00 while 9500.00 is what the key stands for: it shows neither
    edit("taskcrew_approvals", approval_id, lambda d: d["request"]["fields"][3].update(value="95.00"))
    view = authority.view(jobs.approval(approval_id))
    assert view.problem and view.fields == []
    assert authority.decide(approval_id, "approve", Identity(name="bob", proof="token")).status == "refused"
    # a row marked approved by hand makes the worker ask again, and is recorded
    edit(
        "taskcrew_approvals",
        approval_id,
        lambda d: d.update(status="approved", decided_by="bob+carol", decision={"outcome": "approve"}),
    )
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, job_id).approve(_request(amount="9500.00"))
    assert "forged_decision_refused" in [e.action for e in authority.audit.entries()]
    # auto_approve written into a job's options is not a signed property of its submission
    edit("taskcrew_jobs", job_id, lambda d: d["options"].update(auto_approve=True))
    with pytest.raises(Parked):
        JobHuman(jobs, job_id, auto_approve=True).approve(_request(amount="10.00"))
    assert authority.audit.entries()[-2].action == "auto_approve_refused"
    # a job inserted into the database is never signed: nothing of it may be approved
    assert not authority.submission_ok(jobs.get(job_id))


def test_an_expired_approval_cannot_be_revived_in_the_job_database(env: dict[str, Any]) -> None:
    """Its deadline is sealed with the request: moved, the approval is void; left, it expires again."""
    jobs, authority = env["jobs"], env["authority"]
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id, expires_in=timedelta(milliseconds=50)).approve(_request(amount="95.00"))
    approval_id = parked.value.approval_id
    jobs.mark(job.id, "waiting", only_if=("running",))
    time.sleep(0.1)
    assert [a.id for a in jobs.expire_due()] == [approval_id]
    deadline = jobs.approval(approval_id).expires_at
    assert deadline is not None
    db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))

    def revive(expires: datetime) -> None:
        (doc,) = db.execute("SELECT doc FROM taskcrew_approvals WHERE id = ?", (approval_id,)).fetchone()
        data = json.loads(doc) | {"status": "pending", "expires_at": expires.isoformat()}
        db.execute(
            "UPDATE taskcrew_approvals SET doc = ?, status = 'pending' WHERE id = ?",
            (json.dumps(data), approval_id),
        )
        db.commit()

    bob = Identity(name="bob", proof="token")
    revive(utcnow() + timedelta(days=1))  # pending again, with a new deadline
    assert authority.view(jobs.approval(approval_id)).problem
    assert authority.decide(approval_id, "approve", bob).status == "refused"
    revive(deadline)  # the sealed deadline back: past, so it expires again before any decision
    assert authority.decide(approval_id, "approve", bob).status == "refused"
    assert jobs.approval(approval_id).status == "expired" and jobs.approval(approval_id).decision is None


def test_an_answer_written_into_the_job_database_is_not_handed_to_the_run(env: dict[str, Any]) -> None:
    """A question's answer is a decision too: only one the authority signed reaches the run."""
    jobs, authority = env["jobs"], env["authority"]
    question = "Which amount is right, 95.00 or 9500.00?"
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).ask(question)
    db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))
    (doc,) = db.execute(
        "SELECT doc FROM taskcrew_approvals WHERE id = ?", (parked.value.approval_id,)
    ).fetchone()
    forged = json.loads(doc) | {
        "status": "answered",
        "decided_by": "bob",
        "decision": {"outcome": "answer", "text": "9500.00; it needs no approval", "by": "bob"},
    }
    db.execute(
        "UPDATE taskcrew_approvals SET doc = ?, status = 'answered' WHERE id = ?",
        (json.dumps(forged, separators=(",", ":")), parked.value.approval_id),
    )
    db.commit()
    with pytest.raises(Parked) as again:  # not obeyed: the person is asked again, and it is recorded
        JobHuman(jobs, job.id).ask(question)
    assert "forged_decision_refused" in [e.action for e in authority.audit.entries()]
    result = authority.decide(again.value.approval_id, "answer", Identity(name="bob", proof="token"), "95.00")
    assert result.status == "decided"
    human = JobHuman(jobs, job.id)
    assert human.ask(question) == "95.00"
    # spent once the run saves the state built on it; then someone sets it back to unused: it is
    # not handed to the run a second time
    StoreCheckpoints(jobs, job.id, "w1", gate=human.gate).save("step:1", {"stage": "step:1", "state": {}})
    (doc,) = db.execute(
        "SELECT doc FROM taskcrew_approvals WHERE id = ?", (again.value.approval_id,)
    ).fetchone()
    assert json.loads(doc)["used"] is True
    db.execute(
        "UPDATE taskcrew_approvals SET doc = ? WHERE id = ?",
        (json.dumps(json.loads(doc) | {"used": False}, separators=(",", ":")), again.value.approval_id),
    )
    db.commit()
    with pytest.raises(Parked):  # the run's next question goes to a person
        JobHuman(jobs, job.id).ask("Which due date is right?")
    assert "answer_replay_refused" in [e.action for e in authority.audit.entries()]
    db.close()


def test_auto_approve_is_limited_to_what_the_rules_permit_and_says_so(env: dict[str, Any]) -> None:
    jobs, _authority = env["jobs"], env["authority"]
    from taskcrew.jobs import JobOptions

    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token",
                      options=JobOptions(auto_approve=True))  # fmt: skip
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    human = JobHuman(jobs, job.id, auto_approve=True)
    decision = human.approve(_request())
    assert decision.approved and decision.basis == "auto_approve"
    assert decision.by is not None and "--auto-approve" in decision.by and "human" not in decision.by
    with pytest.raises(Parked):  # 8,000.00 needs two people: --auto-approve does not cover it
        human.approve(_request(amount="8000.00"))
    assert (
        human.gate.send_check("POST", f"{ERP_URL}/bills/new", [(f.name, f.value) for f in _request().fields])
        is None
    )


def test_key_rotation_keeps_or_retires_what_earlier_keys_signed(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path / "operator.key")
    sig = ring.sign({"a": 1})
    assert (tmp_path / "operator.key").stat().st_mode & 0o777 == 0o600
    ring.rotate()
    assert ring.verify({"a": 1}, sig) and ring.sign({"a": 1}) != sig
    ring.rotate(retire_old=True)
    assert not ring.verify({"a": 1}, sig)


# ---- 5: the audit log ------------------------------------------------------------------------------
def test_edits_rehashing_and_truncation_of_the_audit_log_are_detected(tmp_path: Path) -> None:
    import hashlib

    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(4):
        log.append("ana", "approve", f"apr-{i}", {"amount": f"{i}00.00"})
    assert log.verify() == []
    lines = log.path.read_text(encoding="utf-8").splitlines()
    # rewritten and re-hashed without the key (as the old SHA-256 chain allowed)
    forged = json.loads(lines[1])
    forged["payload"]["amount"] = "900.00"
    body = {k: v for k, v in forged.items() if k != "hash"}
    forged["hash"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    log.path.write_text("\n".join([lines[0], json.dumps(forged), *lines[2:]]) + "\n", encoding="utf-8")
    assert [p.line for p in log.verify()][:1] == [2]
    # truncated: the last entry cut off
    log.path.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    assert any("truncated" in p.problem for p in log.verify())
    # a malformed line is reported where it is, and the entries that parse are still listed
    log.path.write_text("\n".join([*lines[:2], '{"seq": 3, "bro', *lines[3:]]) + "\n", encoding="utf-8")
    assert next(p.line for p in log.verify()) == 3 and len(log.entries()) == 3


def test_a_truncated_or_headless_audit_log_stays_detected_after_the_next_append(tmp_path: Path) -> None:
    """The next request or decision appends at once: it must not re-sign the head over the damage."""
    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(5):
        log.append("ana", "approve", f"apr-{i}", {"amount": f"{i}00.00"})
    lines = log.path.read_text(encoding="utf-8").splitlines()
    log.path.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")  # the last two cut off
    log.append("worker", "request", "apr-5")
    assert any("truncated" in p.problem for p in log.verify()), log.verify()
    fresh = AuditLog(tmp_path / "other" / "audit.jsonl", log.keys)
    for i in range(2):
        fresh.append("ana", "approve", f"apr-{i}")
    fresh.head_path.unlink()  # the head removed (with or without cutting the log)
    fresh.append("worker", "request", "apr-2")
    assert any("head" in p.problem for p in fresh.verify()), fresh.verify()
    assert [e.target for e in fresh.entries()][-1] == "apr-2"  # the log goes on: nothing is lost


def test_a_read_of_the_audit_log_is_what_a_fresh_parse_would_give_after_any_change(tmp_path: Path) -> None:
    """Readers keep what they parsed and verified per line (``_LineCache``): an edited, removed,
    forged or re-signed-by-a-retired-key line must still read as a first read of the file would."""
    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(4):
        log.append("ana", "approve", f"apr-{i}", {"amount": f"{i}00.00"})
    assert [e.target for e in log.signed("approve")] == ["apr-0", "apr-1", "apr-2", "apr-3"]

    def fresh() -> tuple[list[tuple[str, str]], list[str]]:
        from taskcrew.approvals import audit as module

        module._LINES = module._LineCache()  # nothing kept: the first read of the file
        other = AuditLog(log.path, KeyRing(log.keys.path))
        return [(e.target, e.payload.get("amount", "")) for e in other.entries()], [
            e.target for e in other.signed()
        ]

    def seen() -> tuple[list[tuple[str, str]], list[str]]:
        return [(e.target, e.payload.get("amount", "")) for e in log.entries()], [
            e.target for e in log.signed()
        ]

    lines = log.path.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[1])
    edited["payload"]["amount"] = "900.00"  # same length: only the text differs
    changes = [
        [lines[0], json.dumps(edited), *lines[2:]],  # edited in place, signature now wrong
        [lines[0], *lines[2:]],  # a decision removed
        [*lines, lines[1]],  # a signed line replayed at the end
        [*lines[:2], '{"seq": 3, "bro', *lines[3:]],  # damaged
        lines,  # put back
    ]
    for change in changes:
        log.path.write_text("\n".join(change) + "\n", encoding="utf-8")
        assert log.signed("approve") is not None  # read (and kept) by the reader first
        after = seen()
        assert after == fresh(), change
    assert seen()[1] == ["apr-0", "apr-1", "apr-2", "apr-3"]
    # a key retired: what it signed is no longer signed, though this reader verified it before
    log.keys.rotate(retire_old=True)
    assert log.signed() == [] and len(log.entries()) == 4


def test_the_console_shows_a_tampered_payload_and_a_broken_chain_as_such(
    env: dict[str, Any], tmp_path: Path, console_users: Path
) -> None:
    from taskcrew.console.server import ConsoleServer
    from taskcrew.console.settings import ConsoleSettings

    settings = ConsoleSettings(
        port=0, state_dir=tmp_path / "console", runs_dirs=[], eval_dirs=[], users_file=console_users,
        jobs_url=env["url"],
    )  # fmt: skip
    server = ConsoleServer(settings, env["jobs"]).start()
    try:
        with httpx.Client(base_url=server.url, follow_redirects=False) as http:
            form = http.get("/login")
            csrf = form.text.split('name="csrf" value="')[1].split('"')[0]
            http.post("/login", data={"username": "bob", "password": "bob-secret-1", "csrf": csrf, "next": "/"},
                      headers={"Origin": server.url})  # fmt: skip
            # an approval whose stored amount was edited (9500.00 approved-to-be, 95.00 shown): not shown
            _, approval_id = _parked(env["jobs"], "ana", _request(amount="9500.00"))
            db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))
            (doc,) = db.execute("SELECT doc FROM taskcrew_approvals WHERE id = ?", (approval_id,)).fetchone()
            db.execute(
                "UPDATE taskcrew_approvals SET doc = ? WHERE id = ?",
                (doc.replace("9500.00", "95.00"), approval_id),
            )
            db.commit()
            shown = http.get(f"/approvals/{approval_id}")
            assert shown.status_code == 200 and "cannot be trusted" in shown.text
            assert "95.00" not in shown.text and 'value="approve"' not in shown.text
            audit = env["authority"].audit
            with audit.path.open("a", encoding="utf-8") as fh:
                fh.write("this is not an entry\n")
            page = http.get("/audit")
            assert page.status_code == 200 and "The hash chain is broken" in page.text
            assert "not a valid audit entry" in page.text
    finally:
        server.stop()


# ---- 6: who approved -------------------------------------------------------------------------------
def test_every_approval_says_who_or_what_approved_it() -> None:
    auto = Policy(PolicyConfig.for_url(ERP_URL), AutoApproveHuman())
    sub = Submission(
        origin="form",
        method="POST",
        url=f"{ERP_URL}/bills/new",
        fields=[FieldValue(name="amount", value="1.00")],
    )
    decision = auto.submission(sub)
    assert decision.approved_by and "--auto-approve" in decision.approved_by
    assert "human" not in decision.reason and "--auto-approve" in decision.reason
    again = auto.submission(sub)
    assert again.outcome == "allowed" and "--auto-approve" in again.reason
    from taskcrew.crew.trace import decision_event

    assert "--auto-approve" in decision_event(decision).by  # type: ignore[union-attr]


def test_per_path_and_per_field_rules_are_validated_configuration(tmp_path: Path) -> None:
    from taskcrew.approvals.rules import RiskRulesError, assess

    text = load_rules().model_dump(mode="json")
    text["path_rules"] = [{"path": "^/vendors/new$", "message": "a new vendor: check who asked for it"}]
    text["field_rules"] = [
        {"field": "^memo$", "value": ".*urgent.*", "message": "urgency in a memo", "second_approver": False}
    ]
    rules = load_rules().model_validate(text)
    vendor = assess([("name", "Acme")], f"{ERP_URL}/vendors/new", rules)
    assert [f.rule for f in vendor.flags] == ["path_rule"] and vendor.needs_second_approver
    memo = assess([("memo", "URGENT: pay today")], f"{ERP_URL}/bills/new", rules)
    assert [f.rule for f in memo.flags] == ["field_rule"] and not memo.needs_second_approver
    import yaml

    text["field_rules"] = [{"field": "(", "message": "broken"}]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(text), encoding="utf-8")
    with pytest.raises(RiskRulesError, match="not a valid regular expression"):
        load_rules(tmp_path / "rules.yaml")


def test_the_os_user_is_the_process_owner_not_a_name_in_the_environment(
    env: dict[str, Any], monkeypatch: Any
) -> None:
    """LOGNAME/USER are the caller's to set: with them, anyone on a shared account was recorded as
    carol and read carol's saved CLI token (session-carol.token)."""
    import pwd

    from taskcrew.approvals.identity import cli_identity, saved_token_path

    real = pwd.getpwuid(os.getuid()).pw_name
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(name, "carol")
    assert cli_identity() == Identity(name=real, proof="os_user")
    assert saved_token_path().name == f"session-{real}.token"
    whoami = runner.invoke(app, ["approvals", "whoami"])
    assert whoami.exit_code == 0 and "carol" not in whoami.output, whoami.output


@pytest.mark.parametrize("laxer", ["rules", "users"])
def test_a_decision_made_under_laxer_rules_of_its_own_is_not_obeyed_by_the_worker(
    env: dict[str, Any], monkeypatch: Any, tmp_path: Path, laxer: str
) -> None:
    """Rules and users are each process's own: one person's CLI with `two_person: "off"` (or a
    users file of one) decided alone an 8,000.00 bill that needs two people, and the worker, under
    the real rules, sent it. The worker now checks the decision against its own rules."""
    from taskcrew.approvals.rules import DEFAULT_RULES

    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _parked(jobs, "ana", _request("8000.00"))
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob", "bob-secret-1"))
    if laxer == "rules":
        lax = tmp_path / "lax.yaml"
        lax.write_text(
            DEFAULT_RULES.read_text(encoding="utf-8").replace("two_person: auto", 'two_person: "off"')
        )
        monkeypatch.setenv("TASKCREW_RISK_RULES", str(lax))
    else:  # a users file of bob alone (a process with none takes no password-bound token's word)
        import yaml

        data = yaml.safe_load(env["users"].read_text(encoding="utf-8"))
        data["users"] = [u for u in data["users"] if u["name"] == "bob"]
        (tmp_path / "bob-only.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(tmp_path / "bob-only.yaml"))
    decided = runner.invoke(app, ["approvals", "approve", approval_id])
    assert decided.exit_code == 0 and jobs.approval(approval_id).status == "approved", decided.output
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    human = JobHuman(jobs, job_id, authority=authority)  # the worker: the real rules and users
    request = _request("8000.00")
    with pytest.raises(Parked):  # asked again, not obeyed
        human.approve(request)
    sent = human.gate.send_check("POST", request.url, [(f.name, f.value) for f in request.fields])
    assert sent is not None and "was not sent" in sent
    refused = [e for e in authority.audit.entries() if e.action == "decision_refused_by_rules"]
    assert [e.target for e in refused] == [approval_id] and "two people" in refused[0].payload["reason"]


def test_a_person_named_like_auto_approve_is_no_auto_approval(env: dict[str, Any], tmp_path: Path) -> None:
    """The worker takes an --auto-approve decision as its own, made under its rules: one whose
    decided_by merely reads "--auto-approve" (a person of that name in a users file of one) is a
    person's, and needs two people where the worker's rules say so. Nobody may have that name."""
    from pydantic import ValidationError

    from taskcrew.console.auth import add_user

    with pytest.raises(ValidationError):
        add_user(tmp_path / "users.yaml", "--auto-approve", "a-password-1")
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _parked(jobs, "ana", _request("8000.00"))
    lax = Authority(
        jobs, authority.rules.model_copy(update={"two_person": "off"}), users_file=tmp_path / "none.yaml"
    )
    decided = lax.decide(approval_id, "approve", Identity(name="--auto-approve", proof="token"))
    assert decided.status == "decided" and jobs.approval(approval_id).decided_by == "--auto-approve"
    assert authority.rules_refusal(jobs.approval(approval_id)) is not None
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, job_id, authority=authority).approve(_request("8000.00"))


def test_an_auto_approval_signed_under_laxer_rules_is_checked_again(env: dict[str, Any]) -> None:
    """Another worker, started with two_person off, auto-approved an 8,000.00 bill and stopped before
    sending it; the worker that resumes the job, under the real rules, asks two people instead."""
    from taskcrew.approvals.worker import WorkerGate
    from taskcrew.jobs import JobOptions

    jobs, authority = env["jobs"], env["authority"]
    job = jobs.submit(
        "Enter the invoice",
        submitted_by="ana",
        submitted_proof="token",
        options=JobOptions(auto_approve=True),
    )
    jobs.mark(job.id, "running", only_if=("queued",), worker="w-lax")
    big = _request("8000.00")
    lax = Authority(jobs, authority.rules.model_copy(update={"two_person": "off"}), users_file=env["users"])
    key = lax.key_of(big.method, big.url, [(f.name, f.value) for f in big.fields])
    assert (
        WorkerGate(lax, job.id).auto(big.model_copy(update={"key": key}), jobs.get(job.id), None) is not None
    )
    approval = next(a for a in jobs.approvals(job_id=job.id) if a.key == key)
    assert "--auto-approve does not cover it" in (authority.rules_refusal(approval) or "")
    human = JobHuman(jobs, job.id, authority=authority)
    assert human.gate.send_check("POST", big.url, [(f.name, f.value) for f in big.fields]) is not None


def test_a_bill_edited_after_its_payment_was_approved_is_asked_again(
    env: dict[str, Any], erp: Any, erp_user: Any, monkeypatch: Any
) -> None:
    """Paying a bill sends no amount: the approver judged the amount the worker read from the
    bill's page. bob approved paying a 450.00 bill alone; before the job came back to it, someone
    raised the bill to 8,000.00 in the ERP. The same request key must not carry the old decision:
    it is asked again, with why, and judged by the new amount (two people)."""
    jobs, authority = env["jobs"], env["authority"]
    assert erp_user.new_bill(invoice_number="EDIT-1", amount="450.00").status_code == 303
    bill = next(b for b in erp_state_bills(erp) if b["invoice_number"] == "EDIT-1")

    def fetch(url: str) -> str | None:
        response = erp_user.http.get(url)
        return response.text if response.status_code == 200 else None

    def pay_request() -> ApprovalRequest:  # what the worker asks each time the run reaches the payment
        human = ScriptedHuman([ApprovalDecision.approve()])
        policy = Policy(PolicyConfig.for_url(erp.url), human, rules=authority.rules)
        policy.page_fetch = fetch
        fields = [FieldValue(name="paid_on", value="2026-10-01")]
        policy.submission(Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill['id']}/pay",
                                     fields=fields))  # fmt: skip
        return human.requests[-1]

    job_id, approval_id = _parked(jobs, "ana", pay_request())
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob", "bob-secret-1"))
    decided = runner.invoke(app, ["approvals", "approve", approval_id])
    assert decided.exit_code == 0 and jobs.approval(approval_id).status == "approved", decided.output
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")

    unchanged = JobHuman(jobs, job_id, authority=authority)  # the bill as approved: bob's decision holds
    assert unchanged.approve(pay_request()).approved

    import sqlite3 as erp_db

    with erp_db.connect(erp.db_path) as conn:  # another clerk edits the bill in the ERP
        conn.execute("UPDATE bills SET amount_cents = 800000 WHERE invoice_number = 'EDIT-1'")
    human = JobHuman(jobs, job_id, authority=authority)  # the job comes back to the payment
    request = pay_request()
    assert request.key == jobs.approval(approval_id).key  # the same bytes: only the bill changed
    with pytest.raises(Parked) as parked:
        human.approve(request)
    sent = human.gate.send_check(request.method, request.url, [(f.name, f.value) for f in request.fields])
    assert sent is not None and "was not sent" in sent
    again = jobs.approval(parked.value.approval_id)
    assert again.request is not None and (why := again.request.asked_again or "").startswith(
        "bob approved it"
    )
    assert "450.00" in why and "8000.00" in why
    listed = runner.invoke(app, ["approvals", "list"]).output
    assert f"{again.id}  pending" in listed and "[asked_again, amount_above_threshold]" in listed
    shown = runner.invoke(app, ["approvals", "show", again.id]).output
    assert f"⚠ asked again: {why}" in shown.replace("\n  ┆ ", "")  # a line wider than 80 goes on "  ┆ "
    assert authority.needs_two(authority.assess(again.request))  # judged by the new amount
    [outdated] = [e for e in authority.audit.entries() if e.action == "decision_outdated"]
    assert outdated.target == approval_id


def test_within_one_run_an_identical_payment_is_not_asked_twice_unless_the_bill_changed(
    erp: Any, erp_user: Any
) -> None:
    assert erp_user.new_bill(invoice_number="EDIT-2", amount="450.00").status_code == 303
    bill = next(b for b in erp_state_bills(erp) if b["invoice_number"] == "EDIT-2")
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url(erp.url), human, rules=load_rules())
    policy.page_fetch = lambda url: erp_user.http.get(url).text
    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill['id']}/pay",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip
    assert policy.submission(pay).outcome == "approved"
    again = policy.submission(pay)  # the same payload once more (the form, then its request)
    assert again.outcome == "allowed" and "identical payload" in again.reason and len(human.requests) == 1
    import sqlite3 as erp_db

    with erp_db.connect(erp.db_path) as conn:
        conn.execute("UPDATE bills SET amount_cents = 45000000 WHERE invoice_number = 'EDIT-2'")
    assert policy.submission(pay).outcome == "approved" and len(human.requests) == 2  # asked again
    assert human.requests[-1].looked_up["amount"] == "450000.00"


class _EditedWhileDeciding(ScriptedHuman):
    """A person at the terminal who approves paying a bill; while the prompt is open, another clerk
    edits the bill in the ERP (the first answer comes after the edit)."""

    def __init__(self, edit: Any, decisions: list[ApprovalDecision]) -> None:
        super().__init__(decisions)
        self.edit = edit

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        if not self.requests:
            self.edit()
        return super().approve(request)


def test_a_bill_raised_while_the_person_at_the_terminal_decides_is_asked_again_before_it_is_sent(
    erp: Any, erp_user: Any, tmp_path: Path
) -> None:
    """The worker reads the bill's amount, then asks; the person reads the prompt for a minute and
    approves 450.00. Meanwhile the bill became 8,000.00, and the payment sends no amount: the ERP
    would pay 8,000.00 on an approval of 450.00. The bill is read again after the approval and the
    change asked again, judged by the new amount (alone where one person may, refused where the
    two-person rule needs a second approver)."""
    import sqlite3 as erp_db

    assert erp_user.new_bill(invoice_number="EDIT-3", amount="450.00").status_code == 303
    bill = next(b for b in erp_state_bills(erp) if b["invoice_number"] == "EDIT-3")

    def set_amount(cents: int) -> None:
        with erp_db.connect(erp.db_path) as conn:
            conn.execute("UPDATE bills SET amount_cents = ? WHERE invoice_number = 'EDIT-3'", (cents,))

    pay = Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill['id']}/pay",
                     fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip
    rules = load_rules()
    alone = Authority(None, rules, home=tmp_path / "a", users_file=tmp_path / "none.yaml")
    person = _EditedWhileDeciding(lambda: set_amount(800000), [ApprovalDecision.approve()] * 2)
    policy = Policy(PolicyConfig.for_url(erp.url), TerminalApprovals(person, alone), rules=rules)
    policy.page_fetch = lambda url: erp_user.http.get(url).text
    assert policy.submission(pay).outcome == "approved"
    first, second = person.requests
    assert first.looked_up["amount"] == "450.00" and second.looked_up["amount"] == "8000.00"
    assert first.asked_again is None and (why := second.asked_again or "").startswith(
        f"{os_user()} at the terminal approved"  # as the terminal proved her, as the signed entry says
    )
    assert "450.00 USD; it is now 8000.00 USD" in why and "above" in " ".join(second.flags)
    assert "⚠ asked again: " + why in describe_request(second)

    set_amount(45000)  # where two people are needed, the raised bill cannot be approved at the terminal
    several = Authority(None, rules.model_copy(update={"two_person": "on"}), home=tmp_path / "b")
    person = _EditedWhileDeciding(lambda: set_amount(800000), [ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url(erp.url), TerminalApprovals(person, several), rules=several.rules)
    policy.page_fetch = lambda url: erp_user.http.get(url).text
    refused = policy.submission(pay)
    assert refused.outcome == "rejected" and "two people" in (refused.answer or "")
    assert len(person.requests) == 1  # the second ask never reached one person

    readings = iter(range(100, 10**6))  # a page that shows another amount on every reading
    human = ScriptedHuman([ApprovalDecision.approve()] * 9)
    fickle = Policy(PolicyConfig.for_url(erp.url), human, rules=rules)
    fickle.page_fetch = lambda url: f'<td id="bill-amount">{next(readings)}.00 USD</td>'
    refused = fickle.submission(pay)
    assert refused.outcome == "rejected" and "changed each time it was approved" in (refused.answer or "")
    assert len(human.requests) == 4  # asked, then asked again three times


def test_an_approval_of_one_job_copied_or_moved_under_another_job_is_obeyed_by_neither(
    env: dict[str, Any],
) -> None:
    """bob and carol approved ana's 8,000.00 bill in job X. Someone who can write the job database
    copies that signed row under job Y (bob's own job, reaching the same bill), or moves it there:
    the signature covers the document, which names job X, so the row is not Y's decision — Y is
    asked, nothing is sent on it, and the console's list does not show it under Y."""
    jobs, authority = env["jobs"], env["authority"]
    _, approved = _parked(jobs, "ana", _request(amount="8000.00"))
    assert (
        authority.decide(approved, "approve", Identity(name="bob", proof="token")).status == "first_approval"
    )
    assert authority.decide(approved, "approve", Identity(name="carol", proof="console")).status == "decided"
    y = jobs.submit("Enter the Northwind invoice again", submitted_by="bob", submitted_proof="token").id
    jobs.mark(y, "running", only_if=("queued",), worker="w1")
    db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))
    doc, status, key = db.execute(
        "SELECT doc, status, key FROM taskcrew_approvals WHERE id = ?", (approved,)
    ).fetchone()
    db.execute(
        "INSERT INTO taskcrew_approvals (id, job_id, status, key, doc) VALUES (?, ?, ?, ?, ?)",
        ("apr-copied", y, status, key, doc),
    )
    db.commit()
    sent = [(f.name, f.value) for f in _request(amount="8000.00").fields]
    human = JobHuman(jobs, y)
    assert [a.id for a in jobs.approvals(job_id=y)] == []  # the copy is no approval of Y's
    with pytest.raises(UnknownApproval):
        jobs.approval("apr-copied")
    assert human.gate.send_check("POST", f"{ERP_URL}/bills/new", sent) is not None
    with pytest.raises(Parked):
        human.approve(_request(amount="8000.00"))  # asked: two people must approve Y's bill
    db.execute("DELETE FROM taskcrew_approvals WHERE id = 'apr-copied'")
    db.execute("UPDATE taskcrew_approvals SET job_id = ? WHERE id = ?", (y, approved))  # moved
    db.commit()
    db.close()
    assert JobHuman(jobs, y).gate.send_check("POST", f"{ERP_URL}/bills/new", sent) is not None
    assert approved not in [a.id for a in jobs.approvals(job_id=y)]


def test_who_cancels_or_retries_is_proven_and_a_job_started_over_asks_its_approvals_again(
    env: dict[str, Any], monkeypatch: Any, tmp_path: Path
) -> None:
    """Cancel and retry are decisions too, in every surface (`Authority.act_on_job`): with the
    two-person rule on, an unproven OS user or a token of someone who left can neither cancel nor
    retry (nor reject). And bob and carol's approval of ana's 8,000.00 bill was for the run it was
    asked in: retrying the finished job starts it over, and its new run asks again instead of
    sending on the old decision."""
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _parked(jobs, "ana", _request(amount="8000.00"))
    authority.decide(approval_id, "approve", Identity(name="bob", proof="token"))
    assert (
        authority.decide(approval_id, "approve", Identity(name="carol", proof="console")).status == "decided"
    )
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    assert JobHuman(jobs, job_id).approve(_request(amount="8000.00")).approved  # the run it was asked in
    jobs.finish(job_id, "done", "saved")

    unproven = runner.invoke(app, ["jobs", "retry", job_id])  # the OS user, two-person rule on
    assert unproven.exit_code == 2 and "must be authenticated" in unproven.output, unproven.output
    users = tmp_path / "users.yaml"
    users.write_bytes(env["users"].read_bytes())
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.setenv("TASKCREW_TOKEN", _token("carol", "carol-secret-1"))
    data = yaml.safe_load(users.read_text(encoding="utf-8"))
    users.write_text(
        yaml.safe_dump({"users": [u for u in data["users"] if u["name"] != "carol"]}), encoding="utf-8"
    )  # carol left
    left = runner.invoke(app, ["jobs", "retry", job_id])
    assert left.exit_code == 2 and "no longer a user" in left.output, left.output
    assert jobs.get(job_id).status == "finished"
    other, pending = _parked(jobs, "bob", _request(amount="7000.00", invoice_number="INV-9"))
    rejected = runner.invoke(app, ["approvals", "reject", pending])
    assert rejected.exit_code != 0 and jobs.approval(pending).status == "pending", rejected.output
    assert (
        runner.invoke(app, ["jobs", "cancel", other]).exit_code == 2 and jobs.get(other).status == "waiting"
    )

    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob", "bob-secret-1"))
    retried = runner.invoke(app, ["jobs", "retry", job_id])
    assert retried.exit_code == 0 and jobs.get(job_id).status == "queued", retried.output
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    human = JobHuman(jobs, job_id)
    sent = [(f.name, f.value) for f in _request(amount="8000.00").fields]
    assert human.gate.send_check("POST", f"{ERP_URL}/bills/new", sent) is not None  # not on the old run's
    with pytest.raises(Parked):
        human.approve(_request(amount="8000.00"))  # asked again: two people, for this run
    actions = [e.action for e in authority.audit.entries()]
    assert "decision_void" in actions and "retry_refused" in actions and actions.count("retry") == 1


def test_an_answer_from_a_run_the_job_was_started_over_from_is_not_handed_to_the_new_run(
    env: dict[str, Any],
) -> None:
    """An answer is spent with the checkpoint that holds it; one the run took and then ended on (an
    empty answer stops it) is never spent. A retry that starts the finished job over voids it, as it
    voids the run's approvals: the new run's question goes to a person."""
    jobs, authority = env["jobs"], env["authority"]
    bob = Identity(name="bob", proof="token")
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).ask("Which amount is right, 95.00 or 9500.00?")
    assert authority.decide(parked.value.approval_id, "answer", bob, "95.00").status == "decided"
    assert JobHuman(jobs, job.id).ask("Which amount is right?") == "95.00"  # taken; the run ends
    jobs.finish(job.id, "done", "entered 95.00")
    authority.act_on_job(job.id, "retry", bob)
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, job.id).ask("Which amount is right?")
    assert "decision_void" in [e.action for e in authority.audit.entries()]


def test_a_send_whose_row_was_deleted_from_the_job_database_is_still_a_repeat(env: dict[str, Any]) -> None:
    """The job database's record of sends (the intent log) is what stops a resumed job sending a
    payment twice; a row deleted from it looked like a first attempt, sent at once without reading
    the system back. The signed audit log also knows what the job sent: a send it records is a
    repeat whatever the database says — read back where a rule says how, else held back."""
    from taskcrew.config import DEFAULT_SANDBOX
    from taskcrew.jobs.runner import StoreIntents
    from taskcrew.tools.intents import IntentLog, SendOutcome
    from taskcrew.tools.readback import load_rules as readback_rules
    from taskcrew.tools.readback import rules_file

    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _parked(jobs, "ana", _request(amount="8000.00"))
    authority.decide(approval_id, "approve", Identity(name="bob", proof="token"))
    authority.decide(approval_id, "approve", Identity(name="carol", proof="console"))
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    url, fields = f"{ERP_URL}/bills/new", [(f.name, f.value) for f in _request(amount="8000.00").fields]
    rules = readback_rules(rules_file(DEFAULT_SANDBOX), {"erp": ERP_URL, "intranet": ""})
    reads: list[str] = []

    def erp(page: str) -> str:  # the ERP's bills list: the bill was saved
        reads.append(page)
        return "Bills  INV-2057  8000.00  Northwind Traders  Unpaid"

    first = JobHuman(jobs, job_id).gate  # leg 1, wired as LegRunner wires it: the send recorded as it leaves
    log = IntentLog(
        StoreIntents(jobs, job_id), job_id, rules, witness=first.sent_before, last_check=first.sending
    )
    assert first.may_send("POST", url, fields) is None
    assert log.before_send("POST", url, fields, erp) is None and reads == []  # a first attempt
    log.after_send("POST", url, fields, SendOutcome(http_status=303, location="/bills/BILL-0011"))
    db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))
    db.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))
    db.commit()
    db.close()

    again = JobHuman(jobs, job_id).gate  # the next leg reaches the payment again
    assert again.may_send("POST", url, fields) is None  # still approved ...
    log = IntentLog(StoreIntents(jobs, job_id), job_id, rules, witness=again.sent_before)
    held = log.before_send("POST", url, fields, erp)  # ... but sent before: read back, not re-sent
    assert held is not None and "NOT sent again" in held and reads, held
    unruled = IntentLog(StoreIntents(jobs, job_id), job_id, [], witness=again.sent_before)
    db = sqlite3.connect(env["url"].removeprefix("sqlite:///"))
    db.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))
    db.commit()
    db.close()
    refused = unruled.before_send("POST", url, fields, erp)  # no rule to read back by: held back
    assert refused is not None and "may be in the system" in refused
    other = jobs.submit(
        "Enter the Northwind invoice into the ERP", submitted_by="ana", submitted_proof="token"
    )
    fresh = IntentLog(
        StoreIntents(jobs, other.id), other.id, [], witness=JobHuman(jobs, other.id).gate.sent_before
    )
    assert fresh.before_send("POST", url, fields, erp) is None  # another job's first attempt is one


# ---- seams between the approval surfaces: cancel/retry, auto-approve, users who left ------------
def _auto_rules_for(tmp_path: Path, monkeypatch: Any, *names: str, flagged: bool = False) -> None:
    """Rules whose auto-approve covers only ``names`` (every target)."""
    from taskcrew.approvals.rules import DEFAULT_RULES

    data = yaml.safe_load(DEFAULT_RULES.read_text(encoding="utf-8"))
    data["auto_approve"] = [{"identities": list(names), "paths": [".*"], "flagged": flagged}]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(tmp_path / "rules.yaml"))


def _without(users: Path, name: str) -> None:
    data = yaml.safe_load(users.read_text(encoding="utf-8"))
    users.write_text(
        yaml.safe_dump({"users": [u for u in data["users"] if u["name"] != name]}), encoding="utf-8"
    )


def test_a_cancel_takes_back_the_approvals_and_answers_a_retry_would_resume_with(env: dict[str, Any]) -> None:
    """bob and carol approve ana's 8,000.00 bill; carol cancels the job before it is sent (a cancel
    is how an approver takes an approval back), and ana, who may not approve it, retries it alone
    (CLI `jobs retry`, the console's Retry: both `act_on_job`). The resumed run asks two people
    again instead of sending on the decision from before the cancel; an answer given before the
    cancel is asked again too. A failed job resumes with its decisions: nobody took them back."""
    jobs, authority = env["jobs"], env["authority"]
    ana, bob = Identity(name="ana", proof="token"), Identity(name="bob", proof="token")
    carol = Identity(name="carol", proof="console")
    job_id, approval_id = _parked(jobs, "ana", _request(amount="8000.00"))
    assert authority.decide(approval_id, "approve", ana).status == "refused"
    assert authority.decide(approval_id, "approve", bob).status == "first_approval"
    assert authority.decide(approval_id, "approve", carol).status == "decided"
    authority.act_on_job(job_id, "cancel", carol)
    authority.act_on_job(job_id, "retry", ana)
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    human = JobHuman(jobs, job_id)
    sent = [(f.name, f.value) for f in _request(amount="8000.00").fields]
    assert human.gate.send_check("POST", f"{ERP_URL}/bills/new", sent) is not None
    with pytest.raises(Parked):
        human.approve(_request(amount="8000.00"))

    asked = jobs.submit("Enter the Northwind invoice", submitted_by="ana", submitted_proof="token")
    jobs.mark(asked.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, asked.id).ask("Which amount is right, 95.00 or 9500.00?")
    assert authority.decide(parked.value.approval_id, "answer", bob, "95.00").status == "decided"
    authority.act_on_job(asked.id, "cancel", bob)
    authority.act_on_job(asked.id, "retry", ana)
    jobs.mark(asked.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, asked.id).ask("Which amount is right, 95.00 or 9500.00?")

    failed_id, failed_approval = _parked(jobs, "ana", _request(amount="120.00", invoice_number="INV-7"))
    assert authority.decide(failed_approval, "approve", bob).status == "decided"
    jobs.mark(failed_id, "running", only_if=("queued",), worker="w1")
    jobs.mark(failed_id, "failed", only_if=("running",), reason="the ERP was down")
    authority.act_on_job(failed_id, "retry", ana)
    jobs.mark(failed_id, "running", only_if=("queued",), worker="w1")
    assert JobHuman(jobs, failed_id).approve(_request(amount="120.00", invoice_number="INV-7")).approved

    # a run stopped by Ctrl-C (`taskcrew run`: finished, interrupted) resumes from its checkpoint on a
    # retry, but what was approved in it is asked again: the stop took it back, as a cancel does
    stopped_id, stopped_approval = _parked(jobs, "ana", _request(amount="130.00", invoice_number="INV-8"))
    assert authority.decide(stopped_approval, "approve", bob).status == "decided"
    jobs.mark(stopped_id, "running", only_if=("queued",), worker="w1")
    jobs.save_checkpoint(stopped_id, {"plan": ["enter INV-8"]})
    jobs.finish(stopped_id, "interrupted", "stopped with Ctrl-C")
    authority.act_on_job(stopped_id, "retry", ana)
    assert jobs.checkpoint(stopped_id) is not None
    assert stopped_approval in authority.void_decisions(stopped_id)
    jobs.mark(stopped_id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, stopped_id).approve(_request(amount="130.00", invoice_number="INV-8"))


def test_a_retry_by_someone_else_borrows_no_auto_approve(
    env: dict[str, Any], tmp_path: Path, monkeypatch: Any
) -> None:
    """The rules let ana auto-approve, not bob. bob retries ana's finished --auto-approve job (the
    console's Retry): the new run does not auto-approve on ana's privilege; a person is asked. ana
    retrying her own job again auto-approves as before, and says who retried it."""
    from taskcrew.jobs import JobOptions

    _auto_rules_for(tmp_path, monkeypatch, "ana")
    jobs, authority = env["jobs"], env["authority"]
    job = jobs.submit("Enter this week's Northwind invoice", submitted_by="ana", submitted_proof="token",
                      options=JobOptions(auto_approve=True))  # fmt: skip
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    assert JobHuman(jobs, job.id, auto_approve=True).approve(_request()).approved
    jobs.finish(job.id, "done", "entered INV-2057")

    Authority(jobs).act_on_job(job.id, "retry", Identity(name="bob", proof="console"))
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked):
        JobHuman(jobs, job.id, auto_approve=True).approve(
            _request(amount="4900.00", invoice_number="INV-2099")
        )
    refused = [e for e in authority.audit.entries("auto_approve_refused") if e.target == job.id]
    assert refused and "bob" in refused[-1].payload["reason"], refused
    log = authority.audit.path  # bob's retry rewritten as ana's in the log: it no longer checks out
    log.write_text(log.read_text().replace('"who":"bob","action":"retry"', '"who":"ana","action":"retry"'))
    with pytest.raises(Parked):
        JobHuman(jobs, job.id, auto_approve=True).approve(
            _request(amount="4800.00", invoice_number="INV-2098")
        )
    assert "does not check out" in authority.audit.entries("auto_approve_refused")[-1].payload["reason"]

    jobs.mark(job.id, "waiting", only_if=("running",))
    Authority(jobs).act_on_job(job.id, "cancel", Identity(name="ana", proof="token"))
    Authority(jobs).act_on_job(job.id, "retry", Identity(name="ana", proof="token"))
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    again = JobHuman(jobs, job.id, auto_approve=True).approve(
        _request(amount="4900.00", invoice_number="INV-2099")
    )
    assert again.approved and again.basis == "auto_approve" and "submitted by ana" in (again.by or "")


def test_the_auto_approve_of_a_submitter_who_left_no_longer_holds(
    env: dict[str, Any], tmp_path: Path, monkeypatch: Any
) -> None:
    """ana's token, sessions and first approvals count for nothing once she is removed from the users
    file; so does the auto-approve the rules give her name: her queued job asks a person, and an
    auto-approval signed before she left is not obeyed (the worker's check, ``rules_refusal``)."""
    from taskcrew.jobs import JobOptions

    _auto_rules_for(tmp_path, monkeypatch, "ana")
    users = tmp_path / "users.yaml"
    users.write_bytes(env["users"].read_bytes())
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    jobs = env["jobs"]
    job = jobs.submit("Enter this week's Northwind invoice", submitted_by="ana", submitted_proof="token",
                      options=JobOptions(auto_approve=True))  # fmt: skip
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    human = JobHuman(jobs, job.id, auto_approve=True)
    assert human.approve(_request()).approved  # while she is a user
    _without(users, "ana")
    authority = Authority(jobs)
    approval = next(a for a in jobs.approvals(job_id=job.id) if a.status == "approved")
    assert "no longer a user" in (authority.rules_refusal(approval) or "")
    sent = [(f.name, f.value) for f in _request().fields]
    assert JobHuman(jobs, job.id).gate.send_check("POST", f"{ERP_URL}/bills/new", sent) is not None
    with pytest.raises(Parked):
        JobHuman(jobs, job.id, auto_approve=True).approve(_request(amount="95.00", invoice_number="INV-3"))


def test_a_password_reset_takes_back_the_auto_approve_of_jobs_submitted_or_retried_before_it(
    env: dict[str, Any], tmp_path: Path, monkeypatch: Any
) -> None:
    """ana's token is stolen and a job is submitted with it with --auto-approve; the operator resets
    her password (`console add-user ana`). Her sessions and tokens end, and so does what the stolen
    token queued: the job asks a person. The same for a retry made with bob's token before his reset.
    The password a submission was made under is signed with it: blanking it in the job database
    does not bring the privilege back, it voids the submission."""
    from taskcrew.console.auth import add_user
    from taskcrew.jobs import JobOptions
    from taskcrew.jobs.store import InvalidChange

    _auto_rules_for(tmp_path, monkeypatch, "ana", "bob")
    users = tmp_path / "users.yaml"
    users.write_bytes(env["users"].read_bytes())
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    jobs = env["jobs"]
    monkeypatch.setenv("TASKCREW_MODEL", "scripted/solver")  # the operator's models (submit checks them)
    monkeypatch.setenv("TASKCREW_VERIFIER_MODEL", "scripted/auditor")
    monkeypatch.setenv("TASKCREW_TOKEN", _token("ana", "ana-secret-1"))
    out = runner.invoke(app, ["submit", "--auto-approve", "Enter this week's Northwind invoice"])
    assert out.exit_code == 0, out.output
    job = jobs.get(out.output.strip().splitlines()[-1])
    assert job.submitted_proof == "token" and job.submitted_credential
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    assert JobHuman(jobs, job.id, auto_approve=True).approve(_request()).approved  # before the reset

    add_user(users, "ana", "a-new-password-after-the-theft")
    authority = Authority(jobs)
    approval = next(a for a in jobs.approvals(job_id=job.id) if a.status == "approved")
    assert "password was changed" in (authority.rules_refusal(approval) or "")
    with pytest.raises(Parked):
        JobHuman(jobs, job.id, auto_approve=True).approve(_request(amount="95.00", invoice_number="INV-3"))
    refused = authority.audit.entries("auto_approve_refused")[-1].payload["reason"]
    assert "submitted by ana" in refused and "password was changed" in refused, refused

    # a row whose credential is blanked (or replaced) no longer checks out as submitted
    blanked = job.model_copy(update={"submitted_credential": None})
    assert authority.submission_ok(job) and not authority.submission_ok(blanked)

    # a retry rests on the retrier's password alike
    other = jobs.submit("Enter this week's Northwind invoice", submitted_by="bob", submitted_proof="token",
                        options=JobOptions(auto_approve=True))  # fmt: skip
    jobs.mark(other.id, "running", only_if=("queued",), worker="w1")
    jobs.mark(other.id, "failed", only_if=("running",))
    bob = Identity(name="bob", proof="token", credential=credentials(users)["bob"])
    with pytest.raises(InvalidChange):  # ana's old token is refused as the one who retries
        Authority(jobs).act_on_job(
            other.id, "retry", Identity(name="ana", proof="token", credential=job.submitted_credential)
        )
    Authority(jobs).act_on_job(other.id, "retry", bob)
    jobs.mark(other.id, "running", only_if=("queued",), worker="w1")
    assert JobHuman(jobs, other.id, auto_approve=True).approve(_request(invoice_number="INV-7")).approved
    add_user(users, "bob", "bobs-new-password-now")
    with pytest.raises(Parked):
        JobHuman(jobs, other.id, auto_approve=True).approve(_request(invoice_number="INV-8"))


def test_the_terminal_does_not_trust_the_token_of_someone_who_left(
    tmp_path: Path, monkeypatch: Any, console_users: Path, capsys: Any
) -> None:
    """carol's saved token no longer identifies her once she is removed from the users file: `taskcrew
    run` acts as the OS user (and says so), and what the rules grant carol is not granted through it."""
    from taskcrew.approvals.identity import TokenStore
    from taskcrew.approvals.terminal import terminal_identity

    users = tmp_path / "users.yaml"
    users.write_bytes(console_users.read_bytes())
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    _auto_rules_for(tmp_path, monkeypatch, "carol", flagged=True)
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("carol", users))
    assert terminal_identity().name == "carol"
    carol = terminal_identity()
    _without(users, "carol")
    authority = Authority(None)
    assert authority.identity_refusal(carol) is not None
    who = terminal_identity()
    assert who.proof == "os_user" and who.name != "carol"
    assert "carol is no longer a user" in capsys.readouterr().err  # said at the terminal
    decision = TerminalApprovals(AutoApproveHuman(), authority, carol).approve(_request(amount="8000.00"))
    assert not decision.approved and "carol" not in (decision.text or "")
    entry = authority.audit.entries("terminal_reject")[-1]
    assert entry.payload["proof"] == "os_user"


def test_the_terminal_and_the_cli_show_what_a_value_hides(env: dict[str, Any]) -> None:
    """The reviewer's bidi amount on the other surfaces: the terminal prompt (``describe_request``)
    and `taskcrew approvals show/list` show "⟨U+202E⟩4,001⟨U+202C⟩", never a reordered "100,4";
    a value cannot start a line of its own (a forged field) nor hide its tail behind padding."""
    request = _request(
        amount="\u202e4,001\u202c",
        memo="ok\n  amount = 10.00",  # a line feed in a value: it would read as a field of its own
        vendor_name="Northwind Traders" + "\u00a0" * 160 + "c/o Initrode Ltd",
    )
    described = describe_request(request)
    assert "\u202e" not in described and "⟨U+202E⟩4,001⟨U+202C⟩" in described
    assert "ok⟨U+000A⟩  amount = 10.00" in described and "\n  amount = 10.00" not in described
    assert "Northwind Traders⟨160 × U+00A0⟩c/o Initrode Ltd" in described
    _job_id, approval_id = _parked(env["jobs"], "ana", request)
    shown = runner.invoke(app, ["approvals", "show", approval_id]).output
    assert "\u202e" not in shown and "\u00a0" not in shown and "⟨U+202E⟩4,001⟨U+202C⟩" in shown
    assert "risk: a value holds hidden direction/format characters" in shown
    listed = runner.invoke(app, ["approvals", "list"]).output
    assert f"{approval_id}  pending" in listed and "hidden_characters" in listed
