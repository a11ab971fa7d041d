"""Perception and actions on crafted pages shaped like the web's failure cases (not our own pages):
script-bound clickables, clickable children, long pages, hostile field names, long values, custom
drop-downs, hover/drag/select-text, typing that checks itself, frames that fail."""

from __future__ import annotations

import re

import pytest
from fixtures_browser import RecordingSite, SessionFactory, log, open_web

from taskcrew.tools.browser import (
    Click,
    Drag,
    Hover,
    Observation,
    Scroll,
    Select,
    SelectText,
    Type,
)

pytestmark = pytest.mark.browser


def find(obs: Observation, name: str) -> int:
    found = [el.index for el in obs.elements if el.name == name]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def test_script_bound_icons_get_numbers_names_and_work(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "icons.html")
    names = {el.name: el for el in obs.elements}
    # icons with only a listener (no role, no tabindex, cursor only on :hover), named from classes
    for name in ("reply", "retweet", "star", "Reply", "Forward", "Delete message", "Close panel", "Prev"):
        assert name in names, (name, sorted(names))
    assert "tile" in names  # an empty box with a mousedown listener, named from its class
    assert names["Vendor"].field is not None and names["Vendor"].field.required  # aria-required
    assert "HIDDENWORD" not in obs.text and "Secret visible text" in obs.text  # font-size:0 text
    # a clickable container's clickable children each get a number; a click lands on each
    result = session.act([Click(index=names["Forward"].index), Click(index=names["star"].index)])
    assert result.ok, result.render()
    result = session.act([Click(index=find(result.observation, "Reply"))])
    assert log(session) == "mail-forward;icon-star;mail-reply;"
    # tree folders keep their own label and state; their children are separate
    obs = result.observation
    docs = obs.element(find(obs, "Docs"))
    music = obs.element(find(obs, "Music"))
    assert docs is not None and music is not None
    assert docs.states[:2] == ["folder", "expanded"] and music.states[:2] == ["folder", "collapsed"]
    assert "folder expanded" in obs.render()
    inbox = obs.element(find(obs, "Inbox"))  # an open folder with nothing in it yet
    assert inbox is not None and inbox.states[:3] == ["folder", "expanded", "empty"]
    # nested items are indented by their depth: the tree keeps its shape in the text
    lines = obs.text.splitlines()
    assert any(ln.startswith("  - ") and "a.txt" in ln for ln in lines), obs.text
    assert any(ln.startswith("- ") and "Docs" in ln for ln in lines), obs.text
    session.act([Click(index=find(obs, "b.txt")), Click(index=find(obs, "Docs"))])
    assert log(session).endswith("tree:b.txt;tree:Docs;")


def test_long_page_is_windowed_around_the_viewport(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "longtable.html")
    assert obs.above is None and obs.below is not None and obs.below.elements > 0
    # each row keeps its bill id and its own Pay button on one line
    rows = [line for line in obs.text.splitlines() if "BILL-" in line]
    assert rows and all(re.search(r"\[\d+\] BILL-\d{4} \| .* \| \[\d+\] Pay", r) for r in rows), rows[:3]
    shown = {el.index for el in obs.elements}
    assert all(int(i) in shown for i in re.findall(r"\[(\d+)\]", obs.text))
    render = obs.render()
    assert "scroll down to see them" in render and len(render) < 6000
    first = rows[0]
    # scrolling moves the window: later rows come in, the first leaves, the render says what is above
    result = session.act([Scroll(direction="down", pages=3)])
    obs2 = result.observation
    assert obs2.above is not None and obs2.above.chars > 0
    assert first not in obs2.text and "scroll up to see them" in obs2.render()
    later = [line for line in obs2.text.splitlines() if "BILL-" in line]
    assert later and all(re.search(r"\[\d+\] BILL-\d{4} \| .* \| \[\d+\] Pay", r) for r in later)
    pay = next(el for el in obs2.elements if el.name == "Pay" and el.state == "interactable")
    assert session.act([Click(index=pay.index)]).ok
    # at the bottom the footer is shown
    obs3 = session.act([Scroll(direction="down", pages=10)]).observation
    assert "End of list." in obs3.text and obs3.below is None


def test_fields_named_method_and_action_do_not_break_the_page(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    _, obs = open_web(make_session, site, "forms.html")
    assert obs.errors == [] and "Notes" in obs.text
    go = obs.element(find(obs, "Go"))
    pay = obs.element(find(obs, "Pay"))
    assert go is not None and go.submits is not None and pay is not None and pay.submits is not None
    assert (go.submits.method, go.submits.action) == ("POST", f"{site.url}/record/bulk")
    assert (pay.submits.method, pay.submits.action) == ("POST", f"{site.url}/record/m")
    # a long textarea value: its end is visible
    notes = obs.element(find(obs, "Notes"))
    assert notes is not None and notes.field is not None and notes.field.value is not None
    assert notes.field.value.endswith("FINALWORD") and "FINALWORD" in obs.render()


def test_custom_dropdown_multiselect_and_typing_that_checks_itself(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "forms.html")
    country = obs.element(find(obs, "Country"))
    assert country is not None and country.hidden_native and country.state == "interactable"
    tags = find(obs, "Tags")
    result = session.act(
        [
            Select(index=country.index, option="Spain"),
            Select(index=tags, option="blue", mode="add"),
            Select(index=tags, option="green", mode="remove"),
        ]
    )
    assert result.ok, result.render()
    values = session.run(
        lambda page: page.evaluate(
            "[document.querySelector('[name=country]').value,"
            " Array.from(document.querySelector('[name=tags]').selectedOptions).map(o => o.value)]"
        )
    )
    assert values == ["Spain", ["blue"]]
    obs = result.observation
    # the field keeps only 4 characters: typing 6 is reported as a failure, with what it holds
    result = session.act([Type(index=find(obs, "Code"), text="ABCDEF")])
    assert not result.ok and "'ABCD'" in result.render()
    # a masked field reformats: ok, with a note
    result = session.act([Type(index=find(result.observation, "Phone"), text="5551234567")])
    assert result.ok and "(555) 123-4567" in result.render()
    # a field driven only by key events gets every key
    result = session.act([Type(index=find(result.observation, "Qty"), text="42")])
    assert result.ok, result.render()
    assert session.run(lambda page: page.evaluate("document.getElementById('qty').value")) == "42"


def test_hover_drag_and_select_text(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "gestures.html")
    file_menu = obs.element(find(obs, "File"))
    assert file_menu is not None and "has popup" in file_menu.states
    assert "Open recent" not in obs.text
    result = session.act([Hover(index=file_menu.index)])
    assert result.ok and "Open recent" in result.observation.text
    obs = result.observation
    # moving the mouse away closes the menu: the page changed, so later actions wait for a new look
    result = session.act([Drag(index=find(obs, "Card A"), to_index=find(obs, "Drop here"))])
    assert result.ok and log(session) == "dropped:A;", result.render()
    result = session.act([Drag(index=find(result.observation, "K"), dx=60, dy=30)])
    assert result.ok and log(session).startswith("dropped:A;moved:60,30;"), result.render()
    # plain text has no number: select_text finds it on the page (a real mouse drag over it)
    result = session.act([SelectText(text="brown fox")])
    assert result.ok and log(session).endswith("sel:brown fox;"), result.render()
    result = session.act([SelectText(index=find(result.observation, "File"), text="Nope")])
    assert not result.ok and "does not show the text" in result.render()


def test_a_frame_whose_page_breaks_what_perception_calls_is_read_all_the_same(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    # the frame's script replaces getComputedStyle with one that throws: perception runs in an
    # isolated world (perception.isolated), which the page's scripts cannot reach, so the frame is
    # read as a person sees it (a frame that really cannot be read is reported:
    # test_adversarial_perception_world.py)
    _, obs = open_web(make_session, site, "framefail.html")
    assert "Outer text stays." in obs.text and any(el.name == "Outer OK" for el in obs.elements)
    assert "inner" in obs.text and not obs.errors, obs.render()


def test_skinned_widgets_words_pagers_and_key_sinks(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "widgets.html")
    assert "March 2024 Due soon" in obs.text  # words in inline elements parted by &nbsp; and spaces
    pages = {el.name: el for el in obs.elements if el.role == "link"}
    assert "current" in pages["2"].states and "current" not in pages["1"].states  # li.active
    # a select clipped away by a collapsed overflow:hidden wrapper is the widget's hidden native select
    size = next(el for el in obs.elements if el.field is not None and el.field.type == "select")
    assert size.hidden_native, size
    result = session.act([Select(index=size.index, option="L")])
    assert result.ok and log(session) == "size=L", result.render()
    # a field that empties itself on every key but echoes the keys into the page passes the read-back
    sink = next(el for el in result.observation.elements if el.role == "textbox")
    result = session.act([Type(index=sink.index, text="ls -la")])
    assert result.ok and "passed the keys on" in result.ran[0].message, result.render()
    assert "$ ls -la" in result.observation.text
    # ...but keys that vanish without showing anywhere are still a failure
    session.run(lambda page: page.evaluate("window.echo = false"))
    result = session.act([Type(index=sink.index, text="rm x")])
    assert not result.ok and "instead of 'rm x'" in result.ran[0].message, result.render()


def test_images_that_say_something_read_as_words_beside_their_item(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    _, obs = open_web(make_session, site, "images.html")
    lines = obs.text.splitlines()
    assert "Pad thai (image: vegan) (image: contains peanuts)" in [ln.strip() for ln in lines], obs.text
    stew = next(ln for ln in lines if "Beef stew" in ln)
    assert "(image: spicy)" in stew and "🌶" not in stew  # role=img: its label, not its glyphs
    assert "hidden badge" not in obs.text  # alt="" is decoration; a hidden image says nothing
    assert obs.text.count("(image:") == 3  # an image inside a link names the link instead
    assert find(obs, "Home")
