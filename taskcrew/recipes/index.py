"""The recipes' names and summaries for ``taskcrew --help``, cached so the help needs neither YAML
nor pydantic: one JSON file under TASKCREW_HOME, valid while every recipe folder and file has the
same modification time and size (a changed, added or removed file rebuilds it).

    names = recipe_index(folders, reserved)   # {name: summary}
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SUFFIXES = (".yaml", ".yml")  # as the loader's
VERSION = 1


def _stamp(folders: list[Path]) -> list[list[object]]:
    stamp: list[list[object]] = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            stamp.append([str(folder), None])
            continue
        stat = folder.stat()
        stamp.append([str(folder), stat.st_mtime_ns])
        for entry in entries:
            if entry.name.endswith(SUFFIXES) and not entry.name.startswith("."):
                try:
                    info = entry.stat()
                except OSError:
                    continue
                stamp.append([entry.path, info.st_mtime_ns, info.st_size])
    return stamp


def cache_file(home: Path) -> Path:
    return home / "cache" / "recipes-index.json"


def recipe_index(folders: list[Path], reserved: set[str], home: Path) -> dict[str, str]:
    """{name: summary} of the usable recipes in ``folders`` (the loader's rules), from the cache when
    nothing changed."""
    path = cache_file(home)
    key = {"version": VERSION, "reserved": sorted(reserved), "files": _stamp(folders)}
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            return {str(k): str(v) for k, v in cached["recipes"].items()}
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    from taskcrew.recipes.loader import load_library  # YAML + pydantic: only on a miss

    library = load_library(folders, reserved)
    recipes = {name: recipe.summary for name, recipe in library.recipes.items()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "recipes": recipes}), encoding="utf-8")
        tmp.replace(path)
    except OSError:  # a read-only home: no cache, the help is only slower
        pass
    return recipes
