"""Fan-out: one job per item, submitted together under a parent batch.

``submit_each(jobs, "Enter {item}'s newest invoice into the ERP.", ["Initech", "Globex Corp"])`` makes
one child job per item (``--for-each``). Each call is an attempt of its own: the batch's id is derived
from the template, the items, the submitter and a key, fresh for every call unless the caller gives
one (``--idempotency-key``): the same chore submitted next month queues new jobs, and a call retried
with its key queues nothing twice (the jobs it returns are the ones already there, in whatever state
they are: the CLI says so). Every child is checked before any is submitted: one item the store
refuses submits nothing.

``plan_children`` drafts a planned batch's children (``--batch``, ``runner.LegRunner._fan_out``):
their ids derive from the batch job, its generation (the leg its plan was made on: a retry plans a
new one) and the item; an item the store refuses is refused on its own, with why; the children are
the planner's words, so they carry where they came from (``Job.origin``) and never the batch's
``--auto-approve``.

The item's part of a child's id is 64 bits of its fingerprint (``ITEM_ID``), and an id already taken
by another submission is an error (``Jobs.submit``), never that other job returned in its place: an
item (a vendor's file name) made to collide with another one cannot leave that one's job silently
uncreated.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from taskcrew.jobs.fanout import BatchPlan
from taskcrew.jobs.models import BatchOrigin, FanOut, Job, JobOptions
from taskcrew.jobs.store import InvalidChange, Jobs, UnknownJob, fingerprint

ITEM_ID = 16  # hex digits of the item's fingerprint in its child's id (64 bits)
LEGACY_ITEM_ID = 6  # what versions before gave it (24 bits): a batch they submitted keeps its children


def batch_id_for(template: str, items: list[str], submitted_by: str, key: str) -> str:
    """A ``--for-each`` batch's id: one attempt (``key``) of this template, these items, this person."""
    return "batch-" + fingerprint({"t": template, "items": items, "by": submitted_by, "key": key})[:12]


def clean_items(items: list[str]) -> list[str]:
    return [i.strip() for i in items if i.strip()]


def submit_each(
    jobs: Jobs,
    template: str,
    items: list[str],
    *,
    submitted_by: str,
    submitted_proof: str = "os_user",
    submitted_credential: str | None = None,
    options: JobOptions | None = None,
    batch_id: str | None = None,
    key: str | None = None,
) -> list[Job]:
    """``batch_id``: the batch the children belong to; else derived from the template, the items, the
    submitter and ``key`` (``batch_id_for``; without a key, a fresh one: a new attempt). Every child is
    drafted (checked) before any is submitted."""
    items = clean_items(items)
    if not items:
        raise InvalidChange("--for-each needs at least one non-empty item")
    if "{item}" not in template:
        raise InvalidChange(
            'with --for-each the task needs an {item} placeholder, e.g. "Enter {item}\'s newest invoice"'
        )
    legacy = batch_id is not None  # a batch id given: it may have children a version before submitted
    batch_id = batch_id or batch_id_for(template, items, submitted_by, key or secrets.token_hex(8))
    drafts = [
        jobs.draft(
            template.replace("{item}", item),
            submitted_by=submitted_by,
            submitted_proof=submitted_proof,
            submitted_credential=submitted_credential,
            options=options,
            parent_id=batch_id,
            item=item,
            job_id=_child_id(jobs, batch_id, item, None, legacy=legacy),
        )
        for item in items
    ]
    for draft in drafts:  # another submission under a child's id: nothing submitted (said why)
        jobs.submitted_as(draft)
    return [
        jobs.submit(
            draft.task,
            submitted_by=submitted_by,
            submitted_proof=submitted_proof,
            submitted_credential=submitted_credential,
            options=options,
            parent_id=batch_id,
            item=draft.item,
            job_id=draft.id,
        )
        for draft in drafts
    ]


@dataclass
class Planned:
    """A planned batch's children as drafted: ``new`` to submit, ``stored`` already there as the same
    submission (a plan a version before fanned out part of), ``refused`` each item the store refused,
    with why."""

    new: list[Job] = field(default_factory=list)
    stored: list[Job] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def children(self) -> list[Job]:
        return [*self.stored, *self.new]

    def fan_out(self, generation: int | None, planner: str) -> FanOut:
        return FanOut(
            generation=generation,
            planner=planner,
            children=[c.id for c in self.children()],
            refused=self.refused,
        )

    def answer(self) -> str:
        """The batch's answer: a line per child (its id and item) and per item refused (``refused``,
        the item escaped, and why). An item holds no line break (``store.check_item``); a refused one
        is shown escaped: one line each, whatever the planner wrote."""
        lines = [f"{c.id}  {c.item}" for c in self.children()]
        return "\n".join([*lines, *(f"refused  {why}" for why in self.refused)])


def plan_children(
    jobs: Jobs, batch: Job, plan: BatchPlan, *, generation: int | None, planner: str
) -> Planned:
    """Draft one child of ``batch`` per item of ``plan`` (nothing stored): the batch's submitter and
    options, but never its ``--auto-approve`` (the task is the planner's words, which nobody
    approved), and where the task came from (``Job.origin``: the batch, its task, the planner).
    ``generation``: the leg the plan was made on (None: a plan saved by a version before, whose
    children's ids had none)."""
    options = batch.options.model_copy(update={"batch": False, "auto_approve": False})
    origin = BatchOrigin(batch_id=batch.id, batch_task=batch.task, planner=planner, generation=generation)
    planned = Planned()
    for item in plan.items:
        try:
            draft = jobs.draft(
                plan.template.replace("{item}", item),
                submitted_by=batch.submitted_by,
                submitted_proof=batch.submitted_proof,
                submitted_credential=batch.submitted_credential,
                options=options,
                parent_id=batch.id,
                item=item,
                job_id=_child_id(jobs, batch.id, item, generation, legacy=generation is None),
                origin=origin,
            )
            stored = jobs.submitted_as(draft)
        except InvalidChange as exc:
            planned.refused.append(f"{item!r}: {' '.join(str(exc).split())}")
            continue
        (planned.stored if stored is not None else planned.new).append(stored or draft)
    return planned


def _child_id(jobs: Jobs, batch_id: str, item: str, generation: int | None, *, legacy: bool) -> str:
    """The id of ``batch_id``'s job for ``item``, in the plan made on leg ``generation``. ``legacy``:
    the one an earlier version gave it when that job is there (a batch planned before, resumed now:
    its children are not submitted twice), else the 64-bit one."""
    digest = fingerprint({"item": item})
    if generation is not None:
        return f"{batch_id}-g{generation}-{digest[:ITEM_ID]}"
    if legacy:
        old = f"{batch_id}-{digest[:LEGACY_ITEM_ID]}"
        try:
            earlier = jobs.get(old)
        except UnknownJob:
            earlier = None
        if earlier is not None and earlier.parent_id == batch_id and earlier.item == item:
            return old  # ``Jobs.submit`` checks it is the same submission
    return f"{batch_id}-{digest[:ITEM_ID]}"
