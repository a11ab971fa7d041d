"""The reader's result types and errors: what a tool call returns, before it is rendered to text."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

FileKind = Literal["pdf", "email", "text", "markdown", "csv", "html", "image", "other"]

NO_TEXT_LAYER = "no text layer (scanned image); cannot read it — do not guess its contents; ask a human"
OCR_MARK = "[read by OCR"  # every OCR'd passage starts with this, so a reader (and the approval) can tell


class FileAccessError(Exception):
    """A recoverable problem with a path or a file; the message says what to do."""


class PathRefused(FileAccessError):
    """The path is outside the sandbox, hidden, or looks like a secret."""


class FileMissing(FileAccessError):
    """No such file (the message lists similar names)."""


class Unreadable(FileAccessError):
    """The file exists but its text cannot be read (scanned image, damaged, binary, too large)."""


class TooComplex(Unreadable):
    """Parsing hit the time or memory limit."""


class EmailSummary(BaseModel):
    date: str | None
    sender: str
    to: str
    subject: str
    attachments: list[str] = []


class FileEntry(BaseModel):
    path: str
    size: int
    kind: FileKind
    email: EmailSummary | None = None
    note: str | None = None

    def line(self) -> str:
        parts = [self.path, self.kind, size_text(self.size)]
        if self.email:
            e = self.email
            parts += [f"Date {e.date or '(none)'}", f"From {e.sender}", f'Subject "{e.subject}"']
            if e.attachments:
                parts.append("Attachments: " + ", ".join(e.attachments))
        if self.note:
            parts.append(self.note)
        return "- " + " · ".join(parts)


class FileListing(BaseModel):
    folder: str
    entries: list[FileEntry]
    offset: int = 0
    skipped: int = 0
    max_chars: int = 5000

    def render(self) -> str:
        head = f"{len(self.entries)} file(s) in {self.folder!r}"
        if self.skipped:
            head += f" ({self.skipped} hidden or secret-looking file(s) or special files not shown)"
        lines = [head + ":"]
        used = len(lines[0])
        for shown, entry in enumerate(self.entries[self.offset :]):
            text = entry.line()
            if used + len(text) > self.max_chars and shown:
                rest = len(self.entries) - self.offset - shown
                lines.append(
                    f"[… {rest} more file(s) not shown; call list_files with offset={self.offset + shown} "
                    "to see them]"
                )
                break
            lines.append(text)
            used += len(text) + 1
        return "\n".join(lines)


class OcrValue(BaseModel):
    """One value OCR read (a number, amount, date, identifier, e-mail address), with the confidence
    of its weakest word (0-100): what an approver needs to know about a value before trusting it."""

    text: str  # as shown in the text (a checksum's choice when it corrected the reading)
    confidence: float
    uncertain: bool = False  # below the threshold, or a checksum no reading satisfies
    read_as: str | None = None  # what OCR read, when a checksum chose another reading
    check: str | None = None  # e.g. "IBAN checksum ok", "fails the IBAN checksum: …"
    check_status: Literal["ok", "corrected", "ambiguous", "failed"] | None = None
    line: str = ""  # the line it is on

    def label(self) -> str:
        """``[OCR 13% — uncertain; fails the IBAN checksum …]``: what follows the value in the text."""
        parts = [f"OCR {self.confidence:.0f}%" + (" — uncertain" if self.uncertain else "")]
        if self.check:
            parts.append(self.check)
        return "[" + "; ".join(parts) + "]"

    def summary(self) -> str:
        return f"{self.text} {self.confidence:.0f}%" + (" (uncertain)" if self.uncertain else "")


class OcrReading(OcrValue):
    """A value OCR read, and the file it was read from: what an approval page shows next to a field."""

    path: str

    def note(self) -> str:
        """``read by OCR, 13% — uncertain — check it against the document (scans/x.png)``."""
        how = f"read by OCR, {self.confidence:.0f}%" + (" — uncertain" if self.uncertain else "")
        if self.check:
            how += f"; {self.check}"
        return f"{how} — check it against the document ({self.path})"


VALUES_MARK = "[confidence of each value read: "


class OcrText(BaseModel):
    """Text recognised in pixels, with tesseract's mean word confidence (0-100) and each value's own."""

    text: str
    confidence: float
    words: int = 0
    values: list[OcrValue] = []

    def marked(self, what: str) -> str:
        head = (
            f"{OCR_MARK} — {what}, mean confidence {self.confidence:.0f}% — check values against the image]"
        )
        body = self.text
        if self.values:
            body += "\n" + VALUES_MARK + " · ".join(v.summary() for v in self.values) + "]"
        return f"{head}\n{body}\n[end of OCR text]"


class PageText(BaseModel):
    number: int
    text: str
    ocr: bool = False  # some or all of the text came from OCR
    ocr_confidence: float | None = None
    ocr_values: list[OcrValue] = []  # every value OCR read on the page, with its own confidence
    notes: list[str] = []  # e.g. "part of this page is an image that could not be read"
    hidden_text: str | None = None  # text on the page nobody can see, left out (pdfseen); why, in words


class EmailHeaders(BaseModel):
    date: str | None
    date_raw: str | None
    sender: str
    to: str
    cc: str | None = None
    reply_to: str | None = None
    subject: str
    # what the mail's delivery says about its sender, as the headers' text (``mail.TRANSPORT_LIMITS``):
    # the envelope sender bounces go to, and each receiving server's SPF/DKIM/DMARC verdicts. Data for
    # the sender check (``routines.files.mail_sender``) and for the person; never instructions.
    return_path: str | None = None
    authentication_results: list[str] = []


class AttachmentContent(BaseModel):
    name: str
    content_type: str
    size: int
    kind: FileKind
    pages: list[PageText] = []
    text: str | None = None
    email: EmailContent | None = None
    error: str | None = None


class EmailContent(BaseModel):
    headers: EmailHeaders
    body: str
    body_format: Literal["text", "html", "none"]
    attachments: list[AttachmentContent] = []


class FileContent(BaseModel):
    path: str
    kind: FileKind
    size: int
    pages: list[PageText] = []
    text: str | None = None
    email: EmailContent | None = None
    notes: list[str] = []  # limits hit while reading (page cap, content budget)
    offset: int = 0
    max_chars: int = 5000
    # the SHA-256 of the very bytes this content was parsed from ("": not known): what a seal is
    # compared with, so the text shown and the digest checked come from one read of the file
    sha256: str = ""

    @property
    def paged(self) -> bool:
        return self.kind in ("pdf", "image")

    @property
    def ocr(self) -> bool:
        return any(p.ocr for p in self.pages) or (self.email is not None and _email_has_ocr(self.email))

    def full_text(self) -> str:
        """Everything readable in the file, as one text (what ``render`` pages through)."""
        if self.paged:
            return pages_text(self.pages)
        if self.email is not None:
            return email_text(self.email)
        return self.text or ""

    def render(self) -> str:
        body = self.full_text()
        total = len(body)
        window = body[self.offset : self.offset + self.max_chars]
        head = f"File: {self.path} ({self.kind}, {size_text(self.size)}"
        head += f", {len(self.pages)} page(s))" if self.paged else ")"
        if self.ocr:
            head += "\nNote: some text below was read by OCR from an image; OCR can misread digits — "
            head += "values from it are flagged for the person who approves"
        for note in self.notes:
            head += f"\nNote: {note}"
        if self.offset or self.offset + self.max_chars < total:
            end = self.offset + len(window)
            head += f"\n[showing characters {self.offset}-{end} of {total}]"
            if end < total:
                window += f"\n[… truncated: {total - end} more characters; call read_file with offset={end}]"
        if self.offset >= total and total:
            window = f"[offset {self.offset} is past the end of the text ({total} characters)]"
        return f"{head}\n\n{window}"


def _email_has_ocr(email: EmailContent) -> bool:
    for att in email.attachments:
        if any(p.ocr for p in att.pages) or (att.email is not None and _email_has_ocr(att.email)):
            return True
    return False


def page_block(page: PageText) -> str:
    text = page.text
    for note in [*page.notes, *([page.hidden_text] if page.hidden_text else [])]:
        text += f"\n[note: {note}]"
    return text


def pages_text(pages: list[PageText]) -> str:
    if len(pages) == 1:
        return page_block(pages[0])
    return "\n\n".join(f"[page {p.number} of {len(pages)}]\n{page_block(p)}" for p in pages)


def email_text(email: EmailContent, level: int = 0) -> str:
    h = email.headers
    lines = [f"Date: {h.date or h.date_raw or '(none)'}", f"From: {h.sender}", f"To: {h.to}"]
    if h.cc:
        lines.append(f"Cc: {h.cc}")
    if h.reply_to:
        lines.append(f"Reply-To: {h.reply_to}")
    if h.return_path:
        lines.append(f"Return-Path: {h.return_path}")
    lines += [f"Authentication-Results: {a}" for a in h.authentication_results]
    lines.append(f"Subject: {h.subject}")
    if email.attachments:
        lines.append(
            "Attachments: "
            + ", ".join(f"{a.name} ({a.content_type}, {size_text(a.size)})" for a in email.attachments)
        )
    label = {"text": "body", "html": "body (converted from HTML)", "none": "body (empty)"}[email.body_format]
    lines += ["", f"--- {label} ---", email.body]
    for i, att in enumerate(email.attachments, start=1):
        title = f"--- attachment {i}: {att.name}"
        if att.error:
            lines += ["", f"{title}: CANNOT READ: {att.error} ---"]
        elif att.email is not None:
            lines += ["", f"{title} (forwarded e-mail) ---", email_text(att.email, level + 1)]
            lines.append(f"--- end of forwarded e-mail {att.name} ---")
        elif att.pages:
            what = "PDF" if att.kind == "pdf" else "image"
            lines += ["", f"{title} ({what}, {len(att.pages)} page(s)) ---", pages_text(att.pages)]
        else:
            lines += ["", f"{title} ---", att.text or ""]
    return "\n".join(lines)


class SearchHit(BaseModel):
    path: str
    location: str
    line: str


class SearchResult(BaseModel):
    query: str
    hits: list[SearchHit]
    files_searched: int
    unreadable: list[str] = []
    truncated: bool = False

    def render(self) -> str:
        if not self.hits:
            text = f"no matches for {self.query!r} in {self.files_searched} file(s)"
        else:
            files = len({h.path for h in self.hits})
            text = f"{len(self.hits)} matching line(s) for {self.query!r} in {files} file(s):"
            for hit in self.hits:
                text += f"\n- {hit.path} [{hit.location}]: {hit.line}"
        if self.truncated:
            text += "\n[… more matches not shown; use a more specific query]"
        if self.unreadable:
            text += "\nNot searched (unreadable): " + "; ".join(self.unreadable)
        return text


AttachmentContent.model_rebuild()


def size_text(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def tidy(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")
