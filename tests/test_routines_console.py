"""The console's routines page in real Chromium: the list with status, counts and the flag, one
routine step by step, and the diff of a healed draft against the version it heals. The routines
are real ones (templates learned from the demo inbox) in a real folder; nothing is faked.

TASKCREW_CONSOLE_SHOTS=docs/console saves docs/console/routines.png and routine.png (1280×800).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixtures_console import ConsoleEnv

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.routines.models import BrowserStep, DocumentRule, Routine, Target
from taskcrew.routines.store import RoutineStore
from taskcrew.routines.template import learn
from taskcrew.sandbox.ground_truth import load_ground_truth
from taskcrew.tools.files import SandboxFiles

pytestmark = pytest.mark.browser


def _routine(field: str, source_run: str) -> Routine:
    doc = next(d for d in load_ground_truth().documents if d.number == "INV-2057")
    text = SandboxFiles(DEFAULT_SANDBOX / "inbox").read(doc.path).full_text()
    values = {
        "invoice_number": doc.number,
        "amount": f"{doc.total:.2f}",
        "currency": doc.currency,
        "invoice_date": doc.invoice_date.isoformat(),  # type: ignore[union-attr]
        "due_date": doc.due_date.isoformat(),  # type: ignore[union-attr]
    }
    template = learn(text, values, "Northwind Traders", doc.path)
    return Routine(
        name="enter-invoice",
        version=1,
        source_run=source_run,
        params=["vendor"],
        documents=DocumentRule(search="{vendor}"),
        templates=[template],
        values=list(values),
        browser=[
            BrowserStep(kind="open", url="{erp}/bills/new"),
            BrowserStep(
                kind="type",
                target=Target(role="textbox", name="Invoice number", field=field),
                value="{invoice_number}",
            ),
        ],
    )


def _save_shot(page: object, name: str) -> None:
    if folder := os.environ.get("TASKCREW_CONSOLE_SHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))  # type: ignore[attr-defined]


def test_the_routines_page_lists_shows_and_diffs(
    console_env: ConsoleEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    store = RoutineStore()
    first, _ = store.propose(_routine("invoice_number", "20261002-101500-northwind"))
    accepted = store.accept("enter-invoice", first.version, "ana")
    accepted = store.count(accepted, fell_back=True, reason="the form has no invoice_number field")
    store.count(accepted, fell_back=True, reason="the form has no invoice_number field")
    healed = _routine("vendor_invoice_no", "20261003-090000-northwind").model_copy(update={"based_on": 1})
    store.propose(healed)

    page = console_env.page_as("ana")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{console_env.url}/routines")
    row1 = page.locator("#routine-enter-invoice-v1")
    assert "accepted" in row1.locator(".status").inner_text()
    assert "FLAGGED" in row1.inner_text()  # two fallbacks in a row
    assert row1.locator(".counts").inner_text().startswith("0 clean / 2 fell back")
    assert "draft" in page.locator("#routine-enter-invoice-v2 .status").inner_text()
    assert page.locator("#flagged-count").inner_text().startswith("1 flagged")
    assert "workers' counts, not signed" in page.locator("#routines thead").inner_text()  # nothing signs them
    _save_shot(page, "routines")

    page.get_by_role("link", name="enter-invoice v2").click()
    page.wait_for_url(f"{console_env.url}/routines/enter-invoice/2")
    steps = page.locator("#routine-steps tr").all_inner_texts()
    assert any("template Northwind Traders" in s and "TOTAL PAYABLE" in s for s in steps)
    assert any("(field vendor_invoice_no) ← {invoice_number}" in s for s in steps), steps
    diff = page.locator("#routine-diff").inner_text()
    assert "-    field: invoice_number" in diff and "+    field: vendor_invoice_no" in diff
    assert "Against v1, the version that replays now" in page.locator("main").inner_text()
    assert "accept enter-invoice -v 2" in page.locator("main").inner_text()  # the CLI decides
    fingerprint = next(s for s in steps if s.startswith("fingerprint: ")).split()[1]
    assert page.locator("#routine-accept").inner_text().endswith(f"--fingerprint {fingerprint}")
    assert "(the workers' counts, not signed)" in page.locator("#routine-status").inner_text()
    assert page.locator("main form").count() == 0  # the page itself changes nothing
    _save_shot(page, "routine")

    page.goto(f"{console_env.url}/routines/enter-invoice/9")
    assert "No routine enter-invoice v9" in page.locator("main").inner_text()
    anonymous = console_env.page_as(None)
    anonymous.goto(f"{console_env.url}/routines")
    assert "/login" in anonymous.url


def test_a_version_whose_acceptance_does_not_check_out_reads_not_replayed(
    console_env: ConsoleEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edited after it was accepted (its file still says `status: accepted`): the status cell and the
    version's page say it does not replay, and the reviewer the file names is not taken as proven."""
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    store = RoutineStore()
    first, _ = store.propose(_routine("invoice_number", "20261002-101500-northwind"))
    store.accept("enter-invoice", first.version, "ana")
    path = tmp_path / "routines" / "enter-invoice.v1.yaml"
    path.write_text(path.read_text().replace("{erp}/bills/new", "https://pay.example/bills/new"))

    page = console_env.page_as("ana")
    page.goto(f"{console_env.url}/routines")
    row = page.locator("#routine-enter-invoice-v1")
    assert row.locator(".status").inner_text().startswith("NOT REPLAYED: marked accepted")
    assert "not proven" in row.inner_text()
    page.get_by_role("link", name="enter-invoice v1").click()
    page.wait_for_url(f"{console_env.url}/routines/enter-invoice/1")
    assert "does not check out" in page.locator("#routine-unsealed").inner_text()
    assert "(not proven)" in page.locator("#routine-status").inner_text()


def test_a_draft_nobody_may_accept_says_so_before_anyone_tries(
    console_env: ConsoleEnv, console_users: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A draft learned from a run whose submitter is not proven: while two people decide, the CLI
    refuses everyone who would accept it. The page said only "not by <author>" (or nothing), as if
    anyone else could; it now says nobody may, and why, in the CLI's own words."""
    from taskcrew.approvals.identity import UNPROVEN_SUBMITTER

    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))  # the CLI's users: two people decide
    store = RoutineStore()
    store.propose(_routine("invoice_number", "20261002-101500-northwind"), submitter=UNPROVEN_SUBMITTER)
    store.propose(
        _routine("vendor_invoice_no", "20261003-090000-northwind").model_copy(update={"name": "other"}),
        submitter="bob",
    )

    page = console_env.page_as("ana")
    page.goto(f"{console_env.url}/routines/enter-invoice/1")
    nobody = page.locator("#routine-nobody").inner_text()
    assert nobody.startswith("Nobody may accept it here:") and "is not proven" in nobody, nobody
    page.goto(f"{console_env.url}/routines/other/1")
    assert page.locator("#routine-nobody").count() == 0  # a proven submitter: anyone but bob may
    assert "not by bob" in page.locator("main").inner_text()
