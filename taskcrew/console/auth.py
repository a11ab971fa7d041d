"""Who may use the console: users with scrypt-hashed passwords, or one token printed at start."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError

from taskcrew.approvals.identity import person
from taskcrew.approvals.signing import locked
from taskcrew.yamlfile import load_yaml

# scrypt cost: n=2**14, r=8, p=1 (~16 MiB, tens of ms): OWASP's minimum for scrypt.
_N, _R, _P = 2**14, 8, 1
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$"  # not "-…": nobody is named "--auto-approve"


class ConsoleUserError(ValueError):
    """The users file is missing, unreadable or malformed; the message says how to fix it."""


def hash_password(password: str) -> str:
    if len(password) < 8:
        raise ValueError("a console password needs at least 8 characters")
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, encoded: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = encoded.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(
            password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=len(expected)
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


class User(BaseModel):
    name: str = Field(pattern=NAME_PATTERN)
    password_hash: str = Field(pattern=r"^scrypt\$")
    display_name: str = ""


class UsersFile(BaseModel):
    users: list[User] = Field(default_factory=list)


def load_users(path: Path) -> list[User]:
    """The users the file lists ([] when there is no file: ``approvals.identity.current_users`` tells
    a missing file from an empty one). Names are people: two that differ only in case (``bob``,
    ``Bob``) would be two logins of one person, counted as two by the two-person rule, so such a
    file is refused, naming both."""
    users = _read_users(path)
    folded: dict[str, str] = {}
    for user in users:
        if (twin := folded.setdefault(person(user.name), user.name)) != user.name:
            raise ConsoleUserError(
                f"The console users file {path} lists {twin!r} and {user.name!r}: names that differ only "
                "in case are one person. Keep one of them (`taskcrew console remove-user NAME`)."
            )
    return users


def _read_users(path: Path) -> list[User]:
    """The users file as written, each name once (``load_users`` judges it further)."""
    if not path.exists():
        return []
    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}  # a key written twice is refused
        users = UsersFile.model_validate(data).users
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ConsoleUserError(
            f"The console users file {path} cannot be used: {exc}. "
            "Fix it, or recreate entries with `taskcrew console add-user NAME`."
        ) from exc
    names = [u.name for u in users]
    if len(set(names)) != len(names):
        raise ConsoleUserError(f"The console users file {path} lists a user name twice.")
    return users


def _write_users(path: Path, users: list[User]) -> None:
    """Write the users file (under its lock, held by the caller): to a temporary file of its own in
    the same folder, created with mode 0600 (the hashes are never readable by others, not even for a
    moment), then atomically put in place: a reader sees the old file or the new one. No users is
    written as ``users: []``: a file that lists nobody, whom no login counts for."""
    text = yaml.safe_dump(UsersFile(users=users).model_dump(), sort_keys=False)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def add_user(path: Path, name: str, password: str) -> None:
    """Add or replace one user in the users file; with ``remove_user``, its only writers.

    Two runs at once (two operators, a reset and an add) never undo each other: the password is
    hashed first (scrypt is slow), then the read, the change and the write happen under an exclusive
    lock between processes (``<users file>.lock``), written by ``_write_users``. A name that differs
    from an existing user's only in case is refused, not taken as a reset of hers: a reset names
    the user exactly (the operator who typed "Bob" may mean another person; guessing either way
    would give one person two logins or change someone's password unasked)."""
    added = User(name=name, password_hash=hash_password(password))
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        users = load_users(path)
        if twin := next((u.name for u in users if u.name != name and person(u.name) == person(name)), None):
            raise ConsoleUserError(
                f"a user named {twin!r} exists, and names that differ only in case are one person: to reset "
                f"the password, run `taskcrew console add-user {twin}`; for another person, choose another name"
            )
        _write_users(path, [*(u for u in users if u.name != name), added])


def remove_user(path: Path, name: str) -> None:
    """Remove one user from the users file: her console sessions, CLI tokens, first approvals and
    privileges count for nothing from then on (``approvals.identity.identity_refusal``). Under the
    same lock and atomic write as ``add_user``. Removing the last user leaves a file that lists
    nobody: every login and token counts for nothing (the console's start-up token aside)."""
    if not path.is_file():
        raise ConsoleUserError(f"{path}: no such users file, so there is nobody to remove")
    with locked(path):
        users = _read_users(path)  # also from a file ``load_users`` refuses (two names alike but for case)
        if not any(u.name == name for u in users):
            twin = next((u.name for u in users if person(u.name) == person(name)), None)
            listed = ", ".join(u.name for u in users) or "nobody"
            hint = f"; did you mean {twin!r}?" if twin else f" (it lists {listed})"
            raise ConsoleUserError(f"no user named {name!r} in {path}{hint}")
        _write_users(path, [u for u in users if u.name != name])


class Authenticator:
    """Checks a login. With no users configured, one random token (printed at start) logs in as
    ``token_user``; with users, only name + password."""

    def __init__(self, users: list[User], token: str | None = None, token_user: str = "operator") -> None:
        self.users = {u.name: u for u in users}
        self.token = token
        self.token_user = token_user
        # A fixed dummy hash so an unknown name costs as much as a wrong password.
        self._dummy = hash_password(secrets.token_urlsafe(12))

    def check(self, name: str, password: str) -> str | None:
        """The user name on success, else None."""
        if self.token is not None and not self.users:
            ok = hmac.compare_digest(password.encode(), self.token.encode())
            return self.token_user if ok and name in ("", self.token_user) else None
        user = self.users.get(name)
        if user is None:
            verify_password(password, self._dummy)
            return None
        return user.name if verify_password(password, user.password_hash) else None
