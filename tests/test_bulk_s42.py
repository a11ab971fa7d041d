"""Bulk approval is all or nothing, judged item by item by the verdict ``decide`` obeys
(``Authority.approve_verdict``), after the approvals past their deadline are expired; when an item is
still refused as it is decided (a race), the approver is told which were approved and which not. And
people are compared only through ``identity.same_person`` (a routine's author in another case of her
name may not accept it)."""

from __future__ import annotations

import ast
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import ConsoleEnv, flash, follow
from test_approvals import _request, env  # noqa: F401
from test_console_web import _unflagged
from test_routines import INBOX, _routine, _template
from test_routines_acceptance_redteam import office  # noqa: F401

import taskcrew
from taskcrew.approvals.identity import Identity
from taskcrew.console.auth import add_user, remove_user
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.routines.store import RoutineRefused, RoutineStore, fingerprint
from taskcrew.tools.files import SandboxFiles

BOB = Identity(name="bob", proof="token")


def _park(jobs: Jobs, amount: str, expires_in: timedelta | None = None) -> str:
    job = jobs.submit("Enter the Northwind invoice into the ERP", submitted_by="ana", submitted_proof="token")
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job.id, expires_in=expires_in).approve(_request(amount=amount))
    jobs.mark(job.id, "waiting", only_if=("running",))
    return parked.value.approval_id


@contextmanager
def _db(jobs: Jobs) -> Iterator[sqlite3.Connection]:
    """The job database, written as another process would (committed, closed)."""
    db = sqlite3.connect(jobs.url.removeprefix("sqlite:///"))
    try:
        with db:
            yield db
    finally:
        db.close()


def _expire_when_approved(jobs: Jobs, approved: str, expired: str) -> None:
    """A race, made certain: the moment ``approved`` is approved, ``expired`` expires (as another
    process's ``expire_due`` would write it), after bulk approval judged every item in time."""
    with _db(jobs) as db:
        db.execute(
            f"CREATE TRIGGER race AFTER UPDATE OF status ON taskcrew_approvals "
            f"WHEN NEW.id = '{approved}' AND NEW.status = 'approved' BEGIN "
            f"UPDATE taskcrew_approvals SET status = 'expired', doc = json_set(doc, '$.status', 'expired') "
            f"WHERE id = '{expired}'; END"
        )


def test_a_bulk_approval_with_an_item_past_its_deadline_approves_nothing(env: dict[str, Any]) -> None:  # noqa: F811
    jobs, authority = env["jobs"], env["authority"]
    fine = _park(jobs, "99.00")
    late = _park(jobs, "98.00", expires_in=timedelta(seconds=-60))  # its row still reads pending
    assert jobs.approval(late).status == "pending"
    (refused,) = authority.bulk_approve([fine, late], BOB)
    assert refused.status == "refused"
    assert f"{late} (Refused: the approval {late} expired unanswered" in refused.message, refused.message
    assert "Nothing was approved" in refused.message
    assert jobs.approval(fine).status == "pending" and jobs.approval(late).status == "expired"


def test_a_bulk_approval_with_a_forged_job_submission_approves_nothing(env: dict[str, Any]) -> None:  # noqa: F811
    jobs, authority = env["jobs"], env["authority"]
    fine, forged = _park(jobs, "99.00"), _park(jobs, "98.00")
    job_id = jobs.approval(forged).job_id
    with _db(jobs) as db:  # its submitter edited in the job database
        (doc,) = db.execute("SELECT doc FROM taskcrew_jobs WHERE id = ?", (job_id,)).fetchone()
        edited = json.dumps(json.loads(doc) | {"submitted_by": "carol"})
        db.execute("UPDATE taskcrew_jobs SET doc = ? WHERE id = ?", (edited, job_id))
    assert not authority.submission_ok(jobs.get(job_id))
    (refused,) = authority.bulk_approve([fine, forged], BOB)
    assert refused.status == "refused"
    assert f"{forged} (Refused: the job's submission is not signed by the authority" in refused.message
    assert {jobs.approval(fine).status, jobs.approval(forged).status} == {"pending"}
    # one item alone is judged by the same verdict, as before
    assert authority.decide(forged, "approve", BOB).status == "refused"
    assert authority.decide(fine, "approve", BOB).status == "decided"


def test_a_bulk_approval_refused_part_way_says_which_items_were_approved(env: dict[str, Any]) -> None:  # noqa: F811
    jobs, authority = env["jobs"], env["authority"]
    first, second, third = _park(jobs, "97.00"), _park(jobs, "98.00"), _park(jobs, "99.00")
    _expire_when_approved(jobs, first, second)
    results = authority.bulk_approve([first, second, third], BOB)
    assert [r.status for r in results] == ["decided", "refused", "refused"]
    assert [jobs.approval(a).status for a in (first, second, third)] == ["approved", "expired", "pending"]
    said = authority.bulk_partial(results)
    assert said is not None and said.startswith("Bulk approval stopped part-way: 1 of 3 approved.")
    assert f"Approval {first} approved; the job resumes." in said
    assert f"Not approved: {second} (Refused: the approval {second} expired unanswered" in said
    assert f"{third} (not decided: the bulk approval stopped at {second})" in said
    assert f"cancel its job ({jobs.approval(first).job_id})" in said
    assert authority.bulk_partial(authority.bulk_approve([first, third], BOB)) is None  # refused whole


def test_the_console_says_what_a_bulk_approval_stopped_part_way_approved(console_env: ConsoleEnv) -> None:
    jobs = console_env.jobs
    first, second = _unflagged(jobs, "10.00"), _unflagged(jobs, "11.00")
    _expire_when_approved(jobs, first.id, second.id)
    page = console_env.page_as("bob")
    page.goto(f"{console_env.url}/approvals")
    for approval in (first, second):
        page.get_by_label(f"Select {approval.id} for bulk approval").check()
    follow(page, page.get_by_role("button", name="Approve selected").last)
    said = flash(page)
    assert jobs.approval(first.id).status == "approved"
    assert said.startswith("Bulk approval stopped part-way: 1 of 2 approved."), said
    assert f"Approval {first.id} approved" in said and f"Not approved: {second.id} (Refused:" in said
    assert "error" in (page.locator(".flash").first.get_attribute("class") or "")


def test_a_routines_author_may_not_accept_it_under_another_case_of_her_name(office: Path) -> None:  # noqa: F811
    users = office / "users.yaml"
    remove_user(users, "mallory")
    add_user(users, "Mallory", "mallory-secret-1")
    store = RoutineStore()
    northwind = _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")
    draft, _ = store.propose(_routine(northwind), author=Identity(name="Mallory", proof="token"))
    remove_user(users, "Mallory")  # her login re-created in lower case: the same person
    add_user(users, "mallory", "mallory-secret-2")
    mallory = Identity(name="mallory", proof="token")
    with pytest.raises(RoutineRefused, match=r"mallory wrote enter-invoice v1, .* someone else accepts it"):
        store.accept("enter-invoice", draft.version, mallory, reviewed=fingerprint(draft))
    accepted = store.accept(
        "enter-invoice", draft.version, Identity(name="bob", proof="token"), reviewed=fingerprint(draft)
    )
    assert accepted.status == "accepted"


# what names a person where the packages that decide who may act compare people
PEOPLE = {
    "who",
    "person",
    "submitter",
    "author",
    "approver",
    "reviewer",
    "accepter",
    "decider",
    "first_approvers",
    "submitted_by",
    "decided_by",
    "reviewed_by",
    "proposed_by",
    "cancelled_by",
}
# a raw comparison that is meant to be exact: a record checked against the signed log's copy of it
EXACT = {("knowledge/facts.py", "row.decided_by != latest.decided_by")}


def _names_person(node: ast.expr) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_person(e) for e in node.elts)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name in PEOPLE


def _constant(node: ast.expr) -> bool:  # None, a literal, a sentinel such as UNPROVEN_SUBMITTER
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_constant(e) for e in node.elts)
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Name) and node.id.isupper())


def test_people_are_compared_only_through_same_person() -> None:
    """No ``==``, ``!=``, ``in`` or ``not in`` between two names of people in the packages that decide
    who may act (``identity.same_person`` folds case: "Mallory" and "mallory" are one person)."""
    root = Path(taskcrew.__file__).parent
    raw = []
    for package in ("approvals", "routines", "knowledge", "jobs"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Compare):
                    continue
                operands = [node.left, *node.comparators]
                for op, a, b in zip(node.ops, operands, operands[1:], strict=False):
                    if (
                        not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                        or _constant(a)
                        or _constant(b)
                    ):
                        continue
                    where = (path.relative_to(root).as_posix(), ast.unparse(node))
                    if (_names_person(a) or _names_person(b)) and where not in EXACT:
                        raw.append(f"{where[0]}:{node.lineno}: {where[1]}")
    assert not raw, f"people compared by their raw names (use identity.same_person): {raw}"
