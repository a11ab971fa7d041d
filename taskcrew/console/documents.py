"""The source documents an approval's values came from, for the approver to look at.

A file is read exactly as the run's file_reader read it (``SandboxFiles``, confined to the sandbox,
the same parser), so "line 44" is the line the run cited. PDF pages are rendered to an image
(pypdfium2), scans and photos are shown as the image with tesseract's confidence, e-mails and text
as their text with line numbers and the cited line marked.

Each file is checked against the SHA-256 sealed with the approval when it was parked
(``Approval.files_sha256``) by one rule, ``seal_of``: the digest of the file's bytes as they are
now, read with the reader's own checks (``SandboxFiles.plain_bytes``). The source page, the
approval page's note by each source link (``Documents.seal``) and the picture route all apply it.
The text shown is always that of the very bytes checked (``FileContent.sha256``): text the
reader's parse cache kept (it knows a file by size and mtime) is read anew from those bytes when
it is another's, so a file swapped under the same size and mtime after its text was viewed is
neither vouched for nor shown with stale text. A file changed since is said to be changed, no line
of it is marked and no picture of it is drawn. A scan, or a PDF page, is served or drawn from the
very bytes whose digest was checked against the seal (one read): the picture route sends
``withheld_png`` in its place (``NotAsSealed``) when they are not the sealed ones. A PDF page is
drawn at most ``MAX_PIXELS`` large (a huge page is drawn smaller, and the page says so).
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskcrew.config import files_root
from taskcrew.jobs.human import same_file, source_file
from taskcrew.tools.documents.models import FileAccessError, PageText, page_block
from taskcrew.tools.documents.provenance import shows_value
from taskcrew.tools.documents.reader import SandboxFiles

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".tif": "image/tiff"}
IMAGE_TYPES[".tiff"] = "image/tiff"
MAX_PAGES = 20
SCALE = 1.4  # a PDF page's pixels per point, as drawn for the approver
MAX_PIXELS = 4_000_000  # at most this many pixels per drawn page: a larger page is drawn smaller
Seal = Literal["same", "changed", "unsealed"]


class NotAsSealed(Exception):
    """A file's bytes are not the ones sealed with the approval (or it could not be read when it was
    parked): no picture of them is shown as the file the run read."""


class DocLine(BaseModel):
    number: int
    text: str
    hit: bool = False


class DocPage(BaseModel):
    number: int
    ocr: bool = False
    confidence: float | None = None
    size: tuple[int, int] | None = None  # a PDF page drawn smaller than usual: its size in points


class DocView(BaseModel):
    path: str
    kind: str
    lines: list[DocLine] = Field(default_factory=list)
    pages: list[DocPage] = Field(default_factory=list)
    pdf: bool = False
    image: bool = False
    ocr: bool = False
    focus_line: int | None = None
    focus_page: int | None = None
    # whether the marked line's text shows the value it is marked for (``shows_value``; None: no
    # line marked, or no value to look for)
    focus_shows: bool | None = None
    seal: Seal = "unsealed"  # the file's bytes now against the SHA-256 sealed with the approval


class Documents:
    """The sandbox's files, read-only, as the approver's viewer reads them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: SandboxFiles | None = None

    @property
    def files(self) -> SandboxFiles:
        if self._files is None:  # the folder the run's file tools saw, so cited paths match
            self._files = SandboxFiles(files_root(self.root))
        return self._files

    def _path(self, name: str) -> Path | str:
        return source_file(self.files, name)  # the reader's own check, for every route

    def seal(self, name: str, sealed: str | None) -> Seal:
        """Whether a cited file is still the one sealed with the approval (``seal_of`` on its bytes
        as they are now): what the approval page says by each link to it, by the source page's
        rule."""
        return seal_of(sealed, self.files.digest_now(name))

    def view(
        self,
        name: str,
        line: int | None = None,
        page: int | None = None,
        find: str = "",
        sealed: str | None = None,
    ) -> DocView | str:
        """The document with the cited line marked (or, when the run cited the file but no line,
        the first line showing ``find``), or a sentence saying why it cannot be shown. ``sealed``:
        the SHA-256 sealed with the approval ("" : not readable then; None: none was sealed). The
        text shown is that of the file's bytes as they are now, and those bytes are what is checked
        against ``sealed`` (``seal_of``); a file whose bytes differ has no line marked."""
        path = self._path(name)
        if isinstance(path, str):
            return path
        try:
            content = self.files.read(name)
            data = self.files.plain_bytes(name)  # the file now, with the reader's own checks
            digest = _digest(data)
            if content.sha256 != digest:  # the cache's text (or a read just before) is another's
                content = self.files.content_of(data, content.path, content.kind)
        except FileAccessError as exc:
            return str(exc)
        seal = seal_of(sealed, digest)  # the bytes whose text is shown, as they are on disk now
        if seal == "changed":
            line, page, find = None, None, ""
        text = content.full_text()
        lines = [DocLine(number=n, text=t) for n, t in enumerate(text.splitlines(), 1)]
        if line is None and find.strip():
            line = next((shown.number for shown in lines if shows_value(shown.text, find)), None)
        focus = line if line and line <= len(lines) else None
        if focus:
            lines[focus - 1].hit = True
        pages = [DocPage(number=p.number, ocr=p.ocr, confidence=p.ocr_confidence) for p in content.pages]
        if content.kind == "pdf":
            for shown, size in zip(pages, _page_sizes(data), strict=False):
                shown.size = size if _scale(*size) < SCALE else None
        if line is not None and page is None and len(content.pages) > 1:
            page = _page_of_line(content.pages, line)
        return DocView(
            path=content.path,
            kind=content.kind,
            lines=lines,
            pages=pages[:MAX_PAGES],
            pdf=content.kind == "pdf",
            image=content.kind == "image",
            ocr=content.ocr,
            focus_line=focus,
            focus_page=page,
            focus_shows=shows_value(lines[focus - 1].text, find) if focus and find.strip() else None,
            seal=seal,
        )

    def pdf_page_png(self, name: str, page: int, sealed: str | None = None) -> bytes | None:
        """One PDF page rendered to PNG, at most ``MAX_PIXELS`` large, drawn from the very bytes
        checked against ``sealed`` (as ``view``'s; None: none was sealed). None: not a PDF of the
        sandbox, or no such page; ``NotAsSealed``: the file is not the one sealed."""
        import pypdfium2 as pdfium

        read = self._sealed_bytes(name, sealed, (".pdf",))
        if read is None:
            return None
        try:
            pdf = pdfium.PdfDocument(read[0])  # the bytes hashed, never the file read again
        except pdfium.PdfiumError:
            return None
        try:
            if not 1 <= page <= min(len(pdf), MAX_PAGES):
                return None
            drawn = pdf[page - 1]
            image = drawn.render(scale=_scale(*drawn.get_size())).to_pil()
            out = io.BytesIO()
            image.save(out, format="PNG")
            return out.getvalue()
        finally:
            pdf.close()

    def image(self, name: str, sealed: str | None = None) -> tuple[bytes, str] | None:
        """A scan or photo of the sandbox, as stored: the very bytes checked against ``sealed`` (as
        ``view``'s). None: not an image file of it; ``NotAsSealed``: the file is not the one sealed."""
        read = self._sealed_bytes(name, sealed, tuple(IMAGE_TYPES))
        return None if read is None else (read[0], IMAGE_TYPES[read[1]])

    def _sealed_bytes(
        self, name: str, sealed: str | None, suffixes: tuple[str, ...]
    ) -> tuple[bytes, str] | None:
        """A cited file's bytes, read once and checked against ``sealed`` ("": not readable when
        parked; None: none was sealed), and its suffix. None: not a file of the sandbox with one of
        ``suffixes``, or unreadable; ``NotAsSealed``: the bytes are not the ones sealed."""
        path = self._path(name)
        suffix = "" if isinstance(path, str) else path.suffix.lower()  # the file's own, not the link's
        if suffix not in suffixes:
            return None
        try:
            data = self.files.plain_bytes(name)  # the reader's own checks, of the file as opened
        except FileAccessError:
            return None
        if seal_of(sealed, _digest(data)) == "changed":
            raise NotAsSealed(name)
        return data, suffix


def seal_of(sealed: str | None, digest: str) -> Seal:
    """A cited file's SHA-256 as it is now ("": unreadable; ``SandboxFiles.digest_now``) against the
    one sealed with the approval ("": not readable when parked; None: the approval was parked
    before cited files were sealed): the one rule of the source page, its pictures and the approval
    page's notes."""
    if sealed is None:
        return "unsealed"
    return "same" if same_file(sealed, digest) else "changed"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def withheld_png() -> bytes:
    """What the picture route sends in place of a scan or PDF page whose file is not the one sealed
    with the approval: a picture that says so, where the approver looks for the document."""
    from PIL import Image, ImageDraw, ImageFont

    lines = (
        "Not shown: this file has changed since the approval was parked.",
        "Its bytes are not the ones sealed with the approval (SHA-256),",
        "so this is not the document the run read. Do not decide from it.",
    )
    font = ImageFont.load_default(size=22)
    image = Image.new("RGB", (900, 170), (255, 240, 240))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 899, 169), outline=(180, 0, 0), width=6)
    for number, line in enumerate(lines):
        draw.text((28, 28 + 40 * number), line, fill=(150, 0, 0), font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _scale(width: float, height: float) -> float:
    """Pixels per point for a page: ``SCALE``, or less so that it has at most ``MAX_PIXELS``."""
    return min(SCALE, math.sqrt(MAX_PIXELS / max(width * height, 1.0)))


def _page_sizes(data: bytes) -> list[tuple[int, int]]:
    """The size in points of a PDF's first pages (none when pdfium cannot open it)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return []
    try:
        sizes = [pdf.get_page_size(i) for i in range(min(len(pdf), MAX_PAGES))]
        return [(round(w), round(h)) for w, h in sizes]
    finally:
        pdf.close()


def _page_of_line(pages: list[PageText], line: int) -> int | None:
    """Which page of a multi-page text holds ``line`` (pages_text: a marker line before each page's
    text, a blank line between pages)."""
    start = 1
    for page in pages:
        size = 1 + len(page_block(page).splitlines())
        if line < start + size:
            return page.number
        start += size + 1
    return None
