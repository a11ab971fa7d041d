"""The changed record, as the system showed it when the worker asked (``ApprovalRequest.record``,
read by the gate: ``approvals/record.py``), and the vendors it knows (``known_vendors``): the
"before" of each field sent and the record's own values (whether the payee is a new vendor is the
authority's: ``rules.new_vendor``)."""

from __future__ import annotations

import re

from taskcrew.approvals.authority import ApprovalView
from taskcrew.approvals.rules import same_name


def before_values(view: ApprovalView) -> dict[str, tuple[str, str]]:
    """For each field sent, (the record's label, its value now) as the system showed it when the
    worker asked (its page read again: a details list, a table row, or the edit form as served),
    matched by the field's name or the label beside it; fields the record does not show are left out."""
    request = view.approval.request
    if request is None or request.record is None:
        return {}
    keys: dict[str, tuple[str, str]] = {}
    for key, value in request.record.values.items():
        label, _, name = key.rpartition(" (") if key.endswith(")") else (key, "", "")
        for k in (key, label, name.rstrip(")")):
            if k.strip():
                keys.setdefault(same_name(k), (key, value))
    out: dict[str, tuple[str, str]] = {}
    for name, _ in view.fields:
        for k in (name, re.sub(r"_?id$", "", name)):
            if same_name(k) in keys:
                out[name] = keys[same_name(k)]
                break
    return out


def record_fields(view: ApprovalView) -> list[tuple[str, str]]:
    """The changed record's values as (name, value), its labels as field names ("Due_date")."""
    request = view.approval.request
    if request is None or request.record is None or view.problem:
        return []
    return [(k.replace(" ", "_"), v) for k, v in request.record.values.items()]
