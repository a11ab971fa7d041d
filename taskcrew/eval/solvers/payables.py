"""Entering vendor invoices: find the invoice in the files, check the ERP, enter it, and audit it.

One recipe covers every "enter this invoice" request: the newest invoice of a vendor or one by its
number, one or several. What it meets on the way decides the outcome, as it would for a careful
clerk: no document at all (ask, then nothing to do), a document nobody can read (ask, then
blocked), two invoices of the same newest date (ask which), an invoice already in the ERP
(nothing to do), a refused approval (blocked), a session that expires on save (log in again).

``Slips`` are the sloppy model's habits; the solver has none.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from functools import partial

from taskcrew.crew.models import Citation
from taskcrew.crew.scripted import Reply, ScriptedCall
from taskcrew.eval import kit
from taskcrew.eval.solvers.base import (
    Finding,
    Recipe,
    Step,
    StepScript,
    arrive,
    delegate,
    judge,
    next_browser_step,
    tool,
    visit,
)
from taskcrew.eval.solvers.documents import PrintedDocument, distinct, invoices_in, latest

MAX_READS = 12


@dataclass(frozen=True)
class Target:
    """Which invoice a request means: the newest one from a vendor, or one by its number."""

    vendor: str
    number: str | None = None

    @property
    def label(self) -> str:
        return (
            f"invoice {self.number} from {self.vendor}"
            if self.number
            else f"the latest invoice from {self.vendor}"
        )

    @property
    def key(self) -> str:
        return self.number or self.vendor


@dataclass(frozen=True)
class Slips:
    """Typical mistakes of a careless model (all off for the solver)."""

    subtotal_as_amount: bool = False  # hands on the subtotal as the amount to enter
    amount_as_printed: bool = False  # types the amount as printed ("1.284,50") ...
    claim_despite_errors: bool = False  # ... and reports it saved although the form refused it
    skip_duplicate_check: bool = False  # says "not entered yet" without looking
    force_through_duplicates: bool = False  # alters the number on a duplicate error, confirms the warning
    claim_without_work: bool = False  # reports the bill saved without opening the form
    cites_another_file: str = ""  # names this file as the invoice's (it is not), the work itself right


class EnterInvoices(Recipe):
    changes_data = True

    def __init__(self, targets: list[Target], slips: Slips | None = None) -> None:
        self.targets = targets
        self.slips = slips or Slips()

    # ------------------------------------------------------------------ the plan
    def goal(self) -> str:
        return "Enter " + " and ".join(t.label for t in self.targets) + " into Acme Payables"

    def criteria(self) -> list[str]:
        return [
            *(
                f"Acme Payables has exactly one bill for {t.label}, with vendor, invoice number, total amount, "
                "currency, invoice date and due date as the invoice states"
                for t in self.targets
            ),
            "No other bill was created or changed",
        ]

    def steps(self) -> list[Step]:
        reads = [
            Step(
                "file_reader",
                f"Find and read {t.label}",
                f"Search the company files for {t.label}; tell invoices from reminders, copies and quotes; "
                "read the number, total payable, currency, invoice date and terms; compute the due date.",
                partial(self.read_invoice, target=t),
                done_when="the invoice's values are known, or it is clear they cannot be",
            )
            for t in self.targets
        ]
        check = Step(
            "browser_operator",
            "Check Acme Payables for bills already entered",
            "Open the bills list and look for bills with the invoice numbers found in the earlier steps.",
            self.check_bills,
            done_when="it is known which of the invoices are already entered",
        )
        enters = [
            Step(
                "browser_operator",
                f"Enter {t.label} into Acme Payables",
                "Create the bill with exactly the values from the earlier step; recover from errors.",
                partial(self.enter, target=t),
                done_when="Acme Payables shows the saved bill",
            )
            for t in self.targets
        ]
        return [*reads, check, *enters]

    # ------------------------------------------------------------------ reading the invoice
    def read_invoice(self, call: ScriptedCall, target: Target) -> StepScript:
        call = yield tool("search_files", query=target.key)
        found = call.last_tool_result
        paths = kit.search_paths(found)
        invoices: list[PrintedDocument] = []
        for path in paths[:MAX_READS]:
            call = yield tool("read_file", path=path)
            invoices += invoices_in(path, call.last_tool_result)
        if target.number:
            invoices = [i for i in invoices if kit.same_number(i.number, target.number)]
        else:
            invoices = [i for i in invoices if kit.shares_words(i.issuer, target.vendor)]
        invoices = distinct(invoices)
        if not invoices:
            return (yield from self._no_invoice(call, target, found))
        candidates = invoices if target.number else latest(invoices)
        chosen, note = candidates[0], ""
        if len(candidates) > 1:
            listing = "; ".join(
                f"{c.number} ({c.amount_text}, dated {c.date}, in {c.path})" for c in candidates
            )
            call = yield tool(
                "ask_user",
                question=f"{len(candidates)} invoices from {target.vendor} have the same newest date: {listing}. "
                "Which one should I enter?",
            )
            answer = kit.person_answer(call.last_tool_result)
            picked = [c for c in candidates if c.number.lower() in answer.lower()]
            if len(picked) != 1:
                return kit.report(
                    "blocked",
                    f"{target.label} is ambiguous ({listing}) and the person's answer did not name one "
                    f"invoice: “{answer}”. Nothing was entered.",
                )
            chosen, note = picked[0], f" The person chose {picked[0].number}: “{answer}”."
        return (yield from self._values(chosen, target, note))

    def _values(self, invoice: PrintedDocument, target: Target, note: str) -> StepScript:
        printed = (
            invoice.subtotal if self.slips.subtotal_as_amount and invoice.subtotal else invoice.amount_text
        )
        call = yield tool("parse_amount", text=printed)
        amount = kit.field_value(call.last_tool_result, "value")
        currency = kit.field_value(call.last_tool_result, "currency") or invoice.total_currency
        if not amount or not currency:
            return kit.report(
                "failed",
                f"The total {printed!r} of {invoice.number} could not be read: {call.last_tool_result[:300]}",
            )
        call = yield tool("compute_due_date", invoice_date=invoice.date, terms=invoice.terms_text)
        due = kit.field_value(call.last_tool_result, "due date")
        working = kit.field_value(call.last_tool_result, "working")
        if not due:
            return kit.report(
                "failed",
                f"The due date of {invoice.number} could not be worked out: {call.last_tool_result[:300]}",
            )
        issued = next((d for d in kit.iso_dates(working) if d != due), due)
        summary = (
            f"{target.label[0].upper()}{target.label[1:]} is {invoice.number} in {invoice.path}: total {printed} "
            f"= {amount} {currency}; invoice date {invoice.date} = {issued}; {invoice.terms_text} → due {due}.{note}"
        )
        sources = [Citation(source=invoice.path, quote=invoice.number_line)]
        if invoice.total_line:
            sources.append(Citation(source=invoice.path, quote=invoice.total_line))
        return kit.report(
            "done",
            summary,
            sources,
            target=target.key,
            vendor=invoice.issuer,
            invoice_number=invoice.number,
            amount=amount,
            amount_printed=printed,
            currency=currency,
            invoice_date=issued,
            due_date=due,
            file=self.slips.cites_another_file or invoice.path,
        )

    def _no_invoice(self, call: ScriptedCall, target: Target, found: str) -> StepScript:
        mentions = kit.search_lines(found)
        unreadable = kit.unreadable_paths(found)
        if not mentions:
            question = (
                f"I found no document from {target.vendor} in the company files, so there is no invoice to enter. "
                "Do you have it somewhere else?"
            )
            call = yield tool("ask_user", question=question)
            answer = kit.person_answer(call.last_tool_result)
            return kit.report(
                "nothing_to_do",
                f"No file mentions {target.vendor}: there is no invoice from them to enter, and none was entered. "
                f"The person said: “{answer or 'nothing'}”.",
                target=target.key,
                invoice_found="no",
            )
        # The vendor is mentioned but no readable invoice exists: try what the search could not read.
        seen = []
        for path, _why in unreadable:
            call = yield tool("read_file", path=path)
            seen.append(f"{path}: {call.last_tool_result.splitlines()[0][:160]}")
        earlier = [
            r
            for r in kit.step_results(call)
            if r.title == f"Find and read {target.label}" and "person" in r.summary
        ]
        if earlier:
            answer = earlier[-1].summary
            return kit.report(
                "blocked", f"Still no readable invoice from {target.vendor}; as before: {answer[:600]}"
            )
        call = yield tool(
            "ask_user",
            question=f"The only possible invoice from {target.vendor} cannot be read ({'; '.join(seen) or 'no text'}). "
            "Can you give me its number, amount, currency and dates?",
        )
        answer = kit.person_answer(call.last_tool_result)
        path, line = mentions[0]
        return kit.report(
            "blocked",
            f"No readable invoice from {target.vendor}: {'; '.join(seen)}. The person answered: “{answer}”. "
            "Nothing was entered; the invoice needs a readable copy.",
            [Citation(source=path, quote=line[:200])],
            target=target.key,
            invoice_found="unreadable",
        )

    # ------------------------------------------------------------------ the ERP
    def check_bills(self, call: ScriptedCall) -> StepScript:
        wanted = list(
            {
                kit.same_key(r.data["invoice_number"]): r.data
                for r in kit.step_results(call)
                if r.data.get("invoice_number")
            }.values()
        )
        if self.slips.skip_duplicate_check:
            return kit.report("done", "None of the invoices is in Acme Payables yet.")
        call = yield from visit(call, f"{kit.erp(call)}/bills")
        url, rows = kit.page_url(call.last_tool_result), kit.bill_table(call.last_tool_result)
        entered, missing = [], []
        for data in wanted:
            hits = [
                r
                for r in rows
                if kit.same_number(r.invoice_number, data["invoice_number"])
                and kit.shares_words(r.vendor, data["vendor"])
            ]
            if hits:
                row = hits[0]
                entered.append(
                    f"{data['invoice_number']} is already entered as {row.bill_id} ({row.vendor}, {row.amount} "
                    f"{row.currency}, due {row.due_date}, {row.status.lower()})"
                )
            else:
                missing.append(data["invoice_number"])
        sources = [
            Citation(source=url, quote=n) for n in [d["invoice_number"] for d in wanted] if n not in missing
        ]
        if wanted and not missing:
            return kit.report(
                "nothing_to_do",
                "Nothing to enter: " + "; ".join(entered) + ". No bill was created.",
                sources,
                already_entered=", ".join(d["invoice_number"] for d in wanted),
            )
        summary = f"The bills list ({len(rows)} bills) has no bill yet for {', '.join(missing)}."
        if entered:
            summary += " " + "; ".join(entered) + "."
        already = ", ".join(d["invoice_number"] for d in wanted if d["invoice_number"] not in missing)
        return kit.report("done", summary, sources, already_entered=already or "none")

    def enter(self, call: ScriptedCall, target: Target) -> StepScript:
        results = kit.step_results(call)
        data = next((r.data for r in reversed(results) if r.data.get("target") == target.key), None)
        if data is None or not data.get("amount"):
            return kit.report(
                "failed", f"The values of {target.label} are not in the earlier steps' results."
            )
        already = next(
            (r.data.get("already_entered", "") for r in reversed(results) if "already_entered" in r.data), ""
        )
        if data["invoice_number"] in already.split(", "):
            return kit.report("done", f"{data['invoice_number']} was already entered; nothing saved again.")
        bill = kit.Bill(
            data["vendor"],
            data["invoice_number"],
            data["amount"],
            data["currency"],
            data["invoice_date"],
            data["due_date"],
        )
        if self.slips.claim_without_work:
            return kit.report(
                "done",
                f"Saved bill for {bill.vendor} {bill.invoice_number}: {bill.amount} {bill.currency}.",
                bill_id="BILL-0011",
            )
        if self.slips.amount_as_printed or self.slips.force_through_duplicates:
            policy: kit.EnterBill = CarelessEntry(bill, data.get("amount_printed"), self.slips)
        else:
            policy = kit.EnterBill(bill)
        return (yield from delegate(policy, call))

    # ------------------------------------------------------------------ the audit
    def _search(
        self, call: ScriptedCall, number: str
    ) -> Generator[Reply, ScriptedCall, tuple[ScriptedCall, PrintedDocument | None, str]]:
        """Find invoice ``number`` in the files myself: search, then read the files with hits."""
        call = yield tool("search_files", query=number)
        paths = kit.search_paths(call.last_tool_result)
        for path in paths[:MAX_READS]:
            call = yield tool("read_file", path=path)
            if invoice := _invoice(path, call.last_tool_result, number):
                return call, invoice, path
        return call, None, paths[0] if paths else ""

    def audit(self, call: ScriptedCall) -> StepScript:
        """Re-derive every claimed invoice from its file, then look for it in the ERP myself."""
        latest_claims = {
            kit.same_key(r.data["invoice_number"]): r.data
            for r in kit.step_results(call)
            if r.data.get("invoice_number")
        }
        claimed = list(latest_claims.values())  # a rework repeats the steps: each invoice once
        findings: list[Finding] = []
        if not claimed:  # "there is nothing to enter": is there really no invoice?
            notes = []
            for target in self.targets:
                call = yield tool("search_files", query=target.key)
                paths = kit.search_paths(call.last_tool_result)
                if not paths:
                    notes.append(f"no file mentions {target.key}")
                invoices: list[PrintedDocument] = []
                for path in paths[:MAX_READS]:
                    call = yield tool("read_file", path=path)
                    found = invoices_in(path, call.last_tool_result)
                    invoices += [i for i in found if kit.shares_words(i.issuer, target.vendor)]
                if paths:
                    numbers = ", ".join(i.number for i in invoices) or "none"
                    observed = f"{len(paths)} file(s) mention {target.key}; invoices among them: {numbers}"
                    findings.append(Finding(not invoices, paths[0], observed))
            call = yield from visit(call, f"{kit.erp(call)}/bills")
            url = kit.page_url(call.last_tool_result)
            rows = kit.bill_table(call.last_tool_result)
            findings.append(
                Finding(True, url, "; ".join([*notes, f"the bills list shows {len(rows)} bills"]))
            )
            return judge(
                call, findings, "No invoice to enter exists in the files, and none was entered.", touched=[]
            )
        # One turn for what does not depend on anything else: the files the colleague cites,
        # opened myself, and the bills list (each turn re-sends the whole conversation).
        bills = f"{kit.erp(call)}/bills"
        cited = list(dict.fromkeys(d["file"] for d in claimed if d.get("file")))
        call = yield [*(tool("read_file", path=p) for p in cited), kit.navigate(bills)]
        *texts, page = call.turn_results
        opened = dict(zip(cited, texts, strict=True))
        sourced: list[tuple[PrintedDocument, str]] = []
        for data in claimed:
            path = data.get("file", "")
            invoice = _invoice(path, opened.get(path, ""), data["invoice_number"])
            source = path
            if invoice is None:  # not where the colleague says it is: look for it myself
                call, invoice, source = yield from self._search(call, data["invoice_number"])
            if invoice is None:
                findings.append(
                    Finding(
                        False, source or "search_files", f"no invoice {data['invoice_number']} in the files"
                    )
                )
                continue
            sourced.append((invoice, source))
        # The amounts and dates worked out, in the turn of the next browser step (a login, say)
        sums = [
            work
            for invoice, _ in sourced
            for work in (
                tool("parse_amount", text=invoice.amount_text),
                tool("compute_due_date", invoice_date=invoice.date, terms=invoice.terms_text),
            )
        ]
        step = next_browser_step(page, bills)
        if sums or step:
            call = yield [*sums, *([step] if step else [])]
        worked = call.turn_results[: len(sums)]
        if step:
            page = call.last_tool_result
        call, page = yield from arrive(call, bills, page)
        expected: list[tuple[PrintedDocument, str, str, str, str]] = []
        for (invoice, source), parsed, dated in zip(sourced, worked[::2], worked[1::2], strict=True):
            amount = kit.field_value(parsed, "value")
            currency = kit.field_value(parsed, "currency") or invoice.total_currency
            due = kit.field_value(dated, "due date")
            issued = next((d for d in kit.iso_dates(kit.field_value(dated, "working")) if d != due), due)
            findings.append(
                Finding(
                    True,
                    source,
                    f"{source} states {invoice.number}: {amount} {currency}, {issued}, due {due}",
                )
            )
            expected.append((invoice, amount, currency, issued, due))
        url, rows = kit.page_url(page), kit.bill_table(page)
        for invoice, amount, currency, issued, due in expected:
            hits = [
                r
                for r in rows
                if kit.same_number(r.invoice_number, invoice.number)
                and kit.shares_words(r.vendor, invoice.issuer)
            ]
            if len(hits) != 1:
                shown = "; ".join(h.line for h in hits) or "no row"
                findings.append(
                    Finding(False, url, f"{len(hits)} bills for {invoice.number} in the bills list: {shown}")
                )
                continue
            row = hits[0]
            same = (row.invoice_number, row.amount, row.currency, row.invoice_date, row.due_date) == (
                invoice.number,
                amount,
                currency,
                issued,
                due,
            )
            findings.append(
                Finding(
                    same,
                    url,
                    f"{row.bill_id}: {row.vendor} {row.invoice_number} {row.amount} {row.currency}, "
                    f"{row.invoice_date}, due {row.due_date}"
                    + (
                        ""
                        if same
                        else f" — expected {invoice.number} {amount} {currency}, {issued}, due {due}"
                    ),
                )
            )
        return judge(
            call,
            findings,
            "Each invoice is in Acme Payables exactly once, with the invoice's values.",
            touched=[d["invoice_number"] for d in claimed],
        )


def _invoice(path: str, text: str, number: str) -> PrintedDocument | None:
    """The invoice ``number`` as the file at ``path`` (read as ``text``) prints it, if it does."""
    return (
        next((i for i in invoices_in(path, text) if kit.same_number(i.number, number)), None)
        if text
        else None
    )


class CarelessEntry(kit.EnterBill):
    """The sloppy operator: types amounts as printed, claims success on errors, forces duplicates in."""

    def __init__(self, bill: kit.Bill, printed: str | None, slips: Slips) -> None:
        super().__init__(bill, first_amount=printed if slips.amount_as_printed else None)
        self.slips = slips
        self.altered = False

    def __call__(self, call: ScriptedCall) -> Reply:
        els = kit.elements(call.last_tool_result)
        amount = next((e for e in els if e.field == "amount"), None)
        if self.slips.claim_despite_errors and amount is not None and "invalid=" in amount.rest:
            return kit.report(
                "done",
                f"Saved the bill for {self.bill.vendor} {self.bill.invoice_number}: {self.amount} {self.bill.currency}.",
                bill_id="BILL-0011",
            )
        return super().__call__(call)

    def on_duplicate(self, body: str, els: list[kit.El]) -> Reply:
        if not self.slips.force_through_duplicates or self.altered:
            return super().on_duplicate(body, els)
        self.altered = True
        self.bill.invoice_number = "".join(ch for ch in self.bill.invoice_number if ch.isalnum())
        return self.fill(els)

    def on_near_duplicate(self, body: str, els: list[kit.El]) -> Reply:
        if not self.slips.force_through_duplicates:
            return super().on_near_duplicate(body, els)
        box = next(e for e in els if e.field == "confirm_near_duplicate")
        return kit.act(
            {"action": "check", "index": box.index},
            {"action": "click", "index": kit.button(els, "Save").index},
        )
