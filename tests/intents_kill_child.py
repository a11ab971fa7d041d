"""A run that is SIGKILLed at one point of an approved submission (used by test_jobs_readback.py).

    python tests/intents_kill_child.py ERP_URL JOBS_URL JOB_ID BILL_ID PAID_ON before_send|after_send

A real Chromium marks the bill paid through the ERP's page, behind the policy gate, with the job's
intent log; the log's store kills this process with SIGKILL after the intent is recorded and before
anything is sent, or after the ERP answered and before the answer is recorded. Also holds the
browser steps the test repeats in its own process.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import StoreIntents
from taskcrew.tools.browser import BrowserSession, Click, Type
from taskcrew.tools.browser.models import ActionResult, Observation
from taskcrew.tools.human import AutoApproveHuman
from taskcrew.tools.intents import IntentLog, IntentRecord
from taskcrew.tools.policy import Policy, PolicyConfig
from taskcrew.tools.readback import ReadBackRules
from taskcrew.tools.vault import Vault

VAULT = {"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"}


def index(obs: Observation, *, name: str | None = None, field: str | None = None) -> int:
    found = [
        el.index
        for el in obs.elements
        if (name is not None and el.name == name)
        or (field is not None and el.field is not None and el.field.name == field)
    ]
    assert len(found) == 1, (name, field, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def gated_session(erp_url: str, log: IntentLog, runtime: Any = None) -> BrowserSession:
    """A browser session whose approvals are granted and whose approved submissions go through ``log``."""
    policy = Policy(PolicyConfig.for_url(erp_url), AutoApproveHuman())
    policy.intents = log  # what a durable run attaches (jobs/runner.py)
    return BrowserSession(policy=policy, vault=Vault(VAULT), runtime=runtime).start()


def login(session: BrowserSession, erp_url: str) -> None:
    obs = session.goto(f"{erp_url}/login").observation
    logged_in = session.act(
        [
            Type(index=index(obs, field="username"), text="{{secret:ERP_USERNAME}}"),
            Type(index=index(obs, field="password"), text="{{secret:ERP_PASSWORD}}"),
            Click(index=index(obs, name="Log in")),
        ]
    )
    assert logged_in.ok, logged_in.render()


def mark_paid(session: BrowserSession, erp_url: str, bill_id: str, paid_on: str) -> ActionResult:
    """Log in, open the bill, enter the payment date and press Mark paid, as the operator would."""
    login(session, erp_url)
    detail = session.goto(f"{erp_url}/bills/{bill_id}").observation
    return session.act(
        [
            Type(index=index(detail, field="paid_on"), text=paid_on),
            Click(index=index(detail, name="Mark paid")),
        ]
    )


class KilledAt(StoreIntents):
    """The job's intent store, killing this process at ``point``: right after the intent is recorded
    (nothing sent yet), or when the answer is about to be recorded (the ERP has applied it)."""

    def __init__(self, jobs: Jobs, job_id: str, point: str) -> None:
        super().__init__(jobs, job_id)
        self.point = point

    def put(self, record: IntentRecord) -> None:
        if self.point == "after_send" and record.status != "recorded":
            os.kill(os.getpid(), signal.SIGKILL)
        super().put(record)
        if self.point == "before_send" and record.status == "recorded":
            os.kill(os.getpid(), signal.SIGKILL)

    def claim(self, record: IntentRecord) -> IntentRecord | None:
        earlier = super().claim(record)
        if self.point == "before_send" and earlier is None:
            os.kill(os.getpid(), signal.SIGKILL)
        return earlier


def main() -> None:
    erp_url, jobs_url, job_id, bill_id, paid_on, point = sys.argv[1:7]
    jobs = Jobs.open(jobs_url)
    log = IntentLog(KilledAt(jobs, job_id, point), job_id, ReadBackRules())
    session = gated_session(erp_url, log)
    result = mark_paid(session, erp_url, bill_id, paid_on)
    print("not killed:", result.render(), flush=True)
    sys.exit(3)


if __name__ == "__main__":
    main()
