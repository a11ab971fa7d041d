"""Payment terms: a day count whose sentence names another event than the invoice (delivery, goods,
shipment …) is refused unless the terms date that event, and one from the later or earlier of the
invoice and such an event always; the invoice's issue ("date of issue", "date d'émission") and its
delivery ("delivery of invoice") are the invoice's; "n 45" is the net count only right after a
discount ("2/10 n 30"), never a lone number sign ("contract N 45")."""

from __future__ import annotations

from datetime import date

import pytest

from taskcrew.tools.ap import APInputError, due_date

INVOICE = "2026-10-01"


@pytest.mark.parametrize(
    "terms",
    [
        "30 days (after delivery)",
        "Net 30 (from delivery)",
        "30 days, from delivery",
        "30 days net, counted from delivery",
        "30 days post delivery",
        "payable within 30 days once goods are delivered",
        "30 days from month end of delivery",
        "Net 30 EOM after delivery",
        "30 days after end of month in which goods were delivered",
        "30 jours fin de mois après livraison",
        "Zahlbar innerhalb 30 Tagen, gerechnet ab Wareneingang",
        "Net 30 days after delivery on 2026-10-05 and installation",
    ],
)
def test_a_count_in_a_sentence_naming_another_event_is_refused(terms: str) -> None:
    """Were counted from the invoice date (due 2026-10-31 or 2026-11-30): the event's date is on no
    document."""
    with pytest.raises(APInputError, match="another event than the invoice") as refused:
        due_date(INVOICE, terms)
    assert "ask a human" in str(refused.value)


@pytest.mark.parametrize(
    "terms",
    [
        "30 days from the invoice date or delivery, whichever is later",
        "Net 30 days after receipt of the invoice or the goods, whichever is later",
        "Net 30 days after delivery on 2026-10-05 or invoice date, whichever is later",
        "Net 30 from 2026-10-20 or delivery, whichever is later",
    ],
)
def test_a_count_from_the_later_of_the_invoice_and_another_event_is_refused(terms: str) -> None:
    with pytest.raises(APInputError, match=r"earlier or later of the invoice and .*not computed"):
        due_date(INVOICE, terms)


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30 days after delivery on 2026-10-05",
        "30 Tage nach Lieferung am 05.10.2026",
        "30 days after delivery (2026-10-05)",
    ],
)
def test_a_count_from_a_dated_event_still_runs_from_its_date(terms: str) -> None:
    counted = due_date(INVOICE, terms)
    assert counted.due_date == date(2026, 11, 4)
    assert "the date the terms count from" in counted.derivation


@pytest.mark.parametrize(
    "terms",
    [
        "Net 30 days from date of issue",
        "30 days from issue date",
        "30 days after date of issue of invoice",
        "30 jours à compter de la date d'émission",
        "30 días desde la fecha de emisión",
        "Zahlbar innerhalb 30 Tagen ab Ausstellungsdatum",
        "30 days after delivery of invoice",
        "Payment due within 30 days of invoice delivery",
        # a cost named beside the count is no event ("shipping charges", "Versandkosten")
        "Net 30, shipping charges prepaid and added",
        "Zahlbar innerhalb 30 Tagen, Versandkosten extra",
        "Net 30. Returns accepted within 14 days of delivery.",
    ],
)
def test_a_count_from_the_invoice_issue_or_its_delivery_is_read(terms: str) -> None:
    """The first seven were refused as counting from another event (the issue, the invoice's delivery)."""
    counted = due_date(INVOICE, terms)
    assert counted.due_date == date(2026, 10, 31) and counted.rule == "net_days"


@pytest.mark.parametrize(
    "terms", ["Net, see contract N 45", "Zahlbar netto, Vertrag N 14", "Payable net, contract n 14"]
)
def test_a_lone_number_sign_is_no_day_count(terms: str) -> None:
    """Were due in 45 / 14 / 14 days: the contract's number read as the net count."""
    with pytest.raises(APInputError, match="no day count"):
        due_date(INVOICE, terms)


@pytest.mark.parametrize(
    ("terms", "discount"),
    [
        ("Net 30, order n 45", None),
        ("2/10 n 30", 10),
        ("2% 10, n 30", 10),
        ("2/10, N 30", 10),
        ("n/30", None),
    ],
)
def test_n_30_is_the_net_count_only_after_a_discount_or_as_n_slash_30(
    terms: str, discount: int | None
) -> None:
    """'Net 30, order n 45' was refused as several day counts (30 and 45)."""
    counted = due_date(INVOICE, terms)
    assert counted.due_date == date(2026, 10, 31) and counted.days == 30
    assert (counted.note is not None) == (discount is not None)
