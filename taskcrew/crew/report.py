"""report.md: what a person reads after a run. Built from the (already redacted) trace and state."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskcrew.crew.compaction import one_line
from taskcrew.crew.models import Plan, RunState
from taskcrew.terminal import CHARACTER_REFERENCE, CONTROLS, LAYOUT

if TYPE_CHECKING:
    from taskcrew.crew.context import RunContext
    from taskcrew.crew.evidence import Recorded

HEADLINES = {
    "done": "Done, and independently verified",
    "nothing_to_do": "Nothing to do (verified): the desired state already existed",
    "incomplete": "Incomplete: the run stopped before finishing",
    "not_verified": "Not verified: the independent check did not confirm the work",
    "rejected": "Rejected: a person declined a change",
    "error": "Error: the run could not proceed",
    "interrupted": "Interrupted: stopped (Ctrl-C, SIGTERM, or a question nobody could answer) before the end; "
    "what was done is below",
}


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


# Text a model, a page or a document wrote goes into report.md only through ``Md``: on one line
# with every character that could start Markdown of its own escaped (``Md.text``), in a code span
# (``Md.code``), or in a fence longer than any run of backticks in it (``Md.block``). Without it, a
# line feed and ``` in a plan's goal closed the plan's fence and wrote headings, a table and
# "**approved** by" lines of the report's own into a run that was not verified and saved nothing.
# ``terminal.CONTROLS`` each written as � (a line feed and a tab are a block's own; in a line, they and
# every other white space are one space first)
_AS_REPLACEMENT = {ord(c): "\ufffd" for c in CONTROLS - LAYOUT}
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_LIST_NUMBER = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
_BACKTICKS = re.compile(r"`+")


def _flat(text: object, limit: int | None) -> str:
    """``text`` on one line (every run of white space, line feeds, NEL and U+2028 too, one space), no
    other control or bidi character (each shown as �), cut to ``limit`` characters."""
    flat = " ".join(str(text).split()).translate(_AS_REPLACEMENT)
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def md_text(text: object, limit: int | None = 300) -> str:
    """``text`` as Markdown that reads as itself and makes no structure: one line; ` * [ ] < | escaped
    everywhere; _ unless inside a word; ~ next to another ~ or at an end; \\ before punctuation or
    at the end; & that would start an entity; a heading, quote, list or underline marker at its start
    and a # at its end."""
    flat = _flat(text, limit)
    out: list[str] = []
    last = len(flat) - 1
    for i, c in enumerate(flat):
        before, after = flat[i - 1] if i else "", flat[i + 1] if i < last else ""
        if (
            c in "`*[]<|"
            or (c == "\\" and (not after or after in _ASCII_PUNCT))
            or (c == "_" and not (before.isalnum() and after.isalnum()))
            or (c == "~" and (before in ("", "~") or after in ("", "~")))
            or (c == "&" and CHARACTER_REFERENCE.match(flat, i))
            or (i == 0 and c in "#>+-=")  # a heading, quote, list item or underline at a line's start
            or (i == last and c == "#")  # a heading's closing sequence, which it would drop
        ):
            out.append("\\")
        out.append(c)
    return _LIST_NUMBER.sub(r"\1\\\2", "".join(out))  # "1." or "2)" starting an ordered list


def md_code(text: object, limit: int | None = 200) -> str:
    """``text`` on one line as a code span whose backticks are longer than any run of them in it."""
    flat = _flat(text, limit)
    if not flat:
        return "``"
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def md_block(text: str) -> list[str]:
    """``text`` (its lines and tabs kept, any other control or bidi character as �) as a fenced
    block: the fence is longer than any run of backticks in it, so no line of it can close the fence."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").translate(_AS_REPLACEMENT).split("\n")
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *lines, fence]


class Md:
    """The one way text from outside taskcrew goes into report.md: redacted first (an escaped secret
    would no longer match when the whole report is redacted), then ``md_text``/``md_code``/``md_block``."""

    def __init__(self, redact: Callable[[str], str] = lambda s: s) -> None:
        self.redact = redact

    def text(self, value: object, limit: int | None = 300) -> str:
        return md_text(self.redact(str(value)), limit)

    def code(self, value: object, limit: int | None = 200) -> str:
        return md_code(self.redact(str(value)), limit)

    def block(self, value: str) -> list[str]:
        return md_block(self.redact(value))


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
                f"Step {record.index + 1} ({record.title}) {record.report.status} — the worker's words, not "
                f"checked by code: {record.report.summary}"
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
    """Every data-changing submission attempt, with the result of the action that sent it: the
    system's answer as the gate read it then (the trace's), and beside it what code's read-back of
    the system made of it where that overrode the gate's reading (``RunContext.checked_facts``)."""
    md = Md(ctx.redact)
    out: list[str] = []
    events = ctx.tracer.events
    used: set[int] = set()
    read = {(s.method, s.at): s for s in ctx.checked_facts().submissions if s.read_back}
    for i, event in enumerate(events):
        repeat = event.kind == "policy" and "approved before" in str(event.detail.get("reason", ""))
        if event.kind != "approval" and not repeat:
            continue
        if event.kind == "approval":
            what, fields = event.question, ", ".join(f"{k}={v}" for k, v in event.payload.items())
            decision = f"**{md.text(event.answer, 40)}** by {md.text(event.approver, 100)}" + (
                f" ({md.text(event.note)})" if event.note else ""
            )
        else:
            what = f"{event.detail.get('method', '')} {event.detail.get('url', '')}"
            fields, decision = "the same values", "sent again (already approved)"
        sent = ""
        if not (event.kind == "approval" and event.answer == "rejected"):
            sent = f" → result: {md.text(_submission_result(events, i, used, read), 900)}"
        out.append(f"{len(out) + 1}. {md.text(what, 400)} [{md.text(fields, 600)}] — {decision}{sent}")
    return out


def _submission_result(
    events: list[Any], start: int, used: set[int], read: dict[tuple[str, Any], Any] | None = None
) -> str:
    """What the system did with the submission approved at ``events[start]``: the gate's account
    (whether it was applied) of the next submission sent after it, and code's read-back of it where
    that says otherwise (``read``: by method and time sent); else what the tool call said."""
    for j in range(start + 1, len(events)):
        event = events[j]
        if event.kind == "submission" and j not in used:
            used.add(j)
            sent = event.submission
            checked = (read or {}).get((sent.method, sent.at))
            return sent.words() + (f" — as code read the system back: {checked.words()}" if checked else "")
        if event.kind in ("approval", "step"):
            break
    result = next((e for e in events[start + 1 :] if e.kind == "tool_call"), None)
    return action_outcome(result.result) if result is not None else "no result recorded"


def _answer_section(ctx: RunContext, state: RunState, outcome: str) -> list[str]:
    audit = state.mode == "audit"
    lead = (AUDIT_LEADS if audit else LEADS).get(outcome, state.outcome_reason)
    if not audit and state.changed and not state.changed.startswith("Nothing was changed"):
        lead = CHANGED_LEADS.get(outcome, lead)
    md = Md(ctx.redact)
    out = ["## Answer", "", md.text(lead, 1000)]
    last = state.steps_done[-1].report if state.steps_done else None
    approvals = [a for a in ctx.tracer.of_kind("approval") if a.answer == "approved"]
    changes = bool(
        state.plan is None or state.plan.changes_data or ctx.checked_facts().submissions or approvals
    )
    if not audit and changes:
        # what was done is what code recorded, never a model's words (those follow, labelled)
        done = state.changed or "Nothing was changed in any system"
        decided = "; ".join(f"{a.question} {a.decided()}" for a in approvals) or "none"
        out += [
            "",
            f"**What was done** (recorded by code: the sends, the systems' answers and the signed "
            f"decisions): {md.text(done, 1000)}. Approvals: {md.text(decided, 1000)}.",
        ]
    if last is not None and not audit:
        label = (
            "The last step's words** (a model's account, not checked by code"
            if changes
            else "What the crew found** (the last step's words, not checked by code"
        )
        if _routine_wrote(ctx, state):
            label = "The last step's words** (written by the routine's code, not by a model"
        out += ["", f"**{label}): {md.text(last.summary, 1500)}"]
        if problem := unsupported(ctx, state):
            out += ["", f"**Not supported by what this run recorded:** {md.text(problem, 1500)}"]
    values = _values(state)
    if values:
        out += ["", "**Values** (and where they came from):"]
        out += [
            f"- {md.text(name, 100)}: {md.code(value, 200)} — from {md.text(origin)}"
            for name, value, origin in values
        ]
    attempts = submissions(ctx)
    if attempts:
        out += ["", "**Submissions** (every attempt, with its result):", *attempts]
    notes = caveats(ctx, state)
    out += ["", "**Caveats:**", *([f"- {md.text(c, 400)}" for c in notes] or ["- none were raised"])]
    if state.outcome_reason and outcome not in ("done", "nothing_to_do"):
        out += ["", f"Why: {md.text(state.outcome_reason, 1000)}"]
    return out


def _sources(state: RunState, md: Md) -> list[str]:
    seen: dict[tuple[str, str], None] = {}
    for record in reversed(state.steps_done):  # the latest step's quotes first, each once
        for c in record.report.sources:
            seen.setdefault((md.text(c.source), md.text(c.quote, 300)), None)
    return [f"- {source} — “{quote}”" for source, quote in seen]


def _plan_text(plan: Plan) -> str:
    """The plan as ``Plan.render`` says it, each goal, criterion, title and assumption on its own line
    (a line feed in one cannot pass for a line of the plan's own), each cut to 1000 characters."""
    steps = [s.model_copy(update={"title": _flat(s.title, 1000)}) for s in plan.steps]
    return plan.model_copy(
        update={
            "goal": _flat(plan.goal, 1000),
            "success_criteria": [_flat(c, 1000) for c in plan.success_criteria],
            "steps": steps,
            "assumptions": [_flat(a, 1000) for a in plan.assumptions],
        }
    ).render()


def render_report(ctx: RunContext, state: RunState, screenshot: Path | None) -> str:
    outcome = state.outcome or "error"
    audit = state.mode == "audit"
    headline = AUDIT_HEADLINES.get(outcome, outcome) if audit else HEADLINES[outcome]
    shown = {"done": "verified", "not_verified": "not verified"}.get(outcome, outcome) if audit else outcome
    md = Md(ctx.redact)
    first = f"# {headline}" + (f" — {md.text(state.changed, 600)}" if state.changed and not audit else "")
    out = [
        first,
        "",
        f"**{'Claim audited' if audit else 'Task'}:** {md.text(ctx.task, 2000)}",
        "",
        *_answer_section(ctx, state, outcome),
        "",
        f"**Outcome:** `{shown}` — {md.text(state.outcome_reason, 1000)}",
    ]
    if sources := _sources(state, md):
        out += ["", "**Sources:**", *sources]
    if state.verdicts:
        verdict = state.verdicts[-1]
        out += [
            "",
            f"## Verifier's evidence (attempt {len(state.verdicts)}, model {md.text(ctx.verifier_llm.spec.raw)})",
            "",
        ]
        from taskcrew.crew.evidence import standing_words

        out += ["| criterion | met | where it looked | what it saw |", "|---|---|---|---|"]
        out += [
            f"| {md.text(c.criterion, 500)} | {standing_words(c)} | {md.text(c.source)} "
            f"| {md.text(c.observed, 1000)} |"
            for c in verdict.checks
        ]
        out += ["", f"Verifier: {md.text(verdict.reason, 1000)}"]
        for i, earlier in enumerate(state.verdicts[:-1], 1):
            out.append(f"- Earlier attempt {i}: not verified — {md.text(earlier.reason, 600)}")
    if state.plan is not None and not audit:
        out += [
            "",
            "## Plan" + (f" (version {state.plan_version})" if state.plan_version > 1 else ""),
            "",
            *md.block(_plan_text(state.plan)),
        ]
    elif state.plan is not None:
        out += ["", "## Criteria audited", "", *[f"- {md.text(c, 500)}" for c in state.plan.success_criteria]]
    out += ["", "## Decision trail", ""]
    tool_calls = ctx.tracer.of_kind("tool_call")
    pending: list[str] = []
    for event in ctx.tracer.events:
        if event.kind == "tool_call":
            warn = f" — _{md.text(event.warning, 120)}_" if event.warning else ""
            args = md.text(json.dumps(event.args, ensure_ascii=False, default=str), 160)
            pending.append(
                f"  - {md.code(event.tool, 60)}({args}){'' if event.ok else ' ✗'} "
                f"→ {md.text(action_outcome(event.result), 400)}{warn}"
            )
        elif event.kind == "plan":
            label = "Replanned" if event.replan else "Planned"
            why = f": {md.text(event.reason)}" if event.reason else ""
            out.append(f"- **{label}**{why} ({len(event.plan.steps)} steps)")
        elif event.kind == "step":
            out.append(
                f"- **Step {event.index + 1} [{event.role}] {md.text(event.title, 200)}** "
                f"→ `{event.report.status}`: {md.text(event.report.summary, 600)}"
            )
            out += pending
            pending = []
        elif event.kind == "control":
            out.append(f"- **Control:** {md.text(event.action, 60)} — {md.text(event.reason)}")
        elif event.kind == "verdict":
            result = "verified" if event.verdict.verified else "not verified"
            who = "Audit check" if audit else "Verification"
            out.append(f"- **{who} {event.attempt}:** {result} — {md.text(event.verdict.reason, 600)}")
            out += pending
            pending = []
    out += pending
    approvals = ctx.tracer.of_kind("approval")
    out += ["", "## Approvals", ""]
    if approvals:
        for a in approvals:
            payload = ", ".join(f"{k}={v}" for k, v in a.payload.items())
            out.append(
                f"- {md.text(a.question, 400)} [{md.text(payload, 600)}] → **{md.text(a.answer, 40)}** "
                f"by {md.text(a.approver, 100)}" + (f" ({md.text(a.note)})" if a.note else "")
            )
    else:
        out.append("None were needed." if not audit else "None: an audit changes nothing.")
    if blocked := _blocked(ctx):
        out += ["", "## Policy decisions", ""]
        out += [
            f"- {md.text(p.decision, 60)}: {md.text(', '.join(f'{k}={v}' for k, v in p.detail.items()), 600)}"
            for p in blocked
        ]
    if state.learned:
        out += [
            "",
            "## Learned (stored with provenance)",
            "",
            *[f"- {md.text(fact, 400)}" for fact in state.learned],
        ]
    usage = ctx.usage
    cost = (
        "unknown (no price is configured for this model; tokens are counted above)"
        if usage.cost_usd is None
        else f"${usage.cost_usd:.4f}"
    )
    worker, verifier = md.code(ctx.worker_llm.spec.raw), md.code(ctx.verifier_llm.spec.raw)
    models = (
        f"- Model: verifier {verifier} (an audit runs the verifier only)"
        if audit
        else f"- Models: worker {worker}{'' if _worker_called(usage) else ' (not called)'}, verifier {verifier}"
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
    for name, what in ROUTINE_FILES:  # what routines learn from, and what they made of the run
        if (ctx.run_dir / name).exists() or (name == "routine.txt" and _replayed(ctx, ran=True)):
            out.append(f"- `{name}`: {what}")
    if screenshot is not None:
        out.append(f"- `{screenshot.name}`: the last page the browser showed")
    return "\n".join(out) + "\n"


ROUTINE_FILES = (
    ("browser_steps.jsonl", "each browser action by what it addressed (what a routine is learned from)"),
    ("earlier_legs.json", "what this job's earlier legs did, as its signed checkpoint carried it"),
    ("routine.txt", "what routines made of this run (written after this report)"),
)


def _replayed(ctx: RunContext, ran: bool = False) -> bool:
    """A routine replayed the run (``ran``: or fell back after replaying part of it)."""
    outcome = getattr(getattr(ctx, "replay", None), "outcome", None)
    return outcome == "replayed" or (ran and outcome in ("fell_back", "rejected"))


def _routine_wrote(ctx: RunContext, state: RunState) -> bool:
    """A routine replayed the run and its code wrote the last step: the replay's plan (version 1) is
    the run's last, no agent reworked the run after it (the verifier did not confirm the replay: a
    new plan, steps the models wrote)."""
    return _replayed(ctx) and state.plan_version == 1 and all(s.plan_version == 1 for s in state.steps_done)


def _worker_called(usage: Any) -> bool:
    return any(n for role, n in usage.by_role.items() if role != "verifier")


def recorded(ctx: RunContext) -> Recorded:
    """What code recorded of the run, that the last step's words are held to (``evidence.Recorded``):
    touched — the sends a system applied or may have (every leg's: the intent log checked against the
    signed sends) with the system's answer, as code's read-back shows them (not one it shows no row
    of), and the changed lines of a before/after difference; read —
    the task, every tool's result (pages, files), what the verifier opened, and the approved decisions'
    requests; the approvers — who or what approved each (``ApprovalEvent.approver``)."""
    from taskcrew.crew.evidence import CHANGES_SOURCE, Recorded

    def fields(pairs: Iterable[tuple[str, Any]]) -> str:
        return " ".join(f"{k}={v}" for k, v in pairs)

    # as code's read-back shows them: a send read as saved that it shows no row of touched nothing
    # it can vouch for ("Saved bill BILL-0011" of a bill the system dropped is unsupported)
    applied = [
        s for s in ctx.checked_facts().submissions if s.result in ("saved", "unknown") and not s.unshown
    ]
    touched = [f"{s.method} {s.url} {fields(s.fields)} {s.detail}" for s in applied]
    texts = ctx.toolbox.sources.texts()
    touched += [
        line
        for source, seen in texts.items()
        if source.startswith(CHANGES_SOURCE)
        for text in seen
        for line in text.splitlines()
        if line.startswith(("+ ", "- "))
    ]
    approvals = [a for a in ctx.tracer.of_kind("approval") if a.answer == "approved"]
    read = [
        ctx.task,
        *(e.result for e in ctx.tracer.of_kind("tool_call")),
        *(t for v in texts.values() for t in v),
    ]
    read += [f"{a.question} {fields(a.payload.items())}" for a in approvals]
    return Recorded("\n".join(touched), "\n".join(read), tuple(a.approver for a in approvals))


def unsupported(ctx: RunContext, state: RunState) -> str | None:
    """What the last step's words name that nothing this run recorded shows (``evidence.answer_unsupported``
    with ``recorded``): a record, a change of a record, an amount, an approver. None for an audit. A
    check on the gate's record of sends shows what the run sent, never that a system holds a record
    (``evidence.of_sends_only``): its values support no record the words name — what was sent and
    applied is in ``recorded`` as code's read-back shows it."""
    from taskcrew.crew.evidence import SENDS_SOURCE, answer_unsupported, same_source

    if state.mode == "audit" or not state.steps_done:
        return None
    checks = [
        c
        for c in (state.verdicts[-1].checks if state.verdicts else [])
        if not same_source(c.source, {SENDS_SOURCE})
    ]
    return answer_unsupported(state.steps_done[-1].report.summary, checks, recorded(ctx))


def write_report(ctx: RunContext, state: RunState, screenshot: Path | None) -> Path:
    from taskcrew.demo import demo_report  # a demo's run (its folder marked so) is labelled as written

    path = ctx.run_dir / "report.md"
    path.write_text(
        demo_report(ctx.run_dir, ctx.redact(render_report(ctx, state, screenshot))), encoding="utf-8"
    )
    return path
