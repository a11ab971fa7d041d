"""Routines, a red-team round: what docs/routines.md promises about the sender check, the search the
document rule decides over, and the page a save must lead to.

- A stranger's e-mail whose From *display name* shows the issuer's address (or a colleague's) is a
  stranger's e-mail: the routine does not read it, nor learn who sends the issuer's mail from it.
- A search cut short at the reader's cap (padding e-mails that repeat the vendor's name) never
  decides which invoice is the newest.
- A save the ERP refuses on the form's own page (a 409 duplicate, a near-duplicate to confirm) is
  not a replayed step: the replay falls back (real Chromium, the demo ERP, scripted models).

The e-mails are real .eml files written with the stdlib ``email`` package into a copy of the demo
inbox, read by the project's own reader.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from email.headerregistry import Address
from email.message import EmailMessage
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_routines import INBOX, _routine, _template

from taskcrew.routines.distil import learned_senders
from taskcrew.routines.files import FileStepFailed, find_document, sender_domains
from taskcrew.routines.models import Template
from taskcrew.routines.replay import Fallback, Replayer
from taskcrew.routines.template import LearnError
from taskcrew.tools.files import SandboxFiles

NORTHWIND = {"vendor": "Northwind Traders"}
INVOICE_3001 = """Northwind Traders
INVOICE
Invoice No. INV-3001
Invoice Date October 1, 2026
Customer ID ACME-0042
Terms Net 30
Subtotal 7,650.00 USD
VAT 20% 1,530.00 USD
TOTAL PAYABLE 9,180.00 USD
"""


@pytest.fixture(scope="module")
def northwind() -> Template:
    """Northwind's template as distil learns it from its invoice e-mail (senders included)."""
    return _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    copy = tmp_path / "inbox"
    shutil.copytree(INBOX, copy)
    return copy


def _mail(sender: str | Address | list[Address], subject: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Date"] = "Thu, 01 Oct 2026 09:14:00 +0000"
    msg["From"] = sender
    msg["To"] = Address("Accounts Payable", "ap", "acme-corp.example")
    msg["Subject"] = subject
    msg.set_content(body)
    return msg


def _write(folder: Path, name: str, msg: EmailMessage) -> str:
    (folder / name).write_bytes(msg.as_bytes())
    return name


# ------------------------------------------------------------------ the sender is the address


@pytest.mark.parametrize(
    "sender",
    [
        # the display name is the issuer's address, the mail is a stranger's
        Address("billing@northwind-traders.example", "ar", "nwt-remittance.example"),
        # a display name that reads like a whole From line
        Address("Northwind Traders <billing@northwind-traders.example>", "ar", "nwt-remittance.example"),
        # two From addresses, the issuer's first
        [Address("", "billing", "northwind-traders.example"), Address("", "ar", "nwt-remittance.example")],
    ],
    ids=["display-name", "display-name-with-brackets", "two-addresses"],
)
def test_a_stranger_showing_the_issuers_address_is_not_the_issuer(
    inbox: Path, northwind: Template, sender: Any
) -> None:
    name = _write(
        inbox, "Invoice INV-3001 from Northwind Traders.eml", _mail(sender, "Invoice INV-3001", INVOICE_3001)
    )
    files = SandboxFiles(inbox)
    content = files.read(name)
    assert "northwind-traders.example" in content.email.headers.sender  # type: ignore[union-attr]
    assert sender_domains(content) == []  # nobody's: a stranger's mail
    with pytest.raises(LearnError, match="does not say who sends"):
        learned_senders(content, "Northwind Traders")  # distil learns no sender from it
    with pytest.raises(FileStepFailed, match=r"was not sent from northwind-traders\.example") as refused:
        find_document(_routine(northwind), NORTHWIND, files)
    assert "INV-3001" in str(refused.value) and refused.value.new_issuer


@pytest.mark.parametrize("domain", ["northwind-trader\u017f.example", "northwind-traders.\u212axample"])
def test_a_look_alike_domain_that_folds_to_the_issuers_is_not_the_issuer(
    inbox: Path, northwind: Template, domain: str
) -> None:
    # a long s (U+017F) casefolds to "s": another domain (and one with a Kelvin sign), which a
    # mail client sends as UTF-8 (SMTPUTF8), read as northwind-traders.example
    mail = _mail(Address("", "billing", "northwind-traders.example"), "Invoice INV-3001", INVOICE_3001)
    raw = mail.as_bytes().replace(b"billing@northwind-traders.example", f"billing@{domain}".encode())
    (inbox / "Invoice INV-3001 from Northwind Traders.eml").write_bytes(raw)
    files = SandboxFiles(inbox)
    content = files.read("Invoice INV-3001 from Northwind Traders.eml")
    assert domain in content.email.headers.sender  # type: ignore[union-attr]
    assert sender_domains(content) == []
    with pytest.raises(FileStepFailed) as refused:
        find_document(_routine(northwind), NORTHWIND, files)
    assert "INV-3001" in str(refused.value)


def test_a_stranger_posing_as_a_colleague_does_not_forward_the_issuers_invoice(
    inbox: Path, northwind: Template
) -> None:
    inner = _mail(
        Address("Northwind Traders Billing", "billing", "northwind-traders.example"),
        "Invoice INV-3001 from Northwind Traders",
        INVOICE_3001,
    )
    outer = _mail(
        Address("ap@acme-corp.example", "ar", "nwt-remittance.example"),
        "FW: Invoice INV-3001",
        "see attached",
    )
    outer.add_attachment(inner, filename="forwarded.eml")
    name = _write(inbox, "FW Invoice INV-3001 Northwind Traders.eml", outer)
    files = SandboxFiles(inbox)
    assert sender_domains(files.read(name)) == []
    with pytest.raises(FileStepFailed, match=r"INV-3001 but was not sent from northwind-traders\.example"):
        find_document(_routine(northwind), NORTHWIND, files)
    # a real colleague's forward of the same e-mail still reads as Northwind's (the demo's own case)
    outer.replace_header("From", str(Address("Priya Nair", "priya.nair", "acme-corp.example")))
    _write(inbox, name, outer)
    files = SandboxFiles(inbox)
    assert sender_domains(files.read(name)) == ["northwind-traders.example"]
    assert find_document(_routine(northwind), NORTHWIND, files).values["invoice_number"] == "INV-3001"


# ------------------------------------------------------------------ a truncated search decides nothing


def _padding(inbox: Path, count: int) -> None:
    """E-mails a stranger sends that repeat the vendor's name; saved by subject, they sort between
    Northwind's older invoice (…(1).eml) and its newest (….eml)."""
    body = "\n".join(f"Northwind Traders newsletter item {i}: Northwind Traders news" for i in range(10))
    for n in range(2, 2 + count):
        msg = _mail(Address("News", "news", "some-list.example"), "Invoice from Northwind Traders", body)
        _write(inbox, f"Invoice from Northwind Traders ({n}).eml", msg)


def test_the_newest_invoice_is_not_chosen_from_a_truncated_search(inbox: Path, northwind: Template) -> None:
    (inbox / "FW_ Invoice from Northwind Traders.eml").unlink()  # no colleague forwarded it
    _padding(inbox, 4)
    files = SandboxFiles(inbox)
    searched = files.search("Northwind Traders")
    assert searched.truncated  # the reader's cap cut it short before the newest invoice
    assert "Invoice from Northwind Traders.eml" not in {h.path for h in searched.hits}
    found = find_document(_routine(northwind), NORTHWIND, files)
    assert (found.path, found.values["invoice_number"]) == ("Invoice from Northwind Traders.eml", "INV-2057")


def test_a_search_cut_short_past_its_budget_falls_back_saying_why(
    inbox: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    (inbox / "FW_ Invoice from Northwind Traders.eml").unlink()
    _padding(inbox, 45)  # 450 matching lines: more than the routine searches for
    monkeypatch.setattr(Replayer, "_record", lambda *_args: None)  # no run to record a step in
    replayer = Replayer(_routine(northwind), NORTHWIND)
    ctx = SimpleNamespace(toolbox=SimpleNamespace(files=SandboxFiles(inbox)))
    with pytest.raises(Fallback, match=r"file work: the search for 'Northwind Traders' stopped at \d+"):
        replayer._files(ctx, SimpleNamespace())


# ------------------------------------------------------------------ a refused save is not a replay

CONFIRM_FORM = """<!doctype html>
<html><head><meta charset="utf-8"><title>New bill</title></head>
<body>
<h1>New bill</h1>
<form method="post" action="/record/bills">
  <label for="number">Invoice number</label> <input id="number" name="invoice_number">
  <button type="button" onclick="document.getElementById('confirm').hidden = false">Save bill</button>
  <div id="confirm" role="alert" hidden>Possible duplicate, please confirm: this invoice may be
    entered already. <button type="submit">Save anyway</button></div>
</form>
</body></html>
"""


@pytest.fixture
def confirm_site(tmp_path: Path) -> Iterator[Any]:
    """A system whose Save asks, on the form's own page, to confirm a possible duplicate: the
    click sends nothing (real HTTP, the test site's recording server)."""
    from fixtures_browser import serve

    (tmp_path / "bills").mkdir()
    (tmp_path / "bills" / "new.html").write_text(CONFIRM_FORM, encoding="utf-8")
    yield from serve("127.0.0.1", tmp_path)


@pytest.mark.browser
def test_a_save_that_stays_on_the_form_is_not_a_replayed_step(
    northwind: Template, confirm_site: Any, browser_runtime: Any
) -> None:
    from taskcrew.routines.distil import page_pattern
    from taskcrew.routines.models import BrowserStep, PageExpect, Sends, Target
    from taskcrew.tools.browser import BrowserSession
    from taskcrew.tools.human import ScriptedHuman
    from taskcrew.tools.policy import Policy, PolicyConfig

    then = PageExpect(path=page_pattern(f"{confirm_site.url}/bills/BILL-0011"))  # as learned before
    assert re.fullmatch(then.path, "/bills/new.html")  # it also matches the form's own page
    routine = _routine(
        northwind,
        browser=[
            BrowserStep(kind="open", url="{erp}/bills/new.html", expect=PageExpect(path=r"/bills/new\.html")),
            BrowserStep(
                kind="type",
                target=Target(role="textbox", name="Invoice number", field="invoice_number"),
                value="{invoice_number}",
                expect=PageExpect(path=r"/bills/new\.html"),
            ),
            BrowserStep(
                kind="click",
                target=Target(role="button", name="Save bill"),
                approval=True,
                expect=PageExpect(path=r"/bills/new\.html"),
                then=then,
                sends=Sends(path="/record/bills", fields=["invoice_number"]),  # what "Save anyway" sends
            ),
        ],
    )
    policy = Policy(PolicyConfig.for_url(confirm_site.url), ScriptedHuman())
    session = BrowserSession(None, policy=policy, runtime=browser_runtime)
    session.start()
    try:
        ctx = SimpleNamespace(
            toolbox=SimpleNamespace(systems=[SimpleNamespace(name="Acme Payables", url=confirm_site.url)]),
            tracer=SimpleNamespace(emit=lambda _event: None),
        )
        with pytest.raises(Fallback) as fell:
            Replayer(routine, NORTHWIND)._drive(ctx, session, {"invoice_number": "INV-2057"})
    finally:
        session.close()
    assert "the form's own page again" in fell.value.reason
    assert "please confirm" in fell.value.reason and "the click sent nothing" in fell.value.reason
    assert [h for h in confirm_site.hits if h.method == "POST"] == []  # nothing was saved


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The headline chore run once by the agent (real Chromium, the demo ERP), its draft accepted."""
    from routines_world import learned_chore

    with learned_chore(tmp_path_factory.mktemp("routines-redteam")) as world:
        yield world


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("entered", "answer"),
    [
        # the same invoice, entered by hand in lower case: the bills list does not show
        # "INV-2057", the ERP's duplicate rule (case aside) answers 409 on /bills/new
        ({"invoice_number": "inv-2057"}, "Duplicate bill"),
        # the same amount and date under another number: "possible duplicate, please confirm"
        ({"invoice_number": "NW-2057-A"}, "NW-2057-A"),
    ],
    ids=["409-duplicate", "near-duplicate"],
)
def test_a_save_the_erp_refuses_on_the_form_is_not_a_replayed_step(
    learned: dict[str, Any], entered: dict[str, str], answer: str
) -> None:
    from fixtures_erp import ErpUser
    from routines_world import run_chore

    from taskcrew.crew.trace import read_trace
    from taskcrew.mock_erp import ChaosConfig

    place, case, store = learned["place"], learned["case"], learned["store"]
    routine = store.accepted("enter-invoice")
    assert routine is not None
    then = next(s.then for s in routine.browser if s.then is not None)
    assert not re.fullmatch(then.path, "/bills/new")  # the save's page is never the form's own
    assert re.fullmatch(then.path, "/bills/BILL-0042")
    before = (routine.successes, routine.fallbacks)

    place.erp_server.reset(ChaosConfig(save_faults=[]))
    person = ErpUser(place.erp_url)
    try:
        assert person.login().status_code in (302, 303)
        assert person.new_bill(**entered).status_code in (302, 303)  # entered before the run
    finally:
        person.close()
    run = run_chore(place, case, reset=False)

    events = read_trace(run.run_dir / "trace.jsonl")
    actions = [
        (e.action, e.reason) for e in events if e.kind == "control" and e.action.startswith("routine:")
    ]
    assert "routine:replayed" not in [a for a, _ in actions], actions
    fell = [r for a, r in actions if a == "routine:fallback"]
    assert fell and "the form's own page again" in fell[0] and answer in fell[0], actions
    assert "planner" in {e.call.role for e in events if e.kind == "llm_call"}  # the agent took over
    counted = store.get("enter-invoice", routine.version)
    assert (counted.successes, counted.fallbacks) == (before[0], before[1] + 1)
