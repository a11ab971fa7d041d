"""Who an ERP is, so `taskcrew run` can agree on the demo ERP's login without extra setup.

The demo ERP answers ``GET /_about`` with its name and a *login check*: a salted SHA-256 of its
configured username and password (never the password itself). A client that holds candidate
credentials (``ACME_ERP_*`` or the demo defaults, the same ones `taskcrew erp serve` reads) computes
the same digest; equal digests mean the candidate login is the one that ERP accepts.
"""

from __future__ import annotations

import hashlib
import secrets

from pydantic import BaseModel, ConfigDict

from taskcrew.mock_erp.settings import ErpSettings

APP_NAME = "Acme Payables"
ABOUT_PATH = "/_about"


class ErpAbout(BaseModel):
    model_config = ConfigDict(frozen=True)

    app: str
    version: int = 1
    salt: str
    login_check: str


def login_check(salt: str, username: str, password: str) -> str:
    return hashlib.sha256(f"{salt}\0{username}\0{password}".encode()).hexdigest()


def about(settings: ErpSettings, salt: str | None = None) -> ErpAbout:
    chosen = salt or secrets.token_hex(8)
    check = login_check(chosen, settings.username, settings.password.get_secret_value())
    return ErpAbout(app=APP_NAME, salt=chosen, login_check=check)


def login_matches(info: ErpAbout, settings: ErpSettings) -> bool:
    expected = login_check(info.salt, settings.username, settings.password.get_secret_value())
    return secrets.compare_digest(expected, info.login_check)
