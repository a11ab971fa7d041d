"""MiniWoB++ task types beyond tests/test_browser_miniwob.py, solved through observe()/act() only by
the rules in miniwob_oracle.py (element numbers picked from the render, several rounds, two seeds).
The page's own reward must be 1. One Chromium serves the whole module."""

from __future__ import annotations

import pytest
from fixtures_browser import RecordingSite, SessionFactory
from miniwob_oracle import RULES, play

pytestmark = pytest.mark.browser

SOLVED = [
    "book-flight",
    "choose-date",
    "click-menu",
    "click-checkboxes-soft",
    "click-scroll-list",
    "copy-paste",
    "drag-items",
    "email-inbox",
    "email-inbox-reply",
    "enter-time",
    "form-sequence-3",
    "highlight-text",
    "highlight-text-2",
    "login-user-popup",
    "multi-layouts",
    "navigate-tree",
    "order-food",
    "read-table-2",
    "scroll-text",
    "search-engine",
    "social-media",
    "terminal",
    "tic-tac-toe",
    "use-slider",
    "use-spinner",
]
SEEDS = ["taskcrew-a", "taskcrew-b"]
# order-food asks either for items by name or for a number of items of a kind (the icons' alt text);
# taskcrew-b names items, taskcrew-a and taskcrew-d ask for a kind.
# choose-date: these seeds' dates lie a month or two from the calendar's first month (each month is a
# round of clicking Prev, which the loop allows up to 16 of).
SEEDS_FOR = {
    "order-food": ["taskcrew-a", "taskcrew-b", "taskcrew-d"],
    "choose-date": ["taskcrew-a", "taskcrew-d"],
}
CASES = [(task, seed) for task in SOLVED for seed in SEEDS_FOR.get(task, SEEDS)]


@pytest.mark.parametrize(("task", "seed"), CASES)
def test_miniwob_task_is_solved_from_the_render(
    task: str, seed: str, make_session: SessionFactory, miniwob_site: RecordingSite
) -> None:
    session = make_session(allowed=[miniwob_site.url.removeprefix("http://")])
    play(session, miniwob_site.url, task, seed, RULES[task], rounds=16)
