"""Citations are checked in code: each quoted fact must really appear in the source it names.

The verifier model judges whether the answer is right; this check makes sure nothing is quoted
from a source that does not say it. Sources code cannot read (a page behind a login) are left to
the verifier, and listed as unchecked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from pydantic import BaseModel

from taskcrew.crew.models import Citation

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00a0": " "})


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return re.sub(r"\s+", " ", text).strip(" .\"'")


class CitationCheck(BaseModel):
    citation: Citation
    status: str  # "found" | "not_found" | "unchecked"
    detail: str = ""


def check_citations(citations: list[Citation], read: Callable[[str], str | None]) -> list[CitationCheck]:
    """``read(source)`` returns the source's full text, or None when code cannot read it."""
    texts: dict[str, str | None] = {}
    results = []
    for citation in citations:
        if citation.source not in texts:
            texts[citation.source] = read(citation.source)
        text = texts[citation.source]
        if text is None:
            results.append(
                CitationCheck(citation=citation, status="unchecked", detail="source not readable by code")
            )
        elif normalize(citation.quote) in normalize(text):
            results.append(CitationCheck(citation=citation, status="found"))
        else:
            results.append(
                CitationCheck(citation=citation, status="not_found", detail="quote not in the source")
            )
    return results
