"""Batches, a red team's second round: a child of a cancelled batch retried on its own (accepted,
queued on a new leg every leg of which its batch's standing cancel refused: left `running` on a leg
nobody may run), and a batch's cancel whose cascade never ran (the process stopped between the
batch's change and ``_cancel_children``): its children stayed queued, waiting (their approvals on
the worklist) or running for good, and after a retry of the batch its earlier generation ran again
beside the new one.

Now (docs/jobs.md, "A batch follows its children"): a child its batch's cancel ends
(``Authority.batch_cancel``: the batch's standing cancel, or one made after the child's generation
was planned, a retry of the batch since or not) acts no more, is not retried on its own (the one
refusal every surface goes through: ``jobs retry``, the console's retry button; one line, saying to
retry the batch), and is cancelled where the cascade never reached it (``Authority.end_with_batch``:
by a worker that claims it, by ``settle``, by the watch loop's pass over active children), with a
signed cancel of its own naming the batch's; its pending approvals close with it. A retry of the
batch plans a new generation, which runs.

The job store is real SQLite, the audit log real and signed, the authority real; the planner is the
scripted model; the children's runs are the real worker (``LegRunner.run_leg``) or the store's own
writes, as a worker makes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_adversarial_batches import (
    ANA,
    BATCH,
    BOB,
    OPTIONS,
    _box,
    _child_cancels,
    _cli_env,
    _end,
    _fanned,
    _plan,
    _runner,
)
from test_adversarial_races import _request
from test_adversarial_races_4 import SMALL
from typer.testing import CliRunner

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.worker import leg_refusal
from taskcrew.cli import app
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman, Parked
from taskcrew.jobs.store import InvalidChange
from taskcrew.jobs.worker import resume_decided

ITEMS = ["Invoice 1.eml", "Invoice 2.eml"]


@pytest.fixture
def jobs(tmp_path: Path, isolated_home: Path) -> Iterator[Jobs]:
    store = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    yield store
    store.close()


def _cascade_lost(monkeypatch: pytest.MonkeyPatch, authority: Authority, batch_id: str) -> None:
    """bob's cancel of the batch lands in the signed log and the job database; the process stops
    before it goes on to the children (``_cancel_children`` never runs)."""
    real = Authority._cancel_children
    monkeypatch.setattr(Authority, "_cancel_children", lambda *a, **k: None)
    authority.act_on_job(batch_id, "cancel", BOB)
    monkeypatch.setattr(Authority, "_cancel_children", real)  # a fresh process from here on
    assert authority.jobs.get(batch_id).status == "cancelled"


def _park(jobs: Jobs, kid: str) -> str:
    """The child's run asks for its bill to be approved: it waits, its approval on the worklist."""
    jobs.mark(kid, "running", only_if=("queued",), worker="w2", beat=True)
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, kid).approve(_request(SMALL))
    jobs.mark(kid, "waiting", only_if=("running",))
    return parked.value.approval_id


# ---- 1: a child of a cancelled batch is not retried on its own ------------------------------------


def test_a_child_of_a_cancelled_batch_is_not_retried_on_its_own(jobs: Jobs, tmp_path: Path) -> None:
    """bob cancels the batch (the cascade cancels the child); ana retries the child alone. Refused,
    in one line that says to retry the batch, and recorded; the child stays cancelled. Before, the
    retry was accepted (queued on a new leg) and every leg of it was refused by the batch's cancel: a
    worker that claimed it left it `running` on a leg nobody may run."""
    batch_id, (kid,) = _fanned(jobs, tmp_path, ["Invoice 1.eml"])
    authority = Authority(jobs)
    authority.act_on_job(batch_id, "cancel", BOB)
    assert jobs.get(kid).status == "cancelled"
    with pytest.raises(InvalidChange) as refused:
        authority.act_on_job(kid, "retry", ANA)
    said = str(refused.value)
    assert "\n" not in said and f"batch {batch_id}, which bob cancelled" in said, said
    assert f"`taskcrew jobs retry {batch_id}`" in said, said
    assert jobs.get(kid).status == "cancelled" and jobs.leg(kid) == 0
    assert [e.target for e in authority.audit.entries(("retry_refused",))] == [kid]
    assert not [e for e in authority.audit.signed(("retrying", "retry")) if e.target == kid]


def test_the_cli_and_the_console_refuse_it_alike(
    jobs: Jobs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path
) -> None:
    """`taskcrew jobs retry <child>` and the console's retry button go through the one authority:
    both refuse, saying to retry the batch, and neither queues the child."""
    from fixtures_console import client_as

    _cli_env(tmp_path, monkeypatch)
    batch_id, (kid,) = _fanned(jobs, tmp_path, ["Invoice 1.eml"])
    Authority(jobs).act_on_job(batch_id, "cancel", BOB)
    cli = CliRunner().invoke(app, ["jobs", "retry", kid])
    assert cli.exit_code != 0, cli.output
    said = " ".join(cli.output.split())
    assert f"`taskcrew jobs retry {batch_id}`" in said, said
    assert jobs.get(kid).status == "cancelled"

    client = client_as("ana", jobs, tmp_path, console_users, follow_redirects=True)
    page = client.get(f"/jobs/{kid}")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf, page.text
    shown = client.post(
        f"/jobs/{kid}/retry", data={"csrf": csrf.group(1)}, headers={"origin": "http://testserver"}
    )
    words = " ".join(re.sub(r"<[^>]+>", " ", shown.text).split()).replace("&#x60;", "`")
    assert f"taskcrew jobs retry {batch_id}" in words, words
    assert jobs.get(kid).status == "cancelled" and jobs.leg(kid) == 0


def test_a_child_whose_batch_was_not_cancelled_is_still_retried_on_its_own(
    jobs: Jobs, tmp_path: Path
) -> None:
    """What still works: a failed child of a batch that ended on its own is retried alone and runs."""
    batch_id, (one, two) = _fanned(jobs, tmp_path, ITEMS)
    _end(jobs, one, "done")
    _end(jobs, two, "failed")
    assert jobs.get(batch_id).outcome == "incomplete"
    authority = Authority(jobs)
    assert authority.act_on_job(two, "retry", ANA).status == "queued"
    leg = jobs.leg(two)
    jobs.mark(two, "running", only_if=("queued",), leg=leg, worker="w1", beat=True)
    assert authority.settle(two, leg, "w1") is None and leg_refusal(authority, two, "w1", leg) is None


# ---- 2: a cascade that never ran is finished ------------------------------------------------------


def test_the_watch_loop_finishes_a_lost_cascade_and_clears_the_worklist(
    jobs: Jobs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch is cancelled, its children are not (the process stopped before the cascade): one
    waits on its approval (on the approver's worklist), one is queued. The watch loop's pass cancels
    both, each with a signed cancel of its own naming the batch's, and the approval leaves the
    worklist. Before, nothing ever cancelled them: the lists showed them active for good."""
    batch_id, (parked, queued) = _fanned(jobs, tmp_path, ITEMS)
    approval_id = _park(jobs, parked)
    authority = Authority(jobs)
    assert [v.approval.id for v in authority.pending()] == [approval_id]
    _cascade_lost(monkeypatch, authority, batch_id)
    assert [jobs.get(k).status for k in (parked, queued)] == ["waiting", "queued"]
    resume_decided(jobs, {}, 60.0)  # at once: no grace for a cancel the signed log holds
    for kid in (parked, queued):
        child = jobs.get(kid)
        assert (child.status, child.cancelled_by) == ("cancelled", "bob"), child.reason
        assert len(_child_cancels(authority, batch_id, kid)) == 1
    assert authority.pending() == [] and jobs.approval(approval_id).status == "expired"
    resume_decided(jobs, {}, 60.0)  # a second pass does nothing more
    assert len(_child_cancels(authority, batch_id, queued)) == 1


def test_a_worker_that_claims_a_child_of_a_cancelled_batch_cancels_it(
    jobs: Jobs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lost cascade, and a worker takes the queued child before any watch loop pass: its
    leg does not run, and the child is cancelled (not left running on a leg nobody may run). Before,
    the claim's ``settle`` found no end of the child's own and the leg went on."""
    batch_id, kids = _fanned(jobs, tmp_path, ITEMS)
    authority = Authority(jobs)
    _cascade_lost(monkeypatch, authority, batch_id)
    runner, llm = _runner(jobs, _box(tmp_path, ITEMS))
    assert runner.run_leg(kids[0], 0) == "stopped"
    child = jobs.get(kids[0])
    assert (child.status, child.cancelled_by, child.worker) == ("cancelled", "bob", "w1"), child.reason
    assert len(_child_cancels(authority, batch_id, kids[0])) == 1 and llm.calls == []


def test_settle_cancels_a_child_whose_row_was_set_back_to_queued(jobs: Jobs, tmp_path: Path) -> None:
    """A child retried on its own while its batch's cancel stood (as versions before let a person do:
    its retry entry and a new leg), then claimed: ``settle`` cancels it, naming the batch's cancel,
    instead of leaving it running on a leg every check refuses."""
    batch_id, (kid,) = _fanned(jobs, tmp_path, ["Invoice 1.eml"])
    authority = Authority(jobs)
    authority.act_on_job(batch_id, "cancel", BOB)
    # what a version before accepted: the child's retry, written as act_on_job wrote it
    ahead = authority.audit.append("ana", "retrying", kid, {"proof": "os_user", "void": [], "leg": 0})
    jobs.retry(kid, by="ana", leg=0, was="cancelled")
    authority.audit.append("ana", "retry", kid, dict(ahead.payload))
    leg = jobs.leg(kid)
    jobs.mark(kid, "running", only_if=("queued",), leg=leg, worker="w1", beat=True)
    settled = authority.settle(kid, leg, "w1")
    assert settled is not None and f"batch {batch_id} was cancelled by bob" in settled, settled
    assert jobs.get(kid).status == "cancelled"
    assert len(_child_cancels(authority, batch_id, kid)) == 2  # the cascade's, and this one


# ---- generations: a batch retried after a cancel --------------------------------------------------


def test_after_a_lost_cascade_the_batchs_retry_runs_its_new_generation_not_the_old(
    jobs: Jobs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bob's cancel lost its cascade; ana retries the batch, which plans a new generation. The earlier
    generation's children (still queued) act no more and are cancelled by the watch loop; the new
    one's run, and the batch settles `done` on them. Before, the retry lifted the batch's cancel for
    every child: the old generation ran again beside the new one, each invoice entered twice."""
    batch_id, old = _fanned(jobs, tmp_path, ITEMS)
    authority = Authority(jobs)
    _cascade_lost(monkeypatch, authority, batch_id)
    authority.act_on_job(batch_id, "retry", ANA)
    leg = jobs.leg(batch_id)
    runner, _ = _runner(jobs, _box(tmp_path, ITEMS), _plan(ITEMS))
    assert runner.run_leg(batch_id, leg) == "waiting"
    fresh = [c.id for c in jobs.children(batch_id) if c.id not in old]
    assert len(fresh) == 2
    jobs.mark(old[0], "running", only_if=("queued",), worker="w2", beat=True)
    why = leg_refusal(authority, old[0], "w2", 0)
    assert why is not None and f"batch {batch_id} was cancelled by bob" in why, why
    resume_decided(jobs, {}, 60.0)
    assert [jobs.get(k).status for k in old] == ["cancelled", "cancelled"]
    assert [jobs.get(k).status for k in fresh] == ["queued", "queued"]
    for kid in fresh:
        jobs.mark(kid, "running", only_if=("queued",), worker="w2", beat=True)
        assert authority.settle(kid, 0, "w2") is None and leg_refusal(authority, kid, "w2", 0) is None
        jobs.finish(kid, "done", "ended done")
    batch = jobs.get(batch_id)
    assert (batch.status, batch.outcome) == ("finished", "done"), batch.reason


def test_an_old_generations_child_is_not_retried_after_the_batchs_retry(jobs: Jobs, tmp_path: Path) -> None:
    """The batch cancelled (its children with it) and retried: a child of the generation the cancel
    ended is not retried on its own (its item runs in the new generation), and says so. Before, it
    was queued beside the new generation's child for the same item."""
    batch_id, (kid, _) = _fanned(jobs, tmp_path, ITEMS)
    authority = Authority(jobs)
    authority.act_on_job(batch_id, "cancel", BOB)
    authority.act_on_job(batch_id, "retry", ANA)
    with pytest.raises(InvalidChange) as refused:
        authority.act_on_job(kid, "retry", ANA)
    said = str(refused.value)
    assert "retried since" in said and "new generation" in said and "\n" not in said, said
    assert jobs.get(kid).status == "cancelled"


def test_a_batch_cancelled_before_it_fanned_out_and_retried_runs_its_children(
    jobs: Jobs, tmp_path: Path
) -> None:
    """Cancelled after its plan was saved and before its children were submitted, then retried: the
    retry plans anew on its own leg (the cancelled run's plan is taken back with it), so the children
    it fans out are of a generation after the cancel and run."""
    box = _box(tmp_path, ITEMS)
    authority = Authority(jobs)
    batch = jobs.submit(BATCH, submitted_by="ana", submitted_proof="console", options=OPTIONS)
    real_save = jobs.save_checkpoint

    def save_then_cancel(job_id: str, doc: dict[str, Any], **kw: Any) -> bool:
        saved = real_save(job_id, doc, **kw)
        if "batch_plan" in doc:
            authority.act_on_job(batch.id, "cancel", BOB)
        return saved

    jobs.save_checkpoint = save_then_cancel  # type: ignore[method-assign]
    runner, _ = _runner(jobs, box, _plan(ITEMS))
    assert runner.run_leg(batch.id, 0) == "stopped"
    jobs.save_checkpoint = real_save  # type: ignore[method-assign]
    assert jobs.checkpoint(batch.id) is not None  # the cancelled run's plan
    authority.act_on_job(batch.id, "retry", ANA)
    leg = jobs.leg(batch.id)
    runner, llm = _runner(jobs, box, _plan(ITEMS))
    assert runner.run_leg(batch.id, leg) == "waiting"
    assert len(llm.calls) == 1  # planned anew
    kids = [c.id for c in jobs.children(batch.id)]
    assert len(kids) == 2 and all(f"-g{leg}-" in k for k in kids)
    resume_decided(jobs, {}, 60.0)
    assert [jobs.get(k).status for k in kids] == ["queued", "queued"]
    for kid in kids:
        _end(jobs, kid, "done")
    done = jobs.get(batch.id)
    assert (done.status, done.outcome) == ("finished", "done"), done.reason
