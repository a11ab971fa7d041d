"""BrowserSession: the public Python API of the browser layer.

One browser context (its own cookies) with the policy's network guard installed, a current page,
and the latest observation. Public methods may be called from any thread: each runs as one job on
the runtime's browser thread and waits for it with a bound.

    with BrowserSession(policy=Policy(PolicyConfig.for_url(url), human)) as browser:
        obs = browser.observe()
        result = browser.act([Type(index=1, text="demo"), Click(index=3)])
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskcrew.tools.browser.actions import ActEnv, ActionExecutor, ActionFailed
from taskcrew.tools.browser.config import BrowserConfig
from taskcrew.tools.browser.models import (
    ACTIONS_ADAPTER,
    Action,
    ActionOutcome,
    ActionResult,
    Change,
    DismissModal,
    Navigate,
    Observation,
    Screenshot,
    SkippedAction,
)
from taskcrew.tools.browser.network import NetworkGuard
from taskcrew.tools.browser.perception import LISTENERS_BRIDGE_JS, Perceiver, Snapshot, isolated
from taskcrew.tools.browser.runtime import BrowserError, BrowserRuntime
from taskcrew.tools.policy import SAFE_METHODS, Policy
from taskcrew.tools.vault import Vault

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

SEEN_PAGES = 60
"""How many pages' texts a session keeps for expanding citations (three views of each)."""
BROWSER_SERVICE_DOMAINS = ("google.com", "googleapis.com", "gstatic.com", "gvt1.com", "chrome.com")
LOCKDOWN_JS = (Path(__file__).parent / "lockdown.js").read_text(encoding="utf-8")
LISTENERS_JS = (Path(__file__).parent / "listeners.js").read_text(encoding="utf-8")


class BrowserSession:
    """A browser tab the agent drives by element numbers, behind the policy gate and the vault."""

    def __init__(
        self,
        config: BrowserConfig | None = None,
        *,
        policy: Policy,
        vault: Vault | None = None,
        runtime: BrowserRuntime | None = None,
    ) -> None:
        self.config = config or (runtime.config if runtime is not None else BrowserConfig())
        self.policy = policy
        self.vault = vault if vault is not None else Vault()
        self._runtime = runtime
        self._owns_runtime = runtime is None
        self._context: BrowserContext | None = None
        self._pages: list[Page] = []
        self._snapshot: Snapshot | None = None
        self._obs_id = 0
        self._perceiver = Perceiver(self.config, policy, self.vault)
        self._guard: NetworkGuard | None = None
        self._gate_mark = 0
        self._seen: dict[str, list[str]] = {}

    # ------------------------------------------------------------ lifecycle
    def start(self) -> BrowserSession:
        if self._context is not None:
            return self
        if self._runtime is None:
            self._runtime = BrowserRuntime(self.config)
        self._runtime.start()
        self._runtime.call(self._open)
        return self

    def close(self) -> None:
        runtime = self._runtime
        if runtime is None:
            return
        if self._context is not None and runtime.running:
            with contextlib.suppress(BrowserError):
                runtime.call(self._close_context, timeout=30)
        self._context = None
        if self._owns_runtime:
            runtime.close()
            self._runtime = None

    def __enter__(self) -> BrowserSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def runtime(self) -> BrowserRuntime:
        if self._runtime is None:
            raise BrowserError("the session is not started")
        return self._runtime

    @property
    def page(self) -> Page:
        """The current Playwright page. Only usable on the browser thread (see ``run``)."""
        if not self._pages:
            raise BrowserError("the session is not started")
        return self._pages[-1]

    @property
    def latest(self) -> Observation | None:
        return self._snapshot.observation if self._snapshot else None

    def seen_text(self, url: str) -> str | None:
        """The page text (redacted, as the model was shown it) of the latest observations at ``url``
        (the fragment aside), newest first; None when this session never looked at it. Citations
        that point into a page by a few of its words are expanded from it."""
        texts = self._seen.get(url.split("#", 1)[0].rstrip("/"))
        return "\n".join(reversed(texts)) if texts else None

    def run(self, fn: Any, timeout: float | None = None) -> Any:
        """Run ``fn(page)`` on the browser thread (escape hatch for tests and tools)."""
        return self._call(lambda: fn(self.page), timeout)

    # ------------------------------------------------------------ public API
    def observe(self) -> Observation:
        """Settle briefly, then describe the current page (also makes its numbers the current ones)."""
        return self._call(self._observe_settled)

    def act(
        self, actions: Sequence[Action | dict[str, Any]], observation_id: int | None = None
    ) -> ActionResult:
        """Run actions in order until the page changes; return what ran and the fresh observation."""
        parsed = ACTIONS_ADAPTER.validate_python(list(actions))
        return self._call(lambda: self._act(parsed, observation_id))

    def goto(self, url: str) -> ActionResult:
        return self.act([Navigate(url=url)])

    def screenshot(self, path: Path, full_page: bool = False) -> Screenshot:
        """Save a PNG of the current page as evidence."""

        def shot() -> Screenshot:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(path), full_page=full_page, mask=self._secret_fields())
            return Screenshot(
                path=str(path),
                url=self.vault.redact(self.page.url),
                title=self.vault.redact(self.page.title()),
            )

        return self._call(shot)

    def _secret_fields(self) -> list[Any]:
        """Password fields, and any field holding a secret or a guess, in every frame (masked)."""
        masks: list[Any] = []
        for frame in self.page.frames:
            masks.append(frame.locator("input[type=password]"))
            fields = frame.locator("input, textarea")
            try:
                values = fields.evaluate_all("els => els.map((e) => String(e.value || ''))")
            except Exception:
                continue
            masks += [fields.nth(i) for i, v in enumerate(values) if v and self.vault.contains_secret(v)]
        return masks

    def cookies(self) -> int:
        return len(self._call(lambda: self._context.cookies() if self._context else []))

    # ------------------------------------------------------------ browser-thread internals
    def _call(self, fn: Any, timeout: float | None = None) -> Any:
        if self._context is None:
            raise BrowserError("the session is not started (call start() or use it as a context manager)")
        guard = self._guard
        assert guard is not None

        def job() -> Any:
            guard.state.reset_for_call()
            self._gate_mark = self.runtime.gatekeeper.refused_count
            result = fn()
            if guard.state.handler_errors:
                raise guard.state.handler_errors[0]
            return result

        try:
            return self.runtime.call(job, timeout)
        except BrowserError as exc:
            raise BrowserError(self.vault.redact(str(exc))) from None

    def _open(self) -> None:
        from playwright.sync_api import Error as PlaywrightError

        browser = self.runtime.browser  # with perception's isolated world (``install_engine``)
        context = browser.new_context(
            viewport={"width": self.config.viewport_width, "height": self.config.viewport_height},
            service_workers="block",
            accept_downloads=False,
        )
        # Documents are fetched and fulfilled by the network guard (to catch redirects), which makes
        # Chromium treat them as "public"; requests from them to other allowed local hosts would then
        # be refused by Local Network Access. The allow-list is the stricter rule, so grant it.
        with contextlib.suppress(PlaywrightError):
            context.grant_permissions(["local-network-access"])
        context.set_default_timeout(self.config.action_timeout_ms)
        context.set_default_navigation_timeout(self.config.navigation_timeout_ms)
        self._guard = NetworkGuard(
            self.policy, self.vault, self.runtime.human_wait, self.config.navigation_timeout_ms
        )
        self._guard.install_context(context)
        context.add_init_script(script=LOCKDOWN_JS)
        context.add_init_script(script=LISTENERS_JS)
        context.add_init_script(script=LISTENERS_BRIDGE_JS)  # after LISTENERS_JS: it reads its record
        context.on("page", self._on_page)
        self._context = context
        page = context.new_page()
        if page not in self._pages:
            self._on_page(page)

    def _on_page(self, page: Page) -> None:
        if page in self._pages:
            return
        assert self._guard is not None
        self._guard.install_page(page)
        self._pages.append(page)
        if len(self._pages) > 1:
            self._guard.state.new_pages.append(page)
        page.on("close", self._on_page_closed)

    def _on_page_closed(self, page: Page) -> None:
        if page in self._pages and len(self._pages) > 1:
            self._pages.remove(page)

    def _close_context(self) -> None:
        if self._context is not None:
            self._context.close()
        self._pages.clear()

    def _switch_back(self) -> str | None:
        if len(self._pages) < 2:
            return None
        current = self._pages.pop()
        current.close()
        return f"closed the tab; back on {self.vault.redact(self.page.url)}"

    def _settle(self, quiet_ms: int | None = None) -> None:
        from playwright.sync_api import Error as PlaywrightError

        assert self._guard is not None
        page = self.page
        deadline = time.monotonic() + self.config.settle_timeout_ms / 1000
        while time.monotonic() < deadline:
            remaining_ms = max(1.0, (deadline - time.monotonic()) * 1000)
            try:
                page.wait_for_load_state("domcontentloaded", timeout=remaining_ms)
                if self._guard.state.pending:
                    page.wait_for_timeout(25)
                    continue
                finished = self._guard.state.finished
                _quiet(page, quiet_ms or self.config.dom_quiet_ms, remaining_ms)
                # a request that finished while the page looked quiet is read and shown by the page
                # after it arrives (r.json(), then the DOM): give it a quiet window of its own
                if not self._guard.state.pending and self._guard.state.finished == finished:
                    return
            except PlaywrightError as exc:
                if "context was destroyed" in str(exc) or "navigat" in str(exc).lower():
                    continue  # a navigation happened: wait for the new document
                return

    def _observe_now(self) -> Observation:
        self._obs_id += 1
        self._snapshot = self._perceiver.observe(self.page, self._obs_id)
        obs = self._snapshot.observation
        key = obs.url.split("#", 1)[0].rstrip("/")
        shown = f"{obs.title}\n{obs.text}" if obs.title else obs.text  # the render shows the title too
        texts = [t for t in self._seen.pop(key, []) if t != shown][-2:]
        self._seen[key] = [*texts, shown]
        while len(self._seen) > SEEN_PAGES:
            self._seen.pop(next(iter(self._seen)))
        return obs

    def _observe_settled(self) -> Observation:
        self._settle()
        self._enforce_location([])
        return self._observe_now()

    def _enforce_location(self, errors: list[str]) -> None:
        """After navigation: a page that ended up off the allow-list is closed (blank)."""
        from playwright.sync_api import Error as PlaywrightError

        url = self.page.url
        if url.startswith("chrome-error://"):  # a blocked navigation's error page: step back off it
            with contextlib.suppress(PlaywrightError):
                self.page.go_back(wait_until="domcontentloaded")
            return
        verdict = self.policy.check_url(url)
        if not verdict.allowed:
            decision = self.policy.navigation(self.vault.redact(url))
            errors.append(decision.message() + " The page was closed.")
            self.page.goto("about:blank")

    def _act(self, actions: list[Action], observation_id: int | None) -> ActionResult:
        from playwright.sync_api import Error as PlaywrightError

        assert self._guard is not None
        guard = self._guard
        mark = len(self.policy.decisions)
        needs_numbers = any(
            isinstance(a, DismissModal) or getattr(a, "index", None) is not None for a in actions
        )
        if needs_numbers:
            stale = self._stale_reason(observation_id)
            if stale:
                fresh = self._observe_now()
                return self._finish(
                    ok=False,
                    ran=[],
                    skipped=[SkippedAction(action=a, reason="stale_observation") for a in actions],
                    errors=[stale],
                    before=_Before(fresh.url, fresh.title, fresh.signature),
                    mark=mark,
                )
        page = self.page
        if self._snapshot is not None and self._snapshot.observation.url == page.url:
            before = _Before(page.url, self._snapshot.observation.title, self._snapshot.observation.signature)
        else:
            before = _Before(page.url, page.title(), self._perceiver.signature(page))
        signature = before.signature
        snapshot = self._snapshot or Snapshot(observation=_blank_observation(page.url))
        ran: list[ActionOutcome] = []
        skipped: list[SkippedAction] = []
        errors: list[str] = []
        pages_before = len(self._pages)
        for i, action in enumerate(actions):
            env = ActEnv(
                page=self.page,
                snapshot=snapshot,
                policy=self.policy,
                vault=self.vault,
                guard=guard,
                config=self.config,
                human_wait=self.runtime.human_wait,
                switch_back=self._switch_back,
                settle=self._settle,
            )
            try:
                message = ActionExecutor(env).run(action)
                ran.append(ActionOutcome(action=action, ok=True, message=message))
            except ActionFailed as exc:
                ran.append(ActionOutcome(action=action, ok=False, message=str(exc)))
            except PlaywrightError as exc:
                ran.append(ActionOutcome(action=action, ok=False, message=_playwright_message(exc)))
            # Typing often starts debounced work (suggestions ~300 ms later): wait for a longer quiet,
            # unless more typing follows at once (it would restart that work anyway).
            typed = action.action == "type" and (i + 1 == len(actions) or actions[i + 1].action != "type")
            self._settle(self.config.typing_quiet_ms if typed else None)
            guard.disarm()
            if len(self._pages) != pages_before:
                note = f"a new tab opened ({self.page.url}); now working in it"
                ran[-1] = ran[-1].model_copy(
                    update={"message": " ".join(filter(None, [ran[-1].message, note]))}
                )
                pages_before = len(self._pages)
            self._enforce_location(errors)
            rest = actions[i + 1 :]
            if not ran[-1].ok:
                skipped.extend(SkippedAction(action=a, reason="earlier_failure") for a in rest)
                break
            if rest and self._perceiver.signature(self.page) != signature:
                skipped.extend(SkippedAction(action=a, reason="page_changed") for a in rest)
                break
        return self._finish(
            ok=all(r.ok for r in ran), ran=ran, skipped=skipped, errors=errors, before=before, mark=mark
        )

    def _stale_reason(self, observation_id: int | None) -> str | None:
        snap = self._snapshot
        if snap is None:
            return "no observation yet: the element numbers cannot refer to anything; use this observation"
        if observation_id is not None and observation_id != snap.observation.id:
            return (
                f"the element numbers come from observation #{observation_id}, but the latest is "
                f"#{snap.observation.id}; nothing was done — choose numbers from the observation below"
            )
        if self._perceiver.signature(self.page) != snap.observation.signature:
            return (
                f"the page changed since observation #{snap.observation.id}; nothing was done — "
                "choose numbers from the new observation below"
            )
        return None

    def _finish(
        self,
        *,
        ok: bool,
        ran: list[ActionOutcome],
        skipped: list[SkippedAction],
        errors: list[str],
        before: _Before,
        mark: int,
    ) -> ActionResult:
        assert self._guard is not None
        state = self._guard.state
        after = self._observe_now() if ran or self._snapshot is None else self._snapshot.observation
        for refused in self.runtime.gatekeeper.refused_since(self._gate_mark):
            if _browser_service(refused.target):
                continue  # Chromium's own sign-in/autofill traffic, refused but not the page's doing
            decision = self.policy.unroutable(refused.method, self.vault.redact(refused.target))
            state.blocked.append(decision)
            state.notes.append(
                f"the browser tried to send {decision.method} {decision.url} around the network guard; refused"
            )
        errors = [*errors, *state.notes]
        http_status = None
        if state.main_status is not None:
            http_status, method, url = state.main_status
            if http_status >= 400:
                errors.append(f"HTTP {http_status} from {method} {url}")
        if any(isinstance(r.action, DismissModal) and r.ok for r in ran) and any(
            o.kind == "modal" for o in after.obstacles
        ):
            errors.append("a modal is still covering the page")
        failed_http = http_status is not None and http_status >= 400
        # A blocked image or script from another host does not fail an action; a blocked navigation
        # or a stopped data-changing request does.
        serious = [
            d
            for d in state.blocked
            if (d.kind != "request" or d.method not in SAFE_METHODS) and d.method != "CONNECT"
        ]
        submissions = list(state.submissions)
        not_saved = [s for s in submissions if s.result != "saved"]
        ok = ok and bool(ran) and not failed_http and not serious and not errors and not not_saved
        result = ActionResult(
            ok=ok,
            ran=ran,
            skipped=skipped,
            change=Change(
                url_before=before.url,
                url_after=after.url,
                title_before=before.title,
                title_after=after.title,
                signature_changed=before.signature != after.signature,
            ),
            http_status=http_status,
            errors=errors,
            dialogs=list(state.dialogs),
            policy=self.policy.decisions[mark:],
            submissions=submissions,
            observation=after,
        )
        return self.vault.redact_obj(result)


@dataclass
class _Before:
    url: str
    title: str
    signature: str


def _quiet(page: Page, quiet_ms: float, max_ms: float) -> None:
    """Wait until the page is quiet for ``quiet_ms`` (no DOM mutation, no change of the body's size,
    nothing loading or animating: perception.js ``settleProbe``), at most ``max_ms``.

    The probe is synchronous and runs in the isolated world (one round-trip per look); the clock, the
    bound and the pauses between looks are here, so a page that replaces its own timers, observers or
    clock can neither stall the wait nor fake its end. Quiet is counted from the call's start (the
    probe's observer may be older: a mutation before the start does not count). A page too busy to
    answer within the bound is read as it is; other Playwright errors (a navigation, a closed page)
    propagate."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    poll = max(10.0, min(quiet_ms, 25.0))
    start = time.monotonic()
    while True:
        elapsed = (time.monotonic() - start) * 1000
        check = elapsed >= quiet_ms  # only then can it be quiet enough to ask what still loads
        try:
            look = isolated(
                page.main_frame,
                "settleProbe",
                {"quietMs": quiet_ms, "check": check},
                timeout=max(1.0, max_ms - elapsed),
            )
        except PlaywrightTimeout:
            return
        elapsed = (time.monotonic() - start) * 1000
        quiet_for = min(float(look["msSinceMutation"]), elapsed)
        if check and quiet_for >= quiet_ms and not look["busy"]:
            return
        if elapsed >= max_ms:
            return  # a page that never settles is read as it is now
        pause = quiet_ms - quiet_for if quiet_for < quiet_ms else poll if check else 0.0
        if pause > 0:
            page.wait_for_timeout(min(pause, max_ms - elapsed))


def _browser_service(target: str) -> bool:
    host = target.split("://")[-1].split("/")[0].rsplit(":", 1)[0].lower()
    return any(host == d or host.endswith("." + d) for d in BROWSER_SERVICE_DOMAINS)


def _blank_observation(url: str) -> Observation:
    return Observation(id=0, url=url, title="", text="", elements=[], signature="")


def _playwright_message(exc: BaseException) -> str:
    text = str(exc)
    first = text.splitlines()[0] if text else type(exc).__name__
    if "Timeout" in type(exc).__name__ or "Timeout" in first:
        return f"timed out: {first}"
    return first
