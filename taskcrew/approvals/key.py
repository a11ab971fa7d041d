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
  request has had (``request_keys``), and what is found is judged by content (``earlier_attempt``
  for an intent row, ``earlier_send`` for a signed send, which stores no fields): a row found under a
  legacy key counts only when what it stored is this request in today's order; a row that cannot be
  told from it (``POSSIBLY``: an old row whose key proves no set of left-out fields) counts too
  (``counts_as_attempt``: held, a person asked), on every surface (the intent log, ``jobs.liveness``);
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
from functools import lru_cache
from itertools import combinations
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


def request_keys(
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str] = (),
    scope: str = "",
) -> list[str]:
    """Every key this request has had, oldest rule first, today's last (a rule that makes today's key
    again is not repeated): an earlier attempt of it (an intent row, a signed send) is under any of
    them."""
    fields, excluded = list(fields), list(excluded)
    made = [
        request_key(method, url, fields, excluded=excluded, scope=scope, version=v) for v in sorted(_RULES)
    ]
    return [k for i, k in enumerate(made) if k not in made[i + 1 :]]


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
    return request_keys(method, url, fields, excluded=excluded, scope=scope)[:-1]


def earlier_send(
    sent: tuple[str, str, str, Iterable[str] | None],
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str],
) -> bool:
    """The same rule (``earlier_attempt``) for a signed send, which stores its key, method, address and
    the fields left out of its key (``sent``: key, method, URL, that set or None where it recorded
    none), not its fields: it is an earlier attempt of this request when its key is a key this
    request has had (``request_keys``) under the set it recorded or today's rules' set — or, where
    today's rules leave out a field of this request its key kept (``excluded_fields`` widened since),
    when it went to the same address by the same method: its key holds a value nobody can compare
    now, so it cannot be told from this request and counts as one (a person is asked; a send is
    never made a first attempt by a rules edit). For finding an earlier attempt of a send only."""
    key, s_method, s_url, recorded = sent
    fields, now = list(fields), set(excluded)
    sets = [now] if recorded is None else [now, set(recorded)]
    if any(key in request_keys(method, url, fields, excluded=each) for each in sets):
        return True
    if recorded is None or s_method.upper() != method.upper() or target(s_url) != target(url):
        return False
    return bool((now - set(recorded)) & {n for n, _ in fields})


PROVABLE = 8  # names tried at most when a stored key must prove which fields it left out (2**8 keys)

POSSIBLY = None  # ``earlier_attempt``: cannot be told from this request, the same method, address and names
POSSIBLY_WHY = (
    "this job's record of that attempt was written by an earlier version and does not show which "
    "fields were left out of its key, so it cannot be told from this request: it may be exactly this"
)


def keyed_with(
    stored_key: str,
    stored: tuple[str, str, Iterable[tuple[str, str]]],
    names: Iterable[str],
    *,
    scope: str = "",
) -> set[str] | None:
    """The set of left-out fields ``stored_key`` proves it was made with (an intent row written before
    rows recorded theirs): a subset of ``names`` (the fields the rules leave out today and those whose
    values differ from the request at hand) under which it is a key (``request_keys``, any version)
    of what the row stored. None: no such subset (or too many names to try). Each proof is made once
    (``_proof``, remembered: the same row read again by the next send, leg or listing is not hashed
    again)."""
    fields = tuple((str(n), str(v)) for n, v in stored[2])
    tried = tuple(sorted(set(names) & {n for n, _ in fields}))
    if len(tried) > PROVABLE:
        return None
    found = _proof(stored_key, stored[0], stored[1], fields, tried, scope)
    return None if found is None else set(found)


@lru_cache(maxsize=1024)
def _proof(
    stored_key: str,
    method: str,
    url: str,
    fields: tuple[tuple[str, str], ...],
    tried: tuple[str, ...],
    scope: str,
) -> frozenset[str] | None:
    """``keyed_with`` of one stored row and the names to try (a pure function of them: remembered)."""
    for size in range(len(tried) + 1):
        for left in combinations(tried, size):
            if stored_key in request_keys(method, url, fields, excluded=left, scope=scope):
                return frozenset(left)
    return None


def earlier_attempt(
    stored: tuple[str, str, Iterable[tuple[str, str]]],
    method: str,
    url: str,
    fields: Iterable[tuple[str, str]],
    *,
    excluded: Iterable[str],
    recorded: Iterable[str] | None = None,
    stored_key: str = "",
    scope: str = "",
) -> bool | None:
    """The one rule for "is this stored attempt (an intent row: its ``stored`` method, URL and fields)
    an earlier attempt of this request": by content, never by a guessed key — the same method, the
    same address (``target``), the same field names in the same order, and every value that differs
    left out by the fields the attempt recorded it left out of its key (``recorded``) or by the ones
    today's rules leave out (``excluded``). An edit of ``excluded_fields`` between two attempts (a
    token or timestamp added to the rule, a rule narrowed) does not hide one; the same rows paired
    otherwise are another request, whatever key it was found under. A row that recorded no set (written
    before rows recorded it) is read by the set its key proves (``keyed_with``, ``stored_key``).

    None (``POSSIBLY``): it proves none (an old rule left out a field whose value has not changed and
    today's rules no longer leave it out, or too many names to try), so it cannot be told from this
    request — and it is the same method, address and field names: possibly this request. Every reader
    counts it as an earlier attempt (``counts_as_attempt``): a send in doubt is held and a person
    asked, told why (``POSSIBLY_WHY``); never sent as a first attempt, never taken for "already sent"
    without a word.
    False: another request. For finding an earlier attempt of a send only."""
    s_method, s_url, s_fields = stored[0], stored[1], normal_fields(stored[2])
    now, fields = set(excluded), normal_fields(fields)
    if s_method.upper() != method.upper() or target(s_url) != target(url) or len(s_fields) != len(fields):
        return False
    if any(a[0] != b[0] for a, b in zip(s_fields, fields, strict=True)):
        return False
    differ = {a[0] for a, b in zip(s_fields, fields, strict=True) if a[1] != b[1]}
    if differ <= now:  # the same request by today's rules, whatever it was keyed with
        return True
    left = (
        set(recorded) if recorded is not None else keyed_with(stored_key, stored, differ | now, scope=scope)
    )
    if left is None:
        return POSSIBLY
    return differ <= left | now


def counts_as_attempt(said: bool | None) -> bool:
    """Whether ``earlier_attempt``'s answer makes the stored attempt an earlier attempt of the request:
    True, or ``POSSIBLY`` (held, a person asked); only False (another request) does not."""
    return said is not False
