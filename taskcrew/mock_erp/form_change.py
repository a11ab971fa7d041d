"""Chaos: the new-bill form as a later release of the ERP might ship it (``ChaosConfig.form_change``).

- ``rename``: the invoice number is sent as ``vendor_invoice_no`` (its label stays "Invoice number");
- ``add``: an optional "Purchase order" field appears after the invoice number;
- ``relabel``: the amount keeps its name but is labelled "Net amount before tax" (a field whose
  meaning a release changed: what a client that matches by name alone would fill wrongly).

The form is rendered with these names and what comes back is read under the usual ones, so the ERP
behaves the same; only what a client bound to the old form sees changes. Moving fields is
``shuffle_fields``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

FormChange = Literal["none", "rename", "add", "relabel"]
RENAMED = {"invoice_number": "vendor_invoice_no"}
RELABELLED = {"amount": "Net amount before tax"}
ADDED = "purchase_order"


def sent_names(change: FormChange, fields: Sequence[str]) -> dict[str, str]:
    """Field → the name the form sends it under."""
    names = {name: name for name in [*fields, ADDED]}
    if change == "rename":
        names.update(RENAMED)
    return names


def labels(change: FormChange) -> dict[str, str]:
    """Field → the label the form shows instead of the usual one."""
    return dict(RELABELLED) if change == "relabel" else {}


def field_order(change: FormChange, order: list[str]) -> list[str]:
    if change != "add" or ADDED in order:
        return order
    at = order.index("invoice_number") + 1 if "invoice_number" in order else len(order)
    return [*order[:at], ADDED, *order[at:]]


def incoming(change: FormChange, form: Mapping[str, str]) -> dict[str, str]:
    """The submitted form under the usual field names."""
    data = dict(form)
    if change == "rename":
        for usual, sent in RENAMED.items():
            if sent in data:
                data[usual] = data.pop(sent)
    data.pop(ADDED, None)
    return data
