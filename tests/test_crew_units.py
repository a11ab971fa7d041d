"""Unit tests of the crew's plain parts: model specs, prompt compaction, role texts, verdict checks."""

from __future__ import annotations

import pytest

from taskcrew.crew.compaction import compact_messages, message_chars
from taskcrew.crew.models import CriterionCheck, Plan, PlanStep, StepReport, Verdict
from taskcrew.crew.modelspec import ModelConfigError, ModelSpec, choose_models, cost_of, load_prices
from taskcrew.crew.runner import extract_json, parse_answer
from taskcrew.crew.steps import check_verdict
from taskcrew.roles import load_roles


def test_model_specs_parse_every_provider_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert ModelSpec.parse("anthropic/claude-sonnet-4-5").provider == "anthropic"
    assert ModelSpec.parse("openai/gpt-4o").name == "gpt-4o"
    assert ModelSpec.parse("ollama/llama3.1").base_url == "http://localhost:11434/v1"
    compat = ModelSpec.parse("qwen2.5@http://127.0.0.1:8000/v1/")
    assert (compat.provider, compat.name, compat.base_url) == (
        "compat",
        "qwen2.5",
        "http://127.0.0.1:8000/v1",
    )
    with pytest.raises(ModelConfigError, match="no provider"):
        ModelSpec.parse("gpt-4o")
    with pytest.raises(ModelConfigError, match="unknown provider"):
        ModelSpec.parse("mistral/large")


def test_no_model_configured_names_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKCREW_MODEL", raising=False)
    with pytest.raises(ModelConfigError, match="TASKCREW_MODEL"):
        choose_models(None, None)
    with pytest.raises(ModelConfigError, match="TASKCREW_VERIFIER_MODEL"):
        choose_models("openai/gpt-4o", None)
    with pytest.raises(ModelConfigError, match="different model"):
        choose_models("openai/gpt-4o", "openai/gpt-4o")
    assert choose_models("openai/gpt-4o", "openai/gpt-4o", allow_same=True).verifier.name == "gpt-4o"


def test_missing_api_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskcrew.crew.llm import build_provider_llm

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        build_provider_llm(ModelSpec.parse("anthropic/claude-sonnet-4-5"))


def test_prices_compute_cost_and_unknown_models_are_unknown() -> None:
    prices = load_prices()
    cost = cost_of(ModelSpec.parse("openai/gpt-4o"), 1_000_000, 100_000, prices)
    assert cost is not None and float(cost) == pytest.approx(3.5)
    assert cost_of(ModelSpec.parse("openai/some-new-model"), 10, 10, prices) is None
    assert cost_of(ModelSpec.parse("scripted/x"), 10, 10, prices) == 0


def _exchange(i: int, size: int) -> list[dict[str, object]]:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "browser_act", "arguments": f'{{"n": {i}}}'},
    }
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"observation {i}\n" + "x" * size},
    ]


def test_compaction_keeps_prompt_flat_as_the_history_grows() -> None:
    head = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    sizes = []
    for n in (2, 10, 30, 60):
        history = head + [m for i in range(n) for m in _exchange(i, 3000)]
        sent, compacted = compact_messages(history, budget=3000)
        sizes.append(message_chars(sent))
        assert sent[-1]["content"].startswith(f"observation {n - 1}")  # latest in full
        assert len(sent[-1]["content"]) > 3000
        assert compacted >= n - 1
    assert max(sizes) < 3000 * 3  # the latest page in full, older pages by their gist
    assert sizes[-1] == sizes[-2]  # 30 or 60 exchanges: the same size


def test_compaction_keeps_tool_results_with_their_calls() -> None:
    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}]
    history += [m for i in range(20) for m in _exchange(i, 10)]
    sent, _ = compact_messages(history, window=5)
    ids = set()
    for message in sent:
        for call in message.get("tool_calls") or []:
            ids.add(call["id"])
        if message["role"] == "tool":
            assert message["tool_call_id"] in ids


def test_role_texts_load_and_mention_no_task_specifics() -> None:
    roles = load_roles()
    text = " ".join(
        [a.role + a.goal + a.backstory for a in roles.agents.values()]
        + [t.description + t.expected_output for t in roles.tasks.values()]
    ).lower()
    for word in ("invoice", "northwind", "erp", "acme", "bill", "vendor"):
        assert word not in text, word
    description, expected = roles.render(
        "verify",
        claim="c",
        task="{not a placeholder}",
        criteria="- x",
        worker_summary="w",
        environment="e",
        procedures="- p",
        changes="(none)",
    )
    assert "{not a placeholder}" in description and '"verified"' in expected
    with pytest.raises(KeyError):
        roles.render("verify", claim="c")


def test_answers_are_parsed_from_fences_and_prose() -> None:
    assert extract_json('Sure!\n```json\n{"a": 1}\n```') == '{"a": 1}'
    assert extract_json('The result: {"a": {"b": 2}} done') == '{"a": {"b": 2}}'
    report = parse_answer('{"status": "done", "summary": "ok", "data": {"amount": 1284.5}}', StepReport)
    assert report.data == {"amount": "1284.5"}
    with pytest.raises(ValueError):
        extract_json("no json here")


def _plan(criteria: int) -> Plan:
    return Plan(
        goal="the goal",
        success_criteria=[f"criterion {i}" for i in range(criteria)],
        steps=[PlanStep(role="file_reader", title="read", instructions="read it")],
        changes_data=False,
    )


def test_verdict_must_cite_sources_the_verifier_opened() -> None:
    verdict = Verdict(
        verified=True,
        checks=[
            CriterionCheck(
                criterion="criterion 0", met=True, source="http://127.0.0.1:8800/bills?x=1", observed="a"
            ),
            CriterionCheck(criterion="criterion 1", met=True, source="inbox/a.pdf", observed="b"),
        ],
        reason="all good",
    )
    seen = {"http://127.0.0.1:8800/bills", "inbox/a.pdf"}
    assert check_verdict(verdict, _plan(2), seen).verified
    unseen = check_verdict(verdict, _plan(2), {"http://127.0.0.1:8800/bills"})
    assert not unseen.verified and "was not opened" in unseen.checks[1].observed
    too_few = check_verdict(verdict, _plan(3), seen)
    assert not too_few.verified and "only 2 of 3" in too_few.reason


def test_citations_are_checked_against_the_source_text() -> None:
    from taskcrew.crew.citations import check_citations
    from taskcrew.crew.models import Citation

    texts = {"a.eml": "We issued credit\n memo “CN-104” for $150.00.", "http://intranet/x": None}
    results = check_citations(
        [
            Citation(source="a.eml", quote='issued credit memo "CN-104"'),
            Citation(source="a.eml", quote="credit memo CN-105"),
            Citation(source="http://intranet/x", quote="anything"),
        ],
        texts.get,
    )
    assert [r.status for r in results] == ["found", "not_found", "unchecked"]


def test_the_reflector_sees_whole_summaries_within_a_budget_never_cut_mid_word() -> None:
    from taskcrew.crew.models import RunState, StepRecord, StepReport
    from taskcrew.crew.steps import reflection_trail

    recovery = (
        "The first save bounced to the login page because the session had expired; I logged in again, "
        "re-entered every field and saved; the second save answered 503, so I waited and saved again, "
        "and the bill was saved as BILL-0011 after the third attempt. Then the bills list showed "
        "BILL-0011 with the expected amount and due date."
    )
    assert len(recovery) > 300
    state = RunState(
        steps_done=[
            StepRecord(
                index=0, role="file_reader", title="read", report=StepReport(status="done", summary=recovery)
            ),
            StepRecord(
                index=1,
                role="browser_operator",
                title="enter",
                report=StepReport(status="done", summary=recovery),
            ),
        ]
    )
    whole = reflection_trail(state)
    assert whole.count(recovery) == 2  # 300 characters each: whole, not cut at 300
    tight = reflection_trail(state, budget=600)
    first, last = tight.splitlines()
    assert last.endswith(recovery) and len(tight) <= 620  # the latest (the recovery) stays whole
    assert first.endswith(" …") and first[:-2].split()[-1] in recovery.split()  # cut between words


def test_an_approvals_provenance_finds_a_chosen_options_label_in_the_steps_and_the_request() -> None:
    from taskcrew.crew.models import StepReport
    from taskcrew.crew.provenance import value_origin

    reader = StepReport(
        status="done",
        summary="The newest invoice from Globex Corp is GX-7781.",
        data={"vendor": "Globex Corp"},
    )
    reports = [(1, "file_reader", reader)]
    assert value_origin("3 (Globex Corp)", reports, lambda s: None, label="Globex Corp") == (
        "step 1 (file_reader) reported it as 'vendor' — as 'Globex Corp'"
    )
    told = StepReport(status="done", summary="Entered the bill for Northwind Traders.")
    assert "named it in its summary" in value_origin(
        "1 (Northwind Traders)", [(2, "browser_operator", told)], lambda s: None, label="Northwind Traders"
    )
    asked = value_origin(
        "1 (Northwind Traders)",
        [],
        lambda s: None,
        request="Enter Northwind Traders' invoice",
        label="Northwind Traders",
    )
    assert asked == "your request names it — as 'Northwind Traders'"
    assert value_origin("9,999.00", reports, lambda s: None).startswith("not found in any source")
    # a typed value shaped like "X (Y)" is looked for whole: its bracket is no option's label
    typed = value_origin("Initrode (Globex Corp)", reports, lambda s: None)
    assert typed.startswith("not found in any source"), typed


def test_an_approvals_provenance_names_a_cited_source_only_when_code_read_the_value_there() -> None:
    """A step that cites a source code cannot read (a made-up "vendor master data", a tool's
    name, an empty file) is not named as the value's origin: the approver is told it is the
    model's word. A file that shows the value is named with its line."""
    from taskcrew.approvals.origins import parse_source
    from taskcrew.crew.models import Citation, StepReport
    from taskcrew.crew.provenance import value_origin

    iban = "GB33BUKB20201555555555"
    files = {"memo.eml": f"From: billing\nPay to IBAN {iban}\n", "empty.eml": "", "other.eml": "nothing\n"}
    for cited in ("Acme vendor master data (ERP), Northwind record", "recall_facts", "empty.eml"):
        report = StepReport(
            status="done", summary="read it", data={"iban": iban},
            sources=[Citation(source=cited, quote=f"Northwind IBAN {iban}")],
        )  # fmt: skip
        origin = value_origin(iban, [(1, "file_reader", report)], files.get)
        assert origin.startswith("step 1 (file_reader) reported it as 'iban' — it cited "), origin
        assert ("not checked" if cited != "empty.eml" else "does not show it") in origin
        assert parse_source(origin).file is None  # the warning names no origin file
    shown = StepReport(
        status="done", summary="x", sources=[Citation(source="memo.eml", quote=f"IBAN {iban}")]
    )
    origin = value_origin(iban, [(1, "file_reader", shown)], files.get)
    assert origin == "memo.eml, line 2 (cited in step 1)" and parse_source(origin).line == 2
    lied = StepReport(
        status="done", summary="x", sources=[Citation(source="other.eml", quote=f"IBAN {iban}")]
    )
    origin = value_origin(iban, [(1, "file_reader", lied)], files.get)
    assert origin.startswith("not found") and "other.eml does not show it" in origin


def test_a_scripted_model_answers_at_the_pace_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskcrew.crew import scripted
    from taskcrew.crew.llm import count_tokens
    from taskcrew.crew.scripted import PACE_ENV, Pace, ScriptedLLM

    waits: list[float] = []
    monkeypatch.setattr(scripted.time, "sleep", waits.append)
    monkeypatch.delenv(PACE_ENV, raising=False)
    llm = ScriptedLLM(["first answer", "second answer"])
    assert llm.call("a question") == "first answer" and waits == []  # tests answer at once
    monkeypatch.setenv(PACE_ENV, "0.5, 1000, 10")
    assert llm.call("a question " * 100) == "second answer"
    expected = 0.5 + count_tokens("a question " * 100) / 1000 + count_tokens("second answer") / 10
    assert waits == [pytest.approx(expected)]
    monkeypatch.setenv(PACE_ENV, "fast")
    with pytest.raises(ValueError, match="three numbers"):
        Pace.from_env()
    monkeypatch.setenv(PACE_ENV, "0.5,0,10")
    with pytest.raises(ValueError):
        Pace.from_env()
