"""Fan-out: one job per item, submitted together under a parent batch job.

``submit_each(jobs, "Enter {item}'s newest invoice into the ERP.", ["Initech", "Globex Corp"])`` makes
one child job per item; each child's id is derived from the batch and the item, so submitting the same
batch again (a retried CLI call, a resumed planner) enqueues nothing twice. The item's part of the id is
64 bits of its fingerprint (``ITEM_ID``), and an id already taken by another submission is an error
(``Jobs.submit``), never that other job returned in its place: an item (a vendor's file name) made to
collide with another one cannot leave that one's job silently uncreated.
"""

from __future__ import annotations

from taskcrew.jobs.models import Job, JobOptions
from taskcrew.jobs.store import InvalidChange, Jobs, UnknownJob, fingerprint

ITEM_ID = 16  # hex digits of the item's fingerprint in its child's id (64 bits)
LEGACY_ITEM_ID = 6  # what versions before gave it (24 bits): a batch they submitted keeps its children


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
) -> list[Job]:
    """``batch_id``: the parent (a planned batch job); else derived from the template and items."""
    items = [i.strip() for i in items if i.strip()]
    if not items:
        raise InvalidChange("--for-each needs at least one non-empty item")
    if "{item}" not in template:
        raise InvalidChange(
            'with --for-each the task needs an {item} placeholder, e.g. "Enter {item}\'s newest invoice"'
        )
    batch_id = batch_id or "batch-" + fingerprint({"t": template, "items": items, "by": submitted_by})[:12]
    children = []
    for item in items:
        child_id = _child_id(jobs, batch_id, item)
        children.append(
            jobs.submit(
                template.replace("{item}", item),
                submitted_by=submitted_by,
                submitted_proof=submitted_proof,
                submitted_credential=submitted_credential,
                options=options,
                parent_id=batch_id,
                item=item,
                job_id=child_id,
            )
        )
    return children


def _child_id(jobs: Jobs, batch_id: str, item: str) -> str:
    """The id of ``batch_id``'s job for ``item``: the one an earlier version gave it when that job is
    there (a batch planned before, resumed now: its children are not submitted twice), else the
    64-bit one."""
    digest = fingerprint({"item": item})
    legacy = f"{batch_id}-{digest[:LEGACY_ITEM_ID]}"
    try:
        earlier = jobs.get(legacy)
    except UnknownJob:
        earlier = None
    if earlier is not None and earlier.parent_id == batch_id and earlier.item == item:
        return legacy  # ``Jobs.submit`` checks it is the same submission
    return f"{batch_id}-{digest[:ITEM_ID]}"
