"""Login sessions persisted in SQLite, so a console restart does not log anyone out.

Only a SHA-256 of the session id is stored: a copy of the database cannot be replayed as a cookie.
Each session carries its own CSRF token, and its one pending message ("Approval … approved"): the
words the console says after an action live here, on the server, never in a cookie (cookies are not
bound to a port, so any page on another port of the same host could set one).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from pathlib import Path

from pydantic import BaseModel

from taskcrew.approvals.identity import STARTUP_CREDENTIAL, Identity, is_startup, startup_credential

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
  id_hash TEXT PRIMARY KEY,
  user TEXT NOT NULL,
  csrf TEXT NOT NULL,
  created REAL NOT NULL,
  expires REAL NOT NULL,
  credential TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS flashes (
  id_hash TEXT PRIMARY KEY,
  message TEXT NOT NULL,
  kind TEXT NOT NULL
);
"""


class Session(BaseModel):
    user: str
    csrf: str
    created: float
    expires: float
    # the user's password it was opened with (approvals.identity.credentials); for the start-up
    # token's login, identity.STARTUP_CREDENTIAL while the store holds the token that opened it (it
    # counts only while there are no users), else the token-bound credential, which never counts
    credential: str = ""


def identity_of(session: Session) -> Identity:
    """Who a console session proves: its user, with the password the session was opened with."""
    return Identity(name=session.user, proof="console", credential=session.credential)


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class SessionStore:
    """The console's sessions. ``startup_token``: the start-up token the console holds (printed at a
    start with no users; None: it holds none). A session opened with a start-up token keeps
    ``identity.startup_credential`` of it, and proves ``identity.STARTUP_CREDENTIAL`` only in a
    store holding that very token: a restart (a new token) or a console started with users (none)
    ends every start-up session from before."""

    def __init__(self, path: Path, ttl_seconds: float = 12 * 3600, startup_token: str | None = None) -> None:
        self.path = path
        self.ttl = ttl_seconds
        self._startup = startup_credential(startup_token) if startup_token else None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(sessions)")}
            if "credential" not in columns:  # a session opened before it was kept: log in again
                self._db.execute("ALTER TABLE sessions ADD COLUMN credential TEXT NOT NULL DEFAULT '-'")
        except sqlite3.DatabaseError as exc:
            raise RuntimeError(
                f"The console's session database {path} is damaged or unreadable ({exc}). "
                "Move it aside; everyone will simply log in again."
            ) from exc

    def create(self, user: str, credential: str = "") -> tuple[str, Session]:
        session_id = secrets.token_urlsafe(32)
        now = time.time()
        session = Session(
            user=user,
            csrf=secrets.token_urlsafe(32),
            created=now,
            expires=now + self.ttl,
            credential=self._proves(credential),
        )
        with self._lock:
            self._db.execute(
                "INSERT INTO sessions (id_hash, user, csrf, created, expires, credential) VALUES (?, ?, ?, ?, ?, ?)",
                (_digest(session_id), user, session.csrf, session.created, session.expires, credential),
            )
            self._db.execute("DELETE FROM sessions WHERE expires < ?", (now,))
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT user, csrf, created, expires, credential FROM sessions WHERE id_hash = ?",
                (_digest(session_id),),
            ).fetchone()
        if row is None or row[3] < time.time():
            return None
        return Session(
            user=row[0], csrf=row[1], created=row[2], expires=row[3], credential=self._proves(row[4])
        )

    def _proves(self, stored: str) -> str:
        """What a session's stored credential proves here: a start-up session's is
        ``STARTUP_CREDENTIAL`` only when bound to the token this store holds; one bound to another
        token, or to none (stored before sessions were bound), stays bound, and counts for nothing
        (``identity.standing_refusal``)."""
        if not is_startup(stored):
            return stored
        if self._startup is not None and hmac.compare_digest(stored, self._startup):
            return STARTUP_CREDENTIAL
        return stored if stored != STARTUP_CREDENTIAL else startup_credential(None)

    def drop_startup(self) -> int:
        """Delete every session opened with a start-up token (there are users now, or the console
        started with some): how many."""
        prefix = f"{STARTUP_CREDENTIAL}:"
        gone = "SELECT id_hash FROM sessions WHERE credential = ? OR substr(credential, 1, ?) = ?"
        args = (STARTUP_CREDENTIAL, len(prefix), prefix)
        with self._lock:
            self._db.execute(f"DELETE FROM flashes WHERE id_hash IN ({gone})", args)
            return self._db.execute(
                "DELETE FROM sessions WHERE credential = ? OR substr(credential, 1, ?) = ?", args
            ).rowcount

    def delete(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._db.execute("DELETE FROM sessions WHERE id_hash = ?", (_digest(session_id),))
                self._db.execute("DELETE FROM flashes WHERE id_hash = ?", (_digest(session_id),))

    def flash(self, session_id: str | None, message: str, kind: str = "info") -> None:
        """The message the session's next page shows (one at a time: the latest wins)."""
        if session_id and self.get(session_id) is not None:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO flashes VALUES (?, ?, ?)", (_digest(session_id), message, kind)
                )

    def take_flash(self, session_id: str | None) -> tuple[str, str]:
        """The pending message and its kind ("info" or "error"), removed; ("", "info") when none."""
        if not session_id:
            return "", "info"
        with self._lock:
            row = self._db.execute(
                "DELETE FROM flashes WHERE id_hash = ? RETURNING message, kind", (_digest(session_id),)
            ).fetchone()
        return (row[0], "error" if row[1] == "error" else "info") if row else ("", "info")

    def close(self) -> None:
        self._db.close()
