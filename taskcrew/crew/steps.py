"""What each stage of the Flow does: build the compact prompt, run the role, check its answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TypeVar

from crewai.tools import BaseTool
from pydantic import BaseModel

from taskcrew.crew.citations import check_citations, lines_with
from taskcrew.crew.context import KnowledgeContext, RunContext
from taskcrew.crew.evidence import SENDS_SOURCE, answer_unsupported, check_verdict
from taskcrew.crew.guard import Budget, GuardedTool
from taskcrew.crew.models import (
    CriterionCheck,
    Outcome,
    Plan,
    Reflection,
    RunState,
    StepRecord,
    StepReport,
    Verdict,
)
from taskcrew.crew.outcome import ReadBack, answer, decide
from taskcrew.crew.report import unsupported, write_report
from taskcrew.crew.runner import AgentTaskError, run_role
from taskcrew.crew.stages import read_from
from taskcrew.crew.stopping import Seal
from taskcrew.crew.trace import (
    ControlEvent,
    KnowledgeUsed,
    PlanMade,
    ReflectionEvent,
    RunFinished,
    StepEvent,
    VerdictEvent,
)
from taskcrew.roles import RoleName, TaskName

T = TypeVar("T", bound=BaseModel)
RESULTS_IN_FULL = 4
NOTES_SHOWN = 12
TRAIL_BUDGET = 6000  # characters of step summaries the reflector is shown
NONE = "(none)"


def _bullets(items: list[str]) -> str:
    """One bullet per item (an item that already starts with a bullet keeps one, not two)."""
    return "\n".join(f"- {item.strip().removeprefix('- ')}" for item in items) if items else NONE


def _results(state: RunState) -> str:
    """Earlier steps: the latest few in full, older ones one line each (bounded)."""
    lines = []
    records = state.steps_done
    for i, record in enumerate(records):
        head = f"Step {record.index + 1} [{record.role}] {record.title} → {record.report.status}"
        data = "; ".join(f"{k}={v}" for k, v in record.report.data.items())
        if i < len(records) - RESULTS_IN_FULL:  # older: one line, but the values stay available
            summary, data = clip(record.report.summary, 150), clip(data, 400)
        else:
            summary = record.report.summary
        lines.append(f"- {head}: {summary}" + (f"\n  data: {data}" if data else ""))
        if record.report.caveats:
            lines.append("  caveats: " + "; ".join(record.report.caveats)[:400])
    return "\n".join(lines) if lines else NONE


def _guarded(ctx: RunContext, role: RoleName, budget: Budget) -> list[BaseTool]:
    return [
        GuardedTool.wrap(tool, role=role, budget=budget, tracer=ctx.tracer, redact=ctx.redact)
        for tool in ctx.toolbox.tools_for(role)
    ]


def _ask(
    ctx: RunContext,
    role: RoleName,
    which: TaskName,
    output: type[T],
    /,
    *,
    tools: list[BaseTool] | None = None,
    **values: object,
) -> T:
    """Render a task text for a role, run it as one bounded crewAI task, return the typed answer."""
    description, expected = ctx.roles.render(which, **values)
    return run_role(
        ctx.roles.agents[role],
        llm=ctx.llm_for(role),
        description=description,
        expected_output=expected,
        output=output,
        tools=tools,
        repair_attempts=ctx.limits.repair_attempts,
    )


def _brief(ctx: RunContext) -> KnowledgeContext | None:
    """The knowledge store's brief for the run's task, as every prompt that quotes it gets it (None:
    no store). Every brief built is recorded (``KnowledgeUsed``), a re-plan's and the verifier's too,
    not only the first plan's: one that quoted documents makes what the run learns untrusted
    (``stages.read_from``)."""
    if ctx.knowledge is None:
        return None
    knowledge = ctx.knowledge.context_for(ctx.task)
    ctx.tracer.emit(
        KnowledgeUsed(snippets=knowledge.procedures + knowledge.facts, procedures=len(knowledge.procedures))
    )
    return knowledge


def plan(ctx: RunContext, state: RunState, reason: str = "") -> Plan:
    knowledge = _brief(ctx)
    replan_context = ""
    if reason:
        replan_context = (
            "\nTHIS IS A REPLAN. The previous plan could not be completed.\n"
            f"What went wrong: {reason}\n"
            f"What was done so far (results stay valid unless said otherwise):\n{_results(state)}\n"
            f"Run notes:\n{_bullets(ctx.notes[-NOTES_SHOWN:])}\n"
            "Plan only the remaining work, and a different approach where the old one failed.\n"
        )
    task = ctx.task
    if ctx.criteria or ctx.read_only:
        task += "\nGiven with the request (code keeps these in every plan):\n" + _bullets(
            [*ctx.criteria, *(["Read only: nothing may be changed in any system."] if ctx.read_only else [])]
        )
    result = _ask(
        ctx,
        "planner",
        "plan",
        Plan,
        task=task,
        procedures=_bullets(knowledge.procedures_for(set())) if knowledge else NONE,  # it has no tools
        facts=_bullets(knowledge.facts) if knowledge else NONE,
        environment=ctx.toolbox.environment(),
        replan_context=replan_context,
    ).keeping(ctx.criteria, read_only=ctx.read_only)
    state.plan = result
    state.plan_version += 1
    ctx.tracer.emit(PlanMade(plan=result, replan=state.plan_version - 1, reason=reason))
    return result


def _plan_view(plan: Plan, current: int) -> str:
    def mark(i: int) -> str:
        return "✓" if i < current else ("→" if i == current else " ")

    return "\n".join(f"{mark(i)} {i + 1}. [{s.role}] {s.title}" for i, s in enumerate(plan.steps))


def work_step(ctx: RunContext, state: RunState, index: int) -> StepReport:
    assert state.plan is not None
    step = state.plan.steps[index]
    ctx.budget.start_step(len(state.steps_done) + 1)
    feedback = ""
    if ctx.notes and ctx.notes[-1].startswith("Guidance from a person"):
        feedback = f"\n{ctx.notes[-1]}\n"
    values = dict(
        step_number=index + 1,
        step_count=len(state.plan.steps),
        goal=state.plan.goal,
        criteria=_bullets(state.plan.success_criteria),
        plan=_plan_view(state.plan, index),
        results=_results(state),
        notes=_bullets(ctx.notes[-NOTES_SHOWN:]),
        feedback=feedback,
        title=step.title,
        instructions=step.instructions,
        done_when=step.done_when or "the step's instructions are carried out",
        environment=ctx.toolbox.environment(),
    )
    try:
        report = _ask(
            ctx, step.role, "work_step", StepReport, tools=_guarded(ctx, step.role, ctx.budget), **values
        )
    except AgentTaskError as exc:
        report = StepReport(status="failed", summary=f"the step could not be finished: {exc}"[:2900])
    # a line copied by code is quoted as the model reads the page: the run's hidden values masked
    report = resolve_citations(
        report, lambda source: ctx.redact(ctx.toolbox.source_text(source) or "") or None
    )
    if ctx.budget.exhausted and report.status == "done":
        report = report.model_copy(update={"status": "failed"})
    return report


def resolve_citations(report: StepReport, read: Callable[[str], str | None]) -> StepReport:
    """Citations that point (``find``) get the whole line copied from the source by code.

    Words the source does not contain stay as the quote, so the citation check flags them."""
    if not any(c.find for c in report.sources):
        return report
    sources = []
    for citation in report.sources:
        if citation.find:
            text = read(citation.source)
            lines = lines_with(citation.find, [text]) if text else []
            quote = lines[0][:500] if lines else citation.quote or citation.find
            citation = citation.model_copy(update={"quote": quote})
        sources.append(citation)
    return report.model_copy(update={"sources": sources})


def trace_step(ctx: RunContext, record: StepRecord) -> None:
    ctx.tracer.emit(
        StepEvent(
            index=record.index,
            role=record.role,
            title=record.title,
            attempt=record.plan_version,
            report=record.report,
        )
    )


def verify(ctx: RunContext, state: RunState, given: dict[str, str] | None = None) -> Verdict:
    """The verifier's verdict, checked by code (``take_verdict`` records it). ``given``: sources code
    gives an audit besides what its verifier opens (``recorded_by_code``)."""
    assert state.plan is not None
    ctx.toolbox.begin_verification()
    changes = recorded_by_code(ctx, state, given)
    budget = Budget(max_steps=ctx.roles.agents["verifier"].max_iter * 3, failure_budget=6)
    budget.start_step(None)
    claim = (
        "nothing needed to be done: the desired state already existed"
        if state.claim == "nothing_to_do"
        else "the task is complete"
    )
    knowledge = _brief(ctx)
    tools = _guarded(ctx, "verifier", budget)
    verdict = _ask(
        ctx,
        "verifier",
        "verify",
        Verdict,
        tools=tools,
        procedures=_bullets(knowledge.procedures_for({t.name for t in tools})) if knowledge else NONE,
        claim=claim,
        task=ctx.task,
        criteria=_bullets(state.plan.success_criteria),
        worker_summary=_results(state),
        environment=ctx.toolbox.environment(),
        changes=changes,
    )
    facts = ctx.checked_facts()  # as the verifier was given them (``before_and_after``)
    verdict = check_verdict(
        verdict,
        state.plan,
        ctx.toolbox.visited_sources(),
        ctx.toolbox.sources.texts(),
        systems=[(s.name, s.url) for s in ctx.toolbox.systems],
        # a plan's "changes nothing" is a model's word: a send, or an audit's claim, is about systems
        # (and a criterion about a system's state is read on it whatever this says: evidence._checked)
        on_systems=state.plan.changes_data or state.mode == "audit" or bool(facts.submissions),
        applied=facts.applied_lines(),
    )
    return check_cited_facts(verdict, state, ctx.toolbox.source_text, ctx.reveal)


def take_verdict(ctx: RunContext, state: RunState, verdict: Verdict) -> bool:
    """Record a verdict in the run's account (and its trace); False, recording nothing, once the
    account is finished (``account_open``). The caller holds ``account_open`` to write more with it."""
    with account_open(ctx) as still_open:
        if still_open:
            state.verdicts.append(verdict)
            ctx.tracer.emit(VerdictEvent(attempt=state.verify_attempts, verdict=verdict))
        return still_open


AUDIT_SENDS_NOTHING = (
    "(none of its own: an audit sends nothing, so it has no record of sends and no before/after "
    "difference that could show what a system holds or that nothing was created — check every "
    "criterion, also one that says nothing else was created or changed, on the systems' own pages)"
)


def recorded_by_code(ctx: RunContext, state: RunState, given: dict[str, str] | None = None) -> str:
    """What code recorded, registered as sources the verifier may cite, and shown in its prompt.

    A run: the gate's record of every submission it sent (also when it sent none) and the
    before/after difference of each watched page (``before_and_after``). An audit sends nothing: its
    own record would always read "sent: none" and "prove" that nothing was created, so it has none —
    only what it is ``given`` (an audited past run's sends, under that run's name)."""
    if state.mode == "audit":
        return _register(ctx, dict(given or {}), AUDIT_SENDS_NOTHING)
    return before_and_after(ctx)


def before_and_after(ctx: RunContext) -> str:
    """What code recorded of the run's changes, as sources the verifier may cite: the gate's record
    of every submission it sent (also when it sent none), each send as code's read-back shows it, and
    the before/after difference of each watched page — both from one reading of the pages
    (``read_back``), kept on the run for the verdict's check and what follows."""
    checked = read_back(ctx)
    with account_open(ctx) as still_open:
        if still_open:  # a thread abandoned at an interrupt leaves the finished run's reading
            ctx.read_back = checked
    texts = {SENDS_SOURCE: checked.facts.record()}
    note = ""
    if ctx.snapshot is None or ctx.toolbox.browser is None:
        note = "(no before/after difference: no read-back rule names a page that would show the changes)"
    elif not ctx.snapshot.taken:
        note = "(no before/after difference: this run sent no change, so there is nothing to compare)"
    texts.update(checked.differences)
    return _register(ctx, texts, note)


def read_back(ctx: RunContext) -> ReadBack:
    """Code's read-back of the systems, read now: the before/after difference of each watched page
    (``crew/changes.py``; none when no read-back rule names a page, or this run sent no change) and
    this run's facts with each send as it shows it (``Facts.read_back``). The one place they are
    read: at each verification (``before_and_after``) and at the finish; every reader of the facts
    after it reads this reading (``RunContext.checked_facts``)."""
    gate = ctx.facts()
    snapshot, browser = ctx.snapshot, ctx.toolbox.browser
    differences: dict[str, str] = {}
    if snapshot is not None and browser is not None and snapshot.taken:
        differences = snapshot.differences(browser.page_reader())
    since = snapshot.taken_at if snapshot is not None else None
    return ReadBack(gate, differences, gate.read_back(differences, since))


def _register(ctx: RunContext, texts: dict[str, str], note: str) -> str:
    for source, text in texts.items():
        ctx.toolbox.sources.add(source, text)
    shown = "\n\n".join(f'Source "{source}":\n{text}' for source, text in texts.items())
    return f"{shown}\n\n{note}" if note else shown


def check_cited_facts(
    verdict: Verdict,
    state: RunState,
    read: Callable[[str], str | None],
    reveal: Callable[[str], str] = lambda text: text,
) -> Verdict:
    """Every quote the workers cited must be in its source; a question's answer must cite something,
    and what it states of a record must be what the verified evidence showed (``answer_unsupported``).
    Quotes and sources are compared as the pages held them: ``reveal`` (the run's ``Vault.reveal``)
    puts back a hidden value a quote shows as its placeholder; ``read`` reads the real text. What is
    said of a quote (to the worker, the trace, the report) is the quote as the model wrote it."""
    assert state.plan is not None
    citations = [c for r in state.steps_done for c in r.report.sources]
    revealed = [c.model_copy(update={"quote": reveal(c.quote)}) for c in citations]
    problems = [
        f"{cited.source!r} cannot be read"
        if c.detail == "the cited file cannot be read"
        else f"{cited.source!r} does not contain the quoted words {cited.quote!r}"
        for cited, c in zip(citations, check_citations(revealed, read), strict=True)
        if c.status == "not_found"
    ]
    last = state.steps_done[-1].report if state.steps_done else None
    if not state.plan.changes_data and state.claim == "done" and last is not None and not last.sources:
        problems.append("the answer cites no sources: every fact must name the file or page it came from")
    # the answer is what "done, verified" vouches for: its values of a record must be those the
    # verified evidence showed of it (its own citations are only searched across a whole page)
    answered = last is not None and not state.plan.changes_data and state.claim == "done"
    if (
        answered
        and verdict.verified
        and (unsupported := answer_unsupported(last.summary if last else "", verdict.checks))
    ):
        problems.append(unsupported)
    if not problems:
        return verdict
    checks = [
        *verdict.checks,
        *[
            CriterionCheck(
                criterion="Cited facts match their sources", met=False, source="citation check", observed=p
            )
            for p in problems
        ],
    ]
    return Verdict(
        verified=False, checks=checks, reason=f"{verdict.reason} (citation check: {'; '.join(problems)})"
    )


def feedback_from(verdict: Verdict) -> str:
    unmet = [f"{c.criterion}: saw {c.observed} at {c.source}" for c in verdict.checks if not c.met]
    return verdict.reason + ("\nUnmet: " + "; ".join(unmet) if unmet else "")


def clip(text: str, limit: int) -> str:
    """``text`` whole when it fits in ``limit`` characters, else cut at a word boundary, marked "…"."""
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 2)]
    if " " in cut and not text[len(cut)].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + " …"


def reflection_trail(state: RunState, budget: int = TRAIL_BUDGET) -> str:
    """Every step's whole summary for the reflector, within ``budget`` characters: when they do not
    fit, the oldest are shortened first (at word boundaries), the latest (the recovery) kept whole."""
    heads = [f"- [{r.role}] {r.title} → {r.report.status}: " for r in state.steps_done]
    summaries = [" ".join(r.report.summary.split()) for r in state.steps_done]
    for i in range(len(summaries)):
        over = sum(map(len, heads)) + sum(map(len, summaries)) + len(summaries) - budget
        if over <= 0:
            break
        summaries[i] = clip(summaries[i], max(120, len(summaries[i]) - over))
    return "\n".join(h + s for h, s in zip(heads, summaries, strict=True))


class RunVerdict(BaseModel):
    """The final verdict as the knowledge store's grant reads it (verified, run id, task)."""

    verified: bool
    run_id: str
    task: str
    submitted_by: str | None = None


def reflect(ctx: RunContext, state: RunState) -> None:
    if ctx.knowledge is None or not state.verdicts:
        return
    trail = reflection_trail(state)
    warnings = [e.warning for e in ctx.tracer.of_kind("tool_call") if e.warning]
    if warnings:
        trail += "\nWarnings during the run:\n" + _bullets(sorted(set(warnings))[:5])
    try:
        reflection = _ask(
            ctx,
            "reflector",
            "reflect",
            Reflection,
            task=ctx.task,
            outcome=state.outcome,
            trail=trail or NONE,
            known_facts=_bullets(ctx.knowledge.known_facts()[:20]),
        )
    except AgentTaskError as exc:
        ctx.tracer.emit(ReflectionEvent(facts=[], stored=[f"reflection failed: {exc}"]))
        return
    facts = [ctx.redact(f) for f in reflection.facts[:3]]
    final = state.verdicts[-1]
    verdict = RunVerdict(
        verified=final.verified, run_id=ctx.run_id, task=ctx.task, submitted_by=ctx.submitted_by
    )
    sources = read_from(ctx, state)  # untrusted text → proposed facts (all legs of the run)
    with account_open(ctx) as still_open:
        if not still_open:  # the run ended meanwhile (interrupted): its report learned nothing
            return
        stored = ctx.knowledge.learn(facts, verdict, sources) if facts else []
        state.learned = facts
        ctx.tracer.emit(ReflectionEvent(facts=facts, stored=stored))


@contextmanager
def account_open(ctx: RunContext) -> Iterator[bool]:
    """Write to the run's account — its outcome, a verdict, a checkpoint, learned facts — only
    inside this, and only when it yields True. ``finish`` seals the account: after that every write
    is skipped, so a Flow thread abandoned at an interrupt, which finishes its verification after
    the "interrupted" report was written, changes neither that report nor what the run returned."""
    with Seal.of(ctx).open() as still_open:
        yield still_open


def finish(
    ctx: RunContext, state: RunState, ending: tuple[Outcome, str] | None = None, *, at_once: bool = False
) -> RunState:
    """The outcome, the answer and what changed are decided here from facts (``crew/outcome.py``),
    the report is written, and the account is sealed: returned is the finished account, a copy of
    ``state`` no later write reaches. Once per run: a later call (the Flow's thread finishing after
    the run was interrupted) changes nothing and returns the account that stands. ``ending``: how
    the caller ended the run (interrupted, error), written only when the account is still open; a
    run being stopped (``Seal.stop``) ends as its stop says, whoever finishes it. ``at_once``: no
    final screenshot (it waits for the browser): a second Ctrl-C asked to stop now."""
    seal = Seal.of(ctx)
    with seal.finishing() as still_open:
        if not still_open:
            account: RunState = seal.account
            return account
        ending = seal.stopping or ending
        if ending is not None and (state.outcome, state.outcome_reason) != tuple(ending):  # once
            state.outcome, state.outcome_reason = ending  # a Flow thread still going stops at this
            ctx.tracer.emit(ControlEvent(action=f"end:{ending[0]}", reason=ending[1]))
        # first: the browser runs one thing at a time, so a submission still in flight (an
        # interrupted run's) has ended and been recorded before the facts are read
        screenshot = None if at_once else ctx.toolbox.screenshot(ctx.run_dir / "final_page.png")
        # code's read-back has the last word over the gate's reading of an answer: read once more
        # now (not when asked to stop now: it reads the system, as the screenshot waits for the
        # browser), and every reader below — the outcome, the answer, the report — reads this one
        if not at_once:
            with suppress(Exception):  # a browser gone at the end of a crashed run: the last reading stands
                ctx.read_back = read_back(ctx)
        facts = ctx.checked_facts()
        account = state.model_copy(deep=True)
        account.outcome, account.outcome_reason = decide(account, facts)
        account.changed = facts.changed_line()
        account.answer = answer(account, facts)
        # the last step's words in the answer are held to what this run recorded
        if account.answer and (problem := unsupported(ctx, account)):
            account.answer = f"{account.answer} [Not supported by what this run recorded: {problem}]"
        ctx.tracer.emit(
            RunFinished(
                outcome=account.outcome,
                reason=account.outcome_reason,
                changed=account.changed,
                llm_calls=ctx.usage.calls,
                input_tokens=ctx.usage.input_tokens,
                output_tokens=ctx.usage.output_tokens,
                cost_usd=ctx.usage.cost_usd,
                seconds=ctx.elapsed(),
            )
        )
        write_report(ctx, account, screenshot)
        for name in ("outcome", "outcome_reason", "changed", "answer"):
            setattr(state, name, getattr(account, name))
        seal.close(account)
        return account
