"""What an approver sees, driven in real Chromium: the inbox as a worklist (columns, sorting,
filters), one approval as a decision page whose values open their source documents (an e-mail at
its line, a PDF rendered to an image, a scan with its OCR confidence), run progress in words,
messages only from the server, the Host check, and every page at two screen sizes with an
accessibility check of names and roles.

TASKCREW_CONSOLE_SHOTS=docs/console saves a full-page screenshot of every page (docs/console.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from console_seed import write_run, write_sweep
from fixtures_console import ConsoleEnv, flash, follow, shot, shots

from taskcrew.crew.models import Plan, PlanStep, StepReport
from taskcrew.crew.trace import (
    PlanMade,
    PolicyEvent,
    RunStarted,
    StepEvent,
    SubmissionEvent,
    ToolCallEvent,
    Tracer,
)
from taskcrew.jobs import Approval, ApprovalRequest, FieldSource, Jobs
from taskcrew.tools.human import FieldValue, RecordState
from taskcrew.tools.submissions import SubmissionResult

pytestmark = pytest.mark.browser

EML = "Invoice from Northwind Traders.eml"
SCAN = "scans/IMG_20260926_0931.jpg"
PDF = "downloads/invoice.pdf"


def park(
    jobs: Jobs,
    fields: dict[str, str],
    sources: dict[str, str],
    *,
    url: str = "http://127.0.0.1:8800/bills/new",
    summary: str = "",
    task: str = "Enter the latest invoice",
    notes: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    record: RecordState | None = None,
    files: dict[str, list[str]] | None = None,
) -> Approval:
    """A job a worker ran up to its approval and parked there (the store's own park). ``labels``:
    the chosen option's text of a select, as the browser gate records it beside "1 (Label)";
    ``record``: the changed record as its system showed it; ``files``: the files a step's trace
    cites, as data (``FieldSource.files``)."""
    job = jobs.submit(task, submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[
            FieldValue(name=k, value=v, note=(notes or {}).get(k), label=(labels or {}).get(k))
            for k, v in fields.items()
        ],
        summary=summary,
        page_url=url,
        record=record,
    )
    approval = jobs.park(
        job.id,
        kind="approval",
        key=f"key-{job.id}",
        request=request,
        sources=[
            FieldSource(name=k, value=fields[k], source=v, files=(files or {}).get(k))
            for k, v in sources.items()
        ],
    )
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def seed(jobs: Jobs) -> dict[str, Approval]:
    northwind = park(
        jobs,
        {
            "vendor_id": "1 (Northwind Traders)",
            "invoice_number": "INV-2057",
            "amount": "1284.50",
            "currency": "USD",
            "due_date": "2026-10-12",
        },
        {
            "vendor_id": f"step 1 (file_reader: Find the invoice) found target = Northwind Traders, citing {EML}",
            "invoice_number": f"step 1 (file_reader: Find the invoice) found invoice_number = INV-2057, citing {EML}",
        },
        summary=(
            'button "Save bill"\nwhere the values come from:\n'  # vendor_id: only the job's trace knows it
            f"  amount = 1284.50: {EML}, line 43 (cited in step 1)\n"
            f"  due_date = 2026-10-12: step 1 (file_reader) reported it as 'due_date'"
        ),
        task="Find the latest invoice from Northwind Traders and enter it",
        labels={"vendor_id": "Northwind Traders"},
        files={"vendor_id": [EML], "invoice_number": [EML]},
    )
    contoso = park(
        jobs,
        {
            "vendor_id": "5 (Contoso Office Supplies)",
            "amount": "275.05",
            "currency": "USD",
            "due_date": "2026-10-26",
        },
        {"amount": f"{SCAN} (OCR), line 21 (cited in step 1)"},
        task="Enter the Contoso invoice from the photo",
        labels={"vendor_id": "Contoso Office Supplies"},
    )
    globex = park(
        jobs,
        {
            "vendor": "Globex Corporation",
            "amount": "8,000.00",
            "currency": "EUR",
            "iban": "DE89370400440532013000",
        },
        {"amount": f"{PDF}, page 1, line 22 (cited in step 1)"},
        task="Enter the Globex invoice and its new bank account",
    )
    initrode = park(
        jobs,
        {"name": "Initrode Ltd", "email": "ap@initrode.example"},
        {},
        url="http://127.0.0.1:8800/vendors/new",
        task="Set up the vendor Initrode",
    )
    return {"northwind": northwind, "contoso": contoso, "globex": globex, "initrode": initrode}


def _order(page: Any) -> list[str]:
    return [str(r.get_attribute("data-approval")) for r in page.locator("#worklist tbody tr").all()]


def test_the_inbox_is_a_worklist_sortable_and_filterable(console_env: ConsoleEnv) -> None:
    a = seed(console_env.jobs)
    page = console_env.page_as("bob")
    row = page.locator("#worklist tr", has_text=a["northwind"].id).inner_text()
    for shown in ("Northwind Traders", "INV-2057", "1284.50 USD", "2026-10-12", "create bill", "no flag"):
        assert shown in row, shown
    assert "one approver" in row and "1 (Northwind" not in row
    assert "value read by OCR" in page.locator("#worklist tr", has_text=a["contoso"].id).inner_text()
    globex = page.locator("#worklist tr", has_text=a["globex"].id).inner_text()
    assert "amount over threshold" in globex and "bank details change" in globex
    assert "two approvers (not ana)" in globex
    assert "new vendor" in page.locator("#worklist tr", has_text=a["initrode"].id).inner_text()
    shots(page, "approvals")
    follow(page, page.get_by_role("link", name="Amount"))
    assert _order(page) == [a["contoso"].id, a["northwind"].id, a["globex"].id, a["initrode"].id]
    assert page.locator("th[aria-sort=ascending]").inner_text().startswith("Amount")
    follow(page, page.get_by_role("link", name="Amount"))
    assert _order(page) == [a["globex"].id, a["northwind"].id, a["contoso"].id, a["initrode"].id]
    page.get_by_label("Risk").select_option("ocr")
    follow(page, page.get_by_role("button", name="Filter"))
    assert _order(page) == [a["contoso"].id]
    page.get_by_label("Risk").select_option("none")
    follow(page, page.get_by_role("button", name="Filter"))
    assert _order(page) == [a["northwind"].id]
    page.get_by_label("Risk").select_option("")
    page.get_by_label("Search").fill("globex")
    follow(page, page.get_by_role("button", name="Filter"))
    assert _order(page) == [a["globex"].id]
    follow(page, page.get_by_role("link", name="Clear filters"))
    assert len(_order(page)) == 4


def test_a_decision_page_opens_each_value_at_its_source(console_env: ConsoleEnv) -> None:
    a = seed(console_env.jobs)
    page = console_env.page_as("bob")
    # documents are parsed (and the scan read by tesseract) in a child process, as the run read them:
    # on a loaded machine that takes a while, so every step here waits up to two minutes
    page.set_default_timeout(120_000)
    page.goto(f"{console_env.url}/approvals/{a['northwind'].id}")
    keys = page.locator("#key-values")
    assert keys.locator("tr", has_text="Payee").locator("code").inner_text() == "Northwind Traders"
    assert "1284.50 USD" in keys.locator("tr", has_text="Amount").inner_text()
    assert "2026-10-12" in keys.locator("tr", has_text="Due date").inner_text()
    # one origin per value: the step that found vendor_id, never "not found" beside it
    assert "not found in any source" not in page.locator("main").inner_text()
    assert "found target = Northwind Traders" in page.locator("#fields tr", has_text="vendor_id").inner_text()
    assert "One approver suffices" in page.locator("#rule").inner_text()
    shots(page, "approval")
    keys.locator("tr", has_text="Payee").get_by_role("link").click()  # cited without a line: found in it
    assert "Northwind Traders" in page.locator("#doc-lines tr.hit").inner_text()
    page.go_back()
    keys.get_by_role("link", name=f"{EML}, line 43").click()
    page.wait_for_url(re.compile(r".*/source\?.*#line-43$"))
    assert "TOTAL PAYABLE 1,284.50 USD" in page.locator("#doc-lines tr.hit").inner_text()
    assert page.locator("#doc-lines tr.hit td.ln").inner_text() == "43"
    shot(page, "document-email")

    page.goto(f"{console_env.url}/approvals/{a['contoso'].id}")
    amount = page.locator("#key-values tr", has_text="Amount")
    assert "read by OCR — check it against the document" in amount.inner_text()
    amount.get_by_role("link").first.click()
    image = page.get_by_role("img", name=f"The scanned document {SCAN}")
    assert _width(image) > 100
    assert re.search(r"confidence \d+%", page.locator("#ocr-confidence").inner_text())
    assert "Total" in page.locator("#doc-lines tr.hit").inner_text()
    shot(page, "document-scan")

    page.goto(f"{console_env.url}/approvals/{a['globex'].id}")
    assert "Two-person rule" in page.locator("#rule").inner_text()
    assert page.locator("#key-values tr", has_text="Bank details").count() == 1
    page.locator("#key-values tr", has_text="Amount").get_by_role("link").first.click()
    rendered = page.get_by_role("img", name=f"Page 1 of {PDF}")
    assert _width(rendered) > 300  # the PDF, drawn
    assert "2,150.00" in page.locator("#doc-lines tr.hit").inner_text()
    shot(page, "document-pdf")
    with httpx.Client(base_url=console_env.url, cookies=_cookies(page)) as client:
        base = f"/approvals/{a['globex'].id}/source"
        assert client.get(base, params={"file": "../../../../etc/passwd"}).status_code == 404
        assert client.get(base, params={"file": "Statement of account.eml"}).status_code == 404  # not cited
        assert client.get(f"{base}/image", params={"file": PDF, "page": "1"}).status_code == 200


def _width(image: Any) -> int:
    """The image's width once it has loaded (0: it failed to)."""
    return int(
        image.evaluate(
            "img => img.complete ? img.naturalWidth : new Promise(done => {"
            " img.onload = () => done(img.naturalWidth); img.onerror = () => done(0); })"
        )
    )


def _cookies(page: Any) -> dict[str, str]:
    return {c["name"]: c["value"] for c in page.context.cookies()}


def test_a_payment_asked_again_says_why_and_shows_the_bills_amount_first(console_env: ConsoleEnv) -> None:
    """Paying a bill sends only a date: the amount the approver decides on is the bill's, read from
    its page, and a payment asked again (the bill changed since it was approved) says so first."""
    jobs, bill = console_env.jobs, "http://127.0.0.1:8800/bills/BILL-0005"
    job = jobs.submit("Mark the Hooli Cloud Services bill HCS-2026-09 as paid", submitted_by="ana")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    why = f"bob approved it when the amount on {bill} was 499.00 USD; it is now 9500.00 USD"
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{bill}/pay",
        page_url=bill,
        fields=[FieldValue(name="paid_on", value="2026-10-02")],
        looked_up={"amount": "9500.00", "currency": "USD", "source": bill},
        asked_again=why,
    )
    approval = jobs.park(job.id, kind="approval", key=f"key-{job.id}", request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    page = console_env.page_as("bob")
    row = page.locator("#worklist tr", has_text=approval.id).inner_text()
    assert "asked again" in row and "9500.00" in row
    page.goto(f"{console_env.url}/approvals/{approval.id}")
    amount = page.locator("#key-values tr", has_text="Amount")
    assert "9500.00 USD" in amount.inner_text() and amount.get_by_role("link", name=bill).count() == 1
    flags = page.locator("#risk-flags li").all_inner_texts()
    assert flags[0].startswith("⚠ asked again") and why in flags[0]
    assert any("amount over threshold" in f for f in flags)
    shots(page, "approval-asked-again")


def test_messages_come_only_from_the_server_and_foreign_hosts_are_refused(console_env: ConsoleEnv) -> None:
    a = seed(console_env.jobs)
    page = console_env.page_as("bob")
    # a page on another port of this host can set cookies for it (cookies ignore ports)
    page.context.add_cookies(
        [
            {
                "name": "taskcrew_console_flash",
                "value": "Approve every pending payment now|info",
                "url": console_env.url,
            }
        ]
    )
    page.goto(f"{console_env.url}/approvals")
    assert "Approve every pending payment" not in page.locator("main").inner_text()
    page.goto(f"{console_env.url}/approvals/{a['northwind'].id}")
    follow(page, page.get_by_role("button", name="Reject"))
    assert "rejected" in flash(page)
    page.reload()
    assert page.locator(".flash").count() == 0  # said once
    port = console_env.server.port
    with httpx.Client(cookies=_cookies(page)) as client:
        ok = client.get(f"{console_env.url}/approvals", headers={"host": f"127.0.0.1:{port}"})
        assert ok.status_code == 200 and "Approvals waiting" in ok.text
        assert (
            client.get(f"{console_env.url}/approvals", headers={"host": f"localhost:{port}"}).status_code
            == 200
        )
        for host in (f"rebind.attacker.example:{port}", "127.0.0.1:1", ""):
            refused = client.get(f"{console_env.url}/approvals", headers={"host": host})
            assert refused.status_code in (400, 421), host
            assert "Approvals waiting" not in refused.text


def test_run_progress_in_words_with_the_raw_trace_one_click_away(console_env: ConsoleEnv) -> None:
    folder = console_env.runs / "2026-12-01-northwind"
    tracer = Tracer(folder / "trace.jsonl")
    tracer.emit(
        RunStarted(task="Enter the Northwind invoice", worker_model="scripted/solver", verifier_model="v")
    )
    plan = Plan(
        goal="Enter INV-2057",
        success_criteria=["a bill for INV-2057"],
        steps=[PlanStep(role="file_reader", title="Read it", instructions="read the invoice")],
        changes_data=True,
    )
    tracer.emit(PlanMade(plan=plan))
    erp = "http://127.0.0.1:8800"

    def call(tool: str, args: dict[str, Any], result: str, ok: bool = True) -> None:
        tracer.emit(
            ToolCallEvent(
                role="browser_operator", step=1, tool=tool, args=args, ok=ok, result=result, seconds=0.1
            )
        )

    call(
        "read_file",
        {"path": EML},
        f"File: {EML} (email, 4.9 KB)\n\nSubject: Invoice INV-2057\nInvoice No. INV-2057",
    )
    call(
        "read_file", {"path": PDF}, f"File: {PDF} (pdf, 2.1 KB, 1 page(s))\n\nINVOICE\nInvoice Number GX-5531"
    )
    login = [
        {"action": "type", "index": 2, "text": "{{secret:ERP_USERNAME}}"},
        {"action": "type", "index": 3, "text": "{{secret:ERP_PASSWORD}}"},
        {"action": "click", "index": 4},
    ]
    call("browser_act", {"actions": [{"action": "navigate", "url": f"{erp}/bills"}]}, "Result: OK")
    call("browser_act", {"actions": login}, "Result: OK")
    form = [{"action": "type", "index": 7, "text": "INV-2057"}, {"action": "click", "index": 13}]
    new_bill = f"{erp}/bills/new"

    def sent(result: str, detail: str, status: int | None) -> None:  # the gate, during the action
        tracer.emit(
            SubmissionEvent(
                submission=SubmissionResult(
                    method="POST", url=new_bill, result=result, http_status=status, detail=detail
                )
            )
        )

    sent("bounced", "then showed /login?next=/bills/new&reason=expired", 303)
    call(
        "browser_act",
        {"actions": form},
        f"Result: OK\nPage changed: /bills/new → {erp}/login?next=/bills/new&reason=expired",
    )
    tracer.emit(
        PolicyEvent(decision="allowed", detail={"url": f"{erp}/login?next=/bills/new&reason=expired"})
    )
    call("browser_act", {"actions": login}, "Result: OK")
    sent("unknown", "a server error or outage", 503)
    call("browser_act", {"actions": form}, "Result: FAILED\nError: HTTP 503 from POST /bills/new", ok=False)
    sent("saved", "then showed /bills/BILL-0011", 303)
    call("browser_act", {"actions": form}, f"Result: OK\nPage changed: /bills/new → {erp}/bills/BILL-0011")
    tracer.emit(
        StepEvent(
            index=0,
            role="browser_operator",
            title="Enter the bill",
            attempt=1,
            report=StepReport(status="done", summary="saved"),
        )
    )
    page = console_env.page_as("bob")
    page.goto(f"{console_env.url}/runs/{folder.name}")
    told = page.locator("#timeline").inner_text()
    for words in (
        f"read invoice INV-2057 in “{EML}” (e-mail)",
        f"read invoice GX-5531 in “{PDF}” (PDF)",
        "opened /bills",
        "logged in",
        "session expired — logged in again",
        "could not complete it: HTTP 503",
        "saved BILL-0011",
        "step 1 done: Enter the bill",
        # what the system did with each submission, in the gate's words, after the action that sent it
        "sent POST /bills/new: NOT saved — bounced to the login page",
        "sent POST /bills/new: UNKNOWN whether it was saved (HTTP 503",
        "sent POST /bills/new: saved — the system accepted it",
    ):
        assert words in told, words
    assert told.index("could not complete it: HTTP 503") < told.index("UNKNOWN whether it was saved")
    assert (
        told.index("logged in")
        < told.index("session expired — logged in again")
        < told.index("saved BILL-0011")
    )
    raw = page.locator("#raw-timeline")
    assert not raw.is_visible()
    page.get_by_text("Raw trace: every event").click()
    assert raw.is_visible() and "browser_operator: browser_act" in raw.inner_text()
    assert "submission: bounced" in raw.inner_text() and "step 1 (browser_operator" in raw.inner_text()
    shot(page, "run")


PAGES = ("/approvals", "/approvals/{northwind}", "/approvals/{globex}", "/jobs", "/jobs/{job}", "/runs")
PAGES += (
    "/runs/{run}",
    "/eval",
    "/eval/sweep-1",
    "/audit",
    "/approvals/{northwind}/source?file={eml}&line=44",
)

A11Y = """() => {
  const problems = [];
  const name = (el) => (el.getAttribute('aria-label') || (el.labels ? [...el.labels].map(l => l.textContent).join(' ') : '')
    || el.getAttribute('alt') || el.getAttribute('title') || el.textContent || el.value || '').trim();
  for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, img, svg[role=img], [role=region]')) {
    if (!name(el)) problems.push('no accessible name: ' + el.outerHTML.slice(0, 100));
  }
  for (const el of document.querySelectorAll('input:not([type=hidden]):not([type=checkbox]), select, textarea')) {
    if (!el.labels || !el.labels.length) problems.push('no label element: ' + el.outerHTML.slice(0, 100));
  }
  if (document.querySelectorAll('h1').length !== 1) problems.push('h1 count ' + document.querySelectorAll('h1').length);
  if (!document.querySelector('main') || !document.querySelector('header')) problems.push('landmarks missing');
  for (const t of document.querySelectorAll('table')) if (!t.querySelector('th[scope]')) problems.push('table without header cells');
  for (const el of document.querySelectorAll('td.nowrap a, .badge')) if (el.getClientRects().length > 1) problems.push('wrapped: ' + el.textContent);
  if (document.documentElement.scrollWidth > window.innerWidth + 1) problems.push('page scrolls sideways: ' + document.documentElement.scrollWidth);
  return problems;
}"""


def test_every_page_at_laptop_and_desktop_size_has_names_and_roles(
    console_env: ConsoleEnv, tmp_path: Path
) -> None:
    a = seed(console_env.jobs)
    run = write_run(
        console_env.runs, "2026-12-01-0900-northwind-traders-latest-invoice", "Enter the Northwind invoice"
    )
    write_sweep(console_env.evals)
    second = tmp_path / "more-evals"
    write_sweep(second)  # a folder of the same name under another root: listed too, not hidden
    console_env.settings.eval_dirs.append(second)
    console_env.restart()
    job = console_env.jobs.get(a["globex"].job_id)
    values = {
        "northwind": a["northwind"].id,
        "globex": a["globex"].id,
        "job": job.id,
        "run": run.name,
        "eml": EML,
    }
    page = console_env.page_as("bob")
    page.set_default_timeout(
        120_000
    )  # the document page parses its file in a child process (slow under load)
    for width, height in ((1280, 800), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        for path in PAGES:
            page.goto(console_env.url + path.format(**values))
            page.wait_for_load_state("load")
            assert page.get_by_role("navigation", name="Main").is_visible(), path
            problems = page.evaluate(A11Y)
            assert problems == [], (path, width, problems)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(console_env.url + "/eval")
    sweeps = page.locator("#sweeps").inner_text()
    assert page.locator("#sweeps tbody tr").count() == 2
    assert str(second / "sweep-1") in sweeps and str(console_env.evals / "sweep-1") in sweeps
    shot(page, "eval-index")
    page.goto(console_env.url + "/eval/sweep-1")
    assert (
        page.locator("ol.legend li").count() == 2
    )  # the scatter's points are named below it, never overlapping
    shot(page, "eval")
    login = console_env.page_as(None)
    login.goto(console_env.url + "/login")
    assert login.evaluate(A11Y) == []
    shot(login, "login")


BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_hidden_characters_and_padding_are_shown_and_fit_a_laptop_screen(console_env: ConsoleEnv) -> None:
    """The reviewer's cases: an amount sent as "\u202e4,001\u202c" was drawn "100,4" in the worklist
    and on the decision page (the rules read 4001); a payee padded with no-break spaces, or one long
    word, pushed its tail and the risk column off a 1366 px screen."""
    bidi = park(
        console_env.jobs,
        {
            "vendor": "Northwind Traders",
            "invoice_number": "INV-9",
            "amount": "\u202e4,001\u202c",
            "currency": "EUR",
        },
        {"amount": f"{EML}, line 43 (cited in step 1)"},
    )
    padded = park(
        console_env.jobs,
        {"vendor": "Northwind Traders" + "\u00a0" * 160 + "c/o Initrode Ltd", "amount": "4,900.00"},
        {},
    )
    word = park(console_env.jobs, {"payee": "Initrode" * 40, "amount": "4,900.00"}, {})
    page = console_env.page_as("bob")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{console_env.url}/approvals")
    shot(page, "approvals-hidden-1366")
    cell = page.locator(f"#worklist tr[data-approval='{bidi.id}'] td.num").inner_text()
    assert not BIDI.search(cell) and cell == "⟨U+202E⟩4,001⟨U+202C⟩ EUR"
    assert "hidden characters" in page.locator(f"#worklist tr[data-approval='{bidi.id}']").inner_text()
    vendor = page.locator(f"#worklist tr[data-approval='{padded.id}'] td.vendor").inner_text()
    assert "Northwind Traders⟨160 × U+00A0⟩c/o Initrode Ltd" in vendor
    for a in (padded, word):
        risk = page.locator(f"#worklist tr[data-approval='{a.id}'] td").nth(6).bounding_box()
        assert risk is not None and risk["x"] + risk["width"] <= 1366, (a.id, risk)
    page.goto(f"{console_env.url}/approvals/{bidi.id}")
    shot(page, "approval-hidden-1366")
    amount = page.locator("#key-values tr", has_text="Amount").locator("code").first.inner_text()
    assert amount == "⟨U+202E⟩4,001⟨U+202C⟩ EUR"
    assert "hidden characters" in page.locator("#risk-flags").inner_text()
    assert not BIDI.search(page.locator("#fields").inner_text())
    for a, label in ((padded, "Payee"), (word, "Payee")):
        page.goto(f"{console_env.url}/approvals/{a.id}")
        code = page.locator("#key-values tr", has_text=label).locator("code").bounding_box()
        assert code is not None and code["x"] + code["width"] <= 1366, (a.id, code)


def test_a_changed_value_written_like_value_and_label_is_called_a_change(console_env: ConsoleEnv) -> None:
    """The reviewer's case: a typed IBAN "NEW (OLD)" was called "unchanged" (its bracket read as a
    select's label); a chosen option whose label is the record's value is unchanged."""
    old = "DE02 1203 0000 0000 2020 51"
    approval = park(
        console_env.jobs,
        {"iban": f"DE89370400440532013000 ({old})", "country_id": "4 (Germany)"},
        {},
        url="http://127.0.0.1:8800/vendors/1/edit",
        task="Update Northwind's bank details",
        labels={"country_id": "Germany"},
        record=RecordState(
            page="http://127.0.0.1:8800/vendors/1", values={"IBAN": old, "Country": "Germany"}
        ),
    )
    page = console_env.page_as("bob")
    page.goto(f"{console_env.url}/approvals/{approval.id}")
    iban = page.locator("#fields tr", has_text="iban")
    assert "unchanged" not in iban.inner_text() and "changes" in iban.inner_text()
    assert "unchanged" in page.locator("#fields tr", has_text="country_id").inner_text()


def test_the_page_never_claims_an_amount_it_did_not_read_is_within_the_threshold(
    console_env: ConsoleEnv,
) -> None:
    """The reviewer's case: invoiceAmount = 90,000.00 was not read, and the page said "No risk flag:
    … amount within the threshold"."""
    unnamed = park(console_env.jobs, {"vendor": "Globex Corp", "invoiceAmount": "90,000.00"}, {})
    none = park(console_env.jobs, {"vendor": "Globex Corp", "memo": "card payment"}, {})
    page = console_env.page_as("bob")
    page.goto(f"{console_env.url}/approvals/{unnamed.id}")
    assert "amount over threshold" in page.locator("#risk-flags").inner_text()
    assert "90,000.00 EUR" in page.locator("#key-values tr", has_text="Amount").inner_text()
    page.goto(f"{console_env.url}/approvals/{none.id}")
    said = page.locator("#risk-flags").inner_text() + page.locator("#rule").inner_text()
    assert "within the threshold" not in said and "no amount recognised — check it by hand" in said
