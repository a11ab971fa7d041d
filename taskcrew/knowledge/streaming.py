"""Chunk a large markdown or text file without holding it: read in blocks, emit chunks as they close.

``iter_chunks`` yields exactly the chunks ``chunking.chunk_file`` returns for the same file (same
text, heading paths, ids and ordinals; tests check this across block boundaries), but holds only a
block, the paragraph being read and a section's last few units. A paragraph (text between blank
lines) is held whole, so a file without blank lines is read into memory like before.

``scan_file`` is a first, cheap pass (hash, UTF-8 and binary checks, markdown's title rule) so an
unreadable file is refused before anything is written. PDF and email files are not streamed
(pypdf and the email parser need the whole file); ``chunk_passes`` hides the difference.
"""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from taskcrew.knowledge.chunking import (
    _FENCE,
    _HEADING,
    _PARAGRAPH_BREAK,
    DP_MAX_UNITS,
    MARKDOWN_SUFFIXES,
    SUPPORTED_SUFFIXES,
    TEXT_SUFFIXES,
    ChunkingConfig,
    UnreadableFile,
    _GreedyPacker,
    _partition,
    _Piece,
    _split_long,
    _unwrap,
    chunk_file,
    merge_small,
    stream_chunks,
    unreadable,
)
from taskcrew.knowledge.models import Chunk
from taskcrew.tools.documents.visibility import MarkdownStyles, visible_markdown_lines

BLOCK_BYTES = 256 * 1024
_FEED_CHARS = 64 * 1024  # a section's lines are handed to the paragraph splitter this many at a time


class FileScan(BaseModel):
    sha256: str
    size: int
    drop_title: bool = False  # markdown: a lone level-1 title is left out of the heading paths
    title: str = ""  # that title, carried by every chunk
    styles: str = ""  # markdown: the style sheets of its raw HTML (visibility.MarkdownStyles)


def streamable(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES | TEXT_SUFFIXES


def chunk_passes(
    path: Path, config: ChunkingConfig | None = None, block_bytes: int | None = None
) -> Callable[[], Iterator[Chunk]]:
    """A function that yields the file's chunks afresh on each call: streamed from disk for markdown
    and text, held in memory for PDF and email. Raises ``UnreadableFile`` now for a file that cannot
    be indexed; a later pass raises it if the file changed in between."""
    config = config or ChunkingConfig()
    block_bytes = block_bytes or BLOCK_BYTES
    if not streamable(path):
        chunks = chunk_file(path, config)
        return lambda: iter(chunks)
    scan = scan_file(path, block_bytes)
    return lambda: iter_chunks(path, config, scan, block_bytes)


def scan_file(path: Path, block_bytes: int | None = None) -> FileScan:
    """Hash and check a markdown or text file in one pass (nothing held); raises ``UnreadableFile``."""
    block_bytes = block_bytes or BLOCK_BYTES
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise UnreadableFile(f"unsupported file type '{suffix or path.name}' (supported: {kinds})")
    digest = hashlib.sha256()
    blocks = _text_blocks(path, block_bytes, digest)
    if suffix not in MARKDOWN_SUFFIXES:
        for _ in blocks:
            pass
        return FileScan(sha256=digest.hexdigest(), size=_size(path))
    firsts: set[tuple[int, str]] = set()  # the top of the heading path after each heading
    styles = MarkdownStyles()
    for stack, _ in _events(styles.watch(_lines(_without_front_matter(blocks)))):
        if stack is not None and len(firsts) < 2:
            firsts.add(stack[0])
    drop_title = len(firsts) == 1 and next(iter(firsts))[0] == 1
    title = next(iter(firsts))[1] if drop_title else ""
    return FileScan(
        sha256=digest.hexdigest(), size=_size(path), drop_title=drop_title, title=title, styles=styles.text()
    )


def iter_chunks(
    path: Path,
    config: ChunkingConfig | None = None,
    scan: FileScan | None = None,
    block_bytes: int | None = None,
) -> Iterator[Chunk]:
    """The chunks of a markdown or text file, read ``block_bytes`` at a time (others: ``chunk_file``)."""
    config = config or ChunkingConfig()
    if not streamable(path):
        yield from chunk_file(path, config)
        return
    block_bytes = block_bytes or BLOCK_BYTES
    scan = scan or scan_file(path, block_bytes)
    digest = hashlib.sha256()
    blocks = _text_blocks(path, block_bytes, digest)
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        lines = visible_markdown_lines(_lines(_without_front_matter(blocks)), scan.styles)
        pieces = merge_small(_markdown_pieces(lines, config, scan.drop_title), config)
        kind = "markdown"
    else:
        pieces, kind = _ParagraphStream([], config).pieces(blocks), "text"
    count = 0
    for chunk in stream_chunks(pieces, str(path.resolve()), kind, scan.sha256, scan.title):  # type: ignore[arg-type]
        count += 1
        yield chunk
    if digest.hexdigest() != scan.sha256:
        raise UnreadableFile("the file changed while it was being read; run the ingest again")
    if count == 0:
        raise UnreadableFile("no text to index (the file is empty)")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _text_blocks(path: Path, block_bytes: int, digest: hashlib._Hash) -> Iterator[str]:
    """The file decoded as UTF-8 (a BOM dropped), block by block; feeds ``digest`` the raw bytes."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    offset = 0
    try:
        with path.open("rb") as fh:
            while True:
                data = fh.read(block_bytes)
                if offset < 4096 and b"\x00" in data[: 4096 - offset]:  # as chunk_file's check
                    raise UnreadableFile("looks like a binary file, not text")
                try:
                    text = decoder.decode(data, final=not data)
                except UnicodeDecodeError as exc:
                    raise UnreadableFile(
                        f"not UTF-8 text (byte {max(offset + exc.start, 0)}); re-save it as UTF-8"
                    ) from None
                digest.update(data)
                offset += len(data)
                if text:
                    yield text
                if not data:
                    return
    except OSError as exc:
        raise unreadable(exc) from None


def _without_front_matter(blocks: Iterator[str]) -> Iterator[str]:
    """``chunking._strip_front_matter`` on a stream: a leading '---' block up to the next '\\n---'."""
    head = ""
    for block in blocks:
        head += block
        if len(head) < 4:
            continue
        if not head.startswith("---\n"):
            break
        end = head.find("\n---", 4)
        if end != -1:
            head = head[end + 4 :]
            break
    yield head
    yield from blocks


def _lines(blocks: Iterable[str]) -> Iterator[str]:
    """``str.splitlines()`` of the concatenated blocks, without holding them."""
    carry = ""
    for block in blocks:
        parts = (carry + block).splitlines(keepends=True)
        carry = parts.pop() if parts else ""
        for part in parts:
            yield part.splitlines()[0]
    if carry:
        yield carry.splitlines()[0]


def _events(lines: Iterable[str]) -> Iterator[tuple[list[tuple[int, str]] | None, str]]:
    """(heading path, "") after each heading line, (None, line) for a body line ('#' lines in
    code fences are text)."""
    stack: list[tuple[int, str]] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            yield None, line
            continue
        level = len(match.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, match.group(2).strip()))
        yield stack, ""


def _markdown_pieces(lines: Iterable[str], config: ChunkingConfig, drop_title: bool) -> Iterator[_Piece]:
    """``chunking.split_markdown`` before merging, one section at a time."""
    section = _SectionStream([], config)
    for stack, line in _events(lines):
        if stack is None:
            yield from section.line(line)
            continue
        yield from section.close()
        names = [title for _, title in stack]
        if drop_title and len(names) > 1:
            names = names[1:]
        section = _SectionStream(names, config)
    yield from section.close()


class _SectionStream:
    """A markdown section's body lines, handed to the paragraph splitter in batches."""

    def __init__(self, path: list[str], config: ChunkingConfig) -> None:
        self.paragraphs = _ParagraphStream(path, config)
        self.lines: list[str] = []
        self.chars = 0
        self.first = True

    def line(self, line: str) -> list[_Piece]:
        self.lines.append(line)
        self.chars += len(line) + 1
        return self._flush() if self.chars > _FEED_CHARS else []

    def close(self) -> list[_Piece]:
        return [*self._flush(), *self.paragraphs.close()]

    def _flush(self) -> list[_Piece]:
        if not self.lines:
            return []
        text = "\n".join(self.lines)
        out = self.paragraphs.feed(text if self.first else f"\n{text}")
        self.first, self.lines, self.chars = False, [], 0
        return out


class _ParagraphStream:
    """``chunking._paragraph_pieces`` fed text piece by piece.

    Units are collected while the section could still stay whole or be split by the linear
    partition (at most ``DP_MAX_UNITS`` units); past that, the same greedy packing as the
    whole-text path runs unit by unit and only the open group is held.
    """

    def __init__(self, path: list[str], config: ChunkingConfig) -> None:
        self.path = path
        self.config = config
        self.buffer = ""
        self.units: list[str] = []
        self.length = -2  # of the units joined with blank lines
        self.packer: _GreedyPacker | None = None

    def pieces(self, blocks: Iterable[str]) -> Iterator[_Piece]:
        for block in blocks:
            yield from self.feed(block)
        yield from self.close()

    def feed(self, text: str) -> list[_Piece]:
        """Add text; returns the pieces completed by it."""
        self.buffer += text
        span = _last_break(self.buffer)
        if span is None:
            return []
        head, self.buffer = self.buffer[: span[0]], self.buffer[span[1] :]
        return self._paragraphs(head)

    def close(self) -> list[_Piece]:
        out = self._paragraphs(self.buffer)
        self.buffer = ""
        if self.packer is not None:
            if self.packer.current:
                out.append(self._piece(self.packer.current))
            return out
        if not self.units:
            return out
        whole = "\n\n".join(self.units)
        if len(whole) <= self.config.max_chars + self.config.min_chars:
            return [*out, _Piece(path=self.path, text=whole)]
        return [*out, *(self._piece(group) for group in _partition(self.units, self.config.max_chars))]

    def _paragraphs(self, text: str) -> list[_Piece]:
        out: list[_Piece] = []
        for paragraph in _PARAGRAPH_BREAK.split(text):
            paragraph = _unwrap(paragraph.strip())
            if paragraph:
                for unit in _split_long(paragraph, self.config.max_chars):
                    out.extend(self._unit(unit))
        return out

    def _unit(self, unit: str) -> list[_Piece]:
        if self.packer is not None:
            closed = self.packer.add(unit)
            return [self._piece(closed)] if closed is not None else []
        self.units.append(unit)
        self.length += 2 + len(unit)
        if len(self.units) <= DP_MAX_UNITS or self.length <= self.config.max_chars + self.config.min_chars:
            return []
        self.packer = _GreedyPacker(self.config.max_chars)
        units, self.units = self.units, []
        return [self._piece(group) for unit in units if (group := self.packer.add(unit)) is not None]

    def _piece(self, units: list[str]) -> _Piece:
        return _Piece(path=self.path, text="\n\n".join(units))


def _last_break(buffer: str) -> tuple[int, int] | None:
    """The span of the last paragraph break in ``buffer``. Cutting there splits the paragraphs as
    splitting the whole text would: a blank-line run that goes on in the next block only adds
    whitespace-only paragraphs, which are dropped."""
    last = None
    for last in _PARAGRAPH_BREAK.finditer(buffer):  # noqa: B007
        pass
    return last.span() if last is not None else None
