"""Intents against the real ERP: recorded before sending, read back before a repeat is sent."""

from __future__ import annotations

from pathlib import Path

from fixtures_erp import NORTHWIND_2057, ErpUser

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.readback import load_rules


def test_a_repeat_is_sent_only_when_the_read_back_does_not_find_it(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    log = IntentLog(StoreIntents(jobs, job.id), job.id, rules)
    vendor_id = erp_user.vendor_ids()["Northwind Traders"]
    url = f"{erp.url}/bills/new"
    fields = [("csrf_token", "t1"), ("vendor_id", vendor_id)]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]

    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    assert log.before_send("POST", url, fields, fetch) is None  # first time: recorded, then sent
    [intent] = jobs.intents(job.id)
    assert intent.status == "recorded" and intent.payload.method == "POST"
    # killed before anything reached the ERP: the read-back finds nothing, so it is sent again
    assert log.before_send("POST", url, [("csrf_token", "t2"), *fields[1:]], fetch) is None
    assert erp_user.new_bill().status_code == 303  # this time it went through
    log.after_send("POST", url, fields, SendOutcome(http_status=303))
    # a resumed step tries again: the read-back finds the bill, nothing is sent
    refusal = log.before_send("POST", url, [("csrf_token", "t3"), *fields[1:]], fetch)
    assert refusal is not None and "NOT sent again" in refusal and "in the system" in refusal
    assert jobs.intents(job.id)[0].status == "confirmed"
    # a read-back that cannot tell (logged out: a login page, not the list) refuses rather than guesses
    refusal = log.before_send("POST", url, fields, lambda page: None)
    assert refusal is not None and "could not tell" in refusal
    # another job's intent is its own
    other = IntentLog(StoreIntents(jobs, "job-2"), "job-2", rules)
    assert other.before_send("POST", url, fields, lambda page: None) is None
