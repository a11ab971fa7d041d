"""Routines without a browser: templates learned from the demo inbox, the document rule, the model's
refusals, the store's statuses and counts, the task → recipe match, and the CLI's one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.routines.distil import _source, document_values, learned_senders
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.match import match_task, recipes_for
from taskcrew.routines.models import BrowserStep, DocumentRule, Routine, Target, Template
from taskcrew.routines.store import RoutineError, RoutineStore, diff
from taskcrew.routines.template import ExtractionError, LearnError, extract, learn, shape
from taskcrew.sandbox.ground_truth import load_ground_truth
from taskcrew.tools.files import SandboxFiles

INBOX = DEFAULT_SANDBOX / "inbox"


def _values(doc: object) -> dict[str, str]:
    return {
        "invoice_number": doc.number,  # type: ignore[attr-defined]
        "amount": f"{doc.total:.2f}",  # type: ignore[attr-defined]
        "currency": doc.currency,  # type: ignore[attr-defined]
        "invoice_date": doc.invoice_date.isoformat(),  # type: ignore[attr-defined]
        "due_date": doc.due_date.isoformat(),  # type: ignore[attr-defined]
    }


@pytest.fixture(scope="module")
def files() -> SandboxFiles:
    return SandboxFiles(INBOX)


def test_a_template_learned_from_one_invoice_reads_the_issuers_other_invoice(files: SandboxFiles) -> None:
    """Learned from INV-2031 (due date printed), read on INV-2057 (terms only) — an unseen case."""
    truth = {d.number: d for d in load_ground_truth().documents if d.kind == "invoice"}
    older = truth["INV-2031"]
    template = learn(files.read(older.path).full_text(), _values(older), "Northwind Traders", older.path)
    assert {f.name: f.anchor for f in template.fields}["amount"] == "TOTAL PAYABLE"
    assert "total_is_subtotal_plus_tax" in template.checks
    newer = truth["INV-2057"]
    with pytest.raises(ExtractionError):  # INV-2057 prints no due date: this template cannot say
        extract(template, files.read(newer.path).full_text())
    terms = learn(files.read(newer.path).full_text(), _values(newer), "Northwind Traders", newer.path)
    assert [d.rule for d in terms.derived] == ["due_from_terms", "currency_of_total"]


@pytest.mark.parametrize(
    "number",
    # columns side by side on one OCR'd line (VI-3412, CO-55187), a total equal to its subtotal
    # with the currency in its label (GX-5531), a scan (SF-0098)
    [
        "INI-7781",
        "INV/2026/0917",
        "RE-2026-0412",
        "VI-3390",
        "CO-55120",
        "VI-3412",
        "CO-55187",
        "GX-5531",
        "SF-0098",
    ],
)
def test_templates_read_back_every_issuers_verified_values(files: SandboxFiles, number: str) -> None:
    doc = next(d for d in load_ground_truth().documents if d.number == number)
    text = files.read(doc.path).full_text()
    template = learn(text, _values(doc), doc.vendor or "", doc.path)
    got = extract(template, text)
    assert {k: got[k] for k in _values(doc)} == _values(doc)


def test_every_vendors_newest_invoice_is_found_and_read_by_its_template(files: SandboxFiles) -> None:
    """For each vendor with an invoice in the inbox: a template learned from its newest invoice
    lets the routine's document rule pick exactly that one and read its values; a same-day tie
    (Hooli) is left to a person."""
    invoices = [d for d in load_ground_truth().documents if d.kind == "invoice" and d.vendor]
    vendors = sorted({d.vendor for d in invoices if d.vendor})
    assert len(vendors) >= 8
    for vendor in vendors:
        mine = [d for d in invoices if d.vendor == vendor]
        newest = max(mine, key=lambda d: d.invoice_date)  # type: ignore[arg-type, return-value]
        template = _template(files, newest.number, vendor)
        if sum(d.invoice_date == newest.invoice_date and d.number != newest.number for d in mine):
            with pytest.raises(FileStepFailed, match="share the newest printed date"):
                find_document(_routine(template), {"vendor": vendor}, files)
            continue
        found = find_document(_routine(template), {"vendor": vendor}, files)
        assert {k: found.values[k] for k in _values(newest)} == _values(newest), vendor


def test_values_that_fail_the_ap_checks_are_not_used(files: SandboxFiles) -> None:
    doc = next(d for d in load_ground_truth().documents if d.number == "INV-2057")
    text = files.read(doc.path).full_text()
    template = learn(text, _values(doc), "Northwind Traders", doc.path)
    tampered = text.replace("TOTAL PAYABLE 1,284.50 USD", "TOTAL PAYABLE 1,248.50 USD")
    with pytest.raises(ExtractionError, match="subtotal"):
        extract(template, tampered)
    with pytest.raises(LearnError):  # a value the document does not print is never learned
        learn(text, {**_values(doc), "amount": "999.99"}, "Northwind Traders", doc.path)


def test_the_vendor_named_in_full_is_the_parameter_and_an_invoice_number_stays_a_value() -> None:
    params = {"vendor": "Globex"}
    reported = {
        "vendor": "Globex Corporation",  # the ERP's full name for the parameter
        "invoice_number": "GLOBEX-0042",  # shares a word with the parameter: still the document's
        "amount": "1200.00",
        "file": "inbox/globex.pdf",
    }
    values = document_values(reported, params)
    assert values == {"invoice_number": "GLOBEX-0042", "amount": "1200.00"}
    assert _source("Globex Corporation", params, values) == "{vendor}"  # the option chosen
    assert _source("GLOBEX-0042", params, values) == "{invoice_number}"  # the text typed
    assert document_values({"vendor": "Initech"}, params) == {"vendor": "Initech"}  # another vendor: a value


def test_shape_generalises_identifiers() -> None:
    assert shape("INV-2057") == r"[A-Z]+\-\d+"
    assert shape("INV/2026/0917") == r"[A-Z]+/\d+/\d+"


def _routine(files_template: object, **changes: object) -> Routine:
    data = {
        "name": "enter-invoice",
        "version": 1,
        "source_run": "run-1",
        "params": ["vendor"],
        "documents": DocumentRule(search="{vendor}"),
        "templates": [files_template],
        "values": ["invoice_number", "amount", "currency", "invoice_date", "due_date"],
        "browser": [
            BrowserStep(kind="open", url="{erp}/bills/new"),
            BrowserStep(
                kind="type",
                target=Target(role="textbox", name="Invoice number", field="invoice_number"),
                value="{invoice_number}",
            ),
        ],
    }
    data.update(changes)
    return Routine.model_validate(data)


@pytest.fixture(scope="module")
def northwind(files: SandboxFiles) -> object:
    return _template(files, "INV-2057", "Northwind Traders")


def _template(files: SandboxFiles, number: str, issuer: str) -> Template:
    """The issuer's template learned from its document ``number``, with its senders, as distil does."""
    doc = next(d for d in load_ground_truth().documents if d.number == number)
    content = files.read(doc.path)
    template = learn(content.full_text(), _values(doc), issuer, doc.path)
    template.senders = learned_senders(content, issuer)
    return template


def test_the_document_rule_picks_the_newest_invoice_and_refuses_a_tie(
    files: SandboxFiles, northwind: object
) -> None:
    found = find_document(_routine(northwind), {"vendor": "Northwind Traders"}, files)
    assert found.values["invoice_number"] == "INV-2057"  # not INV-2031, not the reminder
    with pytest.raises(FileStepFailed, match="no extraction template"):
        find_document(_routine(northwind), {"vendor": "Initech"}, files)
    template = _template(files, "HCS-2026-10A", "Hooli Cloud Services")
    with pytest.raises(FileStepFailed, match="share the newest printed date"):  # a person decides
        find_document(_routine(template), {"vendor": "Hooli Cloud Services"}, files)


def test_a_routine_refuses_literal_values_and_unknown_placeholders(northwind: object) -> None:
    with pytest.raises(ValidationError, match="placeholder"):
        BrowserStep(kind="type", target=Target(role="textbox", field="x"), value="{a} and {b}")
    with pytest.raises(ValidationError, match="neither a parameter"):
        _routine(northwind, browser=[BrowserStep(kind="open", url="{erp}/bills?po={purchase_order}")])
    with pytest.raises(ValidationError, match="target"):
        BrowserStep(kind="click")
    with pytest.raises(ValidationError, match="secret"):
        from taskcrew.routines.models import Obstacle

        Obstacle(
            kind="login",
            steps=[
                BrowserStep(kind="type", target=Target(role="textbox", field="password"), value="{vendor}")
            ],
        )


def test_statuses_counts_and_flagging(tmp_path: Path, northwind: object) -> None:
    store = RoutineStore(tmp_path)
    first, new = store.propose(_routine(northwind))
    assert (first.version, first.status, new) == (1, "draft", True)
    assert store.propose(_routine(northwind, source_run="run-2"))[1] is False  # the same work: no v2
    assert store.accepted("enter-invoice") is None  # a draft never replays
    store.accept("enter-invoice", 1, "ana")
    second, _ = store.propose(_routine(northwind, summary="changed"))
    store.accept("enter-invoice", 2, "ana")
    assert [(r.version, r.status) for r in store.versions("enter-invoice")] == [
        (1, "retired"),
        (2, "accepted"),
    ]
    with pytest.raises(RoutineError, match="retired"):
        store.accept("enter-invoice", 1, "ana")
    with pytest.raises(RoutineError, match=r"2 versions \(the newest is v2\); say which one you reviewed"):
        store.accept("enter-invoice", None, "ana")  # not whichever is newest at the time
    routine = store.accepted("enter-invoice")
    assert routine is not None
    routine = store.count(routine, fell_back=True, reason="x")
    assert not routine.flagged
    routine = store.count(routine, fell_back=True, reason="y")
    assert routine.flagged and routine.fallbacks == 2
    routine = store.count(routine, fell_back=False)
    assert not routine.flagged and routine.successes == 1
    assert "+summary: changed" in diff(first, second)
    store.retire("enter-invoice", None)
    assert store.accepted("enter-invoice") is None


def test_a_task_is_matched_to_its_recipe_and_values() -> None:
    recipes = recipes_for(DEFAULT_SANDBOX)
    task = (
        "Find the latest invoice from Initech, extract the amount and due date, enter it into our "
        "internal system, and tell me once it is done."
    )
    match = match_task(task, recipes)
    assert match is not None and (match.recipe.name, match.values) == ("enter-invoice", {"vendor": "Initech"})
    assert match_task("Find the latest invoice from Initech and pay it.", recipes) is None


def reviewed(runner: CliRunner, version: int = 1) -> list[str]:
    """`routines accept` as a reviewer runs it off a terminal: with the fingerprint `show` printed."""
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", str(version)])
    found = re.search(r"^fingerprint: ([0-9a-f]{32})", shown.output, re.MULTILINE)
    assert found is not None, shown.output
    return ["routines", "accept", "enter-invoice", "-v", str(version), "--fingerprint", found.group(1)]


def test_cli_errors_are_one_line_with_exit_code_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    runner = CliRunner()
    shown = runner.invoke(app, ["routines", "show", "enter-invoice"])
    assert shown.exit_code == 2 and "no routine named 'enter-invoice'" in shown.output
    learned = runner.invoke(app, ["routines", "learn", str(tmp_path)])
    assert learned.exit_code == 2 and "not a run folder" in learned.output
    assert "Traceback" not in learned.output
    listed = runner.invoke(app, ["routines", "list"])
    assert listed.exit_code == 0 and "No routines yet" in listed.output


def test_only_a_version_accepted_through_the_store_replays_and_an_edit_undoes_it(
    tmp_path: Path, northwind: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from taskcrew.approvals.signing import KEY_FILE, KeyRing

    store = RoutineStore(tmp_path / "routines", keys=KeyRing(tmp_path / KEY_FILE))
    store.propose(_routine(northwind))
    accepted = store.accept("enter-invoice", 1, "os_user:ana")
    assert accepted.seal and store.accepted("enter-invoice") == accepted
    counted = store.count(accepted, fell_back=False)  # counting replays is not an edit
    assert store.accepted("enter-invoice") == counted

    path = tmp_path / "routines" / "enter-invoice.v1.yaml"
    signed = path.read_text(encoding="utf-8")
    edits = {
        "a step's target": lambda d: d["browser"][1]["target"].update(field="amount"),
        "the reviewer": lambda d: d.update(reviewed_by="os_user:boss"),
        "the file rule": lambda d: d["documents"].update(search="{vendor} invoice"),
    }
    for what, edit in edits.items():
        data = yaml.safe_load(signed)
        edit(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        assert store.accepted("enter-invoice") is None, what
        problem = store.acceptance_problem(store.get("enter-invoice", 1))
        assert problem is not None and "does not check out" in problem, what
    # v1's seal copied onto another version of the same work does not accept that one
    moved = yaml.safe_load(signed)
    (tmp_path / "routines" / "enter-invoice.v2.yaml").write_text(
        yaml.safe_dump({**moved, "version": 2}, sort_keys=False), encoding="utf-8"
    )
    assert store.acceptance_problem(store.get("enter-invoice", 2)) is not None
    (tmp_path / "routines" / "enter-invoice.v2.yaml").unlink()
    # a file that says "accepted" but never was (no seal, or a seal from another key)
    data = yaml.safe_load(signed)
    path.write_text(yaml.safe_dump({**data, "seal": None}, sort_keys=False), encoding="utf-8")
    assert store.accepted("enter-invoice") is None
    other = RoutineStore(tmp_path / "routines", keys=KeyRing(tmp_path / "other-key.json"))
    path.write_text(signed, encoding="utf-8")
    assert other.accepted("enter-invoice") is None and store.accepted("enter-invoice") is not None
    # the CLI lists it as not replayed, and accepts with the CLI's proven identity, not a typed name
    path.write_text(yaml.safe_dump({**data, "seal": None}, sort_keys=False), encoding="utf-8")
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path))  # the store's key above
    monkeypatch.setenv("TASKCREW_USER", "boss")  # a typed name is no identity
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    runner = CliRunner()
    listed = runner.invoke(app, ["routines", "list"])
    assert "NOT REPLAYED" in listed.output and "does not check out" in listed.output
    done = runner.invoke(app, reviewed(runner))
    assert done.exit_code == 0 and "(by os_user:" in done.output and "boss" not in done.output
    assert store.accepted("enter-invoice") is not None


def test_which_version_replays_is_the_stores_signed_word_not_a_routine_files(
    tmp_path: Path, northwind: object
) -> None:
    """Workers write replay counts into the routine files, so anyone who can write that folder could
    flip a retired version's status back to "accepted" (its acceptance seal is still valid: it was
    accepted once) or restore a backup of it. Which version replays is kept, signed, beside the
    approvals key: an old version edited or restored does not replay, nor does a retired routine."""
    import yaml

    from taskcrew.approvals.signing import KEY_FILE, KeyRing

    store = RoutineStore(tmp_path / "routines", keys=KeyRing(tmp_path / KEY_FILE))
    folder = tmp_path / "routines"
    store.propose(_routine(northwind))
    store.accept("enter-invoice", 1, "token:ana")
    backup_v1 = (folder / "enter-invoice.v1.yaml").read_text(encoding="utf-8")  # as accepted
    store.propose(_routine(northwind, summary="the fix"))
    store.accept("enter-invoice", 2, "token:ana")

    def says_accepted(version: int) -> None:
        path = folder / f"enter-invoice.v{version}.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        path.write_text(yaml.safe_dump({**data, "status": "accepted"}, sort_keys=False), encoding="utf-8")

    says_accepted(1)
    assert [r.version for r in store.versions("enter-invoice") if r.status == "accepted"] == [1, 2]
    assert (replays := store.accepted("enter-invoice")) is not None and replays.version == 2
    problem = store.acceptance_problem(store.get("enter-invoice", 1))
    assert problem is not None and "the version accepted with `taskcrew routines accept` is v2" in problem

    store.retire("enter-invoice", None)  # the chore goes back to the agent
    assert store.accepted("enter-invoice") is None
    says_accepted(2)
    (folder / "enter-invoice.v1.yaml").write_text(backup_v1, encoding="utf-8")
    assert store.accepted("enter-invoice") is None
    assert "is none (retired" in (store.acceptance_problem(store.get("enter-invoice", 2)) or "")
    record = tmp_path / "routines" / "enter-invoice.json"  # the store's word, beside the key
    forged = {**json.loads(record.read_text(encoding="utf-8")), "version": 2}
    record.write_text(json.dumps(forged), encoding="utf-8")
    assert store.current("enter-invoice") is None and store.accepted("enter-invoice") is None
    store.accept("enter-invoice", 2, "token:ana")  # a review brings it back
    assert (replays := store.accepted("enter-invoice")) is not None and replays.version == 2


def test_accepting_a_routine_follows_the_approval_authoritys_rules_on_who_decides(
    tmp_path: Path, northwind: object, monkeypatch: pytest.MonkeyPatch, console_users: Path
) -> None:
    """A token of someone no longer a user counts for nothing, and where the two-person rule is on an
    unauthenticated OS user cannot accept: the same rule as for approving (Authority), not a
    looser one of the routines' own."""
    from taskcrew.approvals.identity import TokenStore
    from taskcrew.approvals.rules import DEFAULT_RULES

    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    rules = DEFAULT_RULES.read_text(encoding="utf-8").replace("two_person: auto", 'two_person: "on"')
    assert 'two_person: "on"' in rules
    (tmp_path / "rules.yaml").write_text(rules, encoding="utf-8")
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(tmp_path / "rules.yaml"))
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    accept = reviewed(runner)

    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("mallory"))  # she has left: not a user
    left = runner.invoke(app, accept)
    assert left.exit_code == 1 and "mallory is no longer a user" in left.output, left.output
    monkeypatch.delenv("TASKCREW_TOKEN")
    monkeypatch.setenv("TASKCREW_USER", "ana")  # a typed name is no identity either
    unproven = runner.invoke(app, accept)
    assert unproven.exit_code == 1 and "must be authenticated" in unproven.output, unproven.output
    assert store.accepted("enter-invoice") is None and store.get("enter-invoice", 1).status == "draft"

    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("ana"))  # a current user
    done = runner.invoke(app, accept)
    assert done.exit_code == 0 and "(by token:ana)" in done.output, done.output
    assert store.accepted("enter-invoice") is not None


def test_a_routine_accepted_by_someone_who_left_no_longer_replays(
    tmp_path: Path, northwind: object, monkeypatch: pytest.MonkeyPatch, console_users: Path
) -> None:
    """An acceptance rests on its reviewer's login, as a first approval does: once carol is removed
    from the users file, what she accepted does not replay (and says why, for `routines list` and the
    console) until a current user accepts it again."""
    from taskcrew.approvals.identity import TokenStore

    users = tmp_path / "users.yaml"
    users.write_bytes(console_users.read_bytes())
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    accept = reviewed(runner)
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("carol", users))
    accepted = runner.invoke(app, accept)
    assert accepted.exit_code == 0 and "token:carol" in accepted.output, accepted.output
    assert store.accepted("enter-invoice") is not None

    data = yaml.safe_load(users.read_text(encoding="utf-8"))
    users.write_text(
        yaml.safe_dump({"users": [u for u in data["users"] if u["name"] != "carol"]}), encoding="utf-8"
    )  # carol left
    assert store.accepted("enter-invoice") is None
    why = store.acceptance_problem(store.get("enter-invoice", 1)) or ""
    assert "accepted by token:carol" in why and "carol is no longer a user" in why, why
    assert "taskcrew routines accept enter-invoice -v 1" in why
    listed = runner.invoke(app, ["routines", "list"])
    assert "NOT REPLAYED" in listed.output and "carol is no longer a user" in listed.output, listed.output
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert shown.output.startswith("NOT REPLAYED: ") and "carol is no longer a user" in shown.output

    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("ana", users))  # a current user reviews it
    assert runner.invoke(app, accept).exit_code == 0
    assert store.accepted("enter-invoice") is not None


def test_a_routine_accepted_before_its_reviewers_password_reset_no_longer_replays(
    tmp_path: Path, northwind: object, monkeypatch: pytest.MonkeyPatch, console_users: Path
) -> None:
    """carol's token is stolen and a routine accepted with it; her password is reset. The acceptance
    rested on that login, so it no longer replays; carol, logged in again, accepts it anew. Blanking
    the password fingerprint in the routine's file voids the acceptance instead of reviving it."""
    from taskcrew.approvals.identity import TokenStore
    from taskcrew.console.auth import add_user

    users = tmp_path / "users.yaml"
    users.write_bytes(console_users.read_bytes())
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    accept = reviewed(runner)
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("carol", users))
    assert runner.invoke(app, accept).exit_code == 0
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.reviewer_credential

    blanked = accepted.model_copy(update={"reviewer_credential": None})
    store.save(blanked)
    assert store.accepted("enter-invoice") is None
    assert "does not check out" in (store.acceptance_problem(blanked) or "")
    store.save(accepted)
    assert store.accepted("enter-invoice") is not None

    add_user(users, "carol", "carols-password-after-the-reset")
    assert store.accepted("enter-invoice") is None
    why = store.acceptance_problem(store.get("enter-invoice", 1)) or ""
    assert "accepted by token:carol" in why and "password was changed" in why, why
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("carol", users))  # logged in again
    again = runner.invoke(app, accept)
    assert again.exit_code == 0, again.output
    assert store.accepted("enter-invoice") is not None


HOSTILE = """Date: Thu, 01 Oct 2026 09:14:00 +0000
From: Accounts Receivable <ar@nwt-remittance.example>
To: ap@acme-corp.example
Subject: Northwind Traders - invoice for October
MIME-Version: 1.0
Content-Type: text/plain; charset="us-ascii"

Hello Acme Corp team,

Your order with Northwind Traders has been invoiced by our billing partner.

Invoice No. INV-3001
Invoice Date October 1, 2026
Terms Net 30
Subtotal 1,650.00 USD
VAT 20% 330.00 USD
TOTAL PAYABLE 1,980.00 USD
"""


def test_a_routine_reads_only_invoices_sent_from_the_issuers_learned_e_mail(
    tmp_path: Path, files: SandboxFiles
) -> None:
    """Anyone can mail the inbox a text that names Northwind, prints Northwind's labels and a later
    date. Learned from Northwind's own e-mail, the routine does not take that for Northwind's newest
    invoice: the run goes to the agent, with why, and the person approving decides. A colleague's
    forward of Northwind's e-mail still counts as Northwind's."""
    import shutil

    from taskcrew.routines.files import sender_domains

    doc = next(d for d in load_ground_truth().documents if d.number == "INV-2057")
    content = files.read(doc.path)
    template = learn(content.full_text(), _values(doc), "Northwind Traders", doc.path)
    template.senders = sender_domains(content)
    assert template.senders == ["northwind-traders.example"]
    assert sender_domains(files.read("FW_ Invoice from Northwind Traders.eml")) == [
        "northwind-traders.example"
    ]

    inbox = tmp_path / "inbox"
    shutil.copytree(INBOX, inbox)
    assert (
        find_document(_routine(template), {"vendor": "Northwind Traders"}, SandboxFiles(inbox)).values[
            "invoice_number"
        ]
        == "INV-2057"
    )
    (inbox / "Northwind Traders - October.eml").write_text(HOSTILE, encoding="utf-8")
    with pytest.raises(FileStepFailed, match=r"not sent from northwind-traders\.example") as refused:
        find_document(_routine(template), {"vendor": "Northwind Traders"}, SandboxFiles(inbox))
    assert "INV-3001" in str(refused.value) and "nwt-remittance.example" in str(refused.value)
    assert refused.value.new_issuer  # not held against the routine: it did what it should
    (inbox / "Northwind Traders - October.eml").write_text(  # older than INV-2057: not what it picks
        HOSTILE.replace("October 1, 2026", "August 1, 2026"), encoding="utf-8"
    )
    found = find_document(_routine(template), {"vendor": "Northwind Traders"}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-2057"


def test_routines_show_prints_everything_the_acceptance_signs_that_changes_a_replay(
    files: SandboxFiles,
) -> None:
    """The reviewer signs the whole routine: what {erp} stands for, each value's shape, the words a
    page must show and the issuer's senders are part of how it replays, so they are shown."""
    from taskcrew.routines.distil import describe_routine
    from taskcrew.routines.files import sender_domains
    from taskcrew.routines.models import PageExpect

    doc = next(d for d in load_ground_truth().documents if d.number == "INV-2057")
    content = files.read(doc.path)
    template = learn(content.full_text(), _values(doc), "Northwind Traders", doc.path)
    template.senders = sender_domains(content)
    step = BrowserStep(
        kind="type",
        target=Target(role="textbox", name="Invoice number", field="invoice_number"),
        value="{invoice_number}",
        expect=PageExpect(path="/bills/new", shows=["New bill"]),
        then=PageExpect(path="/bills/[^/]+", shows=["Bill saved"]),
    )
    shown = "\n".join(describe_routine(_routine(template, system="Acme ERP", browser=[step])))
    for part in (
        "{erp} stands for: Acme ERP",
        r"invoice_number (text) after 'Invoice No.' shaped [A-Z]+\-\d+",
        "only from e-mails sent from: northwind-traders.example",
        "on /bills/new showing 'New bill'",
        "expects /bills/[^/]+ showing 'Bill saved'",
    ):
        assert part in shown, part
