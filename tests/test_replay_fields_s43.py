"""A routine's save sends only the fields its review covered, to the path it covered.

A routine is learned from a verified run and accepted; a later release of the ERP adds a field to
the form ("Purchase order", ``ChaosConfig(form_change="add")``). Before, the replay filled its own
steps, sent the new field as the page left it and counted a clean replay. Now the approval step
records what its save sent (``models.Sends``: the path and every field name, the form's CSRF token
and the fields the page filled included), the gate holds the replay's save to it before anyone is
asked (``Policy.expected_send``, ``replay.off_review``), and anything else hands the run to the
agent, whose verified run proposes a version for review. A version accepted before the field set
was recorded does not replay at all: it falls back, and its verified run proposes one that records
it. Real Chromium, the demo ERP, real files; only the models are scripted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError
from routines_world import learned_chore, run_chore

from taskcrew.crew.trace import read_trace
from taskcrew.mock_erp import ChaosConfig, fetch_state
from taskcrew.routines.distil import describe_routine, describe_step
from taskcrew.routines.models import BrowserStep, PageExpect, Sends, Target
from taskcrew.routines.replay import off_review
from taskcrew.routines.store import diff
from taskcrew.tools.human import FieldValue, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, Submission

SEEDED = {f"BILL-{i:04d}" for i in range(1, 11)}
FORM = "http://127.0.0.1:8800/bills/new"


def _new_bills(url: str) -> list[tuple[str, str]]:
    return [(b.vendor, b.invoice_number) for b in fetch_state(url).bills if b.id not in SEEDED]


def _events(run: Any) -> list[Any]:
    return read_trace(run.run_dir / "trace.jsonl")


def _routine_events(events: list[Any]) -> list[tuple[str, str]]:
    return [(e.action, e.reason) for e in events if e.kind == "control" and e.action.startswith("routine:")]


def _save(*names: str, url: str = FORM) -> Submission:
    return Submission(
        origin="form", method="POST", url=url, fields=[FieldValue(name=n, value="") for n in names]
    )


# ------------------------------------------------------------------ the rule, without a browser


def test_a_save_is_held_to_the_field_names_and_path_it_was_reviewed_with() -> None:
    sends = Sends(path="/bills/new", fields=["amount", "csrf_token", "invoice_number"])
    assert off_review(sends, _save("csrf_token", "invoice_number", "amount")) is None  # any order
    assert off_review(sends, _save("csrf_token", "invoice_number", "amount", "purchase_order")) == (
        "field(s) the review never saw: purchase_order"
    )
    assert (
        off_review(sends, _save("csrf_token", "invoice_number")) == "no field(s) amount, which the review saw"
    )
    assert off_review(sends, _save("csrf_token", "invoice_number", "amount", url="http://h/bills/pay")) == (
        "to /bills/pay, not /bills/new"
    )
    # a step records what it sends only as the approval step
    with pytest.raises(ValueError, match="sends goes with approval"):
        BrowserStep(kind="click", target=Target(role="button", name="Save bill"), sends=sends)


def test_the_gate_blocks_a_save_off_the_review_before_anyone_is_asked() -> None:
    human = ScriptedHuman()  # any approval request would raise: none may be asked
    policy = Policy(PolicyConfig(), human)
    policy.expected_send = lambda sub: off_review(Sends(path="/bills/new", fields=["invoice_number"]), sub)
    decision = policy.submission(_save("invoice_number", "purchase_order"))
    assert decision.outcome == "blocked" and "purchase_order" in decision.reason
    assert human.requests == []


# ------------------------------------------------------------------ end to end


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The headline chore run once by the agent on the ERP as it is, its draft accepted."""
    with learned_chore(tmp_path_factory.mktemp("routines")) as world:
        yield world


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_learned_save_records_every_field_it_sent_and_where(learned: dict[str, Any]) -> None:
    reviewed = learned["store"].get("enter-invoice", 1)
    (save,) = [s for s in reviewed.browser if s.approval]
    assert save.sends is not None
    approved = [
        e.payload for e in _events(learned["first"]) if e.kind == "approval" and e.answer == "approved"
    ]
    # every field the approved save carried (the trace leaves the token out), the token too, and the
    # ones no step fills ("notes", sent empty)
    assert set(save.sends.fields) == {*approved[-1], "csrf_token"}
    assert "notes" in save.sends.fields and "purchase_order" not in save.sends.fields
    assert save.sends.path == "/bills/new"
    assert any(line.endswith(save.sends.describe()) for line in describe_routine(reviewed))  # reviewed


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_form_with_a_field_the_review_never_saw_falls_back_before_anyone_is_asked(
    learned: dict[str, Any],
) -> None:
    place, case, store = learned["place"], learned["case"], learned["store"]
    run = run_chore(place, case, chaos=ChaosConfig(form_change="add", save_faults=[]))
    assert run.outcome == "done", run.reason  # the agent did the chore
    assert _new_bills(place.erp_url) == [("Northwind Traders", "INV-2057")]  # once
    events = _events(run)
    said = _routine_events(events)
    assert [a for a, _ in said] == ["routine:replay", "routine:fallback"], said
    assert "field(s) the review never saw: purchase_order" in said[1][1]
    assert "the gate did not send it and asked no one" in said[1][1]
    blocked = [e for e in events if e.kind == "policy" and e.decision == "blocked"]
    assert blocked and "purchase_order" in blocked[0].detail["reason"]
    # the only approval asked is the agent's, after the fallback, and it shows the new field
    fell = next(i for i, e in enumerate(events) if e.kind == "control" and e.action == "routine:fallback")
    asked = [i for i, e in enumerate(events) if e.kind == "approval"]
    assert len(asked) == 1 and asked[0] > fell and "purchase_order" in events[asked[0]].payload
    counted = store.get("enter-invoice", 1)
    assert (counted.successes, counted.fallbacks) == (0, 1)
    healed = store.versions("enter-invoice")[-1]  # proposed for review, the new field in it
    assert (healed.version, healed.status, healed.based_on) == (2, "draft", 1)
    (save,) = [s for s in healed.browser if s.approval]
    assert save.sends is not None and "purchase_order" in save.sends.fields
    assert "purchase_order" in diff(counted, healed)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_version_accepted_before_the_field_set_was_recorded_falls_back_and_is_relearned(
    learned: dict[str, Any],
) -> None:
    place, case, store = learned["place"], learned["case"], learned["store"]
    v1 = store.get("enter-invoice", 1)
    legacy = v1.model_copy(update={"browser": [s.model_copy(update={"sends": None}) for s in v1.browser]})
    older, new = store.propose(legacy)
    assert new
    store.accept("enter-invoice", older.version, "reviewer")
    run = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
    assert run.outcome == "done", run.reason
    said = _routine_events(_events(run))
    assert [a for a, _ in said] == ["routine:replay", "routine:fallback"], said
    assert "does not record what its save sends" in said[1][1]
    assert store.get("enter-invoice", older.version).fallbacks == 1
    relearned = store.versions("enter-invoice")[-1]
    assert relearned.status == "draft" and relearned.based_on == older.version
    (save,) = [s for s in relearned.browser if s.approval]
    (was,) = [s for s in v1.browser if s.approval]
    assert save.sends == was.sends  # the same form: the same fields, now recorded for review


def test_describe_says_when_a_save_records_no_field_set() -> None:
    step = BrowserStep(
        kind="click",
        target=Target(role="button", name="Save bill"),
        approval=True,
        then=PageExpect(path="/bills/[^/]+"),
    )
    assert "records no field set it sends: it does not replay" in describe_step(step)


@pytest.mark.parametrize("model", [PageExpect, Sends])
def test_a_path_that_is_no_pattern_is_a_validation_error(model: type[PageExpect] | type[Sends]) -> None:
    """A routine file holding one is "not a usable routine" (``store.load`` catches validation
    errors only): the re module's own error escaped and stopped every routine from loading."""
    with pytest.raises(ValidationError, match="is not a regular expression"):
        model(path="[")
