"""Logins, sessions with a sliding expiry, per-session CSRF tokens and one-shot flash messages."""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from taskcrew.mock_erp.models import SessionInfo, SessionStatus
from taskcrew.mock_erp.settings import ErpSettings

Clock = Callable[[], float]
FlashKind = Literal["success", "info", "warning"]


class Flash(BaseModel):
    kind: FlashKind
    text: str


class Session(BaseModel):
    model_config = ConfigDict(frozen=True)

    token: str
    username: str
    csrf_token: str


def iso_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class SessionStore:
    def __init__(self, conn: sqlite3.Connection, settings: ErpSettings, clock: Clock = time.time) -> None:
        self._conn = conn
        self._settings = settings
        self._clock = clock

    def credentials_ok(self, username: str, password: str) -> bool:
        expected_user = self._settings.username.encode()
        expected_password = self._settings.password.get_secret_value().encode()
        user_ok = secrets.compare_digest(username.encode(), expected_user)
        password_ok = secrets.compare_digest(password.encode(), expected_password)
        return user_ok and password_ok

    def start(self, username: str) -> Session:
        now = self._clock()
        session = Session(
            token=secrets.token_urlsafe(24), username=username, csrf_token=secrets.token_urlsafe(24)
        )
        self._conn.execute(
            "INSERT INTO sessions (token, username, csrf_token, created_at, expires_at, status)"
            " VALUES (?, ?, ?, ?, ?, 'active')",
            (session.token, username, session.csrf_token, now, now + self._settings.session_ttl_s),
        )
        return session

    def lookup(self, token: str | None) -> Session | None:
        """The live session for ``token``, its expiry pushed forward; None when missing or expired."""
        if not token:
            return None
        row = self._conn.execute(
            "SELECT username, csrf_token, expires_at, status FROM sessions WHERE token = ?", (token,)
        ).fetchone()
        now = self._clock()
        if row is None or row[3] != "active" or row[2] <= now:
            return None
        self._conn.execute(
            "UPDATE sessions SET expires_at = ? WHERE token = ?", (now + self._settings.session_ttl_s, token)
        )
        return Session(token=token, username=row[0], csrf_token=row[1])

    def end(self, token: str, status: Literal["logged_out", "revoked"]) -> None:
        self._conn.execute("UPDATE sessions SET status = ?, flash = NULL WHERE token = ?", (status, token))

    def set_flash(self, token: str, flash: Flash) -> None:
        self._conn.execute("UPDATE sessions SET flash = ? WHERE token = ?", (flash.model_dump_json(), token))

    def pop_flash(self, token: str) -> Flash | None:
        row = self._conn.execute("SELECT flash FROM sessions WHERE token = ?", (token,)).fetchone()
        if not row or not row[0]:
            return None
        self._conn.execute("UPDATE sessions SET flash = NULL WHERE token = ?", (token,))
        return Flash.model_validate_json(row[0])

    def infos(self) -> list[SessionInfo]:
        now = self._clock()
        rows = self._conn.execute(
            "SELECT token, username, created_at, expires_at, status FROM sessions ORDER BY created_at"
        ).fetchall()
        infos = []
        for token, username, created, expires, status in rows:
            shown: SessionStatus = "expired" if status == "active" and expires <= now else status
            infos.append(
                SessionInfo(
                    id_prefix=token[:8],
                    username=username,
                    created_at=iso_utc(created),
                    expires_at=iso_utc(expires),
                    status=shown,
                )
            )
        return infos
