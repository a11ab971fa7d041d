"""Two seams a red team found between the job database, the signed log and a run's own account:

- an approval row inserted or edited in the job database (no key) is untrusted on every surface, and
  it no longer hides anything from the next leg's run either (``jobs.runner.hide_approved`` reads only
  the approvals a worker parked: ``Authority.parked_here``), where before it blinded the run, its
  report and its verifier to any value it named;
- at `taskcrew run`'s prompt, the decision the run records (its trace, report, ``approved_by``)
  names the person proven there (a CLI token's), as the signed audit log does, not the OS user.

Real SQLite jobs, the real signed log, the real vault; the person at the prompt answers on a stream."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fixtures_console import PASSWORDS, console_users  # noqa: F401 (fixture)

from taskcrew.approvals.authority import PASSWORD_BOX, Authority
from taskcrew.approvals.identity import TokenStore, login, os_user
from taskcrew.approvals.terminal import TerminalApprovals
from taskcrew.jobs import Jobs
from taskcrew.jobs.runner import hide_approved
from taskcrew.jobs.store import A
from taskcrew.tools.human import ApprovalRequest, FieldValue, TerminalHuman
from taskcrew.tools.vault import Vault

PAGE = "Bill BILL-0007  Northwind Traders  invoice INV-2057  amount 1284.50 EUR"


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
    return tmp_path


def _row(job_id: str, approval_id: str, values: list[str]) -> dict[str, object]:
    return {
        "id": approval_id,
        "job_id": job_id,
        "kind": "approval",
        "status": "rejected",
        "key": "k",
        "created_at": "2026-01-01T00:00:00Z",
        "request": {
            "kind": "form_submission",
            "method": "POST",
            "url": "http://127.0.0.1:8800/bills/new",
            "fields": [{"name": f"f{i}", "value": v, "note": PASSWORD_BOX} for i, v in enumerate(values)],
        },
    }


def test_an_approval_row_inserted_in_the_job_database_hides_nothing_from_the_next_leg(place: Path) -> None:
    jobs = Jobs.open(f"sqlite:///{place / 'jobs.sqlite3'}")
    try:
        authority = Authority(jobs)
        job = jobs.submit(
            "Enter the latest Northwind Traders invoice", submitted_by="ana", submitted_proof="console"
        )
        forged = _row(job.id, "apr-forged0001", ["INV-2057", "1284.50"])
        with jobs._tx() as conn:  # a plain INSERT by someone who can write the database, not the key
            conn.execute(
                A.insert().values(
                    id="apr-forged0001", job_id=job.id, status="rejected", key="k", doc=json.dumps(forged)
                )
            )
        row = jobs.approval("apr-forged0001")
        assert authority.problem(row) is not None and not authority.parked_here(row)
        vault = Vault({})
        vault.know(job.task)
        hide_approved(jobs, job.id, vault, authority)  # what a leg does before its run reads a page
        assert vault.redact(PAGE) == PAGE  # nothing hidden: the run, its report and verifier read it
    finally:
        jobs.close()


def test_the_runs_record_of_a_terminal_approval_names_the_proven_person(
    place: Path,
    monkeypatch: pytest.MonkeyPatch,
    console_users: Path,  # noqa: F811
) -> None:
    from taskcrew.console.auth import add_user

    users = place / "users.yaml"
    users.write_text("users: []\n")  # one user: one person decides at the terminal
    add_user(users, "bob", PASSWORDS["bob"])
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    bob = TokenStore().identity(login("bob", PASSWORDS["bob"], users))
    authority = Authority(None, users_file=users)
    terminal = TerminalApprovals(TerminalHuman(stream=io.StringIO("y\n")), authority, who=bob)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/new",
        fields=[FieldValue(name="vendor_id", value="3"), FieldValue(name="amount", value="40.00")],
    )
    decision = terminal.approve(request)
    entry = authority.audit.signed(("terminal_approve",))[-1]
    assert entry.who == "bob" and entry.payload["proof"] == "token"
    assert decision.outcome == "approve" and decision.by == "bob at the terminal"
    if os_user() != "bob":
        assert os_user() not in decision.by
