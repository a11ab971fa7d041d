"""The SQLite file: schema, opening with a clear error for foreign files, and (re)seeding."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from taskcrew.mock_erp.errors import ErpError
from taskcrew.mock_erp.money import to_cents
from taskcrew.mock_erp.seed import SeedData

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE vendors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    default_currency TEXT NOT NULL
);
CREATE TABLE bills (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    vendor_id INTEGER NOT NULL REFERENCES vendors(id),
    invoice_number TEXT NOT NULL,
    invoice_number_key TEXT NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    currency TEXT NOT NULL,
    invoice_date TEXT NOT NULL,
    due_date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('unpaid', 'paid')),
    paid_on TEXT,
    created_at TEXT NOT NULL,
    notes TEXT,
    UNIQUE (vendor_id, invoice_number_key)
);
CREATE TABLE payments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bill_seq INTEGER NOT NULL REFERENCES bills(seq),
    paid_on TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    currency TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE sessions (
    token TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'logged_out', 'revoked')),
    flash TEXT
);
"""
TABLES = ("sessions", "payments", "bills", "vendors")


class ErpDatabaseError(ErpError):
    """The database file cannot be used; the message says what to do."""


def invoice_number_key(invoice_number: str) -> str:
    """Duplicate detection ignores case and surrounding/multiple spaces."""
    return " ".join(invoice_number.split()).casefold()


def open_database(path: Path, seed: SeedData, *, reset: bool = False) -> sqlite3.Connection:
    """Open (creating and seeding when new, or when ``reset``) the ERP database at ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise ErpDatabaseError(f"cannot open the database {path} ({exc}); choose another path.") from exc
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ErpDatabaseError(
            f"{path} is not an SQLite database ({exc}); choose another database path."
        ) from exc
    if not reset and has_tables and version != SCHEMA_VERSION:
        conn.close()
        raise ErpDatabaseError(
            f"{path} is not an Acme Payables database of schema version {SCHEMA_VERSION} "
            f"(found version {version}); reset it (erp serve --reset) or choose another path."
        )
    if reset or not has_tables:
        reseed(conn, seed)
    return conn


def reseed(conn: sqlite3.Connection, seed: SeedData) -> None:
    """Drop everything and write the seed: vendors, bills (BILL-0001...) and their payments."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        vendor_ids: dict[str, int] = {}
        for vendor in seed.vendors:
            cur = conn.execute(
                "INSERT INTO vendors (name, default_currency) VALUES (?, ?)",
                (vendor.name, vendor.default_currency),
            )
            assert cur.lastrowid is not None
            vendor_ids[vendor.name] = cur.lastrowid
        for bill in seed.bills:
            cents = to_cents(bill.amount)
            cur = conn.execute(
                "INSERT INTO bills (vendor_id, invoice_number, invoice_number_key, amount_cents, currency,"
                " invoice_date, due_date, status, paid_on, created_at, notes)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    vendor_ids[bill.vendor],
                    bill.invoice_number,
                    invoice_number_key(bill.invoice_number),
                    cents,
                    bill.currency,
                    bill.invoice_date.isoformat(),
                    bill.due_date.isoformat(),
                    "paid" if bill.paid_on else "unpaid",
                    bill.paid_on.isoformat() if bill.paid_on else None,
                    bill.created_at,
                    bill.notes,
                ),
            )
            if bill.paid_on:
                conn.execute(
                    "INSERT INTO payments (bill_seq, paid_on, amount_cents, currency, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (
                        cur.lastrowid,
                        bill.paid_on.isoformat(),
                        cents,
                        bill.currency,
                        f"{bill.paid_on.isoformat()}T09:00:00Z",
                    ),
                )
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
