"""Before and after: what the run changed in a system, as data the verifier can cite.

Just before the first data-changing submission leaves the gate, code reads the pages the company's
read-back rules name (``tools/readback.py``: a rule's ``read_back`` page up to its first
placeholder, e.g. ``{erp}/bills``), read-only, with the worker's session. At verification it reads
them again; the difference (rows added, rows removed, how many stayed) is a source the verifier is
given and may cite as ``before/after <page>``: "exactly one new bill and nothing else changed" is then
checked on data.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

from taskcrew.crew.evidence import CHANGES_SOURCE
from taskcrew.tools.readback import PLACEHOLDER, ReadBackRules, visible_lines

Fetch = Callable[[str], str | None]  # URL -> page HTML, or None (an error, a login page)
SHOWN = 20  # rows of each kind shown in the difference


def pages_to_watch(rules: ReadBackRules) -> list[str]:
    """The pages a run's changes show on: each read-back page up to its first placeholder, no query."""
    pages: list[str] = []
    for rule in rules.rules:
        if rule.safe_to_repeat or not rule.read_back:
            continue
        parts = urlsplit(rule.read_back)
        path = parts.path
        if found := PLACEHOLDER.search(path):
            path = path[: found.start()]
        path = path.rstrip("/") or "/"
        page = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        if page not in pages:
            pages.append(page)
    return pages


class Snapshot:
    """The watched pages as they were before the first change (taken once, on the browser thread)."""

    def __init__(self, pages: list[str]) -> None:
        self.pages = pages
        self.before: dict[str, str | None] = {}
        self.taken_at: datetime | None = None
        self._lock = threading.Lock()

    def take(self, fetch: Fetch) -> None:
        """Read every page once, before the first change; later calls do nothing."""
        with self._lock:
            if self.taken_at is not None or not self.pages:
                return
            self.before = {page: _read(fetch, page) for page in self.pages}
            self.taken_at = datetime.now(UTC)

    @property
    def taken(self) -> bool:
        return self.taken_at is not None

    def differences(self, fetch: Fetch) -> dict[str, str]:
        """``before/after <page>`` → the difference as text, read again now."""
        out: dict[str, str] = {}
        for page, before in self.before.items():
            after = _read(fetch, page)
            out[f"{CHANGES_SOURCE} {page}"] = describe(page, before, after, self.taken_at)
        return out


def describe(page: str, before: str | None, after: str | None, taken_at: datetime | None) -> str:
    when = f" at {taken_at:%H:%M:%S} UTC" if taken_at else ""
    head = f"Before/after difference of {page} (read by code before the first change{when}, and now):"
    if before is None or after is None:
        which = "before the change" if before is None else "now"
        return f"{head}\nThe page could not be read {which} (an error or a login page): no difference."
    old, new = Counter(visible_lines(before)), Counter(visible_lines(after))
    added = list((new - old).elements())
    removed = list((old - new).elements())
    kept = sum((old & new).values())
    lines = [head, f"Lines of the page added ({len(added)}):"]
    lines += [f"+ {row}" for row in added[:SHOWN]] or ["(none)"]
    lines.append(f"Lines removed or changed ({len(removed)}; as they were before):")
    lines += [f"- {row}" for row in removed[:SHOWN]] or ["(none)"]
    lines.append(f"Lines unchanged: {kept} (of all the page's text: menus, labels and table rows alike)")
    return "\n".join(lines)


def _read(fetch: Fetch, page: str) -> str | None:
    try:
        return fetch(page)
    except Exception:
        return None
