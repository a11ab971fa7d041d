"""`runs list`/`runs show` name a job's send in doubt only under a run folder that job's signed record
names (``RunRecords.doubt``: the link ``RunRecords.of`` vouches by), never because a folder's own
trace says the job's leg parked there: a folder anyone can write claims no job's send."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from fixtures_erp import NORTHWIND_2057, ErpUser
from fixtures_eval import finished_run  # noqa: F401
from test_record_identity_s46 import DOUBT, _job_of, runner

from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Jobs
from taskcrew.jobs.models import utcnow
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.intents import IntentLog, SendOutcome
from taskcrew.tools.readback import load_rules


def test_a_forged_folder_does_not_claim_another_jobs_send_in_doubt(
    isolated_home: Path,
    finished_run: Path,  # noqa: F811
    erp: ErpServer,
    erp_user: ErpUser,
) -> None:
    from taskcrew.eval.runs import read_run

    task = read_run(finished_run).task
    rules = load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    url = f"{erp.url}/bills/new"
    fields = [("csrf_token", "t1"), ("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [(k, v) for k, v in NORTHWIND_2057.items() if k != "vendor"]
    jobs = Jobs.open()
    try:
        x = _job_of(jobs, finished_run, task)
        log = IntentLog(StoreIntents(jobs, x), x, rules, ask_again=lambda *a: False)
        assert log.before_send("POST", url, fields, lambda p: None) is None
        log.after_send("POST", url, fields, SendOutcome(detail="timed out"))
        jobs.mark(x, "failed", only_if=("running",), reason="no answer", finished_at=utcnow())
        forged = finished_run.parent / "zz-forged-run"
        shutil.copytree(finished_run, forged)
        with (forged / "trace.jsonl").open("a", encoding="utf-8") as fh:  # one line a writer adds
            parked = {
                "kind": "control",
                "action": "parked",
                "reason": f"waiting for approval apr-000000000000 of job {x}; x",
            }
            fh.write(json.dumps(parked) + "\n")

        shown = runner.invoke(app, ["runs", "show", str(forged)])
        assert shown.exit_code == 0, shown.output
        assert DOUBT not in shown.output, shown.output
        listed = runner.invoke(app, ["runs", "list", "--runs-dir", str(finished_run.parent)])
        assert listed.exit_code == 0, listed.output
        assert " ".join(listed.output.split()).count(DOUBT) == 1, listed.output  # only under its own run
        honest = runner.invoke(app, ["runs", "show", str(finished_run)])  # the folder its record names
        assert honest.exit_code == 0 and f"job {x}: {DOUBT}" in " ".join(honest.output.split()), honest.output
    finally:
        jobs.close()
