"""Acme Payables over real HTTP with chaos off: login, sessions, CSRF, the form's rules, duplicates,
mark paid, filters."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable

import httpx
from fixtures_erp import ErpFactory, ErpUser, erp_state

from taskcrew.mock_erp import ErpServer, ErpSettings


def visible_text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def bill_ids(page: str) -> list[str]:
    return re.findall(r'<tr id="row-(BILL-\d+)">', page)


# -- login, logout, sessions --------------------------------------------------------------------


def test_pages_need_a_login(erp: ErpServer) -> None:
    response = httpx.get(erp.url + "/bills?status=unpaid")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/bills%3Fstatus%3Dunpaid"
    login = httpx.get(erp.url + response.headers["location"])
    assert '<label for="username">Username</label>' in login.text
    assert '<label for="password">Password</label>' in login.text
    assert 'name="next" value="/bills?status=unpaid"' in login.text


def test_login_with_wrong_password_is_refused(
    erp: ErpServer, erp_user_factory: Callable[[ErpServer], ErpUser]
) -> None:
    user = erp_user_factory(erp)
    response = user.login(password="wrong")
    assert response.status_code == 401
    assert "Invalid username or password." in response.text
    assert 'value="demo"' in response.text  # the username is kept, the password is not
    assert erp_state(erp).sessions == []


def test_login_then_logout(erp: ErpServer, erp_user_factory: Callable[[ErpServer], ErpUser]) -> None:
    user = erp_user_factory(erp)
    response = user.login(next_path="/vendors")
    assert response.status_code == 303 and response.headers["location"] == "/vendors"
    page = user.http.get("/vendors")
    assert page.status_code == 200 and "Signed in as demo" in page.text
    [session] = erp_state(erp).sessions
    assert session.status == "active" and session.username == "demo"

    response = user.http.post("/logout", data={"csrf_token": user.csrf_token("/bills")})
    assert response.status_code == 303 and response.headers["location"] == "/login?reason=logged_out"
    assert "You have been logged out." in user.http.get("/login?reason=logged_out").text
    assert user.http.get("/bills").status_code == 303
    assert [s.status for s in erp_state(erp).sessions] == ["logged_out"]


def test_credentials_come_from_settings(
    erp_factory: ErpFactory, erp_user_factory: Callable[[ErpServer], ErpUser]
) -> None:
    erp = erp_factory(settings=ErpSettings(username="clerk", password="other-pass"))
    user = erp_user_factory(erp)
    assert user.login().status_code == 401  # demo / demo123 is not hard-wired
    assert user.login("clerk", "other-pass").status_code == 303
    assert "other-pass" not in user.http.get("/login").text


def test_login_does_not_redirect_off_site(
    erp: ErpServer, erp_user_factory: Callable[[ErpServer], ErpUser]
) -> None:
    user = erp_user_factory(erp)
    assert user.login(next_path="//evil.example/x").headers["location"] == "/bills"
    response = erp_user_factory(erp).login(next_path="/vendors\r\nSet-Cookie: evil=1")
    assert response.headers["location"] == "/bills"
    assert "evil" not in response.headers.get("set-cookie", "")


def test_an_idle_session_expires(
    erp_factory: ErpFactory, erp_user_factory: Callable[[ErpServer], ErpUser]
) -> None:
    erp = erp_factory(settings=ErpSettings(session_ttl_s=0.3))
    user = erp_user_factory(erp)
    assert user.login().status_code == 303
    time.sleep(0.6)
    response = user.http.get("/bills/new")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/bills/new&reason=expired"
    login = user.http.get(response.headers["location"])
    assert "Your session has expired, please log in again." in login.text
    assert [s.status for s in erp_state(erp).sessions] == ["expired"]


def test_a_form_posted_after_expiry_goes_to_login_and_saves_nothing(
    erp_factory: ErpFactory, erp_user_factory: Callable[[ErpServer], ErpUser]
) -> None:
    erp = erp_factory()
    user = erp_user_factory(erp)
    user.login()
    token = user.csrf_token("/bills/new")  # the form, read while the session is alive
    with sqlite3.connect(erp.db_path) as db:  # then it goes idle past its expiry (not timed: a loaded
        db.execute("UPDATE sessions SET expires_at = 0")  # machine took 0.3 s between two requests)
    response = user.http.post("/bills/new", data={"csrf_token": token, "invoice_number": "INV-2057"})
    assert response.headers["location"] == "/login?next=/bills/new&reason=expired"
    assert len(erp_state(erp).bills) == 10


# -- CSRF ---------------------------------------------------------------------------------------


def test_forms_without_a_valid_csrf_token_are_rejected(erp: ErpServer, erp_user: ErpUser) -> None:
    form = {"vendor_id": "1", "invoice_number": "INV-2057", "amount": "1284.50", "currency": "USD",
            "invoice_date": "2026-09-12", "due_date": "2026-10-12"}  # fmt: skip
    for extra in ({}, {"csrf_token": "forged-token-forged-token"}):
        response = erp_user.http.post("/bills/new", data={**form, **extra})
        assert response.status_code == 403
        assert "CSRF token" in response.text
    response = erp_user.http.post("/bills/BILL-0004/pay", data={"paid_on": "2026-10-02"})
    assert response.status_code == 403
    state = erp_state(erp)
    assert len(state.bills) == 10 and state.bill("BILL-0004").status == "unpaid"  # type: ignore[union-attr]


def test_login_form_needs_its_csrf_token(erp: ErpServer) -> None:
    with httpx.Client(base_url=erp.url) as client:
        client.get("/login")  # gets the anonymous token cookie
        response = client.post("/login", data={"username": "demo", "password": "demo123"})
        assert response.status_code == 403
        assert erp_state(erp).sessions == []


def test_every_post_form_carries_a_csrf_token(erp_user: ErpUser) -> None:
    for page in ("/bills", "/bills/new", "/bills/BILL-0002", "/vendors"):
        text = erp_user.http.get(page).text
        forms = re.findall(r"<form\b[^>]*>.*?</form>", text, flags=re.S)
        post_forms = [f for f in forms if 'method="post"' in f]
        assert post_forms, page
        for form in post_forms:
            assert 'name="csrf_token"' in form, (page, form[:80])


# -- the new-bill form -------------------------------------------------------------------------


def test_the_form_labels_every_field(erp_user: ErpUser) -> None:
    page = erp_user.http.get("/bills/new").text
    for field in ("vendor_id", "invoice_number", "amount", "currency", "invoice_date", "due_date", "notes"):
        assert f'<label for="{field}">' in page
        assert f'id="{field}" name="{field}"' in page
    assert '<input type="date" id="invoice_date"' in page
    assert "<h1>New bill</h1>" in page


def test_a_valid_bill_is_saved_and_shown(erp: ErpServer, erp_user: ErpUser) -> None:
    response = erp_user.new_bill(notes="Net 30 from 2026-09-12")
    assert response.status_code == 303
    assert response.headers["location"] == "/bills/BILL-0011"
    detail = visible_text(erp_user.http.get("/bills/BILL-0011").text)
    assert "Bill BILL-0011 saved: Northwind Traders, invoice INV-2057, 1284.50 USD, due 2026-10-12." in detail
    assert "Bill BILL-0011" in detail and "Unpaid" in detail
    assert "saved" not in visible_text(erp_user.http.get("/bills/BILL-0011").text)  # the flash shows once
    bill = erp_state(erp).bill("BILL-0011")
    assert bill is not None
    assert bill.model_dump(exclude={"created_at"}) == {
        "id": "BILL-0011",
        "vendor": "Northwind Traders",
        "invoice_number": "INV-2057",
        "amount": "1284.50",
        "currency": "USD",
        "invoice_date": "2026-09-12",
        "due_date": "2026-10-12",
        "status": "unpaid",
        "paid_on": None,
        "notes": "Net 30 from 2026-09-12",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", bill.created_at)
    assert "BILL-0011" in bill_ids(erp_user.http.get("/bills").text)


def test_invalid_input_is_rerendered_with_messages_and_values(erp: ErpServer, erp_user: ErpUser) -> None:
    response = erp_user.new_bill(amount="1,284.50", due_date="2026-09-01", invoice_number="INV-2057")
    assert response.status_code == 422
    page = response.text
    amount_message = "Amount must be a plain number like 99.90 — no thousands separators or currency symbols."
    due_message = "Due date cannot be before the invoice date (2026-09-12)."
    summary = page[page.index('id="error-summary"') : page.index("</div>", page.index('id="error-summary"'))]
    assert amount_message in summary and due_message in summary
    assert f'<p class="field-error" id="amount-error">{amount_message}</p>' in page
    assert f'<p class="field-error" id="due_date-error">{due_message}</p>' in page
    assert 'value="1,284.50"' in page and 'value="INV-2057"' in page and 'value="2026-09-12"' in page
    assert re.search(r'<option value="\d+" selected>Northwind Traders</option>', page)
    assert '<option value="USD" selected>USD</option>' in page
    assert len(erp_state(erp).bills) == 10


def test_user_input_is_escaped(erp_user: ErpUser) -> None:
    erp_user.new_bill(invoice_number="<script>alert(1)</script>")
    page = erp_user.http.get("/bills/BILL-0011").text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# -- duplicates -----------------------------------------------------------------------------------


def test_a_duplicate_is_refused(erp: ErpServer, erp_user: ErpUser) -> None:
    for number in ("GX-5531", " gx-5531 "):
        response = erp_user.new_bill(
            vendor="Globex Corp",
            invoice_number=number,
            amount="2150.00",
            invoice_date="2026-09-05",
            due_date="2026-10-05",
        )
        assert response.status_code == 409
        text = visible_text(response.text)
        assert "Duplicate bill: invoice GX-5531 from Globex Corp is already entered as BILL-0002." in text
        assert "The same vendor and invoice number cannot be entered twice." in text
    assert len(erp_state(erp).bills) == 10


def test_the_same_number_at_another_vendor_is_not_a_duplicate(erp_user: ErpUser) -> None:
    response = erp_user.new_bill(vendor="Initech", invoice_number="GX-5531")
    assert response.status_code == 303


def test_a_near_duplicate_needs_confirmation(erp: ErpServer, erp_user: ErpUser) -> None:
    near = {"vendor": "Globex Corp", "invoice_number": "GX-5532", "amount": "2150.00",
            "invoice_date": "2026-09-05", "due_date": "2026-10-05"}  # fmt: skip
    response = erp_user.new_bill(**near)
    assert response.status_code == 200
    text = visible_text(response.text)
    assert "Possible duplicate — please confirm" in text
    assert "BILL-0002 : invoice GX-5531, 2150.00 USD, invoice date 2026-09-05" in text
    assert '<label for="confirm_near_duplicate">' in response.text
    assert 'value="GX-5532"' in response.text
    assert len(erp_state(erp).bills) == 10

    response = erp_user.new_bill(confirm_near_duplicate=True, **near)
    assert response.status_code == 303 and response.headers["location"] == "/bills/BILL-0011"
    assert erp_state(erp).bill("BILL-0011").invoice_number == "GX-5532"  # type: ignore[union-attr]


# -- mark paid --------------------------------------------------------------------------------------


def test_mark_paid_asks_for_a_date_and_records_a_payment(erp: ErpServer, erp_user: ErpUser) -> None:
    detail = erp_user.http.get("/bills/BILL-0004").text
    assert '<label for="paid_on">Payment date</label>' in detail
    assert 'id="paid_on" name="paid_on" value="2026-10-02"' in detail  # the demo's today, suggested

    response = erp_user.mark_paid("BILL-0004", "2026-10-02")
    assert response.status_code == 303 and response.headers["location"] == "/bills/BILL-0004"
    assert "BILL-0004 marked as paid on 2026-10-02." in erp_user.http.get("/bills/BILL-0004").text
    state = erp_state(erp)
    bill = state.bill("BILL-0004")
    assert bill is not None and (bill.status, bill.paid_on) == ("paid", "2026-10-02")
    payment = state.payments[-1]
    assert (payment.bill_id, payment.paid_on, payment.amount, payment.currency) == (
        "BILL-0004", "2026-10-02", "640.00", "GBP",
    )  # fmt: skip


def test_mark_paid_rules(erp: ErpServer, erp_user: ErpUser) -> None:
    response = erp_user.mark_paid("BILL-0004", "02/10/2026")
    assert response.status_code == 422
    assert "Payment date must be a real date in YYYY-MM-DD format" in response.text
    response = erp_user.mark_paid("BILL-0004", "2026-08-01")
    assert response.status_code == 422
    assert "Payment date cannot be before the invoice date (2026-09-01)." in response.text
    response = erp_user.http.post(
        "/bills/BILL-0001/pay",
        data={"paid_on": "2026-10-02", "csrf_token": erp_user.csrf_token("/bills/BILL-0004")},
    )
    assert response.status_code == 409
    assert "BILL-0001 is already paid (paid on 2026-09-05); it was not changed." in response.text
    state = erp_state(erp)
    assert state.bill("BILL-0004").status == "unpaid"  # type: ignore[union-attr]
    assert len(state.payments) == 4


def test_unknown_bill_and_page_are_404(erp_user: ErpUser) -> None:
    response = erp_user.http.get("/bills/BILL-0999")
    assert response.status_code == 404 and "There is no bill BILL-0999." in response.text
    assert erp_user.http.get("/nowhere").status_code == 404
    assert erp_user.http.post("/bills", data={"csrf_token": "x"}).status_code == 405


# -- lists and filters ----------------------------------------------------------------------------


def test_the_bills_list_is_a_table_of_all_bills(erp_user: ErpUser) -> None:
    page = erp_user.http.get("/bills").text
    assert bill_ids(page) == [f"BILL-{n:04d}" for n in range(1, 11)]
    assert '<th scope="col">Invoice number</th>' in page
    assert "10 bills" in page


def test_unpaid_due_before_filter_and_totals(erp_user: ErpUser) -> None:
    page = erp_user.http.get("/bills", params={"status": "unpaid", "due_before": "2026-10-10"}).text
    assert bill_ids(page) == ["BILL-0002", "BILL-0004", "BILL-0005", "BILL-0006", "BILL-0009"]
    totals = re.findall(r'<span class="total">([^<]+)</span>', page)
    assert totals == ["2310.00 EUR", "640.00 GBP", "2961.40 USD"]
    assert '<option value="unpaid" selected>Unpaid</option>' in page


def test_vendor_currency_and_status_filters(erp_user: ErpUser) -> None:
    stark = erp_user.vendor_ids()["Stark Logistics"]
    assert bill_ids(erp_user.http.get("/bills", params={"vendor": stark}).text) == ["BILL-0004", "BILL-0010"]
    assert bill_ids(erp_user.http.get("/bills", params={"currency": "INR"}).text) == ["BILL-0008"]
    paid = bill_ids(erp_user.http.get("/bills", params={"status": "paid"}).text)
    assert paid == ["BILL-0001", "BILL-0003", "BILL-0008", "BILL-0010"]
    empty = erp_user.http.get("/bills", params={"currency": "CHF"}).text
    assert bill_ids(empty) == [] and "No bills match these filters." in empty


def test_a_bad_due_before_is_explained(erp_user: ErpUser) -> None:
    response = erp_user.http.get("/bills", params={"due_before": "10/10/2026"})
    assert response.status_code == 422
    assert "Due before must be a real date in YYYY-MM-DD format" in response.text
    assert len(bill_ids(response.text)) == 10


def test_vendors_page_lists_every_vendor(erp_user: ErpUser) -> None:
    page = visible_text(erp_user.http.get("/vendors").text)
    for name, currency in [("Northwind Traders", "USD"), ("Bharat Components Pvt. Ltd.", "INR"),
                           ("Müller Industrietechnik GmbH", "EUR"), ("Stark Logistics", "GBP"),
                           ("Soylent Foods", "USD")]:  # fmt: skip
        assert f"{name} {currency}" in page
    assert "10 vendors" in page
