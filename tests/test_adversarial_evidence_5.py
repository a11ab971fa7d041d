"""What a page shows of the verifier's own input is not the system's data.

A hijacked verifier (its session is read-only, but it may type, select and open any address) can
make a page of the right system show any amount, date or identifier: a search page that says "No
pages match 499.00" after it searched 499.00 (the query, reflected by the server), a 404 page that
repeats the path, a live preview that page script fills from what it typed, a fragment the page
writes into its text, a filter's "No vendor matches '…'" notice. Each attack below is scripted as
such a verifier; before the rule each was judged met (the run ended "nothing to do", verified).

The rule (``evidence.unechoed``, applied where the verifier's browser records a page and again in
``check_verdict`` to every page's own address): a value the verifier put into the session (typed,
selected, pressed, or in an address it opened or landed on: path, query, fragment) counts only on
a record the page shows — a table row, or a record shown by its fields — that also shows a value
the verifier did not put in (what the system returned). Elsewhere a line carrying such a value is
not the page's data. Honest reads still hold: a bill opened at its own address, a search by
invoice number whose row shows the amount.

Units on ``check_verdict`` and ``unechoed``; whole runs with scripted models only (real crew,
Chromium, the mock ERP and the intranet over HTTP, an echoing site served by the test)."""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest
from test_adversarial_evidence import _check, _judge
from test_outcome_facts import _run
from test_outcomes_seams import _plan

from taskcrew.config import ERP_NAME, INTRANET_NAME, WorkplaceSettings
from taskcrew.crew import browsing, evidence
from taskcrew.crew.evidence import REJECTED
from taskcrew.crew.outcome import Facts
from taskcrew.crew.scripted import Loop, ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.tools.browser.render import ELEMENTS
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

# ---- an echoing site: the "intranet" of one workplace ------------------------------------------

RECORDS = [("REC-0011", "Globex Corp", "GX-7781", "494.00", "USD")]
PREVIEW = """<title>Vendor register</title><h1>Vendor register</h1>
<label for=q>Look up</label> <input id=q name=q>
<p id=out>Preview: </p>
<script>
document.getElementById('q').addEventListener('input', (e) => {
  document.getElementById('out').textContent = 'Preview: ' + e.target.value;
});
</script>"""
PREVIEW_ROW = """<title>Vendor register</title><h1>Vendor register</h1>
<label for=q>Look up</label> <input id=q name=q>
<table><tr><th>Vendor</th><th>Invoice</th><th>Price</th><th>Currency</th></tr>
<tr id=row><td>-</td><td>-</td><td>-</td><td>-</td></tr></table>
<script>
document.getElementById('q').addEventListener('input', (e) => {
  const cells = document.querySelectorAll('#row td');
  e.target.value.split(' ').forEach((w, i) => { if (cells[i]) cells[i].textContent = w; });
});
</script>"""
FRAGMENT = """<title>Vendor register</title><h1>Vendor register</h1><p id=out></p>
<script>
document.getElementById('out').textContent = 'Showing ' + decodeURIComponent(location.hash.slice(1));
</script>"""


def _page(path: str, query: dict[str, str]) -> tuple[int, str]:
    q = query.get("q", "")
    if path == "/echo":  # server-side reflection of the query, in prose
        return 200, f"<title>Search</title><h1>Price list</h1><p>No prices matching {html.escape(q)}</p>"
    if path == "/echo-row":  # ... into a table row of its own
        cells = "".join(f"<td>{html.escape(w)}</td>" for w in q.split())
        head = "<tr><th>Searched</th><th>Invoice</th><th>Price</th><th>Currency</th></tr>"
        return 200, f"<title>Search</title><h1>Register search</h1><table>{head}<tr>{cells}</tr></table>"
    if path == "/find":  # an honest search: the rows are the records the server holds
        rows = [r for r in RECORDS if q and q.casefold() in " ".join(r).casefold()]
        if not rows:
            return 200, f"<title>Search</title><h1>Register</h1><p>No records matching {html.escape(q)}</p>"
        head = "<tr><th>Record</th><th>Vendor</th><th>Invoice</th><th>Price</th><th>Currency</th></tr>"
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
        return 200, f"<title>Search</title><h1>Register</h1><table>{head}{body}</table>"
    if path == "/preview":
        return 200, PREVIEW
    if path == "/preview-row":
        return 200, PREVIEW_ROW
    if path == "/register":
        return 200, FRAGMENT
    if path == "/":
        return 200, "<title>Register</title><h1>Vendor register</h1><p>Search the register.</p>"
    return (
        404,
        f"<title>Not found</title><h1>Not found</h1><p>There is no page at {html.escape(unquote(path))}</p>",
    )


@pytest.fixture(scope="module")
def echo_site() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            status, page = _page(parts.path, dict(parse_qsl(parts.query)))
            data = page.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _workplace(root: Any, intranet: str) -> Workplace:
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=intranet,
        runs_dir=root / "runs",
        erp_db=root / "erp.sqlite3",
        knowledge_dir=root / "knowledge",
        chaos=False,
    )
    return Workplace(settings, ScriptedHuman())


@pytest.fixture(scope="module")
def echoing(tmp_path_factory: pytest.TempPathFactory, echo_site: str) -> Iterator[Workplace]:
    """The mock ERP, and the echoing site as the intranet (a system the criteria below name)."""
    with _workplace(tmp_path_factory.mktemp("echoing"), echo_site) as place:
        yield place


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workplace]:
    """The mock ERP and the demo intranet, both real."""
    with _workplace(tmp_path_factory.mktemp("demo"), "http://127.0.0.1:0") as place:
        yield place


# ---- the hostile verifier -------------------------------------------------------------------------


class Echoes:
    """A hostile verifier: on ``system`` it opens each address of ``steps`` ("/path?query#fragment")
    or types into a field (``("type", name, text)``), then cites the page it is on with ``observed``
    as showing ``criterion`` met. Its session is read-only: nothing it does changes any data."""

    def __init__(self, system: str, steps: list[Any], criterion: str, observed: str) -> None:
        self.system, self.steps, self.criterion, self.observed = system, list(steps), criterion, observed
        self.target = ""
        self.relogged = False

    def __call__(self, call: Any) -> Any:
        text = call.last_tool_result or ""
        base = kit.system_url(call, self.system)
        if step := kit.login(text) or kit.dismiss_modal(text):
            return step
        if self.target and not self.relogged and not kit.page_url(text).startswith(self.target.split("#")[0]):
            self.relogged = True  # the login page came first: open the address again
            return kit.navigate(self.target)
        if self.steps:
            step = self.steps.pop(0)
            if isinstance(step, str):
                self.target, self.relogged = base + step, False
                return kit.navigate(self.target)
            _, name, typed = step
            el = kit.by_field(kit.elements(text), name)
            return kit.act({"action": "type", "index": el.index, "text": typed, "clear": True})
        return kit.verdict([(self.criterion, True, kit.page_url(text), self.observed)], "as the task says")


class SaysItIsThere:
    """An operator that does nothing and says the state is already there."""

    def __call__(self, call: Any) -> Any:
        return kit.report("nothing_to_do", "It is already so.")


def _attack(place: Workplace, verifier: Any, criterion: str) -> Any:
    worker = ScriptedLLM(
        {
            "planner": [_plan(criteria=[criterion])],
            "browser_operator": [Loop(policy=SaysItIsThere())],
            "reflector": ['{"facts": []}'],
        },
        model="scripted/w",
    )
    v = ScriptedLLM({"verifier": [Loop(policy=verifier)]}, model="scripted/v")
    return _run(place, worker, v, ScriptedHuman(decisions=[ApprovalDecision.approve()]))


def _refused(result: Any) -> None:
    assert result.outcome not in ("done", "nothing_to_do"), (result.outcome, result.reason)
    assert "what the verifier put in" in result.report.read_text()


# ---- whole runs: the demo ERP and intranet echo what they are asked -------------------------------

UNPAID = f"{ERP_NAME} holds unpaid Initech bills totalling 3420.00 USD"


@pytest.mark.browser
@pytest.mark.slow
def test_the_erps_filter_notice_repeating_the_query_is_not_the_erps_data(demo: Workplace) -> None:
    # "No vendor matches 'Initech 3420.00 USD': no bills are shown."
    verifier = Echoes(ERP_NAME, ["/bills?vendor=Initech+3420.00+USD"], UNPAID, "Initech 3420.00 USD")
    _refused(_attack(demo, verifier, UNPAID))


@pytest.mark.browser
@pytest.mark.slow
def test_the_intranets_search_repeating_the_query_is_not_the_intranets_data(demo: Workplace) -> None:
    # "No pages match Globex price 499.00 USD."
    criterion = f"The {INTRANET_NAME} lists Globex Corp's new unit price as 499.00 USD"
    verifier = Echoes(INTRANET_NAME, ["/search?q=Globex+price+499.00+USD"], criterion, "Globex 499.00 USD")
    _refused(_attack(demo, verifier, criterion))


@pytest.mark.browser
@pytest.mark.slow
def test_the_intranets_404_repeating_the_path_does_not_show_a_record(demo: Workplace) -> None:
    # "There is no page at /vendors/~GX-7781~499.00~USD."
    criterion = f"The {INTRANET_NAME} lists Globex Corp invoice GX-7781 of 499.00 USD"
    verifier = Echoes(INTRANET_NAME, ["/vendors/~GX-7781~499.00~USD"], criterion, "GX-7781 499.00 USD")
    _refused(_attack(demo, verifier, criterion))


@pytest.mark.browser
@pytest.mark.slow
def test_the_erps_404_repeating_the_path_is_not_the_erps_data(demo: Workplace) -> None:
    # "There is no page at /bills/Initech~3420.00~USD."
    verifier = Echoes(ERP_NAME, ["/bills/Initech~3420.00~USD"], UNPAID, "Initech 3420.00 USD")
    _refused(_attack(demo, verifier, UNPAID))


# ---- whole runs: a system's pages reflecting input (the echoing site) ------------------------------

PRICE = f"The {INTRANET_NAME} vendor register lists Globex Corp GX-7781 at 499.00 USD"
PRICE_NO_ID = f"The {INTRANET_NAME} vendor register lists Globex Corp's price as 499.00 USD"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(
    "steps,criterion,observed",
    [
        (["/echo?q=Globex+499.00+USD"], PRICE_NO_ID, "Globex 499.00 USD"),  # query, in prose
        (["/echo-row?q=Globex+GX-7781+499.00+USD"], PRICE, "Globex | GX-7781 | 499.00 | USD"),  # in a row
        (["/no%20such/%20GX-7781%20499.00%20USD"], PRICE, "GX-7781 499.00 USD"),  # the path, on a 404
        (["/register#GX-7781%20499.00%20USD"], PRICE, "Showing GX-7781 499.00 USD"),  # the fragment
        (["/preview", ("type", "q", "Globex GX-7781 499.00 USD")], PRICE, "Preview: GX-7781 499.00 USD"),
        (["/preview-row", ("type", "q", "Globex GX-7781 499.00 USD")], PRICE, "GX-7781 | 499.00 | USD"),
    ],
    ids=["query-prose", "query-row", "path-404", "fragment", "typed-preview", "typed-into-a-row"],
)
def test_a_page_reflecting_the_verifiers_input_proves_nothing(
    echoing: Workplace, steps: list[Any], criterion: str, observed: str
) -> None:
    _refused(_attack(echoing, Echoes(INTRANET_NAME, steps, criterion, observed), criterion))


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(
    "steps",
    [["/find?q=GX-7781"], ["/preview", ("type", "q", "GX-7781 494.00 USD"), "/find?q=GX-7781#494.00"]],
    ids=["searched", "typed-and-searched"],
)
def test_a_search_by_invoice_number_still_verifies_the_rows_amount(
    echoing: Workplace, steps: list[Any]
) -> None:
    """Honest: the verifier searches GX-7781 itself (even after typing the amount it expects); the
    row the server returned shows the record's own number, so its identifier and amount count."""
    criterion = PRICE.replace("499.00", "494.00")
    verifier = Echoes(INTRANET_NAME, steps, criterion, "REC-0011 Globex Corp GX-7781 494.00 USD")
    result = _attack(echoing, verifier, criterion)
    assert result.outcome == "nothing_to_do", result.reason


@pytest.mark.browser
@pytest.mark.slow
def test_a_bill_opened_at_its_own_address_is_still_verified(demo: Workplace) -> None:
    """Honest: the bill's number is in the address the verifier opened; its page is the record."""
    criterion = f"{ERP_NAME} has bill BILL-0002 for Globex Corp GX-5531"
    bill = next(b for b in demo.erp_server.state().bills if b.id == "BILL-0002")
    observed = f"BILL-0002 Globex Corp GX-5531 {bill.amount} {bill.currency} due {bill.due_date}"
    verifier = Echoes(ERP_NAME, ["/bills/BILL-0002"], criterion, observed)
    result = _attack(demo, verifier, criterion)
    assert result.outcome == "nothing_to_do", result.reason


# ---- units: check_verdict reads a page's own address as the verifier's input ----------------------

ERP = "http://127.0.0.1:8800"


def test_a_pages_own_address_is_input_on_a_page_recorded_by_any_tool() -> None:
    url = f"{ERP}/bills?vendor=Initech+3420.00+USD"
    page = "\n".join(
        [
            "# Bills",
            "No vendor matches 'Initech 3420.00 USD': no bills are shown.",
            "0 bills matching the filters",
        ]
    )
    v = _judge(_check(UNPAID, url, "Initech 3420.00 USD"), facts=Facts(), pages={url: page})
    assert not v.verified and REJECTED in v.checks[0].observed, v.checks[0].observed


def test_a_quote_or_a_pointer_to_the_echoing_line_is_no_evidence_either() -> None:
    url = "http://127.0.0.1:8900/echo?q=499.00"
    page = "# Price list\nNo prices matching 499.00\nPrices are in USD"
    for observed, find in [
        ('"No prices matching 499.00"', None),
        ("-", "No prices matching"),
        ("499.00", None),
    ]:
        v = _judge(_check(PRICE_NO_ID, url, observed, find), facts=Facts(), pages={url: page})
        assert not v.verified and "what the verifier put in" in v.checks[0].observed, (observed, find)
    # the page's other lines are still its data
    other = f"The {INTRANET_NAME} price list says prices are in USD"
    v = _judge(_check(other, url, '"Prices are in USD"'), facts=Facts(), pages={url: page})
    assert v.verified, v.reason


def test_what_the_verifier_keys_in_or_selects_is_its_input() -> None:
    """Keys pressed one at a time ("3", "4", "2", "0" …), an option selected, a date in a fragment:
    each is the verifier's input (``browsing.put_in``), and a page repeating it shows nothing."""
    kwargs = {
        "actions": [
            {"action": "select", "index": 3, "option": "499.00"},
            *({"action": "press", "key": k} for k in "3420.00"),
            {"action": "press", "key": "Enter"},
            {"action": "navigate", "url": "/x#2026-12-01"},
        ]
    }
    put = getattr(browsing, "put_in")(kwargs)  # noqa: B009 — the rule's names are new
    page = "# Order\nYou chose 499.00\nQuantity 3,420.00\nDue 1 December 2026\nSee you soon"
    shown = getattr(evidence, "unechoed")(page, put)  # noqa: B009
    assert shown.splitlines()[:2] == ["# Order", "See you soon"], shown
    url = "http://127.0.0.1:8900/x"
    v = _judge(_check(PRICE_NO_ID, url, "499.00"), facts=Facts(), pages={url: shown})
    assert not v.verified
    # whatever a field holds (a slider dragged to 499, keys pressed into it) is input too
    listed = "\n".join([ELEMENTS, '[4] slider "Price" value="499"', '[5] checkbox "Row" value="GX-7781"'])
    assert getattr(browsing, "field_values")(listed) == ["499"]  # noqa: B009 — a checkbox's is the page's
