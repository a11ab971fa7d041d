"""Typed data crossing the browser boundary: observations, actions, results."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from taskcrew.tools.policy import PolicyDecision
from taskcrew.tools.submissions import SubmissionResult

RENDER_CHARS = 5600
"""Default size of a rendering: leaves room for a tool's one-line status within ToolResult's 6000."""

ElementState = Literal["interactable", "occluded", "offscreen_above", "offscreen_below", "disabled"]
ObstacleKind = Literal["captcha", "modal", "login_form"]


class SelectOption(BaseModel):
    label: str
    value: str
    selected: bool = False


class FieldInfo(BaseModel):
    """A form control's data. ``value`` is redacted: secrets show as placeholders, passwords as [filled]."""

    name: str | None = None
    type: str
    value: str | None = None
    checked: bool | None = None
    options: list[SelectOption] | None = None
    required: bool = False
    readonly: bool = False
    placeholder: str | None = None
    invalid: str | None = None
    """The page's own validation message for this field (else the browser's), when it is invalid."""
    min: str | None = None
    max: str | None = None
    step: str | None = None
    """Limits of a slider, number or date field (a step of 1 is not shown)."""


class FormTarget(BaseModel):
    """Where a submit button's form goes (after formmethod / formaction overrides)."""

    method: str
    action: str


class BoxScroll(BaseModel):
    """Where an inner scroller (a box that scrolls inside the page) is scrolled to, in CSS pixels."""

    top: int
    client: int
    height: int

    def render(self) -> str:
        return f"scroll {self.top}–{self.top + self.client} of {self.height}px"


class Element(BaseModel):
    index: int
    role: str
    tag: str
    name: str = ""
    selector: str
    """A CSS selector (shadow roots chained with ``>>``) that matched exactly one element."""
    frames: list[str] = Field(default_factory=list)
    """Selectors of the enclosing iframes, outermost first; empty for the top document."""
    state: ElementState
    occluded_by: str | None = None
    field: FieldInfo | None = None
    submits: FormTarget | None = None
    resets: bool = False
    """A reset button: it empties the form's fields."""
    href: str | None = None
    states: list[str] = Field(default_factory=list)
    """What a user sees of it: expanded/collapsed, folder, has popup, pressed, current."""
    hidden_native: bool = False
    """A native <select> hidden behind a custom widget (select works on it; clicks go to the widget)."""
    row: str | None = None
    """The key of the table row or card it belongs to (the row's first identifying cell, the card's
    heading): shown when the text around its number does not say it."""
    scroll: BoxScroll | None = None
    """Set when the element scrolls inside the page (role ``scrollable`` for a plain box)."""

    @property
    def playwright_selector(self) -> str:
        """One selector string ``page.locator()`` resolves, frames included."""
        parts = [f"{f} >> internal:control=enter-frame" for f in self.frames]
        return " >> ".join([*parts, self.selector])


class Obstacle(BaseModel):
    kind: ObstacleKind
    description: str
    index: int | None = None
    """An element that deals with it (a modal's close button, a login form's submit button)."""


class ScrollInfo(BaseModel):
    y: int = 0
    height: int = 0
    viewport: int = 0


class WindowEdge(BaseModel):
    """Page text left out of a long page's window on one side."""

    chars: int = 0
    elements: int = 0
    headings: list[str] = Field(default_factory=list)
    rows: list[str] = Field(default_factory=list)
    """The keys of the table rows / cards whose controls lie there, in page order."""


class Observation(BaseModel):
    id: int
    url: str
    title: str
    text: str
    """Visible page text (bounded, trimmed) with ``[n]`` where element n sits. Untrusted page data."""
    elements: list[Element]
    signature: str
    obstacles: list[Obstacle] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)
    """Validation errors, alerts and status messages shown on the page (untrusted page data)."""
    scroll: ScrollInfo = Field(default_factory=ScrollInfo)
    text_truncated: int = 0
    elements_omitted: int = 0
    above: WindowEdge | None = None
    """A long page is shown as a window around the viewport; what lies above it..."""
    below: WindowEdge | None = None
    """...and below it (scroll to move the window)."""
    errors: list[str] = Field(default_factory=list)
    """Parts of the page that could not be read (a frame, an element) and why."""

    def element(self, index: int) -> Element | None:
        for el in self.elements:
            if el.index == index:
                return el
        return None

    def render(self, max_chars: int = RENDER_CHARS) -> str:
        """The compact text a model sees."""
        from taskcrew.tools.browser.render import render_observation

        return render_observation(self, max_chars=max_chars)


# ---------------------------------------------------------------- actions


class _Act(BaseModel):
    model_config = {"extra": "forbid"}


class Click(_Act):
    action: Literal["click"] = "click"
    index: int


class Type(_Act):
    """Type text into a field. ``{{secret:NAME}}`` placeholders are filled in by the tool layer."""

    action: Literal["type"] = "type"
    index: int
    text: str
    clear: bool = True
    enter: bool = False


class Select(_Act):
    action: Literal["select"] = "select"
    index: int
    option: str
    """The option's visible label (or its value)."""
    mode: Literal["replace", "add", "remove"] = "replace"
    """For a multi-select: add the option to the selection or remove it from it (replace: only it)."""


class Hover(_Act):
    """Move the mouse over an element (opens hover menus and tooltips)."""

    action: Literal["hover"] = "hover"
    index: int


class Drag(_Act):
    """Drag an element onto another element, or by an offset in pixels."""

    action: Literal["drag"] = "drag"
    index: int
    to_index: int | None = None
    dx: float = 0
    dy: float = 0


class SelectText(_Act):
    """Select (highlight) ``text`` (its first occurrence) inside element ``index`` or anywhere on the
    page; with an index and no text, all of the element's text."""

    action: Literal["select_text"] = "select_text"
    index: int | None = None
    text: str | None = None


class SetChecked(_Act):
    action: Literal["check", "uncheck"]
    index: int


class Scroll(_Act):
    action: Literal["scroll"] = "scroll"
    direction: Literal["up", "down"] = "down"
    index: int | None = None
    """Scroll this element's scrollable container instead of the page."""
    pages: float = Field(default=1.0, gt=0, le=10)


class Navigate(_Act):
    action: Literal["navigate"] = "navigate"
    url: str


class Back(_Act):
    action: Literal["back"] = "back"


class Wait(_Act):
    action: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, ge=0, le=10)
    for_text: str | None = None
    """Stop waiting as soon as this text is visible on the page."""


class Press(_Act):
    action: Literal["press"] = "press"
    key: str
    """A key name such as Enter, Escape, Tab, ArrowDown, Control+A."""
    index: int | None = None


class DismissModal(_Act):
    action: Literal["dismiss_modal"] = "dismiss_modal"


Action = Annotated[
    Click
    | Type
    | Select
    | SetChecked
    | Scroll
    | Navigate
    | Back
    | Wait
    | Press
    | DismissModal
    | Hover
    | Drag
    | SelectText,
    Field(discriminator="action"),
]
ACTIONS_ADAPTER: TypeAdapter[list[Action]] = TypeAdapter(list[Action])


def describe_action(action: Action) -> str:
    match action:
        case Type(index=i, text=t, clear=c, enter=e):
            extra = ("" if c else " (append)") + (" + Enter" if e else "")
            return f"type {t!r} into [{i}]{extra}"
        case Select(index=i, option=o, mode=m):
            return f"select {o!r} in [{i}]" + ("" if m == "replace" else f" ({m})")
        case Drag(index=i, to_index=t, dx=x, dy=y):
            return f"drag [{i}] " + (f"to [{t}]" if t is not None else f"by ({x:g}, {y:g})")
        case SelectText(index=i, text=t):
            where = f" in [{i}]" if i is not None else ""
            return f"select text {t!r}{where}" if t else f"select the text of [{i}]"
        case Scroll(direction=d, index=i, pages=p):
            where = f" in [{i}]" if i is not None else ""
            return f"scroll {d} {p:g} page(s){where}"
        case Navigate(url=u):
            return f"navigate to {u}"
        case Wait(seconds=s, for_text=t):
            return f"wait for {t!r} (up to {s:g}s)" if t else f"wait {s:g}s"
        case Press(key=k, index=i):
            return f"press {k}" + (f" in [{i}]" if i is not None else "")
        case Back() | DismissModal():
            return action.action.replace("_", " ")
        case _:
            return f"{action.action} [{getattr(action, 'index', '?')}]"


# ---------------------------------------------------------------- results


class ActionOutcome(BaseModel):
    action: Action
    ok: bool
    message: str = ""


class SkippedAction(BaseModel):
    action: Action
    reason: Literal["page_changed", "earlier_failure", "stale_observation"]


class Change(BaseModel):
    url_before: str
    url_after: str
    title_before: str
    title_after: str
    signature_changed: bool

    @property
    def navigated(self) -> bool:
        return self.url_before != self.url_after


class ActionResult(BaseModel):
    ok: bool
    ran: list[ActionOutcome] = Field(default_factory=list)
    skipped: list[SkippedAction] = Field(default_factory=list)
    change: Change | None = None
    http_status: int | None = None
    """Status of the last main-document response during this call, if any."""
    errors: list[str] = Field(default_factory=list)
    dialogs: list[str] = Field(default_factory=list)
    policy: list[PolicyDecision] = Field(default_factory=list)
    submissions: list[SubmissionResult] = Field(default_factory=list)
    """Every data-changing submission this call sent, and whether the system applied it."""
    observation: Observation

    def render(self, max_chars: int = RENDER_CHARS) -> str:
        from taskcrew.tools.browser.render import render_result

        return render_result(self, max_chars=max_chars)


class Screenshot(BaseModel):
    path: str
    url: str
    title: str
