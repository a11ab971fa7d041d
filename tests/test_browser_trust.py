"""Perception and actions the agent can trust, on crafted pages (each a class of real-web trouble):
a click counts only when it arrived at its element, a control whose row (or name) changed under it
is refused as stale instead of acting on another row, row keys tell rows apart, CSS-generated
labels name their buttons, and text drawn to nothing or covered up is not read."""

from __future__ import annotations

import pytest
from fixtures_browser import RecordingSite, SessionFactory, log, open_web

from taskcrew.tools.browser import Click, Observation, Scroll, Type

pytestmark = pytest.mark.browser


def index(obs: Observation, name: str, row: str | None = None) -> int:
    return next(el.index for el in obs.elements if el.name == name and (row is None or el.row == row))


# ------------------------------------------------------------------ B: a click must arrive
def test_a_click_the_page_stopped_on_its_way_is_not_done(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "clickstops.html")
    # a document capture listener swallows it: not ok, and the element is not activated around it
    result = session.act([Click(index=index(obs, "Release payment"))])
    assert not result.ok and "stopped the click" in result.ran[0].message, result.render()
    assert "the document" in result.ran[0].message and log(session) == ""
    # a child (the button's glyph) stops it from bubbling to the button: not ok either, and not
    # clicked again (the child's own listener ran: a second click could act twice)
    hold = next(el.index for el in session.observe().elements if el.selector == "#hold")
    result = session.act([Click(index=hold)])
    assert not result.ok and "a part of it (i#hold-glyph" in result.ran[0].message, result.render()
    assert "observe the page before clicking it again" in result.ran[0].message
    assert log(session) == "" and session.run(lambda page: page.evaluate("window.glyphClicks")) == 1
    # the button's own handler stopping every other listener: it got the click, once
    result = session.act([Click(index=index(session.observe(), "Add note"))])
    assert result.ok and result.ran[0].message == "", result.render()
    assert log(session) == "noted;"


# ------------------------------------------------------------------ C: pressed, then replaced
def test_a_press_that_made_the_page_redraw_the_control_is_not_done(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "rerender.html")
    field = next(el.index for el in obs.elements if el.role == "textbox")
    result = session.act([Type(index=field, text="Client dinner"), Click(index=index(obs, "Send claim"))])
    sent = log(session)
    assert sent == "" and not result.ok, (sent, result.render())
    assert "replaced it with a new one" in result.ran[1].message, result.render()
    # the model clicks again (the field has no focus to lose now): it lands
    result = session.act([Click(index=index(session.observe(), "Send claim"))])
    assert result.ok and log(session) == "sent:Client dinner;", (log(session), result.render())
    # a control that goes away when pressed, with nothing in its place, did its work
    result = session.act([Click(index=index(session.observe(), "Remove filter: open"))])
    assert result.ok and log(session).endswith("unfiltered;"), result.render()


# ------------------------------------------------------------------ A: the row under [n] changed
def test_a_row_control_is_refused_when_its_row_moved(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "rowsmove.html")
    pay = {
        el.row: el.index for el in obs.elements if el.name == "Pay" and el.row and el.row.startswith("INV-4")
    }
    assert set(pay) == {"INV-410", "INV-420", "INV-430"}, obs.render()
    # the live table re-sorts between the observation and the action: refused as stale, nothing paid
    session.run(lambda page: page.evaluate("refresh()"))
    result = session.act([Click(index=pay["INV-410"])], observation_id=obs.id)
    assert not result.ok and log(session) == "", (log(session), result.render())
    # from the new observation, the same row is paid
    obs = result.observation
    target = index(obs, "Pay", "INV-410")
    result = session.act([Click(index=target)], observation_id=obs.id)
    assert result.ok and log(session) == "pay:INV-410;", (log(session), result.render())


def test_a_row_that_moves_as_the_action_scrolls_to_it_is_refused(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    # The "due soon" rows re-sort when the page scrolls: the action's own scroll to the button moves
    # another row under the button's selector. Checked at the element before the click: refused.
    session, obs = open_web(make_session, site, "rowsmove.html")
    approve = index(obs, "Approve", "INV-510")
    result = session.act([Click(index=approve)], observation_id=obs.id)
    assert log(session) in ("", "approve:INV-510;"), (log(session), result.render())
    assert not result.ok and "no longer the one observed" in result.ran[0].message, result.render()
    assert "INV-530" in result.ran[0].message and "INV-510" in result.ran[0].message


def test_scroll_then_click_in_a_virtualised_list_does_not_pay_another_row(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "rowsmove.html")
    box = next(el.index for el in obs.elements if el.role == "grid")
    pay = index(obs, "Pay", "INV-902")
    result = session.act([Scroll(index=box, direction="down"), Click(index=pay)], observation_id=obs.id)
    assert log(session) in ("", "pay:INV-902;"), (log(session), result.render())
    assert [s.reason for s in result.skipped] == ["page_changed"], result.render()


# ------------------------------------------------------------------ E: keys that tell rows apart
def test_row_keys_come_from_the_column_that_tells_rows_apart(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "keys.html")
    pays = [el for el in obs.elements if el.name == "Pay"]
    keys = [el.row for el in pays]
    assert keys[:3] == ["BL-3000", "BL-3001", "BL-3002"], keys[:5]  # the unique, id-like column
    assert len(set(keys)) == len(keys), keys
    assert obs.below is not None and len(set(obs.below.rows)) == len(obs.below.rows) > 40, obs.below
    # no column is unique alone: the fewest leftmost columns that are unique together
    session.act([Scroll(direction="down", pages=10), Scroll(direction="down", pages=10)])
    edits = [el.row for el in session.observe().elements if el.name == "Edit"]
    assert len(edits) == 12 and len(set(edits)) == 12, edits
    assert edits[0] == "North · Rent", edits


# ------------------------------------------------------------------ F and D: what is read
def test_css_generated_labels_name_their_buttons(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "generated.html")
    names = {el.selector: el.name for el in obs.elements if el.role == "button"}
    assert names == {"#g-yes": "Accept", "#g-no": "Decline", "#g-arch": "Archive", "#g-pay": "42.00"}, names
    result = session.act([Click(index=index(obs, "Decline"))])
    assert result.ok and log(session) == "g-no;", result.render()


def test_text_drawn_to_nothing_or_covered_is_not_read(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    _, obs = open_web(make_session, site, "generated.html")
    text = obs.render()
    for seen in ["Seen note one.", "Seen note two.", "Seen note three.", "Shown menu entry", "Shown half size",
                 "Shelf line 3 scrolled", "Reviewer bar"]:  # fmt: skip
        assert seen in text, (seen, text)
    for hidden in ["PAST-THE-FRAME", "FLATTENED-Y", "GHOST-FILTER", "PINHOLE-CLIP", "LIDDED-PANEL"]:
        assert hidden not in text, (hidden, text)
