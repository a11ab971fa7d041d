"""First approvals waiting for a second approver (the two-person rule), kept in the console's
SQLite database so they survive a restart. Bound to the approval's payload fingerprint: a changed
payload needs two fresh approvals."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS first_approvals (
  approval_id TEXT NOT NULL,
  key TEXT NOT NULL,
  user TEXT NOT NULL,
  at REAL NOT NULL,
  PRIMARY KEY (approval_id, key, user)
);
"""


class CosignStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def add(self, approval_id: str, key: str, user: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO first_approvals VALUES (?, ?, ?, ?)",
                (approval_id, key, user, time.time()),
            )

    def approvers(self, approval_id: str, key: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT user FROM first_approvals WHERE approval_id = ? AND key = ? ORDER BY at",
                (approval_id, key),
            ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        self._db.close()
