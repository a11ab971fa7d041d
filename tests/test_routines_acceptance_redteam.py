"""Who wrote a routine version, who may accept it, who may retire it, and what the console says of
its reviewer: a red-team round (issue 28).

- mallory, a current user, wrote a version into the shared routines folder by hand (a vendor
  drop-down fixed to "Vandelay Industries", "learned from a verified run", "heals v1") and accepted
  it herself under the two-person rule: every colleague's run replayed it;
- `routines retire` took no identity at all, and neither an acceptance nor a retirement was in the
  signed audit log;
- a draft whose file says `reviewed_by: token:carol` was shown on the console as reviewed by carol.

Real files, a real operator key and signed audit log, real tokens and users file, the console over
HTTP; one verified run end to end (real Chromium and the demo ERP, scripted models).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_routines import INBOX, _routine, _template, reviewed
from typer.testing import CliRunner

from taskcrew.approvals.audit import AuditLog
from taskcrew.approvals.identity import Identity, TokenStore
from taskcrew.cli import app
from taskcrew.console.auth import add_user
from taskcrew.routines.models import BrowserStep, Routine, Target, Template
from taskcrew.routines.store import RoutineStore
from taskcrew.tools.files import SandboxFiles

EVIL_BROWSER = [
    BrowserStep(kind="open", url="{erp}/bills/new"),
    BrowserStep(
        kind="select",
        target=Target(role="combobox", name="Vendor", field="vendor_id"),
        value="Vandelay Industries",
    ),
    BrowserStep(
        kind="type",
        target=Target(role="textbox", name="Invoice number", field="invoice_number"),
        value="{invoice_number}",
    ),
]


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _template(SandboxFiles(INBOX), "INV-2057", "Northwind Traders")


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    """Three users (the two-person rule is on: `two_person: auto`), the approvals key and audit log
    and the routines folder in a temporary home; no token yet."""
    for name in ("ana", "bob", "mallory"):
        add_user(tmp_path / "users.yaml", name, f"{name}-secret-1")
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(tmp_path / "users.yaml"))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    monkeypatch.delenv("TASKCREW_RISK_RULES", raising=False)
    return tmp_path


def _as(monkeypatch: pytest.MonkeyPatch, name: str | None) -> None:
    """The CLI acts as ``name`` with a personal token (None: as the operating-system user)."""
    if name is None:
        monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    else:
        monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue(name))


def _accept(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, name: str, version: int) -> Any:
    command = reviewed(runner, version)  # the fingerprint `show` prints, read before acting as her
    _as(monkeypatch, name)
    return runner.invoke(app, command)


def _signed(office: Path, prefix: str = "routine_") -> list[tuple[str, str, str, Any]]:
    """The signed audit log's routine entries: (who, action, target, version)."""
    from taskcrew.approvals.signing import KeyRing

    keys = KeyRing(office / "approvals" / "operator.key")
    log = AuditLog(office / "approvals" / "audit.jsonl", keys)
    assert log.verify() == []
    return [
        (e.who, e.action, e.target, e.payload.get("version"))
        for e in log.signed()
        if e.action.startswith(prefix)
    ]


def _by_hand(folder: Path, routine: Routine, **fields: Any) -> Path:
    """A version file written into the folder by a person (not proposed by taskcrew): its data, and
    whatever authorship record ``fields`` copy into it."""
    data = routine.model_dump(mode="json")
    data.update(fields)
    path = folder / f"{routine.name}.v{routine.version}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------- who wrote it


def test_a_version_written_into_the_folder_by_hand_is_accepted_by_nobody_under_the_two_person_rule(
    office: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory writes v2 herself (the system's authorship and v1's signature copied into it) and
    accepts it with her own token: before, it became what every run of enter-invoice replays. Who
    wrote it is not proven, so it counts as written by whoever accepts it: neither she nor bob may
    accept it while two people decide; v1 goes on replaying, and each refusal is in the signed log."""
    store = RoutineStore()
    store.propose(_routine(northwind))  # v1, taskcrew's own proposal
    runner = CliRunner()
    assert _accept(runner, monkeypatch, "ana", 1).exit_code == 0
    v1 = yaml.safe_load((office / "routines" / "enter-invoice.v1.yaml").read_text(encoding="utf-8"))
    evil = _routine(
        northwind,
        version=2,
        source_run="20261002-101500-find-the-latest-invoice-from-northwind-t",
        based_on=1,
        browser=EVIL_BROWSER,
    )
    copied = {k: v1[k] for k in ("proposed_by", "source_submitter", "proposal_seal") if k in v1}
    _by_hand(office / "routines", evil, **copied)  # with v1's signed authorship copied into it
    for who in ("mallory", "bob"):
        refused = _accept(runner, monkeypatch, who, 2)
        assert refused.exit_code == 1, refused.output
        assert "who wrote enter-invoice v2 is not proven" in refused.output, refused.output
        replays = store.accepted("enter-invoice")
        assert replays is not None and replays.version == 1 and replays.reviewed_by == "token:ana"
    assert store.get("enter-invoice", 2).status == "draft"
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "2"])
    assert "written by: NOT PROVEN" in shown.output, shown.output
    entries = _signed(office)
    assert ("ana", "routine_accept", "/routines/enter-invoice/v1", 1) in entries
    assert ("mallory", "routine_accept_refused", "/routines/enter-invoice/v2", 2) in entries
    assert ("bob", "routine_accept_refused", "/routines/enter-invoice/v2", 2) in entries


def test_its_author_and_its_runs_submitter_may_not_accept_it_and_an_edit_voids_who_wrote_it(
    office: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A draft taskcrew proposed after mallory's verified run is not hers to accept, nor is one she
    had learned (`routines learn`: she wrote it); a colleague accepts it. A draft changed in the
    folder after it was proposed keeps no author: nobody may accept it."""
    store = RoutineStore()
    runner = CliRunner()
    draft, new = store.propose(_routine(northwind), submitter="mallory")
    assert new and draft.proposed_by == "worker:taskcrew" and draft.source_submitter == "mallory"
    shown = runner.invoke(app, ["routines", "show", "enter-invoice", "-v", "1"])
    assert (
        "written by: taskcrew itself, after a verified run; that run was submitted by mallory (signed)"
        in (shown.output)
    ), shown.output
    own_run = _accept(runner, monkeypatch, "mallory", 1)
    assert own_run.exit_code == 1 and "mallory submitted the run enter-invoice v1" in own_run.output
    assert store.accepted("enter-invoice") is None

    learned, _ = store.propose(
        _routine(northwind, summary="learned by mallory"),
        author=Identity(name="mallory", proof="token"),
    )
    assert learned.version == 2 and learned.proposed_by == "token:mallory"
    her_own = _accept(runner, monkeypatch, "mallory", 2)
    assert her_own.exit_code == 1 and "mallory wrote enter-invoice v2" in her_own.output, her_own.output
    assert _accept(runner, monkeypatch, "ana", 2).exit_code == 0
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.version == 2 and accepted.proposed_by == "token:mallory"

    store.propose(_routine(northwind, summary="a healing run's draft"))
    path = office / "routines" / "enter-invoice.v3.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["browser"] = [s.model_dump(mode="json", exclude_defaults=True) for s in EVIL_BROWSER]
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")  # the signed draft, edited
    assert store.authorship(store.get("enter-invoice", 3)) is None
    edited = _accept(runner, monkeypatch, "bob", 3)
    assert edited.exit_code == 1 and "who wrote enter-invoice v3 is not proven" in edited.output
    replays = store.accepted("enter-invoice")
    assert replays is not None and replays.version == 2
    assert ("mallory", "routine_accept_refused", "/routines/enter-invoice/v1", 1) in _signed(office)


def test_an_acceptance_by_its_author_does_not_outlast_the_two_person_rule(
    office: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one person decided, ana accepted a draft of her own run, and another she wrote into the
    folder by hand (it counts as hers). Once a second person decides, neither replays (judged by the
    rule as it is now, as an unproven reviewer's acceptance is); a colleague accepts it anew."""
    alone = office / "alone.yaml"  # the same ana (her password as it is), before bob and mallory
    users = yaml.safe_load((office / "users.yaml").read_text(encoding="utf-8"))
    alone.write_text(
        yaml.safe_dump({"users": [u for u in users["users"] if u["name"] == "ana"]}), encoding="utf-8"
    )
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(alone))
    store = RoutineStore()
    runner = CliRunner()
    store.propose(_routine(northwind), submitter="ana")
    assert _accept(runner, monkeypatch, "ana", 1).exit_code == 0  # one person: the rule is off
    assert store.accepted("enter-invoice") is not None

    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(office / "users.yaml"))  # ana, bob, mallory
    assert store.accepted("enter-invoice") is None
    why = store.acceptance_problem(store.get("enter-invoice", 1)) or ""
    assert "ana submitted the run" in why and "accepted by token:ana" in why, why
    assert _accept(runner, monkeypatch, "bob", 1).exit_code == 0
    assert store.accepted("enter-invoice") is not None

    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(alone))
    _by_hand(office / "routines", _routine(northwind, version=2, summary="by hand", browser=EVIL_BROWSER))
    assert _accept(runner, monkeypatch, "ana", 2).exit_code == 0
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.version == 2 and accepted.proposed_by == "token:ana"
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(office / "users.yaml"))
    assert store.accepted("enter-invoice") is None
    why = store.acceptance_problem(store.get("enter-invoice", 2)) or ""
    assert "counts as written by them" in why, why


# ---------------------------------------------------------------- who may retire it


def test_retire_takes_the_proven_identity_accept_does_and_both_are_in_the_signed_audit_log(
    office: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `routines retire` ran for anyone (an operating-system user with a typed name) and
    nothing recorded it. Now it is judged by the authority's rule on who decides, as accept is, and
    every acceptance and retirement, granted or refused, is a signed entry of the audit log."""
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    assert _accept(runner, monkeypatch, "ana", 1).exit_code == 0

    _as(monkeypatch, None)
    monkeypatch.setenv("TASKCREW_USER", "nobody")  # a typed name is no identity
    unproven = runner.invoke(app, ["routines", "retire", "enter-invoice"])
    assert unproven.exit_code == 1 and "must be authenticated" in unproven.output, unproven.output
    monkeypatch.setenv("TASKCREW_TOKEN", "tc_not-a-token")
    unknown = runner.invoke(app, ["routines", "retire", "enter-invoice"])
    assert unknown.exit_code == 2 and "unknown or revoked" in unknown.output, unknown.output
    replays = store.accepted("enter-invoice")
    assert replays is not None and replays.version == 1

    _as(monkeypatch, "bob")
    done = runner.invoke(app, ["routines", "retire", "enter-invoice"])
    assert done.exit_code == 0 and "(by token:bob)" in done.output, done.output
    assert store.accepted("enter-invoice") is None

    entries = _signed(office)
    actions = [(who, action, version) for who, action, _target, version in entries]
    assert actions[0] == ("ana", "routine_accept", 1)
    assert [a for a in actions if a[1] == "routine_retire"] == [("bob", "routine_retire", 1)]
    assert len([a for a in actions if a[1] == "routine_retire_refused"]) == 2
    granted = next(
        e for e in AuditLog(office / "approvals" / "audit.jsonl").signed() if e.action == "routine_accept"
    )
    assert granted.payload["proof"] == "token" and re.fullmatch(
        r"[0-9a-f]{32}", granted.payload["fingerprint"]
    )


# ---------------------------------------------------------------- what the console says of a reviewer


@pytest.fixture
def console(office: Path, console_users: Path) -> Iterator[httpx.Client]:
    """The console (real server, real job store) and a client logged in as bob, over HTTP."""
    from taskcrew.console.server import ConsoleServer
    from taskcrew.console.settings import ConsoleSettings
    from taskcrew.jobs.store import Jobs

    jobs_url = f"sqlite:///{office / 'jobs.sqlite3'}"
    jobs = Jobs.open(jobs_url)
    (office / "runs").mkdir()
    settings = ConsoleSettings(
        port=0,
        state_dir=office / "console",
        runs_dirs=[office / "runs"],
        eval_dirs=[office / "eval"],
        users_file=console_users,
        jobs_url=jobs_url,
    )
    server = ConsoleServer(settings, jobs).start()
    try:
        with httpx.Client(base_url=server.url, follow_redirects=True) as client:
            page = client.get("/login").text
            csrf = re.search(r'name="csrf" value="([^"]+)"', page)
            assert csrf is not None
            client.post(
                "/login",
                headers={"Origin": server.url},
                data={
                    "csrf": csrf.group(1),
                    "next": "/routines",
                    "username": "bob",
                    "password": "bob-secret-1",
                },
            )
            yield client
    finally:
        server.stop()
        jobs.close()


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _row(listing: str, version: int) -> dict[str, str]:
    found = re.search(rf'<tr id="routine-enter-invoice-v{version}">(.*?)</tr>', listing, re.S)
    assert found is not None, listing
    cells = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", found.group(1), re.S)]
    return {"reviewer": cells[-1], "author": cells[-2] if len(cells) == 6 else "(no such column)"}


def test_the_console_shows_a_reviewer_and_an_author_only_as_far_as_they_are_signed(
    office: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch, console: httpx.Client
) -> None:
    """A draft whose file says `reviewed_by: token:carol` (carol never saw it) was listed as reviewed
    by carol, and its page said "reviewed by token:carol". Now a reviewer is shown as proven only
    when a signed acceptance names her, and who wrote a version only as far as its proposal is
    signed; a file's word is marked as such."""
    store = RoutineStore()
    store.propose(_routine(northwind))
    runner = CliRunner()
    assert _accept(runner, monkeypatch, "ana", 1).exit_code == 0
    forged = _routine(northwind, version=2, summary="by hand", browser=EVIL_BROWSER)
    _by_hand(office / "routines", forged, reviewed_by="token:carol")

    listing = console.get("/routines").text
    accepted, draft = _row(listing, 1), _row(listing, 2)
    assert accepted["reviewer"] == "token:ana", accepted
    assert draft["reviewer"] == "not proven (the file says token:carol)", draft
    assert accepted["author"] == "taskcrew itself, after a verified run", accepted
    assert draft["author"] == "not proven", draft

    page = console.get("/routines/enter-invoice/2").text
    status = _text(re.search(r'<p id="routine-status">(.*?)</p>', page, re.S).group(1))  # type: ignore[union-attr]
    assert "reviewer (not proven) : the file says token:carol" in status, status  # tags read as spaces
    assert "reviewed by token:carol" not in status, status
    author = _text(re.search(r'<p id="routine-author">(.*?)</p>', page, re.S).group(1))  # type: ignore[union-attr]
    assert author.startswith("Written by: not proven"), author
    first = console.get("/routines/enter-invoice/1").text
    status = _text(re.search(r'<p id="routine-status">(.*?)</p>', first, re.S).group(1))  # type: ignore[union-attr]
    assert "reviewed by token:ana" in status and "not proven" not in status, status


# ---------------------------------------------------------------- a verified run, end to end


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(400)
def _recorded_as_a_worker_does(run_dir: Path, submitter: str, outcome: str) -> None:
    """The run's job, recorded in the CLI's job store as a worker records it (signed by the store):
    `routines learn` learns only from a run whose job's signed record says done."""
    from taskcrew.jobs import JobOptions
    from taskcrew.jobs.store import Jobs

    jobs = Jobs.open()
    try:
        job = jobs.submit(
            "enter-invoice",
            submitted_by=submitter,
            submitted_proof="token",
            options=JobOptions(),
            enqueue=False,
        )
        jobs.mark(job.id, "running", only_if=("queued",), leg=0, worker="w1")
        jobs.finish(job.id, outcome, "verified", leg=0, run_dir=str(run_dir))
    finally:
        jobs.close()


def test_a_verified_runs_draft_is_signed_as_taskcrews_and_is_not_its_submitters_to_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    """mallory submits the headline chore; the run is verified and proposes v1 (hooks.after_run):
    signed as taskcrew's, with her as its run's submitter. Once two people decide she may not
    accept it; ana may. Having it learned again from the same run proposes nothing new."""
    from routines_world import chore, workplace

    from taskcrew.crew.run import run_task
    from taskcrew.eval.human import CaseHuman
    from taskcrew.eval.solvers import scripted_models
    from taskcrew.mock_erp import ChaosConfig

    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_ROUTINES", str(tmp_path / "routines"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(tmp_path / "users.yaml"))  # none yet: one person
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    with workplace(tmp_path) as place:
        case = chore("Northwind Traders")
        place.erp_server.reset(ChaosConfig(save_faults=[]))
        settings = place.run_settings(
            case.task,
            worker_model="scripted/solver",
            verifier_model="scripted/auditor",
            criteria=case.criteria,
            submitted_by="mallory",
        )
        resources = place.resources(scripted=scripted_models(case), human=CaseHuman(case.human))
        result = run_task(settings, resources)
        assert result.outcome == "done", result.reason
    _recorded_as_a_worker_does(result.run_dir, "mallory", result.outcome)  # learn needs its signed record
    store = RoutineStore()
    draft = store.get("enter-invoice", 1)
    written = store.authorship(draft)
    assert written is not None and written.by == "worker:taskcrew" and written.submitter == "mallory"

    for name in ("ana", "bob", "mallory"):
        add_user(tmp_path / "users.yaml", name, f"{name}-secret-1")
    runner = CliRunner()
    refused = _accept(runner, monkeypatch, "mallory", 1)
    assert refused.exit_code == 1 and "mallory submitted the run" in refused.output, refused.output
    _as(monkeypatch, "bob")
    again = runner.invoke(app, ["routines", "learn", str(result.run_dir)])
    assert again.exit_code == 0 and "already does this" in again.output, again.output
    assert _accept(runner, monkeypatch, "ana", 1).exit_code == 0
    accepted = store.accepted("enter-invoice")
    assert accepted is not None and accepted.reviewed_by == "token:ana"
