"""The intranet's pages: data files with YAML front matter, validated into ``Page`` models."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

PAGES_DIR = Path(__file__).with_name("pages")

Section = Literal["home", "news", "vendors", "finance", "bulletin", "about"]


class Page(BaseModel):
    """One page of the site. ``body_html`` is an HTML fragment placed inside the site layout."""

    path: str = Field(description="URL path, e.g. /news/2026-09-15-northwind-traders-price-increase")
    title: str
    section: Section
    date: dt.date | None = None
    author: str | None = None
    summary: str = ""
    tags: list[str] = Field(default_factory=list)
    note: str | None = Field(default=None, description="for maintainers only; never rendered")
    archived: bool = Field(default=False, description="superseded; ranked lower in search")
    listing: Section | None = Field(default=None, description="append a list of this section's pages")
    listing_limit: int | None = Field(default=None, ge=1)
    body_html: str

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        if not value.startswith("/") or " " in value or "?" in value:
            raise ValueError(f"a page path must start with '/' and have no spaces or query: {value!r}")
        return value


class PageError(ValueError):
    """A page file that cannot be loaded; the message names the file."""


def parse_page(text: str, source: str) -> Page:
    """Parse one page file: ``---`` YAML front matter ``---`` then the HTML body."""
    if not text.startswith("---\n"):
        raise PageError(f"{source}: a page must start with a '---' front matter block")
    try:
        header, body = text[4:].split("\n---\n", 1)
    except ValueError:
        raise PageError(f"{source}: the front matter block is not closed with '---'") from None
    try:
        meta = yaml.safe_load(header) or {}
    except yaml.YAMLError as exc:
        raise PageError(f"{source}: invalid YAML front matter: {exc}") from exc
    if not isinstance(meta, dict):
        raise PageError(f"{source}: the front matter must be a mapping")
    try:
        return Page(**meta, body_html=body.strip())
    except (ValidationError, TypeError) as exc:
        raise PageError(f"{source}: {exc}") from exc


def load_pages(pages_dir: Path = PAGES_DIR) -> list[Page]:
    """All ``*.html`` page files under ``pages_dir``; paths must be unique."""
    pages: list[Page] = []
    seen: dict[str, Path] = {}
    for file in sorted(pages_dir.rglob("*.html")):
        page = parse_page(file.read_text(encoding="utf-8"), str(file.relative_to(pages_dir)))
        if page.path in seen:
            raise PageError(f"{file.name}: path {page.path} is already used by {seen[page.path].name}")
        seen[page.path] = file
        pages.append(page)
    if not pages:
        raise PageError(f"no page files (*.html) under {pages_dir}")
    return pages
