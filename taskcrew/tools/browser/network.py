"""The network layer of the policy: every request the browser context makes passes ``NetworkGuard``.

- Requests to hosts off the allow-list, blocked paths and non-http(s) schemes are aborted.
- Document requests are fetched with redirects off, so a redirect to a foreign host is caught before
  the browser follows it (Playwright does not route redirect hops).
- Data-changing requests (not GET/HEAD/OPTIONS) pass only when the act layer armed an approval for
  exactly that method, URL and form body, or when the policy allows them (login, or the human
  approves a script's fetch/XHR); in read-only mode they are refused. Everything else is aborted and
  reported — an unapproved POST never reaches the server.
- No WebSocket is opened: what a page sends over one cannot be shown to an approver as a request.
- It also tracks in-flight requests (for settling), main-document HTTP statuses and dialogs.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote_to_bytes, urljoin

from taskcrew.approvals.key import TEXT_MARK, file_value, same_fields, text_value
from taskcrew.approvals.rules import NOT_EXACT
from taskcrew.tools.human import FieldValue
from taskcrew.tools.intents import Outgoing, SendOutcome, outgoing
from taskcrew.tools.intents import fetcher as intent_fetcher
from taskcrew.tools.policy import SAFE_METHODS, Policy, PolicyDecision, is_token_field, strip_fragment
from taskcrew.tools.submissions import SubmissionResult, classify
from taskcrew.tools.vault import Vault

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Dialog, Page, Request, Response, Route, WebSocketRoute

TRACKED_TYPES = frozenset({"document", "xhr", "fetch", "eventsource"})
MAX_REDIRECTS = 10
WEBSOCKET_REFUSED = "what a page sends over a WebSocket cannot be shown for approval, so none is opened"


@dataclass
class ArmedApproval:
    """A submission the act layer approved; the network layer lets exactly this one through."""

    method: str
    url: str
    fields: list[tuple[str, str]] | None
    click_point: str | None = None  # an image submit button's NAME. ("" unnamed): its x and y are where
    labels: dict[str, str] = field(default_factory=dict)  # the chosen options' text, as the approver saw


@dataclass
class NetworkState:
    pending: set[int] = field(default_factory=set)
    finished: int = 0  # tracked requests done so far: a page acts on a response after it arrives
    armed: list[ArmedApproval] = field(default_factory=list)
    blocked: list[PolicyDecision] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    main_status: tuple[int, str, str] | None = None
    handler_errors: list[BaseException] = field(default_factory=list)
    new_pages: list[Page] = field(default_factory=list)
    submissions: list[SubmissionResult] = field(default_factory=list)
    page: tuple[str, str] = ("", "")  # the last main document the browser was given: (URL, HTML)
    landings: dict[str, Any] = field(default_factory=dict)  # a submission's redirect target, read once

    def reset_for_call(self) -> None:
        self.submissions.clear()
        self.landings.clear()
        self.blocked.clear()
        self.notes.clear()
        self.dialogs.clear()
        self.main_status = None
        self.handler_errors.clear()


def request_fields(request: Request, vault: Vault) -> list[FieldValue]:
    """The body of a request as name/value pairs, secrets masked (for the approval prompt)."""
    raw = _raw_fields(request)
    return [FieldValue(name=vault.redact_stored(k), value=vault.redact_stored(v)) for k, v in raw]


def _shown_fields(sent: Outgoing) -> list[FieldValue]:
    """The fields of the recorded request (secrets redacted) as the approver is shown them."""
    return [FieldValue(name=n, value=v) for n, v in sent.fields]


def _raw_fields(request: Request) -> list[tuple[str, str]]:
    """The body of a request as name/value pairs, as ``body_fields`` reads it."""
    try:
        body = request.post_data_buffer
    except Exception as exc:  # the browser could not hand the body over: never taken for "no body"
        return [(BODY_FIELD, f"{NOT_EXACT}the browser did not hand over the body: {_plain(str(exc))}) ")]
    return body_fields(request.headers.get("content-type"), body or b"")


# ------------------------------------------------------------------ request bodies
# One parser per body, chosen by the exact media type of its Content-Type (the type/subtype before
# any parameter, in any case), as the system that receives it reads it:
#   application/x-www-form-urlencoded   name=value pairs (percent-decoded bytes, in the declared
#                                        charset, UTF-8 when none is declared)
#   multipart/form-data                  its parts, read exactly (a file part as ``file_value``)
#   text/plain                           a <form enctype="text/plain">: name=value lines, each ended
#                                        by CRLF; other text with no "=", no separator of fields
#                                        (: , ; | tab) and no digit (any script's), not beginning
#                                        like JSON or markup: one text, named ``BODY_FIELD``
#   application/json, */*+json           every leaf a field named by its path ("payment.amount",
#                                        "lines[0].amount"), so the risk rules judge nested values
# What the parser cannot account for exactly — a body of another or an unreadable type, a JSON body
# with a repeated key or a syntax error, a multipart body it cannot split exactly, text a system may
# read as fields (name=value pairs not in a form's lines, JSON, markup), bytes that are not valid in
# the declared charset — is shown with the reason in front (``NOT_EXACT``), its bytes that do not
# decode escaped as \xNN (never replaced), and the risk rules flag it (``approvals.rules.assess``):
# checked by hand, by two people where the rule is on.
# The fields are what the approver is shown, what the rules judge and what the key covers.

BODY_FIELD = "(body)"  # the name of a body the parser could not read into fields (or a plain text)
SHOWN_BODY = 4000  # characters of an unread body shown; the rest is named by its size and digest
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CHARSETS = re.compile(r"utf-8|ascii|iso8859-\d+|cp125\d")  # Python's names of the ones read
_NAME = re.compile(r"[^\W\d][\w-]*")  # a JSON key written as .key in a path; any other as ["key"]
_SEPARATORS = re.compile(r"[:,;|\t]")  # what sets a name from its value, or one value from the next
_SCALE = 40  # a JSON number with an exponent is written out in full up to this many places


class _NotExact(ValueError):
    """The body cannot be read exactly as the system will read it; the message says why."""


class _Object(list[tuple[str, Any]]):
    """A JSON object, its members in the order sent."""


class _Number(str):
    """A JSON number, its text as sent."""


def body_fields(content_type: str | None, body: bytes) -> list[tuple[str, str]]:
    """A request body as name/value pairs: a file part as ``file_value`` (marked here, by the
    parser), every text value through ``text_value`` (so a text cannot pass for a file; see
    approvals/key.py), and what cannot be read exactly marked ``NOT_EXACT`` (see above)."""
    if not body:
        return []
    codec = "utf-8"
    try:
        media, params = _media_type(content_type or "")
        codec = _codec(params)
        if media == "application/x-www-form-urlencoded":
            return _urlencoded(body, codec)
        if media == "multipart/form-data":
            return _multipart(body, params, codec)
        if media == "text/plain":
            return _plain_text(body, codec)
        if media == "application/json" or media.endswith("+json"):
            if codec != "utf-8":
                raise _NotExact(f"a JSON body declared as {params['charset']}, not UTF-8")
            return _json_fields(body)
        raise _NotExact(f"a body of type {media}, which the gate does not read")
    except _NotExact as why:
        return [(BODY_FIELD, _unread(str(why), body, codec))]


def _media_type(header: str) -> tuple[str, dict[str, str]]:
    """The media type (lower case) and parameters of a Content-Type header. A parameter that cannot
    be read is passed over (as servers do), but a charset or boundary that is unreadable or given
    twice makes the body unreadable: a server may take either."""
    media, _, rest = header.partition(";")
    kind, slash, sub = media.strip().partition("/")
    if not (slash and _TOKEN.fullmatch(kind) and _TOKEN.fullmatch(sub)):
        shown = repr(header) if header.strip() else "none"
        raise _NotExact(f"a body whose Content-Type ({_plain(shown)}) names no one media type")
    params: dict[str, str] = {}
    for piece in _split_params(rest):
        name, eq, value = piece.partition("=")
        name = name.strip().lower()
        if name not in ("charset", "boundary"):
            continue
        value = value.strip()
        if value.startswith('"') and len(value) > 1 and value.endswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        if not eq or not value or name in params:
            raise _NotExact(f"a Content-Type whose {name} cannot be read as one value")
        params[name] = value
    return f"{kind}/{sub}".lower(), params


def _split_params(text: str) -> list[str]:
    """The ";"-separated parameters of a Content-Type, a quoted string kept whole."""
    pieces, current, quoted, escaped = [], "", False, False
    for char in text:
        if char == ";" and not quoted:
            pieces.append(current)
            current = ""
            continue
        current += char
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
    return [*pieces, current]


def _codec(params: dict[str, str]) -> str:
    """Python's codec for the declared charset (UTF-8 when none is declared); one the gate does not
    read (an unknown name, or not a plain one-byte or UTF-8 encoding) makes the body unreadable."""
    declared = params.get("charset")
    if declared is None:
        return "utf-8"
    try:
        name = codecs.lookup(declared).name
    except LookupError:
        name = ""
    if not _CHARSETS.fullmatch(name):
        raise _NotExact(f"a body in the charset {_plain(declared)!r}, which the gate does not read")
    return name


def _plain(text: str) -> str:
    """A reason's text without the parentheses that end a ``NOT_EXACT`` mark."""
    return text.replace("(", "[").replace(")", "]")


def _decoded(raw: bytes, codec: str) -> tuple[str, bool]:
    """``raw`` as text and whether it decoded exactly; when not, every byte that does not decode is
    written \\xNN and every backslash \\\\ (so different bytes never read the same)."""
    with contextlib.suppress(UnicodeDecodeError):
        return raw.decode(codec), True
    text = raw.decode(codec, "surrogateescape")
    escaped = "".join(
        f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else "\\\\" if c == "\\" else c for c in text
    )
    return escaped, False


def _bytes_reason(codec: str) -> str:
    return f"bytes not valid {codec} shown as \\xNN, a backslash as \\\\"


def _field_text(raw: bytes, codec: str, *, name: bool = False) -> str:
    """One name or text value: decoded exactly (a value through ``text_value``; one that starts like
    a ``NOT_EXACT`` mark gets "(text) " first, so no text passes for the parser's own mark), or
    marked ``NOT_EXACT`` with its bytes escaped."""
    text, exact = _decoded(raw, codec)
    if not exact:
        return f"{NOT_EXACT}{_bytes_reason(codec)}) {text}"
    return _own_text(text, name=name)


def _own_text(text: str, *, name: bool = False) -> str:
    if text.startswith(NOT_EXACT):
        return TEXT_MARK + text
    return text if name else text_value(text)


def _unread(why: str, body: bytes, codec: str) -> str:
    """What is shown (and keyed) of a body that could not be read: the reason, then its text, bytes
    that do not decode escaped; a long one cut, named by its size and SHA-256 (the key still changes
    with every byte)."""
    try:
        text, exact = body.decode(codec), True
    except UnicodeDecodeError:  # escaped in its first bytes only (it may be large)
        text, exact = _decoded(body[:SHOWN_BODY], codec)[0], False
    reason = why if exact else f"{why}; {_bytes_reason(codec)}"
    if len(text) > SHOWN_BODY or len(body) > SHOWN_BODY:
        digest = hashlib.sha256(body).hexdigest()
        text = f"{text[:SHOWN_BODY]}… [{len(body)} bytes in all, SHA-256 {digest}]"
    return f"{NOT_EXACT}{_plain(reason)}) {text}"


def _urlencoded(body: bytes, codec: str) -> list[tuple[str, str]]:
    """name=value pairs split on "&", "+" as a space, percent-decoded to bytes, then decoded."""
    out = []
    for pair in body.split(b"&"):
        if not pair:
            continue
        name, _, value = pair.partition(b"=")
        out.append((_field_text(_unquote(name), codec, name=True), _field_text(_unquote(value), codec)))
    return out


def _unquote(raw: bytes) -> bytes:
    return unquote_to_bytes(raw.replace(b"+", b" "))


def _plain_text(body: bytes, codec: str) -> list[tuple[str, str]]:
    """A <form enctype="text/plain"> (each field "name=value" and CRLF) as its fields; any other text
    that no system reads as fields or numbers (no "=", separator or digit, not beginning like JSON or
    markup once invisible format characters are left out) as one text; the rest is unread."""
    lines = body.split(b"\r\n")
    if lines[-1] == b"" and all(b"=" in line for line in lines[:-1]):
        pairs = [line.partition(b"=") for line in lines[:-1]]
        return [(_field_text(k, codec, name=True), _field_text(v, codec)) for k, _, v in pairs]
    if b"=" in body:
        raise _NotExact(
            "a text/plain body of name=value pairs, not a form's CRLF lines: a system may read them"
        )
    text, exact = _decoded(body, codec)
    if not exact:
        raise _NotExact("a text/plain body")  # its bytes escaped, the reason said by ``_unread``
    shown = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")  # a BOM, a zero-width space
    if shown.lstrip()[:1] in ("{", "[", "<"):
        raise _NotExact("a text/plain body a system may read as JSON or markup")
    if (sep := _SEPARATORS.search(shown)) is not None:  # "amount: 98000.00", "BILL-9;98000.00"
        raise _NotExact(
            f"a text/plain body with {sep.group()!r} in it, which a system may read as the fields of "
            "YAML, name-value lines, CSV or TSV that the amount and bank rules cannot judge"
        )
    if any(ch.isdigit() for ch in shown):  # 98000, 1e5, 0xFFFF, 9_8_0, ٩٨٠٠٠: no rule reads them here
        raise _NotExact("a text/plain body with a digit in it: a number a system may read as an amount")
    return [(BODY_FIELD, _own_text(text))]


_DISPOSITION = re.compile(r'form-data((?:;[ \t]*(?:name|filename)="[^"\r\n]*")*)[ \t]*', re.I)
_DISPOSITION_PARAM = re.compile(r'(name|filename)="([^"\r\n]*)"', re.I)


def _multipart(body: bytes, params: dict[str, str], codec: str) -> list[tuple[str, str]]:
    """The parts of a multipart/form-data body, read exactly as a browser writes them: delimiter
    lines with nothing after them, each part's headers a Content-Disposition form-data with a name
    (and a filename for a file) and at most a Content-Type; anything else is unread."""
    boundary = params.get("boundary")
    if not boundary:
        raise _NotExact("a multipart body without a boundary")
    delimiter = b"--" + boundary.encode("utf-8")
    close = b"\r\n" + delimiter + b"--"
    if body in (delimiter + b"--", delimiter + b"--\r\n"):  # a form with no field to send
        return []
    if not body.startswith(delimiter + b"\r\n") or not (
        body.endswith(close) or body.endswith(close + b"\r\n")
    ):
        raise _NotExact("a multipart body that does not begin and end with its boundary")
    inner = body[len(delimiter) + 2 : body.rindex(close)]
    parts = inner.split(b"\r\n" + delimiter + b"\r\n")
    if inner.count(b"\r\n" + delimiter) != len(parts) - 1:  # a boundary line a server may read otherwise
        raise _NotExact("a multipart body with its boundary inside a part")
    out: list[tuple[str, str]] = []
    for part in parts:
        head, sep, content = part.partition(b"\r\n\r\n")
        if not sep:
            raise _NotExact("a multipart part without a blank line after its headers")
        try:
            lines = head.decode("utf-8").split("\r\n")
        except UnicodeDecodeError:
            raise _NotExact("a multipart part whose headers are not UTF-8") from None
        headers: dict[str, str] = {}
        for line in lines:
            key, colon, value = line.partition(":")
            key = key.lower()
            if not colon or key not in ("content-disposition", "content-type") or key in headers:
                raise _NotExact(f"a multipart part with the header line {_plain(line[:80])!r}")
            headers[key] = value.strip()
        disposition = _DISPOSITION.fullmatch(headers.get("content-disposition", ""))
        found = _DISPOSITION_PARAM.findall(disposition.group(1)) if disposition else []
        names = [k.lower() for k, _ in found]
        if "name" not in names or len(set(names)) != len(names):
            raise _NotExact("a multipart part without one name in its Content-Disposition")
        given = {k.lower(): v for k, v in found}
        name = _own_text(given["name"], name=True)
        if "filename" in given:  # a file part: marked by the parser, never by how a value looks
            out.append((name, file_value(given["filename"], len(content))))
            continue
        part_codec = codec
        if "content-type" in headers:
            part_codec = _codec(_media_type(headers["content-type"])[1])
        out.append((name, _field_text(content, part_codec)))
    return out


def _json_fields(body: bytes) -> list[tuple[str, str]]:
    """A JSON body (UTF-8, RFC 8259): every leaf one field named by its path from the top:
    ``payment.amount``, ``lines[0].amount``, ``["odd key"]`` for a key that is no plain name;
    strings through ``text_value``, numbers as sent (one with an exponent written out), true, false,
    null; an empty object or array as ``{}`` / ``[]``; a top-level scalar as ``(value)``."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotExact("a JSON body that is not valid UTF-8") from None

    def members(pairs: list[tuple[str, Any]]) -> _Object:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _NotExact(
                    f"a JSON body that gives the key {json.dumps(key)} twice: a system may take either"
                )
            seen.add(key)
        return _Object(pairs)

    def constant(word: str) -> None:
        raise _NotExact(f"a JSON body with {word}, which is not JSON")

    try:
        data = json.loads(
            text, object_pairs_hook=members, parse_float=_Number, parse_int=_Number, parse_constant=constant
        )
        out: list[tuple[str, str]] = []
        _flatten(data, "", out)
    except json.JSONDecodeError as exc:
        raise _NotExact(f"not valid JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:
        raise _NotExact("a JSON body nested too deeply to read") from None
    return out


def _flatten(value: Any, path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, _Object) and value:
        for key, item in value:
            _check_text(key)
            step = (
                (f".{key}" if path else key)
                if _NAME.fullmatch(key)
                else f"[{json.dumps(key, ensure_ascii=False)}]"
            )
            _flatten(item, path + step, out)
        return
    if isinstance(value, list) and not isinstance(value, _Object) and value:
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out)
        return
    out.append((path or "(value)", _leaf(value)))


def _leaf(value: Any) -> str:
    if isinstance(value, _Number):
        if "e" not in value.lower():
            return str(value)
        number = Decimal(value)
        if abs(number.adjusted()) > _SCALE:
            raise _NotExact(f"a JSON number ({_plain(value)}) too large or too small to show exactly")
        return format(number, "f")
    if isinstance(value, str):
        _check_text(value)
        return _own_text(value)
    if isinstance(value, _Object):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return json.dumps(value)  # true, false, null


def _check_text(text: str) -> None:
    if any("\ud800" <= c <= "\udfff" for c in text):
        raise _NotExact("a JSON string with a lone surrogate escape: systems read it differently")


class NetworkGuard:
    """Installed on a browser context; runs on the browser thread (inside Playwright's dispatch)."""

    def __init__(self, policy: Policy, vault: Vault, human_wait: Any, navigation_timeout_ms: int) -> None:
        self.policy = policy
        self.vault = vault
        self.state = NetworkState()
        self._human_wait = human_wait
        self._nav_timeout = navigation_timeout_ms
        self._context: BrowserContext | None = None

    # ------------------------------------------------------------ wiring
    def install_context(self, context: BrowserContext) -> None:
        """Route every request and every WebSocket."""
        self._context = context
        self.policy.page_fetch = intent_fetcher(context, self.policy)  # the risk rules read a record's amount
        context.route("**/*", self.route)
        context.route_web_socket(lambda _url: True, self._refuse_websocket)

    def _refuse_websocket(self, ws: WebSocketRoute) -> None:
        """No WebSocket is opened, to any host: what a page sends over one cannot be shown to an
        approver as a request. Closed before it connects and recorded as a refused request (one to a
        host off the allow-list as blocked there); one a page opens around this route (from a
        worker) is refused by the gatekeeper proxy."""
        url = self.vault.redact(ws.url)
        self.state.blocked.append(self.policy.refuse_websocket(url, WEBSOCKET_REFUSED))
        self.state.notes.append(f"a WebSocket to {url} was refused: {WEBSOCKET_REFUSED}")
        ws.close(code=1008, reason="blocked by policy")

    def install_page(self, page: Page) -> None:
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_done)
        page.on("response", self._on_response)
        page.on("dialog", self._on_dialog)

    def arm(
        self,
        method: str,
        url: str,
        fields: list[tuple[str, str]] | None,
        click_point: str | None = None,
        labels: dict[str, str] | None = None,
    ) -> None:
        self.state.armed.append(
            ArmedApproval(method.upper(), strip_fragment(url), fields, click_point, labels or {})
        )

    def disarm(self) -> None:
        self.state.armed.clear()

    # ------------------------------------------------------------ events
    def _on_request(self, request: Request) -> None:
        if request.resource_type in TRACKED_TYPES:
            self.state.pending.add(id(request))
        if request.redirected_from is not None and not self.policy.check_url(request.url).allowed:
            decision = self.policy.request(request.method, self.vault.redact(request.url))
            self.state.blocked.append(decision)
            self.state.notes.append(
                f"a redirect reached {self.vault.redact(request.url)}, outside the allow-list; the page was closed"
            )

    def _on_done(self, request: Request) -> None:
        if id(request) in self.state.pending:
            self.state.pending.discard(id(request))
            self.state.finished += 1

    def _on_response(self, response: Response) -> None:
        request = response.request
        try:
            main = request.is_navigation_request() and request.frame.parent_frame is None
        except Exception:
            main = False
        if main:
            self.state.main_status = (response.status, request.method, self.vault.redact(response.url))

    def _on_dialog(self, dialog: Dialog) -> None:
        text = self.vault.redact(dialog.message)
        try:
            if dialog.type == "prompt":
                dialog.dismiss()
                self.state.dialogs.append(f"prompt {text!r} was dismissed (prompts cannot be answered)")
            else:
                dialog.accept()
                self.state.dialogs.append(f"{dialog.type} {text!r} was accepted")
        except Exception as exc:  # the page may already be gone
            self.state.dialogs.append(f"{dialog.type} {text!r} could not be handled: {exc}")

    # ------------------------------------------------------------ routing
    def route(self, route: Route, request: Request) -> None:
        try:
            self._route(route, request)
        except BaseException as exc:  # keep the browser alive; re-raised after the current call
            self.state.handler_errors.append(exc)
            with contextlib.suppress(Exception):
                route.abort("blockedbyclient")

    def _route(self, route: Route, request: Request) -> None:
        url, method = request.url, request.method.upper()
        shown = self.vault.redact(url)
        try:
            frame = request.frame
            is_main = request.is_navigation_request() and frame.parent_frame is None
            page_url = self.vault.redact(frame.url) if frame.url else None
            shown_page = self.state.page[1] if frame.url and self.state.page[0] == frame.url else ""
        except Exception:
            is_main, page_url, shown_page = False, None, ""
        verdict = self.policy.check_url(url)
        if not verdict.allowed:
            self.state.blocked.append(self.policy.request(method, shown))
            route.abort("blockedbyclient")
            return
        changes = self.policy.changes_data(method, url)
        raw = _raw_fields(request)  # the body, parsed once (an image button's click point as approved)
        armed, raw, labels = self._take_armed(method, url, raw) if changes else ("match", raw, {})
        # a business-data change the policy let through (approved now, or the same payload before):
        # every one goes through the intent log of a durable run; a login or an exempt path does not
        approved = changes and not self.policy.is_exempt(url)
        if approved and self.policy.halted:  # the run was stopped: not even asked
            self.state.blocked.append(self.policy.refuse_halted(method, shown))
            route.abort("blockedbyclient")
            return
        if armed == "switched":
            self.state.blocked.append(self.policy.refuse_switched(method, shown))
            route.abort("blockedbyclient")
            return
        # the request as every record of it reads it, computed once (secrets redacted, its key): the
        # approval, the send check, the intent log, the answer and the signed send; the request that
        # goes out (``_forward``) is the browser's, real secrets in it
        # (vault secrets only: a guess is sent, shown and keyed as it is, as the form gate keys it)
        sent = outgoing(method, url, raw, self.vault.redact_stored, self.policy.rules) if changes else None
        if armed == "none":  # the approver is shown the recorded request
            asked = request_fields(request, self.vault) if sent is None else _shown_fields(sent)
            with self._human_wait():
                asked_url = sent.url if sent is not None else shown  # the URL the key binds
                decision = self.policy.request(method, asked_url, fields=asked, page_url=page_url)
            if not decision.permitted:
                self.state.blocked.append(decision)
                route.abort("blockedbyclient")
                return
        if not approved or sent is None:  # a read, a login, an exempt path: no record of it is kept
            self._forward(route, request, is_main)
            return
        # on its way until its answer (``_submitted``): a copy meanwhile is asked again
        self.policy.leaving(sent.method, sent.url, sent.fields)
        check = self.policy.send_check  # a durable run asks the approvals authority: exactly this?
        if check is not None:
            refusal = check(sent.method, sent.url, sent.fields)
            if refusal is not None:
                self.state.notes.append(refusal)
                self.policy.sent(sent.method, sent.url, sent.fields, "not_sent")
                route.abort("blockedbyclient")
                return
        if self._context is not None:  # the run's before-snapshot (crew/changes.py)
            before_change = getattr(self.policy, "before_change", None)
            if before_change is not None:
                before_change(intent_fetcher(self._context, self.policy))
        intents = getattr(self.policy, "intents", None)  # tools.intents.IntentLog of a durable run
        if intents is not None and self._context is not None:
            with self._human_wait():  # a repeat in doubt may ask a person (``ask_again``)
                refusal = intents.before_send(
                    sent.method,
                    sent.url,
                    sent.fields,
                    intent_fetcher(self._context, self.policy),
                    key=sent.key,
                    sent_as=url,  # rows a version before this one keyed on the URL as it goes out
                )
            if refusal is not None:
                self.state.notes.append(refusal)
                route.abort("blockedbyclient")
                held = "held back: " + refusal
                self._submitted(sent, SendOutcome(detail=held, seen="not_sent", reason=held), labels)
                return
            outcome = self._classified(method, url, self._forward(route, request, is_main), shown_page)
            intents.after_send(sent.method, sent.url, sent.fields, outcome)  # the gate's classification
            self._submitted(sent, outcome, labels)
            return
        outcome = self._forward(route, request, is_main)
        self._submitted(sent, self._classified(method, url, outcome, shown_page), labels)

    def _classified(self, method: str, url: str, outcome: SendOutcome, shown_page: str = "") -> SendOutcome:
        """The system's answer to an approved submission, classified once, with its page
        (``submissions.classify``): the act result, the run's facts and a durable job's intent log
        all take this one (a near-duplicate warning or a login page answered HTTP 200 is not saved;
        a redirect is read with the page it leads to, against the page the form was on)."""
        outcome.seen, outcome.reason = classify(
            method=method,
            url=url,
            http_status=outcome.http_status,
            location=outcome.location,
            body=outcome.body,
            failure=outcome.detail,
            login_paths=self.policy.config.login_paths,
            landing=outcome.landing,
            before=shown_page,
        )
        outcome.reason = self.vault.redact(outcome.reason)
        return outcome

    def _submitted(self, sent: Outgoing, outcome: SendOutcome, labels: dict[str, str] | None = None) -> None:
        """What became of an approved submission (classified by ``_classified``; ``sent`` the request
        as approved and recorded): for the act result and the run's facts — read through ``redact``,
        not as stored (``sent`` keeps a value the page held in a password box, for the person who
        approves it; the model, the trace and the report read the run's hidden values as
        placeholders)."""
        redact = self.vault.redact
        result = SubmissionResult(
            method=sent.method,
            url=redact(strip_fragment(sent.url)),
            fields=[(redact(n), redact(v)) for n, v in sent.fields if not is_token_field(n)],
            result=outcome.classified(),
            http_status=outcome.http_status,
            detail=self.vault.redact(outcome.reason),
            labels={redact(n): redact(v) for n, v in (labels or {}).items()},
        )
        self.state.submissions.append(result)
        self.policy.sent(sent.method, sent.url, sent.fields, result.result)
        log = getattr(self.policy, "submissions", None)  # tools.submissions.SubmissionLog of the run
        if log is not None:
            log.record(result)

    def _forward(self, route: Route, request: Request, is_main: bool) -> SendOutcome:
        """Send the request ourselves with redirects off; check every hop before it leaves. Returns
        what the system answered to the request itself (the first hop): its status, or the failure.

        Nothing is handed back to the browser's own network stack (the gatekeeper proxy refuses what
        is): a redirect of a document becomes a tiny page that navigates to the checked target (a new,
        routed request); a redirect of a page resource is followed here, GET to GET only.
        """
        from playwright.sync_api import Error as PlaywrightError

        url, method = request.url, request.method.upper()
        is_document = request.resource_type == "document"
        landing = self.state.landings.pop(url, None) if method == "GET" and is_document else None
        if landing is not None:  # the page a submission's redirect led to, read once already
            if is_main:
                self.policy.navigation(self.vault.redact(url))
                self._shown(url, landing)
            route.fulfill(response=landing)
            return SendOutcome(http_status=landing.status)
        headers = _unconditional(request.headers)
        outcome: SendOutcome | None = None
        for hop in range(MAX_REDIRECTS + 1):
            try:
                if hop == 0:
                    response = route.fetch(headers=headers, max_redirects=0, timeout=self._nav_timeout)
                else:  # a later hop is a plain GET/HEAD (a hop repeating a write was refused)
                    assert self._context is not None
                    response = self._context.request.fetch(
                        url, method=method, max_redirects=0, timeout=self._nav_timeout
                    )
            except PlaywrightError as exc:
                failure = self.vault.redact(str(exc).splitlines()[0])
                self.state.notes.append(f"{method} {self.vault.redact(url)} failed: {failure}")
                route.abort("failed")
                return outcome or SendOutcome(detail=failure)
            location = response.headers.get("location")
            if outcome is None:
                outcome = SendOutcome(http_status=response.status, location=location)
                if method not in SAFE_METHODS and not location:  # what a submission was answered
                    with contextlib.suppress(Exception):
                        outcome.body = response.text()[:200_000]
            if not (300 <= response.status < 400 and location):
                if is_main:
                    self.policy.navigation(self.vault.redact(url))
                    self._shown(url, response)
                if hop > 0 and request.method.upper() not in SAFE_METHODS:  # a script's redirected send
                    outcome.landing = _text(response)
                route.fulfill(response=response)
                return outcome
            target = urljoin(url, location)
            next_method = method if response.status in (307, 308) or method in ("GET", "HEAD") else "GET"
            refusal = self._redirect_refusal(url, target, next_method)
            if refusal is not None:
                self.state.notes.append(refusal)
                route.abort("blockedbyclient")
                return outcome
            if is_document:
                if is_main:
                    self.policy.navigation(self.vault.redact(url))
                if method not in SAFE_METHODS and next_method == "GET":  # a form's send, redirected
                    self._read_landing(target, outcome)
                route.fulfill(status=200, content_type="text/html; charset=utf-8", body=_hop_page(target))
                return outcome
            url, method = target, next_method
        self.state.notes.append(
            f"{self.vault.redact(request.url)} redirected more than {MAX_REDIRECTS} times"
        )
        route.abort("failed")
        return outcome or SendOutcome(detail="too many redirects")

    def _read_landing(self, target: str, outcome: SendOutcome) -> None:
        """Read the page a submission's redirect leads to, once, for its classification: the browser
        is then given this same answer when it goes there (``_forward``), so a message the system
        shows only once (a "flash": an error after a redirect back to the form) is seen by both."""
        from playwright.sync_api import Error as PlaywrightError

        assert self._context is not None
        try:
            response = self._context.request.fetch(
                target, method="GET", max_redirects=0, timeout=self._nav_timeout, headers=_HTML
            )
        except PlaywrightError:
            return  # the browser goes there itself; classified on the answer alone
        if 300 <= response.status < 400:
            return  # another hop: the browser follows it, each hop checked
        outcome.landing = _text(response)
        self.state.landings[target] = response

    def _shown(self, url: str, response: Any) -> None:
        """Remember the main document the browser is given: a submission from it is classified
        against it (an error that was on the page before is not the answer's)."""
        self.state.page = (url, _text(response))

    def _redirect_refusal(self, url: str, target: str, next_method: str) -> str | None:
        """Why a redirect hop may not be taken (recorded as a decision), or None."""
        shown, shown_target = self.vault.redact(url), self.vault.redact(target)
        if not self.policy.check_url(target).allowed:
            self.state.blocked.append(self.policy.navigation(shown_target))
            return f"{shown} redirected to {shown_target}, which is blocked; the redirect was not followed"
        if self.policy.changes_data(next_method, target):
            decision = self.policy.refuse_redirect(next_method, shown_target)
            self.state.blocked.append(decision)
            return (
                f"{shown} redirected a data-changing {next_method} to {shown_target}; a redirect may not "
                "repeat a data-changing request, so it was stopped"
            )
        return None

    def _take_armed(
        self, method: str, url: str, raw: list[tuple[str, str]]
    ) -> tuple[Literal["match", "switched", "none"], list[tuple[str, str]], dict[str, str]]:
        """Consume the approval armed for this method and URL: "match" when the body really sent
        (``raw``) is the approved one, "switched" when the page changed it after approval (refused,
        never asked again), "none" when nothing was approved for it. With the body as it is taken
        from here on: an image button's click point as approved (``_click_as_approved``), so the
        approval's key, its intent and its record are the approved ones."""
        target = strip_fragment(url)
        for i, armed in enumerate(self.state.armed):
            if armed.method != method or armed.url != target:
                continue
            del self.state.armed[i]
            if armed.fields is None:
                return "match", raw, armed.labels
            sent = _click_as_approved(raw, armed.fields, armed.click_point)
            if not same_fields(sent, armed.fields):
                self.state.notes.append(
                    f"the page sent different data to {self.vault.redact(url)} than what was approved "
                    "(other values, or the approved values in another order: rows paired otherwise); "
                    "the request was stopped"
                )
                return "switched", raw, {}
            return "match", sent, armed.labels
        return "none", raw, {}


_COORDINATE = re.compile(r"-?[0-9]+")


def _click_as_approved(
    sent: list[tuple[str, str]], approved: list[tuple[str, str]], point: str | None
) -> list[tuple[str, str]]:
    """``sent`` with an image submit button's click point read as the approved one. A form sent by an
    <input type=image name=NAME> carries where the button was clicked, as NAME.x and NAME.y side by
    side (x and y when it has no name): the approval's prediction has 0 and 0 there, the browser the
    point it was clicked at. Only the pair of the button the prediction named (``point``: "NAME." or
    "") is read so: both names once in each body, side by side, integers in both; every other field
    must still be exactly the approved one."""
    out = list(sent)
    if point is None:
        return out
    names = [n for n, _ in approved]
    x_name, y_name = f"{point}x", f"{point}y"
    for (xn, x_value), (yn, y_value) in itertools.pairwise(approved):
        if (xn, yn) != (x_name, y_name):
            continue
        at = [j for j, (n, _) in enumerate(out) if n in (x_name, y_name)]
        if (
            names.count(x_name) == names.count(y_name) == 1
            and len(at) == 2
            and out[at[0]][0] == x_name
            and at[1] == at[0] + 1
            and all(_COORDINATE.fullmatch(v) for v in (x_value, y_value, out[at[0]][1], out[at[1]][1]))
        ):
            out[at[0] : at[1] + 1] = [(x_name, x_value), (y_name, y_value)]
    return out


def _unconditional(headers: dict[str, str]) -> dict[str, str] | None:
    """The request's headers without cache validators (a 304 cannot be fulfilled into the page)."""
    if not any(k.lower() in ("if-none-match", "if-modified-since") for k in headers):
        return None
    return {k: v for k, v in headers.items() if k.lower() not in ("if-none-match", "if-modified-since")}


_HTML = {"accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"}


def _text(response: Any) -> str:
    """An HTML answer's text (its first 200,000 characters), "" for anything else or unreadable."""
    if "html" not in (response.headers.get("content-type") or "").lower():
        return ""
    try:
        return str(response.text())[:200_000]
    except Exception:
        return ""


def _hop_page(target: str) -> str:
    """A page that continues a checked redirect as a new (routed) navigation, replacing itself."""
    where = json.dumps(target).replace("</", "<\\/")
    return f"<!doctype html><title>Redirecting</title><script>location.replace({where})</script>"
