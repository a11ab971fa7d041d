"""Turn company documents into chunks: markdown by headings, PDF by page, text and email by paragraph.

Each chunk keeps its source file and heading path and gets a content hash as id, so the same file
always yields the same ids (idempotent re-ingest) and an edited section yields a new id. Long
sections are split on paragraph (then line, then sentence) boundaries into balanced pieces; tiny
sections are merged into a neighbouring parent or sibling so no chunk is a lone heading line.
Unreadable files raise ``UnreadableFile`` with a message a person can act on.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from taskcrew.knowledge.markup import html_to_markdown, rst_to_markdown
from taskcrew.knowledge.models import Chunk, ChunkKind
from taskcrew.knowledge.seen import seen
from taskcrew.tools.documents.visibility import visible_markdown

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
TEXT_SUFFIXES = frozenset({".txt", ".text"})
RST_SUFFIXES = frozenset({".rst", ".rest"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | TEXT_SUFFIXES | RST_SUFFIXES | HTML_SUFFIXES | {".pdf", ".eml"}
CHUNKER_VERSION = "10"  # part of every chunk id: a new chunker re-embeds files on their next ingest
# (5: Markdown read as rendered: hidden raw HTML and HTML comments left out, visibility.py;
# 6: PDF text nobody can see left out, pdfseen.py; 8: characters that draw nothing left out of
# every format's text, headings and title, seen.py; 9: a variation selector kept only after a
# character it selects a form of, a joiner only in scripts and emoji it shapes, seen.py; 10: struck
# text marked where it stands, a PDF's visible annotations read, visibility.py, pdfseen.py, pdf.py)

# "# Title", and "#Title" as Python-Markdown (which Frappe/ERPNext and other Python sites render with)
# reads it: no space needed when a capital or a number like "2." follows and no "#word" comes later on
# the line ("#finance #ap" and "#123 fixed" stay text).
_HEADING = re.compile(r"^(#{1,6})(?:\s+|(?=(?:[A-Z]|\d+[.:)])(?!.*\s#\w)))(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_TAG = re.compile(r"<[^>]+>")
_BLOCK_LINE = re.compile(r"^([-*+>|]|\d+[.)]\s)")  # a line that starts its own block: list item, quote, table


DP_MAX_UNITS = 80  # more units than this are packed greedily, not by the linear partition


class UnreadableFile(Exception):
    """A file that cannot be indexed; ``str(exc)`` says why and what to do."""


class ChunkingConfig(BaseModel):
    max_chars: int = Field(
        850, ge=200, description="Target size limit of a chunk's text (MiniLM reads ~256 tokens)."
    )
    min_chars: int = Field(
        200, ge=0, description="Smaller sections merge into a neighbour; a section up to max+min stays whole."
    )


class _Piece(BaseModel):
    path: list[str]
    text: str


def supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str:
    """The SHA-256 of a file read 1 MiB at a time (what ``Chunk.file_sha256`` holds)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def unreadable(exc: OSError) -> UnreadableFile:
    """Why a file could not be read, in the words the ingest reports."""
    if isinstance(exc, FileNotFoundError):
        return UnreadableFile("file not found")
    if isinstance(exc, IsADirectoryError):
        return UnreadableFile("is a directory")
    return UnreadableFile(f"cannot read the file: {exc.strerror or exc}")


def chunk_file(path: Path, config: ChunkingConfig | None = None) -> list[Chunk]:
    """Read and chunk one file. Raises ``UnreadableFile`` when it cannot be indexed."""
    config = config or ChunkingConfig()
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise UnreadableFile(f"unsupported file type '{suffix or path.name}' (supported: {kinds})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise unreadable(exc) from None
    kind: ChunkKind
    title: str | None = None
    if suffix in MARKDOWN_SUFFIXES:
        kind, (pieces, title) = "markdown", split_markdown_titled(visible_markdown(_decode(data)), config)
    elif suffix in RST_SUFFIXES:
        kind, (pieces, title) = "markdown", split_markdown_titled(rst_to_markdown(_decode(data)), config)
    elif suffix in HTML_SUFFIXES:
        text, page_title = html_to_markdown(_decode(data))
        kind, (pieces, title) = "markdown", split_markdown_titled(text, config)
        title = title or page_title
    elif suffix in TEXT_SUFFIXES:
        kind, pieces = "text", _paragraph_pieces([], _decode(data), config)
    elif suffix == ".pdf":
        from taskcrew.knowledge.formats import pdf_pieces

        kind, (pieces, title) = "pdf", pdf_pieces(data, [], config)
    else:
        from taskcrew.knowledge.formats import email_pieces

        kind, (pieces, title) = "email", email_pieces(data, config)
    chunks = _to_chunks(pieces, str(path.resolve()), kind, file_sha256(data), title or "")
    if not chunks:
        raise UnreadableFile("no text to index (the file is empty)")
    return chunks


def _decode(data: bytes) -> str:
    if b"\x00" in data[:4096]:
        raise UnreadableFile("looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"not UTF-8 text (byte {exc.start}); re-save it as UTF-8") from None


def _to_chunks(pieces: list[_Piece], source: str, kind: ChunkKind, sha: str, title: str = "") -> list[Chunk]:
    return list(stream_chunks(pieces, source, kind, sha, title))


def stream_chunks(
    pieces: Iterable[_Piece], source: str, kind: ChunkKind, sha: str, title: str = ""
) -> Iterator[Chunk]:
    """Chunks with content-hash ids and ordinals for non-empty pieces, in order.

    Every format's chunks pass here, so here their text, heading path and title are cut down to what
    a person reading the document sees (``seen.seen``: tag characters, bidi controls, zero-width
    characters … left out): what no reader of the file saw never reaches a prompt."""
    ids: set[str] = set()
    ordinal = 0
    title = seen(title)
    for piece in pieces:
        text = seen(piece.text).strip()
        if not text:
            continue
        path = [seen(h) for h in piece.path]
        parts = [CHUNKER_VERSION, source, title, *path, text]
        digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]
        chunk_id = digest if digest not in ids else f"{digest}-{ordinal}"
        ids.add(chunk_id)
        yield Chunk(
            id=chunk_id,
            text=text,
            source=source,
            heading_path=path,
            kind=kind,
            ordinal=ordinal,
            file_sha256=sha,
            title=title,
        )
        ordinal += 1


# -- markdown ------------------------------------------------------------------------------------
def split_markdown(text: str, config: ChunkingConfig) -> list[_Piece]:
    return split_markdown_titled(text, config)[0]


def split_markdown_titled(text: str, config: ChunkingConfig) -> tuple[list[_Piece], str | None]:
    """Sections by heading (ignoring '#' lines inside code fences), sized into chunks, and the title.

    A lone level-1 heading at the top is the document's title: it is left out of the heading
    paths (it would only repeat in every chunk) except for the text directly under it; every
    chunk carries it as ``title``.
    """
    sections = list(_markdown_sections(text))
    titles = {path[0] for path, _ in sections if path and path[0][0] == 1}
    drop_title = len(titles) == 1 and all(path and path[0] in titles for path, _ in sections[1:])
    pieces: list[_Piece] = []
    for path, body in sections:
        names = [title for _, title in path]
        if drop_title and len(names) > 1:
            names = names[1:]
        pieces.extend(_paragraph_pieces(names, body, config))
    title = next(iter(titles))[1] if drop_title else None
    return _merge_small(pieces, config), title


def _markdown_sections(text: str) -> Iterator[tuple[list[tuple[int, str]], str]]:
    """(heading path as (level, title) pairs, body text) for each section, in order."""
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    in_fence = False
    for line in _strip_front_matter(text).splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            body.append(line)
            continue
        yield list(stack), "\n".join(body)
        level = len(match.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, match.group(2).strip()))
        body = []
    yield list(stack), "\n".join(body)


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


def _merge_small(pieces: list[_Piece], config: ChunkingConfig) -> list[_Piece]:
    return list(merge_small(pieces, config))


def merge_small(pieces: Iterable[_Piece], config: ChunkingConfig) -> Iterator[_Piece]:
    """Merge a tiny piece with its next neighbour when that is its child or a sibling under the
    same parent (never across top-level chapters) and the two fit in ``max_chars``."""
    prev: _Piece | None = None
    for piece in pieces:
        if prev is not None:
            small = len(prev.text) < config.min_chars or len(piece.text) < config.min_chars
            parent_and_child = prev.path == piece.path[: len(prev.path)]
            siblings = len(prev.path) == len(piece.path) > 1 and prev.path[:-1] == piece.path[:-1]
            if small and (parent_and_child or siblings):
                candidate = _join(prev, piece)
                if len(candidate.text) <= config.max_chars:
                    prev = candidate
                    continue
            yield prev
        prev = piece
    if prev is not None:
        yield prev


def _join(a: _Piece, b: _Piece) -> _Piece:
    """Siblings merge under their parent; a short parent intro merges into its first child and
    takes the child's path (the section a hit on it names is the one with the content)."""
    if a.path == b.path[: len(a.path)] and len(a.path) < len(b.path):
        return _Piece(path=b.path, text=f"{a.text.strip()}\n\n{b.text.strip()}".strip())
    common: list[str] = []
    for x, y in zip(a.path, b.path, strict=False):
        if x != y:
            break
        common.append(x)

    def with_headings(piece: _Piece) -> str:
        extra = piece.path[len(common) :]
        heads = [f"{'#' * (len(common) + i + 1)} {title}" for i, title in enumerate(extra)]
        return "\n".join([*heads, piece.text.strip()]).strip()

    return _Piece(path=common, text=f"{with_headings(a)}\n\n{with_headings(b)}".strip())


# -- sizing ----------------------------------------------------------------------------------------
def _paragraph_pieces(path: list[str], body: str, config: ChunkingConfig) -> list[_Piece]:
    """Split a section's paragraphs into as few pieces of as equal size as ``max_chars`` allows.

    A section up to ``max_chars + min_chars`` stays whole, so no section ends in a scrap.
    """
    units: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(body.strip()):
        paragraph = _unwrap(paragraph.strip())
        if paragraph:
            units.extend(_split_long(paragraph, config.max_chars))
    if not units:
        return []
    whole = "\n\n".join(units)
    if len(whole) <= config.max_chars + config.min_chars:
        return [_Piece(path=path, text=whole)]
    return [_Piece(path=path, text="\n\n".join(group)) for group in _partition(units, config.max_chars)]


def _unwrap(paragraph: str) -> str:
    """Join hard-wrapped lines of a paragraph; list items, table rows and code keep their lines."""
    if paragraph.startswith(("```", "~~~", "    ")):
        return paragraph
    lines = [line.strip() for line in paragraph.splitlines()]
    out: list[str] = []
    for line in lines:
        if out and line and not _BLOCK_LINE.match(line):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(line)
    return "\n".join(out)


def _partition(units: list[str], max_chars: int) -> list[list[str]]:
    """Consecutive groups of units, each joined no longer than ``max_chars``, with the fewest
    groups and, among those, the smallest largest group (linear partition by dynamic programming;
    greedy packing for very long texts)."""
    n = len(units)
    if n > DP_MAX_UNITS:
        return _greedy(units, max_chars)
    prefix = [0]
    for unit in units:
        prefix.append(prefix[-1] + len(unit) + 2)

    def size(i: int, j: int) -> int:  # units[i:j] joined with blank lines
        return prefix[j] - prefix[i] - 2

    inf = float("inf")
    for parts in range(max(1, math.ceil(size(0, n) / max_chars)), n + 1):
        best = [[inf] * (n + 1) for _ in range(parts + 1)]
        cut = [[0] * (n + 1) for _ in range(parts + 1)]
        best[0][0] = 0
        for p in range(1, parts + 1):
            for j in range(p, n + 1):
                for i in range(p - 1, j):
                    piece = size(i, j)
                    if piece <= max_chars and max(best[p - 1][i], piece) < best[p][j]:
                        best[p][j], cut[p][j] = max(best[p - 1][i], piece), i
        if best[parts][n] < inf:
            groups: list[list[str]] = []
            j = n
            for p in range(parts, 0, -1):
                groups.append(units[cut[p][j] : j])
                j = cut[p][j]
            return groups[::-1]
    return [[u] for u in units]


def _greedy(units: list[str], max_chars: int) -> list[list[str]]:
    packer = _GreedyPacker(max_chars)
    groups = [group for unit in units if (group := packer.add(unit)) is not None]
    return [*groups, packer.current]


class _GreedyPacker:
    """Packs units into groups joined no longer than ``max_chars``, one unit at a time."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.current: list[str] = []
        self.length = 0

    def add(self, unit: str) -> list[str] | None:
        """Add a unit; returns the group it closed, if any."""
        closed = None
        if self.current and self.length + 2 + len(unit) > self.max_chars:
            closed, self.current, self.length = self.current, [], -2
        self.current.append(unit)
        self.length += 2 + len(unit) if self.length else len(unit)
        return closed


def _split_long(paragraph: str, max_chars: int) -> list[str]:
    """Split an over-long paragraph on lines, else sentences, else whitespace."""
    if len(paragraph) <= max_chars:
        return [paragraph]
    if "\n" in paragraph:
        parts, separator = paragraph.split("\n"), "\n"
    else:
        parts, separator = _SENTENCE_END.split(paragraph), " "
        if len(parts) == 1:
            return _hard_cut(paragraph, max_chars)
    out: list[str] = []
    current = ""
    for part in parts:
        for sub in _split_long(part, max_chars):
            joined = f"{current}{separator}{sub}" if current else sub
            if current and len(joined) > max_chars:
                out.append(current)
                current = sub
            else:
                current = joined
    if current:
        out.append(current)
    return out


def _hard_cut(text: str, max_chars: int) -> list[str]:
    out: list[str] = []
    while len(text) > max_chars:
        cut = text.rfind(" ", 0, max_chars)
        cut = cut if cut > max_chars // 2 else max_chars
        out.append(text[:cut].strip())
        text = text[cut:].strip()
    return [*out, text] if text else out
