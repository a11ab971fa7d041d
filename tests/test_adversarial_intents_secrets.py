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

Driven through the gate itself (``NetworkGuard._route``) with Playwright's route and request stood in
for, the job database, the signed audit log and the intent store real, wired as ``LegRunner`` wires
them; the approvals authority's two halves (``WorkerGate.may_send`` / ``sending``) stood in for by
what they do with what the gate hands them: sign the send on ``Authority.key_of`` of it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import load_rules
from taskcrew.crew.models import CriterionCheck, RunState, Verdict
from taskcrew.crew.outcome import answer, decide, gather
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreIntents
from taskcrew.tools.browser.network import NetworkGuard
from taskcrew.tools.human import AutoApproveHuman
from taskcrew.tools.intents import (
    IntentLog,
    IntentRecord,
    SendOutcome,
    SignedSend,
    outgoing,
    reconcile,
)
from taskcrew.tools.policy import Policy, PolicyConfig
from taskcrew.tools.readback import ReadBack, ReadBackRules
from taskcrew.tools.vault import Vault

ERP = "http://erp.test"
TOKEN = "tok-9f8e7d6c5b4a3210"
SECRETS = {"ERP_API_TOKEN": TOKEN}
BODY = b"amount=980.00&paid_on=2026-10-02"
PAYMENT = [("amount", "980.00"), ("paid_on", "2026-10-02")]
PLAIN_URL = f"{ERP}/bills/BILL-0005/pay"
SECRET_URL = f"{PLAIN_URL}?api_token={TOKEN}"
URLS = pytest.mark.parametrize("url", [PLAIN_URL, SECRET_URL], ids=["plain", "token-in-url"])


# ---- Playwright's side, stood in for ------------------------------------------------------------
class Response:
    def __init__(self, status: int, body: str) -> None:
        self.status, self._body = status, body
        self.headers = {"content-type": "text/html; charset=utf-8"}

    def text(self) -> str:
        return self._body


class Route:
    """A routed request: ``fetch`` sends the browser's own request (its URL, real secret in it)."""

    def __init__(self, request: Request, answer: Response) -> None:
        self.request, self.answer = request, answer
        self.sent: list[str] = []  # the URLs that went out
        self.aborted: str | None = None

    def fetch(self, **options: Any) -> Response:
        assert "url" not in options  # the request goes out as the browser made it
        self.sent.append(self.request.url)
        return self.answer

    def fulfill(self, **_: Any) -> None:
        pass

    def abort(self, reason: str = "") -> None:
        self.aborted = reason


class Frame:
    url = f"{ERP}/bills/BILL-0005"
    parent_frame = None


class Request:
    """A page script's POST of the payment (``fetch``), the token in its URL as the page put it."""

    method = "POST"
    resource_type = "fetch"
    frame = Frame()

    def __init__(self, url: str) -> None:
        self.url = url
        self.headers = {"content-type": "application/x-www-form-urlencoded"}
        self.post_data_buffer = BODY

    def is_navigation_request(self) -> bool:
        return False


class Gate:
    """``WorkerGate.may_send`` and ``sending`` as ``LegRunner`` wires them (the send check, the intent
    log's last check), the job's approval taken as given: the request the gate hands ``may_send`` is
    signed as it leaves, on the key ``Authority.key_of`` computes (``Authority.record_send``)."""

    def __init__(self, authority: Authority, job_id: str) -> None:
        self.authority, self.job_id = authority, job_id
        self.cleared: tuple[str, str, list[tuple[str, str]]] | None = None
        self.checked: list[tuple[str, str, list[tuple[str, str]]]] = []

    def may_send(self, method: str, url: str, fields: list[tuple[str, str]]) -> str | None:
        self.cleared = (method, url, fields)
        self.checked.append(self.cleared)
        return None

    def sending(self) -> str | None:
        assert self.cleared is not None
        method, url, fields = self.cleared
        self.cleared = None
        self.authority.record_send(
            self.job_id, self.authority.key_of(method, url, fields), method, url, self.job_id
        )
        return None

    def sent_before(self, method: str, url: str, fields: list[tuple[str, str]]) -> datetime | None:
        return self.authority.sent_before(self.job_id, method, url, fields)


class Leg:
    """One leg of the job: its browser's network gate with the job's intent log (``LegRunner._run``)."""

    def __init__(
        self, jobs: Jobs, authority: Authority, job_id: str, rules: ReadBackRules | None = None
    ) -> None:
        self.gate = Gate(authority, job_id)
        self.policy = Policy(PolicyConfig.for_url(ERP), AutoApproveHuman())
        self.policy.send_check = self.gate.may_send
        self.log = IntentLog(
            StoreIntents(jobs, job_id, authority),
            job_id,
            rules or ReadBackRules(),
            witness=self.gate.sent_before,
            last_check=self.gate.sending,
        )
        self.policy.intents = self.log  # type: ignore[attr-defined]
        self.guard = NetworkGuard(self.policy, Vault(SECRETS), contextlib.nullcontext, 5_000)
        self.guard._context = Context()  # type: ignore[assignment]
        self.since = datetime.now(UTC) - timedelta(seconds=1)

    def pay(self, url: str, answer: Response) -> Route:
        request = Request(url)
        route = Route(request, answer)
        self.guard._route(route, request)  # type: ignore[arg-type]
        return route

    def facts(self) -> Any:
        return gather(self.guard.state.submissions, self.log, self.since)


class Context:
    """A browser context: read-backs go through ``request.get`` (``Reader``; none without a rule)."""

    def __init__(self) -> None:
        self.request: Any = None


SAVED = Response(200, "<p>Payment recorded.</p>")
REFUSED = Response(422, "<p class='error'>This bill is already paid.</p>")


def verified() -> RunState:
    check = CriterionCheck(criterion="bill paid", met=True, source=f"{ERP}/bills", observed="paid")
    return RunState(
        outcome="done",
        outcome_reason="paid",
        claim="done",
        verdicts=[Verdict(verified=True, checks=[check], reason="there")],
    )


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path) -> Iterator[tuple[Jobs, Authority, str, Path]]:
    db = tmp_path / "jobs.sqlite3"
    jobs = Jobs.open(f"sqlite:///{db}")
    job = jobs.submit("Pay BILL-0005", submitted_by="ana", enqueue=False)
    yield jobs, Authority(jobs), job.id, db
    jobs.close()


def signed_sends(authority: Authority, job_id: str) -> int:
    return len(authority.sends_of(job_id))


# ---- honest runs: one send is one change, a refused one is none ----------------------------------
@URLS
def test_a_saved_payment_is_one_change_for_its_own_leg_and_for_a_resumed_one(world: Any, url: str) -> None:
    jobs, authority, job_id, _ = world
    leg = Leg(jobs, authority, job_id)
    route = leg.pay(url, SAVED)
    assert route.sent == [url] and route.aborted is None  # it went out, real token and all
    for facts in (leg.facts(), Leg(jobs, authority, job_id).facts()):
        assert len(facts.saved) == 1 and not facts.unknown, facts.changed_line()
        assert facts.changed_line().startswith("1 change(s) saved"), facts.changed_line()


@URLS
def test_a_payment_the_erp_refused_is_no_change_and_a_verified_run_did_nothing(world: Any, url: str) -> None:
    jobs, authority, job_id, _ = world
    leg = Leg(jobs, authority, job_id)
    leg.pay(url, REFUSED)
    for facts in (leg.facts(), Leg(jobs, authority, job_id).facts()):
        assert not facts.changed_something, facts.changed_line()
        assert decide(verified(), facts)[0] == "nothing_to_do", facts.changed_line()


# ---- the attack: the job's intent rows deleted, the payment is not sent again --------------------
@URLS
def test_a_deleted_intent_row_does_not_let_a_resumed_leg_pay_again(world: Any, url: str) -> None:
    jobs, authority, job_id, db = world
    assert Leg(jobs, authority, job_id).pay(url, SAVED).sent == [url]
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))
    resumed = Leg(jobs, authority, job_id)
    route = resumed.pay(url, SAVED)
    assert route.sent == [] and route.aborted, "paid a second time"
    assert any("NOT sent again" in note for note in resumed.guard.state.notes), resumed.guard.state.notes
    assert signed_sends(authority, job_id) == 1
    facts = Leg(jobs, authority, job_id).facts()  # the send whose row is gone still counts
    assert facts.changed_something and decide(verified(), facts)[0] == "done"


@URLS
def test_the_same_leg_holds_a_repeat_back_with_its_row_there(world: Any, url: str) -> None:
    jobs, authority, job_id, _ = world
    leg = Leg(jobs, authority, job_id)
    leg.pay(url, SAVED)
    again = leg.pay(url, SAVED)
    assert again.sent == [] and signed_sends(authority, job_id) == 1


# ---- one request: the approval, the send check, the row, the signed send and the answer agree ----
def test_every_record_of_the_send_is_of_one_request_with_the_secret_redacted(world: Any) -> None:
    jobs, authority, job_id, _ = world
    leg = Leg(jobs, authority, job_id)
    leg.pay(SECRET_URL, SAVED)
    shown = SECRET_URL.replace(TOKEN, "{{secret:ERP_API_TOKEN}}")
    assert leg.gate.checked == [("POST", shown, PAYMENT)]  # what the approval and the send check saw
    [intent] = jobs.intents(job_id)
    [signed] = authority.sends_of(job_id)
    assert intent.target == intent.payload.url == signed.payload["url"] == shown
    assert intent.payload.key == signed.payload["key"] == authority.key_of("POST", shown, PAYMENT)
    assert intent.trusted  # the key is signed with the row
    [submitted] = leg.guard.state.submissions
    assert submitted.url == shown


def test_the_secret_is_stored_nowhere_and_said_nowhere(world: Any, tmp_path: Path) -> None:
    jobs, authority, job_id, db = world
    leg = Leg(jobs, authority, job_id)
    leg.pay(SECRET_URL, SAVED)
    leg.pay(SECRET_URL, SAVED)  # held back: its words name the request too
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))
    resumed = Leg(jobs, authority, job_id)
    resumed.pay(SECRET_URL, SAVED)
    for intent in jobs.intents(job_id):
        assert TOKEN not in intent.model_dump_json()
    said = [
        answer(verified(), resumed.facts()),
        Leg(jobs, authority, job_id).facts().record(),
        *leg.guard.state.notes,
        *resumed.guard.state.notes,
        *(s.model_dump_json() for s in leg.guard.state.submissions + resumed.guard.state.submissions),
    ]
    assert not [text for text in said if TOKEN in text]
    jobs.close()
    stored = [p for p in tmp_path.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert not stored, stored  # the job database, its journal and the signed audit log


# ---- rows written before rows kept their key --------------------------------------------------
def _legacy(jobs: Jobs, authority: Authority, job_id: str, *, signed_url: str) -> None:
    """A send as a version before this one recorded it: the intent row keyed and stored on the URL
    as it went out (no key kept), the send signed on ``signed_url`` (the worker's gate: the redacted
    URL; ``taskcrew run``'s: the one the intent log was given, the raw URL)."""
    fields = [(k, v) for k, v in PAYMENT]
    log = IntentLog(StoreIntents(jobs, job_id, authority), job_id, ReadBackRules())
    log.last_check = lambda: authority.record_send(
        job_id, authority.key_of("POST", signed_url, fields), "POST", signed_url, job_id
    )
    assert log.before_send("POST", SECRET_URL, fields, lambda _u: None) is None
    log.after_send("POST", SECRET_URL, fields, SendOutcome(http_status=200, seen="saved"))
    [intent] = jobs.intents(job_id)
    intent.payload.key = ""  # rows kept no key then
    jobs.save_intent(intent)


@pytest.mark.parametrize("signed_by", ["worker", "foreground"])
def test_a_send_recorded_by_an_earlier_version_is_not_sent_again(world: Any, signed_by: str) -> None:
    jobs, authority, job_id, db = world
    shown = SECRET_URL.replace(TOKEN, "{{secret:ERP_API_TOKEN}}")
    _legacy(jobs, authority, job_id, signed_url=shown if signed_by == "worker" else SECRET_URL)
    [old] = jobs.intents(job_id)
    assert old.trusted and old.payload.key == "" and old.target == SECRET_URL
    resumed = Leg(jobs, authority, job_id)
    assert resumed.pay(SECRET_URL, SAVED).sent == []  # its row, under the raw URL's key, is found
    with sqlite3.connect(str(db)) as conn:
        conn.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job_id,))
    assert Leg(jobs, authority, job_id).pay(SECRET_URL, SAVED).sent == []  # its signed send is found
    assert signed_sends(authority, job_id) == 1


def test_a_row_without_a_kept_key_is_matched_by_its_stored_request() -> None:
    """``reconcile``: a row that keeps its key is matched by it; one that does not (an earlier
    version's) by the key of its stored method, URL and fields, as before."""
    rules = load_rules()
    sent = outgoing("POST", SECRET_URL, PAYMENT, Vault(SECRETS).redact, rules)
    signed = SignedSend(key=sent.key, method="POST", url=sent.url, at=datetime.now(UTC))

    def key_of(method: str, url: str, fields: list[tuple[str, str]]) -> str:
        return outgoing(method, url, fields, lambda text: text, rules).key

    kept = IntentRecord(key="k", method="POST", url=sent.url, fields=PAYMENT, status="sent", seen="saved")
    assert reconcile([kept.model_copy(update={"send_key": sent.key})], [signed], key_of)[0][0].key == "k"
    assert len(reconcile([kept], [signed], key_of)[0]) == 1  # the redacted URL's key: the same
    raw = kept.model_copy(update={"url": SECRET_URL})  # a legacy row on the raw URL: not this send
    assert len(reconcile([raw], [signed], key_of)[0]) == 2
    assert len(reconcile([raw.model_copy(update={"send_key": sent.key})], [signed], key_of)[0]) == 1


# ---- a read-back cannot use a redacted value -----------------------------------------------------
class Page:
    status, ok = 200, True

    def __init__(self, text: str) -> None:
        self.headers: dict[str, str] = {}
        self._text = text

    def text(self) -> str:
        return self._text


class Reader:
    """The browser context's ``request``: every read-back GET, recorded. The ERP's API shows the bill
    paid to a read with the real token; to any other it shows an empty page, as an API that hides
    what a caller may not see does."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def get(self, url: str, **_: Any) -> Page:
        self.read.append(url)
        return Page("<p>BILL-0005 paid on 2026-10-02</p>" if TOKEN in url else "<p>No bill here.</p>")


def test_a_read_back_that_needs_the_redacted_secret_cannot_tell_and_does_not_send_again(world: Any) -> None:
    """The rule reads the bill back with the token; the request as recorded holds its placeholder, so
    the page read would not be the system's (a refusal, an empty list): "absent" would send the
    saved payment again. It cannot tell: decided by the recorded answer (saved: not sent)."""
    jobs, authority, job_id, _ = world
    rule = ReadBack(
        target=f"{ERP}/bills/{{bill_id}}/pay",
        read_back=f"{ERP}/bills/{{bill_id}}?api_token={{api_token}}",
        shows=["paid on {paid_on}"],
    )
    rules = ReadBackRules(rules=[rule])
    assert Leg(jobs, authority, job_id, rules).pay(SECRET_URL, SAVED).sent == [SECRET_URL]
    resumed = Leg(jobs, authority, job_id, rules)
    reader = Reader()
    resumed.guard._context.request = reader  # type: ignore[union-attr]
    assert resumed.pay(SECRET_URL, SAVED).sent == [], "paid a second time"
    assert signed_sends(authority, job_id) == 1
    assert not [page for page in reader.read if "secret" in page]  # never read with the placeholder
    assert any("NOT sent again" in note for note in resumed.guard.state.notes), resumed.guard.state.notes


def test_a_read_back_of_values_the_vault_does_not_hold_still_reads_the_system(world: Any) -> None:
    """The control: the same rule on a URL without a secret reads the page back (absent: sent again)."""
    jobs, authority, job_id, _ = world
    url = f"{PLAIN_URL}?api_token=public-demo"
    rule = ReadBack(
        target=f"{ERP}/bills/{{bill_id}}/pay",
        read_back=f"{ERP}/bills/{{bill_id}}?api_token={{api_token}}",
        shows=["paid on {paid_on}"],
    )
    rules = ReadBackRules(rules=[rule])
    Leg(jobs, authority, job_id, rules).pay(url, SAVED)
    resumed = Leg(jobs, authority, job_id, rules)
    reader = Reader()
    resumed.guard._context.request = reader  # type: ignore[union-attr]
    assert resumed.pay(url, SAVED).sent == [url]
    assert reader.read == [f"{ERP}/bills/BILL-0005?api_token=public-demo"]
