"""Invoice pictures the project renders itself, for the OCR tests and bench: the layouts and damage
OCR meets in real inboxes (a crooked scan, a faint copy, a phone photo, two-column headers, German
number formats, boxed and dotted values, a small blurred IBAN), each with the values a reader must
find on it.

    for specimen in SPECIMENS:
        image = specimen.render()      # a PIL image (greyscale)
        specimen.expected              # values printed on it

Text is drawn with fpdf's built-in Helvetica and rasterised with pypdfium2, so the pictures are the
same on every machine (no system fonts).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Draw = list[tuple[float, float, str]]  # (x mm, y mm, text)
PAGE_W, PAGE_H = 148.0, 105.0  # A6 landscape in mm: small pictures keep OCR quick


@dataclass
class Specimen:
    name: str
    draw: Draw
    expected: list[str]
    size: float = 11
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # (x, y, w, h) mm
    dotted: list[tuple[float, float, float, float]] = field(default_factory=list)
    dpi: int = 150
    damage: Callable[[Any], Any] | None = None
    page: tuple[float, float] = (PAGE_W, PAGE_H)

    def render(self) -> Any:
        image = rasterise(
            self.draw, size=self.size, boxes=self.boxes, dotted=self.dotted, dpi=self.dpi, page=self.page
        )
        return self.damage(image) if self.damage else image


def rasterise(
    draw: Draw,
    *,
    size: float = 11,
    boxes: list[tuple[float, float, float, float]] | None = None,
    dotted: list[tuple[float, float, float, float]] | None = None,
    dpi: int = 150,
    page: tuple[float, float] = (PAGE_W, PAGE_H),
) -> Any:
    import pypdfium2 as pdfium
    from fpdf import FPDF

    pdf = FPDF(format=page)
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=size)
    for x, y, text in draw:
        pdf.text(x, y, text)
    pdf.set_line_width(0.35)
    for x, y, w, h in boxes or []:
        pdf.rect(x, y, w, h)
    pdf.set_dash_pattern(dash=0.35, gap=0.7)
    for x, y, w, h in dotted or []:
        pdf.rect(x, y, w, h)
    document = pdfium.PdfDocument(bytes(pdf.output()))
    try:
        return document[0].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
    finally:
        document.close()


def rotated(degrees: float) -> Callable[[Any], Any]:
    def damage(image: Any) -> Any:
        from PIL import Image

        return image.rotate(degrees, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)

    return damage


def faint(image: Any) -> Any:
    """A pale photocopy: grey ink on grey paper."""
    return image.point(lambda v: 180 + v * 35 // 255)


def photographed(image: Any) -> Any:
    """A phone photo: the page seen at an angle (perspective), slightly out of focus, uneven light, grain."""
    from PIL import Image, ImageFilter

    w, h = image.size
    # the top edge further away than the bottom: corners pulled in at the top
    quad = (w * 0.04, h * 0.02, w * 0.0, h * 1.0, w * 1.0, h * 0.98, w * 0.95, 0.0)
    seen = image.transform((w, h), Image.Transform.QUAD, quad, Image.Resampling.BICUBIC, fillcolor=255)
    seen = seen.filter(ImageFilter.GaussianBlur(0.9))
    light = Image.linear_gradient("L").resize((w, h)).point(lambda v: 235 - v // 6)
    shaded = Image.composite(seen, light, seen.point(lambda v: 255 - v))
    rng = random.Random(7)
    grain = Image.effect_noise((w, h), 18).point(lambda v: v - 128 + rng.randint(0, 0))
    return Image.blend(shaded, grain.convert("L").point(lambda v: min(255, v + 120)), 0.06)


def blurred_small(image: Any) -> Any:
    from PIL import ImageFilter

    return image.filter(ImageFilter.GaussianBlur(1.1))


ITEM_ROWS = [
    ("Steel bolts M8", "250", "pcs", "0.12", "30.00"),
    ("Copper cable", "40", "m", "1.85", "74.00"),
    ("Paint, white", "6", "l", "12.40", "74.40"),
    ("Sand", "1.5", "t", "38.00", "57.00"),
    ("Gloves", "12", "pr", "2.10", "25.20"),
]

SPECIMENS = [
    Specimen(
        "rotated",
        [(10, 15, "NORTHWIND TRADERS  INVOICE"), (10, 30, "Invoice No. NW-40917"), (10, 40, "Date 2026-10-14"),
         (10, 50, "Terms Net 30"), (10, 60, "TOTAL DUE 1,234.50 USD")],
        ["NW-40917", "2026-10-14", "1,234.50"],
        damage=rotated(7),
    ),
    Specimen(
        "faint",
        [(10, 15, "GLOBEX CORPORATION  INVOICE"), (10, 30, "Invoice No. GX-55120"), (10, 40, "Date 2026-09-30"),
         (10, 50, "Subtotal 718.00"), (10, 60, "TOTAL 789.80")],
        ["GX-55120", "2026-09-30", "718.00", "789.80"],
        damage=faint,
    ),
    Specimen(
        "photo",
        [(10, 15, "INITECH LLC  INVOICE"), (10, 30, "Invoice No. IN-77310"), (10, 40, "Date 2026-11-02"),
         (10, 50, "Qty 12  Unit 4.50  Amount 54.00"), (10, 62, "TOTAL $1,482.90")],
        ["IN-77310", "2026-11-02", "54.00", "$1,482.90"],
        size=12,
        damage=photographed,
    ),
    Specimen(
        "two-column",
        [(10, 15, "Bluebird Software SRL"), (95, 15, "Invoice number:"), (125, 15, "BB-2291"),
         (10, 23, "Strada Lunga 12"), (95, 23, "Date:"), (125, 23, "2026-11-03"),
         (10, 31, "Cluj-Napoca 400001"), (95, 31, "Due:"), (125, 31, "2026-12-03"),
         (10, 55, "Amount due EUR 2,150.00")],
        ["BB-2291", "2026-11-03", "2026-12-03", "400001", "2,150.00"],
        size=10,
    ),
    Specimen(
        "german",
        [(10, 15, "Muster GmbH  RECHNUNG"), (10, 28, "Rechnungsnummer RE-2026-0412"),
         (10, 37, "Rechnungsdatum 14.10.2026"), (10, 46, "Nettobetrag 1.234,56 EUR"),
         (10, 55, "MwSt 19% 234,57 EUR"), (10, 64, "Gesamtbetrag 1.469,13 EUR"),
         (10, 78, "USt-IdNr. DE136695976")],
        ["RE-2026-0412", "14.10.2026", "1.234,56", "234,57", "1.469,13", "DE136695976"],
    ),
    Specimen(
        "boxed",
        [(10, 15, "HOOLI XYZ  INVOICE"), (10, 32, "Order no."), (45, 32, "PO-88213"),
         (10, 50, "Total"), (45, 50, "812.40"), (10, 68, "Reference"), (45, 68, "RF-3305")],
        ["PO-88213", "812.40", "RF-3305"],
        boxes=[(42, 26, 32, 8.5)],
        dotted=[(42, 44, 32, 8.5), (42, 62, 32, 8.5)],
    ),
    Specimen(
        "iban",
        [(10, 15, "VANDELAY IMPORTS  INVOICE"), (10, 30, "Invoice No. VI-9012"), (10, 60, "IBAN"),
         (22, 60, "NL91 ABNA 0417 1643 00"), (10, 68, "BIC ABNANL2A")],
        ["VI-9012", "NL91 ABNA 0417 1643 00"],
        size=8,
        dpi=110,
        damage=blurred_small,
    ),
    Specimen(
        "table",  # a phone photo of an item table: quantity and unit columns close together
        [(10, 12, "ACME SUPPLY  DELIVERY NOTE D-5521"), (10, 24, "Item"), (56, 24, "Qty"), (68, 24, "Unit"),
         (84, 24, "Price"), (104, 24, "Amount")]
        + [(float(x), 32.0 + 7 * row, cell) for row, cells in enumerate(ITEM_ROWS)
           for x, cell in zip((10, 58, 69, 84, 104), cells, strict=True)],
        ["D-5521", "250", "40", "6", "1.5", "12", "30.00", "74.00", "74.40", "57.00", "25.20"],
        size=10,
        damage=photographed,
    ),
    Specimen(
        "narrow-columns",  # a two-column header whose columns are close: label and value glued before
        [(10, 15, "Bluebird Software SRL"), (58, 15, "Invoice number:"), (88, 15, "BB-2291"),
         (10, 22, "Strada Lunga 12"), (58, 22, "Date:"), (88, 22, "2026-11-03"),
         (10, 29, "Cluj-Napoca 400001"), (58, 29, "Due:"), (88, 29, "2026-12-03")],
        ["BB-2291", "2026-11-03", "2026-12-03", "400001"],
        size=10,
        damage=photographed,
    ),
]  # fmt: skip


def a4_invoice(dpi: int = 200) -> Specimen:
    """A whole A4 invoice page as a PNG screenshot or export would hold it (the bench's PNG kind)."""
    draw: Draw = [
        (20, 25, "Bluth Company"),
        (150, 25, "INVOICE"),
        (20, 32, "1 Harbor Road, Newport Beach, CA 92660"),
        (120, 45, "Invoice No."),
        (160, 45, "BC-7731"),
        (120, 52, "Date"),
        (160, 52, "2026-09-30"),
        (120, 59, "Terms"),
        (160, 59, "Net 30"),
        (20, 80, "Bill to"),
        (20, 87, "Acme Corp"),
        (20, 94, "500 Commerce Street, Springfield, IL 62704"),
        (20, 115, "Description"),
        (120, 115, "Qty"),
        (140, 115, "Price"),
        (170, 115, "Amount"),
    ]
    rows = [
        ("Frozen bananas, case of 40", 12, "31.25"),
        ("Stair car rental, per day", 3, "410.00"),
        ("Model homes brochure print", 500, "0.85"),
        ("Delivery", 1, "45.00"),
    ]
    total = 0.0
    for i, (what, qty, price) in enumerate(rows):
        amount = qty * float(price)
        total += amount
        y = 125 + 8 * i
        draw += [(20, y, what), (120, y, str(qty)), (140, y, price), (170, y, f"{amount:,.2f}")]
    draw += [
        (120, 175, "Subtotal"),
        (170, 175, f"{total:,.2f}"),
        (120, 183, "Sales tax 8%"),
        (170, 183, f"{total * 0.08:,.2f}"),
        (120, 193, "TOTAL DUE"),
        (170, 193, f"{total * 1.08:,.2f}"),
        (20, 230, "Pay to IBAN DE89 3704 0044 0532 0130 00, BIC COBADEFFXXX"),
        (20, 240, "Questions? ar@bluth.example"),
    ]
    expected = ["BC-7731", "2026-09-30", f"{total * 1.08:,.2f}", "DE89 3704 0044 0532 0130 00"]
    return Specimen("a4-invoice", draw, expected, size=11, dpi=dpi, page=(210.0, 297.0))
