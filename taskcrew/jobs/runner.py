"""One leg of a job: claim it, run the Flow with checkpoints and a store-backed person, record the end.

Called by the DBOS workflow (``taskcrew.jobs.worker``) and by ``taskcrew run`` (one-shot, same
machinery). Everything the run needs comes in through ``LegRunner``; nothing global.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskcrew.approvals.worker import leg_refusal_of
from taskcrew.crew.stopping import RunStopped
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.models import Intent, Job, utcnow
from taskcrew.jobs.store import Jobs

if TYPE_CHECKING:
    from taskcrew.approvals.authority import Authority
    from taskcrew.approvals.worker import WorkerGate
    from taskcrew.tools.readback import ReadBackRules

log = logging.getLogger(__name__)
ScriptedResolver = Callable[[Job], Any]  # job -> scripted model factory (name -> BaseLLM) or None


class Stopped(RunStopped):
    """The job was cancelled, or another worker took it over: this leg stops at the next checkpoint
    (or, waiting on a model, within a heartbeat). Its run's account is finished first, as an
    interrupted run's (``crew.run.run_task``: its report, what it changed); ``result`` holds it."""


class HandBack(Stopped):
    """The worker is stopping: this leg goes back on the queue right after the checkpoint it saved.
    Its run is not ended (the next leg goes on from that checkpoint and tells the whole story)."""

    ends_run = False


def lost(jobs: Jobs, job_id: str, leg: int) -> Stopped:
    """Why leg ``leg`` stops, its write refused (its job is no longer its own): as the record says."""
    job, current = jobs.get_on_leg(job_id)
    if job.status == "cancelled":  # who cancelled it, as its record says ("cancelled by bob")
        said = job.reason if job.reason.startswith("cancelled") else "cancelled"
        return Stopped(f"job {job_id} was {said}")
    return Stopped(
        f"job {job_id} is {job.status} on {job.worker} (leg {current}, this is leg {leg}); this leg stops"
    )


class StoreCheckpoints:
    """``crew.stages.Checkpoints`` in the job database; saving also checks that this worker still owns
    the job (not cancelled, not taken over), so a stopped job stops at its next stage. ``hand_back``
    (the worker is stopping) makes the leg end right after the checkpoint is saved. ``gate``: the
    answers to the job's questions the run took are spent with the checkpoint that holds them."""

    def __init__(
        self,
        jobs: Jobs,
        job_id: str,
        worker_id: str | None = None,
        hand_back: Callable[[], bool] | None = None,
        leg: int | None = None,
        gate: WorkerGate | None = None,
        token: str | None = None,
        lost: Callable[[], str | None] | None = None,
    ) -> None:
        self.jobs, self.job_id, self.worker_id, self.hand_back = jobs, job_id, worker_id, hand_back
        self.gate, self.token, self.lost = gate, token, lost
        self.leg = leg if leg is not None else jobs.leg(job_id)  # the leg this run is

    def load(self) -> dict[str, Any] | None:
        return self.jobs.checkpoint(self.job_id)

    def save(self, stage: str, state: dict[str, Any]) -> None:
        if self.lost is not None and (why := self.lost()) is not None:  # this process holds no id
            raise Stopped(f"{why}; this leg stops before its {stage} checkpoint")
        spent = self.gate.unspent() if self.gate is not None else []
        if not self.jobs.save_checkpoint(
            self.job_id, state, leg=self.leg, worker=self.worker_id, spent=spent, token=self.token
        ):
            raise lost(self.jobs, self.job_id, self.leg)
        if self.gate is not None:
            self.gate.spend(spent)
        if self.hand_back is not None and self.hand_back():
            raise HandBack(f"the worker is stopping; handed back after the {stage} checkpoint")


@dataclass
class LegRunner:
    jobs: Jobs
    place: Any  # an entered crew.workplace.Workplace
    worker_id: str
    scripted: ScriptedResolver | None = None
    approval_ttl: timedelta | None = timedelta(days=7)
    heartbeat_s: float = 2.0
    draining: threading.Event = field(default_factory=threading.Event)  # the worker is stopping
    exiting: threading.Event = field(default_factory=threading.Event)  # held legs were handed back
    # (job, leg) -> started: the legs this process holds (an older leg of a job may still be ending
    # while its newer leg starts here: each is its own)
    held: dict[tuple[str, int], bool] = field(default_factory=dict)
    policies: dict[tuple[str, int], Any] = field(default_factory=dict)  # (job, leg) -> its browser policy
    # this start of the worker (``jobs.identity.IdHolder``): its token, whether its id's row still
    # names it, and whether another start's token still lives; None: not bound to a start (tests)
    token: str | None = None
    still_holds: Callable[[], bool] | None = None
    token_alive: Callable[[str, Any], bool] | None = None
    lost: str | None = None  # why this process holds no worker id any more (``lose_id``)
    halts: dict[tuple[str, int], LegHalt] = field(default_factory=dict)  # (job, leg) -> its halt

    def running_here(self) -> list[str]:
        return list(dict.fromkeys(job_id for (job_id, _), started in list(self.held.items()) if started))

    def holds(self, job_id: str) -> bool:
        return any(held == job_id for held, _ in list(self.held))

    def lose_id(self, why: str) -> None:
        """Another process holds this worker's id now (``IdHolder.beat``): every leg of this process
        halts at once (model calls stop, its browser sends nothing more) and stops at its next
        checkpoint before writing it; the caller stops the worker."""
        self.lost = why
        for halt in list(self.halts.values()):
            halt.set(why)
        for policy in list(self.policies.values()):
            policy.halted = why

    def hand_back_all(self, why: str) -> list[str]:
        """Give every leg this process holds back to the queue (the worker stops now). A leg still
        running is abandoned, not stopped: its browser sends nothing more (the next leg resumes it)."""
        for policy in list(self.policies.values()):
            policy.halted = f"the worker stopped and handed the job back ({why})"
        given = []
        for job_id, leg in list(self.held):
            with suppress(Exception):
                if self.jobs.hand_back(job_id, leg, self.worker_id, why, token=self.token) is not None:
                    given.append(job_id)
        self.exiting.set()
        return given

    def run_leg(self, job_id: str, leg: int) -> str:
        """Run leg ``leg`` of the job; returns what became of it (a status word)."""
        if self.jobs.leg(job_id) != leg:
            return "stale"  # a newer leg (retry, resume, takeover) owns the job
        self.held[(job_id, leg)] = False
        try:
            if self.draining.is_set():  # dequeued while stopping: held unstarted, then handed back
                self.exiting.wait()
                # by hand_back_all, or here when dequeued after it ran (else the job stays queued on
                # a leg that DBOS records as done, and no worker ever runs it); a no-op when given
                why = "the worker stopped before the leg started"
                self.jobs.hand_back(job_id, leg, self.worker_id, why, leg_ends=True, token=self.token)
                return "handed_back"
            if self.lost is None and self.still_holds is not None and not self.still_holds():
                self.lose_id(f"worker id {self.worker_id} is held by another process now")
            if self.lost is not None:  # dequeued by a process that holds no id: back on the queue
                why = f"{self.lost}; the leg never started here"
                self.jobs.hand_back(job_id, leg, self.worker_id, why, leg_ends=True, token=self.token)
                return "handed_back"
            return self._claim_and_run(job_id, leg)
        finally:
            self.held.pop((job_id, leg), None)
            self.policies.pop((job_id, leg), None)

    def _claim_and_run(self, job_id: str, leg: int) -> str:
        from taskcrew.approvals.authority import Authority
        from taskcrew.crew.workplace import reachable

        job = self.jobs.get(job_id)
        if job.record_trust != "signed":
            return self._refuse_forged(job, leg)
        held_by = job.worker_token if job.status == "running" else None  # a recovered leg (DBOS)
        if held_by is not None and held_by != self.token and self._alive(held_by, job):
            log.warning(
                "job %s: leg %s is running in another start of worker %s (%s); not claimed here",
                job_id,
                leg,
                job.worker,
                held_by,
            )
            return "running_elsewhere"
        claimed = self.jobs.mark(
            job_id,
            "running",
            only_if=("queued", "running"),
            leg=leg,  # handed back or taken over meanwhile: the newer leg runs it, not this one
            worker=self.worker_id,
            worker_token=self.token,
            if_token=held_by,  # still that start's (judged gone) as it is claimed, else not claimed
            started_at=job.started_at or utcnow(),
            beat=True,
            attempts=job.attempts + 1,
            options=job.options.model_copy(update={"foreground": False}),  # a worker's job now
        )
        if claimed is None:
            return job.status  # cancelled or finished meanwhile
        self.held[(job_id, leg)] = True
        if self.lost is not None:  # lost its id while claiming: the job goes back on the queue
            return self._handed_back(job_id, leg, HandBack(self.lost))
        try:  # the rules this worker judges by (a risk rules file that cannot be read: the job fails)
            authority = Authority(self.jobs)
        except Exception as exc:
            return self._fail(job_id, leg, f"{type(exc).__name__}: {exc}; fix it")
        if (settled := authority.settle(job_id, leg, self.worker_id)) is not None:
            log.warning("job %s: leg %s does not run: %s", job_id, leg, settled)  # (the signed log ended it)
            return "stopped"
        stop, halt = threading.Event(), LegHalt()
        self.halts[(job_id, leg)] = halt
        beat = threading.Thread(target=self._beat, args=(job_id, leg, stop, halt, authority), daemon=True)
        beat.start()
        try:
            if claimed.options.batch:
                return self._fan_out(claimed, leg, authority)  # plans and submits; the ERP is the children's
            if not reachable(self.place.erp_url):
                return self._fail(job_id, leg, f"the ERP at {self.place.erp_url} did not answer; start it")
            return self._run(claimed, leg, halt, authority)
        finally:
            stop.set()
            self.halts.pop((job_id, leg), None)

    def _alive(self, token: str, job: Job) -> bool:
        """Whether the worker start ``token`` (another than this one) may still run ``job``."""
        if self.token_alive is None:
            return False
        return self.token_alive(token, job.heartbeat_at or job.started_at)

    def _stopped(self, authority: Authority, job_id: str, leg: int) -> str:
        """The leg stopped: its job is no longer its own. When only the signed audit log says so (an
        entry written ahead whose change to the job database did not happen), the database is brought
        in line (``Authority.settle``): the job is not left running on a leg that may not act."""
        with suppress(Exception):  # a database hiccup: the watch loop takes the silent leg over
            if (settled := authority.settle(job_id, leg, self.worker_id)) is not None:
                log.warning("job %s: leg %s stopped: %s", job_id, leg, settled)
        return "stopped"

    def _checkpoints(self, job_id: str, leg: int, gate: WorkerGate | None = None) -> StoreCheckpoints:
        return StoreCheckpoints(
            self.jobs,
            job_id,
            self.worker_id,
            hand_back=self.draining.is_set,
            leg=leg,
            gate=gate,
            token=self.token,
            lost=lambda: self.lost,
        )

    def _refuse_forged(self, job: Job, leg: int) -> str:
        """A job whose record the store cannot vouch for is not run: its task, options or state may
        be anyone's. That is a record changed or added in the job database, and equally one with no
        signature (``legacy``): written before records were signed, or its signature removed, which
        cannot be told apart (a cancelled job's record unsigned and set running again would
        otherwise resume on the approval the cancel took back). Recorded; it ends failed (unsigned)."""
        from taskcrew.approvals.authority import Authority

        Authority(self.jobs).audit.append(
            "worker",
            "forged_job_refused",
            job.id,
            {
                "status": job.status,
                "submitted_by": job.submitted_by,
                "record_sig": job.record_sig,
                "record_trust": job.record_trust,
            },
        )
        why = (
            "taskcrew did not write the job's record"
            if job.record_trust == "forged"
            else "the job's record is not signed (written before records were signed, or its signature removed)"
        )
        self.jobs.mark(
            job.id,
            "failed",
            only_if=("queued", "running"),
            leg=leg,
            reason=f"{why}; submit the task again",
            finished_at=utcnow(),
        )
        return "failed"

    def _handed_back(self, job_id: str, leg: int, why: HandBack) -> str:
        self.jobs.hand_back(job_id, leg, self.worker_id, str(why), leg_ends=True, token=self.token)
        return "handed_back"

    def _fail(self, job_id: str, leg: int, why: str) -> str:
        """End a running job `failed`: why, and how to go on once that is fixed (only while this leg
        still runs it: a leg whose job was taken over meanwhile writes nothing over the new one's)."""
        self.jobs.mark(
            job_id,
            "failed",
            only_if=("running",),
            leg=leg,
            if_token=self.token,
            reason=f"{why}, then `taskcrew jobs retry {job_id}`",
            finished_at=utcnow(),
        )
        return "failed"

    def _run(self, job: Job, leg: int, halt: LegHalt, authority: Authority) -> str:
        from taskcrew.approvals.identity import submitter_as_proven
        from taskcrew.crew.context import RunLimits
        from taskcrew.crew.modellist import offered_model
        from taskcrew.crew.run import run_task

        opts = job.options
        run_dirs: list[Path] = []  # this leg's run folder, once made (a parked leg's trace is ended)
        try:  # setting the run up can fail too (a scripted model that knows no such task)
            offered_model(opts.worker_model, "worker")  # the operator's models only, whatever the row says
            offered_model(opts.verifier_model, "verifier")
            # --auto-approve is checked by the approvals authority (signed, permitted by the rules)
            human = JobHuman(
                self.jobs,
                job.id,
                expires_in=self.approval_ttl,
                auto_approve=opts.auto_approve,
                sandbox=self.place.settings.sandbox,  # the folder the run reads: its cited files are sealed
                authority=authority,
            )
            settings = self.place.run_settings(
                job.task,
                worker_model=opts.worker_model,
                verifier_model=opts.verifier_model,
                allow_same_verifier=opts.allow_same_verifier,
                limits=RunLimits(max_steps=opts.max_steps) if opts.max_steps else RunLimits(),
                criteria=opts.criteria,
                read_only=opts.read_only,
                submitted_by=submitter_as_proven(job.submitted_by, job.submitted_proof),  # what it proposes
                # a batch child's task is the batch planner's words from outsiders' e-mails, not hers
                task_origin=f"batch {job.origin.batch_id} ({job.origin.planner})" if job.origin else None,
            )
            res = self.place.resources(
                scripted=self.scripted(job) if self.scripted else None, human=human, read_only=opts.read_only
            )
            res.checkpoints = self._checkpoints(job.id, leg, human.gate)
            res.on_run_dir = lambda path: self._run_dir(job.id, leg, Path(path), run_dirs)
            res.on_files = lambda files: setattr(human, "read_digest", files.read_digest)
            res.wrap_model = self._shared_backoff
            res.check_stop = lambda: _raise_if(halt, job.id)
            gate = human.gate  # bound to this leg: it asks (parks) and sends only while the leg holds the job
            gate.holder = (self.worker_id, leg, self.token)  # still this leg's job? exactly this approved?
            if res.browser is not None:
                from taskcrew.tools.intents import IntentLog

                hide_approved(self.jobs, job.id, res.browser.vault, authority)  # before anything reads a page
                if not opts.auto_approve:
                    res.browser.policy.before_approval = self._screenshot_for(human, job.id)
                res.browser.policy.send_check = gate.may_send  # and ``sending`` as it leaves:
                authority.keys_by(res.browser.policy.rules)  # one snapshot: the leg's keys are its policy's
                res.browser.policy.intents = IntentLog(
                    StoreIntents(self.jobs, job.id, authority),
                    job.id,
                    readback_rules(self.place),
                    res.browser.policy.rules,
                    witness=gate.sent_before,
                    last_check=gate.sending,  # after the read-back: the last thing before it leaves
                    ask_again=lambda *asked: human.approve(gate.again(*asked)).approved,
                )
                self.policies[(job.id, leg)] = res.browser.policy  # hand_back_all halts it
                halt.policy = res.browser.policy  # and so does the heartbeat, for this leg only
            result = run_task(settings, res)
        except HandBack as why:
            return self._handed_back(job.id, leg, why)
        except Stopped:
            return self._stopped(authority, job.id, leg)
        except Parked as parked:
            if run_dirs:  # its folder says it parked, not that it was killed: written before the job
                _end_parked(run_dirs[-1], job.id, parked.approval_id)  # waits (sealed as it is set so)
            self.jobs.mark(
                job.id,
                "waiting",
                only_if=("running",),
                leg=leg,
                if_token=self.token,
                reason=f"waiting for approval {parked.approval_id}",
            )
            self.jobs.resume(job.id)  # decided while we were parking: back on the queue at once
            return "waiting"
        except Exception as exc:  # the run could not be set up (bad model, browser): clear, retryable
            return self._fail(job.id, leg, f"{type(exc).__name__}: {exc}; fix it")
        finally:  # the run is over: a job ended meanwhile (a cancel) has its folder sealed as left
            if run_dirs:
                with suppress(Exception):  # a database hiccup: the seal its ending made stands
                    self.jobs.seal_run(job.id, run_dirs[-1])
        ended = self.jobs.finish(
            job.id,
            result.outcome,
            result.reason,
            leg=leg,  # a leg that lost the job meanwhile ends nothing: the new holder's account stands
            if_token=self.token,  # (nor does another start of this worker id on the same leg)
            answer=result.answer,
            run_dir=str(Path(result.run_dir).resolve()),
        )
        if ended is None:
            return "stopped"
        self.jobs.clear_checkpoint(job.id, leg=leg)
        return "finished"

    def _run_dir(self, job_id: str, leg: int, path: Path, made: list[Path]) -> None:
        """The leg's run folder, made: kept (``made``) and named in the job's record, only while the
        leg still runs its job; else the leg stops here (``Stopped``), before its run begins."""
        made.append(path)
        if not self.jobs.note_run_dir(
            job_id, str(path.resolve()), leg=leg, worker=self.worker_id, token=self.token
        ):
            raise lost(self.jobs, job_id, leg)

    def _fan_out(self, job: Job, leg: int, authority: Authority) -> str:
        """A batch job: plan it once (the plan is checkpointed before any child is submitted, with the
        leg it was made on: its generation, part of its children's ids), draft every child (an item
        the store refuses is refused on its own, with why), then submit them all and set the batch
        waiting for them in one transaction that holds only while this leg still runs the batch
        (``Jobs.fan_out``: cancelled or taken over first, nothing is submitted). The batch finishes
        when its last child ends, with an outcome that follows theirs (``Jobs.settle_batch``)."""
        from taskcrew.crew.llm import build_provider_llm
        from taskcrew.crew.modelspec import choose_models
        from taskcrew.jobs.batch import plan_children
        from taskcrew.jobs.fanout import BatchPlan, describe_sources, plan_batch

        refusal = authority.unsigned_refusal(job, "fan out into child jobs the worker signs")
        if refusal is not None:
            self.jobs.mark(
                job.id,
                "failed",
                only_if=("running",),
                leg=leg,
                if_token=self.token,
                reason=refusal,
                finished_at=utcnow(),
            )
            return "failed"
        checkpoints = self._checkpoints(job.id, leg)
        generation: int | None = leg
        try:
            saved = checkpoints.load() or {}
            if "batch_plan" in saved:
                plan = BatchPlan.model_validate(saved["batch_plan"])
                generation = saved.get("generation")  # None: saved by a version before generations
                generation = generation if isinstance(generation, int) else None
                planner = str(saved.get("planner") or "the batch planner")
            else:
                opts = job.options
                spec = choose_models(
                    opts.worker_model, opts.verifier_model, allow_same=opts.allow_same_verifier
                ).worker
                llm = build_provider_llm(spec, self.scripted(job) if self.scripted else None)
                sources = describe_sources(self.place.settings.sandbox)
                plan = plan_batch(job.task, sources, self._shared_backoff(spec.raw, llm))
                planner = spec.raw
                checkpoints.save(
                    "batch_plan",
                    {"batch_plan": plan.model_dump(), "generation": generation, "planner": planner},
                )
            if not plan.items:
                ended = self.jobs.finish(
                    job.id,
                    "nothing_to_do",
                    "the batch planner found no item the task covers",
                    leg=leg,
                    if_token=self.token,
                )
                if ended is None:
                    return self._stopped(authority, job.id, leg)
                self.jobs.clear_checkpoint(job.id, leg=leg)
                return "finished"
            planned = plan_children(self.jobs, job, plan, generation=generation, planner=planner)
            if not planned.children():  # a plan that can never fan out: dropped, a retry plans anew
                why = "; ".join(planned.refused)[:2000]
                failed = self.jobs.mark(
                    job.id,
                    "failed",
                    only_if=("running",),
                    leg=leg,
                    if_token=self.token,
                    reason=f"none of the {len(plan.items)} item(s) the batch planner chose can be submitted "
                    f"({why}); the plan is dropped: `taskcrew jobs retry {job.id}` plans the batch again",
                    answer=planned.answer(),
                    finished_at=utcnow(),
                )
                if failed is not None:
                    self.jobs.clear_checkpoint(job.id, leg=leg)
                return "failed"
            if authority.leg_over(job.id, leg) is not None:  # a cancel the job database missed
                return self._stopped(authority, job.id, leg)
            batch = self.jobs.fan_out(
                job.id,
                planned.new,
                planned.fan_out(generation, planner),
                leg=leg,
                worker=self.worker_id,
                answer=planned.answer(),
                token=self.token,
            )
        except HandBack as why:
            return self._handed_back(job.id, leg, why)
        except Stopped:
            return self._stopped(authority, job.id, leg)
        except Exception as exc:  # no model, a plan that is not usable: clear and retryable
            return self._fail(job.id, leg, f"planning the batch failed: {exc}; fix it")
        if batch is None:  # cancelled, taken over or handed back before: no child was submitted
            return self._stopped(authority, job.id, leg)
        return "finished" if batch.status == "finished" else "waiting"

    def _screenshot_for(self, human: JobHuman, job_id: str) -> Callable[[Any], None]:
        """Before a submission is put to the person: a screenshot of the filled form, kept with the job."""
        from taskcrew.config import Paths

        folder = Paths.from_env().home / "jobs" / job_id
        count = 0

        def shoot(page: Any) -> None:
            nonlocal count
            count += 1
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"form-{utcnow():%Y%m%d-%H%M%S}-{count}.png"
            try:
                page.screenshot(path=str(path), full_page=True)
                human.screenshot = str(path)
            except Exception:  # a screenshot is evidence, not a reason to fail the step
                human.screenshot = None

        return shoot

    def _shared_backoff(self, model: str, inner: Any) -> Any:
        from taskcrew.jobs.backoff import SharedBackoff

        return SharedBackoff(self.jobs, model, inner)

    def _beat(
        self, job_id: str, leg: int, stop: threading.Event, halt: LegHalt, authority: Authority
    ) -> None:
        """Heart-beat; and when the job is no longer this leg's (cancelled, taken over — by another
        worker, or by this one on a newer leg — by the row or by the signed audit log), set ``halt``:
        a model call waiting for an answer stops within a beat, and the leg's browser sends nothing
        more (the newer leg may be sending)."""
        while not stop.wait(self.heartbeat_s):
            try:  # judged on the row the beat read (one read of the job a beat), then the signed log
                beat = self.jobs.heartbeat(job_id, self.worker_id, self.token)
                gone = self.lost or leg_refusal_of(authority, *beat, self.worker_id, leg, self.token)
            except Exception:  # a database hiccup: the next beat tries again
                continue
            if gone is not None:
                halt.set(gone)


class LegHalt(threading.Event):
    """Set when a job is no longer its running leg's: the leg's model calls stop (``check_stop``) and
    its browser sends nothing more (``policy``: its browser policy, halted)."""

    def __init__(self) -> None:
        super().__init__()
        self.policy: Any = None

    def set(self, why: str = "the job is no longer this leg's") -> None:
        if self.policy is not None:
            self.policy.halted = why
        super().set()


def hide_approved(jobs: Jobs, job_id: str, vault: Any, authority: Authority) -> None:
    """A leg's run starts knowing what its job's earlier legs hid: each value one of the job's
    approval requests shows in a password box (``authority.password_box``: typed there or put there by
    the page, not a vault secret) is a hidden value of this leg's run (``Vault.note_guess(by_page=True)``,
    in the order asked). A resumed leg that never opens that page reads the value again from the job's
    approvals and intent rows (the send as approved, into its facts, report, trace and the verifier's
    prompt): every one of them masks it, as the leg that met it did. The approval itself shows it.
    Only approvals a worker parked count (``Authority.parked_here``): a row inserted or edited in the
    job database hides nothing, or it could blind the run, its report and its verifier to any value."""
    from taskcrew.approvals.authority import password_box

    for approval in jobs.approvals(job_id=job_id):
        if not authority.parked_here(approval):
            continue
        for f in approval.request.fields if approval.request is not None else []:
            if password_box(f):
                vault.note_guess(f.value, by_page=True)


def _end_parked(run_dir: Path, job_id: str, approval_id: str) -> None:
    """End a parked leg's trace with what it is (``jobs.liveness.parked_event``): its run stops here,
    and the job goes on in a new leg's run folder once the approval is decided."""
    from taskcrew.crew.trace import Tracer
    from taskcrew.jobs.liveness import parked_event

    with suppress(OSError):  # a note for the folder's readers, never a reason to fail the leg
        Tracer(run_dir / "trace.jsonl").emit(parked_event(job_id, approval_id))


def _raise_if(halt: threading.Event, job_id: str) -> None:
    if halt.is_set():
        raise Stopped(f"job {job_id} was cancelled or taken over; this leg stops")


LEFT_OUT = "left out of the request key by the rules when the attempt was recorded"


class StoreIntents:
    """``tools.intents.IntentSink`` in the job database (one job's intents), with the job's sends by the
    signed audit log to check its rows against (``signed_sends``: a row can be deleted or added by
    anyone who can write the database; that log needs the key)."""

    def __init__(self, jobs: Jobs, job_id: str, authority: Authority | None = None) -> None:
        self.jobs, self.job_id = jobs, job_id
        self.authority = authority

    def signed_sends(self) -> list[Any]:
        """Every send of this job the signed audit log holds (``Authority.record_send``)."""
        from datetime import UTC, datetime

        from taskcrew.tools.intents import SignedSend

        sends = []
        for entry in self._authority().sends_of(self.job_id):
            said = entry.payload
            if not isinstance(said.get("key"), str):
                continue
            at = datetime.fromisoformat(entry.at)
            sends.append(
                SignedSend(
                    key=said["key"],
                    method=str(said.get("method", "")),
                    url=str(said.get("url", "")),
                    at=at if at.tzinfo is not None else at.replace(tzinfo=UTC),
                    excluded=said.get("excluded") if isinstance(said.get("excluded"), list) else None,
                )
            )
        return sends

    def send_key(self, method: str, url: str, fields: list[tuple[str, str]]) -> str:
        """The key a signed send of this request carries (``Authority.key_of``): for a row that does not
        keep its own (written before rows kept it: ``IntentRecord.send_key``) and a caller without the
        gate's key."""
        return self._authority().key_of(method, url, fields)

    def _authority(self) -> Authority:
        if self.authority is None:  # the operator's, as every durable run's; the store is left alone
            from taskcrew.approvals.authority import Authority

            self.authority = Authority(None)
        return self.authority

    def get(self, key: str) -> Any:
        intent = self.jobs.intent(key)
        return None if intent is None else self._record(intent)

    def records(self) -> list[Any]:
        """Every intent of the job (crew/outcome.py reads what earlier legs sent)."""
        return [self._record(intent) for intent in self.jobs.intents(self.job_id)]

    def put(self, record: Any) -> None:
        self.jobs.save_intent(self._intent(record))

    def claim(self, record: Any) -> Any:
        """Record a first attempt unless another leg already has (then its record)."""
        earlier = self.jobs.add_intent(self._intent(record))
        return None if earlier is None else self._record(earlier)

    @staticmethod
    def _record(intent: Intent) -> Any:
        from taskcrew.tools.intents import record_of

        return record_of(intent)

    def _intent(self, record: Any) -> Intent:
        from taskcrew.tools.human import ApprovalRequest, FieldValue

        payload = ApprovalRequest(
            kind="form_submission",
            method=record.method,
            url=record.url,
            fields=[FieldValue(name=n, value=v) for n, v in record.fields],
            key=record.send_key or "",  # the request's key (``IntentRecord.send_key``), signed with the row
            excluded={n: LEFT_OUT for n in record.excluded or []},  # signed with the row too
        )
        return Intent(
            key=record.key,
            job_id=self.job_id,
            target=record.url,
            payload=payload,
            status=record.status,
            result=record.result,
            seen=record.seen,
            approved_again=record.approved_again,
            recorded_at=record.at,
            exclusions_recorded=record.excluded is not None,  # an empty set too: nothing left out
        )


def readback_rules(place: Any) -> ReadBackRules:
    """The company's read-back rules (``readback.yaml`` beside its procedures, or ``TASKCREW_READBACK``)
    with its systems' addresses filled in; raises ``ReadBackFileError`` on a file that cannot be used."""
    from taskcrew.tools.readback import load_rules, rules_file

    systems = {"erp": place.erp_url, "intranet": getattr(place, "intranet_url", None) or ""}
    return load_rules(rules_file(place.settings.sandbox), systems)
