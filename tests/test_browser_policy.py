"""The policy gate in real Chromium against real servers: nothing unapproved reaches a server."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fixtures_browser import RecordingSite, SessionFactory

from taskcrew.tools.browser import Click, Navigate, Observation, Select, Type, Wait
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman
from taskcrew.tools.policy import PolicyDecision

# fetch.html writes "failed" once its refused fetch rejects, after the click returns: the
# observation waits for it (read at once, it was still the old text under CI load)
FETCH_SETTLED = Wait(seconds=5, for_text="failed")

pytestmark = pytest.mark.browser


def idx(obs: Observation, name: str, role: str | None = None) -> int:
    found = [el.index for el in obs.elements if el.name == name and (role is None or el.role == role)]
    assert len(found) == 1, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def fill_order(obs: Observation, customer: str = "ACME Ltd") -> list[Type]:
    return [Type(index=idx(obs, "Customer"), text=customer), Type(index=idx(obs, "Amount"), text="1284.50")]


def test_foreign_hosts_and_tricks_are_blocked(
    make_session: SessionFactory, site: RecordingSite, foreign_site: RecordingSite
) -> None:
    decisions: list[PolicyDecision] = []
    session = make_session(recorder=decisions)
    port = foreign_site.url.rsplit(":", 1)[1]
    tricks = [
        foreign_site.page("nav2.html"),
        f"http://127.0.0.1:{site.url.rsplit(':', 1)[1]}@127.0.0.2:{port}/pages/nav2.html",
        "javascript:document.title='pwned'",
        "data:text/html,<h1>hi</h1>",
        "file:///etc/passwd",
    ]
    for url in tricks:
        result = session.act([Navigate(url=url)])
        assert not result.ok, url
        assert "Blocked by policy" in result.ran[0].message
    assert not foreign_site.hits
    assert [d.outcome for d in decisions] == ["blocked"] * len(tricks)
    # a link to a foreign host is refused before clicking
    obs = session.goto(site.page("form.html")).observation
    result = session.act([Click(index=idx(obs, "Partner site"))])
    assert not result.ok and "evil.test" in result.ran[0].message


def test_redirect_to_a_foreign_host_is_stopped(
    make_session: SessionFactory, site: RecordingSite, foreign_site: RecordingSite
) -> None:
    session = make_session()
    result = session.goto(f"{site.url}/redirect?to={foreign_site.page('nav2.html')}")
    assert not result.ok
    assert not foreign_site.hits  # the browser never followed the redirect
    assert any("redirected to" in e for e in result.errors)
    assert result.observation.url.startswith(site.url) or result.observation.url == "about:blank"
    # a same-host redirect is fine
    ok = session.goto(f"{site.url}/redirect?to=/pages/nav2.html")
    assert ok.ok and ok.observation.title == "Second page"


def test_debug_paths_are_blocked(make_session: SessionFactory, site: RecordingSite) -> None:
    session = make_session()
    for path in ("/_debug/state", "/_DEBUG/state", "/%5Fdebug/state", "/pages/../_debug/reset"):
        result = session.act([Navigate(url=site.url + path)])
        assert not result.ok and "off limits" in result.ran[0].message, path
    # also when a page script tries to fetch it
    session.goto(site.page("nav2.html"))
    session.run(lambda page: page.evaluate("fetch('/_debug/state').catch(() => null)"))
    session.observe()
    assert not any("_debug" in p.lower() for p in site.paths())


def test_unapproved_post_never_reaches_the_server(make_session: SessionFactory, site: RecordingSite) -> None:
    human = ScriptedHuman([ApprovalDecision.reject("wrong amount")])
    session = make_session(human=human)
    obs = session.goto(site.page("form.html")).observation
    result = session.act([*fill_order(obs), Click(index=idx(obs, "Save order"))])
    assert not result.ok
    assert "did not approve" in result.ran[-1].message and "wrong amount" in result.ran[-1].message
    assert not site.posts()
    assert result.observation.title == "New order"  # still on the form, values kept
    (request,) = human.requests
    fields = {f.name: f.value for f in request.fields}
    assert request.method == "POST" and request.url == f"{site.url}/record/orders"
    assert fields["customer"] == "ACME Ltd" and fields["amount"] == "1284.50"
    assert fields["csrf_token"].startswith("(left out of the approval")  # a rule names it for this host
    assert [d.outcome for d in result.policy if d.kind == "submission"] == ["rejected"]
    human.assert_complete()


def test_approved_post_is_sent_exactly_once_and_not_asked_again(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.approve()])
    session = make_session(human=human)
    for _ in range(2):  # each saved order was approved: the second identical one is asked again
        obs = session.goto(site.page("form.html")).observation
        result = session.act([*fill_order(obs), Click(index=idx(obs, "Save order"))])
        assert result.ok, result.render()
        assert result.observation.title == "Saved"
    posts = site.posts()
    assert len(posts) == 2
    assert ("customer", "ACME Ltd") in posts[0].fields and ("csrf_token", "tok-123456") in posts[0].fields
    assert len(human.requests) == 2  # one approval, one saved write
    # the draft button submits to its own formaction: a different payload, asked again
    human_draft = ScriptedHuman([ApprovalDecision.answer("don't save drafts")])
    session2 = make_session(human=human_draft)
    obs = session2.goto(site.page("form.html")).observation
    draft = session2.act([*fill_order(obs), Click(index=idx(obs, "Save as draft"))])
    assert not draft.ok and "don't save drafts" in draft.render()
    assert human_draft.requests[0].url.endswith("/record/drafts")
    assert ("draft", "1") in [(f.name, f.value) for f in human_draft.requests[0].fields]
    assert len(site.posts()) == 2


def test_script_requests_are_gated_at_the_network_layer(
    make_session: SessionFactory, site: RecordingSite, foreign_site: RecordingSite
) -> None:
    human = ScriptedHuman([ApprovalDecision.reject(), ApprovalDecision.reject()])
    session = make_session(human=human)
    obs = session.goto(site.page("fetch.html")).observation
    posted = session.act([Click(index=idx(obs, "Post via fetch")), FETCH_SETTLED])
    assert "failed" in posted.observation.text
    assert human.requests[0].kind == "network_request"
    assert {f.name: f.value for f in human.requests[0].fields} == {"item": "x", "qty": "2"}
    submitted = session.act([Click(index=idx(posted.observation, "Submit by script"))])
    assert human.requests[1].url.endswith("/record/jsform")
    assert not site.posts()
    assert any(d.outcome == "rejected" for d in submitted.policy)
    # reads pass; foreign sub-requests are blocked
    got = session.act([Click(index=idx(obs, "Get via fetch"))])
    assert "got 2" in got.observation.text
    session.run(lambda page: page.evaluate(f"window.FOREIGN = '{foreign_site.url}'"))
    foreign = session.act([Click(index=idx(obs, "Foreign fetch"))])
    assert "foreign failed" in foreign.observation.text
    assert not foreign_site.hits
    assert any(d.outcome == "blocked" for d in foreign.policy)
    human.assert_complete()


def test_read_only_refuses_writes_but_allows_login(make_session: SessionFactory, site: RecordingSite) -> None:
    session = make_session(human=ScriptedHuman(), read_only=True)  # asking the human would fail
    obs = session.goto(site.page("form.html")).observation
    result = session.act([*fill_order(obs), Click(index=idx(obs, "Save order"))])
    assert not result.ok and "read-only" in result.ran[-1].message
    fetch_obs = session.goto(site.page("fetch.html")).observation
    fetched = session.act([Click(index=idx(fetch_obs, "Post via fetch")), FETCH_SETTLED])
    assert "failed" in fetched.observation.text
    assert [d.outcome for d in fetched.policy if d.method == "POST"] == ["read_only_refused"]
    assert not site.posts()
    login = session.goto(site.page("login.html")).observation
    logged_in = session.act(
        [
            Type(index=idx(login, "Username"), text="demo"),
            Type(index=idx(login, "Password"), text="demo123"),
            Click(index=idx(login, "Sign in")),
        ]
    )
    assert logged_in.ok and logged_in.observation.title == "Welcome"
    assert [h.path for h in site.posts()] == ["/login"]
    assert session.cookies() == 1


def test_a_stopped_run_sends_nothing_more_and_asks_nobody(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    """After Ctrl-C the run's report is written while its abandoned agent thread may still act: a
    submission it tries then (a form or a fetch) is refused unasked, so the report stays true. Reads
    and the login still work (the verifier's read-back, a screenshot)."""
    session = make_session(human=ScriptedHuman())  # asking the human would fail
    session.policy.halted = "the run was stopped by SIGINT"
    obs = session.goto(site.page("form.html")).observation
    result = session.act([*fill_order(obs), Click(index=idx(obs, "Save order"))])
    assert not result.ok
    fetch_obs = session.goto(site.page("fetch.html")).observation
    fetched = session.act([Click(index=idx(fetch_obs, "Post via fetch")), FETCH_SETTLED])
    assert "failed" in fetched.observation.text
    refused = [d for d in [*result.policy, *fetched.policy] if d.method == "POST"]
    assert refused and all(d.outcome == "blocked" and "stopped by SIGINT" in d.reason for d in refused)
    assert not site.posts()


def test_a_run_stopped_while_its_approval_was_given_sends_nothing(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    """Ctrl-C lands while the person approves: the approval holds, but the request does not leave."""

    class ApprovesAsTheRunStops(ScriptedHuman):
        def approve(self, request: Any) -> ApprovalDecision:
            session.policy.halted = "the run was stopped by SIGTERM"
            return ApprovalDecision.approve()

    session = make_session(human=ApprovesAsTheRunStops())
    obs = session.goto(site.page("form.html")).observation
    result = session.act([*fill_order(obs), Click(index=idx(obs, "Save order"))])
    posts = [d for d in result.policy if d.method == "POST"]
    assert [d.outcome for d in posts] == ["approved", "blocked"] and "stopped by SIGTERM" in posts[1].reason
    assert not site.posts()


def test_websockets_reach_no_host_not_even_an_allowed_one(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    from websockets.sync.server import ServerConnection, serve

    connections: list[str] = []

    def echo(ws: ServerConnection) -> None:
        connections.append(str(ws.remote_address))
        for message in ws:
            ws.send(f"echo {message}")

    servers = [serve(echo, host, 0) for host in ("127.0.0.1", "127.0.0.2")]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for t in threads:
        t.start()
    try:
        allowed_port, foreign_port = (s.socket.getsockname()[1] for s in servers)
        session = make_session(allowed=[site.url.removeprefix("http://"), f"127.0.0.1:{allowed_port}"])
        session.goto(site.page("nav2.html"))
        script = """(url) => new Promise((resolve) => {
            const ws = new WebSocket(url);
            ws.onopen = () => ws.send('hi');
            ws.onmessage = (e) => { resolve(e.data); ws.close(); };
            ws.onclose = (e) => resolve('closed ' + e.code);
            setTimeout(() => resolve('timeout'), 3000);
        })"""
        ok = session.run(lambda page: page.evaluate(script, f"ws://127.0.0.1:{allowed_port}/"))
        blocked = session.run(lambda page: page.evaluate(script, f"ws://127.0.0.2:{foreign_port}/"))
        result = session.observe()
    finally:
        for s in servers:
            s.shutdown()
    # what a page sends over a WebSocket cannot be shown to an approver: refused to every host
    assert ok.startswith("closed") and blocked.startswith("closed"), (ok, blocked)
    assert connections == []
    for host in ("127.0.0.1", "127.0.0.2"):
        assert any(d.outcome == "blocked" and host in d.url for d in session.policy.decisions), host
    assert result.url.endswith("nav2.html")


def test_foreign_page_resources_are_blocked_quietly(
    make_session: SessionFactory, site: RecordingSite, foreign_site: RecordingSite
) -> None:
    session = make_session()
    session.goto(site.page("nav2.html"))
    image = foreign_site.page("pixel.png")
    button = f"<button onclick=\"document.body.insertAdjacentHTML('beforeend', '<img src={image}>')\">Load</button>"
    session.run(
        lambda page: page.evaluate("(html) => document.body.insertAdjacentHTML('beforeend', html)", button)
    )
    obs = session.observe()
    result = session.act([Click(index=idx(obs, "Load"))])
    assert result.ok, result.render()  # a blocked image does not fail the action
    assert "blocked 1 page resource request(s) to other hosts (127.0.0.2:" in result.render()
    assert not foreign_site.hits
    assert [d.url for d in result.policy if d.outcome == "blocked"] == [image]


def test_a_chosen_option_is_recorded_with_its_label_a_typed_value_without(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    """The gate records a select's option as "EUR (Euro)" (what is sent, then its text) and its text
    alone as ``label``: no reader takes a value apart, so a typed "Initrode (ACME Ltd)" has none."""
    human = ScriptedHuman([ApprovalDecision.reject("only looking")])
    session = make_session(human=human)
    obs = session.goto(site.page("form.html")).observation
    typed = [
        Type(index=idx(obs, "Customer"), text="Initrode (ACME Ltd)"),
        Type(index=idx(obs, "Amount"), text="12.00"),
    ]
    chosen = Select(index=idx(obs, "Currency"), option="Euro")
    result = session.act([*typed, chosen, Click(index=idx(obs, "Save order"))])
    assert not result.ok and not site.posts()
    (request,) = human.requests
    fields = {f.name: f for f in request.fields}
    assert (fields["currency"].value, fields["currency"].label) == ("EUR (Euro)", "Euro")
    assert (fields["customer"].value, fields["customer"].label) == ("Initrode (ACME Ltd)", None)


def test_one_approval_lets_one_write_through_when_the_page_sends_it_twice(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    """A click handler that also posts the form by fetch: the person approved one payment; the
    second copy of the same payload is asked again (here: rejected), whether the first copy's answer
    is back or both are on their way at once (which copy leaves first is the browser's choice)."""
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.reject("one payment only")])
    session = make_session(human=human, approve_network_requests=True)
    obs = session.goto(site.page("double_submit.html")).observation
    session.act([Click(index=idx(obs, "Pay 640.00", role="button"))])
    session.act([Wait(seconds=2, for_text="no such text")])  # both requests have left by now
    posts = [h for h in site.posts() if h.path == "/record/pay"]
    assert len(posts) == 1, [d.reason for d in session.policy.decisions]
    assert len(human.requests) == 2  # the second copy was asked, not waved through
    outcomes = [d.outcome for d in session.policy.decisions if d.url.endswith("/record/pay")]
    assert outcomes[0] == "approved" and outcomes.count("rejected") == 1, outcomes


def test_an_approval_rides_no_copy_sent_while_the_approved_one_is_on_its_way() -> None:
    """The race of the test above, step by step: while the approved copy has left and its answer is
    not back, an identical one is asked again; a refused answer leaves the approval for the agent's
    retry; a saved one spends it."""
    from taskcrew.tools.human import FieldValue
    from taskcrew.tools.policy import Policy, PolicyConfig, Submission

    erp = "http://127.0.0.1:9"
    human = ScriptedHuman(
        [ApprovalDecision.approve(), ApprovalDecision.reject("one payment only"), ApprovalDecision.approve()]
    )
    policy = Policy(PolicyConfig.for_url(erp), human)
    sent = [("invoice", "INV-77"), ("amount", "640.00")]
    pay = Submission(
        origin="network",
        method="POST",
        url=f"{erp}/record/pay",
        fields=[FieldValue(name=n, value=v) for n, v in sent],
    )
    assert policy.submission(pay).outcome == "approved"
    policy.leaving("POST", pay.url, sent)  # the approved copy is on its way
    assert policy.submission(pay).outcome == "rejected" and len(human.requests) == 2  # a copy: asked
    policy.sent("POST", pay.url, sent, "refused")  # the system refused the first copy
    assert policy.submission(pay).outcome == "allowed" and len(human.requests) == 2  # the retry
    policy.leaving("POST", pay.url, sent)
    policy.sent("POST", pay.url, sent, "saved")
    assert policy.submission(pay).outcome == "approved" and len(human.requests) == 3  # spent: asked
