"""More MiniWoB++ rules (issue 24, fourth round): like miniwob_oracle.py, they read only the render
(the instruction, the text with [n], the element list) and pick numbers."""

from __future__ import annotations

import re

from miniwob_oracle import RULES, Rule, boxes, email_inbox, lines, markers, named, quoted, submit, value

from taskcrew.tools.browser import Action, Click, Scroll, SetChecked, Type


def sign_agreement(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    """The name field and buttons stay disabled until the agreement's box is scrolled to its end."""
    if not quoted(q):  # "Click the cancel button."
        return [Click(index=named(obs, "Cancel").index)]
    name, button = quoted(q)
    area = next(el for el in obs.elements if el.field and el.field.type == "textarea")
    box = next(el for el in boxes(obs) if el.index != area.index)
    if box.state == "disabled":
        return [Scroll(direction="down", index=area.index, pages=10)]
    return [Type(index=box.index, text=name), Click(index=named(obs, button).index)]


def scroll_text_2(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    where = re.search(r"to the (top|bottom)", q).group(1)  # type: ignore[union-attr]
    area = next(el for el in obs.elements if el.field and el.field.type == "textarea")
    return [Scroll(direction="down" if where == "bottom" else "up", index=area.index, pages=10), submit(obs)]


def check_listed(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    wanted = re.match(r"Select (.*) and click Submit", q).group(1)  # type: ignore[union-attr]
    names = set() if wanted == "nothing" else set(re.split(r", | and ", wanted))
    checks = [
        SetChecked(action="check", index=el.index)
        for el in obs.elements
        if el.role == "checkbox" and el.name in names
    ]
    assert len(checks) == len(names), (names, obs.render())
    return [*checks, submit(obs)]


def enter_text_2(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    word = quoted(q)[0]
    text = word.upper() if "upper case" in q else word.lower()
    return [Type(index=boxes(obs)[0].index, text=text), submit(obs)]


ORDINALS = {"1st": 0, "2nd": 1, "3rd": 2}


def form_sequence_2(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    m = re.search(r"the (\d\w\w) radio button and enter the number \"(\d+)\" into the (\d\w\w) textbox", q)
    assert m, q
    radios = [el for el in obs.elements if el.role == "radio"]
    fields = [el for el in obs.elements if el.role == "textbox"]
    return [
        SetChecked(action="check", index=radios[ORDINALS[m.group(1)]].index),
        Type(index=fields[ORDINALS[m.group(3)]].index, text=m.group(2)),
        submit(obs),
    ]


def odd_or_even(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    """Each number sits between its Odd button (the line above) and its Even button (the line below)."""
    text, picks = lines(obs), []
    for i, line in enumerate(text):
        if re.fullmatch(r"-?\d+", line.strip()) and i > 0 and i + 1 < len(text):
            odd, even = markers(text[i - 1]), markers(text[i + 1])
            picks.append(Click(index=(odd if int(line) % 2 else even)[0]))
    return [*picks, submit(obs)]


def simple_algebra(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    m = re.search(r"(x|\d+) ([-+]) (x|\d+) = (-?\d+)", obs.text)
    assert m, obs.text
    a, op, b, c = m.groups()
    if a == "x":
        x = int(c) - int(b) if op == "+" else int(c) + int(b)
    else:
        x = int(c) - int(a) if op == "+" else int(a) - int(c)
    return [Type(index=boxes(obs)[0].index, text=str(x)), submit(obs)]


def multi_orderings(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    genre = re.search(r"for (\w+) movies", q).group(1)  # type: ignore[union-attr]
    director = re.search(r"directed by (\w+)", q).group(1)  # type: ignore[union-attr]
    year = re.search(r"year (\d{4})", q).group(1)  # type: ignore[union-attr]
    wanted = {"Year": year, "Genre": genre, "Director": director}
    return [Type(index=named(obs, k).index, text=v) for k, v in wanted.items()] + [submit(obs)]


def buy_ticket(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    """Each flight reads "Duration:" / "10h 20m" / "[n] Book for $155"."""
    flights: list[tuple[int, int, int]] = []  # minutes, price, number
    text = lines(obs)
    for i, line in enumerate(text):
        m = re.match(r"\[(\d+)\] Book for \$(\d+)", line.strip())
        d = re.search(r"(\d+)h (\d+)m", text[i - 1]) if m and i else None
        if m and d:
            flights.append((int(d.group(1)) * 60 + int(d.group(2)), int(m.group(2)), int(m.group(1))))
    key = {"longest duration": 0, "shortest duration": 0, "cheapest": 1, "most expensive": 1}
    kind = next(k for k in key if k in q)
    pick = (max if kind in ("longest duration", "most expensive") else min)(
        flights, key=lambda f: f[key[kind]]
    )
    return [Click(index=pick[2])]


def click_dialog_2(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    label = quoted(q)[0]
    if label in ("x", "X", "×"):
        return [Click(index=named(obs, "Close").index)]
    return [Click(index=named(obs, label, role="button").index)]


def copy_paste_2(obs, q: str) -> list[Action]:  # type: ignore[no-untyped-def]
    nth = ORDINALS[re.search(r"the (\d\w\w) text area", q).group(1)]  # type: ignore[union-attr]
    areas = [el for el in obs.elements if el.field and el.field.type == "textarea"]
    field = next(el for el in boxes(obs) if el not in areas)
    return [Type(index=field.index, text=value(areas[nth])), submit(obs)]


RULES4: dict[str, Rule] = {
    "sign-agreement": sign_agreement,
    "scroll-text-2": scroll_text_2,
    "click-checkboxes-large": check_listed,
    "click-checkboxes-transfer": check_listed,
    "enter-text-2": enter_text_2,
    "form-sequence-2": form_sequence_2,
    "odd-or-even": odd_or_even,
    "simple-algebra": simple_algebra,
    "multi-orderings": multi_orderings,
    "buy-ticket": buy_ticket,
    "click-dialog-2": click_dialog_2,
    "copy-paste-2": copy_paste_2,
    "email-inbox-delete": email_inbox,
    "email-inbox-noscroll": email_inbox,
    "email-inbox-forward": email_inbox,
    "email-inbox-star-reply": email_inbox,
    "book-flight-nodelay": RULES["book-flight"],
}
