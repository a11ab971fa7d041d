"""A canary secret goes through the real browser and never comes back out in anything a model sees."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from fixtures_browser import RecordingSite, SessionFactory

from taskcrew.tools.browser import Click, Navigate, Observation, Press, Type, Wait
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.policy import PolicyDecision
from taskcrew.tools.vault import Vault

pytestmark = pytest.mark.browser

USER = "canary-user-7731"
PASSWORD = "Canary Pa55&9431!"


def idx(obs: Observation, name: str, role: str | None = None) -> int:
    found = [el.index for el in obs.elements if el.name == name and (role is None or el.role == role)]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def leaks(text: str) -> list[str]:
    forms = {USER, PASSWORD, quote(PASSWORD, safe=""), quote_plus(PASSWORD), "Pa55"}
    return [f for f in forms if f in text]


def test_canary_secret_never_appears(
    make_session: SessionFactory, site: RecordingSite, tmp_path: Path
) -> None:
    vault = Vault({"CANARY_USER": USER, "CANARY_PASS": PASSWORD})
    human = ScriptedHuman([ApprovalDecision.approve()])
    decisions: list[PolicyDecision] = []
    session = make_session(human=human, vault=vault, recorder=decisions)
    seen: list[str] = []

    def keep(result: object) -> None:
        seen.append(result.render())  # type: ignore[attr-defined]
        seen.append(result.model_dump_json())  # type: ignore[attr-defined]

    # 1. log in with placeholders (login is exempt from approval)
    login = session.goto(site.page("login.html"))
    keep(login)
    obs = login.observation
    typed = session.act(
        [
            Type(index=idx(obs, "Username"), text="{{secret:CANARY_USER}}"),
            Type(index=idx(obs, "Password"), text="{{secret:CANARY_PASS}}"),
        ]
    )
    keep(typed)
    fields = {el.name: el.field.value for el in typed.observation.elements if el.field}
    # a password field shows the same for the secret and for a guess (no redaction oracle)
    assert fields["Username"] == "{{secret:CANARY_USER}}" and fields["Password"] == "[filled, hidden]"
    keep(session.observe())
    signed_in = session.act([Click(index=idx(obs, "Sign in"))])
    keep(signed_in)
    assert signed_in.ok and signed_in.observation.title == "Welcome"
    assert ("username", USER) in site.posts()[0].fields and ("password", PASSWORD) in site.posts()[0].fields
    assert [d.kind for d in decisions].count("typing") == 2

    # 2. a data-changing form: the approval shows placeholders, the server gets the value
    form = session.goto(site.page("form.html")).observation
    saved = session.act(
        [
            Type(index=idx(form, "Customer"), text="{{secret:CANARY_USER}}"),
            Type(index=idx(form, "Note"), text="{{secret:CANARY_PASS}}"),
            Click(index=idx(form, "Save order")),
        ]
    )
    keep(saved)
    assert saved.ok, saved.render()
    shown = {f.name: f.value for f in human.requests[0].fields}
    assert shown["customer"] == "{{secret:CANARY_USER}}" and shown["note"] == "{{secret:CANARY_PASS}}"
    # a secret is a field's whole value: text around it (padding for a truncating echo) is refused
    again = session.goto(site.page("form.html")).observation
    padded = session.act([Type(index=idx(again, "Note"), text="pw={{secret:CANARY_PASS}}")])
    keep(padded)
    assert not padded.ok and "whole value" in padded.ran[0].message
    assert ("customer", USER) in site.posts()[1].fields

    # 3. the page echoes the secret in its text, URL and title
    form = session.goto(site.page("form.html")).observation
    echoed = session.act(
        [Type(index=idx(form, "Search", role="searchbox"), text="{{secret:CANARY_PASS}}", enter=True)]
    )
    keep(echoed)
    assert (
        "{{secret:CANARY_PASS}}" in echoed.observation.text
        and "{{secret:CANARY_PASS}}" in echoed.observation.url
    )
    session.run(lambda page: page.evaluate(f"document.title = 'Hello {USER}'"))
    shot = session.screenshot(tmp_path / "shot.png")
    seen.append(shot.model_dump_json())
    assert shot.title == "Hello {{secret:CANARY_USER}}"

    # 4. errors, dialogs and failures that would quote the secret are redacted too
    session.run(
        lambda page: page.evaluate(
            f"document.body.insertAdjacentHTML('beforeend', `<button onclick=\"alert('token {PASSWORD}')\">Alert</button>`)"
        )
    )
    alert_obs = session.observe()
    keep(alert_obs.model_copy())  # an Observation also has render()
    alerted = session.act(
        [Click(index=idx(alert_obs, "Alert")), Wait(seconds=0.1, for_text=f"{USER} is gone")]
    )
    keep(alerted)
    assert alerted.dialogs and "{{secret:CANARY_PASS}}" in alerted.dialogs[0]
    assert "{{secret:CANARY_USER}} is gone" in alerted.ran[1].message and not alerted.ran[1].ok
    unknown = session.act([Type(index=idx(alerted.observation, "Alert"), text="{{secret:NOPE}}")])
    keep(unknown)
    in_url = session.act([Navigate(url=site.url + "/echo?q={{secret:CANARY_PASS}}")])
    keep(in_url)
    assert not in_url.ok and "only be typed into fields" in in_url.ran[0].message
    enter = session.act([Press(key="Enter")])
    keep(enter)

    seen.extend(d.model_dump_json() for d in decisions)
    seen.extend(r.model_dump_json() for r in human.requests)
    for text in seen:
        assert not leaks(text), (leaks(text), text[:2000])
    human.assert_complete()
