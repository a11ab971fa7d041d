"""The settle wait and the wait for text run where a page's scripts cannot reach them.

After every action and before every observation the session waits for the page to settle (no DOM
mutation for the quiet time, no layout change, nothing loading or animating, within a bound), and
``wait`` with ``for_text`` waits until the text is on the page. Both read the page in the isolated
world perception uses, with the clock and the bound kept in Python. A hostile page that replaces
``requestAnimationFrame``, ``setTimeout``, ``MutationObserver``, ``performance.now``,
``document.getAnimations`` or the ``innerText`` getter in its own world can neither stall an action
until the call limit nor fake "settled" or "the text appeared"; a page that really updates for a while
is still waited for. Timing bounds are generous (a loaded 2-core machine): the point is "returns",
not "fast".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures_browser import RecordingSite, SessionFactory, serve

from taskcrew.tools.browser import BrowserConfig, BrowserRuntime, BrowserSession, Click, Observation, Wait

pytestmark = pytest.mark.browser

BOUND_S = 30.0
"""An action on a hostile page must return within this (the settle bound is 3 s; the call limit 120 s)."""
CALL_BOUND_S = 40.0
"""The runtime's call limit in this module: a stalled action fails here rather than after 120 s."""

QUIET = BrowserConfig(dom_quiet_ms=250)
"""The quiet time here: a page's 10 ms timer starved of CPU for a whole quiet time on a loaded
machine (three test processes on two cores) would read as settled; 50 ms, the default, was."""

# The page's report "loads" for {ms} ms (more than the quiet time: a wait that did not see its changes
# reads it loading), changing the status line every 10 ms (well within the quiet time), then says how
# many rows it has; "Reload report" starts it again. Its timer is taken before the attack runs, so it
# keeps working when the attack replaces the page's own.
REPORT = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>{head}</head><body>
<h1>{title}</h1><p id="status">Loading</p><button id="again">Reload report</button>
<script>
const later = window.setTimeout.bind(window);
{attack}
let run = 0;
const report = () => {{
  run += 1;
  const n = run;
  let i = 0;
  const tick = () => {{
    i += 1;
    const status = document.getElementById('status');
    if (i * 10 < {ms}) {{ status.textContent = 'Loading ' + i; later(tick, 10); }}
    else status.textContent = 'Report ready: ' + (41 + n) + ' rows';
  }};
  later(tick, 10);
}};
report();
document.getElementById('again').addEventListener('click', report);
</script></body></html>"""

ATTACKS = {
    # the settle wait used to wait for a frame, then for timers: neither ever came
    "raf": "window.requestAnimationFrame = () => 0;",
    "timeout": "window.setTimeout = () => 0;",
    # mutations made but never reported: the page looked quiet at once
    "observer": "window.MutationObserver = class { observe() {} disconnect() {} takeRecords() { return []; } };",
    # a clock that never moves: never quiet, and the bound was never reached
    "frozen_clock": "performance.now = () => 0;",
    # a clock that races: every mutation looked long past
    "racing_clock": "performance.now = () => Date.now() * 1000;",
}

# A 400 ms animation, after which the page writes its result; the page says nothing is animating.
ANIMATED = """<!doctype html><html><head><meta charset="utf-8"><title>Animated</title>
<style>@keyframes grow { from { opacity: 0.2 } to { opacity: 1 } } .run { animation: grow 400ms linear 1 }</style>
</head><body><h1>Animated</h1><p id="box" class="run">Counting the steps</p>
<button id="again">Count again</button>
<script>
Document.prototype.getAnimations = function () { return []; };
Element.prototype.getAnimations = function () { return []; };
const box = document.getElementById('box');
let runs = 0;
box.addEventListener('animationend', () => { runs += 1; box.textContent = 'Counted: ' + (6 + runs) + ' steps'; });
document.getElementById('again').addEventListener('click', () => {
  box.classList.remove('run'); void box.offsetWidth; box.classList.add('run');
});
</script></body></html>"""

# innerText (and String.prototype.includes) always claim the awaited words: they are nowhere.
FAKE_TEXT = """<!doctype html><html><head><meta charset="utf-8"><title>Checkout</title></head><body>
<h1>Checkout</h1><p>Payment pending</p>
<script>
Object.defineProperty(HTMLElement.prototype, 'innerText', { get() { return 'Payment confirmed'; } });
String.prototype.includes = function () { return true; };
</script></body></html>"""

# The words appear after 300 ms, in plain sight; innerText and includes deny it.
HIDDEN_TEXT = """<!doctype html><html><head><meta charset="utf-8"><title>Checkout</title></head><body>
<h1>Checkout</h1><p id="status">Payment pending</p>
<script>
const later = window.setTimeout.bind(window);
Object.defineProperty(HTMLElement.prototype, 'innerText', { get() { return 'Payment pending'; } });
String.prototype.includes = function () { return false; };
later(() => { document.getElementById('status').textContent = 'Payment confirmed: ref 7731'; }, 300);
</script></body></html>"""

# Never quiet: the status changes every 10 ms for ever.
RESTLESS = """<!doctype html><html><head><meta charset="utf-8"><title>Restless</title></head><body>
<h1>Restless</h1><p id="status">0</p><button id="again">Press</button>
<script>
let i = 0;
setInterval(() => { i += 1; document.getElementById('status').textContent = 'Tick ' + i; }, 10);
</script></body></html>"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingSite]:
    root: Path = tmp_path_factory.mktemp("settle")
    (root / "pages").mkdir()
    texts = {
        "normal.html": REPORT.format(title="Normal", head="", attack="", ms=800),
        "long.html": REPORT.format(title="Long", head="", attack="", ms=1600),
        "animated.html": ANIMATED,
        "fake_text.html": FAKE_TEXT,
        "hidden_text.html": HIDDEN_TEXT,
        "restless.html": RESTLESS,
    }
    for name, attack in ATTACKS.items():
        texts[f"{name}.html"] = REPORT.format(title=f"Hostile {name}", head="", attack=attack, ms=800)
    for name, text in texts.items():
        (root / "pages" / name).write_text(text, encoding="utf-8")
    yield from serve("127.0.0.1", root)


@pytest.fixture(scope="module")
def _runtimes() -> Iterator[list[BrowserRuntime]]:
    made: list[BrowserRuntime] = []
    yield made
    for runtime in made:
        if runtime.running:  # a stuck one (its thread never returns) is left to the process's exit
            runtime.close()


@pytest.fixture
def browser_runtime(_runtimes: list[BrowserRuntime]) -> BrowserRuntime:
    """One Chromium for the module with a shorter call limit, replaced when a test left it stuck."""
    if not _runtimes or not _runtimes[-1].running:
        _runtimes.append(BrowserRuntime(BrowserConfig(call_timeout_s=CALL_BOUND_S)).start())
    return _runtimes[-1]


def timed_goto(session: BrowserSession, url: str) -> Observation:
    start = time.monotonic()
    result = session.goto(url)
    took = time.monotonic() - start
    assert took < BOUND_S, f"goto took {took:.1f}s"
    assert result.ok, result.render()
    return result.observation


def timed_click(session: BrowserSession, obs: Observation, name: str) -> Observation:
    button = next(el for el in obs.elements if el.name == name)
    start = time.monotonic()
    result = session.act([Click(index=button.index)], observation_id=obs.id)
    took = time.monotonic() - start
    assert took < BOUND_S, f"click took {took:.1f}s"
    assert result.ok, result.render()
    return result.observation


def test_a_normal_page_updating_for_800_ms_is_waited_for(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session = make_session(base_url=pages.url, config=QUIET)
    obs = timed_goto(session, pages.page("normal.html"))
    assert "Report ready: 42 rows" in obs.text, obs.text
    obs = timed_click(session, obs, "Reload report")
    assert "Report ready: 43 rows" in obs.text, obs.text


def test_a_page_updating_for_longer_than_a_second_is_waited_for_up_to_the_bound(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    """The DOM-quiet wait had its own 1 s cap inside the 3 s settle bound: a page still loading after
    a second (or an 800 ms one on a loaded machine: CI read "Loading 77") was read half-loaded."""
    session = make_session(base_url=pages.url, config=QUIET)
    obs = timed_goto(session, pages.page("long.html"))
    assert "Report ready: 42 rows" in obs.text, obs.text
    obs = timed_click(session, obs, "Reload report")
    assert "Report ready: 43 rows" in obs.text, obs.text


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_page_replacing_what_the_wait_relies_on_neither_stalls_nor_fakes_it(
    make_session: SessionFactory, pages: RecordingSite, attack: str
) -> None:
    session = make_session(base_url=pages.url, config=QUIET)
    obs = timed_goto(session, pages.page(f"{attack}.html"))
    assert "Report ready: 42 rows" in obs.text, obs.text
    obs = timed_click(session, obs, "Reload report")
    assert "Report ready: 43 rows" in obs.text, obs.text


def test_a_page_hiding_its_animations_is_still_waited_for(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session = make_session(base_url=pages.url, config=QUIET)
    obs = timed_goto(session, pages.page("animated.html"))
    assert "Counted: 7 steps" in obs.text, obs.text
    obs = timed_click(session, obs, "Count again")
    assert "Counted: 8 steps" in obs.text, obs.text


def test_a_page_that_never_settles_is_read_within_the_bound(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session = make_session(base_url=pages.url, config=QUIET)
    obs = timed_goto(session, pages.page("restless.html"))
    assert "Tick " in obs.text, obs.text
    timed_click(session, obs, "Press")


def test_words_the_page_only_claims_in_inner_text_do_not_end_a_wait(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session = make_session(base_url=pages.url, config=QUIET)
    timed_goto(session, pages.page("fake_text.html"))
    result = session.act([Wait(seconds=1, for_text="Payment confirmed")])
    assert not result.ok, result.render()
    assert result.ran[0].message == "the text 'Payment confirmed' did not appear within 1s", result.render()
    assert "Payment confirmed" not in result.observation.text


def test_words_shown_on_the_page_end_a_wait_though_inner_text_denies_them(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session = make_session(base_url=pages.url, config=QUIET)
    timed_goto(session, pages.page("hidden_text.html"))
    result = session.act([Wait(seconds=3, for_text="Payment confirmed")])
    assert result.ok, result.render()
    assert result.ran[0].message == "the text appeared"
    assert "Payment confirmed: ref 7731" in result.observation.text
