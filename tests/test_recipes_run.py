"""Recipes end to end with the scripted models: the real crew, Chromium, ERP, intranet and files.

A recipe case runs the task and criteria its recipe expands to; the plan keeps the recipe's
criteria; a read-only request cannot change the ERP even when the worker tries to.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from taskcrew.eval.sweep import SweepSettings, run_sweep

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CASES = {
    "cases": [
        {
            "id": "recipe-check-invoice-entered",
            "recipe": {"name": "check-invoice", "params": {"vendor": "GLOBEX corp"}},
            "chaos": {"enabled": False},
            "expect": {"outcomes": ["done"], "answer_contains": ["GX-5531", "already entered"]},
        },
        {  # the solver's way of working this task saves a bill: read-only must refuse it
            "id": "initech-newest",
            "task": "Enter Initech's newest invoice into the ERP.",
            "read_only": True,
            "max_steps": 20,
            "chaos": {"enabled": False},
            "expect": {"outcomes": ["incomplete", "rejected", "not_verified", "error"]},
        },
    ]
}


def _events(run_dir: str, kind: str) -> list[dict[str, object]]:
    lines = (Path(run_dir) / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e.get("kind") == kind]


@pytest.mark.timeout(300)
def test_a_recipe_runs_end_to_end_and_read_only_holds(
    tmp_path: Path, eval_knowledge_seed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TASKCREW_RECIPES", raising=False)
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "recipes.yaml").write_text(yaml.safe_dump(CASES), encoding="utf-8")
    settings = SweepSettings(
        models=["scripted/solver"],
        cases_dir=cases,
        out_dir=tmp_path / "out",
        knowledge_seed=eval_knowledge_seed,
    )
    report = run_sweep(settings, lambda event: None)
    runs = {r.case_id: r for r in report.runs}
    recipe, read_only = runs["recipe-check-invoice-entered"], runs["initech-newest"]
    assert recipe.passed, [f"{c.name}: {c.detail}" for c in recipe.failures] or recipe.error
    assert recipe.approvals == 0
    [plan] = [e["plan"] for e in _events(recipe.run_dir or "", "plan")]
    assert plan["success_criteria"][0] == (  # the recipe's criterion, with the value normalised
        "The answer says whether the newest invoice from GLOBEX corp is in Acme Payables, naming its bill if it is"
    )
    assert plan["changes_data"] is False
    # read-only: the save is refused in code, nothing reaches the ERP, and the run does not claim success
    assert read_only.passed, [f"{c.name}: {c.detail}" for c in read_only.failures] or read_only.error
    assert read_only.outcome != "done" and read_only.approvals == 0
    new_bills = next(c for c in read_only.checks if c.name == "new bills")
    assert new_bills.passed and new_bills.detail.startswith("0 added")
    refused = [e for e in _events(read_only.run_dir or "", "policy") if e["decision"] == "read_only_refused"]
    assert refused and all(e["detail"]["method"] == "POST" for e in refused)  # type: ignore[index]
