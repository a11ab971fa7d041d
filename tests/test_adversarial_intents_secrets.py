"""Attack: a vault secret in a submission's URL (an API token in its query string) splits the records
of one send. The network gate checked the approval and signed the send on the URL with the secret
redacted, but gave the intent log the URL as it went out: the job's intent row was keyed and stored
on the raw URL, so the signed audit log's send and the row never matched. With the job's intent rows
deleted, a resumed leg found no signed send of "its" key and paid the saved bill again; an honest run
counted its saved payment twice ("1 change(s) saved … 1 submission(s) with no clear answer"), a
payment the ERP refused became "may be saved" (a verified run ended ``done``, not ``nothing_to_do``),
and the raw token was stored in the job database and written in the job's answer.

The gate now computes ONE request once (``tools.intents.outgoing``: method, the redacted URL and
fields, its key) and the approval, the send check, the intent row (which keeps the key:
``IntentRecord.send_key``), the answer and the signed send all take it; only the request that goes
out carries the real secret. Rows written before rows kept the key are read as before.

Every payment is a click on the bill's "Mark paid" button in real Chromium (the browser tools, the
network gate installed on the context) against the demo ERP over HTTP; the page's script puts the
API token in the form's action, and on a bill already paid puts the form back as a page loaded
before the payment shows it (the ERP ignores the token; the session and CSRF token authorise the
payment). Each leg is wired as ``LegRunner._run`` wires it: the job's person (``JobHuman``, the
job's signed ``--auto-approve``), the approvals gate's two halves (``WorkerGate.may_send`` as the
send check, ``sending`` as the intent log's last check), the signed audit log as the intent log's
witness, the job database in SQLite. What reached the ERP is read from its own access log."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from fixtures_browser import SessionFactory
from fixtures_erp import ErpUser
from test_browser_erp import login, named

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import load_rules
from taskcrew.crew.models import CriterionCheck, RunState, Verdict
from taskcrew.crew.outcome import Facts, answer, decide, gather
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.browser import ActionResult, BrowserSession, Click
from taskcrew.tools.intents import IntentLog, IntentRecord, SendOutcome, SignedSend, reconcile
from taskcrew.tools.readback import ReadBack, ReadBackRules
from taskcrew.tools.submissions import SubmissionLog
from taskcrew.tools.vault import Vault

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TOKEN = "tok-9f8e7d6c5b4a3210"
SECRETS = {"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123", "ERP_API_TOKEN": TOKEN}
PLACEHOLDER = "{{secret:ERP_API_TOKEN}}"
BILL = "BILL-0005"  # Hooli's, unpaid in the seed
PAID_ON = "2026-10-02"  # the demo ERP's today: what its pay form suggests
WITH_TOKEN = f"?api_token={TOKEN}"
QUERIES = pytest.mark.parametrize("query", ["", WITH_TOKEN], ids=["plain", "token-in-url"])
# a request line in the ERP's access log (``ErpServer``'s handler logs each one): "POST /path HTTP/1.1"
REQUEST_LINE = re.compile(r'(?<=")(\S+) (\S+) HTTP/[\d.]+(?=")')

# The page's script: the bill's pay form, its action the given URL (the API token in it); on a bill
# already paid (the ERP shows no form) the form as the page showed it before the payment.
PAY_FORM = """([action, paidOn]) => {
  let form = document.querySelector('form[action*="/pay"]');
  if (!form) {
    form = document.createElement('form');
    form.method = 'post';
    form.innerHTML = '<input type="hidden" name="csrf_token"><label for="paid_on">Payment date</label>'
      + '<input type="date" id="paid_on" name="paid_on"><button type="submit">Mark paid</button>';
    form.elements.csrf_token.value = document.querySelector('input[name=csrf_token]').value;
    document.querySelector('#bill-details').after(form);
  }
  form.setAttribute('action', action);
  form.elements.paid_on.value = paidOn;
}"""


def verified(erp: ErpServer) -> RunState:
    check = CriterionCheck(criterion="bill paid", met=True, source=f"{erp.url}/bills", observed="paid")
    return RunState(
        outcome="done",
        outcome_reason="paid",
        claim="done",
        verdicts=[Verdict(verified=True, checks=[check], reason="there")],
    )


@dataclass
class World:
    """One job ("Pay BILL-0005", submitted by ana with --auto-approve) in a real job database and
    signed audit log, the demo ERP, and the shared Chromium (``make_session``)."""

    jobs: Jobs
    authority: Authority
    job_id: str
    db: Path
    erp: ErpServer
    make_session: SessionFactory
    caplog: pytest.LogCaptureFixture
    legs: int = 0

    def url(self, query: str) -> str:
        return f"{self.erp.url}/bills/{BILL}/pay{query}"

    def shown(self, query: str) -> str:
        """The URL as every record of the payment reads it: the vault's secret redacted."""
        return self.url(query).replace(TOKEN, PLACEHOLDER)

    def leg(self, rules: ReadBackRules | None = None) -> Leg:
        """The job's next leg: the one before it handed back (its worker stopped), this one claims it."""
        if self.legs:
            assert self.jobs.hand_back(self.job_id, self.legs - 1, f"w{self.legs}", "stopped", leg_ends=True)
        worker = f"w{self.legs + 1}"
        claimed = self.jobs.mark(
            self.job_id, "running", only_if=("queued",), leg=self.legs, worker=worker, beat=True
        )
        assert claimed is not None
        self.legs += 1
        return Leg(self, (worker, self.legs - 1), rules or ReadBackRules())

    def erp_heard(self, method: str, path: str) -> list[str]:
        """What the ERP served of ``method`` to ``path`` (any query): the request line as it came,
        from its access log."""
        said = [
            REQUEST_LINE.search(r.getMessage()) for r in self.caplog.records if r.name == "taskcrew.mock_erp"
        ]
        return [m[0] for m in said if m and m[1] == method and m[2].split("?")[0] == path]

    def payments_heard(self) -> list[str]:
        return self.erp_heard("POST", f"/bills/{BILL}/pay")

    def signed_sends(self) -> list[Any]:
        return self.authority.sends_of(self.job_id)

    def delete_intents(self) -> None:
        """Someone who can write the job database deletes the job's intent rows."""
        with sqlite3.connect(str(self.db)) as conn:
            conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (self.job_id,))


@dataclass
class Leg:
    """One leg of the job, wired as ``LegRunner._run`` wires it; its browser (a fresh context on the
    shared Chromium, signed in to the ERP) opened when it first pays."""

    world: World
    holder: tuple[str, int]
    rules: ReadBackRules
    said: list[ActionResult] = field(default_factory=list)  # what the browser tools told the agent

    def __post_init__(self) -> None:
        w = self.world
        self.human = JobHuman(w.jobs, w.job_id, authority=w.authority, auto_approve=True)
        self.gate = gate = self.human.gate
        gate.holder = self.holder  # still this leg's job? exactly this approved?
        self.log = IntentLog(
            StoreIntents(w.jobs, w.job_id, w.authority),
            w.job_id,
            self.rules,
            witness=gate.sent_before,
            last_check=gate.sending,
            ask_again=lambda *asked: self.human.approve(gate.again(*asked)).approved,
        )
        self.submissions = SubmissionLog()  # the run's (``RunContext.submissions``)
        self.since = datetime.now(UTC) - timedelta(seconds=1)
        self._session: BrowserSession | None = None

    @property
    def session(self) -> BrowserSession:
        if self._session is None:
            w = self.world
            session = w.make_session(
                base_url=w.erp.url, vault=Vault(SECRETS, public=["ERP_USERNAME"]), human=self.human
            )
            session.policy.send_check = self.gate.may_send
            session.policy.intents = self.log  # type: ignore[attr-defined]
            session.policy.submissions = self.submissions  # type: ignore[attr-defined]
            login(session, w.erp)
            self._session = session
        return self._session

    def open_bill(self) -> None:
        self.session.goto(f"{self.world.erp.url}/bills/{BILL}")

    def pay(self, query: str, *, opened: bool = False) -> ActionResult:
        """Click "Mark paid" on the bill's page, the form's action ``/pay`` + ``query`` (``opened``:
        on the page as already loaded)."""
        if not opened:
            self.open_bill()
        self.session.run(lambda page: page.evaluate(PAY_FORM, [self.world.url(query), PAID_ON]))
        result = self.session.act([Click(index=named(self.session.observe(), "Mark paid"))])
        self.said.append(result)
        return result

    def facts(self) -> Facts:
        """What the leg's run would say it did (``RunContext.facts``)."""
        return gather(self.submissions.all(), self.log, self.since)


@pytest.fixture
def world(
    tmp_path: Path,
    isolated_home: Path,
    erp: ErpServer,
    make_session: SessionFactory,
    caplog: pytest.LogCaptureFixture,
) -> Iterator[World]:
    caplog.set_level(logging.DEBUG, logger="taskcrew.mock_erp")  # its access log
    db = tmp_path / "jobs.sqlite3"
    jobs = Jobs.open(f"sqlite:///{db}")
    job = jobs.submit(f"Pay {BILL}", submitted_by="ana", options=JobOptions(auto_approve=True), enqueue=False)
    yield World(jobs, Authority(jobs), job.id, db, erp, make_session, caplog)
    jobs.close()


def held_back(result: ActionResult) -> bool:
    return not result.ok and any("NOT sent again" in e for e in result.errors)


# ---- honest runs: one send is one change, a refused one is none ----------------------------------
@QUERIES
def test_a_saved_payment_is_one_change_for_its_own_leg_and_for_a_resumed_one(
    world: World, query: str
) -> None:
    leg = world.leg()
    result = leg.pay(query)
    assert result.ok, result.render()
    assert world.payments_heard() == [f"POST /bills/{BILL}/pay{query} HTTP/1.1"]  # real token and all
    for facts in (leg.facts(), world.leg().facts()):
        assert len(facts.saved) == 1 and not facts.unknown, facts.changed_line()
        assert facts.changed_line().startswith("1 change(s) saved"), facts.changed_line()


@QUERIES
def test_a_payment_the_erp_refused_is_no_change_and_a_verified_run_did_nothing(
    world: World, query: str, erp_user: ErpUser
) -> None:
    leg = world.leg()
    leg.open_bill()
    assert erp_user.mark_paid(BILL, "2026-10-01").status_code == 303  # a colleague paid it meanwhile
    result = leg.pay(query, opened=True)
    assert "already paid" in result.render(), result.render()
    assert len(world.payments_heard()) == 2  # hers, then the leg's: refused
    for facts in (leg.facts(), world.leg().facts()):
        assert not facts.changed_something, facts.changed_line()
        assert decide(verified(world.erp), facts)[0] == "nothing_to_do", facts.changed_line()


# ---- the attack: the job's intent rows deleted, the payment is not sent again --------------------
@QUERIES
def test_a_deleted_intent_row_does_not_let_a_resumed_leg_pay_again(world: World, query: str) -> None:
    assert world.leg().pay(query).ok
    world.delete_intents()
    resumed = world.leg()
    result = resumed.pay(query)
    assert len(world.payments_heard()) == 1, f"paid a second time: {result.render()}"
    assert held_back(result), result.render()
    assert len(world.signed_sends()) == 1
    facts = world.leg().facts()  # the send whose row is gone still counts
    assert facts.changed_something and decide(verified(world.erp), facts)[0] == "done"


@QUERIES
def test_the_same_leg_holds_a_repeat_back_with_its_row_there(world: World, query: str) -> None:
    leg = world.leg()
    assert leg.pay(query).ok
    again = leg.pay(query)
    assert held_back(again), again.render()
    assert len(world.payments_heard()) == 1 and len(world.signed_sends()) == 1


# ---- one request: the approval, the send check, the row, the signed send and the answer agree ----
def test_every_record_of_the_send_is_of_one_request_with_the_secret_redacted(world: World) -> None:
    leg = world.leg()
    assert leg.pay(WITH_TOKEN).ok
    shown = world.shown(WITH_TOKEN)
    assert world.payments_heard() == [f"POST /bills/{BILL}/pay{WITH_TOKEN} HTTP/1.1"]  # only it carries it
    [approval] = world.jobs.approvals(job_id=world.job_id)  # what the approval and the send check saw
    [intent] = world.jobs.intents(world.job_id)
    [signed] = world.signed_sends()  # signed by ``sending`` on what ``may_send`` cleared
    assert approval.status == "approved" and approval.request is not None
    assert approval.request.url == intent.target == intent.payload.url == signed.payload["url"] == shown
    fields = [(f.name, f.value) for f in intent.payload.fields]
    key = world.authority.key_of("POST", shown, fields)
    assert approval.key == intent.payload.key == signed.payload["key"] == key
    assert intent.trusted  # the key is signed with the row
    [submitted] = leg.submissions.all()
    assert submitted.url == shown


def test_the_secret_is_stored_nowhere_and_said_nowhere(world: World, tmp_path: Path) -> None:
    leg = world.leg()
    assert leg.pay(WITH_TOKEN).ok
    assert held_back(leg.pay(WITH_TOKEN))  # held back: its words name the request too
    world.delete_intents()
    resumed = world.leg()
    resumed.pay(WITH_TOKEN)
    for intent in world.jobs.intents(world.job_id):
        assert TOKEN not in intent.model_dump_json()
    said = [
        answer(verified(world.erp), resumed.facts()),
        world.leg().facts().record(),
        *(r.model_dump_json() for r in leg.said + resumed.said),
        *(s.model_dump_json() for s in leg.submissions.all() + resumed.submissions.all()),
        *(d.model_dump_json() for d in leg.session.policy.decisions + resumed.session.policy.decisions),
    ]
    assert not [text for text in said if TOKEN in text]
    world.jobs.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"jobs.sqlite3", "audit.jsonl"} <= {p.name for p in files}  # the job database, the signed log
    stored = [p for p in files if TOKEN.encode() in p.read_bytes()]
    assert not stored, stored


# ---- rows written before rows kept their key --------------------------------------------------
def _legacy(world: World, *, signed_url: str) -> None:
    """A send as a version before this one recorded it: the intent row keyed and stored on the URL
    as it went out (no key kept), the send signed on ``signed_url`` (the worker's gate: the redacted
    URL; ``taskcrew run``'s: the one the intent log was given, the raw URL). It landed."""
    jobs, authority, job_id = world.jobs, world.authority, world.job_id
    url, fields = world.url(WITH_TOKEN), [("csrf_token", "t0"), ("paid_on", PAID_ON)]
    log = IntentLog(StoreIntents(jobs, job_id, authority), job_id, ReadBackRules())
    log.last_check = lambda: authority.record_send(
        job_id, authority.key_of("POST", signed_url, fields), "POST", signed_url, job_id
    )
    assert log.before_send("POST", url, fields, lambda _u: None) is None
    log.after_send("POST", url, fields, SendOutcome(http_status=303, seen="saved"))
    [intent] = jobs.intents(job_id)
    intent.payload.key = ""  # rows kept no key then
    jobs.save_intent(intent)


@pytest.mark.parametrize("signed_by", ["worker", "foreground"])
def test_a_send_recorded_by_an_earlier_version_is_not_sent_again(
    world: World, signed_by: str, erp_user: ErpUser
) -> None:
    shown, raw = world.shown(WITH_TOKEN), world.url(WITH_TOKEN)
    _legacy(world, signed_url=shown if signed_by == "worker" else raw)
    assert erp_user.mark_paid(BILL, PAID_ON).status_code == 303  # what that send did
    [old] = world.jobs.intents(world.job_id)
    assert old.trusted and old.payload.key == "" and old.target == raw
    hers = [f"POST /bills/{BILL}/pay HTTP/1.1"]  # the browser sends none
    result = world.leg().pay(WITH_TOKEN)
    assert world.payments_heard() == hers and held_back(result), result.render()  # its row is found
    world.delete_intents()
    result = world.leg().pay(WITH_TOKEN)
    assert world.payments_heard() == hers and held_back(result), result.render()  # its signed send
    assert len(world.signed_sends()) == 1


def test_a_row_without_a_kept_key_is_matched_by_its_stored_request() -> None:
    """``reconcile``: a row that keeps its key is matched by it; one that does not (an earlier
    version's) by the key of its stored method, URL and fields, as before."""
    # here, not at the top: it came with the fix, and the other tests run on the code before it too
    from taskcrew.tools.intents import outgoing

    secret_url = f"http://erp.test/bills/{BILL}/pay{WITH_TOKEN}"
    payment = [("amount", "980.00"), ("paid_on", PAID_ON)]
    rules = load_rules()
    sent = outgoing("POST", secret_url, payment, Vault(SECRETS).redact, rules)
    signed = SignedSend(key=sent.key, method="POST", url=sent.url, at=datetime.now(UTC))

    def key_of(method: str, url: str, fields: list[tuple[str, str]]) -> str:
        return outgoing(method, url, fields, lambda text: text, rules).key

    kept = IntentRecord(key="k", method="POST", url=sent.url, fields=payment, status="sent", seen="saved")
    assert reconcile([kept.model_copy(update={"send_key": sent.key})], [signed], key_of)[0][0].key == "k"
    assert len(reconcile([kept], [signed], key_of)[0]) == 1  # the redacted URL's key: the same
    raw = kept.model_copy(update={"url": secret_url})  # a legacy row on the raw URL: not this send
    assert len(reconcile([raw], [signed], key_of)[0]) == 2
    assert len(reconcile([raw.model_copy(update={"send_key": sent.key})], [signed], key_of)[0]) == 1


# ---- a read-back cannot use a redacted value -----------------------------------------------------
def _read_back(world: World) -> ReadBackRules:
    """A rule that reads the bill back with the API token from the payment's URL."""
    erp = world.erp.url
    rule = ReadBack(
        target=f"{erp}/bills/{{bill_id}}/pay",
        read_back=f"{erp}/bills/{{bill_id}}?api_token={{api_token}}",
        shows=["paid on {paid_on}"],
    )
    return ReadBackRules(rules=[rule])


def test_a_read_back_that_needs_the_redacted_secret_cannot_tell_and_does_not_send_again(world: World) -> None:
    """The rule reads the bill back with the token; the request as recorded holds its placeholder, so
    the page read would not be the system's (from an ERP that checks the token: a refusal, an empty
    list): "absent" would send the saved payment again. It cannot tell: decided by the recorded
    answer (saved: not sent). The demo ERP ignores the token, so the read itself is what would show
    the mistake: none with the placeholder reaches it."""
    rules = _read_back(world)
    assert world.leg(rules).pay(WITH_TOKEN).ok
    result = world.leg(rules).pay(WITH_TOKEN)
    assert len(world.payments_heard()) == 1, f"paid a second time: {result.render()}"
    assert held_back(result) and len(world.signed_sends()) == 1, result.render()
    read = [unquote(line) for line in world.erp_heard("GET", f"/bills/{BILL}")]
    assert not [line for line in read if "secret" in line], read  # never read with the placeholder


def test_a_read_back_of_values_the_vault_does_not_hold_still_reads_the_system(world: World) -> None:
    """The control: the same rule on a URL without a secret reads the page back; the payment undone
    in the ERP meanwhile, the read finds it absent and the payment is sent again."""
    rules, query = _read_back(world), "?api_token=public-demo"
    assert world.leg(rules).pay(query).ok
    world.erp.reset()  # the ERP's ledger back to its seed: BILL-0005 unpaid again
    result = world.leg(rules).pay(query)
    assert result.ok, result.render()
    assert f"GET /bills/{BILL}{query} HTTP/1.1" in world.erp_heard("GET", f"/bills/{BILL}")
    assert len(world.payments_heard()) == 2 and len(world.signed_sends()) == 2
