"""The one canonical request key: what a person approves, what the intent log records and what the
send check compares are all ``request_key`` of the same method, URL and fields.

Every field is part of the key (order aside; a file is compared by its name, since a form prediction
cannot read its bytes; CRLF and LF line ends are one). A field is left out only when a rule of the
risk configuration (``excluded_fields``) names it exactly for that system — e.g. the ERP's per-page
``csrf_token`` — and the approver is shown that it is left out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit


def normal_fields(fields: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted((k, "(file)" if v.startswith("(file ") else v.replace("\r\n", "\n")) for k, v in fields)


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
