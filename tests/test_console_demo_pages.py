"""The pages an approver uses, as `taskcrew demo --console` serves them, in real Chromium at 1366×768:
the worker's screenshot found in the worker's own job folders (the console is told where), the
routines of the worker's folder, the demo label on the approvals, the approval, the jobs and a job,
a job's page that says only what is true now, what approving does above the buttons, and a run's
outcome that nothing vouches for never in the colour of a success."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_seed import parked_job, write_run
from fixtures_console import ConsoleEnv, follow, shot
from playwright.sync_api import expect

from taskcrew.console.server import ConsoleServer
from taskcrew.demo import RUN_LABEL, mark_demo_run
from taskcrew.jobs import Jobs

pytestmark = pytest.mark.browser

SUCCESS_GREEN = "rgb(29, 122, 70)"  # --ok: the colour of a success


class DemoConsole(ConsoleEnv):
    """The console as the demo wires it: the worker keeps its screenshots and routines in a home of
    its own (``worker``), which is not this process's TASKCREW_HOME; the console is told where."""

    def __init__(self, root: Path, users: Path, browser: Any, worker: Path) -> None:
        self.worker = worker
        super().__init__(root, users, browser)
        self.server.stop()
        self.settings = self.settings.model_copy(
            update={"jobs_dir": worker / "jobs", "routines_dir": worker / "routines"}
        )
        self.server = ConsoleServer(self.settings, self.jobs).start()
        self.url = self.server.url

    def page_at(self, user: str, path: str) -> Any:
        page = self.page_as(user)
        page.set_viewport_size({"width": 1366, "height": 768})
        page.goto(self.url + path)
        return page


@pytest.fixture
def demo_console(
    tmp_path: Path, console_users: Path, console_chromium: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DemoConsole]:
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "demo-process"))  # the console's own home
    (tmp_path / "console").mkdir()
    env = DemoConsole(tmp_path / "console", console_users, console_chromium, tmp_path / "worker")
    yield env
    env.close()


@pytest.fixture
def worker_parked(demo_console: DemoConsole, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A demo job the worker parked, its screenshot kept in the worker's home, its run marked a demo's."""
    shot_png = tmp_path / "form.png"
    page = demo_console.page_as(None)
    page.set_content(
        "<form style='padding:12px;width:420px'><h3>New bill</h3><button>Save bill</button></form>"
    )
    page.locator("form").screenshot(path=str(shot_png))
    run = write_run(demo_console.runs, "2026-12-01-demo", "Enter the Northwind invoice", finished=None)
    mark_demo_run(run)
    monkeypatch.setenv("TASKCREW_HOME", str(demo_console.worker))  # the worker keeps it in its home
    job, approval = parked_job(demo_console.jobs, "ana", screenshot=shot_png, run_dir=run)
    reason = f"waiting for approval {approval.id}"  # as the worker's runner words it when it parks
    demo_console.jobs.mark(job.id, "waiting", only_if=("waiting",), reason=reason)
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "demo-process"))
    return job, approval


def test_the_approval_shows_the_worker_screenshot_the_demo_label_and_what_approving_does(
    demo_console: DemoConsole, worker_parked: Any
) -> None:
    job, approval = worker_parked
    page = demo_console.page_at("bob", f"/approvals/{approval.id}")
    assert page.locator("img.shot").is_visible()  # found where the worker keeps it, seal checked
    assert page.locator("#shot-missing").count() == 0
    assert RUN_LABEL.lower() in page.locator("#demo").inner_text().lower()
    approving = page.locator("#approving").inner_text()
    assert approving.startswith("Approving lets the worker send this to Acme Payables (POST /bills/new)")
    assert "it creates a new bill with the values above" in approving
    button = page.get_by_role("button", name="Approve").bounding_box()
    flags = page.locator("#risk-flags").bounding_box()
    said = page.locator("#approving").bounding_box()
    assert button and flags and said
    assert flags["y"] < said["y"] < button["y"]  # the flags and what it does, then the buttons
    assert button["y"] + button["height"] <= 768  # above the fold at 1366×768
    shot(page, "approval-demo-1366")

    # the seal stays as strict: another file under the same name in the worker's folder is not shown
    Path(str(demo_console.jobs.approval(approval.id).screenshot)).write_bytes(b"\x89PNG other bytes")
    page.reload()
    assert page.locator("#shot-missing").is_visible() and page.locator("img.shot").count() == 0

    page.goto(f"{demo_console.url}/approvals")
    assert RUN_LABEL in page.locator("#worklist tr", has_text=approval.id).inner_text()
    page.goto(f"{demo_console.url}/jobs")
    assert RUN_LABEL in page.locator("#jobs tr", has_text=job.id).inner_text()
    shot(page, "jobs-demo-1366")
    page.goto(f"{demo_console.url}/jobs/{job.id}")
    assert RUN_LABEL.lower() in page.locator("#demo").inner_text().lower()


def test_a_job_page_after_approval_says_only_what_is_true_now(
    demo_console: DemoConsole, worker_parked: Any
) -> None:
    job, approval = worker_parked
    page = demo_console.page_at("bob", f"/approvals/{approval.id}")
    follow(page, page.get_by_role("button", name="Approve"))
    jobs: Jobs = demo_console.jobs
    assert jobs.get(job.id).status == "queued"
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    page.goto(f"{demo_console.url}/jobs/{job.id}")
    assert page.locator("#job-status").inner_text() == "running"
    facts = page.locator("dl.facts").inner_text()  # the reason it waited is not the state now
    assert "waiting for approval" not in facts and "Reason" not in facts
    assert "waiting for approval" not in page.locator("#job-note").inner_text()
    # a running job's history is followed live (the stream's list takes the drawn one's place whole):
    # its last line is there before it is read
    expect(page.locator("#job-events")).to_contain_text(
        "back in the queue after the decision", timeout=30_000
    )
    history = page.locator("#job-events").inner_text()
    assert "approved" in history and "approval_approved" not in history
    assert "back in the queue after the decision" in history and "resumed" not in history
    jobs.mark(job.id, "failed", only_if=("running",), reason="the ERP refused the login")
    page.reload()
    assert page.locator("#job-reason").inner_text() == "the ERP refused the login"
    shot(page, "job-failed-1366")


# the fewest lines #job-events held at any moment after the page drew it (a MutationObserver set up
# before the page's own script runs)
FEWEST_LINES = """
document.addEventListener("DOMContentLoaded", () => {
  const list = document.getElementById("job-events");
  if (!list) return;
  window.__fewest = list.querySelectorAll("li").length;
  new MutationObserver(() => {
    window.__fewest = Math.min(window.__fewest, list.querySelectorAll("li").length);
  }).observe(list, { childList: true });
});
"""


def test_a_running_jobs_live_history_is_never_shown_half_filled(
    demo_console: DemoConsole, worker_parked: Any
) -> None:
    """The live stream sends the whole history again before new lines: it used to clear the drawn
    list and refill it line by line, so a person (or a test, under load) read it half-filled for a
    moment. It is now built aside and swapped in whole."""
    job, approval = worker_parked
    page = demo_console.page_at("bob", f"/approvals/{approval.id}")
    follow(page, page.get_by_role("button", name="Approve"))
    jobs: Jobs = demo_console.jobs
    jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
    page.add_init_script(FEWEST_LINES)
    page.goto(f"{demo_console.url}/jobs/{job.id}")
    drawn = page.locator("#job-events li").count()
    assert drawn >= 5  # submitted … approved, back in the queue, running
    # a locator's wait, not a predicate string: the page's CSP forbids eval, which a string predicate
    # needs once it must be polled (a loaded machine): EvalError
    expect(page.locator("#job-events")).to_have_attribute("data-seeded", "done", timeout=30_000)
    jobs.mark(job.id, "waiting", only_if=("running",), reason="asked again")  # a new line, appended
    expect(page.locator("#job-events li")).to_have_count(drawn + 1, timeout=30_000)
    assert page.evaluate("window.__fewest") == drawn


def test_routines_come_from_the_folder_the_console_is_told(
    demo_console: DemoConsole, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_routines_console import _routine

    from taskcrew.routines.store import RoutineStore

    monkeypatch.delenv("TASKCREW_ROUTINES", raising=False)  # the console's own: its home's, empty
    RoutineStore(demo_console.worker / "routines").propose(_routine("invoice_number", "2026-12-01-demo"))
    page = demo_console.page_at("ana", "/routines")
    assert "draft" in page.locator("#routine-enter-invoice-v1 .status").inner_text()


def test_an_outcome_nothing_vouches_for_is_not_shown_as_a_success(demo_console: DemoConsole) -> None:
    write_run(demo_console.runs, "2026-12-02-unvouched", "Enter the Northwind invoice")  # no job names it
    page = demo_console.page_at("ana", "/runs")
    badge = page.locator("#runs tr", has_text="2026-12-02-unvouched").locator(".badge")
    shot(page, "runs-unvouched-1366")
    assert badge.inner_text() == "done?"
    assert badge.evaluate("e => getComputedStyle(e).color") != SUCCESS_GREEN
    page.goto(f"{demo_console.url}/runs/2026-12-02-unvouched")
    status = page.locator("#run-status")
    assert status.inner_text() == "done?" and "Nothing vouches" in page.locator("#vouch").inner_text()
    assert status.evaluate("e => getComputedStyle(e).color") != SUCCESS_GREEN
    shot(page, "run-unvouched-1366")
    # a run its signed job record says is done keeps the colour of a success
    job = demo_console.jobs.submit("Enter the Northwind invoice", submitted_by="ana")
    run = write_run(demo_console.runs, "2026-12-03-vouched", "Enter the Northwind invoice")
    demo_console.jobs.mark(job.id, "running", only_if=("queued",), worker="w1", run_dir=str(run))
    demo_console.jobs.finish(job.id, "done", "entered")
    page.goto(f"{demo_console.url}/runs/2026-12-03-vouched")
    assert page.locator("#run-status").inner_text() == "done"
    assert page.locator("#run-status").evaluate("e => getComputedStyle(e).color") == SUCCESS_GREEN
