"""The browser-operator's eyes and hands: a Playwright session with perception, batched actions,
the policy gate and the secrets vault. Importing this package does not import Playwright or crewai.

    from taskcrew.tools.browser import BrowserSession, Click, Type
"""

from taskcrew.tools.browser.config import BrowserConfig
from taskcrew.tools.browser.models import (
    Action,
    ActionOutcome,
    ActionResult,
    Back,
    Change,
    Click,
    DismissModal,
    Drag,
    Element,
    FieldInfo,
    FormTarget,
    Hover,
    Navigate,
    Observation,
    Obstacle,
    Press,
    Screenshot,
    Scroll,
    Select,
    SelectOption,
    SelectText,
    SetChecked,
    SkippedAction,
    Type,
    Wait,
)
from taskcrew.tools.browser.runtime import BrowserError, BrowserNotFoundError, BrowserRuntime
from taskcrew.tools.browser.session import BrowserSession

__all__ = [
    "Action",
    "ActionOutcome",
    "ActionResult",
    "Back",
    "BrowserConfig",
    "BrowserError",
    "BrowserNotFoundError",
    "BrowserRuntime",
    "BrowserSession",
    "Change",
    "Click",
    "DismissModal",
    "Drag",
    "Element",
    "FieldInfo",
    "FormTarget",
    "Hover",
    "Navigate",
    "Observation",
    "Obstacle",
    "Press",
    "Screenshot",
    "Scroll",
    "Select",
    "SelectOption",
    "SelectText",
    "SetChecked",
    "SkippedAction",
    "Type",
    "Wait",
]
