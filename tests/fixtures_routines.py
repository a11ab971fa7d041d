"""Routine test fixtures: Northwind's template as distil learns it, and a copy of the demo inbox a
test may change (a file made unreadable, a forged e-mail added)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskcrew.routines.models import Template

__all__ = ["inbox", "northwind"]  # what conftest re-exports


@pytest.fixture(scope="module")
def northwind() -> Template:
    """Northwind's template as distil learns it from its invoice e-mail (senders included)."""
    from test_routines import INBOX, _template

    from taskcrew.tools.files import SandboxFiles

    return _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    """A copy of the demo inbox in a temporary folder."""
    from test_routines import INBOX

    copied = tmp_path / "inbox"
    shutil.copytree(INBOX, copied)
    return copied
