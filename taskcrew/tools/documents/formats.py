"""Which parser reads which file: the one table to extend for a new format.

A new format is one module with a ``read(data, name) -> FileContent`` style function and one line in
:data:`EXTENSION_KINDS` and in :func:`parse_bytes`.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from taskcrew.tools.documents.models import FileContent, FileKind, Unreadable

EXTENSION_KINDS: dict[str, FileKind] = {
    ".pdf": "pdf",
    ".eml": "email",
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".csv": "csv",
    ".tsv": "csv",
    ".html": "html",
    ".htm": "html",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
    ".bmp": "image",
    ".gif": "image",
    ".webp": "image",
}
KNOWN = "PDF, .eml, text, markdown, CSV, HTML, images (PNG, JPG, TIFF)"


def file_kind(name: str) -> FileKind:
    return EXTENSION_KINDS.get(PurePosixPath(name).suffix.lower(), "other")


def parse_bytes(data: bytes, name: str, kind: FileKind, *, nested: bool = False) -> FileContent:
    """Parse a document's bytes in this process (the worker calls this under its limits).

    ``nested``: an attachment of a document being parsed (it shares the document's time budget).
    """
    from taskcrew.tools.documents import limits

    if not nested:
        limits.start_parse()
    content = FileContent(path=name, kind=kind, size=len(data))
    if kind == "pdf":
        from taskcrew.tools.documents.pdf import read_pdf_pages

        content.pages = read_pdf_pages(data, name)
    elif kind == "image":
        from taskcrew.tools.documents.images import read_image_pages

        content.pages = read_image_pages(data, name)
    elif kind == "email":
        from taskcrew.tools.documents.mail import read_email

        content.email = read_email(data, name)
    elif kind in ("text", "markdown", "csv", "html"):
        from taskcrew.tools.documents.html import html_to_text
        from taskcrew.tools.documents.text import decode_text
        from taskcrew.tools.documents.visibility import StylesTooComplex, own_text, visible_markdown

        text = decode_text(data, name)
        seen = {"html": html_to_text, "markdown": visible_markdown}.get(kind)  # what a person sees
        try:
            content.text = seen(text) if seen else own_text(text)  # never spelling a reader's mark
        except StylesTooComplex as exc:
            raise StylesTooComplex(f"{name}: {exc}") from None
    else:
        raise Unreadable(f"{name!r} is not a document type this reader understands ({KNOWN}); ask a human")
    return content
