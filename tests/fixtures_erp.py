"""pytest fixtures for the erp area (imported by conftest.py).

- ``erp``: a started Acme Payables on a free port with a fresh database in tmp_path, chaos off.
- ``erp_factory(chaos=..., settings=...)``: more servers, e.g. with chaos on; all stopped after the test.
- ``ErpUser``: a person at the ERP over real HTTP (logs in, reads CSRF tokens from the forms, submits).
- ``erp_state(server_or_url)``: the typed ground truth from /_debug/state.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from taskcrew.mock_erp import ChaosConfig, DebugState, ErpServer, ErpSettings, fetch_state

__all__ = [
    "ErpFactory",
    "ErpUser",
    "erp",
    "erp_factory",
    "erp_state",
    "erp_user",
    "erp_user_factory",
]

ErpFactory = Callable[..., ErpServer]

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_OPTION = re.compile(r'<option value="(\d+)"[^>]*>([^<]+)</option>')

# Northwind's INV-2057 as a person would type it (the headline task's bill).
NORTHWIND_2057: dict[str, str] = {
    "vendor": "Northwind Traders",
    "invoice_number": "INV-2057",
    "amount": "1284.50",
    "currency": "USD",
    "invoice_date": "2026-09-12",
    "due_date": "2026-10-12",
}


def erp_state(server_or_url: ErpServer | str) -> DebugState:
    """The ground truth over HTTP, typed."""
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    return fetch_state(url)


class ErpUser:
    """A person using the ERP's pages over real HTTP (redirects are not followed automatically)."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, follow_redirects=False, timeout=30)

    def close(self) -> None:
        self.http.close()

    def csrf_token(self, page: str) -> str:
        response = self.http.get(page)
        match = _CSRF.search(response.text)
        assert match, f"no CSRF token on {page} (HTTP {response.status_code})"
        return match.group(1)

    def login(
        self, username: str = "demo", password: str = "demo123", next_path: str = "/bills"
    ) -> httpx.Response:
        token = self.csrf_token("/login")
        return self.http.post(
            "/login",
            data={"username": username, "password": password, "csrf_token": token, "next": next_path},
        )

    def vendor_ids(self) -> dict[str, str]:
        """Vendor name -> option value, read from the new-bill form's select."""
        page = self.http.get("/bills/new").text
        return {html.unescape(name): value for value, name in _OPTION.findall(page)}

    def new_bill(self, confirm_near_duplicate: bool = False, **fields: str) -> httpx.Response:
        """Submit the new-bill form. ``vendor`` is a name; other keys are the form's field names."""
        values = {**NORTHWIND_2057, **fields}
        vendor = values.pop("vendor")
        values["vendor_id"] = self.vendor_ids().get(vendor, vendor)
        values["csrf_token"] = self.csrf_token("/bills/new")
        if confirm_near_duplicate:
            values["confirm_near_duplicate"] = "yes"
        return self.http.post("/bills/new", data=values)

    def mark_paid(self, bill_id: str, paid_on: str) -> httpx.Response:
        token = self.csrf_token(f"/bills/{bill_id}")
        return self.http.post(f"/bills/{bill_id}/pay", data={"paid_on": paid_on, "csrf_token": token})


@pytest.fixture
def erp_factory(tmp_path: Path) -> Iterator[ErpFactory]:
    started: list[ErpServer] = []

    def make(chaos: ChaosConfig | None = None, settings: ErpSettings | None = None) -> ErpServer:
        server = ErpServer(
            tmp_path / f"erp-{len(started)}.sqlite3",
            settings=settings or ErpSettings(),
            chaos=chaos or ChaosConfig.off(),
        )
        started.append(server.start())
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def erp(erp_factory: ErpFactory) -> ErpServer:
    """Acme Payables with chaos off."""
    return erp_factory()


@pytest.fixture
def erp_user_factory() -> Iterator[Callable[[ErpServer], ErpUser]]:
    users: list[ErpUser] = []

    def make(server: ErpServer) -> ErpUser:
        users.append(ErpUser(server.url))
        return users[-1]

    yield make
    for user in users:
        user.close()


@pytest.fixture
def erp_user(erp: ErpServer, erp_user_factory: Callable[[ErpServer], ErpUser]) -> ErpUser:
    """Logged in as demo on the chaos-free ``erp``."""
    user = erp_user_factory(erp)
    assert user.login().status_code == 303
    return user
