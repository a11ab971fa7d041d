"""PDF and e-mail files as pieces that follow their structure (chunking.py sizes them).

PDF: page by page, split where the outline (bookmarks) starts a section, or without an outline
where a heading set in a larger font does (pdf_headings.py), each piece's heading path the
outline path then "page N"; the title from the document's metadata. Text nobody can see on a page
(pdfseen.py) is left out of the pages, the headings and the outline alike; which text is seen is
checked for at most ``limits.MAX_INGEST_PAGES`` pages (the pages past them are not indexed, and a
piece says so) and ``limits.INGEST_CHECK_S`` seconds (past that the file is not indexed: a file cut
short by time would be stored as if whole, and called unchanged by the next ingest). E-mail: the body
under its subject, then each attachment under [subject, file name] with its own structure.
"""

from __future__ import annotations

import email
import email.policy
import io
import re
import time
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
from taskcrew.knowledge.pdf_headings import Shown, font_outline
from taskcrew.tools.documents import limits
from taskcrew.tools.documents.pdfseen import SeenPage, seer
from taskcrew.tools.documents.visibility import StylesTooComplex, visible_markdown


# -- pdf -------------------------------------------------------------------------------------------
def pdf_pieces(data: bytes, prefix: list[str], config: ChunkingConfig) -> tuple[list[_Piece], str | None]:
    """Pages split where the PDF's outline (bookmarks) starts a section, or the headings its font
    sizes show when it has none: each piece's path is the heading path then "page N" (just "page N"
    when neither shows one); the title from the metadata, else a lone largest heading. Only text a
    person sees is read, headings and outline titles included (on a page that hides text, a title
    must be found in what it shows)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise UnreadableFile("the PDF is encrypted; save an unencrypted copy")
        total = len(reader.pages)
        seen, left_out = _seen_pages(data, total)  # first: the headings are built from the seen text
        count, shown = len(seen), _Shown(seen)
        outline = pdf_outline(reader)
        if outline:
            raw = [reader.pages[index].extract_text() or "" for index in range(count)]
            outline, heading_title = _shown_outline(outline, shown), None
        else:  # no bookmarks: the headings its font sizes show
            raw, outline, heading_title = _font_outline_or_pages(reader, shown, count)
        metadata: Any = reader.metadata or {}
        meta_title = str(metadata.get("/Title") or "").strip() or heading_title
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise UnreadableFile(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    # text nobody can see on the page (white on white, covered, invisible) is not indexed
    pages = [t if s.text is None else s.text for t, s in zip(raw, seen, strict=True)]
    if not any(p.strip() for p in pages):
        if any(s.hidden for s in seen):
            raise UnreadableFile("every piece of text in the PDF is drawn so that nobody can see it")
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
    if left_out:
        pieces.append(
            _Piece(
                path=[*prefix, f"page {count + 1}"],
                text=f"(pages {count + 1}-{total} of this PDF are not indexed: {left_out}; "
                "split the file to index the rest)",
            )
        )
    return pieces, meta_title


def _seen_pages(data: bytes, total: int) -> tuple[list[SeenPage], str | None]:
    """What a person sees of each page, for the pages within the ingest's limits, and why the
    others are left out (None: none is)."""
    cap = min(total, limits.MAX_INGEST_PAGES)
    started = time.monotonic()
    seen: list[SeenPage] = []
    with seer(data) as look:
        for index in range(cap):
            seen.append(look(index))
            if index + 1 < cap and time.monotonic() - started > limits.INGEST_CHECK_S:
                raise UnreadableFile(  # nothing stored: a later ingest tries it whole again
                    f"checking which of its text a person can see took over {limits.INGEST_CHECK_S:.0f} s "
                    f"(page {index + 1} of {total}); split the file to index it"
                )
    if cap < total:
        return seen, f"the knowledge ingest reads the first {cap} pages of a PDF"
    return seen, None


class _Shown:
    """Whether a person sees a piece of text on a page: on a page where nothing is hidden, all of
    its text; on one that hides text, what is found in the text it shows (case and spacing aside,
    as pypdf and pdfium space words differently)."""

    def __init__(self, seen: list[SeenPage]) -> None:
        self._shows = {index: _squeezed(s.text) for index, s in enumerate(seen) if s.text is not None}

    def __call__(self, page: int, text: str) -> bool:
        shows = self._shows.get(page)
        return shows is None or _squeezed(text) in shows


def _squeezed(text: str) -> str:
    return "".join(text.split()).casefold()


def _shown_outline(outline: list[tuple[int, list[str]]], shown: Shown) -> list[tuple[int, list[str]]]:
    """The outline without the entries whose title is not shown on their page: their children
    move up to their parent."""
    kept: list[tuple[int, list[str]]] = []
    moved: dict[tuple[str, ...], list[str]] = {}  # an entry's path as it was: as it is now
    for page, path in outline:
        now = moved.get(tuple(path[:-1]), path[:-1])
        if shown(page, path[-1]):
            now = [*now, path[-1]]
            kept.append((page, now))
        moved[tuple(path)] = now
    return kept


def _font_outline_or_pages(
    reader: Any, shown: Shown, count: int
) -> tuple[list[str], list[tuple[int, list[str]]], str | None]:
    """The font-size outline, or the plain page texts when reading the sizes fails (a matrix or
    size pypdf passes that the reading does not expect): headings help, the text is what counts."""
    try:
        return font_outline(reader, shown=shown, count=count)
    except Exception:
        return [reader.pages[index].extract_text() or "" for index in range(count)], [], None


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
