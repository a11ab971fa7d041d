"""The Chromium features taskcrew switches off, merged with Playwright's own (one switch)."""

from __future__ import annotations

import pytest

from taskcrew.tools.browser import BrowserConfig
from taskcrew.tools.browser.features import OURS, SWITCH, parse_disabled, playwright_disabled
from taskcrew.tools.browser.runtime import BrowserRuntime, plan_launch

SOURCE = """
    disabledFeatures = [
      // See https://github.com/microsoft/playwright/issues/14047 ("quoted" in a comment)
      "AvoidUnnecessaryBeforeUnloadCheckSync",
      "PaintHolding",
    ].filter(Boolean);
"""


def test_playwrights_list_is_read_from_its_source() -> None:
    assert parse_disabled(SOURCE) == ["AvoidUnnecessaryBeforeUnloadCheckSync", "PaintHolding"]


@pytest.mark.parametrize(
    "source",
    [
        'disabledFeatures = ["PaintHolding", process.env.X ? "" : "Translate"].filter(Boolean);',
        'disabledFeatures = ["PaintHolding", ...more].filter(Boolean);',
        'disabledFeatures = ["Paint Holding"].filter(Boolean);',
        "disabledFeatures = [].filter(Boolean);",
        "disabledFeatures = ['PaintHolding'].filter(Boolean);",  # quoted otherwise than esbuild does
        # Playwright 1.5x's shape: a function of the assistant mode, one name chosen at run time
        'disabledFeatures = (assistantMode) => [\n  "PaintHolding",\n'
        '  assistantMode ? "AutomationControlled" : ""\n].filter(Boolean);',
        "no such list here",
    ],
)
def test_a_list_that_is_not_plain_names_is_not_guessed(source: str) -> None:
    assert parse_disabled(source) is None


def test_the_plan_replaces_playwrights_switch_with_one_holding_both_lists() -> None:
    theirs = playwright_disabled()
    assert theirs, "the installed Playwright's disabled features could not be read"
    plan = plan_launch(BrowserConfig(), playwright_build=False)
    [switch] = [a for a in plan.args if a.startswith(SWITCH)]
    assert switch.removeprefix(SWITCH).split(",") == [*theirs, *OURS]
    assert plan.ignore_default_args == [SWITCH + ",".join(theirs)]


def test_a_users_own_disable_features_is_kept_in_the_one_switch() -> None:
    theirs = playwright_disabled() or ()
    extra = ["--disable-features=Translate,PaintHolding", "--mute-audio", "--disable-features=Foo"]
    plan = plan_launch(BrowserConfig(extra_args=extra), playwright_build=False)
    [switch] = [a for a in plan.args if a.startswith(SWITCH)]
    named = switch.removeprefix(SWITCH).split(",")
    assert {*theirs, *OURS, "Translate", "PaintHolding", "Foo"} == set(named) and len(named) == len(
        set(named)
    )
    assert "--mute-audio" in plan.args


@pytest.mark.browser
def test_the_launched_chromium_has_one_switch_and_no_omnibox_popups() -> None:
    with BrowserRuntime(BrowserConfig()) as runtime:

        def look() -> tuple[list[str], list[str]]:
            context = runtime.browser.new_context()
            try:
                page = context.new_page()
                page.goto("chrome://version")
                argv = page.inner_text("#command_line").split()
                cdp = runtime.browser.new_browser_cdp_session()
                targets = cdp.send("Target.getTargets", {"filter": [{}]})["targetInfos"]
                return [t["url"] for t in targets], argv
            finally:
                context.close()

        urls, argv = runtime.call(look)
    # Playwright's own list is kept whole, with ours, in the one switch Chromium reads
    assert [a for a in argv if a.startswith(SWITCH)] == [
        SWITCH + ",".join([*(playwright_disabled() or ()), *OURS])
    ]
    assert not [u for u in urls if "omnibox" in u], urls  # ~1.35 s of CPU a context, before
