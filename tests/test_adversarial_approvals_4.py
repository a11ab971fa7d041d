"""Fourth review of the approval authority (a hostile page on an allowed host, a host whose clock is off):

1. whom a payment pays is read from the record it changes (the page the rules read its amount from),
   and only when it was sent from that record's own page: a form on another page that posts to a
   bill's pay address shows that page's vendor beside another bill's amount no more; it is flagged
   "payee unclear" on every surface and never approved in bulk;
2. an approval's deadline is judged by the job database's clock, never by the deciding host's: it is
   stamped by it, expires by it, a decision given past it is refused as expired, and the worker does
   not obey a decision the signed audit log says was given past it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from typer.testing import CliRunner

import taskcrew.jobs.store as store_mod
from taskcrew.approvals import seals
from taskcrew.approvals.authority import Authority, bulk_refusal
from taskcrew.approvals.identity import Identity
from taskcrew.approvals.rules import load_rules
from taskcrew.cli import app
from taskcrew.console.worklist import work_item
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import utcnow as real_utcnow
from taskcrew.jobs.store import _put_approval
from taskcrew.mock_erp import fetch_state
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, RecordState, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, Submission

BOB = Identity(name="bob", proof="console")
CAROL = Identity(name="carol", proof="token")
runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Jobs, Authority]]:
    from taskcrew.console.auth import add_user

    users = tmp_path / "users.yaml"
    for name in ("ana", "bob", "carol"):
        add_user(users, name, f"{name}-secret-1")
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    yield jobs, Authority(jobs, users_file=users)
    jobs.close()


# ---- 1: the payee shown is the record's the payment changes ----------------------------------------
class _Intranet(BaseHTTPRequestHandler):
    pages: ClassVar[dict[str, str]] = {}

    def do_GET(self) -> None:
        body = self.pages.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(f"<!doctype html><html><body>{body or 'not found'}</body></html>".encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def intranet() -> Iterator[tuple[str, dict[str, str]]]:
    """Another system on an allowed host: its pages are whatever it (or whoever edits it) serves."""
    pages: ClassVar[dict[str, str]] = {}
    handler = type("Pages", (_Intranet,), {"pages": pages})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", pages
    server.shutdown()


def _payment_from(
    policy: Policy, human: ScriptedHuman, bill_url: str, page_url: str, paid_on: str = "2026-12-05"
) -> ApprovalRequest:
    pay = Submission(origin="form", method="POST", url=f"{bill_url}/pay", page_url=page_url,
                     fields=[FieldValue(name="paid_on", value=paid_on)])  # fmt: skip
    policy.submission(pay)
    return human.requests[-1]


def _parked(jobs: Jobs, request: ApprovalRequest, task: str) -> str:
    job = jobs.submit(task, submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return parked.value.approval_id


@pytest.fixture
def world(env: tuple[Jobs, Authority], erp: Any, erp_user: Any, intranet: tuple[str, dict[str, str]]) -> Any:
    """The ERP over HTTP (two unpaid bills of different vendors) and an intranet page about one of
    them whose form posts to the other's pay address."""
    jobs, authority = env
    unpaid = [b for b in fetch_state(erp.url).bills if b.status == "unpaid"]
    shown, paid = next((a, b) for a in unpaid for b in unpaid if a.vendor != b.vendor)
    base, pages = intranet
    pages["/ap/pay"] = (
        f"<h1>Pay the {shown.vendor} invoice</h1><dl><dt>Vendor</dt><dd>{shown.vendor}</dd>"
        f"<dt>Invoice</dt><dd>{shown.invoice_number}</dd><dt>Amount</dt><dd>{paid.amount} {paid.currency}</dd></dl>"
        f"<form method=post action='{erp.url}/bills/{paid.id}/pay'><input type=hidden name=paid_on "
        "value=2026-12-05><button>Pay</button></form>"
    )

    def fetch(url: str) -> str | None:  # the worker's session: the ERP's login cookie, any allowed page
        response = erp_user.http.get(url) if url.startswith(erp.url) else httpx.get(url)
        return response.text if response.status_code == 200 else None

    human = ScriptedHuman([ApprovalDecision.reject("looking")] * 4)
    policy = Policy(PolicyConfig.for_url(erp.url), human, rules=load_rules())
    policy.page_fetch = fetch
    return jobs, authority, policy, human, f"{erp.url}/bills/{paid.id}", f"{base}/ap/pay", shown, paid


def test_a_payment_sent_from_another_page_shows_the_bills_own_payee_flagged_and_never_in_bulk(
    world: Any,
) -> None:
    jobs, authority, policy, human, bill, other_page, shown, paid = world
    requests = [_payment_from(policy, human, bill, other_page) for _ in range(2)]
    assert requests[0].record is not None and requests[0].record.page == bill  # the "before": the bill's
    ids = [_parked(jobs, r, f"Pay the {shown.vendor} invoice {shown.invoice_number}") for r in requests]

    view = authority.view(jobs.approval(ids[0]))
    assert view.payee.names == [paid.vendor]  # whom it pays: the bill's vendor, never the page's
    item = work_item(view, authority.rules)
    assert item.vendor == paid.vendor and shown.vendor not in item.vendor
    flag = next(f for f in view.assessment.flags if f.rule == "unclear_payee")
    assert f"the page this was sent from ({other_page}) is not the record it changes ({bill})" in flag.message
    assert not flag.second_approver and "unclear_payee" in (bulk_refusal(view) or "")
    (refused,) = authority.bulk_approve(ids, BOB)
    assert refused.status == "refused" and "is not the record it changes" in refused.message
    assert all(jobs.approval(i).status == "pending" for i in ids)
    shown_cli = runner.invoke(app, ["approvals", "show", ids[0]])
    assert shown_cli.exit_code == 0, shown_cli.output
    assert "risk: the page this was sent from" in " ".join(shown_cli.output.split())
    listed = runner.invoke(app, ["approvals", "list"]).output
    assert "unclear_payee" in listed

    # the same payment sent from the bill's own page: its vendor, no flag, approvable in bulk
    own = [_payment_from(policy, human, bill, bill, paid_on=day) for day in ("2026-12-06", "2026-12-06")]
    mine = [_parked(jobs, r, f"Pay {paid.id}") for r in own]
    view = authority.view(jobs.approval(mine[0]))
    assert view.payee.names == [paid.vendor] and view.payee.from_record and not view.payee.unclear
    assert bulk_refusal(view) is None


def test_a_request_whose_record_was_read_from_the_forms_page_shows_no_payee_of_that_page(
    env: tuple[Jobs, Authority],
) -> None:
    """A request asked before the record was read from the record's own page (parked by an earlier
    version): the page it holds is not the bill's, so no payee is read from it; it is flagged."""
    jobs, authority = env
    erp, page = "http://127.0.0.1:8800", "http://127.0.0.1:8801/ap/pay"
    request = ApprovalRequest(
        kind="form_submission", method="POST", url=f"{erp}/bills/BILL-0009/pay", page_url=page,
        fields=[FieldValue(name="paid_on", value="2026-12-05")],
        looked_up={"amount": "450.00", "currency": "USD", "source": f"{erp}/bills/BILL-0009"},
        record=RecordState(page=page, values={"Vendor": "Northwind Traders", "Amount": "450.00 USD"}),
    )  # fmt: skip
    view = authority.view(jobs.approval(_parked(jobs, request, "Pay the Northwind invoice")))
    assert view.payee.names == [] and view.payee.unclear
    assert "not the record it changes" in (bulk_refusal(view) or "")
    flag = next(f for f in view.assessment.flags if f.rule == "unclear_payee")
    assert "whom it pays is not known" in flag.message


def test_the_terminal_shows_the_unclear_payee_and_auto_approve_covers_it_on_no_surface(
    world: Any,
) -> None:
    """The same payment at `taskcrew run`'s prompt: the person is shown the flag every other surface
    shows (it was only the risk rules' there), and `--auto-approve` covers it nowhere — not at the
    terminal, not for a worker's job — whatever a rule lets auto-approve: nobody would look at it."""
    from taskcrew.approvals.terminal import TerminalApprovals
    from taskcrew.tools.human import AutoApproveHuman

    jobs, authority, policy, human, bill, other_page, _shown, _paid = world
    request = _payment_from(policy, human, bill, other_page)
    asked = ScriptedHuman([ApprovalDecision.reject("checking")])
    TerminalApprovals(asked, authority, Identity(name="ana", proof="token")).approve(request)
    assert any("not the record it changes" in flag for flag in asked.requests[-1].flags), asked.requests[-1]

    auto = TerminalApprovals(AutoApproveHuman(), authority, Identity(name="ana", proof="token"))
    decision = auto.approve(request)
    assert not decision.approved and "--auto-approve does not cover it" in (decision.text or ""), decision

    job = jobs.submit("Pay the invoice", submitted_by="ana", submitted_proof="token")
    refusal = authority.auto_approve_refusal(jobs.get(job.id), request)
    assert refusal is not None and "unclear_payee" in refusal, refusal
    own_page = _payment_from(policy, human, bill, bill)  # from the bill's own page: nothing to look at
    assert authority.auto_approve_refusal(jobs.get(job.id), own_page) is None


# ---- 2: deadlines by the job database's clock ----------------------------------------------------
def _request() -> ApprovalRequest:
    fields = {"csrf_token": "t", "vendor_id": "3", "invoice_number": "INV-1", "amount": "120.00"}
    return ApprovalRequest(kind="form_submission", method="POST", url="http://127.0.0.1:8800/bills/new",
                           fields=[FieldValue(name=k, value=v) for k, v in fields.items()])  # fmt: skip


def _clock_off(monkeypatch: pytest.MonkeyPatch, by: timedelta) -> Callable[[], None]:
    """This process's clock ``by`` off (the database's is not); returns what sets it right."""
    monkeypatch.setattr(store_mod, "utcnow", lambda: real_utcnow() + by)
    return lambda: monkeypatch.setattr(store_mod, "utcnow", real_utcnow)


def _waiting(jobs: Jobs, expires_in: timedelta) -> tuple[str, str]:
    job = jobs.submit("Enter INV-1", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id, expires_in=expires_in).approve(_request())
    jobs.mark(job.id, "waiting", only_if=("running",))
    return job.id, parked.value.approval_id


def test_a_deadline_is_stamped_and_expired_by_the_job_databases_clock(
    env: tuple[Jobs, Authority], monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs, _ = env
    right = _clock_off(monkeypatch, timedelta(minutes=-10))  # the worker's clock lags 10 minutes
    _, approval_id = _waiting(jobs, timedelta(hours=1))
    right()
    deadline = jobs.approval(approval_id).expires_at
    assert deadline is not None and abs(deadline - (jobs.db_now() + timedelta(hours=1))) < timedelta(
        minutes=1
    )
    _clock_off(monkeypatch, timedelta(minutes=30))  # a host 30 minutes ahead does not expire it early
    _, soon = _waiting(jobs, timedelta(minutes=20))
    assert jobs.expire_due() == [] and jobs.approval(soon).status == "pending"


def test_a_decision_past_the_deadline_by_the_database_clock_is_refused_as_expired(
    env: tuple[Jobs, Authority], monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs, authority = env
    job_id, approval_id = _waiting(jobs, timedelta(seconds=1))
    deadline = jobs.approval(approval_id).expires_at
    assert deadline is not None
    while jobs.db_now() <= deadline:
        time.sleep(0.2)
    _clock_off(monkeypatch, timedelta(minutes=-10))  # the console host lags 10 minutes
    result = authority.decide(approval_id, "approve", BOB)
    assert result.status == "refused", result.message
    assert "expired unanswered" in result.message and "job database's clock" in result.message
    assert "Submit the task again" in result.message
    approval = jobs.approval(approval_id)
    assert approval.status == "expired" and approval.decision is None
    assert jobs.get(job_id).outcome == "rejected"


def test_the_worker_does_not_obey_a_decision_the_signed_log_says_came_after_the_deadline(
    env: tuple[Jobs, Authority],
) -> None:
    """A decision recorded by a process that judged the deadline by its own clock (an older version
    on a lagging host): signed, its job database time edited to look in time; the signed audit log
    says when it was given, and the worker asks again instead of sending."""
    jobs, authority = env
    job_id, approval_id = _waiting(jobs, timedelta(seconds=30))
    approval = jobs.approval(approval_id)
    assert approval.expires_at is not None
    approval.decision = ApprovalDecision(outcome="approve", by="bob", basis="person")
    approval.status, approval.decided_by = "approved", "bob"
    approval.decided_at = approval.expires_at - timedelta(seconds=5)  # not signed: looks in time
    approval.signature = authority.keys.sign(seals.decision(approval))
    with jobs._tx() as conn:
        assert _put_approval(conn, approval, was="pending")
    given = (approval.expires_at + timedelta(minutes=3)).isoformat()  # by the database's clock, signed
    authority.audit.append(
        "bob", "approve", approval_id, {"job_id": job_id, "key": approval.key, "decided_at": given}
    )
    assert authority.decision_ok(jobs.approval(approval_id))
    jobs.mark(job_id, "running", only_if=("waiting",), worker="w1")
    with pytest.raises(Parked):  # asked again: nothing is sent on it
        JobHuman(jobs, job_id).approve(_request())
    late = [e for e in authority.audit.entries("decision_late") if e.target == approval_id]
    assert late and "too late" in late[0].payload["reason"]
