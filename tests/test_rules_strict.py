"""The risk rules file refuses a key it does not know, at any depth, with a one-line message naming
it. Before, pydantic ignored unknown keys, so a misspelt restriction failed OPEN without a word: an
auto-approve rule written with ``path:`` for ``paths:`` covered every path (a submitter meant to be
limited to /reports/ got ``--auto-approve`` on a payment), and ``two-person: 'on'`` left the
two-person rule on ``auto`` (one person approved 8,000.00 EUR). An unquoted ``on``/``off`` (YAML
reads them as true/false) means what the person wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskcrew.approvals.rules import DEFAULT_RULES, RiskRulesError, load_rules
from taskcrew.jobs import Jobs


def _rules(tmp_path: Path, old: str, new: str) -> Path:
    text = DEFAULT_RULES.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


AUTO = "auto_approve:\n  - identities: ['*']\n    paths: ['.*']\n"


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (AUTO, "auto_approve:\n  - identities: ['cibot']\n    path: ['^/reports/']\n", "auto_approve.0.path"),
        ("two_person: auto", "two-person: 'on'", "two-person"),
        ("two_person: auto", "two_person: auto\nbulk_alowed: false", "bulk_alowed"),
        (
            "path_rules: []\n",
            "path_rules:\n  - path: '^/vendors/'\n    message: bank\n    second_aprover: true\n",
            "second_aprover",
        ),
    ],
    ids=["auto-approve-path", "two-person-hyphen", "top-level-typo", "path-rule-typo"],
)
def test_a_misspelt_key_is_refused_and_named(tmp_path: Path, old: str, new: str, named: str) -> None:
    path = _rules(tmp_path, old, new)
    with pytest.raises(RiskRulesError) as raised:
        load_rules(path)
    said = str(raised.value)
    assert named in said and "not a known setting" in said and "\n" not in said


@pytest.mark.parametrize(
    ("written", "read"), [("on", "on"), ("off", "off"), ("'on'", "on"), ("auto", "auto")]
)
def test_two_person_on_or_off_unquoted_is_what_was_written(tmp_path: Path, written: str, read: str) -> None:
    assert load_rules(_rules(tmp_path, "two_person: auto", f"two_person: {written}")).two_person == read


def test_every_surface_refuses_to_decide_on_a_misspelt_rules_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI an approver uses says the one line before anything is shown: its list is shown unjudged
    (no flag read), as a rejection is still decided (tests/test_reject_broken_rules_s46.py)."""
    path = _rules(tmp_path, "two_person: auto", "two-person: 'on'")
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))  # the CLI's keys sign the job database
    monkeypatch.delenv("TASKCREW_APPROVALS_DIR", raising=False)
    Jobs.open(f"sqlite:///{tmp_path / 'home' / 'jobs.sqlite3'}").submit("Pay BILL-0004", submitted_by="ana")
    env = {**os.environ, "TASKCREW_HOME": str(tmp_path / "home"), "TASKCREW_RISK_RULES": str(path)}
    done = subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", "approvals", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "two-person: not a known setting" in done.stderr and "approving is refused" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
