"""The source documents an approval's values came from, for the approver to look at.

A file is read exactly as the run's file_reader read it (``SandboxFiles``, confined to the sandbox,
the same parser), so "line 44" is the line the run cited. PDF pages are rendered to an image
(pypdfium2), scans and photos are shown as the image with tesseract's confidence, e-mails and text
as their text with line numbers and the cited line marked.
"""

from __future__ import annotations

import io
from pathlib import Path

from pydantic import BaseModel, Field

from taskcrew.config import files_root
from taskcrew.tools.documents.models import FileAccessError, PageText, page_block
from taskcrew.tools.documents.reader import SandboxFiles

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".tif": "image/tiff"}
IMAGE_TYPES[".tiff"] = "image/tiff"
MAX_PAGES = 20


class DocLine(BaseModel):
    number: int
    text: str
    hit: bool = False


class DocPage(BaseModel):
    number: int
    ocr: bool = False
    confidence: float | None = None


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
        try:
            path = self.files.resolve(name)
        except FileAccessError as exc:
            return str(exc)
        return path if path.is_file() else f"{name} is not a file in the company's files."

    def view(
        self, name: str, line: int | None = None, page: int | None = None, find: str = ""
    ) -> DocView | str:
        """The document with the cited line marked (or, when the run cited the file but no line,
        the first line holding ``find``), or a sentence saying why it cannot be shown."""
        try:
            content = self.files.read(name)
        except FileAccessError as exc:
            return str(exc)
        text = content.full_text()
        if line is None and _norm(find):
            line = next((n for n, t in enumerate(text.splitlines(), 1) if _norm(find) in _norm(t)), None)
        lines = [DocLine(number=n, text=t, hit=n == line) for n, t in enumerate(text.splitlines(), 1)]
        pages = [DocPage(number=p.number, ocr=p.ocr, confidence=p.ocr_confidence) for p in content.pages]
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
            focus_line=line if line and line <= len(lines) else None,
            focus_page=page,
        )

    def pdf_page_png(self, name: str, page: int) -> bytes | None:
        """One PDF page rendered to PNG (None: not a PDF of the sandbox, or no such page)."""
        import pypdfium2 as pdfium

        path = self._path(name)
        if isinstance(path, str) or path.suffix.lower() != ".pdf":
            return None
        pdf = pdfium.PdfDocument(str(path))
        try:
            if not 1 <= page <= min(len(pdf), MAX_PAGES):
                return None
            image = pdf[page - 1].render(scale=1.4).to_pil()
            out = io.BytesIO()
            image.save(out, format="PNG")
            return out.getvalue()
        finally:
            pdf.close()

    def image(self, name: str) -> tuple[bytes, str] | None:
        """A scan or photo of the sandbox, as stored (None: not an image file of it)."""
        path = self._path(name)
        if isinstance(path, str) or path.suffix.lower() not in IMAGE_TYPES:
            return None
        return path.read_bytes(), IMAGE_TYPES[path.suffix.lower()]


def _norm(text: str) -> str:
    """Spaces and thousands commas do not matter when looking for a value ("1,284.50" ~ "1284.50")."""
    return "".join(text.split()).replace(",", "").casefold()


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
