"""What `taskcrew eval` and `taskcrew runs` print: a progress bar while a sweep runs, and tables.

A run's task, reason, changes, models and report hold words of a model, a page or a document: they
are printed through ``taskcrew.terminal`` (control characters shown, markup escaped), so a run's
record cannot restyle, hide or rewrite what the terminal shows, nor crash the command.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from taskcrew.terminal import document, markup, say

if TYPE_CHECKING:
    from taskcrew.eval.results import SweepReport
    from taskcrew.eval.runs import RunSummary
    from taskcrew.eval.sweep import SweepEvent

UNSEALED = (
    "not sealed: this run ended before taskcrew sealed run folders, so its files are not checked "
    "against its job's signed record"
)
OUTCOME_STYLE = {
    "done": "green",
    "nothing_to_do": "green",
    "incomplete": "yellow",
    "not_verified": "red",
    "rejected": "yellow",
    "error": "red",
    "interrupted": "yellow",
    "unfinished": "dim",
}


def _style(outcome: str) -> str:
    """The style of an outcome; "none" for one taskcrew does not know (a run record written by
    someone else): an empty ``[]`` is no tag, and its ``[/]`` would have nothing to close."""
    return OUTCOME_STYLE.get(outcome, "none")


def _cost(value: Decimal | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


class SweepProgress:
    """A rich progress bar fed by the sweep's events; one line per finished run."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task(
            "starting the sweep (ERP, intranet, knowledge, Chromium)", total=total
        )
        self.running: dict[int, str] = {}

    def __enter__(self) -> SweepProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, event: SweepEvent) -> None:
        job = event.job
        label = markup(f"{job.model} · {job.case_id}" + (f" #{job.repeat}" if job.repeat > 1 else ""))
        if event.kind == "started":
            self.running[event.worker] = label
        else:
            self.running.pop(event.worker, None)
            record = event.record
            if record is not None:
                mark = "[green]pass[/]" if record.passed else "[red]FAIL[/]"
                style = _style(record.outcome)
                say(
                    self.console,
                    f"{mark} {label}: [{style}]{markup(record.outcome)}[/] in {record.seconds:.1f} s"
                    + (f" — {markup(record.error)}" if record.error else ""),
                )
            self.progress.advance(self.task)
        # the bar's description is markup too (TextColumn): the labels are escaped above
        self.progress.update(self.task, description=", ".join(self.running.values()) or "finishing")


def print_totals(report: SweepReport, console: Console) -> None:
    """One line per model (readable in a narrow terminal); results.md has the tables."""
    console.print("[bold]Totals per model[/]")
    for t in report.totals:
        passk = ", ".join(f"pass^{p.k} {p.value:.2f}" for p in t.pass_k)
        style = "green" if t.successes == t.runs else "yellow" if t.successes else "red"
        say(
            console,
            f"[bold]{markup(t.model)}[/] (verifier {markup(t.verifier_model)}): "
            f"[{style}]{t.successes}/{t.runs} passed[/]; {passk}; "
            f"{t.steps} steps, {t.llm_calls} LLM calls, {t.input_tokens}/{t.output_tokens} tokens, "
            f"cost {_cost(t.cost_usd)}, {t.seconds:.1f} s, {t.approvals} approvals",
        )


def print_runs(runs: list[RunSummary], console: Console) -> None:
    """Two lines per run (readable in a narrow terminal): the figures and folder, then the task."""
    console.print(f"{len(runs)} run(s), newest first")
    for run in runs:
        style = _style(run.outcome)
        time = f"{run.seconds:.1f} s" if run.seconds is not None else "—"
        figures = (
            f"{run.llm_calls} LLM calls, {run.input_tokens}/{run.output_tokens} tokens, "
            f"{_cost(run.cost_usd)}, {time}"
        )
        say(
            console,
            f"[bold]{markup(run.name)}[/]  [{style}]{markup(run.outcome)}[/]  {figures}  "
            f"[dim]{markup(run.worker_model)} / {markup(run.verifier_model)}[/]",
        )
        if run.doubt:  # its job's send in doubt, named first (as `jobs list` does)
            say(console, f"    [red]{markup(run.doubt)}[/]")
        say(console, f"    {markup(run.task)}")
        if run.changed:
            say(console, f"    [dim]{markup(run.changed)}[/]")
        if not run.finished:
            say(console, f"    [dim]{markup(run.reason)}[/]")
        if run.note:  # the job store's signed record does not vouch for what the folder says
            say(console, f"    [yellow]{markup(run.note)}[/]")


def print_run(run: RunSummary, report: str | None, console: Console) -> None:
    style = _style(run.outcome)
    say(console, f"[bold]{markup(run.task)}[/]")
    if run.doubt:  # its job's send in doubt, named first (as `jobs show` does)
        say(console, f"[red]{markup(run.doubt)}[/]")
    say(console, f"outcome: [{style}]{markup(run.outcome)}[/] — {markup(run.reason)}")
    if run.note:  # the job store's signed record does not vouch for what the folder says
        say(console, f"[yellow]{markup(run.note)}[/]")
    if run.altered and run.answer:  # the signed record's answer, not the folder's "changed" line
        say(console, f"answer (the signed job record's): {markup(run.answer)}")
    if run.unsealed:
        say(console, f"[dim]{markup(UNSEALED)}[/]")
    if run.changed:
        say(console, f"changed: {markup(run.changed)}")
    say(console, f"models: worker {markup(run.worker_model)}, verifier {markup(run.verifier_model)}")
    time = f"{run.seconds:.1f} s" if run.seconds is not None else "—"
    say(
        console,
        f"LLM calls {run.llm_calls}; tokens {run.input_tokens} in, {run.output_tokens} out; "
        f"cost {_cost(run.cost_usd)}; time {time}",
    )
    say(console, f"folder: {markup(run.path)}")
    if run.altered:  # what the folder says now is not the run's account: not shown as if it were
        say(
            console,
            "(report.md is not shown: the run folder was changed after the run ended, so what it says is "
            "not vouched for; its files are in the folder above)",
        )
    elif report is not None:
        console.rule("report.md")
        say(console, document(report))
    else:
        say(console, "(no report.md: the run did not finish)")
