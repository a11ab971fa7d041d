"""The run's browsers: one Chromium, a worker session and a read-only verifier session.

Chromium starts on the first browser call, so runs that only read files never launch it. The
verifier gets a fresh context (no cookies, no page state from the worker) for each verification.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crewai.tools import BaseTool

from taskcrew.crew.evidence import unechoed
from taskcrew.crew.toolbox import RecordingTool
from taskcrew.tools.browser import BrowserConfig, BrowserRuntime, BrowserSession
from taskcrew.tools.browser.render import BEGIN, ELEMENTS, END
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
        self.inputs: list[str] = []  # what its user put in (``put_in``): the verifier's, for ``evidence``

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
        """What the worker's browser showed at ``url`` (a citation's ``find`` is expanded from it),
        with the run's hidden values as the page held them (``Vault.reveal``): for code that compares
        it with a quote or a value sent (the citation check, an approval's origins), never a model."""
        text = self.worker.seen_text(url)
        return None if text is None else self.vault.reveal(text)

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
            session.inputs += put_in(kwargs) + field_values(text)
            if session.latest is not None:  # the page it is on now, and what it showed of its data
                session.inputs.append(session.latest.url)  # an address it landed on is a request too
                record(session.latest.url, unechoed(page_data(text), session.inputs))

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


# an element's line in the list after a page (render.render_elements): its number(s) and its role
_ELEMENT_LINE = re.compile(r"^\[(\d+)\](?:–\[(\d+)\])? (\S+)")
_FIELD_ROLES = {
    "textbox", "searchbox", "combobox", "spinbutton", "listbox", "slider", "checkbox", "radio", "switch",
}  # fmt: skip
_NAMED_MARKER = re.compile(r"\[(\d+)\] [^\[|\n]+?(?=$| \|| \[\d+\])", re.MULTILINE)  # render.names_in_text


def put_in(kwargs: dict[str, Any]) -> list[str]:
    """What a browser tool call puts into the session (``browser_act``'s arguments): the text it
    types, the options it selects, the addresses it opens, the text it selects on the page, and the
    characters it presses one key at a time (as one text too: "4", "9", "9" is "499"). What a page
    shows back of it is not the page's data (``evidence.unechoed``)."""
    out: list[str] = []
    keys: list[str] = []
    for action in kwargs.get("actions") or []:
        fields = action.model_dump() if hasattr(action, "model_dump") else action
        if not isinstance(fields, dict):
            continue
        out += [str(fields[k]) for k in ("text", "option", "url") if fields.get(k)]
        key = str(fields.get("key") or "")
        if len(key) == 1:
            keys.append(key)
    return [*out, "".join(keys)] if keys else out


_ENTRY_ROLES = {"textbox", "searchbox", "combobox", "spinbutton", "listbox", "slider"}
_FIELD_VALUE = re.compile(r' value=("(?:[^"\\]|\\.)*")')


def field_values(text: str) -> list[str]:
    """What the form fields of a browser tool's answer hold (``value="499"``, its list of elements):
    whatever put it there — typed, keyed in one key at a time, a slider dragged, or prefilled — it is
    input, not the page's data, and a page repeating it elsewhere shows nothing (``evidence.unechoed``).
    Not a checkbox's or a radio button's value: the page's own, the verifier only ticks it."""
    lines = text.split("\n")
    listed = lines[lines.index(ELEMENTS) + 1 :] if ELEMENTS in lines else []
    out: list[str] = []
    for line in listed:
        m = _ELEMENT_LINE.match(line)
        if m and m.group(3) in _ENTRY_ROLES and (v := _FIELD_VALUE.search(line)):
            try:
                out.append(str(json.loads(v.group(1))))
            except ValueError:
                continue
    return out


def page_data(text: str) -> str:
    """What a browser tool's answer shows of a system's data, as the verifier's evidence is checked
    against it (``evidence``): the page's own text between the lines code frames it with
    (``render.BEGIN`` … ``render.END``), and in it no form control's words ("[9] USD" of a custom
    select). Never the list of elements after it, where a form field shows what it holds
    (``value="499.00"``: typed, selected or prefilled — by the verifier itself, in its read-only
    session that sends nothing), nor the lines before it, which say what the verifier did (the words
    it typed), nor the page's address and title (an address the verifier chose). An answer showing
    no page (an error) shows no data."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line == BEGIN]
    if not starts:
        return ""
    page = lines[starts[-1] + 1 :]
    end = page.index(END) if END in page else len(page)
    listed = page[end + 1 :]
    fields: set[str] = set()
    for line in listed[listed.index(ELEMENTS) + 1 :] if ELEMENTS in listed else []:
        m = _ELEMENT_LINE.match(line)
        if m and (m.group(3) in _FIELD_ROLES or " value=" in line):
            first = int(m.group(1))
            fields.update(str(n) for n in range(first, int(m.group(2) or first) + 1))
    shown = "\n".join(page[:end])
    return _NAMED_MARKER.sub(lambda m: f"[{m.group(1)}]" if m.group(1) in fields else m.group(0), shown)
