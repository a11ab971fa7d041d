"""The console attacked as a second employee and as a hostile document would: forged, stale and
cross-session requests, open redirects, paths out of the sandbox, decisions twice or after a
cancel, and values that would mislead the approver who decides from the page (a look-alike letter
in a payee, an IBAN in a field not named as bank details, an amount broken across two lines).

The HTTP cases drive the console's app in-process (Starlette's test client, the real job store on
SQLite); the layout case renders the worklist in real Chromium at 1366×768."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_seed import parked_job
from fixtures_console import PASSWORDS, ConsoleEnv
from starlette.testclient import TestClient

from taskcrew.approvals.rules import assess, load_rules
from taskcrew.approvals.visible import hidden, visible
from taskcrew.console.app import build_app
from taskcrew.console.settings import ConsoleSettings
from taskcrew.jobs import Jobs

BASE = "http://testserver"
HOMOGLYPH = "N\u043erthwind Traders"  # a Cyrillic "о": drawn exactly like "Northwind Traders"


class App:
    def __init__(self, root: Path, users: Path) -> None:
        self.jobs = Jobs.open(f"sqlite:///{root / 'jobs.sqlite3'}")
        settings = ConsoleSettings(
            port=0,
            state_dir=root / "console",
            runs_dirs=[root / "runs"],
            eval_dirs=[root / "eval"],
            users_file=users,
            jobs_url=self.jobs.url,
            approvals_dir=root / "approvals",
        )
        self.app = build_app(settings, self.jobs)

    def client(self, user: str | None = None, nxt: str = "/") -> TestClient:
        client = TestClient(self.app, base_url=BASE, follow_redirects=False)
        if user is not None:
            response = self.login(client, user, nxt)
            assert response.status_code == 303, response.text
        return client

    def login(self, client: TestClient, user: str, nxt: str = "/") -> Any:
        token = csrf(client.get("/login").text)
        form = {"username": user, "password": PASSWORDS[user], "csrf": token, "next": nxt}
        return client.post("/login", data=form, headers={"origin": BASE})


def csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)


def flash_of(client: TestClient, location: str) -> str:
    found = re.search(r'class="flash[^"]*"[^>]*>([^<]*)<', client.get(location).text)
    return found.group(1) if found else ""


@pytest.fixture
def app(tmp_path: Path, console_users: Path) -> Iterator[App]:
    made = App(tmp_path, console_users)
    yield made
    made.jobs.close()


def test_forged_stale_and_cross_session_requests_decide_nothing(app: App) -> None:
    _, approval = parked_job(app.jobs, "ana", amount="100.00")
    bob, carol = app.client("bob"), app.client("carol")
    page = f"/approvals/{approval.id}"
    decide = f"{page}/decide"
    bobs, carols = csrf(bob.get(page).text), csrf(carol.get(page).text)
    same = {"origin": BASE}
    refused = {
        "another session's token": bob.post(decide, data={"action": "approve", "csrf": carols}, headers=same),
        "no token": bob.post(decide, data={"action": "approve"}, headers=same),
        "no Origin, no Referer": bob.post(decide, data={"action": "approve", "csrf": bobs}),
        "a foreign Origin": bob.post(
            decide, data={"action": "approve", "csrf": bobs}, headers={"origin": "http://testserver.evil"}
        ),
        "a foreign Referer": bob.post(
            decide,
            data={"action": "approve", "csrf": bobs},
            headers={"origin": "null", "referer": "http://evil.example/testserver"},
        ),
        "a JSON body": bob.post(
            decide,
            content=f'{{"action":"approve","csrf":"{bobs}"}}',
            headers={**same, "content-type": "application/json"},
        ),
        "GET": bob.get(decide),
        "GET with a method override": bob.get(f"{decide}?_method=POST&action=approve&csrf={bobs}"),
        "GET logout": bob.get("/logout"),
    }
    anonymous = app.client()
    anonymous.cookies.set("taskcrew_console", "A" * 43)
    refused["a made-up session cookie"] = anonymous.post(
        decide, data={"action": "approve", "csrf": bobs}, headers=same
    )
    assert {what: r.status_code for what, r in refused.items()} == {
        what: 405 if what.startswith("GET") else 401 if "cookie" in what else 403 for what in refused
    }
    assert app.jobs.approval(approval.id).status == "pending"

    # logging out ends the session on the server: the same cookie, replayed, is nobody
    cookie = carol.cookies.get("taskcrew_console")
    assert carol.post("/logout", data={"csrf": carols}, headers=same).status_code == 303
    replay = app.client()
    replay.cookies.set("taskcrew_console", str(cookie))
    assert replay.get(page).headers["location"].startswith("/login")
    assert replay.post(decide, data={"action": "approve", "csrf": carols}, headers=same).status_code == 401

    # decided once; a second click, of anyone, any action, changes nothing
    done = bob.post(decide, data={"action": "reject", "csrf": bobs}, headers=same)
    assert flash_of(bob, done.headers["location"]).endswith("rejected; the job resumes.")
    dave = app.client("carol")
    again = dave.post(decide, data={"action": "approve", "csrf": csrf(dave.get(page).text)}, headers=same)
    assert "already rejected" in flash_of(dave, again.headers["location"])
    assert app.jobs.approval(approval.id).status == "rejected"

    # an approval of a job cancelled meanwhile (the page still open) can no longer be approved
    job, other = parked_job(app.jobs, "ana", amount="100.00")
    app.jobs.cancel(job.id, by="ana")
    late = bob.post(f"/approvals/{other.id}/decide", data={"action": "approve", "csrf": bobs}, headers=same)
    assert "already expired" in flash_of(bob, late.headers["location"])
    assert app.jobs.approval(other.id).status == "expired" and app.jobs.get(job.id).status == "cancelled"


NEXT = [
    "//evil.example",
    "/\\evil.example",
    "/\\\\evil.example/",
    "\\\\evil.example",
    "/\t/evil.example",
    "https:evil.example",
    "https://evil.example/",
    "/%2F%2Fevil.example",
    "/%5cevil.example",
    "/\r\nSet-Cookie: x=1",
    "\x00/evil.example",
    "javascript:alert(1)",
]


def test_the_login_sends_back_only_to_a_page_of_the_console(app: App) -> None:
    for nxt in NEXT:
        location = app.login(app.client(), "bob", nxt).headers["location"]
        # what a browser makes of it: backslashes are slashes, tabs and line feeds are dropped
        read = location.replace("\\", "/").replace("\t", "").replace("\n", "").replace("\r", "")
        assert read.startswith("/") and not read.startswith("//"), (nxt, location)
        assert "\n" not in location and "\r" not in location and "\\" not in location, (nxt, location)
    assert (
        app.login(app.client(), "bob", "/approvals?sort=amount").headers["location"]
        == "/approvals?sort=amount"
    )


def test_paths_out_of_the_cited_documents_and_runs_are_refused(app: App) -> None:
    _, approval = parked_job(app.jobs, "ana", amount="100.00")
    bob = app.client("bob")
    paths = [
        f"/approvals/{approval.id}/source?file=../../etc/passwd",
        f"/approvals/{approval.id}/source?file=%2Fetc%2Fpasswd",
        f"/approvals/{approval.id}/source/image?file=../users.yaml",
        f"/approvals/{approval.id}/source?file=inbox/../../users.yaml",
        "/approvals/..%2F..%2Fetc%2Fpasswd",
        "/runs/..%2F..%2Fetc/files/x.png",
        "/runs/x/files/..%2F..%2F..%2Fetc%2Fpasswd",
        "/static/..%2Fapp.py",
        "/static/../web.py",
        "/eval/..%2F..",
    ]
    for path in paths:
        response = bob.get(path)
        assert response.status_code == 404, path
        assert (
            "root:" not in response.text
            and "scrypt$" not in response.text
            and "Traceback" not in response.text
        )


def test_a_look_alike_letter_is_shown_for_what_it_is_and_flagged(app: App) -> None:
    assert visible(HOMOGLYPH) == "N⟨Cyrillic о U+043E⟩rthwind Traders"
    assert visible("INV-2\u041e57") == "INV-2⟨Cyrillic О U+041E⟩57"  # the same invoice number, twice paid
    assert visible("\uff30ay\uff30al") == "⟨Fullwidth Ｐ U+FF30⟩ay⟨Fullwidth Ｐ U+FF30⟩al"
    assert visible("\u212aelvin Ltd") == "⟨Kelvin \u212a U+212A⟩elvin Ltd"
    for honest in (
        "Müller GmbH",
        "ООО «Ромашка»",
        "Invoice Nº 2057",
        "株式会社テスト",
        "Ελληνικά Α.Ε.",
        "Smith & Sons",
    ):
        assert visible(honest) == honest and hidden(honest) == [], honest
    rules = load_rules()
    flags = assess([("vendor", HOMOGLYPH), ("amount", "1284.50")], "http://erp/bills/new", rules).flags
    assert [f.rule for f in flags] == ["hidden_characters"] and "Cyrillic о U+043E" in flags[0].message

    _, approval = parked_job(app.jobs, "ana", amount="1284.50", currency="USD", vendor=HOMOGLYPH)
    _, honest_one = parked_job(app.jobs, "ana", amount="1284.50", currency="USD")
    bob = app.client("bob")
    worklist = bob.get("/approvals").text
    row = worklist[worklist.index(f'data-approval="{approval.id}"') :]
    row = row[: row.index("</tr>")]
    assert "N⟨Cyrillic о U+043E⟩rthwind Traders" in row and "hidden characters" in row
    assert HOMOGLYPH not in worklist
    page = bob.get(f"/approvals/{approval.id}").text
    assert "N⟨Cyrillic о U+043E⟩rthwind Traders" in page and HOMOGLYPH not in page
    token = csrf(page)
    bulk = bob.post(
        "/approvals/bulk", data={"ids": [approval.id, honest_one.id], "csrf": token}, headers={"origin": BASE}
    )
    assert "hidden_characters" in flash_of(bob, bulk.headers["location"])
    assert app.jobs.approval(approval.id).status == "pending"


def test_an_iban_in_a_field_of_any_name_is_a_bank_details_change(app: App) -> None:
    rules = load_rules()
    iban = "GB33 BUKB 2020 1555 5555 55"
    for name in ("account", "reference", "remit_to", "payment_note"):
        flags = assess([(name, iban), ("vendor", "Globex")], "http://erp/vendors/3", rules).flags
        assert [f.rule for f in flags] == ["bank_details"], name
        assert flags[0].second_approver and f"{name} = {iban} is an IBAN" in flags[0].message
    # an IBAN's check digits must hold: an invoice number or a code shaped like one is not flagged
    for code in ("GB34 BUKB 2020 1555 5555 55", "INV-2057", "AB12CDEFGHIJKLMNOP", "1284.50"):
        assert assess([("reference", code)], "http://erp/bills/new", rules).flags == [], code

    _, approval = parked_job(app.jobs, "ana", amount="100.00", extra={"account": iban})
    bob = app.client("bob")
    page = bob.get(f"/approvals/{approval.id}").text
    top = page[page.index('id="key-values"') : page.index("</table>", page.index('id="key-values"'))]
    # first, beside the payee and amount (its text: the IBAN is drawn in groups of four, as spans)
    assert "Bank details (account)" in top and iban in re.sub(r"<[^>]+>", "", top)
    assert "bank details change" in bob.get("/approvals").text
    first = bob.post(
        f"/approvals/{approval.id}/decide",
        data={"action": "approve", "csrf": csrf(page)},
        headers={"origin": BASE},
    )
    assert "second, different approver" in flash_of(bob, first.headers["location"])
    assert app.jobs.approval(approval.id).status == "pending"


@pytest.mark.browser
def test_an_amount_is_never_broken_inside_its_number(console_env: ConsoleEnv) -> None:
    long_payee = "Northwind Traders International Holdings Group Limited Partnership of the Pacific Northwest"
    for amount in ("123,456,789,012.34", "1.234.567,89", "€ 1 250 000,00"):
        parked_job(console_env.jobs, "ana", amount=amount, currency="EUR", vendor=long_payee)
    page = console_env.page_as("bob")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.reload()
    cells = page.locator("#worklist td.num")
    assert cells.count() == 3
    for i in range(3):
        amount = cells.nth(i).locator(".amount")
        # one line box: the browser drew the number in one piece
        assert amount.evaluate("e => e.getClientRects().length") == 1, amount.inner_text()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1366  # and the page still does not scroll sideways


def test_the_audit_page_does_not_show_a_password_fingerprint(app: App, console_users: Path) -> None:
    """A cancel or a retry keeps the canceller's credential (a fingerprint of her password hash) in
    the audit log, so a reset voids what the old login did; the page every user reads hides it."""
    from taskcrew.approvals.identity import credentials

    job, _ = parked_job(app.jobs, "ana", amount="100.00")
    bob = app.client("bob")
    token = csrf(bob.get(f"/jobs/{job.id}").text)
    assert (
        bob.post(f"/jobs/{job.id}/cancel", data={"csrf": token}, headers={"origin": BASE}).status_code == 303
    )
    assert app.jobs.get(job.id).status == "cancelled"
    page = app.client("carol").get("/audit").text
    assert "(kept, not shown)" in page
    assert credentials(console_users)["bob"] not in page


def test_a_password_cannot_be_guessed_at_the_console_s_speed(app: App) -> None:
    """Five wrong passwords for a name from one address, and that name is refused from there
    before its password is checked, the right one included, until the window passes; another
    user from the same address, and the same user elsewhere, still sign in; every refusal is
    audited."""
    from taskcrew.console.security import LoginThrottle

    now = [0.0]
    inner = app.app
    while not hasattr(inner, "state"):  # the app inside its middleware
        inner = inner.app
    console = inner.state.console
    console.throttle = LoginThrottle(window=900.0, clock=lambda: now[0])
    client = TestClient(app.app, base_url=BASE, follow_redirects=False)

    def attempt(user: str, password: str) -> Any:
        form = {"username": user, "password": password, "csrf": csrf(client.get("/login").text), "next": "/"}
        return client.post("/login", data=form, headers={"origin": BASE})

    assert [attempt("carol", f"guess {i}").status_code for i in range(5)] == [401] * 5
    refused = attempt("carol", PASSWORDS["carol"])  # the right password, now refused unchecked
    assert refused.status_code == 429 and "Too many failed sign-ins" in refused.text
    assert int(refused.headers["retry-after"]) == 901
    assert attempt("CAROL ", "another guess").status_code == 429  # the name as the users file reads it
    assert attempt("bob", PASSWORDS["bob"]).status_code == 303  # another user from this address
    console.throttle.failed("x", "elsewhere")
    assert console.throttle.wait("carol", "elsewhere") == 0  # the same user elsewhere
    now[0] = 899.0
    assert attempt("carol", PASSWORDS["carol"]).status_code == 429
    now[0] = 900.5
    assert attempt("carol", PASSWORDS["carol"]).status_code == 303  # the window has passed
    actions = [e.action for e in console.audit.entries() if e.who.strip().casefold() == "carol"]
    # one login_refused when the hold starts, one with the count of the 2 after it once it has ended
    assert actions == ["login_failed"] * 5 + ["login_refused"] * 2 + ["login"]
    # many names from one address: the address is refused; one name from many: the name is
    for i in range(20):
        console.throttle.failed(f"user{i}", "testclient")
    assert attempt("ana", PASSWORDS["ana"]).status_code == 429
    for i in range(50):
        console.throttle.failed("dave", f"10.0.0.{i}")
    assert console.throttle.wait("dave", "10.9.9.9") > 0


def test_a_screenshot_written_over_after_the_approval_was_parked_is_not_shown(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screenshot's bytes are sealed with the approval's sources: someone who can write the
    worker's job folder cannot put another form beside the payload."""
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
    png = tmp_path / "form.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"the form as filled" * 10)
    _, approval = parked_job(app.jobs, "ana", amount="100.00", screenshot=png)
    stored = Path(app.jobs.approval(approval.id).screenshot or "")
    bob = app.client("bob")
    shot = f"/approvals/{approval.id}/screenshot"
    assert bob.get(shot).content == png.read_bytes()
    assert 'src="' + shot + '"' in bob.get(f"/approvals/{approval.id}").text
    stored.write_bytes(b"\x89PNG\r\n\x1a\n" + b"another form, 95.00" * 10)
    assert bob.get(shot).status_code == 404
    page = bob.get(f"/approvals/{approval.id}").text
    assert 'src="' + shot + '"' not in page and 'id="shot-missing"' in page
