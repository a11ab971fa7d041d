"""Red-team: a run's account of what it did must be true, also when a system or a model is sloppy.

- A save refused by a system whose form posts to itself without an ``action`` attribute (or with an
  unquoted one), answered HTTP 200 with the error flagged, was "saved — the system accepted it".
- A 200 answer flagging an error or a warning on a page that is not the same form (a confirmation
  step at another address, an error page) was "saved".
- "Redirect back with errors" (302 to the form's page, the error in a flash on the next page) was
  "saved".
- Dates as invoices print them (07.10.2026, 10/07/2026, 7th October 2026) and currencies (USD vs
  EUR) were never compared: a bill saved with day and month swapped, or in the wrong currency,
  was verified.

Real Chromium through the network gate and a small site over HTTP (no model), and the verifier's
checks through ``check_verdict``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from intents_kill_child import index

from taskcrew.tools.browser import BrowserRuntime, BrowserSession, Click
from taskcrew.tools.human import AutoApproveHuman
from taskcrew.tools.policy import Policy, PolicyConfig
from taskcrew.tools.vault import Vault

FORM = (
    "<!doctype html><title>New bill</title><form method='post' action='/bills/new'>"
    "<input name='invoice_number' value='GX-9001'><input name='amount' value='75.00'>"
    "<button type='submit'>Save bill</button></form>"
)
# what the site answers a save with (HTTP 200), by the path it was sent to
ANSWERS = {
    # the form again, posting to its own address by having no action (Django, Flask-WTF…)
    "no-action": (
        "<!doctype html><title>New bill</title><form method='post'>"
        "<div class='errorlist' role='alert'>Amount must be greater than zero</div>"
        "<input name='amount' value='75.00'><button>Save bill</button></form>"
    ),
    # the form again, its action unquoted (valid HTML)
    "unquoted": (
        "<!doctype html><title>New bill</title><form method=post action=/unquoted>"
        "<div class=error role=alert>Invoice number is already used</div>"
        "<input name=amount value=75.00><button>Save bill</button></form>"
    ),
    # a confirmation step at another address, a warning flagged: not saved yet
    "confirm": (
        "<!doctype html><title>Please confirm</title><form method='post' action='/bills/confirm'>"
        "<div class='warning' role='alert'>Possible duplicate of BILL-0007 — please confirm.</div>"
        "<input type='checkbox' name='confirm' value='yes'><button>Confirm</button></form>"
    ),
    # an error page, no form at all
    "error-page": (
        "<!doctype html><title>Bills</title><div class='alert alert-danger'>"
        "The bill could not be saved: the period September 2026 is closed.</div><a href='/bills'>Back</a>"
    ),
}


BACK_ERROR = "<div class='alert alert-danger' role='alert'>The amount must be greater than zero.</div>"
BANNER = "<div class='warning' role='alert'>The period October 2026 closes on Friday.</div>"  # always there
# POST /<case> answered by a redirect, with a message shown once on the page it leads to (a "flash")
REDIRECTS = {
    "back": ("/form/back", BACK_ERROR),  # redirect back with errors (Laravel, Rails' redirect_back)
    "kept": ("/form/kept", "<div class='alert alert-success'>Bill saved.</div>"),  # saved, form again
    "elsewhere": ("/bills", "<p class='error'>The bill could not be saved: the period is closed.</p>"),
}


@pytest.fixture
def sloppy_site() -> Iterator[str]:
    flashes: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _page(self, body: str) -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # /form/<case>: the new-bill form posting to /<case>
            flash = flashes.pop(self.path, "")
            if self.path == "/script":  # a page whose script sends the form (fetch), not the browser
                self._page(
                    f"<!doctype html><title>New bill</title>{BANNER}<button onclick=\"fetch('/back', "
                    "{method: 'POST', body: new URLSearchParams({amount: '0'})})\">Save bill</button>"
                )
                return
            if self.path == "/bills":
                self._page(f"<!doctype html><title>Bills</title>{flash}<p>No bills.</p>")
                return
            case = self.path.rsplit("/", 1)[-1]
            self._page(FORM.replace("/bills/new", f"/{case}") + BANNER + flash)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            case = self.path.strip("/")
            if case in REDIRECTS:
                flashes[REDIRECTS[case][0]] = REDIRECTS[case][1]
                self.send_response(302)
                self.send_header("Location", REDIRECTS[case][0])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._page(ANSWERS[case])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def save_bill(runtime: BrowserRuntime, page: str) -> Any:
    """Open ``page`` through the network gate (every send approved) and click its Save bill."""
    policy = Policy(PolicyConfig.for_url(page), AutoApproveHuman())
    session = BrowserSession(policy=policy, vault=Vault({}), runtime=runtime).start()
    try:
        form = session.goto(page).observation
        return session.act([Click(index=index(form, name="Save bill"))])
    finally:
        session.close()


@pytest.mark.browser
@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_a_200_answer_flagging_an_error_is_never_saved(
    case: str, sloppy_site: str, browser_runtime: BrowserRuntime
) -> None:
    sent = save_bill(browser_runtime, f"{sloppy_site}/form/{case}")
    [submission] = sent.submissions
    assert submission.result != "saved", sent.render()  # before: "saved — the system accepted it"
    assert "the system accepted it" not in sent.render()
    assert not sent.ok


@pytest.mark.browser
@pytest.mark.parametrize(
    ("case", "result"), [("back", "refused"), ("elsewhere", "unknown"), ("kept", "saved")]
)
def test_a_redirect_is_read_with_the_page_it_leads_to(
    case: str, result: str, sloppy_site: str, browser_runtime: BrowserRuntime
) -> None:
    """A refusal shown once on the page a redirect leads to (a flash) is not "saved"; a banner that
    was on the form's page before the send is not the answer's; the browser still shows the flash."""
    sent = save_bill(browser_runtime, f"{sloppy_site}/form/{case}")
    flash = REDIRECTS[case][1].split(">", 1)[1].split("<", 1)[0]
    assert flash in sent.render()  # the page read once by the gate is the page the browser shows
    [submission] = sent.submissions
    assert submission.result == result, sent.render()  # before: "saved — the system accepted it (HTTP 302)"
    if result != "saved":
        assert flash in submission.detail
        assert not sent.ok


@pytest.mark.browser
def test_a_scripts_redirected_send_is_read_with_the_page_its_redirect_ends_on(
    sloppy_site: str, browser_runtime: BrowserRuntime
) -> None:
    sent = save_bill(browser_runtime, f"{sloppy_site}/script")
    [submission] = sent.submissions
    assert submission.result == "refused", sent.render()  # before: saved (HTTP 302)
    assert "The amount must be greater than zero" in submission.detail


# ---- dates as invoices print them: 07.10.2026, 10/07/2026, 7th October 2026 ---------------------------
#
# Only ISO dates and "7 October 2026" / "October 7, 2026" were values: a criterion or an observation
# giving the due date as the German invoice prints it (07.10.2026), in US/UK numerals (10/07/2026,
# 07/10/2026) or with an ordinal (7th October 2026) compared nothing, so a bill saved with day and
# month swapped (due 2026-07-10) was "verified" — and shown as checked by code.

BILLS = "http://127.0.0.1:8800/bills"
SYSTEMS = [("Acme Payables", "http://127.0.0.1:8800")]
SWAPPED = {  # the sloppy model typed 07.10.2026 as July 10; Globex's bill is due 7 October
    BILLS: [
        "Bills\n"
        "[21] BILL-0011 | Hooli | RE-2026-0412 | 1284.50 | EUR | 2026-07-10 | Unpaid\n"
        "[22] BILL-0012 | Globex Corp | GX-7781 | 494.00 | USD | 2026-10-07 | Unpaid"
    ]
}
RIGHT = {BILLS: [SWAPPED[BILLS][0].replace("2026-07-10", "2026-10-07")]}


def _judge(criterion: str, observed: str, texts: dict[str, list[str]], find: str | None = None) -> Any:
    from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
    from taskcrew.crew.steps import check_verdict

    plan = Plan(
        goal="enter the bill",
        success_criteria=[criterion],
        steps=[PlanStep(role="browser_operator", title="enter", instructions="enter it")],
        changes_data=True,
    )
    check = CriterionCheck(criterion=criterion, met=True, source=BILLS, observed=observed, find=find)
    verdict = Verdict(verified=True, checks=[check], reason="ok")
    return check_verdict(verdict, plan, set(texts), texts, systems=SYSTEMS)


@pytest.mark.parametrize("due", ["07.10.2026", "7.10.2026", "7th October 2026", "October 7th, 2026"])
def test_a_due_date_as_printed_is_compared_with_the_records_row(due: str) -> None:
    criterion = f"Acme Payables has a bill for Hooli RE-2026-0412 due {due}"
    wrong = _judge(criterion, "the bill is there", SWAPPED, find="RE-2026-0412")
    assert not wrong.verified, wrong.checks[0].observed  # before: verified, due 2026-07-10
    assert "2026-10-07" in wrong.checks[0].observed
    right = _judge(criterion, "the bill is there", RIGHT, find="RE-2026-0412")
    assert right.verified, right.reason


def test_an_observation_stating_a_date_the_page_does_not_show_is_not_checked_by_code() -> None:
    criterion = "Acme Payables has a bill for Hooli RE-2026-0412"
    said = "BILL-0011 for RE-2026-0412, due 07.10.2026 as the invoice says"
    wrong = _judge(criterion, said, SWAPPED)
    assert not wrong.verified, wrong.checks[0].observed  # before: met, shown as checked by code
    assert _judge(criterion, said, RIGHT).verified


def test_a_date_in_numerals_matches_either_reading_and_no_other_date() -> None:
    criterion = "Acme Payables has a bill for Hooli RE-2026-0412 due {}"
    # 10/07/2026 is 7 October (US) or 10 July (UK): code cannot tell, so either row is its reading
    assert _judge(criterion.format("10/07/2026"), "there", SWAPPED, find="RE-2026-0412").verified
    assert _judge(criterion.format("10/07/2026"), "there", RIGHT, find="RE-2026-0412").verified
    # …but a date no reading gives is not on the row
    wrong = _judge(criterion.format("10/08/2026"), "there", RIGHT, find="RE-2026-0412")
    assert not wrong.verified, wrong.checks[0].observed
    # a numeral date with a day above 12 has one reading
    late = {BILLS: [RIGHT[BILLS][0].replace("2026-10-07", "2026-10-31")]}
    assert _judge(criterion.format("10/31/2026"), "there", late, find="RE-2026-0412").verified
    assert _judge(criterion.format("31/10/2026"), "there", late, find="RE-2026-0412").verified
    assert not _judge(criterion.format("10/31/2026"), "there", RIGHT, find="RE-2026-0412").verified


# ---- the currency of an amount ---------------------------------------------------------------------
#
# Currencies were no values: a bill saved as 1284.50 EUR "verified" a criterion and an observation of
# "1284.50 USD" on its own row (the sloppy model left the form's default currency).

EUR_ROW = {
    BILLS: ["Bills\n[21] BILL-0011 | Northwind Traders | INV-2057 | 1284.50 | EUR | 2026-10-12 | Unpaid"]
}
USD_ROW = {BILLS: [EUR_ROW[BILLS][0].replace("EUR", "USD")]}


@pytest.mark.parametrize(
    ("criterion", "observed", "find"),
    [
        ("Acme Payables has a bill for INV-2057 of 1284.50 USD", "the bill is there", "INV-2057"),
        ("Acme Payables has a bill for INV-2057 of 1284.50 USD", "BILL-0011: INV-2057, 1,284.50 USD", None),
        ("Acme Payables has a bill for INV-2057", "BILL-0011: INV-2057, USD 1,284.50", None),
    ],
)
def test_an_amount_in_another_currency_is_not_the_criterions(
    criterion: str, observed: str, find: str
) -> None:
    wrong = _judge(criterion, observed, EUR_ROW, find=find)
    assert not wrong.verified, wrong.checks[0].observed  # before: verified on the EUR row
    right = _judge(criterion, observed, USD_ROW, find=find)
    assert right.verified, right.reason


def test_a_currency_is_never_read_as_a_record_of_its_own() -> None:
    """USD on every row must not make a neighbour's row the record's own: 499.00 is Hooli's."""
    rows = {
        BILLS: [
            "Bills\n[21] BILL-0011 | Globex Corp | GX-7781 | 494.00 | USD | 2026-10-12 | Unpaid\n"
            "[22] BILL-0012 | Hooli | HL-1 | 499.00 | USD | 2026-10-12 | Unpaid"
        ]
    }
    wrong = _judge("Acme Payables has a bill for GX-7781", "GX-7781 499.00 USD", rows)
    assert not wrong.verified, wrong.checks[0].observed
    assert _judge("Acme Payables has a bill for GX-7781", "GX-7781 494.00 USD", rows).verified
