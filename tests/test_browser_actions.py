"""act() in real Chromium: batching until the page changes, stale numbers, fast failure, navigation."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fixtures_browser import RecordingSite, SessionFactory

from taskcrew.tools.browser import (
    Back,
    BrowserConfig,
    BrowserError,
    BrowserRuntime,
    BrowserSession,
    Click,
    DismissModal,
    Navigate,
    Observation,
    Press,
    Select,
    SetChecked,
    Type,
    Wait,
)
from taskcrew.tools.browser.runtime import BrowserNotFoundError, plan_launch
from taskcrew.tools.human import ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig

pytestmark = pytest.mark.browser


def idx(obs: Observation, name: str, role: str | None = None) -> int:
    found = [el.index for el in obs.elements if el.name == name and (role is None or el.role == role)]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def test_batch_runs_until_the_page_changes(make_session: SessionFactory, site: RecordingSite) -> None:
    session = make_session()
    obs = session.goto(site.page("form.html")).observation
    result = session.act(
        [
            Type(index=idx(obs, "Customer"), text="ACME"),
            Type(index=idx(obs, "Amount"), text="1284.50"),
            Select(index=idx(obs, "Currency"), option="Euro"),
            SetChecked(action="check", index=idx(obs, "Urgent")),
            SetChecked(action="check", index=idx(obs, "Phone")),
            Click(index=idx(obs, "Next page")),
            Type(index=idx(obs, "Note"), text="never typed"),
        ]
    )
    assert [r.ok for r in result.ran] == [True] * 6
    assert [(s.action.action, s.reason) for s in result.skipped] == [("type", "page_changed")]
    assert result.change is not None and result.change.navigated
    assert result.observation.title == "Second page"
    rendered = result.render()
    assert "Skipped — the page changed" in rendered and "never typed" in rendered
    back = session.act([Back()])
    assert back.ok and back.observation.title == "New order"


def test_stale_numbers_are_refused(make_session: SessionFactory, site: RecordingSite) -> None:
    session = make_session()
    old = session.goto(site.page("form.html")).observation
    session.act([Navigate(url=site.page("nav2.html"))])
    result = session.act([Type(index=1, text="x")], observation_id=old.id)
    assert not result.ok and not result.ran
    assert [s.reason for s in result.skipped] == ["stale_observation"]
    assert f"observation #{old.id}" in result.errors[0]
    # the page changing behind the agent's back is caught by the DOM signature as well
    current = session.observe()
    session.run(
        lambda page: page.evaluate("document.body.insertAdjacentHTML('beforeend', '<button>New</button>')")
    )
    stale = session.act([Click(index=1)])
    assert not stale.ok and "changed since observation" in stale.errors[0]
    assert stale.observation.id > current.id and "New" in [e.name for e in stale.observation.elements]
    missing = session.act([Click(index=999)])
    assert not missing.ok and "no element [999]" in missing.ran[0].message


def test_occluded_click_fails_fast_and_dismiss_modal(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session = make_session()
    obs = session.goto(site.page("modal.html")).observation
    behind = idx(obs, "Delete nothing")
    result = session.act([Click(index=behind), Click(index=idx(obs, "Settings"))])
    assert not result.ok
    assert "covered by div#overlay" in result.ran[0].message and "dismiss_modal" in result.ran[0].message
    assert "timed out" not in result.ran[0].message  # refused before any Playwright wait
    assert [s.reason for s in result.skipped] == ["earlier_failure"]
    assert "clicked behind" not in result.observation.text
    dismissed = session.act([DismissModal()])
    assert dismissed.ok, dismissed.render()
    assert not dismissed.observation.obstacles
    clicked = session.act([Click(index=idx(dismissed.observation, "Delete nothing"))])
    assert clicked.ok and "clicked behind" in clicked.observation.text
    nothing = session.act([DismissModal()])
    assert not nothing.ok and "no blocking modal" in nothing.ran[0].message


def test_invalid_form_is_not_submitted(make_session: SessionFactory, site: RecordingSite) -> None:
    session = make_session(human=ScriptedHuman())  # would fail if it were asked
    obs = session.goto(site.page("form.html")).observation
    result = session.act([Click(index=idx(obs, "Save order"))])
    assert not result.ok
    assert "invalid fields" in result.ran[0].message and "Customer" in result.ran[0].message
    assert not site.posts()


def test_enter_submits_a_get_form_and_wait_for_text(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session = make_session()
    obs = session.goto(site.page("form.html")).observation
    result = session.act([Type(index=idx(obs, "Search", role="searchbox"), text="north wind", enter=True)])
    assert result.ok, result.render()
    assert result.observation.title == "Echo" and "q = north wind" in result.observation.text
    assert result.http_status == 200
    waited = session.act([Wait(seconds=2, for_text="You sent")])
    assert waited.ok
    missing = session.act([Wait(seconds=0.2, for_text="never there")])
    assert not missing.ok and "did not appear" in missing.ran[0].message


def test_press_enter_on_focused_field(make_session: SessionFactory, site: RecordingSite) -> None:
    session = make_session()
    obs = session.goto(site.page("form.html")).observation
    search = idx(obs, "Search", role="searchbox")
    result = session.act([Type(index=search, text="globex"), Press(key="Enter")])
    assert result.ok and "q = globex" in result.observation.text


def test_http_errors_and_bad_options_come_back_as_text(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session = make_session()
    result = session.goto(f"{site.url}/status/503")
    assert not result.ok and result.http_status == 503
    assert any("HTTP 503" in e for e in result.errors)
    assert "Error 503" in result.observation.text
    obs = session.goto(site.page("form.html")).observation
    bad = session.act([Select(index=idx(obs, "Currency"), option="Yen")])
    assert not bad.ok and "'Euro'" in bad.ran[0].message
    wrong = session.act([Type(index=idx(obs, "Currency"), text="EUR")])
    assert not wrong.ok and "drop-down" in wrong.ran[0].message
    radio = session.act([SetChecked(action="uncheck", index=idx(obs, "Mail"))])
    assert radio.ok and radio.ran[0].message == "already unchecked"


def test_screenshot_and_calls_from_many_threads(
    make_session: SessionFactory, site: RecordingSite, tmp_path: Path
) -> None:
    session = make_session()
    session.goto(site.page("form.html"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        observations = list(pool.map(lambda _: session.observe(), range(8)))
    assert {o.title for o in observations} == {"New order"}
    assert len({o.id for o in observations}) == 8
    shot = session.screenshot(tmp_path / "evidence" / "form.png")
    assert Path(shot.path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.title == "New order"


def test_session_lifecycle_and_owned_runtime(site: RecordingSite) -> None:
    policy = Policy(PolicyConfig.for_url(site.url), ScriptedHuman())
    session = BrowserSession(policy=policy)
    with pytest.raises(BrowserError, match="not started"):
        session.observe()
    with session:
        assert session.goto(site.page("nav2.html")).observation.title == "Second page"
    with pytest.raises(BrowserError):
        session.observe()


def test_chromium_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKCREW_CHROMIUM", raising=False)
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    plan = plan_launch(BrowserConfig(executable_path=fake), playwright_build=True)
    assert plan.source == "configured" and "--no-sandbox" in plan.args
    monkeypatch.setenv("TASKCREW_CHROMIUM", str(fake))
    assert plan_launch(BrowserConfig(), playwright_build=True).source == "configured"
    monkeypatch.delenv("TASKCREW_CHROMIUM")
    assert plan_launch(BrowserConfig(), playwright_build=True).source == "playwright"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BrowserNotFoundError, match="playwright install chromium"):
        plan_launch(BrowserConfig(), playwright_build=False)
    with pytest.raises(BrowserNotFoundError, match="does not exist"):
        plan_launch(BrowserConfig(executable_path=tmp_path / "nope"), playwright_build=True)


def test_runtime_reports_a_missing_browser(tmp_path: Path) -> None:
    runtime = BrowserRuntime(BrowserConfig(executable_path=tmp_path / "no-chromium"))
    with pytest.raises(BrowserNotFoundError, match="does not exist"):
        runtime.start()
    assert not runtime.running
