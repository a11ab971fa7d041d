"""The run, as a crewAI Flow: plan → work → verify (→ rework, at most N times) → reflect → report.

The Flow only orchestrates. The limits (budgets, replans, reworks) are decided here in code; the
models decide the content of each step. Steps run through ``taskcrew.crew.steps``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from crewai.flow.flow import Flow, listen, or_, router, start
from pydantic import Field

from taskcrew.crew import stages, steps
from taskcrew.crew.context import RunContext
from taskcrew.crew.models import Outcome, RunState, StepRecord, StepThen
from taskcrew.crew.runner import AgentTaskError
from taskcrew.crew.trace import ControlEvent


class TaskFlow(Flow[RunState]):
    suppress_flow_events: bool = True
    # crewAI would otherwise build a LanceDB memory for every flow (20 s of imports, and an
    # embedder that defaults to OpenAI). Learned facts live in taskcrew's own knowledge store.
    _skip_auto_memory: ClassVar[bool] = True
    ctx: Any = Field(default=None, exclude=True)

    @property
    def run(self) -> RunContext:
        return self.ctx

    def _end(self, outcome: Outcome, reason: str) -> None:
        with steps.account_open(self.run) as still_open:
            if still_open:  # else the run was finished meanwhile (interrupted): that account stands
                self.state.outcome = outcome
                self.state.outcome_reason = reason
                self.run.tracer.emit(ControlEvent(action=f"end:{outcome}", reason=reason))

    def _checkpoint(self, stage: str) -> None:
        with steps.account_open(self.run) as still_open:
            if still_open:  # a finished run's job resumes from what its account says, nothing later
                stages.checkpoint(self.run, self.state, stage)

    @start()
    def make_plan(self) -> None:
        self.state.task = self.run.task
        if stages.restore(self.run, self.state):  # a durable run resumes from its last checkpoint
            return
        try:
            if self.run.replay is None or not self.run.replay(self.run, self.state):  # a routine
                steps.plan(self.run, self.state)
        except AgentTaskError as exc:
            self._end("error", f"no usable plan: {exc}")
        self._checkpoint("plan")

    @listen(or_(make_plan, "rework"))
    def work(self) -> None:
        if self.state.outcome is not None:
            return
        if self.state.verifier_feedback:
            reason = f"the independent verification failed: {self.state.verifier_feedback}"
            self.state.verifier_feedback = ""
            if not self._new_plan(reason):
                return
        self._work_through_plan()

    def _work_through_plan(self) -> None:
        ctx, state = self.run, self.state
        last = _last_in_plan(state)
        if last is not None and last.then != "next" and not self._carry_out(last):
            return  # restored from a step's checkpoint: its decision is carried out, the step not redone
        while state.outcome is None and state.plan is not None:
            index = _done_in_plan(state)
            if index >= len(state.plan.steps):
                state.claim = "done"
                return
            step = state.plan.steps[index]
            rejections_before = ctx.toolbox.rejections()
            report = steps.work_step(ctx, state, index)
            record = StepRecord(
                index=index, role=step.role, title=step.title, plan_version=state.plan_version, report=report
            )
            record.then = _decide(
                report.status, ctx.toolbox.rejections() > rejections_before, ctx.budget.exhausted
            )
            state.steps_done.append(record)
            steps.trace_step(ctx, record)
            self._checkpoint(f"step:{index + 1}")  # with the decision: a resumed leg carries it out
            if not self._carry_out(record):
                return

    def _carry_out(self, record: StepRecord) -> bool:
        """Do what was decided about a step's report; True: go on to the plan's next step."""
        state, report, n = self.state, record.report, record.index + 1
        if record.then == "next":
            return True
        if record.then == "claim":
            state.claim = report.status
        elif record.then == "rejected":
            self._end(
                "rejected", f"a person rejected a change during step {n}, which ended '{report.status}'"
            )
        elif record.then == "out_of_budget":
            self._end("incomplete", f"the step budget of {self.run.limits.max_steps} tool calls ran out")
        elif self._replan(
            f"step {n} ({record.title}) ended '{report.status}': {report.summary}",
            f"step {n} ended '{report.status}'",
        ):
            self._checkpoint(f"plan:{state.plan_version}")  # the new plan, the replan and any answer
            return True
        return False

    def _replan(self, reason: str, why: str) -> bool:
        """A failed step: replan within budget; then ask the human once; then end 'incomplete'.
        ``reason`` (the worker's summary in it) is what the planner and the person are told; ``why``,
        code's words only (which step, its status), is the run's reason when it ends here: the run's
        reason is shown unlabelled (report.md's "Why:", `runs show`, the console), the model's words
        only where they are labelled as its (the answer, the report's steps)."""
        ctx, state = self.run, self.state
        if state.replans >= ctx.limits.max_replans:
            if state.asked_human:
                self._end(
                    "incomplete",
                    f"still stuck after {state.replans} replans and a person's guidance: {why}",
                )
                return False
            state.asked_human = True
            answer = ctx.human.ask(
                f"I am stuck on this task: {reason}\nHow should I continue? (Leave empty to stop here.)"
            ).strip()
            ctx.tracer.emit(ControlEvent(action="asked_human", reason=f"{reason} → {answer or '(stop)'}"))
            if not answer:
                self._end(
                    "incomplete", f"stopped after {state.replans} replans, a person gave no guidance: {why}"
                )
                return False
            ctx.notes.append(f"Guidance from a person: {answer}")
        state.replans += 1
        return self._new_plan(reason)

    def _new_plan(self, reason: str) -> bool:
        try:
            steps.plan(self.run, self.state, reason=reason)
        except AgentTaskError as exc:
            self._end("error", f"replanning failed: {exc}")
            return False
        return True

    @router(work)
    def after_work(self) -> str:
        if self.state.outcome is None:
            return "check"
        return "learn" if self._to_reflect() else "finish"

    def _to_reflect(self) -> bool:
        """A verified run that has not reflected yet: also one restored from its verification
        checkpoint (a leg handed back there resumes with the outcome already set)."""
        state = self.state
        verified = bool(state.verdicts) and state.verdicts[-1].verified
        return state.outcome in ("done", "nothing_to_do") and verified and not state.reflected

    @listen("check")
    def verify(self) -> None:
        ctx, state = self.run, self.state
        state.verify_attempts += 1
        try:
            verdict = steps.verify(ctx, state)
        except AgentTaskError as exc:
            self._end("error", str(exc))  # "Verifier could not finish: …"
            return
        with steps.account_open(ctx):  # the verdict and what it decides land together, or not at all
            if not steps.take_verdict(ctx, state, verdict):
                return  # the run was finished meanwhile (interrupted): that account stands
            if verdict.verified:
                state.outcome = state.claim or "done"
                state.outcome_reason = verdict.reason
            elif state.verify_attempts > ctx.limits.max_reworks:
                self._end(
                    "not_verified", f"verification failed {state.verify_attempts} times: {verdict.reason}"
                )
            else:
                state.verifier_feedback = steps.feedback_from(verdict)
            self._checkpoint(f"verify:{state.verify_attempts}")

    @router(verify)
    def after_verify(self) -> str:
        if self._to_reflect():
            return "learn"
        if self.state.outcome is not None:
            return "finish"
        return "rework"

    @listen("learn")
    def reflect(self) -> None:
        # a routine replayed step for step and confirmed by the verifier the first time has nothing
        # new to reflect on; a replay the verifier rejected and the agent reworked is the agent's run
        replay = self.run.replay
        if replay is None or replay.result(self.state)[0] != "replayed":
            steps.reflect(self.run, self.state)
        self.state.reflected = True
        self._checkpoint("reflect")  # saved, so a leg handed back after this does not reflect again

    @listen(or_("finish", reflect))
    def report(self) -> RunState:
        steps.finish(self.run, self.state)
        return self.state


def _decide(status: str, rejected: bool, out_of_budget: bool) -> StepThen:
    """What a step's report means for the run, decided in code (``StepRecord.then``)."""
    if status == "done":
        return "next"
    if status == "nothing_to_do":
        return "claim"
    # failed or blocked
    if rejected:
        return "rejected"
    return "out_of_budget" if out_of_budget else "replan"


def _last_in_plan(state: RunState) -> StepRecord | None:
    """The newest step record of the current plan (None: no step of it has run yet)."""
    last = state.steps_done[-1] if state.steps_done else None
    return last if last is not None and last.plan_version == state.plan_version else None


def _done_in_plan(state: RunState) -> int:
    """How many steps of the current plan are done (records since the plan was last made)."""
    return sum(
        1 for r in state.steps_done if r.plan_version == state.plan_version and r.report.status == "done"
    )
