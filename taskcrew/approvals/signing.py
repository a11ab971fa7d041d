"""The operator's signing key: decisions, submissions and the audit chain are signed with an HMAC
key kept in a file under the taskcrew home (never in the job database), created on first use with
mode 0600. A job database keeps the mark of the ring that signs it (``mark``): a process whose ring did
not make it is refused before it makes a key (``Jobs.check_keys``).

    ring = KeyRing.default()          # TASKCREW_APPROVALS_DIR, else <TASKCREW_HOME>/approvals
    sig = ring.sign({"approval": "apr-1", "key": "…", "outcome": "approve"})
    ring.verify({...}, sig)           # False for anything edited after signing

``taskcrew approvals rotate-key`` adds a new key that signs from then on; earlier keys still verify
what they signed, unless ``--retire-old`` drops them (every earlier signature then fails). The ring
keeps, signed, the marks its retired keys made (``retired``): a job database marked by one of them is
this ring's, to be marked again by the operator (``Jobs.remark_keys``), never by a worker.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

ENV_DIR = "TASKCREW_APPROVALS_DIR"
KEY_FILE = "operator.key"
RING_MARK = {"taskcrew": "the approvals key ring of a job database"}  # what its mark signs (``KeyRing.mark``)


class KeyError_(RuntimeError):
    """The key file cannot be read or written; the message says what to do."""


def approvals_dir() -> Path:
    if env := os.environ.get(ENV_DIR):
        return Path(env).expanduser()
    from taskcrew.config import Paths

    return Paths.from_env().home / "approvals"


def canonical(payload: Any) -> bytes:
    return json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


class _Key(BaseModel):
    id: str
    secret: str
    created: str


class _KeyFile(BaseModel):
    keys: list[_Key] = Field(min_length=1)
    retired: list[str] = Field(default_factory=list)  # the marks its retired keys made (``KeyRing.retired``)
    retired_sig: str = ""  # ``retired`` signed by a key in ``keys``


def _hmac(key: _Key, payload: Any) -> str:
    digest = hmac.new(bytes.fromhex(key.secret), canonical(payload), hashlib.sha256).hexdigest()
    return f"{key.id}:{digest}"


def _retired(file: _KeyFile | None) -> list[str]:
    """The retired marks ``file`` keeps, if one of its keys signed them (else none)."""
    if file is None or not file.retired:
        return []
    key_id = file.retired_sig.split(":", 1)[0]
    key = next((k for k in file.keys if k.id == key_id), None)
    ok = key is not None and hmac.compare_digest(_hmac(key, {"retired": file.retired}), file.retired_sig)
    return list(file.retired) if ok else []


@contextlib.contextmanager
def locked(path: Path, *, shared: bool = False) -> Iterator[None]:
    """An exclusive lock between processes (workers, the console, the CLI) on ``path``.lock.
    ``shared``: a reader's, taken while no writer holds it, with other readers (where the lock file
    cannot be opened — a reader allowed to read the folder, not to write it — it reads unlocked)."""
    import fcntl

    if shared:
        try:
            fd = os.open(f"{path}.lock", os.O_RDONLY | os.O_CREAT, 0o600)
        except OSError:
            yield
            return
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class KeyRing:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._keys: list[_Key] | None = None
        self._stamp: tuple[int, int, int] | None = None  # the key file's (inode, mtime, size) as read

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    @classmethod
    def default(cls) -> KeyRing:
        return cls(approvals_dir() / KEY_FILE)

    def _load(self) -> list[_Key]:
        """The keys, read again whenever the key file changed since they were read (a
        ``rotate-key`` by another process: a long-running worker or console then signs with the new
        key and verifies what newer processes signed without a restart). A key file removed while
        this process runs leaves it on the keys it read."""
        if self._keys is not None and self._file_stamp() in (self._stamp, None):
            return self._keys
        with locked(self.path):
            if not self.path.exists():
                self._write([self._new()])
            try:
                self._stamp = self._file_stamp()
                self._keys = _KeyFile.model_validate_json(self.path.read_bytes()).keys
            except (OSError, ValidationError) as exc:
                raise KeyError_(
                    f"the approvals key file {self.path} cannot be read ({type(exc).__name__}); restore it "
                    "from a backup, or `taskcrew approvals rotate-key --retire-old` to start a new one "
                    "(every earlier approval must then be given again)"
                ) from exc
        return self._keys

    @staticmethod
    def _new() -> _Key:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        return _Key(id=secrets.token_hex(4), secret=secrets.token_hex(32), created=now)

    def _write(self, keys: list[_Key], retired: list[str] | None = None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        retired = retired or []
        sig = _hmac(keys[0], {"retired": retired}) if retired else ""
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_KeyFile(keys=keys, retired=retired, retired_sig=sig).model_dump_json(indent=1))
        os.chmod(tmp, 0o600)
        tmp.replace(self.path)

    def rotate(self, *, retire_old: bool = False) -> str:
        """A new signing key (its id); with ``retire_old`` the earlier keys are dropped, the marks they
        made kept as retired (``retired``)."""
        with locked(self.path):
            old = self._read_unlocked()
            keys = list(old.keys) if old else []
            retired = _retired(old)
            if retire_old:
                retired += [m for m in (_hmac(k, RING_MARK) for k in keys) if m not in retired]
                keys = []
            new = self._new()
            self._write([new, *keys], retired)
        self._keys = None
        return new.id

    def _read_unlocked(self) -> _KeyFile | None:
        try:
            return _KeyFile.model_validate_json(self.path.read_bytes())
        except (OSError, ValidationError):
            return None

    def key_ids(self) -> list[str]:
        return [k.id for k in self._load()]

    def ring_id(self) -> str:
        """A digest of the keys this ring verifies with: what it judged signed holds while it is
        the same (a rotation with ``--retire-old`` changes it)."""
        keys = canonical([[k.id, k.secret] for k in self._load()])
        return hashlib.sha256(keys).hexdigest()

    def mark(self) -> str:
        """This ring's mark, for a job database to keep (``Jobs.keys``): signed with its newest key, so
        a later ring that still holds that key (a ``rotate-key`` without ``--retire-old``) is the same."""
        return self.sign(RING_MARK)

    def made(self, mark: str) -> bool:
        """Whether ``mark`` is this ring's (or an earlier one's it still holds). Never makes a key: a
        ring whose key file is missing made no mark."""
        if self._keys is None and not self.path.exists():
            return False
        return self.verify(RING_MARK, mark)

    def retired(self, mark: str) -> bool:
        """Whether ``mark`` was made by a key this ring retired (``rotate(retire_old=True)`` keeps the
        marks its dropped keys made, signed): the job database is this ring's, to be marked again by
        the operator (``Jobs.remark_keys``). Never makes a key."""
        if not self.path.exists():
            return False
        with locked(self.path, shared=True):
            marks = _retired(self._read_unlocked())
        return any(hmac.compare_digest(m, mark) for m in marks)

    def mac(self, payload: Any, key_id: str | None = None) -> str:
        keys = self._load()
        key = keys[0] if key_id is None else next((k for k in keys if k.id == key_id), None)
        return "" if key is None else _hmac(key, payload)

    def sign(self, payload: Any) -> str:
        return self.mac(payload)

    def verify(self, payload: Any, signature: str | None) -> bool:
        if not signature or ":" not in signature:
            return False
        key_id = signature.split(":", 1)[0]
        expected = self.mac(payload, key_id)
        return bool(expected) and hmac.compare_digest(expected, signature)
