"""A run's hidden values, leg by leg and number by number (s46).

1. A durable job's resumed leg showed an earlier leg's page password in clear: the leg that met the
   password box hid its value, but the run of the next leg starts with a vault of its own, and it
   read the send again from the job's intent rows (as approved) into its facts, the verifier's
   prompt, report.md and the trace. Now every leg starts knowing the values its job's approval
   requests show in password boxes (``jobs.runner.hide_approved``).
2. A page value the task names is the model's already and is not hidden — but "named" was any
   substring of the task: a hidden "5501" was readable because the task said "INV-5501". Now it
   must stand as a whole token (``vault.named_in``).
3. A page value the model re-typed became a guess, and the next page value got the number of
   another one (two different amounts read alike). Now a number is never given twice in a run.

Real Chromium, real HTTP sites, the demo ERP, the real worker legs and job store; only the models
are scripted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_adversarial import SECRET, Server, serve
from fixtures_browser import SessionFactory
from fixtures_eval import scripted_workplace

from taskcrew.approvals.authority import PASSWORD_BOX, Authority
from taskcrew.approvals.identity import Identity
from taskcrew.crew.evidence import SENDS_SOURCE
from taskcrew.crew.models import Plan, PlanStep
from taskcrew.crew.scripted import Loop, ScriptedCall, ScriptedLLM
from taskcrew.eval import kit
from taskcrew.jobs import JobOptions, Jobs
from taskcrew.jobs.runner import LegRunner
from taskcrew.tools.browser import Type
from taskcrew.tools.vault import Vault

pytestmark = pytest.mark.browser

SMTP_PW = "Smtp-Hunter2-q9Zx"
HIDDEN = "{{secret:PAGE_PASSWORD_1}}"
INV, AMOUNT, FEE, OTHER = "INV-5501", "1250.00", "250.00", "98765.43"


def _boxes(*values: str) -> str:
    """Password boxes out of sight, holding ``values`` (never in the page's text)."""
    boxes = "".join(f"<input type=password value='{v}'>" for v in values)
    return f"<div style='position:absolute;left:-9999px'>{boxes}</div>"


PAGES = {
    "/settings": "<title>Mail settings</title><h1>Mail settings</h1><form method=post action=/smtp>"
    "<label>SMTP host <input name=smtp_host value=mail.acme.test></label>"
    f"<label>SMTP password <input type=password name=smtp_password value='{SMTP_PW}'></label>"
    "<button>Save settings</button></form>",
    "/smtp": "<title>Saved</title><h1>Settings saved</h1>",
    "/note": "<title>Notes</title><h1>Leave a note</h1><form method=post action=/noted>"
    "<label>Note <input name=note value='mail settings checked'></label><button>Save note</button></form>",
    "/noted": "<title>Noted</title><h1>Note saved</h1>",
    # hidden values: two amounts, then (after the model typed one of them) a third
    "/first": "<title>News</title><h1>News</h1><p>Nothing new.</p>" + _boxes(AMOUNT, FEE),
    "/login": "<title>Sign in</title><h1>Sign in</h1><form method=post action=/in>"
    "<label>Code <input type=password name=code></label><button>Go</button></form>",
    "/second": "<title>More news</title><h1>More news</h1><p>Still nothing.</p>" + _boxes(OTHER),
    "/amounts": f"<title>Amounts</title><h1>Amounts</h1><p>Fee {FEE} USD; other {OTHER} USD.</p>",
    # the task names INV-5501 and 1250.00; the page hides 5501 and 1250.00
    "/parts": "<title>Parts</title><h1>Parts</h1><p>Nothing new.</p>" + _boxes("5501", AMOUNT),
    "/bill": f"<title>Bill</title><h1>Bill {INV}</h1><p>Ref 5501; total {AMOUNT} USD.</p>",
}


@pytest.fixture(scope="module")
def site() -> Iterator[Server]:
    yield from serve(PAGES)


# ---- 3: one value, one number ---------------------------------------------------------------------


def test_a_page_value_the_model_typed_does_not_give_its_number_to_the_next_value(
    make_session: SessionFactory, site: Server
) -> None:
    """The page hides 1250.00 (_1) and 250.00 (_2); the model types 1250.00 into a password box (a
    guess from then on); the next page hides 98765.43: it reads _3, never _2 like 250.00."""
    vault = Vault({"ERP_PASSWORD": SECRET}).for_run()
    session = make_session(base_url=site.url, vault=vault)
    session.goto(site.url + "/first")
    assert vault.redact(f"{AMOUNT} {FEE}") == HIDDEN + " {{secret:PAGE_PASSWORD_2}}"
    obs = session.goto(site.url + "/login").observation
    code = next(e.index for e in obs.elements if e.name == "Code")
    assert session.act([Type(index=code, text=AMOUNT)]).ok
    session.goto(site.url + "/second")
    shown = session.goto(site.url + "/amounts").observation.text
    assert "Fee {{secret:PAGE_PASSWORD_2}} USD; other {{secret:PAGE_PASSWORD_3}} USD." in shown, shown
    # code that compares reads each number back as its own value
    assert vault.reveal(shown).count(FEE) == 1 and OTHER in vault.reveal(shown)


def test_a_number_is_never_given_twice_in_a_run() -> None:
    run = Vault({"ERP_PASSWORD": SECRET}).for_run()
    for value in ("first-value-1", "second-value-2"):
        run.note_guess(value, by_page=True)
    run.note_guess("first-value-1")  # the model typed it
    run.note_guess("third-value-3", by_page=True)
    run.note_guess("second-value-2", by_page=True)  # met again: the same number
    assert run.redact("second-value-2 third-value-3 first-value-1") == (
        "{{secret:PAGE_PASSWORD_2}} {{secret:PAGE_PASSWORD_3}} {{secret:TYPED_SECRET}}"
    )
    assert run.for_run().redact("third-value-3") == "third-value-3"  # another run numbers its own


# ---- 2: named by the task means a whole token -----------------------------------------------------


def test_a_part_of_a_word_or_number_of_the_task_is_not_named_by_it(
    make_session: SessionFactory, site: Server
) -> None:
    vault = Vault({"ERP_PASSWORD": SECRET}).for_run()
    vault.know(f"Pay bill {INV} (total {AMOUNT}).")
    session = make_session(base_url=site.url, vault=vault)
    session.goto(site.url + "/parts")
    text = session.goto(site.url + "/bill").observation.text
    # 5501 only sits inside the task's INV-5501: hidden (wherever it shows); 1250.00 is named
    assert f"Ref {HIDDEN}; total {AMOUNT} USD." in text, text
    assert "PAGE_PASSWORD_2" not in text


def test_a_page_value_met_before_the_task_was_known_is_not_hidden_once_the_task_names_it() -> None:
    run = Vault({"ERP_PASSWORD": SECRET}).for_run()
    run.note_guess(AMOUNT, by_page=True)
    run.note_guess(OTHER, by_page=True)
    run.know(f"Pay {AMOUNT} USD.")
    assert run.redact(f"{AMOUNT} {OTHER}") == f"{AMOUNT} {{{{secret:PAGE_PASSWORD_2}}}}"
    run.note_guess("4321.09", by_page=True)
    assert run.redact("4321.09") == "{{secret:PAGE_PASSWORD_3}}"


# ---- 1: every leg of a durable job ----------------------------------------------------------------

TASK = "Save the intranet's mail settings, then leave a note that they were checked."
PLAN = Plan(
    goal="Save the mail settings and leave a note",
    # one the gate's record of sends meets (it shows what the run sent, never what a system holds):
    # the record the verifier quotes is the one that must show the password as a placeholder
    success_criteria=["Nothing else was changed"],
    steps=[
        PlanStep(role="browser_operator", title="Save the mail settings", instructions="Save them."),
        PlanStep(role="browser_operator", title="Leave the note", instructions="Save the note."),
    ],
    changes_data=True,
)
FORMS = {"Save the mail settings": ("/settings", "/smtp"), "Leave the note": ("/note", "/noted")}


def _models(seen: list[str]) -> Any:
    """The worker opens its step's form and submits it; the verifier quotes the note's send."""

    def worker(call: ScriptedCall) -> Any:
        seen.append(call.prompt)
        page, action = FORMS[kit.step_title(call)]
        done = sum(1 for m in call.messages if m.get("role") == "tool")
        if done == 0:
            return kit.navigate(kit.intranet(call) + page)
        if done == 1:
            return kit.act({"action": "click", "index": call.element(rf"submits form POST {action}")})
        return kit.report("done", "Saved.")

    def verifier(call: ScriptedCall) -> Any:
        seen.append(call.prompt)
        line = next(ln.strip() for ln in call.prompt.splitlines() if "/noted" in ln and "note=" in ln)
        return kit.verdict([(PLAN.success_criteria[0], True, SENDS_SOURCE, line)], "the note was sent")

    models = {
        "w": ScriptedLLM(
            {
                "planner": [PLAN.model_dump_json()] * 2,
                "browser_operator": [Loop(policy=worker)] * 6,
                "reflector": ['{"facts": []}'] * 3,
            },
            model="scripted/w",
        ),
        "v": ScriptedLLM({"verifier": [Loop(policy=verifier)] * 2}, model="scripted/v"),
    }
    return models.__getitem__


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console_users: Path) -> Iterator[dict[str, Any]]:
    """A job store and an approvals home; ana, bob and carol can log in (two people where flagged)."""
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(tmp_path / "approvals"))
    monkeypatch.setenv("TASKCREW_CONSOLE_USERS", str(console_users))
    monkeypatch.delenv("TASKCREW_TOKEN", raising=False)
    jobs = Jobs.open(url)
    yield {"jobs": jobs, "authority": Authority(jobs, users_file=console_users)}
    jobs.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_resumed_leg_hides_the_page_password_an_earlier_leg_met(
    env: dict[str, Any], site: Server, tmp_path_factory: pytest.TempPathFactory, eval_knowledge_seed: Path
) -> None:
    """Leg 1 parks on the settings (the page's password flagged); leg 2 sends them and parks on the
    note; leg 3 never opens the settings page, sends the note and reads both sends for its facts,
    its verifier, report and trace: the password shows as a placeholder there too."""
    jobs, authority = env["jobs"], env["authority"]
    seen: list[str] = []
    folder = tmp_path_factory.mktemp("legs-place")
    with scripted_workplace(folder, eval_knowledge_seed, intranet_url=site.url) as place:
        runner = LegRunner(jobs, place, "w1", scripted=lambda job: _models(seen))

        def leg(job_id: str) -> str:
            return runner.run_leg(job_id, jobs.leg(job_id))

        def approve(job_id: str) -> Any:
            [asked] = jobs.approvals("pending", job_id=job_id)
            for who in (Identity(name="bob", proof="token"), Identity(name="carol", proof="console")):
                if authority.decide(asked.id, "approve", who).status == "decided":
                    break
            return asked

        options = JobOptions(worker_model="scripted/w", verifier_model="scripted/v")
        job = jobs.submit(TASK, submitted_by="ana", submitted_proof="token", options=options)
        assert leg(job.id) == "waiting"
        settings = approve(job.id)
        boxed = {f.name: f for f in settings.request.fields}["smtp_password"]
        assert boxed.value == SMTP_PW and PASSWORD_BOX in (boxed.note or "")  # the approver reads it
        assert leg(job.id) == "waiting", jobs.get(job.id).reason
        assert SMTP_PW in site.posts()[-1].body.decode()  # sent as approved
        approve(job.id)
        leg3, hits = len(seen), len(site.hits)
        assert leg(job.id) == "finished", jobs.get(job.id).reason
    done = jobs.get(job.id)
    assert (done.status, done.outcome) == ("finished", "done"), done.reason
    assert [h.path for h in site.hits[hits:] if h.path.startswith("/settings")] == []  # never reopened
    run_dir = Path(str(done.run_dir))
    trace, report = (run_dir / "trace.jsonl").read_text(), (run_dir / "report.md").read_text()
    leaks = {
        "prompts": [p for p in seen[leg3:] if SMTP_PW in p][:1],
        "trace": sorted({json.loads(ln)["kind"] for ln in trace.splitlines() if SMTP_PW in ln}),
        "report": [ln for ln in report.splitlines() if SMTP_PW in ln],
        "answer": SMTP_PW in (done.answer or ""),
    }
    assert not any(leaks.values()), leaks
    verifier = [p for p in seen[leg3:] if "smtp_password=" in p]
    assert verifier and f"smtp_password={HIDDEN}" in verifier[-1]
    finished = [json.loads(ln) for ln in trace.splitlines() if json.loads(ln)["kind"] == "run_finished"]
    assert f"smtp_password={HIDDEN}" in finished[-1]["changed"], finished  # the send, as a placeholder
    assert f"smtp_password={HIDDEN}" in (done.answer or "") + done.reason
