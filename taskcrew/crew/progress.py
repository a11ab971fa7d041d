"""Live progress on the terminal: one line per meaningful event of the trace.

Every value in a line (a plan's goal, a tool's result, a step's summary, a verdict's reason, a page's
or a document's words in a submission) was written by a model, a page or a document: it is printed
through ``taskcrew.terminal`` (one line, control and invisible characters shown, markup escaped), so
it cannot draw over the run's real progress or outcome.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from taskcrew.crew.compaction import one_line
from taskcrew.crew.evidence import standing, standing_mark, standing_words
from taskcrew.terminal import markup, say

ICONS = {
    "done": "[green]✓[/]",
    "nothing_to_do": "[green]✓[/]",
    "failed": "[red]✗[/]",
    "blocked": "[yellow]![/]",
}

_STANDING_STYLE = {"met": "green", "word": "yellow", "not_met": "red", "rejected": "dim"}


def _v(value: object) -> str:
    """A value in a progress line: on that one line, shown as it is (``taskcrew.terminal``)."""
    return markup(value, flat=True)


class ProgressPrinter:
    """A trace listener. Prints plans, steps, tool calls, approvals, verdicts; never secrets (the
    trace redacts before listeners see an event)."""

    def __init__(self, console: Console, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose
        self.model_calls = 0
        self.unanswered = 0  # model calls that failed before any answer: no tokens, no cost

    def __call__(self, event: Any) -> None:
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event)

    def _print(self, text: str) -> None:
        say(self.console, text)

    def _on_run_started(self, e: Any) -> None:
        self._print(f"[bold]Task:[/] {_v(e.task)}")
        self._print(f"[dim]worker {_v(e.worker_model)} · verifier {_v(e.verifier_model)}[/]")

    def _on_plan(self, e: Any) -> None:
        label = "Replanned" if e.replan else "Plan"
        self._print(f"\n[bold cyan]{label}[/]: {_v(e.plan.goal)}")
        for i, step in enumerate(e.plan.steps, 1):
            self._print(f"  {i}. {_v(f'[{step.role}]')} {_v(step.title)}")

    def _on_tool_call(self, e: Any) -> None:
        first = one_line(e.result, 110)
        mark = "" if e.ok else "[red]✗[/] "
        self._print(f"    [dim]{_v(e.role)}[/] {mark}{_v(e.tool)}: {_v(first)}")
        if e.warning:
            self._print(f"    [yellow]{_v(e.warning[:160])}[/]")

    def _on_step(self, e: Any) -> None:
        icon = ICONS.get(e.report.status, "·")
        self._print(f"  {icon} step {e.index + 1} {_v(e.title)}: {_v(e.report.summary[:200])}")

    def _on_approval(self, e: Any) -> None:
        self._print(f"    [magenta]approval[/] {_v(e.question)} → {_v(e.decided())}")

    def _on_submission(self, e: Any) -> None:
        sent = e.submission
        style = "green" if sent.result == "saved" else "yellow"
        self._print(f"    [{style}]submission[/] {_v(sent.method)} {_v(sent.url)} — {_v(sent.words())}")

    def _on_policy(self, e: Any) -> None:
        if e.decision not in ("allowed",) or self.verbose:
            self._print(f"    [yellow]policy {_v(e.decision)}[/]: {_v(e.detail.get('url', ''))}")

    def _on_control(self, e: Any) -> None:
        self._print(f"  [yellow]{_v(e.action)}[/]: {_v(e.reason[:200])}")

    def _on_verdict(self, e: Any) -> None:
        label = "[green]verified[/]" if e.verdict.verified else "[red]not verified[/]"
        self._print(f"\n[bold]Verification {e.attempt}[/]: {label} — {_v(e.verdict.reason[:300])}")
        for check in e.verdict.checks:
            kind = standing(check)
            mark = f"[{_STANDING_STYLE[kind]}]{standing_mark(check)}[/]"
            note = "" if kind == "met" else f" [{_STANDING_STYLE[kind]}]({standing_words(check)})[/]"
            self._print(f"  {mark} {_v(check.criterion[:120])} [dim]({_v(check.source[:80])})[/]{note}")

    def _on_reflection(self, e: Any) -> None:
        for fact in e.facts:
            self._print(f"  [blue]learned[/]: {_v(fact)}")

    def _on_llm_call(self, e: Any) -> None:
        self.model_calls += 1
        if e.call.error and e.call.prompt_tokens == 0 and e.call.output_tokens == 0:
            self.unanswered += 1

    def _on_run_finished(self, e: Any) -> None:
        if not self.unanswered:
            return
        if self.unanswered == self.model_calls:
            failed = f"{self.unanswered} model call(s) failed, none answered"
        else:
            failed = f"{self.unanswered} of {self.model_calls} model call(s) failed without an answer"
        self._print(f"[yellow]{failed}[/]: not counted as tokens or cost")
