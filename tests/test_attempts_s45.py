"""Is a stored attempt an earlier attempt of this request? One rule, by content (``approvals.key.
earlier_attempt``; red team rt_attempts9).

1. A leg sent a bill whose form carries a per-page ``form_ts`` beside the ``csrf_token`` the rules
   leave out; no answer came. The operator then added ``form_ts`` to the rule. The next leg (a new
   token, a new timestamp) did not find the row or the signed send, and sent the payment again as a
   first attempt: the old lookup only tried guessed sets of left-out fields, never the row's own. Now
   a row records the fields left out of its key (``IntentRecord.excluded``) and a row is this
   request's when every value that differs is left out by that set or by today's rules.
2. A job saved bill A (Freight 100.00, Pallets 900.00, its fields already in name order); the
   correction B pairs the amounts the other way. B's legacy (sorted) key is today's key of A, so A's
   row — and A's signed send — were taken for an earlier attempt of B, and B was never sent. Now a row
   found under any key but today's counts only when what it stored is this request in today's order,
   and a signed send a row accounts for is that row's.

Real job database and signed audit log; no model is involved."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_key_covers_s45 import _rules, _store

from taskcrew.approvals.authority import Authority
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import StoreIntents
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.readback import ReadBackRules

RULE = "fields: ['csrf_token']"
NEW = "http://127.0.0.1:8800/bills/new"
BILL = [("vendor_id", "3"), ("invoice_number", "INV-7"), ("amount", "900.00"), ("currency", "USD")]


def _widen(rules: Path) -> None:
    """The operator adds the form's per-page timestamp to the rule (an ordinary edit, read live)."""
    text = rules.read_text(encoding="utf-8")
    assert RULE in text
    rules.write_text(text.replace(RULE, "fields: ['csrf_token', 'form_ts']"), encoding="utf-8")


def _log(jobs: Jobs, authority: Authority, job_id: str, **hooks: object) -> IntentLog:
    return IntentLog(StoreIntents(jobs, job_id, authority), job_id, ReadBackRules(), **hooks)  # type: ignore[arg-type]


@pytest.mark.parametrize("row_kept", [True, False], ids=["row-kept", "row-deleted"])
def test_a_send_in_doubt_is_found_after_the_operator_adds_a_field_to_the_exclusions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path, row_kept: bool
) -> None:
    rules = _rules(tmp_path, monkeypatch)
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False, options=JobOptions(auto_approve=True))
    sent = [("csrf_token", "tok-leg0"), *BILL, ("form_ts", "1765085000")]
    leg0 = _log(
        jobs,
        authority,
        job.id,
        leaving=lambda m, u, f: authority.record_send(job.id, authority.key_of(m, u, f), m, u, job.id),
    )
    assert leg0.before_send("POST", NEW, sent, lambda at: None) is None  # recorded, signed, sent: no answer
    (row,) = StoreIntents(jobs, job.id, authority).records()
    recorded = getattr(row, "excluded", None)  # the row records what its key left out (below)
    if not row_kept:  # its row deleted: only the signed send is left
        with sqlite3.connect(tmp_path / "jobs.sqlite3") as db:
            db.execute("DELETE FROM taskcrew_intents WHERE job_id = ?", (job.id,))
    _widen(rules)

    now = [("csrf_token", "tok-leg1"), *BILL, ("form_ts", "1765085412")]  # the page again, next leg
    said = _log(jobs, authority, job.id).before_send("POST", NEW, now, lambda at: None)
    # row kept: found by what it stored; deleted: the signed send (no fields stored) kept the old
    # timestamp in its key, which nobody can compare now, so it counts for its method and address
    assert said is not None and "NOT sent again" in said, "sent again as a first attempt"
    assert len(authority.sends_of(job.id)) == 1
    assert recorded == ["csrf_token"]
    jobs.close()


def test_a_new_bill_differing_in_a_value_no_rule_leaves_out_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    rules = _rules(tmp_path, monkeypatch)
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7 and INV-8", submitted_by="ana", enqueue=False)
    log = _log(
        jobs,
        authority,
        job.id,
        leaving=lambda m, u, f: authority.record_send(job.id, authority.key_of(m, u, f), m, u, job.id),
    )
    sent = [("csrf_token", "tok-0"), *BILL, ("form_ts", "1765085000")]
    assert log.before_send("POST", NEW, sent, lambda at: None) is None  # no answer
    _widen(rules)
    other = [("csrf_token", "tok-1"), *BILL[:1], ("invoice_number", "INV-8"), *BILL[2:], ("form_ts", "1")]
    # INV-7's signed send is its row's (the row stored another bill), not a send of INV-8
    assert _log(jobs, authority, job.id).before_send("POST", NEW, other, lambda at: None) is None
    jobs.close()


EDIT = "http://127.0.0.1:8800/bills/7/edit"
HEAD = [("currency", "USD"), ("invoice_number", "INV-7")]
A = [*HEAD, ("line_amount", "100.00"), ("line_amount", "900.00"),
     ("line_description", "Freight"), ("line_description", "Pallets"), ("vendor_id", "3")]  # fmt: skip
B = [*HEAD, ("line_amount", "900.00"), ("line_amount", "100.00"),
     ("line_description", "Freight"), ("line_description", "Pallets"), ("vendor_id", "3")]  # fmt: skip


def test_a_correction_pairing_the_lines_otherwise_is_sent_though_its_legacy_key_is_the_saved_bills(
    tmp_path: Path, isolated_home: Path
) -> None:
    assert sorted(A) == A and B != A  # B's legacy (sorted) key is today's key of A
    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7 and correct its lines", submitted_by="ana", enqueue=False)
    log = _log(
        jobs,
        authority,
        job.id,
        leaving=lambda m, u, f: authority.record_send(job.id, authority.key_of(m, u, f), m, u, job.id),
    )
    assert log.before_send("POST", EDIT, A, lambda at: None) is None
    log.after_send("POST", EDIT, A, SendOutcome(http_status=200, seen="saved"))
    said = log.before_send("POST", EDIT, B, lambda at: None)  # A's row and A's signed send are A's
    assert said is None, said
    log.after_send("POST", EDIT, B, SendOutcome(http_status=200, seen="saved"))
    again = log.before_send("POST", EDIT, B, lambda at: None)  # B itself once more: a repeat
    assert again is not None and "NOT sent again" in again
    assert len(authority.sends_of(job.id)) == 2
    jobs.close()


def test_a_pre_upgrade_row_found_by_its_legacy_key_counts_when_it_stored_this_request(
    tmp_path: Path, isolated_home: Path
) -> None:
    """The true pre-upgrade send in doubt (stored in the page's order, keyed sorted) is still found."""
    from taskcrew.approvals.key import LEGACY, request_key
    from taskcrew.tools.intents import IntentRecord

    jobs = _store(tmp_path)
    authority = Authority(jobs)
    job = jobs.submit("Enter INV-7", submitted_by="ana", enqueue=False)
    old = request_key("POST", EDIT, B, scope=job.id, version=LEGACY, excluded=["csrf_token"])
    record = IntentRecord(key=old, method="POST", url=EDIT, fields=B)  # no answer; no recorded set
    assert StoreIntents(jobs, job.id, authority).claim(record) is None
    said = _log(jobs, authority, job.id).before_send("POST", EDIT, B, lambda at: None)
    assert said is not None and "NOT sent again" in said
    jobs.close()
