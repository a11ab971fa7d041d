"""Figures from the jobs' histories (tests and benches): how many legs ran at the same moment."""

from __future__ import annotations

from datetime import datetime

from taskcrew.jobs.store import Jobs

# A leg runs from its "running" event to the next event that ends it (a new "running" event is a
# restarted worker claiming the job again).
_ENDS = {"finished", "failed", "waiting", "taken_over", "handed_back", "cancelled", "running"}


def most_running_at_once(jobs: Jobs, job_ids: list[str]) -> int:
    """The most legs of these jobs that were running at the same moment (jobs still running count
    until now)."""
    edges: list[tuple[datetime, int]] = []
    for job_id in job_ids:
        running = False
        for event in jobs.events(job_id):
            if event.kind in _ENDS and running:
                edges.append((event.at, -1))
                running = False
            if event.kind == "running":
                edges.append((event.at, +1))
                running = True
    most = now = 0
    for _, step in sorted(edges):  # at the same instant an end (-1) sorts before a start (+1)
        now += step
        most = max(most, now)
    return most
