"""The web console: approvals inbox, jobs and runs with their evidence, eval results.

A client of the job store (taskcrew.jobs) and of the runs' artifacts (runs/<dir>/trace.jsonl,
report.md, screenshots) — never of the crew's internals. See docs/console.md.
"""
