"""Is a knowledge store folder usable? Checked before chroma opens it, so damage is never papered over.

Chroma, given a truncated or empty ``chroma.sqlite3``, silently starts a new store — and the bootstrap
would then reseed the demo handbook over the user's lost documents and facts. ``check_store`` refuses
instead, with what happened and how to recover. Only an absent store is created (and seeded).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from taskcrew.inputs import UserError

DB_NAME = "chroma.sqlite3"
REQUIRED_TABLES = ("collections", "embeddings")


class StoreDamaged(UserError, RuntimeError):
    """The knowledge store cannot be used as it is; the message says how to recover."""


def _recovery(directory: Path) -> str:
    return (
        f"nothing was changed. To start over, move it aside (mv {directory} {directory}.damaged) and run "
        "again: a new store is created with the demo handbook; re-ingest your documents with "
        "`taskcrew knowledge ingest` (learned facts come back only from a backup of the folder)"
    )


def store_exists(directory: Path) -> bool:
    return (directory / DB_NAME).exists()


def check_store(directory: Path) -> None:
    """Raise StoreDamaged unless ``directory`` is absent, an empty folder, or a sound chroma store."""
    if directory.exists() and not directory.is_dir():
        raise StoreDamaged(f"the knowledge store {directory} is a file, not a folder: pass --store a folder")
    db = directory / DB_NAME
    if not db.exists():
        return
    if not db.is_file():
        raise StoreDamaged(f"the knowledge store's database {db} is not a file; {_recovery(directory)}")
    if db.stat().st_size == 0:
        raise StoreDamaged(
            f"the knowledge store's database {db} is empty (0 bytes, truncated?); {_recovery(directory)}"
        )
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        raise StoreDamaged(
            f"the knowledge store {db} cannot be opened ({exc}); {_recovery(directory)}"
        ) from exc
    try:
        verdict = conn.execute("PRAGMA quick_check").fetchone()
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            raise StoreDamaged(
                f"the knowledge store {db} is locked by another process: wait for it to finish, or stop it"
            ) from exc
        raise StoreDamaged(f"the knowledge store {db} is damaged ({exc}); {_recovery(directory)}") from exc
    except sqlite3.DatabaseError as exc:
        raise StoreDamaged(f"the knowledge store {db} is damaged ({exc}); {_recovery(directory)}") from exc
    finally:
        conn.close()
    if not verdict or verdict[0] != "ok":
        detail = verdict[0] if verdict else "no answer"
        raise StoreDamaged(f"the knowledge store {db} is damaged ({detail}); {_recovery(directory)}")
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise StoreDamaged(
            f"{db} is not a chroma store (no table {', '.join(missing)}); {_recovery(directory)}"
        )
