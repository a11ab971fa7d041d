"""An append-only, hash-chained audit log of every approval and decision (who, when, what payload).

Each line of audit.jsonl holds the SHA-256 of the previous line's entry, so an edited, removed or
reordered line breaks the chain at that point; ``verify`` says where.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

GENESIS = "0" * 64


class AuditEntry(BaseModel):
    seq: int
    at: str
    who: str
    action: str
    target: str
    payload: dict[str, Any] = Field(default_factory=dict)
    prev: str
    hash: str = ""

    def compute_hash(self) -> str:
        body = self.model_dump(exclude={"hash"})
        return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class AuditLogError(RuntimeError):
    """The log's last entry cannot be read: appending would hide the damage, so nothing is decided."""


class AuditProblem(BaseModel):
    line: int
    problem: str


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def _last(self) -> tuple[int, str]:
        if not self.path.exists():
            return 0, GENESIS
        last = ""
        with self.path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    last = line.decode("utf-8")
        if not last:
            return 0, GENESIS
        try:
            entry = AuditEntry.model_validate_json(last)
        except ValueError as exc:
            raise AuditLogError(
                f"The audit log {self.path} ends in a line that is not an audit entry; no decision is "
                "recorded (or made) until it is restored from a backup or moved aside."
            ) from exc
        return entry.seq, entry.hash

    def append(self, who: str, action: str, target: str, payload: dict[str, Any] | None = None) -> AuditEntry:
        with self._lock:
            seq, prev = self._last()
            entry = AuditEntry(
                seq=seq + 1,
                at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                who=who,
                action=action,
                target=target,
                payload=payload or {},
                prev=prev,
            )
            entry.hash = entry.compute_hash()
            line = entry.model_dump_json() + "\n"
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
        return entry

    def entries(self) -> list[AuditEntry]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [AuditEntry.model_validate_json(line) for line in lines if line.strip()]

    def verify(self) -> list[AuditProblem]:
        """Every break in the chain (empty when the log is intact)."""
        problems: list[AuditProblem] = []
        if not self.path.exists():
            return problems
        prev, seq = GENESIS, 0
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = AuditEntry.model_validate_json(line)
            except ValueError:
                problems.append(AuditProblem(line=number, problem="not a valid audit entry"))
                prev = ""
                continue
            if entry.prev != prev:
                problems.append(AuditProblem(line=number, problem="does not follow the previous entry"))
            if entry.hash != entry.compute_hash():
                problems.append(AuditProblem(line=number, problem="content changed after it was written"))
            if entry.seq != seq + 1:
                problems.append(AuditProblem(line=number, problem=f"sequence {entry.seq} after {seq}"))
            prev, seq = entry.hash, entry.seq
        return problems
