"""A run folder's seal: the digests of its files as its run left them, kept in the job's signed record.

A run folder (trace.jsonl, report.md, the final screenshot, the routine recording and note) is not
signed: whoever can write the runs folder can edit it, or copy another run's folder over it. Its
job's record is signed. So whenever a job ends — finished (done, rejected, expired, interrupted…),
failed or cancelled — the one place that writes its record (``Jobs._update``) seals the folder the
record names (``seal``: every file, by its path inside the folder, with the SHA-256 of its bytes)
into that record (``Job.run_seal``). A job its own leg ends is sealed after the run wrote its last
file (the report, then the routine's recording and note: ``crew.run.run_task`` returns after them).
A job that parks for an approval is sealed as it is set waiting (its leg's ``parked`` line is
written before): that leg's folder is final then (the job resumes in a new folder), and its seal is
kept when the job ends waiting (a rejection, an expiry, a cancel), never made again. A job ended by
someone else while its run still wrote (a cancel) is sealed again by its leg once the run is over
(``Jobs.seal_run``), and a run's trace takes no line after its ``run_finished`` (``crew.trace.
Tracer``: a thread abandoned at an interrupt adds nothing). Nothing else of taskcrew writes to a run
folder after its run ended: a resumed or retried job runs in a new folder (``crew.run.new_run_dir``,
where the resumed leg writes what the legs before it did); `taskcrew demo`'s labels are written by
the run as it writes the report and the routine note (``demo.demo_report``), never added afterwards.

A seal always says something: a folder that is not there as its job ends is sealed ``absent`` (a
folder found there later is not its run's), and one holding more than ``MAX_FILES`` files (a run
leaves a handful) ``too_many``, none of its files sealed: neither vouches for a folder.

``changes`` is the one check (``eval.runs.RunRecords.of`` calls it for every surface that shows a
run): what differs between the folder now and its seal, in words ('' when nothing does). Digests are
kept per file by its (device, inode, size, mtime, ctime), so a page listing hundreds of runs hashes
only what changed since it last looked; any write to a file changes its ctime, which no one can set.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from taskcrew.jobs.models import RunSeal

MAX_FILES = 2000  # a run folder holds a handful; one holding more is sealed ``too_many``
_CACHE_MAX = 20000
_cache: dict[tuple[str, int, int, int, int, int], str] = {}
_lock = threading.Lock()


def _files(folder: Path) -> dict[str, Path] | None:
    """Every regular file under ``folder`` by its path inside it (symbolic links to folders are not
    followed; a link to a file is read as that file); None: more than ``MAX_FILES``."""
    found: dict[str, Path] = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            if path.is_file():
                found[path.relative_to(folder).as_posix()] = path
                if len(found) > MAX_FILES:
                    return None
    return dict(sorted(found.items()))


def _digest(path: Path) -> str:
    """SHA-256 of the file's bytes ('' when it cannot be read), from the cache while it is unchanged."""
    try:
        st = path.stat()
    except OSError:
        return ""
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _lock:
        known = _cache.get(key)
    if known is not None:
        return known
    sha = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                sha.update(block)
    except OSError:
        return ""
    digest = sha.hexdigest()
    with _lock:
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = digest
    return digest


def seal(folder: Path, *, parked: bool = False) -> RunSeal:
    """The seal of the run folder ``folder`` as it is now (``absent``: there is no such folder;
    ``too_many``: it holds more than ``MAX_FILES`` files); ``parked``: made as its job parks."""
    folder = folder.resolve()
    if not folder.is_dir():
        return RunSeal(folder=str(folder), state="absent", parked=parked)
    files = _files(folder)
    if files is None:
        return RunSeal(folder=str(folder), state="too_many", parked=parked)
    return RunSeal(
        folder=str(folder), files={name: _digest(path) for name, path in files.items()}, parked=parked
    )


def changes(sealed: RunSeal, folder: Path) -> str:
    """What differs between ``folder`` now and its seal, in words ('' when nothing does): the files
    changed, removed and added since the run ended, or that the seal is of a folder of another name,
    or vouches for no folder there (one sealed ``absent`` found now, or one sealed ``too_many``).
    Where the folder is is not compared: the seal is looked up by the folder its job's record names
    (``eval.runs.RunRecords``), and a runs folder moved elsewhere (another disk, a symbolic link left
    at its old path; a backup restored under another root) holds the same run. Another run's folder
    put in its place is told by its files, which differ from the seal."""
    folder = folder.resolve()
    if Path(sealed.folder).name != folder.name:
        return f"the seal in the signed record is of a folder of another name ({Path(sealed.folder).name})"
    if sealed.state == "too_many":
        return (
            f"the run folder held more than {MAX_FILES} files when it was sealed, too many to seal one by "
            "one, so none of its files is vouched for"
        )
    if sealed.state == "absent":
        if not folder.exists():
            return ""
        return "there was no run folder when it was sealed: the one there now is not its run's"
    if not folder.is_dir():
        return "the run folder is gone"
    found = _files(folder)
    if found is None:
        return (
            f"more than {MAX_FILES} files are in the run folder now, {len(sealed.files)} when it was sealed"
        )
    now = {name: _digest(path) for name, path in found.items()}
    changed = sorted(n for n in sealed.files if n in now and now[n] != sealed.files[n])
    gone = sorted(n for n in sealed.files if n not in now)
    added = sorted(n for n in now if n not in sealed.files)
    said = []
    for words, names in (("changed", changed), ("removed", gone), ("added", added)):
        if names:
            more = f" and {len(names) - 4} more" if len(names) > 4 else ""
            said.append(f"{', '.join(names[:4])}{more} {words}")
    return "; ".join(said)
