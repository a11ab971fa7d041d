"""`taskcrew runs list` / `taskcrew runs show` on real run folders, with an isolated TASKCREW_HOME."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.eval.runs import list_runs, read_run

runner = CliRunner()


def _runs_dir(isolated_home: Path) -> Path:
    return isolated_home / "runs"


def _unfinished(runs: Path) -> Path:
    """A run that crashed after it started: only its first event, and a half-written line."""
    folder = runs / "20000101-090000-enter-the-latest-invoice"
    folder.mkdir(parents=True)
    started = {"kind": "run_started", "at": "2000-01-01T09:00:00.000+00:00", "task": "Enter the latest invoice",
               "worker_model": "openai/gpt-4o", "verifier_model": "anthropic/claude-sonnet-4-5"}  # fmt: skip
    (folder / "trace.jsonl").write_text(json.dumps(started) + '\n{"kind": "run_fin', encoding="utf-8")
    return folder


def test_runs_list_shows_outcome_task_tokens_cost_and_time(isolated_home: Path, finished_run: Path) -> None:
    runs = _runs_dir(isolated_home)
    shutil.copytree(finished_run, runs / finished_run.name)
    _unfinished(runs)
    (runs / "notes").mkdir()  # not a run: ignored
    result = runner.invoke(app, ["runs", "list"])  # TASKCREW_RUNS points into the isolated home
    assert result.exit_code == 0, result.output
    summary = read_run(runs / finished_run.name)
    assert summary.outcome == "done" and summary.llm_calls > 0 and summary.input_tokens > 0
    lines = result.output.splitlines()
    assert lines[0] == "2 run(s), newest first"
    assert finished_run.name in lines[1] and "done" in lines[1]  # the newest first
    assert f"{summary.llm_calls} LLM calls, {summary.input_tokens}/{summary.output_tokens} tokens" in lines[1]
    assert "$0.0000" in lines[1] and "scripted/solver / scripted/auditor" in lines[1]
    assert lines[2].strip() == "What is the sum of squares 1..20?"
    assert lines[3].strip() == "Nothing was changed in any system"  # what the run changed, from its facts
    # no job store here: nothing signed vouches for the folder's "done", and the list says so
    assert lines[4].strip().startswith("Nothing vouches for this outcome: there is no job database yet")
    assert "20000101-090000-enter-the-latest-invoice  unfinished" in lines[5]
    assert lines[6].strip() == "Enter the latest invoice"
    assert not list(isolated_home.rglob("*.sqlite3"))  # reading runs creates no job database


def test_runs_show_prints_the_figures_and_the_report(isolated_home: Path, finished_run: Path) -> None:
    result = runner.invoke(app, ["runs", "show", str(finished_run)])
    assert result.exit_code == 0, result.output
    assert "What is the sum of squares 1..20?" in result.output
    assert (
        "outcome: done" in result.output
        and "worker scripted/solver, verifier scripted/auditor" in result.output
    )
    assert "Done, and independently verified" in result.output and "2870" in result.output
    # by name, inside the runs folder
    by_name = runner.invoke(app, ["runs", "show", finished_run.name, "--runs-dir", str(finished_run.parent)])
    assert by_name.exit_code == 0 and "outcome: done" in by_name.output


def test_an_unfinished_run_is_shown_as_such(isolated_home: Path) -> None:
    folder = _unfinished(_runs_dir(isolated_home))
    result = runner.invoke(app, ["runs", "show", str(folder)])
    assert result.exit_code == 0, result.output
    assert "outcome: unfinished" in result.output and "no report.md" in result.output


def test_runs_errors_are_one_clear_line(isolated_home: Path, tmp_path: Path) -> None:
    empty = runner.invoke(app, ["runs", "list"])
    assert (
        empty.exit_code == 2
        and "error: the runs folder" in empty.output
        and "hint: pass --runs-dir" in empty.output
    )
    (tmp_path / "none").mkdir()
    nothing = runner.invoke(app, ["runs", "list", "--runs-dir", str(tmp_path / "none")])
    assert nothing.exit_code == 0 and "No runs in" in nothing.output
    missing = runner.invoke(app, ["runs", "show", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "is not a run folder" in missing.output
    assert "Traceback" not in missing.output + empty.output


def test_a_broken_trace_is_skipped_with_a_note(isolated_home: Path, tmp_path: Path) -> None:
    broken = tmp_path / "runs" / "20260102-broken"
    broken.mkdir(parents=True)
    (broken / "trace.jsonl").write_text("not json at all\n", encoding="utf-8")
    runs, problems = list_runs(tmp_path / "runs")
    assert runs == [] and len(problems) == 1 and "no run_started event" in problems[0]
    result = runner.invoke(app, ["runs", "list", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0 and "skipped:" in result.output
