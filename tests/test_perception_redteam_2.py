"""Perception attacked again (second red-team round), each case a confirmed hole:

- twins told apart by more than their first words: two list items that start alike ("Invoice …" in
  bold on each) and differ later; the list re-sorts between the render and the click, and the click
  is refused as stale with where the control now sits, never made on the other item;
- a click that a page's control hidden inside the element would take (a submit button of another
  form laid over the visible button) is stopped and fails: it never submits the other form while the
  result says the element was clicked;
- text a person cannot see is not rendered, and text a person sees is: each case is judged by a real
  Chromium's own pixels (the page drawn with and without the words), like tests/test_html_visibility;
  text a colour effect paints into its background (any function of a filter list, any blend mode, any
  inset box-shadow of the list, translucent backgrounds, a backdrop-filter, colours in oklch()) is
  not rendered, and a look-alike beside each that a person sees is.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fixtures_browser import RecordingSite, SessionFactory, serve
from PIL import Image

from taskcrew.tools.browser import BrowserRuntime, BrowserSession, Click, Observation
from taskcrew.tools.human import AutoApproveHuman, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig

pytestmark = pytest.mark.browser

LOG_JS = "function log(x) { document.getElementById('log').textContent += x + ';'; }"

QUEUE = f"""<!doctype html><html><head><meta charset="utf-8"><title>Approvals queue</title></head><body>
<h1>Invoices waiting for approval</h1>
<ul id="q">
  <li><b>Invoice</b> INV-101 from Contoso — 1,200.00 EUR <button onclick="log('INV-101')">Approve</button></li>
  <li><b>Invoice</b> INV-102 from Contoso — 98,000.00 EUR <button onclick="log('INV-102')">Approve</button></li>
</ul>
<ul id="long">
  <li>Quarterly maintenance contract, Contoso Facilities Europe, site Rotterdam, PO 4471: 300.00 EUR
    <a href="#" onclick="log('PO 4471'); return false">Release</a></li>
  <li>Quarterly maintenance contract, Contoso Facilities Europe, site Rotterdam, PO 4472: 45,000.00 EUR
    <a href="#" onclick="log('PO 4472'); return false">Release</a></li>
</ul>
<p id="log"></p>
<script>{LOG_JS}
function resort() {{ for (const q of document.querySelectorAll('ul')) q.insertBefore(q.children[1], q.children[0]); }}
</script></body></html>"""

NESTED = f"""<!doctype html><html><head><meta charset="utf-8"><title>Pay bills</title>
<style>.pay {{ position: relative; padding: 8px 20px }}
.ghost {{ position: absolute; inset: 0; opacity: 0; width: 100%; height: 100% }}</style></head><body>
<h1>Bill BILL-1: Stark Logistics, 640.00 GBP</h1>
<form id="f1" method="post" action="/record/bill-1"><input type="hidden" name="paid_on" value="2026-10-02">
  <button id="payA" class="pay" type="submit">Mark BILL-1 paid</button></form>
<form id="f9" method="post" action="/record/bill-9"><input type="hidden" name="paid_on" value="2026-10-02"></form>
<p><span role="button" id="arch" class="pay" onclick="log('archive BILL-1')">Archive BILL-1</span></p>
<p id="log"></p>
<script>{LOG_JS}
// after load, a script puts an invisible submit button of another form inside each visible control
for (const host of [document.getElementById('payA'), document.getElementById('arch')]) {{
  const g = document.createElement('input'); g.type = 'submit'; g.className = 'ghost'; g.value = '';
  g.setAttribute('form', 'f9'); host.appendChild(g);
}}
</script></body></html>"""

# (case, the body of a row holding the marker {m}, whether a person sees the marker)
CASES: list[tuple[str, str, bool]] = [
    ("plain", "<span>{m}</span>", True),
    (
        "clip-inset-px",
        '<span style="display:inline-block;clip-path:inset(0px 100% 0px 0px)">{m}</span>',
        False,
    ),
    (
        "clip-inset-bottom-px",
        '<span style="display:inline-block;clip-path:inset(0 0 40px 0)">{m}</span>',
        False,
    ),
    ("clip-inset-some-px", '<span style="display:inline-block;clip-path:inset(0 30px 0 0)">{m}</span>', True),
    ("clip-polygon-empty", '<span style="clip-path:polygon(0 0, 0 0, 0 0)">{m}</span>', False),
    (
        "opacity-product",
        '<span style="opacity:.1"><span style="opacity:.1"><span style="opacity:.1">{m}</span></span></span>',
        False,
    ),
    ("opacity-product-seen", '<span style="opacity:.7"><span style="opacity:.7">{m}</span></span>', True),
    ("scale-tiny", '<span style="display:inline-block;transform:scale(.035)">{m}</span>', False),
    ("scale-x-tiny", '<span style="display:inline-block;transform:scaleX(.02)">{m}</span>', False),
    (
        "scale-tiny-ancestor",
        '<div style="transform:scale(.1);transform-origin:0 0"><span>{m}</span></div>',
        False,
    ),
    ("scale-half", '<span style="display:inline-block;transform:scale(.5)">{m}</span>', True),
    (
        "scale-x-large-font",
        '<span style="display:inline-block;font-size:30px;transform:scaleX(.3)">{m}</span>',
        True,
    ),
    ("rotated", '<span style="display:inline-block;transform:rotate(-12deg)">{m}</span>', True),
    (
        "svg-viewbox-tiny",
        '<svg width="500" height="24" viewBox="0 0 500000 24000"><text x="0" y="17000" font-size="1600">{m}</text></svg>',
        False,
    ),
    ("zoom-tiny", '<span style="zoom:.02">{m}</span>', False),
    ("font-2px", '<span style="font-size:2px">{m}</span>', False),
    ("svg-fill-none", '<svg width="500" height="24"><text x="0" y="17" fill="none">{m}</text></svg>', False),
    ("svg-fill-white", '<svg width="500" height="24"><text x="0" y="17" fill="#fff">{m}</text></svg>', False),
    ("svg-text", '<svg width="500" height="24"><text x="0" y="17" fill="#000">{m}</text></svg>', True),
    ("details-closed", "<details><summary>More</summary>{m}</details>", False),
    ("details-closed-block", "<details><summary>More</summary><p>{m}</p></details>", False),
    ("details-open", "<details open><summary>More</summary>{m}</details>", True),
    ("canvas-fallback", '<canvas width="100" height="20">{m}</canvas>', False),
    ("content-visibility-hidden", '<div style="content-visibility:hidden">{m}</div>', False),
    (
        "content-visibility-inline",
        '<div style="content-visibility:hidden;display:inline-block">{m}</div>',
        False,
    ),
    ("hidden-until-found", '<div hidden="until-found" style="display:inline-block">{m}</div>', False),
    (
        "inset-shadow-white",
        '<div style="background:#000"><span style="color:#fff;box-shadow:inset 0 0 0 100px #fff">{m}</span></div>',
        False,
    ),
    (
        "one-colour-gradient",
        '<div style="background:#000"><span style="color:#fff;background:linear-gradient(#fff,#fff)">{m}</span></div>',
        False,
    ),
    ("white-on-black", '<div style="background:#000"><span style="color:#fff">{m}</span></div>', True),
    (
        "mask-transparent",
        '<span style="display:inline-block;-webkit-mask-image:linear-gradient(transparent,transparent);'
        'mask-image:linear-gradient(transparent,transparent)">{m}</span>',
        False,
    ),
    ("blur", '<span style="filter:blur(20px)">{m}</span>', False),
    # a blend mode mixes with the background painted behind; with none painted, with nothing
    (
        "blend-screen-black",
        '<div style="background:#fff"><span style="color:#000;mix-blend-mode:screen">{m}</span></div>',
        False,
    ),
    (
        "blend-difference-white",
        '<div style="background:#fff"><span style="color:#fff;mix-blend-mode:difference">{m}</span></div>',
        True,
    ),
    ("blend-screen-no-backdrop", '<span style="color:#000;mix-blend-mode:screen">{m}</span>', True),
    # a filter changes what it covers: the letters alone, or the letters and their background
    ("invert-black", '<span style="color:#000;filter:invert(1)">{m}</span>', False),
    ("invert-white", '<span style="color:#fff;filter:invert(1)">{m}</span>', True),
    (
        "invert-box",
        '<div style="background:#fff;filter:invert(1)"><span style="color:#000">{m}</span></div>',
        True,
    ),
    ("shadow-only", '<span style="color:transparent;text-shadow:0 0 0 #000">{m}</span>', True),
    ("shadow-far-away", '<span style="color:transparent;text-shadow:0 -900px 0 #000">{m}</span>', False),
    (
        "stroke-only",
        '<span style="-webkit-text-fill-color:transparent;-webkit-text-stroke:1px #000">{m}</span>',
        True,
    ),
    ("stroke-on-white", '<span style="color:#fff;-webkit-text-stroke:1px #b00">{m}</span>', True),
    (
        "gradient-text",
        '<span style="color:transparent;background:linear-gradient(90deg,#b00,#600);'
        '-webkit-background-clip:text;background-clip:text">{m}</span>',
        True,
    ),
]


def _on(background: str, style: str) -> str:
    """A row: the marker in a span styled ``style`` on a box painted ``background``."""
    return f'<div style="background:{background}"><span style="{style}">{{m}}</span></div>'


# Text painted into its background by a colour effect, each beside a look-alike a person sees:
# (case, the body hiding the marker, the body of its look-alike). What is painted is worked out from
# the whole filter list, every box-shadow, every blend mode and the backgrounds (translucent ones
# too) behind the letters, not from a list of names.
PAIRS: list[tuple[str, str, str]] = [
    # filters: each function of the list in turn (grayscale, sepia, hue-rotate, invert …)
    (
        "filter-grayscale",
        _on("#363636", "color:#f00;filter:grayscale(1)"),
        _on("#363636", "color:#0f0;filter:grayscale(1)"),
    ),
    (
        "filter-hue-rotate",
        _on("#006d6d", "color:#f00;filter:hue-rotate(180deg)"),
        _on("#fff", "color:#f00;filter:hue-rotate(180deg)"),
    ),
    (
        "filter-sepia",
        _on("#ffffef", "color:#fff;filter:sepia(1)"),
        _on("#ffffef", "color:#00f;filter:sepia(1)"),
    ),
    (
        "filter-chain",
        _on("#363636", "color:#0ff;filter:invert(1) grayscale(1)"),
        _on("#363636", "color:#f0f;filter:invert(1) grayscale(1)"),
    ),
    (
        "filter-drop-shadow",
        _on("#fff", "color:#fff;filter:drop-shadow(1px 1px 0 #fff)"),
        _on("#fff", "color:#fff;filter:drop-shadow(1px 1px 0 #000)"),
    ),
    # blend modes: the colour each mode paints from the letters and what lies behind them
    (
        "blend-overlay",
        _on("#000", "color:#fff;mix-blend-mode:overlay"),
        _on("#888", "color:#000;mix-blend-mode:overlay"),
    ),
    (
        "blend-color-burn",
        _on("#fff", "color:#000;mix-blend-mode:color-burn"),
        _on("#888", "color:#000;mix-blend-mode:color-burn"),
    ),
    (
        "blend-color-dodge",
        _on("#000", "color:#fff;mix-blend-mode:color-dodge"),
        _on("#444", "color:#fff;mix-blend-mode:color-dodge"),
    ),
    (
        "blend-hard-light",
        _on("#000", "color:#777;mix-blend-mode:hard-light"),
        _on("#000", "color:#fff;mix-blend-mode:hard-light"),
    ),
    (
        "blend-soft-light",
        _on("#000", "color:#fff;mix-blend-mode:soft-light"),
        _on("#404040", "color:#fff;mix-blend-mode:soft-light"),
    ),
    (
        "blend-color",
        _on("#000", "color:#f00;mix-blend-mode:color"),
        _on("#888", "color:#f00;mix-blend-mode:color"),
    ),
    (
        "blend-plus-lighter",
        _on("#fff", "color:#000;mix-blend-mode:plus-lighter"),
        _on("#000", "color:#fff;mix-blend-mode:plus-lighter"),
    ),
    # a box blended onto what is behind it takes its letters with it
    (
        "blend-box",
        '<div style="background:#000"><div style="background:#fff;mix-blend-mode:multiply">'
        '<span style="color:#f00">{m}</span></div></div>',
        '<div style="background:#888"><div style="background:#fff;mix-blend-mode:multiply">'
        '<span style="color:#f00">{m}</span></div></div>',
    ),
    # an isolated group has nothing behind it to blend with
    (
        "blend-isolation",
        '<div style="background:#fff"><div><span style="color:#000;mix-blend-mode:screen">{m}</span></div></div>',
        '<div style="background:#fff"><div style="isolation:isolate">'
        '<span style="color:#000;mix-blend-mode:screen">{m}</span></div></div>',
    ),
    # inset box-shadows: any of the list, filling the box by its spread or its offset
    (
        "shadow-second-inset",
        _on("#000", "color:#fff;box-shadow:0 0 1px #f00, inset 0 0 0 100px #fff"),
        _on("#000", "color:#fff;box-shadow:0 0 1px #f00, inset 0 0 0 1px #fff"),
    ),
    (
        "shadow-inset-offset",
        _on("#000", "color:#fff;display:inline-block;box-shadow:inset 2000px 0 #fff"),
        _on("#000", "color:#fff;display:inline-block;box-shadow:inset 2px 0 #fff"),
    ),
    (
        "shadow-inset-ancestor",
        '<div style="background:#000;box-shadow:inset 0 0 0 1px #f00, inset 0 0 0 400px #fff">'
        '<span style="color:#fff">{m}</span></div>',
        '<div style="background:#000;box-shadow:inset 0 0 0 1px #f00, inset 0 0 0 400px rgba(255,255,255,.25)">'
        '<span style="color:#fff">{m}</span></div>',
    ),
    # translucent backgrounds laid on one another
    (
        "translucent-backgrounds",
        '<div style="background:#000"><div style="background:rgba(255,255,255,.5)">'
        '<span style="color:#808080">{m}</span></div></div>',
        '<div style="background:#000"><div style="background:rgba(255,255,255,.5)">'
        '<span style="color:#fff">{m}</span></div></div>',
    ),
    # colours Chromium keeps in their own space (oklch(), lab(), color(…)) are the sRGB it paints
    (
        "colour-spaces",
        '<div style="background:oklch(0 0 0)"><span style="color:#000">{m}</span></div>',
        '<div style="background:oklch(0 0 0)"><span style="color:oklch(1 0 0)">{m}</span></div>',
    ),
]
for _case, _hidden, _seen in PAIRS:
    CASES += [(_case, _hidden, False), (f"{_case}-seen", _seen, True)]

# A backdrop-filter changes what lies behind the letters, not the letters. On a page of its own that
# fits the view: a full-page capture now and then draws the backdrop unfiltered (a person never sees
# that; the capture resizes the view), so Chromium's pixels are taken from the view.
BACKDROP: list[tuple[str, str, bool]] = [
    (
        "backdrop-filter",
        '<div style="background:#fff"><span style="color:#000;backdrop-filter:invert(1)">{m}</span></div>',
        False,
    ),
    (
        "backdrop-filter-seen",
        '<div style="background:#fff"><span style="color:#fff;backdrop-filter:invert(1)">{m}</span></div>',
        True,
    ),
]


def marker(case: str) -> str:
    return f"MARK {case} END"


def cases_page(cases: list[tuple[str, str, bool]] = CASES) -> str:
    rows = "\n".join(
        f'<div class="row" id="row-{case}">{body.format(m=marker(case))}</div>' for case, body, _ in cases
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>Cases</title><style>'
        "body{font:16px sans-serif;color:#000;margin:10px}"
        ".row{height:44px;position:relative;overflow:hidden;margin:0 0 8px}"
        f"</style></head><body><h1>Cases</h1>\n{rows}\n</body></html>"
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingSite]:
    root: Path = tmp_path_factory.mktemp("redteam2")
    (root / "pages").mkdir()
    for name, text in (
        ("queue.html", QUEUE),
        ("nested.html", NESTED),
        ("cases.html", cases_page()),
        ("backdrop.html", cases_page(BACKDROP)),
    ):
        (root / "pages" / name).write_text(text, encoding="utf-8")
    yield from serve("127.0.0.1", root)


def open_page(
    make_session: SessionFactory, pages: RecordingSite, name: str, **kw: Any
) -> tuple[BrowserSession, Observation]:
    session = make_session(base_url=pages.url, **kw)
    result = session.goto(pages.page(name))
    assert result.ok, result.render()
    return session, result.observation


def log(session: BrowserSession) -> str:
    return str(session.run(lambda page: page.evaluate("document.getElementById('log').textContent")))


# ------------------------------------------------------------------ A: twins that start alike
def test_alike_items_re_sorted_after_the_render_are_refused_with_where_they_now_sit(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session, obs = open_page(make_session, pages, "queue.html")
    approve = [el.index for el in obs.elements if el.name == "Approve"]
    release = [el.index for el in obs.elements if el.name == "Release"]
    assert len(approve) == 2 and len(release) == 2, obs.render()
    assert re.search(r"INV-101 from Contoso — 1,200\.00 EUR \[\d+\] Approve", obs.text), obs.text
    for index, was, now in ((approve[0], "INV-101", "INV-102"), (release[0], "PO 4471", "PO 4472")):
        obs = session.observe()
        session.run(lambda page: page.evaluate("resort()"))  # the live queue re-sorts: same signature
        result = session.act([Click(index=index)], observation_id=obs.id)
        message = result.ran[0].message if result.ran else ""
        assert not result.ok and "no longer the one observed" in message, result.render()
        # where it sits now and where it sat, quoted from where the items differ
        now_at, was_at = message.index("now sits by"), message.index("(was by")
        assert now in message[now_at:was_at] and was in message[was_at:], message
        session.run(lambda page: page.evaluate("resort()"))  # back as rendered
    assert log(session) == ""  # neither the 98,000.00 EUR invoice nor PO 4472 was acted on
    obs = session.observe()  # seen again: the numbers mean what they show
    result = session.act([Click(index=approve[0])], observation_id=obs.id)
    assert result.ok and log(session) == "INV-101;", result.render()


# ------------------------------------------------------------------ B: a control inside the control
def test_a_click_another_control_inside_the_element_would_take_is_stopped_and_fails(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session, obs = open_page(make_session, pages, "nested.html", human=AutoApproveHuman())
    pay = next(el.index for el in obs.elements if el.name == "Mark BILL-1 paid")
    result = session.act([Click(index=pay)], observation_id=obs.id)
    message = result.ran[0].message if result.ran else ""
    assert not result.ok and "another control inside it (input.ghost" in message, result.render()
    assert "nothing was clicked" in message
    # nothing was sent: not the other form (the click's real target), nor this one (not clicked)
    assert [h.path for h in pages.posts()] == [], pages.posts()
    # the same on an ARIA button: the form's submit button inside it does not take the click
    obs = session.observe()
    archive = next(el.index for el in obs.elements if el.name == "Archive BILL-1")
    result = session.act([Click(index=archive)], observation_id=obs.id)
    assert not result.ok and "another control inside it" in result.ran[0].message, result.render()
    assert [h.path for h in pages.posts()] == [] and log(session) == ""
    # with the page's extra controls gone, the button submits its own form
    session.run(lambda page: page.evaluate("document.querySelectorAll('.ghost').forEach((g) => g.remove())"))
    obs = session.observe()
    pay = next(el.index for el in obs.elements if el.name == "Mark BILL-1 paid")
    result = session.act([Click(index=pay)], observation_id=obs.id)
    assert result.ok and [h.path for h in pages.posts()] == ["/record/bill-1"], result.render()


# ------------------------------------------------------------------ C: what a person sees
@pytest.fixture(scope="module")
def rendered(pages: RecordingSite, browser_runtime: BrowserRuntime) -> Iterator[str]:
    """The cases page's text as the model is shown it (observed once for all the cases)."""
    policy = Policy(PolicyConfig.for_url(pages.url), ScriptedHuman())
    session = BrowserSession(None, policy=policy, runtime=browser_runtime)
    session.start()
    try:
        obs = session.goto(pages.page("cases.html")).observation
        assert obs.text_truncated == 0 and marker("plain") in obs.text, obs.render()
        yield obs.text
    finally:
        session.close()


@pytest.mark.parametrize(("case", "body", "seen"), CASES, ids=[c[0] for c in CASES])
def test_the_render_holds_the_text_a_person_sees_and_no_other(
    rendered: str, case: str, body: str, seen: bool
) -> None:
    assert (marker(case) in rendered) is seen


@pytest.mark.parametrize("case", [c[0] for c in PAIRS])
def test_text_a_colour_effect_paints_into_its_background_is_not_rendered_and_its_look_alike_is(
    rendered: str, case: str
) -> None:
    """Each pair is on the cases page (and so judged by Chromium's pixels below too)."""
    assert marker(case) not in rendered, case
    assert marker(f"{case}-seen") in rendered, case


# Wrap each marker's text in an element that hides its letters and keeps the layout as it is
# (visibility: hidden lays the words out and paints nothing of them; the boxes around stay).
HIDE_MARKERS = r"""(prefix) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const found = [];
  while (walker.nextNode()) if (walker.currentNode.data.includes(prefix)) found.push(walker.currentNode);
  for (const n of found) {
    const svg = n.parentElement instanceof SVGElement;
    const w = svg ? document.createElementNS('http://www.w3.org/2000/svg', 'tspan') : document.createElement('span');
    w.setAttribute('style', 'visibility:hidden');
    n.parentNode.insertBefore(w, n);
    w.appendChild(n);
  }
  return found.length;
}"""
ROWS = """() => Array.from(document.querySelectorAll('.row'), (r) => {
  const b = r.getBoundingClientRect();
  return [r.id.slice(4), Math.round(b.left + scrollX), Math.round(b.top + scrollY), Math.round(b.width), Math.round(b.height)];
})"""


def chromium_sees(
    session: BrowserSession, cases: list[tuple[str, str, bool]] = CASES, full_page: bool = True
) -> dict[str, bool]:
    """Whether Chromium draws each marker readably: the page is drawn with and without the marker's
    letters; where they were, at least 20 pixels change by 60 of 255 or more, over at least 3 px of
    height and 0.8 px of width a letter (smaller is specks, not words)."""

    def shot() -> Any:
        png = session.run(lambda page: page.screenshot(full_page=full_page, animations="disabled"))
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)

    rows = session.run(lambda page: page.evaluate(ROWS))
    before = shot()
    assert session.run(lambda page: page.evaluate(HIDE_MARKERS, "MARK ")) == len(cases)
    after = shot()
    seen = {}
    for case, x, y, w, h in rows:
        diff = np.abs(before[y : y + h, x : x + w] - after[y : y + h, x : x + w]).max(axis=2)
        ys, xs = np.nonzero(diff >= 60)
        seen[case] = bool(
            len(ys) >= 20
            and ys.max() - ys.min() + 1 >= 3
            and xs.max() - xs.min() + 1 >= 0.8 * len(marker(case))
        )
    return seen


def test_the_cases_are_what_chromium_draws(make_session: SessionFactory, pages: RecordingSite) -> None:
    """The cases above are checked against Chromium's own drawing: where it draws the marker
    readably, a person sees it; where it draws nothing there, or specks, or the background's colour,
    they do not."""
    session, _ = open_page(make_session, pages, "cases.html")
    drawn = chromium_sees(session)
    assert set(drawn) == {case for case, _, _ in CASES}
    assert [case for case, _, seen in CASES if drawn[case] is not seen] == []


def test_text_a_backdrop_filter_paints_like_its_letters_is_not_rendered_and_its_look_alike_is(
    make_session: SessionFactory, pages: RecordingSite
) -> None:
    session, obs = open_page(make_session, pages, "backdrop.html")
    assert marker("backdrop-filter") not in obs.text, obs.text
    assert marker("backdrop-filter-seen") in obs.text, obs.text
    # as Chromium draws them in the view
    assert chromium_sees(session, BACKDROP, full_page=False) == {case: seen for case, _, seen in BACKDROP}
