"""A run's progress in words, for a person: "read invoice INV-2057 in … (e-mail)", "logged in",
"session expired — logged in again", "saved BILL-0011". Read from the trace's typed events; the raw
events stay one click away on the same page. "saved X" is told only from the gate's own record of a
submission the system accepted (a ``submission`` event, result ``saved``), naming the record its
answer named (else the one it was sent to): never from a page the browser reached.

Only what a person follows is told: allowed policy checks, plain page visits between two actions
and repeated identical lines are left to the raw trace.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from taskcrew.console.artifacts import TimelineItem

KINDS = {"email": "e-mail", "pdf": "PDF", "image": "scan", "csv": "CSV", "md": "notes", "txt": "text"}
FILE_HEAD = re.compile(r"^File: (?P<path>.+?) \((?P<kind>[a-z]+), ", re.MULTILINE)
ERROR_LINE = re.compile(r"^(?:Error: |HTTP status of the page: |- .*: (?!ok\b))(?P<why>.+)$", re.MULTILINE)
INVOICE_NO = re.compile(
    r"\b(?:invoice|rechnung)\s*(?:no\.?|number|nr\.?|#)\s*[:#]?\s*(?P<no>[A-Z0-9][A-Z0-9\-/]{2,})",
    re.IGNORECASE,
)
RECORD = re.compile(r"/(?:bills|vendors|payments)/(?P<id>[A-Z]{2,}-\d+)\b")
EXPIRED = re.compile(r"reason=expired|session (?:has )?expired", re.IGNORECASE)
SECRET_LOGIN = "{{secret:ERP_PASSWORD}}"
MODEL_WORDS = "The worker's words (a model's, not checked by code)"  # before a step's summary


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path or "/"


def _read(e: Any) -> str:
    head = FILE_HEAD.search(e.result)
    path = head.group("path") if head else str(e.args.get("path", "?"))
    kind = KINDS.get(head.group("kind"), head.group("kind")) if head else "file"
    number = INVOICE_NO.search(e.result)
    if number and "invoice" in path.lower() + e.result[:400].lower():
        return f"read invoice {number.group('no')} in “{path}” ({kind})"
    return f"read “{path}” ({kind})"


class _Browser:
    """What a browser_act call did, told as the person would say it."""

    def __init__(self) -> None:
        self.logged_in = False
        self.expired = False

    def tell(self, e: Any) -> list[str]:
        actions = [a for a in e.args.get("actions") or [] if isinstance(a, dict)]
        said: list[str] = []
        typed = [str(a.get("text", "")) for a in actions if a.get("action") == "type"]
        if any(SECRET_LOGIN in t for t in typed):
            if self.expired:
                said.append("session expired — logged in again")
            else:
                said.append("logged in again" if self.logged_in else "logged in")
            self.logged_in, self.expired = True, False
        elif typed or any(a.get("action") == "select" for a in actions):
            values = [t for t in typed if t and "{{secret:" not in t]
            values += [str(a.get("option", "")) for a in actions if a.get("action") == "select"]
            said.append("filled in the form: " + ", ".join(v for v in values if v)[:160])
        else:
            for a in actions:
                if a.get("action") == "navigate":
                    said.append(f"opened {_path(str(a.get('url', '')))}")
                elif a.get("action") == "click":
                    said.append("clicked")
        if EXPIRED.search(e.result):
            self.expired = True
        if not e.ok:
            why = ERROR_LINE.search(e.result)
            first = why.group(0) if why else next((ln for ln in e.result.splitlines() if ln.strip()), "")
            said = [*said[:1], f"could not complete it: {first.removeprefix('Error: ')[:140]}"]
        return said or ["used the browser"]


def _tool(e: Any, browser: _Browser) -> list[str]:
    args, name = e.args, e.tool
    if name == "read_file":
        return [_read(e) if e.ok else f"could not read “{args.get('path', '?')}”"]
    if name == "search_files":
        found = e.result.splitlines()[0].rstrip(":") if e.result else ""
        return [f"searched the files for “{args.get('query', '')}”: {found[:120]}"]
    if name == "list_files":
        return [f"listed the folder {args.get('folder', '.')}"]
    if name == "parse_amount":
        value = e.result.splitlines()[0].removeprefix("value:").strip() if e.result else "?"
        return [f"read the amount “{args.get('text', '')}” as {value}"]
    if name == "compute_due_date":
        due = e.result.splitlines()[0].removeprefix("due date:").strip() if e.result else "?"
        return [f"worked out the due date: {due}"]
    if name.startswith("browser"):
        return browser.tell(e)
    if name in ("web_search", "search_procedures", "recall_facts"):
        what = {
            "web_search": "the intranet",
            "search_procedures": "the procedures",
            "recall_facts": "learned facts",
        }
        return [f"looked up {what[name]} for “{args.get('query', '')}”"]
    return [f"used {name}"]


def story(events: list[Any]) -> list[TimelineItem]:
    items: list[TimelineItem] = []
    browsers: dict[str, _Browser] = {}  # the verifier has a browser (and a session) of its own

    def say(e: Any, kind: str, title: str, detail: str = "", ok: bool | None = None) -> None:
        if items and items[-1].title == title and items[-1].kind == kind:
            return
        items.append(TimelineItem(at=e.at, kind=kind, title=title, detail=detail, ok=ok))

    sent: list[Any] = []  # the gate's account of a submission, told after the action that sent it

    def told_sent() -> None:
        for s in sent:
            it = s.submission
            say(
                s,
                "submission",
                f"sent {it.method} {_path(it.url)}: {it.words()}",
                ok={"saved": True, "unknown": None}.get(it.result, False),
            )
            if it.result == "saved" and (record := RECORD.search(it.detail) or RECORD.search(it.url)):
                say(s, "submission", f"saved {record.group('id')}", ok=True)
        sent.clear()

    for e in events:
        kind = e.kind
        if kind == "submission":
            sent.append(e)
            continue
        if kind != "tool_call":
            told_sent()
        if kind == "run_started":
            say(e, "start", "started", e.task)
        elif kind == "plan":
            steps = len(e.plan.steps)
            title = (
                f"replanned: {e.reason}" if e.replan else f"planned {steps} step{'s' if steps != 1 else ''}"
            )
            say(e, "plan", title, e.plan.goal)
        elif kind == "tool_call":
            who = "verifier: " if e.role == "verifier" else ""
            for line in _tool(e, browsers.setdefault(e.role if e.role == "verifier" else "crew", _Browser())):
                say(e, "action", who + line, ok=False if not e.ok and line.startswith("could not") else None)
            told_sent()
        elif kind == "policy" and e.decision not in ("allowed", "approved"):
            say(e, "policy", f"the policy gate refused: {e.detail.get('reason', e.decision)}", ok=False)
        elif kind == "policy" and EXPIRED.search(str(e.detail.get("url", ""))):
            for browser in browsers.values():  # the policy event names no role: the one in use
                browser.expired = browser.expired or browser.logged_in
        elif kind == "approval":
            url = e.question.split(" ", 1)[-1]
            say(e, "approval", f"approval to {e.question.split(' ', 1)[0]} {_path(url)}: {e.decided()}",
                e.note, ok=e.answer == "approved")  # fmt: skip
        elif kind == "step":  # the step's status and summary are the model's words: never a success colour
            ok = None if e.report.status in ("done", "nothing_to_do") else False
            words = f"{MODEL_WORDS}: {e.report.summary}" if e.report.summary else ""
            say(e, "step", f"step {e.index + 1} {e.report.status}: {e.title}", words, ok=ok)
        elif kind == "control":
            say(e, "control", f"{e.action.replace('_', ' ')}: {e.reason}")
        elif kind == "verdict":
            v = e.verdict
            say(
                e,
                "verdict",
                "verified: the verifier confirmed it in the system"
                if v.verified
                else "not verified: the verifier did not confirm it",
                v.reason,
                ok=v.verified,
            )
        elif kind == "reflection" and (e.stored or e.facts):
            say(e, "reflection", "learned for next time", "; ".join(e.stored or e.facts))
        elif kind == "run_finished":
            ok = e.outcome in ("done", "nothing_to_do")
            say(e, "finished", f"finished: {e.outcome}", e.reason, ok=ok)
    told_sent()
    return items
