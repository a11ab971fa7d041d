"""Dump browser-use's DOM serialisation (what its model reads) for pages, for token comparison.

Runs in a SEPARATE virtualenv with browser-use installed from PyPI (never in the project's env):

    uv venv /path/bu-venv && VIRTUAL_ENV=/path/bu-venv uv pip install browser-use
    /path/bu-venv/bin/python bench/browser_use_dump.py OUT.json URL [URL ...] [--js SCRIPT]

Writes {url: {"elements": ..., "state": ...}} as JSON: "elements" is the element tree
(``DOMState.llm_representation()``), "state" the ``<browser_state>`` block that browser-use's own
``AgentMessagePrompt.get_user_message()`` builds around it for each step (page stats, current tab,
open tabs with URL and title, scroll position, the tree), cut out of that message unchanged. ``--js`` runs a script in each page before the dump (MiniWoB's episode
start). Chromium comes from TASKCREW_CHROMIUM or /usr/bin/chromium.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys


async def dump(urls: list[str], js: str | None) -> dict[str, dict[str, str]]:
    from browser_use import BrowserProfile, BrowserSession
    from browser_use.agent.prompts import AgentMessagePrompt

    profile = BrowserProfile(
        executable_path=os.environ.get("TASKCREW_CHROMIUM", "/usr/bin/chromium"),
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        window_size={"width": 1280, "height": 800},
        viewport={"width": 1280, "height": 800},
    )
    session = BrowserSession(browser_profile=profile)
    await session.start()
    out: dict[str, dict[str, str]] = {}
    try:
        for url in urls:
            await session.navigate_to(url)
            await asyncio.sleep(0.5)
            if js:
                page = await session.get_current_page()
                await page.evaluate(js)
                await asyncio.sleep(0.3)
            state = await session.get_browser_state_summary(include_screenshot=False)
            prompt = AgentMessagePrompt(browser_state_summary=state, file_system=None)
            message = prompt.get_user_message(use_vision=False).text
            end = message.index("</browser_state>") + len("</browser_state>")
            block = message[message.index("<browser_state>") : end]
            out[url] = {"elements": state.dom_state.llm_representation(), "state": block}
    finally:
        await session.kill()
    return out


def main() -> None:
    args = sys.argv[1:]
    js = None
    if "--js" in args:
        k = args.index("--js")
        js = args[k + 1]
        del args[k : k + 2]
    target, urls = args[0], args[1:]
    result = asyncio.run(dump(urls, js))
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()
