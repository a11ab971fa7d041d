"""Inner scrollers (issue 24): a box that scrolls inside the page shows where it is scrolled to and is
scrolled by ``scroll`` with its number; a page whose document does not scroll (an app shell) scrolls
its main box. Crafted pages: a terms box that must be read to the end, a list in a box, an app shell."""

from __future__ import annotations

import re

import pytest
from fixtures_browser import RecordingSite, SessionFactory

from taskcrew.tools.browser import Click, Scroll, SetChecked

pytestmark = pytest.mark.browser


def test_an_inner_scroller_shows_its_position_and_scrolls(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session = make_session()
    obs = session.goto(site.page("web/scrollers.html")).observation
    render = obs.render()
    terms = next(el for el in obs.elements if el.name == "Terms of service")
    assert terms.role == "scrollable" and terms.scroll is not None, render
    assert re.search(rf"\[{terms.index}\] scrollable \"Terms of service\" scroll 0–150 of \d+px", render), (
        render
    )
    picks = next(el for el in obs.elements if el.role == "scrollable" and el.index != terms.index)
    assert picks.scroll is not None and picks.scroll.height > picks.scroll.client, render
    assert "A short note" not in " ".join(el.name for el in obs.elements)  # a box that fits is no scroller
    agree = next(el for el in obs.elements if el.role == "checkbox")
    assert agree.state == "disabled"
    # one page of the box, then to its end: the result says where the box now is
    step = session.act([Scroll(direction="down", index=terms.index)])
    assert step.ok and re.search(rf"scrolled \[{terms.index}\]: scroll 1\d\d–", step.render()), step.render()
    moved = step.observation.element(terms.index)
    assert moved is not None and moved.scroll is not None and moved.scroll.top > 0
    end = session.act([Scroll(direction="down", index=terms.index, pages=10)])
    assert "(at its end)" in end.render(), end.render()
    agree_now = end.observation.element(agree.index)
    assert agree_now is not None and agree_now.state == "interactable", end.render()  # the page saw it read
    opened = next(el for el in end.observation.elements if el.name == "Open account")
    assert session.act([SetChecked(action="check", index=agree.index), Click(index=opened.index)]).ok
    assert session.run(lambda page: page.text_content("#log")) == "opened"
    # a control inside a scrolled box: scroll with its own number scrolls the box it is in
    last = next(el for el in obs.elements if el.name == "Old town")
    assert last.state == "offscreen_below"
    down = session.act([Scroll(direction="down", index=last.index, pages=5)])
    assert "scrolled div.picks" in down.render() and "(at its end)" in down.render(), down.render()
    shown = down.observation.element(last.index)
    assert shown is not None and shown.state == "interactable", down.render()


def test_a_page_that_does_not_scroll_scrolls_its_main_box(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session = make_session()
    obs = session.goto(site.page("web/shell.html")).observation
    more = next(el for el in obs.elements if el.name == "Load older messages")
    assert more.state == "offscreen_below"
    result = session.act([Scroll(direction="down", pages=3)])
    assert "scrolled main" in result.render() and "(at its end)" in result.render(), result.render()
    after = result.observation.element(more.index)
    assert after is not None and after.state == "interactable", result.render()
