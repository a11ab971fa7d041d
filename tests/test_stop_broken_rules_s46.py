"""While the risk rules file cannot be read, stopping is always allowed and nothing else is decided:
`taskcrew jobs cancel` cancels (taking back an approval given and not yet used, as the console's
cancel does) and `taskcrew jobs show` shows the job, saying the rules cannot be read; an unproven
canceller is refused in words (the two-person rule is taken as on), never with a traceback; and
`taskcrew approvals show` says an edited approval row cannot be trusted and shows none of it, judged
or not. Real CLI (typer's runner), real SQLite jobs, the real rules file broken by a typo."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from fixtures_console import console_users  # noqa: F401 (fixture)
from test_reject_broken_rules_s46 import _break, _entries, _parked, _said, _token, env, runner  # noqa: F401

from taskcrew.cli import app

FORGED = "http://127.0.0.1:8800/wire-transfer/new?to=ATTACKER-IBAN-DE00"


def test_jobs_cancel_takes_an_approval_back_while_the_rules_file_is_broken(
    env: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one = _parked(jobs, 1)
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    assert runner.invoke(app, ["approvals", "approve", one.id]).exit_code == 0
    assert jobs.approval(one.id).status == "approved"  # given: the job is queued to resume on it
    _break(rules)  # the operator's typo; the approver now wants to take the approval back
    shown = runner.invoke(app, ["jobs", "show", one.job_id])
    assert shown.exit_code == 0, shown.output
    assert f"approval {one.id}: approval approved" in shown.stdout
    assert _said(rules) in " ".join(shown.stdout.split())  # said where the approvals are listed
    cancel = runner.invoke(app, ["jobs", "cancel", one.job_id])
    assert cancel.exit_code == 0, f"{cancel.output} {cancel.exception!r}"
    assert jobs.get(one.job_id).status == "cancelled"
    [entry] = [e for e in _entries(jobs, "cancel") if e.target == one.job_id]
    assert entry.who == "bob" and entry.payload["void"] == [one.id]  # the unused approval is void


def test_an_unproven_canceller_is_refused_in_words_while_the_rules_file_is_broken(
    env: dict[str, Any],  # noqa: F811
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one = _parked(jobs, 1)
    _break(rules)  # the two-person setting cannot be read: taken as on
    cancel = runner.invoke(app, ["jobs", "cancel", one.job_id])  # as the OS user, no token
    assert cancel.exit_code == 2, f"{cancel.output} {cancel.exception!r}"
    said = " ".join(cancel.stderr.split())
    assert _said(rules) in said and "two-person rule is taken as on" in said
    assert "`taskcrew approvals login` first" in said
    assert jobs.get(one.job_id).status == "waiting"
    assert [e for e in _entries(jobs, "cancel_refused") if e.target == one.job_id]


def _forge(jobs: Any, approval_id: str) -> None:
    """A database writer's edit of the stored request: the row's seal no longer matches."""
    db = sqlite3.connect(jobs.url.removeprefix("sqlite:///"))
    (doc,) = db.execute("SELECT doc FROM taskcrew_approvals WHERE id = ?", (approval_id,)).fetchone()
    data = json.loads(doc)
    data["request"]["url"] = FORGED
    db.execute("UPDATE taskcrew_approvals SET doc = ? WHERE id = ?", (json.dumps(data), approval_id))
    db.commit()
    db.close()


def test_approvals_show_of_an_edited_row_says_it_cannot_be_trusted_while_the_rules_file_is_broken(
    env: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one = _parked(jobs, 1)
    _forge(jobs, one.id)
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))
    for broken in (False, True):  # the same words whether the rules can be read or not
        if broken:
            _break(rules)
        shown = runner.invoke(app, ["approvals", "show", one.id])
        assert shown.exit_code == 0, shown.output
        out = " ".join(shown.stdout.split())
        assert "This approval cannot be trusted: its stored payload is not the one" in out
        assert "ATTACKER-IBAN" not in out and "wire-transfer" not in out


def test_a_submit_while_the_rules_file_is_broken_says_why_and_queues_nothing(
    env: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Submitting is no stopping: it needs the rules (the two-person rule says whether a submitter
    must prove who they are). A broken file is said in words, never a traceback, and no job is
    queued."""
    jobs, rules = env["jobs"], env["rules"]
    _break(rules)
    before = len(jobs.list(limit=100))
    submitted = runner.invoke(
        app,
        ["submit", "Enter INV-1", "--model", "scripted/headline", "--verifier-model", "scripted/headline"],
    )
    assert submitted.exit_code == 2, f"{submitted.output} {submitted.exception!r}"
    said = " ".join(submitted.output.split())
    assert "cannot be used" in said and "Nothing was submitted." in said, said
    assert len(jobs.list(limit=100)) == before
