"""Adversarial cases that need no browser: redaction of every encoding, no guess oracle, the
verifier's made-up evidence, a login recognised by URL only, the sandbox's vetting of deep nesting."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote, quote_plus

import pytest
from fixtures_adversarial import SECRET, RejectingHuman, leaks, serve

from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, Verdict
from taskcrew.crew.steps import check_verdict
from taskcrew.tools.human import ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig, Submission
from taskcrew.tools.research import sandbox_policy
from taskcrew.tools.research.web import WebFetcher
from taskcrew.tools.vault import Vault

ERP = "http://127.0.0.1:8800"
RAW = SECRET.encode()
FORMS = {
    "plain": SECRET,
    "percent": quote(SECRET, safe=""),
    "percent-tilde": quote(SECRET, safe="~"),
    "percent-lower": re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quote(SECRET, safe="")),
    "form-plus": quote_plus(SECRET, safe=""),
    "html": html.escape(SECRET),
    "html-decimal": "".join(f"&#{ord(c)};" for c in SECRET),
    "html-hex-mixed": "".join(f"&#x{ord(c):X};" if i % 2 else c for i, c in enumerate(SECRET)),
    "json": json.dumps(SECRET)[1:-1],
    "json-ascii": json.dumps(SECRET)[1:-1].replace("&", "\\u0026"),
    "base64": base64.b64encode(RAW).decode(),
    "base64-basic-auth": base64.b64encode(b"demo:" + RAW).decode(),
    "base64-url": base64.urlsafe_b64encode(b"xy" + RAW + b"z").decode(),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_encoding_of_the_secret_is_redacted(form: str) -> None:
    vault = Vault({"ERP_PASSWORD": SECRET})
    text = f"GET /search?q={FORMS[form]}&x=1 and more"
    shown = vault.redact(text)
    assert "{{secret:ERP_PASSWORD}}" in shown
    assert not leaks(shown)


def test_a_guess_renders_like_the_secret() -> None:
    vault = Vault({"ERP_PASSWORD": SECRET})
    vault.note_guess("wrong-guess")
    vault.note_guess(SECRET)
    assert vault.redact("echo wrong-guess") == vault.redact(f"echo {SECRET}")


def _verdict(observed: str) -> Verdict:
    check = CriterionCheck(criterion="c", met=True, source=f"{ERP}/bills", observed=observed)
    return Verdict(verified=True, checks=[check], reason="ok")


PLAN = Plan(
    goal="Count the bills",
    changes_data=False,
    success_criteria=["c"],
    steps=[PlanStep(role="browser_operator", title="Look", instructions="Look it up.")],
)


def test_a_made_up_row_is_rejected_and_a_seen_one_accepted() -> None:
    seen = {f"{ERP}/bills"}
    texts = {f"{ERP}/bills": ["| [3] BILL-0004 | Northwind Traders | 1,284.50 | USD | unpaid |"]}
    fake = check_verdict(_verdict('the list shows "BILL-9999 Attacker 99999.00 paid"'), PLAN, seen, texts)
    real = check_verdict(_verdict('the list shows "BILL-0004 Northwind Traders 1,284.50"'), PLAN, seen, texts)
    assert not fake.verified and "never saw" in fake.checks[0].observed
    assert real.verified


def test_a_quote_from_a_page_the_verifier_did_not_open_now_is_rejected() -> None:
    texts = {f"{ERP}/vendors": ["BILL-0004 Northwind Traders"]}  # seen, but at another page
    verdict = check_verdict(
        _verdict('"BILL-0004 Northwind Traders"'), PLAN, {f"{ERP}/bills", f"{ERP}/vendors"}, texts
    )
    assert not verdict.verified


@pytest.mark.parametrize("read_only", [True, False])
def test_a_form_shaped_like_a_login_is_not_a_login(read_only: bool) -> None:
    human = ScriptedHuman()  # would fail if asked in read-only mode
    policy = Policy(PolicyConfig.for_url(ERP, read_only=read_only), human)
    sub = Submission(origin="form", method="POST", url=f"{ERP}/transfer", login_form=True)
    if read_only:
        assert policy.submission(sub).outcome == "read_only_refused"
    else:
        with pytest.raises(AssertionError):  # asked about, like every write
            policy.submission(sub)
    assert policy.submission(sub.model_copy(update={"url": f"{ERP}/login"})).outcome == "allowed"


def test_a_site_marked_get_is_gated_like_a_write() -> None:
    policy = Policy(
        PolicyConfig.for_url(ERP, read_only=True, changing_get_paths=["/logout"]), ScriptedHuman()
    )
    assert policy.request("GET", f"{ERP}/logout").outcome == "read_only_refused"
    assert policy.request("GET", f"{ERP}/bills").outcome == "allowed"


@pytest.mark.parametrize(
    "code",
    [
        "x = " + "-" * 5000 + "1",
        "x = " + " + ".join(["1"] * 2000),
        "f(" * 400 + ")" * 400,
        "x = " + "[" * 99 + "]" * 99,
        "if 1:\n" + "".join(" " * i + "if 1:\n" for i in range(1, 120)) + " " * 120 + "pass",
    ],
)
def test_deep_nesting_is_a_clean_refusal(code: str) -> None:
    try:
        sandbox_policy.compile_vetted(sandbox_policy.vet(code))
    except sandbox_policy.SandboxViolation as exc:
        assert "nested too deeply" in str(exc)
    except SyntaxError:
        pass  # the parser's own limit: also a clean, reported refusal


def test_the_web_fetch_tool_reads_only_what_code_may_read() -> None:
    """The research tool's fetcher (real HTTP) opens neither a GET the site marks as changing data
    nor a blocked path, directly or behind an allowed redirect: the policy's one rule for reads."""
    for site in serve({"/ok": "<title>ok</title><p>fine</p>"}):
        config = PolicyConfig(
            allowed_hosts=[site.url.removeprefix("http://")], changing_get_paths=["/logout"]
        )
        policy = Policy(config, RejectingHuman())
        fetcher = WebFetcher(policy.read_refusal)
        for url in (f"{site.url}/logout", f"{site.url}/r?to=/logout", f"{site.url}/r?to=/_debug/state"):
            assert not fetcher.fetch(url).ok, url
        assert fetcher.fetch(site.url + "/ok").ok
        assert [h.path for h in site.hits] == ["/r?to=/logout", "/r?to=/_debug/state", "/ok"]
        assert sum(d.outcome == "blocked" for d in policy.decisions) == 3
