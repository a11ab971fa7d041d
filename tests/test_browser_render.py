"""The render's economies keep every fact: a name left out of the element list is next to its [n] in
the text shown, runs of alike elements expand back to each number, and a scripted reader (eval kit)
recovers what the render no longer repeats. Pure rendering, no browser."""

from __future__ import annotations

from typing import Any

from taskcrew.eval import kit
from taskcrew.tools.browser import Element, Observation
from taskcrew.tools.browser.models import FieldInfo, FormTarget
from taskcrew.tools.browser.render import BEGIN, END

URL = "http://127.0.0.1:8800/pages/a.html"


def el(index: int, role: str, name: str = "", **extra: Any) -> Element:
    return Element(
        index=index,
        role=role,
        tag="x",
        name=name,
        selector=f"#e{index}",
        **{"state": "interactable", **extra},
    )


def obs(text: str, elements: list[Element], **extra: Any) -> Observation:
    return Observation(id=7, url=URL, title="A page", text=text, elements=elements, signature="s", **extra)


def element_lines(rendered: str) -> list[str]:
    return rendered.split("\nElements:\n", 1)[1].splitlines()


def test_names_the_text_shows_next_to_their_number_are_not_repeated() -> None:
    text = "\n".join(
        [
            "Username [1]",  # a label on the line, before the marker
            "Vendor *",  # a label on the line above: which field it names is a guess, so listed
            "[2]",
            "[3] Log in",  # the name right after the marker
            "[4]",  # a dialog: its name on the next lines is not beside its number, so listed
            "[5]",
            "Close",
            "Some body text.",
            "Vel [6] amet. Sem.",  # an inline link: where its name ends is not visible
            "Notes",
            "[7]",
        ]
    )
    page = obs(
        text,
        [
            el(1, "textbox", "Username", field=FieldInfo(name="user", type="text")),
            el(2, "combobox", "Vendor *", field=FieldInfo(name="vendor_id", type="select")),
            el(
                3, "button", "Log in", submits=FormTarget(method="POST", action="http://127.0.0.1:8800/login")
            ),
            el(4, "dialog", "Close Some body text."),
            el(5, "button", "Close"),
            el(6, "clickable", "amet."),
            el(7, "textbox", "Remarks"),  # the line above is not its name: the name is listed
        ],
    )
    lines = element_lines(page.render())
    assert lines == [
        "[1] textbox name=user",
        '[2] combobox "Vendor *" name=vendor_id',
        "[3] button (submits form POST /login)",
        '[4] dialog "Close Some body text."',
        '[5] button "Close"',
        '[6] clickable "amet."',
        '[7] textbox "Remarks"',
    ]
    got = {e.index: e for e in kit.elements(page.render())}
    assert (got[1].name, got[2].name, got[3].name) == ("Username", "Vendor *", "Log in")
    assert got[2].field == "vendor_id" and got[6].name == "amet." and got[7].name == "Remarks"


def test_a_row_whose_name_is_the_lines_below_its_number_is_shown_on_one_line() -> None:
    """An inbox row: its number alone on a line, its sender, subject and preview below. Shown as
    `[n] name` on one line (a reader ties it to the number) and not repeated in the list; a row whose
    lines say more than its name, or whose name is longer than its lines, keeps its lines and is
    listed by name."""
    text = "\n".join(
        ["[1]", "Suzi", "Facilisi amet.", "[2] (icon: trash)", "[3]", "Lin", "Phasellus.", "More words",
         "", "[4]", "Ana", "[5]", "Ana"]
    )  # fmt: skip
    page = obs(
        text,
        [
            el(1, "clickable", "Suzi Facilisi  amet."),
            el(2, "clickable", "trash"),
            el(3, "clickable", "Lin Phasellus."),  # its lines go on: "More words" is not its name
            el(4, "clickable", "Ana Bo"),  # its name says more than its line
            el(5, "clickable", "Ana"),
        ],
    )
    rendered = page.render()
    shown = rendered.split(BEGIN + "\n", 1)[1].split("\n" + END, 1)[0]
    assert shown.splitlines() == [
        "[1] Suzi Facilisi amet.", "[2] (icon: trash)", "[3]", "Lin", "Phasellus.", "More words", "",
        "[4]", "Ana", "[5] Ana",
    ]  # fmt: skip
    assert element_lines(rendered) == [
        "[1]–[2] clickable",
        '[3] clickable "Lin Phasellus."',
        '[4] clickable "Ana Bo"',
        "[5] clickable",
    ]
    got = {e.index: e.name for e in kit.elements(rendered)}
    assert got == {1: "Suzi Facilisi amet.", 2: "trash", 3: "Lin Phasellus.", 4: "Ana Bo", 5: "Ana"}


def test_runs_of_alike_elements_are_one_line_and_expand_back() -> None:
    rows = "\n".join(f"| BILL-{i} | [{i}] Pay" for i in range(1, 5))
    page = obs(
        "[5] Home\n[6] Help\n" + rows,
        [
            *(el(i, "button", "Pay") for i in range(1, 5)),
            el(5, "link", "Home", href="http://127.0.0.1:8800/"),
            el(6, "link", "Help", href=URL + "#help"),  # a place on this page
            el(7, "link", "Top", href=URL),  # the page itself: no target
            el(8, "link", "Top", href=URL),
            el(9, "button", "Pay", state="offscreen_below"),
        ],
    )
    rendered = page.render()
    assert rendered.startswith(f'Observation #7: "A page" {URL}\n{BEGIN}\n') and f"\n{END}\n" in rendered
    assert element_lines(rendered) == [
        "[1]–[4] button",
        "[5] link /",
        "[6] link #help",
        '[7]–[8] link "Top"',
        '[9] button "Pay" [OFFSCREEN BELOW]',
    ]
    got = kit.elements(rendered)
    assert [e.index for e in got] == list(range(1, 10))
    assert [e.name for e in got[:4]] == ["Pay"] * 4 and got[6].name == got[7].name == "Top"
    assert got[8].offscreen and not got[3].offscreen


def test_a_name_the_cut_text_no_longer_shows_is_listed() -> None:
    filler = "\n".join(f"line {i} " + "x" * 60 for i in range(200))
    page = obs(filler + "\n[1] Far down", [el(1, "button", "Far down", state="offscreen_below")])
    full = page.render(max_chars=100_000)
    assert element_lines(full) == ["[1] button [OFFSCREEN BELOW]"]
    cut = page.render(max_chars=3000)
    assert "[1] Far down" not in cut and "more characters of page text not shown" in cut
    assert element_lines(cut) == ['[1] button "Far down" [OFFSCREEN BELOW]']
