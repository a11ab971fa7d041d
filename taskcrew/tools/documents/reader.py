"""``SandboxFiles``: list, read and search the sandbox folder, read-only and confined.

Parsing runs in a child process under time and memory limits (:mod:`worker`); results — text and
refusals alike — are cached per (path, size, mtime), so paging through a long file and searching
never parse a file twice. A text carries the SHA-256 of the bytes it was parsed from
(``FileContent.sha256``): whoever checks a file against a digest checks the text it shows, even when
the file was swapped under the same size and mtime. Every odd file-system entry is a clean per-file
result.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from taskcrew.tools.base import ToolResult
from taskcrew.tools.documents.confine import confine
from taskcrew.tools.documents.formats import KNOWN, file_kind
from taskcrew.tools.documents.limits import CACHE_CHARS, CACHE_ENTRIES, MAX_FILE_BYTES
from taskcrew.tools.documents.mail import email_summary
from taskcrew.tools.documents.models import (
    NO_TEXT_LAYER,
    VALUES_MARK,
    EmailContent,
    FileAccessError,
    FileContent,
    FileEntry,
    FileKind,
    FileListing,
    FileMissing,
    PathRefused,
    SearchHit,
    SearchResult,
    TooComplex,
    Unreadable,
    size_text,
)
from taskcrew.tools.documents.provenance import OcrProvenance
from taskcrew.tools.documents.worker import ParseWorker, shared_worker


def default_private_patterns() -> tuple[str, ...]:
    from taskcrew.sandbox.ground_truth import PRIVATE_PATTERNS

    return PRIVATE_PATTERNS


class SandboxFiles:
    """The sandbox folder, read-only. Methods returning ``ToolResult`` are what the tools call.

    ``hidden`` adds glob patterns to the private ones (the sandbox's answer files), which apply at
    any depth wherever the reader is rooted.
    """

    def __init__(
        self,
        root: Path,
        *,
        hidden: Sequence[str] = (),
        max_chars: int = 5000,
        max_hits: int = 40,
        max_entries: int = 500,
        worker: ParseWorker | None = None,
        record_reads: bool = False,
    ) -> None:
        if not root.is_dir():
            raise ValueError(f"sandbox root is not a folder: {root}")
        self.root = root.resolve()
        self.given_root = Path(os.path.abspath(root))  # as spelled; absolute paths may use it
        self.hidden = tuple(dict.fromkeys((*default_private_patterns(), *hidden)))
        self.max_chars = max_chars
        self.max_hits = max_hits
        self.max_entries = max_entries
        self.worker = worker or shared_worker()
        self._cache: OrderedDict[tuple[str, int, int], FileContent | FileAccessError] = OrderedDict()
        self.provenance = OcrProvenance()  # what was read by OCR: flags those values in approvals
        self._sizes: dict[tuple[str, int, int], int] = {}
        self.parses = 0  # how many times a file was actually parsed (the cache's effect, for tests)
        # a run's reader (``record_reads``) keeps the digests of each file's bytes it read or searched
        # (``read_digest``), by the file and by the name it was read as (a link may move)
        self.record_reads = record_reads
        self._served: dict[str, set[str]] = {}
        self._spelled: dict[str, set[str]] = {}

    # -------------------------------------------------------------------- tool-facing methods

    def list_files(self, folder: str = ".", offset: int = 0) -> ToolResult:
        try:
            return ToolResult.success(self.listing(folder, offset))
        except FileAccessError as exc:
            return ToolResult.failure(str(exc))

    def read_file(self, path: str, offset: int = 0) -> ToolResult:
        try:
            return ToolResult.success(self.read(path, offset))
        except FileAccessError as exc:
            return ToolResult.failure(str(exc))

    def search_files(self, query: str, folder: str = ".") -> ToolResult:
        try:
            return ToolResult.success(self.search(query, folder))
        except FileAccessError as exc:
            return ToolResult.failure(str(exc))

    # ------------------------------------------------------------------------ plain methods

    def resolve(self, path: str) -> Path:
        return confine(self.given_root, path, hidden=self.hidden)

    def plain_file(self, path: str) -> Path:
        """``path`` inside the sandbox, checked as every read checks what it opens (confined, a plain
        file, no hard link); ``FileAccessError`` saying why not."""
        target = self.resolve(path)
        self._regular_stat(target, path)
        return target

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def listing(self, folder: str = ".", offset: int = 0) -> FileListing:
        base = self.resolve(folder)
        if not base.is_dir():
            if base.exists():
                raise FileAccessError(f"{folder!r} is a file, not a folder; use read_file to read it")
            raise FileMissing(self._missing_message(folder))
        files, skipped = self._walk(base)
        entries = [self._entry(p) for p in files[: self.max_entries]]
        return FileListing(
            folder=self.rel(base) if base != self.root else ".",
            entries=entries,
            offset=max(0, offset),
            skipped=skipped,
            max_chars=self.max_chars,
        )

    def read(self, path: str, offset: int = 0) -> FileContent:
        target = self._existing_file(path)
        content = self._parsed(target, path)
        if self.record_reads:
            self._spelled.setdefault(self._as_spelled(path), set()).add(content.sha256)
        self._shown(content)
        return content.model_copy(update={"offset": max(0, offset), "max_chars": self.max_chars})

    def search(self, query: str, folder: str = ".", max_hits: int | None = None) -> SearchResult:
        """Lines naming every word of ``query``, at most ``max_hits`` (default: the reader's cap)."""
        max_hits = max_hits or self.max_hits
        terms = query.lower().split()
        if not terms:
            raise FileAccessError("empty search query; give a word or phrase, e.g. an invoice number")
        base = self.resolve(folder)
        if not base.is_dir():
            raise FileMissing(self._missing_message(folder))
        files, _ = self._walk(base)
        hits: list[SearchHit] = []
        unreadable: list[str] = []
        truncated = False
        per_file = max(3, max_hits // 5)
        for path in files:
            if len(hits) >= max_hits:
                truncated = True
                break
            rel = self.rel(path)
            content: FileContent | None = None
            try:
                content = self._parsed(path, rel)
                units = list(_units(content))
            except FileAccessError as exc:
                unreadable.append(f"{rel} ({_short_reason(str(exc))})")
                units = []
            found = 0
            for location, text in units:
                for number, line in enumerate(text.splitlines(), start=1):
                    lowered = line.lower()
                    if line.startswith(VALUES_MARK):  # the values again, with confidences: not a hit
                        continue
                    if all(term in lowered for term in terms):
                        if len(hits) >= max_hits or found >= per_file:
                            truncated = True
                            break
                        hits.append(
                            SearchHit(path=rel, location=f"{location}, line {number}", line=_clip(line))
                        )
                        found += 1
            if found and content is not None:
                self._shown(content)  # its lines reach the model: OCR'd ones are recorded as such
        return SearchResult(
            query=query, hits=hits, files_searched=len(files), unreadable=unreadable, truncated=truncated
        )

    # ----------------------------------------------------------------------------- helpers

    def _shown(self, content: FileContent) -> None:
        """``content``'s text reaches the model (read, or a search hit in it): the one place the run's
        OCR record (``provenance``) learns what was read by OCR, so that approvals flag those values."""
        if content.ocr:
            self.provenance.record(content)

    def read_digest(self, path: str) -> str | None:
        """The SHA-256 of the bytes of ``path`` this reader read (or searched) for its caller: None
        when it read none; "" when it read the file more than once and its bytes differed (it changed
        while the run read it). A run's approval seals what the run read, not what is there later."""
        seen = set(self._spelled.get(self._as_spelled(path), set()))  # a link switched since: not lost
        with contextlib.suppress(FileAccessError, ValueError):
            seen |= self._served.get(self.rel(self.resolve(path)), set())
        return None if not seen else next(iter(seen)) if len(seen) == 1 else ""

    def reads(self) -> dict[str, dict[str, list[str]]]:
        """What this reader read (``read_digest``'s record) and what it read by OCR (``provenance``'s
        record: ``ocr_forms``, ``ocr_values``), kept with a run's checkpoint so that a resumed leg's
        approvals seal what the legs before it read, and flag what they read by OCR (``remember``)."""
        return {
            "served": {name: sorted(d) for name, d in self._served.items()},
            "spelled": {name: sorted(d) for name, d in self._spelled.items()},
            **self.provenance.saved(),
        }

    def remember(self, reads: dict[str, dict[str, list[str]]]) -> None:
        """Add what an earlier leg of the run read (``reads``) to this reader's record.

        A record saved before the OCR record was kept with it (no ``ocr_forms``) says which files the
        run read, not which of their values OCR read: each of those files whose bytes are still the
        ones the run read is parsed again (the cache, or the parse worker) and its OCR'd text recorded,
        so values an earlier leg read by OCR are flagged still (every such file the run parsed, also
        those a search found nothing in: flagging more is the safe side). A file changed since is not:
        its seal fails the approval anyway."""
        for mine, theirs in (
            (self._served, reads.get("served", {})),
            (self._spelled, reads.get("spelled", {})),
        ):
            for name, digests in theirs.items():
                mine.setdefault(name, set()).update(digests)
        if "ocr_forms" in reads or "ocr_values" in reads:
            self.provenance.restore(reads)
        else:
            self._reread_ocr(reads.get("served", {}))

    def _reread_ocr(self, served: dict[str, list[str]]) -> None:
        """Record the OCR'd text of each file in ``served`` whose bytes are still those it lists."""
        for name, digests in served.items():
            with contextlib.suppress(FileAccessError, ValueError):
                if file_kind(name) not in ("pdf", "image", "email"):
                    continue  # none of its text is OCR'd
                content = self._parsed_once(self.plain_file(name), name)
                if content.sha256 in digests:
                    self._shown(content)

    def _as_spelled(self, path: str) -> str:
        """``path`` as named under the sandbox, links not followed ("./a/../b.txt" is "b.txt")."""
        return os.path.relpath(os.path.normpath(os.path.join(self.given_root, path)), self.given_root)

    def _parsed(self, target: Path, shown: str) -> FileContent:
        """The file's parsed content, from the cache or parsed once under limits."""
        content = self._parsed_once(target, shown)
        if self.record_reads:
            self._served.setdefault(str(content.path), set()).add(content.sha256)
        return content

    def _parsed_once(self, target: Path, shown: str) -> FileContent:
        info = self._regular_stat(target, shown)
        key = (str(target), info.st_size, info.st_mtime_ns)
        if key in self._cache:
            self._cache.move_to_end(key)
            cached = self._cache[key]
            if isinstance(cached, FileAccessError):
                raise cached
            return cached
        result: FileContent | FileAccessError
        try:
            result = self._parse(target, info)
        except FileAccessError as exc:
            result = exc
        self._cache[key] = result
        self._sizes[key] = len(result.full_text()) if isinstance(result, FileContent) else 0
        while len(self._cache) > 1 and (
            len(self._cache) > CACHE_ENTRIES or sum(self._sizes.values()) > CACHE_CHARS
        ):
            oldest, _ = self._cache.popitem(last=False)
            self._sizes.pop(oldest, None)
        if isinstance(result, FileAccessError):
            raise result
        return result

    def _parse(self, target: Path, info: os.stat_result) -> FileContent:
        rel = self.rel(target)
        if info.st_size > MAX_FILE_BYTES:
            raise Unreadable(f"{rel!r} is too large to read here ({size_text(info.st_size)}); ask a human")
        kind = file_kind(target.name)
        if kind == "other":
            raise Unreadable(f"{rel!r} is not a document type this reader understands ({KNOWN}); ask a human")
        return self.content_of(self._bytes(target, rel), rel, kind)

    def content_of(self, data: bytes, rel: str, kind: FileKind) -> FileContent:
        """``data``, the bytes of the sandbox file ``rel``, parsed under the reader's limits (not
        cached: the cache knows a file by its size and mtime), with the SHA-256 of those bytes."""
        self.parses += 1
        content = self.worker.parse(data, rel, kind)
        digest = hashlib.sha256(data).hexdigest()  # of the bytes parsed: kept with their text
        return content.model_copy(update={"path": rel, "size": len(data), "sha256": digest})

    def digest_now(self, path: str) -> str:
        """The SHA-256 of ``path``'s bytes as they are now, read as ``plain_bytes`` reads them (""
        when they cannot be read): what a seal is taken and checked by."""
        try:
            return hashlib.sha256(self.plain_bytes(path)).hexdigest()
        except FileAccessError:
            return ""

    def plain_bytes(self, path: str) -> bytes:
        """The bytes of ``path``, checked as every read checks what it opens (``plain_file``: confined,
        a plain file, no hard link; the file opened is checked again, so one swapped in after that
        check is not read either), at most ``MAX_FILE_BYTES``; ``FileAccessError`` saying why not."""
        return self._bytes(self.plain_file(path), path)  # its size checked on the file as opened

    def _bytes(self, target: Path, shown: str) -> bytes:
        """One read of a plain file opened without following a link or blocking on a pipe; the file
        as opened is checked again (plain, one link, not above ``MAX_FILE_BYTES``)."""
        try:
            with open(target, "rb", opener=_nonblocking_opener) as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                    raise PathRefused(
                        f"refused: {shown!r} changed into a link or a special file as it was opened"
                    )
                if info.st_size > MAX_FILE_BYTES:
                    raise Unreadable(
                        f"{shown!r} is too large to read here ({size_text(info.st_size)}); ask a human"
                    )
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise Unreadable(
                f"{shown!r} cannot be opened ({exc.strerror or type(exc).__name__}); ask a human"
            ) from exc
        if len(data) > MAX_FILE_BYTES:
            raise Unreadable(f"{shown!r} grew too large to read here as it was read; ask a human")
        return data

    def _regular_stat(self, target: Path, shown: str) -> os.stat_result:
        """stat() of a plain file; pipes, devices, sockets and hard links are refused."""
        try:
            info = target.stat()
        except OSError as exc:
            raise Unreadable(f"{shown!r} cannot be opened ({exc.strerror or type(exc).__name__})") from exc
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(
                f"{shown!r} is a special file (pipe, device or socket), not a document; it is not read"
            )
        if info.st_nlink > 1:
            raise PathRefused(
                f"refused: {shown!r} is a hard link (the same file may live outside the sandbox); ask a human "
                "for a plain copy"
            )
        return info

    def _walk(self, base: Path) -> tuple[list[Path], int]:
        found: list[Path] = []
        skipped = 0
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False, onerror=lambda _e: None):
            current = Path(dirpath)
            keep = []
            for name in sorted(dirnames):
                try:
                    confine(self.root, current / name, hidden=self.hidden)
                    keep.append(name)
                except PathRefused:
                    skipped += 1
            dirnames[:] = keep
            for name in sorted(filenames):
                candidate = current / name
                try:
                    resolved = confine(self.root, candidate, hidden=self.hidden)
                    info = resolved.stat()
                except (PathRefused, OSError):
                    skipped += 1
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                    found.append(candidate)
                else:
                    skipped += 1
        return sorted(found, key=lambda p: self.rel(p).lower()), skipped

    def _entry(self, path: Path) -> FileEntry:
        kind = file_kind(path.name)
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        entry = FileEntry(path=self.rel(path), size=size, kind=kind)
        if kind == "email" and 0 < size <= MAX_FILE_BYTES:
            try:
                entry.email = email_summary(path.read_bytes())
            except Exception as exc:  # a broken .eml must not break the listing
                entry.note = f"cannot parse e-mail headers ({type(exc).__name__})"
        elif kind == "email":
            entry.note = "empty file" if size == 0 else "too large to read"
        return entry

    def _existing_file(self, path: str) -> Path:
        target = self.resolve(path)
        try:
            if target.is_dir():
                raise FileAccessError(f"{path!r} is a folder; use list_files to see what is in it")
            exists = target.exists()
        except OSError as exc:
            raise Unreadable(f"{path!r} cannot be opened ({exc.strerror or type(exc).__name__})") from exc
        if not exists:
            raise FileMissing(self._missing_message(path))
        return target

    def _missing_message(self, path: str) -> str:
        files, _ = self._walk(self.root)
        names = [self.rel(p) for p in files]
        close = difflib.get_close_matches(path, names, n=5, cutoff=0.4) if len(path) < 300 else []
        by_name = [n for n in names if PurePosixPath(n).name.lower() == PurePosixPath(path).name.lower()]
        suggestions = list(dict.fromkeys(by_name + close))
        shown = path if len(path) < 300 else path[:120] + "…"
        message = f"no such file: {shown!r}."
        if suggestions:
            message += " Nearby names: " + ", ".join(repr(s) for s in suggestions[:5]) + "."
        else:
            folder = PurePosixPath(path).parent.as_posix()
            listed = [n for n in names if PurePosixPath(n).parent.as_posix() == folder][:10]
            if listed:
                message += f" Files in {folder!r}: " + ", ".join(repr(s) for s in listed) + "."
        return message + " Use list_files to see every file."


def _nonblocking_opener(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))


def _units(content: FileContent) -> Iterator[tuple[str, str]]:
    if content.paged:
        for page in content.pages:
            yield f"page {page.number}{' (read by OCR)' if page.ocr else ''}", page.text
    elif content.email is not None:
        yield from _email_units(content.email, "")
    else:
        yield "text", content.text or ""


def _email_units(email: EmailContent, prefix: str) -> Iterator[tuple[str, str]]:
    h = email.headers
    yield f"{prefix}header", f"From: {h.sender}\nTo: {h.to}\nSubject: {h.subject}"
    yield f"{prefix}body", email.body
    for att in email.attachments:
        where = f"{prefix}attachment {att.name}"
        for page in att.pages:
            yield f"{where} page {page.number}{' (read by OCR)' if page.ocr else ''}", page.text
        if att.text:
            yield where, att.text
        if att.email:
            yield from _email_units(att.email, f"{where} > ")


def _clip(line: str, limit: int = 200) -> str:
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _short_reason(message: str) -> str:
    if NO_TEXT_LAYER in message:
        return "scanned image, no text layer"
    if "too complex" in message:
        return "too complex to read"
    if "damaged" in message:
        return "damaged file"
    return message.split(";")[0][:80]


__all__ = ["SandboxFiles", "TooComplex"]
