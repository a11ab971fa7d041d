"""While the risk rules file cannot be read or validated, an approver can still see what waits and
stop it: the console lists the pending approvals unjudged (no flag read, none shown as if read) with
a banner saying what is wrong with which file and what to do, rejects one, cancels a job, and refuses
to approve, saying why; `taskcrew approvals list | show | reject` work the same and `approve` is
refused with the same words. Nothing is judged by the rules read before the file broke.

Real console over HTTP (uvicorn, httpx, Chromium), real CLI (typer's runner), real SQLite jobs."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fixtures_console import PASSWORDS, console_chromium, console_users  # noqa: F401 (fixtures)
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import DEFAULT_RULES, load_rules
from taskcrew.cli import app
from taskcrew.console.server import ConsoleServer
from taskcrew.console.settings import ConsoleSettings
from taskcrew.jobs import Approval, ApprovalRequest, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.human import FieldValue

ERP_URL = "http://127.0.0.1:8800"
SHOT = Path("/tmp/shot_h46.png")
runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[dict[str, Any]]:  # noqa: F811
    """The rules file every process reads, a job database, an approvals home; ana, bob and carol."""
    rules = tmp_path / "rules.yaml"
    shutil.copy(DEFAULT_RULES, rules)
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    for name, value in {
        "TASKCREW_RISK_RULES": str(rules),
        "TASKCREW_JOBS_DB": url,
        "TASKCREW_APPROVALS_DIR": str(tmp_path / "approvals"),
        "TASKCREW_CONSOLE_USERS": str(console_users),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    yield {"jobs": jobs, "rules": rules, "users": console_users, "root": tmp_path}
    jobs.close()


def _parked(jobs: Jobs, n: int, amount: str = "120.00") -> Approval:
    """ana's job parked on entering a bill of ``amount`` USD."""
    job = jobs.submit(f"Enter invoice {n}", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    fields = {
        "vendor": "Northwind Traders",
        "invoice_number": f"INV-{n}",
        "amount": amount,
        "currency": "USD",
    }
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{ERP_URL}/bills/new",
        fields=[FieldValue(name=k, value=v) for k, v in fields.items()],
    )
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id).approve(request)
    jobs.mark(job.id, "waiting", only_if=("running",))
    return jobs.approval(parked.value.approval_id)


def _break(rules: Path) -> None:
    """The operator's typo: the file can no longer be validated."""
    text = rules.read_text(encoding="utf-8")
    assert "bulk_allowed: true" in text
    rules.write_text(text.replace("bulk_allowed: true", "bulk_allowed: maybe"), encoding="utf-8")


def _said(rules: Path) -> str:
    return f"The risk rules {rules} cannot be used: bulk_allowed"


def _entries(jobs: Jobs, action: str) -> list[Any]:
    return [e for e in Authority(jobs, load_rules(DEFAULT_RULES)).audit.entries() if e.action == action]


@pytest.fixture
def console(env: dict[str, Any]) -> Iterator[ConsoleServer]:
    root = env["root"]
    settings = ConsoleSettings(
        port=0,
        state_dir=root / "console",
        runs_dirs=[root / "runs"],
        eval_dirs=[root / "eval"],
        users_file=env["users"],
        jobs_url=env["jobs"].url,
        sandbox=root,
        risk_rules=env["rules"],
    )
    server = ConsoleServer(settings, env["jobs"]).start()
    yield server
    server.stop()


def _signed_in(url: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=url, headers={"origin": url})
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token
    form = {"username": name, "password": PASSWORDS[name], "csrf": token.group(1), "next": "/"}
    assert client.post("/login", data=form).status_code == 303
    return client


def _csrf(client: httpx.Client, page: str) -> str:
    token = re.search(r'name="csrf" value="([^"]+)"', client.get(page).text)
    assert token
    return token.group(1)


def _flash(client: httpx.Client, sent: httpx.Response) -> str:
    assert sent.status_code == 303, sent.text
    html = client.get(sent.headers["location"]).text
    found = re.search(r'<p class="flash [^"]*" role="[^"]*">(.*?)</p>', html, re.S)  # not the banner
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split()) if found else html


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_console_lists_rejects_and_cancels_while_the_rules_file_is_broken_and_refuses_approving(
    env: dict[str, Any], console: ConsoleServer
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one, two, three = _parked(jobs, 1), _parked(jobs, 2), _parked(jobs, 3)
    bob = _signed_in(console.url, "bob")
    _break(rules)
    listed = bob.get("/approvals")
    assert listed.status_code == 200, listed.text  # not the whole console down
    page = _text(listed.text)
    assert _said(rules) in page  # the banner: which file, what is wrong, what to do
    assert "Until the file is fixed, approving is refused" in page and "rejecting still works" in page
    assert all(a.id in page for a in (one, two, three))
    assert "no flag" not in page and "risk: not read (the rules could not be read)" in page
    assert 'value="reject"' in listed.text and 'value="approve"' not in listed.text  # approve: off
    assert "Approve (refused)" in page and 'action="/approvals/bulk"' not in listed.text
    shown = bob.get(f"/approvals/{one.id}")  # one approval's page: the same, for it alone
    assert shown.status_code == 200 and _said(rules) in _text(shown.text) and one.id in shown.text
    # approving is refused by the authority, saying why; nothing decided by the rules read before
    sent = bob.post(
        f"/approvals/{one.id}/decide", data={"csrf": _csrf(bob, "/approvals"), "action": "approve"}
    )
    said = _flash(bob, sent)
    assert (
        said.startswith(f"Refused, nothing was decided: {_said(rules)}") and "rejecting still works" in said
    )
    assert jobs.approval(one.id).status == "pending"
    bulk = bob.post("/approvals/bulk", data={"csrf": _csrf(bob, "/approvals"), "ids": [one.id, two.id]})
    assert "Refused, nothing was approved" in _flash(bob, bulk)
    assert [jobs.approval(a.id).status for a in (one, two)] == ["pending", "pending"]
    # a rejection is decided: it sends nothing
    sent = bob.post(
        f"/approvals/{one.id}/decide",
        data={"csrf": _csrf(bob, "/approvals"), "action": "reject", "text": "rules broken, stop"},
    )
    assert f"Approval {one.id} rejected" in _flash(bob, sent)
    assert jobs.approval(one.id).status == "rejected"
    [entry] = [e for e in _entries(jobs, "reject") if e.target == one.id]
    assert entry.who == "bob" and entry.payload["rules"] is None and entry.payload["flags"] == []
    assert entry.payload["rules_unreadable"].startswith(_said(rules))
    # a whole job can be cancelled from its page
    job_page = bob.get(f"/jobs/{two.job_id}")
    assert job_page.status_code == 200 and _said(rules) in _text(job_page.text)
    cancel = bob.post(f"/jobs/{two.job_id}/cancel", data={"csrf": _csrf(bob, f"/jobs/{two.job_id}")})
    assert f"Job {two.job_id} cancelled" in _flash(bob, cancel)
    assert jobs.get(two.job_id).status == "cancelled"
    # the checks in front of every decision are as before: signed in, the console's own form
    stranger = httpx.Client(base_url=console.url, headers={"origin": console.url})
    assert stranger.get("/approvals").status_code == 303  # to the login page
    assert stranger.post(f"/approvals/{three.id}/decide", data={"action": "reject"}).status_code == 401
    forged = bob.post(f"/approvals/{three.id}/decide", data={"csrf": "forged", "action": "reject"})
    assert forged.status_code == 403 and jobs.approval(three.id).status == "pending"
    # fixed: judged again, the banner gone
    shutil.copy(DEFAULT_RULES, rules)
    again = bob.get("/approvals")
    assert (
        again.status_code == 200
        and "cannot be used" not in again.text
        and "rules-unreadable" not in again.text
    )
    assert 'value="approve"' in bob.get(f"/approvals/{three.id}").text


def test_the_approvals_page_in_a_browser_while_the_rules_file_is_broken(
    env: dict[str, Any],
    console: ConsoleServer,
    console_chromium: Any,  # noqa: F811
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one, two = _parked(jobs, 1, "4,200.00"), _parked(jobs, 2, "980.00")
    context = console_chromium.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)  # a bound for a failure, not a wait
        page.goto(f"{console.url}/login")
        page.get_by_label("Name").fill("bob")
        page.get_by_label("Password").fill(PASSWORDS["bob"])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r".*/approvals$"))
        _break(rules)
        page.goto(f"{console.url}/approvals")
        banner = page.locator("#rules-unreadable")
        assert banner.is_visible() and _said(rules) in banner.inner_text()
        assert page.get_by_role("button", name="Approve (refused)").first.is_disabled()
        page.screenshot(path=str(SHOT), full_page=True)
        row = page.locator(f"tr[data-approval='{one.id}']")
        row.get_by_label("Reason").fill("the rules file is broken")
        row.get_by_role("button", name="Reject").click()
        page.wait_for_url(re.compile(r".*/approvals$"))
        assert f"Approval {one.id} rejected" in page.locator("p.flash.info").inner_text()
        assert jobs.approval(one.id).status == "rejected" and jobs.approval(two.id).status == "pending"
    finally:
        context.close()


def _token(name: str) -> str:
    out = runner.invoke(
        app, ["approvals", "login", "--name", name, "--password", PASSWORDS[name], "--print-token"]
    )
    assert out.exit_code == 0, out.output
    return out.output.strip()


def test_the_cli_lists_shows_and_rejects_while_the_rules_file_is_broken_and_refuses_approving(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one, two = _parked(jobs, 1), _parked(jobs, 2)
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    _break(rules)
    listed = runner.invoke(app, ["approvals", "list"])
    assert listed.exit_code == 0, listed.output
    assert one.id in listed.stdout and two.id in listed.stdout
    assert "[risk not read: the rules could not be read]" in listed.stdout  # no flag shown as if read
    assert _said(rules) in listed.stderr and "rejecting still works" in listed.stderr
    shown = runner.invoke(app, ["approvals", "show", one.id])
    assert shown.exit_code == 0, shown.output
    assert f"POST {ERP_URL}/bills/new" in shown.stdout and "risk: not read" in shown.stdout
    approve = runner.invoke(app, ["approvals", "approve", one.id])
    assert approve.exit_code == 1
    refused = " ".join(approve.stderr.split())
    assert f"Refused, nothing was decided: {_said(rules)}" in refused and "rejecting still works" in refused
    assert jobs.approval(one.id).status == "pending"
    rejected = runner.invoke(app, ["approvals", "reject", one.id, "--reason", "rules broken"])
    assert rejected.exit_code == 0, rejected.output
    assert f"Approval {one.id} rejected" in rejected.stdout
    assert jobs.approval(one.id).status == "rejected" and jobs.approval(two.id).status == "pending"
    [entry] = [e for e in _entries(jobs, "reject") if e.target == one.id]
    assert entry.who == "bob" and entry.payload["rules"] is None
    assert entry.payload["rules_unreadable"].startswith(_said(rules))
    shutil.copy(DEFAULT_RULES, rules)  # fixed: judged again
    listed = runner.invoke(app, ["approvals", "list"])
    assert listed.exit_code == 0 and "risk not read" not in listed.stdout and not listed.stderr
