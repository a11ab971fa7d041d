"""Parsing under limits: a child process with a memory cap, killed when it runs out of time.

    worker = ParseWorker()
    content = worker.parse(data, "scans/x.pdf", "pdf")   # FileContent, Unreadable or TooComplex

One child serves many parses (started on first use, restarted after a kill), so a hostile file
costs at most ``timeout_s`` and cannot take the agent's memory. Messages are pickles over the
child's stdin/stdout (our own process on both ends).

What a parse read is kept for the process (:data:`PARSED`): the same bytes under the same name,
under the same limits and OCR program and languages, read the same, so a worker taking job after job on one
inbox OCRs each scan once. Only readable results are kept: a refusal or a time-out is tried again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import OrderedDict

from taskcrew.tools.documents.limits import PARSE_MEMORY_BYTES, PARSE_TIMEOUT_S
from taskcrew.tools.documents.models import FileContent, FileKind, TooComplex, Unreadable

_HEADER = struct.Struct("!Q")
STARTUP_S = 60.0  # for the child to start and import its parsers; not part of any parse's time limit
_OCR_ENV = ("TASKCREW_TESSERACT", "TASKCREW_OCR_LANGS", "PATH")  # what the child's OCR depends on


class _Parsed:
    """A bounded LRU of parse results, shared by every worker of the process."""

    def __init__(self, entries: int = 256, chars: int = 32_000_000) -> None:
        self.entries, self.chars = entries, chars
        self._items: OrderedDict[tuple[str, ...], tuple[FileContent, int]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(data: bytes, name: str, kind: FileKind, *limits: float) -> tuple[str, ...]:
        env = tuple(os.environ.get(k, "") for k in _OCR_ENV)
        return (hashlib.sha256(data).hexdigest(), name, kind, *map(str, limits), *env)

    def get(self, key: tuple[str, ...]) -> FileContent | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key][0].model_copy(deep=True)

    def put(self, key: tuple[str, ...], content: FileContent) -> None:
        size = len(content.full_text())
        with self._lock:
            self._items[key] = (content.model_copy(deep=True), size)
            while len(self._items) > 1 and (
                len(self._items) > self.entries or sum(n for _, n in self._items.values()) > self.chars
            ):
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


PARSED = _Parsed()


class ParseWorker:
    def __init__(self, *, timeout_s: float = PARSE_TIMEOUT_S, memory_bytes: int = PARSE_MEMORY_BYTES) -> None:
        self.timeout_s = timeout_s
        self.memory_bytes = memory_bytes
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def parse(self, data: bytes, name: str, kind: FileKind) -> FileContent:
        key = PARSED.key(data, name, kind, self.memory_bytes, self.timeout_s)
        if (kept := PARSED.get(key)) is not None:
            return kept
        with self._lock:
            proc = self._child()
            assert proc.stdin is not None and proc.stdout is not None
            message = pickle.dumps((data, name, kind))
            deadline = time.monotonic() + self.timeout_s
            try:
                proc.stdin.write(_HEADER.pack(len(message)) + message)
                proc.stdin.flush()
                header = self._read(proc, _HEADER.size, deadline)
                status, value = pickle.loads(self._read(proc, _HEADER.unpack(header)[0], deadline))
            except TimeoutError:
                self.close()
                raise TooComplex(
                    f"{name}: too complex to read — parsing took longer than {self.timeout_s:.0f} s and was "
                    "stopped; ask a human for a simpler copy (other files are not affected)"
                ) from None
            except (EOFError, BrokenPipeError, OSError, pickle.UnpicklingError):
                self.close()
                raise TooComplex(
                    f"{name}: too complex to read — the parser ran out of memory "
                    f"({self.memory_bytes // 2**20} MB) or crashed; ask a human for a simpler copy"
                ) from None
        if status == "ok":
            assert isinstance(value, FileContent)
            PARSED.put(key, value)
            return value
        if status == "too_complex":
            raise TooComplex(f"{name}: too complex to read — {value}; ask a human for a simpler copy")
        raise Unreadable(str(value))

    def _child(self) -> subprocess.Popen[bytes]:
        """The running child; a new one is waited for until it says it is ready (its start-up and
        imports take seconds on a busy machine, and must not eat the first parse's time limit)."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "taskcrew.tools.documents.worker",
                    str(self.memory_bytes),
                    str(self.timeout_s),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # its tesseract children die with it
            )
            try:
                self._read(self._proc, _HEADER.size, time.monotonic() + STARTUP_S)
            except (TimeoutError, EOFError, OSError):
                self.close()
                raise TooComplex(
                    f"the document parser did not start within {STARTUP_S:.0f} s; try again, or ask a human"
                ) from None
        return self._proc

    @staticmethod
    def _read(proc: subprocess.Popen[bytes], n: int, deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        left = n
        poller = select.poll()  # not select.select: a process past 1,024 descriptors makes it raise
        poller.register(fd, select.POLLIN)
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise TimeoutError
            if not poller.poll(wait * 1000):
                raise TimeoutError
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


_shared: ParseWorker | None = None


def shared_worker() -> ParseWorker:
    global _shared
    if _shared is None:
        _shared = ParseWorker()
    return _shared


def _serve(memory_bytes: int, timeout_s: float) -> None:  # pragma: no cover - runs in the child
    import resource

    import pypdf  # noqa: F401  - loaded before the ready signal: not on the first PDF's clock

    from taskcrew.tools.documents import limits
    from taskcrew.tools.documents.formats import parse_bytes

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    sys.setrecursionlimit(5000)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(_HEADER.pack(0))  # ready: imported, limits set; the parent's clock starts now
    stdout.flush()
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        data, name, kind = pickle.loads(stdin.read(_HEADER.unpack(header)[0]))
        limits.start_parse(timeout_s)
        try:
            reply: tuple[str, object] = ("ok", parse_bytes(data, name, kind))
        except MemoryError:
            reply = ("too_complex", f"the parser ran out of memory ({memory_bytes // 2**20} MB)")
        except RecursionError:
            reply = ("too_complex", "the file nests objects too deeply")
        except Unreadable as exc:
            reply = ("error", str(exc))
        except Exception as exc:  # a parser bug must not take the agent down; say what happened
            reply = ("error", f"{name}: cannot read it ({type(exc).__name__}: {str(exc)[:200]}); ask a human")
        del data
        out = pickle.dumps(reply)
        stdout.write(_HEADER.pack(len(out)) + out)
        stdout.flush()


if __name__ == "__main__":  # pragma: no cover
    _serve(int(sys.argv[1]), float(sys.argv[2]))
