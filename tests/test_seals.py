"""Signatures over models survive a field added to the model later (with its default), and still
catch a forger who sets it; signatures made before payloads were settled still check out."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from taskcrew.approvals import seals
from taskcrew.approvals.signing import KeyRing
from taskcrew.jobs.models import Job, JobOptions


class LaterOptions(JobOptions):
    """JobOptions as a later version might have it: one more field, with a default."""

    skip_verifier: bool = False


def _job() -> Job:
    return Job(
        id="job-1",
        task="enter the Northwind bill",
        status="queued",
        submitted_at=datetime(2026, 12, 1, tzinfo=UTC),
        submitted_by="ana",
        options=JobOptions(auto_approve=True, criteria=["the bill is saved"]),
    )


def test_a_field_added_later_with_its_default_leaves_earlier_signatures_valid(tmp_path: Path) -> None:
    keys = KeyRing(tmp_path / "keys.json")
    job = _job()
    sig = keys.sign(seals.submission(job))
    later = job.model_copy(update={"options": LaterOptions(**job.options.model_dump())})
    assert seals.check(keys, seals.submission, later, sig)
    forged = job.model_copy(update={"options": LaterOptions(**job.options.model_dump(), skip_verifier=True)})
    assert not seals.check(keys, seals.submission, forged, sig)
    edited = job.model_copy(update={"options": JobOptions(auto_approve=True)})
    assert not seals.check(keys, seals.submission, edited, sig)


def test_a_signature_over_the_whole_dump_from_an_earlier_version_still_checks_out(tmp_path: Path) -> None:
    keys = KeyRing(tmp_path / "keys.json")
    job = _job()
    earlier = keys.sign(seals.submission(job, seals.whole))
    assert seals.check(keys, seals.submission, job, earlier)
    assert not seals.check(keys, seals.submission, job.model_copy(update={"task": "pay Vandelay"}), earlier)
