"""The eval sweep: every model × case × repeat, each run from a fresh ERP and a fresh knowledge store.

A sweep worker owns one Workplace (a private demo ERP and intranet on free ports, one Chromium) and
runs its jobs one after another: reset the ERP with the case's chaos, copy the seeded knowledge
store (seeded once per sweep, so facts learned in one case never leak into another), give the run
the case's simulated person, run, grade on the ERP's ground truth and the run's report.

``parallel > 1`` starts that many worker processes (crewAI and Playwright are not safe to share
across threads for whole runs); every job is independent, so the graded results are the same as
those of a sequential sweep.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.crew.stopping import RunInterrupted
from taskcrew.eval.models import CASES_DIR, ChaosSetting, EvalCase, load_cases, no_case_matches
from taskcrew.eval.results import RunRecord, SweepReport

AUDITOR = "scripted/auditor"


class SweepError(ValueError):
    """A sweep cannot start as configured; the message says what to change."""


class SweepSettings(BaseModel):
    models: list[str] = Field(min_length=1, description="worker models, provider strings")
    verifier_model: str | None = Field(
        default=None,
        description="the verifier for every worker; default TASKCREW_VERIFIER_MODEL, or scripted/auditor "
        "for scripted workers",
    )
    case_pattern: str | None = Field(default=None, description="case ids: substring or glob")
    cases_dir: Path = CASES_DIR
    repeats: int = Field(default=1, ge=1, le=100)
    parallel: int = Field(default=1, ge=1, le=32)
    out_dir: Path = Path("eval-results")
    chaos: bool = Field(default=True, description="False: every case runs with chaos off")
    sandbox: Path = DEFAULT_SANDBOX
    chromium: Path | None = None
    knowledge_seed: Path | None = Field(
        default=None, description="a seeded knowledge store to copy per run (default: seed one per sweep)"
    )


class Job(BaseModel):
    index: int
    model: str
    verifier_model: str
    case_id: str
    repeat: int


class SweepEvent(BaseModel):
    """Progress: a job started or finished (``record`` set when finished)."""

    kind: Literal["started", "finished"]
    job: Job
    worker: int = 0
    record: RunRecord | None = None


Listener = Callable[[SweepEvent], None]


# ------------------------------------------------------------------------------ scratch folders
SCRATCH_PREFIX = "taskcrew-eval-"
OWNER_FILE = "owner.pid"


def remove_stale_scratch(tmp: Path) -> list[Path]:
    """Remove scratch folders of sweeps whose process is gone (killed with SIGKILL, say)."""
    removed = []
    for folder in tmp.glob(SCRATCH_PREFIX + "*"):
        try:
            pid = int((folder / OWNER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not ours, or still being created: leave it
        if not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ------------------------------------------------------------------------------ planning the sweep
def select_cases(settings: SweepSettings) -> list[EvalCase]:
    from taskcrew.config import Paths
    from taskcrew.recipes import load_library, recipe_folders

    recipes = load_library(recipe_folders(settings.sandbox, Paths.from_env().home))
    try:
        cases = load_cases(settings.cases_dir, settings.case_pattern, recipes)
    except ValueError as exc:
        raise SweepError(f"the eval cases cannot be used: {exc}") from exc
    if not cases:
        raise SweepError(no_case_matches(settings.case_pattern, settings.cases_dir))
    return cases


def verifier_for(worker: str, chosen: str | None) -> str:
    """The verifier model for ``worker``: the flag, TASKCREW_VERIFIER_MODEL, or the scripted auditor."""
    verifier = chosen or os.environ.get("TASKCREW_VERIFIER_MODEL")
    if not verifier and worker.strip().startswith("scripted/"):
        verifier = AUDITOR
    if not verifier:
        raise SweepError(
            f"no verifier model for {worker}: pass --verifier-model provider/name or set "
            "TASKCREW_VERIFIER_MODEL; it must be a different model from the worker's"
        )
    if verifier.strip() == worker.strip():
        raise SweepError(
            f"the verifier must be a different model from the worker ({worker}); pass another --verifier-model"
        )
    return verifier


def check_model(raw: str) -> None:
    """Fail before any run starts: the provider string, its API key, a scripted model's name."""
    from taskcrew.crew.modelspec import ModelConfigError, ModelSpec, check_credentials

    try:
        spec = ModelSpec.parse(raw)
        check_credentials(spec)  # no crewai import: this check is instant
    except ModelConfigError as exc:
        raise SweepError(str(exc)) from exc
    if spec.provider != "scripted":
        return
    from taskcrew.eval.solvers import SCRIPTED_MODELS

    realistic = spec.name.startswith("realistic-")  # scripted/realistic-<habit>, checked when built
    if spec.name not in SCRIPTED_MODELS and not realistic:
        raise SweepError(f"unknown scripted model {raw!r}: the eval has {', '.join(SCRIPTED_MODELS)}")


def plan_jobs(settings: SweepSettings, cases: list[EvalCase]) -> list[Job]:
    jobs: list[Job] = []
    for model in settings.models:
        verifier = verifier_for(model, settings.verifier_model)
        for case in cases:
            for repeat in range(1, settings.repeats + 1):
                jobs.append(
                    Job(
                        index=len(jobs),
                        model=model,
                        verifier_model=verifier,
                        case_id=case.id,
                        repeat=repeat,
                    )
                )
    return jobs


def chaos_config(setting: ChaosSetting, enabled: bool = True) -> Any:
    """The ERP's ChaosConfig for a case (off when the sweep or the case turns chaos off)."""
    from taskcrew.mock_erp import ChaosConfig

    if not (enabled and setting.enabled):
        return ChaosConfig.off()
    return ChaosConfig.model_validate(setting.model_dump(exclude_none=True))


def seed_knowledge(target: Path, sandbox: Path, embedder: Any = None) -> Path:
    """A knowledge store with the company's procedures only, to be copied for every run."""
    from taskcrew.knowledge import open_store, seed_if_empty

    store = open_store(target, embedder)
    seed_if_empty(store, sandbox)
    return target


# ------------------------------------------------------------------------------ one worker
class SweepWorker:
    """One Workplace, running jobs one after another. Use as a context manager."""

    def __init__(
        self, settings: SweepSettings, cases: list[EvalCase], seed: Path, scratch: Path, runs_dir: Path
    ) -> None:
        self.settings = settings
        self.cases = {c.id: c for c in cases}
        self.seed = seed
        self.scratch = scratch
        self.runs_dir = runs_dir
        self.place: Any = None
        self._embedder: Any = None

    def __enter__(self) -> SweepWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> SweepWorker:
        """Start the Workplace (ERP, intranet; Chromium on the first browser call)."""
        from taskcrew.crew.workplace import Workplace, WorkplaceSettings
        from taskcrew.eval.human import CaseHuman
        from taskcrew.eval.models import HumanScript
        from taskcrew.knowledge import MiniLMEmbedder

        self.scratch.mkdir(parents=True, exist_ok=True)
        settings = WorkplaceSettings(
            erp_url="http://127.0.0.1:0",
            intranet_url="http://127.0.0.1:0",
            sandbox=self.settings.sandbox,
            runs_dir=self.runs_dir,
            erp_db=self.scratch / "erp.sqlite3",
            chromium=self.settings.chromium,
            web_search="intranet",
            use_knowledge=False,  # each run gets its own copy of the seeded store instead
        )
        self._embedder = MiniLMEmbedder()
        self.place = Workplace(settings, CaseHuman(HumanScript())).__enter__()
        return self

    def close(self) -> None:
        if self.place is not None:
            self.place.__exit__(None, None, None)
            self.place = None

    def _fresh_store(self, job: Job) -> Any:
        from taskcrew.knowledge import open_store

        target = self.scratch / f"knowledge-{job.index}"
        shutil.copytree(self.seed, target)
        return open_store(target, self._embedder)

    def run(self, job: Job) -> RunRecord:
        from taskcrew.crew.context import RunLimits
        from taskcrew.eval.grader import grade
        from taskcrew.eval.human import CaseHuman
        from taskcrew.eval.solvers import scripted_models

        case = self.cases[job.case_id]
        place = self.place
        place.erp_server.reset(chaos_config(case.chaos, self.settings.chaos))
        store = self._fresh_store(job)
        human = CaseHuman(case.human)
        before = place.erp_server.state()
        base = {
            "index": job.index,
            "model": job.model,
            "verifier_model": job.verifier_model,
            "case_id": job.case_id,
            "repeat": job.repeat,
        }
        started = time.monotonic()
        try:
            with own_routines(self.scratch / f"routines-{job.index}"):
                result = place.run(
                    case.task,
                    worker_model=job.model,
                    verifier_model=job.verifier_model,
                    scripted=scripted_models(case),
                    limits=RunLimits(max_steps=case.max_steps),
                    human=human,
                    store=store,
                    criteria=case.criteria,
                    read_only=case.read_only,
                )
        except Exception as exc:  # the run could not be carried out: an error record, the sweep goes on
            return RunRecord(
                **base,
                outcome="error",
                passed=False,
                reason=f"{type(exc).__name__}: {exc}",
                seconds=round(time.monotonic() - started, 2),
                approvals=len(human.requests),
                questions=len(human.questions),
                error=f"{type(exc).__name__}: {exc}",
            )
        after = place.erp_server.state()
        report = result.report.read_text(encoding="utf-8") if result.report.is_file() else ""
        graded = grade(
            case, outcome=result.outcome, before=before, after=after, report=report, questions=human.questions
        )
        return RunRecord(
            **base,
            outcome=result.outcome,
            passed=graded.passed,
            checks=graded.checks,
            reason=result.reason,
            steps=result.steps,
            llm_calls=result.llm_calls,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            seconds=round(time.monotonic() - started, 2),
            approvals=len(human.requests),
            questions=len(human.questions),
            run_dir=str(result.run_dir),
        )


def _error_record(job: Job, message: str) -> RunRecord:
    return RunRecord(
        index=job.index,
        model=job.model,
        verifier_model=job.verifier_model,
        case_id=job.case_id,
        repeat=job.repeat,
        outcome="error",
        passed=False,
        reason=message,
        error=message,
    )


# ------------------------------------------------------------------------------ the sweep
class SweepPlan(BaseModel):
    cases: list[EvalCase]
    jobs: list[Job]


def plan_sweep(settings: SweepSettings) -> SweepPlan:
    """Everything that can be checked before any run starts: cases, models, keys, folders."""
    if not settings.sandbox.is_dir():
        raise SweepError(
            f"sandbox folder {settings.sandbox} does not exist: unset TASKCREW_SANDBOX to use the demo company"
        )
    for model in settings.models:
        check_model(model)
    cases = select_cases(settings)
    jobs = plan_jobs(settings, cases)
    for verifier in sorted({j.verifier_model for j in jobs}):
        check_model(verifier)
    return SweepPlan(cases=cases, jobs=jobs)


def run_sweep(
    settings: SweepSettings, listener: Listener | None = None, plan: SweepPlan | None = None
) -> SweepReport:
    """Run the sweep, write results.md and results.json to ``settings.out_dir``, return the report."""
    from taskcrew.eval.report import write_results

    plan = plan or plan_sweep(settings)
    cases, jobs = plan.cases, plan.jobs
    notify = listener or (lambda event: None)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    clock = time.monotonic()
    remove_stale_scratch(Path(tempfile.gettempdir()))
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
    (scratch / OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
    try:
        seed = settings.knowledge_seed or seed_knowledge(scratch / "knowledge-seed", settings.sandbox)
        runs_dir = settings.out_dir / "runs"
        if settings.parallel > 1 and len(jobs) > 1:
            records = _run_parallel(settings, jobs, seed, scratch, runs_dir, notify)
        else:
            records = _run_sequential(settings, cases, jobs, seed, scratch, runs_dir, notify)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = SweepReport.build(
        records,
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        wall_seconds=round(time.monotonic() - clock, 2),
        models=settings.models,
        verifier_model=settings.verifier_model,
        case_ids=[c.id for c in cases],
        repeats=settings.repeats,
        chaos=settings.chaos,
        parallel=settings.parallel,
    )
    write_results(report, settings.out_dir)
    return report


def _run_sequential(
    settings: SweepSettings,
    cases: list[EvalCase],
    jobs: list[Job],
    seed: Path,
    scratch: Path,
    runs_dir: Path,
    notify: Listener,
) -> list[RunRecord]:
    records = []
    worker = SweepWorker(settings, cases, seed, scratch / "worker-0", runs_dir)
    try:
        worker.start()
    except Exception as exc:  # WorkplaceError, ErpError, OSError: one clear message for the user
        raise SweepError(f"the sweep could not start: {exc}") from exc
    try:
        for job in jobs:
            notify(SweepEvent(kind="started", job=job))
            record = worker.run(job)
            records.append(record)
            notify(SweepEvent(kind="finished", job=job, record=record))
            if record.outcome == "interrupted":  # SIGINT/SIGTERM during the run: stop the sweep
                raise RunInterrupted(signal.SIGTERM)
    finally:
        worker.close()
    return records


@contextlib.contextmanager
def own_routines(folder: Path) -> Iterator[None]:
    """A run of the sweep with its own, empty routines folder and no learning: it measures the
    model, so it replays none of the company's accepted routines, counts nothing into them and
    proposes no draft to anyone."""
    from taskcrew.routines.hooks import ENV_LEARN
    from taskcrew.routines.store import ENV_VAR

    before = {name: os.environ.get(name) for name in (ENV_VAR, ENV_LEARN)}
    os.environ.update({ENV_VAR: str(folder), ENV_LEARN: "0"})
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _worker_main(
    worker_id: int,
    settings_json: str,
    seed: str,
    scratch: str,
    runs_dir: str,
    jobs: Any,
    events: Any,
) -> None:
    """A worker process: pull jobs until the sentinel, report each start and finish."""
    from taskcrew.config import Paths, quiet_crewai_env

    quiet_crewai_env(Paths.from_env().crewai_storage)
    settings = SweepSettings.model_validate_json(settings_json)
    cases = select_cases(settings)
    try:
        worker = SweepWorker(settings, cases, Path(seed), Path(scratch), Path(runs_dir)).start()
    except Exception as exc:
        failure = f"the sweep worker could not start: {type(exc).__name__}: {exc}"
        while (raw := jobs.get()) is not None:
            job = Job.model_validate_json(raw)
            events.put(("finished", worker_id, raw, _error_record(job, failure).model_dump_json()))
        return
    try:
        while (raw := jobs.get()) is not None:
            job = Job.model_validate_json(raw)
            events.put(("started", worker_id, raw, None))
            try:
                record = worker.run(job)
            except Exception as exc:
                record = _error_record(job, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")
            events.put(("finished", worker_id, raw, record.model_dump_json()))
    finally:
        worker.close()


def _run_parallel(
    settings: SweepSettings,
    jobs: list[Job],
    seed: Path,
    scratch: Path,
    runs_dir: Path,
    notify: Listener,
) -> list[RunRecord]:
    context = mp.get_context("spawn")  # fork would copy threads (Playwright, servers) mid-flight
    job_queue: Any = context.Queue()
    events: Any = context.Queue()
    workers = min(settings.parallel, len(jobs))
    for job in jobs:
        job_queue.put(job.model_dump_json())
    for _ in range(workers):
        job_queue.put(None)
    processes = [
        context.Process(
            target=_worker_main,
            args=(
                i,
                settings.model_dump_json(),
                str(seed),
                str(scratch / f"worker-{i}"),
                str(runs_dir / f"worker-{i}"),
                job_queue,
                events,
            ),
            name=f"taskcrew-eval-{i}",
        )
        for i in range(workers)
    ]
    for process in processes:
        process.start()
    records: dict[int, RunRecord] = {}
    running: dict[int, Job] = {}
    try:
        while len(records) < len(jobs):
            try:
                kind, worker_id, raw, record_json = events.get(timeout=1.0)
            except queue.Empty:
                if all(not p.is_alive() for p in processes):
                    break
                for i, process in enumerate(processes):
                    if not process.is_alive() and i in running:
                        job = running.pop(i)
                        records[job.index] = _error_record(
                            job, f"the sweep worker died (exit code {process.exitcode})"
                        )
                        notify(SweepEvent(kind="finished", job=job, worker=i, record=records[job.index]))
                continue
            job = Job.model_validate_json(raw)
            if kind == "started":
                running[worker_id] = job
                notify(SweepEvent(kind="started", job=job, worker=worker_id))
            else:
                running.pop(worker_id, None)
                records[job.index] = RunRecord.model_validate_json(record_json)
                notify(SweepEvent(kind="finished", job=job, worker=worker_id, record=records[job.index]))
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
                process.join()
    for job in jobs:  # anything no worker got to
        if job.index not in records:
            records[job.index] = _error_record(job, "not run: every sweep worker stopped")
            notify(SweepEvent(kind="finished", job=job, record=records[job.index]))
    return [records[j.index] for j in jobs]
