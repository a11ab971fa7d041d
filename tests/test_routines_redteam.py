"""Routines attacked as an adversary would: a vendor named by a word another vendor's name shares,
parameter values that carry URL syntax or placeholders, acceptance records forged or moved between
routines, a reviewer whose unproven acceptance predates the two-person rule, and replays and
reviews of one routine at the same time. No browser: each attack is met where the routine decides."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml
from test_routines import INBOX, _routine, reviewed

from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import FieldRule, Template, named_like
from taskcrew.tools.files import SandboxFiles


@pytest.fixture(scope="module")
def files() -> SandboxFiles:
    return SandboxFiles(INBOX)


def _issuer(name: str) -> Template:
    """A template of ``name`` as a reviewer would see one (which issuer it reads is what counts here)."""
    return Template(issuer=name, fields=[FieldRule(name="invoice_number", kind="text", anchor="Invoice No.")])


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _issuer("Northwind Traders")


# ---------------------------------------------------------------- which vendor a task names


def test_a_word_another_vendors_name_shares_does_not_name_that_vendor(
    files: SandboxFiles, northwind: Template
) -> None:
    """A task for "Traders" or "Industries" is not Northwind's or Vandelay's chore: before, every
    word of one name in the other was enough, so the routine read Northwind's newest invoice for
    vendor="Traders" (and a drop-down offering one "...Traders" chose it). A name that differs in
    one letter outside ASCII ("Möller" for "Müller") was the same name, since only [a-z0-9] counted
    as letters. The same name still names it, in any case and spacing, give or take a legal form;
    a word more or less ("Northwind", "Northwind Traders Logistics") names another company."""
    for one, other in [
        ("Traders", "Northwind Traders"),
        ("Industries", "Vandelay Industries"),
        ("Cloud Services", "Hooli Cloud Services"),
        ("Corp", "Globex Corp"),
        ("Möller Industrietechnik GmbH", "Müller Industrietechnik GmbH"),
        ("Mueller Industrietechnik GmbH", "Müller Industrietechnik GmbH"),
        ("Traders Northwind", "Northwind Traders"),
        ("Northwind", "Northwind Traders"),  # a word less or more is another company's name
        ("Northwind Traders Logistics", "Northwind Traders"),
    ]:
        assert not named_like(one, other), (one, other)
        assert not named_like(other, one), (other, one)
    for one, other in [
        ("Bharat Components", "Bharat Components Pvt. Ltd."),
        ("Globex", "Globex Corp"),
        ("SOYLENT FOODS", "Soylent Foods"),
        ("Northwind Traders Ltd", "Northwind Traders"),
        ("müller industrietechnik", "Müller Industrietechnik GmbH"),
    ]:
        assert named_like(one, other) and named_like(other, one), (one, other)

    routine = _routine(northwind, templates=[northwind, _issuer("Vandelay Industries")])
    for vendor in ("Traders", "Industries"):
        assert routine.template_for(vendor) is None
        with pytest.raises(FileStepFailed, match="no extraction template") as fell:
            find_document(routine, {"vendor": vendor}, files)
        assert fell.value.new_issuer  # the agent takes the chore: a person sees which vendor it is
    assert routine.template_for("NORTHWIND  traders") is northwind
    assert routine.template_for("northwind") is None  # a word less: maybe another Northwind
    assert routine.template_for("Vandelay Industries Inc.") is routine.templates[1]


# ---------------------------------------------------------------- values carrying syntax


def test_a_value_is_filled_in_once_and_an_address_keeps_it_one_value(northwind: Template) -> None:
    """A parameter comes from the task's text, a value from a document: neither is read again for
    placeholders (before, vendor="Initech {amount}" was typed with the invoice's amount in it, and a
    parameter named like the system replaced its address), and in an address each is
    percent-encoded, so "AT&T" is one query value (before: q=AT, and a stray parameter T) and
    "x/../../_debug" does not leave the path the reviewer signed."""
    from taskcrew.routines.distil import _url_template
    from taskcrew.routines.replay import Replayer

    routine = _routine(northwind, params=["vendor", "erp"])
    replayer = Replayer(routine, {"vendor": "Initech {amount}", "erp": "http://evil.example"})
    assert replayer._fill("{vendor}", {"amount": "1284.50"}, "http://erp") == "Initech {amount}"
    assert replayer._fill("{erp}/bills/new", {}, "http://erp") == "http://erp/bills/new"

    for vendor, query in [
        ("AT&T", "AT%26T"),
        ("x/../../_debug", "x%2F..%2F..%2F_debug"),
        ("A #1", "A%20%231"),
    ]:
        address = Replayer(_routine(northwind), {"vendor": vendor})._fill(
            "{erp}/bills?q={vendor}", {}, "http://erp", url=True
        )
        assert address == f"http://erp/bills?q={query}", vendor
        path = Replayer(_routine(northwind), {"vendor": vendor})._fill(
            "{erp}/vendors/{vendor}", {}, "http://erp", url=True
        )
        assert path.count("/") == 4 and path.endswith(query), vendor

    # learning: a value the run's address carried encoded (as browsers send it) is still the
    # parameter, not a literal that would make the replay for Initech look at AT&T's bills
    assert (
        _url_template("http://erp/bills?vendor=AT%26T&status=unpaid", "http://erp", {"vendor": "AT&T"}, {})
        == "{erp}/bills?vendor={vendor}&status=unpaid"
    )
    assert (
        _url_template(
            "http://erp/bills?q=Northwind+Traders", "http://erp", {"vendor": "Northwind Traders"}, {}
        )
        == "{erp}/bills?q={vendor}"
    )
    assert _url_template("http://erp/bills?q=INV-2057x", "http://erp", {}, {"n": "INV-2057"}) == (
        "{erp}/bills?q=INV-2057x"  # a value is a whole query value, not a part of one
    )


# ---------------------------------------------------------------- one routine, several processes


def test_replays_and_reviews_of_one_routine_at_the_same_time_lose_nothing(
    tmp_path: Path, northwind: Template
) -> None:
    """Two replays of one routine finish at once (two workers), and a healing run proposes while
    another does: each count is read, changed and written back, so without one lock over the folder
    a count written from an older read erased the other's (a fallback lost is a flag that never
    shows), and two proposals took the same version number, the second overwriting the draft a
    reviewer may already have read."""
    from taskcrew.approvals.signing import KEY_FILE, KeyRing
    from taskcrew.routines.store import RoutineStore

    keys = tmp_path / KEY_FILE
    RoutineStore(tmp_path / "routines", keys=KeyRing(keys)).propose(_routine(northwind))
    RoutineStore(tmp_path / "routines", keys=KeyRing(keys)).accept("enter-invoice", 1, "token:ana")
    each, workers = 15, 4
    start = threading.Barrier(workers)
    errors: list[BaseException] = []

    def replays(fell_back: bool) -> None:
        store = RoutineStore(tmp_path / "routines", keys=KeyRing(keys))  # one per worker, as processes have
        try:
            start.wait()
            for _ in range(each):
                routine = store.get("enter-invoice", 1)
                store.count(routine, fell_back=fell_back, reason="x")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=replays, args=(i % 2 == 0,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    store = RoutineStore(tmp_path / "routines", keys=KeyRing(keys))
    counted = store.get("enter-invoice", 1)
    assert (counted.successes, counted.fallbacks) == (each * workers // 2, each * workers // 2)
    assert store.accepted("enter-invoice") is not None  # counting is not an edit, however many at once

    proposals = 6
    start = threading.Barrier(proposals)

    def proposes(i: int) -> None:
        store = RoutineStore(tmp_path / "routines", keys=KeyRing(keys))
        try:
            start.wait()
            store.propose(_routine(northwind, summary=f"healed by run {i}"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=proposes, args=(i,)) for i in range(proposals)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    drafts = [r for r in store.versions("enter-invoice") if r.status == "draft"]
    assert sorted(r.summary for r in drafts) == sorted(f"healed by run {i}" for i in range(proposals))
    assert sorted(r.version for r in drafts) == list(range(2, 2 + proposals))


# ---------------------------------------------------------------- who vouches for a routine


def test_an_unproven_acceptance_does_not_outlast_the_two_person_rule(
    tmp_path: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one user the two-person rule is off and ana accepts as her OS user, taken on her word.
    Once a second person is added the rule is on, and `routines accept` refuses an unproven
    reviewer; her earlier acceptance must not go on replaying either: a routine's reviewer is
    judged by the authority's rule when it replays, as a job's unproven submitter is when its
    approval is decided, not by the rule that held when she accepted. Logged in, she accepts it anew."""
    from typer.testing import CliRunner

    from taskcrew.approvals.identity import TokenStore
    from taskcrew.cli import app
    from taskcrew.console.auth import add_user
    from taskcrew.routines.store import RoutineStore

    users = tmp_path / "users.yaml"
    add_user(users, "ana", "ana-secret-1")
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    accept = reviewed(runner)
    alone = runner.invoke(app, accept)
    assert alone.exit_code == 0 and "(by os_user:" in alone.output, alone.output
    assert store.accepted("enter-invoice") is not None

    add_user(users, "bob", "bob-secret-1")  # two people: the two-person rule is on ("auto")
    refused = runner.invoke(app, accept)
    assert refused.exit_code == 1 and "must be authenticated" in refused.output, refused.output
    assert store.accepted("enter-invoice") is None
    why = store.acceptance_problem(store.get("enter-invoice", 1)) or ""
    assert "accepted by os_user:" in why and "must be authenticated" in why, why
    listed = runner.invoke(app, ["routines", "list"])
    assert "NOT REPLAYED" in listed.output and "must be authenticated" in listed.output, listed.output

    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("ana", users))
    again = runner.invoke(app, accept)
    assert again.exit_code == 0 and "(by token:ana)" in again.output, again.output
    assert store.accepted("enter-invoice") is not None


def test_an_acceptance_is_not_moved_edited_or_kept_past_its_key(tmp_path: Path, northwind: Template) -> None:
    """What held: the acceptance seal and the record of which version replays belong to one routine
    and one version, and cover every part of the work a replay uses. A seal or record copied from
    another routine, an edit of any part the reviewer signed, and a key retired since do not replay."""
    from taskcrew.approvals.signing import KEY_FILE, KeyRing
    from taskcrew.routines.models import BrowserStep, Obstacle, PageExpect, Target
    from taskcrew.routines.store import RoutineStore

    folder, keys = tmp_path / "routines", KeyRing(tmp_path / "approvals" / KEY_FILE)
    store = RoutineStore(folder, keys=keys)
    login = Obstacle(
        kind="login",
        steps=[
            BrowserStep(
                kind="type", target=Target(role="textbox", field="password"), value="{{secret:ERP_PASSWORD}}"
            )
        ],
    )
    submit = BrowserStep(
        kind="click",
        target=Target(role="button", name="Save bill"),
        approval=True,
        then=PageExpect(path="/bills/[^/]+"),
    )
    work = _routine(
        northwind,
        system="Acme Payables",
        browser=[*_routine(northwind).browser, submit],
        obstacles=[login],
    )
    store.propose(work)
    store.propose(work.model_copy(update={"name": "enter-invoice-eu"}))
    store.accept("enter-invoice", 1, "token:ana")
    assert store.accepted("enter-invoice") is not None and store.accepted("enter-invoice-eu") is None

    # the seal and the current-version record of enter-invoice copied to enter-invoice-eu
    signed = yaml.safe_load((folder / "enter-invoice.v1.yaml").read_text(encoding="utf-8"))
    (folder / "enter-invoice-eu.v1.yaml").write_text(
        yaml.safe_dump({**signed, "name": "enter-invoice-eu"}, sort_keys=False), encoding="utf-8"
    )
    record = json.loads(
        (tmp_path / "approvals" / "routines" / "enter-invoice.json").read_text(encoding="utf-8")
    )
    (tmp_path / "approvals" / "routines" / "enter-invoice-eu.json").write_text(
        json.dumps({**record, "name": "enter-invoice-eu"}), encoding="utf-8"
    )
    assert store.current("enter-invoice-eu") is None and store.accepted("enter-invoice-eu") is None

    path = folder / "enter-invoice.v1.yaml"
    edits = {
        "the system {erp} stands for": lambda d: d.update(system="Intranet"),
        "an issuer's senders": lambda d: d["templates"][0]["senders"].append("nwt-remittance.example"),
        "a field's anchor": lambda d: d["templates"][0]["fields"][0].update(anchor="Reference"),
        "a template's issuer": lambda d: d["templates"][0].update(issuer="Globex Corp"),
        "the page a submission must lead to": lambda d: d["browser"][-1]["then"].update(path=".*"),
        "a step's value": lambda d: d["browser"][1].update(value="{vendor}"),
        "the opened address": lambda d: d["browser"][0].update(url="{erp}/bills/new?amount=1"),
        "the sign-in's secret": lambda d: d["obstacles"][0]["steps"][0].update(value="{{secret:OTHER}}"),
        "an obstacle added": lambda d: d["obstacles"].append({"kind": "unavailable", "retries": 5}),
        "the version": lambda d: d.update(version=2),
        "the parameters": lambda d: d.update(params=["vendor", "amount"]),
        "the approval point dropped": lambda d: d["browser"][-1].update(approval=False),
        "a step added after the submission": lambda d: d["browser"].append(
            {"kind": "click", "target": {"role": "button", "name": "Delete"}}
        ),
    }
    for what, edit in edits.items():
        data = yaml.safe_load(yaml.safe_dump(signed))
        edit(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        assert store.accepted("enter-invoice") is None, what
    path.write_text(yaml.safe_dump(signed, sort_keys=False), encoding="utf-8")
    assert store.accepted("enter-invoice") is not None

    # a second file claiming to be v1, sorting before the reviewed one, with changed work: not replayed
    shadow = yaml.safe_load(yaml.safe_dump(signed))
    shadow["browser"][1]["value"] = "{vendor}"
    (folder / "enter-invoice.v01.yaml").write_text(yaml.safe_dump(shadow, sort_keys=False), encoding="utf-8")
    assert store.accepted("enter-invoice") is None
    (folder / "enter-invoice.v01.yaml").unlink()
    assert store.accepted("enter-invoice") is not None

    keys.rotate(retire_old=True)  # every earlier signature fails: the routine is reviewed again
    assert RoutineStore(folder, keys=KeyRing(keys.path)).accepted("enter-invoice") is None


def test_a_routine_replays_only_for_the_parameters_it_was_learned_with(northwind: Template) -> None:
    """A company's recipe gains an optional parameter (`--invoice INV-2031`, default the newest):
    the routine learned from a run without it picks the newest invoice, so replaying it for a task
    that names INV-2031 would enter another invoice than the one asked for (the person approving
    being the only one to notice). It goes to the agent, whose verified run teaches a version with
    the parameter. A parameter the routine needs that the task leaves out would be typed as
    "{vendor}": the agent takes that task too."""
    routine = _routine(northwind)
    assert routine.params == ["vendor"] and routine.documents.choose == "newest_by_printed_date"
    assert routine.params_problem({"vendor": "Northwind Traders"}) is None
    named = routine.params_problem({"vendor": "Northwind Traders", "invoice": "INV-2031"})
    assert named is not None and "gives invoice, which it was not learned with" in named
    left_out = routine.params_problem({})
    assert left_out is not None and "does not give vendor" in left_out


def test_accept_can_be_bound_to_the_version_the_reviewer_read(
    tmp_path: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The routines folder is written by workers and runs, so a draft can change between the
    reviewer's `show` and her `accept`, and `accept -v N` signs whatever the file then says. `show`
    prints the fingerprint of what it showed, and `accept --fingerprint` refuses a version that no
    longer matches it; `accept` always says the fingerprint it signed."""
    from typer.testing import CliRunner

    from taskcrew.cli import app
    from taskcrew.routines.store import RoutineStore

    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(tmp_path / "no-users.yaml"))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert shown.exit_code == 0, shown.output
    fingerprint = next(line for line in shown.output.splitlines() if line.startswith("fingerprint: "))
    fingerprint = fingerprint.split()[1]

    path = tmp_path / "routines" / "enter-invoice.v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["templates"][0]["senders"] = ["nwt-remittance.example"]  # swapped after the review
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    swapped = runner.invoke(
        app, ["routines", "accept", "enter-invoice", "-v", "1", "--fingerprint", fingerprint]
    )
    assert swapped.exit_code == 2 and "changed since" in swapped.output, swapped.output
    assert store.accepted("enter-invoice") is None and store.get("enter-invoice", 1).status == "draft"

    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])  # reviewed again
    assert "nwt-remittance.example" in shown.output
    again = next(line for line in shown.output.splitlines() if line.startswith("fingerprint: ")).split()[1]
    assert again != fingerprint
    done = runner.invoke(app, ["routines", "accept", "enter-invoice", "-v", "1", "--fingerprint", again])
    assert done.exit_code == 0 and f"fingerprint {again}" in done.output, done.output
    assert store.accepted("enter-invoice") is not None
    counted = store.count(store.get("enter-invoice", 1), fell_back=False)  # counts change no fingerprint
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert f"fingerprint: {again}" in shown.output and counted.successes == 1
    from taskcrew.console.routines_page import RoutinesDesk

    on_the_console = RoutinesDesk(tmp_path / "routines").show("enter-invoice", 1)  # the same, read-only
    assert on_the_console is not None and any(
        f"fingerprint: {again}" in line for line in on_the_console.steps
    )
