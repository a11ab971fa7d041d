"""Session 43: honest payment terms the due-date reader (``tools.ap.due_date``) misread or refused.

1. The standard Skonto sentence ("Zahlbar innerhalb von 10 Tagen abzüglich 2 % Skonto oder innerhalb
   von 30 Tagen ohne Abzug") tied the rate to the day count after it: the 10-day Skonto date was
   given as the due date. A rate's day count is the one in its own part of the terms; of a discount
   and a net count the smaller is the discount's, the larger the net, whatever their order.
2. Sentences about paying late, returns or delivery: a late-payment charge was shown as an
   early-payment discount, another sentence's day count refused the terms, a date labelled as due was
   dropped because its sentence warned of late fees. Each part is judged by what it is about.
3. Month names in Spanish, Italian, Dutch, Portuguese, the Nordic languages, Polish, the Japanese
   2026年12月13日, and Dutch/Nordic/Finnish/Japanese words of the terms, were not read; the month
   names are one table per locale (``ap.MONTH_NAMES``), read alike by the date tracing and the verifier.
"""

from __future__ import annotations

from datetime import date

import pytest

from taskcrew.crew.evidence import values
from taskcrew.crew.models import Citation, StepReport
from taskcrew.crew.provenance import field_origin
from taskcrew.tools import ap
from taskcrew.tools.ap import APInputError, due_date, parse_date

D = "2026-10-14"  # the invoice date; +10 days 2026-10-24, +14 2026-10-28, +30 2026-11-13


# ------------------------------------------------------------------ 1. a discount's own day count


@pytest.mark.parametrize(
    ("terms", "discount_days"),
    [
        ("Zahlbar innerhalb von 10 Tagen abzüglich 2 % Skonto oder innerhalb von 30 Tagen ohne Abzug", 10),
        ("Payable within 10 days with 2% discount or within 30 days net", 10),
        ("Payment within 10 days less 2% discount, or 30 days net", 10),
        ("Betaling binnen 10 dagen met 2% korting of binnen 30 dagen netto", 10),
        ("Escompte de 2% pour paiement sous 10 jours, sinon 30 jours net", 10),
        # the orders that were read right stay so
        ("2 % Skonto bei Zahlung innerhalb 10 Tagen, 30 Tage netto", 10),
        ("Zahlungsbedingungen: 14 Tage 2% Skonto, 30 Tage netto", 14),
        ("Zahlbar in 10 Tagen abzgl. 2% Skonto oder in 30 Tagen netto", 10),  # "abzgl." ends no part
        ("Net 30 days. 2% discount if paid within 10 days.", 10),
        ("2% 10 Net 30", 10),
        ("2/10 net 30", 10),
    ],
)
def test_the_net_count_is_the_due_date_and_the_discount_keeps_its_own_count(
    terms: str, discount_days: int
) -> None:
    got = due_date(D, terms)
    assert (got.due_date, got.days, got.rule) == (date(2026, 11, 13), 30, "net_days"), got
    assert got.note and f"within {discount_days} days" in got.note and "2%" in got.note, got.note


def test_a_vendors_routine_types_the_net_date_for_the_skonto_sentence() -> None:
    """A kept template (learned from a "30 Tage netto" invoice) replays the vendor's next invoice, which
    prints the standard Skonto sentence: the due date it reads is the net date, not the Skonto date."""
    from taskcrew.routines.template import extract, learn

    first = (
        "Müller & Söhne GmbH\nRechnung\nRechnungsnummer: RE-2026-0412\nRechnungsdatum: 14.10.2026\n"
        "Beratung Oktober\nGesamtbetrag: 1.234,56 EUR\nZahlungsbedingungen: 30 Tage netto\n"
    )
    verified = {
        "invoice_number": "RE-2026-0412",
        "amount": "1234.56",
        "currency": "EUR",
        "invoice_date": "2026-10-14",
        "due_date": "2026-11-13",
    }
    template = learn(first, verified, "Müller & Söhne GmbH", "inbox/re-0412.txt")
    nxt = (
        "Müller & Söhne GmbH\nRechnung\nRechnungsnummer: RE-2026-0518\nRechnungsdatum: 02.11.2026\n"
        "Beratung November\nGesamtbetrag: 2.345,67 EUR\nZahlungsbedingungen: Zahlbar innerhalb von 10 Tagen "
        "abzüglich 2 % Skonto oder innerhalb von 30 Tagen ohne Abzug\n"
    )
    assert extract(template, nxt)["due_date"] == "2026-12-02"  # 30 days net; 2026-11-12 is the Skonto date


def test_a_rate_written_with_its_count_after_a_slash_is_a_discount() -> None:
    got = due_date(D, "Terms: 1%/10, net 30")
    assert got.due_date == date(2026, 11, 13) and got.note and "1% if paid within 10 days" in got.note


@pytest.mark.parametrize(
    "terms",
    [
        "2% 10 days, 1% 20 days, net 30",  # two discount tiers: not chosen between
        "Net 30 or 60 days",
        "Net 30 or 60 days, 2% Skonto",  # a rate with no count of its own decides nothing
    ],
)
def test_several_counts_are_still_not_chosen_between(terms: str) -> None:
    with pytest.raises(APInputError, match="several day counts"):
        due_date(D, terms)


# --------------------------------------------------------- 2. each part judged by what it is about


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30 days. Interest of 2% per month charged on accounts outstanding beyond 45 days.",
        "Payment due within 30 days. Late payment: 5% surcharge after 14 days overdue.",
        "Net 30, 1.5% monthly interest charged on balances past 30 days",
        "Net 30. A late fee of 1.5% per month will be applied to balances over 30 days.",
        "Net 30 days 1.5% interest on overdue amounts",
        "Payable within 30 days; otherwise 2% interest per month",
    ],
)
def test_a_charge_for_paying_late_is_no_discount_and_no_day_count(terms: str) -> None:
    got = due_date(D, terms)
    assert (got.due_date, got.days) == (date(2026, 11, 13), 30), got.derivation
    assert got.note is None, got.note


@pytest.mark.parametrize(
    ("terms", "due"),
    [
        ("Net 30. Accounts unpaid after 60 days will be charged 1.5% per month.", date(2026, 11, 13)),
        ("Zahlbar innerhalb 14 Tagen. Nach 30 Tagen berechnen wir Verzugszinsen.", date(2026, 10, 28)),
        (
            "Payment due within 14 days. A reminder fee of 5 EUR is charged for each reminder after 7 days.",
            date(2026, 10, 28),
        ),
        ("Payment terms: 14 days net. Delivery within 5 working days.", date(2026, 10, 28)),
        ("Net 30. Returns accepted within 14 days.", date(2026, 11, 13)),
        ("Due within 30 days. Disputes must be raised within 7 days of invoice date.", date(2026, 11, 13)),
        ("Net 30. Payments after 45 days incur a 2% late fee", date(2026, 11, 13)),
        (
            "Der Rechnungsbetrag ist innerhalb von 14 Tagen ohne Abzug zu zahlen. Mahngebühr 5 EUR nach 21 Tagen.",
            date(2026, 10, 28),
        ),
        (
            "Wij verzoeken u het bedrag binnen 14 dagen over te maken. Bij te late betaling wordt 1% rente per maand "
            "berekend.",
            date(2026, 10, 28),
        ),
        ("Please pay within 30 days to avoid late fees", date(2026, 11, 13)),
    ],
)
def test_a_day_count_of_a_sentence_not_about_paying_on_time_is_not_counted(terms: str, due: date) -> None:
    got = due_date(D, terms)
    assert got.due_date == due, got.derivation


@pytest.mark.parametrize(
    "terms",
    [
        "Please pay by 2026-11-13 to avoid late charges.",
        "Pay by 13 Nov 2026 to avoid interest",
        "Payment due 13/11/2026 - overdue accounts subject to 1.5% interest",
        "Zahlbar bis 13.11.2026 – danach Verzugszinsen",
        "Payment must be received by 13/11/2026 or interest will be charged",
    ],
)
def test_a_date_labelled_due_stays_the_due_date_beside_a_warning_of_late_fees(terms: str) -> None:
    got = due_date(D, terms)
    assert (got.due_date, got.rule) == (date(2026, 11, 13), "explicit_date"), got.derivation


@pytest.mark.parametrize(
    ("terms", "needle"),
    [
        ("Payments after 45 days incur a 2% late fee", "no day count"),  # when charges start is no term
        ("Pay by 2026-11-01 to avoid late charges; net 30", "ask a human"),  # the date and the count differ
        ("Zahlbar bis 13.11.2026, Verzugszinsen ab 10.11.2026", "before the due date"),
        ("Payment within 10 working days", "working days"),  # not calendar days: never counted as such
        ("Zahlbar innerhalb 14 Tagen mit 2% Skonto", "only for the discount"),  # the net count unsaid
        ("Net 10 days, 2% discount within 30 days", "longer than the net count"),  # never made later
        ("Pagamento a 30 giorni fine mese", "end of the month a count ends in"),
        ("Pagamento: bonifico bancario 30 gg d.f.f.m.", "end of the month a count ends in"),
    ],
)
def test_terms_that_do_not_give_one_due_date_are_refused(terms: str, needle: str) -> None:
    with pytest.raises(APInputError, match=needle):
        due_date(D, terms)


# ------------------------------------------------------------- 3. months, words and labels by locale

DATES = [
    ("13 dicembre 2026", date(2026, 12, 13)),  # Italian
    ("13 de diciembre de 2026", date(2026, 12, 13)),  # Spanish
    ("13 de noviembre del 2026", date(2026, 11, 13)),
    ("13 mei 2026", date(2026, 5, 13)),  # Dutch
    ("13 de dezembro de 2026", date(2026, 12, 13)),  # Portuguese
    ("13 januari 2027", date(2027, 1, 13)),  # Swedish
    ("13. desember 2026", date(2026, 12, 13)),  # Norwegian
    ("13. marts 2026", date(2026, 3, 13)),  # Danish
    ("13. marraskuuta 2026", date(2026, 11, 13)),  # Finnish
    ("13 grudnia 2026", date(2026, 12, 13)),  # Polish
    ("2026年12月13日", date(2026, 12, 13)),  # Japanese, Chinese
    ("２０２６年１２月１３日", date(2026, 12, 13)),  # full-width digits
    ("2026년 12월 13일", date(2026, 12, 13)),  # Korean
    ("13 Dez 2026", date(2026, 12, 13)),  # the names read before stay read
    ("September 13, 2026", date(2026, 9, 13)),
]


@pytest.mark.parametrize(("text", "value"), DATES)
def test_a_date_with_a_month_name_of_any_listed_locale_is_read(text: str, value: date) -> None:
    assert parse_date(text).value == value


@pytest.mark.parametrize("text", ["3 out 2026", "3 set 2026"])  # English words, not month names
def test_an_abbreviation_that_is_an_english_word_is_no_month(text: str) -> None:
    with pytest.raises(APInputError, match="not a date"):
        parse_date(text)


def test_the_month_table_is_one_name_one_month() -> None:
    assert set(ap.MONTH_NAMES) >= {"en", "de", "fr", "es", "it", "pt", "nl", "sv", "no/da", "fi", "pl"}
    assert all(len(months.split(",")) == 12 for months in ap.MONTH_NAMES.values())
    assert ap.MONTHS["dicembre"] == ap.MONTHS["grudnia"] == ap.MONTHS["december"] == 12


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("Data di scadenza: 13 dicembre 2026", "2026-12-13"),
        ("Fecha de vencimiento: 13 de diciembre de 2026", "2026-12-13"),
        ("Vervaldatum: 13 mei 2026", "2026-05-13"),
        ("Förfallodag: 13 januari 2027", "2027-01-13"),
        ("Termin płatności: 13 grudnia 2026", "2026-12-13"),
        ("支払期限：2026年12月13日", "2026-12-13"),
    ],
)
def test_a_printed_date_is_traced_to_its_line_and_read_by_the_verifier(line: str, value: str) -> None:
    read = {"invoice.txt": f"Invoice INV-88\n{line}\n"}.get
    report = StepReport(
        status="done",
        summary="read the invoice",
        data={"due_date": value},
        sources=[Citation(source="invoice.txt", quote=line)],
    )
    found = field_origin(value, [(1, "document_reader", report)], read)
    assert found.text.startswith("invoice.txt, line 2"), found.text
    assert value in values(line)  # the verifier reads the same month names (one table)


@pytest.mark.parametrize(
    ("terms", "due"),
    [
        ("Betaling binnen 14 dagen", date(2026, 10, 28)),  # Dutch
        ("30 dagen netto", date(2026, 11, 13)),
        ("Betalningsvillkor 30 dagar", date(2026, 11, 13)),  # Swedish
        ("Betales innen 14 dager", date(2026, 10, 28)),  # Norwegian
        ("Netto 8 dage", date(2026, 10, 22)),  # Danish
        ("Maksuehto 14 päivää netto", date(2026, 10, 28)),  # Finnish
        ("Termin płatności: 14 dni", date(2026, 10, 28)),  # Polish
        ("Pagamento a 30 gg data fattura", date(2026, 11, 13)),  # Italian
        ("30日以内にお支払いください", date(2026, 11, 13)),  # Japanese
        ("Förfallodatum: 2026-11-13", date(2026, 11, 13)),
        ("Forfallsdato: 13.11.2026", date(2026, 11, 13)),
        ("Forfaldsdato: 13.11.2026", date(2026, 11, 13)),
        ("Eräpäivä: 13.11.2026", date(2026, 11, 13)),
        ("Fecha de vencimiento: 13 de noviembre de 2026", date(2026, 11, 13)),
        ("Datum splatnosti: 13.11.2026", date(2026, 11, 13)),  # Czech
        ("支払期限：2026年11月13日", date(2026, 11, 13)),
        ("お支払期限：2026年11月13日", date(2026, 11, 13)),
        ("지급기한: 2026년 11월 13일", date(2026, 11, 13)),
    ],
)
def test_terms_in_the_languages_of_european_and_japanese_invoices_are_read(terms: str, due: date) -> None:
    assert due_date(D, terms).due_date == due
