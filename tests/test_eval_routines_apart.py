"""The eval sweep keeps out of the company's routines. Before, a sweep run of a recipe case left a
draft sealed with the operator's key in the home's routines folder (shown to reviewers as a company
draft), and once that routine was accepted the next sweep replayed it instead of testing the model
(3 model calls instead of 20, "1/1 passed" credited to the model) and counted into its record. A real
sweep (scripted solver, real ERP, Chromium, Chroma) with the company's routines folder named."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from taskcrew.eval.sweep import SweepSettings, run_sweep
from taskcrew.routines.hooks import ENV_LEARN
from taskcrew.routines.store import ENV_VAR

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.timeout(300)
def test_a_sweep_leaves_the_company_routines_as_they_were(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    isolated_home: Path,
    eval_knowledge_seed: Path,
    eval_cases_dir: Callable[..., Path],
) -> None:
    company = tmp_path / "company-routines"
    company.mkdir()
    monkeypatch.setenv(ENV_VAR, str(company))
    monkeypatch.delenv(ENV_LEARN, raising=False)
    settings = SweepSettings(
        models=["scripted/solver"],
        out_dir=tmp_path / "eval-results",
        knowledge_seed=eval_knowledge_seed,
        cases_dir=eval_cases_dir("recipe-enter-invoice"),
    )
    (record,) = run_sweep(settings).runs
    assert record.passed and record.outcome == "done", record
    assert list(company.iterdir()) == []  # no draft proposed to the company's reviewers
    assert os.environ[ENV_VAR] == str(company) and ENV_LEARN not in os.environ  # put back after the run
    notes = list((tmp_path / "eval-results").rglob("routine.txt"))
    assert not any("proposed" in n.read_text(encoding="utf-8") for n in notes)
