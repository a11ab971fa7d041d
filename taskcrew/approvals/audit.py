"""The tamper-evident audit log: every approval request, decision, send and refusal (and the
console's logins), appended to audit.jsonl with a keyed hash chain.

- Each entry's ``hash`` is an HMAC (the operator's key, ``signing.KeyRing``) over the entry and the
  previous entry's hash: an edited, removed or reordered line breaks the chain there, and whoever
  cannot read the key cannot re-hash a rewritten log.
- The head (last sequence number and hash) is signed and kept in a separate file, audit.head, so a
  truncated log (its tail cut off) no longer matches it.
- ``verify`` says where the chain breaks (a malformed line is one problem among others, never a
  crash); ``entries`` returns every line that still parses (as written: what a page shows),
  ``signed`` only the chain's entries (what every reader that decides something reads): from the
  start, each line the key signed that continues the entry kept before it (``_breaks``, the rule
  ``verify`` reports by). A genuine line copied to the end or from another log, a forged one, junk:
  none continues the chain, so none is an entry, and the writer chains the next entry to the last
  one kept (``_last``), so a line after the junk counts again. An edited or removed line ends the
  chain there for readers (what followed it no longer continues it) until the next append, which
  records an ``audit_break`` and chains on from the last entry kept: resuming after a break on a
  later line that claims to follow would let a forged or foreign line take a place (it hides no
  more than removing those lines would; ``verify`` names the damage). A retired key's lines verify
  no more, so after ``rotate-key --retire-old`` the chain starts again with the new key's entries.
Appends from several processes (workers, the console, the CLI) are serialised by a file lock
(``audit.jsonl.lock``); ``verify`` reads the log and its head under a shared lock on the same file
(two file reads, then checked without it), so it never sees an entry whose head is not yet written.

Readers decide on every send and question, so a process keeps what it parsed and verified per line
(``_LineCache``): a read (and an append: it follows the chain's last entry) still reads the whole
file, but only a line not seen before is parsed and its signature checked. The cache is keyed by the line's exact text, so a read returns exactly what a
fresh parse would: an edited line is a new line, a removed one is gone.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from taskcrew.approvals.signing import KeyRing, locked

GENESIS = "0" * 64
BREAK = "audit_break"  # appended when the log no longer matched its signed head: the damage stays on record


class AuditEntry(BaseModel):
    seq: int
    at: str
    who: str
    action: str
    target: str
    payload: dict[str, Any] = Field(default_factory=dict)
    prev: str
    hash: str = ""

    def body(self) -> dict[str, Any]:
        return self.model_dump(exclude={"hash"})


class _Head(BaseModel):
    seq: int
    hash: str
    sig: str


class AuditLogError(RuntimeError):
    """The log's last entry cannot be read: appending would hide the damage, so nothing is decided."""


class AuditProblem(BaseModel):
    line: int
    problem: str


class _Line:
    """One audit entry as read, and (once asked) whether the key ring (``KeyRing.ring_id``) signed it."""

    __slots__ = ("entry", "signed_by")

    def __init__(self, entry: AuditEntry) -> None:
        self.entry = entry
        self.signed_by: tuple[str, bool] | None = None


_DAMAGED = object()  # a line that is not an audit entry


class _LineCache:
    """Per log file, its lines as last read (text → ``_Line``): lines no longer in the file drop out
    at the next read, so it holds at most one file's worth; at most ``PATHS`` files are kept."""

    PATHS = 8

    def __init__(self) -> None:
        self._files: OrderedDict[str, dict[str, _Line | object]] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: Path, actions: tuple[str, ...] | None) -> list[_Line]:
        """The entries of ``path`` in order; with ``actions``, only those of these actions."""
        lines = self.parse(path, path.read_text(encoding="utf-8", errors="replace"))
        return [
            line
            for line in lines
            if isinstance(line, _Line) and (actions is None or line.entry.action in actions)
        ]

    def parse(self, path: Path, text: str) -> list[_Line | object]:
        """Each line of ``text`` (``path``'s, as read) as an entry, or ``_DAMAGED``; a line read
        before is not parsed again (nor, once asked, its signature checked again: ``_Line``)."""
        with self._lock:
            known = self._files.get(str(path), {})
        kept: dict[str, _Line | object] = {}
        out: list[_Line | object] = []
        for raw in text.splitlines():
            line = kept.get(raw) or known.get(raw)
            if line is None:
                try:
                    line = _Line(AuditEntry.model_validate_json(raw))
                except ValueError:
                    line = _DAMAGED
            kept[raw] = line
            out.append(line)
        with self._lock:
            self._files[str(path)] = kept
            self._files.move_to_end(str(path))
            while len(self._files) > self.PATHS:
                self._files.popitem(last=False)
        return out


_LINES = _LineCache()


def _actions(action: str | tuple[str, ...] | None) -> tuple[str, ...] | None:
    return (action,) if isinstance(action, str) else action


class AuditLog:
    def __init__(self, path: Path, keys: KeyRing | None = None) -> None:
        self.path = path
        self.head_path = path.with_suffix(".head")
        self.keys = keys or KeyRing(path.parent / "operator.key")
        path.parent.mkdir(parents=True, exist_ok=True)

    def _last(self) -> tuple[int, str]:
        """The sequence number and hash of the chain's last entry (``_chain``), which the next entry
        follows: lines after it that do not continue the chain (a copied or forged line) are passed
        over, so what is appended after them is an entry readers count. The whole log is read (each
        line parsed and its signature checked once per process: ``_LineCache``)."""
        if not self.path.exists():
            return 0, GENESIS
        text = self.path.read_text(encoding="utf-8", errors="replace")
        raws, lines = text.splitlines(), _LINES.parse(self.path, text)
        last = next((line for raw, line in zip(raws[::-1], lines[::-1], strict=True) if raw.strip()), None)
        if last is not None and not isinstance(last, _Line):
            raise AuditLogError(
                f"The audit log {self.path} ends in a line that is not an audit entry; no decision is "
                "recorded (or made) until it is restored from a backup or moved aside."
            )
        return self._chain(lines)[1:]

    def append(self, who: str, action: str, target: str, payload: dict[str, Any] | None = None) -> AuditEntry:
        """Append one entry and sign the new head. A log that no longer matches its signed head
        (truncated, head removed or forged) is not quietly re-signed: a signed ``audit_break`` entry
        saying what did not match goes first, so ``verify`` still finds the damage later."""
        with locked(self.path):
            seq, prev = self._last()
            mismatch = self._head_problem(seq, prev, self._head_text(), appending=True)
            if mismatch is not None:
                broke = self._write(seq, prev, "audit", BREAK, self.path.name, {"problem": mismatch})
                seq, prev = broke.seq, broke.hash
            return self._write(seq, prev, who, action, target, payload or {})

    def _write(
        self, seq: int, prev: str, who: str, action: str, target: str, payload: dict[str, Any]
    ) -> AuditEntry:
        entry = AuditEntry(
            seq=seq + 1,
            at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            who=who,
            action=action,
            target=target,
            payload=json.loads(json.dumps(payload, default=str)),
            prev=prev,
        )
        entry.hash = self.keys.sign(entry.body())
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # on a line of its own: a line added without its line feed (a copy, junk) is never
            # joined to this entry, which would make both no entry for any reader
            size = os.fstat(fd).st_size
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            os.write(fd, (("\n" if torn else "") + entry.model_dump_json() + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        head = {"seq": entry.seq, "hash": entry.hash}
        tmp = self.head_path.with_suffix(".head.tmp")
        tmp.write_text(json.dumps({**head, "sig": self.keys.sign({"head": head})}), encoding="utf-8")
        tmp.replace(self.head_path)
        return entry

    def entries(self, action: str | tuple[str, ...] | None = None) -> list[AuditEntry]:
        """Every line that is an audit entry, as written (damaged ones are left out; ``verify`` names
        them, and what is not in the chain): what a page shows, never what a decision rests on
        (``signed``); with ``action`` (one, or a tuple of them), only those actions'. The entries are
        shared with later reads (``_LineCache``): read them, never change them."""
        if not self.path.exists():
            return []
        return [line.entry for line in _LINES.read(self.path, _actions(action))]

    def signed(self, action: str | tuple[str, ...] | None = None) -> list[AuditEntry]:
        """The chain's entries (``checked``): the only ones a decision may rest on. Their sequence
        numbers rise by one, in the order written. A line written by someone who can write the file
        but not read the key (as a voided approval, a send, an answer handed or a question's place),
        or a genuine line copied to the end or from another log, changes nothing the worker does."""
        return [entry for entry, in_chain in self.checked(action) if in_chain]

    def checked(self, action: str | tuple[str, ...] | None = None) -> list[tuple[AuditEntry, bool]]:
        """``entries`` in the order written, each with whether it is an entry of the chain: signed by
        the key and continuing the entry kept before it, from the start (``_chain``). For a reader
        for which a line that does not check out, where it stands, means "unknown" (``signed``
        leaves it out). A line copied twice is one entry object at two places: judge by place."""
        if not self.path.exists():
            return []
        lines = _LINES.parse(self.path, self.path.read_text(encoding="utf-8", errors="replace"))
        kept = self._chain(lines)[0]
        wanted = _actions(action)
        return [
            (line.entry, in_chain)
            for line, in_chain in zip(lines, kept, strict=True)
            if isinstance(line, _Line) and (wanted is None or line.entry.action in wanted)
        ]

    def _chain(self, lines: list[_Line | object]) -> tuple[list[bool], int, str]:
        """Per line (as ``_LineCache.parse`` gives them), whether it is an entry of the chain, and the
        chain's last sequence number and hash. From the start, a line is kept when it continues the
        last line kept (``_breaks``: the rule ``verify`` reports by); any other line is passed over
        and the next one judged against the same last kept line. So junk (a copied, forged or
        foreign line) hides no genuine entry written after it, since the writer chains those to the
        last kept line too (``_last``); one sequence number is held by one kept line at most."""
        # no key is read (or made) for a log with no entry
        ring = self.keys.ring_id() if any(isinstance(line, _Line) for line in lines) else ""
        seq, prev, kept = 0, GENESIS, []
        for line in lines:
            in_chain = isinstance(line, _Line) and not self._breaks(line, seq, prev, ring)
            if in_chain and isinstance(line, _Line):
                seq, prev = line.entry.seq, line.entry.hash
            kept.append(in_chain)
        return kept, seq, prev

    def _breaks(self, line: _Line, seq: int, prev: str, ring: str) -> list[str]:
        """How ``line`` fails to continue the chain after the entry numbered ``seq`` whose hash is
        ``prev`` (empty: it continues it): its ``prev`` is not that hash, the key ring ``ring``
        (``KeyRing.ring_id``) did not sign it, or its number is not the next. The one rule: ``verify``
        reports by it (after the line above), ``_chain`` keeps by it (after the last line kept)."""
        entry = line.entry
        problems: list[str] = []
        if entry.prev != prev:
            problems.append("does not follow the previous entry")
        if line.signed_by is None or line.signed_by[0] != ring:
            line.signed_by = (ring, self.keys.verify(entry.body(), entry.hash))
        if not line.signed_by[1]:
            problems.append("content changed after it was written (bad signature)")
        if entry.seq != seq + 1:
            problems.append(f"sequence {entry.seq} after {seq}")
        return problems

    def verify(self) -> list[AuditProblem]:
        """Every break in the chain, and a tail that no longer matches the signed head (empty: intact).
        The log and its head are read as one append left them (``locked(shared=True)``: an append in flight has
        written its entry, not yet its head), then checked without holding the lock."""
        problems: list[AuditProblem] = []
        with locked(self.path, shared=True):
            text = self.path.read_text(encoding="utf-8", errors="replace") if self.path.exists() else ""
            head = self._head_text()
        raws = text.splitlines()
        lines = _LINES.parse(self.path, text)  # parsed and signature-checked once per line, not per call
        ring = self.keys.ring_id() if any(isinstance(line, _Line) for line in lines) else ""
        prev, seq, last_hash, number = GENESIS, 0, GENESIS, 0
        for number, (raw, line) in enumerate(zip(raws, lines, strict=True), 1):
            if not raw.strip():
                continue
            if not isinstance(line, _Line):
                problems.append(AuditProblem(line=number, problem="not a valid audit entry"))
                prev = ""
                continue
            entry = line.entry
            problems += [AuditProblem(line=number, problem=p) for p in self._breaks(line, seq, prev, ring)]
            if entry.action == BREAK:
                found = entry.payload.get("problem", "the log did not match its signed head")
                problems.append(
                    AuditProblem(line=number, problem=f"when entry {entry.seq} was appended, {found}")
                )
            prev, seq, last_hash = entry.hash, entry.seq, entry.hash
        problems += self._head_problems(seq, last_hash, number, head)
        return problems

    def _head_text(self) -> str | None:
        """The signed head file's text (None: there is none; "": it cannot be read)."""
        if not self.head_path.exists():
            return None
        try:
            return self.head_path.read_text(encoding="utf-8")
        except OSError:
            return ""

    def _head_problems(self, seq: int, last_hash: str, lines: int, head: str | None) -> list[AuditProblem]:
        problem = self._head_problem(seq, last_hash, head)
        return [AuditProblem(line=lines, problem=problem)] if problem else []

    def _head_problem(
        self, seq: int, last_hash: str, text: str | None, *, appending: bool = False
    ) -> str | None:
        """How the log (ending at ``seq`` with ``last_hash``) fails to match its signed head, whose
        file ``text`` is as read (``_head_text``). None: it matches. ``appending``: a log ahead of
        its head is no damage (a stop between writing an entry and its head; only the key signs
        entries), the append re-signs the head."""
        if text is None:
            return "the signed head (audit.head) is missing" if seq else None
        try:
            head = _Head.model_validate_json(text)
        except ValidationError:
            return "the signed head (audit.head) cannot be read"
        if not self.keys.verify({"head": {"seq": head.seq, "hash": head.hash}}, head.sig):
            return "the head (audit.head) is not signed by the operator key"
        if head.seq > seq:
            return f"truncated: the signed head records {head.seq} entries, the log ends at {seq}"
        if head.seq < seq and appending:
            return None
        if head.seq < seq or head.hash != last_hash:
            return "the last entries do not match the signed head"
        return None
