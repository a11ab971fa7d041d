"""The new-bill form's rules and the payment-date rule, as plain functions.

Every message names the rule it enforces, so a person (or an agent reading the page) knows
exactly what to change.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from taskcrew.mock_erp.money import MAX_CENTS, PLAIN_AMOUNT, to_cents

BILL_FIELDS: tuple[str, ...] = (
    "vendor_id",
    "invoice_number",
    "amount",
    "currency",
    "invoice_date",
    "due_date",
    "notes",
)
MAX_INVOICE_NUMBER = 64
MAX_NOTES = 500
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TOO_MANY_DECIMALS = re.compile(r"^\d+\.\d{3,}$")

AMOUNT_NOT_PLAIN = "Amount must be a plain number like 99.90 — no thousands separators or currency symbols."
AMOUNT_DECIMALS = "Amount must have at most 2 decimal places, like 99.90."
AMOUNT_POSITIVE = "Amount must be greater than 0."
AMOUNT_TOO_LARGE = "Amount is too large (at most 999999999.99)."


class BillDraft(BaseModel):
    """A new bill that passed every field rule (duplicates are checked against the database)."""

    model_config = ConfigDict(frozen=True)

    vendor_id: int
    invoice_number: str
    amount_cents: int = Field(gt=0)
    currency: str
    invoice_date: date
    due_date: date
    notes: str | None = None


class BillFormResult(BaseModel):
    draft: BillDraft | None = None
    errors: dict[str, str] = Field(default_factory=dict)


def parse_iso_date(text: str, label: str) -> tuple[date | None, str | None]:
    """(date, None) or (None, message). ``label`` starts the message: 'Invoice date'."""
    text = text.strip()
    if not text:
        return None, f"{label} is required (format YYYY-MM-DD)."
    if _ISO_DATE.match(text):
        try:
            return date.fromisoformat(text), None
        except ValueError:
            pass
    return None, f"{label} must be a real date in YYYY-MM-DD format, like 2026-01-31."


def check_amount(text: str) -> tuple[int | None, str | None]:
    text = text.strip()
    if not text:
        return None, "Amount is required."
    if text.startswith("-") and PLAIN_AMOUNT.match(text[1:]):
        return None, AMOUNT_POSITIVE
    if _TOO_MANY_DECIMALS.match(text):
        return None, AMOUNT_DECIMALS
    if not PLAIN_AMOUNT.match(text):
        return None, AMOUNT_NOT_PLAIN
    cents = to_cents(text)
    if cents <= 0:
        return None, AMOUNT_POSITIVE
    if cents > MAX_CENTS:
        return None, AMOUNT_TOO_LARGE
    return cents, None


def validate_bill_form(
    form: Mapping[str, str], vendor_ids: Collection[int], currencies: Collection[str]
) -> BillFormResult:
    errors: dict[str, str] = {}

    vendor_text = form.get("vendor_id", "").strip()
    vendor_id = int(vendor_text) if vendor_text.isdigit() else None
    if not vendor_text:
        errors["vendor_id"] = "Choose a vendor from the list."
    elif vendor_id not in vendor_ids:
        errors["vendor_id"] = "Choose a vendor from the list; the vendor sent is not one we know."

    invoice_number = " ".join(form.get("invoice_number", "").split())
    if not invoice_number:
        errors["invoice_number"] = "Invoice number is required."
    elif len(invoice_number) > MAX_INVOICE_NUMBER:
        errors["invoice_number"] = f"Invoice number must be at most {MAX_INVOICE_NUMBER} characters."

    cents, message = check_amount(form.get("amount", ""))
    if message:
        errors["amount"] = message

    currency = form.get("currency", "").strip()
    if not currency:
        errors["currency"] = "Choose a currency (an ISO code such as USD) from the list."
    elif currency not in currencies:
        errors["currency"] = "Currency must be an ISO code from the list: " + ", ".join(currencies) + "."

    invoice_date, message = parse_iso_date(form.get("invoice_date", ""), "Invoice date")
    if message:
        errors["invoice_date"] = message
    due_date, message = parse_iso_date(form.get("due_date", ""), "Due date")
    if message:
        errors["due_date"] = message
    elif invoice_date and due_date and due_date < invoice_date:
        errors["due_date"] = f"Due date cannot be before the invoice date ({invoice_date.isoformat()})."

    notes = form.get("notes", "").strip()
    if len(notes) > MAX_NOTES:
        errors["notes"] = f"Notes must be at most {MAX_NOTES} characters."

    if errors:
        return BillFormResult(errors=errors)
    assert vendor_id is not None and cents is not None and invoice_date and due_date
    draft = BillDraft(
        vendor_id=vendor_id,
        invoice_number=invoice_number,
        amount_cents=cents,
        currency=currency,
        invoice_date=invoice_date,
        due_date=due_date,
        notes=notes or None,
    )
    return BillFormResult(draft=draft)


def validate_payment_date(text: str, invoice_date: date) -> tuple[date | None, str | None]:
    paid_on, message = parse_iso_date(text, "Payment date")
    if message:
        return None, message
    assert paid_on is not None
    if paid_on < invoice_date:
        return None, f"Payment date cannot be before the invoice date ({invoice_date.isoformat()})."
    return paid_on, None
