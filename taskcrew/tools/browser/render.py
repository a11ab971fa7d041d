"""The compact text a model sees for an Observation / ActionResult. Paid for on every LLM call."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from taskcrew.tools.browser.models import (
    ActionResult,
    Element,
    Observation,
    WindowEdge,
    describe_action,
)
from taskcrew.tools.policy import SAFE_METHODS

BEGIN = "<<<untrusted page"  # the framing the task prompt names (roles/tasks.yaml)
END = ">>>END"
ELEMENTS = "Elements:"
MAX_OPTIONS = 12
OPTIONS_CHARS = 600
"""Options are all listed while their labels fit this many characters (else the first MAX_OPTIONS)."""
ROLE_OF_TYPE = {
    "search": "searchbox",
    "number": "spinbutton",
    "range": "slider",
    "select-multiple": "listbox",
}


def _defang(text: str) -> str:
    """Page text cannot forge our delimiters."""
    return text.replace("<<<", "‹‹‹").replace(">>>", "›››")


def _q(text: str, limit: int = 80) -> str:
    text = _defang(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return json.dumps(text, ensure_ascii=False)


def short_url(url: str, base: str) -> str:
    """Same-origin URLs as path?query; a place on the page itself as #fragment; others in full."""
    u, b = urlsplit(url), urlsplit(base)
    if (u.scheme, u.netloc, u.path, u.query) == (b.scheme, b.netloc, b.path, b.query) and u.fragment:
        return "#" + u.fragment
    if (u.scheme, u.netloc) == (b.scheme, b.netloc):
        rel = u.path or "/"
        if u.query:
            rel += "?" + u.query
        if u.fragment:
            rel += "#" + u.fragment
        return rel
    return url


def _same_document(url: str, base: str) -> bool:
    """A link to the page itself (href="#" of a script-driven link) says nothing about where it goes."""
    u, b = urlsplit(url), urlsplit(base)
    return (u.scheme, u.netloc, u.path, u.query) == (b.scheme, b.netloc, b.path, b.query) and not u.fragment


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _said_by_name(el: Element, base: str) -> bool:
    """A link whose target says nothing its name and the page do not: the page itself (href="#" of
    a script-driven link), or a same-site path ending in the link's own name (a row's /bills/BILL-7)."""
    assert el.href is not None
    if _same_document(el.href, base):
        return True
    u, b = urlsplit(el.href), urlsplit(base)
    if (u.scheme, u.netloc) != (b.scheme, b.netloc) or u.query or u.fragment:
        return False
    last = u.path.rstrip("/").rsplit("/", 1)[-1]
    return bool(last) and len(_slug(el.name)) >= 3 and _slug(last) == _slug(el.name)


def _value(text: str, limit: int = 300) -> str:
    """A field's value: whole when short, else its head and its end (the last words matter)."""
    text = _defang(text)
    if len(text) > limit:
        tail = limit // 3
        text = text[: limit - tail - 1] + "…" + text[-tail:]
    return json.dumps(text, ensure_ascii=False)


def shows_name(text: str, el: Element) -> bool:
    """Whether the page text has ``[n] name`` on one line, the name ending at a line end, a cell or a
    marker, so a reader recovers it exactly (see ``names_in_text``). A name on the next line, or
    after the numbers of other elements, is not counted: a reader cannot tell which number it
    belongs to (a model reading the renders said so)."""
    if not _plain(el.name) or "\n" in el.name:
        return False
    words = _defang(el.name).split()
    gap = r"[ \t]+"
    said = "".join(gap + re.escape(w) for w in words)
    icon = rf"[ \t]+\(icon:{said}\)"  # a control that shows no words: "[n] (icon: zoom in)"
    pattern = rf"\[{el.index}\](?:{said}|{icon})" + r"(?=$| \|| \[\d+\])"
    return re.search(pattern, text, re.M) is not None


def name_onto_marker(text: str, elements: list[Element], limit: int = 100) -> str:
    """A control whose number stands alone on its line and whose name is exactly the lines below it
    (all of them, up to the next number, a blank line or the end: an e-mail row's sender, subject and
    preview) is
    shown as ``[n] name`` on one line, the form a reader ties to the number (``shows_name``), so the
    element list need not repeat the name. Longer names (over ``limit``) keep their lines."""
    names = {el.index: " ".join(_defang(el.name).split()) for el in elements if _plain(el.name)}
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"\[(\d+)\]", lines[i])
        name = names.get(int(m.group(1))) if m else None
        if m and name and len(name) <= limit:
            j, said = i + 1, ""
            while j < len(lines) and lines[j].strip() and not re.search(r"\[\d+\]", lines[j]):
                said = f"{said} {lines[j].strip()}".strip()
                j += 1
                if len(said) > len(name):
                    break
            if said == name:
                out.append(f"{lines[i]} {name}")
                i = j
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def names_in_text(text: str) -> dict[int, str]:
    """Element names as the text shows them: ``[n] name`` up to a line end, a cell or a marker
    (``[n] (icon: name)`` for a control that shows a picture, not words)."""
    found = re.findall(r"\[(\d+)\] ([^\[|\n]+?)(?=$| \|| \[\d+\])", text, re.M)
    names = {}
    for i, name in found:
        icon = re.fullmatch(r"\(icon: (.+)\)", name)
        names[int(i)] = icon.group(1) if icon else name
    return names


def _plain(name: str) -> bool:
    return bool(name) and not name.endswith("…") and "[" not in name and "|" not in name


def shows_label(text: str, el: Element) -> bool:
    r"""Whether the page text has the name as the label right before ``[n]`` on its line
    (``Username [1]``), so a reader recovers it exactly: see ``labels_in_text``. A label on the line
    above is not counted (which field it names is a guess)."""
    if not _plain(el.name) or "\n" in el.name:
        return False
    name = re.escape(_defang(el.name))
    return re.search(rf"^{name} \[{el.index}\]", text, re.M) is not None


def labels_in_text(text: str) -> dict[int, str]:
    r"""Labels as the text shows them: the line up to a marker (``label [n]``); never a line with
    another marker or a table cell before it."""
    found = re.findall(r"^([^\[|\n]+?) \[(\d+)\]", text, re.M)
    return {int(i): label for label, i in found}


def tied_to_row(text: str, el: Element) -> bool:
    """Whether the line of the text holding ``[n]`` also shows the element's row key."""
    if not el.row:
        return True
    m = re.search(rf"^.*\[{el.index}\](?!\d).*$", text, re.M)
    return m is not None and _defang(el.row) in m.group(0)


def render_element(el: Element, base: str, text: str = "") -> str:
    parts = [f"[{el.index}] {el.role}"]
    if el.name and not shows_name(text, el) and not shows_label(text, el):  # the text shows it
        parts.append(_q(el.name))
    if el.row and not tied_to_row(text, el):
        parts.append(f"(row {_q(el.row, 40)})")
    parts.extend(el.states)
    if el.hidden_native:
        parts.append("(native select behind a custom widget: use select)")
    f = el.field
    if f is not None:
        if f.name and f.name != el.name:
            parts.append(f"name={f.name}")
        if (
            f.type not in ("text", "select", "checkbox", "radio", el.role)
            and ROLE_OF_TYPE.get(f.type) != el.role
        ):
            parts.append(f"type={f.type}")
        if f.checked is not None:
            if el.role in ("tab", "option", "treeitem"):
                parts.append("selected" if f.checked else "not selected")
            else:
                parts.append("checked" if f.checked else "unchecked")
        if f.options is not None:
            labels = [o.label for o in f.options if o.value or not o.label.startswith("… ")]
            whole = sum(len(_q(x, 40)) + 2 for x in labels) <= OPTIONS_CHARS
            cap = len(labels) if whole else MAX_OPTIONS
            shown = ", ".join(_q(x, 40) for x in labels[:cap])
            beyond = sum(
                int(m.group(0))
                for o in f.options
                if not o.value and (m := re.search(r"\d+", o.label)) and o.label.startswith("… ")
            )
            hidden = len(labels) - cap + beyond
            more = f" +{hidden} more (select takes any option's label)" if hidden > 0 else ""
            parts.append(f"value={_q(f.value or '', 60)} options=[{shown}{more}]")
        elif f.checked is None and f.value:
            parts.append(f"value={_value(f.value)}")
        elif f.checked is not None and f.value and f.value not in ("on", el.name):
            parts.append(f"value={_q(f.value, 40)}")
        if f.placeholder and not f.value and f.placeholder != el.name:
            parts.append(f"placeholder={_q(f.placeholder, 40)}")
        if f.required:
            parts.append("required")
        if f.readonly:
            parts.append("readonly")
        limits = [f"{k}={v}" for k, v in (("min", f.min), ("max", f.max), ("step", f.step)) if v]
        parts.extend(limits)
        if f.invalid:
            parts.append(f"invalid={_q(f.invalid, 120)}")
    if el.submits is not None:
        parts.append(f"(submits form {el.submits.method} {short_url(el.submits.action, base)})")
    if el.resets:
        parts.append("(resets the form: empties its fields)")
    if el.href and not el.href.startswith("javascript:") and not _said_by_name(el, base):
        parts.append(_defang(short_url(el.href, base))[:100])  # where it leads (names are quoted)
    if el.scroll is not None:
        parts.append(el.scroll.render())
    if el.frames:
        parts.append(f"(in {el.frames[-1]})")
    if el.state == "occluded":
        parts.append(f"[OCCLUDED by {_defang(el.occluded_by or 'another element')}]")
    elif el.state != "interactable":
        parts.append(f"[{el.state.upper().replace('_', ' ')}]")
    return " ".join(parts)


def render_elements(elements: list[Element], base: str, text: str) -> list[str]:
    """One line per element; a run of consecutive numbers that render alike (``[12] link`` …
    ``[21] link``) as one line ``[12]–[21] link``."""
    lines: list[str] = []
    run: tuple[int, int, str] | None = None  # first and last number, the line after "[n] "
    for el in elements:
        rest = render_element(el, base, text).split(" ", 1)[1]
        if run is not None and el.index == run[1] + 1 and rest == run[2]:
            run = (run[0], el.index, rest)
            continue
        if run is not None:
            lines.append(_run_line(*run))
        run = (el.index, el.index, rest)
    if run is not None:
        lines.append(_run_line(*run))
    return lines


def _run_line(first: int, last: int, rest: str) -> str:
    return f"[{first}] {rest}" if first == last else f"[{first}]–[{last}] {rest}"


def render_observation(obs: Observation, max_chars: int = 6000) -> str:
    head = [f"Observation #{obs.id}: {_q(obs.title, 100)} {obs.url}"]
    if obs.scroll.height > obs.scroll.viewport > 0:
        bottom = min(obs.scroll.y + obs.scroll.viewport, obs.scroll.height)
        head.append(f"Scroll: showing {obs.scroll.y}-{bottom} of {obs.scroll.height}px")
    for ob in obs.obstacles:
        hint = {
            "captcha": "do not try to solve it; report it to the human",
            "modal": "dismiss it (dismiss_modal)" + (f" or click [{ob.index}]" if ob.index else ""),
            "login_form": "log in with {{secret:...}} placeholders",
        }[ob.kind]
        head.append(f"Obstacle: {_defang(ob.description)} — {hint}")
    for err in obs.errors:
        head.append(f"Not read: {_defang(err)}")
    body: list[str] = []
    if obs.messages:
        body.append("Messages shown: " + " | ".join(_q(m, 200) for m in obs.messages))
    text = name_onto_marker(_defang(obs.text), obs.elements) or (
        "(no visible text)" if not obs.errors else "(nothing could be read; see Not read)"
    )
    before = [_edge_note(obs.above, "above", "scroll up")] if obs.above else []
    after = [_edge_note(obs.below, "below", "scroll down")] if obs.below else []
    frame = sum(len(x) + 1 for x in [*head, BEGIN, *body, *before, *after, END])
    omitted = 0 if (obs.above or obs.below) else obs.text_truncated
    note = 100  # room for the line saying how much text is not shown
    el_block = _element_block(obs, text)
    budget = max(300, max_chars - frame - len(el_block) - (note if omitted else 0))
    if len(text) > budget:
        shown = text
        for _ in range(3):  # a name the cut text no longer shows is listed, which takes room
            shown = text[:budget].rsplit("\n", 1)[0]
            el_block = _element_block(obs, shown)
            over = frame + len(el_block) + len(shown) + note - max_chars
            if over <= 0 or budget == 300:
                break
            budget = max(300, budget - over)
        omitted += len(text) - len(shown)
        text = shown
    text = "\n".join([*before, text, *after])
    if omitted:
        text += f"\n… [{omitted} more characters of page text not shown; scroll or act to see more]"
    out = "\n".join([*head, BEGIN, *body, text, END, el_block])
    if len(out) > max_chars:  # too many elements: cut the list, keep the page summary
        keep = out[: max_chars - 60].rsplit("\n", 1)[0]
        out = keep + f"\n… [element list cut at {max_chars} characters]"
    return out


def _element_block(obs: Observation, text: str) -> str:
    elements = render_elements(obs.elements, obs.url, text)
    if obs.elements_omitted:
        elements.append(
            f"… {obs.elements_omitted} more elements not listed (their [n] in the text still work)"
        )
    return ELEMENTS + "\n" + ("\n".join(elements) if elements else "(no interactive elements)")


def _edge_note(edge: WindowEdge, where: str, how: str) -> str:
    heads = f"; headings: {', '.join(_q(h, 40) for h in edge.headings)}" if edge.headings else ""
    return (
        f"… [{where}: {edge.chars} characters, {edge.elements} elements{_rows_note(edge.rows)}{heads}"
        f" — {how} to see them]"
    )


ROWS_NOTE_CHARS = 400


def _rows_note(rows: list[str]) -> str:
    """The keys of the rows out of view, as many as fit, so a row is found by its key, not by order."""
    if not rows:
        return ""
    shown: list[str] = []
    used = 0
    for key in rows:
        q = _q(key, 40)
        if used + len(q) + 2 > ROWS_NOTE_CHARS:
            break
        shown.append(q)
        used += len(q) + 2
    more = f" and {len(rows) - len(shown)} more" if len(rows) > len(shown) else ""
    return f"; rows {', '.join(shown)}{more}"


def render_result(result: ActionResult, max_chars: int = 6000) -> str:
    lines: list[str] = []
    for r in result.ran:
        mark = "ok" if r.ok else "FAILED"
        lines.append(
            f"- {describe_action(r.action)}: {mark}" + (f" — {_defang(r.message)}" if r.message else "")
        )
    if result.skipped:
        reasons = {
            "page_changed": "the page changed, so these were not run (look at the new page first)",
            "earlier_failure": "not run because an earlier action failed",
            "stale_observation": "not run: the element numbers came from an outdated observation",
        }
        by_reason: dict[str, list[str]] = {}
        for s in result.skipped:
            by_reason.setdefault(s.reason, []).append(describe_action(s.action))
        for reason, acts in by_reason.items():
            lines.append(f"Skipped — {reasons[reason]}: " + "; ".join(acts))
    said = {r.message for r in result.ran}
    quiet_blocks: list[str] = []
    for decision in result.policy:
        if decision.outcome == "blocked" and decision.kind == "request" and decision.method in SAFE_METHODS:
            quiet_blocks.append(urlsplit(decision.url).netloc or decision.url[:40])
            continue
        shown = decision.outcome != "allowed" or decision.kind == "submission"
        if shown and decision.message() not in said:
            lines.append(f"Policy: {decision.message()}")
    if quiet_blocks:
        hosts = ", ".join(sorted(set(quiet_blocks))[:5])
        lines.append(f"Policy: blocked {len(quiet_blocks)} page resource request(s) to other hosts ({hosts})")
    for sub in result.submissions:  # whether the system applied each submission, in words
        lines.append(f"Submission: {_defang(sub.line())}")
    for e in result.errors:
        lines.append(f"Error: {_defang(e)}")
    for dialog in result.dialogs:
        lines.append(f"Dialog: {_defang(dialog)}")
    if result.http_status is not None and result.http_status >= 400:
        lines.append(f"HTTP status of the page: {result.http_status}")
    ch = result.change
    if ch is not None:
        if ch.navigated:
            lines.append(f"Page changed: {short_url(ch.url_before, ch.url_after)} → {ch.url_after}")
        elif ch.signature_changed:
            lines.append("The page's interactive elements changed.")
        else:
            lines.append("No change to the page's interactive elements.")
    header = ("Result: OK" if result.ok else "Result: FAILED") + "\n" + "\n".join(lines)
    remaining = max(1000, max_chars - len(header) - 2)
    return header + "\n\n" + result.observation.render(max_chars=remaining)
