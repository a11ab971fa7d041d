"""`taskcrew runs list/show` of a run killed before it ended: the figures come from its trace, and
what happened to the real system (approved, submitted, verified) is said plainly."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.crew.models import CriterionCheck, Verdict
from taskcrew.crew.trace import ApprovalEvent, VerdictEvent
from taskcrew.eval.runs import read_run

runner = CliRunner()


def _killed_copy(finished: Path, to: Path, extra: list[str]) -> Path:
    """The finished run's trace without its run_finished line (as a kill leaves it), plus events."""
    to.mkdir(parents=True)
    lines = (finished / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if '"run_finished"' not in line]
    (to / "trace.jsonl").write_text("\n".join(kept + extra) + '\n{"at": "2026-', encoding="utf-8")
    return to


def test_a_killed_run_shows_its_calls_tokens_and_that_a_change_was_verified(
    isolated_home: Path, finished_run: Path
) -> None:
    complete = read_run(finished_run)
    approval = ApprovalEvent(question="Save the bill?", answer="approved").model_dump_json()
    verdict = Verdict(
        verified=True,
        checks=[CriterionCheck(criterion="bill saved", met=True, source="/bills/1", observed="B-1")],
        reason="the bill is there",
    )
    verified = VerdictEvent(attempt=1, verdict=verdict).model_dump_json()
    killed = _killed_copy(finished_run, isolated_home / "runs" / "killed", [approval, verified])
    summary = read_run(killed)
    assert not summary.finished
    assert (summary.llm_calls, summary.input_tokens, summary.output_tokens) == (
        complete.llm_calls,
        complete.input_tokens,
        complete.output_tokens,
    )
    assert complete.llm_calls > 0 and summary.seconds is not None and summary.seconds >= 0
    # the trace's verdict is told as what its trace shows; no signed job record vouches for it
    assert (summary.approvals_asked, summary.approvals_given, summary.verified) == (1, 1, None)
    assert summary.note.startswith("Nothing vouches for this outcome") and "verified (though" in summary.note
    shown = runner.invoke(app, ["runs", "show", str(killed)])
    assert shown.exit_code == 0, shown.output
    assert f"LLM calls {complete.llm_calls}; tokens {complete.input_tokens} in" in shown.output
    text = " ".join(shown.output.split())
    assert "1 change(s) approved and so submitted" in text
    assert "the verifier confirmed the result in the real system" in text
    listed = runner.invoke(app, ["runs", "list"])
    assert "killed  unfinished" in listed.output and f"{complete.llm_calls} LLM calls" in listed.output


def test_a_killed_run_with_a_rejected_change_says_nothing_was_submitted(
    isolated_home: Path, finished_run: Path
) -> None:
    rejected = ApprovalEvent(question="Save the bill?", answer="rejected").model_dump_json()
    killed = _killed_copy(finished_run, isolated_home / "runs" / "k2", [rejected])
    summary = read_run(killed)
    assert (summary.approvals_asked, summary.approvals_given) == (1, 0)  # its own verdict is kept
    assert "none approved: nothing was submitted" in summary.reason
    assert json.loads((killed / "trace.jsonl").read_text().splitlines()[0])["kind"] == "run_started"
