"""The worklist offers bulk approval only where it can be used: two or more items bulk approval may
take that are identical in shape, on the page shown. One item alone (or one with no identical
partner) has no checkbox, and the page has no "Approve selected" and says nothing of bulk approval;
a flagged item keeps its "one by one" where bulk approval is offered.

Real Chromium against the console served by uvicorn over a real job store (fixtures_console.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from console_seed import parked_job
from fixtures_console import ConsoleEnv, flash, follow

from taskcrew.jobs import Approval, ApprovalRequest, Jobs
from taskcrew.tools.human import FieldValue

SHOTS = os.environ.get("TASKCREW_CONSOLE_SHOTS")


def _unflagged(jobs: Jobs, amount: str, url: str = "http://127.0.0.1:8800/bills/new") -> Approval:
    """A pending approval with no flag: bulk approval may take it."""
    job = jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    fields = {"vendor": "Northwind Traders", "invoice_number": "INV-1", "amount": amount, "currency": "EUR"}
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=url,
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )
    approval = jobs.park(job.id, kind="approval", key=f"key-{job.id}", request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def _worklist(env: ConsoleEnv, query: str = "") -> Any:
    page = env.page_as("bob")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{env.url}/approvals{query}")
    page.locator("#worklist").wait_for()
    return page


def _screenshot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))  # the 1366x768 viewport


def _offers_no_bulk(page: Any) -> None:
    assert page.locator("#worklist input[type=checkbox]").count() == 0
    assert page.get_by_role("button", name="Approve selected").count() == 0
    assert page.locator("form#bulk").count() == 0
    assert page.get_by_role("columnheader", name="Select").count() == 0
    words = page.locator("main").inner_text() if page.locator("main").count() else page.inner_text("body")
    assert "bulk" not in words.lower(), words


def test_one_pending_approval_offers_no_bulk_approval(console_env: ConsoleEnv) -> None:
    only = _unflagged(console_env.jobs, "10.00")
    page = _worklist(console_env)
    _screenshot(page, "worklist-one")
    assert page.locator("#worklist caption").inner_text().strip() == "1 of 1 pending."
    _offers_no_bulk(page)
    follow(page, page.get_by_role("link", name=only.id))  # decided on its own page, as any one is
    follow(page, page.get_by_role("button", name="Approve"))
    assert "approved" in flash(page) and "at least two" not in flash(page)
    assert console_env.jobs.approval(only.id).status == "approved"


def test_two_identical_approvals_are_offered_and_approved_together(console_env: ConsoleEnv) -> None:
    first, second = _unflagged(console_env.jobs, "10.00"), _unflagged(console_env.jobs, "11.00")
    page = _worklist(console_env)
    _screenshot(page, "worklist-two")
    assert "Bulk approval takes only identical items" in page.locator("#worklist caption").inner_text()
    assert page.get_by_role("columnheader", name="Select").count() == 1
    for approval in (first, second):
        page.get_by_label(f"Select {approval.id} for bulk approval").check()
    follow(page, page.get_by_role("button", name="Approve selected").last)  # one above the list, one below
    assert "2 approvals approved" in flash(page)
    assert {console_env.jobs.approval(a.id).status for a in (first, second)} == {"approved"}


def test_an_approval_whose_only_companion_is_flagged_offers_no_bulk_approval(
    console_env: ConsoleEnv,
) -> None:
    plain = _unflagged(console_env.jobs, "10.00")
    _, ocr = parked_job(console_env.jobs, "ana", amount="12.00")  # a value read by OCR: flagged
    page = _worklist(console_env)
    assert "value read by OCR" in page.locator("#worklist tr", has_text=ocr.id).inner_text()
    assert page.locator("#worklist tr", has_text=plain.id).count() == 1
    _offers_no_bulk(page)


def test_two_approvals_of_different_shape_offer_no_bulk_approval(console_env: ConsoleEnv) -> None:
    """Bulk approval refuses items that are not identical (method, target, fields): none to offer."""
    _unflagged(console_env.jobs, "10.00")
    _unflagged(console_env.jobs, "11.00", url="http://127.0.0.1:8800/expenses/new")
    _offers_no_bulk(_worklist(console_env))


def test_bulk_is_offered_for_the_identical_pair_and_a_flagged_one_stays_one_by_one(
    console_env: ConsoleEnv,
) -> None:
    first, second = _unflagged(console_env.jobs, "10.00"), _unflagged(console_env.jobs, "11.00")
    other = _unflagged(console_env.jobs, "12.00", url="http://127.0.0.1:8800/expenses/new")
    _, ocr = parked_job(console_env.jobs, "ana", amount="13.00")
    page = _worklist(console_env)
    _screenshot(page, "worklist-mixed")
    for approval in (first, second):
        assert page.get_by_label(f"Select {approval.id} for bulk approval").count() == 1
    for alone in (other, ocr):  # flagged, or with nothing identical to go with: one by one
        row = page.locator("#worklist tr", has_text=alone.id)
        assert row.locator("input[type=checkbox]").count() == 0 and "one by one" in row.inner_text()
    assert page.get_by_role("button", name="Approve selected").count() == 2  # above the list and below it


def test_a_filter_that_leaves_one_of_a_pair_offers_no_bulk_approval(console_env: ConsoleEnv) -> None:
    first, _ = _unflagged(console_env.jobs, "10.00"), _unflagged(console_env.jobs, "11.00")
    page = _worklist(console_env, f"?q={first.id}")
    assert page.locator("#worklist tbody tr").count() == 1
    _offers_no_bulk(page)
