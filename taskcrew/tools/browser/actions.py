"""Run one action against the page. Runs on the browser thread, inside ``BrowserSession.act``.

Each action checks the element's state right before acting (fast failure instead of a 30-second
Playwright wait), predicts whether it would submit a form, passes any submission through the policy
gate (which may ask the human) and only then touches the page. Failures raise ``ActionFailed`` with a
message for the agent.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from taskcrew.approvals.authority import PASSWORD_BOX
from taskcrew.tools.browser.clicks import ClickMissed, verified_click
from taskcrew.tools.browser.config import BrowserConfig
from taskcrew.tools.browser.models import (
    Action,
    Back,
    BoxScroll,
    Click,
    DismissModal,
    Drag,
    Hover,
    Navigate,
    Press,
    Scroll,
    Select,
    SelectText,
    SetChecked,
    Type,
    Wait,
)
from taskcrew.tools.browser.network import NetworkGuard
from taskcrew.tools.browser.perception import ElementRef, Snapshot, isolated, isolated_on
from taskcrew.tools.human import FieldValue
from taskcrew.tools.policy import Policy, Submission
from taskcrew.tools.vault import PLACEHOLDER_RE, TypingTarget, UnknownSecretError, Vault

if TYPE_CHECKING:
    from playwright.sync_api import ElementHandle, Locator, Page

FILL_TYPES = frozenset({"date", "datetime-local", "month", "week", "time", "color", "range"})
FILL_FORMATS = {
    "date": (r"\d{4,}-\d\d-\d\d", "YYYY-MM-DD", "2026-03-05"),
    "datetime-local": (
        r"\d{4,}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?",
        "YYYY-MM-DDTHH:MM",
        "2026-03-05T09:30",
    ),
    "month": (r"\d{4,}-\d\d", "YYYY-MM", "2026-03"),
    "week": (r"\d{4,}-W\d\d", "YYYY-Www", "2026-W10"),
    "time": (r"\d\d:\d\d(:\d\d(\.\d{1,3})?)?", "HH:MM (24-hour)", "09:30"),
    "color": (r"#[0-9a-fA-F]{6}", "#rrggbb", "#1a2b3c"),
    "range": (r"-?\d+(\.\d+)?", "a number", "42"),
}
"""The one format a browser's own date/time/colour/range field takes (its value is never shown in the
user's locale): any other text would leave the field empty, so it is refused before the field is touched."""
KEYED_CHARS = 200
LOOK_MS = 5000.0
"""How long a look at the page's text may take (``pageText``): a page too busy to answer is not waited
for until the call limit."""
"""Longer text is inserted in one step except its last characters, which are typed as key presses."""
READ_VALUE_JS = (
    "(el) => el.isContentEditable ? el.innerText : ('value' in el ? String(el.value) : el.textContent)"
)
# The read-back after typing lets the page's own reactions to the keys run first (handlers that
# rewrite or empty the field from a timer; the browser runs input events ahead of timers).
SETTLED_VALUE_JS = (
    "async (el) => { for (let i = 0; i < 2; i++) await new Promise((r) => setTimeout(r, 0));"
    " return (" + READ_VALUE_JS + ")(el); }"
)
SELECT_TEXT_JS = """(el, text) => {
  const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes = []; let all = '';
  for (let n = w.nextNode(); n; n = w.nextNode()) { nodes.push([n, all.length]); all += n.data; }
  const start = text ? all.indexOf(text) : 0;
  if (start < 0 || !all.length) return null;
  const end = text ? start + text.length : all.length;
  const at = (pos) => { for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= pos) return [nodes[i][0], pos - nodes[i][1]]; return [nodes[0][0], 0]; };
  const r = document.createRange();
  const [sn, so] = at(start); const [en, eo] = at(end);
  r.setStart(sn, so); r.setEnd(en, Math.min(eo, en.data.length));
  const rects = Array.from(r.getClientRects()).filter((x) => x.width > 0);
  if (!rects.length) return null;
  const a = rects[0], b = rects[rects.length - 1];
  return { x1: a.left + 1, y1: (a.top + a.bottom) / 2, x2: b.right - 1, y2: (b.top + b.bottom) / 2, want: all.slice(start, end) };
}"""
FORCE_SELECTION_JS = """(el, text) => {
  const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes = []; let all = '';
  for (let n = w.nextNode(); n; n = w.nextNode()) { nodes.push([n, all.length]); all += n.data; }
  const start = text ? all.indexOf(text) : 0; const end = text ? start + text.length : all.length;
  const at = (pos) => { for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= pos) return [nodes[i][0], pos - nodes[i][1]]; return [nodes[0][0], 0]; };
  const r = document.createRange(); const [sn, so] = at(start); const [en, eo] = at(end);
  r.setStart(sn, so); r.setEnd(en, eo);
  const sel = getSelection(); sel.removeAllRanges(); sel.addRange(r);
  el.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }));
  return sel.toString();
}"""


def _position(info: dict[str, Any]) -> dict[str, float] | None:
    """Where to aim inside the element (None: its centre)."""
    point = info.get("point")
    return None if info.get("centre") or not point else {"x": point["x"], "y": point["y"]}


def _loose(text: str) -> str:
    """Letters and digits only: a field that formats what it is given (spaces, dashes) still matches."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


class ActionFailed(Exception):
    """A recoverable failure, reported to the agent as text."""


def _stale(index: int, reason: str) -> ActionFailed:
    """The element the selector finds is not the one the model was shown (see ``preflight``)."""
    return ActionFailed(
        f"element [{index}] is no longer the one observed: {reason}; nothing was done — observe again"
    )


@dataclass
class ActEnv:
    page: Page
    snapshot: Snapshot
    policy: Policy
    vault: Vault
    guard: NetworkGuard
    config: BrowserConfig
    human_wait: Callable[[], AbstractContextManager[Any]]
    switch_back: Callable[[], str | None]
    settle: Callable[[], None] = lambda: None
    """Wait until the page has settled (DOM quiet, images and fonts loaded, animations done; bounded)."""


class ActionExecutor:
    def __init__(self, env: ActEnv) -> None:
        self.env = env
        self.timeout = env.config.action_timeout_ms

    def run(self, action: Action) -> str:
        match action:
            case Click(index=i):
                return self.click(i)
            case Type():
                return self.type(action)
            case Select(index=i, option=o, mode=m):
                return self.select(i, o, m)
            case SetChecked(index=i, action=kind):
                return self.set_checked(i, kind == "check")
            case Scroll():
                return self.scroll(action)
            case Navigate(url=u):
                return self.navigate(u)
            case Back():
                return self.back()
            case Wait():
                return self.wait(action)
            case Press(key=k, index=i):
                return self.press(k, i)
            case DismissModal():
                return self.dismiss_modal()
            case Hover(index=i):
                return self.hover(i)
            case Drag():
                return self.drag(action)
            case SelectText(index=i, text=t):
                return self.select_text(i, t)
        raise ActionFailed(f"unknown action {action!r}")

    # ------------------------------------------------------------ element helpers
    def _locate(self, index: int) -> tuple[ElementRef, Locator]:
        snap = self.env.snapshot
        ref = snap.refs.get(index)
        if ref is None:
            raise ActionFailed(
                f"there is no element [{index}] in observation #{snap.observation.id}; "
                "use a number from the latest observation"
            )
        root: Any = self.env.page
        for frame_selector in ref.frames:
            root = root.frame_locator(frame_selector)
        locator = root.locator(ref.selector)
        count = locator.count()
        if count == 0:
            raise ActionFailed(f"element [{index}] is no longer on the page; observe again")
        if count > 1:
            raise ActionFailed(
                f"element [{index}] no longer identifies one element ({count} match); observe again"
            )
        return ref, locator

    def _preflight(
        self, ref: ElementRef, locator: Locator, kind: str | None = None, key: str = ""
    ) -> dict[str, Any]:
        info: dict[str, Any] = isolated(
            locator, "preflight", {"kind": kind, "key": key, "expect": ref.ident}, timeout=self.timeout
        )
        i = ref.index
        if info.get("state") == "stale":  # another row's control (re-sorted, recycled) or renamed
            raise _stale(i, str(info.get("stale")))
        if ref.captcha or info.get("captcha"):
            raise ActionFailed(
                f"element [{i}] belongs to a CAPTCHA; CAPTCHAs are not operated by the agent — report it to the human"
            )
        state = info.get("state")
        if state == "gone":
            raise ActionFailed(f"element [{i}] is no longer on the page; observe again")
        if state == "disabled":
            raise ActionFailed(f"element [{i}] is disabled")
        if state == "occluded":
            raise ActionFailed(
                f"element [{i}] is covered by {info.get('occludedBy') or 'another element'}; "
                "dismiss that first (dismiss_modal) or scroll"
            )
        if state in ("offscreen_above", "offscreen_below"):
            raise ActionFailed(
                f"element [{i}] could not be scrolled into view (it is hidden in a closed container?)"
            )
        return info

    def _gate(self, submission: dict[str, Any] | None, page_url: str) -> None:
        """Pass a predicted form submission through the policy; arm the network layer if allowed."""
        if not submission:
            return
        if "invalid" in submission:
            raise ActionFailed(
                "not submitted: the form has invalid fields — " + "; ".join(submission["invalid"])
            )
        vault = self.env.vault
        # The person is shown, the rules judge and the key binds exactly what is sent: only a vault
        # secret is masked, as its placeholder (``redact_stored``; a guess is not a secret). A value
        # in a password-type box that is not a vault secret (the model typed it, or the page put it
        # there) is shown like any other and noted, and the rules flag it (``PASSWORD_BOX``); the
        # page's own is a hidden value of the run from now on (``_hide_boxed``), so every other record
        # of the send (its result, the trace, the report) masks it.
        redact = vault.redact_stored
        raw = [(f["name"], f["value"]) for f in submission["fields"]]
        point = submission.get("clickPoint")  # an image button's click point: where, not what
        clicked_at = {f"{point}x", f"{point}y"} if point is not None else set()
        shown: list[FieldValue] = []
        for f in submission["fields"]:
            value, label = redact(f["value"]), None
            note = (
                "where the image button is clicked, not data: sent as the point clicked"
                if f["name"] in clicked_at
                else None
            )
            if f.get("password") and value and not vault.is_stored_placeholder(value):
                note = PASSWORD_BOX
                self._hide_boxed(f["value"])
            elif f.get("label"):  # a chosen option: what is sent, then its text; the text alone as
                label = redact(f["label"])  # its label (readers never take the value apart)
                value = f"{value} ({label})"
            choice = bool(f.get("choice"))  # a checkbox group's or a multi-select's value
            shown.append(
                FieldValue(name=redact(f["name"]), value=value, label=label, note=note, choice=choice)
            )
        sub = Submission(
            origin="form",
            method=submission["method"],
            url=redact(submission["action"]),
            fields=shown,
            page_url=redact(page_url),
            summary=redact(submission.get("summary", "")),
            login_form=bool(submission.get("login")),
            sent=[(redact(n), redact(v)) for n, v in raw],
        )
        before = getattr(self.env.policy, "before_approval", None)  # a durable run keeps a screenshot
        if before is not None and self.env.policy.changes_data(submission["method"], submission["action"]):
            before(self.env.page)
        with self.env.human_wait():
            decision = self.env.policy.submission(sub)
        if not decision.permitted:
            raise ActionFailed(decision.message())
        if self.env.policy.changes_data(submission["method"], submission["action"]):
            labels = {f.name: f.label for f in shown if f.label}  # the chosen options' text, as approved
            self.env.guard.arm(
                submission["method"], submission["action"], raw, click_point=point, labels=labels
            )

    def _click_at(self, locator: Locator, info: dict[str, Any]) -> None:
        locator.click(timeout=self.timeout, position=_position(info))  # type: ignore[arg-type]

    def _aimed(self, ref: ElementRef, locator: Locator, info: dict[str, Any]) -> dict[str, Any]:
        """Hover the element's point and look again: a page that changes on hover (an icon whose
        hover image swaps in, a menu that opens) gets to settle before the click is aimed. A hover
        that cannot finish in time (a busy page, a loaded machine) only loses that chance: the click
        and its own checks still run."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            locator.hover(timeout=self.timeout, position=_position(info))  # type: ignore[arg-type]
        except PlaywrightTimeout:
            return info
        again: dict[str, Any] = isolated(locator, "preflight", {"expect": ref.ident}, timeout=self.timeout)
        if again.get("state") == "interactable" and again.get("point") == info.get("point"):
            return info
        self.env.settle()
        return {**self._preflight(ref, locator), "submission": info.get("submission")}

    def _checked_click(self, index: int, ref: ElementRef, locator: Locator, info: dict[str, Any]) -> str:
        """Click and make sure the element received it (see ``clicks``)."""

        def hover_and_aim() -> Callable[[], None] | None:
            self.env.settle()
            if locator.count() != 1:
                return None
            try:
                aim = self._preflight(ref, locator)
                locator.hover(timeout=self.timeout, position=_position(aim))  # type: ignore[arg-type]
                self.env.settle()
                aim = self._preflight(ref, locator)
            except ActionFailed:
                return None
            return lambda: self._click_at(locator, aim)

        def still_it(handle: ElementHandle) -> None:  # before a retry: still the row's own control
            reason = isolated_on(handle, "identity", {"expect": ref.ident})
            if reason:
                raise _stale(index, str(reason))

        info = self._aimed(ref, locator, info)
        try:
            return verified_click(
                locator, lambda: self._click_at(locator, info), hover_and_aim, self.timeout, still_it
            )
        except ClickMissed as exc:
            raise ActionFailed(f"[{index}] was not clicked: {exc}") from None

    # ------------------------------------------------------------ actions
    def click(self, index: int) -> str:
        ref, locator = self._locate(index)
        element = self.env.snapshot.observation.element(index)
        if element is not None and element.href and element.href.startswith("http"):
            verdict = self.env.policy.check_url(element.href)
            if not verdict.allowed:
                decision = self.env.policy.navigation(element.href)
                raise ActionFailed(decision.message())
        info = self._preflight(ref, locator, "click")
        self._gate(info.get("submission"), info.get("url", ""))
        return self._checked_click(index, ref, locator, info)

    def type(self, action: Type) -> str:
        ref, locator = self._locate(action.index)
        info = self._preflight(ref, locator)
        if ref.field_type in ("select", "select-multiple"):
            raise ActionFailed(f"element [{action.index}] is a drop-down; use select with the option's label")
        if ref.field_type in ("checkbox", "radio"):
            raise ActionFailed(f"element [{action.index}] is a {ref.field_type}; use check or uncheck")
        if not info.get("editable"):
            raise ActionFailed(f"element [{action.index}] is a {ref.role}, not a text field")
        boxed = ref.field_type == "password"
        if info.get("readonly"):
            held = str(locator.evaluate(READ_VALUE_JS))
            if boxed:
                self._hide_boxed(held)
            held = self.env.vault.redact(held)[:80]
            raise ActionFailed(
                f"element [{action.index}] is read-only (it holds {held!r}); nothing was typed — "
                "if it belongs to a picker, click it and choose from what opens"
            )
        value = action.text
        secret = self.env.vault.has_placeholders(value)
        if secret:
            value = self._secret_value(action.text, info)
        elif ref.field_type == "password" and value and not self._echoes(value):
            # No oracle: a guess is redacted like the real value. Words the page showed before they
            # were typed are the page's own (copied from it): they stay readable where they stand.
            self.env.vault.note_guess(value)
        before = "" if action.clear else str(locator.evaluate(READ_VALUE_JS))
        if boxed:
            self._hide_boxed(before)
        echoes = self._echoes(value) if not secret else 0
        if ref.field_type in FILL_TYPES and not secret:
            pattern, fmt, example = FILL_FORMATS[ref.field_type]
            if value and not re.fullmatch(pattern, value.strip()):
                held = str(locator.evaluate(READ_VALUE_JS))
                raise ActionFailed(
                    f"element [{action.index}] is a {ref.field_type} field: it takes {fmt} (e.g. {example}); "
                    f"{value[:40]!r} was not typed and it still holds {held[:40]!r}"
                )
            value = value.strip()
        if ref.field_type in FILL_TYPES or secret:
            locator.fill(value, timeout=self.timeout)  # a secret in one step: no event carries a prefix
        else:
            # Real key events (key-driven widgets, spinners, terminals see every keystroke); very long
            # text is inserted at once except its last characters.
            if action.clear:
                locator.focus(timeout=self.timeout)
                locator.press("ControlOrMeta+a", timeout=self.timeout)
                locator.press("Backspace", timeout=self.timeout)
            else:
                locator.focus(timeout=self.timeout)
                locator.press("ControlOrMeta+End", timeout=self.timeout)
            head, keyed = value[:-KEYED_CHARS] if len(value) > KEYED_CHARS else "", value[-KEYED_CHARS:]
            if head:
                self.env.page.keyboard.insert_text(head)
            locator.press_sequentially(keyed, timeout=self.timeout + 20 * len(keyed))
        try:
            message = self._read_back(action.index, locator, before + value, secret, boxed)
        except ActionFailed:
            # A key sink (terminal, game, editor) empties its field on every key and echoes the keys
            # into the page instead: the typed text newly showing in the page's text is the read-back.
            if secret or self._echoes(value) <= echoes:
                raise
            message = f"[{action.index}] passed the keys on; the page now shows {value[:80]!r}"
        if action.enter:
            after = isolated(locator, "preflight", {"kind": "enter", "key": "Enter"})
            self._gate(after.get("submission"), after.get("url", ""))
            locator.press("Enter", timeout=self.timeout)
        return message

    def _hide_boxed(self, value: str) -> None:
        """A value the page holds in a password box, about to be quoted: a hidden value of the run
        from now on, as the page view registers it (``Perception._hide_boxed``, the same rule: one the
        page's text shows stays readable)."""
        if value and not self._echoes(value):
            self.env.vault.note_guess(value, by_page=True)

    def _echoes(self, text: str) -> int:
        """How often ``text`` shows in the page's visible text (0 for blank or very long text)."""
        if not text.strip() or len(text) > 200:
            return 0
        try:  # in the isolated world: the page's own innerText getter cannot claim the keys arrived
            return int(isolated(self.env.page.main_frame, "pageText", {"count": text}, LOOK_MS)["count"])
        except Exception:
            return 0

    def _read_back(
        self, index: int, locator: Locator, expected: str, secret: bool, boxed: bool = False
    ) -> str:
        """The field's value after typing must be what was typed; a difference is a failure. What a
        password box (``boxed``) holds instead is the page's: hidden before it is quoted."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            got = str(locator.evaluate(SETTLED_VALUE_JS, timeout=self.timeout))
        except PlaywrightError:
            return ""  # the field went away (the page reacted); nothing to compare
        got_n, want_n = got.replace("\r\n", "\n").rstrip("\n"), expected.replace("\r\n", "\n").rstrip("\n")
        if got_n == want_n:
            return ""
        if secret:
            raise ActionFailed(f"[{index}] did not take the whole value (it may limit its length or format)")
        if boxed:
            self._hide_boxed(got_n)
        if _loose(got_n) == _loose(want_n) and got_n:
            return f"the field formatted it as {self.env.vault.redact(got_n)[:120]!r}"
        shown = self.env.vault.redact(got_n)
        shown = shown if len(shown) <= 160 else shown[:100] + "…" + shown[-50:]
        raise ActionFailed(
            f"after typing, [{index}] holds {shown!r} instead of {self.env.vault.redact(want_n)[:160]!r} "
            "(the field limits, rejects or rewrites input; observe and adjust)"
        )

    def _secret_value(self, text: str, info: dict[str, Any]) -> str:
        policy, vault = self.env.policy, self.env.vault
        field_url = str(info.get("url", ""))
        verdict = policy.check_url(field_url)
        if not verdict.allowed:
            decision = policy.navigation(vault.redact(field_url), kind="typing")
            raise ActionFailed(f"secrets are only typed into pages of allowed hosts: {decision.message()}")
        names = PLACEHOLDER_RE.findall(text)
        hidden = [n for n in names if not vault.is_public(n)]
        if hidden and not PLACEHOLDER_RE.fullmatch(text.strip()):
            raise ActionFailed(
                "a secret placeholder must be the whole value of the field, with nothing around it"
            )
        where = info.get("target") or {}
        target = TypingTarget(
            name=str(where.get("name") or ""),
            type=str(where.get("type") or "text"),
            login_form=bool(where.get("login")),
            label=vault.redact(str(where.get("label") or "")),
        )
        for name in names:
            if not vault.may_type(name, field_url):
                decision = policy.typing_refused(vault.redact(field_url), name)
                raise ActionFailed(decision.message())
            refusal = vault.field_refusal(name, target)
            if refusal:
                decision = policy.typing_refused(vault.redact(field_url), name, refusal)
                raise ActionFailed(decision.message())
        try:
            value = vault.substitute(text)
        except UnknownSecretError as exc:
            raise ActionFailed(str(exc)) from None
        policy.typing_secret(vault.redact(field_url), text)
        return value

    def select(self, index: int, option: str, mode: str = "replace") -> str:
        ref, locator = self._locate(index)
        self._preflight(ref, locator)
        if ref.field_type not in ("select", "select-multiple"):
            raise ActionFailed(
                f"element [{index}] is not a drop-down (select); click it and then click the option instead"
            )
        picked = isolated(locator, "pickOption", {"option": option})
        if "value" not in picked:
            options = ", ".join(repr(o) for o in picked.get("options", []))
            raise ActionFailed(f"[{index}] has no option {option!r}; its options are: {options}")
        values = [picked["value"]]
        if mode != "replace":
            if ref.field_type != "select-multiple":
                raise ActionFailed(f"[{index}] allows one option only; use select without mode")
            current: list[str] = locator.evaluate(
                "(el) => Array.from(el.selectedOptions).map((o) => o.value)"
            )
            values = [v for v in current if v != picked["value"]]
            if mode == "add":
                values.append(picked["value"])
        element = self.env.snapshot.observation.element(index)
        hidden = element is not None and element.hidden_native
        # A native select hidden behind a custom widget cannot be clicked, but can be set (force).
        locator.select_option(value=values, timeout=self.timeout, force=hidden)
        return "set the hidden native select" if hidden else ""

    def hover(self, index: int) -> str:
        ref, locator = self._locate(index)
        info = self._preflight(ref, locator)
        locator.hover(timeout=self.timeout, position=_position(info))  # type: ignore[arg-type]
        return ""

    def _centre(self, ref: ElementRef, locator: Locator) -> tuple[float, float]:
        info = self._preflight(ref, locator)
        box = locator.bounding_box(timeout=self.timeout)
        if box is None:
            raise ActionFailed(f"element [{ref.index}] has no box on the page")
        point = info.get("point")
        if point and not info.get("centre"):
            return box["x"] + point["x"], box["y"] + point["y"]
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def drag(self, action: Drag) -> str:
        ref, locator = self._locate(action.index)
        mouse = self.env.page.mouse
        if action.to_index is not None:
            tref, tlocator = self._locate(action.to_index)
            self._centre(tref, tlocator)  # scroll the target into view first
            x1, y1 = self._centre(ref, locator)
            x2, y2 = self._centre(tref, tlocator)
            # Taking the target's place: aim past its middle in the direction of travel, as a
            # sortable list swaps an item only once the pointer crosses its middle.
            box = tlocator.bounding_box(timeout=self.timeout)
            if box is not None:
                if abs(y2 - y1) >= abs(x2 - x1) and y2 != y1:
                    y2 += (box["height"] / 4) * (1 if y2 > y1 else -1)
                elif x2 != x1:
                    x2 += (box["width"] / 4) * (1 if x2 > x1 else -1)
            vh = self.env.config.viewport_height
            if not (0 <= y1 <= vh and 0 <= y2 <= vh):
                raise ActionFailed(
                    f"[{action.index}] and [{action.to_index}] are not on screen together; scroll, or drag by an offset"
                )
        else:
            if not action.dx and not action.dy:
                raise ActionFailed("drag needs to_index or an offset (dx, dy)")
            x1, y1 = self._centre(ref, locator)
            x2, y2 = x1 + action.dx, y1 + action.dy
        mouse.move(x1, y1)
        mouse.down()
        mouse.move(x1 + (x2 - x1) / 4 + 2, y1 + (y2 - y1) / 4 + 2, steps=4)
        mouse.move(x2, y2, steps=12)
        mouse.up()
        return ""

    def select_text(self, index: int | None, text: str | None) -> str:
        frames: list[str] = []
        if index is None:
            if not text:
                raise ActionFailed("select_text needs the text to select, or an element number")
            where = "the page"
            locator = self.env.page.locator("body")
            with contextlib.suppress(Exception):
                locator.get_by_text(text).first.scroll_into_view_if_needed(timeout=self.timeout)
        else:
            ref, locator = self._locate(index)
            self._preflight(ref, locator)
            frames, where = ref.frames, f"[{index}]"
        span = locator.evaluate(SELECT_TEXT_JS, text or "")
        if span is None:
            raise ActionFailed(f"{where} does not show the text {text!r}" if text else f"{where} has no text")
        frame_box = locator.bounding_box(timeout=self.timeout)
        el_box = locator.evaluate(
            "(el) => { const r = el.getBoundingClientRect(); return {x: r.left, y: r.top}; }"
        )
        if frame_box is None:
            raise ActionFailed(f"{where} has no box on the page")
        ox, oy = frame_box["x"] - el_box["x"], frame_box["y"] - el_box["y"]  # frame offset
        mouse = self.env.page.mouse
        mouse.move(span["x1"] + ox, span["y1"] + oy)
        mouse.down()
        mouse.move(span["x2"] + ox, span["y2"] + oy, steps=8)
        mouse.up()
        selected = str(self.env.page.evaluate("() => String(getSelection())")) if not frames else ""
        if selected.strip() != span["want"].strip():
            # a drag did not select it (a draggable or a widget took the mouse): select it directly
            selected = str(locator.evaluate(FORCE_SELECTION_JS, text or ""))
        if selected.strip() != span["want"].strip():
            raise ActionFailed(f"could not select {span['want'][:80]!r} in {where}")
        return f"selected {len(span['want'])} characters"

    def set_checked(self, index: int, desired: bool) -> str:
        ref, locator = self._locate(index)
        info = self._preflight(ref, locator, "click")
        current = info.get("checked")
        if current is None:
            raise ActionFailed(f"element [{index}] is not a checkbox, radio button or switch")
        if current == desired:
            return "already " + ("checked" if desired else "unchecked")
        if not desired and ref.field_type == "radio":
            raise ActionFailed("a radio button cannot be unchecked; check another option of the group")
        self._gate(info.get("submission"), info.get("url", ""))
        note = self._checked_click(index, ref, locator, info)
        after = isolated(locator, "checkedOf")
        if after != desired:
            raise ActionFailed(f"clicking [{index}] did not change its state")
        return note

    def scroll(self, action: Scroll) -> str:
        dy = action.pages * (0.9 if action.direction == "down" else -0.9)
        if action.index is None:
            moved = isolated(self.env.page.main_frame, "scrollPage", {"dy": dy})
        else:
            _, locator = self._locate(action.index)
            moved = isolated(locator, "scrollBy", {"dy": dy})
        return _scrolled(moved, action.index)

    def navigate(self, url: str) -> str:
        page, policy, vault = self.env.page, self.env.policy, self.env.vault
        if vault.has_placeholders(url):
            raise ActionFailed("secret placeholders can only be typed into fields, not put into URLs")
        if page.url.startswith("http"):
            url = urljoin(page.url, url)
        verdict = policy.check_url(url)
        if not verdict.allowed:
            raise ActionFailed(policy.navigation(vault.redact(url)).message())
        response = page.goto(
            url, wait_until="domcontentloaded", timeout=self.env.config.navigation_timeout_ms
        )
        return f"HTTP {response.status}" if response is not None else ""

    def back(self) -> str:
        """Go back in this tab's history; say what really happened (a history entry at the same
        address, a page restored by the site's own script, a tab closed, or nothing at all)."""
        from playwright.sync_api import Error as PlaywrightError

        page = self.env.page
        before = page.url
        # the document is marked and read in the isolated world (``pageText``): a page's script can
        # neither fake its text (and have its tab closed as "unchanged") nor forge the mark
        try:
            text_before = str(isolated(page.main_frame, "pageText", {"mark": True}, LOOK_MS)["text"])
        except PlaywrightError:
            text_before = ""
        page.go_back(wait_until="domcontentloaded", timeout=self.env.config.navigation_timeout_ms)
        if page.url != before:
            return ""
        self.env.settle()
        try:
            look = isolated(page.main_frame, "pageText", {}, LOOK_MS)
            same_document, text_after = bool(look["marked"]), str(look["text"])
        except PlaywrightError:  # still navigating: a new document (or one too busy to answer)
            same_document, text_after = False, ""
        if not same_document:
            return "went back to the previous page (it has the same address); fields may hold earlier values"
        if text_after != text_before:
            return "went back: the page showed its previous state (same address; the site's own history)"
        switched = self.env.switch_back()
        if switched:
            return switched
        raise ActionFailed("there is no previous page in this tab to go back to; the page did not change")

    def wait(self, action: Wait) -> str:
        page = self.env.page
        if action.for_text:
            # Polled from here: the look runs in the isolated world (the page's innerText getter and
            # String.prototype.includes cannot fake the words nor hide them), one round-trip each;
            # at least one look, however short the wait (a look that takes a second did not see it).
            from playwright.sync_api import Error as PlaywrightError
            from playwright.sync_api import TimeoutError as PlaywrightTimeout

            args = {"text": action.for_text}
            deadline = time.monotonic() + action.seconds
            while True:
                left_ms = (deadline - time.monotonic()) * 1000
                try:
                    if isolated(page.main_frame, "textVisible", args, timeout=max(1000.0, left_ms)):
                        return "the text appeared"
                except PlaywrightTimeout:
                    pass  # the page did not answer in time: not seen
                except PlaywrightError as exc:
                    if "context was destroyed" not in str(exc) and "navigat" not in str(exc).lower():
                        raise
                left_ms = (deadline - time.monotonic()) * 1000
                if left_ms <= 0:
                    raise ActionFailed(
                        f"the text {action.for_text!r} did not appear within {action.seconds:g}s"
                    )
                page.wait_for_timeout(min(50.0, left_ms))  # a look every 50 ms
        page.wait_for_timeout(action.seconds * 1000)
        return ""

    def press(self, key: str, index: int | None) -> str:
        if index is not None:
            ref, locator = self._locate(index)
            info = self._preflight(ref, locator, "press", key)
            self._gate(info.get("submission"), info.get("url", ""))
            locator.press(key, timeout=self.timeout)
            return ""
        page = self.env.page
        submission = isolated(page.main_frame, "activeSubmission", {"key": key})
        self._gate(submission, page.url)
        page.keyboard.press(key)
        return ""

    def dismiss_modal(self) -> str:
        modals = [o for o in self.env.snapshot.observation.obstacles if o.kind == "modal"]
        if not modals:
            raise ActionFailed("no blocking modal was detected in the latest observation")
        if modals[0].index is not None:
            self.click(modals[0].index)
            return f"clicked [{modals[0].index}]"
        self.env.page.keyboard.press("Escape")
        return "pressed Escape"


def _scrolled(moved: dict[str, Any], index: int | None) -> str:
    """What a scroll moved: the page, or an inner box and where it now is (``0–200 of 900px``)."""
    if moved.get("where") == "page":
        return ""
    box = f"[{index}]" if not moved.get("where") else str(moved["where"])
    if "top" not in moved:
        return f"scrolled {box}"
    at = BoxScroll(top=moved["top"], client=moved["client"], height=moved["height"])
    end = " (at its end)" if at.top + at.client >= at.height - 2 else " (at its top)" if at.top == 0 else ""
    return f"scrolled {box}: {at.render()}{end}"
