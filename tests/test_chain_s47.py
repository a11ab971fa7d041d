"""The audit log hands readers only the entries of its chain (``AuditLog.signed``/``checked``): from
the start, each line the key signed that continues the entry kept before it. A genuine line copied
to the end of audit.jsonl, or from another log with the same key, is not an entry, so it cannot
become "the newest" of anything (a retry that lends ``--auto-approve``, a retry that hides a
standing cancel); and what the worker writes after such junk chains to the last entry kept, so it
counts. Only the LLM is faked (nothing here uses it): real SQLite job store, real key ring and log."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import PASSWORDS

from taskcrew.approvals.audit import BREAK, AuditLog
from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import TokenStore, login
from taskcrew.approvals.rules import AutoApproveRule, load_rules
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.tools.human import ApprovalRequest, FieldValue

WAIT = 60.0  # a safety net only: no assertion depends on time


def _request() -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name="invoice_number", value="INV-9"), FieldValue(name="amount", value="40.00")],
    )


class _World:
    """ana may auto-approve (bob may not); ana submitted an --auto-approve job; it failed, ana put it
    back, it failed again and bob put it back (the red team's PoC, tests/…/test_poc4_audit_replay)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> None:
        users = tmp_path / "users.yaml"
        users.write_bytes(console_users.read_bytes())
        monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
        monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
        self.jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
        rules = load_rules().model_copy(
            update={"auto_approve": [AutoApproveRule(identities=["ana"], paths=[".*"])]}
        )
        self.auth = Authority(self.jobs, rules, users_file=users)
        self.ana = TokenStore().identity(login("ana", PASSWORDS["ana"], users))
        self.bob = TokenStore().identity(login("bob", PASSWORDS["bob"], users))
        self.job = self.jobs.submit(
            "Enter the Northwind invoice",
            submitted_by="ana",
            submitted_proof="token",
            submitted_credential=self.ana.credential,
            options=JobOptions(auto_approve=True),
        )
        self.leg_fails()
        self.auth.act_on_job(self.job.id, "retry", self.ana)  # ana put it back once
        self.leg_fails()
        self.auth.act_on_job(self.job.id, "retry", self.bob)  # then bob, who may not auto-approve
        self.log = self.auth.audit.path

    def leg_fails(self) -> None:
        self.jobs.mark(self.job.id, "running", only_if=("queued",), worker="w1")
        self.jobs.mark(self.job.id, "failed", only_if=("running",))

    def refusal(self) -> str | None:
        return self.auth.auto_approve_refusal(self.jobs.get(self.job.id), _request())

    def line(self, action: str, who: str) -> str:
        return next(
            raw
            for raw in self.log.read_text(encoding="utf-8").splitlines()
            if f'"action":"{action}"' in raw and f'"who":"{who}"' in raw
        )

    def add(self, *raws: str) -> None:
        """Lines added at the end by someone who can write the file, not read the key."""
        with self.log.open("a", encoding="utf-8") as fh:
            fh.write("".join(raw + "\n" for raw in raws))


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Any:
    w = _World(tmp_path, monkeypatch, console_users)
    yield w
    w.jobs.close()


def _seqs_rise_by_one(log: AuditLog) -> bool:
    seqs = [e.seq for e in log.signed()]
    return seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else True


# ---- the red team's PoC, and the cancel a copied retry would hide ------------------------------------
def test_a_genuine_retry_copied_to_the_end_lends_no_auto_approve(world: _World) -> None:
    world.jobs.mark(world.job.id, "running", only_if=("queued",), worker="w1")
    before = world.refusal()
    assert before is not None and "bob" in before

    world.add(world.line("retry", "ana"))  # ana's genuine retry copied to the end: no key read
    after = world.refusal()
    assert after is not None, "a copied retry line lent ana's --auto-approve to bob's retry"
    assert "does not check out" in after
    with pytest.raises(Parked):  # a person is asked; nothing auto-approves "submitted by ana"
        JobHuman(world.jobs, world.job.id, auto_approve=True, authority=world.auth).approve(_request())
    assert any("sequence" in p.problem for p in world.auth.audit.verify())  # the copy is found
    assert _seqs_rise_by_one(world.auth.audit)


def test_a_copied_retry_line_does_not_hide_a_standing_cancel(world: _World) -> None:
    world.jobs.mark(world.job.id, "running", only_if=("queued",), worker="w1")
    world.auth.act_on_job(world.job.id, "cancel", world.ana)
    cancel = world.auth.standing_cancel(world.job.id)
    assert cancel is not None and cancel.who == "ana"

    world.add(world.line("retry", "bob"))  # the newest retry copied after the cancel
    assert world.auth.standing_cancel(world.job.id) == cancel
    assert world.auth.leg_end(world.job.id, 99) == cancel


def test_a_genuine_entry_the_authority_writes_after_junk_counts(world: _World) -> None:
    """Junk at the end (a copied genuine line, a forged line that claims the next number, a line of
    another log signed by the same key): what is written next chains to the last entry kept."""
    log = world.auth.audit
    last = log.signed()[-1]
    other = AuditLog(world.log.parent / "other" / "audit.jsonl", log.keys)
    for _ in range(last.seq + 3):
        other.append("ana", "retry", world.job.id, {"proof": "token"})
    foreign = other.path.read_text().splitlines()[last.seq]  # the number ours would take next
    forged = json.loads(world.line("retry", "ana"))  # claims to follow the last entry
    forged.update(seq=last.seq + 1, prev=last.hash)
    world.add(world.line("retry", "ana"), json.dumps(forged, separators=(",", ":")), foreign)
    assert log.signed()[-1] == last

    world.leg_fails()
    world.auth.act_on_job(world.job.id, "retry", world.bob)  # bob puts it back again, after the junk
    begun, done = log.signed(("retrying", "retry"))[-2:]  # written ahead, then done
    assert (begun.who, begun.seq, begun.prev) == ("bob", last.seq + 1, last.hash)
    assert (done.who, done.action, done.seq) == ("bob", "retry", last.seq + 2)
    world.jobs.mark(world.job.id, "running", only_if=("queued",), worker="w1")
    refusal = world.refusal()
    assert refusal is not None and "rules do not let bob" in refusal
    world.auth.act_on_job(world.job.id, "cancel", world.ana)  # and a cancel after it stands
    assert world.auth.standing_cancel(world.job.id) == log.signed("cancel")[-1]
    assert _seqs_rise_by_one(log)
    assert [in_chain for _, in_chain in log.checked()].count(False) == 3  # the junk, and only it


# ---- the log itself ----------------------------------------------------------------------------------
def _log(tmp_path: Path) -> AuditLog:
    log = AuditLog(tmp_path / "approvals" / "audit.jsonl")
    log.append("ana", "approve", "apr-1", {"job_id": "job-1"})
    log.append("bob", "reject", "apr-2", {"job_id": "job-1"})
    log.append("ana", "cancel", "job-1", {"proof": "token"})
    log.append("ana", "retry", "job-1", {"proof": "token"})
    log.append("carol", "approve", "apr-3", {"job_id": "job-1"})
    return log


@pytest.mark.parametrize("action", ["approve", "reject", "cancel"])
def test_a_copied_line_is_no_entry_and_the_next_one_counts(tmp_path: Path, action: str) -> None:
    log = _log(tmp_path)
    before = [(e.seq, e.action, e.target) for e in log.signed()]
    copied = next(raw for raw in log.path.read_text().splitlines() if f'"action":"{action}"' in raw)
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write(copied + "\n")
    assert [(e.seq, e.action, e.target) for e in log.signed()] == before
    assert log.checked()[-1][1] is False and len(log.entries()) == len(before) + 1  # shown, not obeyed
    assert {p.line for p in log.verify()} == {len(before) + 1}
    written = log.append("worker", "request", "apr-9")
    assert (written.seq, log.signed()[-1]) == (len(before) + 1, written)
    assert _seqs_rise_by_one(log)


def test_a_line_copied_from_another_log_with_the_same_key_is_no_entry(tmp_path: Path) -> None:
    log = _log(tmp_path)
    other = AuditLog(tmp_path / "elsewhere" / "audit.jsonl", log.keys)
    for i in range(8):
        other.append("ana", "cancel", f"job-{i}", {"proof": "token"})
    theirs = other.path.read_text().splitlines()
    ours = [e.seq for e in log.signed()]
    with log.path.open("a", encoding="utf-8") as fh:  # the next number's line, and a later run of them
        fh.write("\n".join(theirs[len(ours) :]) + "\n")
    assert [e.seq for e in log.signed()] == ours
    assert log.signed("cancel")[-1].target == "job-1"
    fresh = AuditLog(tmp_path / "empty" / "audit.jsonl", log.keys)  # a log's first line, not a log's
    fresh.append("bob", "approve", "apr-1")
    with fresh.path.open("a", encoding="utf-8") as fh:
        fh.write(theirs[1] + "\n")
    assert [e.action for e in fresh.signed()] == ["approve"]


def test_an_edited_line_ends_the_chain_for_readers_until_the_next_append(tmp_path: Path) -> None:
    """Stopping at a break (not resuming on a later line that claims to follow) is what makes a
    forged or foreign line unable to take a place; an edit or a removal hides what followed it until
    the worker writes again (as removing those lines would: ``verify`` names the damage), and that
    append records an ``audit_break`` and chains on from the last entry kept."""
    log = _log(tmp_path)
    lines = log.path.read_text().splitlines()
    lines[2] = lines[2].replace('"who":"ana"', '"who":"bob"')  # the cancel, edited
    log.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [e.seq for e in log.signed()] == [1, 2]
    written = log.append("ana", "cancel", "job-1", {"proof": "ana"})
    assert [(e.seq, e.action) for e in log.signed()] == [
        (1, "approve"),
        (2, "reject"),
        (3, BREAK),
        (4, "cancel"),
    ]
    assert written == log.signed()[-1]
    assert any("truncated" in p.problem for p in log.verify())


def test_after_the_old_keys_are_retired_new_entries_count(tmp_path: Path) -> None:
    """``rotate-key --retire-old`` on a log not archived first: its lines no longer verify, so the
    chain starts again with what the new key signs (an ``audit_break`` first: the head was the old
    key's)."""
    log = _log(tmp_path)
    log.keys.rotate(retire_old=True)
    assert log.signed() == []
    log.append("ana", "approve", "apr-4")
    assert [(e.seq, e.action) for e in log.signed()] == [(1, BREAK), (2, "approve")]
    assert log.append("bob", "reject", "apr-5") == log.signed()[-1]


def test_appends_racing_after_junk_all_count_in_one_chain(tmp_path: Path) -> None:
    log = _log(tmp_path)
    copied = log.path.read_text().splitlines()[0]
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write(copied + "\n")
    start = threading.Barrier(2, timeout=WAIT)
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        mine = AuditLog(log.path, log.keys)  # a process of its own: its own lock file descriptor
        try:
            start.wait()
            for i in range(12):
                mine.append(name, "request", f"{name}-{i}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("w1", "w2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not errors and not any(t.is_alive() for t in threads)
    requests = log.signed("request")
    assert sorted(e.target for e in requests) == sorted(f"{n}-{i}" for n in ("w1", "w2") for i in range(12))
    assert [e.seq for e in log.signed()] == list(range(1, 5 + 24 + 1))
    assert {p.line for p in log.verify()} == {6, 7}  # the copy, and the first line written after it


def test_a_line_added_without_its_line_feed_swallows_no_later_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A genuine line copied to the end without its line feed: the next entry is written on a line
    of its own (never glued to it), so it counts, and the log goes on taking entries."""
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
    log = AuditLog(tmp_path / "approvals" / "audit.jsonl")
    log.append("ana", "approve", "apr-1", {"job_id": "job-1"})
    log.append("ana", "send", "apr-1", {"job_id": "job-1"})
    first = log.path.read_text().splitlines()[0]
    with log.path.open("a") as fh:  # someone who can write the file, not the key
        fh.write(first)
    log.append("bob", "cancel", "job-1", {"proof": "token"})
    assert [e.action for e in log.signed()] == ["approve", "send", "cancel"]
    log.append("ana", "approve", "apr-2", {"job_id": "job-2"})  # and the log goes on
    assert [e.seq for e in log.signed()] == [1, 2, 3, 4]
