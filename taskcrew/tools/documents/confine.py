"""Path confinement: the one rule the policy module reuses.

Nothing outside the root (``..``, absolute paths elsewhere, symlinks that lead out), no dotfiles,
nothing that looks like a secret (``.env``, ``*.pem``, ``id_rsa`` …), nothing matching the private
patterns — at any depth, wherever the reader is rooted. File-system oddities (symlink loops, names
too long for the OS, unreadable folders) are a :class:`PathRefused`, never a crash.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path

from taskcrew.tools.documents.models import PathRefused

SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials*",
    "secrets*",
    ".netrc",
    ".pgpass",
    ".htpasswd",
)


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in SECRET_PATTERNS)


def matches_private(relative: str, patterns: Sequence[str]) -> bool:
    """True when ``relative`` (a POSIX path) or any trailing part of it matches a pattern.

    ``documents.yaml`` hides ``documents.yaml``, ``sandbox/documents.yaml`` and ``a/b/documents.yaml``,
    so a reader rooted one folder higher than usual still cannot read the answers.
    """
    parts = relative.split("/")
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatchcase(c, p) for p in patterns for c in tails + prefixes)


def confine(root: Path, path: str | os.PathLike[str], *, hidden: Sequence[str] = ()) -> Path:
    """Resolve ``path`` (relative to ``root``, or absolute inside it) or raise :class:`PathRefused`.

    Refused: anything that leads outside ``root`` (``..``, an absolute path elsewhere, a symlink
    pointing out or looping), any path component starting with '.', secret-looking names, and paths
    matching one of the ``hidden`` glob patterns at any depth.
    """
    raw = os.fspath(path)
    shown = raw if raw else "."
    if len(shown) > 300:
        shown = shown[:120] + f"…({len(raw)} characters)"
    base = root.resolve()
    if "\x00" in raw:
        raise PathRefused(_refusal(shown, "contains a NUL byte"))
    given = Path(raw)
    joined = given if given.is_absolute() else base / given
    lexical = Path(os.path.normpath(joined))
    spelled = Path(os.path.abspath(root))  # the root as the caller spelled it (may be a symlink)
    if given.is_absolute() and not lexical.is_relative_to(base) and lexical.is_relative_to(spelled):
        lexical = base / lexical.relative_to(spelled)
    if not lexical.is_relative_to(base):
        why = (
            "is an absolute path outside the sandbox" if given.is_absolute() else "leads outside the sandbox"
        )
        raise PathRefused(_refusal(shown, why))
    _check_parts(lexical.relative_to(base), shown, hidden)
    try:
        resolved = lexical.resolve(strict=False)
    except RuntimeError as exc:  # symlink loop (Python < 3.13)
        raise PathRefused(_refusal(shown, "is a symlink loop")) from exc
    except OSError as exc:  # ELOOP, ENAMETOOLONG, EACCES …
        raise PathRefused(
            _refusal(shown, f"cannot be opened ({exc.strerror or type(exc).__name__})")
        ) from exc
    if not resolved.is_relative_to(base):
        raise PathRefused(_refusal(shown, "is a symlink that points outside the sandbox"))
    _check_parts(resolved.relative_to(base), shown, hidden)
    return resolved


def _check_parts(relative: Path, shown: str, hidden: Sequence[str]) -> None:
    for part in relative.parts:
        if len(part.encode("utf-8", "surrogateescape")) > 255:
            raise PathRefused(_refusal(shown, "has a name longer than the file system allows"))
        if part.startswith("."):
            raise PathRefused(_refusal(shown, "is a hidden file or folder (dotfile)"))
        if is_secret_name(part):
            raise PathRefused(
                _refusal(shown, "looks like a secret (keys, credentials, .env) and is never read")
            )
    rel = relative.as_posix()
    if rel != "." and matches_private(rel, hidden):
        raise PathRefused(_refusal(shown, "is not available to the agent"))


def _refusal(shown: str, why: str) -> str:
    return f"refused: {shown!r} {why}. Only files inside the sandbox folder can be read; use list_files to see them."
