"""Security headers on every response, and the CSRF check every POST passes.

CSRF: the form's token must equal the session's (or, for the login form, the pre-login cookie's),
AND the request's Origin (or Referer) must be this console's own origin.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in HEADERS if k not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


def same_origin(request: Request) -> bool:
    """The request came from a page of this console (Origin, else Referer, must match Host)."""
    host = request.headers.get("host", "")
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        referer = request.headers.get("referer")
        if not referer:
            return False
        origin = referer
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc == host


def token_ok(sent: object, expected: str | None) -> bool:
    return (
        isinstance(sent, str)
        and bool(expected)
        and hmac.compare_digest(sent.encode(), str(expected).encode())
    )
