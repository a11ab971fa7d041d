"""Which files an ingest reads: folders are walked, and nothing outside the folder given is read.

A folder may hold links that point elsewhere: a symlink to ``~/.ssh/id_rsa`` or to a folder of
someone else's files, or a hard link to a file outside (a hard link has no direction, so any file
with more than one link could be one). Those are refused with a message saying so; they are
reported as skipped like any unreadable file. A symlink that stays inside the folder is read under
the folder's own path (once). Files named one by one on the command line are read as given: the
person named them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from taskcrew.knowledge.chunking import supported


class Refused(BaseModel):
    path: str
    message: str


class Collected(BaseModel):
    """The files to ingest, in order, and the ones refused because they lead out of their folder."""

    files: list[Path] = Field(default_factory=list)
    refused: list[Refused] = Field(default_factory=list)


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


def collect(paths: Iterable[Path]) -> Collected:
    """Expand folders into their supported files (hidden ones left out), refusing links out."""
    out = Collected()
    for path in paths:
        if path.is_dir():
            _walk(path, out)
        else:
            out.files.append(path)
    return out


def _walk(folder: Path, out: Collected) -> None:
    root = folder.resolve()
    seen: set[Path] = set()
    found: list[tuple[Path, Refused | None]] = []
    for current, dirs, names in os.walk(folder, followlinks=False):
        base = Path(current)
        for name in list(dirs):
            entry = base / name
            if _hidden(entry.relative_to(folder)):
                dirs.remove(name)
            elif entry.is_symlink():  # os.walk does not descend into it; say so when it leads out
                target = entry.resolve()
                if not _inside(target, root):
                    found.append((entry, _refused(entry, f"a link to the folder {target}, outside {root}")))
        for name in names:
            entry = base / name
            if _hidden(entry.relative_to(folder)) or not supported(entry):
                continue
            found.append((entry, _check(entry, root)))
    kept: list[Path] = []
    for entry, refusal in sorted(found, key=lambda item: (item[0].is_symlink(), str(item[0]))):
        if refusal is not None:
            out.refused.append(refusal)
        elif entry.resolve() not in seen:  # a link inside the folder to a file read already: once
            seen.add(entry.resolve())
            kept.append(entry)
    out.files.extend(sorted(kept, key=str))
    out.refused.sort(key=lambda r: r.path)


def _check(entry: Path, root: Path) -> Refused | None:
    try:
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode):
            target = entry.resolve()
            if not _inside(target, root):
                return _refused(entry, f"a link to {target}, outside {root}")
            info = target.stat()
        if not stat.S_ISREG(info.st_mode):
            return _refused(entry, "not a regular file")
        if info.st_nlink > 1:
            return _refused(
                entry,
                f"the file has {info.st_nlink} hard links, so it may be a file from outside {root}",
            )
    except OSError as exc:
        return Refused(path=str(entry), message=f"cannot read the file: {exc.strerror or exc}")
    return None


def _refused(entry: Path, why: str) -> Refused:
    return Refused(
        path=str(entry),
        message=f"refused: {why}; ingest reads only files inside the folder it was given "
        "(copy the file into the folder, or name it on the command line)",
    )
