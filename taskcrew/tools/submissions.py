"""What became of each data-changing submission: did the system apply it? One rule, used everywhere.

The network gate (``tools/browser/network.py``) classifies the system's answer to every approved
submission as it comes back, and hands a ``SubmissionResult`` to the act result (the model reads it
as data and in words) and to the run's ``SubmissionLog`` (the facts the run's outcome and report are
built from, ``crew/outcome.py``):

- ``saved``: the system accepted it (a 2xx/3xx answer that is not a login page or a form shown again,
  and whose page, if 2xx, flags no error or warning);
- ``refused``: the system answered that it did not take it (HTTP 4xx, or the form shown again with
  an error flagged on the page), with the reason it showed;
- ``bounced``: it was sent to a login page (the session had expired): HTTP 401/419, a redirect to a
  login path, or an answer whose form is a login (posts to a login path, or a username/e-mail field
  beside the password): NOT saved;
- ``unknown``: no answer, a timeout, a server error (5xx), the form shown again with no error
  flagged (a "Save & New" page or a confirmation), another page that flags an error or a warning (a
  confirmation step at another address, an error page), or an answer that asks for a password in a form
  that is not plainly a login (a re-sign-in under other field names, a release step): it may or
  may not be in the system;
- ``not_sent``: it never reached the system (the connection was refused, or the intent log held back
  a repeat; ``detail`` says which).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, Field

from taskcrew.tools.readback import visible_lines

Applied = Literal["saved", "refused", "bounced", "unknown", "not_sent"]

LOGIN_MARKERS = ('type="password"', "type='password'", 'name="password"')
REASON_WORDS = re.compile(
    r"\b(error|invalid|required|must|cannot|can't|not allowed|duplicate|already|missing|wrong|"
    r"too (?:long|short|large|small)|expired|denied|forbidden|unavailable|failed|please)\b",
    re.IGNORECASE,
)
_HTTP_WORDS = {
    400: "bad request",
    401: "not signed in",
    403: "forbidden",
    404: "not found",
    409: "conflict",
    422: "the values were not accepted",
    429: "too many requests",
}


UNKNOWN_WORDS = "UNKNOWN whether it was saved"  # a submission the system gave no clear answer to


class SubmissionResult(BaseModel):
    """One data-changing submission and what the system did with it."""

    method: str
    url: str
    fields: list[tuple[str, str]] = Field(default_factory=list)
    result: Applied
    http_status: int | None = None
    detail: str = ""
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    # where code's own read-back of the system overrode the gate's reading of the answer
    # (``outcome.Facts.read_back``): what it showed, in words, and how the gate had read the answer
    # (``read_as``); "" and None when it did not
    read_back: str = ""
    read_as: Applied | None = None
    # the chosen options' text by field name, as the approver was shown them (``FieldValue.label``:
    # vendor_id=1 shown as "1 (Northwind Traders)"): how a list names the party a reference sent as a
    # key refers to (``outcome.Facts.read_back``); {} where the gate recorded none
    labels: dict[str, str] = Field(default_factory=dict)

    @property
    def unshown(self) -> bool:
        """Read as saved, yet code's read-back of the page that lists its record shows no row of it
        (a record the system dropped, a 200 page saying "not saved"): it may not be in the system."""
        return self.read_as == "saved" and self.result == "unknown"

    @property
    def changed(self) -> bool | None:
        """True: it is in the system; False: it is not; None: nobody can tell without looking."""
        return {"saved": True, "unknown": None}.get(self.result, False)

    def words(self) -> str:
        """For a person and for the model: whether the system applied it, and why."""
        status = f"HTTP {self.http_status}" if self.http_status is not None else "no answer"
        detail = f": {self.detail}" if self.detail else ""
        detail += f"; {self.read_back}" if self.read_back else ""
        return {
            "saved": f"saved — the system accepted it ({status}{detail})",
            "refused": f"NOT saved — the system refused it ({status}{detail})",
            "bounced": "NOT saved — bounced to the login page (the session had ended); sign in and send it again",
            "unknown": f"{UNKNOWN_WORDS} ({status}{detail}); look in the system before sending it again",
            "not_sent": f"NOT sent{detail}",
        }[self.result]

    def line(self) -> str:
        return f"{self.method} {self.url} — {self.words()}"


def classify(
    *,
    method: str,
    url: str,
    http_status: int | None,
    location: str | None = None,
    body: str = "",
    failure: str = "",
    login_paths: list[str] | tuple[str, ...] = ("/login",),
    landing: str = "",
    before: str = "",
) -> tuple[Applied, str]:
    """The system's answer to a submission as (result, detail). A redirect is read with the page it
    led to (``landing``) against the page the form was on (``before``), when the gate has them."""
    if http_status is None:
        if "ECONNREFUSED" in failure:
            return "not_sent", "the connection was refused; nothing reached the system"
        return "unknown", failure or "no answer"
    if 300 <= http_status < 400:
        target = urljoin(url, location or "")
        if location and _is_login(target, login_paths):
            return "bounced", f"redirected to {urlsplit(target).path}"
        if location and _same_place(target, url) and method.upper() != "GET":
            return "unknown", "the system sent the form back to itself"
        shown = urlsplit(target).path or "/"
        flagged = _new_flags(landing, before)
        if flagged:  # "redirect back with errors": the refusal is on the page it led to (a flash)
            reason = _reason(flagged[:1])
            if _form_again(landing, url):
                return "refused", f"then showed the form again at {shown}: {reason}"
            return "unknown", f"then showed {shown}, which flags an error or a warning: {reason}"
        return "saved", f"then showed {shown}" if location else ""
    if http_status >= 500:
        return "unknown", "a server error or outage"
    if http_status in (401, 419):
        return "bounced", f"HTTP {http_status}: not signed in"
    if _looks_like_login(body, url, login_paths):
        return "bounced", "the answer was a login page"
    if http_status >= 400:
        reason = page_reason(body)
        meaning = _HTTP_WORDS.get(http_status, "")
        return "refused", "; ".join(x for x in (meaning, reason) if x)
    if body and _form_again(body, url):  # 2xx showing the same form again
        flagged = _error_flags(body)
        if flagged:  # with an error or a warning on it: not taken (validation, a near-duplicate)
            return "refused", page_reason(body)
        # no error flagged: a fresh form after a save ("Save & New") or a confirmation step
        return "unknown", "the system showed the form again, with no error on it"
    if body and _error_flags(body):  # another page, an error or a warning on it (a step to confirm)
        return "unknown", "the answer flags an error or a warning: " + page_reason(body)
    if _password_forms(body):  # not a login by its form, yet maybe one (or a step to confirm)
        return (
            "unknown",
            "the answer asks for a password (a sign-in, or a step to confirm): it may not be saved",
        )
    if location:  # "201 Created" with the address of what it made: the record this send created
        return "saved", f"its answer named {urlsplit(urljoin(url, location)).path or '/'}"
    return "saved", ""


_FLAGGED = re.compile(  # attribute values quoted or not (class=error role=alert is valid HTML)
    r"<(\w+)\b[^>]*(?:class=(?:[\"'][^\"']*\b|)(?:error|errors|alert|invalid|danger|warning)\b|"
    r"role=[\"']?alert\b)[^>]*>(.*?)</\1>",
    re.IGNORECASE | re.DOTALL,
)


_SUCCESS = re.compile(r"class=(?:[\"'][^\"']*\b|)(?:success|ok|info|notice)\b", re.IGNORECASE)


def _error_flags(body: str) -> list[str]:
    """The texts the page marks as an error, a warning or an alert (``role=alert``), not empty; an
    element marked as a success (Bootstrap's ``alert alert-success``) is no error."""
    flagged = []
    for m in _FLAGGED.finditer(body[:200_000]):
        opening = m.group(0)[: m.start(2) - m.start(0)]
        text = " ".join(visible_lines(m.group(2)))
        if text and not _SUCCESS.search(opening):
            flagged.append(text)
    return flagged


def _new_flags(landing: str, before: str) -> list[str]:
    """What the page a redirect led to marks as an error or a warning that the page the form was on
    did not (a banner that was always there is not the answer's)."""
    if not landing:
        return []
    old = set(_error_flags(before))
    return [text for text in _error_flags(landing) if text not in old]


def page_reason(body: str, limit: int = 240) -> str:
    """What an answer page says was wrong: the text it marks as an error or alert, else the first line
    that reads like a reason (an error, a duplicate); "" when it says nothing of the kind."""
    flagged = _error_flags(body)
    lines = [ln for ln in flagged if len(ln) > 8][:1] or [
        ln for ln in visible_lines(body) if REASON_WORDS.search(ln) and len(ln) > 8
    ]
    return _reason(lines, limit)


def _reason(lines: list[str], limit: int = 240) -> str:
    if not lines:
        return ""
    text = "; ".join(dict.fromkeys(lines))
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


class SubmissionLog:
    """The submissions of one run, in order (thread-safe: the gate runs on the browser thread)."""

    def __init__(self) -> None:
        self._items: list[SubmissionResult] = []
        self._lock = threading.Lock()
        self.listeners: list[Callable[[SubmissionResult], None]] = []

    def record(self, item: SubmissionResult) -> None:
        with self._lock:
            self._items.append(item)
        for listener in self.listeners:
            listener(item)

    def all(self) -> list[SubmissionResult]:
        with self._lock:
            return list(self._items)


# ---- internals ---------------------------------------------------------------------------------


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/") or "/"


_LOGIN_SEGMENT = re.compile(r"(?:log[-_]?[io]n|sign[-_]?in)(?:\.[a-z]{2,5})?", re.IGNORECASE)


def _is_login(url: str, login_paths: list[str] | tuple[str, ...]) -> bool:
    """A login page: a configured login path, or a path whose last part is a login ("/login",
    "/users/sign_in", "/Logon.aspx"). A bounce may be sent again, so a page that only mentions a
    login ("/reports/login-history") is not one."""
    path = _path(url)
    return any(path == (p.rstrip("/") or "/") for p in login_paths) or bool(
        _LOGIN_SEGMENT.fullmatch(path.rsplit("/", 1)[-1])
    )


def _same_place(target: str, url: str) -> bool:
    return urlsplit(target).netloc == urlsplit(url).netloc and _path(target) == _path(url)


_FORM = re.compile(r"<form\b([^>]*)>(.*?)(?:</form>|(?=<form\b)|$)", re.IGNORECASE | re.DOTALL)
_ACTION = re.compile(r"\baction=(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))", re.IGNORECASE)
_POST = re.compile(r"\bmethod=[\"']?post\b", re.IGNORECASE)
_INPUT = re.compile(r"<input\b[^>]*>", re.IGNORECASE)
_USER_FIELD = re.compile(
    r"\b(?:type=[\"']email[\"']|(?:name|id|autocomplete)=[\"'][^\"']*(?:user|e-?mail|login)[^\"']*[\"'])",
    re.IGNORECASE,
)


def _password_forms(body: str) -> list[tuple[str, list[str]]]:
    """The answer's forms that ask for a password: (the form's attributes, its inputs)."""
    page = body[:200_000]
    if not any(m in page.lower() for m in LOGIN_MARKERS):
        return []
    forms = [(attrs, _INPUT.findall(inner)) for attrs, inner in _FORM.findall(page)]
    return [
        (a, inputs) for a, inputs in forms if any(any(m in i.lower() for m in LOGIN_MARKERS) for i in inputs)
    ]


def _looks_like_login(body: str, url: str, login_paths: list[str] | tuple[str, ...]) -> bool:
    """The answer's form is a login: a form with a password field that posts to a login path or
    has a username/e-mail field beside the password. Any other password box (a confirmation, a
    release, a sign-in with fields of other names) leaves the answer ``unknown`` (``classify``)."""
    for attrs, inputs in _password_forms(body):
        action = _action(attrs)
        if action and _is_login(urljoin(url, action), login_paths):
            return True
        others = [i for i in inputs if not any(m in i.lower() for m in (*LOGIN_MARKERS, "hidden"))]
        if any(_USER_FIELD.search(i) for i in others):
            return True
    return False


def _form_again(body: str, url: str) -> bool:
    """The answer holds a form that posts to the same address again (validation, a confirmation):
    its action names it (quoted or not), or a POST form has no action (it posts to the page's own
    address, the one the submission went to)."""
    path = _path(url)
    for attrs, _ in _FORM.findall(body):
        target = _action(attrs)
        if target is None:
            if _POST.search(attrs):
                return True
        elif _path(urljoin(url, target)) == path:
            return True
    return False


def _action(attrs: str) -> str | None:
    """A form's action attribute, quoted or not; None when it has none."""
    m = _ACTION.search(attrs)
    return None if m is None else next(g for g in m.groups() if g is not None)
