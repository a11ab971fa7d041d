"""A replay SIGKILLed right after the ERP saved its bill (used by test_routines_replay.py).

    python tests/routines_kill_child.py ERP_URL RUNS_DIR

Runs the headline chore against the running ERP with the accepted routine (TASKCREW_ROUTINES from
the parent); when the replay's browser step is about to be recorded — the bill is in the ERP, the
run has not finished, verified or reported anything — the process kills itself with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from routines_world import chore

from taskcrew.config import WorkplaceSettings
from taskcrew.crew.workplace import Workplace
from taskcrew.eval.human import CaseHuman
from taskcrew.eval.solvers import scripted_models


def die_after_the_save(event: Any) -> None:
    if event.kind == "step" and event.index == 1 and "routine" in event.title:
        os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    erp_url, runs = sys.argv[1], Path(sys.argv[2])
    settings = WorkplaceSettings(
        erp_url=erp_url,
        intranet_url=None,
        runs_dir=runs,
        erp_db=runs / "unused.sqlite3",
        knowledge_dir=runs / "knowledge",
        use_knowledge=False,
    )
    case = chore("Northwind Traders")
    with Workplace(settings, CaseHuman(case.human)) as place:
        place.run(
            case.task,
            worker_model="scripted/solver",
            verifier_model="scripted/auditor",
            scripted=scripted_models(case),
            criteria=case.criteria,
            listeners=[die_after_the_save],
        )
    print("not killed")  # the parent fails the test on this


if __name__ == "__main__":
    main()
