"""The run's browsers: one Chromium, a worker session and a read-only verifier session.

Chromium starts on the first browser call, so runs that only read files never launch it. The
verifier gets a fresh context (no cookies, no page state from the worker) for each verification.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crewai.tools import BaseTool

from taskcrew.crew.toolbox import RecordingTool
from taskcrew.tools.browser import BrowserConfig, BrowserRuntime, BrowserSession
from taskcrew.tools.browser.tools import make_browser_tools
from taskcrew.tools.policy import Policy, PolicyDecision
from taskcrew.tools.vault import Vault


class DecisionLog:
    """Every policy decision of a run; listeners (the trace) hear each one as it is made."""

    def __init__(self) -> None:
        self.decisions: list[PolicyDecision] = []
        self.listeners: list[Callable[[PolicyDecision], None]] = []
        self._lock = threading.Lock()

    def record(self, decision: PolicyDecision) -> None:
        with self._lock:
            self.decisions.append(decision)
        for listener in self.listeners:
            listener(decision)

    def rejections(self) -> int:
        with self._lock:
            return sum(1 for d in self.decisions if d.outcome == "rejected")


class LazySession(BrowserSession):
    """A session that opens its context on first use; ``act_listeners`` hear every act (the page
    before, the result) — the routines' recorder is one."""

    _start_lock = threading.Lock()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.act_listeners: list[Callable[[Any, Any], None]] = []

    def act(self, actions: Any, observation_id: int | None = None) -> Any:
        before = self.latest
        result = super().act(actions, observation_id)
        for listener in self.act_listeners:
            listener(before, result)
        return result

    def _call(self, fn: Any, timeout: float | None = None) -> Any:
        if self._context is None:
            with self._start_lock:
                if self._context is None:
                    self.start()
        return super()._call(fn, timeout)

    @property
    def started(self) -> bool:
        return self._context is not None


class RunBrowser:
    def __init__(
        self,
        config: BrowserConfig,
        policy: Policy,
        vault: Vault,
        log: DecisionLog,
        runtime: BrowserRuntime | None = None,
    ) -> None:
        """``runtime``: a Chromium shared across runs (kept open on close); else one of its own."""
        self.config = config
        self.policy = policy
        self.vault = vault
        self.log = log
        self._owns_runtime = runtime is None
        self.runtime = runtime or BrowserRuntime(config)
        self.worker = LazySession(policy=policy, vault=vault, runtime=self.runtime)
        self.verifier: LazySession | None = None

    def worker_tools(self) -> list[BaseTool]:
        return make_browser_tools(self.worker)

    def page_text(self, url: str) -> str | None:
        """What the worker's browser showed at ``url`` (a citation's ``find`` is expanded from it)."""
        return self.worker.seen_text(url)

    def fresh_verifier(self) -> None:
        if self.verifier is not None:
            self.verifier.close()
        self.verifier = LazySession(
            policy=self.policy.read_only_copy(), vault=self.vault, runtime=self.runtime
        )

    def verifier_tools(self, record: Callable[[str, str], None]) -> list[BaseTool]:
        if self.verifier is None:
            self.fresh_verifier()
        assert self.verifier is not None
        session = self.verifier

        def seen(kwargs: dict[str, Any], text: str) -> None:
            if session.latest is not None:  # the page it is on now, and what the tool showed it
                record(session.latest.url, text)

        return [RecordingTool.around(t, seen) for t in make_browser_tools(session, read_only=True)]

    def page_reader(self) -> Callable[[str], str | None]:
        """Read a page with the worker's session (GET, never gated; None on an error or a login
        page), on the browser thread: for the before/after difference (crew/changes.py)."""
        from taskcrew.tools.intents import fetcher

        def read(url: str) -> str | None:
            if not self.worker.started:
                return None
            return self.worker._call(lambda: fetcher(self.worker._context, self.worker.policy)(url))

        return read

    def rejections(self) -> int:
        return self.log.rejections()

    def screenshot(self, path: Path) -> Path | None:
        if not self.worker.started:
            return None
        try:
            self.worker.screenshot(path)
        except Exception:
            return None
        return path

    def close(self) -> None:
        for session in (self.verifier, self.worker):
            if session is not None:
                session.close()
        if self._owns_runtime:
            self.runtime.close()
