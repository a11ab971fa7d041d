"""The console's pages an approver decides from, for the run-account states that are not simply
"done and as sealed" — fetched over HTTP by a real browser from a real console on real runs (`taskcrew
run` in the foreground: real Chromium, the demo ERP over HTTP, the job store and the signed audit log
in SQLite; only the models scripted).

1. A run folder changed after its run ended (edited, or another job's copied in): one warning, the
   problem first; a chip that says the signed outcome and that the folder changed (amber, never the
   green of a success) on the run page, beside the job page's Run link, in the runs list and /jobs;
   everything taken from the folder (model and tokens, plan, verifier's table, what happened) inside
   one closed <details>, with no success colour in it; the signed audit log's decisions listed,
   a `taskcrew run`'s terminal approval among them (tied to the job by its signed send).
2. A job row set back to an earlier signed version: "rolled back — latest signed: <outcome>", the
   explanation once in a red box with the Audit log a link, no raw backticks; in /jobs one short line.
3. A run whose last-step words claim what it did not record: an amber box near the top of the run
   and job pages; the step's summary marked as the model's words, not in a success colour.
4. A run from before seals: "Older run: its files were not checked against the job's record." on the
   run and job pages, and a tag in the runs list; record ids and dates kept whole in the runs list.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fixtures_console import ConsoleEnv
from fixtures_foreground import BOB, HOOLI
from test_adversarial_run_account import _raw, env, taskcrew_run, the_job  # noqa: F401  (env: the autouse fixture)

from taskcrew.approvals.authority import Authority
from taskcrew.eval import kit
from taskcrew.jobs import JobOptions
from taskcrew.mock_erp import ErpServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(400)]

SUCCESS_GREEN = "rgb(29, 122, 70)"  # --ok
WARN_AMBER = "rgb(154, 91, 0)"  # --warn
HOSTILE = " Also paid BILL-0004 (Initrode) in full; the payment was approved by alice."
# every element in ``root`` drawn in a success colour (text or a left border)
GREEN_INSIDE = (
    "(root) => [...root.querySelectorAll('*')].filter(e => { const s = getComputedStyle(e); return"
    f" s.color === '{SUCCESS_GREEN}' || (s.borderLeftStyle !== 'none'"
    f" && s.borderLeftColor === '{SUCCESS_GREEN}'); }})"
    ".map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 60))"
)


def edit_folder(run: Path) -> None:
    """Someone who can write the runs folder rewrites the trace's approval and the report."""
    trace = run / "trace.jsonl"
    said = re.sub(
        r'"by": "[^"]*? at the terminal', '"by": "alice at the terminal', trace.read_text(encoding="utf-8")
    )
    trace.write_text(said, encoding="utf-8")
    report = run / "report.md"
    report.write_text("# done — approved by alice\n\n" + report.read_text(encoding="utf-8"), encoding="utf-8")


def opened(page: Any, url: str) -> Any:
    page.goto(url)
    return page


def one_warning(page: Any) -> str:
    """The page's one warning (a .flash or .notice outside the folder's collapsed account)."""
    warnings = page.locator("main .flash:not(#folder-says *), main .notice:not(#folder-says *)")
    shown = [w for w in warnings.all() if w.is_visible()]
    assert len(shown) == 1, [w.inner_text() for w in shown]
    return str(shown[0].inner_text())


def assert_folder_collapsed(page: Any) -> None:
    folder = page.locator("details#folder-says")
    assert folder.count() == 1
    assert folder.evaluate("e => e.open") is False
    assert folder.locator("> summary").inner_text() == "What the changed folder says (not vouched for)"
    folder.locator("> summary").click()  # opened: still nothing in a success colour
    assert folder.evaluate(GREEN_INSIDE) == []
    assert folder.locator(".ok").count() == 0


def test_a_changed_folder_is_one_warning_a_chip_and_a_closed_account_with_the_terminal_decision(
    tmp_path: Path, erp: ErpServer, console_env: ConsoleEnv
) -> None:
    first = taskcrew_run(erp, tmp_path)  # pays BILL-0005: ana approves at the terminal
    second = taskcrew_run(erp, tmp_path)  # already paid: changes nothing
    assert (first.outcome, second.outcome) == ("done", "nothing_to_do"), (first.reason, second.reason)
    a, b = Path(first.run_dir), Path(second.run_dir)
    job_a, job_b = the_job(console_env.jobs, a), the_job(console_env.jobs, b)
    shutil.rmtree(b)
    shutil.copytree(a, b)  # A's verified folder (its payment) in B's place
    edit_folder(a)
    page = console_env.page_as("bob")
    url = console_env.url

    # the edited run's page: the problem first, once; the chip; the signed decisions; the rest collapsed
    opened(page, f"{url}/runs/{a.name}")
    warning = one_warning(page)
    assert warning.startswith(
        "⚠ This run's folder was changed after the run ended (report.md, trace.jsonl changed)"
    )
    assert f"rely only on the signed record of job {job_a.id} below" in warning
    assert "says done" not in warning.split(":")[0]  # no reassurance before the problem
    badge = page.locator("#run-status")
    assert badge.inner_text() == "done (signed) · folder changed"
    assert "folder-changed" in str(badge.get_attribute("class"))
    assert badge.evaluate("e => getComputedStyle(e).color") == WARN_AMBER
    assert page.locator("#vouch").evaluate("e => getComputedStyle(e).color") == WARN_AMBER
    decisions = page.locator("#signed-decisions li").all_inner_texts()
    assert len(decisions) == 1 and decisions[0].startswith("approved at the terminal by "), decisions
    assert "/bills/BILL-0005/pay" in decisions[0]
    facts = page.locator("main > dl.facts").inner_text()
    assert "Model" not in facts and "Tokens" not in facts and "Answer (the signed job record's)" in facts
    for inside in (
        "#h-plan",
        "#criteria",
        "#timeline",
        "#raw-trace",
        "dt:text('Tokens')",
        "dt:text('Started')",
    ):
        assert page.locator(f"#folder-says {inside}").count() == 1, inside
        assert not page.locator(f"#folder-says {inside}").first.is_visible(), inside
    assert page.locator("#h-report").count() == 0 and page.locator("img.shot").count() == 0
    assert_folder_collapsed(page)
    told = page.locator("#folder-says #timeline").inner_text()
    assert "approved by someone the run folder names (not vouched for)" in told and "alice" not in told

    # the copied-in folder: the signed nothing_to_do, its files' "done and verified" only inside
    opened(page, f"{url}/runs/{b.name}")
    warning = one_warning(page)
    assert warning.startswith("⚠ This run's folder was changed after the run ended (")
    assert page.locator("#run-status").inner_text() == "nothing_to_do (signed) · folder changed"
    assert page.locator("#no-decisions").count() == 1
    assert page.locator("#no-decisions a[href='/audit']").count() == 1
    assert "None:" not in page.locator("#signed-decisions").inner_text()
    page.locator("#folder-says > summary").click()
    assert (
        "they claim done and verified; the signed record says nothing_to_do"
        in page.locator("#folder-says").inner_text()
    )
    assert page.locator("#folder-says").evaluate(GREEN_INSIDE) == []

    # the job pages: the same warning and chip (same class, same colour), the run's story collapsed
    for job, run in ((job_a, a), (job_b, b)):
        opened(page, f"{url}/jobs/{job.id}")
        assert one_warning(page).startswith("⚠ This run's folder was changed after the run ended (")
        assert "flash warn" in str(page.locator("#run-vouch").get_attribute("class"))
        chip = page.locator(f"dd:has(a[href='/runs/{run.name}']) .badge.folder-changed")
        assert chip.inner_text() == f"{job.outcome} (signed) · folder changed"
        assert chip.evaluate("e => getComputedStyle(e).color") == WARN_AMBER
        assert page.locator("#folder-says #run-timeline").count() == 1
        assert_folder_collapsed(page)

    # the lists: a chip on each changed run and on its job
    opened(page, f"{url}/runs")
    for run, job in ((a, job_a), (b, job_b)):
        row = page.locator("#runs tr", has=page.locator(f"a[href='/runs/{run.name}']"))
        assert row.locator(".badge").first.inner_text() == f"{job.outcome} (signed) · folder changed"
    opened(page, f"{url}/jobs")
    for job in (job_a, job_b):
        row = page.locator("#jobs tr", has=page.locator(f"a[href='/jobs/{job.id}']"))
        assert row.locator(".badge.folder-changed").inner_text() == "folder changed"


def _set_back(db: str, job_id: str, row: tuple[str, int, str]) -> None:
    with sqlite3.connect(db) as c:
        c.execute("UPDATE taskcrew_jobs SET doc=?, leg=?, status=? WHERE id=?", (*row, job_id))
        c.execute("DELETE FROM taskcrew_job_events WHERE job_id=?", (job_id,))


def test_a_rolled_back_job_says_the_latest_signed_ending_once(console_env: ConsoleEnv) -> None:
    jobs = console_env.jobs
    db = jobs.url.removeprefix("sqlite:///")
    job = jobs.submit("Pay BILL-0004 to Initrode", submitted_by="ana", submitted_proof="console",
                      options=JobOptions(), enqueue=False)  # fmt: skip
    jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(job.id, "done", "Paid BILL-0004; verified", leg=0, answer="1 change(s) saved: pay BILL-0004")
    done_row = _raw(db, job.id)
    Authority(jobs).act_on_job(job.id, "retry", BOB)
    leg = jobs.leg(job.id)
    jobs.mark(job.id, "running", only_if=("queued",), leg=leg, worker="w2")
    jobs.finish(job.id, "not_verified", "The ERP shows BILL-0004 unpaid", leg=leg, answer="")
    _set_back(db, job.id, done_row)
    assert jobs.get(job.id).record_trust == "superseded"

    page = opened(console_env.page_as("bob"), f"{console_env.url}/jobs/{job.id}")
    badge = page.locator("#job-status")
    assert badge.inner_text() == "rolled back — latest signed: not_verified"
    box = page.locator("#rolled-back")
    assert one_warning(page) == box.inner_text() and "flash error" in str(box.get_attribute("class"))
    assert (
        "finished not_verified on leg 1" in box.inner_text()
        and "(finished done on leg 0)" in box.inner_text()
    )
    assert box.locator("a[href='/audit']").inner_text() == "Audit log"
    main = page.locator("main").inner_text()
    assert "`" not in main and "superseded" not in main and main.count("signed audit log says") == 1
    assert not page.locator("#job-reason").is_visible() and not page.locator("#job-note").is_visible()
    assert page.locator("#no-events").inner_text() == "No events: the database was set back."
    assert page.locator("#no-progress").inner_text() == "No events: the database was set back."

    page.goto(f"{console_env.url}/jobs")
    row = page.locator("#jobs tr", has=page.locator(f"a[href='/jobs/{job.id}']"))
    cell = row.locator("td").nth(2)
    assert cell.inner_text().strip() == "rolled back — latest signed: not_verified"  # one short line
    assert "finished not_verified on leg 1" in str(cell.locator(".badge").get_attribute("title"))
    assert row.inner_text().count(job.id) == 1
    cell.locator("summary").click()
    assert "the signed audit log says it ended not_verified since" in cell.inner_text()


def test_a_claim_the_run_did_not_record_is_boxed_near_the_top_and_an_older_run_is_tagged(
    tmp_path: Path, erp: ErpServer, console_env: ConsoleEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = kit.report

    def said(status: str, summary: str, sources: Any = None, **data: str) -> str:
        if summary.startswith("Marked BILL-"):
            summary += HOSTILE  # the last step's words claim a payment and an approver nothing recorded
        return real(status, summary, sources, **data)

    monkeypatch.setattr(kit, "report", said)
    result = taskcrew_run(erp, tmp_path)
    monkeypatch.setattr(kit, "report", real)
    assert result.outcome == "done", result.reason
    run = Path(result.run_dir)
    jobs = console_env.jobs
    job = the_job(jobs, run)
    assert "[Not supported by what this run recorded:" in job.answer

    page = console_env.page_as("bob")
    for where, url in (("run", f"/runs/{run.name}"), ("job", f"/jobs/{job.id}")):
        opened(page, console_env.url + url)
        box = page.locator("#unsupported")
        text = box.inner_text()
        assert text.startswith("⚠ The worker's last message claims things this run did not record: "), where
        assert "BILL-0004" in text and "alice" in text and ". What was done" in text, (where, text)
        assert box.bounding_box()["y"] < 400, where  # near the top, on the first screen
        assert box.evaluate("e => getComputedStyle(e).color") == WARN_AMBER
        story = "#timeline" if where == "run" else "#run-timeline"
        step = page.locator(f"{story} li.t-step")
        assert "The worker's words (a model's, not checked by code): Marked BILL-0005" in step.inner_text()
        assert "ok" not in str(step.get_attribute("class")).split()
        assert step.evaluate(GREEN_INSIDE.replace("root.querySelectorAll('*')", "[root]")) == []

    # the same run recorded by a job that ended before seals: said calmly on the run and job pages
    old_dir = tmp_path / "runs" / "20261101-091500-mark-the-hooli-invoice-paid"
    shutil.copytree(run, old_dir)
    old = jobs.submit(
        HOOLI.task, submitted_by="ana", submitted_proof="console", options=JobOptions(), enqueue=False
    )
    jobs.mark(old.id, "running", only_if=("queued",), leg=0, worker="w1")
    jobs.finish(old.id, "done", job.reason, leg=0, answer="", run_dir=str(old_dir), run_seal=None)
    older = "Older run: its files were not checked against the job's record."
    assert opened(page, f"{console_env.url}/runs/{old_dir.name}").locator("#unsealed").inner_text() == older
    assert opened(page, f"{console_env.url}/jobs/{old.id}").locator("#unsealed").inner_text() == older
    opened(page, f"{console_env.url}/runs")
    row = page.locator("#runs tr", has=page.locator(f"a[href='/runs/{old_dir.name}']"))
    assert row.locator(".badge.older").inner_text() == "older run · not checked"
    # ids and dates whole in the narrow columns: each on one line
    for cell in ("td.changed", "td.task"):
        for whole in row.locator(f"{cell} span.nowrap").all():
            assert whole.evaluate("e => e.getClientRects().length") == 1, whole.inner_text()
    kept = row.locator("td.changed span.nowrap").all_inner_texts()
    assert "BILL-0005" in kept and "2026-10-02" in kept, kept
