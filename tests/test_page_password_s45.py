"""A value the page itself holds in a password box is a hidden value of the run.

Red team (rt_secrets7, F1/F2): a settings page prefilled its SMTP password in a password box. The
worker's page view read ``[filled, hidden]``, but after the approved save the value was in the
verifier's prompt (the record of the run's sends), in report.md, in trace.jsonl (and so in ``runs
list`` and the console) — and the ``type`` action's messages quoted it to the worker ("it holds
'…'", "after typing, [2] holds '…'"): only vault secrets and the model's own guesses were redacted.

Now the page view and the browser's gate register such a value with the run's vault the moment they
meet it (``Vault.note_guess(by_page=True)``): ``Vault.redact`` shows it as ``{{secret:PAGE_PASSWORD_1}}``
everywhere; only what a person approves (``redact_stored``) shows it as sent, flagged. A value
shorter than three characters is not hidden (as a guess is not), nor one the page's text shows.

Real Chromium, real HTTP sites, the real Flow and gate; only the models and the person are scripted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_adversarial import SECRET, Server, serve
from fixtures_browser import SessionFactory

from taskcrew.approvals.authority import PASSWORD_BOX
from taskcrew.config import WorkplaceSettings
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM
from taskcrew.crew.workplace import Workplace
from taskcrew.eval import kit
from taskcrew.mock_erp import ChaosConfig
from taskcrew.tools.browser import Click, Type
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, ScriptedHuman
from taskcrew.tools.vault import Vault

pytestmark = pytest.mark.browser

SMTP_PW = "Smtp-Hunter2-q9Zx"
HIDDEN = "{{secret:PAGE_PASSWORD_1}}"  # the first (here the only) value the page hides


def _form(box: str, extra: str = "") -> str:
    return (
        f"<title>Mail settings</title><h1>Mail settings</h1>{extra}<form method=post action=/smtp>"
        "<label>SMTP host <input name=smtp_host value=mail.acme.test></label>"
        f"<label>SMTP password {box}</label><button>Save settings</button></form>"
    )


PAGES = {
    "/settings": _form(f"<input type=password name=smtp_password value='{SMTP_PW}'>"),
    "/readonly": _form(f"<input type=password name=smtp_password value='{SMTP_PW}' readonly>"),
    "/limited": _form(f"<input type=password name=smtp_password value='{SMTP_PW}' maxlength={len(SMTP_PW)}>"),
    # the page swaps in a password of its own when the box is typed into (after the page view)
    "/swapping": _form("<input type=password name=smtp_password oninput=\"this.value='Fresh-Pass-77aa'\">"),
    # a short value, one the page's text shows, one it hides
    "/mixed": _form(
        "<input type=password name=pin value=30><input type=password name=temp value=Temp-Word-123>"
        "<input type=password name=smtp_password value=Hid-Den-456>",
        "<p>Pay within 30 days. Your temporary password: Temp-Word-123</p>",
    ),
    "/smtp": "<title>Saved</title><h1>Settings saved</h1>",
}


@pytest.fixture(scope="module")
def site() -> Iterator[Server]:
    yield from serve(PAGES)


# ---- the action's own messages (F2) -----------------------------------------------------------


@pytest.mark.parametrize(("path", "clear"), [("/readonly", True), ("/limited", False)])
def test_the_type_action_never_quotes_the_page_password(
    make_session: SessionFactory, site: Server, path: str, clear: bool
) -> None:
    session = make_session(base_url=site.url)
    obs = session.goto(site.url + path).observation
    assert SMTP_PW not in obs.render() and "[filled, hidden]" in obs.render()
    box = next(e.index for e in obs.elements if e.name == "SMTP password")
    result = session.act([Type(index=box, text="x", clear=clear)])
    shown = result.render()
    assert not result.ok and SMTP_PW not in shown and HIDDEN in shown, shown


def test_a_value_the_page_puts_in_the_box_after_the_page_view_is_hidden_before_it_is_quoted(
    make_session: SessionFactory, site: Server
) -> None:
    session = make_session(base_url=site.url)
    obs = session.goto(site.url + "/swapping").observation
    box = next(e.index for e in obs.elements if e.name == "SMTP password")
    result = session.act([Type(index=box, text="x")])
    shown = result.render()
    assert not result.ok and "Fresh-Pass-77aa" not in shown and HIDDEN in shown, shown


# ---- the gate: the approval shows it, every other record of the send masks it ----------------


def test_the_approver_sees_the_value_the_records_of_the_send_do_not(
    make_session: SessionFactory, site: Server
) -> None:
    """The page changes the box after the model's last look (a timer would): the gate meets the
    value first, and hides it before the send is recorded."""
    person = ScriptedHuman([ApprovalDecision.approve(by="ana", basis="person")])
    session = make_session(base_url=site.url, human=person, vault=Vault({"ERP_PASSWORD": SECRET}))
    obs = session.goto(site.url + "/settings").observation
    late = "Late-Pass-88bb"
    session.run(
        lambda page: page.evaluate(f"document.querySelector('[name=smtp_password]').value = '{late}'")
    )
    save = next(e.index for e in obs.elements if e.name == "Save settings")
    result = session.act([Click(index=save)])
    assert late in site.posts()[-1].body.decode(), site.log()  # sent as approved
    (request,) = person.requests
    boxed = {f.name: f for f in request.fields}["smtp_password"]
    assert boxed.value == late and PASSWORD_BOX in (boxed.note or ""), request  # shown, flagged
    (sent,) = result.submissions
    # the act result and the run's facts: the page view hid the first value (_1), the gate this one
    assert dict(sent.fields)["smtp_password"] == "{{secret:PAGE_PASSWORD_2}}", sent
    assert late not in result.render() and late not in result.model_dump_json()


# ---- what stays readable, and the placeholders --------------------------------------------------


def test_short_and_page_shown_values_stay_readable_and_the_page_placeholder_is_never_typed(
    make_session: SessionFactory, site: Server
) -> None:
    vault = Vault({"ERP_PASSWORD": SECRET})
    session = make_session(base_url=site.url, vault=vault)
    obs = session.goto(site.url + "/mixed").observation
    # "30" would garble every amount and date; the temporary password is on the page for the reader
    assert "Pay within 30 days. Your temporary password: Temp-Word-123" in obs.text, obs.text
    assert vault.redact("Hid-Den-456 in 30 days, Temp-Word-123") == f"{HIDDEN} in 30 days, Temp-Word-123"
    host = next(e.index for e in obs.elements if e.name == "SMTP host")
    result = session.act([Type(index=host, text=HIDDEN, clear=True)])
    assert not result.ok and "never typed" in result.render(), result.render()
    # the model's own guess is still the one {{secret:TYPED_SECRET}} stands for (not ambiguous)
    box = next(e.index for e in obs.elements if e.field is not None and e.field.name == "smtp_password")
    session.act([Type(index=box, text="my-own-guess-1", clear=True)])
    result = session.act([Type(index=host, text="{{secret:TYPED_SECRET}}", clear=True)])
    assert result.ok, result.render()
    value = "document.querySelector('[name=smtp_host]').value"
    assert session.run(lambda page: page.evaluate(value)) == "my-own-guess-1"


# ---- a whole run (F1) -------------------------------------------------------------------------


class ApprovingHuman(ScriptedHuman):
    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return ApprovalDecision.approve(by="ana")

    def ask(self, question: str) -> str:
        self.questions.append(question)
        return "Yes."


PLAN = Plan(
    goal="Change the From address of the mail settings",
    success_criteria=["The mail settings are saved"],
    steps=[PlanStep(role="browser_operator", title="Save the mail settings", instructions="Save them.")],
    changes_data=True,
)


@pytest.mark.slow
def test_a_page_password_reaches_no_model_trace_or_report_only_the_approval(
    tmp_path_factory: pytest.TempPathFactory, site: Server
) -> None:
    root = tmp_path_factory.mktemp("place")
    settings = WorkplaceSettings(
        erp_url="http://127.0.0.1:0",
        intranet_url=site.url,
        runs_dir=root / "runs",
        erp_db=root / "erp.sqlite3",
        knowledge_dir=root / "knowledge",
        chaos=False,
    )
    seen: list[str] = []  # every prompt a model was shown
    steps = [
        lambda c: kit.navigate(kit.intranet(c) + "/settings"),
        lambda c: kit.act({"action": "click", "index": c.element(r"submits form POST /smtp")}),
    ]

    def worker(call: ScriptedCall) -> Any:
        seen.append(call.prompt)
        return steps.pop(0)(call) if steps else kit.report("done", "Saved the mail settings.")

    def verifier(call: ScriptedCall) -> Any:
        seen.append(call.prompt)
        return kit.verdict([(PLAN.success_criteria[0], False, "sends of this run", "not checked")], "no")

    models = {
        "w": ScriptedLLM(
            {
                "planner": [PLAN.model_dump_json()] * 3,
                "browser_operator": [Loop(policy=worker)] * 3,
                "reflector": ['{"facts": []}'] * 3,
            },
            model="scripted/w",
        ),
        "v": ScriptedLLM({"verifier": [Loop(policy=verifier)] * 3}, model="scripted/v"),
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACME_ERP_PASSWORD", SECRET)
        with Workplace(settings, ApprovingHuman()) as place:
            place.erp_server.reset(ChaosConfig.off())
            result = place.run(
                "Open the intranet's mail settings and save them.",
                worker_model="scripted/w",
                verifier_model="scripted/v",
                scripted=models.__getitem__,
            )
            requests = place.human.requests
    assert SMTP_PW in site.posts()[-1].body.decode(), site.log()  # sent, as approved
    # the person who approves it sees what is sent, flagged
    boxed = [f for r in requests for f in r.fields if f.name == "smtp_password"]
    assert boxed and boxed[0].value == SMTP_PW and PASSWORD_BOX in (boxed[0].note or ""), requests
    # no model, no artifact, no answer holds it: a placeholder stands in the record of the send
    trace = (result.run_dir / "trace.jsonl").read_text()
    report = (result.run_dir / "report.md").read_text()
    leaks = {
        "prompts": [p for p in seen if SMTP_PW in p][:1],
        "trace": sorted({json.loads(line)["kind"] for line in trace.splitlines() if SMTP_PW in line}),
        "report": [line for line in report.splitlines() if SMTP_PW in line],
        "result": SMTP_PW in result.model_dump_json(),
    }
    assert not any(leaks.values()), leaks
    verifier_prompts = [p for p in seen if "Source " in p and "smtp_password=" in p]
    assert verifier_prompts and f"smtp_password={HIDDEN}" in verifier_prompts[-1]
    finished = [json.loads(line) for line in trace.splitlines() if json.loads(line)["kind"] == "run_finished"]
    assert f"smtp_password={HIDDEN}" in finished[-1]["changed"], finished


# ---- a durable job: the intent log keeps the send as approved; the facts read it redacted -------


def test_the_facts_read_a_jobs_intent_rows_through_the_runs_redaction(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A send whose answer never came is counted from the job's intent log (real SQLite job store,
    signed sends): the row holds the page's password as the person approved it; the facts the
    verifier, the report and the answer read (``RunContext.facts``) show the placeholder."""
    from test_adversarial_outcomes_accounts import durable_leg, later, send

    from taskcrew.approvals.authority import Authority
    from taskcrew.crew.outcome import gather
    from taskcrew.jobs import Jobs
    from taskcrew.tools.intents import SendOutcome
    from taskcrew.tools.readback import ReadBackRules

    vault = Vault({"ERP_PASSWORD": SECRET})
    vault.note_guess(SMTP_PW, by_page=True)  # as the page view registered it when it met the box
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    try:
        authority = Authority(jobs)
        job = jobs.submit("Save the mail settings", submitted_by="ana", enqueue=False)
        leg = durable_leg(jobs, authority, job.id, ReadBackRules())
        fields = [("smtp_host", "mail.acme.test"), ("smtp_password", SMTP_PW)]
        send(leg, "http://intranet.test/smtp", fields, SendOutcome(detail="no answer", seen="unknown"))
        assert any(SMTP_PW in f.value for i in jobs.intents(job.id) for f in i.payload.fields)  # as approved
        facts = gather([], durable_leg(jobs, authority, job.id, ReadBackRules()), later(), vault.redact)
    finally:
        jobs.close()
    said = f"{facts.record()}\n{facts.changed_line()}"
    assert facts.submissions and SMTP_PW not in said and f"smtp_password={HIDDEN}" in said, said
