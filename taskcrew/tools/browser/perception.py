"""observe(): run perception.js in every frame and assemble a typed, redacted Observation.

Runs on the browser thread. The Observation holds redacted data only; the raw selectors and the
frames needed to act on an element stay in ``ElementRef`` inside the ``Snapshot``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from taskcrew.tools.browser.config import BrowserConfig
from taskcrew.tools.browser.models import (
    Element,
    ElementState,
    FieldInfo,
    FormTarget,
    Observation,
    Obstacle,
    ScrollInfo,
    SelectOption,
)
from taskcrew.tools.policy import Policy
from taskcrew.tools.vault import Vault

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page


@cache
def perception_js() -> str:
    return files("taskcrew.tools.browser").joinpath("perception.js").read_text(encoding="utf-8")


@cache
def js_function(name: str, with_element: bool = False) -> str:
    """A JS function expression calling ``name`` from perception.js (element first when acting)."""
    if with_element:
        return f"(el, args) => ({perception_js()}).{name}(el, args || {{}})"
    return f"(args) => ({perception_js()}).{name}(args || {{}})"


@dataclass
class ElementRef:
    """What the session needs to act on element ``index`` (unredacted, never shown to a model)."""

    index: int
    selector: str
    frames: list[str]
    role: str
    tag: str
    field_type: str | None
    captcha: bool = False


@dataclass
class Snapshot:
    observation: Observation
    refs: dict[int, ElementRef] = field(default_factory=dict)
    unverified: list[int] = field(default_factory=list)
    """Indices whose selector did not match exactly one element (should stay empty)."""


@dataclass
class _FrameVisit:
    frame: Frame
    chain: list[str]
    inherited: dict[str, Any] | None


def _clean_text(text: str, limit: int) -> tuple[str, int]:
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if not line or line in ("|", "-"):
            continue
        line = re.sub(r"^\|\s*", "| ", line)
        if out and out[-1] == line and not re.search(r"\[\d+\]", line):
            continue
        out.append(line)
    joined = "\n".join(out)
    if len(joined) <= limit:
        return joined, 0
    return joined[:limit].rsplit("\n", 1)[0], len(joined) - limit


class Perceiver:
    """Turns the current page into a Snapshot (Observation + refs)."""

    def __init__(self, config: BrowserConfig, policy: Policy, vault: Vault) -> None:
        self.config = config
        self.policy = policy
        self.vault = vault

    # ------------------------------------------------------------ frames
    def _frames(self, page: Page) -> list[_FrameVisit]:
        from playwright.sync_api import Error as PlaywrightError

        visits: list[_FrameVisit] = []

        def visit(frame: Frame, chain: list[str], inherited: dict[str, Any] | None) -> None:
            visits.append(_FrameVisit(frame, chain, inherited))
            for child in frame.child_frames:
                if child.is_detached() or not self.policy.check_url(child.url or "about:blank").allowed:
                    continue
                try:
                    handle = child.frame_element()
                    info = handle.evaluate(js_function("frameInfo", with_element=True))
                except PlaywrightError:
                    continue
                if not info or not info.get("visible"):
                    continue
                state = info.get("state")
                child_inherited = inherited or (info if state != "interactable" else None)
                visit(child, [*chain, info["selector"]], child_inherited)

        visit(page.main_frame, [], None)
        return visits

    # ------------------------------------------------------------ signature
    def signature(self, page: Page) -> str:
        parts: list[str] = [page.url]
        for v in self._frames(page):
            try:
                res = v.frame.evaluate(js_function("observe"), {"signatureOnly": True})
            except Exception:
                continue
            parts.append("F:" + "/".join(v.chain))
            parts.extend(res["signature"])
        return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]

    # ------------------------------------------------------------ observe
    def observe(self, page: Page, obs_id: int) -> Snapshot:
        refs: dict[int, ElementRef] = {}
        elements: list[Element] = []
        obstacles: list[Obstacle] = []
        messages: list[str] = []
        sig_parts: list[str] = [page.url]
        texts: list[str] = []
        unverified: list[int] = []
        scroll = ScrollInfo()
        title = ""
        next_index = 1
        for visit in self._frames(page):
            try:
                res = visit.frame.evaluate(
                    js_function("observe"),
                    {"start": next_index, "maxText": self.config.max_text_chars},
                )
            except Exception:
                continue  # a frame navigated away mid-observation
            if not visit.chain:
                title = res["title"]
                scroll = ScrollInfo(**res["scroll"])
            sig_parts.append("F:" + "/".join(visit.chain))
            sig_parts.extend(res["signature"])
            frame_text = res["text"]
            if visit.chain:
                frame_text = f"\n[inside frame {visit.chain[-1]}]\n{frame_text}\n[end of frame]\n"
            texts.append(frame_text)
            messages.extend(res["messages"])
            obstacles.extend(Obstacle(**ob) for ob in res["obstacles"])
            for rec in res["elements"]:
                el = self._element(rec, visit)
                elements.append(el)
                if rec.get("matches") != 1:
                    unverified.append(el.index)
                refs[el.index] = ElementRef(
                    index=el.index,
                    selector=rec["selector"],
                    frames=list(visit.chain),
                    role=el.role,
                    tag=el.tag,
                    field_type=el.field.type if el.field else None,
                    captcha=bool(rec.get("captcha")),
                )
            next_index += len(res["elements"])
        text, truncated = _clean_text("".join(texts), self.config.max_text_chars)
        omitted = max(0, len(elements) - self.config.max_elements)
        observation = Observation(
            id=obs_id,
            url=page.url,
            title=title,
            text=text,
            elements=elements[: self.config.max_elements],
            signature=hashlib.sha1("\n".join(sig_parts).encode()).hexdigest()[:16],
            obstacles=_dedupe_obstacles(obstacles),
            messages=list(dict.fromkeys(messages))[:10],
            scroll=scroll,
            text_truncated=truncated,
            elements_omitted=omitted,
        )
        return Snapshot(observation=self.vault.redact_obj(observation), refs=refs, unverified=unverified)

    def _element(self, rec: dict[str, Any], visit: _FrameVisit) -> Element:
        state: ElementState = rec.get("state", "interactable")
        occluded_by = rec.get("occludedBy")
        inherited = visit.inherited
        if inherited and state != "disabled":
            state = inherited["state"]
            occluded_by = inherited.get("occludedBy")
        field_info = self._field(rec.get("field"))
        submits = FormTarget(**rec["submits"]) if rec.get("submits") else None
        return Element(
            index=rec["index"],
            role=rec["role"],
            tag=rec["tag"],
            name=rec.get("name") or "",
            selector=rec["selector"],
            frames=list(visit.chain),
            state=state,
            occluded_by=occluded_by,
            field=field_info,
            submits=submits,
            href=rec.get("href"),
        )

    def _field(self, raw: dict[str, Any] | None) -> FieldInfo | None:
        if not raw:
            return None
        value = raw.get("value")
        if raw.get("type") == "password" and value:
            value = "[filled, hidden]"  # the same for a secret and a guess: no redaction oracle
        options = None
        if raw.get("options") is not None:
            options = [SelectOption(**o) for o in raw["options"]]
            more = int(raw.get("optionCount", 0)) - len(options)
            if more > 0:
                options.append(SelectOption(label=f"… {more} more options", value=""))
        return FieldInfo(
            name=raw.get("name"),
            type=raw.get("type") or "text",
            value=value,
            checked=raw.get("checked"),
            options=options,
            required=bool(raw.get("required")),
            readonly=bool(raw.get("readonly")),
            placeholder=raw.get("placeholder"),
            invalid=raw.get("invalid"),
        )


def _dedupe_obstacles(obstacles: list[Obstacle]) -> list[Obstacle]:
    seen: set[tuple[str, str]] = set()
    out: list[Obstacle] = []
    for ob in obstacles:
        key = (ob.kind, ob.description)
        if key not in seen:
            seen.add(key)
            out.append(ob)
    return out
