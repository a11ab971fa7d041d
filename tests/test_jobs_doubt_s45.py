"""A job not ended whose send may have been saved says so, the same on every surface that shows its
state: `jobs list` (and its JSON), `jobs show`, the console's jobs list and job page. Before, a
worker stopped mid-send (e.g. to upgrade it) left its job "queued again: resumes from its last
checkpoint" with nothing of the send the docs tell the operator to settle first.

Real job store (SQLite), real CLI, real console (in-process), the intent log's own API over the real
demo ERP; the last test stops a real worker process while its payment is on its way (real Chromium,
the ERP behind a proxy that holds the request; only the models are scripted)."""

from __future__ import annotations

import html
import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fixtures_console import client_as
from fixtures_erp import NORTHWIND_2057, ErpUser
from fixtures_jobs import SCRIPTED, Workers
from test_jobs_redteam_2 import (  # noqa: F401  (fixtures: the ERP behind a proxy that holds a request, workers)
    HOOLI,
    PAY_HOOLI,
    HoldingProxy,
    proxy,
    workers,
)
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Job, JobOptions, Jobs
from taskcrew.jobs.models import utcnow
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.human import ApprovalRequest, FieldValue
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.readback import load_rules

runner = CliRunner()
DOUBT = "a send may have been saved"
SETTLE = "look in the system before retrying or upgrading"


def _flat(text: str) -> str:
    return " ".join(text.split())


class _Place:
    """One job store, the demo ERP's bill form, and each leg's intent log over a job's records."""

    def __init__(self, jobs: Jobs, erp: ErpServer, erp_user: ErpUser) -> None:
        self.jobs, self.erp_user = jobs, erp_user
        self.rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
        self.url = f"{erp.url}/bills/new"
        self.fields = [("csrf_token", "t1"), ("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
        self.fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]

    def running(self, task: str) -> Job:
        job = self.jobs.submit(task, submitted_by="ana", enqueue=False)
        assert self.jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", started_at=utcnow())
        return job

    def log(self, job: Job, approve: bool = False) -> IntentLog:
        return IntentLog(StoreIntents(self.jobs, job.id), job.id, self.rules, ask_again=lambda *a: approve)

    def fetch(self, page: str) -> str | None:
        response = self.erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    def send(self, job: Job, answer: SendOutcome | None, approve: bool = False) -> None:
        """The gate's two calls around a send: recorded first, then (``answer``) what came back."""
        log = self.log(job, approve)
        assert log.before_send("POST", self.url, self.fields, self.fetch) is None
        if answer is not None:
            log.after_send("POST", self.url, self.fields, answer)


@pytest.fixture
def place(tmp_path: Path, erp: ErpServer, erp_user: ErpUser, isolated_home: Path) -> Iterator[_Place]:
    jobs = Jobs.open()  # the CLI's default store, in this test's TASKCREW_HOME
    yield _Place(jobs, erp, erp_user)
    jobs.close()


def test_every_surface_names_the_send_in_doubt_of_a_job_not_ended_and_only_that(
    place: _Place, tmp_path: Path, console_users: Path
) -> None:
    jobs = place.jobs
    # a worker stopped mid-send: the leg handed back, the job queued again, no answer recorded
    stopped = place.running("Enter the Northwind invoice (stopped)")
    place.send(stopped, None)
    assert jobs.hand_back(stopped.id, 0, "w1", "the worker stopped", leg_ends=True)
    # a gateway answered (the system may still apply it); the job then parked on a question
    gateway = place.running("Enter the Northwind invoice (gateway)")
    place.send(gateway, SendOutcome(http_status=502))
    request = ApprovalRequest(kind="form_submission", method="POST", url=place.url, fields=[])
    request.fields.append(FieldValue(name="amount", value="1.00"))
    approval = jobs.park(gateway.id, kind="approval", key="k-gateway", request=request)
    jobs.mark(gateway.id, "waiting", only_if=("running",), reason=f"waiting for approval {approval.id}")
    # no answer, and the leg then failed: a retry resumes it
    failed = place.running("Enter the Northwind invoice (failed)")
    place.send(failed, SendOutcome(detail="timed out"))
    jobs.mark(
        failed.id, "failed", only_if=("running",), reason="the ERP did not answer", finished_at=utcnow()
    )
    # not in doubt: an answer that says saved; a finished job (its outcome says what changed); a send
    # in doubt that a person then judged and approved again, that one answered
    answered = place.running("Enter the Northwind invoice (answered)")
    place.send(answered, SendOutcome(http_status=303))
    assert jobs.hand_back(answered.id, 0, "w1", "the worker stopped", leg_ends=True)
    finished = place.running("Enter the Northwind invoice (finished)")
    place.send(finished, None)
    assert jobs.finish(finished.id, "incomplete", "a send with no clear answer (may be saved)", leg=0)
    judged = place.running("Enter the Northwind invoice (judged)")
    place.send(judged, None)
    place.send(judged, SendOutcome(http_status=303), approve=True)  # she approved the resend
    assert [i.approved_again for i in sorted(jobs.intents(judged.id), key=lambda i: i.key)] == [False, True]
    assert jobs.hand_back(judged.id, 0, "w1", "the worker stopped", leg_ends=True)

    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", count)
    try:
        listed = runner.invoke(app, ["jobs", "list"])
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", count)
    assert listed.exit_code == 0, listed.output
    assert _flat(listed.output).count(DOUBT) == 3, listed.output  # stopped, gateway, failed
    # cheap: the listing's intents are read in one query, not one per job
    assert len([s for s in statements if "FROM taskcrew_intents" in s]) == 1, statements

    as_json = runner.invoke(app, ["jobs", "list", "--json"])
    assert as_json.exit_code == 0, as_json.output
    notes = {job["id"]: job["note"] for job in json.loads(as_json.output)}
    said = {  # named first; what the job's state says follows it
        stopped.id: f"{DOUBT} (POST {place.url}: no answer yet): {SETTLE}",
        gateway.id: f"{DOUBT} (POST {place.url}: answered HTTP 502 — unknown): {SETTLE}",
        failed.id: f"{DOUBT} (POST {place.url}: no answer: timed out): {SETTLE}",
    }
    assert notes[gateway.id].endswith(
        f"; parked: waiting for approval {approval.id}; `taskcrew approvals list` shows it"
    )
    for job_id, doubt in said.items():
        note = notes[job_id]
        assert note.startswith(doubt), note
        assert note in _flat(listed.output), listed.output  # the listing says it as the JSON does
        shown = runner.invoke(app, ["jobs", "show", job_id])
        assert shown.exit_code == 0, shown.output
        assert f"note: {note}" in _flat(shown.output), shown.output
        assert json.loads(shown.output[: shown.output.index("\n}\n") + 2])["note"] == note
    for job in (answered, finished, judged):
        assert DOUBT not in notes[job.id], notes[job.id]
        assert DOUBT not in runner.invoke(app, ["jobs", "show", job.id]).output

    client = client_as("ana", jobs, tmp_path, console_users, follow_redirects=True)
    page = _flat(html.unescape(client.get("/jobs").text))
    assert page.count(DOUBT) == 3, page
    for job_id in said:
        one = _flat(html.unescape(client.get(f"/jobs/{job_id}").text))
        assert said[job_id] in one, one  # the same words; what the state says in the console's
    assert DOUBT not in html.unescape(client.get(f"/jobs/{answered.id}").text)


# ---- a real worker stopped mid-send, as for an upgrade --------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_worker_stopped_while_its_payment_is_on_its_way_leaves_a_job_that_says_so(
    workers: Workers,  # noqa: F811
    proxy: HoldingProxy,  # noqa: F811
) -> None:
    """The operator stops a worker to upgrade it while its payment is on its way (held): the leg is
    handed back and the job is queued again. `jobs list` says a send may have been saved."""
    job = workers.jobs.submit(HOOLI, submitted_by="ana", options=JobOptions(auto_approve=True, **SCRIPTED))
    on_its_way = proxy.hold("POST", PAY_HOOLI)
    command = workers.command("worker-a", 3, 1, "--stop-grace", "1")
    command[command.index("--erp-url") + 1] = proxy.url  # the ERP through the proxy
    worker = subprocess.Popen(
        command,
        env=workers.env,
        stdout=workers.log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    workers.procs.append(worker)
    workers.wait_for("the payment to be on its way", on_its_way.arrived.is_set, timeout=300)
    worker.send_signal(signal.SIGTERM)  # stopped the documented way, to upgrade it
    workers.wait_for("the worker to exit", lambda: worker.poll() is not None, timeout=120)
    back = workers.jobs.get(job.id)
    assert back.status == "queued", (back.status, back.reason)
    [intent] = workers.jobs.intents(job.id)
    assert intent.status in ("recorded", "uncertain"), intent  # no answer came back

    listed = runner.invoke(app, ["jobs", "list", "--db", workers.url])
    assert listed.exit_code == 0, listed.output
    text = _flat(listed.output)
    assert f"{DOUBT} (POST {proxy.url}{PAY_HOOLI}: " in text and SETTLE in text, listed.output
    assert "queued again: resumes from its last checkpoint" in text, listed.output
