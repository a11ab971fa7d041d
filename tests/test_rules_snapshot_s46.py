"""A run reads the risk rules' ``excluded_fields`` one way: its request keys — the key a send is asked
and approved under, the key the send check matches, the intent row's and the signed send's, and the
fields left out of each — are made from one snapshot, its policy's (``Authority.keys_by``). Before, the
authority keyed the send check and the signed send by the rules file as it was at that moment, while
the run's policy and intent log had read it when the leg began: an edit of ``excluded_fields`` while a
leg ran made an approved send be refused (a worker's leg), or made a second bill to the same address
be held as "sent before" (``taskcrew run``). And a rejection is decided while the rules file cannot be
read: it sends nothing (stopping is always allowed).

Real parts throughout (Chromium, the demo ERP over HTTP, the job store and the signed audit log in
SQLite, the console in-process); only the models are scripted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import client_as
from fixtures_eval import scripted_workplace
from fixtures_foreground import Foreground, Person

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import DEFAULT_RULES, load_rules
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.eval.solvers import scripted_models
from taskcrew.jobs import Approval, ApprovalRequest, JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.runner import LegRunner
from taskcrew.jobs.scripted import scripted_for
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.tools.human import FieldValue
from taskcrew.tools.intents import UNRECORDED

CASES = {c.id: c for c in load_cases()}
# the demo ERP's per-page token rule, as the packaged rules say it, and the same rule narrowed to a
# port no ERP of these tests listens on: the token is then part of every key
CSRF_RULE = "  - hosts: ['127.0.0.1:*', 'localhost:*']\n    fields: ['csrf_token']"
NARROWED = "  - hosts: ['127.0.0.1:1']\n    fields: ['csrf_token']"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[dict[str, Any]]:
    """A rules file of the operator's (the packaged one, copied), a job store and an approvals folder."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(DEFAULT_RULES.read_text(encoding="utf-8"), encoding="utf-8")
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
    """The operator edits the rules file in place (the runs go on)."""
    text = rules.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    rules.write_text(text.replace(old, new), encoding="utf-8")


def _signed(jobs: Jobs, action: str, job_id: str) -> list[Any]:
    audit = Authority(jobs, load_rules(DEFAULT_RULES)).audit  # (fixed rules: to read the audit log)
    return [e for e in audit.signed(action) if job_id in (e.target, e.payload.get("job_id"))]


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory, eval_knowledge_seed: Path) -> Iterator[Workplace]:
    with scripted_workplace(tmp_path_factory.mktemp("snapshot-place"), eval_knowledge_seed) as workplace:
        yield workplace


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_an_exclusion_narrowed_while_a_worker_leg_runs_does_not_refuse_the_send_it_approved(
    env: dict[str, Any], place: Workplace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ana's --auto-approve job pays Hooli's bill in one real leg; as the leg asks for the payment, the
    operator narrows the demo ERP's csrf_token rule. The payment is approved under the key the leg's
    policy made (the token left out) and sent: before, the send check keyed it again by the edited
    file (the token in), found no approval of that key, and refused it."""
    jobs, rules = env["jobs"], env["rules"]
    place.erp_server.reset()
    original = JobHuman.approve

    def operator_edits_first(self: JobHuman, request: ApprovalRequest) -> Any:
        if CSRF_RULE in rules.read_text(encoding="utf-8"):
            _edit(rules, CSRF_RULE, NARROWED)
        return original(self, request)

    monkeypatch.setattr(JobHuman, "approve", operator_edits_first)
    case = CASES["mark-hooli-paid"]
    options = JobOptions(worker_model="scripted/solver", verifier_model="scripted/auditor", auto_approve=True)
    job = jobs.submit(case.task, submitted_by="ana", submitted_proof="token", options=options)
    outcome = LegRunner(jobs, place, "w1", scripted=scripted_for).run_leg(job.id, jobs.leg(job.id))
    assert NARROWED in rules.read_text(encoding="utf-8")  # the edit landed while the leg ran
    refused = _signed(jobs, "send_refused", job.id)
    assert refused == [], [e.payload for e in refused]
    bill = next(b for b in fetch_state(place.erp_url).bills if b.invoice_number == "HCS-2026-09")
    assert bill.status == "paid", (outcome, jobs.get(job.id).reason)
    [approved] = jobs.approvals("approved", job_id=job.id)
    [send] = _signed(jobs, "send", job.id)  # the key it was approved under, and what was left out of it
    assert (send.payload["key"], send.payload["excluded"]) == (approved.key, ["csrf_token"])


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_an_exclusion_narrowed_while_taskcrew_run_runs_does_not_hold_the_next_bill_as_sent(
    env: dict[str, Any], tmp_path: Path, erp: ErpServer
) -> None:
    """`taskcrew run` enters Vandelay's and Initech's bills (two sends to /bills/new); while the person
    at the terminal is asked about the first, the operator narrows the csrf_token rule. Both bills are
    saved: before, the first send was signed under a key made by the edited file and with no field
    left out, so the second bill (the same address, a token the run's rules leave out) read as "sent
    before" and was held back, never sent."""
    rules = env["rules"]

    def at_prompt(request: ApprovalRequest, asked: int) -> None:
        if asked == 1:
            _edit(rules, CSRF_RULE, NARROWED)

    case = CASES["two-invoices"]
    models = scripted_models(case)
    person = Person(at_prompt)
    with Foreground(erp.url, tmp_path, person) as place:
        result = place.taskcrew_run(case.task, models("solver"), models("auditor"))
    saved = {b.invoice_number for b in erp.state().bills}
    jobs = env["jobs"]
    [job] = jobs.list()
    held = [i for i in jobs.intents(job.id) if i.result == UNRECORDED]
    assert held == [], [(i.target, i.result) for i in held]
    assert {"VI-3390", "INI-7781"} <= saved, (result.outcome, result.reason)
    assert len(person.asked) == 2 and all(r.url.endswith("/bills/new") for r in person.asked)
    sends = _signed(jobs, "send", job.id)
    assert [s.payload["excluded"] for s in sends] == [["csrf_token"], ["csrf_token"]]
    assert [s.payload["key"] for s in sends] == [r.key for r in person.asked]  # as asked and approved


def _parked(jobs: Jobs) -> Approval:
    """ana's job, parked on entering a bill."""
    job = jobs.submit("Enter invoice INV-1", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    fields = {"vendor": "Northwind Traders", "invoice_number": "INV-1", "amount": "120.00", "currency": "USD"}
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return jobs.approval(parked.value.approval_id)


def _decide(client: Any, approval_id: str, action: str, csrf: str) -> str:
    sent = client.post(
        f"/approvals/{approval_id}/decide",
        data={"csrf": csrf, "action": action, "text": "not this one"},
        headers={"origin": "http://testserver"},
    )
    assert sent.status_code == 303, sent.text
    return str(sent.headers["location"])


def test_a_rejection_is_decided_while_the_rules_file_cannot_be_read(
    env: dict[str, Any], tmp_path: Path
) -> None:
    """The rules file is broken while the console runs: an approval is not decided by older rules
    (refused, saying why), but bob's rejection is decided and signed: it sends nothing, and stopping
    is always allowed. Before, the rejection was refused too, until someone fixed the file."""
    jobs, rules = env["jobs"], env["rules"]
    bob = client_as("bob", jobs, tmp_path / "c", env["users"], risk_rules=rules)
    one = _parked(jobs)
    page = bob.get(f"/approvals/{one.id}").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    _edit(rules, "bulk_allowed: true", "bulk_allowed: maybe")  # a typo: the file cannot be validated
    _decide(bob, one.id, "approve", csrf)
    assert jobs.approval(one.id).status == "pending"  # never approved by the rules read before
    _decide(bob, one.id, "reject", csrf)
    stored = jobs.approval(one.id)
    assert (stored.status, stored.decided_by) == ("rejected", "bob"), stored
    [entry] = _signed(jobs, "reject", one.job_id)
    assert entry.who == "bob" and entry.payload["rules"] is None
    assert f"The risk rules {rules} cannot be used: bulk_allowed" in entry.payload["rules_unreadable"]
    [refused] = _signed(jobs, "approve_refused", one.id)
    assert "Refused, nothing was decided" in refused.payload["reason"]


def test_what_a_person_is_told_was_left_out_of_the_key_is_the_legs_snapshot(env: dict[str, Any]) -> None:
    """The fields a parked request says were left out of its key (``ApprovalRequest.excluded``, shown
    to the approver) are those the leg's key was made without: its snapshot (``Authority.keys_by``),
    not the rules file as edited since the leg began (before, the key left the token out while the
    request told the approver it was part of it)."""
    from taskcrew.approvals.rules import RulesInForce

    jobs, rules = env["jobs"], env["rules"]
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    authority = Authority(jobs, RulesInForce(rules)).keys_by(load_rules(rules))  # the leg's snapshot
    _edit(rules, CSRF_RULE, NARROWED)  # the operator narrows the rule as the leg runs
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name="invoice_number", value="INV-7"), FieldValue(name="csrf_token", value="t1")],
    )
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id, authority=authority).approve(request)
    stored = jobs.approval(parked.value.approval_id)
    assert stored.request is not None and set(stored.request.excluded) == {"csrf_token"}
    key, left = authority.keyed("POST", request.url, [("invoice_number", "INV-7"), ("csrf_token", "t1")])
    assert stored.key == key and left == ["csrf_token"]
