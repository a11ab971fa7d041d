"""Chromium features taskcrew switches off, added to the ones Playwright switches off.

New headless Chromium is the whole browser without a screen: every window Playwright opens (one per
browser context) also builds the omnibox's two WebUI popups, each in a renderer of its own. Measured
here (Chromium 156, 2 cores): ~1.35 s of CPU a context, more than the page itself takes, and the
browser process works ~0.3 s more for each. Nothing taskcrew does uses the address bar.

Chromium honours only the last ``--disable-features`` switch, and Playwright passes its own list
(features that break automation: PaintHolding, HttpsUpgrades, ...). So the launch drops Playwright's
switch (``ignore_default_args``) and passes one switch with Playwright's list and ours. Playwright's
list is read from the driver it ships (its ``chromiumSwitches`` source), so it stays that version's.
When that source cannot be read, the launch keeps Playwright's switch as it is and adds nothing:
slower, never less automated.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

OURS = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
SWITCH = "--disable-features="

_LIST = re.compile(r"disabledFeatures\s*=\s*\[(?P<body>.*?)\]\s*\.filter\(Boolean\)", re.S)
_ITEM = re.compile(r'"([^"\\]*)"')
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _driver_sources() -> list[Path]:
    import playwright

    lib = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    return [lib / "server" / "chromium" / "chromiumSwitches.js", lib / "coreBundle.js"]


def parse_disabled(source: str) -> list[str] | None:
    """Playwright's ``disabledFeatures`` list from its driver's source, or None when the list is not
    plain names (a name chosen at run time, an expression: then its switch cannot be rebuilt)."""
    found = _LIST.search(source)
    if found is None:
        return None
    body = "\n".join(line.split("//", 1)[0] for line in found.group("body").splitlines())
    names = _ITEM.findall(body)
    leftover = _ITEM.sub("", body).replace(",", "").split()
    if leftover or not names or not all(_NAME.fullmatch(n) for n in names):
        return None
    return names


@lru_cache(maxsize=1)
def playwright_disabled() -> tuple[str, ...] | None:
    """The features Playwright's driver disables in Chromium (None: not readable)."""
    for path in _driver_sources():
        try:
            names = parse_disabled(path.read_text(encoding="utf-8"))
        except OSError:
            continue
        if names is not None:
            return tuple(names)
    return None


def feature_switches(args: list[str]) -> tuple[list[str], list[str]]:
    """(args, ignore_default_args) for ``chromium.launch``: ``args`` with its own
    ``--disable-features`` switches (``BrowserConfig.extra_args``) folded into one that also holds
    Playwright's features and ours, in place of Playwright's. ``args`` as given (and nothing
    ignored) when Playwright's list cannot be read."""
    theirs = playwright_disabled()
    if theirs is None:
        return args, []
    given = [f for a in args if a.startswith(SWITCH) for f in a.removeprefix(SWITCH).split(",") if f]
    merged = list(dict.fromkeys([*theirs, *OURS, *given]))
    rest = [a for a in args if not a.startswith(SWITCH)]
    return [*rest, SWITCH + ",".join(merged)], [SWITCH + ",".join(theirs)]
