"""web_search: one protocol, two backends (the public web via ``ddgs``; the company intranet's search).

Backends return a ``ToolResult`` whose data is ``SearchResults``; offline, blocked, rate-limited and
unreachable are ``ok=False`` results with a message that says what to do, never exceptions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Literal, Protocol
from urllib.parse import urljoin

import httpx
from pydantic import BaseModel, Field

from taskcrew.tools.base import ToolResult
from taskcrew.tools.research.web import UNTRUSTED_BEGIN, UNTRUSTED_END


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str = ""


class SearchResults(BaseModel):
    query: str
    backend: str
    hits: list[SearchHit] = Field(default_factory=list)

    def render(self) -> str:
        if not self.hits:
            return f"No results for {self.query!r} ({self.backend}). Try other words or a broader query."
        lines = [f"{len(self.hits)} results for {self.query!r} ({self.backend}); read a page with web_fetch.",
                 UNTRUSTED_BEGIN]  # fmt: skip
        for number, hit in enumerate(self.hits, 1):
            lines.append(f"{number}. {hit.title}\n   {hit.url}\n   {hit.snippet}".rstrip())
        lines.append(UNTRUSTED_END)
        return "\n".join(lines)


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, max_results: int = 8) -> ToolResult:
        """``data`` is ``SearchResults`` on success."""
        ...


class MinIntervalLimiter:
    """Spaces calls at least ``min_interval_s`` apart (thread-safe); ``wait`` returns the seconds slept."""

    def __init__(
        self,
        min_interval_s: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.min_interval_s = min_interval_s
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._last: float | None = None

    def wait(self) -> float:
        with self._lock:
            now = self._clock()
            delay = 0.0 if self._last is None else max(0.0, self._last + self.min_interval_s - now)
            if delay:
                self._sleep(delay)
            self._last = now + delay
            return delay


class DdgsBackend:
    """The public web through the ``ddgs`` metasearch package, rate limited.

    ``ddgs`` talks HTTP through ``primp`` (Rust), so Python-level socket guards do not see it; pass
    ``proxy`` to route it (tests point it at a closed loopback port to simulate being offline).
    """

    name = "web (ddgs)"

    def __init__(
        self,
        limiter: MinIntervalLimiter | None = None,
        timeout_s: int = 10,
        proxy: str | None = None,
        region: str = "us-en",
        safesearch: Literal["on", "moderate", "off"] = "moderate",
        engines: str = "auto",
    ) -> None:
        self._limiter = limiter or MinIntervalLimiter(2.0)
        self._timeout_s = timeout_s
        self._proxy = proxy
        self._region, self._safesearch, self._engines = region, safesearch, engines

    def search(self, query: str, max_results: int = 8) -> ToolResult:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        query = query.strip()
        if not query:
            return ToolResult.failure("the search query is empty")
        self._limiter.wait()
        try:
            raw = DDGS(proxy=self._proxy, timeout=self._timeout_s).text(
                query,
                region=self._region,
                safesearch=self._safesearch,
                max_results=max_results,
                backend=self._engines,
            )
        except RatelimitException:
            return ToolResult.failure(
                "the web search provider is rate-limiting us; wait a minute, then search less often"
            )
        except TimeoutException:
            return ToolResult.failure(
                f"web search timed out after {self._timeout_s} s: the network may be offline or slow; "
                "try again later or answer from the intranet and files"
            )
        except DDGSException as exc:
            if "no results" in str(exc).lower():
                return ToolResult.success(SearchResults(query=query, backend=self.name))
            return _offline(exc)
        except (OSError, RuntimeError) as exc:  # sockets refused or blocked by a guard
            return _offline(exc)
        hits = [
            SearchHit(
                title=str(r.get("title", "")),
                url=str(r.get("href", "")),
                snippet=_clip(str(r.get("body", ""))),
            )
            for r in raw
            if r.get("href")
        ]
        return ToolResult.success(SearchResults(query=query, backend=self.name, hits=hits[:max_results]))


def _offline(exc: BaseException) -> ToolResult:
    detail = str(exc)[:300]
    return ToolResult.failure(
        "web search is unavailable (offline, or the network blocks the search providers): "
        f"{detail}. Answer from the intranet and the files instead, or say that the web could not be searched."
    )


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class IntranetSearchBackend:
    """The demo company's intranet site search (``GET /search?q=...``), parsed from its HTML."""

    name = "intranet"

    def __init__(self, base_url: str, client: httpx.Client | None = None, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/") + "/"
        self._client = client or httpx.Client(timeout=timeout_s, follow_redirects=False)
        self._own_client = client is None

    def close(self) -> None:
        if self._own_client:
            self._client.close()

    def search(self, query: str, max_results: int = 8) -> ToolResult:
        query = query.strip()
        if not query:
            return ToolResult.failure("the search query is empty")
        url = urljoin(self.base_url, "search")
        try:
            response = self._client.get(url, params={"q": query, "n": max_results})
        except httpx.HTTPError as exc:
            return ToolResult.failure(
                f"the intranet search at {url} is unreachable ({type(exc).__name__}: {exc}); "
                "is the intranet running? Start it with `taskcrew intranet serve`."
            )
        if response.status_code != 200:
            return ToolResult.failure(
                f"the intranet search answered HTTP {response.status_code} for {response.url}"
            )
        parser = _ResultsParser()
        parser.feed(response.text)
        parser.close()
        hits = [
            SearchHit(title=h.title, url=urljoin(str(response.url), h.href), snippet=_clip(h.snippet))
            for h in parser.hits
            if h.href
        ]
        return ToolResult.success(SearchResults(query=query, backend=self.name, hits=hits[:max_results]))


class _Hit:
    def __init__(self) -> None:
        self.title = ""
        self.href = ""
        self.snippet = ""


class _ResultsParser(HTMLParser):
    """Reads ``li.search-result`` items: ``a.result-title`` (href, text) and ``p.result-snippet``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hits: list[_Hit] = []
        self._field: Literal["title", "snippet"] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "li" and "search-result" in classes:
            self.hits.append(_Hit())
        elif self.hits and tag == "a" and "result-title" in classes:
            self.hits[-1].href = dict(attrs).get("href") or ""
            self._field = "title"
        elif self.hits and "result-snippet" in classes:
            self._field = "snippet"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("a", "p", "div", "li"):
            self._field = None

    def handle_data(self, data: str) -> None:
        if self._field and self.hits:
            hit = self.hits[-1]
            setattr(hit, self._field, " ".join((getattr(hit, self._field) + data).split()))
