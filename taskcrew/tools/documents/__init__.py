"""Document reading for the file_reader: one module per format, OCR, limits and caching.

    files = SandboxFiles(sandbox / "inbox")
    files.read_file("scans/SCAN_0001.pdf")      # ToolResult: text (OCR'd and marked), or why not

Modules: ``confine`` (paths), ``formats`` (which parser reads what), ``pdf``, ``images``, ``mail``,
``text`` (encodings), ``html``, ``ocr`` (tesseract), ``ocrlines`` (words → lines → values, each with
its own confidence), ``checksums`` (IBAN, VAT ids), ``pixels`` (skew, orientation, logos),
``specimens`` (rendered test pictures), ``limits`` (constants), ``worker`` (the child process that
parses under time and memory limits), ``reader`` (``SandboxFiles``: list, read, search, with the
cache), ``models`` (result types). See docs/documents.md.

For an approval page: ``files.provenance.reading(value)`` is the :class:`OcrReading` of a value OCR
read (file, confidence, uncertain, checksum), or None.
"""

from taskcrew.tools.documents.confine import SECRET_PATTERNS, confine, is_secret_name, matches_private
from taskcrew.tools.documents.formats import EXTENSION_KINDS, file_kind, parse_bytes
from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.limits import MAX_FILE_BYTES
from taskcrew.tools.documents.mail import CONTENT_TYPE_KINDS, MAX_EMAIL_DEPTH, email_summary, read_email
from taskcrew.tools.documents.models import (
    NO_TEXT_LAYER,
    OCR_MARK,
    AttachmentContent,
    EmailContent,
    EmailHeaders,
    EmailSummary,
    FileAccessError,
    FileContent,
    FileEntry,
    FileKind,
    FileListing,
    FileMissing,
    OcrReading,
    OcrValue,
    PageText,
    PathRefused,
    SearchHit,
    SearchResult,
    TooComplex,
    Unreadable,
)
from taskcrew.tools.documents.pdf import read_pdf_pages
from taskcrew.tools.documents.reader import SandboxFiles
from taskcrew.tools.documents.text import decode_text

__all__ = [
    "CONTENT_TYPE_KINDS",
    "EXTENSION_KINDS",
    "MAX_EMAIL_DEPTH",
    "MAX_FILE_BYTES",
    "NO_TEXT_LAYER",
    "OCR_MARK",
    "SECRET_PATTERNS",
    "AttachmentContent",
    "EmailContent",
    "EmailHeaders",
    "EmailSummary",
    "FileAccessError",
    "FileContent",
    "FileEntry",
    "FileKind",
    "FileListing",
    "FileMissing",
    "OcrReading",
    "OcrValue",
    "PageText",
    "PathRefused",
    "SandboxFiles",
    "SearchHit",
    "SearchResult",
    "TooComplex",
    "Unreadable",
    "confine",
    "decode_text",
    "email_summary",
    "file_kind",
    "html_to_text",
    "is_secret_name",
    "matches_private",
    "parse_bytes",
    "read_email",
    "read_pdf_pages",
]
