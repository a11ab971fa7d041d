"""Security headers on every response, the Host check every request passes, and the CSRF check
every POST passes.

Host: a request must name the console's own host and port (DNS rebinding: a hostile page whose name
its DNS points at 127.0.0.1 would otherwise be same-origin with a console it reaches through it).

CSRF: the form's token must equal the session's (or, for the login form, the pre-login cookie's),
AND the request's Origin (or Referer) must be this console's own origin.

Sign-in: failed attempts are counted (``LoginThrottle``) and a name or address at its limit is
refused before its password is checked.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from typing import ClassVar
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


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD = ("0.0.0.0", "::", "")


def allowed_hosts(bind_host: str, port: int, extra: list[str]) -> frozenset[str]:
    """The Host header values this console answers: its bind address (with the loopback's other
    spellings), the machine's names when it listens on every interface, and configured names (a
    name behind a reverse proxy, with or without its port)."""
    names: set[str] = set()
    host = bind_host.strip("[]")
    if host in WILDCARD:
        names |= {socket.gethostname(), socket.getfqdn(), *LOOPBACK_NAMES}
    else:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        names |= set(LOOPBACK_NAMES) if loopback else {f"[{host}]" if ":" in host else host}
    allowed = {f"{n.lower()}:{port}" for n in names}
    for name in extra:
        allowed.add(name.strip().lower())
    return frozenset(allowed)


def host_ok(host: str | None, allowed: frozenset[str], bind_host: str) -> bool:
    if not host:
        return False
    host = host.strip().lower()
    if host in allowed:
        return True
    if bind_host.strip("[]") in WILDCARD:  # every interface: any of this machine's addresses
        name, _, port = host.rpartition(":")
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            return False
        return any(a.endswith(f":{port}") for a in allowed)
    return False


class SecurityHeaders:
    """Security headers on every response; with ``hosts``, a request for another Host is refused."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None = None, bind_host: str = "") -> None:
        self.app = app
        self.hosts = hosts
        self.bind_host = bind_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.hosts is not None:
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if not host_ok(host, self.hosts, self.bind_host):
                await _refuse_host(send)
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


async def _refuse_host(send: Send) -> None:
    body = b"Refused: this request names another host than the console's (Host header check)."
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 421, "headers": [*headers, *HEADERS]})
    await send({"type": "http.response.body", "body": body})


class LoginThrottle:
    """Failed sign-ins, counted so a password cannot be guessed at the console's speed (~20 a
    second). Each limit counts failures within ``window`` seconds for one key: a name from one
    address, any name from one address, one name from any address (guesses spread over many
    addresses). A key at its limit is refused before its password is checked, until its oldest
    counted failure leaves the window; a sign-in that succeeds clears its name's failures from
    that address. Kept in memory: one console process, reset by a restart."""

    LIMITS: ClassVar[dict[str, int]] = {"name+address": 5, "address": 20, "name": 50}

    def __init__(self, window: float = 900.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self.clock = clock
        self._failures: dict[tuple[str, str], list[float]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _keys(name: str, address: str) -> dict[str, tuple[str, str]]:
        name = name.strip().casefold()
        return {
            "name+address": ("name+address", f"{name}\n{address}"),
            "address": ("address", address),
            "name": ("name", name),
        }

    def _recent(self, key: tuple[str, str], now: float) -> list[float]:
        kept = [t for t in self._failures.get(key, []) if now - t < self.window]
        if kept:
            self._failures[key] = kept
        else:
            self._failures.pop(key, None)
        return kept

    def wait(self, name: str, address: str) -> float:
        """Seconds until ``name`` may try again from ``address`` (0: now)."""
        now = self.clock()
        return max((end - now for end in self._holds(name, address, now).values()), default=0.0)

    def holds(self, name: str, address: str) -> dict[tuple[str, str], float]:
        """The keys holding ``name`` from ``address`` (at their limit), each with the clock time its
        hold ends. A held key counts no failure while held (its sign-ins are refused unchecked), so
        a key and its end name one hold (``web.SignInLog`` writes one entry per hold)."""
        return self._holds(name, address, self.clock())

    def _holds(self, name: str, address: str, now: float) -> dict[tuple[str, str], float]:
        with self._lock:
            return {
                key: recent[-limit] + self.window
                for kind, key in self._keys(name, address).items()
                if len(recent := self._recent(key, now)) >= (limit := self.LIMITS[kind])
            }

    def failed(self, name: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            for key in self._keys(name, address).values():
                self._failures.setdefault(key, []).append(now)
                del self._failures[key][: -max(self.LIMITS.values())]  # bounded per key

    def succeeded(self, name: str, address: str) -> None:
        with self._lock:
            self._failures.pop(self._keys(name, address)["name+address"], None)
