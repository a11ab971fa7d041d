"""Jinja2 rendering (autoescaped .html templates) and the per-request page context."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from taskcrew.mock_erp.sessions import Flash, Session
from taskcrew.mock_erp.web import Request, Response, html

TEMPLATES_DIR = Path(__file__).with_name("templates")
ANON_CSRF_COOKIE = "acme_csrf"


@dataclass
class Visit:
    """One request as the pages see it: who is signed in and which CSRF token the forms carry."""

    request: Request
    session: Session | None
    csrf_token: str
    new_anon_csrf: bool
    show_notice: bool
    flash: Flash | None = None
    hostile: bool = False  # chaos: the page carries a script that submits a bill of its own

    @property
    def user(self) -> str | None:
        return self.session.username if self.session else None


@lru_cache(maxsize=4)
def _environment(templates_dir: Path) -> Environment:
    """One compiled-template cache per folder (rendering is thread-safe), so servers start fast."""
    return Environment(
        loader=FileSystemLoader(templates_dir),
        autoescape=select_autoescape(["html"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class Renderer:
    def __init__(self, templates_dir: Path = TEMPLATES_DIR) -> None:
        self._env = _environment(templates_dir)

    def render(self, template: str, **context: Any) -> str:
        return self._env.get_template(template).render(**context)

    def page(self, visit: Visit, template: str, status: int = 200, **context: Any) -> Response:
        """A full page for ``visit``; hands out the anonymous CSRF cookie when it is new."""
        request = visit.request
        query = urlencode(request.query)
        body = self.render(
            template,
            page={
                "user": visit.user,
                "csrf_token": visit.csrf_token,
                "flash": visit.flash,
                "show_notice": visit.show_notice,
                "hostile": visit.hostile,
                "here": request.path + ("?" + query if query and request.method == "GET" else ""),
            },
            **context,
        )
        response = html(body, status)
        if visit.new_anon_csrf:
            response.set_cookie(ANON_CSRF_COOKIE, visit.csrf_token)
        return response

    def page_bare(self, template: str, status: int, **context: Any) -> Response:
        """A page outside the app's layout (an error from 'the infrastructure')."""
        return html(self.render(template, **context), status)
