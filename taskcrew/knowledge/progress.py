"""Progress of `taskcrew knowledge ingest`: a live bar on a terminal, plain lines anywhere else.

Piped or logged output (no TTY) gets one line per file and, inside a large file, a line at most every
``every_s`` seconds with the chunks embedded so far and the rate — so a long ingest is never silent.
A file's name is the folder's, not taskcrew's: shown as text (``terminal``), never obeyed or styled.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from taskcrew.knowledge.models import FileIngest
from taskcrew.terminal import markup, plain, say


class IngestProgress:
    def __init__(self, console: Console, files: int, every_s: float = 5.0) -> None:
        self.console = console
        self.files = files
        self.every_s = every_s
        self._done_files = 0
        self._live: Progress | None = None
        self._file_task: TaskID | None = None
        self._chunk_task: TaskID | None = None
        self._last_line = 0.0
        self._file_started = time.monotonic()  # the end of the previous file: this one's start
        self._path: Path | None = None
        self.last: tuple[Path, int, int] | None = None  # (file, chunks written, chunks to write)

    def __enter__(self) -> IngestProgress:
        if self.console.is_terminal:
            self._live = Progress(
                # a description is drawn as text: a file's name holds no markup or emoji code of ours
                TextColumn("{task.description}", style="progress.description", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._live.__enter__()
            self._file_task = self._live.add_task("Files", total=self.files)
            self._chunk_task = self._live.add_task("Chunks", total=None, visible=False)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)

    def chunks(self, path: Path, done: int, total: int) -> None:
        """Called after each embedded batch of one file's chunks."""
        now = time.monotonic()
        self.last = (path, done, total)
        first = path != self._path
        self._path = path
        if self._live is not None and self._chunk_task is not None:
            self._live.update(
                self._chunk_task,
                completed=done,
                total=total,
                visible=True,
                description=plain(path.name, flat=True),
            )
            return
        if not first and done < total and now - self._last_line < self.every_s:
            return
        self._last_line = now
        rate = done / max(now - self._file_started, 1e-6)
        say(
            self.console,
            f"ingesting {markup(path.name, flat=True)}: {done}/{total} chunks embedded ({rate:.1f}/s)",
        )

    def file_done(self, result: FileIngest) -> None:
        self._done_files += 1
        self.last = None
        self._file_started = time.monotonic()
        if self._live is not None and self._file_task is not None:
            self._live.update(self._file_task, advance=1)
            if self._chunk_task is not None:
                self._live.update(self._chunk_task, visible=False)
