"""The ERP's plain rules: form validation, money, seed data = the company's fixed facts, settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from taskcrew.mock_erp import ChaosConfig, ErpSettings
from taskcrew.mock_erp.money import format_cents, to_cents
from taskcrew.mock_erp.seed import load_seed
from taskcrew.mock_erp.validation import AMOUNT_NOT_PLAIN, validate_bill_form

VALID = {
    "vendor_id": "1",
    "invoice_number": "INV-2057",
    "amount": "1284.50",
    "currency": "USD",
    "invoice_date": "2026-09-12",
    "due_date": "2026-10-12",
    "notes": "",
}
CURRENCIES = ("USD", "EUR", "GBP", "INR")

# docs: the demo company notes, "Bills seeded in the ERP" (id order = list order).
COMPANY_BILLS = [
    ("Northwind Traders", "INV-2031", "980.00", "USD", "2026-08-10", "2026-09-09", "2026-09-05"),
    ("Globex Corp", "GX-5531", "2150.00", "USD", "2026-09-05", "2026-10-05", None),
    ("Initech", "INI-7702", "3100.00", "USD", "2026-08-22", "2026-09-21", "2026-09-18"),
    ("Stark Logistics", "SL-1190", "640.00", "GBP", "2026-09-01", "2026-10-01", None),
    ("Hooli Cloud Services", "HCS-2026-09", "499.00", "USD", "2026-09-03", "2026-10-03", None),
    ("Müller Industrietechnik GmbH", "RE-2026-0388", "2310.00", "EUR", "2026-08-28", "2026-10-07", None),
    ("Vandelay Industries", "VI-3301", "1750.00", "USD", "2026-09-10", "2026-10-15", None),
    (
        "Bharat Components Pvt. Ltd.",
        "INV/2026/0855",
        "96000.00",
        "INR",
        "2026-08-30",
        "2026-09-29",
        "2026-09-26",
    ),
    ("Contoso Office Supplies", "CO-55120", "312.40", "USD", "2026-09-08", "2026-10-08", None),
    ("Stark Logistics", "SL-1102", "410.00", "GBP", "2026-08-01", "2026-08-31", "2026-08-29"),
]
COMPANY_VENDORS = {
    "Northwind Traders": "USD",
    "Initech": "USD",
    "Globex Corp": "USD",
    "Bharat Components Pvt. Ltd.": "INR",
    "Müller Industrietechnik GmbH": "EUR",
    "Contoso Office Supplies": "USD",
    "Vandelay Industries": "USD",
    "Soylent Foods": "USD",
    "Stark Logistics": "GBP",
    "Hooli Cloud Services": "USD",
}


def errors_for(**changes: str) -> dict[str, str]:
    return validate_bill_form({**VALID, **changes}, vendor_ids={1, 2}, currencies=CURRENCIES).errors


def test_valid_form_gives_a_draft() -> None:
    result = validate_bill_form(VALID, vendor_ids={1}, currencies=CURRENCIES)
    assert result.errors == {}
    assert result.draft is not None
    assert result.draft.amount_cents == 128450
    assert result.draft.notes is None


@pytest.mark.parametrize(
    "amount", ["1,284.50", "$1284.50", "1.284,50", "1284,50", "USD 1284.50", "1e3", "12 84"]
)
def test_amount_must_be_a_plain_number(amount: str) -> None:
    assert errors_for(amount=amount) == {"amount": AMOUNT_NOT_PLAIN}
    assert "no thousands separators or currency symbols" in AMOUNT_NOT_PLAIN


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("", "Amount is required."),
        ("1284.505", "Amount must have at most 2 decimal places, like 99.90."),
        ("-150.00", "Amount must be greater than 0."),
        ("0.00", "Amount must be greater than 0."),
        ("1000000000", "Amount is too large (at most 999999999.99)."),
    ],
)
def test_amount_rules(amount: str, message: str) -> None:
    assert errors_for(amount=amount) == {"amount": message}


def test_plain_amounts_are_accepted_and_normalised() -> None:
    for text, cents in [("1284.5", 128450), (" 980 ", 98000), ("0.01", 1), ("96000.00", 9600000)]:
        result = validate_bill_form({**VALID, "amount": text}, vendor_ids={1}, currencies=CURRENCIES)
        assert result.draft is not None and result.draft.amount_cents == cents


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"vendor_id": ""}, "vendor_id", "Choose a vendor from the list."),
        (
            {"vendor_id": "999"},
            "vendor_id",
            "Choose a vendor from the list; the vendor sent is not one we know.",
        ),
        (
            {"vendor_id": "Northwind Traders"},
            "vendor_id",
            "Choose a vendor from the list; the vendor sent is not one we know.",
        ),
        ({"invoice_number": "   "}, "invoice_number", "Invoice number is required."),
        ({"invoice_number": "X" * 65}, "invoice_number", "Invoice number must be at most 64 characters."),
        ({"currency": ""}, "currency", "Choose a currency (an ISO code such as USD) from the list."),
        ({"currency": "usd"}, "currency", "Currency must be an ISO code from the list: USD, EUR, GBP, INR."),
        ({"currency": "$"}, "currency", "Currency must be an ISO code from the list: USD, EUR, GBP, INR."),
        ({"invoice_date": ""}, "invoice_date", "Invoice date is required (format YYYY-MM-DD)."),
        (
            {"invoice_date": "12/09/2026"},
            "invoice_date",
            "Invoice date must be a real date in YYYY-MM-DD format, like 2026-01-31.",
        ),
        (
            {"invoice_date": "2026-02-30"},
            "invoice_date",
            "Invoice date must be a real date in YYYY-MM-DD format, like 2026-01-31.",
        ),
        (
            {"invoice_date": "20260912"},
            "invoice_date",
            "Invoice date must be a real date in YYYY-MM-DD format, like 2026-01-31.",
        ),
        (
            {"due_date": "12 Oct 2026"},
            "due_date",
            "Due date must be a real date in YYYY-MM-DD format, like 2026-01-31.",
        ),
        ({"due_date": "2026-09-11"}, "due_date", "Due date cannot be before the invoice date (2026-09-12)."),
        ({"notes": "n" * 501}, "notes", "Notes must be at most 500 characters."),
    ],
)
def test_field_rules(changes: dict[str, str], field: str, message: str) -> None:
    assert errors_for(**changes) == {field: message}


def test_due_date_on_the_invoice_date_is_fine() -> None:
    assert errors_for(due_date="2026-09-12") == {}


def test_every_problem_is_reported_at_once() -> None:
    errors = errors_for(vendor_id="", invoice_number="", amount="1,284.50", currency="", invoice_date="x")
    assert set(errors) == {"vendor_id", "invoice_number", "amount", "currency", "invoice_date"}


def test_money_round_trips() -> None:
    assert to_cents("1284.5") == 128450
    assert format_cents(128450) == "1284.50"
    assert format_cents(-15000) == "-150.00"
    with pytest.raises(ValueError):
        to_cents("1,284.50")


def test_seed_is_exactly_the_company_facts() -> None:
    seed = load_seed()
    assert {v.name: v.default_currency for v in seed.vendors} == COMPANY_VENDORS
    rows = [
        (
            b.vendor,
            b.invoice_number,
            b.amount,
            b.currency,
            b.invoice_date.isoformat(),
            b.due_date.isoformat(),
            b.paid_on.isoformat() if b.paid_on else None,
        )
        for b in seed.bills
    ]
    assert rows == COMPANY_BILLS


def test_settings_come_from_the_environment() -> None:
    settings = ErpSettings.from_env(
        {"ACME_ERP_USERNAME": "clerk", "ACME_ERP_PASSWORD": "s3cret", "ACME_ERP_SESSION_TTL_S": "60"}
    )
    assert settings.username == "clerk"
    assert settings.password.get_secret_value() == "s3cret"
    assert settings.session_ttl_s == 60
    assert "s3cret" not in repr(settings)
    defaults = ErpSettings.from_env({})
    assert (defaults.username, defaults.password.get_secret_value()) == ("demo", "demo123")
    assert defaults.today.isoformat() == "2026-10-02"
    with pytest.raises(ValidationError):
        ErpSettings.from_env({"ACME_ERP_SESSION_TTL_S": "soon"})


def test_chaos_config_is_strict() -> None:
    assert ChaosConfig().save_faults == ["expire_session", "service_unavailable"]
    assert ChaosConfig.off().enabled is False
    with pytest.raises(ValidationError):
        ChaosConfig(error_rate=1.5)
    with pytest.raises(ValidationError):
        ChaosConfig.model_validate({"save_faults": ["explode"]})
    with pytest.raises(ValidationError):
        ChaosConfig.model_validate({"latency": 5})
