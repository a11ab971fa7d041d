"""Citations are checked in code: each quoted fact must really appear in the source it names.

The verifier's own evidence is held to the same rule: a quoted line in a check's ``observed`` must
appear in what the verifier itself saw at that source in this verification (``quotes_unseen``), not
merely in some page the run saw — a hijacked verifier cannot make up a row.

The verifier model judges whether the answer is right; this check makes sure nothing is quoted
from a source that does not say it. A cited file that cannot be read fails the check. Pages code
cannot read (behind a login) and images whose text OCR does not show are left to the verifier and
listed as unchecked: the model's word, which the report says.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from pydantic import BaseModel

from taskcrew.crew.models import Citation


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
        if text is None and names_a_file(citation.source):
            results.append(
                CitationCheck(citation=citation, status="not_found", detail="the cited file cannot be read")
            )
        elif text is None:
            results.append(
                CitationCheck(citation=citation, status="unchecked", detail="source not readable by code")
            )
        elif appears_in(citation.quote, [text]):  # whole words: never a fragment of a figure
            results.append(CitationCheck(citation=citation, status="found"))
        elif is_image(citation.source):  # OCR may read less than the model saw: its word, marked
            results.append(
                CitationCheck(
                    citation=citation, status="unchecked", detail="an image code cannot read exactly"
                )
            )
        else:
            results.append(
                CitationCheck(citation=citation, status="not_found", detail="quote not in the source")
            )
    return results


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".gif", ".bmp", ".webp", ".heic")


def is_web(source: str) -> bool:
    return source.strip().lower().startswith(("http://", "https://"))


def names_a_file(source: str) -> bool:
    """A path (a folder or a file name with a suffix), not a page or a tool such as "python"."""
    text = source.strip()
    return not is_web(text) and ("/" in text or bool(re.search(r"\.\w{1,5}$", text)))


def is_image(source: str) -> bool:
    return source.strip().lower().endswith(IMAGE_SUFFIXES)


_QUOTED_RE = re.compile(r'"([^"]{3,})"|“([^”]{3,})”|`([^`]{3,})`')
_MARKER_RE = re.compile(r"\[\d+\]")


def quote_words(text: str) -> list[str]:
    """The words of ``text`` as a quote is matched (``appears_in``): NFKC, case folded, element
    numbers ("[12]") and punctuation aside."""
    return re.findall(r"\w+", _MARKER_RE.sub(" ", unicodedata.normalize("NFKC", text)).casefold())


def quoted(observed: str) -> list[str]:
    """The segments of ``observed`` given in quotes ("…", “…” or `…`)."""
    return [next(g for g in m.groups() if g) for m in _QUOTED_RE.finditer(observed)]


def appears_in(quote: str, texts: list[str]) -> bool:
    """Does ``quote`` appear, word for word (punctuation, layout and element numbers aside), in a text?"""
    want = quote_words(quote)
    if not want:
        return True
    n = len(want)
    for text in texts:
        have = quote_words(text)
        if any(have[i : i + n] == want for i in range(len(have) - n + 1)):
            return True
    return False


def quotes_unseen(observed: str, texts: list[str]) -> list[str]:
    """The quotes in ``observed`` that appear in none of ``texts`` (what the verifier saw there)."""
    return [q for q in quoted(observed) if not appears_in(q, texts)]


def lines_with(words: str, texts: list[str], limit: int = 2) -> list[str]:
    """The exact lines (as seen) that contain ``words`` (punctuation, layout and element numbers aside)."""
    found: list[str] = []
    for text in reversed(texts):  # the latest view of the source first
        for line in text.splitlines():
            if line.strip() and appears_in(words, [line]) and line.strip() not in found:
                found.append(line.strip())
                if len(found) == limit:
                    return found
    return found


STATE_WORDS = re.compile(
    r"\b(exists?|existed|exactly one|only one|no other|no second|duplicates?|created|entered|recorded|"
    r"saved|changed|modified|deleted|marked|status|in the system|"
    # what a system does to a record (a bill is paid, posted, booked…), never what a document says
    r"paid|posted|booked|registered|settled|submitted|stored)\b",
    re.IGNORECASE,
)


def about_system_state(criterion: str, system_names: list[str]) -> bool:
    """Do a criterion's words say it speaks of what a system holds (a record exists, nothing else
    changed)? Words only ever widen the evidence rules (``evidence._checked`` also counts a criterion
    naming what the run sent); what a source shows as a system's state is never decided by them."""
    text = criterion.casefold()
    return bool(STATE_WORDS.search(criterion)) or any(n.casefold() in text for n in system_names if n)
