"""Channels past the approval gate (tools/browser/network.py, tools/browser/gatekeeper.py).

- WebSockets: what a page sends over one cannot be shown to an approver as a request, so no
  WebSocket is opened, to any host, allowed or not: one the page opens is closed before it connects
  and recorded as a refused request (``read_only_refused`` in a read-only session, ``blocked``
  otherwise, with a note in the act result); one opened around that route (from a worker, an iframe,
  Playwright's own pass-through) reaches the gatekeeper proxy, which opens no tunnel.
- An image submit button (<input type=image name=pay>) sends where it was clicked as pay.x and
  pay.y; the approval's prediction has 0 and 0 there. Those two are read as the click point, and
  nothing else is: the approved payment leaves, once, and a page's change to any other field after
  approval is still refused.
- A script's plain-text body (fetch with a string body is text/plain) that no system reads as
  fields is shown exactly, as text, and not flagged; text a system may read as fields still is.

A WebSocket server and a page server on 127.0.0.1 record everything they receive; only the LLM
would be faked (none is used here).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest
from fixtures_adversarial import Server, serve
from websockets.sync.server import ServerConnection
from websockets.sync.server import serve as serve_websockets

from taskcrew.approvals.key import same_fields
from taskcrew.approvals.rules import NOT_EXACT, assess, load_rules
from taskcrew.tools.browser import BrowserConfig, BrowserRuntime, BrowserSession, Click, Observation
from taskcrew.tools.browser.gatekeeper import Gatekeeper
from taskcrew.tools.browser.network import _click_as_approved, body_fields
from taskcrew.tools.human import ApprovalDecision, Human, ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig

PAGES = {
    "/dashboard": "<title>Dashboard</title><h1>Dashboard</h1><p id=log></p><script>"
    "const ws = new WebSocket('ws://127.0.0.1:{WP}/live');"
    "ws.onopen = () => ws.send(JSON.stringify({{action: 'pay', bill: 'BILL-9', amount: '98000.00'}}));"
    "</script>",
    "/bill": "<title>Pay bill</title><h1>Bill BILL-7</h1><form method=post action='/bills/BILL-7/pay'>"
    "<input type=hidden name=amount value='640.00'>"
    "<input type=image name=pay alt='Pay now' src=\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/"
    "svg' width='120' height='40'%3E%3Crect width='120' height='40' fill='%23060'/%3E%3C/svg%3E\"></form>",
    "/bill-switch": "<title>Pay bill</title><h1>Bill BILL-7</h1><form method=post action='/bills/BILL-7/pay'"
    " onsubmit=\"this.amount.value='98000.00'\"><input type=hidden name=amount value='640.00'>"
    "<input type=image name=pay alt='Pay now' src=\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/"
    "svg' width='120' height='40'%3E%3Crect width='120' height='40' fill='%23060'/%3E%3C/svg%3E\"></form>",
    "/bills/BILL-7/pay": "<title>Paid</title><h1>Payment saved</h1>",
    "/scripts": "<title>Scripts</title><h1>Scripts</h1>",
}

# A page script's WebSocket to an allowed host, four ways: resolves with what the page saw.
OPEN = "const w = new WebSocket(u); w.onopen = () => w.send(say);"
SAW = (
    "w.onmessage = (e) => done(e.data); w.onclose = (e) => done('closed ' + e.code);"
    "w.onerror = () => done('error'); setTimeout(() => done('timeout'), 3000);"
)
WAYS = {
    "page": f"(u) => new Promise((done) => {{ const say = 'page'; {OPEN} {SAW} }})",
    "iframe": "(u) => new Promise((done) => { const f = document.createElement('iframe');"
    " document.body.append(f); const say = 'iframe'; const w = new f.contentWindow.WebSocket(u);"
    f" w.onopen = () => w.send(say); {SAW} }})",
    "worker": "(u) => new Promise((done) => { const say = 'worker'; const src = `const w = new"
    " WebSocket(${JSON.stringify(u)}); w.onopen = () => w.send('worker'); w.onmessage = (e) =>"
    " postMessage(e.data); w.onclose = (e) => postMessage('closed ' + e.code); w.onerror = () =>"
    " postMessage('error');`; const k = new Worker(URL.createObjectURL(new Blob([src])));"
    " k.onmessage = (e) => done(e.data); setTimeout(() => done('timeout'), 3000); })",
    # Playwright's WebSocket stand-in in the page can be told to pass through to a real one
    "pass-through": "(u) => new Promise((done) => { const say = 'pass-through'; const w = new WebSocket(u);"
    " try { __pwWebSocketDispatch({id: w._id, type: 'passthrough'}) } catch (e) {}"
    f" w.onopen = () => w.send(say); {SAW} }})",
}


class WebSocketServer:
    """Accepts every WebSocket, records what arrives and answers each message."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.lock = threading.Lock()
        self._server = serve_websockets(self._handle, "127.0.0.1", 0)
        self.port = self._server.socket.getsockname()[1]

    def _handle(self, ws: ServerConnection) -> None:
        with self.lock:
            self.got.append(f"open {ws.request.path if ws.request else ''}")
        for message in ws:
            with self.lock:
                self.got.append(f"message {message!s}")
            ws.send(f"echo {message!s}")

    def received(self) -> list[str]:
        with self.lock:
            return list(self.got)


@pytest.fixture(scope="module")
def websockets_server() -> Iterator[WebSocketServer]:
    server = WebSocketServer()
    thread = threading.Thread(target=server._server.serve_forever, daemon=True)
    thread.start()
    yield server
    server._server.shutdown()


@pytest.fixture(scope="module")
def site(websockets_server: WebSocketServer) -> Iterator[Server]:
    for server in serve():
        server.pages.update({path: page.format(WP=websockets_server.port) for path, page in PAGES.items()})
        yield server


@pytest.fixture(scope="module")
def runtime() -> Iterator[BrowserRuntime]:
    with BrowserRuntime(BrowserConfig()) as rt:
        yield rt


Factory = Callable[..., BrowserSession]


@pytest.fixture
def make(runtime: BrowserRuntime, site: Server, websockets_server: WebSocketServer) -> Iterator[Factory]:
    """A session whose policy allows the page server and the WebSocket server's host:port."""
    site.clear()
    websockets_server.got.clear()
    opened: list[BrowserSession] = []

    def factory(human: Human | None = None, read_only: bool = False) -> BrowserSession:
        hosts = [site.url.removeprefix("http://"), f"127.0.0.1:{websockets_server.port}"]
        policy = Policy(PolicyConfig(allowed_hosts=hosts, read_only=read_only), human or ScriptedHuman())
        session = BrowserSession(policy=policy, runtime=runtime).start()
        opened.append(session)
        return session

    yield factory
    for session in opened:
        session.close()


def image_button(obs: Observation) -> int:
    (found,) = [el.index for el in obs.elements if el.name == "Pay now"]
    return found


# ---- WebSockets --------------------------------------------------------------------------------------
@pytest.mark.browser
@pytest.mark.parametrize("read_only", [False, True], ids=["normal", "read-only"])
@pytest.mark.parametrize("way", list(WAYS))
def test_no_websocket_message_reaches_an_allowed_host(
    make: Factory, site: Server, websockets_server: WebSocketServer, way: str, read_only: bool
) -> None:
    session = make(read_only=read_only)
    session.goto(site.url + "/scripts")
    url = f"ws://127.0.0.1:{websockets_server.port}/live"
    saw = session.run(lambda page: page.evaluate(WAYS[way], url))
    session.run(lambda page: page.wait_for_timeout(300))
    assert websockets_server.received() == [], saw
    assert not str(saw).startswith("echo"), saw


@pytest.mark.browser
@pytest.mark.parametrize("read_only", [False, True], ids=["normal", "read-only"])
def test_a_refused_websocket_is_recorded_and_shown_like_a_refused_request(
    make: Factory, site: Server, websockets_server: WebSocketServer, read_only: bool
) -> None:
    session = make(read_only=read_only)
    result = session.goto(site.url + "/dashboard")
    session.run(lambda page: page.wait_for_timeout(300))
    assert websockets_server.received() == []
    url = f"ws://127.0.0.1:{websockets_server.port}/live"
    refused = [d for d in session.policy.decisions if d.method == "WEBSOCKET"]
    assert [(d.kind, d.outcome, d.url) for d in refused] == [
        ("request", "read_only_refused" if read_only else "blocked", url)
    ]
    assert refused[0] in result.policy  # in the act result, as a refused request is
    assert any(url in e and "cannot be shown for approval" in e for e in result.errors), result.errors
    if read_only:
        assert (
            refused[0].message()
            == f"Refused: WEBSOCKET {url} would change data and this session is read-only."
        )
    else:
        assert refused[0].message().startswith(f"Blocked by policy: WEBSOCKET {url}")


def test_the_gatekeeper_opens_no_tunnel_even_to_a_host_a_session_allows(
    websockets_server: WebSocketServer,
) -> None:
    """What a page opens around the guard's route (a worker's WebSocket) comes to the proxy as a
    CONNECT, or as a raw upgrade request: neither reaches the server."""
    keeper = Gatekeeper()
    port = keeper.start()
    target = f"127.0.0.1:{websockets_server.port}"
    upgrade = (
        f"GET http://{target}/live HTTP/1.1\r\nHost: {target}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    try:
        for request in (f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n", upgrade):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(request.encode())
                assert sock.recv(200).startswith(b"HTTP/1.1 403"), request
        assert [(r.method, r.target) for r in keeper.refused_since(0)] == [
            ("CONNECT", target),
            ("GET", f"http://{target}/live"),
        ]
    finally:
        keeper.close()
    assert websockets_server.received() == []


# ---- an image submit button --------------------------------------------------------------------------
@pytest.mark.browser
def test_an_approved_image_button_sends_its_click_point_once(make: Factory, site: Server) -> None:
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.reject()])
    session = make(human=human)
    obs = session.goto(site.url + "/bill").observation
    result = session.act([Click(index=image_button(obs))])
    assert result.ok, result.render()
    ((post,),) = [site.posts()]
    sent = dict(pair.split("=") for pair in post.body.decode().split("&"))
    assert sent.keys() == {"amount", "pay.x", "pay.y"} and sent["amount"] == "640.00"
    assert sent["pay.x"].isdigit() and sent["pay.y"].isdigit()
    assert [s.result for s in result.submissions] == ["saved"]
    # the approver is told the pair is where the button is clicked, not data to judge
    notes = {f.name: f.note for f in human.requests[0].fields}
    assert all("where the image button is clicked" in (notes[n] or "") for n in ("pay.x", "pay.y")), notes
    assert notes["amount"] is None
    # the saved payment spent its approval: the same click again is asked again (and rejected)
    obs = session.goto(site.url + "/bill").observation
    again = session.act([Click(index=image_button(obs))])
    assert not again.ok and len(human.requests) == 2 and len(site.posts()) == 1
    human.assert_complete()


@pytest.mark.browser
def test_an_image_button_click_does_not_cover_another_change(make: Factory, site: Server) -> None:
    session = make(human=ScriptedHuman([ApprovalDecision.approve()]))
    obs = session.goto(site.url + "/bill-switch").observation
    result = session.act([Click(index=image_button(obs))])
    assert not result.ok and site.posts() == []
    assert any("different data" in e for e in result.errors), result.errors


APPROVED = [("amount", "640.00"), ("pay.x", "0"), ("pay.y", "0")]


@pytest.mark.parametrize(
    ("approved", "sent", "point", "read_as"),
    [
        (APPROVED, [("amount", "640.00"), ("pay.x", "57"), ("pay.y", "21")], "pay.", APPROVED),
        ([("x", "0"), ("y", "0")], [("x", "3"), ("y", "4")], "", [("x", "0"), ("y", "0")]),  # no name
        # the click point only: another field changed still differs from the approval
        (
            APPROVED,
            [("amount", "98000.00"), ("pay.x", "5"), ("pay.y", "5")],
            "pay.",
            [("amount", "98000.00"), ("pay.x", "0"), ("pay.y", "0")],
        ),
        # anything else is read as sent, and so differs from the approval
        (APPROVED, [("amount", "640.00"), ("pay.x", "98000.00"), ("pay.y", "0")], "pay.", None),  # no integer
        (APPROVED, [("amount", "640.00"), ("pay.x", "5")], "pay.", None),  # one of the pair
        (APPROVED, [("amount", "640.00"), ("pay.x", "5"), ("pay.y", "5"), ("pay.x", "6")], "pay.", None),
        (APPROVED, [("pay.x", "5"), ("amount", "640.00"), ("pay.y", "5")], "pay.", None),  # not side by side
        (APPROVED, [("amount", "640.00"), ("pay.x", "57"), ("pay.y", "21")], None, None),  # no image button
        # a page's own fields named like a click point are data: only the clicked button's pair is read
        (
            [("amount.x", "0"), ("amount.y", "0"), ("pay.x", "0"), ("pay.y", "0")],
            [("amount.x", "9"), ("amount.y", "9"), ("pay.x", "5"), ("pay.y", "5")],
            "pay.",
            None,
        ),
        (
            [("pay.x", "0"), ("pay.y", "0"), ("pay.x", "0")],
            [("pay.x", "1"), ("pay.y", "1"), ("pay.x", "0")],
            "pay.",
            None,
        ),
    ],
)
def test_only_the_clicked_image_buttons_coordinate_pair_is_read_as_its_click_point(
    approved: list[tuple[str, str]],
    sent: list[tuple[str, str]],
    point: str | None,
    read_as: list[tuple[str, str]] | None,
) -> None:
    read = _click_as_approved(sent, approved, point)
    if read_as is None:  # at most the button's own pair is read; the rest is as sent, so it differs
        assert not same_fields(read, approved)
    else:
        assert read == read_as and same_fields(read, approved) == (read == approved)


# ---- a script's plain-text body ----------------------------------------------------------------------
RULES = load_rules()


def flags(fields: list[tuple[str, str]]) -> list[str]:
    return [f.rule for f in assess(fields, "http://127.0.0.1:8800/api/bills", RULES).flags]


@pytest.mark.parametrize(
    ("content_type", "body", "shown"),
    [
        ("text/plain;charset=UTF-8", b"archive the September bill", "archive the September bill"),
        ("text/plain", "Bitte prüfen\nDanke".encode(), "Bitte prüfen\nDanke"),
        ("text/plain; charset=windows-1252", b"M\xfcller", "Müller"),
    ],
)
def test_plain_text_that_no_system_reads_as_fields_is_shown_exactly(
    content_type: str, body: bytes, shown: str
) -> None:
    fields = body_fields(content_type, body)
    assert fields == [("(body)", shown)] and flags(fields) == []


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"x=1", "name=value pairs"),  # a system may read it as a form
        (b'{"amount": "9500.00"}', "JSON or markup"),
        (b"<amount>9500.00</amount>", "JSON or markup"),
        (b"caf\xe9", "bytes not valid utf-8"),
        (b"amount: 98000.00", "YAML, name-value lines"),  # the amount rule would not judge it
        (b"BILL-9,98000.00", "CSV or TSV"),
        (b"BILL-9\t98000.00", "CSV or TSV"),
        (b"payee | Hooli", "CSV or TSV"),
        (b"pay BILL-9 98000", "a number a system may read as an amount"),
        (b"pay BILL-9 98.000", "a number a system may read as an amount"),
        (b"pay BILL-9 98 000", "a number a system may read as an amount"),
        (b"1e5", "a number a system may read as an amount"),  # float("1e5"), JSON.parse: 100000
        (b"9_8_0_0_0", "a number a system may read as an amount"),  # Python's int(): 98000
        (b"0xFFFFF", "a number a system may read as an amount"),  # Number() in JavaScript
        ("pay ٩٨٠٠٠".encode(), "a number a system may read as an amount"),  # Arabic-Indic: float() reads it
        ("９８０００".encode(), "a number a system may read as an amount"),  # full-width digits
        (b"amount 1e5\npayee Evil Corp", "a number a system may read as an amount"),  # java Properties
        (b"\xef\xbb\xbf[1e5]", "JSON or markup"),  # a byte-order mark, then JSON
        ("\u200b{}".encode(), "JSON or markup"),  # a zero-width space, then JSON
    ],
)
def test_plain_text_a_system_may_read_otherwise_is_still_flagged_with_why(body: bytes, why: str) -> None:
    ((name, value),) = body_fields("text/plain;charset=UTF-8", body)
    assert name == "(body)" and value.startswith(NOT_EXACT) and why in value
    assert "unread_body" in flags([(name, value)])


def test_a_plain_text_that_starts_like_the_parsers_own_mark_is_never_taken_for_it() -> None:
    ((name, value),) = body_fields("text/plain", NOT_EXACT.encode() + b"x) y")
    assert name == "(body)" and value.startswith(NOT_EXACT + "a text/plain body with ':'"), value
    assert "unread_body" in flags([(name, value)])


@pytest.mark.browser
def test_in_chromium_a_scripts_plain_text_is_shown_to_the_approver_as_sent(
    make: Factory, site: Server
) -> None:
    human = ScriptedHuman([ApprovalDecision.reject()])
    session = make(human=human)
    session.goto(site.url + "/scripts")
    script = "() => fetch('/api/bills/BILL-9', {method: 'PUT', body: 'archive the September bill'}).then(() => 'sent', () => 'failed')"
    assert session.run(lambda page: page.evaluate(script)) == "failed"
    ((request,),) = [human.requests]
    assert [(f.name, f.value) for f in request.fields] == [("(body)", "archive the September bill")]
    assert request.flags == []
    assert site.posts() == []
