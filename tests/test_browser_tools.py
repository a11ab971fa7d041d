"""The CrewAI tools browser_observe / browser_act, called the way CrewAI calls them (worker threads)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from fixtures_browser import RecordingSite, SessionFactory

from taskcrew.tools.browser import BrowserRuntime, BrowserSession
from taskcrew.tools.human import ScriptedHuman
from taskcrew.tools.policy import Policy, PolicyConfig

pytestmark = pytest.mark.browser


def test_tools_observe_and_act_from_worker_threads(make_session: SessionFactory, site: RecordingSite) -> None:
    from crewai.utilities.agent_utils import convert_tools_to_openai_schema

    from taskcrew.tools.browser.tools import make_browser_tools

    session = make_session()
    session.goto(site.page("form.html"))
    observe, act = make_browser_tools(session)
    assert (observe.name, act.name) == ("browser_observe", "browser_act")
    schemas, _, _ = convert_tools_to_openai_schema([observe, act])
    assert "actions" in schemas[1]["function"]["parameters"]["properties"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        seen = pool.submit(observe.run).result()
        typed = pool.submit(
            act.run,
            actions=[{"action": "type", "index": 1, "text": "ACME"}, {"action": "click", "index": 12}],
        ).result()
    assert seen.startswith("Observation #") and "[8] Save order" in seen
    assert len(seen) <= observe.max_chars
    assert typed.startswith("Result: OK") and "Second page" in typed
    failed = act.run(actions=[{"action": "click", "index": 99}])
    assert failed.startswith("ERROR:") and "no element [99]" in failed
    with pytest.raises(ValueError, match="validation failed"):
        act.run(actions=[{"action": "fly", "index": 1}])


def test_read_only_tools_need_a_read_only_session(
    browser_runtime: BrowserRuntime, make_session: SessionFactory, site: RecordingSite
) -> None:
    from taskcrew.tools.browser.tools import make_browser_tools

    writer = make_session()
    with pytest.raises(ValueError, match="read-only"):
        make_browser_tools(writer, read_only=True)
    policy = Policy(PolicyConfig.for_url(site.url), ScriptedHuman()).read_only_copy()
    with BrowserSession(policy=policy, runtime=browser_runtime) as verifier:
        verifier.goto(site.page("form.html"))
        _, act = make_browser_tools(verifier, read_only=True)
        assert "read-only" in act.description
        out = act.run(
            actions=[
                {"action": "type", "index": 1, "text": "ACME"},
                {"action": "click", "index": 8},
            ]
        )
    assert out.startswith("ERROR:") and "read-only" in out
    assert not site.posts()


def test_defaulted_action_fields_are_optional_in_the_schema_the_model_gets() -> None:
    from crewai.utilities.pydantic_schema_utils import generate_model_description

    from taskcrew.tools.base import openai_parameters
    from taskcrew.tools.browser.ops import BrowserActArgs

    strict = generate_model_description(BrowserActArgs, strip_null_types=False)["json_schema"]["schema"]
    sent = openai_parameters(strict, BrowserActArgs)
    required = {v["title"]: v["required"] for v in sent["properties"]["actions"]["items"]["anyOf"]}
    assert required["Type"] == ["action", "index", "text"]  # clear, enter: optional
    assert required["Select"] == ["action", "index", "option"]  # mode
    assert required["Scroll"] == ["action"] and required["Wait"] == ["action"]  # pages, for_text
    assert sent["required"] == ["actions"]
