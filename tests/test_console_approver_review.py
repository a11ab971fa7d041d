"""What a laptop-width review of the approver's console found, mended: a new IBAN drawn in groups of
four like the old one (copied, exactly as sent); a "select all" for bulk approval that works in
Chromium and leaves the page as it was without scripts; a first of two approvals in the job's
history (who and when, from the approval's own record); not-found pages that lead back to the
worklist in plain words; "What you approve" only above an Approve button (the authority's
``approve_outcome``). Served over HTTP, read in real Chromium at 1366×768.

Set TASKCREW_CONSOLE_SHOTS=<folder> to save the pages these tests reach (``fixtures_console.shot``).
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from console_seed import parked_job
from fixtures_console import PASSWORDS, ConsoleEnv, flash, follow, shot
from test_console_web import _unflagged

from taskcrew.jobs import Approval, ApprovalRequest, Jobs
from taskcrew.tools.human import FieldValue, RecordState

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1366, "height": 768}
OLD_IBAN = "DE02 1203 0000 0000 2020 51"  # as the vendor's record shows it
NEW_IBAN = "GB33BUKB20201555555555"  # as the worker typed it: no spaces


def _laptop(page: Any) -> Any:
    page.set_viewport_size(LAPTOP)
    return page


def _without_scripts(env: ConsoleEnv, user: str) -> Any:
    """A signed-in page in a browser with JavaScript switched off (closed with the env)."""
    context = env.browser.new_context(viewport=LAPTOP, java_script_enabled=False)
    env.contexts.append(context)
    page = context.new_page()
    page.set_default_timeout(60_000)  # a bound for a failure, not a wait
    page.goto(f"{env.url}/login")
    page.get_by_label("Name").fill(user)
    page.get_by_label("Password").fill(PASSWORDS[user])
    follow(page, page.get_by_role("button", name="Sign in"))
    assert page.url.endswith("/approvals"), page.url
    return page


def _groups(code: Any) -> list[dict[str, float]]:
    """Where each drawn group of an IBAN starts and how wide it is, from the start of its value."""
    return list(
        code.evaluate(
            """c => { const left = c.getBoundingClientRect().left;
                      return Array.from(c.querySelectorAll('.iban > span')).map(s => {
                        const r = s.getBoundingClientRect(); return {x: r.left - left, w: r.width}; }); }"""
        )
    )


def _copied(page: Any, code: Any) -> str:
    """What copying ``code`` (selected as a person would, whole) puts on the clipboard."""
    code.evaluate(
        """c => { const r = document.createRange(); r.selectNodeContents(c);
                  const s = window.getSelection(); s.removeAllRanges(); s.addRange(r); }"""
    )
    page.keyboard.press("Control+C")
    return str(page.evaluate("navigator.clipboard.readText()"))


# ---- 1: a new IBAN and the old one, both in groups of four -----------------------------------------
def _bank_change(jobs: Jobs) -> Approval:
    """A change of a vendor's IBAN, parked by a worker, its record read when it asked (the old IBAN
    as the system shows it), submitted by ana through the console (proven: two people may approve)."""
    job = jobs.submit("Change Globex's bank account", submitted_by="ana", submitted_proof="console")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/vendors/7/edit",
        fields=[FieldValue(name="vendor", value="Globex Corp"), FieldValue(name="iban", value=NEW_IBAN)],
        page_url="http://127.0.0.1:8800/vendors/7/edit",
        record=RecordState(
            page="http://127.0.0.1:8800/vendors/7", values={"IBAN": OLD_IBAN, "Vendor": "Globex Corp"}
        ),
    )
    approval = jobs.park(job.id, kind="approval", key=f"key-{job.id}", request=request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return approval


def test_a_new_iban_sent_without_spaces_is_drawn_in_fours_like_the_old_one_and_copies_as_sent(
    console_env: ConsoleEnv,
) -> None:
    approval = _bank_change(console_env.jobs)
    page = _laptop(console_env.page_as("bob"))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console_env.url)
    page.goto(f"{console_env.url}/approvals/{approval.id}")
    row = page.locator("#fields tr", has_text="iban")
    before, after = row.locator("td.before code").first, row.locator("td").nth(1).locator("code").first
    # the same groups of four, drawn at the same places: digit group under digit group
    old, new = _groups(before), _groups(after)
    assert len(old) == len(new) == 6, (old, new)
    for o, n in zip(old, new, strict=True):  # each group starts where its counterpart does
        assert abs(o["x"] - n["x"]) < 0.5, (old, new)
    assert old[1]["x"] > 4 * old[-1]["w"] / 2 + 1, old  # with a gap: "2020" stands apart from "0000"
    assert [s.inner_text() for s in after.locator(".iban > span").all()] == [
        "GB33", "BUKB", "2020", "1555", "5555", "55",
    ]  # fmt: skip
    # nothing hidden, nothing added: copied, each is exactly the value (sent, or as the record showed it)
    assert _copied(page, after) == NEW_IBAN
    assert _copied(page, before) == OLD_IBAN
    assert "sent without spaces" in row.inner_text() and "changes" in row.inner_text()
    # the values that matter, first: the new IBAN in fours, the old one beneath it in fours too
    key = page.locator("#key-values tr", has_text="Bank details")
    assert key.locator("td.big > code .iban > span").count() == 6
    assert key.locator("small.was code .iban > span").count() == 6
    assert _copied(page, key.locator("td.big > code").first) == NEW_IBAN
    assert key.locator("td.big > code").first.text_content() == NEW_IBAN
    page.evaluate("() => window.getSelection().removeAllRanges()")
    assert page.locator("form.decide button[value=approve]").count() == 1  # bob may approve it
    shot(page, "review-bank-change")


# ---- 2: select all, for bulk approval -----------------------------------------------------------
def test_select_all_ticks_every_item_offered_and_the_page_works_as_before_without_scripts(
    console_env: ConsoleEnv,
) -> None:
    ids = [_unflagged(console_env.jobs, amount, vendor).id for amount, vendor in
           (("10.00", "Northwind Traders"), ("11.50", "Contoso Ltd"), ("12.25", "Fabrikam"))]  # fmt: skip
    _, flagged = parked_job(console_env.jobs, "ana", amount="13.00")  # read by OCR: one by one
    bob = _laptop(console_env.page_as("bob"))
    every = bob.get_by_role("checkbox", name="Select all 3 offered for bulk approval")
    assert every.is_visible()
    boxes = bob.locator("#bulk input[name=ids]")
    assert boxes.count() == 3
    every.check()
    assert all(b.is_checked() for b in boxes.all())
    bob.get_by_label(f"Select {ids[1]} for bulk approval").uncheck()
    assert not every.is_checked() and every.evaluate("e => e.indeterminate")
    every.check()
    assert all(b.is_checked() for b in boxes.all()) and not every.evaluate("e => e.indeterminate")
    every.uncheck()
    assert not any(b.is_checked() for b in boxes.all())
    every.check()
    shot(bob, "review-bulk")
    follow(bob, bob.locator("#bulk button[type=submit]").first)
    assert "3 approvals approved" in flash(bob), flash(bob)
    assert [console_env.jobs.approval(i).status for i in ids] == ["approved"] * 3
    assert console_env.jobs.approval(flagged.id).status == "pending"  # not offered, not taken

    # without scripts: no select-all to click that would do nothing; ticking one by one works
    more = [_unflagged(console_env.jobs, amount).id for amount in ("20.00", "21.00")]
    plain = _without_scripts(console_env, "carol")
    assert plain.locator("#select-all").count() == 1 and not plain.locator("#select-all").is_visible()
    for approval_id in more:
        plain.get_by_label(f"Select {approval_id} for bulk approval").check()
    # the select-all sends nothing of its own (it has no name): only the ids ticked are approved
    assert plain.locator("#select-all").get_attribute("name") is None
    follow(plain, plain.locator("#bulk button[type=submit]").last)
    assert "2 approvals approved" in flash(plain)


# ---- 3: a first of two approvals, in the job's history ------------------------------------------
def _history(page: Any) -> list[str]:
    return [li.inner_text() for li in page.locator("#job-events li").all()]


def test_a_first_approval_is_in_the_jobs_history_with_who_and_when(console_env: ConsoleEnv) -> None:
    job, approval = parked_job(console_env.jobs, "ana", amount="12,000.00")  # two people
    bob = _laptop(console_env.page_as("bob"))
    bob.goto(f"{console_env.url}/approvals/{approval.id}")
    follow(bob, bob.locator("form.decide button[value=approve]"))
    first = console_env.jobs.approval(approval.id).first_approvals[0]  # the record the authority reads
    when = str(first.at)[:19].replace("T", " ")
    line = rf"{re.escape(when)}\s+first of two approvals given\s+{approval.id}: a second, different person must approve"

    # as the page is drawn (no script), and as it is followed live
    plain = _without_scripts(console_env, "carol")
    plain.goto(f"{console_env.url}/jobs/{job.id}")
    said = _history(plain)
    at = next(i for i, text in enumerate(said) if re.search(line, text))
    assert said[at].endswith("by bob"), said[at]
    assert any("waiting for a decision" in text for text in said[:at]), said  # in its place in time
    bob.goto(f"{console_env.url}/jobs/{job.id}")
    bob.wait_for_function("() => document.getElementById('job-events').dataset.seeded === 'done'")
    bob.wait_for_function(
        "n => document.querySelectorAll('#job-events li').length >= n", arg=len(said)
    )  # the live list, re-drawn from the stream, has it too
    assert sum(1 for text in _history(bob) if re.search(line, text) and "by bob" in text) == 1

    carol = _laptop(console_env.page_as("carol"))  # the second approval: it stays, in the past
    carol.goto(f"{console_env.url}/approvals/{approval.id}")
    follow(carol, carol.locator("form.decide button[value=approve]"))
    assert console_env.jobs.approval(approval.id).status == "approved"
    plain.goto(f"{console_env.url}/jobs/{job.id}")
    said = _history(plain)
    assert any(
        re.search(
            rf"{re.escape(when)}\s+first of two approvals given\s+{approval.id}: the first of the two", t
        )
        and t.endswith("by bob")
        for t in said
    ), said


# ---- 4: a page that is not there ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "back", "words"),
    [
        ("/jobs/job-nosuch", "/jobs", "the list of jobs"),
        ("/runs/no-such-run", "/runs", "the list of runs"),
        ("/approvals/apr-nosuch", "/approvals", "the approvals waiting for you"),
        ("/no/such/page", "/approvals", "the approvals waiting for you"),
    ],
)
def test_a_page_that_is_not_there_leads_back_in_plain_words(
    console_env: ConsoleEnv, path: str, back: str, words: str
) -> None:
    bob = _laptop(console_env.page_as("bob"))
    response = bob.goto(console_env.url + path)
    assert response is not None and response.status == 404
    main = bob.locator("main").inner_text()
    assert "taskcrew " not in main and "`" not in main, main  # no command line for a console user
    assert bob.get_by_role("heading", name="Not found").is_visible()
    way = bob.locator("#way-back")
    assert way.get_by_role("link", name=words).get_attribute("href") == back
    assert way.get_by_role("link", name="the approvals waiting for you").count() == 1
    if path.startswith("/jobs"):
        shot(bob, "review-not-found")
    follow(bob, way.get_by_role("link", name=words))
    assert bob.url == console_env.url + back


def test_a_page_that_is_not_there_signed_out_still_answers_404_in_words(console_env: ConsoleEnv) -> None:
    with httpx.Client(base_url=console_env.url) as client:
        response = client.get("/no/such/page")
    assert response.status_code == 404 and "no such page" in response.text


# ---- 6: who cannot approve is not told what they approve -----------------------------------------
def test_the_heading_says_what_you_approve_only_above_an_approve_button(console_env: ConsoleEnv) -> None:
    _, approval = parked_job(console_env.jobs, "ana", amount="12,000.00")  # two people
    ana = _laptop(console_env.page_as("ana"))  # the submitter: no Approve button
    ana.goto(f"{console_env.url}/approvals/{approval.id}")
    assert ana.locator("form.decide button[value=approve]").count() == 0
    assert ana.locator("#h-key").inner_text() == "What is asked for approval"
    assert "What you approve" not in ana.locator("main").inner_text()
    bob = _laptop(console_env.page_as("bob"))
    bob.goto(f"{console_env.url}/approvals/{approval.id}")
    assert bob.locator("#h-key").inner_text() == "What you approve"
    follow(bob, bob.locator("form.decide button[value=approve]"))  # the first of two: not again
    assert bob.locator("form.decide button[value=approve]").count() == 0
    assert bob.locator("#h-key").inner_text() == "What is asked for approval"
    carol = _laptop(console_env.page_as("carol"))
    carol.goto(f"{console_env.url}/approvals/{approval.id}")
    assert carol.locator("form.decide button[value=approve]").count() == 1
    assert carol.locator("#h-key").inner_text() == "What you approve"
