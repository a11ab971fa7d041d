"""A key rotated by another process while a worker or the console runs: the running process reads the
key file again when it changed. Before, a ``KeyRing`` read the key once, so a worker started before
``taskcrew approvals rotate-key`` could not verify what newer processes signed (a person's approval, a
send, a cancel signed on the new key counted as a forgery for it) and, after ``--retire-old``, went on
signing with a retired key that no other process accepts. The rotation here is the real CLI in its own
process; the audit log is the real file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from taskcrew.approvals.audit import AuditLog
from taskcrew.approvals.signing import KeyRing


def _rotate(home: Path, *extra: str) -> None:
    env = {**os.environ, "TASKCREW_HOME": str(home)}
    env.pop("TASKCREW_APPROVALS_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "taskcrew.cli", "approvals", "rotate-key", *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _log(home: Path) -> AuditLog:
    folder = home / "approvals"
    return AuditLog(folder / "audit.jsonl", KeyRing(folder / "operator.key"))


def test_a_running_process_verifies_what_a_newer_key_signed(tmp_path: Path) -> None:
    worker = _log(tmp_path)
    worker.append("taskcrew", "request", "apr-1", {"job_id": "j1"})
    assert [e.target for e in worker.signed()] == ["apr-1"]
    _rotate(tmp_path)  # a new key; the old one still verifies
    _log(tmp_path).append("alice", "approve", "apr-1", {"job_id": "j1"})  # a process started since
    assert [e.action for e in worker.signed()] == ["request", "approve"]


def test_after_retire_old_a_running_process_signs_with_the_new_key(tmp_path: Path) -> None:
    worker = _log(tmp_path)
    worker.append("taskcrew", "request", "apr-1", {"job_id": "j1"})
    old = worker.keys.key_ids()
    _rotate(tmp_path, "--retire-old")
    assert worker.keys.key_ids() != old
    entry = worker.append("taskcrew", "send", "apr-1", {"job_id": "j1"})
    assert entry.hash.split(":", 1)[0] not in old
    # every other process: the send is signed, the retired key's entry is not (and the head it
    # signed no longer is: the append says so first, as documented: archive the log before)
    later = _log(tmp_path)
    assert [e.action for e in later.signed()] == ["audit_break", "send"]
    assert [e.action for e in worker.signed()] == ["audit_break", "send"]


def test_a_removed_key_file_leaves_a_running_process_on_the_keys_it_read(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path / "operator.key")
    sig = ring.sign({"a": 1})
    (tmp_path / "operator.key").unlink()
    assert ring.verify({"a": 1}, sig)
    assert ring.sign({"a": 1}) == sig
    assert not (tmp_path / "operator.key").exists()  # not quietly replaced by a key of its own
