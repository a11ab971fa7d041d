"""A routine's save is held to everything its review could see, the address's query too.

A red team showed a replay sending data its review never covered: an ERP release moved data into
the form's action (``/bills/new?pay_now=1&approver=auto``), and ``replay.off_review`` compared only
the body's field names and the URL's path, so the replay saved the bill with the new parameters,
counted a clean replay and asked the approver only as usual. Now a routine's approval step records
its save's method and the names of its query's parameters beside its body's field names
(``models.Sends``, learned by ``distil``), and the gate holds a replay's save to all of them and to
the routine's system (scheme, host and port) before anyone is asked. Names only: a value that
differs from run to run is the person's to approve. A version learned before the query was recorded
cannot show any query was there: a save with one is off its review. Real Chromium, the demo ERP,
real files; only the models are scripted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from routines_world import learned_chore, run_chore

from taskcrew.crew.trace import read_trace
from taskcrew.mock_erp import ChaosConfig, bill_pages, fetch_state
from taskcrew.routines.distil import _sends
from taskcrew.routines.models import Sends
from taskcrew.routines.recording import ActRecord
from taskcrew.routines.replay import off_review
from taskcrew.routines.store import diff
from taskcrew.tools.human import FieldValue, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, Submission

ERP = "http://127.0.0.1:8800"
SEEDED = {f"BILL-{i:04d}" for i in range(1, 11)}


def _save(url: str, *names: str, method: str = "POST") -> Submission:
    fields = [FieldValue(name=n, value="") for n in names or ("invoice_number",)]
    return Submission(origin="form", method=method, url=url, fields=fields)


# ------------------------------------------------------------------ the rule, without a browser


def test_a_save_is_held_to_the_query_names_it_was_reviewed_with() -> None:
    from taskcrew.routines.models import query_names  # the one reading of a save's query

    sends = Sends(path="/bills/new", fields=["invoice_number"], query=[])
    assert off_review(sends, _save(f"{ERP}/bills/new"), ERP) is None
    assert off_review(sends, _save(f"{ERP}/bills/new?pay_now=1&approver=auto"), ERP) == (
        "query parameter(s) the review never saw: approver, pay_now"
    )
    # as the system reads them: percent-decoded, a bare name, an empty value
    assert off_review(sends, _save(f"{ERP}/bills/new?pay%5Fnow"), ERP) == (
        "query parameter(s) the review never saw: pay_now"
    )
    assert query_names("http://h/p?b=&a=1&a=2&pay%5Fnow#x=1") == ["a", "b", "pay_now"]
    # a fragment is not sent: nothing to hold
    assert off_review(sends, _save(f"{ERP}/bills/new#top"), ERP) is None
    # a query the review saw: its values vary from run to run (an id), its names may not
    step = Sends(path="/bills/[^/]+/pay", fields=["csrf_token"], query=["batch"])
    assert off_review(step, _save(f"{ERP}/bills/BILL-0003/pay?batch=17", "csrf_token"), ERP) is None
    assert off_review(step, _save(f"{ERP}/bills/BILL-0004/pay?batch=92", "csrf_token"), ERP) is None
    assert off_review(step, _save(f"{ERP}/bills/BILL-0004/pay", "csrf_token"), ERP) == (
        "no query parameter(s) batch, which the review saw"
    )
    assert off_review(step, _save(f"{ERP}/bills/BILL-0004/pay?batch=9&approver=auto", "csrf_token"), ERP) == (
        "query parameter(s) the review never saw: approver"
    )


def test_a_version_learned_before_the_query_was_recorded_lets_no_query_through() -> None:
    old = Sends.model_validate({"path": "/bills/new", "fields": ["invoice_number"]})  # as kept before
    assert old.query is None and old.method == "POST"
    assert off_review(old, _save(f"{ERP}/bills/new"), ERP) is None  # it still replays as reviewed
    off = off_review(old, _save(f"{ERP}/bills/new?pay_now=1"), ERP)
    assert off is not None and off.startswith("query parameter(s) pay_now, which the review cannot show")
    assert "learned before a save's query was recorded: any query is off review" in old.describe()


def test_a_save_is_held_to_its_method_and_the_routines_system() -> None:
    sends = Sends(path="/bills/new", fields=["invoice_number"], query=[])
    assert off_review(sends, _save(f"{ERP}/bills/new", method="PUT"), ERP) == "by PUT, not POST"
    assert off_review(sends, _save("http://127.0.0.1:8801/bills/new"), ERP) == (
        f"to http://127.0.0.1:8801, not the routine's system ({ERP})"
    )
    assert off_review(sends, _save("https://127.0.0.1:8800/bills/new"), ERP) == (
        f"to https://127.0.0.1:8800, not the routine's system ({ERP})"
    )
    assert off_review(sends, _save("http://localhost:8800/bills/new"), ERP) is None  # the same server


def test_the_learned_save_records_its_method_and_query_names_not_their_values() -> None:
    record = ActRecord(
        action={"action": "click", "index": 4},
        decisions=[("approved", "post", "http://127.0.0.1:8800/bills/new?pay%5Fnow=1&approver=auto#f")],
        sent_fields=[["invoice_number", "csrf_token", "invoice_number"]],
    )
    sends = _sends(record)
    assert sends == Sends(
        path="/bills/new",
        fields=["csrf_token", "invoice_number"],
        method="POST",
        query=["approver", "pay_now"],
    )
    assert sends.describe().endswith("(by POST, query approver, pay_now)")
    plain = ActRecord(
        action={"action": "click", "index": 4},
        decisions=[("approved", "POST", "http://127.0.0.1:8800/bills/new")],
        sent_fields=[["invoice_number"]],
    )
    assert _sends(plain) == Sends(path="/bills/new", fields=["invoice_number"], query=[])


def test_the_gate_blocks_a_save_to_another_allowed_host_before_anyone_is_asked() -> None:
    human = ScriptedHuman()  # any approval request would raise: none may be asked
    intranet = "http://127.0.0.1:8801"
    hosts = [*PolicyConfig.for_url(ERP).allowed_hosts, *PolicyConfig.for_url(intranet).allowed_hosts]
    policy = Policy(PolicyConfig(allowed_hosts=hosts), human)
    sends = Sends(path="/bills/new", fields=["invoice_number"], query=[])
    policy.expected_send = lambda sub: off_review(sends, sub, ERP)
    elsewhere = policy.submission(_save(f"{intranet}/bills/new"))
    assert elsewhere.outcome == "blocked" and "not the routine's system" in elsewhere.reason
    queried = policy.submission(_save(f"{ERP}/bills/new?approver=auto"))
    assert queried.outcome == "blocked" and "approver" in queried.reason
    assert human.requests == []


# ------------------------------------------------------------------ end to end


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_release_that_moves_data_into_the_save_query_falls_back_before_anyone_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with learned_chore(tmp_path) as world:
        place, case, store = world["place"], world["case"], world["store"]
        real_form = bill_pages.BillPages._form

        def form(self: object, *args: object, **kwargs: object) -> object:  # the new release
            response = real_form(self, *args, **kwargs)  # type: ignore[arg-type]
            response.body = response.body.replace(  # type: ignore[attr-defined]
                b'action="/bills/new"', b'action="/bills/new?pay_now=1&amp;approver=auto"'
            )
            return response

        monkeypatch.setattr(bill_pages.BillPages, "_form", form)
        run = run_chore(place, case, chaos=ChaosConfig(save_faults=[]))
        events = read_trace(run.run_dir / "trace.jsonl")
        said = [
            (e.action, e.reason) for e in events if e.kind == "control" and e.action.startswith("routine:")
        ]
        assert [a for a, _ in said] == ["routine:replay", "routine:fallback"], said
        assert "query parameter(s) the review never saw: approver, pay_now" in said[1][1]
        assert "the gate did not send it and asked no one" in said[1][1]
        blocked = [e for e in events if e.kind == "policy" and e.decision == "blocked"]
        assert blocked and "pay_now" in blocked[0].detail["reason"]
        # the only approval asked is the agent's, after the fallback: the person sees the new address
        fell = next(i for i, e in enumerate(events) if e.kind == "control" and e.action == "routine:fallback")
        asked = [i for i, e in enumerate(events) if e.kind == "approval"]
        assert len(asked) == 1 and asked[0] > fell
        assert run.outcome == "done", run.reason  # the agent did the chore, once
        assert [
            (b.vendor, b.invoice_number) for b in fetch_state(place.erp_url).bills if b.id not in SEEDED
        ] == [("Northwind Traders", "INV-2057")]
        counted = store.get("enter-invoice", 1)
        assert (counted.successes, counted.fallbacks) == (0, 1)
        (save,) = [s for s in counted.browser if s.approval]  # the review saw a save with no query
        assert save.sends is not None and (save.sends.method, save.sends.query) == ("POST", [])
        healed = store.versions("enter-invoice")[-1]  # proposed for review, the query's names in it
        assert (healed.version, healed.status, healed.based_on) == (2, "draft", 1)
        (save,) = [s for s in healed.browser if s.approval]
        assert save.sends is not None and save.sends.query == ["approver", "pay_now"]
        assert "pay_now" in diff(counted, healed)
