"""The console's audit page as an investigator reads it after someone wrote into the log: a line
that is not an entry of the signed chain (a genuine approval copied to the end, a forged one with
any number) is shown where it stands and marked as proving nothing, and paging neither skips nor
repeats a line for the numbers such lines carry."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_adversarial_identity_seams import Office
from test_console_limits_s43 import _table

MARK = "not in the signed chain — proves nothing"


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[Office]:
    made = Office(tmp_path, monkeypatch, console_users)
    yield made
    made.close()


def _marked(page: str) -> list[tuple[int, bool]]:
    """Each row's number, and whether it is marked as not in the chain, in the page's order."""
    rows = re.findall(r"<tr( class=\"unchained\")?><td>(\d+)</td>(.*?)</tr>", _table(page), re.S)
    for unchained, _, cells in rows:
        assert bool(unchained) == (MARK in cells)
    return [(int(seq), not unchained) for unchained, seq, _ in rows]


def test_a_copied_approval_and_a_forged_line_are_marked_where_they_stand(office: Office) -> None:
    approval_id = office.park("bob", "450.00")
    ana = office.login("ana")
    assert office.decide(ana, approval_id).status_code == 303
    audit = office.authority.audit
    lines = audit.path.read_text(encoding="utf-8").splitlines()
    approval = next(line for line in lines if approval_id in line and '"approve' in line)
    forged = {**json.loads(approval), "seq": 999_999, "who": "carol", "target": "approval-forged"}
    with audit.path.open("a", encoding="utf-8") as f:
        f.write(approval + "\n" + json.dumps(forged) + "\n")

    page = ana.get("/audit?show=all").text
    assert "The hash chain is broken" in page
    rows = _marked(page)
    genuine = [e.seq for e in audit.signed()]
    assert rows[:2] == [(999_999, False), (json.loads(approval)["seq"], False)]  # newest first
    assert [seq for seq, in_chain in rows if in_chain] == list(reversed(genuine))
    assert sum(1 for _, in_chain in rows if not in_chain) == 2
    assert "approval-forged" in _table(page)  # shown, not hidden: an investigator sees what was written


def test_pages_follow_the_lines_place_not_the_numbers_they_carry(office: Office) -> None:
    """A forged line in the middle carries the largest number: before, it sent paging back to the
    newest page (or skipped entries); now each line is on exactly one page, in the order written."""
    audit = office.authority.audit
    for i in range(700):
        audit.append("ana", "submit", f"job-{i:04d}", {"task": f"task {i}"})
    lines = audit.path.read_text(encoding="utf-8").splitlines()
    forged = {**json.loads(lines[-1]), "seq": 10**9, "target": "job-forged"}
    with audit.path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(forged) + "\n")
    for i in range(700, 1100):
        audit.append("ana", "submit", f"job-{i:04d}", {"task": f"task {i}"})
    carol = office.login("carol")
    written = [(e.seq, in_chain) for e, in_chain in audit.checked() if e.action != "login"]

    seen: list[tuple[int, bool]] = []
    href: str | None = "/audit"
    while href is not None:
        page = carol.get(href.replace("&amp;", "&")).text
        seen += _marked(page)
        older = re.search(r'<a href="([^"]+)">Older entries →</a>', page)
        href = older.group(1) if older else None
        assert len(seen) <= len(written)
    assert seen == list(reversed(written))
    assert (10**9, False) in seen
