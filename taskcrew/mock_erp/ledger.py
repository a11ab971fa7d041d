"""Vendors, bills and payments: the accounts-payable data behind the pages."""

from __future__ import annotations

import sqlite3
from datetime import date

from pydantic import BaseModel, ConfigDict

from taskcrew.mock_erp.db import invoice_number_key
from taskcrew.mock_erp.models import Bill, BillStatus, Payment, Vendor
from taskcrew.mock_erp.money import format_cents
from taskcrew.mock_erp.validation import BillDraft

_BILL_SELECT = (
    "SELECT b.seq, v.name, b.invoice_number, b.amount_cents, b.currency, b.invoice_date, b.due_date,"
    " b.status, b.paid_on, b.created_at, b.notes FROM bills b JOIN vendors v ON v.id = b.vendor_id"
)


class BillFilter(BaseModel):
    """The bills list's filters; ``due_before`` is exclusive (due strictly before that day)."""

    model_config = ConfigDict(frozen=True)

    status: BillStatus | None = None
    vendor_id: int | None = None
    currency: str | None = None
    due_before: date | None = None


def bill_id(seq: int) -> str:
    return f"BILL-{seq:04d}"


def bill_seq(bill_id_text: str) -> int | None:
    prefix, _, number = bill_id_text.partition("-")
    return int(number) if prefix == "BILL" and number.isdigit() else None


def _bill(row: tuple) -> Bill:
    seq, vendor, number, cents, currency, invoice_date, due_date, status, paid_on, created_at, notes = row
    return Bill(
        id=bill_id(seq),
        vendor=vendor,
        invoice_number=number,
        amount=format_cents(cents),
        currency=currency,
        invoice_date=invoice_date,
        due_date=due_date,
        status=status,
        paid_on=paid_on,
        created_at=created_at,
        notes=notes,
    )


class Ledger:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def vendors(self) -> list[Vendor]:
        rows = self._conn.execute("SELECT id, name, default_currency FROM vendors ORDER BY name").fetchall()
        return [Vendor(id=i, name=n, default_currency=c) for i, n, c in rows]

    def vendor(self, vendor_id: int) -> Vendor | None:
        return next((v for v in self.vendors() if v.id == vendor_id), None)

    def bills(self, where: BillFilter | None = None) -> list[Bill]:
        where = where or BillFilter()
        clauses: list[str] = []
        params: list[object] = []
        if where.status:
            clauses.append("b.status = ?")
            params.append(where.status)
        if where.vendor_id is not None:
            clauses.append("b.vendor_id = ?")
            params.append(where.vendor_id)
        if where.currency:
            clauses.append("b.currency = ?")
            params.append(where.currency)
        if where.due_before:
            clauses.append("b.due_date < ?")
            params.append(where.due_before.isoformat())
        sql = _BILL_SELECT + (" WHERE " + " AND ".join(clauses) if clauses else "") + " ORDER BY b.seq"
        return [_bill(row) for row in self._conn.execute(sql, params).fetchall()]

    def bill(self, bill_id_text: str) -> Bill | None:
        seq = bill_seq(bill_id_text)
        if seq is None:
            return None
        row = self._conn.execute(_BILL_SELECT + " WHERE b.seq = ?", (seq,)).fetchone()
        return _bill(row) if row else None

    def duplicate_of(self, vendor_id: int, invoice_number: str) -> Bill | None:
        """The bill with this vendor and invoice number (ignoring case and spacing), if any."""
        row = self._conn.execute(
            _BILL_SELECT + " WHERE b.vendor_id = ? AND b.invoice_number_key = ?",
            (vendor_id, invoice_number_key(invoice_number)),
        ).fetchone()
        return _bill(row) if row else None

    def near_duplicates(self, draft: BillDraft) -> list[Bill]:
        """Bills of the same vendor, amount and invoice date under a different invoice number."""
        rows = self._conn.execute(
            _BILL_SELECT + " WHERE b.vendor_id = ? AND b.amount_cents = ? AND b.invoice_date = ?"
            " AND b.invoice_number_key != ? ORDER BY b.seq",
            (
                draft.vendor_id,
                draft.amount_cents,
                draft.invoice_date.isoformat(),
                invoice_number_key(draft.invoice_number),
            ),
        ).fetchall()
        return [_bill(row) for row in rows]

    def add_bill(self, draft: BillDraft, created_at: str) -> Bill:
        cur = self._conn.execute(
            "INSERT INTO bills (vendor_id, invoice_number, invoice_number_key, amount_cents, currency,"
            " invoice_date, due_date, status, paid_on, created_at, notes)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'unpaid', NULL, ?, ?)",
            (
                draft.vendor_id,
                draft.invoice_number,
                invoice_number_key(draft.invoice_number),
                draft.amount_cents,
                draft.currency,
                draft.invoice_date.isoformat(),
                draft.due_date.isoformat(),
                created_at,
                draft.notes,
            ),
        )
        assert cur.lastrowid is not None
        added = self.bill(bill_id(cur.lastrowid))
        assert added is not None
        return added

    def mark_paid(self, bill: Bill, paid_on: date, created_at: str) -> Bill:
        seq = bill_seq(bill.id)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.execute(
                "UPDATE bills SET status = 'paid', paid_on = ? WHERE seq = ?", (paid_on.isoformat(), seq)
            )
            self._conn.execute(
                "INSERT INTO payments (bill_seq, paid_on, amount_cents, currency, created_at)"
                " SELECT seq, ?, amount_cents, currency, ? FROM bills WHERE seq = ?",
                (paid_on.isoformat(), created_at, seq),
            )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        paid = self.bill(bill.id)
        assert paid is not None
        return paid

    def payments(self) -> list[Payment]:
        rows = self._conn.execute(
            "SELECT id, bill_seq, paid_on, amount_cents, currency, created_at FROM payments ORDER BY id"
        ).fetchall()
        return [
            Payment(id=i, bill_id=bill_id(s), paid_on=p, amount=format_cents(c), currency=cur, created_at=at)
            for i, s, p, c, cur, at in rows
        ]
