"""An intent row records whether it recorded the fields the rules left out of its key (red team on
9747892).

On a host whose rules leave no field out of the key, this release's rows record an empty set of
left-out fields. The intent log (``tools.intents.record_of``) and every surface (``jobs.liveness``)
read an empty set as "written before rows recorded it" and so judged the row by the set its key
proves (``approvals.key.keyed_with``), which gives up past 8 names: a different bill differing in 9
values was held as "this exact submission ... NOT sent again", with the false note that the row was
written by an earlier version, and ``liveness.attempts`` grouped two bills as one request. Now a row
says it recorded its set (``Intent.exclusions_recorded``), and ``record_of`` alone reads it: [] is
"nothing left out"; a row without the mark that names no field (every earlier version wrote an empty
set) is still an old row.

Real rules file, job database (SQLite) and the demo ERP over HTTP (its read-back rule); no model is
involved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from fixtures_erp import NORTHWIND_2057, ErpUser

from taskcrew.approvals.key import POSSIBLY_WHY
from taskcrew.approvals.rules import DEFAULT_RULES
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.jobs import Jobs, liveness
from taskcrew.jobs.models import Intent, utcnow
from taskcrew.jobs.runner import StoreIntents
from taskcrew.mock_erp import ErpServer
from taskcrew.tools.intents import IntentLog, IntentRecord, SendOutcome, intent_key, record_of
from taskcrew.tools.readback import load_rules

DEMO_HOSTS = "hosts: ['127.0.0.1:*', 'localhost:*']\n    fields: ['csrf_token']"


@pytest.fixture
def nothing_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's rules leave the CSRF token out only on another system's host: on the ERP the
    tests drive, no field is left out of a request key (as on every host the rules do not name)."""
    text = DEFAULT_RULES.read_text(encoding="utf-8")
    assert DEMO_HOSTS in text
    rules = tmp_path / "rules.yaml"
    rules.write_text(text.replace(DEMO_HOSTS, DEMO_HOSTS.replace("127.0.0.1:*", "erp.example.com:*")))
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(rules))


def _bill(erp_user: ErpUser, invoice: str, amount: str, notes: int) -> list[tuple[str, str]]:
    fields = [("vendor_id", erp_user.vendor_ids()["Northwind Traders"])]
    fields += [
        (k, {"invoice_number": invoice, "amount": amount}.get(k, v)) for k, v in NORTHWIND_2057.items()
    ]
    fields = [f for f in fields if f[0] != "vendor"]
    return fields + [(f"note_{i}", f"{invoice}-{i}") for i in range(notes)]


def _job(tmp_path: Path) -> tuple[Jobs, str]:
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("enter two bills", submitted_by="ana", enqueue=False)
    assert jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1", started_at=utcnow())
    return jobs, job.id


def _fetch(erp_user: ErpUser):  # type: ignore[no-untyped-def]
    def fetch(page: str) -> str | None:
        response = erp_user.http.get(page)
        return response.text if response.status_code == 200 else None

    return fetch


@pytest.mark.parametrize("answered", [False, True], ids=["a-timed-out", "a-saved"])
@pytest.mark.parametrize("notes", [0, 8], ids=["2-values-differ", "10-values-differ"])
@pytest.mark.usefixtures("nothing_left_out")
def test_a_row_that_left_nothing_out_is_not_taken_for_another_bills_attempt(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser, notes: int, answered: bool
) -> None:
    jobs, job_id = _job(tmp_path)
    log = IntentLog(
        StoreIntents(jobs, job_id), job_id, load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    )
    url, fetch = f"{erp.url}/bills/new", _fetch(erp_user)
    a = _bill(erp_user, "INV-A-1", "120.00", notes)
    b = _bill(erp_user, "INV-B-2", "340.00", notes)  # another bill: 2 + notes values differ
    assert log.before_send("POST", url, a, fetch) is None
    log.after_send(
        "POST", url, a, SendOutcome(http_status=303) if answered else SendOutcome(detail="timed out")
    )

    said = log.before_send("POST", url, b, fetch)
    assert said is None, f"bill B was held as bill A's attempt: {said}"
    log.after_send("POST", url, b, SendOutcome(http_status=303))

    rows = jobs.intents(job_id)
    assert [len(request) for request in liveness.attempts(rows)] == [1, 1]  # two bills, two requests
    assert [record_of(row).excluded for row in rows] == [[], []]  # recorded: nothing left out
    doubt = liveness.send_in_doubt(rows)
    assert (doubt.key if doubt else None) == (None if answered else intent_key(job_id, "POST", url, a))
    jobs.close()


@pytest.mark.usefixtures("nothing_left_out")
def test_a_row_an_earlier_version_wrote_is_still_read_as_recording_no_exclusions(
    tmp_path: Path, erp: ErpServer, erp_user: ErpUser
) -> None:
    jobs, job_id = _job(tmp_path)
    url, fetch = f"{erp.url}/bills/new", _fetch(erp_user)
    a = _bill(erp_user, "INV-A-1", "120.00", 8)
    # bill A as the previous release recorded it: no set of left-out fields, no answer (in doubt)
    old = IntentRecord(key=intent_key(job_id, "POST", url, a), method="POST", url=url, fields=a)
    assert StoreIntents(jobs, job_id).claim(old) is None
    (row,) = jobs.intents(job_id)
    assert row.trusted and record_of(row).excluded is None
    # the document exactly as released versions stored it (an empty "excluded", no mark): an old row
    with sa.create_engine(f"sqlite:///{tmp_path / 'jobs.sqlite3'}").connect() as conn:
        doc = json.loads(conn.execute(sa.text("select doc from taskcrew_intents")).scalar_one())
    assert doc["payload"]["excluded"] == {}
    doc.pop("exclusions_recorded", None)
    assert record_of(Intent.model_validate(doc)).excluded is None

    # bill B differs in 10 values: the old row's key cannot prove which fields it left out, so it
    # may be B (held, said why), as before this release's rows said what they left out
    log = IntentLog(
        StoreIntents(jobs, job_id), job_id, load_rules(DEFAULT_SANDBOX / "readback.yaml", {"erp": erp.url})
    )
    said = log.before_send("POST", url, _bill(erp_user, "INV-B-2", "340.00", 8), fetch)
    assert said is not None and "NOT sent again" in said and POSSIBLY_WHY in said, said
    assert len(jobs.intents(job_id)) == 1
    jobs.close()
