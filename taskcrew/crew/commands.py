"""What `taskcrew run` and `taskcrew audit` do, behind the thin Typer layer: check, set up, run, print.

Errors a user can fix (no model or key, unreachable ERP, no Chromium, no sandbox) become one line
with a hint and exit code 2 — checked before anything heavy is imported or started. The run's own
outcome becomes the exit code (see EXIT_CODES).

What the run says (its reason, its answer: a model's words) is printed through ``taskcrew.terminal``:
control characters in it are shown, not obeyed, so the outcome line is the run's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from taskcrew.crew.errors import USER_ERRORS, AuditError
from taskcrew.crew.models import EXIT_CODES, MAX_GIVEN
from taskcrew.crew.modelspec import check_credentials, choose_models, verifier_spec
from taskcrew.inputs import check_run
from taskcrew.terminal import markup, say

USAGE_ERROR = 2
ANSWER_INDENT = " " * len("Answer: ")


def make_human(auto_approve: bool, console: Console) -> Any:
    from taskcrew.approvals.terminal import TerminalApprovals
    from taskcrew.tools.human import AutoApproveHuman, TerminalHuman

    inner = AutoApproveHuman() if auto_approve else TerminalHuman(console=console)
    return TerminalApprovals(inner)  # the same risk rules as every other surface


def _fail(console: Console, exc: Exception) -> int:
    say(console, f"[red]error:[/] {markup(exc)}", soft_wrap=True)
    return USAGE_ERROR


def run_command(
    task: str,
    *,
    place: Any,
    worker_model: str | None,
    verifier_model: str | None,
    allow_same_verifier: bool,
    auto_approve: bool,
    max_steps: int,
    console: Console,
    criteria: list[str] | None = None,
    read_only: bool = False,
) -> int:
    if criteria and len(criteria) > MAX_GIVEN:
        return _fail(
            console, ValueError(f"at most {MAX_GIVEN} success criteria can be given; {len(criteria)} were")
        )
    if criteria and any(not c.strip() for c in criteria):
        return _fail(
            console,
            ValueError('a --criterion is empty: say what must be true, e.g. --criterion "the bill is saved"'),
        )
    try:
        task = check_run(
            task,
            sandbox=place.sandbox,
            runs_dir=place.runs_dir,
            erp_url=place.erp_url,
            intranet_url=place.intranet_url,
            worker=worker_model,
            verifier=verifier_model,
        )
        models = choose_models(worker_model, verifier_model, allow_same=allow_same_verifier)
        for spec in (models.worker, models.verifier):
            check_credentials(spec)
        from taskcrew.crew.calls import quiet_crewai_noise
        from taskcrew.crew.context import RunLimits
        from taskcrew.crew.progress import ProgressPrinter
        from taskcrew.crew.workplace import Workplace
        from taskcrew.jobs.foreground import run_in_foreground
        from taskcrew.jobs.models import JobOptions

        quiet_crewai_noise()

        options = JobOptions(
            worker_model=models.worker.raw,
            verifier_model=models.verifier.raw,
            allow_same_verifier=allow_same_verifier,
            auto_approve=auto_approve,
            criteria=criteria or [],
            read_only=read_only,
            max_steps=max_steps,
        )
        from taskcrew.approvals.terminal import terminal_identity

        with Workplace(place, make_human(auto_approve, console)) as workplace:
            result = run_in_foreground(  # a job in the store, checkpointed: `taskcrew jobs retry` resumes it
                workplace,
                task,
                submitted_by=terminal_identity(),
                options=options,
                worker_model=models.worker.raw,
                verifier_model=models.verifier.raw,
                allow_same_verifier=allow_same_verifier,
                limits=RunLimits(max_steps=max_steps),
                listeners=[ProgressPrinter(console)],
                criteria=criteria,
                read_only=read_only,
            )
    except USER_ERRORS as exc:
        return _fail(console, exc)
    colour = "green" if result.outcome in ("done", "nothing_to_do") else "red"
    say(console, f"\n[bold {colour}]{markup(result.outcome)}[/]: {markup(result.reason)}")
    if result.answer:  # its own lines, each indented under "Answer:": none passes for taskcrew's
        say(console, f"[bold]Answer:[/] {markup(result.answer, layout=True, indent=ANSWER_INDENT)}")
    cost = "cost unknown (no price configured)" if result.cost_usd is None else f"${result.cost_usd:.4f}"
    say(
        console,
        f"[dim]{result.llm_calls} LLM calls, {result.input_tokens}+{result.output_tokens} tokens, {cost}, "
        f"{result.seconds:.0f} s[/]",
    )
    say(console, f"Report: {markup(result.report)}", soft_wrap=True)
    return EXIT_CODES[result.outcome]


def audit_command(
    claim: str | None,
    *,
    run_dir: Path | None,
    place: Any,
    verifier_model: str | None,
    console: Console,
) -> int:
    if not claim and run_dir is None:
        console.print(
            "[red]error:[/] give a claim to audit, or --run with a run folder (see `taskcrew runs list`)"
        )
        return USAGE_ERROR
    if run_dir is not None and not (run_dir / "trace.jsonl").is_file():
        return _fail(
            console, AuditError(f"{run_dir} is not a run folder (no trace.jsonl); see `taskcrew runs list`")
        )
    try:
        spec = verifier_spec(verifier_model)
        check_credentials(spec)
        from taskcrew.crew.progress import ProgressPrinter
        from taskcrew.crew.workplace import Workplace

        with Workplace(place, make_human(False, console)) as workplace:
            result = workplace.audit(
                claim, run_dir=run_dir, verifier_model=spec.raw, listeners=[ProgressPrinter(console)]
            )
    except USER_ERRORS as exc:
        return _fail(console, exc)
    # no verdict: the audit itself failed (a model that cannot be reached), which is not a "no"
    outcome = "done" if result.verified else "not_verified" if result.verdict is not None else "error"
    outcome = "interrupted" if result.interrupted else outcome
    label = {
        "done": "[bold green]verified[/]",
        "not_verified": "[bold red]not verified[/]",
        "interrupted": "[bold yellow]interrupted[/]",
    }.get(outcome, "[bold red]error[/]")
    say(console, f"\n{label}: {markup(result.reason)}")
    say(console, f"Report: {markup(result.report)}", soft_wrap=True)
    return EXIT_CODES[outcome]
