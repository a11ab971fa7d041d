"""The console's runs list and run page of a run `taskcrew demo` made (its job record was in the demo's
own job store): labelled a demo run, its outcome unvouched ("done?"), and a note that says why in
plain words, as `runs list` does — not an alarm. Real run folder, real console, real Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_console import ConsoleEnv, shot

from taskcrew.demo import RUN_LABEL, mark_demo_run

pytestmark = pytest.mark.browser


def test_a_demo_run_says_why_nothing_here_vouches_for_it(console_env: ConsoleEnv, finished_run: Path) -> None:
    assert finished_run.parent == console_env.runs
    mark_demo_run(finished_run)
    page = console_env.page_as("bob")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{console_env.url}/runs")
    row = page.locator("#runs tr", has_text=finished_run.name)
    said = " ".join(row.inner_text().split())
    assert RUN_LABEL in said and "done?" in said
    assert (
        "A demo run: its job record was in the demo's own job store; nothing here vouches for its outcome."
        in said
    )
    shot(page, "runs-demo-1366")
    page.goto(f"{console_env.url}/runs/{finished_run.name}")
    note = page.locator("#vouch")
    assert " ".join(note.inner_text().split()).startswith(
        "⚠ A demo run: its job record was kept in the demo's own temporary job store, so nothing here "
        "vouches for its outcome"
    )
    assert "error" not in (note.get_attribute("class") or "") and note.get_attribute("role") == "note"
    assert page.locator("#run-status").inner_text() == "done?"  # still the folder's own word
    shot(page, "run-demo-1366")
