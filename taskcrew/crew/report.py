"""report.md: what a person reads after a run. Built from the (already redacted) trace and state."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskcrew.crew.compaction import one_line
from taskcrew.crew.models import RunState

if TYPE_CHECKING:
    from taskcrew.crew.context import RunContext

HEADLINES = {
    "done": "Done, and independently verified",
    "nothing_to_do": "Nothing to do (verified): the desired state already existed",
    "incomplete": "Incomplete: the run stopped before finishing",
    "not_verified": "Not verified: the independent check did not confirm the work",
    "rejected": "Rejected: a person declined a change",
    "error": "Error: the run could not proceed",
    "interrupted": "Interrupted: stopped by a signal (Ctrl-C or SIGTERM) before the end; what was done is below",
}


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


AUDIT_HEADLINES = {
    "done": "Audit: verified — every criterion was observed in the real systems",
    "not_verified": "Audit: NOT verified",
    "error": "Audit: error — the verifier could not finish",
}


LEADS = {
    "done": "This was done and independently checked in the real systems.",
    "nothing_to_do": "Nothing needed to change: what was asked for was already in place (checked).",
    "incomplete": "This was NOT finished: the run stopped before the work was complete.",
    "not_verified": "This is NOT confirmed: the independent check did not find what was claimed.",
    "rejected": "Nothing was changed: the change was declined when you were asked to approve it.",
    "error": "The run could not proceed, so nothing can be relied on.",
    "interrupted": "This was stopped before the end (Ctrl-C or SIGTERM): check the submissions below "
    "before running it again.",
}
# when the facts say the run changed something, a lead never claims it did not
CHANGED_LEADS = {
    "rejected": "A change was declined when you were asked to approve it; what the run did save "
    "before that is listed under Submissions.",
    "incomplete": "This was NOT finished, but the run did change data: check the submissions below "
    "before running it again.",
    "error": "The run could not finish, but it did change data: check the submissions below.",
}
AUDIT_LEADS = {
    "done": "The claim holds: every criterion was observed in the real systems.",
    "not_verified": "The claim does NOT hold as stated: see the criteria that were not met below.",
    "error": "The audit could not be finished.",
}
_HTTP_ERROR = re.compile(r"\bHTTP [45]\d\d\b")
_OUTCOME_LINES = ("OK", "ERROR", "FAILED", "BLOCKED", "REJECTED", "REFUSED", "Result", "Messages shown")


def _one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def action_outcome(result: str) -> str:
    """Each action of a tool call with its own outcome (a multi-action call reports one line per action)."""
    lines = [
        ln.strip(" -")
        for ln in result.splitlines()
        if ln.strip(" -").startswith(_OUTCOME_LINES) or _HTTP_ERROR.search(ln)
    ]
    if len(lines) > 1:
        return _one_line("; ".join(lines[:6]), 400)
    return one_line(result)


def _values(state: RunState) -> list[tuple[str, str, str]]:
    """(name, value, where it came from) for every value the steps reported; the latest wins."""
    found: dict[str, tuple[str, str]] = {}
    cited = [c for r in state.steps_done for c in r.report.sources]
    for record in state.steps_done:
        for name, value in record.report.data.items():
            origin = next((c.source for c in record.report.sources if value and value in c.quote), "")
            origin = origin or next((c.source for c in cited if value and value in c.quote), "")
            found[name] = (value, origin or f"step {record.index + 1} ({record.role})")
    return [(name, value, origin) for name, (value, origin) in found.items()]


def caveats(ctx: RunContext, state: RunState) -> list[str]:
    """Every warning raised on the way: the steps' caveats, steps that failed, unmet or rejected checks."""
    out: list[str] = []
    for record in state.steps_done:
        out += [f"{c} (step {record.index + 1})" for c in record.report.caveats]
        if record.report.status in ("failed", "blocked"):
            out.append(
                f"Step {record.index + 1} ({record.title}) {record.report.status}: {record.report.summary}"
            )
    if state.verdicts:
        from taskcrew.crew.evidence import standing

        for c in state.verdicts[-1].checks:
            if standing(c) == "not_met":
                out.append(f"Not confirmed: {c.criterion} — {c.observed}")
            elif standing(c) == "rejected":
                out.append(f"A check code rejected (not counted as evidence): {c.criterion} — {c.observed}")
    out += [f"Policy {p.decision}: {p.detail.get('reason', '')}" for p in _blocked(ctx)]
    out += models_word(ctx, state)
    return list(dict.fromkeys(_one_line(c, 400) for c in out))


def models_word(ctx: RunContext, state: RunState) -> list[str]:
    """What code could not check, said as such: a cited page it cannot read, an image, a verifier's
    observation with nothing code can compare."""
    from taskcrew.crew.citations import check_citations
    from taskcrew.crew.evidence import MODELS_WORD

    citations = [c for r in state.steps_done for c in r.report.sources]
    out = [
        f"Not checked by code (the model's word): {c.citation.source} — “{_one_line(c.citation.quote, 120)}” "
        f"({c.detail})"
        for c in check_citations(citations, ctx.toolbox.source_text)
        if c.status == "unchecked"
    ]
    if state.verdicts:
        out += [
            f"Not checked by code (the verifier's word): {c.criterion} — {c.observed.replace(MODELS_WORD, '').strip()}"
            for c in state.verdicts[-1].checks
            if c.met and MODELS_WORD in c.observed
        ]
    return out


def _blocked(ctx: RunContext) -> list[Any]:
    return [p for p in ctx.tracer.of_kind("policy") if p.decision not in ("allowed", "approved")]


def submissions(ctx: RunContext) -> list[str]:
    """Every data-changing submission attempt, with the result of the action that sent it."""
    out: list[str] = []
    events = ctx.tracer.events
    used: set[int] = set()
    for i, event in enumerate(events):
        repeat = event.kind == "policy" and "approved before" in str(event.detail.get("reason", ""))
        if event.kind != "approval" and not repeat:
            continue
        if event.kind == "approval":
            what, fields = event.question, ", ".join(f"{k}={v}" for k, v in event.payload.items())
            decision = f"**{event.answer}** by {event.approver}" + (f" ({event.note})" if event.note else "")
        else:
            what = f"{event.detail.get('method', '')} {event.detail.get('url', '')}"
            fields, decision = "the same values", "sent again (already approved)"
        sent = ""
        if not (event.kind == "approval" and event.answer == "rejected"):
            sent = f" → result: {_submission_result(events, i, used)}"
        out.append(f"{len(out) + 1}. {what} [{fields}] — {decision}{sent}")
    return out


def _submission_result(events: list[Any], start: int, used: set[int]) -> str:
    """What the system did with the submission approved at ``events[start]``: the gate's account
    (whether it was applied) of the next submission sent after it; else what the tool call said."""
    for j in range(start + 1, len(events)):
        event = events[j]
        if event.kind == "submission" and j not in used:
            used.add(j)
            return event.submission.words()
        if event.kind in ("approval", "step"):
            break
    result = next((e for e in events[start + 1 :] if e.kind == "tool_call"), None)
    return action_outcome(result.result) if result is not None else "no result recorded"


def _answer_section(ctx: RunContext, state: RunState, outcome: str) -> list[str]:
    audit = state.mode == "audit"
    lead = (AUDIT_LEADS if audit else LEADS).get(outcome, state.outcome_reason)
    if not audit and state.changed and not state.changed.startswith("Nothing was changed"):
        lead = CHANGED_LEADS.get(outcome, lead)
    out = ["## Answer", "", lead]
    last = state.steps_done[-1].report if state.steps_done else None
    if last is not None and not audit:
        label = (
            "What the crew found"
            if state.plan is not None and not state.plan.changes_data
            else "What was done"
        )
        out += ["", f"**{label}:** {_one_line(last.summary, 1500)}"]
    values = _values(state)
    if values:
        out += ["", "**Values** (and where they came from):"]
        out += [f"- {name}: `{_one_line(value, 200)}` — from {origin}" for name, value, origin in values]
    attempts = submissions(ctx)
    if attempts:
        out += ["", "**Submissions** (every attempt, with its result):", *attempts]
    notes = caveats(ctx, state)
    out += ["", "**Caveats:**", *([f"- {c}" for c in notes] or ["- none were raised"])]
    if state.outcome_reason and outcome not in ("done", "nothing_to_do"):
        out += ["", f"Why: {state.outcome_reason}"]
    return out


def _sources(state: RunState) -> list[str]:
    seen: dict[tuple[str, str], None] = {}
    for record in reversed(state.steps_done):  # the latest step's quotes first, each once
        for c in record.report.sources:
            seen.setdefault((c.source, _one_line(c.quote, 300)), None)
    return [f"- {source} — “{quote}”" for source, quote in seen]


def render_report(ctx: RunContext, state: RunState, screenshot: Path | None) -> str:
    outcome = state.outcome or "error"
    audit = state.mode == "audit"
    headline = AUDIT_HEADLINES.get(outcome, outcome) if audit else HEADLINES[outcome]
    shown = {"done": "verified", "not_verified": "not verified"}.get(outcome, outcome) if audit else outcome
    first = f"# {headline}" + (f" — {state.changed}" if state.changed and not audit else "")
    out = [
        first,
        "",
        f"**{'Claim audited' if audit else 'Task'}:** {ctx.task}",
        "",
        *_answer_section(ctx, state, outcome),
        "",
        f"**Outcome:** `{shown}` — {state.outcome_reason}",
    ]
    if sources := _sources(state):
        out += ["", "**Sources:**", *sources]
    if state.verdicts:
        verdict = state.verdicts[-1]
        out += [
            "",
            f"## Verifier's evidence (attempt {len(state.verdicts)}, model {ctx.verifier_llm.spec.raw})",
            "",
        ]
        from taskcrew.crew.evidence import standing_words

        out += ["| criterion | met | where it looked | what it saw |", "|---|---|---|---|"]
        out += [
            f"| {_cell(c.criterion)} | {standing_words(c)} | {_cell(c.source)} | {_cell(c.observed)} |"
            for c in verdict.checks
        ]
        out += ["", f"Verifier: {verdict.reason}"]
        for i, earlier in enumerate(state.verdicts[:-1], 1):
            out.append(f"- Earlier attempt {i}: not verified — {earlier.reason}")
    if state.plan is not None and not audit:
        out += [
            "",
            "## Plan" + (f" (version {state.plan_version})" if state.plan_version > 1 else ""),
            "",
            "```",
        ]
        out += [state.plan.render(), "```"]
    elif state.plan is not None:
        out += ["", "## Criteria audited", "", *[f"- {c}" for c in state.plan.success_criteria]]
    out += ["", "## Decision trail", ""]
    tool_calls = ctx.tracer.of_kind("tool_call")
    pending: list[str] = []
    for event in ctx.tracer.events:
        if event.kind == "tool_call":
            warn = f" — _{event.warning[:120]}_" if event.warning else ""
            args = _one_line(json.dumps(event.args, ensure_ascii=False, default=str), 160)
            pending.append(
                f"  - `{event.tool}`({args}){'' if event.ok else ' ✗'} → {action_outcome(event.result)}{warn}"
            )
        elif event.kind == "plan":
            label = "Replanned" if event.replan else "Planned"
            out.append(
                f"- **{label}**{': ' + event.reason if event.reason else ''} ({len(event.plan.steps)} steps)"
            )
        elif event.kind == "step":
            out.append(
                f"- **Step {event.index + 1} [{event.role}] {event.title}** → `{event.report.status}`: "
                f"{_one_line(event.report.summary, 600)}"
            )
            out += pending
            pending = []
        elif event.kind == "control":
            out.append(f"- **Control:** {event.action} — {event.reason}")
        elif event.kind == "verdict":
            result = "verified" if event.verdict.verified else "not verified"
            who = "Audit check" if audit else "Verification"
            out.append(f"- **{who} {event.attempt}:** {result} — {event.verdict.reason}")
            out += pending
            pending = []
    out += pending
    approvals = ctx.tracer.of_kind("approval")
    out += ["", "## Approvals", ""]
    if approvals:
        for a in approvals:
            payload = ", ".join(f"{k}={v}" for k, v in a.payload.items())
            out.append(
                f"- {a.question} [{payload}] → **{a.answer}** by {a.approver}"
                + (f" ({a.note})" if a.note else "")
            )
    else:
        out.append("None were needed." if not audit else "None: an audit changes nothing.")
    if blocked := _blocked(ctx):
        out += ["", "## Policy decisions", ""]
        out += [f"- {p.decision}: {', '.join(f'{k}={v}' for k, v in p.detail.items())}" for p in blocked]
    if state.learned:
        out += ["", "## Learned (stored with provenance)", "", *[f"- {fact}" for fact in state.learned]]
    usage = ctx.usage
    cost = (
        "unknown (no price is configured for this model; tokens are counted above)"
        if usage.cost_usd is None
        else f"${usage.cost_usd:.4f}"
    )
    models = (
        f"- Model: verifier `{ctx.verifier_llm.spec.raw}` (an audit runs the verifier only)"
        if audit
        else f"- Models: worker `{ctx.worker_llm.spec.raw}`, verifier `{ctx.verifier_llm.spec.raw}`"
    )
    out += [
        "",
        "## Usage",
        "",
        models,
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
