"""MiniWoB++ task pages (the ``miniwob`` wheel, served over HTTP) as external pages.

For each task a simple rule reads the instruction from the observation, picks element numbers from
the observation, and acts through the normal API. The page's own reward function must give 1.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from datetime import datetime

import pytest
from fixtures_browser import RecordingSite, SessionFactory
from miniwob_oracle import Rule, query, reward, start_episode

from taskcrew.tools.browser import (
    Action,
    Click,
    Observation,
    Select,
    SetChecked,
    Type,
    Wait,
)

pytestmark = pytest.mark.browser


def one(obs: Observation, pred: Callable[..., bool]) -> int:
    found = [el.index for el in obs.elements if pred(el)]
    assert len(found) == 1, [(e.index, e.role, e.name) for e in obs.elements]
    return found[0]


def named(obs: Observation, name: str, role: str | None = None) -> int:
    return one(obs, lambda el: el.name == name and (role is None or el.role == role))


def textboxes(obs: Observation) -> list[int]:
    return [el.index for el in obs.elements if el.role == "textbox"]


def submit(obs: Observation) -> Click:
    return Click(index=named(obs, "Submit", role="button"))


def quoted(q: str) -> list[str]:
    return re.findall(r'"([^"]*)"', q)


def click_button(obs: Observation, q: str) -> list[Action]:
    return [Click(index=named(obs, quoted(q)[0], role="button"))]


def click_link(obs: Observation, q: str) -> list[Action]:
    return [Click(index=named(obs, quoted(q)[0]))]  # the page styles spans as links


def click_checkboxes(obs: Observation, q: str) -> list[Action]:
    wanted = re.match(r"Select (.*) and click Submit", q).group(1)  # type: ignore[union-attr]
    names = set() if wanted == "nothing" else set(re.split(r", | and ", wanted))
    checks = [SetChecked(action="check", index=el.index) for el in obs.elements if el.name in names]
    assert len(checks) == len(names)
    return [*checks, submit(obs)]


def click_option(obs: Observation, q: str) -> list[Action]:
    name = re.match(r"Select (.*) and click Submit", q).group(1)  # type: ignore[union-attr]
    return [SetChecked(action="check", index=named(obs, name, role="radio")), submit(obs)]


def enter_text(obs: Observation, q: str) -> list[Action]:
    return [Type(index=textboxes(obs)[0], text=quoted(q)[0]), submit(obs)]


def enter_password(obs: Observation, q: str) -> list[Action]:
    pw = quoted(q)[0]
    return [Type(index=i, text=pw) for i in textboxes(obs)] + [submit(obs)]


def login_user(obs: Observation, q: str) -> list[Action]:
    user, pw = quoted(q)
    box_user, box_pw = textboxes(obs)
    return [Type(index=box_user, text=user), Type(index=box_pw, text=pw), Click(index=named(obs, "Login"))]


def click_tab(obs: Observation, q: str) -> list[Action]:
    n = re.search(r"Tab #(\d)", q).group(1)  # type: ignore[union-attr]
    return [Click(index=named(obs, f"Tab #{n}", role="tab"))]


def focus_text(obs: Observation, q: str) -> list[Action]:
    return [Click(index=textboxes(obs)[0])]


def choose_list(obs: Observation, q: str) -> list[Action]:
    item = re.match(r"Select (.*) from the list", q).group(1)  # type: ignore[union-attr]
    return [Select(index=one(obs, lambda el: el.role == "combobox"), option=item), submit(obs)]


def click_dialog(obs: Observation, q: str) -> list[Action]:
    return [Click(index=named(obs, "Close", role="button"))]


def simple_arithmetic(obs: Observation, q: str) -> list[Action]:
    a, op, b = re.search(r"(\d+) ([-+x*]) (\d+) =", obs.text).groups()  # type: ignore[union-attr]
    ops = {"+": operator.add, "-": operator.sub, "x": operator.mul, "*": operator.mul}
    return [Type(index=textboxes(obs)[0], text=str(ops[op](int(a), int(b)))), submit(obs)]


def read_table(obs: Observation, q: str) -> list[Action]:
    key = re.search(r"value of (.+) into", q).group(1)  # type: ignore[union-attr]
    value = re.search(rf"\| {re.escape(key)} \| (.+)", obs.text).group(1).strip()  # type: ignore[union-attr]
    return [Type(index=textboxes(obs)[0], text=value), submit(obs)]


def find_word(obs: Observation, q: str) -> list[Action]:
    nth = int(re.search(r"the (\d+)\w\w word", q).group(1))  # type: ignore[union-attr]
    paragraph = obs.text.splitlines()[1]
    word = re.sub(r"[^A-Za-z0-9]", "", paragraph.split()[nth - 1])
    return [Type(index=textboxes(obs)[0], text=word), submit(obs)]


def button_sequence(obs: Observation, q: str) -> list[Action]:
    return [Click(index=named(obs, "ONE")), Click(index=named(obs, "TWO"))]


def enter_date(obs: Observation, q: str) -> list[Action]:
    when = datetime.strptime(re.search(r"\d\d/\d\d/\d{4}", q).group(0), "%m/%d/%Y")  # type: ignore[union-attr]
    return [Type(index=textboxes(obs)[0], text=when.strftime("%Y-%m-%d")), submit(obs)]


def click_widget(obs: Observation, q: str) -> list[Action]:
    kind = quoted(q)[0]
    preds: dict[str, Callable[..., bool]] = {
        "button": lambda el: el.role == "button",
        "text": lambda el: el.role == "textbox" and el.field is not None and el.field.type == "text",
        "textarea": lambda el: el.field is not None and el.field.type == "textarea",
        "checkbox": lambda el: el.role == "checkbox",
        "radio": lambda el: el.role == "radio",
    }
    return [Click(index=next(el.index for el in obs.elements if preds[kind](el)))]


def click_collapsible(obs: Observation, q: str) -> list[Action]:
    header = one(obs, lambda el: el.role == "tab" and el.name.startswith("Section"))
    return [Click(index=header), submit(obs)]


def use_autocomplete(obs: Observation, q: str) -> list[Action]:
    parts = quoted(q)
    box = textboxes(obs)[0]
    field = obs.element(box)
    suggestions = [el for el in obs.elements if el.role not in ("textbox", "button")]
    if field is None or field.field is None or not field.field.value:
        return [Type(index=box, text=parts[0]), Wait(seconds=1)]  # the widget answers after a delay
    end = parts[1] if len(parts) > 1 else ""
    pick = next(el for el in suggestions if el.name.startswith(parts[0]) and el.name.endswith(end))
    return [Click(index=pick.index)]


def use_autocomplete_then_submit(obs: Observation, q: str) -> list[Action]:
    field = obs.element(textboxes(obs)[0])
    parts = quoted(q)
    value = field.field.value if field is not None and field.field is not None else ""
    if value and value != parts[0] and value.endswith(parts[1] if len(parts) > 1 else ""):
        return [submit(obs)]
    return use_autocomplete(obs, q)


TASKS: dict[str, Rule] = {
    "click-button": click_button,
    "click-link": click_link,
    "click-checkboxes": click_checkboxes,
    "click-option": click_option,
    "enter-text": enter_text,
    "enter-password": enter_password,
    "login-user": login_user,
    "click-tab": click_tab,
    "focus-text": focus_text,
    "choose-list": choose_list,
    "click-dialog": click_dialog,
    "simple-arithmetic": simple_arithmetic,
    "read-table": read_table,
    "find-word": find_word,
    "click-button-sequence": button_sequence,
    "enter-date": enter_date,
    "click-widget": click_widget,
    "click-collapsible": click_collapsible,
    "use-autocomplete": use_autocomplete_then_submit,
    "unicode-test": click_button,
}


@pytest.mark.parametrize("task", sorted(TASKS))
def test_miniwob_task_is_solved_by_picking_numbers(
    task: str, make_session: SessionFactory, miniwob_site: RecordingSite
) -> None:
    host = miniwob_site.url.removeprefix("http://")
    session = make_session(allowed=[host])
    obs = start_episode(session, miniwob_site.url, task, seed=f"taskcrew-{task}")
    rule = TASKS[task]
    for _ in range(4):  # a few observe/act rounds at most (autocomplete needs three)
        q = query(obs)
        result = session.act(rule(obs, q))
        done, raw = reward(session)
        if done:
            break
        assert result.ok, result.render()
        obs = result.observation
    assert (done, raw) == (True, 1.0), result.render()
    assert all(el.selector for el in obs.elements)
