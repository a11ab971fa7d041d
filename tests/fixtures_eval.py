"""pytest fixtures for the eval area (imported by conftest.py).

- ``eval_knowledge_seed``: the demo company's procedures in a Chroma store, seeded once per test
  session; sweeps copy it for every run instead of seeding again (seconds each).
- ``eval_cases_dir``: a cases folder holding only the given case ids (copied from the real cases).
- ``finished_run``: a real run folder (the scripted solver answering a python question).
- ``scripted_workplace(folder, seed)``: the demo company's Workplace (its own ERP, the seeded
  knowledge copied, no chaos) for runs of a scripted model that a test drives leg by leg.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from taskcrew.config import DEFAULT_SANDBOX

if TYPE_CHECKING:
    from taskcrew.crew.workplace import Workplace
    from taskcrew.knowledge import MiniLMEmbedder

__all__ = ["eval_cases_dir", "eval_knowledge_seed", "finished_run", "scripted_workplace"]


@contextmanager
def scripted_workplace(folder: Path, seed: Path, intranet_url: str | None = None) -> Iterator[Workplace]:
    """The demo company's Workplace in ``folder``: its own ERP (a free port, no chaos), the knowledge
    ``seed`` copied, no intranet (or a test's site at ``intranet_url``), a person who approves
    everything (a test decides through the job database and its own human)."""
    from taskcrew.config import WorkplaceSettings
    from taskcrew.crew.workplace import Workplace
    from taskcrew.tools.human import AutoApproveHuman

    shutil.copytree(seed, folder / "knowledge")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=intranet_url,
        sandbox=DEFAULT_SANDBOX,
        runs_dir=folder / "runs",
        erp_db=folder / "erp.sqlite3",
        knowledge_dir=folder / "knowledge",
        chaos=False,
    )
    with Workplace(settings, AutoApproveHuman()) as workplace:
        yield workplace


@pytest.fixture(scope="session")
def eval_knowledge_seed(tmp_path_factory: pytest.TempPathFactory, knowledge_embedder: MiniLMEmbedder) -> Path:
    from taskcrew.eval.sweep import seed_knowledge

    return seed_knowledge(
        tmp_path_factory.mktemp("eval-seed") / "knowledge", DEFAULT_SANDBOX, knowledge_embedder
    )


@pytest.fixture
def eval_cases_dir(tmp_path: Path) -> Callable[..., Path]:
    """``eval_cases_dir("a", "b")``: a folder with a cases file holding exactly those cases."""
    from taskcrew.eval.models import load_cases

    def make(*ids: str) -> Path:
        cases = {c.id: c for c in load_cases()}
        folder = tmp_path / "cases"
        folder.mkdir(exist_ok=True)
        data: dict[str, Any] = {
            "cases": [cases[i].model_dump(mode="json", exclude_defaults=True) for i in ids]
        }
        (folder / "chosen.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        return folder

    return make


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    """A real, finished run folder: the scripted solver and auditor answer a python question."""
    from taskcrew.crew.run import RunResources, RunSettings, run_task
    from taskcrew.eval.human import CaseHuman
    from taskcrew.eval.models import HumanScript, load_cases
    from taskcrew.eval.solvers import scripted_models
    from taskcrew.tools.research.crew_tools import PythonTool
    from taskcrew.tools.research.python_sandbox import PythonSandbox

    case = next(c for c in load_cases() if c.id == "research-sum-of-squares")
    settings = RunSettings(
        task=case.task,
        worker_model="scripted/solver",
        verifier_model="scripted/auditor",
        sandbox=DEFAULT_SANDBOX,
        runs_dir=tmp_path / "runs",
    )
    resources = RunResources(
        human=CaseHuman(HumanScript()),
        research_tools=[PythonTool(PythonSandbox())],
        scripted=scripted_models(case),
    )
    result = run_task(settings, resources)
    assert result.outcome == "done", result.reason
    return result.run_dir
