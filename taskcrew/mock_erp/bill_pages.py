"""Vendors, the bills list, bill detail, mark paid and the strict new-bill form."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import date

from taskcrew.mock_erp import form_change
from taskcrew.mock_erp.chaos import ChaosEngine
from taskcrew.mock_erp.ledger import BillFilter, Ledger
from taskcrew.mock_erp.models import Bill, BillStatus
from taskcrew.mock_erp.money import format_cents, to_cents
from taskcrew.mock_erp.render import Renderer, Visit
from taskcrew.mock_erp.sessions import Flash, SessionStore
from taskcrew.mock_erp.settings import ErpSettings
from taskcrew.mock_erp.validation import (
    BILL_FIELDS,
    BillDraft,
    parse_iso_date,
    validate_bill_form,
    validate_payment_date,
)
from taskcrew.mock_erp.web import Response, login_url, redirect

SERVICE_UNAVAILABLE = "Service temporarily unavailable, try again."


def totals_by_currency(bills: list[Bill]) -> dict[str, str]:
    cents: dict[str, int] = defaultdict(int)
    for bill in bills:
        cents[bill.currency] += to_cents(bill.amount)
    return {currency: format_cents(total) for currency, total in sorted(cents.items())}


class BillPages:
    def __init__(
        self,
        ledger: Ledger,
        sessions: SessionStore,
        chaos: ChaosEngine,
        renderer: Renderer,
        settings: ErpSettings,
        now_iso: Callable[[], str],
    ) -> None:
        self._ledger = ledger
        self._sessions = sessions
        self._chaos = chaos
        self._renderer = renderer
        self._settings = settings
        self._now_iso = now_iso

    # -- vendors and the list ------------------------------------------------------------------

    def vendors(self, visit: Visit) -> Response:
        bills = self._ledger.bills()
        rows = []
        for vendor in self._ledger.vendors():
            own = [b for b in bills if b.vendor == vendor.name]
            unpaid = [b for b in own if b.status == "unpaid"]
            rows.append({"vendor": vendor, "bills": len(own), "unpaid": totals_by_currency(unpaid)})
        return self._renderer.page(visit, "vendors.html", title="Vendors", rows=rows)

    def bills(self, visit: Visit) -> Response:
        query = visit.request.query
        vendors = self._ledger.vendors()
        status: BillStatus | None = None
        if query.get("status") == "paid":
            status = "paid"
        elif query.get("status") == "unpaid":
            status = "unpaid"
        vendor_text = query.get("vendor", "").strip()
        vendor_id = next(
            (
                v.id
                for v in vendors
                if vendor_text in (str(v.id), v.name) or vendor_text.casefold() == v.name.casefold()
            ),
            None,
        )  # by id (the form) or by exact name (a typed URL)
        currency = query.get("currency") if query.get("currency") in self._settings.currencies else None
        notices = filter_notices(query, vendor_text if vendor_id is None else "", self._settings.currencies)
        due_before, filter_error = None, None
        if query.get("due_before", "").strip():
            due_before, filter_error = parse_iso_date(query["due_before"], "Due before")
        where = BillFilter(status=status, vendor_id=vendor_id, currency=currency, due_before=due_before)
        bills = [] if notices.refused else self._ledger.bills(where)
        return self._renderer.page(
            visit,
            "bills.html",
            200 if filter_error is None and not notices.refused else 422,
            filter_notices=notices.messages,
            title="Bills",
            bills=bills,
            totals=totals_by_currency(bills),
            vendors=vendors,
            currencies=self._settings.currencies,
            where=where,
            due_before_text=query.get("due_before", ""),
            filter_error=filter_error,
            filtered=any(v is not None for v in where.model_dump().values()) or bool(notices.messages),
        )

    # -- detail and mark paid ------------------------------------------------------------------

    def detail(self, visit: Visit, bill_id: str) -> Response:
        bill = self._ledger.bill(bill_id)
        if bill is None:
            return self._not_found(visit, bill_id)
        return self._detail(visit, bill, paid_on=self._settings.today.isoformat(), error=None, status=200)

    def mark_paid(self, visit: Visit, bill_id: str) -> Response:
        bill = self._ledger.bill(bill_id)
        if bill is None:
            return self._not_found(visit, bill_id)
        entered = visit.request.form.get("paid_on", "").strip()
        if bill.status == "paid":
            already = f"{bill.id} is already paid (paid on {bill.paid_on}); it was not changed."
            return self._detail(visit, bill, paid_on=entered, error=already, status=409)
        paid_on, problem = validate_payment_date(entered, date.fromisoformat(bill.invoice_date))
        if problem or paid_on is None:
            return self._detail(visit, bill, paid_on=entered, error=problem, status=422)
        paid = self._ledger.mark_paid(bill, paid_on, self._now_iso())
        assert visit.session is not None
        text = f"{paid.id} marked as paid on {paid.paid_on}."
        self._sessions.set_flash(visit.session.token, Flash(kind="success", text=text))
        return redirect(f"/bills/{paid.id}")

    def _detail(self, visit: Visit, bill: Bill, paid_on: str, error: str | None, status: int) -> Response:
        return self._renderer.page(
            visit,
            "bill_detail.html",
            status,
            title=f"Bill {bill.id}",
            bill=bill,
            paid_on=paid_on,
            error=error,
        )

    def _not_found(self, visit: Visit, bill_id: str) -> Response:
        return self._renderer.page(
            visit,
            "message.html",
            404,
            title="Bill not found",
            message=f"There is no bill {bill_id}. Bill numbers look like BILL-0001; see the bills list.",
            link=("/bills", "Back to bills"),
        )

    # -- the new-bill form ---------------------------------------------------------------------

    def new_form(self, visit: Visit) -> Response:
        return self._form(visit, values={}, errors={}, status=200)

    def create(self, visit: Visit) -> Response:
        form = form_change.incoming(self._chaos.form_change, visit.request.form)
        vendors = self._ledger.vendors()
        result = validate_bill_form(form, {v.id for v in vendors}, self._settings.currencies)
        if result.draft is None:
            return self._form(visit, form, result.errors, status=422)
        draft = result.draft
        vendor_name = next(v.name for v in vendors if v.id == draft.vendor_id)
        existing = self._ledger.duplicate_of(draft.vendor_id, draft.invoice_number)
        if existing is not None:
            message = (
                f"Duplicate bill: invoice {existing.invoice_number} from {vendor_name} is already entered "
                f"as {existing.id}. The same vendor and invoice number cannot be entered twice."
            )
            return self._form(visit, form, {"invoice_number": message}, status=409, duplicate=existing)
        near = self._ledger.near_duplicates(draft)
        if near and form.get("confirm_near_duplicate") != "yes":
            return self._form(visit, form, {}, status=200, near=near, vendor_name=vendor_name)
        return self._save(visit, draft)

    def _save(self, visit: Visit, draft: BillDraft) -> Response:
        assert visit.session is not None
        fault = self._chaos.on_valid_save()
        if fault == "expire_session":
            self._sessions.end(visit.session.token, "revoked")
            return redirect(login_url("/bills/new", reason="expired"))
        if fault == "service_unavailable":
            return self.unavailable(503)
        bill = self._ledger.add_bill(draft, self._now_iso())
        text = (
            f"Bill {bill.id} saved: {bill.vendor}, invoice {bill.invoice_number}, "
            f"{bill.amount} {bill.currency}, due {bill.due_date}."
        )
        self._sessions.set_flash(visit.session.token, Flash(kind="success", text=text))
        return redirect(f"/bills/{bill.id}")

    def unavailable(self, status: int) -> Response:
        response = self._renderer.page_bare("unavailable.html", status, message=SERVICE_UNAVAILABLE)
        response.headers.append(("Retry-After", "1"))
        return response

    def _form(
        self,
        visit: Visit,
        values: Mapping[str, str],
        errors: dict[str, str],
        status: int,
        duplicate: Bill | None = None,
        near: list[Bill] | None = None,
        vendor_name: str = "",
    ) -> Response:
        return self._renderer.page(
            visit,
            "bill_form.html",
            status,
            title="New bill",
            values={name: values.get(name, "") for name in BILL_FIELDS},
            errors=errors,
            duplicate=duplicate,
            near=near or [],
            vendor_name=vendor_name,
            vendors=self._ledger.vendors(),
            currencies=self._settings.currencies,
            field_order=form_change.field_order(
                self._chaos.form_change, self._chaos.field_order(BILL_FIELDS)
            ),
            sent=form_change.sent_names(self._chaos.form_change, BILL_FIELDS),
            relabelled=form_change.labels(self._chaos.form_change),
        )


KNOWN_FILTERS = {"status": ("", "paid", "unpaid"), "vendor": None, "currency": None, "due_before": None}


class FilterNotices:
    def __init__(self) -> None:
        self.messages: list[str] = []
        self.refused = False  # a filter that cannot be applied: show no bills rather than all of them


def filter_notices(query: Mapping[str, str], unknown_vendor: str, currencies: Sequence[str]) -> FilterNotices:
    """Say what of a list URL's filters was not understood, instead of silently showing every bill."""
    notices = FilterNotices()
    if unknown_vendor:
        notices.refused = True
        notices.messages.append(
            f"No vendor matches '{unknown_vendor}': no bills are shown. Choose a vendor from the list "
            "(the filter takes the vendor's number or its exact name)."
        )
    status = query.get("status", "")
    if status not in ("", "paid", "unpaid"):
        notices.refused = True
        notices.messages.append(f"Unknown status '{status}': use paid or unpaid. No bills are shown.")
    currency = query.get("currency", "")
    if currency and currency not in currencies:
        notices.refused = True
        notices.messages.append(f"Unknown currency '{currency}': use one of {', '.join(currencies)}.")
    unknown = sorted(set(query) - set(KNOWN_FILTERS))
    if unknown:
        notices.messages.append(
            f"Unknown filter(s) ignored: {', '.join(unknown)}. This list filters by "
            f"{', '.join(KNOWN_FILTERS)}."
        )
    return notices
