"""Where taskcrew's folders are, from the environment; plain functions without pydantic, so that
``taskcrew --help`` can find the recipes without importing it (``config.Paths`` uses these)."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_SANDBOX = PACKAGE_DIR / "sandbox"


def data_home() -> Path:
    if home := os.environ.get("TASKCREW_HOME"):
        return Path(home).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "taskcrew"


def sandbox_dir() -> Path:
    return Path(os.environ.get("TASKCREW_SANDBOX", DEFAULT_SANDBOX)).expanduser()


RECIPES_FOLDER = "recipes"


def recipe_folders(sandbox: Path, home: Path) -> list[Path]:
    """Where recipes come from, in order of precedence."""
    named = [Path(p).expanduser() for p in os.environ.get("TASKCREW_RECIPES", "").split(os.pathsep) if p]
    return [sandbox / RECIPES_FOLDER, *named, home / RECIPES_FOLDER]
