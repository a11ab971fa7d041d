"""Where routines meet a run (``crew/run.py`` calls these two, nothing else of this package):

- ``attach``: record the run's browser actions by meaning (``browser_steps.jsonl``); when the task
  reads as a recipe, give the run that recipe's success criteria (``ctx.criteria``), whether it came
  as the recipe's command, `taskcrew run` or `taskcrew submit`, and whether the agent or a replay
  does it; and when the recipe has an accepted routine, give the Flow a replayer (``ctx.replay``).
- ``after_run``: count the replay (a success, or a fallback; repeated fallbacks flag it), and after
  a verified run of a recipe propose a draft: the first version, or — after a fallback that was
  verified — a new version healing the old one (``taskcrew routines diff`` shows what changed).

A durable run (a job: ``ctx.checkpoints``) may end in a later leg than the one that replayed: the
worker was stopped or killed and another leg resumes from the checkpoint, with a fresh replayer
that never ran. So the replay's progress (which version, its outcome and reason, the run's key) is
saved with every checkpoint (``Progress``, around the run's own checkpoints) and read back by the
leg that resumes, which counts it; a leg that ends interrupted leaves the count to the leg that
resumes it, and the run's key counts it once whichever leg finishes (``RoutineStore.count_once``).
The version is taken back only as the checkpoint recorded it (``RoutineStore.vouched``: signed, with
the fingerprint that replayed), and so is any version a draft heals (``RoutineStore.heal_base``).
What each leg did (``distil.LegFacts``) rides in the checkpoints too, so a run that parked for its
approval, or whose worker stopped, learns from all its legs (``distil.RunFacts``), never from an
earlier leg's folder, which no signed record names.

Neither ever fails a run: a problem is written to ``routine.txt`` in the run folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from pathlib import Path
from typing import Any

from taskcrew.routines.recording import FILE_NAME, Recorder

NOTE_FILE = "routine.txt"
ENV_LEARN = "TASKCREW_ROUTINES_LEARN"


PROGRESS = "routine"  # the key of the replay's progress in a durable run's checkpoint
LEGS = "routine_legs"  # the key of what the run's legs did so far (``distil.LegFacts``), likewise
OUTCOMES = ("replayed", "fell_back", "rejected")


class Attached:
    def __init__(self, match: Any = None, replayer: Any = None, store: Any = None) -> None:
        self.match = match
        self.replayer = replayer
        self.store = store
        self.run_key = uuid.uuid4().hex  # the run's, in every leg (a resumed leg reads it back)
        self.resumed = False  # the replay ran in an earlier leg of this durable run
        self.earlier: list[Any] = []  # what the legs before this one did (``distil.LegFacts``)

    def progress(self) -> dict[str, Any] | None:
        """What a resumed leg needs to count the replay: None before it ran (or without one)."""
        from taskcrew.routines.store import fingerprint

        replayer = self.replayer
        if replayer is None or replayer.outcome not in OUTCOMES:
            return None
        return {
            "name": replayer.routine.name,
            "version": replayer.routine.version,
            "fingerprint": fingerprint(replayer.routine),  # what it did: a file edited since is not it
            "outcome": replayer.outcome,
            "reason": replayer.reason,
            "new_issuer": bool(replayer.new_issuer),
            "run": self.run_key,
        }

    def restore(self, ctx: Any, saved: Any) -> None:
        """The replay an earlier leg ran, as its checkpoint says (signed with it, by the job store):
        this leg's replayer takes its outcome — the same version's, or that version loaded again
        when another one replays now (accepted or retired between the legs) — so the Flow does not
        reflect on a clean replay and ``after_run`` counts it (and heals it). Loaded again only
        through ``RoutineStore.vouched``: signed, and with the fingerprint the checkpoint recorded
        (a file edited between the legs is not the version that replayed)."""
        from taskcrew.routines.store import fingerprint

        if not isinstance(saved, dict) or self.match is None or self.store is None:
            return
        name, version, outcome = saved.get("name"), saved.get("version"), saved.get("outcome")
        if name != self.match.recipe.name or not isinstance(version, int) or outcome not in OUTCOMES:
            return
        if isinstance(key := saved.get("run"), str) and re.fullmatch(r"[0-9a-f]{32}", key):
            self.run_key = key
        recorded = saved.get("fingerprint") if isinstance(saved.get("fingerprint"), str) else ""
        replayer = self.replayer
        if (
            replayer is None
            or replayer.routine.version != version
            or fingerprint(replayer.routine) != recorded
        ):
            from taskcrew.routines.replay import Replayer

            routine, why = self.store.vouched(name, version, recorded)
            if routine is None:
                _note(
                    ctx.run_dir,
                    f"routines: the replay an earlier leg ran ({name} v{version}) is not counted, and no "
                    f"draft heals it: {why}",
                )
                return
            replayer = Replayer(routine, dict(self.match.values))
        replayer.outcome, replayer.reason = outcome, str(saved.get("reason") or "")
        replayer.new_issuer = bool(saved.get("new_issuer"))
        self.replayer = ctx.replay = replayer
        self.resumed = True


class Progress:
    """A durable run's checkpoints (``crew.stages.Checkpoints``) with the replay's progress in them:
    saved beside the run's state, read back when a leg resumes (``Attached.restore``)."""

    def __init__(self, inner: Any, attached: Attached, ctx: Any) -> None:
        self.inner, self.attached, self.ctx = inner, attached, ctx

    def load(self) -> dict[str, Any] | None:
        saved: dict[str, Any] | None = self.inner.load()
        if saved:
            try:
                self.attached.restore(self.ctx, saved.get(PROGRESS))
            except Exception as exc:  # routines never stop a run
                _note(
                    self.ctx.run_dir,
                    f"routines: the earlier leg's replay is not counted ({type(exc).__name__}: {exc})",
                )
            self.carry(saved.get(LEGS))
        return saved

    def carry(self, legs: Any) -> None:
        """What the legs before did, as the signed checkpoint carries them: kept for ``after_run``
        and written to this leg's folder (sealed with it when the job ends: `routines learn`)."""
        if not legs:
            return
        from taskcrew.routines.distil import LEGS as ADAPTER
        from taskcrew.routines.distil import write_legs

        try:
            self.attached.earlier = ADAPTER.validate_python(legs)
            write_legs(self.ctx.run_dir, self.attached.earlier)
        except Exception as exc:  # routines never stop a run: nothing is learned from it, said so
            self.attached.earlier = []
            _note(
                self.ctx.run_dir, f"routines: what the earlier legs did is not known ({type(exc).__name__})"
            )

    def save(self, stage: str, state: dict[str, Any]) -> None:
        progress = self.attached.progress()
        saved = state if progress is None else {**state, PROGRESS: progress}
        self.inner.save(stage, {**saved, LEGS: self.legs()})

    def legs(self) -> list[dict[str, Any]]:
        """What the run's legs did up to now: the earlier ones', then this leg's (read from its own
        folder, which this run writes); the next leg resumes from this checkpoint."""
        from taskcrew.routines.distil import RunFacts

        legs = list(self.attached.earlier)
        with contextlib.suppress(Exception):  # nothing of this leg to read (no trace: a stand-in run)
            legs.append(RunFacts(self.ctx.run_dir, earlier=[]).leg())
        return [leg.model_dump(mode="json") for leg in legs]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _note(run_dir: Path, text: str) -> None:
    with (run_dir / NOTE_FILE).open("a", encoding="utf-8") as fh:
        fh.write(text.rstrip() + "\n")


def attach(ctx: Any, sandbox: Path, read_only: bool) -> Attached:
    browser = ctx.toolbox.browser
    worker = getattr(browser, "worker", None)
    if worker is not None and hasattr(worker, "act_listeners"):
        worker.act_listeners.append(Recorder(ctx.run_dir / FILE_NAME, ctx.redact))
    try:
        from taskcrew.routines.match import match_task, recipes_for
        from taskcrew.routines.store import RoutineStore

        match = match_task(ctx.task, recipes_for(sandbox))
        if match is not None:  # the recipe's criteria, however the task came (a recipe, run, submit)
            given = {c.strip().casefold() for c in match.criteria}
            ctx.criteria = [*match.criteria, *(c for c in ctx.criteria if c.strip().casefold() not in given)]
        if match is None or read_only or not match.recipe.changes_data:
            return Attached(match=match)
        attached = _durable(ctx, Attached(match=match, store=RoutineStore()))
        store = attached.store
        routine = store.marked_accepted(match.recipe.name)
        problem = store.acceptance_problem(routine) if routine is not None else None
        problem = problem or (routine.params_problem(match.values) if routine is not None else None)
        if routine is not None and not problem and not ctx.criteria:
            problem = (
                f"{match.recipe.name} states no success criteria: the verifier would have nothing to "
                "hold a replay to"
            )
        if problem:
            _note(ctx.run_dir, f"routines: not replayed: {problem}")
        if routine is None or problem:
            return attached
        from taskcrew.routines.replay import Replayer

        ctx.replay = attached.replayer = Replayer(routine, match.values, read_back=_rules(sandbox, ctx))
        return attached
    except Exception as exc:  # routines never stop a run: it goes on with the agent
        _note(ctx.run_dir, f"routines: not used ({type(exc).__name__}: {exc})")
        return Attached()


def _durable(ctx: Any, attached: Attached) -> Attached:
    """A durable run's checkpoints carry the replay's progress from leg to leg (``Progress``)."""
    sink = getattr(ctx, "checkpoints", None)
    if sink is not None and not isinstance(sink, Progress):
        ctx.checkpoints = Progress(sink, attached, ctx)
    return attached


def _rules(sandbox: Path, ctx: Any) -> Any:
    from taskcrew.tools.readback import load_rules, rules_file

    systems = ctx.toolbox.systems
    erp = systems[0].url if systems else ""
    return load_rules(
        rules_file(sandbox), {"erp": erp, **({"intranet": systems[1].url} if len(systems) > 1 else {})}
    )


def after_run(ctx: Any, state: Any, attached: Attached) -> None:
    try:
        _after(ctx, state, attached)
    except Exception as exc:
        _note(ctx.run_dir, f"routines: nothing learned ({type(exc).__name__}: {exc})")


def _after(ctx: Any, state: Any, attached: Attached) -> None:
    from taskcrew.routines.distil import DistilError, RunFacts, distil_facts, merge

    if attached.match is None or attached.store is None:
        return
    store = attached.store
    verified = state.outcome == "done" and bool(state.verdicts) and state.verdicts[-1].verified
    replayer = attached.replayer
    if replayer is not None and replayer.outcome in ("replayed", "fell_back"):
        label = f"routine {replayer.routine.name} v{replayer.routine.version}"
        earlier = " (replayed in an earlier leg of this job)" if attached.resumed else ""
        durable = getattr(ctx, "checkpoints", None) is not None
        if durable and state.outcome == "interrupted":  # the job resumes from its checkpoint
            _note(
                ctx.run_dir,
                f"{label}: not counted yet: the run was interrupted; the leg that resumes it counts it",
            )
            return
        outcome, why = replayer.result(state)  # a replay the verifier rejected first fell back
        fell_back = outcome == "fell_back" or not verified
        reason = why if outcome == "fell_back" else state.outcome_reason
        new_issuer = replayer.outcome == "fell_back" and replayer.new_issuer
        kept = {"fell_back": fell_back, "reason": reason, "in_a_row": not new_issuer}
        counted = (
            store.count_once(replayer.routine, attached.run_key, **kept)
            if durable
            else store.count(replayer.routine, **kept)
        )
        said = outcome if verified or outcome == "fell_back" else "replayed, not verified"
        if counted is None:
            _note(ctx.run_dir, f"{label}: {said}{earlier}; counted already by another leg of this job")
        else:
            _note(
                ctx.run_dir,
                f"routine {counted.name} v{counted.version}: {said}{earlier}"
                + (f" ({why or reason})" if why or said != outcome else "")
                + (" — FLAGGED for review: it keeps falling back" if counted.flagged else ""),
            )
        if outcome == "replayed" or not verified:
            return  # a clean replay teaches nothing new; a run not verified teaches nothing
    if not verified or os.environ.get(ENV_LEARN, "1") == "0":
        return
    try:  # what the run did in all its legs: this folder, after the legs the signed checkpoint carried
        facts = RunFacts(ctx.run_dir, earlier=attached.earlier)
        learned = distil_facts(facts, attached.match, ctx.toolbox.files)
    except DistilError as exc:
        _note(ctx.run_dir, f"routines: no routine learned from this run: {exc}")
        return
    base, why = store.heal_base(learned.name, replayer.routine if replayer is not None else None)
    if base is not None:
        learned = merge(base, learned)
    elif why:
        _note(ctx.run_dir, f"routines: the draft keeps nothing of an earlier version: {why}")
    draft, new = store.propose(learned, submitter=getattr(ctx, "submitted_by", None))  # not hers to accept
    label = f"{draft.name} v{draft.version}"
    if draft.status == "accepted":
        _note(
            ctx.run_dir, f"routines: {label}, the accepted version, already does this work: nothing proposed"
        )
    else:
        _note(
            ctx.run_dir,
            f"routines: {'proposed' if new else 'already proposed as'} {label} (draft): review it with "
            f"`taskcrew routines show {draft.name} -v {draft.version}` and accept it with the "
            f"`taskcrew routines accept {draft.name} -v {draft.version} --fingerprint …` it prints",
        )
    from taskcrew.demo import ROUTINE_NOTE
    from taskcrew.eval.runs import demo_marked

    if demo_marked(ctx.run_dir):  # `taskcrew demo`'s run: said now, never added after the run ended
        _note(ctx.run_dir, ROUTINE_NOTE)
