"""Replay an accepted routine in code, inside the run's Flow, through the run's own gate.

The file work reads the document the rule picks with the issuer's template; the browser steps find
their targets by role, accessible name and form field name in the page as it is now, and act
through the run's worker session — the same policy gate (the person approves the exact payload),
the same vault (secrets typed from placeholders), the same intent log. Known obstacles are dealt
with in code: a login form (sign in from placeholders), a notice overlay, a session that expired on
save (sign in, enter the form again), a 503 (enter it again; the intent log reads the system back
before anything is sent twice). Anything else — a target that is not there, a page that is not the
expected one, values that fail their checks, a save that would send another field set or query,
by another method, to another path or system than the review covered (``off_review``: blocked at
the gate, nobody asked), a version that records no field set for its save, an unexpected error —
hands the run to the agent with the routine's remaining steps as context. A rejection by the person ends the run 'rejected'.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from taskcrew.crew.models import Citation, Plan, PlanStep, RunState, StepRecord, StepReport
from taskcrew.crew.trace import ControlEvent, PlanMade
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import (
    BrowserStep,
    PageExpect,
    Routine,
    Sends,
    Target,
    Unfilled,
    fill,
    name_differs,
    name_key,
    query_names,
    resembles,
)
from taskcrew.routines.template import not_owed

PAGE_TRIES = 3
FIELD_KINDS = ("type", "select", "check")


class Fallback(Exception):
    """The routine cannot go on; the message says why (for the agent and the routine's record)."""

    def __init__(self, reason: str, remaining: list[str], new_issuer: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.remaining = remaining
        self.new_issuer = new_issuer  # no template for this issuer yet: not a sign the routine is broken


class Rejected(Exception):
    pass


def _norm(text: str) -> str:
    return " ".join(text.replace("*", " ").split()).casefold()


def resolve(observation: Any, target: Target) -> Any:
    """The one element of the page that is ``target``: same role and the same accessible name (as
    normalised: case, spacing, the required-field "*"), and for a field the same form field name
    too. None when there is none or more than one. A field whose form field name is there but whose
    label changed since the review raises Fallback naming both labels (``remaining`` left for the
    caller to fill): what the person reviewed is not what the page now asks for, so the agent
    takes over rather than typing into a field that may now mean something else."""
    found = [e for e in observation.elements if e.role == target.role]
    if target.field is not None:
        found = [e for e in found if e.field is not None and e.field.name == target.field]
        named = [e for e in found if _norm(e.name) == _norm(target.name)]
        if len(found) == 1 and not named:
            raise Fallback(
                f"field {target.field} is now labelled {found[0].name!r}, not {target.name!r} as reviewed "
                f"({target.describe()})",
                [],
            )
        found = named
    else:
        found = [e for e in found if _norm(e.name) == _norm(target.name)]
    return found[0] if len(found) == 1 else None


def _options(element: Any) -> list[str]:
    """A drop-down's choices, one label a value: options with the same value (the same record in a
    "Recently used" group and in "All") are one choice, by its first label."""
    choices: dict[str, str] = {}
    for option in element.field.options or [] if element.field is not None else []:
        choices.setdefault(option.value or option.label, option.label)
    return list(choices.values())


def could_be(element: Any, value: str) -> list[str]:
    """Every option of a drop-down that could be ``value`` (``options_like``)."""
    return options_like(_options(element), value)


def options_like(labels: list[str], value: str) -> list[str]:
    """Every option label that could be ``value``: as normalised (case, spacing, "*") or drawn like
    it (``models.name_key``, the approval's comparison of vendor names too: the same name give or
    take a legal form, case, punctuation and look-alike letters — "lnitech" beside Initech — never a
    longer or shorter name, another company's: "Northwind Traders" is no option for Northwind
    Traders Logistics). The one rule for a replay's drop-down and the scripted models'
    (``eval.kit.choose_option``): more than one is a choice not to be guessed."""
    key = name_key(value)
    return [o for o in labels if _norm(o) == _norm(value) or (key and name_key(o) == key)]


def choose_option(element: Any, value: str) -> str | None:
    """The option of a drop-down that is ``value``: the one option that could be it (``could_be``).
    None when none could, or when several could — "NORTHWIND TRADERS" or "Northwind  Traders" beside
    Northwind Traders, a record named "Bharat Components" beside Bharat Components Pvt. Ltd.: which
    record is meant is not guessed, however the labels differ and whichever the system lists first."""
    could = could_be(element, value)
    return could[0] if len(could) == 1 else None


def no_option(element: Any, value: str) -> str:
    """Why ``choose_option`` chose none: the options that could each be ``value``, or else the
    options whose names differ from it."""
    could = could_be(element, value)
    if len(could) > 1:
        return (
            f"has {len(could)} options that could be {value!r} ({'; '.join(repr(o) for o in could)}): the "
            "routine does not guess which record is meant; choose the right one, or ask, and check why "
            "the others are there"
        )
    near = [name_differs(value, o) for o in _options(element) if resembles(value, o)]
    return f"has no option for {value!r}" + (f" ({'; '.join(near[:3])})" if near else "")


def on_page(observation: Any, expect: PageExpect | None) -> bool:
    if expect is None:
        return True
    if not re.fullmatch(expect.path, _path(observation.url)):
        return False
    return all(_norm(words) in _norm(observation.text) for words in expect.shows)


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/") or "/"


def off_review(sends: Sends, submission: Any, system: str | None = None) -> str | None:
    """Why what the gate is about to send (``policy.Submission``) is not what an approval step was
    reviewed to send (``sends``), or None when it is. Everything the request carries that the review
    could see is held to it: the same field names in its body, every one — a field the review never
    saw (a release's new "Purchase order", a box the page ticks, a default it fills) is sent with
    whatever the page put in it, and one gone is a form that changed — and the same parameter names
    in its address's query (``models.query_names``: an action that became
    ``/bills/new?pay_now=1&approver=auto`` carries data as surely as a field does), by the same
    method, to the same path, on the routine's ``system`` (its address: the same scheme, host and
    port, as ``PolicyConfig.for_url`` allows them; another host the gate allows, the intranet, is
    not where the review's save went). Names only: values, a record's id in the query too, are the
    person's to approve. A fragment is never sent, so it is not compared. A version learned before
    a save's query was recorded (``Sends.query`` None) cannot show any query was there: a save with
    one is off its review."""
    sent = submission.sent if submission.sent is not None else [(f.name, f.value) for f in submission.fields]
    said = _names("field(s)", {n for n, _ in sent}, set(sends.fields))
    query = set(query_names(submission.url))
    if sends.query is not None:
        said += _names("query parameter(s)", query, set(sends.query))
    elif query:
        said.append(
            f"query parameter(s) {', '.join(sorted(query))}, which the review cannot show were there (the "
            "version was learned before routines recorded a save's query)"
        )
    if (method := submission.method.upper()) != sends.method:
        said.append(f"by {method}, not {sends.method}")
    if system is not None and (elsewhere := _elsewhere(submission.url, system)):
        said.append(elsewhere)
    path = _path(submission.url)
    if not re.fullmatch(sends.path, path):
        said.append(f"to {path}, not {sends.path}")
    return "; ".join(said) or None


def _names(what: str, sent: set[str], reviewed: set[str]) -> list[str]:
    """The names ``sent`` that the review never saw, and those it saw that are gone."""
    said = []
    if new := sorted(sent - reviewed):
        said.append(f"{what} the review never saw: {', '.join(new)}")
    if gone := sorted(reviewed - sent):
        said.append(f"no {what} {', '.join(gone)}, which the review saw")
    return said


def _elsewhere(url: str, system: str) -> str | None:
    """Why ``url`` is not on ``system`` (the same scheme, and the host and port as the gate reads
    them: ``policy.check_url`` against the system alone), or None when it is."""
    from taskcrew.tools.policy import PolicyConfig, check_url

    there = urlsplit(url)
    on_system = check_url(url, PolicyConfig.for_url(system, blocked_paths=[])).allowed
    if on_system and there.scheme.lower() == urlsplit(system).scheme.lower():
        return None
    return f"to {there.scheme}://{there.netloc}, not the routine's system ({system})"


def _answers(result: Any) -> str:
    """What the gate says became of a click's submissions, for a fallback's reason."""
    sent = getattr(result, "submissions", None)
    if sent is None:
        return ""
    if not sent:
        return "; the click sent nothing to the system"
    said = (f"{s.result} (HTTP {s.http_status})" if s.http_status else s.result for s in sent)
    return "; the gate classified the save: " + ", ".join(said)


def _unavailable(result_or_obs: Any) -> bool:
    status = getattr(result_or_obs, "http_status", None)
    obs = getattr(result_or_obs, "observation", result_or_obs)
    return (status or 0) >= 500 or "temporarily unavailable" in (obs.text or "").casefold()


class Replayer:
    """One replay of ``routine`` with ``params``; called by the Flow instead of the first plan."""

    def __init__(self, routine: Routine, params: dict[str, str], read_back: Any = None) -> None:
        self.routine = routine
        self.params = params
        self.read_back = read_back  # tools.readback.ReadBackRules for the run's own intent log
        self.outcome: str = "not_started"  # replayed | fell_back | rejected
        self.reason = ""
        self.at_step = ""
        self.new_issuer = False
        self.unreviewed = ""  # why the gate refused the approval step's save (``_act``)

    # ------------------------------------------------------------------ the Flow's entry point
    def __call__(self, ctx: Any, state: RunState) -> bool:
        from taskcrew.crew import steps

        plan = self._plan(ctx)
        state.plan, state.plan_version = plan, 1
        ctx.tracer.emit(PlanMade(plan=plan, replan=0, reason=f"replaying routine {self._label()}"))
        ctx.tracer.emit(ControlEvent(action="routine:replay", reason=f"{self._label()} with {self.params}"))
        try:
            found = self._files(ctx, state)
            self._browser(ctx, state, found)
        except Rejected as stop:
            self.outcome, self.reason = "rejected", str(stop)
            with steps.account_open(ctx) as still_open:  # not once the run was finished (interrupted)
                if still_open:
                    state.outcome, state.outcome_reason = "rejected", f"a person rejected a change: {stop}"
                    ctx.tracer.emit(ControlEvent(action="end:rejected", reason=state.outcome_reason))
            return True
        except Fallback as fell:
            self.outcome, self.reason, self.new_issuer = "fell_back", fell.reason, fell.new_issuer
            remaining = "\n".join(f"- {s}" for s in fell.remaining) or "- (none)"
            ctx.notes.append(
                f"The routine {self._label()} stopped: {fell.reason}. Its remaining steps were:\n{remaining}"
            )
            ctx.tracer.emit(ControlEvent(action="routine:fallback", reason=fell.reason))
            steps.plan(
                ctx,
                state,
                reason=f"the stored routine {self._label()} could not go on: {fell.reason}. "
                f"Its remaining steps were:\n{remaining}",
            )
            return True
        self.outcome = "replayed"
        state.claim = "done"
        ctx.tracer.emit(
            ControlEvent(action="routine:replayed", reason=f"{self._label()}: every step matched")
        )
        return True

    def result(self, state: Any) -> tuple[str, str]:
        """(outcome, reason) of this replay as the routine's record and the run count it: "replayed"
        only when the independent verifier confirmed it the first time it checked. A replay it did
        not confirm fell back, with its reason, whatever a rework made of the run after: the agent
        (planner and workers) did the chore then, so the run reflects and teaches as the agent's."""
        verdicts = getattr(state, "verdicts", None) or []
        if self.outcome == "replayed" and verdicts and not verdicts[0].verified:
            return "fell_back", f"the independent verifier did not confirm the replay: {verdicts[0].reason}"
        return self.outcome, self.reason

    def _label(self) -> str:
        return f"{self.routine.name} v{self.routine.version}"

    def _plan(self, ctx: Any) -> Plan:
        vendor = ", ".join(self.params.values())
        plan_steps = [
            PlanStep(
                role="file_reader",
                title=f"Find and read the document for {vendor} (routine)",
                instructions="code",
            ),
            PlanStep(
                role="browser_operator",
                title=f"Carry out {self.routine.name} in the browser (routine)",
                instructions="code",
            ),
        ]
        return Plan(  # the recipe's own criteria (hooks.attach): the verifier checks the system's pages
            goal=f"{self.routine.summary or self.routine.name} ({vendor})",
            success_criteria=list(ctx.criteria),
            steps=plan_steps,
            changes_data=True,
        ).keeping(ctx.criteria)

    def _record(self, ctx: Any, state: RunState, index: int, report: StepReport) -> None:
        from taskcrew.crew import steps

        assert state.plan is not None
        step = state.plan.steps[index]
        record = StepRecord(index=index, role=step.role, title=step.title, plan_version=1, report=report)
        state.steps_done.append(record)
        steps.trace_step(ctx, record)

    def _resolve(self, observation: Any, target: Target, at: int) -> Any:
        """``resolve``, a relabelled field handing over with the routine's remaining steps."""
        try:
            return resolve(observation, target)
        except Fallback as relabelled:
            raise Fallback(relabelled.reason, self._remaining(at)) from None

    def _remaining(self, index: int) -> list[str]:
        return [s.describe() for s in self.routine.browser[index:]]

    # ------------------------------------------------------------------ files
    def _files(self, ctx: Any, state: RunState) -> Any:
        self.at_step = "files"
        try:
            found = find_document(self.routine, self.params, ctx.toolbox.files)
        except FileStepFailed as exc:
            raise Fallback(
                f"file work: {exc}", ["find and read the document", *self._remaining(0)], exc.new_issuer
            ) from exc
        lacking = [n for n in self.routine.uses() if n not in found.values]
        if lacking:  # a template kept from before a heal that added a value: never typed as "{name}"
            it = "it" if len(lacking) == 1 else "them"
            raise Fallback(
                f"file work: the routine's template for {', '.join(self.params.values())} does not read "
                f"{', '.join(lacking)} from {found.path}, and its steps enter {it} (a heal learned {it} "
                "from another issuer's invoice, most likely): the agent does the chore, and its verified "
                "run teaches this issuer's template",
                ["find and read the document", *self._remaining(0)],
            )
        template = self.routine.template_for(fill(self.routine.documents.search, self.params))
        if template is not None and (why := not_owed(template, found.values)):
            raise Fallback(
                f"file work: {found.path}: {why}; the agent and the person decide what to do with it",
                ["find and read the document", *self._remaining(0)],
            )
        values = {k: v for k, v in found.values.items() if k in self.routine.values}
        summary = (
            f"{found.path}: "
            + ", ".join(f"{k} {v}" for k, v in values.items())
            + " (read by the routine's template; checks passed)"
        )
        report = StepReport(
            status="done",
            summary=summary,
            data={**values, "file": found.path},
            sources=[Citation(source=found.path, quote=found.quote[:500])],
        )
        self._record(ctx, state, 0, report)
        found.values = values
        return found

    # ------------------------------------------------------------------ browser
    def _browser(self, ctx: Any, state: RunState, found: Any) -> None:
        browser = ctx.toolbox.browser
        if browser is None:
            raise Fallback("this run has no browser", self._remaining(0))
        session = browser.worker
        policy = browser.policy
        attached = False
        if getattr(policy, "intents", None) is None and self.read_back is not None:
            from taskcrew.tools.intents import IntentLog

            policy.intents = IntentLog(  # one run's, keyed by its policy's one rules snapshot
                _MemorySink(),
                f"run:{ctx.run_id}",
                self.read_back,
                policy.rules,
                ask_again=policy.ask_to_send_again,
            )
            attached = True
        try:
            page = self._drive(ctx, session, found.values)
        finally:
            if attached:
                policy.intents = None
        report = StepReport(
            status="done",
            summary=f"Carried out {self._label()} in the browser: now on {page.title} ({page.url})"
            + (f"; the page says: {' / '.join(page.messages)[:300]}" if page.messages else ""),
            data={"page": page.url},
            sources=[Citation(source=page.url, quote=(page.title or page.url)[:200])],
        )
        self._record(ctx, state, 1, report)

    def _fill(self, text: str, values: dict[str, str], erp: str, *, url: bool = False, at: int = 0) -> str:
        """A step's text with the parameters (first), the document's values and the system filled
        in (``models.fill``: one pass; in an address each value percent-encoded). A placeholder
        with no value hands over to the agent (from step ``at``): it is never typed as it is."""
        try:
            return fill(text, {**values, **self.params}, system=erp, url=url)
        except Unfilled as exc:
            raise Fallback(str(exc), self._remaining(at)) from None

    def _erp(self, ctx: Any) -> str:
        systems = ctx.toolbox.systems
        chosen = next((s for s in systems if s.name == self.routine.system), systems[0] if systems else None)
        if chosen is None:
            raise Fallback("the run has no system to work in", self._remaining(0))
        return chosen.url.rstrip("/")

    def _drive(self, ctx: Any, session: Any, values: dict[str, str]) -> Any:
        erp = self._erp(ctx)
        steps = self.routine.browser
        unrecorded = next((s for s in steps if s.approval and s.sends is None), None)
        if unrecorded is not None:  # accepted before routines recorded it: nothing to hold a save to
            raise Fallback(
                f"{self._label()} does not record what its save sends ({unrecorded.describe()}): it was "
                "learned before routines recorded the fields a save sends, so a field the review never "
                "saw would be sent unchecked. The agent does the chore, and its verified run proposes "
                "a version that records them, for review",
                self._remaining(0),
            )
        form_start = max(i for i, s in enumerate(steps) if s.kind == "open")
        redo = {"expired_session": 0, "unavailable": 0}
        i = 0
        obs = None
        while i < len(steps):
            step = steps[i]
            self.at_step = step.describe()
            if step.kind == "open":
                url = self._fill(step.url or "", values, erp, url=True, at=i)
                obs = self._open(session, url, i)
                if not on_page(obs, step.expect):
                    raise Fallback(
                        f"{url} opened {obs.url}, not the page the routine expects", self._remaining(i)
                    )
                for text in step.absent:
                    shown = self._fill(text, values, erp, at=i)
                    if re.search(rf"(?<![\w-]){re.escape(shown)}(?![\w-])", obs.text):
                        raise Fallback(
                            f"{obs.url} already shows {shown}: it may be entered already", self._remaining(i)
                        )
                i += 1
                continue
            assert obs is not None
            obs = self._clear(session, obs, i)
            if not on_page(obs, step.expect):
                raise Fallback(
                    f"the page is {obs.url}, not the one step {step.describe()!r} expects", self._remaining(i)
                )
            batch = self._batch(steps, i)
            actions = []
            for j in batch:
                element = self._resolve(obs, steps[j].target, j)  # type: ignore[arg-type]
                if element is None:
                    raise Fallback(f"{steps[j].target.describe()} is not on {obs.url}", self._remaining(j))  # type: ignore[union-attr]
                actions.append(self._action(steps[j], element, values, erp, j))
            # a form's fields in one call (one look at the end), held to what its save was reviewed to send
            saving = next((steps[j] for j in batch if steps[j].approval), step)
            result = self._act(session, actions, saving, erp)
            if self.unreviewed:
                raise Fallback(self.unreviewed, self._remaining(i))
            if any(d.outcome == "rejected" for d in result.policy):
                raise Rejected(next(d.message() for d in result.policy if d.outcome == "rejected"))
            after = result.observation
            if step.then is None:
                if not result.ok:
                    at = i + max(len(result.ran) - 1, 0)
                    raise Fallback(
                        f"{steps[min(at, len(steps) - 1)].describe()}: {self._failure(result)}",
                        self._remaining(at),
                    )
                obs = after
                i += len(result.ran) or 1  # the page changed mid-form: the rest is found on the new page
                continue
            kind = self._after_submit(obs, after, result, step)
            if kind == "done":
                obs = after
                i += 1
                continue
            obstacle = next((o for o in self.routine.obstacles if o.kind == kind), None)
            if kind in redo and obstacle is not None:
                limit = obstacle.retries
                if redo[kind] < limit:
                    redo[kind] += 1
                    ctx.tracer.emit(
                        ControlEvent(
                            action=f"routine:{kind}", reason=f"entering the form again ({redo[kind]}/{limit})"
                        )
                    )
                    if kind == "expired_session":
                        self._clear(session, after, i)
                    i = form_start
                    continue
            raise Fallback(
                f"after {step.describe()} the page is {after.url} ({after.title}), "
                + (
                    "the form's own page again"
                    if _path(after.url) == _path(obs.url)
                    else f"not {step.then.path}"
                )
                + (f": {' / '.join(after.messages)[:300]}" if after.messages else "")
                + ("" if result.ok else f"; {self._failure(result)}")
                + _answers(result),
                self._remaining(i),
            )
        assert obs is not None
        return obs

    def _act(self, session: Any, actions: list[Any], step: BrowserStep, system: str) -> Any:
        """``actions`` done; for an approval step, with the gate holding what it is about to send
        to what the step was reviewed to send on the routine's ``system`` (``off_review``):
        anything else is blocked before a person is asked, and ``unreviewed`` says why (the replay
        then hands over, like a field relabelled since the review)."""
        if not step.approval or step.sends is None:
            return session.act(actions)
        policy, sends = session.policy, step.sends  # a session is always behind a gate

        def check(submission: Any) -> str | None:
            off = off_review(sends, submission, system)
            if off is not None and not self.unreviewed:
                self.unreviewed = (
                    f"{step.describe()}: the save would send {off} — not what {self._label()} was "
                    "reviewed to send, so the gate did not send it and asked no one. The agent does "
                    "the chore, and its verified run proposes a version for review"
                )
            return off and f"not what the routine {self._label()} was reviewed to send: {off}"

        policy.expected_send = check
        try:
            return session.act(actions)
        finally:
            policy.expected_send = None

    @staticmethod
    def _batch(steps: list[BrowserStep], i: int) -> list[int]:
        """Step ``i`` and the field steps after it on the same page, to be done in one call: typing,
        choosing and ticking (a click, a submission or a new page ends the batch)."""
        if steps[i].kind not in FIELD_KINDS or steps[i].then is not None:
            return [i]
        out = [i]
        for j in range(i + 1, len(steps)):
            if (
                steps[j].kind not in FIELD_KINDS
                or steps[j].then is not None
                or steps[j].expect != steps[i].expect
            ):
                break
            out.append(j)
        return out

    def _after_submit(self, before: Any, after: Any, result: Any, step: BrowserStep) -> str:
        """What a save led to. "done" only when the gate classified what it sent as saved
        (``tools/submissions.classify``) and the page is the one the step leads to, not the form's
        own page (``before``, where the click was): a refused save — a duplicate, a validation
        error, "possible duplicate, please confirm" — comes back on the form, whatever the learned
        page pattern also matches. Else "unexpected", unless it is a known obstacle."""
        if any(o.kind == "login_form" for o in after.obstacles):
            return "expired_session"
        if _unavailable(result):
            return "unavailable"
        sent = getattr(result, "submissions", None)  # None: an act result that does not say
        if sent is not None and (not sent or any(s.result != "saved" for s in sent)):
            return "unexpected"
        if result.ok and on_page(after, step.then) and _path(after.url) != _path(before.url):
            return "done"
        return "unexpected"

    def _failure(self, result: Any) -> str:
        messages = [r.message for r in result.ran if not r.ok] + list(result.errors)
        return "; ".join(m for m in messages if m)[:400] or "the action did not complete"

    def _action(self, step: BrowserStep, element: Any, values: dict[str, str], erp: str, i: int) -> Any:
        from taskcrew.tools.browser import Click, Select, SetChecked, Type

        if step.kind == "click":
            return Click(index=element.index)
        if step.kind == "check":
            return SetChecked(action="check", index=element.index)
        value = self._fill(step.value or "", values, erp, at=i)
        if step.kind == "select":
            option = choose_option(element, value)
            if option is None:
                raise Fallback(f"{step.target.describe()} {no_option(element, value)}", self._remaining(i))  # type: ignore[union-attr]
            return Select(index=element.index, option=option)
        return Type(index=element.index, text=value, clear=True)

    def _open(self, session: Any, url: str, i: int) -> Any:
        from taskcrew.tools.browser import Navigate

        for _ in range(PAGE_TRIES):
            result = session.act([Navigate(url=url)])
            obs = self._clear(session, result.observation, i)
            if not _unavailable(obs) and not (result.http_status or 0) >= 500:
                if urlsplit(obs.url).path.rstrip("/") == urlsplit(url).path.rstrip("/"):
                    return obs
                continue  # a login sent it elsewhere: open it again
            if self.routine.obstacle("unavailable") is None:
                raise Fallback(f"{url} answered that the service is unavailable", self._remaining(i))
        raise Fallback(f"{url} could not be opened in {PAGE_TRIES} tries", self._remaining(i))

    def _clear(self, session: Any, obs: Any, i: int) -> Any:
        """Deal with the known obstacles on the page: sign in, close a notice. The page after."""
        from taskcrew.tools.browser import DismissModal

        for _ in range(4):
            kinds = {o.kind for o in obs.obstacles}
            if "login_form" in kinds:
                login = self.routine.obstacle("login")
                if login is None:
                    raise Fallback(
                        "the system asks to sign in and the routine does not know how", self._remaining(i)
                    )
                actions = []
                for step in login.steps:
                    assert step.target is not None
                    element = self._resolve(obs, step.target, i)
                    if element is None:
                        raise Fallback(
                            f"the sign-in page has no {step.target.describe()}", self._remaining(i)
                        )
                    actions.append(self._action(step, element, {}, "", i))
                result = session.act(actions)
                obs = result.observation
                if not result.ok:
                    raise Fallback(f"signing in failed: {self._failure(result)}", self._remaining(i))
                continue
            if "modal" in kinds:
                if self.routine.obstacle("modal") is None:
                    raise Fallback(
                        "a notice covers the page and the routine does not know it", self._remaining(i)
                    )
                obs = session.act([DismissModal()]).observation
                continue
            return obs
        raise Fallback("the page keeps showing obstacles", self._remaining(i))


class _MemorySink:
    """The intent sink of a plain run's replay (a durable job brings its own, in the job store)."""

    def __init__(self) -> None:
        self._records: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        return self._records.get(key)

    def put(self, record: Any) -> None:
        self._records[record.key] = record

    def claim(self, record: Any) -> Any:
        return None if self._records.setdefault(record.key, record) is record else self._records[record.key]
