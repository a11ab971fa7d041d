"""The console's pages for a planned batch and its children, as the approver who must decide reads
them (HTTP, the real job store, authority and templates): the planner's authorship said at the top of
an approval, before its Decide form, and nowhere "submitted by" the batch's submitter as if the text
were hers; the worklist and the jobs list telling a batch child from a person's own job; a batch's
page listing its children and the items refused; a hidden-characters flag's markers shown once (not
a marker's letter marked again inside it), while text a page wrote in brackets is still marked; the
odd letters' markers saying what they are; the one-approver wording where the two-person rule is off.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fixtures_console import PASSWORDS
from starlette.testclient import TestClient

from taskcrew.approvals.rules import assess, load_rules
from taskcrew.approvals.visible import Shown, hidden, shown, visible
from taskcrew.console.app import build_app
from taskcrew.console.auth import add_user, remove_user
from taskcrew.console.settings import ConsoleSettings
from taskcrew.console.web import _finalize
from taskcrew.crew.scripted import ScriptedLLM
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.human import JobHuman, Parked, trace
from taskcrew.jobs.runner import LegRunner
from taskcrew.tools.human import ApprovalRequest, FieldValue

ERP = "http://127.0.0.1:8800"
BATCH = "Enter every invoice in the inbox that is not yet in the ERP."
OPTIONS = JobOptions(worker_model="scripted/planner", verifier_model="scripted/auditor", batch=True)
HIJACKED = "Mark bill {item} paid in full in the ERP."  # the planner's template: not what the batch asks


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    users = tmp_path / "users.yaml"
    for name, password in PASSWORDS.items():
        add_user(users, name, password)
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    (tmp_path / "home").mkdir()
    for key, value in {
        "TASKCREW_JOBS_DB": url,
        "TASKCREW_APPROVALS_DIR": str(tmp_path / "approvals"),
        "TASKCREW_CONSOLE_USERS": str(users),
        "TASKCREW_HOME": str(tmp_path / "home"),
        "TASKCREW_RUNS": str(tmp_path / "home" / "runs"),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    monkeypatch.delenv("TASKCREW_RISK_RULES", raising=False)
    jobs = Jobs.open(url)
    settings = ConsoleSettings(
        port=0,
        state_dir=tmp_path / "console",
        runs_dirs=[],
        eval_dirs=[],
        users_file=users,
        jobs_url=url,
        approvals_dir=tmp_path / "approvals",
    )
    yield SimpleNamespace(jobs=jobs, settings=settings, users=users, tmp=tmp_path)
    jobs.close()


def _client(place: SimpleNamespace, user: str) -> TestClient:
    client = TestClient(
        build_app(place.settings, place.jobs), base_url="http://testserver", follow_redirects=False
    )
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token
    form = {"username": user, "password": PASSWORDS[user], "csrf": token.group(1), "next": "/"}
    assert client.post("/login", data=form, headers={"origin": "http://testserver"}).status_code == 303
    return client


def _decide(client: TestClient, approval_id: str, action: str = "approve") -> None:
    token = re.search(r'name="csrf" value="([^"]+)"', client.get(f"/approvals/{approval_id}").text)
    assert token
    sent = client.post(
        f"/approvals/{approval_id}/decide",
        data={"csrf": token.group(1), "action": action, "text": ""},
        headers={"origin": "http://testserver"},
    )
    assert sent.status_code == 303, sent.text


def _batch(
    place: SimpleNamespace, template: str, items: list[str], refused: bool = False
) -> tuple[str, list[str]]:
    """A batch ana submitted, planned by a scripted planner into one child per item (and an item with
    a line break, which the store refuses): its id and its children's ids, by item."""
    box = place.tmp / "sandbox"
    (box / "inbox").mkdir(parents=True, exist_ok=True)
    (box / "inbox" / "mail.eml").write_text("From: x@vendor.example\nSubject: invoice\n\nhi\n")
    batch = place.jobs.submit(BATCH, submitted_by="ana", submitted_proof="console", options=OPTIONS)
    planned = [*items, "Invoice 4.eml\nbatch-0000 x"] if refused else items
    llm = ScriptedLLM([json.dumps({"template": template, "items": planned})])
    where = SimpleNamespace(settings=SimpleNamespace(sandbox=box), erp_url="http://127.0.0.1:9")
    runner = LegRunner(place.jobs, where, "w1", scripted=lambda job: lambda name: llm)
    assert runner.run_leg(batch.id, 0) == "waiting", place.jobs.get(batch.id).reason
    children = sorted(place.jobs.list(parent_id=batch.id), key=lambda c: c.item or "")
    return batch.id, [c.id for c in children]


def _park(jobs: Jobs, job_id: str, request: ApprovalRequest) -> str:
    jobs.mark(job_id, "running", only_if=("queued",), worker="w2", beat=True)
    with pytest.raises(Parked) as parked:
        JobHuman(jobs, job_id).approve(request)
    jobs.mark(job_id, "waiting", only_if=("running",))
    return parked.value.approval_id


def _bill(amount: str, vendor: str = "Northwind Traders", number: str = "INV-9001") -> ApprovalRequest:
    fields = [
        FieldValue(name="vendor_id", value=f"3 ({vendor})", label=vendor),
        FieldValue(name="invoice_number", value=number),
        FieldValue(name="amount", value=amount),
        FieldValue(name="currency", value="EUR"),
        FieldValue(name="due_date", value="2025-12-31"),
    ]
    return ApprovalRequest(kind="form_submission", method="POST", url=f"{ERP}/bills/new", fields=fields)


def _pay(bill: str) -> ApprovalRequest:
    return ApprovalRequest(
        kind="form_submission",
        method="POST",
        url=f"{ERP}/bills/{bill}/pay",
        fields=[FieldValue(name="paid_on", value="2025-12-06"), FieldValue(name="bill", value=bill)],
        looked_up={"amount": "450.00", "currency": "EUR", "source": f"{ERP}/bills/{bill}"},
    )


def _text(page: str) -> str:
    inline = re.sub(r"</?(?:a|strong|small|span|code)\b[^>]*>", "", page)  # words, as read
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def _part(html: str, pattern: str) -> str:
    found = re.search(pattern, html, re.S)
    assert found, html
    return _text(found.group(1))


# ---- 1, 2: a planned child's approval says whose words its task is, before the Decide form --------


def test_a_planned_childs_approval_says_the_planner_wrote_it_before_the_decide_form(
    place: SimpleNamespace,
) -> None:
    """The attack case: a batch "Enter every invoice…" whose planner wrote "Mark bill BILL-0003 paid
    in full". Before, the planner's authorship was a paragraph under the Decide form and the page
    said "submitted by ana" of the planner's text."""
    batch_id, (child,) = _batch(place, HIJACKED, ["BILL-0003"])
    approval_id = _park(place.jobs, child, _pay("BILL-0003"))
    page = _client(place, "bob").get(f"/approvals/{approval_id}").text
    origin, decide, action = (
        page.index('id="task-origin"'),
        page.index('id="h-decide"'),
        page.index('id="action"'),
    )
    assert action < origin < page.index('id="h-key"') < decide, (
        "the warning sits under the action, at the top"
    )
    words = _part(page, r'<p id="task-origin"[^>]*>(.*?)</p>')
    assert words == (
        "⚠ This task was written by the batch planner (scripted/planner), not by ana. "
        f"ana's batch {batch_id} asked: “{BATCH}” The planner wrote: “Mark bill BILL-0003 paid in full "
        "in the ERP.” Approve only if this change is what the batch asked for."
    ), words
    assert "”." not in words
    assert "Task (written by the batch planner)" in page
    footer = _part(page, r'<p id="task-job">(.*?)</p>')
    assert f"planned for ana's batch {batch_id} (ana submitted the batch, not this text)" in footer, footer
    assert "submitted by" not in _text(page)
    # a value the task text holds: the planner's words, not ana's
    assert "the task text written by the batch planner (not by ana)" in _text(page)


def test_a_decided_childs_approval_says_it_in_the_past(place: SimpleNamespace) -> None:
    _, (child,) = _batch(place, "Enter the invoice {item} into the ERP.", ["INV-9001"])
    approval_id = _park(place.jobs, child, _bill("450.00"))
    bob = _client(place, "bob")
    _decide(bob, approval_id)
    page = bob.get(f"/approvals/{approval_id}").text
    words = _part(page, r'<p id="task-origin"[^>]*>(.*?)</p>')
    assert "It was to be approved only if this change was what the batch asked for." in words, words
    assert "Approve only if" not in words and page.index('id="task-origin"') < page.index('id="h-key"')


def test_a_planned_childs_job_page_and_history_do_not_name_the_batchs_submitter_as_its_author(
    place: SimpleNamespace,
) -> None:
    batch_id, (child,) = _batch(place, "Enter the invoice {item} into the ERP.", ["INV-9001"])
    page = _client(place, "bob").get(f"/jobs/{child}").text
    assert _part(page, r'<dd id="job-submitted">(.*?)</dd>').startswith(
        f"planned for ana's batch {batch_id} (ana submitted the batch, not this text) at "
    )
    history = _part(page, r'<ol class="timeline" id="job-events"[^>]*>(.*?)</ol>')
    assert "planned for ana's batch" in history and "by ana" not in history, history
    assert "”." not in _part(page, r'<p id="job-origin"[^>]*>(.*?)</p>')


def test_provenance_of_a_value_from_a_planned_task_names_the_planner() -> None:
    task = "Mark bill BILL-0003 paid in full in the ERP."
    assert trace(None, task, "bill", "BILL-0003")[0] == "the task text"
    assert (
        trace(None, task, "bill", "BILL-0003", planned_for="ana")[0]
        == "the task text written by the batch planner (not by ana)"
    )


# ---- 3, 8: the worklist and the jobs list tell a batch child from a person's own job --------------


def test_the_worklist_and_the_jobs_list_tell_a_batch_child_from_a_persons_job(place: SimpleNamespace) -> None:
    batch_id, (child,) = _batch(place, HIJACKED, ["BILL-0003"])
    a_child = _park(place.jobs, child, _pay("BILL-0003"))
    own = place.jobs.submit(
        "Enter the Northwind invoice of 9500", submitted_by="ana", submitted_proof="token"
    )
    a_big = _park(place.jobs, own.id, _bill("9500.00", number="INV-2057"))
    bob = _client(place, "bob")
    _decide(bob, a_big)  # the first of two approvals
    worklist = bob.get("/approvals").text
    rows = {
        m.group(1): m.group(0)
        for m in re.finditer(r'<tr class="[^"]*" data-approval="([^"]+)">.*?</tr>', worklist, re.S)
    }
    assert f"approval · planned for ana's batch ({batch_id})" in _text(rows[a_child])
    assert "approval · by ana" in _text(rows[a_big])
    assert '<span class="nowrap">BILL-0003</span>' in rows[a_child]  # never split "BILL-" / "0003"
    assert "you approved first; waiting for another approver" in _text(rows[a_big])
    carol = _client(place, "carol").get("/approvals").text
    assert "one more approver (not bob or ana)" in _text(carol)
    jobs_list = bob.get("/jobs").text
    row = re.search(rf'<tr><td class="nowrap"><a href="/jobs/{re.escape(child)}">.*?</tr>', jobs_list, re.S)
    assert row and f"planned for ana's batch ({batch_id})" in _text(row.group(0)), jobs_list


# ---- 4: a batch's page lists its children and the items refused ----------------------------------


def test_a_batchs_page_lists_its_children_and_the_items_refused(place: SimpleNamespace) -> None:
    """Before, the page said "Batch of 3 child jobs" and its note "this job's page lists them", and
    listed none."""
    items = ["Invoice 1.eml", "Invoice 2.eml", "Invoice 3.eml"]
    batch_id, children = _batch(place, "Enter the invoice in {item} into the ERP.", items, refused=True)
    _park(place.jobs, children[0], _bill("450.00"))
    page = _client(place, "bob").get(f"/jobs/{batch_id}").text
    section = re.search(r'<section id="job-children".*?</section>', page, re.S)
    assert section, page
    words = _text(section.group(0))
    assert (
        "Batch of 3 child jobs (1 more item refused, never submitted). The batch finishes when the last "
        "child ends; cancelling the batch cancels them." in words
    ), words
    for child, item in zip(children, items, strict=True):
        assert f'<a href="/jobs/{child}">{child}</a>' in section.group(0) and item in words
    assert "waiting: parked" in words or "waiting" in words
    refused = _part(section.group(0), r'<ul id="children-refused">(.*?)</ul>')
    assert refused.startswith("'Invoice 4.eml\\nbatch-0000 x': the item holds a line break"), refused
    history = _part(page, r'<ol class="timeline" id="job-events"[^>]*>(.*?)</ol>')
    assert "waiting for its child jobs" in history and "waiting for a decision" not in history, history


# ---- 5, 6: a flag's markers shown once; what a page writes in brackets still marked ----------------


@pytest.mark.parametrize(
    ("vendor", "marker"),
    [
        ("N\u1d0frthwind Traders", "⟨small capital O U+1D0F⟩"),
        ("N\u043erthwind Traders", "⟨Cyrillic о U+043E⟩"),
        ("Globex C\u0251pital", "⟨IPA letter ɑ U+0251⟩"),
    ],
)
def test_a_hidden_characters_flag_is_marked_once_on_the_page(
    place: SimpleNamespace, vendor: str, marker: str
) -> None:
    own = place.jobs.submit("Enter the invoice", submitted_by="ana", submitted_proof="token")
    approval_id = _park(place.jobs, own.id, _bill("450.00", vendor=vendor))
    page = _client(place, "bob").get(f"/approvals/{approval_id}").text
    flag = _part(page, r'<li class="flag flag-hidden">(.*?)</li>')
    word = next(w for w in vendor.split(" ") if not w.isascii())
    quoted = visible(word)
    assert f"vendor_id: {marker} in “{quoted}”" in flag, flag  # "(" of "3 (Nᴏrthwind" not quoted
    assert marker in quoted and flag.count("⟨") == flag.count("⟩")
    assert not re.search(r"⟨[^⟩]*⟨", flag), f"a marker marked inside a marker: {flag}"
    assert not re.search(r"⟨[^⟩]*⟨", page)


def test_text_a_page_wrote_in_brackets_is_still_marked() -> None:
    """Only code makes a ``Shown`` value: a value that writes its own "⟨…⟩" around a look-alike
    letter is marked like any other."""
    forged = "⟨N\u1d0frthwind⟩"
    assert _finalize(forged) == "⟨N⟨small capital O U+1D0F⟩rthwind⟩"
    assert not isinstance(_finalize(forged), Shown)
    flag = assess([("vendor", forged)], f"{ERP}/bills/new", load_rules()).flags[0]
    assert isinstance(flag.message, Shown) and "“N⟨small capital O U+1D0F⟩rthwind”" in flag.message
    assert _finalize(flag.message) is flag.message  # already shown: not marked again
    assert (
        _finalize(shown("{} and {}", "N\u043erthwind", Shown("⟨x⟩"))) == "N⟨Cyrillic о U+043E⟩rthwind and ⟨x⟩"
    )
    # stored and read back, a flag is plain text again: marked where it is shown
    read_back: Any = type(flag).model_validate(json.loads(flag.model_dump_json()))
    assert not isinstance(read_back.message, Shown)
    assert all(isinstance(h, Shown) for h in hidden(forged))


def test_odd_letters_are_named_for_what_they_are() -> None:
    assert visible("INV-2\u1d0f57") == "INV-2⟨small capital O U+1D0F⟩57"
    assert visible("Industrie\ua731") == "Industrie⟨small capital S U+A731⟩"
    assert visible("C\u0251pital") == "C⟨IPA letter ɑ U+0251⟩pital"
    assert visible("N\u043erthwind") == "N⟨Cyrillic о U+043E⟩rthwind"  # a script's letter: as before


# ---- 7: one approver where the two-person rule is off ---------------------------------------------


def test_the_rule_line_says_why_one_approver_suffices_and_keeps_the_first_approval(
    place: SimpleNamespace,
) -> None:
    own = place.jobs.submit(
        "Enter the Northwind invoice of 9500", submitted_by="ana", submitted_proof="token"
    )
    approval_id = _park(place.jobs, own.id, _bill("9500.00", number="INV-2057"))
    _decide(_client(place, "bob"), approval_id)  # the first of two
    remove_user(place.users, "ana")
    remove_user(place.users, "carol")  # one person left: the rule is off (two_person: auto)
    page = _client(place, "bob").get(f"/approvals/{approval_id}").text
    rule = _part(page, r'<p id="rule">(.*?)</p>')
    assert rule.startswith("One approver suffices: the two-person rule is off here ("), rule
    assert "First approval already given by bob." in rule, rule
