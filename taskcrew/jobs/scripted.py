"""Scripted models for jobs (tests, benches, offline demos): a job whose model is ``scripted/…`` gets
the eval's scripted models for the eval case with the same task text, or for what it asks in
other words (``taskcrew.eval.solvers.tasks``). ``delay_s`` makes every model
call sleep like a real one (throughput benches)."""

from __future__ import annotations

import time
from typing import Any

from taskcrew.jobs.models import Job


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def scripted_for(job: Job, *, delay_s: float = 0.0) -> Any:
    from taskcrew.eval.models import load_cases
    from taskcrew.eval.solvers import NoRecipe, scripted_models, task_models

    if not (job.options.worker_model or "").startswith("scripted/"):
        return None
    cases = {_norm(c.task): c for c in load_cases()}
    case = cases.get(_norm(job.task))
    if case is not None:
        factory = scripted_models(case)
    else:  # words of the submitter's own: the solver reads the request as a model would
        try:
            factory = task_models(job.task)
        except NoRecipe as exc:
            raise LookupError(f"no scripted models for this task ({exc}): {job.task!r}") from exc
    if not delay_s:
        return factory

    def slow(name: str) -> Any:
        llm = factory(name)
        inner = llm.call

        def call(*args: Any, **kwargs: Any) -> Any:
            time.sleep(delay_s)
            return inner(*args, **kwargs)

        object.__setattr__(llm, "call", call)
        return llm

    return slow
