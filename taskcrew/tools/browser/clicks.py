"""Clicks that are checked: a click is done only when its element received it.

A page can move, swap or hide an element between the moment a click is aimed and the moment the
mouse button goes down and up (an icon whose hover image is still loading, a sprite that collapses on
``:active``, a re-render on hover); the click then lands on whatever lies below and nothing happens.
So each click is watched where it must arrive: a listener on the element itself (it hears the click
at the element, or bubbling up from a child) records that it arrived, and a capture-phase listener
on the window records whether the ``click`` event's path held the element (or one of its labels),
and what got it otherwise. A click on its way to the element that a page's listener stopped (a
capture listener on the document, a child that stops propagation) did not arrive: it is not done.

A click that missed (landed on something else) is retried once the way that works on such pages —
hover, let the page settle, aim again, click — and then by the element's own activation
(``el.click()``). A click the page itself stopped on its way is retried once by hovering and
clicking, never by activation (that would go round the page's own decision); one stopped by a part
of the element (a child with a listener of its own) is not retried: that part may have acted, and a
second click could act twice. A press that made the page replace the
element (a re-render on mousedown or on a field's blur) before the click came is not done either:
nothing is retried, the agent observes again. A click that lands on another control inside the
element (a submit button of another form a page laid over it, a link inside a button) would act for
that control, not for the element: it is stopped at the window before the page or that control gets
it, and the action fails without a retry. If nothing reached it, the action fails and says why:
it is never reported as done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import ElementHandle, Locator

PROBE_START_JS = """(el) => {
  const key = Symbol.for('taskcrew.clickprobe');
  if (window[key]) window[key].off();
  const labels = el.labels ? Array.from(el.labels) : [];
  // click: the click arrived at the element (at it, or bubbling up from a child; or the element's
  // own listener stopped it there); seen: a click whose path held the element was dispatched;
  // stoppedBy: what stopped such a click before it arrived.
  const rec = { click: false, seen: false, down: false, other: '', goneAtClick: false, stoppedBy: '', inside: false, decoy: '' };
  const name = (t) => {
    if (t === window) return 'the window';
    if (t === document) return 'the document';
    if (!t || t.nodeType !== 1) return 'nothing';
    let s = t.localName + (t.id ? '#' + t.id : (t.classList && t.classList.length ? '.' + Array.from(t.classList).slice(0, 2).join('.') : ''));
    const txt = (t.getAttribute('aria-label') || t.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 24);
    return txt ? `${s} "${txt}"` : s;
  };
  // Who stops the click on its way: the event's own stop methods are wrapped for this one event.
  const watch = (ev) => {
    for (const m of ['stopPropagation', 'stopImmediatePropagation']) {
      const orig = ev[m];
      Object.defineProperty(ev, m, { configurable: true, value: function () {
        const at = ev.currentTarget;
        if (at === el) rec.click = true;  // the element's own listener got it
        else if (!rec.click && !rec.stoppedBy) {
          rec.stoppedBy = name(at);
          rec.inside = at && at.nodeType === 1 && el.contains(at);  // a part of the control took it
        }
        return orig.call(ev);
      } });
    }
  };
  // Another control inside the element, which a click landing on it activates in its place: any
  // control inside a native one (a link, button, field, label or summary holds none in valid HTML;
  // a label's own field aside), and a form's submit button inside any element.
  const ACTS = 'a[href], area[href], button, input:not([type="hidden"]), select, textarea, label, summary';
  const own = el.matches(ACTS);
  const submits = (x) => (x.tagName === 'BUTTON' || x.tagName === 'INPUT') && ['submit', 'image'].includes(x.type) && !!x.form;
  const decoyIn = (path) => {
    for (const x of path) {
      if (x === el) return null;
      if (x.nodeType === 1 && el.contains(x) && x !== el.control && (own ? x.matches(ACTS) : submits(x))) return x;
    }
    return null;
  };
  const on = (ev) => {
    const path = ev.composedPath();
    const hit = path.includes(el) || labels.some((l) => path.includes(l));
    const decoy = decoyIn(path);
    if (decoy) {  // stopped here: neither that control nor the page's listeners get the press or click
      ev.preventDefault(); ev.stopImmediatePropagation();
      if (ev.type === 'click') rec.decoy = name(decoy);
      return;
    }
    if (ev.type === 'click') {
      if (hit) { rec.seen = true; watch(ev); }
      else if (!rec.other) { rec.other = name(path[0]); rec.goneAtClick = !el.isConnected; }
    }
    else if (hit && ev.type === 'mousedown') rec.down = true;
  };
  const arrived = () => { rec.click = true; };
  const TYPES = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click'];
  for (const t of TYPES) window.addEventListener(t, on, true);
  el.addEventListener('click', arrived);
  rec.off = () => {
    for (const t of TYPES) window.removeEventListener(t, on, true);
    el.removeEventListener('click', arrived);
  };
  Object.defineProperty(window, key, { value: rec, configurable: true, enumerable: false });
}"""
PROBE_READ_JS = """(el) => {
  const rec = window[Symbol.for('taskcrew.clickprobe')];
  if (!rec) return null;
  rec.off();
  delete window[Symbol.for('taskcrew.clickprobe')];
  return { click: rec.click, seen: rec.seen, down: rec.down, other: rec.other, goneAtClick: rec.goneAtClick,
           stoppedBy: rec.stoppedBy, inside: rec.inside, decoy: rec.decoy, gone: !el.isConnected };
}"""
# A new element where the pressed one was: the selector matches an element of the same kind and text.
REPLACED_JS = """(els, old) => {
  const text = (e) => (e.getAttribute('aria-label') || e.textContent || e.value || '').replace(/\\s+/g, ' ').trim();
  return els.some((e) => e !== old && e.isConnected && e.localName === old.localName && text(e) === text(old));
}"""


_ACTIVATED = "activated the element directly"


class ClickMissed(Exception):
    """No way of clicking reached the element; the message says what got the click instead."""


def _reached(got: dict[str, Any] | None) -> bool:
    """The element received the click, or was pressed and removed by its own reaction to the press
    (a close button that goes on mousedown) before the click event came. A click that came its way
    but was stopped before it arrived did not reach it."""
    if got is None:  # the document went away: the click navigated
        return True
    if got["click"]:
        return True
    if got.get("seen"):
        return False
    return bool(got["down"] and (got["goneAtClick"] or not got["other"]))


def _replaced(locator: Locator, handle: ElementHandle, got: dict[str, Any] | None) -> bool:
    """Pressed, then gone — and the page put a new element of the same kind and words where it was
    (a re-render on mousedown or on a field's blur): the click went to neither."""
    from playwright.sync_api import Error as PlaywrightError

    if got is None or got["click"] or not got["down"] or not (got.get("gone") or got["goneAtClick"]):
        return False
    try:
        return bool(locator.evaluate_all(REPLACED_JS, handle))
    except PlaywrightError:
        return False


def _read(handle: ElementHandle) -> dict[str, Any] | None:
    from playwright.sync_api import Error as PlaywrightError

    try:
        got: dict[str, Any] | None = handle.evaluate(PROBE_READ_JS)
    except PlaywrightError:
        return None  # navigated, or the frame went away
    return got


def _activate(handle: ElementHandle) -> None:
    if not handle.evaluate("(el) => { if (!el.isConnected) return false; el.click(); return true; }"):
        raise ClickMissed("the page replaced the element after the first click; observe again")


def verified_click(
    locator: Locator,
    click: Callable[[], None],
    hover_and_aim: Callable[[], Callable[[], None] | None],
    timeout: float,
    still_it: Callable[[ElementHandle], None] | None = None,
) -> str:
    """Click with ``click``; if the element did not receive it, hover, settle and aim again
    (``hover_and_aim`` returns the new click, or None when it cannot aim), then activate the element itself. Returns a note for
    the agent ("" when the first click landed); raises ``ClickMissed`` when nothing reached it.
    ``still_it(handle)`` runs before each retry and raises when the element is no longer the one
    meant (its row or name changed): a retry never clicks another row's control."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    handle = locator.element_handle(timeout=timeout)
    if handle is None:
        raise ClickMissed("the element is no longer on the page; observe again")
    missed: list[str] = []
    stopped: list[str] = []
    ways: list[tuple[str, Callable[[], None] | None]] = [
        ("", click),
        ("clicked again after hovering it", None),
        (_ACTIVATED, lambda: _activate(handle)),
    ]
    for note, way in ways:
        if stopped and note == _ACTIVATED:  # the page's own listener stopped it: activating the
            break  # element would go round that listener, so it is not tried
        if still_it is not None and way is not click:
            still_it(handle)
        try:
            if way is None:
                way = hover_and_aim()
                if way is None:  # after hovering it cannot be aimed at: activate it instead
                    continue
            handle.evaluate(PROBE_START_JS)
        except PlaywrightError:
            raise ClickMissed("the element went away before it could be clicked; observe again") from None
        timed_out: PlaywrightError | None = None
        try:
            way()
        except PlaywrightTimeout as exc:  # on a loaded machine the click's own wait for the page it
            timed_out = exc  # opened can outrun the timeout: the probe says whether it landed
        except PlaywrightError as exc:
            if "Target" in str(exc) and "closed" in str(exc):
                return note  # the click closed the page or its frame
            raise
        got = _read(handle)
        if got is not None and got.get("decoy"):
            raise ClickMissed(
                f"the click landed on another control inside it ({got['decoy']}), which would have acted "
                "in its place; it was stopped there and nothing was clicked — observe again"
            )
        if _replaced(locator, handle, got):
            raise ClickMissed(
                "the page replaced it with a new one when it was pressed (it re-rendered), and the click "
                "reached neither; nothing was clicked — observe again, and click it again if still needed"
            )
        if _reached(got):
            if not note:
                return ""
            return f"the click landed on {', then '.join(missed)}; {note}"
        if timed_out is not None:
            raise timed_out
        if got is not None and got.get("seen") and not got["click"]:
            if got.get("inside"):  # its own part's listener ran: a second click could act twice
                raise ClickMissed(
                    f"a part of it ({got.get('stoppedBy')}) took the click and stopped it there, so the "
                    "element itself did not get it; that part may have acted: observe the page before "
                    "clicking it again"
                )
            stopped.append(got.get("stoppedBy") or "a listener of the page")
        missed.append((got or {}).get("other") or "nothing")
    if stopped:
        raise ClickMissed(
            f"the page stopped the click before it reached it (stopped by {', then '.join(dict.fromkeys(stopped))}; "
            "tried a click, and hover then click); nothing was clicked — observe again"
        )
    raise ClickMissed(
        f"the click did not reach it: it landed on {', then '.join(dict.fromkeys(missed))} (tried a "
        "click, hover then click, and "
        "activating the element); nothing was clicked — observe again"
    )
