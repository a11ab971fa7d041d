"""observe(): run perception.js in every frame and assemble a typed, redacted Observation.

Runs on the browser thread. The Observation holds redacted data only; the raw selectors and the
frames needed to act on an element stay in ``ElementRef`` inside the ``Snapshot``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from taskcrew.tools.browser.config import BrowserConfig
from taskcrew.tools.browser.models import (
    BoxScroll,
    Element,
    ElementState,
    FieldInfo,
    FormTarget,
    Observation,
    Obstacle,
    ScrollInfo,
    SelectOption,
    WindowEdge,
)
from taskcrew.tools.policy import Policy
from taskcrew.tools.vault import Vault

if TYPE_CHECKING:
    from playwright.sync_api import ElementHandle, Frame, Locator, Page, Playwright


@cache
def perception_js() -> str:
    return files("taskcrew.tools.browser").joinpath("perception.js").read_text(encoding="utf-8")


# ------------------------------------------------------------------ the isolated world
# perception.js must see what a person sees. In the page's own JavaScript world a hostile page can
# replace what it calls (getComputedStyle, getBoundingClientRect, getImageData, Array.prototype.map,
# JSON.stringify …) and make hidden words look shown or shown words look hidden. So it runs as a
# Playwright selector engine registered with ``content_script=True``: Playwright runs such an engine
# in its utility world, an isolated world of every frame (same-origin and out-of-process iframes
# alike) that shares the DOM and the CSS but none of the page's JavaScript objects. The engine does
# one perception.js call per query and hands the JSON result back as the text of a new element that
# is never attached to the document (the page cannot reach it), read by ``text_content`` (which
# Playwright also evaluates in the utility world). All of perception.js runs there, the waits too: an
# engine call is synchronous, so the settle wait and the wait for text poll a probe (``settleProbe``,
# ``textVisible``) from Python, which keeps the clock and the bound; the page's timers, observers and
# clock are never used (a page that replaces them can neither stall an action nor fake "settled").
ENGINE = "taskcrew-perception"
ISOLATED_TIMEOUT_MS = 60_000.0
"""The bound on one observation call in a frame (page.evaluate had none; the call bound is 120 s)."""

_ENGINE_JS = """(() => {
  // perception.js reads window[Symbol.for('taskcrew.listeners')] (what listeners.js records in the
  // page's world). This world has a window of its own: it gets a stand-in that asks the page's world
  // through a DOM event, which LISTENERS_BRIDGE_JS answers by cancelling it.
  const KEY = Symbol.for('taskcrew.listeners');
  const listened = {
    has: (el) => {
      try {
        return !el.dispatchEvent(new Event('taskcrew-listened', { cancelable: true, composed: true }));
      } catch (e) { return false; }
    },
  };
  return {
    queryAll(root, body) {
      const at = body.indexOf(':');
      let out;
      try {
        const args = JSON.parse(decodeURIComponent(body.slice(at + 1)));
        if (!window[KEY]) Object.defineProperty(window, KEY, { value: listened });
        const perception = (__PERCEPTION__);
        const fn = perception[body.slice(0, at)];
        out = { value: root.nodeType === Node.ELEMENT_NODE ? fn(root, args) : fn(args) };
      } catch (e) {
        out = { error: e && e.name ? e.name + ': ' + e.message : String(e) };
      }
      const result = document.createElement('output');
      result.textContent = JSON.stringify(out);
      return [result];
    },
  };
})()"""

LISTENERS_BRIDGE_JS = """// Installed in every frame before the page's own scripts, after listeners.js (context.add_init_script).
// perception.js runs in an isolated world that cannot see listeners.js's record nor an onclick a
// script set; it dispatches a 'taskcrew-listened' event on the element and this answers by cancelling
// it. Stopped here, first on the window, so the page's own listeners never see it. Nothing it calls
// can be the page's: every builtin (the onclick getters too: a page that redefined
// HTMLElement.prototype.onclick would be called in the middle of perception's walk, and could show
// words only while perception looks) is taken before any page script runs. (The answer only says
// "a script listens for clicks here".)
(() => {
  const marked = window[Symbol.for('taskcrew.listeners')] || null;
  const call = Function.prototype.call;
  const has = call.bind(WeakSet.prototype.has);
  const pathOf = call.bind(Event.prototype.composedPath);
  const stop = call.bind(Event.prototype.stopImmediatePropagation);
  const answer = call.bind(Event.prototype.preventDefault);
  const listen = call.bind(EventTarget.prototype.addEventListener);
  const onclicks = [];
  for (const kind of [window.HTMLElement, window.SVGElement, window.MathMLElement]) {
    const d = kind && Object.getOwnPropertyDescriptor(kind.prototype, 'onclick');
    if (d && d.get) onclicks.push(call.bind(d.get));
  }
  const onclick = (el) => {  // the native getter that applies to el (the others throw)
    for (const get of onclicks) {
      try { return get(el); } catch (err) { /* not this kind of element */ }
    }
    return null;
  };
  listen(window, 'taskcrew-listened', (e) => {
    stop(e);
    try {
      const el = pathOf(e)[0];
      if ((marked && has(marked, el)) || typeof onclick(el) === 'function') answer(e);
    } catch (err) { /* no answer: not listened */ }
  }, true);
})();
"""


@cache
def engine_js() -> str:
    return _ENGINE_JS.replace("__PERCEPTION__", perception_js())


def install_engine(playwright: Playwright) -> None:
    """Register the perception engine with ``playwright`` (per Playwright instance, for its contexts
    made later and those open now). Idempotent."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        playwright.selectors.register(ENGINE, engine_js(), content_script=True)
    except PlaywrightError as exc:
        if "already registered" not in str(exc):
            raise


def _selector(name: str, args: dict[str, Any] | None) -> str:
    return f"{ENGINE}={name}:{quote(json.dumps(args or {}), safe='')}"


def _result(text: str | None, name: str) -> Any:
    from playwright.sync_api import Error as PlaywrightError

    out = json.loads(text or "{}")
    if "error" in out:
        raise PlaywrightError(f"perception.js {name}: {out['error']}")
    return out.get("value")


def isolated(
    target: Frame | Locator, name: str, args: dict[str, Any] | None = None, timeout: float | None = None
) -> Any:
    """Call perception.js's ``name`` in the isolated world: on a Frame, ``name(args)`` over its
    document; on a Locator, ``name(element, args)`` on the one element it resolves to (it waits for
    it like ``locator.evaluate``). Errors raise Playwright's Error."""
    text = target.locator(_selector(name, args)).text_content(timeout=timeout)
    return _result(text, name)


def isolated_on(handle: ElementHandle, name: str, args: dict[str, Any] | None = None) -> Any:
    """``name(element, args)`` in the isolated world on the element of ``handle``."""
    from playwright.sync_api import Error as PlaywrightError

    found = handle.query_selector(_selector(name, args))
    if found is None:
        raise PlaywrightError(f"perception.js {name}: the element is gone")
    try:
        return _result(found.text_content(), name)
    finally:
        found.dispose()


@dataclass
class ElementRef:
    """What the session needs to act on element ``index`` (unredacted, never shown to a model)."""

    index: int
    selector: str
    frames: list[str]
    role: str
    tag: str
    field_type: str | None
    captcha: bool = False
    ident: dict[str, Any] | None = None
    """What the model was shown of the element (its row key; its name where perception.js can check
    it again): an action checks it first and refuses an element that is no longer the one observed."""


@dataclass
class Snapshot:
    observation: Observation
    refs: dict[int, ElementRef] = field(default_factory=dict)
    unverified: list[int] = field(default_factory=list)
    """Indices whose selector did not match exactly one element (should stay empty)."""


@dataclass
class _FrameVisit:
    frame: Frame
    chain: list[str]
    inherited: dict[str, Any] | None


_Y_MARK = re.compile("\u0001(-?\\d+)\u0002")
_FRAME_MARK = re.compile("\u0003([^\u0003]*)\u0003")
_INDEX = re.compile(r"\[(\d+)\]")
_INDENT = "\u0004"  # perception.js marks each level of a nested list item with one
Line = tuple[int | None, str]


def _lines(text: str) -> list[Line]:
    """Split perception.js text into cleaned lines, each with its document y (or None)."""
    out: list[Line] = []
    for raw in text.split("\n"):
        ys = _Y_MARK.findall(raw)
        line = re.sub(r"[ \t\u00a0]+", " ", _Y_MARK.sub("", raw)).strip()
        indent = "  " * (len(line) - len(line.lstrip(_INDENT)))  # a nested list item's depth
        line = line.lstrip(_INDENT).strip()
        if not line or line in ("|", "-"):
            continue
        line = indent + line
        line = re.sub(r"^\|\s*", "| ", line)
        if out and out[-1][1] == line and not _INDEX.search(line):
            continue
        out.append((int(ys[0]) if ys else None, line))
    return out


def _clean_text(text: str, limit: int) -> tuple[str, int]:
    joined = "\n".join(t for _, t in _lines(text))
    if len(joined) <= limit:
        return joined, 0
    return joined[:limit].rsplit("\n", 1)[0], len(joined) - limit


def _edge(lines: list[Line], rows: dict[int, str], more: list[str] | None = None) -> WindowEdge | None:
    """What lies outside the window on one side; ``rows`` maps element numbers to their row keys,
    ``more`` are the keys of that side's controls the text did not reach."""
    more = more or []
    if not lines and not more:
        return None
    heads = [t.lstrip("# ")[:60] for _, t in lines if t.startswith("#")]
    keys = [rows[int(i)] for _, t in lines for i in _INDEX.findall(t) if int(i) in rows]
    return WindowEdge(
        chars=sum(len(t) + 1 for _, t in lines),
        elements=sum(len(_INDEX.findall(t)) for _, t in lines) + len(more),
        headings=heads[-3:] if heads else [],
        rows=list(dict.fromkeys([*keys, *more])),
    )


def window(lines: list[Line], top: int, height: int, limit: int) -> tuple[int, int]:
    """The slice [a, b) of ``lines`` to show: what is on screen first, then up to a quarter of the
    budget above it, then below it, then more above if room is left. Short pages are shown whole."""
    if sum(len(t) + 1 for _, t in lines) <= limit:
        return 0, len(lines)
    ys: list[int] = []
    last = 0
    for y, _ in lines:
        last = y if y is not None else last
        ys.append(last)
    bottom = top + max(height, 1)
    on_screen = [i for i, y in enumerate(ys) if top <= y < bottom]
    if on_screen:
        a, b = on_screen[0], on_screen[0] + 1
    else:  # nothing starts on screen (one tall block): the last line above it
        before = [i for i, y in enumerate(ys) if y < top]
        a = before[-1] if before else 0
        b = a + 1
    used = len(lines[a][1]) + 1

    def fits(i: int) -> bool:
        return used + len(lines[i][1]) + 1 <= limit

    while b < len(lines) and b - 1 < (on_screen[-1] if on_screen else a) and fits(b):
        used += len(lines[b][1]) + 1
        b += 1
    above_budget = used + limit // 4
    while a > 0 and fits(a - 1) and used + len(lines[a - 1][1]) + 1 <= above_budget:
        a -= 1
        used += len(lines[a][1]) + 1
    while b < len(lines) and fits(b):
        used += len(lines[b][1]) + 1
        b += 1
    while a > 0 and fits(a - 1):
        a -= 1
        used += len(lines[a][1]) + 1
    return a, b


def _assemble(texts: dict[tuple[str, ...], str], chain: tuple[str, ...] = ()) -> str:
    """A frame's text with each child frame's text placed where its iframe sits."""
    own = texts.get(chain, "")

    def child(m: re.Match[str]) -> str:
        key = (*chain, m.group(1))
        if key not in texts:
            return ""
        inner = _Y_MARK.sub("", _assemble(texts, key))
        return f"[frame {m.group(1)}]\n{inner}\n[end of frame]"

    return _FRAME_MARK.sub(child, own)


class Perceiver:
    """Turns the current page into a Snapshot (Observation + refs)."""

    def __init__(self, config: BrowserConfig, policy: Policy, vault: Vault) -> None:
        self.config = config
        self.policy = policy
        self.vault = vault

    # ------------------------------------------------------------ frames
    def _frames(self, page: Page) -> list[_FrameVisit]:
        from playwright.sync_api import Error as PlaywrightError

        visits: list[_FrameVisit] = []

        def visit(frame: Frame, chain: list[str], inherited: dict[str, Any] | None) -> None:
            visits.append(_FrameVisit(frame, chain, inherited))
            for child in frame.child_frames:
                if child.is_detached() or not self.policy.check_url(child.url or "about:blank").allowed:
                    continue
                try:
                    handle = child.frame_element()
                    info = isolated_on(handle, "frameInfo")
                except PlaywrightError:
                    continue
                if not info or not info.get("visible"):
                    continue
                state = info.get("state")
                child_inherited = inherited or (info if state != "interactable" else None)
                visit(child, [*chain, info["selector"]], child_inherited)

        visit(page.main_frame, [], None)
        return visits

    # ------------------------------------------------------------ signature
    def signature(self, page: Page) -> str:
        parts: list[str] = [page.url]
        for v in self._frames(page):
            try:
                res = isolated(v.frame, "observe", {"signatureOnly": True}, ISOLATED_TIMEOUT_MS)
            except Exception:
                continue
            parts.append("F:" + "/".join(v.chain))
            parts.extend(res["signature"])
        return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]

    # ------------------------------------------------------------ observe
    def observe(self, page: Page, obs_id: int) -> Snapshot:
        refs: dict[int, ElementRef] = {}
        elements: list[Element] = []
        obstacles: list[Obstacle] = []
        messages: list[str] = []
        sig_parts: list[str] = [page.url]
        texts: dict[tuple[str, ...], str] = {}
        errors: list[str] = []
        unverified: list[int] = []
        hidden: list[str] = []  # the values the page holds in password boxes
        scroll = ScrollInfo()
        title = ""
        next_index = 1
        for visit in self._frames(page):
            try:
                res = isolated(
                    visit.frame,
                    "observe",
                    {"start": next_index, "maxText": self.config.max_text_chars},
                    ISOLATED_TIMEOUT_MS,
                )
            except Exception as exc:  # a frame navigated away mid-observation, or a script error
                where = "the page" if not visit.chain else f"frame {visit.chain[-1]}"
                message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                errors.append(f"{where} could not be read: {message[:200]}")
                continue
            if not visit.chain:
                title = res["title"]
                scroll = ScrollInfo(**res["scroll"])
            sig_parts.append("F:" + "/".join(visit.chain))
            sig_parts.extend(res["signature"])
            texts[tuple(visit.chain)] = res["text"]
            where = "" if not visit.chain else f" in frame {visit.chain[-1]}"
            errors.extend(e + where for e in res.get("errors", []))
            messages.extend(res["messages"])
            obstacles.extend(Obstacle(**ob) for ob in res["obstacles"])
            for rec in res["elements"]:
                field = rec.get("field") or {}
                if field.get("type") == "password" and field.get("value"):
                    hidden.append(str(field["value"]))
                el = self._element(rec, visit)
                elements.append(el)
                if rec.get("matches") != 1:
                    unverified.append(el.index)
                refs[el.index] = ElementRef(
                    index=el.index,
                    selector=rec["selector"],
                    frames=list(visit.chain),
                    role=el.role,
                    tag=el.tag,
                    field_type=el.field.type if el.field else None,
                    captcha=bool(rec.get("captcha")),
                    ident=rec.get("ident"),
                )
            next_index += len(res["elements"])
        lines = _lines(_assemble(texts))
        self._hide_boxed(hidden, "\n".join(t for _, t in lines))
        a, b = window(lines, scroll.y, scroll.viewport, self.config.max_text_chars)
        text = "\n".join(t for _, t in lines[a:b])
        truncated = sum(len(t) + 1 for _, t in lines) - len(text) - 1 if (a, b) != (0, len(lines)) else 0
        rows = {el.index: el.row for el in elements if el.row}
        above_more: list[str] = []
        below_more: list[str] = []
        if (a, b) != (0, len(lines)):
            outside = {int(i) for _, t in lines[:a] + lines[b:] for i in _INDEX.findall(t)}
            inside = {int(i) for i in _INDEX.findall(text)}
            kept = []
            for el in elements:
                if el.index in inside or (
                    el.index not in outside and not (el.row and el.state.startswith("offscreen"))
                ):
                    kept.append(el)
                elif el.index not in outside:  # beyond the text read: summarised by its row's key
                    (above_more if el.state == "offscreen_above" else below_more).append(str(el.row))
            elements = kept
        omitted = max(0, len(elements) - self.config.max_elements)
        observation = Observation(
            id=obs_id,
            url=page.url,
            title=title,
            text=text,
            elements=elements[: self.config.max_elements],
            signature=hashlib.sha1("\n".join(sig_parts).encode()).hexdigest()[:16],
            obstacles=_dedupe_obstacles(obstacles),
            messages=list(dict.fromkeys(messages))[:10],
            scroll=scroll,
            text_truncated=max(0, truncated),
            elements_omitted=omitted,
            above=_edge(lines[:a], rows, above_more),
            below=_edge(lines[b:], rows, below_more),
            errors=errors[:10],
        )
        return Snapshot(observation=self.vault.redact_obj(observation), refs=refs, unverified=unverified)

    def _hide_boxed(self, values: list[str], text: str) -> None:
        """A value the page holds in a password box reads ``[filled, hidden]`` here, and is a hidden
        value of the run from now on (``Vault.note_guess``): whatever later quotes it — an action's
        message, the record of a send, the trace, the report, a model's prompt — shows a placeholder;
        only what a person approves shows it as sent. A value the page's text shows is no secret from
        the model (a one-time word to copy): it stays readable, as a guess copied from the page does."""
        for value in values:
            if value not in text:
                self.vault.note_guess(value, by_page=True)

    def _element(self, rec: dict[str, Any], visit: _FrameVisit) -> Element:
        state: ElementState = rec.get("state", "interactable")
        occluded_by = rec.get("occludedBy")
        inherited = visit.inherited
        if inherited and state != "disabled":
            state = inherited["state"]
            occluded_by = inherited.get("occludedBy")
        field_info = self._field(rec.get("field"))
        submits = FormTarget(**rec["submits"]) if rec.get("submits") else None
        return Element(
            index=rec["index"],
            role=rec["role"],
            tag=rec["tag"],
            name=rec.get("name") or "",
            selector=rec["selector"],
            frames=list(visit.chain),
            state=state,
            occluded_by=occluded_by,
            field=field_info,
            submits=submits,
            href=rec.get("href"),
            states=rec.get("states") or [],
            hidden_native=bool(rec.get("behind")),
            row=rec.get("row"),
            resets=bool(rec.get("resets")),
            scroll=BoxScroll(**rec["scroll"]) if rec.get("scroll") else None,
        )

    def _field(self, raw: dict[str, Any] | None) -> FieldInfo | None:
        if not raw:
            return None
        value = raw.get("value")
        if raw.get("type") == "password" and value:
            value = "[filled, hidden]"  # the same for a secret and a guess: no redaction oracle
        options = None
        if raw.get("options") is not None:
            options = [SelectOption(**o) for o in raw["options"]]
            more = int(raw.get("optionCount", 0)) - len(options)
            if more > 0:
                options.append(SelectOption(label=f"… {more} more options", value=""))
        return FieldInfo(
            name=raw.get("name"),
            type=raw.get("type") or "text",
            value=value,
            checked=raw.get("checked"),
            options=options,
            required=bool(raw.get("required")),
            readonly=bool(raw.get("readonly")),
            placeholder=raw.get("placeholder"),
            invalid=raw.get("invalid"),
            min=raw.get("min"),
            max=raw.get("max"),
            step=raw.get("step"),
        )


def _dedupe_obstacles(obstacles: list[Obstacle]) -> list[Obstacle]:
    seen: set[tuple[str, str]] = set()
    out: list[Obstacle] = []
    for ob in obstacles:
        key = (ob.kind, ob.description)
        if key not in seen:
            seen.add(key)
            out.append(ob)
    return out
