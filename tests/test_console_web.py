"""The console driven in real Chromium (Playwright) against the served app, on a real job store.

Set TASKCREW_CONSOLE_SHOTS=<folder> to save a screenshot of each page the tests reach (that is
how docs/console/*.png are made).
"""

from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from console_seed import XSS_INVOICE, XSS_TITLE, parked_job, write_run, write_sweep
from fixtures_console import PASSWORDS, ConsoleEnv, flash, follow, shot, shown_width

from taskcrew.crew.trace import ControlEvent, RunFinished, Tracer
from taskcrew.jobs import Approval, ApprovalRequest, Jobs
from taskcrew.tools.human import FieldValue

pytestmark = pytest.mark.browser


def test_login_required_and_sessions_survive_a_restart(console_env: ConsoleEnv) -> None:
    # the audit log is the process's approvals authority's: count only what this test adds to it
    earlier = len(console_env.server.server.config.app.app.state.console.audit.entries())
    page = console_env.page_as(None)
    for path in ("/approvals", "/jobs", "/runs", "/eval", "/audit"):
        page.goto(console_env.url + path)
        assert page.url.startswith(f"{console_env.url}/login"), path
        assert page.get_by_role("heading", name="Sign in").is_visible()
    with httpx.Client(base_url=console_env.url) as client:
        assert client.get("/jobs/job-x/live").status_code == 401
        assert client.get("/approvals/apr-x/screenshot").status_code == 401
        assert client.get("/runs/x/files/a.png").status_code == 401
        assert (
            client.post(
                "/jobs", data={"task": "pay everyone"}, headers={"origin": console_env.url}
            ).status_code
            == 401
        )
    page.get_by_label("Name").fill("ana")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign in").click()
    assert "Wrong name or password" in page.locator("[role=alert]").inner_text()
    page.get_by_label("Name").fill("ana")
    page.get_by_label("Password").fill(PASSWORDS["ana"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/audit$"))  # back where the login interrupted
    cookie = next(c for c in page.context.cookies() if c["name"] == "taskcrew_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    console_env.restart()  # sessions are persisted: still logged in
    page.goto(console_env.url + "/jobs")
    assert page.locator("#whoami").inner_text() == "ana"
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r".*/login$"))  # the logout POST has been answered
    page.goto(console_env.url + "/jobs")
    assert page.url.startswith(f"{console_env.url}/login")
    entries = console_env.server.server.config.app.app.state.console.audit.entries()[earlier:]
    assert [e.action for e in entries if e.action.startswith(("login", "logout"))] == [
        "login_failed",
        "login",
        "logout",
    ]  # the same log also holds the seeded jobs' approval requests (taskcrew.approvals)


def test_csrf_foreign_page_and_missing_token_are_refused(console_env: ConsoleEnv) -> None:
    job, approval = parked_job(console_env.jobs, "ana", amount="50.00")
    page = console_env.page_as("bob")

    class Attacker(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = (
                f'<form id=f method=post action="{console_env.url}/approvals/{approval.id}/decide">'
                "<input name=action value=approve><input name=csrf value=guess></form>"
                "<script>document.getElementById('f').submit()</script>"
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    evil = ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        page.wait_for_load_state("networkidle")
        assert "CSRF check failed" in page.content()
    finally:
        evil.shutdown()
    assert console_env.jobs.approval(approval.id).status == "pending"
    # The right token from a foreign origin is refused too, and so is the own origin without token.
    page.goto(f"{console_env.url}/approvals/{approval.id}")
    token = page.locator("input[name=csrf]").first.get_attribute("value")
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    with httpx.Client(base_url=console_env.url, cookies=cookies) as client:
        foreign = client.post(
            f"/approvals/{approval.id}/decide",
            data={"csrf": token, "action": "approve"},
            headers={"origin": "http://127.0.0.1:1"},
        )
        assert foreign.status_code == 403
        missing = client.post(
            f"/approvals/{approval.id}/decide",
            data={"action": "approve"},
            headers={"origin": console_env.url},
        )
        assert missing.status_code == 403
    assert console_env.jobs.approval(approval.id).status == "pending"
    assert console_env.jobs.get(job.id).status == "waiting"


def test_second_approver_rule_in_the_browser(console_env: ConsoleEnv) -> None:
    shot_png = console_env.root / "form.png"
    ana = console_env.page_as("ana")
    ana.goto(console_env.url + "/jobs")
    ana.set_content(
        "<form style='padding:12px;width:420px'><h3>New bill</h3><label>Vendor <input value='Northwind Traders'>"
        "</label><br><label>Amount <input value='12,000.00'></label><br><button>Save bill</button></form>"
    )
    ana.locator("form").screenshot(path=str(shot_png))
    run = write_run(
        console_env.runs, "2026-12-01-parked", "Enter the latest Northwind invoice", finished=None
    )
    job, approval = parked_job(console_env.jobs, "ana", amount="12,000.00", screenshot=shot_png, run_dir=run)
    bob = console_env.page_as("bob")
    row = bob.locator("tr", has_text=approval.id)
    assert "amount over threshold" in row.inner_text() and "two approvers (not ana)" in row.inner_text()
    bob.get_by_role("link", name=approval.id).click()
    fields = bob.locator("#fields")
    assert "12,000.00" in fields.inner_text() and "inbox/northwind.pdf, page 1, line 2" in fields.inner_text()
    assert "OCR-read" in fields.locator("tr", has_text="amount").inner_text()
    assert "read by OCR — check it" in fields.locator("tr", has_text="invoice_number").inner_text()
    assert shown_width(bob) > 0
    assert "submitted by ana" in bob.locator("main").inner_text()
    assert "[browser_operator] Enter the bill" in bob.locator("#plan").inner_text()
    follow(bob, bob.get_by_role("button", name="Approve"))
    assert "second, different approver" in flash(bob)
    assert console_env.jobs.approval(approval.id).status == "pending"
    ana.goto(f"{console_env.url}/approvals/{approval.id}")
    assert "First approval by bob" in ana.locator("main").inner_text()
    # the submitter is told before the click (the authority's rule), and offered no Approve button
    assert ana.locator("form.decide button[value=approve]").count() == 0
    assert "Two-person rule: you submitted this task" in ana.locator("#approving").inner_text()
    with ana.expect_navigation():  # a page altered to send it all the same is refused, and says why
        ana.evaluate("() => { const b = document.querySelector('form.decide button[value=reject]'); b.value = 'approve'; b.click(); }")  # fmt: skip
    assert "Two-person rule" in flash(ana)
    assert console_env.jobs.approval(approval.id).status == "pending"
    carol = console_env.page_as("carol")
    carol.goto(f"{console_env.url}/approvals/{approval.id}")
    carol.get_by_role("button", name="Approve").click()
    carol.wait_for_url(re.compile(r".*/approvals$"))
    assert "approved" in flash(carol)
    decided = console_env.jobs.approval(approval.id)
    assert decided.status == "approved" and decided.decided_by == "bob+carol"
    assert console_env.jobs.get(job.id).status == "queued"
    carol.goto(console_env.url + "/audit")
    audit = carol.locator("#audit").inner_text()
    assert "approve_first" in audit and "approve_refused" in audit
    assert "Hash chain intact" in carol.locator("#chain").inner_text()
    shot(carol, "audit")


def _unflagged(jobs: Jobs, amount: str, vendor: str = "Northwind Traders") -> Approval:
    """An approval with no flag (``parked_job``'s values were read by OCR: flagged)."""
    job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    fields = {"vendor": vendor, "invoice_number": "INV-1", "amount": amount, "currency": "EUR"}
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )
    approval = jobs.park(job.id, kind="approval", key=f"key-{job.id}", request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def test_reject_answer_and_bulk_from_the_page_keyboard_only(console_env: ConsoleEnv) -> None:
    _, rejected = parked_job(console_env.jobs, "ana", amount="90.00")
    _, answered = parked_job(console_env.jobs, "ana", amount="95.00")
    bulk1, bulk2 = _unflagged(console_env.jobs, "10.00"), _unflagged(console_env.jobs, "11.00")
    _, ocr = parked_job(console_env.jobs, "ana", amount="10.00")  # values read by OCR
    _, bank = parked_job(console_env.jobs, "ana", amount="12.00", extra={"iban": "DE89370400440532013000"})
    bob = console_env.page_as("bob")
    assert "bank details change" in bob.locator("tr", has_text=bank.id).inner_text()
    bob.goto(f"{console_env.url}/approvals/{rejected.id}")
    bob.get_by_label("Message or reason").fill("wrong vendor")
    bob.keyboard.press("Tab")
    bob.keyboard.press("Tab")  # Approve → Reject
    assert bob.evaluate("document.activeElement.textContent") == "Reject"
    bob.keyboard.press("Enter")
    bob.wait_for_url(re.compile(r".*/approvals$"))
    assert console_env.jobs.approval(rejected.id).status == "rejected"
    bob.goto(f"{console_env.url}/approvals/{answered.id}")
    follow(bob, bob.get_by_role("button", name="Answer with message"))
    assert "needs a message" in flash(bob)
    bob.get_by_label("Message or reason").fill("Use the PDF's total")
    follow(bob, bob.get_by_role("button", name="Answer with message"))
    got = console_env.jobs.approval(answered.id)
    assert (
        got.status == "answered" and got.decision is not None and got.decision.text == "Use the PDF's total"
    )
    bob.goto(console_env.url + "/approvals")
    for flagged in (bank, ocr):  # bulk approval would refuse them: no checkbox, decided one by one
        row = bob.locator("#worklist tr", has_text=flagged.id)
        assert row.locator("input[type=checkbox]").count() == 0 and "one by one" in row.inner_text()
    # a form that sends one all the same (a page open since before, or edited) is refused, and says why
    add = "id => { const i = Object.assign(document.createElement('input'), {type: 'hidden', name: 'ids', value: id}); document.getElementById('bulk').append(i) }"  # fmt: skip
    bob.evaluate(add, ocr.id)
    bob.get_by_label(f"Select {bulk1.id} for bulk approval").check()
    follow(bob, bob.get_by_role("button", name="Approve selected").last)
    assert "Bulk approval refused" in flash(bob) and f"{ocr.id} is flagged (ocr_value" in flash(bob)
    assert console_env.jobs.approval(bulk1.id).status == console_env.jobs.approval(ocr.id).status == "pending"
    bob.get_by_label(f"Select {bulk1.id} for bulk approval").check()
    bob.get_by_label(f"Select {bulk2.id} for bulk approval").check()
    follow(bob, bob.get_by_role("button", name="Approve selected").last)
    assert "2 approvals approved" in flash(bob)
    assert (
        console_env.jobs.approval(bulk1.id).status == console_env.jobs.approval(bulk2.id).status == "approved"
    )
    assert console_env.jobs.approval(bank.id).status == "pending"


def test_untrusted_text_is_escaped_everywhere(console_env: ConsoleEnv) -> None:
    run = write_run(console_env.runs, "2026-12-01-xss", f"Enter {XSS_INVOICE}", tool_result=XSS_TITLE)
    job, approval = parked_job(
        console_env.jobs, "ana", vendor=XSS_INVOICE, task=f"Pay {XSS_TITLE}", run_dir=run
    )
    page = console_env.page_as("bob")
    for path in (
        "/approvals",
        f"/approvals/{approval.id}",
        f"/jobs/{job.id}",
        "/jobs",
        "/runs",
        f"/runs/{run.name}",
    ):
        page.goto(console_env.url + path)
        page.wait_for_load_state("load")
        assert page.evaluate("window.__pwned") is None, path
        assert page.locator("img[src=x]").count() == 0, path
        assert page.locator("main script").count() == 0, path
    assert page.dialogs == []
    page.goto(f"{console_env.url}/runs/{run.name}")
    if page.locator("#folder-says").count():  # not the job's run: the folder's account is collapsed
        page.locator("#folder-says > summary").click()
    text = page.locator("main").inner_text()
    assert XSS_TITLE in text and XSS_INVOICE in text  # shown as text
    assert page.locator(".report a[href^=javascript]").count() == 0
    page.goto(f"{console_env.url}/approvals/{approval.id}")
    assert XSS_INVOICE in page.locator("#fields").inner_text()


def test_runs_and_eval_pages(console_env: ConsoleEnv) -> None:
    write_run(console_env.runs, "2026-12-01-0900-northwind", "Enter the Northwind invoice")
    write_run(
        console_env.runs, "2026-12-01-1000-contoso", "Enter the Contoso invoice", finished="not_verified"
    )
    write_sweep(console_env.evals)
    page = console_env.page_as("bob")
    page.goto(console_env.url + "/runs")
    assert page.locator("#runs tbody tr").count() == 2
    shot(page, "runs")
    page.get_by_label("Outcome").select_option("not_verified")
    follow(page, page.get_by_role("button", name="Filter"))
    assert page.locator("#runs tbody tr").count() == 1 and "Contoso" in page.locator("#runs").inner_text()
    page.get_by_label("Task contains").fill("northwind")
    page.get_by_label("Outcome").select_option("")
    follow(page, page.get_by_role("button", name="Filter"))
    follow(page, page.get_by_role("link", name="2026-12-01-0900-northwind"))
    assert "INV-1 Northwind 1,250.00 EUR" in page.locator("#criteria").inner_text()
    assert page.locator(".timeline li.fail").count() >= 1
    assert page.locator(".report table").count() == 1  # markdown rendered
    assert shown_width(page) == 1
    page.goto(console_env.url + "/eval")
    page.wait_for_url(re.compile(r".*/eval/sweep-1$"))
    assert page.locator("svg[role=img]").count() == 5  # pass^1, pass^2, cost, time, scatter
    assert "anthropic/claude-x" in page.locator("#models").inner_text()
    assert page.get_by_label("pass^2 per model").locator("rect").count() == 2


def test_submit_cancel_retry_and_live_progress(console_env: ConsoleEnv) -> None:
    page = console_env.page_as("ana")
    page.goto(console_env.url + "/jobs")
    page.get_by_label("New task").fill("Enter every invoice in the inbox that is not yet in the ERP")
    page.get_by_role("button", name="Submit task").click()
    page.wait_for_url(re.compile(r".*/jobs/job-[^/]+$"))
    job_id = page.url.rsplit("/", 1)[1]
    job = console_env.jobs.get(job_id)
    assert job.submitted_by == "ana" and job.status == "queued"
    follow(page, page.get_by_role("button", name="Cancel job"))
    assert console_env.jobs.get(job_id).status == "cancelled" and "cancelled" in flash(page)
    follow(page, page.get_by_role("button", name="Retry job"))
    assert console_env.jobs.get(job_id).status == "queued"
    shot(page, "jobs")
    # A worker picks it up and writes its run folder; the page follows live (server-sent events).
    run = write_run(console_env.runs, "2026-12-01-live", job.task, finished=None)
    console_env.jobs.mark(job_id, "running", only_if=("queued",), worker="w1", run_dir=str(run))
    page.reload()
    assert "running" in page.locator("#job-status").inner_text()
    tracer = Tracer(run / "trace.jsonl")

    def progress() -> None:
        time.sleep(1.0)
        tracer.emit(ControlEvent(action="replan", reason="the bills page changed"))
        time.sleep(1.0)
        tracer.emit(
            RunFinished(
                outcome="done",
                reason="verified",
                llm_calls=3,
                input_tokens=1,
                output_tokens=1,
                cost_usd=None,
                seconds=3,
            )
        )
        console_env.jobs.finish(job_id, "done", "verified")

    worker = threading.Thread(target=progress)
    worker.start()
    page.locator("#run-timeline", has_text="the bills page changed").wait_for()
    page.locator("#job-status", has_text="finished: done").wait_for()
    worker.join()
    assert "finished: done" in page.locator("#run-timeline").inner_text()
    shot(page, "job")
    audit = [
        (e.who, e.action) for e in console_env.server.server.config.app.app.state.console.audit.entries()
    ]
    assert ("ana", "submit") in audit and ("ana", "cancel") in audit and ("ana", "retry") in audit


def test_a_task_with_a_terminal_control_is_refused_on_the_console_as_at_the_cli(
    console_env: ConsoleEnv,
) -> None:
    # one rule in the job store (Jobs.submit): a task ending in ESC[1A ESC[M hid the next job from
    # `jobs list`; the CLI refused it, the console's Submit form did not
    page = console_env.page_as("ana")
    page.goto(console_env.url + "/jobs")
    page.get_by_label("New task").fill("Enter the Northwind invoice\x1b[1A\x1b[M")
    page.get_by_role("button", name="Submit task").click()
    page.wait_for_load_state()
    assert "U+001B ESCAPE" in flash(page) and console_env.jobs.list() == []
    # a task of several lines is fine: the browser sends its line breaks as CR LF
    page.get_by_label("New task").fill("Enter the Northwind invoice\nthen tell me the due date")
    page.get_by_role("button", name="Submit task").click()
    page.wait_for_url(re.compile(r".*/jobs/job-[^/]+$"))
    [job] = console_env.jobs.list()
    assert job.task == "Enter the Northwind invoice\nthen tell me the due date"
