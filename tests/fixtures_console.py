"""pytest fixtures for the web console (imported by conftest.py).

- ``console_users``: a users file with ana, bob and carol (scrypt hashes), once per module.
- ``console_chromium``: one real Chromium per module (Playwright's build, else the system's).
- ``console_env``: a real job store (SQLite), run and eval folders, and the console served by
  uvicorn on a free port; ``page_as(user)`` opens a logged-in browser page.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskcrew.console.auth import add_user
from taskcrew.console.server import ConsoleServer
from taskcrew.console.settings import ConsoleSettings
from taskcrew.jobs import Jobs
from taskcrew.tools.browser import BrowserConfig
from taskcrew.tools.browser.runtime import plan_launch

__all__ = [
    "PASSWORDS",
    "ConsoleEnv",
    "client_as",
    "console_chromium",
    "console_env",
    "console_users",
    "flash",
    "follow",
    "shot",
    "shots",
]

PASSWORDS = {"ana": "ana-secret-1", "bob": "bob-secret-1", "carol": "carol-secret-1"}
SHOTS = os.environ.get("TASKCREW_CONSOLE_SHOTS")


def client_as(
    name: str, jobs: Jobs, root: Path, users: Path, *, follow_redirects: bool = False, **settings: Any
) -> Any:
    """The console app in-process (Starlette's TestClient over ``jobs``; its folders under ``root``)
    with ``name`` logged in through the login form, as a browser does (CSRF token, Origin)."""
    from starlette.testclient import TestClient

    from taskcrew.console.app import build_app

    config = ConsoleSettings(
        port=0,
        state_dir=root / "console",
        runs_dirs=[root / "runs"],
        eval_dirs=[root / "eval"],
        users_file=users,
        jobs_url=jobs.url,
        sandbox=root,
        **settings,
    )
    client = TestClient(
        build_app(config, jobs), base_url="http://testserver", follow_redirects=follow_redirects
    )
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token
    form = {"username": name, "password": PASSWORDS[name], "csrf": token.group(1), "next": "/"}
    logged = client.post("/login", data=form, headers={"origin": "http://testserver"}, follow_redirects=False)
    assert logged.status_code == 303, logged.text
    return client


@pytest.fixture(scope="module")
def console_users(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("users") / "users.yaml"
    for name, password in PASSWORDS.items():
        add_user(path, name, password)
    return path


@pytest.fixture(scope="module")
def console_chromium() -> Iterator[Any]:
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as pw:
        plan = plan_launch(BrowserConfig(), playwright_build=True)
        try:
            browser = pw.chromium.launch(**plan.launch_options())
        except Error:
            plan = plan_launch(BrowserConfig(), playwright_build=False)
            browser = pw.chromium.launch(**plan.launch_options())
        yield browser
        browser.close()


class ConsoleEnv:
    def __init__(self, root: Path, users: Path, browser: Any) -> None:
        self.root = root
        self.jobs_url = f"sqlite:///{root / 'jobs.sqlite3'}"
        self.jobs = Jobs.open(self.jobs_url)
        self.runs = root / "runs"
        self.runs.mkdir()
        self.evals = root / "eval"
        self.settings = ConsoleSettings(
            port=0,
            state_dir=root / "console",
            runs_dirs=[self.runs],
            eval_dirs=[self.evals],
            users_file=users,
            jobs_url=self.jobs_url,
        )
        self.browser = browser
        self.server = ConsoleServer(self.settings, self.jobs).start()
        self.url = self.server.url
        self.contexts: list[Any] = []

    def restart(self) -> None:
        self.server.stop()
        self.server = ConsoleServer(
            self.settings.model_copy(update={"port": self.server.port}), self.jobs
        ).start()

    def page_as(self, user: str | None) -> Any:
        context = self.browser.new_context(viewport={"width": 1280, "height": 860})
        self.contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)  # a bound for a failure, not a wait: a loaded machine is slow
        page.dialogs = []
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
        if user is not None:
            page.goto(f"{self.url}/login")
            page.get_by_label("Name").fill(user)
            page.get_by_label("Password").fill(PASSWORDS[user])
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(r".*/approvals$"))
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()
        self.server.stop()
        self.jobs.close()


@pytest.fixture
def console_env(
    tmp_path: Path, console_users: Path, console_chromium: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ConsoleEnv]:
    # the users file is every process's one setting: what the console's pages judge outside its own
    # authority (a fact's acceptance, a routine's) reads it from the environment, as in production
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    e = ConsoleEnv(tmp_path, console_users, console_chromium)
    yield e
    e.close()


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def shots(page: Any, name: str) -> None:
    """``name``.png at 1280×800 and ``name``-1920.png at 1920×1080 (full page), as an approver sees it."""
    if not SHOTS:
        return
    before = page.viewport_size
    for (width, height), suffix in (((1280, 800), ""), ((1920, 1080), "-1920")):
        page.set_viewport_size({"width": width, "height": height})
        shot(page, name + suffix)
    page.set_viewport_size(before)


def follow(page: Any, target: Any) -> None:
    """Click ``target`` (a link or a form's button) and return once the page it leads to has loaded.

    ``click()`` returns as soon as the click is dispatched; a read straight after it can read the
    page being left (same rows, old flash) — on a loaded machine it does."""
    with page.expect_navigation():
        target.click()


def flash(page: Any) -> str:
    return str(page.locator(".flash").first.inner_text())


def shown_width(page: Any, selector: str = "img.shot") -> int:
    """The natural width of the first image matching ``selector`` once the browser has finished
    loading it (0: it failed). Read at once it may still be loading on a busy machine."""
    page.wait_for_function(
        "s => { const i = document.querySelector(s); return i !== null && i.complete; }", arg=selector
    )
    return int(page.locator(selector).first.evaluate("img => img.naturalWidth"))
