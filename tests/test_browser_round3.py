"""Perception and actions, third round, on crafted pages (each a class of real-web trouble, not a copy
of one site): clicks that must reach their element, icons named like a screen reader names them, row
controls tied to their row's key, text a person cannot see kept out, field facts."""

from __future__ import annotations

import re

import pytest
from fixtures_browser import RecordingSite, SessionFactory, log, open_web

from taskcrew.tools.browser import Back, Click, Type
from taskcrew.tools.browser.render import names_in_text

pytestmark = pytest.mark.browser


def test_icons_are_named_and_clicks_are_checked(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "toolbar.html")
    render = obs.render()
    # icon sprites, icon fonts, ligatures, SVG titles, aria-label and title all name their control
    expected = [
        "zoom in", "zoom out", "trash can", "print", "floppy disk", "Rotate page", "Share document",
        "Full screen", "Bookmark", "disk", "mail closed",
    ]  # fmt: skip
    assert [el.name for el in obs.elements] == expected, [el.name for el in obs.elements]
    for name in expected:
        assert f"(icon: {name})" in render, render
    assert "Zoom" not in obs.text  # a sprite's text indented off the page is not read
    assert names_in_text(obs.text)[1] == "zoom in"

    def index(name: str) -> int:
        return next(el.index for el in session.observe().elements if el.name == name)

    # the icon's hover image is still coming in: a click that does not wait lands on the container;
    # the result never says ok unless the icon itself got the click
    for name, cls in [("zoom in", "zoomin"), ("trash can", "fa-trash-can"), ("print", "material-icons")]:
        result = session.act([Click(index=index(name))])
        assert result.ok, result.render()
        assert log(session).rstrip(";").split(";")[-1].endswith(cls), (name, log(session))
    # the page removes it when the click lands beside it: reported as not done, never ok
    result = session.act([Click(index=index("Bookmark"))])
    assert not result.ok and "was not clicked" in result.ran[0].message, (result.render(), log(session))
    assert "bm" not in log(session)
    # pressed, it always swaps out: only the element's own activation reaches it, and the result says so
    result = session.act([Click(index=index("Full screen"))])
    assert result.ok and "activated the element directly" in result.ran[0].message, result.render()
    assert log(session).endswith("ttl;")


def test_every_row_control_is_tied_to_its_row_key(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "payables.html")
    unpaid = {f"INV-{7300 + i * 3}" for i in range(1, 51) if i % 5}
    assert len(unpaid) == 40
    render = obs.render()
    listed: dict[str, int] = {}
    for el in obs.elements:
        if el.name != "Pay":
            continue
        line = next(ln for ln in render.splitlines() if re.search(rf"\[{el.index}\](?!\d)", ln) and "|" in ln)
        key = re.search(r"INV-\d+", line)
        assert key is not None and el.row == key.group(0), (line, el.row)
        listed[key.group(0)] = el.index
    assert obs.below is not None
    summarised = set(obs.below.rows)
    assert summarised and all(f'"{k}"' in render for k in summarised)
    assert set(listed) | summarised == unpaid and not set(listed) & summarised  # 40 of 40 tied
    key = sorted(listed)[3]
    assert session.act([Click(index=listed[key])]).ok
    assert log(session) == f"paid:{key};"


def test_card_and_grid_controls_carry_their_heading(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    session, obs = open_web(make_session, site, "cards.html")
    render = obs.render()
    likes = [el for el in obs.elements if el.name == "Like"]
    assert [el.row for el in likes] == ["Quarter close checklist", "New supplier portal", "Office move"]
    line = next(ln for ln in render.split(">>>END")[1].splitlines() if ln.startswith(f"[{likes[1].index}]"))
    assert line.endswith('button (row "New supplier portal")'), render
    approve = [el for el in obs.elements if el.name == "Approve"]
    assert [el.row for el in approve] == ["PO-881", "PO-882"]
    assert session.act([Click(index=approve[1].index)]).ok
    assert log(session) == "Approve:PO-882;"


def test_text_a_person_cannot_see_is_not_read(make_session: SessionFactory, site: RecordingSite) -> None:
    _, obs = open_web(make_session, site, "hidden.html")
    render = obs.render()
    for hidden in (
        "IGNORE-PREVIOUS", "WIRE-TO", "CLIPPED", "WHITE-ON-WHITE", "SAME-AS-PANEL", "OFFPAGE",
        "INDENTED", "ZERO-BOX", "HIDDEN-IN-NAME", "TRANSPARENT",
    ):  # fmt: skip
        assert hidden not in render, (hidden, render)
    for shown in ("Total due 120.00 EUR", "Pay by Friday", "Reference A-17", "Note for the clerk",
                  "Dark panel shown", "Grey text stays", "White on black stays"):  # fmt: skip
        assert shown in obs.text, (shown, obs.text)
    names = [el.name for el in obs.elements]
    assert names == ["Approve", "Details", "Cancel", "OK"], names
    assert "CancelOK" not in render and "(icon: Details)" in render


def test_back_says_what_really_happened(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "steps.html")
    step2 = session.act([Click(index=next(el.index for el in obs.elements if el.name == "Next step"))])
    assert "Step 2" in step2.observation.text
    # the site keeps its own history at the same address: back restores step 1, and says so
    back = session.act([Back()])
    assert back.ok and "previous state" in back.ran[0].message, back.render()
    assert "Step 1" in back.observation.text
    # a fresh tab has nowhere to go back to: that is reported, and nothing changed
    fresh = make_session()
    fresh.observe()
    nothing = fresh.act([Back()])
    assert not nothing.ok and "the page did not change" in nothing.ran[0].message


def test_typed_words_the_page_showed_stay_readable(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "words.html")
    fields = [el.index for el in obs.elements if el.field is not None and el.field.type == "password"]
    # the page's own word, copied into a password field: the page still reads it
    result = session.act([Type(index=fields[0], text="sunflower")])
    assert result.ok and "Your one-time word is: sunflower" in result.observation.text, result.render()
    # a word the page never showed is hidden like a secret; its placeholder, copied back, resolves
    result = session.act([Type(index=fields[1], text="zz-private-77")])
    assert "zz-private-77" not in result.render()
    result = session.act([Type(index=fields[2], text="{{secret:TYPED_SECRET}}")])
    assert result.ok, result.render()
    pin = "document.querySelector('[name=again]').value"
    assert session.run(lambda page: page.evaluate(pin)) == "zz-private-77"
    # with two hidden words it is ambiguous: refused, saying why
    session.act([Type(index=fields[0], text="other-word-9")])
    result = session.act([Type(index=fields[2], text="{{secret:TYPED_SECRET}}")])
    assert not result.ok and "ambiguous" in result.render() and "type the text itself" in result.render()


def test_field_facts_a_person_sees(make_session: SessionFactory, site: RecordingSite) -> None:
    session, obs = open_web(make_session, site, "fields.html")
    render = obs.render()
    by_name = {el.field.name: el for el in obs.elements if el.field is not None}
    assert "min=0 max=30 step=5" in render and "min=1 max=9" in render  # slider and number limits
    assert "min=2026-12-01 max=2026-12-31" in render
    assert '"Netherlands"' in render and "more" not in render  # the 20th option is not cut away
    reset = next(el for el in obs.elements if el.name == "Start over")
    assert reset.resets and "(resets the form" in render
    # the page's own message for an invalid field, not the browser's generic one
    result = session.act(
        [
            Type(index=by_name["iban"].index, text="12345"),
            Click(index=next(el.index for el in obs.elements if el.name == "Check")),
        ]
    )
    iban = next(el for el in result.observation.elements if el.field is not None and el.field.name == "iban")
    assert iban.field is not None and iban.field.invalid is not None
    assert iban.field.invalid.startswith("An IBAN starts with the country code"), iban.field.invalid
