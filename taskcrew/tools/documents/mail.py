"""E-mail (.eml): headers, the text body (HTML converted to text) and attachments, read inline.

Attachments are read by the same per-format parsers as files (PDFs, images by OCR, text);
forwarded messages are read recursively up to :data:`MAX_EMAIL_DEPTH`.
"""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from typing import Literal

from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.models import (
    AttachmentContent,
    EmailContent,
    EmailHeaders,
    EmailSummary,
    Unreadable,
    tidy,
)
from taskcrew.tools.documents.visibility import StylesTooComplex, own_text

MAX_EMAIL_DEPTH = 3
CONTENT_TYPE_KINDS: dict[str, str] = {
    "application/pdf": "pdf",
    "message/rfc822": "email",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/csv": "csv",
    "text/html": "html",
    "image/png": "image",
    "image/jpeg": "image",
    "image/tiff": "image",
}


def _parse_email(data: bytes) -> EmailMessage:
    msg = BytesParser(policy=policy.default).parsebytes(data)
    assert isinstance(msg, EmailMessage)
    return msg


ADDRESS_HEADERS = frozenset({"from", "sender", "reply-to", "to", "cc", "bcc"})


def _header(msg: EmailMessage, name: str) -> str:
    if name.lower() in ADDRESS_HEADERS:
        return _address_header(msg, name)
    try:
        value = msg.get(name)
        if value is None:
            return ""
        return " ".join(str(value).split())
    except Exception:  # undecodable header: show it raw
        return str(msg.get_all(name, [""])[0])


def _address_header(msg: EmailMessage, name: str) -> str:
    """An address header as the mail gives it: the parser's rendering (RFC 2047 names decoded) only
    where it read the header as written; else the header's own text, unfolded. The parser repairs
    what it cannot read, and its repair is not what the mail says: ``billing@northwind.example
    <ar@evil.example>`` renders as ``billing@northwind.example`` (the display name taken for the
    address, the address the mail came from dropped), ``Northwind <a@northwind.example>
    <ar@evil.example>`` as the first address alone, and a comment (``(ar@evil.example)``) is left
    out. So a header with a defect, or with a comment, is kept as written, and the one sender check
    (``routines.files.sender_domain``) reads it as an unclear sender. Several headers of one name
    (two ``From`` lines) are all kept, joined by ", ": neither is the mail's sender alone."""
    kept = []
    for key, raw in msg.raw_items():
        if key.lower() != name.lower():
            continue
        written = " ".join(_text(str(raw)).split())
        try:
            parsed = msg.policy.header_fetch_parse(key, raw)
            clean = not getattr(parsed, "defects", True) and "(" not in written
            kept.append(" ".join(str(parsed).split()) if clean else written)
        except Exception:  # a header the parser cannot read at all: as written
            kept.append(written)
    return ", ".join(k for k in kept if k)


TRANSPORT_LIMITS = (8, 2000)
"""Of a delivery header (Return-Path, Authentication-Results): the first this many, this many
characters each — the topmost, the last server's (the company's own), come first."""


def _transport(msg: EmailMessage, name: str) -> list[str]:
    """Each ``name`` header as written, unfolded, bounded (``TRANSPORT_LIMITS``): what the delivery
    says about the sender (the envelope sender, the receiving server's SPF/DKIM/DMARC verdicts),
    kept as text for the sender check and the person to read."""
    count, chars = TRANSPORT_LIMITS
    kept = [" ".join(_text(str(raw)).split()) for key, raw in msg.raw_items() if key.lower() == name.lower()]
    return [k[:chars] for k in kept if k][:count]


def _text(raw: str) -> str:
    """A raw header's text: bytes that are not UTF-8 (kept by the parser as surrogates) as U+FFFD."""
    return raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


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


def check_email_bytes(data: bytes, name: str) -> None:
    """An empty file or one without a single header line is not an e-mail: say so."""
    head = data.lstrip()[:4096]
    if not head:
        raise Unreadable(f"{name}: the file is empty (0 bytes of e-mail); ask for a new copy")
    first = head.split(b"\n", 1)[0]
    if b":" not in first and not first.startswith(b"From "):
        raise Unreadable(f"{name}: not an e-mail (no header lines at the start); ask a human")


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
    check_email_bytes(data, name)
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
        return_path=", ".join(_transport(msg, "Return-Path")) or None,
        authentication_results=_transport(msg, "Authentication-Results"),
    )
    body_part = msg.get_body(preferencelist=("html", "plain"))
    body = ""
    body_format: Literal["text", "html", "none"] = "none"
    if isinstance(body_part, EmailMessage):
        text = _part_text(body_part)
        if body_part.get_content_subtype() == "html":
            try:
                body, body_format = html_to_text(text), "html"
            except StylesTooComplex as exc:
                raise StylesTooComplex(f"{name}: {exc}") from None
        else:
            body, body_format = own_text(tidy(text)), "text"  # never spelling a reader's mark
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
    from taskcrew.tools.documents.formats import file_kind, parse_bytes

    ctype = part.get_content_type()
    filename = part.get_filename() or f"(unnamed {ctype})"
    kind = file_kind(filename)
    if kind == "other":
        kind = CONTENT_TYPE_KINDS.get(ctype, "other")  # type: ignore[assignment]
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
    if kind == "other":
        att.error = f"{ctype} attachment; this reader does not open it"
        return att
    try:
        content = parse_bytes(data, where, kind, nested=True)
        att.pages, att.text = content.pages, content.text
    except Unreadable as exc:
        att.error = str(exc)
    return att
