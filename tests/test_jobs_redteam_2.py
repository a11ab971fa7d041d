"""Payments a durable job must not send: after a cancel or a takeover took the job from the leg about
to send it, and again while an earlier attempt whose answer never came may still land (a worker
killed, stopped or frozen mid-send). Real Chromium, the demo ERP over HTTP behind a real proxy that
holds chosen requests until the test releases them (events, never sleeps), real SQLite job stores,
real worker processes; only the models are scripted."""

from __future__ import annotations

import contextlib
import http.client
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fixtures_erp import ErpUser
from fixtures_jobs import SCRIPTED, Workers

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.config import DEFAULT_SANDBOX, WorkplaceSettings
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, RunState, Verdict
from taskcrew.crew.outcome import decide, gather
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.models import load_cases
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman
from taskcrew.jobs.runner import LegRunner, StoreIntents
from taskcrew.jobs.scripted import scripted_for
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import (
    ApprovalDecision,
    ApprovalRequest,
    AutoApproveHuman,
    FieldValue,
    ScriptedHuman,
)
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.policy import Policy, PolicyConfig
from taskcrew.tools.readback import ReadBackRules, load_rules
from taskcrew.tools.submissions import SubmissionResult

HOOLI = next(c for c in load_cases() if c.id == "mark-hooli-paid").task  # pays BILL-0005
PAY_HOOLI = "/bills/BILL-0005/pay"
BILL, PAID_ON = "BILL-0004", "2026-10-02"  # unpaid in the seed
BOB = Identity(name="bob", proof="console")


@dataclass
class Hold:
    method: str
    path: str
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    forwarded: threading.Event = field(default_factory=threading.Event)


class HoldingProxy:
    """A reverse proxy in front of the ERP that holds the next request to a chosen path until the
    test releases it: a request on its way, however long the test needs."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.seen: list[tuple[str, str]] = []
        self.holds: list[Hold] = []  # waiting for their request
        self.made: list[Hold] = []  # every one (released when the test ends)
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hold = proxy._arrived(self.command, self.path)
                if hold is not None:
                    hold.arrived.set()
                    hold.release.wait(300)
                upstream = http.client.HTTPConnection(*proxy.upstream, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                upstream.close()
                if hold is not None:
                    hold.forwarded.set()
                with contextlib.suppress(OSError):  # its browser may be gone (a killed worker)
                    self.send_response(answer.status)
                    for name, value in answer.getheaders():
                        if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            do_GET = do_POST = _relay

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def _arrived(self, method: str, path: str) -> Hold | None:
        with self._lock:
            self.seen.append((method, path))
            hold = next((h for h in self.holds if h.method == method and h.path == path.split("?")[0]), None)
            if hold is not None:
                self.holds.remove(hold)
            return hold

    def hold(self, method: str, path: str) -> Hold:
        with self._lock:
            self.made.append(Hold(method, path))
            self.holds.append(self.made[-1])
            return self.made[-1]

    def count(self, method: str, path: str) -> int:
        with self._lock:
            return sum(1 for m, p in self.seen if m == method and p.split("?")[0] == path)


@pytest.fixture
def proxy(erp: ErpServer) -> Iterator[HoldingProxy]:
    held = HoldingProxy(erp.url)
    yield held
    for hold in held.made:  # nothing is left waiting
        hold.release.set()
    held.server.shutdown()
    held.server.server_close()


def _paid(erp: ErpServer, bill_id: str) -> list[str]:
    return [p.paid_on for p in erp.state().payments if p.bill_id == bill_id]


# ---- 1: a leg that lost its job sends nothing, whatever its heartbeat has not noticed yet ----------


@pytest.fixture
def place(
    proxy: HoldingProxy, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Workplace]:
    """A worker's workplace whose ERP is reached through the proxy."""
    monkeypatch.setenv("ERP_USERNAME", "demo")
    monkeypatch.setenv("ERP_PASSWORD", "demo123")
    settings = WorkplaceSettings(
        erp_url=proxy.url,
        intranet_url=None,
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp_path / "runs",
        use_knowledge=False,
        chaos=False,
    )
    with Workplace(settings, AutoApproveHuman()) as workplace:
        yield workplace


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("taken", ["cancelled", "taken over"])
def test_a_leg_whose_job_was_cancelled_or_taken_over_after_the_approval_does_not_pay(
    place: Workplace, proxy: HoldingProxy, erp: ErpServer, tmp_path: Path, taken: str
) -> None:
    """bob approves paying BILL-0005; the resumed leg opens the bill (held on its way) while the job is
    cancelled — or taken over by another worker — and the bill is then shown to it. Its heartbeat has
    not noticed (here it never does): the payment must not leave. Before, it was sent 0.09-1.2 s
    after the cancel, the job read `cancelled` and the approval stayed approved."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit(HOOLI, submitted_by="ana", options=JobOptions(**SCRIPTED))
    runner = LegRunner(jobs, place, "w1", scripted=scripted_for, heartbeat_s=3600)
    assert runner.run_leg(job.id, 0) == "waiting"
    [approval] = jobs.approvals("pending", job_id=job.id)
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    bill_page = proxy.hold("GET", "/bills/BILL-0005")
    ended: list[str] = []
    leg = threading.Thread(target=lambda: ended.append(runner.run_leg(job.id, jobs.leg(job.id))))
    leg.start()
    try:
        assert bill_page.arrived.wait(200), "the resumed leg never opened the bill"
        if taken == "cancelled":
            authority.act_on_job(job.id, "cancel", BOB)
        else:
            assert jobs.take_over(job.id, "w1") is not None
    finally:
        bill_page.release.set()
        leg.join(300)
    assert ended == ["stopped"], ended  # it stopped where it would have asked or sent
    assert proxy.count("POST", PAY_HOOLI) == 0 and _paid(erp, "BILL-0005") == []
    assert [a.id for a in jobs.approvals(job_id=job.id)] == [approval.id]  # nothing parked after it
    if taken == "cancelled":  # taken back at once, signed: nothing may use it any more
        assert jobs.get(job.id).status == "cancelled"
        assert approval.id in authority.void_decisions(job.id)
        assert JobHuman(jobs, job.id).gate.decision(approval.key) is None
    else:
        assert jobs.get(job.id).status == "queued"
    jobs.close()


def test_the_last_check_before_a_send_reads_the_job_store(tmp_path: Path, isolated_home: Path) -> None:
    """Approved, about to leave: sent only while the job still runs on this worker and this leg."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana")
    url, fields = "http://127.0.0.1:9/bills/BILL-0004/pay", [("paid_on", PAID_ON)]
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[FieldValue(name=n, value=v) for n, v in fields],
        key=authority.key_of("POST", url, fields),
    )
    approval = jobs.park(job.id, kind="approval", key=request.key, request=request)
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", 0)
    assert gate.send_check("POST", url, fields) is None
    assert jobs.take_over(job.id, "w1") is not None  # its heartbeat went stale: a new leg has the job
    refusal = gate.send_check("POST", url, fields)
    assert refusal is not None and "no longer this leg's (queued, leg 1" in refusal, refusal
    jobs.mark(job.id, "running", only_if=("queued",), leg=1, worker="w1")  # the same worker id, again
    assert gate.send_check("POST", url, fields) is not None  # still not leg 0's
    refused = [e for e in authority.audit.entries("send_refused") if e.target == job.id]
    assert len(refused) == 2 and "no longer this leg's" in refused[0].payload["reason"]
    jobs.close()


@pytest.mark.parametrize("taken", ["cancelled", "taken over", "handed back"])
def test_a_leg_check_reads_the_job_row_once_and_still_stops_a_leg_that_lost_its_job(
    tmp_path: Path, isolated_home: Path, taken: str
) -> None:
    """The job row is read once a leg check (its job and its leg, together), once a heartbeat (the
    beat's own read judges the leg), and once for the gate's leg check of a send: a job cancelled,
    taken over or handed back meanwhile still sends nothing, and its heartbeat halts the leg."""
    import sqlalchemy as sa

    from taskcrew.approvals.worker import leg_refusal_of

    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    authority = Authority(jobs)
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana")
    url, fields = "http://127.0.0.1:9/bills/BILL-0004/pay", [("paid_on", PAID_ON)]
    key = authority.key_of("POST", url, fields)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[FieldValue(name=n, value=v) for n, v in fields],
        key=key,
    )
    approval = jobs.park(job.id, kind="approval", key=key, request=request)
    assert authority.decide(approval.id, "approve", BOB).status == "decided"
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", 0)
    reads: list[str] = []

    def counted(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().lower().startswith("select") and "from taskcrew_jobs" in statement.lower():
            reads.append(statement)

    sa.event.listen(jobs.engine, "before_cursor_execute", counted)

    def read(check: Any) -> tuple[Any, int]:
        reads.clear()
        said = check()
        return said, len(reads)

    assert read(gate.leg_refusal) == (None, 1)  # the intent log's last check
    assert read(lambda: leg_refusal_of(authority, *jobs.heartbeat(job.id, "w1"), "w1", 0)) == (None, 1)
    sent, n = read(lambda: gate.send_check("POST", url, fields))
    assert sent is None and n <= 2, n  # the leg once (and the rules' look at the submitter)

    if taken == "cancelled":
        authority.act_on_job(job.id, "cancel", BOB)
    elif taken == "taken over":
        assert jobs.take_over(job.id, "w1") is not None
        jobs.mark(job.id, "running", only_if=("queued",), leg=1, worker="w1")  # the same id, a newer leg
    else:
        assert jobs.hand_back(job.id, 0, "w1", "stopping", leg_ends=True) is not None
    gone, n = read(gate.leg_refusal)
    assert gone is not None and "no longer this leg's" in gone and n == 1, (gone, n)
    beat, n = read(lambda: leg_refusal_of(authority, *jobs.heartbeat(job.id, "w1"), "w1", 0))
    assert beat == gone and n == 1, (beat, n)
    refusal, n = read(lambda: gate.send_check("POST", url, fields))
    assert refusal is not None and "no longer this leg's" in refusal and n == 1, (refusal, n)
    if taken == "cancelled":
        assert "cancelled by bob" in refusal
    sends = [e for e in authority.audit.entries("send") if e.payload.get("job_id") == job.id]
    assert len(sends) == 1  # the one before the job was lost
    jobs.close()


def test_a_cancel_that_lands_while_a_repeat_is_read_back_sends_nothing(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser, isolated_home: Path
) -> None:
    """The job store is read once more after the read-back, the last thing before a repeat leaves."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Mark BILL-0004 paid on 2026-10-02", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    gate = JobHuman(jobs, job.id).gate
    gate.holder = ("w1", jobs.leg(job.id))
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    log = IntentLog(StoreIntents(jobs, job.id), job.id, rules, last_check=gate.leg_refusal)
    url, fields = f"{erp.url}/bills/{BILL}/pay", [("csrf_token", "t1"), ("paid_on", PAID_ON)]
    assert log.before_send("POST", url, fields, lambda page: None) is None
    log.after_send("POST", url, fields, SendOutcome(http_status=422))  # refused: may be sent again

    def read_back(page: str) -> str | None:  # the cancel commits while the read-back is on its way
        Authority(jobs).act_on_job(job.id, "cancel", BOB)
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    refusal = log.before_send("POST", url, fields, read_back)
    assert refusal is not None and "was not sent" in refusal and "cancelled by bob" in refusal, refusal
    statuses = sorted((i.status, i.result or "") for i in jobs.intents(job.id))
    assert [s for s, _ in statuses] == ["not_applied", "not_applied"]
    assert any(r.startswith("not sent: job") for _, r in statuses), statuses
    jobs.close()


# ---- 2: an attempt whose answer never came is not sent again on a read-back alone -----------------


@pytest.fixture
def workers(tmp_path: Path, erp: ErpServer, isolated_home: Path) -> Iterator[Workers]:
    w = Workers(tmp_path, erp)
    yield w
    for proc in w.procs:
        w.kill(proc)
    w.jobs.close()


def _start(workers: Workers, proxy: HoldingProxy, worker_id: str) -> None:
    import subprocess

    command = workers.command(worker_id)
    command[command.index("--erp-url") + 1] = proxy.url  # the ERP through the proxy
    workers.procs.append(
        subprocess.Popen(
            command,
            env=workers.env,
            stdout=workers.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    )


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_payment_in_flight_when_its_worker_died_is_not_paid_again_and_the_job_says_it_may_have(
    workers: Workers, proxy: HoldingProxy, erp: ErpServer
) -> None:
    """An --auto-approve job's payment is on its way (held) when its worker is killed. The worker
    that takes the job over reads the bill back: not paid yet. Before, it paid again at once, the
    first request landed too, the second was refused ("already paid"), and the job ended "this run
    changed nothing". Now only a person may send it again, told that the first may still apply;
    --auto-approve does not cover that. The first lands; the person approves; the job ends `done`,
    saying a payment with no clear answer may be saved, and the bill was paid once."""
    job = workers.jobs.submit(HOOLI, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    first = proxy.hold("POST", PAY_HOOLI)
    _start(workers, proxy, "worker-a")
    workers.wait_for("the payment to be on its way", first.arrived.is_set, timeout=300)
    workers.kill(workers.procs[0])  # SIGKILL, worker and its Chromium: nobody will read the answer
    _start(workers, proxy, "worker-b")  # takes the job over once worker-a's beat is stale
    workers.wait_for(
        "the next leg to park, or to pay again",
        lambda: workers.jobs.get(job.id).status == "waiting" or proxy.count("POST", PAY_HOOLI) > 1,
        timeout=300,
    )
    assert proxy.count("POST", PAY_HOOLI) == 1, "paid again on a read-back alone"
    [asked] = workers.jobs.approvals("pending", job_id=job.id)
    assert asked.key.startswith("again-") and asked.request is not None
    assert "MAY STILL APPLY" in (asked.request.asked_again or ""), asked.request.asked_again
    authority = Authority(workers.jobs)
    refused = [e for e in authority.audit.entries("auto_approve_refused") if e.target == job.id]
    assert refused and "earlier attempt" in refused[-1].payload["reason"], refused
    first.release.set()  # the first request lands: the bill is paid
    workers.wait_for("the first payment to land", first.forwarded.is_set)
    assert _paid(erp, "BILL-0005") == ["2026-10-02"]
    assert authority.decide(asked.id, "approve", BOB).status == "decided"
    workers.wait_for("the job to end", workers.job_in(job, "finished", "failed"), timeout=300)
    done = workers.jobs.get(job.id)
    assert (done.status, done.outcome) == ("finished", "done"), done.reason
    assert "no clear answer (may be saved)" in done.answer and "changed nothing" not in done.reason
    assert proxy.count("POST", PAY_HOOLI) == 1 and _paid(erp, "BILL-0005") == ["2026-10-02"]
    assert [i.status for i in workers.jobs.intents(job.id)] == ["recorded"]  # the first attempt, kept


def _pay_bill_0004(tmp_path: Path, erp: ErpServer, erp_user: ErpUser) -> tuple[Jobs, Any, str, Any]:
    """A job that pays BILL-0004, its pay URL and a read-back with the ERP user's session."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Mark BILL-0004 paid on 2026-10-02", submitted_by="ana")

    def read_back(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    return jobs, job, f"{erp.url}/bills/{BILL}/pay", read_back


def _demo_rules(erp: ErpServer) -> ReadBackRules:
    return load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})


def test_a_resend_keeps_the_attempt_whose_answer_never_came_and_the_job_never_says_it_changed_nothing(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    """Leg 1's payment left and no answer came. A person approved sending it again (leg 2's read-back
    did not find it); then the first landed and the second was refused: already paid. Both attempts
    are kept, and the outcome counts the first as a change that may be saved. Before, the second
    overwrote the first's record and the job said "this run changed nothing"."""
    jobs, job, url, read_back = _pay_bill_0004(tmp_path, erp, erp_user)

    leg_1 = IntentLog(StoreIntents(jobs, job.id), job.id, _demo_rules(erp))
    assert leg_1.before_send("POST", url, [("csrf_token", "t1"), ("paid_on", PAID_ON)], read_back) is None
    started = datetime.now(UTC)  # leg 2
    leg_2 = IntentLog(StoreIntents(jobs, job.id), job.id, _demo_rules(erp))
    asked: list[str] = []
    leg_2.ask_again = lambda method, url, fields, attempt, warning: bool(asked.append(warning)) or True
    again = [("csrf_token", "t2"), ("paid_on", PAID_ON)]
    assert leg_2.before_send("POST", url, again, read_back) is None  # not paid yet: sent again
    assert erp_user.mark_paid(BILL, PAID_ON).status_code == 303  # ... and now the first one lands
    second = erp_user.mark_paid(BILL, PAID_ON)  # the second: refused, already paid
    assert second.status_code == 409, second.status_code
    leg_2.after_send("POST", url, again, SendOutcome(http_status=409, body=second.text))
    assert sorted(i.status for i in jobs.intents(job.id)) == ["not_applied", "recorded"]

    this_leg = SubmissionResult(method="POST", url=url, fields=again, result="refused", http_status=409)
    facts = gather([this_leg], leg_2, started)
    plan = Plan(
        goal="Mark BILL-0004 paid",
        success_criteria=["BILL-0004 is paid on 2026-10-02"],
        steps=[PlanStep(role="browser_operator", title="Mark it paid", instructions="Mark it paid.")],
        changes_data=True,
    )
    paid = CriterionCheck(
        criterion=plan.success_criteria[0], met=True, source=url, observed="paid on 2026-10-02"
    )
    state = RunState(
        plan=plan,
        claim="done",
        outcome="done",
        outcome_reason="BILL-0004 is paid on 2026-10-02",
        verdicts=[Verdict(verified=True, checks=[paid], reason="it is paid")],
    )
    outcome, reason = decide(state, facts)
    assert outcome == "done" and "changed nothing" not in reason, reason
    assert "1 submission(s) with no clear answer (may be saved)" in reason, reason
    assert len(asked) == 1 and "MAY STILL APPLY" in asked[0]  # sent again only as a person approved
    jobs.close()


@pytest.mark.parametrize(
    ("reply", "sent"),
    [
        (ApprovalDecision.approve(by="ana at the terminal", basis="person"), True),
        (ApprovalDecision.reject("not sure it did not land"), False),
        (None, False),  # --auto-approve
        (ApprovalDecision.approve(by="a rule", basis="rule"), False),
    ],
    ids=["person-approves", "person-rejects", "auto-approve", "rule"],
)
def test_the_person_at_the_terminal_decides_a_repeat_in_doubt_and_nothing_else_can(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser, reply: ApprovalDecision | None, sent: bool
) -> None:
    """``taskcrew run`` (and a plain run's routine replay): the first payment left and no answer
    came; reading the bill back does not find it paid. Before, the run could only refuse ("only a
    person may approve that") though the person was at the terminal. Now the policy's human is asked,
    shown that the first may still apply, and only a person's approval sends it again."""
    jobs, job, url, read_back = _pay_bill_0004(tmp_path, erp, erp_user)

    human = ScriptedHuman([reply]) if reply is not None else AutoApproveHuman()
    policy = Policy(PolicyConfig.for_url(erp.url), human)
    log = IntentLog(StoreIntents(jobs, job.id), job.id, _demo_rules(erp), ask_again=policy.ask_to_send_again)
    assert log.before_send("POST", url, [("csrf_token", "t1"), ("paid_on", PAID_ON)], read_back) is None
    held = log.before_send("POST", url, [("csrf_token", "t2"), ("paid_on", PAID_ON)], read_back)
    asked = human.requests if isinstance(human, ScriptedHuman) else human.approved
    assert len(asked) == 1 and "MAY STILL APPLY" in (asked[0].asked_again or ""), asked
    assert [(f.name, f.value) for f in asked[0].fields if f.name == "paid_on"] == [("paid_on", PAID_ON)]
    [decision] = policy.decisions
    assert (decision.method, decision.outcome) == ("POST", "approved" if sent else "rejected"), decision
    if sent:
        assert held is None and decision.approved_by == "ana at the terminal"
        assert len(jobs.intents(job.id)) == 2  # the attempt in doubt kept, a new one recorded
    else:
        assert held is not None and "NOT sent again" in held, held
        assert len(jobs.intents(job.id)) == 1
    if reply is None or reply.outcome == "approve":  # approved, but by no person: said so
        assert sent or "only a person may approve that" in decision.reason, decision.reason
    jobs.close()


def test_an_attempt_another_leg_sent_while_this_one_ran_is_in_this_legs_facts(tmp_path: Path) -> None:
    """A leg frozen mid-send thawed while the leg that took its job over ran (or a worker with the
    same id on another host): its attempt was stamped after this leg started, and is still counted."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter GX-7001", submitted_by="ana")
    this_leg = IntentLog(StoreIntents(jobs, job.id), job.id, [])
    started = datetime.now(UTC)
    elsewhere = IntentLog(StoreIntents(jobs, job.id), job.id, [])  # the other leg: no answer yet
    fields = [("vendor_id", "3"), ("invoice_number", "GX-7001"), ("amount", "2150.00")]
    assert elsewhere.before_send("POST", "http://127.0.0.1:9/bills/new", fields, lambda page: None) is None
    line = gather([], this_leg, started).changed_line()
    assert "1 submission(s) with no clear answer (may be saved)" in line and "GX-7001" in line, line
    jobs.close()


def test_a_person_is_asked_with_the_warning_and_auto_approve_never_covers_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    """The request put to a person before sending again is the one she approved, under a key of its
    own (one approval, one attempt), with the warning on every surface; never auto-approved, never
    approved in bulk."""
    from taskcrew.approvals.authority import bulk_refusal
    from taskcrew.jobs.human import Parked

    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana", options=JobOptions(auto_approve=True))
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    human = JobHuman(jobs, job.id, auto_approve=True)
    url, fields = "http://127.0.0.1:9/bills/BILL-0004/pay", [("paid_on", PAID_ON)]
    request = human.gate.again("POST", url, fields, "k.2", "an earlier attempt MAY STILL APPLY")
    assert (
        request.key.startswith("again-")
        and request.key != human.gate.again("POST", url, fields, "k.3", "").key
    )
    with pytest.raises(Parked) as parked:
        human.approve(request)
    approval = jobs.approval(parked.value.approval_id)
    assert (
        approval.request is not None and approval.request.asked_again == "an earlier attempt MAY STILL APPLY"
    )
    assert "asked again" in (bulk_refusal(Authority(jobs).view(approval)) or "")
    jobs.close()
