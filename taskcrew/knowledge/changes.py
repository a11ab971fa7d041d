"""One store, several processes: a worker sees what `taskcrew knowledge ingest` wrote meanwhile.

A worker, the console and the CLI each open the same store directory. Chroma keeps each
collection's vector index in the memory of the process that opened it and does not see another
process's writes: after `taskcrew knowledge ingest` replaced a handbook, a worker opened before
would rank with the old vectors and fail on the new chunks' ids ("Error finding id"), and its
own caches (chunk texts, BM25, vectors in memory) would serve the old text. So:

- every write to a collection through ``LiveCollections`` replaces a small file in the store
  directory (``<part>.changed``: procedures and their sections, questions, facts) with a fresh
  token, written whole;
- before each use of a collection, the tokens are read (a few bytes each); when one differs from
  the token this process last wrote or saw, another process wrote: chroma is reopened on the
  directory, and every cache keyed on that part's token is rebuilt on its next use.

A count of rows would not do: an edited paragraph keeps the count. Two processes writing at the
same moment are not made safe by this (chroma's local store is not meant for that); a process
that reads while another writes sees the write on its next use.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

WRITES = frozenset({"add", "upsert", "update", "delete", "modify"})


class ChangeMark:
    """``path``'s token; None: no file (a library built for a test of its parts): never changes."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def token(self) -> str:
        if self.path is None:
            return ""
        try:
            return self.path.read_text(encoding="ascii")
        except OSError:  # none yet (nothing written since), or a store this user may only read
            return ""

    def bump(self) -> str:
        """A new token, written whole (a reader never sees half of one); returns it."""
        if self.path is None:
            return ""
        token = uuid.uuid4().hex
        part = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        part.write_text(token, encoding="ascii")
        os.replace(part, self.path)
        return token


class LiveCollections:
    """The store's chroma collections, reopened when another process wrote the store.

    ``open_all()`` returns a fresh client's collections by name (closing the one it opened
    before); ``marks`` maps each collection name to the mark its writes change (several names may
    share one). A reopen waits for this process's calls in flight (a worker's other runs) to end:
    closing the client under them would fail them."""

    def __init__(self, open_all: Callable[[], dict[str, Any]], marks: dict[str, ChangeMark]) -> None:
        self._open_all = open_all
        self.marks = marks
        self._changed = threading.Condition()
        self._busy = 0  # calls in flight on the current collections
        self._seen = self._tokens()
        self._collections = open_all()
        self.kind = type(next(iter(self._collections.values())))  # what a collection's methods are on

    def _tokens(self) -> dict[int, str]:
        return {id(mark): mark.token() for mark in self.marks.values()}

    @contextmanager
    def using(self) -> Iterator[dict[str, Any]]:
        """The current collections by name, for one call; reopened first when another process
        wrote since this one last wrote or saw the store."""
        with self._changed:
            if self._tokens() != self._seen:
                while self._busy:
                    self._changed.wait()
                tokens = self._tokens()  # read before opening: a write after it reopens again
                if tokens != self._seen:
                    self._seen = tokens
                    self._collections = self._open_all()
            self._busy += 1
            collections = self._collections
        try:
            yield collections
        finally:
            with self._changed:
                self._busy -= 1
                if not self._busy:
                    self._changed.notify_all()

    def current(self, name: str) -> Any:
        with self.using() as collections:
            return collections[name]

    def wrote(self, name: str) -> None:
        """This process wrote ``name``: a new token for its part, already seen here."""
        mark = self.marks[name]
        with self._changed:
            self._seen[id(mark)] = mark.bump()

    def collection(self, name: str) -> Collection:
        """A stand-in for the collection ``name`` that always uses the current one."""
        return cast("Collection", LiveCollection(self, name))


class LiveCollection:
    """Stands in for one chroma collection: each call goes to the current one, and a write
    changes the part's mark."""

    def __init__(self, live: LiveCollections, name: str) -> None:
        self._live = live
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        live, name = self._live, self._name
        if not callable(getattr(live.kind, attr, None)):  # a property (name, metadata...)
            return getattr(live.current(name), attr)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                with live.using() as collections:
                    return getattr(collections[name], attr)(*args, **kwargs)
            finally:
                if attr in WRITES:  # a failed write may have written part of it
                    live.wrote(name)

        return call
