"""Where things live and how they are reached. Plain values, read once from the environment.

Every path can be overridden by an environment variable (or a ``.env`` file in the working
directory) so tests and users can isolate state.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from taskcrew.homes import DEFAULT_SANDBOX, PACKAGE_DIR, sandbox_dir
from taskcrew.homes import data_home as _data_home

__all__ = ["DEFAULT_SANDBOX", "PACKAGE_DIR", "Paths", "WorkplaceSettings", "check_home", "files_root"]


def files_root(sandbox: Path) -> Path:
    """The folder the file tools see: the sandbox's inbox/ when it has one, else the sandbox."""
    inbox = sandbox / "inbox"
    return inbox if inbox.is_dir() else sandbox


DEFAULT_ERP_PORT = 8800
ERP_NAME = "Acme Payables"  # the systems' names, as runs and the console call them
INTRANET_NAME = "Acme Connect intranet"


class HomeError(ValueError):
    """TASKCREW_HOME (or the default data folder) cannot be used; the message says what to do."""


def check_home(home: Path) -> Path:
    """The data folder, created if missing; HomeError when it is a file or cannot be created."""
    if home.exists() and not home.is_dir():
        raise HomeError(f"TASKCREW_HOME {home} is a file, not a folder: point TASKCREW_HOME at a folder")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HomeError(
            f"TASKCREW_HOME {home} cannot be created ({type(exc).__name__}): point TASKCREW_HOME at a "
            "writable folder"
        ) from exc
    return home


class Paths(BaseModel):
    """Filesystem locations. ``home`` holds the knowledge store, ERP database and crewai storage."""

    home: Path
    sandbox: Path
    runs: Path

    @property
    def knowledge_dir(self) -> Path:
        return self.home / "knowledge"

    @property
    def erp_db(self) -> Path:
        return self.home / "erp.sqlite3"

    @property
    def crewai_storage(self) -> Path:
        return self.home / "crewai"

    @classmethod
    def from_env(cls) -> Paths:
        return cls(
            home=_data_home(),
            sandbox=sandbox_dir(),
            runs=Path(os.environ.get("TASKCREW_RUNS", "runs")).expanduser().resolve(),
        )


COMPANY_DOMAINS_ENV = "TASKCREW_COMPANY_DOMAINS"
COMPANY_DOMAINS = ("acme-corp.example",)  # the demo company's own mail domain (its AP inbox's)


def company_domains() -> set[str]:
    """The company's own mail domains: a colleague's, never an issuer's. TASKCREW_COMPANY_DOMAINS
    (comma-separated) overrides the demo company's."""
    raw = os.environ.get(COMPANY_DOMAINS_ENV, "")
    given = {d.strip().casefold().lstrip("@").rstrip(".") for d in raw.split(",") if d.strip()}
    return given or set(COMPANY_DOMAINS)


def load_dotenv_once(path: Path | None = None) -> None:
    """Load ``.env`` (working directory by default) without overriding the real environment."""
    from dotenv import load_dotenv

    load_dotenv(path or Path.cwd() / ".env", override=False)


def quiet_crewai_env(storage_dir: Path) -> None:
    """CrewAI phones home and prompts unless told not to; call before ``import crewai``."""
    storage_dir.mkdir(parents=True, exist_ok=True)
    defaults = {
        "CREWAI_DISABLE_TELEMETRY": "true",
        "OTEL_SDK_DISABLED": "true",
        "CREWAI_TRACING_ENABLED": "false",
        "CREWAI_DISABLE_VERSION_CHECK": "true",
        "CREWAI_STORAGE_DIR": str(storage_dir.resolve()),
        "ANONYMIZED_TELEMETRY": "False",  # chromadb
        "ORT_DISABLE_TELEMETRY": "1",  # onnxruntime
    }
    for key, value in defaults.items():
        os.environ.setdefault(key, value)


class WorkplaceSettings(BaseModel):
    """The systems a run works in and how to reach them (see taskcrew.crew.workplace)."""

    def system_names(self) -> dict[str, str]:
        """host:port -> the system's name (the console names an approval's target system by it)."""
        urls = {ERP_NAME: self.erp_url, INTRANET_NAME: self.intranet_url}
        return {urlsplit(u).netloc: name for name, u in urls.items() if u}

    erp_url: str = f"http://127.0.0.1:{DEFAULT_ERP_PORT}"
    intranet_url: str | None = "http://127.0.0.1:8801"
    sandbox: Path = Field(default_factory=lambda: Paths.from_env().sandbox)
    runs_dir: Path = Field(default_factory=lambda: Paths.from_env().runs)  # made absolute: see below
    knowledge_dir: Path | None = None
    erp_db: Path | None = None
    start_local: bool = True
    chaos: bool = True
    chaos_seed: int = 0
    headless: bool = True
    slow_mo_ms: int = 0
    chromium: Path | None = None
    web_search: Literal["intranet", "web"] = "intranet"
    use_knowledge: bool = True

    @field_validator("runs_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        """Run folders are recorded as absolute paths (a console started elsewhere finds them)."""
        return value.expanduser().resolve()
