"""Races on the users file, CLI logins, the audit log's verification and learned facts' decisions.

Each test pauses one party at the worst point (an Event inside a patched call, never a sleep) and
lets the other act: a CLI login checked against a password that a reset then replaces; two
`console add-user` runs at once; `approvals audit` while an append is half done; a fact accepted
while it is rejected, or while the reflector merges into it. Where the fix makes the second party
wait for a file lock, ``_lock_waits`` tells the test that it is waiting (or that it finished: it
did not wait, as before the fix) before the first party is let go.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskcrew.approvals import identity as ident
from taskcrew.approvals.audit import AuditLog
from taskcrew.approvals.identity import Identity, TokenStore, credentials, identity_refusal
from taskcrew.approvals.signing import KeyRing
from taskcrew.cli import app
from taskcrew.console import auth
from taskcrew.console.auth import add_user
from taskcrew.knowledge.facts import words_of
from taskcrew.knowledge.grant import FactGrant

WAIT = 30  # seconds: only a bound on a hang, never a synchronisation
FACT = "Northwind Traders invoices are always due 30 days after the invoice date."


def _lock_waits(monkeypatch: pytest.MonkeyPatch, thread_name: str) -> threading.Event:
    """An event set when the thread ``thread_name`` would wait for a file lock another holds."""
    real = fcntl.flock
    waiting = threading.Event()

    def flock(fd: int, op: int) -> None:
        if threading.current_thread().name == thread_name and not op & (fcntl.LOCK_NB | fcntl.LOCK_UN):
            try:
                real(fd, op | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                waiting.set()
        real(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock)
    return waiting


def _start(
    name: str, work: Callable[[], Any], done: threading.Event | None = None
) -> tuple[threading.Thread, list[Any]]:
    """``work`` in a thread called ``name``; its result or exception lands in the list; ``done`` is
    set when it ends (whatever happened)."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(work())
        except BaseException as exc:  # the test reads it
            out.append(exc)
        finally:
            if done is not None:
                done.set()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread, out


def _result(thread: threading.Thread, out: list[Any]) -> Any:
    thread.join(WAIT)
    assert not thread.is_alive(), f"{thread.name} hung"
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


@pytest.fixture
def users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Path:
    """A users file of this test's own (ana, bob, carol), which it may reset and add to."""
    path = tmp_path / "console" / "users.yaml"
    path.parent.mkdir()
    path.write_bytes(console_users.read_bytes())
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(path))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    return path


# --- F2: a CLI login racing a password reset ----------------------------------------------------


def test_a_cli_login_checked_against_the_old_password_does_not_survive_a_reset_landing_meanwhile(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thief's `approvals login bob` checks bob's OLD password (scrypt: the window); the reset
    lands before the token is issued. The token is bound to the password it was checked against, so
    after the reset it counts for nothing (it was bound to the NEW credential: it counted as bob)."""
    checked, go = threading.Event(), threading.Event()
    real_check = auth.Authenticator.check

    def check(self: auth.Authenticator, name: str, password: str) -> str | None:
        got = real_check(self, name, password)
        if threading.current_thread().name == "thief":
            checked.set()
            go.wait(WAIT)
        return got

    monkeypatch.setattr(auth.Authenticator, "check", check)
    thread, out = _start("thief", lambda: ident.login("bob", "bob-secret-1", users))
    assert checked.wait(WAIT)
    add_user(users, "bob", "bob-new-password-after-theft")  # the operator's reset lands now
    go.set()
    token = _result(thread, out)
    who = TokenStore().identity(token)
    assert who is not None and who.name == "bob"
    assert identity_refusal(who, users) is not None, "a token from the OLD password counts after the reset"

    fresh = TokenStore().identity(ident.login("bob", "bob-new-password-after-theft", users))
    assert fresh is not None and identity_refusal(fresh, users) is None  # bob's own new login counts


# --- F3: two `console add-user` at once -----------------------------------------------------------


def test_an_add_user_hashing_while_a_reset_lands_does_not_write_the_old_hash_back(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Operator 2 adds dave (paused in the slow hash) while operator 1 resets ana (her token was
    stolen). Operator 2's write must not put ana's old hash back."""
    stolen = Identity(name="ana", proof="token", credential=credentials(users)["ana"])
    hashing, go = threading.Event(), threading.Event()
    real_hash = auth.hash_password

    def slow_hash(password: str) -> str:
        if threading.current_thread().name == "op2":
            hashing.set()
            go.wait(WAIT)
        return real_hash(password)

    monkeypatch.setattr(auth, "hash_password", slow_hash)
    thread, out = _start("op2", lambda: add_user(users, "dave", "dave-secret-1"))
    assert hashing.wait(WAIT)
    add_user(users, "ana", "ana-new-password-after-theft")
    assert identity_refusal(stolen, users) is not None
    go.set()
    _result(thread, out)
    assert sorted(credentials(users)) == ["ana", "bob", "carol", "dave"]
    assert identity_refusal(stolen, users) is not None, "ana's reset was silently undone"


def test_two_add_users_take_turns_between_reading_and_writing_the_users_file(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Operator 2 has read the users file (adding dave) and not yet written it when operator 1's
    reset of ana starts: operator 1 waits for operator 2's write, then reads it; both changes stay."""
    stolen = Identity(name="ana", proof="token", credential=credentials(users)["ana"])
    read, go = threading.Event(), threading.Event()
    real_load = auth.load_users

    def load_users(path: Path) -> list[auth.User]:
        got = real_load(path)
        if threading.current_thread().name == "op2":
            read.set()
            go.wait(WAIT)
        return got

    monkeypatch.setattr(auth, "load_users", load_users)
    waiting = _lock_waits(monkeypatch, "op1")
    op2, out2 = _start("op2", lambda: add_user(users, "dave", "dave-secret-1"))
    assert read.wait(WAIT)
    op1, out1 = _start("op1", lambda: add_user(users, "ana", "ana-new-password-after-theft"), waiting)
    assert waiting.wait(WAIT)  # op1 waits for the lock (without one: it is already done)
    go.set()
    _result(op2, out2)
    _result(op1, out1)
    assert sorted(credentials(users)) == ["ana", "bob", "carol", "dave"]
    assert identity_refusal(stolen, users) is not None, "ana's reset was silently undone"
    assert not [p.name for p in users.parent.iterdir() if p.name.endswith(".tmp")]  # no temp file left


def test_the_users_file_is_never_readable_by_others_while_it_is_written(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever file add-user writes the hashes to is 0600 from its creation: not written first
    and made private after (a umask of 022 made it 0644 for that moment)."""
    seen: dict[str, int] = {}
    real_fsync, real_chmod = os.fsync, os.chmod

    def note(fd_or_path: Any) -> None:
        mode = os.fstat(fd_or_path).st_mode if isinstance(fd_or_path, int) else os.stat(fd_or_path).st_mode
        if stat.S_ISREG(mode):
            seen[str(fd_or_path)] = stat.S_IMODE(mode)

    def fsync(fd: int) -> None:
        note(fd)
        real_fsync(fd)

    def chmod(path: Any, mode: int, **kw: Any) -> None:  # a file written before it was made private
        note(path)
        real_chmod(path, mode, **kw)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "chmod", chmod)
    old = os.umask(0o022)
    try:
        add_user(users, "dave", "dave-secret-1")
    finally:
        os.umask(old)
    assert seen, "add-user neither synced nor chmod-ed the file it wrote"
    assert set(seen.values()) == {0o600}, f"the hashes were readable by others while written: {seen}"
    assert stat.S_IMODE(users.stat().st_mode) == 0o600


# --- F4: `approvals audit` while an append is in flight --------------------------------------------


def test_audit_verify_waits_for_an_append_in_flight_instead_of_reporting_a_break(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's append has written and synced its entry, not yet replaced the signed head, when
    the operator runs `taskcrew approvals audit`: the intact log is reported intact."""
    home = tmp_path / "approvals"
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(home))
    log = AuditLog(home / "audit.jsonl", KeyRing(home / "operator.key"))
    for i in range(3):
        log.append("worker", "request", f"apr-{i}", {})
    assert log.verify() == []

    written, go = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the entry is in the file; its head comes next
        real_fsync(fd)
        if threading.current_thread().name == "worker-append":
            written.set()
            go.wait(WAIT)

    monkeypatch.setattr(os, "fsync", fsync)
    waiting = _lock_waits(monkeypatch, "auditor")
    worker, _ = _start("worker-append", lambda: log.append("bob", "approve", "apr-1", {}))
    assert written.wait(WAIT)
    auditor, out = _start("auditor", lambda: CliRunner().invoke(app, ["approvals", "audit"]), waiting)
    assert waiting.wait(WAIT)  # the audit waits for the append (without the lock: it is already done)
    go.set()
    during = _result(auditor, out)
    worker.join(WAIT)
    assert during.exit_code == 0, f"an intact log reported broken during an append: {during.output}"
    assert log.verify() == []
    assert [e.seq for e in log.entries()] == [1, 2, 3, 4]


def test_audit_verify_still_reports_a_log_cut_behind_its_head(tmp_path: Path) -> None:
    """Reading under the lock changes nothing about real damage: a truncated tail is still found."""
    home = tmp_path / "approvals"
    log = AuditLog(home / "audit.jsonl", KeyRing(home / "operator.key"))
    for i in range(3):
        log.append("worker", "request", f"apr-{i}", {})
    lines = log.path.read_text(encoding="utf-8").splitlines(keepends=True)
    log.path.write_text("".join(lines[:2]), encoding="utf-8")
    assert any("truncated" in p.problem for p in log.verify())


# --- F5 / F6: a fact decided twice at once, or accepted while the reflector merges it -------------


class _Verdict:
    def __init__(self, run_id: str) -> None:
        self.verified, self.run_id, self.task = True, run_id, "Enter the Northwind invoice."


@pytest.fixture
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path, knowledge_store: Any) -> Any:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    return knowledge_store.facts


def _person(name: str, users: Path) -> Identity:
    return Identity(name=name, proof="console", credential=credentials(users)[name])


def _pause_row_write(
    book: Any, monkeypatch: pytest.MonkeyPatch, thread_name: str
) -> tuple[threading.Event, threading.Event]:
    """Events: the thread ``thread_name`` is about to write a row (``entered``); let it (``go``)."""
    real = book._collection.update
    entered, go = threading.Event(), threading.Event()

    def update(*a: Any, **k: Any) -> Any:
        if threading.current_thread().name == thread_name:
            entered.set()
            go.wait(WAIT)
        return real(*a, **k)

    monkeypatch.setattr(book._collection, "update", update, raising=False)
    return entered, go


def _latest_decision(book: Any, fact_id: str) -> Any:
    decisions = book.audit.signed(("fact_accept", "fact_reject"))
    return [e for e in decisions if e.target == f"/facts/{fact_id}"][-1]


def test_a_fact_accepted_while_it_is_rejected_leaves_the_store_and_the_signed_log_agreeing(
    book: Any, console_users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """carol rejects (her audit entry written, the row not yet) while bob accepts: bob's decision
    waits for carol's to be written whole, so the row, the log's latest decision and what bob was
    told are one and the same."""
    fact = book.learn(FactGrant.from_verdict(_Verdict("run-1"), sources=None), FACT).fact
    assert fact.status == "proposed"
    bob, carol = _person("bob", console_users), _person("carol", console_users)
    entered, go = _pause_row_write(book, monkeypatch, "carol")
    waiting = _lock_waits(monkeypatch, "bob")
    rejecting, rejected = _start("carol", lambda: book.decide(fact.id, False, carol))
    assert entered.wait(WAIT)
    accepting, accepted = _start("bob", lambda: book.decide(fact.id, True, bob, words_of(FACT)), waiting)
    assert waiting.wait(WAIT)  # bob waits for carol's decision (without the lock: he is already done)
    go.set()
    assert _result(rejecting, rejected).status == "rejected"
    told_bob = _result(accepting, accepted)
    shown, latest = book.get(fact.id), _latest_decision(book, fact.id)
    assert (shown.status == "accepted") == (latest.action == "fact_accept"), (
        "the store and the signed log disagree"
    )
    assert told_bob.status == shown.status == "accepted" and latest.who == "bob"
    assert shown.problem is None


def test_a_fact_accepted_while_the_reflector_merges_into_it_stays_accepted(
    book: Any, console_users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run re-learns the same words (read the row, merge, write back) while bob accepts it: the
    merge does not write back the row it read before his acceptance; both the merge and the
    acceptance stay."""
    fact = book.learn(FactGrant.from_verdict(_Verdict("run-1"), sources=None), FACT).fact
    bob = _person("bob", console_users)
    entered, go = _pause_row_write(book, monkeypatch, "reflector")
    waiting = _lock_waits(monkeypatch, "bob")
    merging, merged = _start(
        "reflector", lambda: book.learn(FactGrant.from_verdict(_Verdict("run-2"), sources=None), FACT)
    )
    assert entered.wait(WAIT)
    accepting, accepted = _start("bob", lambda: book.decide(fact.id, True, bob, words_of(FACT)), waiting)
    assert waiting.wait(WAIT)  # bob waits for the merge (without the lock: he is already done)
    go.set()
    assert _result(merging, merged).action == "merged"
    assert _result(accepting, accepted).status == "accepted"
    shown = book.get(fact.id)
    assert shown.status == "accepted", f"bob's acceptance was lost: {shown.status} ({shown.problem})"
    assert shown.decided_by == "console:bob" and shown.problem is None
    assert shown.confirmations == 2 and [p.run_id for p in shown.provenance] == ["run-1", "run-2"]
