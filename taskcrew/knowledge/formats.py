"""PDF and e-mail files as pieces that follow their structure (chunking.py sizes them).

PDF: page by page, split where the outline (bookmarks) starts a section, or without an outline
where a heading set in a larger font does (pdf_headings.py), each piece's heading path the
outline path then "page N"; the title from the document's metadata. E-mail: the body
under its subject, then each attachment under [subject, file name] with its own structure.
"""

from __future__ import annotations

import email
import email.policy
import io
import re
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from taskcrew.knowledge.chunking import (
    HTML_SUFFIXES,
    MARKDOWN_SUFFIXES,
    RST_SUFFIXES,
    ChunkingConfig,
    UnreadableFile,
    _paragraph_pieces,
    _Piece,
    split_markdown,
)
from taskcrew.knowledge.markup import html_to_markdown, pdf_outline, rst_to_markdown
from taskcrew.knowledge.pdf_headings import font_outline
from taskcrew.tools.documents.pdfseen import seen_pages
from taskcrew.tools.documents.visibility import StylesTooComplex, visible_markdown


# -- pdf -------------------------------------------------------------------------------------------
def pdf_pieces(data: bytes, prefix: list[str], config: ChunkingConfig) -> tuple[list[_Piece], str | None]:
    """Pages split where the PDF's outline (bookmarks) starts a section, or the headings its font
    sizes show when it has none: each piece's path is the heading path then "page N" (just "page N"
    when neither shows one); the title from the metadata, else a lone largest heading."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise UnreadableFile("the PDF is encrypted; save an unencrypted copy")
        outline = pdf_outline(reader)
        if outline:
            pages, heading_title = [page.extract_text() or "" for page in reader.pages], None
        else:  # no bookmarks: the headings its font sizes show
            pages, outline, heading_title = _font_outline_or_pages(reader)
        metadata: Any = reader.metadata or {}
        meta_title = str(metadata.get("/Title") or "").strip() or heading_title
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise UnreadableFile(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    # text nobody can see on the page (white on white, covered, invisible) is not indexed
    pages = [
        t if seen.text is None else seen.text
        for t, seen in zip(pages, seen_pages(data, len(pages)), strict=True)
    ]
    if not any(p.strip() for p in pages):
        raise UnreadableFile("the PDF has no text layer (a scan?); it needs OCR before it can be indexed")
    pieces: list[_Piece] = []
    current: list[str] = []
    for index, text in enumerate(pages):
        regions: list[tuple[list[str], str]] = []
        rest = text
        for _, path in (e for e in outline if e[0] == index):
            at = _find_heading(rest, path[-1])  # not found: the section starts with the page
            if at > 0 and rest[:at].strip():
                regions.append((current, rest[:at]))
                rest = rest[at:]
            current = path
        regions.append((current, rest))
        carry = ""  # a region shorter than min_chars (a heading alone, a running header) joins the next
        for n, (path, body) in enumerate(regions):
            body = carry + body
            if len(body.strip()) < config.min_chars and n + 1 < len(regions):
                carry = body
                continue
            carry = ""
            pieces.extend(_paragraph_pieces([*prefix, *path, f"page {index + 1}"], body, config))
    return pieces, meta_title


def _font_outline_or_pages(reader: Any) -> tuple[list[str], list[tuple[int, list[str]]], str | None]:
    """The font-size outline, or the plain page texts when reading the sizes fails (a matrix or
    size pypdf passes that the reading does not expect): headings help, the text is what counts."""
    try:
        return font_outline(reader)
    except Exception:
        return [page.extract_text() or "" for page in reader.pages], [], None


def _find_heading(text: str, title: str) -> int:
    """Where a heading's title starts a line of the page text (-1: not found)."""
    words = title.split()
    if not words:
        return -1
    pattern = re.compile(r"(?im)^\s*" + r"\s+".join(re.escape(w) for w in words))
    match = pattern.search(text)
    return match.start() if match else -1


# -- email -----------------------------------------------------------------------------------------
def email_pieces(data: bytes, config: ChunkingConfig) -> tuple[list[_Piece], str]:
    """The message's parts under its subject: the body (HTML as text, as a mail program shows it,
    else plain), then each attachment under [subject, file name] with its own structure (PDF
    pages and outline, Markdown/RST/HTML headings, text paragraphs)."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not message.keys():
        raise UnreadableFile("not an email message (no headers found)")
    # the sender writes these: one line each (a decoded Subject may hold newlines that would end its
    # citation and open a forged one)
    subject = " ".join(str(message.get("Subject") or "").split()) or "(no subject)"
    header = "\n".join(
        f"{name}: {' '.join(str(message[name]).split())}" for name in ("From", "To", "Date") if message[name]
    )
    body_part = message.get_body(preferencelist=("html", "plain"))
    body = ""
    if body_part is not None:
        body = str(body_part.get_content())
        if body_part.get_content_subtype() == "html":
            body = html_to_markdown(body)[0].replace("#", "")
    pieces = _paragraph_pieces([subject], f"{header}\n\n{body}", config)
    for attachment in message.iter_attachments():
        name = " ".join((attachment.get_filename() or "").split()) or "attachment"
        content_type = attachment.get_content_type()
        suffix = Path(name).suffix.lower()
        prefix = [subject, name]
        try:
            if content_type == "application/pdf" or suffix == ".pdf":
                payload = attachment.get_payload(decode=True)
                if isinstance(payload, bytes):
                    pieces.extend(pdf_pieces(payload, prefix, config)[0])
            elif content_type.startswith("text/"):
                text = str(attachment.get_content())
                if suffix in RST_SUFFIXES:
                    text = rst_to_markdown(text)
                elif suffix in HTML_SUFFIXES or content_type == "text/html":
                    text = html_to_markdown(text)[0]
                elif suffix in MARKDOWN_SUFFIXES:
                    text = visible_markdown(text)
                else:
                    pieces.extend(_paragraph_pieces(prefix, text, config))
                    continue
                pieces.extend(
                    _Piece(path=[*prefix, *p.path], text=p.text) for p in split_markdown(text, config)
                )
        except (UnreadableFile, StylesTooComplex) as exc:
            pieces.append(_Piece(path=prefix, text=f"(attachment {name} not indexed: {exc})"))
    return pieces, subject
