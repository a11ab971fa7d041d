"""The one canonical request key: what a person approves, what the intent log records and what the
send check compares are all ``request_key`` of the same method, URL and fields.

Every field is part of the key, every byte of its value, in the order sent (CRLF and LF line ends
are one): a name sent more than once is a form's rows ("description=…&amount=…" row after row), which
the risk rules (``rules.line_items``) and the system read by position, so the same values in another
order — two rows' amounts swapped, or the rows' fields regrouped — are another request. Both
producers write the fields in the page's order: the form prediction (FormData, built by the same
algorithm as the browser's encoding) and the parser of the body the browser sends (urlencoded,
multipart, text/plain lines and JSON members as sent). (A version before this one sorted the
fields, so a key it made differs from this one's for the same request: an approval parked then is
asked again.)

A file part is compared by its name and size (a form prediction cannot read its bytes): the two
producers of field lists — the multipart parser of the network guard and the form prediction of
perception.js — write a file part as ``file_value(name, size)``, "(file NAME, SIZE bytes)", and
write every text value through ``text_value``, which puts "(text) " before a text value that starts
like a file (or like an escaped text). So a page cannot make a text field look like a file, and no
value is ever dropped or collapsed from the comparison: ``normal_fields`` is the one normaliser of
both the key and the network guard's send check (``same_fields``). A field is left out only when a
rule of the risk configuration (``excluded_fields``) names it exactly for that system — e.g. the
ERP's per-page ``csrf_token`` — and the approver is shown that it is left out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

FILE_MARK = "(file "
TEXT_MARK = "(text) "


def file_value(name: str, size: int) -> str:
    """How a producer writes a file part (the JS form prediction writes the same string)."""
    return f"{FILE_MARK}{name}, {size} bytes)"


def text_value(value: str) -> str:
    """How a producer writes a text value: one that starts like a file part or like an escaped text
    gets "(text) " before it, so only a real file part starts with "(file "."""
    return TEXT_MARK + value if value.startswith((FILE_MARK, TEXT_MARK)) else value


def normal_fields(fields: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The fields as the key and the send check compare them: all of them, every value whole (a file
    part is its name and size already), in the order sent (never sorted: the rows of repeated names
    stay paired as approved), CRLF as LF."""
    return [(k, v.replace("\r\n", "\n")) for k, v in fields]


def same_fields(sent: Iterable[tuple[str, str]], approved: Iterable[tuple[str, str]]) -> bool:
    """The approved name/value pairs are exactly the ones sent, in the same order, by ``normal_fields``."""
    return normal_fields(sent) == normal_fields(approved)


def target(url: str) -> str:
    """The URL as the key sees it: without its fragment (never sent)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


def request_key(
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str] = (),
    scope: str = "",
) -> str:
    """The key of exactly this request; ``scope`` (a job id) makes it the key of one job's intent."""
    left_out = set(excluded)
    kept = normal_fields((n, v) for n, v in fields if n not in left_out)
    raw = json.dumps([scope, method.upper(), target(url), kept], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]
