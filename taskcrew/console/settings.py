"""How the console is configured: where it reads runs and eval results, who may log in, where it
keeps its own state (sessions, co-signatures, audit log)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from pydantic import BaseModel, Field

from taskcrew.config import Paths, WorkplaceSettings


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ConsoleSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8900, ge=0, le=65535)
    state_dir: Path
    runs_dirs: list[Path]
    eval_dirs: list[Path]
    users_file: Path
    token: str | None = Field(
        default=None, description="single-user login token when no users are configured"
    )
    jobs_url: str | None = Field(default=None, description="job store URL (default: the store's own default)")
    risk_rules: Path | None = None
    approvals_dir: Path | None = Field(
        default=None, description="the approvals authority's key and audit log (None: TASKCREW_APPROVALS_DIR)"
    )
    jobs_dir: Path | None = Field(
        default=None,
        description="the workers' job folders, where they keep the screenshot of a filled form "
        "(None: this process's TASKCREW_HOME/jobs, the workers' when they share it)",
    )
    knowledge_dir: Path | None = Field(
        default=None,
        description="the knowledge store whose facts /facts lists (None: TASKCREW_HOME/knowledge)",
    )
    routines_dir: Path | None = Field(
        default=None,
        description="the routines folder /routines reads (None: the CLI's, TASKCREW_ROUTINES or "
        "TASKCREW_HOME/routines)",
    )
    secure_cookies: bool | None = Field(default=None, description="None: Secure unless bound to loopback")
    session_hours: float = 12.0
    sandbox: Path = Field(
        default_factory=lambda: Paths.from_env().sandbox,
        description="the company's files, where the approver opens the documents a value came from",
    )
    systems: dict[str, str] = Field(
        default_factory=lambda: WorkplaceSettings().system_names(),
        description="host:port -> the system's name, shown as an approval's target system",
    )
    public_hosts: list[str] = Field(
        default_factory=list,
        description="extra Host header values the console answers (a name behind a reverse proxy)",
    )

    @classmethod
    def from_env(cls, **overrides: object) -> ConsoleSettings:
        """The console's settings from the environment, with ``overrides`` (None: not given). The
        users file is not one of them: it decides who may approve and whether two people must, so
        it is the one setting the console, the workers and the CLI all read (TASKCREW_CONSOLE_USERS,
        else ``<console dir>/users.yaml``); a console with a users file of its own would enforce
        rules the workers that obey its decisions do not."""
        if overrides.get("users_file") is not None:
            raise ValueError(
                "the users file is not a console setting of its own: set TASKCREW_CONSOLE_USERS for the "
                "console, the workers and the CLI alike"
            )
        paths = Paths.from_env()
        state = Path(os.environ.get("TASKCREW_CONSOLE_DIR", paths.home / "console"))
        values: dict[str, object] = {
            "state_dir": state,
            "runs_dirs": [paths.runs],
            "eval_dirs": [Path("eval-results")],
            "users_file": Path(os.environ.get("TASKCREW_CONSOLE_USERS", state / "users.yaml")),
            "public_hosts": [h for h in os.environ.get("TASKCREW_CONSOLE_HOSTS", "").split(",") if h.strip()],
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)

    @property
    def cookie_secure(self) -> bool:
        return self.secure_cookies if self.secure_cookies is not None else not is_loopback(self.host)
