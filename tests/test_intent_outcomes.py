# ruff: noqa: F811 — `place` is the fixture imported from test_outcome_facts
"""A durable job's intent log keeps the network gate's classification of each send (made once, with
the answer's page), and a resumed leg's facts read it: a near-duplicate warning or a login page
answered HTTP 200 is not a saved change, a 5xx stays "may be saved", records written before the
classification was kept are read conservatively, and the headline names the business fields.
Real Chromium, the mock ERP and a small site over HTTP, SQLite job stores; only the LLM is scripted."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from intents_kill_child import gated_session, index, login
from test_outcome_facts import place  # noqa: F401 — the fixture: a Workplace (ERP, Chromium), no chaos

from taskcrew.approvals.rules import DEFAULT_RULES
from taskcrew.crew.models import Citation, Plan, PlanStep
from taskcrew.crew.outcome import gather
from taskcrew.crew.run import run_task
from taskcrew.crew.scripted import Loop, ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreIntents, readback_rules
from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.tools.browser import BrowserRuntime, Click, Type
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.intents import IntentLog, IntentStatus, intent_key
from taskcrew.tools.submissions import SubmissionResult

BILL, PAID_ON = "BILL-0004", "2026-10-02"  # unpaid in the seed
NEAR = kit.Bill("Globex Corp", "GX-5532", "2150.00", "USD", "2026-09-05", "2026-10-05")  # ~GX-5531
NEAR_CRITERION = "Acme Payables has a bill for Globex Corp GX-5531"


def _jobs(tmp_path: Path) -> Jobs:
    return Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")


def _resumed_facts(log: IntentLog) -> str:
    """The first line a resumed leg that sent nothing itself reports (``outcome.gather``)."""
    return gather([], log, datetime.now(UTC)).changed_line()


# ---- a near-duplicate warning (HTTP 200, the same form again) across two legs of a job --------------


def _plan(title: str) -> str:
    return Plan(
        goal="Globex invoice",
        success_criteria=[NEAR_CRITERION],
        steps=[PlanStep(role="browser_operator", title=title, instructions="As the title says.")],
        changes_data=True,
    ).model_dump_json()


class StopsAtTheWarning(kit.EnterBill):
    def on_near_duplicate(self, body: str, els: list[kit.El]) -> Any:
        return kit.report("failed", "The ERP warned GX-5532 may duplicate GX-5531; nothing saved.")


def _leg(
    place: Workplace, jobs: Jobs, job_id: str, worker: ScriptedLLM, verifier: ScriptedLLM, human: Any
) -> Any:
    """One leg of the job, as ``LegRunner`` builds it: the run's policy carries the job's intent log."""
    models = {"w": worker, "v": verifier}
    settings = place.run_settings(
        "Enter Globex Corp's invoice GX-5532.", worker_model="scripted/w", verifier_model="scripted/v"
    )
    resources = place.resources(scripted=models.__getitem__, human=human)
    resources.browser.policy.intents = IntentLog(StoreIntents(jobs, job_id), job_id, readback_rules(place))
    return run_task(settings, resources)


@pytest.mark.browser
@pytest.mark.slow
def test_a_near_duplicate_warning_is_not_a_saved_change_when_the_job_resumes(
    place: Workplace, tmp_path: Path
) -> None:
    place.erp_server.reset(ChaosConfig.off())
    jobs = _jobs(tmp_path)
    job = jobs.submit("Enter Globex Corp's invoice GX-5532.", submitted_by="ana")
    first = ScriptedLLM(
        {"planner": [_plan("Enter GX-5532")], "browser_operator": [Loop(policy=StopsAtTheWarning(NEAR))]},
        model="scripted/w",
    )
    _leg(
        place,
        jobs,
        job.id,
        first,
        ScriptedLLM({}, model="scripted/v"),
        ScriptedHuman(decisions=[ApprovalDecision.approve()]),
    )
    [intent] = jobs.intents(job.id)  # the gate saw the form again: refused, and the log keeps that
    assert intent.status == "not_applied" and (intent.result or "").startswith(
        "answered HTTP 200 — refused"
    ), intent

    def found(url: str, body: str) -> str:  # the resumed leg only looks, and finds GX-5531
        row = kit.bill_rows(body, "GX-5531")[0]
        return kit.report("nothing_to_do", "GX-5531 is in Acme Payables.", [Citation(source=url, quote=row)])

    def check(url: str, body: str) -> str:
        row = kit.bill_rows(body, "GX-5531")[0]
        return kit.verdict([(NEAR_CRITERION, True, url, row)], "GX-5531 is there")

    second = ScriptedLLM(
        {
            "planner": [_plan("Check the bills")],
            "browser_operator": [Loop(policy=kit.LookUpBills("", found))],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )
    verifier = ScriptedLLM({"verifier": [Loop(policy=kit.LookUpBills("", check))]}, model="scripted/v")
    resumed = _leg(place, jobs, job.id, second, verifier, ScriptedHuman())
    headline = resumed.report.read_text().splitlines()[0]
    assert not [b for b in place.erp_server.state().bills if b.invoice_number == "GX-5532"]
    assert resumed.outcome == "nothing_to_do", (resumed.outcome, resumed.reason, headline)
    assert "Nothing was changed in any system (1 submission(s) sent, none applied)" in headline, headline
    assert "saved:" not in headline


# ---- a login page answered HTTP 200 ---------------------------------------------------------------------

FORM = (
    "<!doctype html><title>New bill</title><form method='post' action='/bills/save'>"
    "<input name='invoice_number' value='GX-9001'><input name='amount' value='75.00'>"
    "<button type='submit'>Save bill</button></form>"
)
LOGIN_PAGE = (
    "<!doctype html><title>Sign in</title><form method='post' action='/signin'>"
    "<input name='username'><input type='password' name='password'><button>Sign in</button></form>"
)


@pytest.fixture
def signed_out_site() -> Iterator[tuple[str, list[str]]]:
    """A system whose saves answer HTTP 200 with its sign-in page (the session had ended)."""
    posts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _page(self, body: str) -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._page(FORM)

        def do_POST(self) -> None:
            posts.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
            self._page(LOGIN_PAGE)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", posts
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_a_login_page_answered_with_http_200_is_kept_as_bounced_and_may_be_sent_again(
    tmp_path: Path, browser_runtime: BrowserRuntime, signed_out_site: tuple[str, list[str]]
) -> None:
    url, posts = signed_out_site
    jobs = _jobs(tmp_path)
    job = jobs.submit("Enter GX-9001", submitted_by="ana")
    log = IntentLog(StoreIntents(jobs, job.id), job.id, [])  # no read-back rule for this system
    session = gated_session(url, log, browser_runtime)
    try:
        form = session.goto(f"{url}/bills/new").observation
        sent = session.act([Click(index=index(form, name="Save bill"))])
        assert "bounced to the login page" in sent.render(), sent.render()
        [intent] = jobs.intents(job.id)
        assert intent.status == "not_applied" and "— bounced" in (intent.result or ""), intent
        assert "Nothing was changed in any system" in _resumed_facts(log)
        again = session.goto(f"{url}/bills/new").observation  # signed in again, the same bill again
        session.act([Click(index=index(again, name="Save bill"))])
    finally:
        session.close()
    assert len(posts) == 2  # a bounced save was not applied: the intent log let it go again


# ---- an HTTP 5xx: unknown, in the gate, the intent log and the resumed leg's report -------------------


@pytest.mark.browser
def test_a_5xx_stays_unknown_in_the_intent_log_and_the_resumed_legs_report(
    tmp_path: Path, erp: ErpServer, browser_runtime: BrowserRuntime
) -> None:
    jobs = _jobs(tmp_path)
    job = jobs.submit("Mark BILL-0004 paid on 2026-10-02", submitted_by="ana")
    log = IntentLog(StoreIntents(jobs, job.id), job.id, [])  # no read-back rule: goes by the answer
    session = gated_session(erp.url, log, browser_runtime)
    try:
        login(session, erp.url)
        detail = session.goto(f"{erp.url}/bills/{BILL}").observation
        typed = session.act([Type(index=index(detail, field="paid_on"), text=PAID_ON)])
        erp.set_chaos(ChaosConfig(error_rate=1.0, save_faults=[]))  # the ERP fails every request
        failed = session.act([Click(index=index(typed.observation, name="Mark paid"))])
        erp.set_chaos(ChaosConfig.off())
        assert failed.http_status is not None and failed.http_status >= 500, failed.render()
        [intent] = jobs.intents(job.id)
        assert intent.status == "uncertain", intent  # as the gate said: it may have been saved
        assert intent.result == f"answered HTTP {failed.http_status} — unknown: a server error or outage"
        headline = _resumed_facts(log)
        assert "1 submission(s) with no clear answer (may be saved)" in headline, headline
        assert "Nothing was changed" not in headline
        again = session.goto(f"{erp.url}/bills/{BILL}").observation
        held = session.act(
            [
                Type(index=index(again, field="paid_on"), text=PAID_ON),
                Click(index=index(again, name="Mark paid")),
            ]
        )
    finally:
        session.close()
    assert "may be in the system" in held.render() and "NOT sent again" in held.render(), held.render()
    assert erp.state().bill(BILL).status == "unpaid"  # type: ignore[union-attr]


# ---- records written by an earlier version (no classification, no signature) -----------------------

OLD = "http://127.0.0.1:8800/bills/new"


def _old(jobs: Jobs, log: IntentLog, number: str, status: IntentStatus, result: str) -> list[tuple[str, str]]:
    """A row as an earlier version wrote it into the job database: no classification, unsigned."""
    fields = [("csrf_token", "old"), ("invoice_number", number), ("amount", "10.00")]
    key = intent_key(log.scope, "POST", OLD, fields, log.risk)
    payload = {"kind": "form_submission", "method": "POST", "url": OLD}
    payload["fields"] = [{"name": n, "value": v} for n, v in fields]  # type: ignore[assignment]
    doc = {"key": key, "job_id": log.scope, "target": OLD, "payload": payload, "status": status}
    doc |= {"result": result, "recorded_at": "2026-11-30T10:00:00+00:00"}
    with sqlite3.connect(jobs.url.removeprefix("sqlite:///")) as db:
        db.execute(
            "INSERT INTO taskcrew_intents (key, job_id, doc) VALUES (?, ?, ?)",
            (key, log.scope, json.dumps(doc)),
        )
    return [("csrf_token", "new"), *fields[1:]]


def test_intent_records_of_an_earlier_version_are_answers_nobody_knows(tmp_path: Path) -> None:
    """Its rows are not signed, so they cannot be told from rows edited in the database: each is a
    send whose answer is not known. None is sent again without a read-back, whatever it says; the
    account names them as not counted, never as the job's sends, unless the signed audit log has
    the send (``tools.intents.reconcile``; ``test_adversarial_outcomes_accounts.py``)."""
    jobs = _jobs(tmp_path)
    job = jobs.submit("Enter four bills", submitted_by="ana")
    log = IntentLog(StoreIntents(jobs, job.id), job.id, [])
    cases: dict[str, tuple[IntentStatus, str]] = {
        "OLD-503": ("not_applied", "answered HTTP 503"),
        "OLD-422": ("not_applied", "answered HTTP 422"),
        "OLD-303": ("sent", "answered HTTP 303"),
        "OLD-ECONN": ("not_applied", "no answer: connect ECONNREFUSED 127.0.0.1:8800"),
    }
    repeats = {number: _old(jobs, log, number, *case) for number, case in cases.items()}
    headline = _resumed_facts(log)
    assert headline.startswith("Nothing was changed in any system") and "Not counted: 4 record(s)" in headline
    nothing = lambda page: None  # noqa: E731 — no read-back rule: never read
    for number, fields in repeats.items():
        held = log.before_send("POST", OLD, fields, nothing)
        assert held is not None and "may be in the system" in held and "NOT sent again" in held, number
    assert {i.status for i in jobs.intents(job.id)} == {"uncertain"}
    assert all("not signed" in (i.result or "") and not i.trusted for i in jobs.intents(job.id))


def test_the_headline_names_the_business_fields_never_a_csrf_token_or_an_excluded_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = yaml.safe_load(DEFAULT_RULES.read_text(encoding="utf-8"))
    rules["excluded_fields"].append({"hosts": ["127.0.0.1:*"], "fields": ["page_nonce"], "why": "per page"})
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(tmp_path / "rules.yaml"))
    jobs = _jobs(tmp_path)
    job = jobs.submit("Enter GX-7001", submitted_by="ana")
    fields = [
        ("csrf_token", "tok-Secret-123"),
        ("page_nonce", "n-4711"),
        ("vendor_id", "3"),
        ("memo", "September services"),
        ("currency", "USD"),
        ("invoice_number", "GX-7001"),
        ("amount", "2150.00"),
    ]
    sink = StoreIntents(jobs, job.id)
    log = IntentLog(sink, job.id, [])
    assert log.before_send("POST", OLD, fields, lambda page: None) is None
    [record] = sink.records()  # what an earlier leg sent, answered 303: carried over with every field
    record.status, record.result = "sent", "answered HTTP 303"
    sink.put(record)
    this_leg = SubmissionResult(method="POST", url=OLD, fields=fields, result="saved", http_status=303)
    for line in (_resumed_facts(log), gather([this_leg], None, None).changed_line()):
        assert "invoice_number=GX-7001" in line and "amount=2150.00" in line and "currency=USD" in line, line
        assert "csrf_token" not in line and "tok-Secret" not in line and "page_nonce" not in line, line
