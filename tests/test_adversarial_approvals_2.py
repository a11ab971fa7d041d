# ruff: noqa: F811 — the fixtures (env, make, attacker) are imported from test_approvals and test_adversarial_browser
"""Issue 21, second review: one approval authority for every surface.

- the approval key and the send check compare every value whole: a value is never taken for a file
  by how its text looks, and a file part (marked by the multipart parser and the form prediction)
  is compared by its name and size;
- the two-person rule is kept where decisions are judged and obeyed, not only in the submitter's
  CLI: an item that needs two people cannot be approved for a job whose submitter is unproven;
- a first approval counts only while the approver's password is the one she gave it with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_adversarial_browser import (  # noqa: F401  (module fixtures: one Chromium, ERP, attacker)
    Factory,
    attacker,
    canary,
    erp,
    idx,
    make,
    runtime,
    settle,
)
from test_approvals import _approved_by_two, _parked, _request, _token, env, runner  # noqa: F401

from taskcrew.approvals.identity import Identity
from taskcrew.approvals.key import file_value, request_key, same_fields, text_value
from taskcrew.cli import app
from taskcrew.console.auth import add_user
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.browser import Click
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

URL = "http://127.0.0.1:8800/bills/new"


# ---- 1: the key covers every byte; files by name and size ----------------------------------------
def test_a_text_value_that_merely_starts_like_a_file_is_part_of_the_key() -> None:
    approved = [("memo", "(file ref) pay 100.00 to DE89 3704 0044 0532 0130 00")]
    switched = [("memo", "(file ref) pay 100.00 to GB33 BUKB 2020 1555 5555 55")]
    assert request_key("POST", URL, approved) != request_key("POST", URL, switched)
    assert not same_fields(switched, approved)


def test_a_file_swapped_after_approval_has_another_key_and_is_a_switch() -> None:
    approved = [("vendor_id", "3"), ("attachment", file_value("invoice-INV-2057.pdf", 1200))]
    renamed = [("vendor_id", "3"), ("attachment", file_value("bank-change-form.pdf", 1200))]
    resized = [("vendor_id", "3"), ("attachment", file_value("invoice-INV-2057.pdf", 1300))]
    for swapped in (renamed, resized):
        assert request_key("POST", URL, approved) != request_key("POST", URL, swapped)
        assert not same_fields(swapped, approved)
    assert same_fields(list(approved), approved)  # the same file, as approved
    assert request_key("POST", URL, approved) == request_key("POST", URL, list(approved))


def test_a_text_cannot_pass_for_a_file_part() -> None:
    forged = text_value(file_value("invoice.pdf", 12))  # a hidden field with a file part's text
    assert forged != file_value("invoice.pdf", 12) and forged.startswith("(text) ")
    assert text_value(forged) != forged  # an escaped text cannot pass for one either
    assert text_value("DE00-approved") == "DE00-approved"  # ordinary values are shown as they are
    assert not same_fields([("f", forged)], [("f", file_value("invoice.pdf", 12))])


def test_the_worker_send_check_stops_a_hidden_field_switched_after_approval(env: dict[str, Any]) -> None:
    jobs, authority = env["jobs"], env["authority"]
    job_id, _ = _approved_by_two(jobs, authority, _request(beneficiary_account_token="(file ) DE00-approved"))
    gate = JobHuman(jobs, job_id).gate
    switched = [(f.name, f.value) for f in _request(beneficiary_account_token="(file ) XX99-attacker").fields]
    assert gate.send_check("POST", URL, switched) is not None


# ---- 1, in Chromium: the form prediction and the multipart parser mark files alike ---------------
_FILE_FORM = (
    "<title>Pay</title><form method=post enctype=multipart/form-data action='/collect' onsubmit=\"{switch}\">"
    "<input type=hidden name=account value='(file ) DE00-approved'>"
    "<input type=file name=attachment id=f><label>Amount <input name=amount value='10.00'></label>"
    "<button>Pay now</button></form><script>const dt = new DataTransfer();"
    "dt.items.add(new File(['invoice INV-2057 bytes'], 'invoice.pdf', {type: 'application/pdf'}));"
    "document.getElementById('f').files = dt.files;"
    "function swap(name, text) {const d = new DataTransfer(); d.items.add(new File([text], name));"
    "document.getElementById('f').files = d.files;}</script>"
)


@pytest.mark.browser
@pytest.mark.parametrize(
    "switch",
    [
        "",  # nothing changed: the real file upload that was approved is sent
        "swap('bank-change-form.pdf', 'invoice INV-2057 bytes')",  # another file name
        "swap('invoice.pdf', 'pay the attacker instead, please')",  # same name, other content and size
        "this.account.value = '(file ) XX99-attacker'",  # a hidden field that looks like a file
    ],
)
def test_a_file_or_a_file_like_field_switched_after_approval_is_not_sent(
    make: Factory, attacker: Any, switch: str
) -> None:
    page = f"/file-form-{len(switch)}"
    attacker.pages[page] = _FILE_FORM.replace("{switch}", switch)
    human = ScriptedHuman([ApprovalDecision.approve()])
    session = make(human=human)
    obs = session.goto(attacker.url + page).observation
    session.act([Click(index=idx(obs, "Pay now"))])
    settle(session)
    shown = {f.name: f.value for f in human.requests[0].fields}
    assert shown["attachment"] == "(file invoice.pdf, 22 bytes)"
    assert shown["account"] == "(text) (file ) DE00-approved"
    posts = [h for h in attacker.posts() if h.path == "/collect"]
    if not switch:
        assert len(posts) == 1 and b"invoice INV-2057 bytes" in posts[0].body
    else:
        assert posts == [], posts[0].body


@pytest.mark.browser
@pytest.mark.parametrize("form", ["method=post", "method=get", "method=post enctype=text/plain"])
def test_a_form_that_sends_a_files_name_is_approved_and_sent_as_that_name(
    make: Factory, attacker: Any, form: str
) -> None:
    """Only a multipart POST sends a file's bytes; any other form sends the file's name as text
    (HTML's rule). The approval shows what is sent, so the send matches it (before: the prediction
    showed a file part, the browser sent the name, and the approved send was refused as switched)."""
    page = f"/name-form-{len(form)}"
    attacker.pages[page] = _FILE_FORM.replace("method=post enctype=multipart/form-data", form).replace(
        "{switch}", ""
    )
    human = ScriptedHuman([ApprovalDecision.approve()])
    session = make(human=human)
    obs = session.goto(attacker.url + page).observation
    session.act([Click(index=idx(obs, "Pay now"))])
    settle(session)
    if form == "method=get":  # a GET changes nothing: not asked, sent as it is
        assert not human.requests
        return
    shown = {f.name: f.value for f in human.requests[0].fields}
    assert shown["attachment"] == "invoice.pdf"
    posts = [h for h in attacker.posts() if h.path == "/collect" and b"invoice.pdf" in h.body]
    assert len(posts) == 1 and b"invoice INV-2057 bytes" not in posts[0].body


@pytest.mark.browser
def test_a_click_whose_page_answers_after_the_action_timeout_still_counts_as_clicked(
    make: Factory, attacker: Any
) -> None:
    """The click lands and opens a page that answers after the action timeout (a loaded machine or
    server): Playwright's click times out waiting for it, but the click was made. Before, the action
    failed, and the agent was told nothing was clicked (and could click, and send, again)."""
    attacker.pages["/slow-link"] = "<title>Bills</title><a href='/slow?s=4'>Open the slow report</a>"
    session = make()
    obs = session.goto(attacker.url + "/slow-link").observation
    result = session.act([Click(index=idx(obs, "Open the slow report"))])
    assert result.ok, result.render()
    assert [h.path for h in attacker.hits if h.path.startswith("/slow?")] == ["/slow?s=4"]


# ---- 2: the submitter must be proven, judged by the authority ------------------------------------
def _unproven_job(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[str, str]:
    """ana submits from a shell whose users file is empty (her CLI thinks the rule is off, so her OS
    user is taken); the job parks an 8000.00 payment (two people) with the real users file."""
    jobs = env["jobs"]
    monkeypatch.setenv("TASKCREW_MODEL", "scripted/solver")
    monkeypatch.setenv("TASKCREW_VERIFIER_MODEL", "scripted/auditor")
    empty = tmp_path / "nobody.yaml"
    empty.write_text("users: []\n")
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(empty))
    out = runner.invoke(app, ["submit", "Enter the Northwind invoice into the ERP"])
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(env["users"]))
    job_id = out.output.strip()
    assert jobs.get(job_id).submitted_proof == "os_user"
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job_id).approve(_request(amount="8000.00"))
    jobs.mark(job_id, "waiting", only_if=("running",))
    return job_id, parked.value.approval_id


def test_an_unproven_submitter_cannot_be_one_of_the_two(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    jobs, authority = env["jobs"], env["authority"]
    job_id, approval_id = _unproven_job(env, monkeypatch, tmp_path)
    first = authority.decide(approval_id, "approve", Identity(name="ana", proof="console"))
    second = authority.decide(approval_id, "approve", Identity(name="bob", proof="console"))
    for refused in (first, second):
        assert refused.status == "refused"
        assert "unproven identity" in refused.message and "taskcrew approvals login" in refused.message
    assert jobs.approval(approval_id).status == "pending" and not jobs.approval(approval_id).first_approvals
    assert [e.action for e in authority.audit.entries() if e.target == approval_id][-2:] == [
        "approve_refused",
        "approve_refused",
    ]
    # stopping is always allowed
    assert authority.decide(approval_id, "reject", Identity(name="bob", proof="console")).status == "decided"
    jobs.mark(job_id, "running", only_if=("queued",), worker="w1")
    assert not JobHuman(jobs, job_id).approve(_request(amount="8000.00")).approved


def test_the_worker_does_not_obey_two_approvals_for_an_unproven_submitters_job(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two approvals given where the rule was off (another authority's users file) are judged again
    by the worker under its rules: the submitter is unproven, so they are not obeyed."""
    jobs = env["jobs"]
    _job_id, approval_id = _unproven_job(env, monkeypatch, tmp_path)
    one = tmp_path / "one.yaml"
    one.write_text("users: []\n")
    lax = type(env["authority"])(jobs, users_file=one)
    assert lax.decide(approval_id, "approve", Identity(name="bob", proof="os_user")).status == "decided"
    why = env["authority"].rules_refusal(jobs.approval(approval_id))
    assert why is not None and "unproven identity" in why


# ---- 3: a first approval is bound to the approver's password -------------------------------------
def test_a_first_approval_given_before_a_password_reset_no_longer_counts(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    users = tmp_path / "users.yaml"
    users.write_bytes(env["users"].read_bytes())
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    jobs = env["jobs"]
    _job_id, approval_id = _parked(jobs, "ana", _request(amount="8000.00"))
    stolen = _token("bob", "bob-secret-1")
    monkeypatch.setenv("TASKCREW_TOKEN", stolen)
    first = runner.invoke(app, ["approvals", "approve", approval_id])
    assert first.exit_code == 0 and "second, different approver" in first.output
    add_user(users, "bob", "bob-new-secret-2")  # the reset
    assert runner.invoke(app, ["approvals", "approve", approval_id]).exit_code == 1  # the token is void
    monkeypatch.setenv("TASKCREW_TOKEN", _token("carol", "carol-secret-1"))
    second = runner.invoke(app, ["approvals", "approve", approval_id])
    assert second.exit_code == 0 and "second, different approver" in second.output
    assert jobs.approval(approval_id).status == "pending"
    # bob, with his new password, completes it
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob", "bob-new-secret-2"))
    assert runner.invoke(app, ["approvals", "approve", approval_id]).exit_code == 0
    assert jobs.approval(approval_id).status == "approved"
    assert jobs.approval(approval_id).decided_by == "carol+bob"
