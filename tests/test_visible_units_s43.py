"""Units and typographic signs in a bill's free text ("250 m²", "M8×40", "−20 °C", "½″") are honest:
the stray-symbol rule (``visible._stray_symbols``) is for identifiers and names (an invoice number,
an amount, an IBAN, a payee), decided by the field (``rules.prose_field``). In free text only what
hides or passes for another is flagged *hidden characters*: invisible and bidi characters, letters
and digits drawn like others. Each flagged character is still marked where the approver reads it."""

from __future__ import annotations

import re

import pytest
from test_amounts_lookalikes_s42 import _park
from test_console_sources_redteam import App, app  # noqa: F401  (fixture)

from taskcrew.approvals.rules import assess, load_rules
from taskcrew.approvals.visible import hidden, visible

URL = "http://127.0.0.1:8800/bills/new"


def _hidden_flags(field: str, value: str) -> list[str]:
    got = assess(
        [("vendor", "Müller & Söhne GmbH"), ("amount", "1234.56"), ("currency", "EUR"), (field, value)],
        URL,
        load_rules(),
    )
    return [f.message for f in got.flags if f.rule == "hidden_characters"]


HONEST_PROSE = [
    ("description", "Büroreinigung Oktober, 250 m²"),
    ("description", "Kopierpapier A4 210×297 mm, 5×500 Blatt"),
    ("description", "Schrauben M8×40, 200 Stück"),
    ("description", "Kabel NYM-J 3×1,5 mm²"),
    ("memo", "Kühltransport bei −20 °C"),
    ("description", "Kupferrohr ½″, 10 m"),
    ("description", "ボルト M8×40 200本"),
    ("description", "ＬＥＤ電球 ６０Ｗ 10個"),
    ("description", "Rohr 2„ Zoll“, «Spezial» ±0,1 mm, 45°, 3′ 6″"),
    ("notes", "Rabatt 5‰, Lieferschein №4711"),
    ("description", "Widerstand 10kΩ, Folie 50 μm, 50 µm"),
    ("comment", "Montag–Freitag — 8…17 Uhr, Software™ Lizenz®, Preis 12 € / m², x² + y³ → ①"),
    ("lines[0].description", "Fliesen 30×60 cm, 12 m²"),
    ("lineText", "Temperatur −20…+5 ℃"),
    ("description (in the address)", "Kabel 3×1,5 mm²"),
]


@pytest.mark.parametrize("field, value", HONEST_PROSE)
def test_units_and_typographic_signs_in_free_text_are_not_hidden_characters(field: str, value: str) -> None:
    assert _hidden_flags(field, value) == []


@pytest.mark.parametrize("field, value", HONEST_PROSE)
def test_free_text_is_shown_as_it_is(field: str, value: str) -> None:
    assert hidden(value, prose=True) == [] and visible(value, prose=True) == value


HOSTILE = [
    # anywhere, free text too: what draws nothing or reorders, a letter or digit passing for another
    ("description", "Zahlung \u202e2400-VNI", "U+202E"),
    ("description", "Nor\u200bthwind Traders", "U+200B"),
    ("memo", "Kabel 3×1,5 mm² \u2066x\u2069", "U+2066"),
    ("description", "Rechnung Nоrthwind 250 m²", "Cyrillic о U+043E"),  # a Cyrillic "о" in a Latin word
    ("description", "Invoice NΟrthwind", "Greek Ο U+039F"),
    ("description", "АСМЕ Corp, 250 m²", "Cyrillic А U+0410"),
    ("description", "Ref INV-2০57", "Bengali ০ U+09E6"),
    ("description", "Ｐaypal 5×", "Fullwidth Ｐ U+FF30"),
    ("notes", "ǀNV-2057", "Latin letter dental click ǀ U+01C0"),
    ("description", "9５0.00", "Fullwidth ５ U+FF15"),  # shaped like money: an identifier
    # identifiers (any field not named as free text) and fields a person pays by: symbols too
    ("invoice_number", "INV‐0042", "Symbol ‐ U+2010"),
    ("amount", "9５0.00", "Fullwidth ５ U+FF15"),
    ("reference", "RE−2057", "Symbol − U+2212"),
    ("invoice_date", "2026‐12‐06", "Symbol ‐ U+2010"),
    ("invoice_number", "INV-🔥2057", "Symbol 🔥 U+1F525"),
    ("currency", "EUR²", "Symbol ² U+00B2"),
    ("vendor_note", "Nor×thwind", "Symbol × U+00D7"),  # named like a payee: never free text
    ("description_amount", "12×3", "Symbol × U+00D7"),  # named like an amount
    ("bank_details_text", "DE89×3704", "Symbol × U+00D7"),  # named like bank details
]


@pytest.mark.parametrize("field, value, marker", HOSTILE)
def test_what_hides_is_flagged_and_marked_where_the_approver_reads_it(
    field: str, value: str, marker: str
) -> None:
    flagged = _hidden_flags(field, value)
    assert flagged and marker in flagged[0], flagged
    assert f"⟨{marker}⟩" in visible(value), visible(value)


@pytest.mark.parametrize("field, value, marker", [h for h in HOSTILE if not h[2].startswith("Symbol")])
def test_free_text_still_marks_what_hides(field: str, value: str, marker: str) -> None:
    assert f"⟨{marker}⟩" in visible(value, prose=True)
    assert any(marker in h for h in hidden(value, prose=True)), hidden(value, prose=True)


def test_every_marker_of_the_flag_is_in_what_the_approver_reads() -> None:
    """The flag quotes markers; each of them is one the page shows for the value."""
    for field, value, _ in HOSTILE:
        shown = visible(value)
        for message in _hidden_flags(field, value):
            for marker in re.findall(r"⟨[^⟨⟩…]+⟩", message):
                assert marker in shown, (field, value, marker, shown)


def test_the_decision_page_shows_a_description_as_the_rules_judge_it(app: App) -> None:  # noqa: F811
    """The page marks in a free-text field only what the rules flag there (an invisible character),
    not its units; an identifier's stray symbol stays marked."""
    sent = [
        ("vendor", "Northwind Traders"),
        ("invoice_number", "INV\u20100042"),
        ("amount", "950.00"),
        ("currency", "EUR"),
        ("description", "Floor tiles 250 m² at −20 °C"),
        ("memo", "see\u200bnote"),
    ]
    page = app.client().get(f"/approvals/{_park(app, sent)}").text
    fields = re.search(r'<table id="fields">.*?</table>', page, re.S)
    assert fields is not None
    table = fields.group(0)
    assert "Floor tiles 250 m² at −20 °C" in table  # units shown as written
    assert "U+200B" in table and "U+2010" in table  # what hides is still marked
