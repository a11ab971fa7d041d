"""While the risk rules file cannot be read, only stopping is allowed: a retry starts work, as a
submission does, so `taskcrew jobs retry` and the console's Retry are refused in words (nothing is
queued again, the refusal is in the signed log), for an authenticated user too; once the file is
fixed the same retry goes through. Real CLI (typer's runner), real console over HTTP, real SQLite
jobs, the real rules file broken by a typo."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from fixtures_console import console_users  # noqa: F401 (fixture)
from test_reject_broken_rules_s46 import (  # noqa: F401 (fixtures)
    DEFAULT_RULES,
    _break,
    _csrf,
    _entries,
    _flash,
    _parked,
    _said,
    _signed_in,
    _token,
    console,
    env,
    runner,
)

from taskcrew.cli import app


def test_jobs_retry_is_refused_in_words_while_the_rules_file_is_broken_and_works_once_fixed(
    env: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one = _parked(jobs, 1)
    monkeypatch.setenv("TASKCREW_TOKEN", _token("bob"))  # authenticated: the rules still decide
    assert runner.invoke(app, ["jobs", "cancel", one.job_id]).exit_code == 0
    _break(rules)
    retried = runner.invoke(app, ["jobs", "retry", one.job_id])
    assert retried.exit_code == 2, f"{retried.output} {retried.exception!r}"
    said = " ".join(retried.stderr.split())
    assert _said(rules) in said and "Nothing was queued again" in said, said
    assert "cancelling a job still works" in said
    assert jobs.get(one.job_id).status == "cancelled"
    assert [e for e in _entries(jobs, "retry_refused") if e.target == one.job_id]
    assert not [e for e in _entries(jobs, "retrying") if e.target == one.job_id]
    shutil.copy(DEFAULT_RULES, rules)  # fixed: the same command goes through
    again = runner.invoke(app, ["jobs", "retry", one.job_id])
    assert again.exit_code == 0, f"{again.output} {again.exception!r}"
    assert jobs.get(one.job_id).status == "queued"


def test_the_consoles_retry_is_refused_while_the_rules_file_is_broken(
    env: dict[str, Any],  # noqa: F811
    console: Any,  # noqa: F811
) -> None:
    jobs, rules = env["jobs"], env["rules"]
    one = _parked(jobs, 1)
    bob = _signed_in(console.url, "bob")
    cancel = bob.post(f"/jobs/{one.job_id}/cancel", data={"csrf": _csrf(bob, f"/jobs/{one.job_id}")})
    assert f"Job {one.job_id} cancelled" in _flash(bob, cancel)
    _break(rules)
    retry = bob.post(f"/jobs/{one.job_id}/retry", data={"csrf": _csrf(bob, f"/jobs/{one.job_id}")})
    said = _flash(bob, retry)
    assert _said(rules) in said and "Nothing was queued again" in said, said
    assert jobs.get(one.job_id).status == "cancelled"
    shutil.copy(DEFAULT_RULES, rules)
    retry = bob.post(f"/jobs/{one.job_id}/retry", data={"csrf": _csrf(bob, f"/jobs/{one.job_id}")})
    assert f"Job {one.job_id} queued again" in _flash(bob, retry)
    assert jobs.get(one.job_id).status == "queued"
