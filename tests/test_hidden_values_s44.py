"""A value in a password-type box of a form is shown to the approver, judged by the risk rules and
bound by the request key exactly as it is sent; only a vault secret is masked (as its placeholder).

Red team (surfaces): a form that is no login form had ``<input type=password name=price>``; the
model typed 98000.00 into it (or the page prefilled it). Every surface showed ``price =
[password, hidden]``, the rules judged that text (no amount flag, no bank-details flag for an IBAN),
one person could approve it, bulk approval took a hidden 98000.00 and a hidden 12.00 for the same
unflagged item, and a guess typed into a password box masked the same words in every other field.

Real Chromium, a real HTTP site and the real authority; only the person is scripted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

import pytest
from fixtures_browser import SessionFactory

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.rules import load_rules
from taskcrew.approvals.terminal import TerminalApprovals
from taskcrew.tools.browser import Click, Type
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, ScriptedHuman
from taskcrew.tools.vault import Vault

pytestmark = pytest.mark.browser

SECRET = "s3cret-Pa55word"
BOX = "password box on the page"

PAGES = {
    # a transfer form whose price box is a password box (or a text box, or prefilled by the page)
    "/transfer-text": "<label>Price <input name=price autocomplete=off></label>",
    "/transfer-password": "<label>Price <input type=password name=price autocomplete=off></label>",
    "/transfer-prefilled": '<label>Price <input type=password name=price value="98000.00"></label>',
    # a payment form that asks to confirm with the user's password (filled from the vault)
    # (its memo box makes it no login form's shape: the vault fills the field it names)
    "/pay": "<label>Price <input name=price></label><label>Memo <textarea name=memo></textarea></label>"
    "<label>Confirm with your password <input type=password name=confirm_password></label>",
    # a text box and a password box that share one name: the text box is an ordinary field
    "/twins": "<label>Code <input name=code></label><label>Code PIN <input type=password name=code></label>",
    # a sign-in form at a path that is not a configured login path: asked
    "/signin": "<label>User <input name=username></label><label>Password <input type=password name=password>"
    "</label>",
    # the configured login path: exempt
    "/login": "<label>User <input name=username></label><label>Password <input type=password name=password>"
    "</label>",
    # somewhere a guess gets typed into a password box first
    "/unlock": "<label>Unlock code <input type=password name=unlock></label>",
}


def _page(path: str) -> str:
    action = path if path in ("/signin", "/login") else "/transfers"
    return (
        f"<!doctype html><html><head><title>Form</title></head><body><h1>Form</h1>"
        f"<form method=post action={action}><label>Reference <input name=reference value=INV-2057></label>"
        f"{PAGES[path]}<button>Save</button></form></body></html>"
    )


class _Site(BaseHTTPRequestHandler):
    posts: ClassVar[list[tuple[str, list[tuple[str, str]]]]] = []

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        body = _page(path).encode() if path in PAGES else b"not found"
        self.send_response(200 if path in PAGES else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        self.posts.append((urlsplit(self.path).path, parse_qsl(data, keep_blank_values=True)))
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(b"<title>Saved</title>saved")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def portal() -> Iterator[str]:
    _Site.posts.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _vault(portal: str) -> Vault:
    return Vault(
        {"ERP_PASSWORD": SECRET},
        hosts={"ERP_PASSWORD": [portal.removeprefix("http://")]},
        fields={"ERP_PASSWORD": ["login", "confirm_password", "code"]},
    )


def _fill(
    make_session: SessionFactory, portal: str, path: str, typed: dict[str, str], human: Any, **kw: Any
) -> Any:
    """Open ``path``, type ``typed`` (box label -> text) and click Save; the session's act result."""
    session = make_session(human=human, base_url=portal, vault=kw.pop("vault", None) or _vault(portal), **kw)
    obs = session.goto(portal + path).observation
    at = {e.name: e.index for e in obs.elements}
    actions: list[Any] = [Type(index=at[label], text=text) for label, text in typed.items()]
    return session, session.act([*actions, Click(index=at["Save"])])


def _asked(make_session: SessionFactory, portal: str, path: str, typed: dict[str, str]) -> ApprovalRequest:
    human = ScriptedHuman([ApprovalDecision.reject("looking")])
    _fill(make_session, portal, path, typed, human)
    (request,) = human.requests
    return request


def _authority(tmp_path: Path) -> Authority:
    """The two-person rule on, as where a users file lists two or more people."""
    return Authority(None, load_rules().model_copy(update={"two_person": "on"}), home=tmp_path / "approvals")


@pytest.mark.parametrize(
    ("path", "typed", "flagged"),
    [
        ("/transfer-password", {"Price": "98000.00"}, "above 5000.00"),
        ("/transfer-password", {"Price": "DE89370400440532013000"}, "sets bank details"),
        ("/transfer-prefilled", {}, "above 5000.00"),  # the page's own value, nothing typed
    ],
)
def test_a_value_in_a_password_box_is_shown_judged_and_flagged(
    make_session: SessionFactory, portal: str, tmp_path: Path, path: str, typed: dict[str, str], flagged: str
) -> None:
    request = _asked(make_session, portal, path, typed)
    sent = typed.get("Price", "98000.00")
    assert {f.name: f.value for f in request.fields}["price"] == sent  # shown as sent
    assert any(flagged in f for f in request.flags), request.flags  # judged as sent
    assert any(BOX in f and f.endswith("needs a second approver") for f in request.flags), request.flags
    # every surface's assessment (worker, console, CLI, bulk) reads the same from the request
    assessment = _authority(tmp_path).assess(request)
    assert "password_box" in {f.rule for f in assessment.flags}
    assert assessment.needs_second_approver


def test_a_small_value_in_a_password_box_is_flagged_and_keyed_by_its_value(
    make_session: SessionFactory, portal: str, tmp_path: Path
) -> None:
    """12.00 in a password box needs no amount flag, but it is flagged (the person could not read
    it on the page); 12.00 and 98000.00 are two different keys (a guess is not a secret)."""
    small = _asked(make_session, portal, "/transfer-password", {"Price": "12.00"})
    big = _asked(make_session, portal, "/transfer-password", {"Price": "98000.00"})
    assert [f for f in small.flags if BOX in f] and not [f for f in small.flags if "above" in f]
    assert small.key != big.key
    authority = _authority(tmp_path)
    assert authority.needs_two(authority.assess(small))
    control = _asked(make_session, portal, "/transfer-text", {"Price": "12.00"})
    assert control.flags == []  # the same value in a text box: nothing to flag


def test_one_person_at_the_terminal_cannot_send_a_password_box_value_where_two_are_needed(
    make_session: SessionFactory, portal: str, tmp_path: Path
) -> None:
    person = ScriptedHuman([ApprovalDecision.approve(by="ana at the terminal", basis="person")])
    terminal = TerminalApprovals(person, _authority(tmp_path))
    _, result = _fill(make_session, portal, "/transfer-prefilled", {}, terminal)
    assert person.requests == []  # refused before she is asked: it needs two people
    assert _Site.posts == [], _Site.posts
    assert "two people" in result.render()


def test_the_key_approved_is_the_key_of_what_is_sent(make_session: SessionFactory, portal: str) -> None:
    """Approved where one approver suffices: the value leaves as typed, and the send check (what a
    durable run's worker asks: ``Authority.key_of`` of what leaves, against the approval's key)
    sees exactly the key the person approved."""
    person = ScriptedHuman([ApprovalDecision.approve(by="ana", basis="person")])
    checked: list[tuple[str, str, list[tuple[str, str]]]] = []
    session = make_session(human=person, base_url=portal, vault=_vault(portal))
    session.policy.send_check = lambda m, u, f: checked.append((m, u, f)) or None  # type: ignore[func-returns-value]
    obs = session.goto(portal + "/transfer-password").observation
    at = {e.name: e.index for e in obs.elements}
    assert session.act([Type(index=at["Price"], text="98000.00"), Click(index=at["Save"])]).ok
    assert _Site.posts == [("/transfers", [("reference", "INV-2057"), ("price", "98000.00")])]
    (request,) = person.requests
    ((method, url, fields),) = checked
    assert fields == [("reference", "INV-2057"), ("price", "98000.00")]
    assert Authority(None, session.policy.rules).key_of(method, url, fields) == request.key


def test_a_guess_typed_into_a_password_box_masks_nothing_on_a_later_approval(
    make_session: SessionFactory, portal: str
) -> None:
    """A text typed into a password box is redacted from what the model reads (no oracle), but it
    is not a secret: the same words in another form's field are shown, judged and keyed as sent."""
    human = ScriptedHuman([ApprovalDecision.reject("x"), ApprovalDecision.reject("x")])
    session, _ = _fill(make_session, portal, "/unlock", {"Unlock code": "98000.00"}, human)
    obs = session.goto(portal + "/transfer-text").observation
    at = {e.name: e.index for e in obs.elements}
    session.act([Type(index=at["Price"], text="98000.00"), Click(index=at["Save"])])
    later = human.requests[-1]
    assert {f.name: f.value for f in later.fields}["price"] == "98000.00"
    assert any("above 5000.00" in f for f in later.flags), later.flags


def test_a_vault_secret_confirming_a_payment_is_masked_and_not_flagged(
    make_session: SessionFactory, portal: str
) -> None:
    """The honest re-auth field: the vault fills it; it is shown as its placeholder, no flag; the
    real password is what leaves."""
    person = ScriptedHuman([ApprovalDecision.approve(by="ana", basis="person")])
    typed = {"Price": "120.00", "Confirm with your password": "{{secret:ERP_PASSWORD}}"}
    _fill(make_session, portal, "/pay", typed, person)
    (request,) = person.requests
    shown = {f.name: f.value for f in request.fields}
    assert shown["confirm_password"] == "{{secret:ERP_PASSWORD}}" and SECRET not in request.model_dump_json()
    assert request.flags == [], request.flags
    assert _Site.posts == [
        (
            "/transfers",
            [("reference", "INV-2057"), ("price", "120.00"), ("memo", ""), ("confirm_password", SECRET)],
        )
    ]


def test_a_text_box_sharing_a_password_box_name_is_an_ordinary_field(
    make_session: SessionFactory, portal: str
) -> None:
    """Hidden by the control, not by the name: the text box's value is shown, unflagged; the
    password box beside it holds a vault secret (its placeholder)."""
    typed = {"Code": "AB-12", "Code PIN": "{{secret:ERP_PASSWORD}}"}
    request = _asked(make_session, portal, "/twins", typed)
    assert [(f.name, f.value, f.note) for f in request.fields if f.name == "code"] == [
        ("code", "AB-12", None),
        ("code", "{{secret:ERP_PASSWORD}}", None),
    ]
    assert not [f for f in request.flags if BOX in f], request.flags


def test_sign_in_forms_with_vault_secrets_work_as_before(make_session: SessionFactory, portal: str) -> None:
    """The configured login path is not asked; a sign-in elsewhere is asked, its password shown as
    its placeholder and not flagged."""
    login = {"User": "demo", "Password": "{{secret:ERP_PASSWORD}}"}
    _, result = _fill(make_session, portal, "/login", login, ScriptedHuman())  # asks nobody
    assert result.ok, result.render()
    assert _Site.posts == [
        ("/login", [("reference", "INV-2057"), ("username", "demo"), ("password", SECRET)])
    ]
    request = _asked(make_session, portal, "/signin", login)
    assert {f.name: f.value for f in request.fields}["password"] == "{{secret:ERP_PASSWORD}}"
    assert not [f for f in request.flags if BOX in f], request.flags


@pytest.fixture
def office(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Three users (the two-person rule on), a job database and the authority the console uses."""
    from taskcrew.console.auth import add_user
    from taskcrew.jobs import Jobs

    users = tmp_path / "users.yaml"
    for name in ("ana", "bob", "carol"):
        add_user(users, name, f"{name}-secret-1")
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(users))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    yield jobs, Authority(jobs, users_file=users)
    jobs.close()


def test_password_box_values_are_not_bulk_approved(
    make_session: SessionFactory, portal: str, office: Any
) -> None:
    """Two parked jobs with 12.00 and 13.00 in a password box: shown as sent, flagged for two
    people, and refused by bulk approval (which takes only unflagged items)."""
    from taskcrew.approvals.identity import Identity
    from taskcrew.jobs.human import JobHuman, Parked

    jobs, authority = office
    ids = []
    for amount in ("12.00", "13.00"):
        request = _asked(make_session, portal, "/transfer-password", {"Price": amount})
        job = jobs.submit("Enter the transfer", submitted_by="ana", submitted_proof="token")
        jobs.mark(job.id, "running", only_if=("queued",), worker="w1")
        with pytest.raises(Parked) as parked:
            JobHuman(jobs, job.id).approve(request)
        jobs.mark(job.id, "waiting", only_if=("running",))
        ids.append(parked.value.approval_id)
    views = [authority.view(jobs.approval(i)) for i in ids]
    assert [dict(v.fields)["price"] for v in views] == ["12.00", "13.00"]
    assert all(v.needs_two and "password_box" in {f.rule for f in v.assessment.flags} for v in views)
    results = authority.bulk_approve(ids, Identity(name="bob", proof="console"))
    assert all(r.status == "refused" for r in results), [(r.status, r.message) for r in results]
