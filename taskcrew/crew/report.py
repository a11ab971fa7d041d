"""report.md: what a person reads after a run. Built from the (already redacted) trace and state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from taskcrew.crew.compaction import one_line
from taskcrew.crew.models import RunState

if TYPE_CHECKING:
    from taskcrew.crew.context import RunContext

HEADLINES = {
    "done": "Done, and independently verified",
    "nothing_to_do": "Nothing to do (verified): the desired state already existed",
    "incomplete": "Incomplete: the run stopped before finishing",
    "not_verified": "Not verified: the independent check did not confirm the work",
    "rejected": "Rejected: a person declined the change, nothing was written",
    "error": "Error: the run could not proceed",
    "interrupted": "Interrupted: stopped by a signal (Ctrl-C or SIGTERM) before the end; what was done is below",
}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


AUDIT_HEADLINES = {
    "done": "Audit: verified — every criterion was observed in the real systems",
    "not_verified": "Audit: NOT verified",
    "error": "Audit: error — the verifier could not finish",
}


def render_report(ctx: RunContext, state: RunState, screenshot: Path | None) -> str:
    outcome = state.outcome or "error"
    headline = AUDIT_HEADLINES.get(outcome, outcome) if state.mode == "audit" else HEADLINES[outcome]
    out = [
        f"# {headline}",
        "",
        f"**Task:** {ctx.task}",
        "",
        f"**Outcome:** `{outcome}` — {state.outcome_reason}",
    ]
    if state.answer:
        out += ["", "## Answer", "", state.answer]
        last = state.steps_done[-1].report if state.steps_done else None
        if last is not None and last.data:
            out += ["", *[f"- **{k}:** {v}" for k, v in last.data.items()]]
        cited = [c for r in state.steps_done for c in r.report.sources]
        if cited:
            out += ["", "Sources:", *[f"- {c.source} — “{c.quote}”" for c in cited]]
    if state.verdicts:
        verdict = state.verdicts[-1]
        out += [
            "",
            f"## Verifier's evidence (attempt {len(state.verdicts)}, model {ctx.verifier_llm.spec.raw})",
            "",
        ]
        out += ["| criterion | met | where it looked | what it saw |", "|---|---|---|---|"]
        out += [
            f"| {_cell(c.criterion)} | {'yes' if c.met else 'NO'} | {_cell(c.source)} | {_cell(c.observed)} |"
            for c in verdict.checks
        ]
        out += ["", f"Verifier: {verdict.reason}"]
        for i, earlier in enumerate(state.verdicts[:-1], 1):
            out.append(f"- Earlier attempt {i}: not verified — {earlier.reason}")
    if state.plan is not None:
        out += [
            "",
            "## Plan" + (f" (version {state.plan_version})" if state.plan_version > 1 else ""),
            "",
            "```",
        ]
        out += [state.plan.render(), "```"]
    out += ["", "## Decision trail", ""]
    tool_calls = ctx.tracer.of_kind("tool_call")
    pending: list[str] = []
    for event in ctx.tracer.events:
        if event.kind == "tool_call":
            first = one_line(event.result)
            warn = f" — _{event.warning[:120]}_" if event.warning else ""
            pending.append(f"  - `{event.tool}`{'' if event.ok else ' ✗'} {first}{warn}")
        elif event.kind == "plan":
            label = "Replanned" if event.replan else "Planned"
            out.append(
                f"- **{label}**{': ' + event.reason if event.reason else ''} ({len(event.plan.steps)} steps)"
            )
        elif event.kind == "step":
            out.append(
                f"- **Step {event.index + 1} [{event.role}] {event.title}** → `{event.report.status}`: "
                f"{event.report.summary}"
            )
            out += pending
            pending = []
        elif event.kind == "control":
            out.append(f"- **Control:** {event.action} — {event.reason}")
        elif event.kind == "verdict":
            result = "verified" if event.verdict.verified else "not verified"
            out.append(f"- **Verification {event.attempt}:** {result} — {event.verdict.reason}")
            out += pending
            pending = []
    approvals = ctx.tracer.of_kind("approval")
    out += ["", "## Approvals", ""]
    if approvals:
        for a in approvals:
            payload = ", ".join(f"{k}={v}" for k, v in a.payload.items())
            out.append(f"- {a.question} [{payload}] → **{a.answer}**" + (f" ({a.note})" if a.note else ""))
    else:
        out.append("None were needed.")
    blocked = [p for p in ctx.tracer.of_kind("policy") if p.decision not in ("allowed", "approved")]
    if blocked:
        out += ["", "## Policy decisions", ""]
        out += [f"- {p.decision}: {', '.join(f'{k}={v}' for k, v in p.detail.items())}" for p in blocked]
    if state.learned:
        out += ["", "## Learned (stored with provenance)", "", *[f"- {fact}" for fact in state.learned]]
    usage = ctx.usage
    cost = "unknown (no price for this model)" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    out += [
        "",
        "## Usage",
        "",
        f"- Models: worker `{ctx.worker_llm.spec.raw}`, verifier `{ctx.verifier_llm.spec.raw}`",
        f"- LLM calls: {usage.calls} ({', '.join(f'{k} {v}' for k, v in sorted(usage.by_role.items()))})",
        f"- Tokens: {usage.input_tokens} in, {usage.output_tokens} out; largest prompt {usage.max_prompt_tokens}",
        f"- Cost: {cost}",
        f"- Tool calls: {len(tool_calls)}; time: {ctx.elapsed()} s",
        "",
        "## Files",
        "",
        "- `trace.jsonl`: every event of this run, one per line",
    ]
    if screenshot is not None:
        out.append(f"- `{screenshot.name}`: the last page the browser showed")
    return "\n".join(out) + "\n"


def write_report(ctx: RunContext, state: RunState, screenshot: Path | None) -> Path:
    path = ctx.run_dir / "report.md"
    path.write_text(ctx.redact(render_report(ctx, state, screenshot)), encoding="utf-8")
    return path
