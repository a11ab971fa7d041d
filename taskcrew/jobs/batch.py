"""Fan-out: one job per item, submitted together under a parent batch job.

``submit_each(jobs, "Enter {item}'s newest invoice into the ERP.", ["Initech", "Globex Corp"])`` makes
one child job per item; each child's id is derived from the batch and the item, so submitting the same
batch again (a retried CLI call, a resumed planner) enqueues nothing twice.
"""

from __future__ import annotations

from taskcrew.jobs.models import Job, JobOptions
from taskcrew.jobs.store import InvalidChange, Jobs, fingerprint


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
        child_id = f"{batch_id}-{fingerprint({'item': item})[:6]}"
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
