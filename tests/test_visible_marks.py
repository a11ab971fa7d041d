"""Symbols that have no place in an identifier or a name (an emoji, a pictograph, a dingbat, a math
sign drawn like a hyphen, a squared letter, a private-use code point) are shown for what they are
and flagged, as combining marks and hidden characters are; accented names, other scripts' letters
and the signs company names use are left as they are (``approvals.visible``)."""

from __future__ import annotations

import pytest

from taskcrew.approvals.rules import assess, load_rules
from taskcrew.approvals.visible import hidden, visible


@pytest.mark.parametrize(
    ("value", "marker"),
    [
        ("INV-🔥2057", "⟨Symbol 🔥 U+1F525⟩"),  # an emoji inside an invoice number
        ("INV-2057✅", "⟨Symbol ✅ U+2705⟩"),
        ("INV🇩🇪2057", "⟨Symbol 🇩 U+1F1E9⟩"),  # a flag: two regional indicators
        ("INV−2057", "⟨Symbol − U+2212⟩"),  # a minus sign drawn like the hyphen
        ("INV∕2057", "⟨Symbol ∕ U+2215⟩"),  # a division slash drawn like "/"
        ("INV\u20132057", "⟨Symbol \u2013 U+2013⟩"),  # an en dash drawn like the hyphen
        ("GX\u20105531", "⟨Symbol \u2010 U+2010⟩"),  # the Unicode hyphen
        ("INV-2057²", "⟨Symbol ² U+00B2⟩"),
        ("INV-①057", "⟨Symbol ① U+2460⟩"),
        ("INV-\ue000-1", "⟨Private-use U+E000⟩"),  # a font's icon, or nothing at all
        ("Northwind☎Traders", "⟨Symbol ☎ U+260E⟩"),
        ("🄰🄲🄼🄴 Corp", "⟨Symbol 🄰 U+1F130⟩"),  # squared letters, alone: drawn like letters
        # Latin letters of blocks no language writes names in, drawn like plain ones (``odd_letter``)
        ("INV-2ᴏ57", "⟨small capital O U+1D0F⟩"),  # a small capital O
        ("Nᴏrthwind Traders", "⟨small capital O U+1D0F⟩"),
        ("Vandelay Industrieꜱ", "⟨small capital S U+A731⟩"),
        ("Globex Cɑpital", "⟨IPA letter ɑ U+0251⟩"),  # the IPA alpha
    ],
)
def test_a_symbol_in_an_identifier_is_shown_for_what_it_is_and_flagged(value: str, marker: str) -> None:
    assert marker in visible(value), visible(value)
    assert any(h.startswith(marker) for h in hidden(value)), hidden(value)
    flags = assess(
        [("invoice_number", value), ("amount", "120.00")], "http://erp/bills/new", load_rules()
    ).flags
    assert [f.rule for f in flags] == ["hidden_characters"] and marker in flags[0].message


def test_names_in_any_script_with_their_accents_and_signs_are_left_as_they_are() -> None:
    for honest in (
        "Müller GmbH",
        "Café Zürich",
        "Çağdaş Ltd. Şti.",
        "ООО «Ромашка»",
        "Ελληνικά Α.Ε.",
        "株式会社テスト",
        "㈱テスト",
        "नमस्ते Traders",
        "مُحَمَّد",
        "Acme™ Corp",
        "Contoso® Ltd",
        "Invoice Nº 2057",
        "№ 2057",
        "Smith & Sons",
        "1 234,56 €",
        "Thanks 🙂",  # a pictograph on its own, between spaces, hides no identifier
        "Ștefan Țară SRL",  # Romanian: Latin Extended-B
        "Ọládélé Ṣeun",  # Yoruba: Latin Extended Additional
        "Ɖɔkɔ ɛ Ewe",  # IPA letters African orthographies write
        "Hawaiʻi Kona",
        "INV-2057",
    ):
        assert visible(honest) == honest and hidden(honest) == [], honest


def test_symbols_in_prose_keep_their_layout() -> None:
    """Text whose layout is its own (a summary, a document's line) is not a value: its arrows and
    ticks are drawn as written."""
    assert visible("status→paid ✓done", layout=True) == "status→paid ✓done"
    assert visible("status→paid") == "status⟨Symbol → U+2192⟩paid"


def test_what_is_shown_twice_is_marked_once_and_a_fake_marker_hides_nothing() -> None:
    """A flag's message quotes markers and is stored as text; a surface that shows it marks it again
    (the terminal, ``approvals show``): a marker is left as it is, never marked inside (no
    "⟨Cyrillic ⟨Cyrillic о U+043E⟩ U+043E⟩"). What only looks like a marker is marked like any text:
    one holding a character that draws nothing or reorders what follows, or a look-alike it does not
    name."""
    for value in ("АСМЕ Corp", "Nᴏrthwind Traders", "INV-2০57", "a\u200bb", "x     y", "pay\u202e1234"):
        once = visible(value)
        assert visible(once) == once, once
        for flag in hidden(value):
            assert visible(flag) == flag, flag
            assert "⟨" not in flag.replace("⟨", "", 1).split("⟩", 1)[0], flag  # no marker in a marker
    for fake, shown in (
        ("⟨U+200B\u200b⟩", "⟨U+200B⟨U+200B⟩⟩"),  # the character it names, drawing nothing: marked
        ("⟨U+202E\u202e⟩abc", "⟨U+202E⟨U+202E⟩⟩abc"),
        ("⟨Nᴏrthwind⟩", "⟨N⟨small capital O U+1D0F⟩rthwind⟩"),
        ("⟨Cyrillic о U+0430⟩", "⟨Cyrillic ⟨Cyrillic о U+043E⟩ U+0430⟩"),  # names another character
    ):
        assert visible(fake) == shown, visible(fake)
