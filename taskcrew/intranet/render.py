"""HTML for the intranet: pages, section listings, search results and 404s inside one layout."""

from __future__ import annotations

from html import escape
from pathlib import Path
from string import Template
from urllib.parse import quote

from taskcrew.intranet.content import Page
from taskcrew.intranet.search import Hit

TEMPLATES_DIR = Path(__file__).with_name("templates")


def tag_slug(tag: str) -> str:
    return "-".join(tag.lower().split())


class Renderer:
    """Fills ``layout.html``; every value is HTML-escaped except page bodies (trusted site data)."""

    def __init__(self, templates_dir: Path = TEMPLATES_DIR) -> None:
        self._layout = Template((templates_dir / "layout.html").read_text(encoding="utf-8"))
        self.stylesheet = (templates_dir / "site.css").read_text(encoding="utf-8")

    def page(self, page: Page, listed: list[Page] | None = None, tag: str | None = None) -> str:
        meta = " · ".join(x for x in (page.date.isoformat() if page.date else "", page.author or "") if x)
        parts = [f'<article class="page page-{page.section}">', f"<h1>{escape(page.title)}</h1>"]
        if meta:
            parts.append(f'<p class="meta">{escape(meta)}</p>')
        if page.tags:
            parts.append('<p class="tags">' + " ".join(_tag_link(t) for t in page.tags) + "</p>")
        parts += [page.body_html, "</article>"]
        if listed is not None:
            heading = f"Tagged “{escape(tag)}”" if tag else "Latest"
            parts.append(f'<section class="listing"><h2>{heading}</h2>{_listing(listed)}</section>')
        return self._wrap(page.title, page.section, "\n".join(parts))

    def search(self, query: str, hits: list[Hit]) -> str:
        if not query.strip():
            body = "<p>Type words to search all pages, e.g. <em>price increase</em> or <em>Initech</em>.</p>"
        elif not hits:
            body = f'<p class="no-results">No pages match <strong>{escape(query)}</strong>.</p>'
        else:
            items = []
            for hit in hits:
                date = hit.page.date.isoformat() if hit.page.date else ""
                items.append(
                    '<li class="search-result">'
                    f'<a class="result-title" href="{escape(hit.page.path)}">{escape(hit.page.title)}</a> '
                    f'<span class="result-meta">{escape(date)} · {escape(hit.page.section)}</span>'
                    f'<p class="result-snippet">{escape(hit.snippet)}</p></li>'
                )
            body = (
                f'<p class="result-count">{len(hits)} result(s) for <strong>{escape(query)}</strong></p>'
                f'<ol class="search-results">{"".join(items)}</ol>'
            )
        title = f"Search: {query}" if query.strip() else "Search"
        return self._wrap(title, "search", f"<h1>{escape(title)}</h1>\n{body}", query=query)

    def not_found(self, path: str) -> str:
        body = (
            f"<h1>Page not found</h1><p>There is no page at <code>{escape(path)}</code>. "
            'Try the <a href="/search">search</a> or the <a href="/news/">news</a>.</p>'
        )
        return self._wrap("Page not found", "error", body)

    def _wrap(self, title: str, section: str, main: str, query: str = "") -> str:
        return self._layout.substitute(
            title=escape(title), section=escape(section), main=main, query=escape(query)
        )


def _tag_link(tag: str) -> str:
    return f'<a class="tag" href="/news/?tag={quote(tag_slug(tag))}">{escape(tag)}</a>'


def _listing(pages: list[Page]) -> str:
    if not pages:
        return "<p>Nothing here yet.</p>"
    items = []
    for page in pages:
        date = f'<span class="date">{page.date.isoformat()}</span> ' if page.date else ""
        summary = f"<p>{escape(page.summary)}</p>" if page.summary else ""
        items.append(f'<li>{date}<a href="{escape(page.path)}">{escape(page.title)}</a>{summary}</li>')
    return f'<ul class="listing">{"".join(items)}</ul>'
