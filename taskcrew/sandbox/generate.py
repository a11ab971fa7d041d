"""Generate the sandbox inbox from its data: ``documents.yaml`` (the facts) + ``inbox_source.yaml``.

    uv run python -m taskcrew.sandbox.generate            # rewrite taskcrew/sandbox/inbox/
    uv run python -m taskcrew.sandbox.generate --check    # exit 1 if the committed files differ
    uv run python -m taskcrew.sandbox.generate --out DIR  # write somewhere else

The invoice facts (number, dates, terms, amounts, the total as printed) are taken from the ground
truth and rendered into the PDFs, so the documents cannot drift from ``documents.yaml``; the layout,
line items and e-mail text live in ``inbox_source.yaml``. Everything is deterministic: fixed PDF
creation dates, Message-IDs and MIME boundaries, a seeded noise pattern for the scan. Re-running
produces identical bytes.

Needs fpdf2 and Pillow (dev dependencies); the rest of taskcrew never imports this module.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import random
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, time
from decimal import Decimal
from email import charset as email_charset
from email.charset import Charset
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.mime.application import MIMEApplication
from email.mime.message import MIMEMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import format_datetime, formataddr, parseaddr
from pathlib import Path
from typing import Any, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from taskcrew.sandbox.ground_truth import SANDBOX_DIR, Document, GroundTruth, load_ground_truth
from taskcrew.tools.ap import parse_amount

DEFAULT_SOURCE = SANDBOX_DIR / "inbox_source.yaml"

# ------------------------------------------------------------------------------------ the data


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TableSpec(_Strict):
    columns: list[str]
    widths: list[float] = Field(description="column widths in mm (they should add up to 180)")
    align: str = Field(description="one letter per column: L, C or R")
    rows: list[str] = Field(description="one row per line, cells separated by ' | '")

    @model_validator(mode="after")
    def _check(self) -> TableSpec:
        n = len(self.columns)
        if len(self.widths) != n or len(self.align) != n:
            raise ValueError(f"table: {n} columns but {len(self.widths)} widths / {len(self.align)} aligns")
        for row in self.rows:
            if len(row.split(" | ")) != n:
                raise ValueError(f"table row has not {n} cells: {row!r}")
        return self

    def cells(self) -> list[list[str]]:
        return [[c.strip() for c in row.split(" | ")] for row in self.rows]


class ScanSpec(_Strict):
    seed: int
    angle: float = Field(description="rotation in degrees, a crooked page on the scanner glass")
    noise: int = Field(default=2500, description="number of dust specks")
    format: Literal["pdf", "jpeg", "png"] = Field(
        default="pdf",
        description="pdf: the image in a PDF page (a scanner); jpeg/png: the image file (a photo)",
    )


class PdfSpec(_Strict):
    facts: str | None = Field(default=None, description="invoice number in documents.yaml to render")
    created: datetime | None = None
    producer: str
    creator: str | None = None
    font: Literal["Helvetica", "Times", "Courier"] = "Helvetica"
    accent: tuple[int, int, int] = (40, 40, 40)
    amounts: Literal["us", "european", "indian"] = "us"
    title: str
    seller: list[str]
    meta: list[tuple[str, str]] = []
    bill_to_label: str = "Bill to"
    bill_to: list[str] = []
    table: TableSpec | None = None
    totals: list[tuple[str, str]] = []
    paragraphs: list[str] = []
    footer: list[str] = []
    scan: ScanSpec | None = None
    image_band: tuple[float, float] | None = Field(
        default=None,
        description="top and bottom (mm) of a band printed as a picture (no text layer) on a text page",
    )
    check_sum: bool = Field(default=True, description="line amounts must add up to the subtotal")


class TruncatedPdfSpec(_Strict):
    truncate: str = Field(description="id of the PDF to cut short")
    keep: float = Field(gt=0, lt=1, description="fraction of the bytes kept")


class AttachmentSpec(_Strict):
    filename: str
    pdf: str | None = None
    forward: str | None = Field(default=None, description="an inbox .eml attached as message/rfc822")
    content_type: Literal["application/pdf", "application/octet-stream"] = "application/pdf"

    @model_validator(mode="after")
    def _one(self) -> AttachmentSpec:
        if (self.pdf is None) == (self.forward is None):
            raise ValueError(f"attachment {self.filename}: give exactly one of pdf / forward")
        return self


class EmailSpec(_Strict):
    sender: str = Field(alias="from")
    to: list[str]
    cc: list[str] = []
    reply_to: str | None = None
    subject: str
    message_id: str
    in_reply_to: str | None = None
    references: str | None = None
    mailer: str | None = None
    headers: dict[str, str] = {}
    charset: Literal["utf-8", "iso-8859-1", "us-ascii"] = "utf-8"
    encoding: Literal["quoted-printable", "base64", "7bit"] = "quoted-printable"
    text: str | None = None
    html: str | None = None
    attachments: list[AttachmentSpec] = []

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _body(self) -> EmailSpec:
        if self.text is None and self.html is None:
            raise ValueError(f"{self.subject}: an e-mail needs a text or an html body")
        return self


class FileSpec(_Strict):
    email: EmailSpec | None = None
    text: str | None = None
    pdf: str | None = None

    @model_validator(mode="after")
    def _one(self) -> FileSpec:
        if sum(x is not None for x in (self.email, self.text, self.pdf)) != 1:
            raise ValueError("a file is exactly one of: email, text, pdf")
        return self


class InboxSource(_Strict):
    pdfs: dict[str, PdfSpec | TruncatedPdfSpec]
    files: dict[str, FileSpec]


def load_source(path: Path = DEFAULT_SOURCE) -> InboxSource:
    return InboxSource.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


# ----------------------------------------------------------------------------- amount printing


def format_amount(value: Decimal, style: str) -> str:
    """Decimal('1284.50') → '1,284.50' (us) / '1.284,50' (european) / '1,28,450.00' (indian)."""
    sign = "-" if value < 0 else ""
    whole, frac = f"{abs(value):.2f}".split(".")
    if style == "indian" and len(whole) > 3:
        head, tail = whole[:-3], whole[-3:]
        groups: list[str] = []
        while len(head) > 2:
            groups.insert(0, head[-2:])
            head = head[:-2]
        grouped = ",".join([head, *groups, tail])
    else:
        grouped = f"{int(whole):,}"
    if style == "european":
        return sign + grouped.replace(",", ".") + "," + frac
    return f"{sign}{grouped}.{frac}"


def _facts_values(doc: Document, style: str) -> dict[str, str]:
    assert doc.subtotal is not None and doc.tax is not None
    return {
        "number": doc.number or "",
        "invoice_date": doc.invoice_date_as_printed or "",
        "due_date": doc.due_date_as_printed or "",
        "terms": doc.terms or "",
        "subtotal": format_amount(doc.subtotal, style),
        "tax": format_amount(doc.tax, style),
        "tax_label": doc.tax_label or "",
        "total": doc.total_as_printed or "",
        "currency": doc.currency or "",
        "nb": "{nb}",
    }


def fill_pdf_spec(spec: PdfSpec, doc: Document | None) -> PdfSpec:
    """Substitute the invoice facts into the spec's texts and check the result is consistent."""
    if doc is None:
        return spec
    values = _facts_values(doc, spec.amounts)

    def fill(text: str) -> str:
        return text.format_map(values)

    table = spec.table
    filled = spec.model_copy(
        update={
            "title": fill(spec.title),
            "meta": [(fill(a), fill(b)) for a, b in spec.meta],
            "totals": [(fill(a), fill(b)) for a, b in spec.totals],
            "paragraphs": [fill(p) for p in spec.paragraphs],
            "footer": [fill(p) for p in spec.footer],
            "table": table.model_copy(update={"rows": [fill(r) for r in table.rows]}) if table else None,
        }
    )
    printed = "\n".join(_all_texts(filled))
    wanted = [
        doc.number,
        doc.invoice_date_as_printed,
        doc.total_as_printed,
        doc.terms,
        doc.due_date_as_printed,
    ]
    for value in wanted:
        if value and value not in printed:
            raise ValueError(f"{doc.number}: the layout does not print {value!r}")
    if spec.check_sum and filled.table is not None:
        amounts = [parse_amount(row[-1]).value for row in filled.table.cells()]
        if sum(amounts) != doc.subtotal:
            raise ValueError(f"{doc.number}: line items add up to {sum(amounts)}, not {doc.subtotal}")
    return filled


def _all_texts(spec: PdfSpec) -> Iterator[str]:
    yield spec.title
    yield from spec.seller
    for label, value in [*spec.meta, *spec.totals]:
        yield f"{label} {value}"
    yield from spec.bill_to
    if spec.table:
        yield from spec.table.rows
    yield from spec.paragraphs
    yield from spec.footer


# ------------------------------------------------------------------------------ PDF rendering

Align = Literal["L", "C", "R"]


class Canvas(Protocol):
    """What the page layout draws on: a real PDF text layer, or pixels of a scanned page."""

    def text(
        self, x: float, y: float, w: float, s: str, size: float, bold: bool = False, align: Align = "L"
    ) -> None: ...

    def paragraph(self, x: float, y: float, w: float, s: str, size: float) -> float: ...

    def hline(self, x1: float, x2: float, y: float) -> None: ...

    def band(self, x: float, y: float, w: float, h: float) -> None: ...

    def new_page(self) -> None: ...


PAGE_BOTTOM = 268.0


def layout(spec: PdfSpec, c: Canvas) -> None:
    """Draw one business document (invoice, quote, statement …) in A4 millimetres."""
    c.text(15, 15, 100, spec.seller[0], 15, bold=True)
    y = 22.0
    for line in spec.seller[1:]:
        c.text(15, y, 100, line, 8.5)
        y += 4.2
    c.text(110, 15, 85, spec.title, 19, bold=True, align="R")
    my = 27.0
    for label, value in spec.meta:
        c.text(110, my, 38, label, 9)
        c.text(148, my, 47, value, 9, bold=True, align="R")
        my += 5
    y = max(y, my) + 6
    if spec.bill_to:
        c.text(15, y, 80, spec.bill_to_label, 9, bold=True)
        y += 5
        for line in spec.bill_to:
            c.text(15, y, 80, line, 9)
            y += 4.4
        y += 5
    if spec.table:
        y = _table(spec.table, c, y, spec)
    if spec.totals:
        y += 2
        for i, (label, value) in enumerate(spec.totals):
            last = i == len(spec.totals) - 1
            if last:
                c.hline(110, 195, y)
                y += 1.5
            c.text(110, y, 50, label, 10 if last else 9, bold=last)
            c.text(160, y, 35, value, 10 if last else 9, bold=last, align="R")
            y += 6 if last else 5
    y += 4
    for text in spec.paragraphs:
        if y > PAGE_BOTTOM - 10:
            c.new_page()
            y = 20
        y = c.paragraph(15, y, 180, text, 8.5) + 2
    fy = 280.0
    for line in spec.footer:
        c.text(15, fy, 180, line, 7, align="C")
        fy += 3.5


def _table(table: TableSpec, c: Canvas, y: float, spec: PdfSpec) -> float:
    def header(y: float) -> float:
        c.band(15, y - 1, 180, 6.5)
        x = 15.0
        for col, w, a in zip(table.columns, table.widths, table.align, strict=True):
            c.text(x + 1, y, w - 2, col, 8.5, bold=True, align=a)  # type: ignore[arg-type]
            x += w
        return y + 7.5

    y = header(y)
    for row in table.cells():
        if y > PAGE_BOTTOM:
            c.new_page()
            y = header(20)
        x = 15.0
        for cell, w, a in zip(row, table.widths, table.align, strict=True):
            c.text(x + 1, y, w - 2, cell, 8.5, align=a)  # type: ignore[arg-type]
            x += w
        y += 5.2
    c.hline(15, 195, y)
    return y + 3


class PdfCanvas:
    """A real text layer with fpdf2's core fonts (cp1252: €, ä, ß work; ₹ does not)."""

    def __init__(self, spec: PdfSpec, created: datetime) -> None:
        from fpdf import FPDF

        spec_font = spec.font
        footer_lines = spec.footer

        class _Doc(FPDF):
            def footer(self) -> None:  # page number under the spec's footer lines
                if footer_lines:
                    self.set_font(spec_font, "", 7)
                    self.set_xy(15, 289)
                    self.cell(180, 3.5, f"Page {self.page_no()}/{{nb}}", align="R")

        self.pdf = _Doc(orientation="P", unit="mm", format="A4")
        self.pdf.core_fonts_encoding = "windows-1252"
        self.pdf.set_creation_date(created)
        self.pdf.set_producer(spec.producer)
        if spec.creator:
            self.pdf.set_creator(spec.creator)
        self.pdf.set_auto_page_break(False)
        self.pdf.set_margins(15, 15, 15)
        self.font = spec.font
        self.accent = spec.accent
        self.footer = spec.footer
        self.spec = spec
        self.pdf.add_page()

    def text(
        self, x: float, y: float, w: float, s: str, size: float, bold: bool = False, align: Align = "L"
    ) -> None:
        self.pdf.set_font(self.font, "B" if bold else "", size)
        self.pdf.set_xy(x, y)
        self.pdf.cell(w, size * 0.45, s, align=align)

    def paragraph(self, x: float, y: float, w: float, s: str, size: float) -> float:
        self.pdf.set_font(self.font, "", size)
        self.pdf.set_xy(x, y)
        self.pdf.multi_cell(w, size * 0.5, s)
        return float(self.pdf.get_y())

    def hline(self, x1: float, x2: float, y: float) -> None:
        self.pdf.set_draw_color(*self.accent)
        self.pdf.line(x1, y, x2, y)

    def band(self, x: float, y: float, w: float, h: float) -> None:
        r, g, b = (int(255 - (255 - v) * 0.18) for v in self.accent)
        self.pdf.set_fill_color(r, g, b)
        self.pdf.rect(x, y, w, h, style="F")

    def new_page(self) -> None:
        self._draw_footer()
        self.pdf.add_page()

    def _draw_footer(self) -> None:
        fy = 280.0
        for line in self.footer:
            self.text(15, fy, 180, line, 7, align="C")
            fy += 3.5

    def output(self) -> bytes:
        return bytes(self.pdf.output())


class ScanCanvas:
    """Pixels only: the page as a scanner would deliver it. No text layer survives."""

    DPI = 150

    def __init__(self) -> None:
        from PIL import Image, ImageDraw

        self.scale = self.DPI / 25.4
        self.image = Image.new("L", (round(210 * self.scale), round(297 * self.scale)), 250)
        self.draw = ImageDraw.Draw(self.image)

    def _font(self, size: float) -> Any:
        from PIL import ImageFont

        return ImageFont.load_default(size=round(size * self.DPI / 72))

    def text(
        self, x: float, y: float, w: float, s: str, size: float, bold: bool = False, align: Align = "L"
    ) -> None:
        s = s.replace("{nb}", "1")
        font = self._font(size)
        px, py = x * self.scale, y * self.scale
        width = self.draw.textlength(s, font=font)
        if align == "R":
            px += w * self.scale - width
        elif align == "C":
            px += (w * self.scale - width) / 2
        for dx in (0, 1) if bold else (0,):
            self.draw.text((px + dx, py), s, fill=25, font=font)

    def paragraph(self, x: float, y: float, w: float, s: str, size: float) -> float:
        font = self._font(size)
        line = ""
        for word in s.split():
            trial = f"{line} {word}".strip()
            if self.draw.textlength(trial, font=font) > w * self.scale and line:
                self.text(x, y, w, line, size)
                y += size * 0.5
                line = word
            else:
                line = trial
        if line:
            self.text(x, y, w, line, size)
            y += size * 0.5
        return y

    def hline(self, x1: float, x2: float, y: float) -> None:
        self.draw.line(
            [(x1 * self.scale, y * self.scale), (x2 * self.scale, y * self.scale)], fill=60, width=2
        )

    def band(self, x: float, y: float, w: float, h: float) -> None:
        s = self.scale
        self.draw.rectangle([x * s, y * s, (x + w) * s, (y + h) * s], fill=215)

    def new_page(self) -> None:
        raise ValueError("a scanned document must fit on one page")

    def scanned(self, scan: ScanSpec) -> bytes:
        """Rotate, add dust and grain, blur slightly, and JPEG-compress like a cheap office scanner."""
        from PIL import Image, ImageFilter

        rng = random.Random(scan.seed)
        img = self.image.rotate(scan.angle, resample=Image.Resampling.BICUBIC, fillcolor=250)
        px = img.load()
        assert px is not None
        width, height = img.size
        for _ in range(scan.noise):
            x, y = rng.randrange(width), rng.randrange(height)
            px[x, y] = rng.choice((90, 120, 160))
        img = img.filter(ImageFilter.GaussianBlur(0.7))
        out = io.BytesIO()
        if scan.format == "png":
            img.save(out, format="PNG", optimize=False)
        else:
            img.save(out, format="JPEG", quality=55, optimize=False, progressive=False)
        return out.getvalue()


def render_pdf(spec: PdfSpec, doc: Document | None, created: datetime) -> bytes:
    filled = fill_pdf_spec(spec, doc)
    if filled.scan is not None and filled.scan.format != "pdf":
        scanner = ScanCanvas()
        layout(filled, scanner)
        return scanner.scanned(filled.scan)
    if filled.scan is not None:
        return _scanned_pdf(filled, filled.scan, created)
    canvas = PdfCanvas(filled, created)
    if filled.image_band is None:
        layout(filled, canvas)
        return canvas.output()
    return _mixed_pdf(filled, canvas, filled.image_band)


class _Band:
    """Passes on only what is drawn inside (or only what is outside) a horizontal band."""

    def __init__(self, canvas: Canvas, top: float, bottom: float, *, inside: bool) -> None:
        self.canvas, self.top, self.bottom, self.inside = canvas, top, bottom, inside

    def _keep(self, y: float) -> bool:
        return (self.top <= y < self.bottom) == self.inside

    def text(
        self, x: float, y: float, w: float, s: str, size: float, bold: bool = False, align: Align = "L"
    ) -> None:
        if self._keep(y):
            self.canvas.text(x, y, w, s, size, bold, align)

    def paragraph(self, x: float, y: float, w: float, s: str, size: float) -> float:
        return self.canvas.paragraph(x, y, w, s, size) if self._keep(y) else y + size * 0.5

    def hline(self, x1: float, x2: float, y: float) -> None:
        if self._keep(y):
            self.canvas.hline(x1, x2, y)

    def band(self, x: float, y: float, w: float, h: float) -> None:
        if self._keep(y):
            self.canvas.band(x, y, w, h)

    def new_page(self) -> None:
        self.canvas.new_page()


def _mixed_pdf(spec: PdfSpec, canvas: PdfCanvas, band: tuple[float, float]) -> bytes:
    """A text page whose band (e.g. the letterhead with the invoice number) is a picture."""
    top, bottom = band
    layout(spec, _Band(canvas, top, bottom, inside=False))
    pixels = ScanCanvas()
    layout(spec, _Band(pixels, top, bottom, inside=True))
    scale = pixels.scale
    picture = pixels.image.crop((0, round(top * scale), pixels.image.width, round(bottom * scale)))
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=False)
    canvas.pdf.image(io.BytesIO(out.getvalue()), x=0, y=top, w=210, h=bottom - top)
    return canvas.output()


def _scanned_pdf(spec: PdfSpec, scan: ScanSpec, created: datetime) -> bytes:
    from fpdf import FPDF

    scanner = ScanCanvas()
    layout(spec, scanner)
    jpeg = scanner.scanned(scan)
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(created)
    pdf.set_producer(spec.producer)
    if spec.creator:
        pdf.set_creator(spec.creator)
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.image(io.BytesIO(jpeg), x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


# ----------------------------------------------------------------------------------- e-mail


def _charset(name: str, encoding: str) -> Charset:
    cs = Charset(name)
    cs.body_encoding = {  # type: ignore[assignment]  # typeshed says int, None means 7bit/8bit
        "quoted-printable": email_charset.QP,
        "base64": email_charset.BASE64,
        "7bit": None,
    }[encoding]
    return cs


def _address(value: str, charset: str) -> str:
    name, addr = parseaddr(value)
    if not addr:
        raise ValueError(f"not an e-mail address: {value!r}")
    header_charset = "utf-8" if charset == "us-ascii" else charset
    return formataddr((name, addr), charset=header_charset)


def _header_text(value: str, charset: str) -> str | Header:
    if value.isascii():
        return value
    return Header(value, "utf-8" if charset == "us-ascii" else charset)


class _Boundaries:
    def __init__(self, path: str) -> None:
        self.stem = hashlib.sha1(path.encode()).hexdigest()[:16].upper()
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"----=_NextPart_{self.n:03d}_{self.stem}"


class EmailBuilder:
    """Builds the inbox's e-mails (stdlib ``email``, compat32 for full control of the bytes)."""

    def __init__(self, source: InboxSource, truth: GroundTruth, pdfs: Mapping[str, bytes]) -> None:
        self.source = source
        self.truth = truth
        self.pdfs = pdfs

    def sent_at(self, path: str) -> datetime:
        docs = self.truth.for_path(path)
        if not docs or docs[0].sent_at is None:
            raise ValueError(f"{path}: documents.yaml gives no sent_at")
        return docs[0].sent_at

    def build(self, path: str) -> Message:
        spec = self.source.files[path].email
        if spec is None:
            raise ValueError(f"{path} is not an e-mail")
        bounds = _Boundaries(path)
        body = self._body(spec, bounds)
        if spec.attachments:
            outer: Message = MIMEMultipart("mixed", boundary=bounds.next())
            outer.attach(body)
            for att in spec.attachments:
                outer.attach(self._attachment(att))
        else:
            outer = body
        _strip_mime_version(outer, root=True)
        return self._with_headers(outer, spec, path)

    def _body(self, spec: EmailSpec, bounds: _Boundaries) -> Message:
        cs = _charset(spec.charset, spec.encoding)
        if spec.encoding == "7bit" and not ((spec.text or "") + (spec.html or "")).isascii():
            raise ValueError(f"{spec.subject}: a 7bit body must be ASCII")
        parts = []
        if spec.text is not None:
            parts.append(MIMEText(spec.text, "plain", cs))  # type: ignore[arg-type]
        if spec.html is not None:
            parts.append(MIMEText(spec.html, "html", cs))  # type: ignore[arg-type]
        if len(parts) == 1:
            return parts[0]
        alt = MIMEMultipart("alternative", boundary=bounds.next())
        for part in parts:
            alt.attach(part)
        return alt

    def _attachment(self, att: AttachmentSpec) -> Message:
        if att.forward is not None:
            inner = self.build(att.forward)
            part: Message = MIMEMessage(inner)
            part.add_header("Content-Disposition", "attachment", filename=att.filename)
            return part
        assert att.pdf is not None
        subtype = att.content_type.split("/")[1]
        part = MIMEApplication(self.pdfs[att.pdf], subtype, name=att.filename)
        part.add_header("Content-Disposition", "attachment", filename=att.filename)
        return part

    def _with_headers(self, msg: Message, spec: EmailSpec, path: str) -> Message:
        content_type = msg["Content-Type"]
        encoding = msg["Content-Transfer-Encoding"]
        for name in ("Content-Type", "MIME-Version", "Content-Transfer-Encoding"):
            del msg[name]
        msg["Date"] = format_datetime(self.sent_at(path))
        msg["From"] = _address(spec.sender, spec.charset)
        msg["To"] = ", ".join(_address(a, spec.charset) for a in spec.to)
        if spec.cc:
            msg["Cc"] = ", ".join(_address(a, spec.charset) for a in spec.cc)
        if spec.reply_to:
            msg["Reply-To"] = _address(spec.reply_to, spec.charset)
        msg["Subject"] = _header_text(spec.subject, spec.charset)  # type: ignore[assignment]
        msg["Message-ID"] = spec.message_id
        if spec.in_reply_to:
            msg["In-Reply-To"] = spec.in_reply_to
        if spec.references:
            msg["References"] = spec.references
        if spec.mailer:
            msg["X-Mailer"] = spec.mailer
        for name, value in spec.headers.items():
            msg[name] = value
        msg["MIME-Version"] = "1.0"
        msg["Content-Type"] = content_type
        if encoding:
            msg["Content-Transfer-Encoding"] = encoding
        return msg


def _strip_mime_version(part: Message, root: bool = False) -> None:
    """compat32 writes MIME-Version on every part; mailers write it once per message."""
    if not root:
        del part["MIME-Version"]
    if part.get_content_type() == "message/rfc822":
        return  # the forwarded message keeps its own headers
    if part.is_multipart():
        for sub in part.get_payload():
            if isinstance(sub, Message):
                _strip_mime_version(sub)


def email_bytes(msg: Message) -> bytes:
    out = io.BytesIO()
    BytesGenerator(out, mangle_from_=False, maxheaderlen=78).flatten(msg)
    return out.getvalue()


# --------------------------------------------------------------------------------- the inbox


def _created(spec: PdfSpec, doc: Document | None, fallback: datetime | None) -> datetime:
    if spec.created is not None:
        return spec.created
    if doc is not None and doc.invoice_date is not None:
        return datetime.combine(doc.invoice_date, time(9, 0), tzinfo=UTC)
    if fallback is not None:
        return fallback
    raise ValueError(f"PDF {spec.title!r}: give 'created' (no invoice date to derive it from)")


def render_pdfs(source: InboxSource, truth: GroundTruth) -> dict[str, bytes]:
    """Every PDF of the source by id."""
    out: dict[str, bytes] = {}
    plain = {k: v for k, v in source.pdfs.items() if isinstance(v, PdfSpec)}
    for pdf_id, spec in plain.items():
        doc = truth.by_number(spec.facts) if spec.facts else None
        out[pdf_id] = render_pdf(spec, doc, _created(spec, doc, None))
    for pdf_id, cut in source.pdfs.items():
        if isinstance(cut, TruncatedPdfSpec):
            whole = out[cut.truncate]
            out[pdf_id] = whole[: int(len(whole) * cut.keep)]
    return out


def build_inbox(truth: GroundTruth | None = None, source: InboxSource | None = None) -> dict[str, bytes]:
    """The inbox as {relative path: bytes}; checked against the ground truth's file list."""
    truth = truth or load_ground_truth()
    source = source or load_source()
    expected, given = set(truth.paths), set(source.files)
    if expected != given:
        raise ValueError(
            f"inbox_source.yaml and documents.yaml disagree: missing sources {sorted(expected - given)}, "
            f"files without ground truth {sorted(given - expected)}"
        )
    pdfs = render_pdfs(source, truth)
    emails = EmailBuilder(source, truth, pdfs)
    files: dict[str, bytes] = {}
    for path, spec in sorted(source.files.items()):
        if spec.email is not None:
            files[path] = email_bytes(emails.build(path))
            _check_attachments(path, spec.email, source, truth)
        elif spec.pdf is not None:
            files[path] = pdfs[spec.pdf]
        else:
            assert spec.text is not None
            files[path] = spec.text.encode("utf-8")
    return files


def _check_attachments(path: str, spec: EmailSpec, source: InboxSource, truth: GroundTruth) -> None:
    names = {a.filename for a in spec.attachments}
    for a in spec.attachments:
        inner = source.files[a.forward].email if a.forward else None
        if inner is not None:
            names |= {b.filename for b in inner.attachments}
    for doc in truth.for_path(path):
        if doc.attachment and doc.attachment not in names:
            raise ValueError(f"{path}: documents.yaml names attachment {doc.attachment!r}, not in the e-mail")


def write_inbox(out_dir: Path, files: Mapping[str, bytes]) -> list[str]:
    """Write the files; return paths already in out_dir that the inbox does not have (left alone)."""
    for rel, data in files.items():
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    present = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()}
    return sorted(present - set(files))


def diff_inbox(out_dir: Path, files: Mapping[str, bytes]) -> list[str]:
    """Paths whose committed bytes differ from a fresh generation (or are missing / extra)."""
    problems = []
    for rel, data in files.items():
        target = out_dir / rel
        if not target.is_file():
            problems.append(f"missing: {rel}")
        elif target.read_bytes() != data:
            problems.append(f"differs: {rel}")
    present = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()}
    problems += [f"extra: {p}" for p in sorted(present - set(files))]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: the inbox)")
    parser.add_argument("--check", action="store_true", help="compare with the files on disk")
    args = parser.parse_args(argv)
    truth = load_ground_truth()
    out_dir: Path = args.out or truth.inbox_dir
    files = build_inbox(truth)
    if args.check:
        problems = diff_inbox(out_dir, files)
        for line in problems:
            print(line)
        print("inbox is up to date" if not problems else f"{len(problems)} difference(s)")
        return 1 if problems else 0
    extra = write_inbox(out_dir, files)
    print(f"wrote {len(files)} files to {out_dir}")
    for rel in extra:
        print(f"note: {rel} is not part of the generated inbox (left in place)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
