"""Who acts: a proven identity, never a name someone typed.

- ``console``: logged in to the console with a password (``console.auth``);
- ``token``: the CLI with a personal token issued by ``taskcrew approvals login`` (name and password
  checked against the same users file); only its SHA-256 is stored, in tokens.json;
- ``os_user``: the CLI as the operating-system user, where no rule needs more (no two-person rule);
- ``worker``: the job worker itself (batch children inherit their parent's signed submitter).
The two-person rule counts only ``console`` and ``token`` identities, never the submitter. A login
or token counts only while the users file lists its person with the password she proved it with
(``identity_refusal``): with no users (the file emptied or deleted), none proven by a password
does, only the console's start-up-token login. People are compared by ``person`` (case folded).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, cast, get_args

from pydantic import BaseModel, Field

from taskcrew.approvals.signing import approvals_dir, locked

Proof = Literal["console", "token", "os_user", "worker"]
AUTHENTICATED = ("console", "token")  # the proofs that prove who someone is (an OS user is taken on her word)
UNPROVEN_SUBMITTER = "not proven"
"""Who submitted a run, where no proven identity did (an operating-system user, taken on her word; or
no signed record says): what its learned facts and routine drafts record as their run's submitter
(``submitter_as_proven``), so that where the two-person rule is on nobody may accept them
(``Authority.proposal_refusal``: it cannot tell that person from the accepter). No user is named so
(a name has no space)."""
ENV_TOKEN = "TASKCREW_TOKEN"
TOKEN_FILE = "tokens.json"


class IdentityError(ValueError):
    """The CLI's identity cannot be established; the message says what to do."""


class Identity(BaseModel):
    name: str
    proof: Proof
    # the password it was proven with (``credential``), for a console session or a token: a login
    # counts only while that is still the user's password (None: a token issued before it was kept)
    credential: str | None = Field(default=None, exclude=True)

    @property
    def authenticated(self) -> bool:
        return self.proof in AUTHENTICATED

    def describe(self) -> str:
        how = {
            "console": "logged in to the console",
            "token": "authenticated CLI token",
            "os_user": "operating-system user, not authenticated",
            "worker": "the job worker",
        }[self.proof]
        return f"{self.name} ({how})"


def submitter_as_proven(name: str, proof: str) -> str:
    """A run's submitter as what it proposes records her: her name when she was proven (``AUTHENTICATED``),
    else ``UNPROVEN_SUBMITTER``."""
    return name if proof in AUTHENTICATED else UNPROVEN_SUBMITTER


def os_user() -> str:
    """The operating-system user this process runs as, by its real uid: ``getpass.getuser()`` reads
    LOGNAME/USER first, which anyone may set to another person's name."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid with no passwd entry (some containers)
        return f"uid-{os.getuid()}"


def users_file() -> Path:
    from taskcrew.console.settings import ConsoleSettings

    return ConsoleSettings.from_env().users_file


NO_USERS = (
    "the users file lists no users: logins and tokens count for nothing; add users with "
    "`taskcrew console add-user`"
)
STARTUP_CREDENTIAL = "start-up token"
"""What a console login by the one-time token the console prints when it starts with no users
(``console.server.prepare``) proves: no user's password, so it counts only while the users file
lists nobody (``standing_refusal``); never a fingerprint (``credential_of`` is hex). It is what such
a login's identity carries, and so what a decision or a job it makes records (a worker, which cannot
know the console's token, accepts it only while the users file lists nobody). The session itself
keeps ``startup_credential`` of the token that opened it; the console turns that into this only
while it holds that very token (``console.sessions.SessionStore``)."""
UNHELD_STARTUP = (
    "a login by a console start-up token counts only in the console that printed that token, while it "
    "runs (a restarted console prints a new one; one started with users holds none): log in again"
)


def startup_credential(token: str | None) -> str:
    """What a console session opened with the start-up token ``token`` keeps as its credential: bound
    to that token (a digest of it), so it counts only in a console holding the same token; with no
    token (a session stored before sessions were bound to one), bound to none, so it never counts."""
    digest = hashlib.sha256(f"start-up\0{token}".encode()).hexdigest()[:32] if token else "unbound"
    return f"{STARTUP_CREDENTIAL}:{digest}"


def is_startup(credential: str | None) -> bool:
    """Whether ``credential`` is a start-up-token login's, bound to a token or not."""
    return credential is not None and (
        credential == STARTUP_CREDENTIAL or credential.startswith(f"{STARTUP_CREDENTIAL}:")
    )


def credentials(path: Path | None = None) -> dict[str, str]:
    """Each user's credential: a fingerprint of their password hash, which changes when their
    password is reset (``console add-user`` again). Raises ConsoleUserError (a ValueError) for a
    users file that cannot be read."""
    from taskcrew.console.auth import load_users

    return {u.name: credential_of(u.password_hash) for u in load_users(path or users_file())}


def current_users(path: Path | None = None) -> dict[str, str] | None:
    """Who is a user now, each with her credential (``credentials``), or None where this process has
    no users file at all. The one reading of "no users": a users file that exists and lists nobody
    (``{}``: emptied, every user removed) means nobody's login counts; a missing one means this
    process cannot check (deleted, or never given to it: a worker on another machine), so whom a
    signed decision names is judged by name only (``Authority.approvers_refusal``), and a login
    proven by a user's password counts for nothing here (``standing_refusal``). Raises
    ConsoleUserError (a ValueError) for a file that cannot be read."""
    path = path or users_file()
    return credentials(path) if path.exists() else None


def standing_refusal(
    users: dict[str, str] | None, name: str, given: str | None, bound: Callable[[str], str] = str
) -> str | None:
    """The one rule on whether what ``name`` proved with a login or token still counts (None: it
    does), against ``users`` (``current_users``). ``given``: the credential it was proven with, as
    ``bound`` keeps it (the credential itself for a session or token; a digest bound to the approval
    for a first approval or a decision); None: it keeps none (proven before credentials were kept),
    so it rests on her name. A login by the console's start-up token (``STARTUP_CREDENTIAL``, as
    the console holding that token vouches for it) counts only while there are no users; a session's
    credential still bound to a token (``startup_credential``: the console holds another, or none)
    never does. Any other counts only while she is a user, with the
    password she proved it with: with a users file that lists nobody, none counts; with none at all
    (deleted, or never given to this process), one proven by a user's password counts for nothing
    either (it was proven against a users file this process does not have), and one that keeps no
    credential cannot be checked and rests on her name, as before."""
    if given is not None and given.startswith(f"{STARTUP_CREDENTIAL}:"):
        return UNHELD_STARTUP  # a session's token-bound credential the console did not vouch for
    if given is not None and given == bound(STARTUP_CREDENTIAL):
        if not users:
            return None
        return (
            "a login by the console's start-up token counts only while the users file lists nobody: "
            "log in as a user"
        )
    if users is None and given is None:
        return None  # no users file here and no credential to check: her name is all there is
    if not users:
        return NO_USERS
    if name not in users:
        return (
            f"{name} is no longer a user (not in the users file): that login or token no longer "
            "counts; ask the operator, or log in as a current user"
        )
    if given is not None and given != bound(users[name]):
        return (
            f"{name}'s password was changed after this login: that login or token no longer "
            "counts; log in again with the new password"
        )
    return None


def credential_of(password_hash: str) -> str:
    """The fingerprint of one password hash (``credentials``)."""
    return hashlib.sha256(password_hash.encode()).hexdigest()[:16]


def user_names(path: Path | None = None) -> list[str]:
    return list(credentials(path))


def person(name: str) -> str:
    """The one form in which two names are compared as people (the two-person rule: submitter and
    approver, first and second approver, who retried a job): case folded, so an OS user "Ana" who
    submitted and the console user "ana" who approves are one person. A users file cannot hold two
    names that fold alike (``console.auth.load_users``)."""
    return name.strip().casefold()


def same_person(a: str | None, b: str | None) -> bool:
    """Whether two names (either may be missing) are one person (``person``)."""
    return a is not None and b is not None and person(a) == person(b)


def identity_refusal(who: Identity, path: Path | None = None) -> str | None:
    """The one rule on whether a proven identity still counts (None: it counts), for every surface:
    ``standing_refusal`` against the users file as it is now. A console session or CLI token of
    someone removed from the users file (who left), or whose password was reset since, counts for
    nothing; so does every login and token when the users file lists nobody (emptying it locks
    everyone out), and every one proven by a password when there is no users file at all, but the
    console's start-up-token login; and so does what rests on her name alone (the auto-approve
    privilege of a job she submitted, a routine she accepted). An OS user (not authenticated) is
    taken on her word, as before. ``path``: the users file (default: the one every process reads,
    TASKCREW_CONSOLE_USERS or ``<console dir>/users.yaml``)."""
    if not who.authenticated:
        return None
    if is_startup(who.credential) and who.proof != "console":
        return "only a console login is proven by the console's start-up token"
    try:
        users = current_users(path)
    except ValueError as exc:
        return f"the users file cannot be read, so no login can be checked ({exc})"
    return standing_refusal(users, who.name, who.credential)


def recorded(name: str, proof: str, credential: str | None = None) -> Identity:
    """An identity as a record names it (a job's submitter, a retry's author, a routine's reviewer):
    its name, how it was proven and the credential it was proven with (None: a record written
    before credentials were kept, which then rests on the name alone); a proof taskcrew does not
    know counts as an OS user's word."""
    known = cast(Proof, proof) if proof in get_args(Proof) else "os_user"
    return Identity(name=name, proof=known, credential=credential)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TokenStore:
    """Personal CLI tokens, stored hashed (they are random: a fast hash cannot be reversed)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or approvals_dir() / TOKEN_FILE

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
        tmp.replace(self.path)

    def issue(self, name: str, users: Path | None = None, *, credential: str | None = None) -> str:
        """A new token for ``name``, bound to ``credential``: the password her login was checked
        against (``login`` passes it, read in the same read as the check, so a reset landing between
        the check and this issue voids the token). Without it, to her password as it is now
        (``credentials``; for tokens no password was checked for)."""
        token = "tc_" + secrets.token_urlsafe(32)
        if credential is None:
            try:
                credential = credentials(users).get(name, "")
            except ValueError:
                credential = ""
        with locked(self.path):
            data = self._read()
            data[_digest(token)] = {
                "name": name,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "credential": credential,
            }
            self._write(data)
        return token

    def check(self, token: str) -> str | None:
        who = self.identity(token)
        return who.name if who else None

    def identity(self, token: str) -> Identity | None:
        """Who the token was issued to, with the credential it was issued under (None: unknown)."""
        entry = self._read().get(_digest(token.strip()))
        if not entry:
            return None
        return Identity(name=entry.get("name", ""), proof="token", credential=entry.get("credential"))

    def revoke(self, token: str) -> bool:
        with locked(self.path):
            data = self._read()
            gone = data.pop(_digest(token.strip()), None)
            self._write(data)
        return gone is not None


def saved_token_path() -> Path:
    """Where `approvals login` keeps this OS user's token (0600), when TASKCREW_TOKEN is not set."""
    return approvals_dir() / f"session-{os_user()}.token"


def login(name: str, password: str, users: Path | None = None) -> str:
    """Check the name and password against the users file; a new personal token, bound to the
    credential of the very password hash it was checked against (the users file is read once, as the
    console's login does): a reset that lands while the password is checked (scrypt is slow) leaves
    that token bound to the old password, so it counts for nothing (``identity_refusal``)."""
    from taskcrew.console.auth import Authenticator, load_users

    known = load_users(users or users_file())
    if not known:
        raise IdentityError(
            "no users are configured: add them with `taskcrew console add-user NAME` (the CLI then acts as "
            "the operating-system user until someone logs in)"
        )
    user = Authenticator(known).check(name, password)
    if user is None:
        raise IdentityError("wrong name or password")
    checked = next(u for u in known if u.name == user)
    return TokenStore().issue(user, users, credential=credential_of(checked.password_hash))


def cli_identity() -> Identity:
    """The CLI's identity: the personal token (TASKCREW_TOKEN, else the saved one), else the OS user."""
    token = os.environ.get(ENV_TOKEN, "").strip()
    source = ENV_TOKEN
    if not token:
        saved = saved_token_path()
        token = saved.read_text(encoding="utf-8").strip() if saved.is_file() else ""
        source = str(saved)
    if token:
        who = TokenStore().identity(token)
        if who is None:
            raise IdentityError(
                f"the token in {source} is unknown or revoked: `taskcrew approvals login` gives a new one"
            )
        return who
    return Identity(name=os_user(), proof="os_user")
