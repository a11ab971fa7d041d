"""A failed sign-in's name is written to the signed audit log as typed only when it is a user's name;
any other is written as "(unknown name #…)" with a digest keyed by the audit log's signing key
(``web.SignInLog.who``), so one name's attempts are still told apart from another's. Over real HTTP
against the console served by uvicorn (the real job store on SQLite, the real signed audit log).

Before, the name was written as typed, and the audit page's Sign-ins showed it to every user: ana
typed her password into the Name box, and bob read it there."""

from __future__ import annotations

import hashlib
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
    first, again, nobody, carol = (e.who for e in added)
    assert first.startswith("(unknown name #") and first == again  # one name's attempts told apart
    assert nobody.startswith("(unknown name #") and nobody != first  # from another's
    assert carol == "carol"  # a user's name is kept as typed
    plain = hashlib.sha256(PASSWORDS["ana"].encode()).hexdigest()
    assert plain[:8] not in first  # keyed: a guess cannot be tested against the page
    assert audit.verify() == []

    page = office.login("bob").get("/audit?show=sign-ins")
    assert page.status_code == 200 and PASSWORDS["ana"] not in page.text
    assert html.escape(first) in page.text and ">carol<" in page.text


def test_a_held_unknown_name_is_not_written_either(office: Office) -> None:
    """5 failures put the name on hold; the refusal written then names it as the failures do."""
    audit = office.authority.audit
    earlier = len(audit.entries())
    client = office.client()
    codes = [office.sign_in(client, PASSWORDS["bob"], "bob").status_code for _ in range(6)]
    assert codes == [401] * 5 + [429]
    added = audit.entries()[earlier:]
    assert [e.action for e in added] == ["login_failed"] * 5 + ["login_refused"]
    assert len({e.who for e in added}) == 1 and added[0].who.startswith("(unknown name #")
    assert all(PASSWORDS["bob"] not in str(e.model_dump()) for e in added)
