"""`taskcrew <recipe> --submit`: one durable job per item of the recipe's list parameter, on the real
job store (SQLite in a temp home); nothing is run here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def cli(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("TASKCREW_RECIPES", "TASKCREW_SANDBOX", "TASKCREW_JOBS_DB"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner()


def invoke(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    from taskcrew.cli import app

    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_list_parameter_fans_out_into_one_job_per_item(cli: CliRunner) -> None:
    from taskcrew.jobs import Jobs

    code, out, err = invoke(
        cli,
        "enter-invoice",
        "--vendor",
        "Northwind Traders",
        "--vendor",
        "Initech",
        "--submit",
        "--model",
        "openai/gpt-4o",
        "--auto-approve",
    )
    assert code == 0, err
    assert "2 job(s) queued" in out
    jobs = Jobs.open()
    try:
        queued = sorted(jobs.list(), key=lambda j: j.item or "")
    finally:
        jobs.close()
    assert [j.item for j in queued] == ["Initech", "Northwind Traders"]
    assert all(j.status == "queued" and j.id in out for j in queued)
    assert queued[0].parent_id and queued[0].parent_id == queued[1].parent_id  # one batch
    northwind = queued[1]
    assert northwind.task.startswith("Find the latest invoice from Northwind Traders, extract the amount")
    assert northwind.options.worker_model == "openai/gpt-4o" and northwind.options.auto_approve
    criterion = "Acme Payables has exactly one bill for the newest invoice from Northwind Traders"
    assert any(criterion in c for c in northwind.options.criteria)  # kept by every plan the worker makes


def test_a_read_only_recipe_is_submitted_read_only(cli: CliRunner) -> None:
    from taskcrew.jobs import Jobs

    code, _, err = invoke(cli, "check-invoice", "--vendor", "Globex Corp", "--submit")
    assert code == 0, err
    jobs = Jobs.open()
    try:
        [job] = jobs.list()
    finally:
        jobs.close()
    assert job.item == "Globex Corp"
    assert job.options.read_only is True  # the worker's policy gate refuses every change


def test_bad_values_queue_nothing_and_a_damaged_store_is_a_clear_error(
    cli: CliRunner, isolated_home: Path
) -> None:
    code, _, err = invoke(cli, "mark-paid", "--invoice", "HCS-2026-09", "--paid-on", "soon", "--submit")
    assert code == 2 and "--paid-on: 'soon' is not a date" in err
    assert not (isolated_home / "jobs.sqlite3").exists()  # the store was never opened
    (isolated_home / "jobs.sqlite3").write_bytes(b"this is not a database" * 100)
    code, out, err = invoke(cli, "enter-invoice", "--vendor", "Initech", "--submit")
    assert code == 2 and "queued" not in out
    assert "damaged or not an SQLite database" in err
