"""Clicks that are checked: a click is done only when its element received it.

A page can move, swap or hide an element between the moment a click is aimed and the moment the
mouse button goes down and up (an icon whose hover image is still loading, a sprite that collapses on
``:active``, a re-render on hover); the click then lands on whatever lies below and nothing happens.
So each click is watched: a capture-phase listener in the element's frame records whether the
``click`` event's path held the element (or one of its labels), and what got it otherwise. A click
that missed is retried once the way that works on such pages — hover, let the page settle, aim
again, click — and then by the element's own activation (``el.click()``). If none reached it, the
action fails with what got the click instead: it is never reported as done.
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
  const rec = { click: false, down: false, other: '', goneAtClick: false };
  const name = (t) => {
    if (!t || t.nodeType !== 1) return 'nothing';
    let s = t.localName + (t.id ? '#' + t.id : (t.classList && t.classList.length ? '.' + Array.from(t.classList).slice(0, 2).join('.') : ''));
    const txt = (t.getAttribute('aria-label') || t.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 24);
    return txt ? `${s} "${txt}"` : s;
  };
  const on = (ev) => {
    const path = ev.composedPath();
    const hit = path.includes(el) || labels.some((l) => path.includes(l));
    if (ev.type === 'click') {
      if (hit) rec.click = true;
      else if (!rec.other) { rec.other = name(path[0]); rec.goneAtClick = !el.isConnected; }
    }
    else if (hit) rec.down = true;
  };
  window.addEventListener('mousedown', on, true);
  window.addEventListener('click', on, true);
  rec.off = () => { window.removeEventListener('mousedown', on, true); window.removeEventListener('click', on, true); };
  Object.defineProperty(window, key, { value: rec, configurable: true, enumerable: false });
}"""
PROBE_READ_JS = """(el) => {
  const rec = window[Symbol.for('taskcrew.clickprobe')];
  if (!rec) return null;
  rec.off();
  delete window[Symbol.for('taskcrew.clickprobe')];
  return { click: rec.click, down: rec.down, other: rec.other, goneAtClick: rec.goneAtClick };
}"""


class ClickMissed(Exception):
    """No way of clicking reached the element; the message says what got the click instead."""


def _reached(got: dict[str, Any] | None) -> bool:
    """The element received the click, or was pressed and removed by its own reaction to the press
    (a close button that goes on mousedown) before the click event came."""
    if got is None:  # the document went away: the click navigated
        return True
    return bool(got["click"] or (got["down"] and (got["goneAtClick"] or not got["other"])))


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
) -> str:
    """Click with ``click``; if the element did not receive it, hover, settle and aim again
    (``hover_and_aim`` returns the new click, or None when it cannot aim), then activate the element itself. Returns a note for
    the agent ("" when the first click landed); raises ``ClickMissed`` when nothing reached it."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    handle = locator.element_handle(timeout=timeout)
    if handle is None:
        raise ClickMissed("the element is no longer on the page; observe again")
    missed: list[str] = []
    ways: list[tuple[str, Callable[[], None] | None]] = [
        ("", click),
        ("clicked again after hovering it", None),
        ("activated the element directly", lambda: _activate(handle)),
    ]
    for note, way in ways:
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
        if _reached(got):
            if not note:
                return ""
            return f"the click landed on {', then '.join(missed)}; {note}"
        if timed_out is not None:
            raise timed_out
        missed.append((got or {}).get("other") or "nothing")
    raise ClickMissed(
        f"the click did not reach it: it landed on {', then '.join(dict.fromkeys(missed))} (tried a "
        "click, hover then click, and "
        "activating the element); nothing was clicked — observe again"
    )
