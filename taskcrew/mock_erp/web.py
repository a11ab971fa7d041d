"""A minimal request/response pair between the HTTP server and the app, plus small helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from pydantic import BaseModel


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    form: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = ""

    @classmethod
    def parse(cls, method: str, target: str, headers: dict[str, str], body: bytes) -> Request:
        """``headers`` keys are lower-case."""
        parts = urlsplit(target)
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        form: dict[str, str] = {}
        if content_type == "application/x-www-form-urlencoded":
            form = _first_values(body.decode("utf-8", errors="replace"))
        cookies: dict[str, str] = {}
        if raw := headers.get("cookie"):
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(raw)
            except CookieError:  # a malformed cookie header is treated as no cookies
                jar = SimpleCookie()
            cookies = {key: morsel.value for key, morsel in jar.items()}
        return cls(
            method=method.upper(),
            path=parts.path or "/",
            query=_first_values(parts.query),
            form=form,
            cookies=cookies,
            body=body,
            content_type=content_type,
        )

    def json(self) -> Any:
        """The JSON body, or None when empty. Raises ValueError when it is not JSON."""
        if not self.body.strip():
            return None
        return json.loads(self.body)


def _first_values(text: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(text, keep_blank_values=True).items()}


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)

    def set_cookie(self, name: str, value: str, *, max_age: int | None = None) -> None:
        cookie = f"{name}={value}; Path=/; HttpOnly; SameSite=Lax"
        if max_age is not None:
            cookie += f"; Max-Age={max_age}"
        self.headers.append(("Set-Cookie", cookie))

    def delete_cookie(self, name: str) -> None:
        self.set_cookie(name, "", max_age=0)


def html(body: str, status: int = 200) -> Response:
    return Response(status=status, body=body.encode("utf-8"))


def text(body: str, status: int = 200) -> Response:
    return Response(status=status, body=body.encode("utf-8"), content_type="text/plain; charset=utf-8")


def json_response(data: BaseModel | dict[str, Any], status: int = 200) -> Response:
    if isinstance(data, BaseModel):
        payload = data.model_dump_json(indent=1)
    else:
        payload = json.dumps(data, indent=1, ensure_ascii=False)
    return Response(status=status, body=payload.encode("utf-8"), content_type="application/json")


def redirect(location: str, status: int = 303) -> Response:
    return Response(status=status, headers=[("Location", location)])


def local_path(target: str | None, default: str = "/bills") -> str:
    """``target`` when it is a path on this site, else ``default`` (no open redirects)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    if not all(0x21 <= ord(char) <= 0x7E for char in target):  # printable ASCII: no header injection
        return default
    return target


def login_url(next_path: str, reason: str | None = None) -> str:
    url = "/login?next=" + quote(next_path, safe="/")
    return url + f"&reason={reason}" if reason else url
