"""Routines: company names that differ in one letter or digit, the senders a forward teaches, and
which version replays after an old record is put back (no browser, no model).

What was found (a red team, with failing proofs):

- Names differing only in a one-character word were one company: ``models._words`` dropped words of
  one character, so "Unit 4 Supplies" and "Unit 7 Supplies" (or "Studio A" and "Studio B") had the
  same words, and the file search matched each word as a substring ("14 Harbour Road" holds "4").
  A routine that knew Unit 7 Supplies only handed Unit 7's template, and Unit 7's newest invoice,
  to a task for Unit 4 Supplies, and the vendor drop-down could choose the other company.
- A template learned from a colleague's forward trusted every sender the forward carried, not the
  one whose message the values were read from: a stranger's note forwarded beside the issuer's
  invoice made the stranger's later "invoice" the issuer's trusted one.
- A retired version replayed again when an old "which version replays" record (it signs only name
  and version) was put back and the file's unsigned status set to accepted.

The rules now:

- Every word of a name counts, single letters and digits included (``models._words``); only
  punctuation and a trailing legal form are dropped ("Northwind Traders Ltd" is Northwind Traders,
  "Acme S.A." Acme). A file the search found is the vendor's only when a line prints the vendor's
  name in order, each word a whole word (``models.prints_name``, in ``Routine.names``).
- A template learns the sender of exactly the part it reads its values from, the part a replay
  reads (``distil.learned_senders`` with the template, through ``files.sender_parts``); a file
  whose values cannot be tied to one sender teaches no sender, and so no template.
- The version that replays is the one of the signed audit log's latest routine decision
  (``store.RoutineStore.current``): a record that disagrees with it replays nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from test_routines import INBOX, _routine, _template
from test_routines_adversarial import INVOICE_TEXT

from taskcrew.approvals.signing import KEY_FILE, KeyRing
from taskcrew.routines import models
from taskcrew.routines.distil import learned_senders
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import Template, issuer_of, issuers_named, named_like
from taskcrew.routines.replay import choose_option
from taskcrew.routines.store import RoutineStore
from taskcrew.routines.template import LearnError, learn
from taskcrew.tools.files import SandboxFiles

UNIT7 = "Unit 7 Supplies"
UNIT4 = "Unit 4 Supplies"
VALUES_U7 = {
    "invoice_number": "U7-1001",
    "amount": "120.00",
    "currency": "USD",
    "invoice_date": "2026-09-01",
    "due_date": "2026-10-01",
}
VALUES_U4 = {
    "invoice_number": "U4-0555",
    "amount": "60.00",
    "currency": "USD",
    "invoice_date": "2026-09-14",
    "due_date": "2026-10-14",
}


def _invoice(company: str, number: str, printed: str, total: str, sub: str, vat: str) -> str:
    return f"""{company}, 14 Harbour Road, Portsmouth

Invoice No. {number}
Invoice Date {printed}
Terms Net 30
Subtotal {sub} USD
VAT 20% {vat} USD
TOTAL PAYABLE {total} USD
"""


def _mail(sender: str, company: str, date: str, body: str) -> str:
    return f"""Date: {date}
From: {company} Billing <{sender}>
To: ap@acme-corp.example
Subject: Invoice from {company}
MIME-Version: 1.0
Content-Type: text/plain; charset="us-ascii"

{body}"""


U7_1001 = _invoice(UNIT7, "U7-1001", "September 1, 2026", "120.00", "100.00", "20.00")
U7_1002 = _invoice(UNIT7, "U7-1002", "October 1, 2026", "9,600.00", "8,000.00", "1,600.00")
U4_0555 = _invoice(UNIT4, "U4-0555", "September 14, 2026", "60.00", "50.00", "10.00")


@pytest.fixture
def mails(tmp_path: Path) -> Path:
    """Unit 7 Supplies' two invoices (the newer one large) and Unit 4 Supplies' own, by e-mail."""
    box = tmp_path / "mails"
    box.mkdir()
    u7 = "billing@unit7-supplies.example"
    (box / "Unit 7 - U7-1001.eml").write_text(_mail(u7, UNIT7, "Tue, 01 Sep 2026 08:00:00 +0000", U7_1001))
    (box / "Unit 7 - U7-1002.eml").write_text(_mail(u7, UNIT7, "Thu, 01 Oct 2026 08:00:00 +0000", U7_1002))
    (box / "Unit 4 - U4-0555.eml").write_text(
        _mail("billing@unit4-supplies.example", UNIT4, "Mon, 14 Sep 2026 08:00:00 +0000", U4_0555)
    )
    return box


def _learned(files: SandboxFiles, path: str, values: dict[str, str], issuer: str) -> Template:
    """The template distil learns from ``path``, with its senders."""
    content = files.read(path)
    template = learn(content.full_text(), values, issuer, path)
    template.senders = learned_senders(content, issuer, template)
    return template


# ------------------------------------------------------------------------------ names (hole 1)


def test_names_differing_in_a_one_letter_or_one_digit_word_are_different_companies() -> None:
    for one, other in [(UNIT4, UNIT7), ("Studio A", "Studio B"), ("Plant 2 Logistics", "Plant 3 Logistics")]:
        assert not named_like(one, other), (one, other)
        assert issuer_of(one, [other]) is None, (one, other)
    assert issuer_of(UNIT4, [UNIT7, UNIT4]) == 1  # each its own, in either order
    assert issuer_of(UNIT7, [UNIT7, UNIT4]) == 0
    assert not named_like("Studio B", "Studio")  # a letter more is a word more
    # a line printing Unit 7 Supplies does not name Unit 4 Supplies, even beside a "14"
    assert issuers_named("Unit 7 Supplies, 14 Harbour Road", UNIT4, [UNIT7]) == set()
    assert not models.prints_name("Unit 7 Supplies, 14 Harbour Road", UNIT4)
    assert not models.prints_name("Studio Bar, 2 Mill Lane", "Studio B")


def test_honest_spellings_of_one_name_are_still_one_company() -> None:
    same = [
        ("Northwind Traders Ltd", "Northwind Traders"),
        ("NORTHWIND-TRADERS", "northwind traders"),
        ("Bharat Components Pvt. Ltd.", "Bharat Components"),
        ("Acme S.A.", "Acme"),
        ("Acme S.p.A.", "ACME"),
        ("Maersk A/S", "Maersk"),
        ("J.P. Morgan", "JP Morgan"),
        ("Smith & Sons", "Smith  Sons"),
        ("Mu\u0308ller GmbH", "M\u00fcller"),  # "ü" decomposed or composed is one letter
        ("Unit 4 Supplies Ltd", UNIT4),
        ("Studio B GmbH", "studio b"),
    ]
    for one, other in same:
        assert named_like(one, other), (one, other)
    assert issuer_of("NORTHWIND-TRADERS", ["Northwind Traders"]) == 0
    assert not named_like("Northwind Traders Logistics", "Northwind Traders")
    assert not named_like("Möller", "Müller")
    assert models.prints_name("Invoice from UNIT 4 SUPPLIES LTD.", UNIT4)
    # the name in order: the search finds these words in any order, but that only finds candidates
    # (tests/test_adversarial_routine_names_2.py: "Unit 7 Supplies, 4 Harbour Road" is not Unit 4's)
    assert not models.prints_name("Supplies: Unit 4", UNIT4)
    assert models.prints_name("REMIT TO GLOBEX CORPORATION", "Globex Corp")  # a legal form written out


def test_a_replay_for_unit_4_never_gets_unit_7s_template_or_invoice(mails: Path) -> None:
    files = SandboxFiles(mails)
    routine = _routine(_learned(files, "Unit 7 - U7-1001.eml", VALUES_U7, UNIT7))  # knows Unit 7 only
    assert routine.template_for(UNIT4) is None
    with pytest.raises(FileStepFailed) as refused:
        find_document(routine, {"vendor": UNIT4}, files)
    assert refused.value.new_issuer  # a new issuer for the agent, with why
    assert "'Unit 4 Supplies' is not 'Unit 7 Supplies' (the words differ: 4)" in str(refused.value)
    # control: Unit 7's own replay still picks its newest invoice
    assert find_document(routine, {"vendor": UNIT7}, files).values["invoice_number"] == "U7-1002"


def test_a_file_holding_the_vendors_digit_only_inside_another_number_is_not_its_document(
    tmp_path: Path,
) -> None:
    """Both issuers' templates learned from files on disk (no senders to tell them apart): the
    search for "Unit 4 Supplies" finds Unit 7's newer invoice ("14 Harbour Road" holds "4"); it is
    not Unit 4's, so Unit 4's own invoice is picked, not Unit 7's 9,600.00."""
    box = tmp_path / "files"
    box.mkdir()
    for name, text in (("u7-1001.txt", U7_1001), ("u7-1002.txt", U7_1002), ("u4-0555.txt", U4_0555)):
        (box / name).write_text(text, encoding="utf-8")
    files = SandboxFiles(box)
    unit7 = _learned(files, "u7-1001.txt", VALUES_U7, UNIT7)
    unit4 = _learned(files, "u4-0555.txt", VALUES_U4, UNIT4)
    assert unit7.senders == unit4.senders == []
    assert "u7-1002.txt" in {h.path for h in files.search(UNIT4).hits}  # the substring hit
    for templates in ([unit7, unit4], [unit4, unit7]):
        routine = _routine(templates[0], templates=templates)
        found = find_document(routine, {"vendor": UNIT4}, files)
        assert (found.path, found.values["amount"]) == ("u4-0555.txt", "60.00")
        assert find_document(routine, {"vendor": UNIT7}, files).values["invoice_number"] == "U7-1002"


def test_the_vendor_drop_down_never_chooses_the_other_company() -> None:
    def erp(*labels: str) -> SimpleNamespace:
        return SimpleNamespace(
            field=SimpleNamespace(
                options=[SimpleNamespace(label=x, value=str(i)) for i, x in enumerate(labels)]
            )
        )

    assert choose_option(erp("Initech", UNIT7), UNIT4) is None
    assert choose_option(erp("Studio A Ltd", "Initech"), "Studio B") is None
    # controls: the vendor's own option, written with its legal form or in another case
    assert choose_option(erp(UNIT7, "Unit 4 Supplies Ltd"), UNIT4) == "Unit 4 Supplies Ltd"
    assert choose_option(erp("Studio A Ltd", "STUDIO B LTD"), "Studio B") == "STUDIO B LTD"


# --------------------------------------------------------------------- forward senders (hole 2)

NORTHWIND_INVOICE = _mail(
    "billing@northwind-traders.example",
    "Northwind Traders",
    "Thu, 01 Oct 2026 08:02:11 -0700",
    "Northwind Traders\n\n" + INVOICE_TEXT,
)
STRANGER_NOTE = _mail(
    "ar@nwt-remittance.example",
    "Northwind Remittance",
    "Thu, 01 Oct 2026 10:00:00 +0000",
    "Please note our new remittance details for Northwind Traders.\n",
)
NORTHWIND_VALUES = {
    "invoice_number": "INV-3001",
    "amount": "1980.00",
    "currency": "USD",
    "invoice_date": "2026-10-01",
    "due_date": "2026-10-31",
}


def _forward(*messages: str, sender: str = "Pat Colleague <pat@acme-corp.example>") -> str:
    parts = "".join(
        f'--XX\nContent-Type: message/rfc822\nContent-Disposition: attachment; filename="m{i}.eml"\n\n{m}\n'
        for i, m in enumerate(messages)
    )
    return (
        f"Date: Thu, 01 Oct 2026 11:00:00 +0000\nFrom: {sender}\nTo: ap@acme-corp.example\n"
        "Subject: Fwd: Northwind Traders invoice and their note\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="XX"\n\n--XX\nContent-Type: text/plain; charset="us-ascii"\n\n'
        f"FYI, both attached.\n{parts}--XX--\n"
    )


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    copied = tmp_path / "inbox"
    shutil.copytree(INBOX, copied)
    return copied


def test_a_forward_teaches_only_the_sender_of_the_part_the_values_were_read_from(inbox: Path) -> None:
    (inbox / "Fwd Northwind invoice.eml").write_text(_forward(NORTHWIND_INVOICE, STRANGER_NOTE))
    (inbox / "Fwd stranger first.eml").write_text(_forward(STRANGER_NOTE, NORTHWIND_INVOICE))
    files = SandboxFiles(inbox)
    for name in ("Fwd Northwind invoice.eml", "Fwd stranger first.eml"):
        template = _learned(files, name, NORTHWIND_VALUES, "Northwind Traders")
        assert template.senders == ["northwind-traders.example"], name
        # without the template, which part the values came from is not known: no sender is taught
        with pytest.raises(LearnError, match="cannot be tied to one sender"):
            learned_senders(files.read(name), "Northwind Traders")


def test_the_strangers_own_newer_invoice_is_never_read_as_the_issuers(inbox: Path) -> None:
    (inbox / "Fwd Northwind invoice.eml").write_text(_forward(NORTHWIND_INVOICE, STRANGER_NOTE))
    files = SandboxFiles(inbox)
    routine = _routine(_learned(files, "Fwd Northwind invoice.eml", NORTHWIND_VALUES, "Northwind Traders"))
    assert (
        find_document(routine, {"vendor": "Northwind Traders"}, files).values["invoice_number"] == "INV-3001"
    )
    later = INVOICE_TEXT.replace("INV-3001", "INV-3050").replace("October 1, 2026", "October 5, 2026")
    (inbox / "Northwind Traders INV-3050.eml").write_text(
        _mail(
            "ar@nwt-remittance.example",
            "Northwind Remittance",
            "Mon, 05 Oct 2026 10:00:00 +0000",
            "Northwind Traders\n\n" + later,
        )
    )
    with pytest.raises(FileStepFailed, match=r"not sent from northwind-traders\.example"):
        find_document(routine, {"vendor": "Northwind Traders"}, files)


def test_a_forward_whose_values_two_senders_print_teaches_no_sender(inbox: Path) -> None:
    """The stranger's forwarded message prints an invoice under Northwind's labels too: the
    template reads from parts of two senders, so the values are tied to neither."""
    forged = STRANGER_NOTE.replace(
        "Please note our new remittance details for Northwind Traders.\n",
        "Northwind Traders\n\n" + INVOICE_TEXT,
    )
    (inbox / "Fwd two.eml").write_text(_forward(NORTHWIND_INVOICE, forged))
    files = SandboxFiles(inbox)
    content = files.read("Fwd two.eml")
    template = learn(content.full_text(), NORTHWIND_VALUES, "Northwind Traders", "Fwd two.eml")
    with pytest.raises(LearnError, match=r"northwind-traders\.example and nwt-remittance\.example"):
        learned_senders(content, "Northwind Traders", template)


def test_plain_mails_and_single_forwards_teach_their_sender_as_before(inbox: Path) -> None:
    files = SandboxFiles(inbox)
    assert _template(files, "INV-2057", "Northwind Traders").senders == ["northwind-traders.example"]
    (inbox / "Fwd only.eml").write_text(_forward(NORTHWIND_INVOICE))
    template = _learned(files, "Fwd only.eml", NORTHWIND_VALUES, "Northwind Traders")
    assert template.senders == ["northwind-traders.example"]
    assert learned_senders(files.read("Fwd only.eml"), "Northwind Traders") == ["northwind-traders.example"]
    # the values in the colleague's own words, the forwarded mail printing none: no sender
    (inbox / "Fwd inline.eml").write_text(
        _forward(STRANGER_NOTE).replace("FYI, both attached.", "Northwind Traders\n\n" + INVOICE_TEXT)
    )
    content = files.read("Fwd inline.eml")
    template = learn(content.full_text(), NORTHWIND_VALUES, "Northwind Traders", "Fwd inline.eml")
    with pytest.raises(LearnError, match="none of them"):
        learned_senders(content, "Northwind Traders", template)


# -------------------------------------------------------------------- version rollback (hole 3)


def test_a_retired_version_does_not_replay_when_an_old_record_is_put_back(tmp_path: Path) -> None:
    keys = KeyRing(tmp_path / "approvals" / KEY_FILE)
    store = RoutineStore(tmp_path / "routines", keys=keys)
    store.propose(_routine(_template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")))
    store.accept("enter-invoice", 1, "token:ana")
    record = tmp_path / "approvals" / "routines" / "enter-invoice.json"
    backup = record.read_text(encoding="utf-8")
    assert store.accepted("enter-invoice") is not None

    store.retire("enter-invoice", None)
    assert store.accepted("enter-invoice") is None
    record.write_text(backup, encoding="utf-8")  # put back, with the file's unsigned status
    path = tmp_path / "routines" / "enter-invoice.v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["status"] = "accepted"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert store.current("enter-invoice") is None
    assert store.accepted("enter-invoice") is None
    assert "is none (retired" in (store.acceptance_problem(store.get("enter-invoice", 1)) or "")


def test_a_version_accepted_again_replays(tmp_path: Path) -> None:
    """Control: the latest signed decision decides, so accepting a new version after a retirement
    makes it replay, and retiring a version that did not replay leaves the current one."""
    store = RoutineStore(tmp_path / "routines", keys=KeyRing(tmp_path / "approvals" / KEY_FILE))
    routine = _routine(_template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders"))
    store.propose(routine)
    store.accept("enter-invoice", 1, "token:ana")
    store.retire("enter-invoice", None)
    store.save(routine.model_copy(update={"version": 2, "summary": "healed"}))
    store.accept("enter-invoice", 2, "token:ana")
    assert store.current("enter-invoice") == 2
    store.save(routine.model_copy(update={"version": 3, "summary": "a draft"}))
    store.retire("enter-invoice", 3)  # a draft that never replayed
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.version == 2
