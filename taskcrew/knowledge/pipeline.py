"""Ingest's two stages overlap: chunking (Python) in a thread, embedding and writing in the caller.

onnxruntime and the tokenizer release the GIL while they run, so the next batch is chunked while
the current one is embedded. The queue holds at most ``depth`` batches (memory stays bounded);
an exception in the producer (an unreadable file) is raised in the caller at the point it
happened; when the caller stops early (Ctrl-C, an error), the producer is told to stop and is
joined, so no thread outlives the ingest.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


class _Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def prefetch(items: Iterable[T], depth: int = 2) -> Iterator[T]:
    """Yield ``items`` produced by a background thread, at most ``depth`` ahead."""
    buffer: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as exc:
            put(_Failed(exc))
            return
        put(_DONE)

    worker = threading.Thread(target=produce, name="taskcrew-ingest-chunking", daemon=True)
    worker.start()
    try:
        while True:
            item = buffer.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.exc
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
