"""The one canonical request key: what a person approves, what the intent log records and what the
send check compares are all ``request_key`` of the same method, URL and fields.

Every field is part of the key, every byte of its value, in the order sent (CRLF and LF line ends
are one): a name sent more than once is a form's rows ("description=…&amount=…" row after row), which
the risk rules (``rules.line_items``) and the system read by position, so the same values in another
order — two rows' amounts swapped, or the rows' fields regrouped — are another request. Both
producers write the fields in the page's order: the form prediction (FormData, built by the same
algorithm as the browser's encoding) and the parser of the body the browser sends (urlencoded,
multipart, text/plain lines and JSON members as sent).

Keys are versioned (``KEY_VERSION``): a version before this one sorted the fields (``LEGACY``), so a
key it made differs from this one's for the same request, and state it left (intent rows, signed
sends, approvals) is under that key. ``legacy_keys`` gives those keys of a request, and the one rule
for reading such state is here:
- an earlier attempt of a send (is it sent already, or in doubt?) is looked for under every key the
  request has had (``request_keys``): matching more broadly only makes the worker more careful;
- an approval is never honoured by its key alone (sorted, two orders of the same rows are one key:
  the hole this version closed; and no version is hashed into a key, so the key the previous version
  made of a request is today's key of its fields sorted — another pairing of the rows): one that
  stores its request holds only when that request, keyed by today's rule, is the request sent, and
  only when it was stored under a key that request has had (``WorkerGate._covers``); one stored by
  the previous version that does not hold is asked again and the person told why
  (``LEGACY_ASKED_AGAIN``).

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


def _sorted_fields(fields: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The fields as a version before this one compared them (``LEGACY``): sorted, CRLF as LF."""
    return sorted(normal_fields(fields))


KEY_VERSION = 2  # today's rule: the fields in the order sent (``normal_fields``)
LEGACY = 1  # the rule before: the fields sorted (a version before e286939)
_RULES = {LEGACY: _sorted_fields, KEY_VERSION: normal_fields}
LEGACY_ASKED_AGAIN = (
    "the approval given for this request before the upgrade ({who}) was keyed by the previous "
    "version's rule (fields sorted); the request it stored, keyed by today's rule (fields in the "
    "order sent), is not this one (its fields are in another order), so it does not cover this "
    "request and you are asked again: check the order of the rows and values before approving"
)


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
    version: int = KEY_VERSION,
) -> str:
    """The key of exactly this request; ``scope`` (a job id) makes it the key of one job's intent;
    ``version``: by the rule of that version (``LEGACY``: the key a version before this one made)."""
    left_out = set(excluded)
    kept = _RULES[version]((n, v) for n, v in fields if n not in left_out)
    raw = json.dumps([scope, method.upper(), target(url), kept], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def legacy_keys(
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str] = (),
    scope: str = "",
) -> list[str]:
    """The keys earlier versions made of this request that today's (``request_key``) is not, oldest
    rule first: where state they left for it is stored. For finding an earlier attempt of a send
    only; never an approval's key (``WorkerGate._covers``)."""
    fields, excluded = list(fields), list(excluded)
    now = request_key(method, url, fields, excluded=excluded, scope=scope)
    made = request_key(method, url, fields, excluded=excluded, scope=scope, version=LEGACY)
    return [made] if made != now else []


def request_keys(
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str] = (),
    scope: str = "",
) -> list[str]:
    """Every key this request has had, oldest rule first, today's last: an earlier attempt of it
    (an intent row, a signed send) is under any of them."""
    fields, excluded = list(fields), list(excluded)
    now = request_key(method, url, fields, excluded=excluded, scope=scope)
    return [*legacy_keys(method, url, fields, excluded=excluded, scope=scope), now]


def attempt_keys(
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[Iterable[str]],
    scope: str = "",
) -> set[str]:
    """Every key an earlier attempt of this request (an intent row, a signed send) may be under:
    every key it has had (``request_keys``) under each of the sets of left-out fields given — the
    rules' in force now and the one an earlier attempt recorded it was keyed with (an ordinary edit
    of ``excluded_fields`` between two attempts changes the key of the same bytes). For finding an
    earlier attempt of a send only (matching more broadly only makes the worker more careful); never
    an approval's key."""
    fields = list(fields)
    return {k for each in excluded for k in request_keys(method, url, fields, excluded=each, scope=scope)}


def earlier_attempt(
    stored_key: str,
    stored: tuple[str, str, Iterable[tuple[str, str]]],
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str],
    scope: str = "",
) -> bool:
    """Whether an attempt stored under ``stored_key`` with its ``stored`` method, URL and fields (an
    intent row) is an earlier attempt of this request, whatever the rules left out when it was keyed:
    the same method and address, the same field names in the same order, and every value that differs
    left out by the rules in force now (``excluded``) or by the ones it was keyed with — a set its own
    key proves (it is a key, ``request_keys``, of what it stored with those fields left out: none,
    today's, the differing ones, or both). For finding an earlier attempt of a send only."""
    s_method, s_url, s_fields = stored[0], stored[1], normal_fields(stored[2])
    now, fields = set(excluded), normal_fields(fields)
    if s_method.upper() != method.upper() or target(s_url) != target(url) or len(s_fields) != len(fields):
        return False
    if any(a[0] != b[0] for a, b in zip(s_fields, fields, strict=True)):
        return False
    differ = {a[0] for a, b in zip(s_fields, fields, strict=True) if a[1] != b[1]}
    for left_out in (set(), now, differ, differ | now):
        if differ <= left_out | now and stored_key in request_keys(
            s_method, s_url, s_fields, excluded=left_out, scope=scope
        ):
            return True
    return False
