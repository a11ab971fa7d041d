"""Read-only access to the sandbox's files: list, read, search — confined to one folder.

``SandboxFiles(root)`` is the file_reader's view of the company's documents: PDFs (pypdf, page by
page), e-mail (``.eml`` with headers, the text body — HTML converted to text — and attachments,
PDF attachments read inline, forwarded messages read recursively), plain text, markdown and CSV.

Everything an agent sees is bounded in size, with a note saying how to get the rest. Unreadable
input is a clear ``ok=False`` result, never an empty string: a PDF that is only a scanned image
says so and tells the agent not to guess; a damaged PDF says it is damaged; other files keep
working.

Path confinement (:func:`confine`) is the one rule the policy module reuses: nothing outside the
root (``..``, absolute paths elsewhere, symlinks that lead out), no dotfiles, nothing that looks
like a secret (``.env``, ``*.pem``, ``*.key``, ``id_rsa``, ``credentials*`` …).

The CrewAI tool wrappers live in ``taskcrew.tools.reader_tools``; nothing here imports crewai.
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import io
import logging
import os
import re
from collections.abc import Iterator, Sequence
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel

from taskcrew.tools.base import ToolResult

FileKind = Literal["pdf", "email", "text", "markdown", "csv", "html", "other"]

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
}
CONTENT_TYPE_KINDS: dict[str, FileKind] = {
    "application/pdf": "pdf",
    "message/rfc822": "email",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/csv": "csv",
    "text/html": "html",
}

SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials*",
    "secrets*",
    ".netrc",
    ".pgpass",
    ".htpasswd",
)

NO_TEXT_LAYER = "no text layer (scanned image); cannot read it — do not guess its contents; ask a human"
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_EMAIL_DEPTH = 3


# ------------------------------------------------------------------------------------ errors


class FileAccessError(Exception):
    """A recoverable problem with a path or a file; the message says what to do."""


class PathRefused(FileAccessError):
    """The path is outside the sandbox, hidden, or looks like a secret."""


class FileMissing(FileAccessError):
    """No such file (the message lists similar names)."""


class Unreadable(FileAccessError):
    """The file exists but its text cannot be read (scanned image, damaged, binary, too large)."""


# ------------------------------------------------------------------------------- confinement


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in SECRET_PATTERNS)


def confine(root: Path, path: str | os.PathLike[str], *, hidden: Sequence[str] = ()) -> Path:
    """Resolve ``path`` (relative to ``root``, or absolute inside it) or raise :class:`PathRefused`.

    Refused: anything that leads outside ``root`` (``..``, an absolute path elsewhere, a symlink
    pointing out), any path component starting with '.', secret-looking names, and paths matching
    one of the ``hidden`` glob patterns (relative to ``root``).
    """
    raw = os.fspath(path)
    shown = raw if raw else "."
    base = root.resolve()
    if "\x00" in raw:
        raise PathRefused(_refusal(shown, "contains a NUL byte"))
    given = Path(raw)
    joined = given if given.is_absolute() else base / given
    lexical = Path(os.path.normpath(joined))
    spelled = Path(os.path.abspath(root))  # the root as the caller spelled it (may be a symlink)
    if given.is_absolute() and not lexical.is_relative_to(base) and lexical.is_relative_to(spelled):
        lexical = base / lexical.relative_to(spelled)
    if not lexical.is_relative_to(base):
        why = (
            "is an absolute path outside the sandbox" if given.is_absolute() else "leads outside the sandbox"
        )
        raise PathRefused(_refusal(shown, why))
    _check_parts(lexical.relative_to(base), shown, hidden)
    resolved = lexical.resolve()
    if not resolved.is_relative_to(base):
        raise PathRefused(_refusal(shown, "is a symlink that points outside the sandbox"))
    _check_parts(resolved.relative_to(base), shown, hidden)
    return resolved


def _check_parts(relative: Path, shown: str, hidden: Sequence[str]) -> None:
    for part in relative.parts:
        if part.startswith("."):
            raise PathRefused(_refusal(shown, "is a hidden file or folder (dotfile)"))
        if is_secret_name(part):
            raise PathRefused(
                _refusal(shown, "looks like a secret (keys, credentials, .env) and is never read")
            )
    rel = relative.as_posix()
    if rel != "." and any(fnmatch.fnmatchcase(rel, pattern) for pattern in hidden):
        raise PathRefused(_refusal(shown, "is not available to the agent"))


def _refusal(shown: str, why: str) -> str:
    return f"refused: {shown!r} {why}. Only files inside the sandbox folder can be read; use list_files to see them."


# ------------------------------------------------------------------------------------ models


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
        parts = [self.path, self.kind, _size(self.size)]
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
            head += f" ({self.skipped} hidden or secret-looking file(s) not shown)"
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


class PageText(BaseModel):
    number: int
    text: str


class EmailHeaders(BaseModel):
    date: str | None
    date_raw: str | None
    sender: str
    to: str
    cc: str | None = None
    reply_to: str | None = None
    subject: str


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
    offset: int = 0
    max_chars: int = 5000

    def full_text(self) -> str:
        """Everything readable in the file, as one text (what ``render`` pages through)."""
        if self.kind == "pdf":
            return _pages_text(self.pages)
        if self.email is not None:
            return _email_text(self.email)
        return self.text or ""

    def render(self) -> str:
        body = self.full_text()
        total = len(body)
        window = body[self.offset : self.offset + self.max_chars]
        head = f"File: {self.path} ({self.kind}, {_size(self.size)}"
        head += f", {len(self.pages)} page(s))" if self.kind == "pdf" else ")"
        if self.offset or self.offset + self.max_chars < total:
            end = self.offset + len(window)
            head += f"\n[showing characters {self.offset}-{end} of {total}]"
            if end < total:
                window += f"\n[… truncated: {total - end} more characters; call read_file with offset={end}]"
        if self.offset >= total and total:
            window = f"[offset {self.offset} is past the end of the text ({total} characters)]"
        return f"{head}\n\n{window}"


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


# ------------------------------------------------------------------------------ the reader


class SandboxFiles:
    """The sandbox folder, read-only. Methods returning ``ToolResult`` are what the tools call."""

    def __init__(
        self,
        root: Path,
        *,
        hidden: Sequence[str] = (),
        max_chars: int = 5000,
        max_hits: int = 40,
        max_entries: int = 500,
    ) -> None:
        if not root.is_dir():
            raise ValueError(f"sandbox root is not a folder: {root}")
        self.root = root.resolve()
        self.given_root = Path(os.path.abspath(root))  # as spelled; absolute paths may use it
        self.hidden = tuple(hidden)
        self.max_chars = max_chars
        self.max_hits = max_hits
        self.max_entries = max_entries
        self._text_cache: dict[tuple[str, int, int], list[tuple[str, str]]] = {}

    # -------------------------------------------------------------------- tool-facing methods

    def list_files(self, folder: str = ".", offset: int = 0) -> ToolResult:
        try:
            return ToolResult.success(self.listing(folder, offset))
        except FileAccessError as exc:
            return ToolResult.failure(str(exc))

    def read_file(self, path: str, offset: int = 0) -> ToolResult:
        try:
            return ToolResult.success(self.read(path, offset))
        except FileAccessError as exc:
            return ToolResult.failure(str(exc))

    def search_files(self, query: str, folder: str = ".") -> ToolResult:
        try:
            return ToolResult.success(self.search(query, folder))
        except FileAccessError as exc:
            return ToolResult.failure(str(exc))

    # ------------------------------------------------------------------------ plain methods

    def resolve(self, path: str) -> Path:
        return confine(self.given_root, path, hidden=self.hidden)

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def listing(self, folder: str = ".", offset: int = 0) -> FileListing:
        base = self.resolve(folder)
        if not base.is_dir():
            if base.exists():
                raise FileAccessError(f"{folder!r} is a file, not a folder; use read_file to read it")
            raise FileMissing(self._missing_message(folder))
        files, skipped = self._walk(base)
        entries = [self._entry(p) for p in files[: self.max_entries]]
        return FileListing(
            folder=self.rel(base) if base != self.root else ".",
            entries=entries,
            offset=max(0, offset),
            skipped=skipped,
            max_chars=self.max_chars,
        )

    def read(self, path: str, offset: int = 0) -> FileContent:
        target = self._existing_file(path)
        size = target.stat().st_size
        if size > MAX_FILE_BYTES:
            raise Unreadable(f"{path!r} is too large to read here ({_size(size)}); ask a human")
        kind = file_kind(target.name)
        data = target.read_bytes()
        content = FileContent(
            path=self.rel(target), kind=kind, size=size, offset=max(0, offset), max_chars=self.max_chars
        )
        if kind == "pdf":
            content.pages = read_pdf_pages(data, self.rel(target))
        elif kind == "email":
            content.email = read_email(data, self.rel(target))
        elif kind in ("text", "markdown", "csv"):
            content.text = decode_text(data, self.rel(target))
        elif kind == "html":
            content.text = html_to_text(decode_text(data, self.rel(target)))
        else:
            raise Unreadable(
                f"{self.rel(target)!r} is not a document type this reader understands "
                "(PDF, .eml, text, markdown, CSV, HTML); ask a human"
            )
        return content

    def search(self, query: str, folder: str = ".") -> SearchResult:
        terms = query.lower().split()
        if not terms:
            raise FileAccessError("empty search query; give a word or phrase, e.g. an invoice number")
        base = self.resolve(folder)
        if not base.is_dir():
            raise FileMissing(self._missing_message(folder))
        files, _ = self._walk(base)
        hits: list[SearchHit] = []
        unreadable: list[str] = []
        truncated = False
        per_file = max(3, self.max_hits // 5)
        for path in files:
            if len(hits) >= self.max_hits:
                truncated = True
                break
            rel = self.rel(path)
            try:
                units = self._text_units(path)
            except FileAccessError as exc:
                unreadable.append(f"{rel} ({_short_reason(str(exc))})")
                units = []
            found = 0
            for location, text in units:
                for number, line in enumerate(text.splitlines(), start=1):
                    lowered = line.lower()
                    if all(term in lowered for term in terms):
                        if len(hits) >= self.max_hits or found >= per_file:
                            truncated = True
                            break
                        hits.append(
                            SearchHit(path=rel, location=f"{location}, line {number}", line=_clip(line))
                        )
                        found += 1
        return SearchResult(
            query=query, hits=hits, files_searched=len(files), unreadable=unreadable, truncated=truncated
        )

    # ----------------------------------------------------------------------------- helpers

    def _walk(self, base: Path) -> tuple[list[Path], int]:
        found: list[Path] = []
        skipped = 0
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            current = Path(dirpath)
            keep = []
            for name in sorted(dirnames):
                try:
                    confine(self.root, current / name, hidden=self.hidden)
                    keep.append(name)
                except PathRefused:
                    skipped += 1
            dirnames[:] = keep
            for name in sorted(filenames):
                candidate = current / name
                try:
                    resolved = confine(self.root, candidate, hidden=self.hidden)
                except PathRefused:
                    skipped += 1
                    continue
                if resolved.is_file():
                    found.append(candidate)
        return sorted(found, key=lambda p: self.rel(p).lower()), skipped

    def _entry(self, path: Path) -> FileEntry:
        kind = file_kind(path.name)
        size = path.stat().st_size
        entry = FileEntry(path=self.rel(path), size=size, kind=kind)
        if kind == "email":
            try:
                entry.email = email_summary(path.read_bytes())
            except Exception as exc:  # a broken .eml must not break the listing
                entry.note = f"cannot parse e-mail headers ({type(exc).__name__})"
        return entry

    def _existing_file(self, path: str) -> Path:
        target = self.resolve(path)
        if target.is_dir():
            raise FileAccessError(f"{path!r} is a folder; use list_files to see what is in it")
        if not target.is_file():
            raise FileMissing(self._missing_message(path))
        return target

    def _missing_message(self, path: str) -> str:
        files, _ = self._walk(self.root)
        names = [self.rel(p) for p in files]
        close = difflib.get_close_matches(path, names, n=5, cutoff=0.4)
        by_name = [n for n in names if PurePosixPath(n).name.lower() == PurePosixPath(path).name.lower()]
        suggestions = list(dict.fromkeys(by_name + close))
        message = f"no such file: {path!r}."
        if suggestions:
            message += " Nearby names: " + ", ".join(repr(s) for s in suggestions[:5]) + "."
        else:
            folder = PurePosixPath(path).parent.as_posix()
            listed = [n for n in names if PurePosixPath(n).parent.as_posix() == folder][:10]
            if listed:
                message += f" Files in {folder!r}: " + ", ".join(repr(s) for s in listed) + "."
        return message + " Use list_files to see every file."

    def _text_units(self, path: Path) -> list[tuple[str, str]]:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key not in self._text_cache:
            self._text_cache[key] = list(_units(self.read(self.rel(path))))
        return self._text_cache[key]


def _units(content: FileContent) -> Iterator[tuple[str, str]]:
    if content.kind == "pdf":
        for page in content.pages:
            yield f"page {page.number}", page.text
    elif content.email is not None:
        yield from _email_units(content.email, "")
    else:
        yield "text", content.text or ""


def _email_units(email: EmailContent, prefix: str) -> Iterator[tuple[str, str]]:
    h = email.headers
    yield f"{prefix}header", f"From: {h.sender}\nTo: {h.to}\nSubject: {h.subject}"
    yield f"{prefix}body", email.body
    for att in email.attachments:
        where = f"{prefix}attachment {att.name}"
        for page in att.pages:
            yield f"{where} page {page.number}", page.text
        if att.text:
            yield where, att.text
        if att.email:
            yield from _email_units(att.email, f"{where} > ")


# ------------------------------------------------------------------------------- file kinds


def file_kind(name: str) -> FileKind:
    return EXTENSION_KINDS.get(PurePosixPath(name).suffix.lower(), "other")


# ------------------------------------------------------------------------------------- PDF


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs warnings ("EOF marker not found") for damaged files; the result says it instead."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def read_pdf_pages(data: bytes, name: str) -> list[PageText]:
    """Text of each page, or :class:`Unreadable` (damaged, encrypted, or a scan without text)."""
    from pypdf import PdfReader

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise Unreadable(f"{name}: not a PDF file (no %PDF header); it cannot be read — ask a human")
    with _quiet_pypdf():
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise Unreadable(f"{name}: the PDF is password-protected; ask a human for an open copy")
            texts = [page.extract_text() or "" for page in reader.pages]
            has_images = any(_page_has_images(page) for page in reader.pages)
        except Unreadable:
            raise
        except Exception as exc:  # pypdf raises many types on damaged input; none is our bug
            raise Unreadable(
                f"{name}: damaged or incomplete PDF ({type(exc).__name__}: {exc}); it cannot be read — "
                "ask for a new copy of the file. Other files are not affected."
            ) from exc
    if not any(t.strip() for t in texts):
        if has_images:
            raise Unreadable(f"{name}: {NO_TEXT_LAYER}")
        raise Unreadable(f"{name}: the PDF has no text on any page; ask a human")
    return [PageText(number=i, text=_tidy(t)) for i, t in enumerate(texts, start=1)]


def _page_has_images(page: Any) -> bool:
    resources = page.get("/Resources")
    if resources is None:
        return False
    xobjects = resources.get_object().get("/XObject")
    if xobjects is None:
        return False
    return any(x.get_object().get("/Subtype") == "/Image" for x in xobjects.get_object().values())


def _pages_text(pages: list[PageText]) -> str:
    if len(pages) == 1:
        return pages[0].text
    return "\n\n".join(f"[page {p.number} of {len(pages)}]\n{p.text}" for p in pages)


# ----------------------------------------------------------------------------------- e-mail


def _parse_email(data: bytes) -> EmailMessage:
    msg = BytesParser(policy=policy.default).parsebytes(data)
    assert isinstance(msg, EmailMessage)
    return msg


def _header(msg: EmailMessage, name: str) -> str:
    value = msg.get(name)
    if value is None:
        return ""
    try:
        return " ".join(str(value).split())
    except Exception:  # undecodable header: show it raw
        return str(msg.get_all(name, [""])[0])


def _date(msg: EmailMessage) -> tuple[str | None, str | None]:
    raw = msg.get("Date")
    if raw is None:
        return None, None
    raw_text = str(raw)
    try:
        parsed = parsedate_to_datetime(raw_text)
    except (TypeError, ValueError):
        return None, raw_text
    return parsed.isoformat(sep=" "), raw_text


def email_summary(data: bytes) -> EmailSummary:
    msg = _parse_email(data)
    return EmailSummary(
        date=_date(msg)[0],
        sender=_header(msg, "From"),
        to=_header(msg, "To"),
        subject=_header(msg, "Subject"),
        attachments=_attachment_names(msg),
    )


def _attachment_names(msg: EmailMessage, depth: int = 0) -> list[str]:
    names = []
    for part in msg.iter_attachments():
        name = part.get_filename() or f"(unnamed {part.get_content_type()})"
        if part.get_content_type() == "message/rfc822" and depth < MAX_EMAIL_DEPTH:
            inner = part.get_content()
            inside = _attachment_names(inner, depth + 1) if isinstance(inner, EmailMessage) else []
            name += f" [forwarded e-mail{'; contains: ' + ', '.join(inside) if inside else ''}]"
        names.append(name)
    return names


def read_email(data: bytes, name: str, depth: int = 0) -> EmailContent:
    try:
        msg = _parse_email(data)
    except Exception as exc:  # the stdlib parser is lenient; this is a truly broken file
        raise Unreadable(f"{name}: cannot parse the e-mail ({type(exc).__name__}: {exc})") from exc
    return _email_content(msg, name, depth)


def _email_content(msg: EmailMessage, name: str, depth: int) -> EmailContent:
    date, date_raw = _date(msg)
    headers = EmailHeaders(
        date=date,
        date_raw=date_raw,
        sender=_header(msg, "From"),
        to=_header(msg, "To"),
        cc=_header(msg, "Cc") or None,
        reply_to=_header(msg, "Reply-To") or None,
        subject=_header(msg, "Subject"),
    )
    body_part = msg.get_body(preferencelist=("plain", "html"))
    body = ""
    body_format: Literal["text", "html", "none"] = "none"
    if isinstance(body_part, EmailMessage):
        text = _part_text(body_part)
        if body_part.get_content_subtype() == "html":
            body, body_format = html_to_text(text), "html"
        else:
            body, body_format = _tidy(text), "text"
    attachments = [_attachment(part, name, depth) for part in msg.iter_attachments()]
    return EmailContent(headers=headers, body=body, body_format=body_format, attachments=attachments)


def _part_text(part: EmailMessage) -> str:
    try:
        content = part.get_content()
        if isinstance(content, str):
            return content
    except (LookupError, UnicodeError, KeyError):
        pass
    payload = part.get_payload(decode=True)
    return payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""


def _attachment(part: EmailMessage, email_name: str, depth: int) -> AttachmentContent:
    ctype = part.get_content_type()
    filename = part.get_filename() or f"(unnamed {ctype})"
    kind = file_kind(filename)
    if kind == "other":
        kind = CONTENT_TYPE_KINDS.get(ctype, "other")
    where = f"{email_name} > {filename}"
    if kind == "email":
        inner = part.get_content()
        size = len(inner.as_bytes()) if isinstance(inner, EmailMessage) else 0
        att = AttachmentContent(name=filename, content_type=ctype, size=size, kind="email")
        if depth >= MAX_EMAIL_DEPTH:
            att.error = "forwarded e-mail nested too deeply; not read"
        elif isinstance(inner, EmailMessage):
            att.email = _email_content(inner, where, depth + 1)
        return att
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    att = AttachmentContent(name=filename, content_type=ctype, size=len(data), kind=kind)
    try:
        if kind == "pdf":
            att.pages = read_pdf_pages(data, where)
        elif kind in ("text", "markdown", "csv"):
            att.text = decode_text(data, where)
        elif kind == "html":
            att.text = html_to_text(decode_text(data, where))
        else:
            att.error = f"{ctype} attachment; this reader does not open it"
    except Unreadable as exc:
        att.error = str(exc)
    return att


def _email_text(email: EmailContent, level: int = 0) -> str:
    h = email.headers
    lines = [f"Date: {h.date or h.date_raw or '(none)'}", f"From: {h.sender}", f"To: {h.to}"]
    if h.cc:
        lines.append(f"Cc: {h.cc}")
    if h.reply_to:
        lines.append(f"Reply-To: {h.reply_to}")
    lines.append(f"Subject: {h.subject}")
    if email.attachments:
        lines.append(
            "Attachments: "
            + ", ".join(f"{a.name} ({a.content_type}, {_size(a.size)})" for a in email.attachments)
        )
    label = {"text": "body", "html": "body (converted from HTML)", "none": "body (empty)"}[email.body_format]
    lines += ["", f"--- {label} ---", email.body]
    for i, att in enumerate(email.attachments, start=1):
        title = f"--- attachment {i}: {att.name}"
        if att.error:
            lines += ["", f"{title}: CANNOT READ: {att.error} ---"]
        elif att.email is not None:
            lines += ["", f"{title} (forwarded e-mail) ---", _email_text(att.email, level + 1)]
            lines.append(f"--- end of forwarded e-mail {att.name} ---")
        elif att.pages:
            lines += ["", f"{title} (PDF, {len(att.pages)} page(s)) ---", _pages_text(att.pages)]
        else:
            lines += ["", f"{title} ---", att.text or ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ plain text


def decode_text(data: bytes, name: str) -> str:
    if b"\x00" in data[:4096]:
        raise Unreadable(f"{name}: binary data, not text; it cannot be read here")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return _tidy(data.decode(encoding))
        except UnicodeDecodeError:
            continue
    return _tidy(data.decode("latin-1"))


def _tidy(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


class _HtmlText(HTMLParser):
    BLOCK = frozenset(
        [
            "p",
            "div",
            "br",
            "tr",
            "table",
            "ul",
            "ol",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "blockquote",
            "pre",
            "hr",
            "section",
            "article",
            "header",
            "footer",
        ]
    )
    SKIP = frozenset({"script", "style", "head", "title", "noscript", "template"})
    VOID = frozenset(
        ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.stack: list[tuple[str, bool]] = []  # open tags and whether each hides its content
        self.cells_in_row = 0
        self.href: str | None = None
        self.link_text = ""

    def _hidden(self) -> bool:
        return any(hides for _, hides in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        style = (attributes.get("style") or "").replace(" ", "").lower()
        if tag not in self.VOID:
            self.stack.append((tag, tag in self.SKIP or "display:none" in style))
        if self._hidden():
            return
        if tag in self.BLOCK:
            self.out.append("\n")
        if tag == "tr":
            self.cells_in_row = 0
        elif tag in ("td", "th"):
            if self.cells_in_row:
                self.out.append(" | ")
            self.cells_in_row += 1
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "a":
            href = attributes.get("href")
            self.href = href if href and not href.startswith("mailto:") else None
            self.link_text = ""

    def handle_endtag(self, tag: str) -> None:
        was_hidden = self._hidden()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if was_hidden:
            return
        if tag == "a" and self.href:
            if self.href not in self.link_text:
                self.out.append(f" ({self.href})")
            self.href = None
        if tag in self.BLOCK and tag not in ("tr", "br"):
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self._hidden():
            return
        text = re.sub(r"\s+", " ", data)
        if self.href is not None:
            self.link_text += text
        self.out.append(text)

    def text(self) -> str:
        lines = [" ".join(line.split()) for line in "".join(self.out).split("\n")]
        return _tidy("\n".join(lines)).strip()


def html_to_text(html: str) -> str:
    """HTML e-mail → readable text: blocks become lines, table cells ' | ', hidden parts dropped."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return parser.text()


# -------------------------------------------------------------------------------- helpers


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def _clip(line: str, limit: int = 200) -> str:
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _short_reason(message: str) -> str:
    if NO_TEXT_LAYER in message:
        return "scanned image, no text layer"
    if "damaged" in message:
        return "damaged file"
    return message.split(";")[0][:80]
