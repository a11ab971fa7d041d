"""The decision page says, before the click, what the click will do (by the authority's own rule,
``Authority.approve_outcome``): no Approve button for whom it would be refused (the submitter of a
two-person item, who already gave its first approval), "first of two" where it only records a first
approval; a decided or expired approval says so at the top, in the past tense; a question is shown
before its answer form; a bulk approval says what it approved. Served over HTTP, read in Chromium."""

from __future__ import annotations

import re
from typing import Any

from console_seed import parked_job
from fixtures_console import ConsoleEnv, flash, follow
from test_console_web import _unflagged

from taskcrew.jobs import Jobs
from taskcrew.jobs.models import Approval


def _top(page: Any, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return float(box["y"])


def _approve_buttons(page: Any) -> int:
    return int(page.locator("form.decide button[value=approve]").count())


def test_the_submitter_of_a_two_person_item_is_not_offered_approve_and_is_told_why(
    console_env: ConsoleEnv,
) -> None:
    _, approval = parked_job(console_env.jobs, "ana", amount="12,000.00")  # over the threshold: two people
    ana = console_env.page_as("ana")
    ana.goto(f"{console_env.url}/approvals/{approval.id}")
    said = ana.locator("#approving").inner_text()
    assert _approve_buttons(ana) == 0, said
    assert "You cannot approve this" in said and "you submitted this task" in said
    assert "Approving lets the worker send" not in ana.locator("main").inner_text()
    assert ana.get_by_role("button", name="Reject").count() == 1  # stopping is always allowed
    follow(ana, ana.get_by_role("button", name="Reject"))
    assert console_env.jobs.approval(approval.id).status == "rejected"


def test_the_first_of_two_approvals_says_so_and_its_giver_may_not_approve_again(
    console_env: ConsoleEnv,
) -> None:
    _, approval = parked_job(console_env.jobs, "ana", amount="12,000.00")
    bob = console_env.page_as("bob")
    bob.goto(f"{console_env.url}/approvals/{approval.id}")
    said = bob.locator("#approving").inner_text()
    assert "the first of two approvals" in said
    assert "nothing is sent until a second, different person approves" in said
    assert "Approving lets the worker send" not in said
    button = bob.locator("form.decide button[value=approve]")
    assert button.inner_text() == "Approve (first of two)"
    follow(bob, button)
    assert "second, different approver" in flash(bob)
    assert console_env.jobs.approval(approval.id).status == "pending"
    said = bob.locator("#approving").inner_text()  # back on the page, as the one who gave the first
    assert _approve_buttons(bob) == 0 and "You already approved this" in said
    assert bob.get_by_role("button", name="Reject").count() == 1
    carol = console_env.page_as("carol")
    carol.goto(f"{console_env.url}/approvals/{approval.id}")
    said = carol.locator("#approving").inner_text()
    assert "second of two approvals" in said and "bob" in said and "lets the worker send" in said
    follow(carol, carol.locator("form.decide button[value=approve]"))
    assert console_env.jobs.approval(approval.id).status == "approved"


def test_a_decided_approval_says_so_at_the_top_in_the_past_tense(console_env: ConsoleEnv) -> None:
    _, approval = parked_job(console_env.jobs, "ana", amount="90.00")
    bob = console_env.page_as("bob")
    bob.goto(f"{console_env.url}/approvals/{approval.id}")
    bob.get_by_label("Message or reason").fill("checked against the PDF")
    follow(bob, bob.get_by_role("button", name="Approve"))
    assert console_env.jobs.approval(approval.id).status == "approved"
    bob.goto(f"{console_env.url}/approvals/{approval.id}")
    state = bob.locator("#decided").inner_text()
    assert re.search(r"Approved by .*bob.* at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", state), state
    assert "checked against the PDF" in state
    assert _top(bob, "#decided") < _top(bob, "#action") < _top(bob, "#h-key")
    main = bob.locator("main").inner_text()
    assert bob.locator("#h-key").inner_text() == "What was approved"
    assert "What you approve" not in main and "waiting" not in bob.locator("#action").inner_text()
    assert "Risk and the rule that applied" in main and "What it asked to change in" in main


def test_an_expired_approval_says_so_at_the_top(console_env: ConsoleEnv) -> None:
    job, approval = parked_job(console_env.jobs, "ana", amount="90.00")
    console_env.jobs.cancel(job.id, by="ana")
    assert console_env.jobs.approval(approval.id).status == "expired"
    bob = console_env.page_as("bob")
    bob.goto(f"{console_env.url}/approvals/{approval.id}")
    assert "Expired: not decided" in bob.locator("#decided").inner_text()
    assert _top(bob, "#decided") < _top(bob, "#h-key")
    assert "What you approve" not in bob.locator("main").inner_text()


def _question(jobs: Jobs, text: str) -> Approval:
    job = jobs.submit("Enter the latest invoice", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    approval = jobs.park(job.id, kind="question", key=f"key-{job.id}", question=text)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def test_a_question_is_shown_before_its_answer_form_and_claims_no_amount(console_env: ConsoleEnv) -> None:
    question = _question(console_env.jobs, "Two invoices match: INV-7 or INV-8?")
    bob = console_env.page_as("bob")
    bob.goto(f"{console_env.url}/approvals/{question.id}")
    assert bob.locator("#question").inner_text() == "Two invoices match: INV-7 or INV-8?"
    assert _top(bob, "#h-q") < _top(bob, "#h-decide") < _top(bob, "#text")
    main = bob.locator("main").inner_text()
    assert "No risk flag" not in main and "no amount recognised" not in main
    assert _approve_buttons(bob) == 0


def test_a_bulk_approval_lists_what_it_approved_and_is_offered_above_the_list(
    console_env: ConsoleEnv,
) -> None:
    first = _unflagged(console_env.jobs, "10.00", "Northwind Traders")
    second = _unflagged(console_env.jobs, "11.50", "Contoso Ltd")
    bob = console_env.page_as("bob")
    buttons = bob.locator("#bulk button[type=submit]", has_text="Approve selected")
    assert buttons.count() == 2
    assert _top(bob, "#bulk button[type=submit]") < _top(bob, "#worklist")
    for approval in (first, second):
        bob.get_by_label(f"Select {approval.id} for bulk approval").check()
    follow(bob, buttons.first)
    said = flash(bob)
    assert "2 approvals approved" in said
    assert f"{first.id} (Northwind Traders, 10.00 EUR)" in said, said
    assert f"{second.id} (Contoso Ltd, 11.50 EUR)" in said, said
