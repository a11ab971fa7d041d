"""What someone who has proven nothing can write into the signed audit log, what the audit page
keeps in sight, and how long an open live stream outlives its session: over real HTTP against the
console served by uvicorn (the real job store on SQLite, the real signed audit log).

- A sign-in's name was written whole (200,000 characters: 5 MB in 25 attempts) and every attempt
  refused while held was one more ``login_refused`` entry: anyone who reached the port grew the log
  every process reads, and 510 refusals pushed a decision off the audit page (its newest 500). Now
  a name longer than any user's is kept cut with its length said (``web.unproven``; in the log, since
  s45, as an unknown name's marker: ``SignInLog.who``), a hold writes
  one entry when it starts and one with the count of the refusals after it once it has ended
  (``web.SignInLog``), and the page shows decisions and actions apart from sign-ins, a page at a
  time, saying how many of how many it shows.
- A live stream (``/jobs/<id>/live``) checked the session once, when it opened: a removed, reset or
  logged-out user's open stream kept sending the job's progress. Now every round of a stream is
  sent only while the session still counts (``Web.live``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fixtures_console import PASSWORDS
from test_adversarial_identity_seams import Office
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.console.auth import add_user
from taskcrew.console.security import LoginThrottle
from taskcrew.console.web import Console


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[Office]:
    made = Office(tmp_path, monkeypatch, console_users)
    yield made
    made.close()


def _console(office: Office) -> Console:
    inner: Any = office.server.server.config.app
    while not hasattr(inner, "state"):  # the app inside its middleware
        inner = inner.app
    console: Console = inner.state.console
    return console


def _fake_clock(office: Office) -> list[float]:
    """The console's login throttle on a clock the test moves (15-minute window)."""
    now = [0.0]
    _console(office).throttle = LoginThrottle(window=900.0, clock=lambda: now[0])
    return now


def _codes(office: Office, client: httpx.Client, names: list[str]) -> list[int]:
    return [office.sign_in(client, name, "wrong-guess").status_code for name in names]


# ---- 1. the audit log: what a stranger's sign-ins write ----------------------------------------


def test_a_name_longer_than_any_users_is_written_cut(office: Office) -> None:
    """25 sign-ins with a 200,000-character name: 5 failures, then refused while held; the log holds
    six short entries naming it as nobody's (s45: "(unknown name)", not its start). Before: 5 MB."""
    audit = office.authority.audit
    earlier, size = len(audit.entries()), audit.path.stat().st_size if audit.path.exists() else 0
    anonymous = office.client()
    codes = _codes(office, anonymous, ["x" * 200_000] * 25)
    assert codes == [401] * 5 + [429] * 20
    assert audit.path.stat().st_size - size < 8 * 1024
    added = audit.entries()[earlier:]
    assert [e.action for e in added] == ["login_failed"] * 5 + ["login_refused"]
    # nobody's name: written as "(unknown name)" (``SignInLog.who``; s45), not as typed
    assert {e.who for e in added} == {"(unknown name)"}
    assert all(len(e.who) <= 64 for e in added)  # no longer than the longest name a user can have
    assert office.login("bob")  # a real name from the same address still signs in
    assert audit.verify() == []


def test_refusals_while_held_are_one_entry_then_their_count(office: Office) -> None:
    """Held after 5 failures, 40 more attempts (the name in another case among them) write one
    ``login_refused``; once the hold has ended, the next sign-in writes one more with the count of
    those after the first. Many names from one held address are one hold too, and what is still
    counted when the console stops is written then. Before: one entry an attempt."""
    now = _fake_clock(office)
    audit = office.authority.audit
    earlier = len(audit.entries())
    client = office.client()
    assert _codes(office, client, ["carol"] * 5) == [401] * 5
    assert _codes(office, client, ["carol"] * 30 + ["CAROL "] * 10) == [429] * 40
    now[0] = 899.0
    assert _codes(office, client, ["carol"]) == [429]
    added = audit.entries()[earlier:]
    assert [e.action for e in added] == ["login_failed"] * 5 + ["login_refused"]
    first = added[-1].payload
    assert first["address"] == "127.0.0.1" and first["held_by"] == ["name+address"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", first["held_until"])
    now[0] = 900.5  # the hold has ended: the right password signs in
    assert office.sign_in(client, "carol", PASSWORDS["carol"]).status_code == 303
    added = audit.entries()[earlier:]
    assert [e.action for e in added][6:] == ["login_refused", "login"]
    summary = added[6]
    assert summary.who == "carol" and summary.payload["refused_again"] == 40
    assert summary.payload["first"] <= summary.payload["last"]

    # 20 failures from one address hold it for every name: 30 names more are one hold
    mark = len(audit.entries())
    assert _codes(office, client, [f"user{i}" for i in range(20)]) == [401] * 20
    assert _codes(office, client, [f"name{i}" for i in range(30)]) == [429] * 30
    refused = [e for e in audit.entries()[mark:] if e.action == "login_refused"]
    assert len(refused) == 1 and refused[0].payload["held_by"] == ["address"]
    office.restart()  # the console stops: the count of the refusals after the first is written
    last = audit.entries()[-1]
    assert last.action == "login_refused" and last.payload["refused_again"] == 29
    assert last.who == refused[0].who == "(unknown name)"  # name0 is nobody's
    assert audit.verify() == []


# ---- 2. the audit page: decisions apart from sign-ins, a page at a time ------------------------


def _table(page: str) -> str:
    return page.split('<table id="audit">', 1)[1].split("</table>", 1)[0]


def _rows(page: str) -> list[int]:
    """The entries' numbers the page shows, in its order."""
    return [int(n) for n in re.findall(r"<tr><td>(\d+)</td>", _table(page))]


def _text(page: str, element_id: str) -> str:
    part = page.split(f'id="{element_id}"', 1)[1].split(">", 1)[1].split("</p>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", "", part).split())


def test_the_audit_page_shows_decisions_apart_from_sign_ins(office: Office) -> None:
    """ana's approval is on the page a sign-in flood lands on; the refusals are under Sign-ins; the
    page says the whole chain was checked and how many entries of which kind it shows."""
    approval_id = office.park("bob", "450.00")
    ana = office.login("ana")
    assert office.decide(ana, approval_id).status_code == 303
    assert _codes(office, office.client(), ["nobody"] * 30) == [401] * 5 + [429] * 25
    entries = office.authority.audit.entries()
    sign_ins = [e for e in entries if e.action in ("login", "login_failed", "login_refused", "logout")]

    page = ana.get("/audit").text
    assert approval_id in _table(page) and "login_refused" not in _table(page)
    assert _text(page, "chain") == f"Hash chain intact: all {len(entries)} entries checked."
    shown = _text(page, "shown")
    assert shown.startswith(
        f"Showing all {len(entries) - len(sign_ins)} decisions and actions, newest first."
    )
    assert (
        f"{len(sign_ins)} sign-in entries (logins, logouts, failed and refused sign-ins) are under" in shown
    )

    page = ana.get("/audit?show=sign-ins").text
    assert approval_id not in _table(page)
    assert _table(page).count("login_refused") == 1 and _table(page).count("login_failed") == 5
    assert _rows(page) == sorted((e.seq for e in sign_ins), reverse=True)

    page = ana.get("/audit?show=all").text
    assert _rows(page) == [e.seq for e in reversed(entries)]
    assert ana.get("/audit?show=nonsense&before=x9").text.count("<tr><td>") == len(entries) - len(sign_ins)


def test_the_audit_page_pages_to_older_entries(office: Office) -> None:
    """1,050 entries more: the newest 500, then the 500 before them, then the rest, each page linked
    to the ones beside it. Before: the newest 500, and no way to older ones."""
    audit = office.authority.audit
    for i in range(1050):
        audit.append("ana", "submit", f"job-{i:04d}", {"task": f"task {i}"})
    carol = office.login("carol")
    seqs = [e.seq for e in reversed(audit.entries()) if e.action != "login"]  # newest first

    def page_at(href: str) -> tuple[list[int], dict[str, str]]:
        page = carol.get(href.replace("&amp;", "&")).text
        links = dict(re.findall(r'<a href="([^"]+)">(← Newer entries|Older entries →)</a>', page))
        return _rows(page), {words: href for href, words in links.items()}

    rows, links = page_at("/audit")
    assert rows == seqs[:500] and set(links) == {"Older entries →"}
    assert _text(carol.get("/audit").text, "shown").startswith(
        f"Showing the newest 500 of {len(seqs):,} decisions and actions, newest first."
    )
    rows, links = page_at(links["Older entries →"])
    assert rows == seqs[500:1000] and set(links) == {"← Newer entries", "Older entries →"}
    middle = links
    rows, links = page_at(links["Older entries →"])
    assert rows == seqs[1000:] and set(links) == {"← Newer entries"}
    assert page_at(links["← Newer entries"])[0] == seqs[500:1000]
    assert page_at(middle["← Newer entries"])[0] == seqs[:500]


# ---- 3. an open live stream ends with its session ------------------------------------------------


def _after(stream: httpx.Response, trigger: Callable[[], None]) -> list[str]:
    """The job's moves (ana's approval, the job queued again) the stream sends after ``trigger()``
    ran, once the first round (the whole history) arrived; ends at the first, or the stream's end."""
    seen: list[str] = []
    triggered = False
    for line in stream.iter_lines():
        if not triggered and line.startswith("data:") and "submitted" in line:
            trigger()
            triggered = True
        elif triggered and ("approval_approved" in line or '"status": "queued"' in line):
            seen.append(line)
            break
    assert triggered
    return seen


def _progress(office: Office, ana: httpx.Client, approval_id: str, job_id: str) -> None:
    assert office.decide(ana, approval_id).status_code == 303
    office.jobs.resume(job_id)


def _log_out(office: Office, client: httpx.Client) -> None:
    other_tab = office.moved(client)
    csrf = other_tab.get("/approvals").text.split('name="csrf" value="')[1].split('"')[0]
    assert other_tab.post("/logout", data={"csrf": csrf}, headers={"Origin": office.base}).status_code == 303


def _remove(office: Office, client: httpx.Client) -> None:
    done = CliRunner().invoke(app, ["console", "remove-user", "carol"])
    assert done.exit_code == 0, done.output


ENDINGS: dict[str, Callable[[Office, httpx.Client], None]] = {
    "removed": _remove,
    "password reset": lambda office, _: add_user(office.users, "carol", "carol-new-secret-2"),
    "logged out": _log_out,
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_an_open_live_stream_ends_with_its_session(office: Office, ending: str) -> None:
    """carol's stream of a job is open; she is removed, her password reset, or she logs out in
    another tab; the job moves on: her stream sends none of it and ends. Before: it kept sending."""
    approval_id = office.park("bob", "450.00")
    job_id = office.jobs.approval(approval_id).job_id
    carol, ana = office.login("carol"), office.login("ana")

    def end_then_progress() -> None:
        ENDINGS[ending](office, carol)
        assert carol.get(f"/jobs/{job_id}/live").status_code == 401  # a new stream is refused
        _progress(office, ana, approval_id, job_id)

    with carol.stream("GET", f"/jobs/{job_id}/live") as stream:
        assert stream.status_code == 200
        assert _after(stream, end_then_progress) == []


def test_a_live_stream_goes_on_while_its_session_counts(office: Office) -> None:
    """The same, with carol still signed in: her stream sends ana's approval."""
    approval_id = office.park("bob", "450.00")
    job_id = office.jobs.approval(approval_id).job_id
    carol, ana = office.login("carol"), office.login("ana")
    with carol.stream("GET", f"/jobs/{job_id}/live") as stream:
        assert len(_after(stream, lambda: _progress(office, ana, approval_id, job_id))) == 1
