"""Benchmark the browser layer: observe() time and rendering size per page, act() overhead per action.

    uv run python bench/browser_bench.py [--repeats 15] [--tasks 20]

Pages: the mock ERP (login, bills list, new-bill form, bill detail, vendors; chaos off) and MiniWoB++
task pages from the ``miniwob`` wheel, each served over a local HTTP server. Sizes are of
``Observation.render()`` — what a model reads on every call — in characters and o200k_base tokens.
Prints figures only; nothing is asserted (the machine may be busy).

With ``--browser-use PYTHON`` (the interpreter of a separate virtualenv with ``browser-use`` from
PyPI, see bench/browser_use_dump.py) the same pages are also dumped as browser-use serialises them
for its model: its element tree (``llm_representation()``) and the whole ``<browser_state>`` block its
agent sends per step, built by its own ``AgentMessagePrompt``. Two ratios are printed (see ``compare``):
"bare" (our render without its first line against the tree) and "like for like" (our whole render
against the block). ERP pages are compared on a saved
copy of the logged-in page's HTML (browser-use cannot log in without a model); MiniWoB pages live,
with the same seeded episode.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import bpe_openai

from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.tools.browser import BrowserSession, Click, Observation, Scroll, Select, Type
from taskcrew.tools.human import AutoApproveHuman
from taskcrew.tools.policy import Policy, PolicyConfig
from taskcrew.tools.vault import Vault

MINIWOB_TASKS = [
    "click-button",
    "click-link",
    "click-checkboxes",
    "click-option",
    "enter-text",
    "enter-password",
    "login-user",
    "click-tab",
    "focus-text",
    "choose-list",
    "click-dialog",
    "simple-arithmetic",
    "read-table",
    "find-word",
    "click-button-sequence",
    "enter-date",
    "click-widget",
    "click-collapsible",
    "use-autocomplete",
    "email-inbox",
    "social-media",
    "book-flight",
    "search-engine",
    "navigate-tree",
]

ENC = bpe_openai.get_encoding("o200k_base")
START_EPISODE = "() => { Math.seedrandom('bench'); core.EPISODE_MAX_TIME = 600000; core.startEpisodeReal(); }"
OURS: dict[str, int] = {}
"""Our render's tokens per page name (for the browser-use comparison)."""
PAGE_LINE: dict[str, int] = {}
"""Tokens of the render's first line (title, URL, observation id) per page name."""
SAVED: dict[str, str] = {}
"""HTML of the ERP pages as the browser had them (for the browser-use comparison)."""


def timed(fn: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    times: list[float] = []
    last = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        last = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return times, last


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def row(name: str, times: list[float], obs: Observation) -> str:
    text = obs.render()
    OURS[name] = len(ENC.encode(text))
    PAGE_LINE[name] = len(ENC.encode(text.split("\n", 1)[0] + "\n"))
    return (
        f"{name:<28} {statistics.median(times):7.0f} {p95(times):7.0f} {len(text):7d} "
        f"{len(ENC.encode(text)):7d} {len(obs.elements):5d}"
    )


HEADER = f"{'page':<28} {'med ms':>7} {'p95 ms':>7} {'chars':>7} {'tokens':>7} {'elems':>5}"


@contextmanager
def static_server(root: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def miniwob_root() -> Path:
    spec = importlib.util.find_spec("miniwob")
    assert spec is not None and spec.submodule_search_locations, "pip install miniwob --no-deps"
    return Path(next(iter(spec.submodule_search_locations))) / "html"


def field_index(obs: Observation, name: str) -> int:
    return next(el.index for el in obs.elements if el.field is not None and el.field.name == name)


def bench_erp(repeats: int) -> list[str]:
    lines: list[str] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        ErpServer(Path(tmp) / "erp.sqlite3", chaos=ChaosConfig.off()) as erp,
    ):
        policy = Policy(PolicyConfig.for_url(erp.url), AutoApproveHuman())
        vault = Vault({"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"})
        with BrowserSession(policy=policy, vault=vault) as session:
            obs = session.goto(f"{erp.url}/login").observation
            times, obs = timed(session.observe, repeats)
            lines.append(row("erp /login", times, obs))
            session.act(
                [
                    Type(index=field_index(obs, "username"), text="{{secret:ERP_USERNAME}}"),
                    Type(index=field_index(obs, "password"), text="{{secret:ERP_PASSWORD}}"),
                    Click(index=next(el.index for el in obs.elements if el.name == "Log in")),
                ]
            )
            for path in ("/bills", "/bills/new", "/bills/BILL-0004", "/vendors", "/bills?status=unpaid"):
                session.goto(erp.url + path)
                times, obs = timed(session.observe, repeats)
                lines.append(row(f"erp {path}", times, obs))
                SAVED[f"erp {path}"] = session.run(lambda page: page.content())
            lines.extend(bench_act(session, erp.url, repeats))
    return lines


def bench_act(session: BrowserSession, base: str, repeats: int) -> list[str]:
    """act() time per action vs. the bare Playwright call it wraps (same page, same element)."""
    form = session.goto(f"{base}/bills/new").observation
    amount = field_index(form, "amount")
    currency = field_index(form, "currency")
    out = ["", f"{'act() on /bills/new':<34} {'act ms':>7} {'raw ms':>7} {'overhead':>8}"]

    def raw(fn: Callable[[Any], Any]) -> Callable[[], Any]:
        return lambda: session.run(fn)

    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "type 7 chars",
            lambda: session.act([Type(index=amount, text="1284.50")]),
            raw(lambda page: page.locator("#amount").fill("1284.50")),
        ),
        (
            "select option",
            lambda: session.act([Select(index=currency, option="EUR")]),
            raw(lambda page: page.locator("#currency").select_option(value="EUR")),
        ),
        (
            "click (no navigation)",
            lambda: session.act([Click(index=amount)]),
            raw(lambda page: page.locator("#amount").click()),
        ),
        (
            "scroll",
            lambda: session.act([Scroll(direction="down", pages=0.2)]),
            raw(lambda page: page.evaluate("window.scrollBy(0, 100)")),
        ),
    ]
    for name, act, bare in cases:
        act_times, _ = timed(act, repeats)
        raw_times, _ = timed(bare, repeats)
        a, r = statistics.median(act_times), statistics.median(raw_times)
        out.append(f"{name:<34} {a:7.0f} {r:7.0f} {a - r:8.0f}")
    batch = [Type(index=amount, text=str(i)) for i in range(5)]
    batch_times, _ = timed(lambda: session.act(batch), max(3, repeats // 3))
    single = statistics.median(batch_times) / len(batch)
    out.append(f"{'batch of 5 types, per action':<34} {single:7.0f}")
    return out


def bench_miniwob(repeats: int, count: int) -> list[str]:
    lines: list[str] = []
    with static_server(miniwob_root()) as base:
        policy = Policy(PolicyConfig.for_url(base), AutoApproveHuman())
        with BrowserSession(policy=policy) as session:
            for task in MINIWOB_TASKS[:count]:
                session.goto(f"{base}/miniwob/{task}.html")
                session.run(lambda page: page.evaluate(START_EPISODE))
                times, obs = timed(session.observe, repeats)
                lines.append(row(f"miniwob {task}", times, obs))
    return lines


def browser_use_tokens(python: str, urls: dict[str, str], js: str | None) -> dict[str, tuple[int, int]]:
    """Tokens of browser-use's view of each page (run in its own virtualenv): its element tree
    (``llm_representation()``) and the whole ``<browser_state>`` block its agent sends each step."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "dump.json"
        cmd = [python, str(Path(__file__).parent / "browser_use_dump.py"), str(out), *urls.values()]
        if js:
            cmd += ["--js", js]
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "false", "BROWSER_USE_SETUP_LOGGING": "false"}
        subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=600)
        dumped: dict[str, dict[str, str]] = json.loads(out.read_text(encoding="utf-8"))
    counts: dict[str, tuple[int, int]] = {}
    for name, url in urls.items():
        if url in dumped:
            got = dumped[url]
            counts[name] = (len(ENC.encode(got["elements"])), len(ENC.encode(got["state"])))
    return counts


def compare(python: str, count: int) -> list[str]:
    theirs: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {name: re.sub(r"\W+", "_", name) + ".html" for name in SAVED}
        for name, html in SAVED.items():
            (root / files[name]).write_text(html, encoding="utf-8")
        with static_server(root) as base:
            urls = {name: f"{base}/{files[name]}" for name in SAVED}
            theirs.update(browser_use_tokens(python, urls, None))
    with static_server(miniwob_root()) as base:
        urls = {f"miniwob {t}": f"{base}/miniwob/{t}.html" for t in MINIWOB_TASKS[:count]}
        theirs.update(browser_use_tokens(python, urls, START_EPISODE))
    # Two comparisons. "bare": our render without its first line (URL, title, observation id)
    # against browser-use's element tree alone (llm_representation(), which has no URL or title).
    # "like for like": our whole render against the <browser_state> block browser-use's own
    # AgentMessagePrompt builds around that tree each step (page stats, current tab, open tabs with
    # URL and title, scroll position, the tree): both are all a model reads about the page.
    lines = [
        f"{'page':<30} {'ours':>5} {'-line':>5} {'b-tree':>6} {'b-state':>7} {'bare':>5} {'like':>5}",
        f"{'':<30} {'':>5} {'':>5} {'':>6} {'':>7} {'ratio':>5} {'ratio':>5}",
    ]
    ratios: dict[str, list[tuple[float, float]]] = {"erp": [], "miniwob": []}
    for name, ours in OURS.items():
        if name in theirs and min(theirs[name]) > 0:
            tree, state = theirs[name]
            bare = ours - PAGE_LINE[name]
            lines.append(
                f"{name:<30} {ours:5d} {bare:5d} {tree:6d} {state:7d} {bare / tree:5.2f} {ours / state:5.2f}"
            )
            ratios[name.split()[0]].append((bare / tree, ours / state))
    for group, got in ratios.items():
        if got:
            bare_r, like_r = [r[0] for r in got], [r[1] for r in got]
            lines.append(
                f"{group + ' pages (' + str(len(got)) + ')':<30} bare {min(bare_r):.2f}-{max(bare_r):.2f} "
                f"(median {statistics.median(bare_r):.2f}, {sum(r <= 1.0 for r in bare_r)} <= 1.0); "
                f"like for like {min(like_r):.2f}-{max(like_r):.2f} (median {statistics.median(like_r):.2f})"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--tasks", type=int, default=20, help=f"MiniWoB pages (max {len(MINIWOB_TASKS)})")
    parser.add_argument(
        "--browser-use", metavar="PYTHON", help="python of a virtualenv with browser-use, to compare"
    )
    args = parser.parse_args()
    print("observe(): time per call (settle + perception), rendering size of Observation.render()")
    print(HEADER)
    erp_lines = bench_erp(args.repeats)
    print("\n".join(line for line in erp_lines if line.startswith("erp ")))
    mini = bench_miniwob(args.repeats, args.tasks)
    print("\n".join(mini))
    tokens = [int(line.split()[-2]) for line in mini]
    print(
        f"{'miniwob median of pages':<28} {'':7} {'':7} {'':7} {statistics.median(tokens):7.0f}  "
        f"(max {max(tokens)})"
    )
    print("\n".join(line for line in erp_lines if not line.startswith("erp ")))
    if args.browser_use:
        print("\nTokens (o200k) of what the model reads: ours vs browser-use, same pages")
        print("\n".join(compare(args.browser_use, args.tasks)))


if __name__ == "__main__":
    main()
