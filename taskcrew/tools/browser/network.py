"""The network layer of the policy: every request the browser context makes passes ``NetworkGuard``.

- Requests to hosts off the allow-list, blocked paths and non-http(s) schemes are aborted.
- Document requests are fetched with redirects off, so a redirect to a foreign host is caught before
  the browser follows it (Playwright does not route redirect hops).
- Data-changing requests (not GET/HEAD/OPTIONS) pass only when the act layer armed an approval for
  exactly that method, URL and form body, or when the policy allows them (login, or the human
  approves a script's fetch/XHR); in read-only mode they are refused. Everything else is aborted and
  reported — an unapproved POST never reaches the server.
- It also tracks in-flight requests (for settling), main-document HTTP statuses and dialogs.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urljoin

from taskcrew.approvals.key import file_value, same_fields, text_value
from taskcrew.tools.human import FieldValue
from taskcrew.tools.intents import SendOutcome
from taskcrew.tools.intents import fetcher as intent_fetcher
from taskcrew.tools.policy import CSRF_NAME_RE, SAFE_METHODS, Policy, PolicyDecision, strip_fragment
from taskcrew.tools.submissions import SubmissionResult, classify
from taskcrew.tools.vault import Vault

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Dialog, Page, Request, Response, Route, WebSocketRoute

TRACKED_TYPES = frozenset({"document", "xhr", "fetch", "eventsource"})
MAX_REDIRECTS = 10


@dataclass
class ArmedApproval:
    """A submission the act layer approved; the network layer lets exactly this one through."""

    method: str
    url: str
    fields: list[tuple[str, str]] | None


@dataclass
class NetworkState:
    pending: set[int] = field(default_factory=set)
    finished: int = 0  # tracked requests done so far: a page acts on a response after it arrives
    armed: list[ArmedApproval] = field(default_factory=list)
    blocked: list[PolicyDecision] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    main_status: tuple[int, str, str] | None = None
    handler_errors: list[BaseException] = field(default_factory=list)
    new_pages: list[Page] = field(default_factory=list)
    submissions: list[SubmissionResult] = field(default_factory=list)
    page: tuple[str, str] = ("", "")  # the last main document the browser was given: (URL, HTML)
    landings: dict[str, Any] = field(default_factory=dict)  # a submission's redirect target, read once

    def reset_for_call(self) -> None:
        self.submissions.clear()
        self.landings.clear()
        self.blocked.clear()
        self.notes.clear()
        self.dialogs.clear()
        self.main_status = None
        self.handler_errors.clear()


def request_fields(request: Request, vault: Vault) -> list[FieldValue]:
    """The body of a request as name/value pairs, secrets masked (for the approval prompt)."""
    raw = _raw_fields(request)
    return [FieldValue(name=vault.redact(k), value=vault.redact(v)) for k, v in raw]


def _raw_fields(request: Request) -> list[tuple[str, str]]:
    """The body as name/value pairs: a file part as ``file_value`` (marked here, by the parser), every
    text value through ``text_value`` (so a text cannot pass for a file); see approvals/key.py."""
    header = request.headers.get("content-type") or ""
    ctype = header.lower()
    try:
        body = request.post_data_buffer
    except Exception:
        body = None
    if not body:
        return []
    if "application/x-www-form-urlencoded" in ctype:
        return [
            (k, text_value(v)) for k, v in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        ]
    if "multipart/form-data" in ctype:
        # the header as sent: its boundary is case-sensitive (lowercased, no part is found)
        msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + header.encode() + b"\r\n\r\n" + body)
        out: list[tuple[str, str]] = []
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition") or "?"
            filename = part.get_filename()
            payload = part.get_payload(decode=True)
            content = payload if isinstance(payload, bytes) else b""
            if filename is not None:  # a file part: marked by the parser, never by how a value looks
                out.append((str(name), file_value(filename, len(content))))
            else:
                out.append((str(name), text_value(content.decode("utf-8", "replace"))))
        return out
    text = body.decode("utf-8", "replace")
    if "text/plain" in ctype and "=" in text:  # <form enctype="text/plain">: name=value lines
        lines = [line.partition("=") for line in text.split("\r\n") if line]
        return [(k, text_value(v)) for k, _, v in lines]
    if "json" in ctype:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return [(str(k), text_value(v) if isinstance(v, str) else json.dumps(v)) for k, v in data.items()]
    return [("(body)", text_value(text))]


class NetworkGuard:
    """Installed on a browser context; runs on the browser thread (inside Playwright's dispatch)."""

    def __init__(self, policy: Policy, vault: Vault, human_wait: Any, navigation_timeout_ms: int) -> None:
        self.policy = policy
        self.vault = vault
        self.state = NetworkState()
        self._human_wait = human_wait
        self._nav_timeout = navigation_timeout_ms
        self._context: BrowserContext | None = None

    # ------------------------------------------------------------ wiring
    def install_context(self, context: BrowserContext) -> None:
        """Route every request, and every WebSocket to a host the policy does not allow."""
        self._context = context
        self.policy.page_fetch = intent_fetcher(context, self.policy)  # the risk rules read a record's amount
        context.route("**/*", self.route)
        context.route_web_socket(lambda url: not self._websocket_allowed(url), self._block_websocket)

    def _websocket_allowed(self, url: str) -> bool:
        http_url = re.sub(r"^ws(s?)://", r"http\1://", url, flags=re.I)
        return self.policy.check_url(http_url).allowed

    def _block_websocket(self, ws: WebSocketRoute) -> None:
        self.state.blocked.append(self.policy.request("GET", self.vault.redact(ws.url)))
        ws.close(code=1008, reason="blocked by policy")

    def install_page(self, page: Page) -> None:
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_done)
        page.on("response", self._on_response)
        page.on("dialog", self._on_dialog)

    def arm(self, method: str, url: str, fields: list[tuple[str, str]] | None) -> None:
        self.state.armed.append(ArmedApproval(method.upper(), strip_fragment(url), fields))

    def disarm(self) -> None:
        self.state.armed.clear()

    # ------------------------------------------------------------ events
    def _on_request(self, request: Request) -> None:
        if request.resource_type in TRACKED_TYPES:
            self.state.pending.add(id(request))
        if request.redirected_from is not None and not self.policy.check_url(request.url).allowed:
            decision = self.policy.request(request.method, self.vault.redact(request.url))
            self.state.blocked.append(decision)
            self.state.notes.append(
                f"a redirect reached {self.vault.redact(request.url)}, outside the allow-list; the page was closed"
            )

    def _on_done(self, request: Request) -> None:
        if id(request) in self.state.pending:
            self.state.pending.discard(id(request))
            self.state.finished += 1

    def _on_response(self, response: Response) -> None:
        request = response.request
        try:
            main = request.is_navigation_request() and request.frame.parent_frame is None
        except Exception:
            main = False
        if main:
            self.state.main_status = (response.status, request.method, self.vault.redact(response.url))

    def _on_dialog(self, dialog: Dialog) -> None:
        text = self.vault.redact(dialog.message)
        try:
            if dialog.type == "prompt":
                dialog.dismiss()
                self.state.dialogs.append(f"prompt {text!r} was dismissed (prompts cannot be answered)")
            else:
                dialog.accept()
                self.state.dialogs.append(f"{dialog.type} {text!r} was accepted")
        except Exception as exc:  # the page may already be gone
            self.state.dialogs.append(f"{dialog.type} {text!r} could not be handled: {exc}")

    # ------------------------------------------------------------ routing
    def route(self, route: Route, request: Request) -> None:
        try:
            self._route(route, request)
        except BaseException as exc:  # keep the browser alive; re-raised after the current call
            self.state.handler_errors.append(exc)
            with contextlib.suppress(Exception):
                route.abort("blockedbyclient")

    def _route(self, route: Route, request: Request) -> None:
        url, method = request.url, request.method.upper()
        shown = self.vault.redact(url)
        try:
            frame = request.frame
            is_main = request.is_navigation_request() and frame.parent_frame is None
            page_url = self.vault.redact(frame.url) if frame.url else None
            shown_page = self.state.page[1] if frame.url and self.state.page[0] == frame.url else ""
        except Exception:
            is_main, page_url, shown_page = False, None, ""
        verdict = self.policy.check_url(url)
        if not verdict.allowed:
            self.state.blocked.append(self.policy.request(method, shown))
            route.abort("blockedbyclient")
            return
        changes = self.policy.changes_data(method, url)
        armed = self._take_armed(method, url, request) if changes else "match"
        # a business-data change the policy let through (approved now, or the same payload before):
        # every one goes through the intent log of a durable run; a login or an exempt path does not
        approved = changes and not self.policy.is_exempt(url)
        if approved and self.policy.halted:  # the run was stopped: not even asked
            self.state.blocked.append(self.policy.refuse_halted(method, shown))
            route.abort("blockedbyclient")
            return
        if armed == "switched":
            self.state.blocked.append(self.policy.refuse_switched(method, shown))
            route.abort("blockedbyclient")
            return
        if armed == "none":
            with self._human_wait():
                decision = self.policy.request(
                    method, shown, fields=request_fields(request, self.vault), page_url=page_url
                )
            if not decision.permitted:
                self.state.blocked.append(decision)
                route.abort("blockedbyclient")
                return
        fields = [(self.vault.redact(n), self.vault.redact(v)) for n, v in _raw_fields(request)]
        if approved:  # on its way until its answer (``_submitted``): a copy meanwhile is asked again
            self.policy.leaving(method, shown, fields)
        check = self.policy.send_check  # a durable run asks the approvals authority: exactly this?
        if check is not None and approved:
            refusal = check(method, shown, fields)
            if refusal is not None:
                self.state.notes.append(refusal)
                self.policy.sent(method, shown, fields, "not_sent")
                route.abort("blockedbyclient")
                return
        if approved and self._context is not None:  # the run's before-snapshot (crew/changes.py)
            before_change = getattr(self.policy, "before_change", None)
            if before_change is not None:
                before_change(intent_fetcher(self._context, self.policy))
        intents = getattr(self.policy, "intents", None)  # tools.intents.IntentLog of a durable run
        if intents is not None and approved and self._context is not None:
            refusal = intents.before_send(method, url, fields, intent_fetcher(self._context, self.policy))
            if refusal is not None:
                self.state.notes.append(refusal)
                route.abort("blockedbyclient")
                held = "held back: " + refusal
                self._submitted(method, url, request, SendOutcome(detail=held, seen="not_sent", reason=held))
                return
            outcome = self._classified(method, url, self._forward(route, request, is_main), shown_page)
            intents.after_send(method, url, fields, outcome)  # stores the gate's classification
            self._submitted(method, url, request, outcome)
            return
        outcome = self._forward(route, request, is_main)
        if approved:
            self._submitted(method, url, request, self._classified(method, url, outcome, shown_page))

    def _classified(self, method: str, url: str, outcome: SendOutcome, shown_page: str = "") -> SendOutcome:
        """The system's answer to an approved submission, classified once, with its page
        (``submissions.classify``): the act result, the run's facts and a durable job's intent log
        all take this one (a near-duplicate warning or a login page answered HTTP 200 is not saved;
        a redirect is read with the page it leads to, against the page the form was on)."""
        outcome.seen, outcome.reason = classify(
            method=method,
            url=url,
            http_status=outcome.http_status,
            location=outcome.location,
            body=outcome.body,
            failure=outcome.detail,
            login_paths=self.policy.config.login_paths,
            landing=outcome.landing,
            before=shown_page,
        )
        outcome.reason = self.vault.redact(outcome.reason)
        return outcome

    def _submitted(self, method: str, url: str, request: Request, outcome: SendOutcome) -> None:
        """What became of an approved submission (classified by ``_classified``): for the act result
        and the run's facts."""
        raw = _raw_fields(request)  # the body parsed once, for the result and for the policy
        fields = [(n, self.vault.redact(v)) for n, v in raw if not CSRF_NAME_RE.search(n)]
        result = SubmissionResult(
            method=method,
            url=self.vault.redact(strip_fragment(url)),
            fields=fields,
            result=outcome.classified(),
            http_status=outcome.http_status,
            detail=self.vault.redact(outcome.reason),
        )
        self.state.submissions.append(result)
        sent = [(self.vault.redact(n), self.vault.redact(v)) for n, v in raw]
        self.policy.sent(method, self.vault.redact(url), sent, result.result)
        log = getattr(self.policy, "submissions", None)  # tools.submissions.SubmissionLog of the run
        if log is not None:
            log.record(result)

    def _forward(self, route: Route, request: Request, is_main: bool) -> SendOutcome:
        """Send the request ourselves with redirects off; check every hop before it leaves. Returns
        what the system answered to the request itself (the first hop): its status, or the failure.

        Nothing is handed back to the browser's own network stack (the gatekeeper proxy refuses what
        is): a redirect of a document becomes a tiny page that navigates to the checked target (a new,
        routed request); a redirect of a page resource is followed here, GET to GET only.
        """
        from playwright.sync_api import Error as PlaywrightError

        url, method = request.url, request.method.upper()
        is_document = request.resource_type == "document"
        landing = self.state.landings.pop(url, None) if method == "GET" and is_document else None
        if landing is not None:  # the page a submission's redirect led to, read once already
            if is_main:
                self.policy.navigation(self.vault.redact(url))
                self._shown(url, landing)
            route.fulfill(response=landing)
            return SendOutcome(http_status=landing.status)
        headers = _unconditional(request.headers)
        outcome: SendOutcome | None = None
        for hop in range(MAX_REDIRECTS + 1):
            try:
                if hop == 0:
                    response = route.fetch(headers=headers, max_redirects=0, timeout=self._nav_timeout)
                else:  # a later hop is a plain GET/HEAD (a hop repeating a write was refused)
                    assert self._context is not None
                    response = self._context.request.fetch(
                        url, method=method, max_redirects=0, timeout=self._nav_timeout
                    )
            except PlaywrightError as exc:
                failure = self.vault.redact(str(exc).splitlines()[0])
                self.state.notes.append(f"{method} {self.vault.redact(url)} failed: {failure}")
                route.abort("failed")
                return outcome or SendOutcome(detail=failure)
            location = response.headers.get("location")
            if outcome is None:
                outcome = SendOutcome(http_status=response.status, location=location)
                if method not in SAFE_METHODS and not location:  # what a submission was answered
                    with contextlib.suppress(Exception):
                        outcome.body = response.text()[:200_000]
            if not (300 <= response.status < 400 and location):
                if is_main:
                    self.policy.navigation(self.vault.redact(url))
                    self._shown(url, response)
                if hop > 0 and request.method.upper() not in SAFE_METHODS:  # a script's redirected send
                    outcome.landing = _text(response)
                route.fulfill(response=response)
                return outcome
            target = urljoin(url, location)
            next_method = method if response.status in (307, 308) or method in ("GET", "HEAD") else "GET"
            refusal = self._redirect_refusal(url, target, next_method)
            if refusal is not None:
                self.state.notes.append(refusal)
                route.abort("blockedbyclient")
                return outcome
            if is_document:
                if is_main:
                    self.policy.navigation(self.vault.redact(url))
                if method not in SAFE_METHODS and next_method == "GET":  # a form's send, redirected
                    self._read_landing(target, outcome)
                route.fulfill(status=200, content_type="text/html; charset=utf-8", body=_hop_page(target))
                return outcome
            url, method = target, next_method
        self.state.notes.append(
            f"{self.vault.redact(request.url)} redirected more than {MAX_REDIRECTS} times"
        )
        route.abort("failed")
        return outcome or SendOutcome(detail="too many redirects")

    def _read_landing(self, target: str, outcome: SendOutcome) -> None:
        """Read the page a submission's redirect leads to, once, for its classification: the browser
        is then given this same answer when it goes there (``_forward``), so a message the system
        shows only once (a "flash": an error after a redirect back to the form) is seen by both."""
        from playwright.sync_api import Error as PlaywrightError

        assert self._context is not None
        try:
            response = self._context.request.fetch(
                target, method="GET", max_redirects=0, timeout=self._nav_timeout, headers=_HTML
            )
        except PlaywrightError:
            return  # the browser goes there itself; classified on the answer alone
        if 300 <= response.status < 400:
            return  # another hop: the browser follows it, each hop checked
        outcome.landing = _text(response)
        self.state.landings[target] = response

    def _shown(self, url: str, response: Any) -> None:
        """Remember the main document the browser is given: a submission from it is classified
        against it (an error that was on the page before is not the answer's)."""
        self.state.page = (url, _text(response))

    def _redirect_refusal(self, url: str, target: str, next_method: str) -> str | None:
        """Why a redirect hop may not be taken (recorded as a decision), or None."""
        shown, shown_target = self.vault.redact(url), self.vault.redact(target)
        if not self.policy.check_url(target).allowed:
            self.state.blocked.append(self.policy.navigation(shown_target))
            return f"{shown} redirected to {shown_target}, which is blocked; the redirect was not followed"
        if self.policy.changes_data(next_method, target):
            decision = self.policy.refuse_redirect(next_method, shown_target)
            self.state.blocked.append(decision)
            return (
                f"{shown} redirected a data-changing {next_method} to {shown_target}; a redirect may not "
                "repeat a data-changing request, so it was stopped"
            )
        return None

    def _take_armed(self, method: str, url: str, request: Request) -> Literal["match", "switched", "none"]:
        """Consume the approval armed for this method and URL: "match" when the body really sent is
        the approved one, "switched" when the page changed it after approval (refused, never asked
        again), "none" when nothing was approved for it."""
        target = strip_fragment(url)
        for i, armed in enumerate(self.state.armed):
            if armed.method != method or armed.url != target:
                continue
            del self.state.armed[i]
            if armed.fields is not None and not same_fields(_raw_fields(request), armed.fields):
                self.state.notes.append(
                    f"the page sent different data to {self.vault.redact(url)} than what was approved; "
                    "the request was stopped"
                )
                return "switched"
            return "match"
        return "none"


def _unconditional(headers: dict[str, str]) -> dict[str, str] | None:
    """The request's headers without cache validators (a 304 cannot be fulfilled into the page)."""
    if not any(k.lower() in ("if-none-match", "if-modified-since") for k in headers):
        return None
    return {k: v for k, v in headers.items() if k.lower() not in ("if-none-match", "if-modified-since")}


_HTML = {"accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"}


def _text(response: Any) -> str:
    """An HTML answer's text (its first 200,000 characters), "" for anything else or unreadable."""
    if "html" not in (response.headers.get("content-type") or "").lower():
        return ""
    try:
        return str(response.text())[:200_000]
    except Exception:
        return ""


def _hop_page(target: str) -> str:
    """A page that continues a checked redirect as a new (routed) navigation, replacing itself."""
    where = json.dumps(target).replace("</", "<\\/")
    return f"<!doctype html><title>Redirecting</title><script>location.replace({where})</script>"
