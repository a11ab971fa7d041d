"""A failed sign-in's name is written to the signed audit log as typed only when it is a user's name;
any other is written as "(unknown name)", the same for every name (``web.SignInLog.who``). Over real
HTTP against the console served by uvicorn (the real job store on SQLite, the real signed audit log).

Before, the name was written as typed, and the audit page's Sign-ins showed it to every user: ana
typed her password into the Name box, and bob read it there. Then (s45, morning) it was written as
"(unknown name #…)", a digest keyed by the audit log's key: bob has no key, but the console computes
the marker for whatever anyone types, so bob typed his guesses of ana's password as names and the
right one wrote the marker ana's slip had written."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures_console import PASSWORDS
from test_adversarial_identity_seams import Office


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[Office]:
    made = Office(tmp_path, monkeypatch, console_users)
    yield made
    made.close()


def test_a_password_typed_as_the_name_is_not_written_or_shown(office: Office) -> None:
    audit = office.authority.audit
    earlier = len(audit.entries())
    slip = office.client()  # ana, at another browser: her password in Name, her name in Password
    assert [office.sign_in(slip, PASSWORDS["ana"], "ana").status_code for _ in range(2)] == [401, 401]
    assert office.sign_in(office.client(), "nobody", "guess").status_code == 401
    assert office.sign_in(office.client(), "carol", "wrong guess").status_code == 401  # a user's name

    added = [e for e in audit.entries()[earlier:] if e.action == "login_failed"]
    assert len(added) == 4 and all(PASSWORDS["ana"] not in e.who for e in added)
    assert [e.who for e in added] == ["(unknown name)"] * 3 + ["carol"]  # a user's name as typed
    assert audit.verify() == []

    page = office.login("bob").get("/audit?show=sign-ins")
    assert page.status_code == 200 and PASSWORDS["ana"] not in page.text
    assert html.escape("(unknown name)") in page.text and ">carol<" in page.text


def test_a_guess_typed_as_a_name_cannot_be_checked_against_the_page(office: Office) -> None:
    """ana's slip, then bob's guesses of her password typed as names from his own browsers, the right
    one among them: every entry reads the same, in the log and on the page, so the page confirms no
    guess. Before: the right guess wrote the marker her slip had written."""
    audit = office.authority.audit
    earlier = len(audit.entries())
    assert office.sign_in(office.client(), PASSWORDS["ana"], "ana").status_code == 401  # her slip
    for guess in ["Summer2026!", PASSWORDS["ana"], "hunter2-guess"]:
        assert office.sign_in(office.client(), guess, "x").status_code == 401
    slip, *guesses = (e.who for e in audit.entries()[earlier:] if e.action == "login_failed")
    assert len(guesses) == 3 and set(guesses) == {slip} == {"(unknown name)"}
    for e in audit.entries()[earlier:]:  # nothing else in an entry is derived from the name either
        assert e.payload == {} and PASSWORDS["ana"] not in str(e.model_dump())

    page = office.login("bob").get("/audit?show=sign-ins").text
    assert page.count(html.escape("(unknown name)")) == 4 and PASSWORDS["ana"] not in page


def test_a_held_unknown_name_is_not_written_either(office: Office) -> None:
    """5 failures put the name on hold; the refusal written then names it as the failures do."""
    audit = office.authority.audit
    earlier = len(audit.entries())
    client = office.client()
    codes = [office.sign_in(client, PASSWORDS["bob"], "bob").status_code for _ in range(6)]
    assert codes == [401] * 5 + [429]
    added = audit.entries()[earlier:]
    assert [e.action for e in added] == ["login_failed"] * 5 + ["login_refused"]
    assert {e.who for e in added} == {"(unknown name)"}
    assert all(PASSWORDS["bob"] not in str(e.model_dump()) for e in added)
