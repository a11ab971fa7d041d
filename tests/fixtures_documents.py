"""pytest fixtures for the documents area (imported by conftest.py).

- ``ground_truth``: the validated documents.yaml (session-wide, read-only).
- ``inbox_dir``: the committed sandbox inbox (read-only; copy it before changing anything).
- ``inbox_files``: a ``SandboxFiles`` over the committed inbox.
- ``scratch_inbox``: a private copy of the inbox in tmp_path, for tests that add files or links.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskcrew.sandbox.ground_truth import GroundTruth, load_ground_truth
from taskcrew.tools.documents.models import FileContent
from taskcrew.tools.documents.specimens import Specimen
from taskcrew.tools.files import SandboxFiles

__all__ = ["ground_truth", "inbox_dir", "inbox_files", "scratch_inbox"]


@pytest.fixture(scope="session")
def ground_truth() -> GroundTruth:
    return load_ground_truth()


@pytest.fixture(scope="session")
def inbox_dir(ground_truth: GroundTruth) -> Path:
    return ground_truth.inbox_dir


@pytest.fixture(scope="session")
def inbox_files(inbox_dir: Path) -> SandboxFiles:
    return SandboxFiles(inbox_dir)


@pytest.fixture
def scratch_inbox(tmp_path: Path, inbox_dir: Path) -> Path:
    target = tmp_path / "sandbox" / "inbox"
    shutil.copytree(inbox_dir, target)
    return target


def read_scans(root: Path, docs: dict[str, Specimen]) -> tuple[SandboxFiles, dict[str, FileContent]]:
    """Each specimen rendered to ``root/<name>.png`` and read (OCR'd) as the agent is shown it, its
    values recorded for provenance as the toolbox records them."""
    for name, spec in docs.items():
        spec.render().save(root / f"{name}.png")
    files = SandboxFiles(root)
    contents = {name: files.read(f"{name}.png") for name in docs}
    for content in contents.values():
        files.provenance.record(content)
    return files, contents
