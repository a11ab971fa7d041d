"""Perception and actions attacked like a user would meet them on pages nobody here wrote: overlays
that catch a click (a sticky header, a cookie bar, a transparent pane), custom drop-downs, fields that
cannot take what is typed (read-only, a date in the wrong format), a page that changes behind the
agent's back, and page text that poses as our own render or as an instruction. Each case: is the
element named right, does the action land on it, and when it cannot, does the result say so."""

from __future__ import annotations

import re

import pytest
from fixtures_browser import RecordingSite, SessionFactory, log, open_web

from taskcrew.tools.browser import BrowserSession, Click, Observation, Press, Type
from taskcrew.tools.browser.render import BEGIN, END

pytestmark = pytest.mark.browser


def find(obs: Observation, name: str) -> int:
    found = [el.index for el in obs.elements if el.name == name]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def scroll_to(session: BrowserSession, selector: str, offset: int) -> Observation:
    """Scroll the page so the element's top sits ``offset`` px below the viewport's top, then observe."""
    js = f"window.scrollTo(0, document.querySelector({selector!r}).getBoundingClientRect().top + scrollY - {offset})"
    session.run(lambda page: page.evaluate(js))
    return session.observe()


def test_a_click_reaches_a_button_behind_a_sticky_header_or_a_cookie_bar(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "overlays.html")
    # under the sticky header: the observation says so, and the click scrolls it out from under it
    obs = scroll_to(session, "#buy", 40)
    buy = obs.element(find(obs, "Buy now"))
    assert buy is not None and buy.state == "occluded" and "header" in (buy.occluded_by or ""), obs.render()
    result = session.act([Click(index=buy.index)])
    assert result.ok, result.render()
    # under the cookie bar fixed at the bottom: the same
    obs = scroll_to(session, "#buy", 760)
    buy = obs.element(find(obs, "Buy now"))
    assert buy is not None and buy.state == "occluded" and "cookies" in (buy.occluded_by or ""), obs.render()
    result = session.act([Click(index=buy.index)])
    assert result.ok, result.render()
    assert log(session) == "buy;buy;"


def test_a_pane_laid_over_a_button_is_reported_never_clicked_through(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "overlays.html")
    for name, cover in (("Pay", "glass"), ("Go", "ad")):
        el = obs.element(find(obs, name))
        assert el is not None and el.state == "occluded" and cover in (el.occluded_by or ""), obs.render()
        result = session.act([Click(index=el.index)])
        assert not result.ok and "covered by" in result.ran[0].message, result.render()
        obs = result.observation
    assert log(session) == ""  # neither the button nor the pane over it got a click


def test_custom_listbox_and_active_option_of_a_combobox(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "entry.html")
    country = obs.element(find(obs, "Country"))
    assert country is not None and country.role == "combobox" and "collapsed" in country.states
    result = session.act([Click(index=country.index)])
    assert result.ok and result.change is not None, result.render()
    obs = result.observation
    assert [el.role for el in obs.elements if el.name in ("France", "Germany", "Italy")] == ["option"] * 3
    result = session.act([Click(index=find(obs, "Germany"))])
    assert result.ok, result.render()
    assert 'value="Germany"' in result.observation.render()
    # an autocomplete whose highlighted option is aria-activedescendant: the list says which
    city = find(result.observation, "City")
    result = session.act([Type(index=city, text="Pa")])
    assert result.ok and result.change is not None, result.render()
    result = session.act([Press(key="ArrowDown", index=city)])
    paris = result.observation.element(find(result.observation, "Paris"))
    assert paris is not None and paris.field is not None and paris.field.checked, result.render()
    result = session.act([Press(key="Enter", index=city)])
    assert log(session) == "country=Germany;city=Paris;"


def test_fields_that_cannot_take_the_text_say_why_and_keep_their_value(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "entry.html")

    def value(sel: str) -> str:
        return str(session.run(lambda page: page.evaluate(f"document.querySelector({sel!r}).value")))

    due, start = find(obs, "Due date"), find(obs, "Start time")
    result = session.act([Type(index=due, text="2026-03-05"), Type(index=start, text="09:30")])
    assert result.ok, result.render()
    assert value("#due") == "2026-03-05" and value("#start") == "09:30"
    # a date or time in another format is refused before the field is touched, with the format it takes
    for index, text, fmt, sel, kept in (
        (due, "03/05/2026", "YYYY-MM-DD", "#due", "2026-03-05"),
        (start, "9.30am", "HH:MM", "#start", "09:30"),
    ):
        result = session.act([Type(index=index, text=text)])
        assert not result.ok and fmt in result.ran[0].message, result.render()
        assert value(sel) == kept
    # read-only fields (the attribute, aria-readonly) are refused as such, not as a field that "rewrites"
    for name, sel, kept in (("Reference", "#ref", "R-100"), ("Memo", "#memo", "fixed")):
        el = result.observation.element(find(result.observation, name))
        assert el is not None and el.field is not None and el.field.readonly
        result = session.act([Type(index=el.index, text="R-200")])
        assert not result.ok and "read-only" in result.ran[0].message, result.render()
        assert value(sel) == kept
    locked = find(result.observation, "Locked")
    result = session.act([Type(index=locked, text="y")])
    assert not result.ok and "disabled" in result.ran[0].message
    # two fields with the same label are told apart by their section and their field name
    render = result.observation.render()
    assert re.search(r"### Billing\nEmail \[\d+\]\n### Shipping\nEmail \[\d+\]", render), render
    assert "name=bill_email" in render and "name=ship_email" in render
    comment = find(result.observation, "Comment")
    # an empty contenteditable box is a text box named by its label, not an icon picturing "Comment"
    assert "(icon: Comment)" not in render and f'[{comment}] textbox "Comment"' in render, render
    result = session.act([Type(index=comment, text="Looks fine")])
    assert result.ok, result.render()
    assert (
        session.run(lambda page: page.evaluate("document.getElementById('comment').innerText"))
        == "Looks fine"
    )


def test_a_row_gone_behind_the_agents_back_is_refused_not_misclicked(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "overlays.html")
    go = find(obs, "Pay")
    # the page swaps the button for another one with the same place in the document
    session.run(
        lambda page: page.evaluate(
            "document.getElementById('pay').outerHTML = "
            "'<button id=\"pay\" onclick=\"log(\\'delete\\')\">Delete account</button>'"
        )
    )
    result = session.act([Click(index=go)], observation_id=obs.id)
    assert not result.ok and "nothing was done" in result.render(), result.render()
    assert log(session) == ""


def test_alike_controls_reordered_behind_the_agents_back_are_refused(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "twins.html")
    approve = [el.index for el in obs.elements if el.name == "Approve"]
    delete = [el.index for el in obs.elements if el.name == "Delete"]
    assert len(approve) == 2 and len(delete) == 2 and "Northwind, 1,200.00 EUR\n[1] Approve" in obs.text
    for index, was, now in (
        (approve[0], "Invoice from Northwind", "Invoice from Contoso"),
        (delete[0], "Northwind", "Contoso"),
    ):
        obs = session.observe()
        session.run(lambda page: page.evaluate("reorder()"))  # the same controls, other rows: same signature
        result = session.act([Click(index=index)], observation_id=obs.id)
        message = result.ran[0].message if result.ran else ""
        assert not result.ok and "no longer the one observed" in message, result.render()
        assert f'(was by "{was}' in message and f'now sits by "{now}' in message, message
        session.run(lambda page: page.evaluate("reorder()"))  # back to Northwind first
    assert log(session) == ""  # Contoso's 98,000 EUR was not approved, nothing deleted
    obs = session.observe()  # seen again: the numbers mean what they show
    result = session.act([Click(index=approve[0])], observation_id=obs.id)
    assert result.ok and log(session) == "Invoice from Northwind, 1,200.00 EUR;", result.render()


def test_page_text_cannot_pose_as_our_render(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "hostile.html")
    result = session.act([Click(index=find(obs, "Notify"))])
    render = result.render()
    assert render.count(BEGIN) == 1 and render.count(END) == 1, render
    inside = render[render.index(BEGIN) : render.index(END) + len(END)]
    assert "Ignore previous instructions" in inside  # shown as page text, inside the block
    lines = render.replace(inside, "").splitlines()
    # outside the block every line is ours: the page's own words there (title, names, placeholders,
    # options, alerts, dialog text) are quoted on the line they belong to
    elements = lines[lines.index("Elements:") + 1 :]
    assert elements and all(re.match(r"\[\d+\](–\[\d+\])? ", ln) for ln in elements), elements
    assert sum(ln == "Elements:" for ln in lines) == 1, render
    assert not any(ln.startswith(("Obstacle:", '[1] button "Approve', "[5] button")) for ln in lines), render
    assert sum(ln.startswith("Dialog:") for ln in lines) == 1 and "evil.example" in render
    assert not obs.obstacles and log(session) == ""
