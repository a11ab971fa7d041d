"""Shared set-up of the routines tests and bench: a chore run by the scripted solver (the agent),
its routine learned and accepted, and runs that replay it — all on one real Workplace."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from taskcrew.config import WorkplaceSettings
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.models import EvalCase, Expectation, HumanScript, RecipeUse
from taskcrew.eval.solvers import scripted_models
from taskcrew.mock_erp import ChaosConfig
from taskcrew.recipes.commands import current_library


def chore(vendor: str, approvals: str = "approve") -> EvalCase:
    """The headline chore for ``vendor`` as the recipe `enter-invoice` expands it."""
    case = EvalCase(
        id="routine-" + re.sub(r"[^a-z0-9]+", "-", vendor.lower())[:40].strip("-"),
        recipe=RecipeUse(name="enter-invoice", params={"vendor": vendor}),
        human=HumanScript(approvals=approvals),  # type: ignore[arg-type]
        expect=Expectation(outcomes=["done"]),
    )
    return case.with_recipe(current_library())


def workplace(tmp: Path, human: Any = None) -> Workplace:
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=None,
        runs_dir=tmp / "runs",
        erp_db=tmp / "erp.sqlite3",
        knowledge_dir=tmp / "knowledge",
        use_knowledge=False,
    )
    return Workplace(settings, human or CaseHuman(HumanScript()))


def run_chore(
    place: Workplace, case: EvalCase, *, chaos: ChaosConfig | None = None, reset: bool = True
) -> Any:
    """One run of ``case`` on a fresh ERP (reset, chaos as given), models scripted."""
    if reset:
        place.erp_server.reset(chaos or ChaosConfig())
    return place.run(
        case.task,
        worker_model="scripted/solver",
        verifier_model="scripted/auditor",
        scripted=scripted_models(case),
        human=CaseHuman(case.human),
        criteria=case.criteria,
    )


@contextmanager
def learned_chore(tmp: Path) -> Iterator[dict[str, Any]]:
    """The headline chore run once by the agent (real Chromium, the demo ERP as it is), its draft
    accepted: the workplace, the case, the routine store and the first run."""
    from taskcrew.routines.store import RoutineStore

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKCREW_ROUTINES", str(tmp / "routines"))
        with workplace(tmp) as place:
            case = chore("Northwind Traders")
            first = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
            assert first.outcome == "done", first.reason
            store = RoutineStore()
            store.accept("enter-invoice", 1, "reviewer")
            yield {"place": place, "case": case, "store": store, "first": first}
