"""What `taskcrew eval` and `taskcrew runs` print: a progress bar while a sweep runs, and tables."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markdown import Markdown
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

if TYPE_CHECKING:
    from taskcrew.eval.results import SweepReport
    from taskcrew.eval.runs import RunSummary
    from taskcrew.eval.sweep import SweepEvent

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
        label = f"{job.model} · {job.case_id}" + (f" #{job.repeat}" if job.repeat > 1 else "")
        if event.kind == "started":
            self.running[event.worker] = label
        else:
            self.running.pop(event.worker, None)
            record = event.record
            if record is not None:
                mark = "[green]pass[/]" if record.passed else "[red]FAIL[/]"
                style = OUTCOME_STYLE.get(record.outcome, "")
                self.console.print(
                    f"{mark} {label}: [{style}]{record.outcome}[/] in {record.seconds:.1f} s"
                    + (f" — {record.error}" if record.error else "")
                )
            self.progress.advance(self.task)
        self.progress.update(self.task, description=", ".join(self.running.values()) or "finishing")


def print_totals(report: SweepReport, console: Console) -> None:
    """One line per model (readable in a narrow terminal); results.md has the tables."""
    console.print("[bold]Totals per model[/]")
    for t in report.totals:
        passk = ", ".join(f"pass^{p.k} {p.value:.2f}" for p in t.pass_k)
        style = "green" if t.successes == t.runs else "yellow" if t.successes else "red"
        console.print(
            f"[bold]{t.model}[/] (verifier {t.verifier_model}): [{style}]{t.successes}/{t.runs} passed[/]; {passk}; "
            f"{t.steps} steps, {t.llm_calls} LLM calls, {t.input_tokens}/{t.output_tokens} tokens, "
            f"cost {_cost(t.cost_usd)}, {t.seconds:.1f} s, {t.approvals} approvals"
        )


def print_runs(runs: list[RunSummary], console: Console) -> None:
    """Two lines per run (readable in a narrow terminal): the figures and folder, then the task."""
    console.print(f"{len(runs)} run(s), newest first")
    for run in runs:
        style = OUTCOME_STYLE.get(run.outcome, "")
        time = f"{run.seconds:.1f} s" if run.seconds is not None else "—"
        figures = (
            f"{run.llm_calls} LLM calls, {run.input_tokens}/{run.output_tokens} tokens, "
            f"{_cost(run.cost_usd)}, {time}"
        )
        console.print(
            f"[bold]{run.name}[/]  [{style}]{run.outcome}[/]  {figures}  "
            f"[dim]{run.worker_model} / {run.verifier_model}[/]"
        )
        console.print(f"    {run.task}")
        if run.changed:
            console.print(f"    [dim]{run.changed}[/]", highlight=False)
        if not run.finished:
            console.print(f"    [dim]{run.reason}[/]")


def print_run(run: RunSummary, report: str | None, console: Console) -> None:
    style = OUTCOME_STYLE.get(run.outcome, "")
    console.print(f"[bold]{run.task}[/]")
    console.print(f"outcome: [{style}]{run.outcome}[/] — {run.reason}")
    if run.changed:
        console.print(f"changed: {run.changed}", highlight=False)
    console.print(f"models: worker {run.worker_model}, verifier {run.verifier_model}")
    time = f"{run.seconds:.1f} s" if run.seconds is not None else "—"
    console.print(
        f"LLM calls {run.llm_calls}; tokens {run.input_tokens} in, {run.output_tokens} out; "
        f"cost {_cost(run.cost_usd)}; time {time}"
    )
    console.print(f"folder: {run.path}")
    if report is not None:
        console.rule("report.md")
        console.print(Markdown(report))
    else:
        console.print("(no report.md: the run did not finish)")
