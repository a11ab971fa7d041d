"""The machinery of the scripted eval models: recipes, step scripts, and the LLMs that run them.

A *recipe* says how one case is worked: the plan (steps with a role and a title), a *step script*
per step, the audit the verifier runs, and what the reflector keeps. A step script is a generator
that yields tool calls and receives the next model call (with the real tool result in it), and
finally returns the step's JSON answer — the way a model reads each observation before it acts:

    def read(call):
        call = yield tool("search_files", query="Northwind")
        paths = kit.search_paths(call.last_tool_result)
        ...
        return kit.report("done", "...")

The scripted LLMs are plain ``ScriptedLLM``s whose every step is the recipe's dispatcher, so they
record their calls like any test double.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from typing import Any

from taskcrew.crew.models import Plan, PlanStep, Reflection
from taskcrew.crew.scripted import Reply, ScriptedCall, ScriptedLLM, ScriptError, ToolCall
from taskcrew.eval import kit

StepScript = Generator[Reply, ScriptedCall, str]
Policy = Callable[[ScriptedCall], Reply]
MAX_CALLS = 3000  # far above any run's step budget; a runaway script fails instead of hanging


def tool(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args)


def delegate(policy: Policy, call: ScriptedCall) -> StepScript:
    """Run a reactive policy (such as kit.EnterBill) until it gives its final answer."""
    while True:
        reply = policy(call)
        if isinstance(reply, (ToolCall, list)):
            call = yield reply
        else:
            return str(reply)


def stopped(text: str) -> bool:
    """The guard told the model to stop (step budget spent or too many failures in a row)."""
    return "STOP: " in text


class Running:
    """A step script in progress: feeds it each call, turns its return value into the answer."""

    def __init__(self, script: StepScript) -> None:
        self.script = script
        self.started = False

    def __call__(self, call: ScriptedCall) -> Reply:
        if self.started and stopped(call.last_tool_result):
            self.script.close()
            return kit.report("failed", "I had to stop: " + call.last_tool_result.split("STOP: ", 1)[1][:400])
        try:
            reply = self.script.send(call) if self.started else next(self.script)
        except StopIteration as done:
            return str(done.value)
        self.started = True
        return reply


class Step:
    """One plan step: who does it, what it is called, and the script that does it."""

    def __init__(
        self,
        role: str,
        title: str,
        instructions: str,
        run: Callable[[ScriptedCall], StepScript],
        done_when: str = "",
    ) -> None:
        self.role = role
        self.title = title
        self.instructions = instructions
        self.run = run
        self.done_when = done_when

    def plan_step(self) -> PlanStep:
        return PlanStep.model_validate(
            {
                "role": self.role,
                "title": self.title,
                "instructions": self.instructions,
                "done_when": self.done_when,
            }
        )


class Recipe:
    """How one case is worked. Subclasses define ``goal``, ``criteria``, ``steps`` and ``audit``."""

    changes_data = False

    def goal(self) -> str:
        raise NotImplementedError

    def criteria(self) -> list[str]:
        raise NotImplementedError

    def steps(self) -> list[Step]:
        raise NotImplementedError

    def audit(self, call: ScriptedCall) -> StepScript:
        raise NotImplementedError

    def plan(self, call: ScriptedCall) -> Plan:
        """The same plan on a replan: the scripts read earlier results and the person's answers."""
        return Plan(
            goal=self.goal(),
            success_criteria=self.criteria(),
            steps=[s.plan_step() for s in self.steps()],
            changes_data=self.changes_data,
        )

    def step(self, title: str, call: ScriptedCall) -> StepScript:
        for step in self.steps():
            if step.title == title:
                return step.run(call)
        raise ScriptError(f"{type(self).__name__} has no step titled {title!r}")

    def reflect(self, call: ScriptedCall) -> Reflection:
        """Durable lessons only: what the systems did and how it was handled."""
        trail = call.task_text.lower()
        facts = []
        if "session has expired" in trail or "expire" in trail:
            facts.append(
                "Acme Payables can end the session when a bill is saved: log in again and re-enter the whole form."
            )
        if re.search(r"\b503\b", trail) or "temporarily unavailable" in trail:  # not a port like :38503
            facts.append(
                "Acme Payables sometimes answers 503 on save: nothing is saved, so submit the form again."
            )
        return Reflection(facts=facts[:3])


class WorkerBrain:
    """The worker model: planner, file_reader, browser_operator and reflector of one recipe."""

    def __init__(self, recipe: Recipe) -> None:
        self.recipe = recipe
        self.current: Running | None = None

    def __call__(self, call: ScriptedCall) -> Reply:
        if call.role == "planner":
            return self.recipe.plan(call).model_dump_json()
        if call.role == "reflector":
            return self.recipe.reflect(call).model_dump_json()
        if call.role == "direct":  # crewAI forcing a final answer: the step ran out of iterations
            return kit.report("failed", "I ran out of steps before the step was finished.")
        if call.role not in ("file_reader", "browser_operator"):
            raise ScriptError(f"the scripted worker has no part as {call.role!r}")
        if self.current is None or kit.is_first_call(call):
            self.current = Running(self.recipe.step(kit.step_title(call), call))
        return self.current(call)


class AuditorBrain:
    """The verifier model: runs the recipe's audit from a fresh start on every verification."""

    def __init__(self, recipe: Recipe) -> None:
        self.recipe = recipe
        self.current: Running | None = None

    def __call__(self, call: ScriptedCall) -> Reply:
        if call.role == "direct":  # crewAI forcing a final answer: the audit ran out of iterations
            return kit.verdict(
                [("The audit could finish", False, "(none)", "the audit ran out of steps")],
                "The audit ran out of steps before it could check everything.",
            )
        if call.role != "verifier":
            raise ScriptError(f"the scripted auditor only verifies; it was called as {call.role!r}")
        if self.current is None or kit.is_first_call(call):
            self.current = Running(self.recipe.audit(call))
        return self.current(call)


def brain_llm(brain: Policy, model: str) -> ScriptedLLM:
    return ScriptedLLM([brain] * MAX_CALLS, model=model)


# ----------------------------------------------------------------------------- shared moves
def visit(call: ScriptedCall, url: str) -> Generator[Reply, ScriptedCall, ScriptedCall]:
    """Open ``url`` in the browser, logging in, closing overlays and retrying outages on the way.

    Returns the call whose latest tool result shows the page (or the last thing seen).
    """
    call = yield kit.navigate(url)
    call, _ = yield from arrive(call, url, call.last_tool_result)
    return call


def next_browser_step(page: str, url: str) -> ToolCall | None:
    """The browser step that gets from ``page`` (a browser result) to ``url``: log in, close an
    overlay, or navigate again (elsewhere, or an outage); None when ``page`` shows ``url``."""
    if step := kit.login(page) or kit.dismiss_modal(page):
        return step
    target = url.split("://", 1)[-1].split("/", 1)[-1]
    here = kit.page_url(page).split("://", 1)[-1].split("/", 1)[-1]
    outage = "temporarily unavailable" in kit.page_text(page).lower()
    return None if here == target and not outage else kit.navigate(url)


def arrive(
    call: ScriptedCall, url: str, page: str
) -> Generator[Reply, ScriptedCall, tuple[ScriptedCall, str]]:
    """Go on from ``page`` (the latest browser result) until it shows ``url``, at most 6 steps.
    Returns the latest call and the page it shows (or the last thing seen)."""
    for _ in range(6):
        step = next_browser_step(page, url)
        if step is None:
            break
        call = yield step
        page = call.last_tool_result
    return call, page


class Finding:
    """What an audit saw for one thing it checked."""

    def __init__(self, met: bool, source: str, observed: str) -> None:
        self.met = met
        self.source = source
        self.observed = observed


NOTHING_ELSE = re.compile(
    r"\b(no other|nothing else|nothing (?:was|in)|no \w+ (?:was|were))\b.*"
    r"\b(changed|created|entered|modified|deleted|carried out)\b",
    re.IGNORECASE,
)
_SOURCE_BLOCK = re.compile(r'Source "([^"]+)":\n(.*?)(?:\n\n|\Z)', re.DOTALL)


def what_changed(call: ScriptedCall, touched: list[str] | None) -> Finding | None:
    """ "Nothing (else) was changed", checked on what code recorded of the run (the verifier's
    prompt): the before/after difference of the watched page, where every record row added or
    removed must be one of ``touched`` (the records the task was to create or change); in a run
    that sent no change, the network gate's record of the run's sends."""
    from taskcrew.crew.evidence import CHANGES_SOURCE, SENDS_SOURCE, values

    blocks = dict(_SOURCE_BLOCK.findall(call.task_text))
    diff = next(((k, v) for k, v in blocks.items() if k.startswith(CHANGES_SOURCE)), None)
    if diff is not None and touched is not None:
        source, text = diff
        rows = [ln[2:] for ln in text.splitlines() if ln.startswith(("+ ", "- "))]
        records = [r for r in rows if any(re.search(r"[a-z]", v) for v in values(r))]  # an id in it
        keys = {kit.same_key(t) for t in touched}
        others = [r for r in records if not any(kit.same_key(w) in keys for w in re.findall(r"\S+", r))]
        shown = "; ".join(f"“{r}”" for r in records[:4])
        if others:
            # a shared system: a colleague's job may add rows meanwhile. The gate's record says what
            # THIS run sent; when every send is about a touched record, the other rows are not its doing
            mine = _own_sends(blocks.get(SENDS_SOURCE), keys)
            if mine is not None:
                return Finding(True, SENDS_SOURCE, mine)
            return Finding(False, source, f"rows added or removed that the task did not touch: {shown}")
        return Finding(  # whether the touched records are there is the other criteria's job
            True,
            source,
            (f"the only rows added or removed: {shown}" if records else "no record row added or removed")
            + "; every other row unchanged",
        )
    sends = blocks.get(SENDS_SOURCE)
    if sends is not None and diff is None and not touched:
        line = "Data-changing submissions sent: none"
        return Finding(line in sends, SENDS_SOURCE, f"“{line}”" if line in sends else sends[:300])
    return None


def _own_sends(sends: str | None, keys: set[str]) -> str | None:
    """The quoted lines of the gate's record when this run sent something and every send names one
    of the touched records (``keys``); None otherwise."""
    if not sends:
        return None
    lines = [ln for ln in sends.splitlines() if ln.startswith("- ")]
    counted = next(
        (ln for ln in sends.splitlines() if ln.startswith("Data-changing submissions sent:")), None
    )
    if not lines or counted is None:
        return None
    if not all(_names_a_record(ln, keys) for ln in lines):
        return None
    return (
        "; ".join(f"“{ln}”" for ln in [counted, *lines[:4]])
        + ": every send of this run is for the task's record"
    )


def _names_a_record(line: str, keys: set[str]) -> bool:
    """A whole field value (INV/2026/0917) or URL segment (/bills/BILL-0004/pay) of ``line`` is one of
    ``keys`` (a prefix such as INV-20 of INV-2057 is not)."""
    values = re.findall(r"[^\s,=\[\]]+", line)
    return any(kit.same_key(v) in keys for value in values for v in [value, *value.split("/")])


def judge(call: ScriptedCall, findings: list[Finding], reason: str, touched: list[str] | None = None) -> str:
    """A verdict over the plan's criteria: each is met only if everything the audit saw is right.

    The audit checks the claim as a whole (the criteria are a colleague's words); every check cites
    the pages and files the audit itself opened, and a criterion about a system's state cites what
    the audit saw on that system (a page), never a document. "Nothing (else) was changed" cites what
    code recorded of the run (``what_changed``; ``touched``: the records the task was to change).
    """
    from taskcrew.crew.citations import about_system_state

    changes = what_changed(call, touched)
    if changes is not None and not changes.met:
        findings = [*findings, changes]
    ok = bool(findings) and all(f.met for f in findings)
    wrong = [f for f in findings if not f.met]
    pages = [f for f in findings if f.source.startswith(("http://", "https://"))]

    def evidence(criterion: str) -> tuple[str, str]:
        if not findings:
            return "(nothing opened)", "nothing could be observed"
        if wrong:
            return wrong[0].source, "; ".join(f.observed for f in findings)[:1500]
        chosen = pages if pages and about_system_state(criterion, []) else findings
        same = [f.observed for f in chosen if f.source == chosen[0].source]
        return chosen[0].source, "; ".join(same)[:1500]

    def check(criterion: str) -> tuple[str, bool, str, str]:
        if changes is not None and ok and NOTHING_ELSE.search(criterion):
            return (criterion, True, changes.source, changes.observed)
        return (criterion, ok, *evidence(criterion))

    checks = [check(c) for c in kit.criteria(call)] or [
        ("The request was carried out as claimed", ok, *evidence(""))
    ]
    for f in wrong:
        checks.append((f"Observed at {f.source}", False, f.source, f.observed))
    return kit.verdict(checks, reason if ok else f"Not as claimed: {wrong[0].observed}" if wrong else reason)
