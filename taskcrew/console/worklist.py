"""What an approver must see to decide, read from an approval as the job store holds it.

For the inbox (one row per approval): vendor, amount and currency, due date, target system and
action, risk flags in words, age, who must still approve. For one approval's page: the values that
matter first (payee, amount, due date, bank details), each with the one place it came from — a
file with its page and line, or a system page — and whether OCR read it.

The risk rules themselves (thresholds, bank fields, second approver) stay in taskcrew.approvals
(rules and authority): this module only reads their assessment and names fields by the same rules.
Every flag shown is the authority's (``ApprovalView.assessment``: the rules', a value read by OCR, a
new vendor, an unclear payee), and so is the payee (``ApprovalView.payee``): bulk approval decides
by exactly what the page shows (``bulk_refusal``), and offers no checkbox where it would refuse,
nor where it has nothing to take it with (``offer_bulk``: two or more identical items on the page).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from taskcrew.approvals.authority import ApprovalView, bulk_refusal, password_box
from taskcrew.approvals.authority import shown_value as shown_value  # a field as read (web, pages)
from taskcrew.approvals.origins import SourceRef, field_keys, field_sources
from taskcrew.approvals.rules import (
    IBAN_SHAPE,
    PAYEE_FIELD,
    RiskRules,
    bank_field,
    bulk_key,
    field_matches,
    prose_field,
    read_money,
    with_address,
)
from taskcrew.approvals.visible import IN_FIELDS, Shown, ShownText, cut_value
from taskcrew.console.record_view import before_values, record_fields

DUE_FIELD = re.compile(r"due", re.IGNORECASE)
# the invoice number: a field named as one, else a reference (never one named like the payee)
NUMBER_FIELDS = (
    re.compile(r"invoice_?(number|no|nr)(?![a-z])", re.IGNORECASE),
    re.compile(r"reference", re.IGNORECASE),
)
VERBS = {"new": "create", "create": "create", "edit": "change", "update": "change", "pay": "pay"}
VERBS |= {"delete": "delete", "remove": "delete", "approve": "approve", "void": "void"}
DOES = {"change": "changes", "pay": "pays", "delete": "deletes", "approve": "approves", "void": "voids"}

FlagCode = Literal[
    "asked_again",
    "ocr",
    "bank",
    "amount",
    "new_vendor",
    "unreadable",
    "currency",
    "hidden",
    "sensitive",
    "unclear",
    "unread",
    "rule",
    "payee",
    "amounts",
    "repeated",
    "lookalike",
    "password",
]
FLAG_WORDS: dict[str, str] = {
    "asked_again": "asked again",
    "ocr": "value read by OCR",
    "bank": "bank details change",
    "amount": "amount over threshold",
    "new_vendor": "new vendor",
    "payee": "payee unclear",
    "lookalike": "payee named like another vendor record",
    "amounts": "amounts disagree",
    "repeated": "sent twice with different values",
    "unreadable": "amount not readable",
    "currency": "currency not readable",
    "hidden": "hidden characters",
    "sensitive": "sensitive target",
    "unclear": "unclear target path",
    "unread": "body not read exactly",
    "rule": "company rule",
    "password": "in a password box on the page",
}
RULE_CODES: dict[str, FlagCode] = {
    "bank_details": "bank",
    "amount_above_threshold": "amount",
    "unreadable_amount": "unreadable",
    "unreadable_currency": "currency",
    "hidden_characters": "hidden",
    "sensitive_target": "sensitive",
    "unclear_target": "unclear",
    "unread_body": "unread",
    "path_rule": "rule",
    "field_rule": "rule",
    "ocr_value": "ocr",
    "new_vendor": "new_vendor",
    "unclear_payee": "payee",
    "lookalike_vendor": "lookalike",
    "unclear_amount": "amounts",
    "repeated_field": "repeated",
    "password_box": "password",
}


class KeyValue(BaseModel):
    label: str
    field: str
    value: str
    source: SourceRef | None = None
    ocr: bool = False
    note: str = ""  # what a flag or a field's note says of it ("in a password box on the page")
    marked: bool = False  # listed for that alone: not the payee, amount, due date or bank details
    also: list[str] = Field(default_factory=list, description="its other values, of a name sent again")


ON_ITS_PAGE = "its approval's page shows it whole"  # where a worklist cell's cut value is


def cut(text: str, full_values: str = IN_FIELDS) -> Shown:
    """A value in a console cell (the worklist's, "What you approve"), cut as every surface cuts one
    (``visible.cut_value``): its end and the next row, the rule and the buttons stay on screen."""
    return Shown(cut_value(str(text), full_values))


class Flag(BaseModel):
    code: FlagCode
    words: str
    detail: ShownText = ""  # a ``Shown`` message (``ApprovalView.said``) is kept as such


AMOUNT_WHOLE = 32  # characters: an amount this long or shorter is never broken across lines


class WorkItem(BaseModel):
    view: ApprovalView
    vendor: str = ""
    invoice: str = ""
    amount: Decimal | None = None
    amount_text: str = ""
    amount_field: str = ""  # the field sent that holds the amount ("": none, or the record's, looked up)
    currency: str = ""  # the code the rules read; the value as sent when they could not read one
    limit: Decimal | None = None  # the threshold the rules applied to the amount (None: none read)
    due: str = ""
    system: str = ""  # the system's name (the host when it has none)
    host: str = ""
    action: str = ""
    flags: list[Flag] = Field(default_factory=list)
    age_seconds: float = 0.0
    still_needed: str = ""
    key_values: list[KeyValue] = Field(default_factory=list)
    sources: dict[str, SourceRef] = Field(default_factory=dict)  # by field key (``field_keys``)
    keys: list[str | None] = Field(
        default_factory=list, description="each field's key in ``sources``, in the request's order"
    )
    prose: list[bool] = Field(
        default_factory=list,
        description="whether each field, in the request's order, is free text (``rules.prose_field``): "
        "its value is shown as the rules judge it, typographic signs (m², ×, °) not marked",
    )
    before_of: dict[str, tuple[str, str]] = Field(
        default_factory=dict, description="field -> (label, value now)"
    )
    creating: bool = False
    payee_missing: bool = False  # it sets bank details and names no payee: whose account is it?
    shaped: bool = False  # its amount is judged by a value read as money only by its shape (``Headline``)
    bulk_refusal: str | None = None  # why bulk approval would refuse it (None: it may take it)
    # whether the worklist offers it for bulk approval: bulk approval may take it and another item
    # on the same page is identical in shape (``offer_bulk``); a lone one is decided on its own page
    selectable: bool = False

    @property
    def id(self) -> str:
        return self.view.approval.id

    def cut(self, text: str) -> Shown:
        """A value on the decision page above the list of every field sent (``cut``)."""
        return cut(text)

    def cell(self, text: str) -> Shown:
        """A value in the worklist's row (``cut``: the approval's page shows it whole)."""
        return cut(text, ON_ITS_PAGE)

    @property
    def age(self) -> str:
        minutes = int(self.age_seconds // 60)
        if minutes < 1:
            return "just now"
        if minutes < 60:
            return f"{minutes} min"
        hours, minutes = divmod(minutes, 60)
        if hours < 48:
            return f"{hours} h {minutes} min"
        return f"{hours // 24} days"

    @property
    def before(self) -> dict[str, str]:
        return {name: value for name, (_, value) in self.before_of.items()}

    @property
    def amount_whole(self) -> bool:
        """Whether the amount is drawn as one piece, never broken across lines (a readable amount of
        a sane length: "123,456,789,012." above "34 USD" reads as 34 USD). Anything else (an amount
        the rules cannot read, an absurdly long one) wraps anywhere, so its end stays on screen."""
        return self.amount is not None and len(self.amount_text) <= AMOUNT_WHOLE

    @property
    def touched(self) -> dict[str, str]:
        """record label -> the field sent for it"""
        return {label: name for name, (label, _) in self.before_of.items()}

    @property
    def bank_fields(self) -> set[str]:
        """The fields sent that set bank details (``rules.bank_field``, as the page's "Bank details"
        rows name them): their values, and the record's before them, are drawn in groups of four."""
        return {kv.field for kv in self.key_values if kv.label.startswith("Bank details") and kv.field}

    @property
    def flag_codes(self) -> set[str]:
        return {f.code for f in self.flags}

    @property
    def path(self) -> str:
        """The path the request is sent to ("/bills/new"), without the system's address."""
        request = self.view.approval.request
        return (urlsplit(request.url).path or "/") if request is not None else ""

    @property
    def approving(self) -> str:
        """What approving makes the system do, for "Approving lets the worker send this to …: it
        <this>." ("creates a new bill with the values above", "pays bill BILL-0004")."""
        verb, _, thing = self.action.partition(" ")
        if not verb:
            return ""
        if verb == "create":
            return f"creates a new {thing} with the values above"
        if verb == "submit":  # "submit to page": no verb the address names
            return "submits the form with the values above"
        return f"{DOES.get(verb, verb + 's')} {thing}"


_IBAN_CHARS = re.compile(r"[A-Za-z0-9]+( [A-Za-z0-9]+)*")  # letters and digits, single spaces between


def iban_groups(value: str) -> list[str] | None:
    """An IBAN-shaped value (ISO 13616: country, check digits, 11 to 30 letters or digits; spaced
    or not) cut into groups of four characters, each with the spaces the value has after them:
    "GB33BUKB20201555555555" -> ["GB33", "BUKB", …, "55"], "DE02 1203 0000" -> ["DE02 ", "1203 ",
    "0000"]. Joined, the groups are the value exactly, so a page can draw a new IBAN and the old
    one alike, group under group, and copying either gives it as it is. None: not IBAN-shaped (or
    not only letters, digits and single spaces): shown as it is."""
    if not _IBAN_CHARS.fullmatch(value) or not IBAN_SHAPE.fullmatch(value.replace(" ", "").upper()):
        return None
    groups: list[str] = []
    count = 4
    for char in value:
        if char != " " and count == 4:
            groups.append("")
            count = 0
        groups[-1] += char
        count += char != " "
    return groups


def summary_text(view: ApprovalView) -> str:
    """The request's summary without its provenance block (shown per field instead)."""
    request = view.approval.request
    return request.summary.split("where the values come from:")[0].strip() if request else ""


def _first(fields: list[tuple[str, str]], pattern: re.Pattern[str] | list[str]) -> tuple[str, str] | None:
    for name, value in fields:
        if field_matches(name, pattern) and value.strip():  # the rules' matcher of field names
            return name, value
    return None


def _invoice(fields: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The invoice number: a field named as one, else a reference; never a field named like the
    payee ("supplier_reference" may hold a vendor's name)."""
    fields = [(n, v) for n, v in fields if not field_matches(n, PAYEE_FIELD)]
    return next((hit for pattern in NUMBER_FIELDS if (hit := _first(fields, pattern))), None)


def action_words(method: str, url: str) -> tuple[str, str]:
    """("127.0.0.1:8800", "create bill") for POST http://127.0.0.1:8800/bills/new."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    verb = next((VERBS[s.lower()] for s in reversed(segments) if s.lower() in VERBS), None)
    nouns = [s for s in segments if s.lower() not in VERBS]
    thing = nouns[0].rstrip("s").replace("-", " ").replace("_", " ") if nouns else "page"
    ident = next((s for s in nouns[1:] if re.search(r"\d", s)), "")
    if verb is None:
        verb = {"DELETE": "delete", "PUT": "change", "PATCH": "change"}.get(method.upper(), "submit to")
    return parts.netloc, f"{verb} {thing}{' ' + ident if ident else ''}"


def work_item(
    view: ApprovalView, rules: RiskRules, now: datetime | None = None, systems: dict[str, str] | None = None
) -> WorkItem:
    approval = view.approval
    request = approval.request
    fields = view.fields  # empty when the stored payload fails its check: nothing of it is shown
    item = WorkItem(view=view, sources=field_sources(view))
    item.keys = field_keys([f.name for f in request.fields]) if request is not None else []
    item.vendor = " / ".join(view.payee.names)  # the authority's reading, as it judges it
    if number := _invoice(fields):
        item.invoice = number[1]
    looked_up = request.looked_up if request is not None and not view.problem else {}
    labels = request.option_labels() if request is not None and not view.problem else {}
    sent = with_address(fields, request.url) if request is not None and not view.problem else fields
    money = read_money(sent, rules, looked_up, labels)  # the amounts and currency as the rules read them
    item.prose = [prose_field(name, value, rules, money) for name, value in fields]
    if (head := money.headline) is not None:  # the largest amount sent; each, when they disagree
        item.amount_text, item.amount = head.text, head.value
        item.amount_field = head.field if any(head.field == n for n, _ in sent) else ""
        item.limit = money.limit if head.value is not None else None
        item.shaped = head.shaped
    if money.currency_field is not None or head is not None:
        item.currency = money.currency or money.currency_text
    if due := _first(fields, DUE_FIELD):
        item.due = due[1]
    if request is not None:
        item.host, item.action = action_words(request.method, request.url)
        item.system = (systems or {}).get(item.host, item.host)
        item.creating = item.action.startswith("create")
        item.before_of = {} if item.creating else before_values(view)
    record = record_fields(view) if not item.creating else []  # a change to an existing record:
    if not item.invoice and (number := _invoice(record)):  # what the form does not carry, the record shows
        item.invoice = number[1]
    if not item.due and (due := _first(record, DUE_FIELD)):
        item.due = due[1]
    item.flags = _flags(view)
    item.payee_missing = not item.vendor and any(f.code == "bank" for f in item.flags)
    item.bulk_refusal = bulk_refusal(view, rules) if rules.bulk_allowed else "bulk approval is switched off"
    created = approval.created_at if approval.created_at.tzinfo else approval.created_at.replace(tzinfo=UTC)
    item.age_seconds = max(0.0, ((now or datetime.now(UTC)) - created).total_seconds())
    item.still_needed = still_needed(view)
    item.key_values = _key_values(fields, item, rules)
    return item


def _flags(view: ApprovalView) -> list[Flag]:
    """The authority's flags in words (the ones bulk approval decides by), "asked again" first. A
    flag that asks for a second approver where the two-person rule is off here says so
    (``ApprovalView.said``)."""
    flags = [
        Flag(
            code=RULE_CODES[f.rule],
            words=FLAG_WORDS[RULE_CODES[f.rule]],
            detail=view.said(f),
        )
        for f in view.assessment.flags
    ]
    request = view.approval.request
    if request is not None and request.asked_again:  # approved before, when the record said otherwise
        flags.insert(0, Flag(code="asked_again", words=FLAG_WORDS["asked_again"], detail=request.asked_again))
    seen: set[str] = set()
    return [f for f in flags if not (f.code in seen or seen.add(f.code))]  # type: ignore[func-returns-value]


def _either(names: list[str]) -> str:
    """ "bob", "bob or ana", "bob, carol or ana"."""
    return " or ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


def still_needed(view: ApprovalView) -> str:
    """Who must still decide, in words (the two-person rule as decisions.py applies it)."""
    approval = view.approval
    if approval.status != "pending":
        return f"nobody: {approval.status}"
    if approval.kind == "question":
        return "one person answers"
    submitter = view.job.submitted_by if view.job else None
    if not view.needs_two:
        return "one approver (the two-person rule is off here)" if view.rule_off else "one approver"
    excluded = _either(list(dict.fromkeys([*view.first_approvers, *([submitter] if submitter else [])])))
    if view.first_approvers:
        return f"one more approver (not {excluded})"
    return f"two approvers (not {excluded})" if excluded else "two approvers"


def _payee_values(item: WorkItem) -> list[KeyValue]:
    """The payee as the authority reads it (``ApprovalView.payee``): the field that picks the
    vendor, a chosen option by its label; every field that names one when they disagree."""
    payee, request = item.view.payee, item.view.approval.request
    fields = payee.fields if payee.unclear else payee.fields[:1]
    record = request.record if payee.from_record and request is not None else None
    out = []
    for name, value in fields:
        label = f"Payee ({name})" if payee.unclear else "Payee"
        if record is not None:
            ref = SourceRef(text=f"the record in {item.system}, not changed by this", url=record.page)
            out.append(KeyValue(label=label, field="", value=value, source=ref))
        elif (sent := item.sources.get(name)) is not None:
            out.append(KeyValue(label=label, field=name, value=value, source=sent, ocr=sent.ocr))
        else:
            out.append(KeyValue(label=label, field=name, value=value))
    return out


def _key_values(fields: list[tuple[str, str]], item: WorkItem, rules: RiskRules) -> list[KeyValue]:
    wanted: list[tuple[str, Callable[[list[tuple[str, str]]], tuple[str, str] | None]]] = [
        ("Invoice number", _invoice),
        ("Amount", lambda found: _first(found, rules.amount_fields)),
        ("Due date", lambda found: _first(found, DUE_FIELD)),
    ]
    out = _payee_values(item)
    for label, read in wanted:
        if label == "Amount":  # the one the rules read as the amount
            hit = (item.amount_field, item.amount_text) if item.amount_field else None
        else:
            hit = read(fields)
        if hit is None:
            continue
        name, value = hit
        shown, note = value, ""
        if label == "Amount" and item.currency:
            shown = f"{value} {item.currency}"
        if label == "Amount" and item.shaped:
            note = f"read as money only by its shape: the rules know no field {cut_value(name)} as an amount"
        ref = item.sources.get(name)
        kv = KeyValue(label=label, field=name, value=shown, source=ref, ocr=bool(ref and ref.ocr), note=note)
        out.append(kv)
    request = item.view.approval.request
    labelled = record_fields(item.view) if not item.creating else []
    if request is not None and request.record is not None and labelled:  # what the form does not carry
        have = {kv.label for kv in out}
        for label, read in wanted:
            hit = read(labelled)
            if label not in have and hit is not None:
                ref = SourceRef(
                    text=f"the record in {item.system}, not changed by this", url=request.record.page
                )
                out.append(KeyValue(label=label, field="", value=hit[1], source=ref))
    if request is not None and not any(kv.label == "Amount" for kv in out) and "amount" in request.looked_up:
        found = request.looked_up  # paying a record: the amount is the record's, read from its page
        ref = SourceRef(text="read by the worker from the record's page", url=found.get("source"))
        shown = f"{found['amount']} {found.get('currency') or ''}".strip()
        out.insert(min(2, len(out)), KeyValue(label="Amount", field="", value=shown, source=ref))
    for name, value in fields:
        if bank_field(name, value, rules):
            ref = item.sources.get(name)
            out.append(
                KeyValue(
                    label=f"Bank details ({name})",
                    field=name,
                    value=value,
                    source=ref,
                    ocr=bool(ref and ref.ocr),
                )
            )
    return _with_marked(out, item)


def _with_marked(out: list[KeyValue], item: WorkItem) -> list[KeyValue]:
    """``out`` and every field sent that a flag names (``RiskFlag.field``) or its note marks (a
    password box, ``authority.password_box``; a value read by OCR) not in it yet, with why (a name
    sent again: one row, each value); a value already in it says why too. A flag that says "read it
    here" is read in "What you approve", never only in the list of every field under the buttons."""
    request = item.view.approval.request
    if request is None or item.view.problem:
        return out
    why: dict[str, list[str]] = {}
    for flag in item.view.assessment.flags:
        if flag.field and flag.rule in RULE_CODES and flag.rule != "ocr_value":  # OCR: said per value
            why.setdefault(flag.field, []).append(FLAG_WORDS[RULE_CODES[flag.rule]])
    listed = {kv.field: kv for kv in out if kv.field}
    for at, f in enumerate(request.fields):
        key = item.keys[at] if at < len(item.keys) else None
        ref = item.sources.get(key) if key is not None else None
        marks = [*why.get(f.name, []), *(why.get(key, []) if key is not None and key != f.name else [])]
        marks += [FLAG_WORDS["password"]] if password_box(f) else []
        note = "; ".join(dict.fromkeys(marks))
        if (kv := listed.get(f.name) or listed.get(key or "")) is not None:
            if note and note not in kv.note:
                kv.note = f"{kv.note}; {note}" if kv.note else note
            if kv.marked and f.value not in (kv.value, *kv.also):  # a name sent again: one row
                kv.also.append(f.value)
        elif note or (ref is not None and ref.ocr):
            ocr = ref is not None and ref.ocr
            kv = KeyValue(label=f.name, field=key or f.name, value=f.value, source=ref, ocr=ocr, note=note)
            kv.marked = True
            out.append(kv)
            listed[f.name] = kv
    return out


SORTS = ("age", "vendor", "amount", "due", "risk")


def sort_items(items: list[WorkItem], key: str, descending: bool) -> list[WorkItem]:
    def value(item: WorkItem) -> tuple[int, object]:
        if key == "vendor":
            return (0 if item.vendor else 1, item.vendor.lower())
        if key == "amount":
            return (0 if item.amount is not None else 1, item.amount or Decimal(0))
        if key == "due":
            return (0 if item.due else 1, item.due)
        if key == "risk":
            return (0, len(item.flags))
        return (0, item.age_seconds)

    present = [i for i in items if value(i)[0] == 0]
    missing = [i for i in items if value(i)[0] == 1]
    return sorted(present, key=lambda i: value(i)[1], reverse=descending) + missing  # type: ignore[arg-type, return-value]


def filter_items(items: list[WorkItem], *, flag: str = "", system: str = "", q: str = "") -> list[WorkItem]:
    q = q.strip().lower()
    out = []
    for item in items:
        if flag == "none" and item.flags:
            continue
        if flag and flag != "none" and flag not in item.flag_codes:
            continue
        if system and item.system != system:
            continue
        task = item.view.job.task if item.view.job else ""
        if q and not any(q in t.lower() for t in (item.vendor, item.invoice, item.id, task, item.action)):
            continue
        out.append(item)
    return out


def offer_bulk(items: list[WorkItem]) -> bool:
    """Marks the items of one worklist page that bulk approval can take there (``selectable``) and
    says whether there is any. Bulk approval takes two or more items, none refused
    (``bulk_refusal``), identical in shape (``bulk_key``): an item with no identical partner on the
    page would only be refused ("select at least two", "not identical"), so it is offered none."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[WorkItem]] = {}
    for item in items:
        item.selectable = False
        request = item.view.approval.request
        if item.bulk_refusal is None and request is not None and not item.view.problem:
            key = bulk_key(request.method, request.url, [f.name for f in request.fields])
            groups.setdefault(key, []).append(item)
    for group in groups.values():
        if len(group) >= 2:
            for item in group:
                item.selectable = True
    return any(item.selectable for item in items)
