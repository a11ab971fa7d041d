"""Read-back rules as data, and every approved submission's intent: a repeat is reconciled with a
rule, decided by the recorded outcome without one (real ERP over HTTP, real Chromium, a real SIGKILL)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures_browser import RecordingSite, SessionFactory
from fixtures_erp import ErpUser
from intents_kill_child import gated_session, index, login, mark_paid
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.browser import BrowserConfig, BrowserRuntime, Click
from taskcrew.tools.human import AutoApproveHuman
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.intents import fetcher as intent_fetcher
from taskcrew.tools.readback import ReadBack, ReadBackFileError, ReadBackRules, load_rules, rules_file

CHILD = Path(__file__).with_name("intents_kill_child.py")
BILL, PAID_ON = "BILL-0004", "2026-10-02"  # unpaid in the seed, invoiced 2026-09-01


def payments(erp: ErpServer) -> list[str]:
    """The payment dates of the bill under test (the seed has payments of other bills)."""
    return [p.paid_on for p in erp.state().payments if p.bill_id == BILL]


def demo_rules(erp_url: str) -> ReadBackRules:
    return load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp_url})


@pytest.fixture(scope="module")
def browser_runtime() -> Iterator[BrowserRuntime]:
    with BrowserRuntime(BrowserConfig()) as runtime:
        yield runtime


def test_the_demo_rules_cover_every_data_changing_endpoint_of_the_erp(erp: ErpServer) -> None:
    rules = demo_rules(erp.url)
    posts = [p.pattern for m, p, *_ in erp.app._routes if m == "POST"]  # the ERP's own routing table
    assert len(posts) >= 5
    for pattern in posts:
        url = erp.url + pattern.replace(r"(BILL-\d+)", BILL)
        assert rules.rule_for("POST", url) is not None, f"no read-back rule for POST {pattern}"
    rule, params = rules.rule_for("POST", f"{erp.url}/bills/{BILL}/pay?from=list") or (None, {})
    assert (
        rule is not None and params == {"bill_id": BILL} and rule.read_back == f"{erp.url}/bills/{{bill_id}}"
    )
    assert rules.rule_for("GET", f"{erp.url}/bills/{BILL}/pay") is None  # methods default to the writes
    assert rules.rule_for("POST", f"{erp.url}/bills/{BILL}/pay/extra") is None  # one segment only
    assert rules.rule_for("POST", f"http://elsewhere:1/bills/{BILL}/pay") is None  # the ERP's address only


BAD = [
    ("rules: [\n  - target: {erp}/x\n   read_back: y", "not valid YAML at line"),
    ("- target: x", "expected a mapping with a `rules:` list"),
    ("rules:\n  - target: '{erp}/x'\n    read_back: '{erp}/y'", "say what on"),
    ("rules:\n  - target: '{erp}/x'\n    identify: [a]", "give read_back"),
    (
        "rules:\n  - target: '{crm}/x'\n    safe_to_repeat: true",
        "{crm} is not one of this workplace's systems",
    ),
    ("rules:\n  - target: '{erp}/x'\n    safe_to_repeat: true\n    colour: red", "colour: Extra inputs"),
    ("rules:\n  - target: '{erp}/x'\n    safe_to_repeat: true\n    shows: [done]", "safe_to_repeat needs no"),
]


@pytest.mark.parametrize(("text", "says"), BAD)
def test_a_bad_rule_file_is_a_clear_error_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "readback.yaml"
    path.write_text(text)
    with pytest.raises(ReadBackFileError) as caught:
        load_rules(path, {"erp": "http://127.0.0.1:9"})
    assert str(path) in str(caught.value) and says in str(caught.value)


def test_the_rule_file_is_the_sandboxs_or_the_one_the_user_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert rules_file(DEFAULT_SANDBOX) == DEFAULT_SANDBOX / "readback.yaml"
    assert rules_file(tmp_path) is None  # a company without one: every repeat goes by its outcome
    assert load_rules(None, {}).rules == []
    monkeypatch.setenv("TASKCREW_READBACK", str(tmp_path / "missing.yaml"))
    with pytest.raises(ReadBackFileError, match=r"cannot be read.*TASKCREW_READBACK"):
        load_rules(rules_file(DEFAULT_SANDBOX), {"erp": "http://127.0.0.1:9"})


def test_an_applied_mark_paid_is_found_by_its_status_text_and_not_sent_again(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Mark BILL-0004 paid", submitted_by="ana")
    log = IntentLog(StoreIntents(jobs, job.id), job.id, demo_rules(erp.url))
    url, fields = f"{erp.url}/bills/{BILL}/pay", [("csrf_token", "t1"), ("paid_on", PAID_ON)]

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    assert log.before_send("POST", url, fields, fetch) is None
    assert erp_user.mark_paid(BILL, PAID_ON).status_code == 303  # sent; stopped before the result
    refusal = log.before_send("POST", url, [("csrf_token", "t2"), ("paid_on", PAID_ON)], fetch)
    assert refusal is not None and "NOT sent again" in refusal and f"/bills/{BILL} shows it" in refusal
    assert [i.status for i in jobs.intents(job.id)] == ["confirmed"]
    # another date is another payload; the page shows the bill paid on another day: it is absent
    assert log.before_send("POST", url, [("paid_on", "2026-10-03")], fetch) is None
    assert payments(erp) == [PAID_ON]


@pytest.mark.browser
@pytest.mark.parametrize(
    ("point", "rules"), [("before_send", "demo"), ("before_send", "none"), ("after_send", "demo")]
)
def test_a_run_killed_between_recording_and_its_result_never_duplicates_mark_paid(
    tmp_path: Path, erp: ErpServer, browser_runtime: BrowserRuntime, point: str, rules: str
) -> None:
    jobs_url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    jobs = Jobs.open(jobs_url)
    job = jobs.submit("Mark BILL-0004 paid on 2026-10-02", submitted_by="ana")
    child = subprocess.Popen(
        [sys.executable, str(CHILD), erp.url, jobs_url, job.id, BILL, PAID_ON, point],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    out, _ = child.communicate(timeout=120)
    with contextlib.suppress(ProcessLookupError):  # its Chromium goes with it
        os.killpg(child.pid, signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL, out.decode(errors="replace")[-2000:]
    [recorded] = jobs.intents(job.id)
    assert recorded.status == "recorded" and recorded.target == f"{erp.url}/bills/{BILL}/pay"
    assert payments(erp) == ([] if point == "before_send" else [PAID_ON])

    # the resumed step, in a fresh browser, comes to the same submission again
    log = IntentLog(StoreIntents(jobs, job.id), job.id, demo_rules(erp.url) if rules == "demo" else [])
    session = gated_session(erp.url, log, browser_runtime)
    try:
        if point == "before_send":  # through the page, as the operator would
            text = mark_paid(session, erp.url, BILL, PAID_ON).render()
        else:  # the page no longer offers the form; the same payload comes to the gate
            login(session, erp.url)
            fields = [("csrf_token", "new-page-token"), ("paid_on", PAID_ON)]
            text = session.run(
                lambda page: log.before_send(
                    "POST", recorded.target, fields, intent_fetcher(page.context, session.policy)
                )
            )
    finally:
        session.close()
    [intent] = jobs.intents(job.id)
    if point == "after_send":  # read back: the bill shows the payment, so nothing is sent
        assert text is not None and f"{erp.url}/bills/{BILL} shows it in the system" in text
        assert payments(erp) == [PAID_ON] and intent.status == "confirmed"
    elif rules == "demo":  # read back: not paid (yet): the first attempt may still be on its way, so
        # sending it again needs a person, and with nobody to ask it is held back (never twice)
        assert "NOT sent again" in text, text
        assert payments(erp) == [] and intent.status == "recorded"
    else:  # no rule and no recorded result: not sent, and the agent is told what to do
        assert "no result was recorded" in text and "NOT sent again" in text and "ask a person" in text
        assert payments(erp) == [] and intent.status == "recorded"
        shown = CliRunner().invoke(app, ["jobs", "show", job.id, "--db", jobs_url])  # what a person sees
        assert f"submission POST {erp.url}/bills/{BILL}/pay: recorded (" in shown.output, shown.output


@pytest.mark.browser
def test_outcomes_are_definite_only_when_the_system_answered_or_was_never_reached() -> None:
    assert SendOutcome(http_status=303).applied is True
    assert SendOutcome(http_status=422).applied is False
    assert SendOutcome(detail="apiRequestContext.fetch: connect ECONNREFUSED 127.0.0.1:9").applied is False
    assert SendOutcome(detail="Timeout 30000ms exceeded").applied is None


@pytest.mark.browser
def test_a_scripts_request_approved_once_is_not_sent_twice_in_the_same_job(
    tmp_path: Path, make_session: SessionFactory, site: RecordingSite
) -> None:
    """Another system, no read-back rule: a page script's POST, approved and answered, is not sent
    again when the page repeats it (the policy no longer asks for the identical payload)."""
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Order item x", submitted_by="ana")
    session = make_session(human=AutoApproveHuman(), approve_network_requests=True)
    session.policy.intents = IntentLog(StoreIntents(jobs, job.id), job.id, [])
    obs = session.goto(site.page("fetch.html")).observation
    first = session.act([Click(index=index(obs, name="Post via fetch"))])
    assert "status 201" in first.observation.text, first.render()
    again = session.act([Click(index=index(first.observation, name="Post via fetch"))])
    assert "failed" in again.observation.text
    assert "was already sent" in again.render() and "NOT sent again" in again.render()
    assert [h.path for h in site.posts()] == ["/record/api"]
    [intent] = jobs.intents(job.id)
    assert (intent.status, intent.result) == ("sent", "answered HTTP 201")


def test_a_read_back_looks_for_whole_values_in_the_text_a_person_sees() -> None:
    rule = ReadBack(
        target="http://erp.test/bills/new",
        read_back="http://erp.test/bills?vendor={vendor_id}",
        identify=["invoice_number"],
    )
    url, fields = rule.target, [("vendor_id", "Acme & Co"), ("invoice_number", "INV-2057")]
    hidden = "<td>INV-20571</td><script>var n = 'INV-2057'</script><input value='INV-2057'>"
    assert rule.check(url, {}, fields, lambda page: hidden) == (
        "absent",
        "http://erp.test/bills?vendor=Acme%20%26%20Co",
    )
    assert rule.check(url, {}, fields, lambda page: "<td>INV-2057</td>")[0] == "applied"
    assert rule.check(url, {}, fields, lambda page: None)[0] == "unknown"  # a login page, an error
    assert rule.check(url, {}, fields[1:], lambda page: "INV-2057")[0] == "unknown"  # no vendor to look up
