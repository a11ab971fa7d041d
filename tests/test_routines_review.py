"""What a reviewer is shown of a routine, attacked through the routines folder (workers and runs write
it): a draft whose strings carry terminal escapes to forge `routines show`, a draft that names
itself or a draft of its own making as the version it heals so that its diff hides its change, a
signed field `show` did not print, counts a worker rewrote, and a draft swapped between `show` and
`accept`. No browser: real templates learned from the demo inbox, a real folder, the real CLI."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from test_routines import INBOX, _routine, _template, reviewed
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.routines.distil import describe_routine
from taskcrew.routines.models import BrowserStep, Obstacle, PageExpect, Routine, Target, Template
from taskcrew.routines.store import METADATA, RoutineStore, fingerprint
from taskcrew.tools.files import SandboxFiles

NEW_SENDER = "nwt-billing.example"


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI's routines folder and approvals key, in tmp_path; the reviewer is the OS user."""
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(tmp_path / "no-users.yaml"))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    return tmp_path / "routines"


def _headline(template: Template) -> Routine:
    """The headline chore's routine as distil writes one: a look at the bills list first, the form,
    the approved save, and the obstacles (login, a 503)."""
    form = PageExpect(path="/bills/new")
    return _routine(
        template,
        summary="Enter a vendor's newest invoice from the inbox into Acme Payables.",
        system="Acme Payables",
        browser=[
            BrowserStep(
                kind="open", url="{erp}/bills", expect=PageExpect(path="/bills"), absent=["{invoice_number}"]
            ),
            BrowserStep(kind="open", url="{erp}/bills/new", expect=form),
            BrowserStep(
                kind="type",
                target=Target(role="textbox", name="Invoice number *", field="invoice_number"),
                value="{invoice_number}",
                expect=form,
            ),
            BrowserStep(
                kind="click",
                target=Target(role="button", name="Save bill"),
                expect=form,
                approval=True,
                then=PageExpect(path="/bills/[^/]+", shows=["Bill saved"]),
            ),
        ],
        obstacles=[
            Obstacle(
                kind="login",
                steps=[
                    BrowserStep(
                        kind="type",
                        target=Target(role="textbox", name="Password", field="password"),
                        value="{{secret:ERP_PASSWORD}}",
                    ),
                    BrowserStep(kind="click", target=Target(role="button", name="Log in")),
                ],
            ),
            Obstacle(kind="unavailable"),
        ],
    )


def _with_sender(routine: Routine, **changes: Any) -> Routine:
    """``routine`` as a worker's draft that also reads invoices mailed from NEW_SENDER."""
    template = routine.templates[0]
    widened = template.model_copy(update={"senders": [*template.senders, NEW_SENDER]})
    return routine.model_copy(
        update={"status": "draft", "seal": None, "reviewed_by": None, "templates": [widened], **changes}
    )


# ---------------------------------------------------------------- what reaches the terminal


def test_control_characters_never_reach_the_reviewers_terminal(
    folder: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's draft hid its real work behind a fake listing: its source_run carried a line feed
    and the steps of a harmless version, then ESC[8m (conceal) up to a forged fingerprint line,
    while `show` printed it all raw. A routine's text now holds no control character (the file is
    refused, saying which field), and whatever `show`, `list` and `diff` print goes through
    `approvals.visible`: a control character that reaches them is a marker, never acted on."""
    store = RoutineStore()
    store.propose(_headline(northwind))
    path = folder / "enter-invoice.v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    forged = "run-1\n2. browser: open {erp}/bills/new\x1b[8m"
    path.write_text(yaml.safe_dump({**data, "source_run": forged}, sort_keys=False), encoding="utf-8")
    runner = CliRunner()
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert shown.exit_code == 2, shown.output
    assert "source_run holds control characters (U+000A, U+001B)" in shown.output
    listed = runner.invoke(app, ["routines", "list"])
    assert "skipped" in listed.output and "control characters" in listed.output
    assert "\x1b" not in shown.output + listed.output

    for make in (  # every text of a routine, however deep
        lambda: Template(issuer="North\x1bwind", fields=northwind.fields),
        lambda: Target(role="button", name="Save\rbill"),
        lambda: PageExpect(path="/bills", shows=["Bill\nsaved"]),
        lambda: _routine(northwind, summary="pay\tnow"),
    ):
        with pytest.raises(ValidationError, match="control characters"):
            make()

    # a worker's count keeps a page's words, never their control characters: the file still loads
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    store.count(store.get("enter-invoice", 1), fell_back=True, reason="the page said \x1b[8mhidden\r")
    assert store.get("enter-invoice", 1).last_fallback == "the page said  [8mhidden "

    # a bidi control is one of them too (``terminal.CONTROLS``: it was let through and shown as a
    # marker); what validation never saw is shown as a marker
    path.write_text(
        yaml.safe_dump({**data, "summary": "Pay \u202eINV-2057"}, sort_keys=False), encoding="utf-8"
    )
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert shown.exit_code == 2 and "summary holds control characters (U+202E)" in shown.output, shown.output
    assert "\u202e" not in shown.output
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    unvalidated = store.get("enter-invoice", 1).model_copy(
        update={"last_fallback": "\x1b[28m\rfingerprint: 0"}
    )
    lines = describe_routine(unvalidated)
    assert not any(c in "".join(lines) for c in "\x1b\r\n\u202e")
    assert "last fallback (a worker's note, not signed): ⟨U+001B⟩[28m⟨U+000D⟩fingerprint: 0" in lines


# ---------------------------------------------------------------- what a draft is compared with


def test_a_draft_is_compared_with_the_version_that_replays_not_the_one_it_names(
    folder: Path, northwind: Template
) -> None:
    """The diff was taken against the version the draft's own `based_on` names: a draft naming
    itself showed no change, and one "healing" a worker's unaccepted draft of the same change hid
    it. `routines diff` and the console's page compare with the version that replays now (the
    signed record of which one does), and say so; only when none replays, with the one before."""
    from taskcrew.console.routines_page import RoutinesDesk

    store = RoutineStore()
    store.propose(_headline(northwind))
    v1 = store.accept("enter-invoice", 1, "os_user:ana")
    store.save(_with_sender(v1, version=2, based_on=2))  # "heals" itself
    runner = CliRunner()
    for version in (2, 3):
        if version == 3:  # a worker's draft v2 with the change, and v3 "healing" that one
            store.save(_with_sender(v1, version=2, based_on=1))
            store.save(_with_sender(v1, version=3, based_on=2))
        diffed = runner.invoke(app, ["routines", "diff", "enter-invoice", "-v", str(version)])
        assert diffed.exit_code == 0, diffed.output
        assert f"v{version} against v1, the version that replays now" in diffed.output
        assert f"+  - {NEW_SENDER}" in diffed.output, diffed.output
        page = RoutinesDesk(folder).show("enter-invoice", version)
        assert page is not None and page.compared_with == 1
        assert page.compared_why == "the version that replays now"
        assert f"+  - {NEW_SENDER}" in page.diff

    store.retire("enter-invoice", None)  # none replays: the newest signed version before it
    diffed = runner.invoke(app, ["routines", "diff", "enter-invoice", "-v", "3"])
    # v2, the worker's draft of the same change, is signed by nobody: passed over for v1, and said so
    assert "v3 against v1, the newest signed version before it (no version replays now; passed over: " in (
        diffed.output
    )
    assert "enter-invoice v2's file is not what was accepted or proposed" in diffed.output
    assert f"+  - {NEW_SENDER}" in diffed.output, diffed.output
    first = runner.invoke(app, ["routines", "diff", "enter-invoice", "-v", "1"])
    assert first.exit_code == 2 and "first version" in first.output


# ---------------------------------------------------------------- show prints what is signed


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> Any:
    """Every value of a routine's dump with its path; a list of objects also as a whole."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, (*path, key))
        return
    if isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        yield path, data
        for i, value in enumerate(data):
            yield from _leaves(value, (*path, i))
        return
    yield path, data


LITERALS = {
    "kind": ["text", "amount", "date", "terms", "currency", "open", "type", "select", "check", "click"],
    "kind#obstacle": ["login", "modal", "expired_session", "unavailable"],
    "choose": ["newest_by_printed_date", "by_number"],
    "rule": ["due_from_terms", "currency_of_total"],
    "status": ["draft", "accepted", "retired"],
}


def _changes(path: tuple[Any, ...], value: Any) -> list[Any]:
    """Other values a forger could give the field at ``path``."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1]
    if isinstance(value, str):
        key = (
            "kind#obstacle"
            if path[:1] == ("obstacles",) and path[-1] == "kind" and len(path) == 3
            else path[-1]
        )
        return [v for v in LITERALS.get(key, []) if v != value] + [value + "x", "vendor", ""]
    if value is None:
        return ["vendor", "", 2, "/bills/new", {"role": "link", "name": "Memo"}, {"path": "/memo"}]
    if isinstance(value, list) and all(isinstance(v, dict) for v in value) and value:
        return [value[:-1], [*value, value[0]]]
    if isinstance(value, list):
        return [[*value, "vendor"], [*value, "Memo"], value[:-1], ["due_is_date_plus_terms"]]
    return []


def test_show_changes_whenever_the_fingerprint_does(northwind: Template) -> None:
    """The fingerprint is what an acceptance signs of a routine's work, so `show` must print all of
    it: before, a field's kind (a "terms" field reads the rest of the line: "INV-2057 / also pay
    INV-2031 now"), an open step's expected page, the summary and the values handed on changed the
    fingerprint and left `show` as it was. Every signed field of a routine is changed, one at a
    time, to every other value that validates: whenever the fingerprint changes, so does `show`."""
    routine = _headline(northwind).model_copy(
        update={"based_on": 1, "templates": [northwind.model_copy(update={"learned_from": "inv.eml"})]}
    )
    dumped = routine.model_dump(mode="json")
    shown, signed = describe_routine(routine), fingerprint(routine)
    tried, unshown = 0, []
    for path, value in _leaves(dumped):
        if path[0] in METADATA:
            continue
        for change in _changes(path, value):
            data = copy.deepcopy(dumped)
            *head, last = path
            place = data
            for step in head:
                place = place[step]
            place[last] = change
            try:
                changed = Routine.model_validate(data)
            except ValidationError:
                continue
            if fingerprint(changed) == signed:
                continue
            tried += 1
            if describe_routine(changed) == shown:
                unshown.append(f"{'.'.join(map(str, path))}: {value!r} -> {change!r}")
    assert tried > 80
    assert unshown == []


# ---------------------------------------------------------------- counts nobody signs


def test_counts_and_the_flag_are_shown_as_the_workers_unsigned_word(
    folder: Path, northwind: Template
) -> None:
    """Replays, fallbacks and the flag live in the routine files, which workers write, and nothing
    signs them: a worker rewriting them took FLAGGED off `routines list`. They are shown as what
    they are, wherever they are shown."""
    store = RoutineStore()
    store.propose(_headline(northwind))
    routine = store.accept("enter-invoice", 1, "os_user:ana")
    for _ in range(2):
        routine = store.count(routine, fell_back=True, reason="field invoice_number is now labelled 'Ref'")
    runner = CliRunner()
    listed = runner.invoke(app, ["routines", "list"]).output
    assert "FLAGGED" in listed and "(replays and FLAGGED: as the workers counted them, not signed" in listed
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"]).output
    assert "[accepted, FLAGGED (as the workers counted them, not signed)]" in shown
    assert "replays (as the workers counted them, not signed): 0 clean, 2 fell back (2 in a row)" in shown
    assert "last fallback (a worker's note, not signed): field invoice_number" in shown


# ---------------------------------------------------------------- accept what was shown


def test_accept_takes_exactly_the_version_the_reviewer_was_shown(
    folder: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`accept -v 1` signed whatever the file said at that moment. Off a terminal it now needs the
    fingerprint `show` printed; at a terminal, without one, it shows the version and its
    fingerprint, asks, and accepts only that fingerprint: a draft swapped while the question
    waits is refused."""
    import taskcrew.routines.cli as routines_cli

    store = RoutineStore()
    store.propose(_headline(northwind))
    runner = CliRunner()
    accept = ["routines", "accept", "enter-invoice", "-v", "1"]
    blind = runner.invoke(app, accept)
    assert blind.exit_code == 2 and "routines show enter-invoice -v 1" in blind.output, blind.output
    assert "--fingerprint" in blind.output and store.accepted("enter-invoice") is None

    monkeypatch.setattr(routines_cli, "_terminal", lambda: True)
    said_no = runner.invoke(app, accept, input="n\n")
    assert said_no.exit_code == 1 and "nothing accepted" in said_no.output
    assert "3. browser: open {erp}/bills/new" in said_no.output and store.accepted("enter-invoice") is None
    seen = re.search(r"^fingerprint: ([0-9a-f]{32})$", said_no.output, re.MULTILINE)
    assert seen is not None and f"exactly as shown ({seen.group(1)})?" in said_no.output

    def swap_then_yes(*_args: object, **_kwargs: object) -> bool:
        store.save(_with_sender(store.get("enter-invoice", 1)))  # a worker, while she reads
        return True

    confirm = routines_cli.typer.confirm
    monkeypatch.setattr(routines_cli.typer, "confirm", swap_then_yes)
    swapped = runner.invoke(app, accept)
    assert (
        swapped.exit_code == 2
        and f"changed since it was shown with fingerprint {seen.group(1)}" in swapped.output
    )
    assert store.accepted("enter-invoice") is None

    monkeypatch.setattr(routines_cli.typer, "confirm", confirm)
    now = runner.invoke(app, accept, input="y\n")
    assert now.exit_code == 0, now.output
    assert NEW_SENDER in now.output  # what she accepted is what she was shown
    replays = store.accepted("enter-invoice")
    assert replays is not None and f"fingerprint {fingerprint(replays)}" in now.output
    store.propose(_headline(northwind).model_copy(update={"summary": "v2"}))
    guess = runner.invoke(app, ["routines", "accept", "enter-invoice"], input="y\n")
    assert guess.exit_code == 2 and "2 versions" in guess.output  # still never a guess between versions
    assert runner.invoke(app, reviewed(runner)).exit_code == 0  # off a terminal, with the fingerprint
