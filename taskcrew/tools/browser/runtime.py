"""One dedicated thread that owns Playwright (sync API) and one Chromium process.

Playwright's sync API must stay on the thread that started it, while CrewAI calls tools from changing
worker threads. ``BrowserRuntime`` starts a thread that owns Playwright and the browser; ``call``
submits a function to that thread and waits for its result, with a bound. Several sessions (browser
contexts) can share one runtime — the tests share one per module.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from taskcrew.tools.browser.config import SYSTEM_CHROMIUM_FLAGS, BrowserConfig, lockdown_flags
from taskcrew.tools.browser.features import feature_switches
from taskcrew.tools.browser.gatekeeper import Gatekeeper
from taskcrew.tools.browser.perception import install_engine

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

T = TypeVar("T")
PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = (
    "No Chromium found. Install one with `uv run playwright install chromium` "
    "(or on Debian/Ubuntu `apt-get install chromium`), or point TASKCREW_CHROMIUM "
    "(or BrowserConfig.executable_path) at a Chromium/Chrome binary."
)


def driver_in_own_session() -> None:
    """Start Playwright's driver (node) in a session of its own, as Playwright already starts Chromium.

    A terminal's Ctrl-C goes to its whole foreground process group. The driver, left in ours, died of
    it at once (node restores the default SIGINT action whatever it inherits), so a worker's first
    Ctrl-C, meant as "finish at the next checkpoint", failed the running leg with "Playwright
    connection closed" instead. Out of the group, the driver ends with its stdin: when this process
    closes it or dies. Playwright offers no option for this: its transport's module-level ``asyncio``
    is wrapped so its one subprocess call asks for a new session. Idempotent."""
    from playwright._impl import transport

    if not isinstance(getattr(transport, "asyncio", None), _OwnSessionAsyncio):
        transport.asyncio = _OwnSessionAsyncio()  # type: ignore[assignment]


class _OwnSessionAsyncio:
    """``asyncio`` for Playwright's transport, with subprocesses started in a new session."""

    def __getattr__(self, name: str) -> Any:
        import asyncio

        return getattr(asyncio, name)

    @staticmethod
    async def create_subprocess_exec(*args: Any, **kwargs: Any) -> Any:
        import asyncio

        return await asyncio.create_subprocess_exec(*args, start_new_session=True, **kwargs)


class BrowserError(RuntimeError):
    """The browser could not be started or stopped responding (not a page-level failure)."""


class BrowserNotFoundError(BrowserError):
    pass


class LaunchPlan(BaseModel):
    source: Literal["configured", "playwright", "path"]
    executable_path: str | None
    args: list[str]
    ignore_default_args: list[str] = []
    """Playwright's switches left out (its ``--disable-features``, passed merged in ``args``)."""

    def launch_options(self) -> dict[str, Any]:
        """Keyword arguments for Playwright's ``chromium.launch``."""
        return {
            "executable_path": self.executable_path,
            "args": self.args,
            "ignore_default_args": self.ignore_default_args,
        }


def configured_executable(config: BrowserConfig) -> Path | None:
    if config.executable_path is not None:
        return config.executable_path
    env = os.environ.get("TASKCREW_CHROMIUM")
    return Path(env) if env else None


def plan_launch(config: BrowserConfig, *, playwright_build: bool) -> LaunchPlan:
    """Pick a Chromium. A configured path (``config.executable_path``, then ``TASKCREW_CHROMIUM``)
    wins when set; otherwise Playwright's own build (``playwright_build``: try it first); otherwise
    chromium / google-chrome on PATH; otherwise a clear error that says how to install one."""
    plan = _choose(config, playwright_build)
    plan.args, plan.ignore_default_args = feature_switches(plan.args)
    return plan


def _choose(config: BrowserConfig, playwright_build: bool) -> LaunchPlan:
    configured = configured_executable(config)
    if configured is not None:
        if not configured.is_file():
            raise BrowserNotFoundError(f"The configured Chromium {configured} does not exist. {INSTALL_HINT}")
        return LaunchPlan(
            source="configured",
            executable_path=str(configured),
            args=[*SYSTEM_CHROMIUM_FLAGS, *config.extra_args],
        )
    if playwright_build:
        return LaunchPlan(
            source="playwright", executable_path=None, args=["--disable-dev-shm-usage", *config.extra_args]
        )
    for name in PATH_NAMES:
        found = shutil.which(name)
        if found:
            return LaunchPlan(
                source="path", executable_path=found, args=[*SYSTEM_CHROMIUM_FLAGS, *config.extra_args]
            )
    raise BrowserNotFoundError(INSTALL_HINT)


class _Job:
    __slots__ = ("fn", "future")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.future: Future[Any] = Future()


class BrowserRuntime:
    """Playwright + one Chromium, owned by one thread. Safe to call from any thread."""

    def __init__(self, config: BrowserConfig | None = None) -> None:
        self.config = config or BrowserConfig()
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._broken: str | None = None
        self._waiting_on_human = 0
        self.plan: LaunchPlan | None = None
        self.gatekeeper = Gatekeeper()

    # ------------------------------------------------------------ lifecycle
    def start(self) -> BrowserRuntime:
        if self._thread is not None:
            return self
        ready: Future[None] = Future()
        self._thread = threading.Thread(
            target=self._main, args=(ready,), name="taskcrew-browser", daemon=True
        )
        self._thread.start()
        try:
            ready.result(timeout=self.config.call_timeout_s)
        except BaseException:
            self._thread.join(timeout=5)
            self._thread = None
            raise
        return self

    def close(self) -> None:
        thread = self._thread
        if thread is None:
            return
        self._jobs.put(None)
        thread.join(timeout=30)
        self._thread = None

    def __enter__(self) -> BrowserRuntime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._broken is None

    @property
    def browser(self) -> Browser:
        """Only valid on the browser thread (inside ``call``)."""
        if self._browser is None:
            raise BrowserError("the browser is not running")
        return self._browser

    # ------------------------------------------------------------ calls
    def call(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        """Run ``fn`` on the browser thread and return its result (or raise its exception).

        The bound does not count time spent waiting for a human (see ``human_wait``).
        """
        if threading.current_thread() is self._thread:
            return fn()
        if self._broken:
            raise BrowserError(self._broken)
        if not self.running:
            raise BrowserError(
                "the browser runtime is not started (call start() or use it as a context manager)"
            )
        job = _Job(fn)
        self._jobs.put(job)
        bound = timeout if timeout is not None else self.config.call_timeout_s
        deadline = time.monotonic() + bound
        while True:
            try:
                return job.future.result(timeout=0.25)
            except TimeoutError:
                if self._waiting_on_human:
                    deadline = time.monotonic() + bound
                elif time.monotonic() > deadline:
                    self._broken = (
                        f"the browser did not answer within {bound:.0f}s; it is stuck — close this "
                        "session and start a new one"
                    )
                    raise BrowserError(self._broken) from None

    def human_wait(self) -> _HumanWait:
        """Context manager for the browser thread: time inside does not count against call bounds."""
        return _HumanWait(self)

    # ------------------------------------------------------------ the thread
    def _main(self, ready: Future[None]) -> None:
        try:
            self._launch()
        except BaseException as exc:
            self._stop_playwright()
            ready.set_exception(exc)
            return
        ready.set_result(None)
        while True:
            job = self._jobs.get()
            if job is None:
                break
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                job.future.set_result(job.fn())
            except BaseException as exc:
                job.future.set_exception(exc)
        self._stop_playwright()

    def _launch(self) -> None:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright

        driver_in_own_session()
        self._playwright = sync_playwright().start()
        install_engine(self._playwright)  # perception's isolated world, before any context is made
        chromium = self._playwright.chromium
        lockdown = lockdown_flags(self.gatekeeper.start())

        def locked_down(playwright_build: bool) -> LaunchPlan:
            plan = plan_launch(self.config, playwright_build=playwright_build)
            plan.args = [*plan.args, *lockdown]
            return plan

        plan = locked_down(True)
        options: dict[str, Any] = {
            "headless": self.config.headless,
            "slow_mo": self.config.slow_mo_ms or None,
        }
        try:
            self._browser = chromium.launch(**plan.launch_options(), **options)
        except PlaywrightError as exc:
            if plan.source != "playwright" or "Executable doesn't exist" not in str(exc):
                raise BrowserError(f"Chromium ({plan.source}) failed to start: {exc}") from exc
            plan = locked_down(False)  # Playwright's build not installed: the system's Chromium
            try:
                self._browser = chromium.launch(**plan.launch_options(), **options)
            except PlaywrightError as exc2:
                raise BrowserError(f"Chromium at {plan.executable_path} failed to start: {exc2}") from exc2
        self.plan = plan

    def _stop_playwright(self) -> None:
        try:
            if self._browser is not None:
                self._browser.close()
        except Exception:
            pass
        try:
            if self._playwright is not None:
                self._playwright.stop()
        except Exception:
            pass
        self._browser = None
        self._playwright = None
        self.gatekeeper.close()


class _HumanWait:
    def __init__(self, runtime: BrowserRuntime) -> None:
        self._runtime = runtime

    def __enter__(self) -> None:
        self._runtime._waiting_on_human += 1

    def __exit__(self, *exc: object) -> None:
        self._runtime._waiting_on_human -= 1
