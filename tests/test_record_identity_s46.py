# ruff: noqa: F811 — the fixture env is imported from test_changed_payee_s45
"""Which vendor record a payment pays, read the same whichever way the system shows it.

1. ``record.record_link`` kept a time or cache-buster query on a link whose path holds no number
   ("/vendor.php?v=10&_t=<time>", "/vendors/show?code=HOOLI&ts=<time>"): an honest bill was read as
   another vendor record on every leg, asked again, and refused after 3 re-asks. A link's query now
   drops what says how the page was served (a time, a nonce, a session, a cache-buster, a return
   address), by its name alone, never two records merged ("?v=10" and "?v=11" stay two; a value is
   never dropped for its look: ``tests/test_record_link_s46b.py``).
2. ``payee_record`` said one vendor record three ways (the bill page's link, the vendor list's key,
   a chosen option's value): the same record read through another surface was a "change", asked
   again. Now a link or a value the vendor list names is said as the list's record; records named
   alike stay apart, and are flagged as before.
3. `taskcrew runs list` / `runs show` did not name a send in doubt of the run's job, while `jobs
   list/show` and the console did: now they say it in the same words (``liveness.doubt_note``).

The demo ERP over HTTP, a real SQLite job store, the real CLI, a real run folder (scripted models)."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures_erp import NORTHWIND_2057, ErpUser
from test_changed_payee_s45 import _park, _token, env, runner  # noqa: F401 (env: the fixture)

from taskcrew.approvals import record
from taskcrew.approvals.authority import payee_flags, request_payee, system_reading
from taskcrew.approvals.rules import lookup_change
from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import utcnow
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer, fetch_state
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, ScriptedHuman
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.policy import REASKS, Policy, PolicyConfig, Submission
from taskcrew.tools.readback import load_rules

ERP = "http://127.0.0.1:8800"
HOOLI = "Hooli Cloud Services"
DOUBT = "a send may have been saved"
SETTLE = "look in the system before retrying or upgrading"


# ---- 1: what in a link names a record --------------------------------------------------------------
@pytest.mark.parametrize(
    ("link", "same"),
    [
        ("/vendor.php?v=10&_t=1733551234", "/vendor.php?v=10"),
        ("/vendor.php?_=1733551234567&v=10", "/vendor.php?v=10"),  # jQuery's cache-buster
        ("/vendors/show?code=ACME&ts=2026-12-07T07:19:12Z", "/vendors/show?code=ACME"),
        ("/vendors/show?id=ACME&ts=1733551234", "/vendors/show?id=ACME"),
        ("/vendor.php?v=10&nonce=8f3a9b0c1d2e4f5a", "/vendor.php?v=10"),
        ("/vendor.php?v=10&sessionId=S1004", "/vendor.php?v=10"),
        ("/vendor?id=10&session_id=S1004", "/vendor?id=10"),
        ("/vendor.php?v=10&back=/bills/BILL-0005&cb=7731", "/vendor.php?v=10"),
        ("/index.php?r=vendor/view&vid=10&rnd=0.5512", "/index.php?r=vendor/view&vid=10"),
        ("/supplier.php?sid=10&_t=1733551234", "/supplier.php?sid=10"),
        ("/vendor.php?v=10&page=2", "/vendor.php?v=10"),
        ("/vendor.php?ts=1733551234", "/vendor.php?ts=1733551299"),  # "ts" names a time stamp
        ("/vendors/10?back=/bills/BILL-0005&_t=1765085412", "/vendors/10"),
    ],
)
def test_a_link_is_its_record_whatever_says_how_the_page_was_served(link: str, same: str) -> None:
    read = record.record_link(f"{ERP}{link}")
    assert read == record.record_link(f"{ERP}{same}")
    assert record.record_link(read) == read  # a link read again (a parked request's) is read the same


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("/vendor.php?v=10&_t=1733551234", "/vendor.php?v=11&_t=1733551234"),
        ("/vendors/show?code=ACME&ts=1733551234", "/vendors/show?code=GLOBEX&ts=1733551234"),
        ("/v2/vendor?code=ACME", "/v2/vendor?code=GLOBEX"),  # "v2" is the API's version, no record
        ("/supplier.php?sid=10", "/supplier.php?sid=11"),  # named like a session: all it has
        ("/vendor.php?t=1733551234", "/vendor.php?t=1733551299"),  # "t" may be a record's: kept
        ("/index.php?r=vendor/view&vid=10", "/index.php?r=customer/view&vid=10"),
        ("/index.php?r=/vendor/view&vid=10", "/index.php?r=/customer/view&vid=10"),
    ],
)
def test_links_to_two_records_stay_two(one: str, other: str) -> None:
    assert record.record_link(f"{ERP}{one}") != record.record_link(f"{ERP}{other}")


def _pay(erp: ErpServer) -> Submission:
    bill = next(b for b in fetch_state(erp.url).bills if b.invoice_number == "HCS-2026-09")
    return Submission(origin="form", method="POST", url=f"{erp.url}/bills/{bill.id}/pay",
                      page_url=f"{erp.url}/bills/{bill.id}",
                      fields=[FieldValue(name="paid_on", value="2026-10-01")])  # fmt: skip


def _linked(erp_user: ErpUser, link: Callable[[], str | None]) -> Callable[[str], str]:
    """The real ERP's pages, the bill's vendor linked to ``link()`` (None: as the ERP shows it)."""

    def fetch(url: str) -> str:
        page = erp_user.http.get(url).text
        href = link()
        if href is None:
            return page
        return re.sub(
            r'(<dd id="bill-vendor">)([^<]*)(</dd>)',
            lambda m: f'{m[1]}<a href="{href}">{m[2]}</a>{m[3]}',
            page,
        )

    return fetch


def _asked(erp: ErpServer, rules: Any, fetch: Callable[[str], str], sub: Submission) -> ApprovalRequest:
    """What the worker asks when the run reaches ``sub`` (the real Policy, reading the ERP)."""
    human = ScriptedHuman([ApprovalDecision.approve()])
    policy = Policy(PolicyConfig.for_url(erp.url), human, rules=rules)
    policy.page_fetch = fetch
    policy.submission(sub)
    return human.requests[-1]


def _legs(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, asked: Callable[[], ApprovalRequest]) -> None:
    """bob approves what the first leg parks; each later leg reads the ERP again and must send it
    (never asked again), over more legs than the re-ask limit."""
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _park(jobs, asked())
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    assert runner.invoke(app, ["approvals", "approve", approval_id]).exit_code == 0
    for _ in range(REASKS + 2):
        jobs.mark(job_id, "running", only_if=("waiting", "running"), worker="w1")
        try:
            decision = JobHuman(jobs, job_id, authority=authority).approve(asked())
        except Parked as parked:
            pytest.fail(f"asked again: {jobs.approval(parked.approval_id).request.asked_again}")
        assert decision.approved, decision.text


@pytest.mark.parametrize(
    "link",
    [
        "/vendor.php?v=10&_t={t}",
        "/vendors/show?code=HOOLI&ts={t}",
        "/vendor.php?v=10&_={t}000&PHPSESSID=S{t}",
    ],
)
def test_a_durable_job_pays_a_bill_whose_vendor_link_carries_each_legs_time(
    env: dict[str, Any], erp: ErpServer, erp_user: ErpUser, monkeypatch: pytest.MonkeyPatch, link: str
) -> None:
    """Each leg the ERP writes the time into the vendor's link: nothing about the bill changed."""
    times = iter(range(1765085000, 1765086000, 7))
    fetch = _linked(erp_user, lambda: link.format(t=next(times)))
    _legs(env, monkeypatch, lambda: _asked(erp, env["authority"].rules, fetch, _pay(erp)))


# ---- 2: one vendor record, one identity whichever surface shows it ---------------------------------
def test_the_bills_vendor_read_from_its_link_or_from_the_vendor_list_is_one_record(
    env: dict[str, Any], erp: ErpServer, erp_user: ErpUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bill's page links its vendor on one leg and not on the next (another ERP view, a role):
    the payee is vendor record 10 either way, and the approval covers it."""
    rules = env["authority"].rules
    said = f"vendor record 10 listed at {erp.url}/vendors"
    plain, linked = _linked(erp_user, lambda: None), _linked(erp_user, lambda: "/vendors/10;jsessionid=S1")
    readings = [system_reading(_asked(erp, rules, fetch, _pay(erp)), rules) for fetch in (plain, linked)]
    assert [r["payee_record"] for r in readings] == [said, said]
    assert lookup_change(*readings) is None
    legs = iter([plain, linked, plain, linked, plain, linked, plain])
    _legs(env, monkeypatch, lambda: _asked(erp, rules, next(legs), _pay(erp)))


def test_a_chosen_option_and_the_vendor_list_name_one_record(
    env: dict[str, Any], erp: ErpServer, erp_user: ErpUser
) -> None:
    """A new bill's chosen vendor option sends "10": the record the vendor list keys "10"."""
    rules = env["authority"].rules
    ids = erp_user.vendor_ids()
    fields = [FieldValue(name="vendor_id", value=ids[HOOLI], label=HOOLI)]
    fields += [FieldValue(name=k, value=v) for k, v in NORTHWIND_2057.items() if k != "vendor"]
    sub = Submission(origin="form", method="POST", url=f"{erp.url}/bills/new",
                     page_url=f"{erp.url}/bills/new", fields=fields)  # fmt: skip
    chosen = system_reading(_asked(erp, rules, _linked(erp_user, lambda: None), sub), rules)
    paid = system_reading(_asked(erp, rules, _linked(erp_user, lambda: None), _pay(erp)), rules)
    assert (
        chosen["payee_record"]
        == paid["payee_record"]
        == f"vendor record {ids[HOOLI]} listed at {erp.url}/vendors"
    )


def test_records_named_alike_stay_apart_and_flagged(
    env: dict[str, Any], erp: ErpServer, erp_user: ErpUser
) -> None:
    """A twin record ("Hooli  Cloud Services", two spaces): the bill's link says which record it is;
    the list alone names both; a link to the twin is the twin. Each is flagged as a look-alike."""
    rules = env["authority"].rules
    with sqlite3.connect(erp.db_path) as db:
        db.execute("INSERT INTO vendors (name, default_currency) VALUES ('Hooli  Cloud Services', 'USD')")
        (twin,) = db.execute("SELECT id FROM vendors WHERE name = 'Hooli  Cloud Services'").fetchone()
    at = f"listed at {erp.url}/vendors"
    said: dict[str, str] = {}
    for link, expected in [
        ("/vendors/10", f"vendor record 10 {at}"),
        (None, f"vendor records 10 and {twin} {at}"),
        (f"/vendors/{twin}", f"vendor record {twin} {at}"),
    ]:
        request = _asked(erp, rules, _linked(erp_user, lambda link=link: link), _pay(erp))
        said[str(link)] = system_reading(request, rules)["payee_record"]
        assert said[str(link)] == expected
        payee = request_payee(request, rules)
        assert payee.unclear and "lookalike_vendor" in [f.rule for f in payee_flags(payee, request)]
    assert len(set(said.values())) == 3  # three readings, three identities: each a change of the other


# ---- 3: runs list / runs show name the run's job's send in doubt -----------------------------------
def _job_of(jobs: Jobs, run: Path, task: str) -> str:
    job = jobs.submit(task, submitted_by="ana", enqueue=False)
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", started_at=utcnow(),
                     run_dir=str(run.resolve()))  # fmt: skip
    return job.id


def test_runs_list_and_show_name_the_send_in_doubt_of_the_runs_job(
    isolated_home: Path, finished_run: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    """Two runs of two jobs of one task: one job's payment got no answer and its leg failed (a retry
    resumes it); the other's was answered. `runs list` and `runs show` name the first's send in
    doubt as `jobs list` does, and only that."""
    from taskcrew.eval.runs import read_run

    task = read_run(finished_run).task
    other = finished_run.parent / "answered-run"
    shutil.copytree(finished_run, other)
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    url = f"{erp.url}/bills/new"
    fields = [("csrf_token", "t1"), ("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    jobs = Jobs.open()  # the CLI's default store, in this test's TASKCREW_HOME
    try:
        in_doubt, answered = _job_of(jobs, finished_run, task), _job_of(jobs, other, task)
        for job_id, answer in [
            (in_doubt, SendOutcome(detail="timed out")),
            (answered, SendOutcome(http_status=303)),
        ]:
            log = IntentLog(StoreIntents(jobs, job_id), job_id, rules, ask_again=lambda *a: False)
            assert log.before_send("POST", url, fields, fetch) is None
            log.after_send("POST", url, fields, answer)
            assert jobs.mark(job_id, "failed", only_if=("running",), reason="the ERP did not answer",
                             finished_at=utcnow())  # fmt: skip
        said = f"job {in_doubt}: {DOUBT} (POST {url}: no answer: timed out): {SETTLE}"
        listed = runner.invoke(app, ["jobs", "list"])
        assert said.split(": ", 1)[1] in " ".join(listed.output.split())  # the words `jobs list` says

        runs = runner.invoke(app, ["runs", "list", "--runs-dir", str(finished_run.parent)])
        assert runs.exit_code == 0, runs.output
        text = " ".join(runs.output.split())
        assert text.count(DOUBT) == 1 and said in text, runs.output
        lines = runs.output.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith(finished_run.name))
        assert said in " ".join(lines[head + 1].split()), runs.output  # named first, under its run
        shown = runner.invoke(app, ["runs", "show", str(finished_run)])
        assert shown.exit_code == 0, shown.output
        assert said in " ".join(shown.output.split()), shown.output
        calm = runner.invoke(app, ["runs", "show", str(other)])
        assert calm.exit_code == 0 and DOUBT not in calm.output, calm.output
    finally:
        jobs.close()
