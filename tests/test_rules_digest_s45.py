# ruff: noqa: F811 — the fixture env is imported from test_rules_in_force_s45
"""The rules in force are known by the digest of the rules file's bytes (``rules.RulesInForce``):
an edit that keeps the file's size and modification time (``cp -p``, ``touch -r``, ``rsync -t``)
is read too, and every decision the authority signs says which rules judged it; a process that
reads a changed rules file signs a ``rules_changed`` entry, once per change. A real SQLite job
store, the real audit log and the console in-process (no model)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from fixtures_console import client_as
from test_rules_in_force_s45 import _decide, _parked, env  # noqa: F401 (fixture)
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity
from taskcrew.cli import app

BOB = Identity(name="bob", proof="console")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _edit_keeping_stamp(rules: Path, old: str, new: str) -> None:
    """An in-place edit of the same size, the modification time put back (``cp -p``, ``touch -r``)."""
    before = rules.stat()
    text = rules.read_text(encoding="utf-8")
    assert old in text and len(old) == len(new)
    with open(rules, "r+", encoding="utf-8") as f:  # the same inode
        f.write(text.replace(old, new))
    os.utime(rules, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = rules.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


def test_a_same_size_edit_that_keeps_the_modification_time_is_the_rules_in_force(
    env: dict[str, Any],
) -> None:
    """The operator lowers the USD threshold 1000.00 -> 0100.00 with a copy that keeps the file's
    time: the running authority judges bob's approval of 499.00 by it (a first approval)."""
    jobs, rules = env["jobs"], env["rules"]
    authority = Authority(jobs, users_file=env["users"])
    asked = _parked(jobs, "499.00")
    assert not authority.needs_two(authority.assess(asked.request))
    _edit_keeping_stamp(rules, 'USD: "1000.00"', 'USD: "0100.00"')
    assert authority.decide(asked.id, "approve", BOB).status == "first_approval"
    [first] = [e for e in authority.audit.entries() if e.action == "approve_first"]
    assert first.payload["rules"] == _digest(rules)


def test_each_decision_says_its_rules_and_a_change_read_is_signed_once(
    env: dict[str, Any], tmp_path: Path
) -> None:
    """Someone raises the USD threshold for a minute; bob alone approves 4000.00 on the running
    console; the file is put back. The signed log says the rules changed (from, to, the file) once
    per change however often they are read, and which rules judged each decision."""
    jobs, rules = env["jobs"], env["rules"]
    tight = _digest(rules)
    authority = Authority(jobs, users_file=env["users"])  # a worker's leg, started before the edit
    bob = client_as("bob", jobs, tmp_path / "c", env["users"], risk_rules=rules)  # the console runs
    loose_one, loose_two, later = (
        _parked(jobs, "4000.00", 1),
        _parked(jobs, "4000.00", 2),
        _parked(jobs, "4000.00", 3),
    )
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace('USD: "1000.00"', 'USD: "9000.00"'), encoding="utf-8")
    loose = _digest(rules)
    for _ in range(20):  # read often: every page, every check
        assert authority.rules.bulk_allowed
    assert _decide(bob, loose_one.id).status_code == 303
    assert authority.decide(loose_two.id, "approve", BOB).status == "decided"
    rules.write_text(text, encoding="utf-8")  # put back
    assert authority.decide(later.id, "approve", BOB).status == "first_approval"
    bob.get("/approvals")
    entries = authority.audit.entries()
    changed = [e for e in entries if e.action == "rules_changed"]
    assert [(e.payload["from"], e.payload["to"], e.payload["path"]) for e in changed] == [
        (tight, loose, str(rules)),
        (loose, tight, str(rules)),
    ]
    judged = {e.target: e.payload["rules"] for e in entries if e.action in ("approve", "approve_first")}
    assert judged == {loose_one.id: loose, loose_two.id: loose, later.id: tight}
    seqs = {e.target: e.seq for e in entries}
    assert changed[0].seq < seqs[loose_one.id] < seqs[loose_two.id] < changed[1].seq < seqs[later.id]
    page = bob.get("/audit").text  # the console's audit page shows it among decisions and actions
    assert "rules_changed" in page and loose in page
    out = CliRunner().invoke(app, ["approvals", "audit"])
    assert out.exit_code == 0 and "audit log intact" in out.output, out.output
