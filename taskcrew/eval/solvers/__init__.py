"""Scripted "models" for the offline eval sweep (CI runs the whole sweep with them).

- ``scripted/solver``: the worker (planner, file_reader, browser_operator, reflector); solves
  every case by reading the real files, pages and tool results.
- ``scripted/auditor``: the verifier; re-derives what should be true from the sources and checks
  the real systems itself, so it catches false claims.
- ``scripted/sloppy``: a worker with a careless model's habits on some cases (subtotal instead of
  total, the amount as printed, a forced duplicate, a success claimed without doing the work).
- ``scripted/realistic-<habit>``: the solver, answering with one habit of real models (parallel
  calls, prose beside calls, numbers as strings, ...; see ``realistic.HABITS``).

    factory = scripted_models(case)          # name -> BaseLLM, for Workplace.run(scripted=...)
    place.run(case.task, worker_model="scripted/solver", verifier_model="scripted/auditor",
              scripted=factory)
"""

from __future__ import annotations

from collections.abc import Callable

from crewai.llms.base_llm import BaseLLM

from taskcrew.eval.models import EvalCase
from taskcrew.eval.solvers.base import AuditorBrain, Recipe, WorkerBrain, brain_llm
from taskcrew.eval.solvers.registry import SLOPPY_SLIPS, SOLVER, NoRecipe, sloppy_recipe, solver_recipe

SCRIPTED_MODELS = ("solver", "auditor", "sloppy")

__all__ = ["SCRIPTED_MODELS", "SLOPPY_SLIPS", "SOLVER", "NoRecipe", "scripted_models", "task_models"]


def scripted_models(case: EvalCase) -> Callable[[str], BaseLLM]:
    """The scripted models for one case: ``factory("solver")`` etc. build a fresh model each call."""
    return _factory(lambda: solver_recipe(case), lambda: sloppy_recipe(case))


def task_models(task: str) -> Callable[[str], BaseLLM]:
    """The scripted models for a task in plain words that is no eval case (``taskcrew demo``, a
    job submitted with ``--model scripted/solver``); NoRecipe when they do not understand it."""
    from taskcrew.eval.solvers.tasks import UNDERSTOOD, recipe_for_task

    def recipe() -> Recipe:
        found = recipe_for_task(task)
        if found is None:
            raise NoRecipe(f"the scripted models do not understand this task; they understand {UNDERSTOOD}")
        return found

    recipe()
    return _factory(recipe, recipe)


def _factory(solver: Callable[[], Recipe], sloppy: Callable[[], Recipe]) -> Callable[[str], BaseLLM]:
    def factory(name: str) -> BaseLLM:
        from taskcrew.crew.llm import ModelConfigError

        try:
            if name == "solver":
                return brain_llm(WorkerBrain(solver()), "scripted/solver")
            if name == "sloppy":
                return brain_llm(WorkerBrain(sloppy()), "scripted/sloppy")
            if name.startswith("realistic-"):
                from taskcrew.eval.solvers.realistic import HABITS, habit_llm

                habit = name.removeprefix("realistic-")
                if habit not in HABITS:
                    raise ModelConfigError(f"unknown habit {habit!r} in {name!r}: one of {', '.join(HABITS)}")
                return habit_llm(WorkerBrain(solver()), habit, f"scripted/{name}")
            if name == "auditor":
                return brain_llm(AuditorBrain(solver()), "scripted/auditor")
        except NoRecipe as exc:
            raise ModelConfigError(str(exc)) from exc
        raise ModelConfigError(
            f"unknown scripted model 'scripted/{name}': the eval has {', '.join(SCRIPTED_MODELS)}"
        )

    return factory
