"""The policy gate: code, not prompt, decides what the browser may reach and send.

- Hosts: an allow-list (``host``, ``host:port`` or ``*.domain``). URLs are parsed the way a browser
  would see them, so user-info tricks (``http://erp@evil.test``), look-alike hosts, odd IPv4 spellings,
  backslashes and embedded tabs do not get through; only http(s) (and ws(s) for WebSockets, and
  ``about:blank``) are allowed, so ``javascript:``, ``data:`` and ``file:`` URLs are refused.
- Paths: one reading of a target's path for every rule (``approvals.rules.target_path``): blocked
  prefixes and ``changing_get_paths`` (deny rules) match any way a server may read it (decoded,
  ``;params`` dropped, dot segments resolved, any case); the login and exempt paths (allow rules)
  only a path sent plain and exactly as configured.
- Data-changing requests (any method but GET/HEAD/OPTIONS, and GETs to ``changing_get_paths``): a login
  to a configured ``login_paths`` URL (never a form that merely looks like a login) and
  ``exempt_paths`` such as the ERP's cookie-notice dismissal are exempt; read-only mode refuses the rest; otherwise the injected ``Human`` sees the method, URL and exact field values (secrets as
  placeholders) and approves, rejects or answers. An identical payload approved before is not asked again.
- Every decision is a typed ``PolicyDecision``, kept in ``decisions`` and handed to the injected recorder.

File-path rules (sandbox root, dotfiles, secrets) live with the file tools, not here.
"""

from __future__ import annotations

import re
import socket
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field

from taskcrew.approvals.key import request_key
from taskcrew.approvals.record import read_record, record_page, vendor_list
from taskcrew.approvals.rules import (
    RiskRules,
    TargetPath,
    approved_when,
    canonical_path,
    load_rules,
    look_up,
    lookup_change,
    read_path,
    target_path,
)
from taskcrew.config import DEFAULT_ERP_PORT
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, FieldValue, Human
from taskcrew.tools.prompt_input import NoAnswer

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
REASKS = 3  # a record whose amount changed after each approval: asked again at most this often
CHANGED_EACH_TIME = "the record changed each time it was approved; nothing was sent"  # past REASKS
MAY_HAVE_SAVED = frozenset({"saved", "unknown"})  # answers that spend an approval (``Policy.sent``)
IN_DOUBT = (
    "the same request, approved before, got no clear answer from the system (an outage, a timeout, the "
    "form shown again): it may have been saved. Look in the system before approving it again"
)
# a per-page anti-forgery token field, by its WHOLE name (csrf_token, _csrf, XSRF-TOKEN,
# csrfmiddlewaretoken, authenticity_token, _token, __RequestVerificationToken): the one rule for what
# the record of sends, the report and the trace leave out. Never a name that merely contains such a
# word: a page's field "iban_xsrf" is a business field and must stay in view as the approver saw it.
_TOKEN_FIELD = re.compile(
    r"_*(?:csrf|xsrf)(?:[-_]?(?:token|middlewaretoken|key|nonce|param))?|_+token|authenticity_token|"
    r"_*requestverificationtoken",
    re.IGNORECASE,
)


def is_token_field(name: str) -> bool:
    """Is ``name`` an anti-forgery token field's whole name (``_TOKEN_FIELD``)?"""
    return _TOKEN_FIELD.fullmatch(name.strip()) is not None


_CONTROL_RE = re.compile(r"[\t\n\r]")

DecisionKind = Literal["navigation", "request", "submission", "typing"]
Outcome = Literal["allowed", "blocked", "approved", "rejected", "read_only_refused"]


class PolicyConfig(BaseModel):
    """What the browser may do. The defaults fit the mock ERP on its default port."""

    allowed_hosts: list[str] = Field(
        default_factory=lambda: [f"127.0.0.1:{DEFAULT_ERP_PORT}", f"localhost:{DEFAULT_ERP_PORT}"]
    )
    blocked_paths: list[str] = Field(default_factory=lambda: ["/_debug"])
    login_paths: list[str] = Field(default_factory=lambda: ["/login"])
    exempt_paths: list[str] = Field(default_factory=lambda: ["/notice/dismiss"])
    """POSTs that change no business data (the ERP's cookie-notice dismissal): no approval needed."""
    changing_get_paths: list[str] = Field(default_factory=list)
    """GET paths the site uses to change data (a GET that logs out or deletes): gated like a POST."""
    read_only: bool = False
    approve_network_requests: bool = True
    """Ask the human about data-changing fetch/XHR requests; when False they are simply aborted."""

    @classmethod
    def for_url(cls, url: str, **overrides: object) -> PolicyConfig:
        """Allow exactly the host:port of ``url`` (e.g. the ERP's base URL)."""
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        host = (parts.hostname or "").lower()
        hosts = [f"{host}:{port}"]
        if host in ("127.0.0.1", "localhost"):
            hosts.append(f"{'localhost' if host == '127.0.0.1' else '127.0.0.1'}:{port}")
        return cls.model_validate({"allowed_hosts": hosts, **overrides})


class UrlVerdict(BaseModel):
    allowed: bool
    reason: str
    url: str
    host: str | None = None
    path: str | None = None


class Submission(BaseModel):
    """A data-changing request about to be sent, as the gate sees it (secrets already masked)."""

    origin: Literal["form", "network"]
    method: str
    url: str
    fields: list[FieldValue] = Field(default_factory=list)
    page_url: str | None = None
    summary: str = ""
    login_form: bool = False
    sent: list[tuple[str, str]] | None = None
    """Exactly what will be sent (vault secrets as placeholders), when ``fields`` shows it
    differently (a select's label): the approval key is computed from it."""


class PolicyDecision(BaseModel):
    kind: DecisionKind
    outcome: Outcome
    url: str
    method: str = "GET"
    reason: str
    fields: list[FieldValue] = Field(default_factory=list)
    answer: str | None = None
    approved_by: str | None = None
    """Who or what approved it: a named person, a rule, --auto-approve (never just "the human")."""
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def permitted(self) -> bool:
        return self.outcome in ("allowed", "approved")

    def message(self) -> str:
        """A sentence for the agent."""
        target = f"{self.method} {self.url}"
        if self.outcome == "blocked":
            return f"Blocked by policy: {target} — {self.reason}."
        if self.outcome == "read_only_refused":
            return f"Refused: {target} would change data and this session is read-only."
        if self.outcome == "rejected":
            text = f"The human did not approve {target}."
            if self.answer:
                text += f" They said: {self.answer}"
            return text
        return f"{self.outcome.capitalize()}: {target} ({self.reason})."


Recorder = Callable[[PolicyDecision], None] | list[PolicyDecision]


def normalize_host(host: str) -> str | None:
    """The host as a browser would resolve it: lower-case, IDNA, canonical IPv4; None if invalid."""
    host = host.strip().rstrip(".").lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or "%" in host or any(c in host for c in " /\\@#?<>^|"):
        return None
    if re.fullmatch(r"[0-9a-fx.]+", host) and not re.search(r"[g-wyz]", host):
        try:  # browsers accept 2130706433, 0x7f.1, 127.1 ... as IPv4
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            pass
    if ":" in host:  # IPv6 literal
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def check_url(url: str, config: PolicyConfig) -> UrlVerdict:
    """Pure URL check against the allow-list and blocked paths."""
    cleaned = _CONTROL_RE.sub("", url.strip(" \x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f"))
    scheme = cleaned.split(":", 1)[0].lower() if ":" in cleaned else ""
    if cleaned.lower() in ("about:blank", "about:srcdoc"):
        return UrlVerdict(allowed=True, reason="blank page", url=cleaned)
    if scheme not in ("http", "https", "ws", "wss"):
        shown = scheme or "relative"
        return UrlVerdict(
            allowed=False,
            reason=f"only http(s) URLs may be opened, not {shown}: URLs (javascript:, data:, file: are refused)",
            url=cleaned[:200],
        )
    parts = urlsplit(cleaned.replace("\\", "/"))
    if "@" in parts.netloc:
        return UrlVerdict(
            allowed=False,
            reason="the URL carries user info before an '@', which hides the real host; refused",
            url=cleaned,
        )
    host = normalize_host(parts.hostname or "")
    try:
        port = parts.port or (443 if parts.scheme.lower() in ("https", "wss") else 80)
    except ValueError:
        return UrlVerdict(allowed=False, reason="the URL has an invalid port", url=cleaned)
    if host is None:
        return UrlVerdict(allowed=False, reason="the URL has no valid host", url=cleaned)
    if not _host_allowed(host, port, config.allowed_hosts):
        allowed = ", ".join(config.allowed_hosts) or "none"
        return UrlVerdict(
            allowed=False,
            reason=f"host {host}:{port} is not on the allow-list ({allowed})",
            url=cleaned,
            host=host,
        )
    target = read_path(parts.path)
    for prefix in config.blocked_paths:
        if _under(target, prefix.rstrip("*")):
            return UrlVerdict(
                allowed=False,
                reason=f"the path {prefix} is off limits",
                url=cleaned,
                host=host,
                path=target.canonical,
            )
    return UrlVerdict(allowed=True, reason="allowed host", url=cleaned, host=host, path=target.canonical)


def _under(target: TargetPath, prefix: str, *, below: bool = True) -> bool:
    """A deny rule: any reading of the path (any case, ``target_path``) is ``prefix`` (or, with
    ``below``, under it); a path with too many readings to tell is."""
    base = canonical_path(prefix).rstrip("/").lower()
    return not target.complete or any(
        r.lower() == (base or "/") or (below and r.lower().startswith(base + "/")) for r in target.readings
    )


def _host_allowed(host: str, port: int, entries: list[str]) -> bool:
    for entry in entries:
        e_host, e_port = _split_entry(entry)
        if e_port is not None and e_port != port:
            continue
        if e_host.startswith("*."):
            base = normalize_host(e_host[2:])
            if base and (host == base or host.endswith("." + base)):
                return True
        elif normalize_host(e_host) == host:
            return True
    return False


def _split_entry(entry: str) -> tuple[str, int | None]:
    entry = entry.strip().lower()
    if entry.startswith("["):  # [::1]:8800
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return host, int(port)
    return entry, None


def strip_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


class Policy:
    """Decides, asks the human when needed, and records every decision."""

    def __init__(
        self,
        config: PolicyConfig,
        human: Human,
        recorder: Recorder | None = None,
        rules: RiskRules | None = None,
    ) -> None:
        self.config = config
        self.human = human
        self._recorder = recorder
        # the run's one rules snapshot, read now: every request key of the run is made by it — this
        # gate's, its intent log's and the authority's that checks and signs its sends
        # (``Authority.keys_by``); an edit of the rules file reaches the run's keys in its next leg
        self.rules = rules or load_rules()
        self.decisions: list[PolicyDecision] = []
        # notes for fields in an approval (e.g. "read by OCR — check it"); each returns a note or None
        self.flaggers: list[Callable[[FieldValue], str | None]] = []
        # approval key -> who approved it and what they were shown read from the system (a bill
        # raised or moved to another vendor since is asked again: authority.system_reading)
        self._approved: dict[str, tuple[str, dict[str, str]]] = {}
        # approval key -> how many approved copies are on their way, their answer not back (``leaving``)
        self._leaving: Counter[str] = Counter()
        self._in_doubt: set[str] = set()  # keys whose approved send got no clear answer (``sent``)
        self.page_fetch: Callable[[str], str | None] | None = None  # set by the network guard
        self.send_check: Callable[[str, str, list[tuple[str, str]]], str | None] | None = None
        """A durable run's authority check before anything data-changing leaves (approvals.worker)."""
        self.expected_send: Callable[[Submission], str | None] | None = None
        """Set by a routine's replay around its approval step (``routines.replay``): why a
        data-changing submission is not what the step was reviewed to send, or None. One it names a
        reason for is blocked before anyone is asked."""
        self.halted: str | None = None  # why the run was stopped: nothing data-changing leaves any more

    @property
    def read_only(self) -> bool:
        return self.config.read_only

    def read_only_copy(self) -> Policy:
        """The same rules, human and recorder, but refusing every data-changing request (verifier)."""
        copy = Policy(
            self.config.model_copy(update={"read_only": True}), self.human, self._recorder, self.rules
        )
        copy.flaggers = self.flaggers
        return copy

    def check_url(self, url: str) -> UrlVerdict:
        return check_url(url, self.config)

    def changes_data(self, method: str, url: str) -> bool:
        """Is this request data-changing: any method but GET/HEAD/OPTIONS, or a GET the site marks?"""
        method = method.upper()
        if method not in SAFE_METHODS:
            return True
        target = target_path(url)
        return any(_under(target, p, below=False) for p in self.config.changing_get_paths)

    def refuse_redirect(self, method: str, url: str) -> PolicyDecision:
        """A redirect that would repeat a data-changing request: never followed (recorded)."""
        return self._record(
            PolicyDecision(
                kind="request",
                outcome="blocked",
                url=url,
                method=method.upper(),
                reason="a redirect may not repeat a data-changing request",
            )
        )

    def refuse_switched(self, method: str, url: str) -> PolicyDecision:
        """The page changed an approved submission before it was sent (bait and switch): refused."""
        return self._record(
            PolicyDecision(
                kind="request",
                outcome="blocked",
                url=url,
                method=method.upper(),
                reason="the data sent differs from the data approved; nothing was sent",
            )
        )

    def refuse_halted(self, method: str, url: str, kind: DecisionKind = "request") -> PolicyDecision:
        """The run was stopped (Ctrl-C, SIGTERM) and its report is being written: a submission its
        abandoned agent thread still tries is refused, unasked (when it would be asked, and again when
        one approved before would leave), so the report stays true."""
        return self._record(
            PolicyDecision(
                kind=kind,
                outcome="blocked",
                url=url,
                method=method.upper(),
                reason=f"{self.halted}; nothing was sent",
            )
        )

    def refuse_read(self, url: str) -> PolicyDecision | None:
        """May code read ``url`` with the worker's session (an approval's record and vendor list, a
        read-back, a before-snapshot; every redirect hop of it)? None: yes; else the recorded refusal.
        The same allow-list and blocked paths as the browser, and never a GET that changes data."""
        verdict = self.check_url(url)
        if not verdict.allowed:
            reason = f"a read by code was refused: {verdict.reason}"
        elif self.changes_data("GET", url):
            reason = "a read by code may not open a page that changes data"
        else:
            return None
        return self._record(PolicyDecision(kind="request", outcome="blocked", url=url, reason=reason))

    def read_refusal(self, url: str, /) -> str | None:
        """``refuse_read`` as a reason (None: it may be read), for fetchers outside the browser."""
        refused = self.refuse_read(url)
        return refused.reason if refused is not None else None

    def unroutable(self, method: str, target: str) -> PolicyDecision:
        """The browser tried to send something outside the network guard; the gatekeeper refused it."""
        return self._record(
            PolicyDecision(
                kind="request",
                outcome="blocked",
                url=target,
                method=method.upper(),
                reason="the browser tried to send it around the network guard (prefetch, a window it "
                "opened itself, WebRTC); refused",
            )
        )

    def navigation(self, url: str, *, kind: DecisionKind = "navigation") -> PolicyDecision:
        """May the browser open ``url``? Recorded either way."""
        verdict = self.check_url(url)
        outcome: Outcome = "allowed" if verdict.allowed else "blocked"
        return self._record(PolicyDecision(kind=kind, outcome=outcome, url=url, reason=verdict.reason))

    def typing_secret(self, url: str, text_with_placeholders: str) -> PolicyDecision:
        """Record that secret placeholders were filled into a field on ``url`` (an allowed host)."""
        names = sorted(set(re.findall(r"secret:([A-Za-z_][A-Za-z0-9_]*)", text_with_placeholders)))
        return self._record(
            PolicyDecision(
                kind="typing",
                outcome="allowed",
                url=url,
                method="TYPE",
                reason=f"filled in secret(s) {', '.join(names)} on an allowed host",
            )
        )

    def typing_refused(self, url: str, name: str, reason: str | None = None) -> PolicyDecision:
        """A secret placeholder typed into a page of a host it is not bound to, or into a field it
        is not bound to (``reason``), recorded."""
        return self._record(
            PolicyDecision(
                kind="typing",
                outcome="blocked",
                url=url,
                method="TYPE",
                reason=reason or f"the secret {name} is bound to other hosts and may not be typed here",
            )
        )

    def request(
        self,
        method: str,
        url: str,
        *,
        fields: list[FieldValue] | None = None,
        record_allowed: bool = False,
        page_url: str | None = None,
    ) -> PolicyDecision:
        """The network-layer check for every request the page makes."""
        method = method.upper()
        verdict = self.check_url(url)
        if not verdict.allowed:
            return self._record(
                PolicyDecision(
                    kind="request", outcome="blocked", url=url, method=method, reason=verdict.reason
                )
            )
        if not self.changes_data(method, url):
            decision = PolicyDecision(
                kind="request", outcome="allowed", url=url, method=method, reason="read"
            )
            return self._record(decision) if record_allowed else decision
        exempt = self.is_exempt(url)
        if not self.config.approve_network_requests and not self.read_only and not exempt:
            return self._record(
                PolicyDecision(
                    kind="request",
                    outcome="blocked",
                    url=url,
                    method=method,
                    reason="data-changing requests from page scripts are not allowed without approval",
                    fields=fields or [],
                )
            )
        sub = Submission(origin="network", method=method, url=url, fields=fields or [], page_url=page_url)
        return self.submission(sub)

    def submission(self, sub: Submission) -> PolicyDecision:
        """Gate a submission: blocked / allowed (GET, login, already approved) / asked / refused."""
        method = sub.method.upper()
        kind: DecisionKind = "submission" if sub.origin == "form" else "request"

        def decide(
            outcome: Outcome, reason: str, answer: str | None = None, by: str | None = None
        ) -> PolicyDecision:
            return self._record(
                PolicyDecision(
                    kind=kind,
                    outcome=outcome,
                    url=sub.url,
                    method=method,
                    reason=reason,
                    fields=sub.fields,
                    answer=answer,
                    approved_by=by,
                )
            )

        verdict = self.check_url(sub.url)
        if not verdict.allowed:
            return decide("blocked", verdict.reason)
        if not self.changes_data(method, sub.url):
            return decide("allowed", "does not change data")
        if self._is_login_path(sub.url):  # by the configured login URL, never by the form's shape
            return decide("allowed", "login is exempt from approval")
        if _exact(sub.url, self.config.exempt_paths):
            return decide("allowed", "this path changes no business data (exempt)")
        if self.read_only:
            return decide("read_only_refused", "read-only session")
        if self.halted:
            return self.refuse_halted(method, sub.url, kind)
        if self.expected_send is not None and (off := self.expected_send(sub)) is not None:
            return decide("blocked", off)
        request = self._approval_request(method, sub)
        by, shown = self._approved.get(request.key, ("", {}))
        if by and not self._leaving[request.key] and lookup_change(shown, self._reading(request)) is None:
            return decide("allowed", f"an identical payload was approved before (by {by})", by=by)
        if request.key in self._in_doubt and not request.asked_again:  # the person is told why
            request = request.model_copy(update={"asked_again": IN_DOUBT})
        try:
            reply, request = self._ask(sub, request)
        except NoAnswer as none:  # nobody decided: recorded as not sent (no rejection), and the run ends
            decide("blocked", f"nobody answered ({none.why}); nothing was sent")
            raise
        sub = sub.model_copy(update={"fields": [self._flagged(f) for f in sub.fields]})  # notes on record
        who = reply.by or "the person asked"
        if reply.outcome == "approve":
            self._approved[request.key] = (who, self._reading(request))
            return decide("approved", f"approved by {who}", by=who)
        reason = f"rejected by {who}" if reply.outcome == "reject" else f"{who} answered instead"
        return decide("rejected", reason, answer=reply.text, by=who)

    def leaving(self, method: str, url: str, fields: list[tuple[str, str]]) -> None:
        """An approved data-changing request is on its way (the network gate, before anything that
        may wait): until its answer comes back (``sent``), an identical one does not ride the same
        approval but is asked again: a page script's copy sent beside the approved form would
        otherwise leave before the first copy's answer spent the approval."""
        self._leaving[self._key(method, url, fields)] += 1

    def sent(self, method: str, url: str, fields: list[tuple[str, str]], seen: str) -> None:
        """An approved data-changing request left and the system answered (``seen``, as
        ``submissions.classify`` read it; "not_sent" for one held back after ``leaving``). An answer
        that may have saved it — "saved", or "unknown" (an outage, a timeout, the form shown again
        with no error: a "Save & New" page) — spends its approval here: an identical request after
        it is asked again, so a page script's second copy of an approved payment (or the agent
        saving the same bill twice) does not ride one approval. Only an answer that says it was not
        saved ("refused", "bounced" to a login page, "not_sent") leaves it: the agent's retry then
        sends what the person approved once. A run that keeps an intent log (``intents``: a job,
        ``taskcrew run``, a routine's replay) has every repeat after an "unknown" answer decided by
        that log instead (it reads the system back, and asks a person when it cannot tell), so
        there only "saved" spends it here."""
        key = self._key(method, url, fields)
        if self._leaving[key] > 0:
            self._leaving[key] -= 1
        spends = {"saved"} if getattr(self, "intents", None) is not None else MAY_HAVE_SAVED
        if seen in spends:
            self._approved.pop(key, None)
        if seen == "unknown" and seen in spends:
            self._in_doubt.add(key)
        elif seen == "saved":
            self._in_doubt.discard(key)

    def _key(self, method: str, url: str, fields: list[tuple[str, str]]) -> str:
        return request_key(method, url, fields, excluded=self.rules.excluded_for(url))

    def _ask(self, sub: Submission, request: ApprovalRequest) -> tuple[ApprovalDecision, ApprovalRequest]:
        """The person's decision, for the system as it is when the request leaves. A request shown
        what was read from the system (``authority.system_reading``: paying a bill sends no amount
        and no payee, the system pays what the record says when it arrives) was shown it as read
        before the person was asked, maybe minutes ago; it is read again once they approve, and a
        change is asked again, as a resumed job's is (``approved_when``). A record that changes on
        every reading is not sent."""
        reply, said = self.human.approve(request), request.asked_again  # (a repeat in doubt says why)
        for asked in range(REASKS + 1):
            if reply.outcome != "approve" or not (shown := self._reading(request)):
                break
            now = self._approval_request(request.method, sub)
            why = approved_when(reply.by or "the person asked", shown, self._reading(now))
            if why is None:
                break
            if asked == REASKS:
                why = f"{why}: {CHANGED_EACH_TIME}"
                reply = ApprovalDecision(outcome="reject", text=why, by="the record check", basis="rule")
                break
            why = f"{said}; and {why}" if said else why
            request = now.model_copy(update={"asked_again": why})  # as read now, with its flags
            reply = self.human.approve(request)
        return reply, request

    def ask_to_send_again(
        self, method: str, url: str, fields: list[tuple[str, str]], attempt: str, warning: str
    ) -> bool:
        """``IntentLog``'s ``ask_again`` for a run whose person is this policy's human (``taskcrew
        run``): an earlier attempt of exactly this may still land; sent again only if a person,
        shown ``warning`` (``asked_again``), approves it now — never --auto-approve or a rule.
        Recorded either way."""
        sub = Submission(
            origin="network", method=method, url=url, fields=[FieldValue(name=n, value=v) for n, v in fields]
        )
        request = self._approval_request(method, sub).model_copy(update={"asked_again": warning})
        reply, request = self._ask(sub, request)  # the record read again once approved, as any send's
        person = reply.outcome == "approve" and reply.basis == "person"
        self._record(
            PolicyDecision(
                kind="submission",
                outcome="approved" if person else "rejected",
                url=url,
                method=method.upper(),
                reason=f"sent again ({attempt}): {warning}"
                if person
                else f"not sent again: {'only a person may approve that' if reply.approved else 'not approved'}",
                fields=request.fields,
                answer=reply.text,
                approved_by=reply.by if person else None,
            )
        )
        return person

    def is_exempt(self, url: str) -> bool:
        """A login or an exempt path: data-changing, but no approval and no intent (not business data)."""
        return self._is_login_path(url) or _exact(url, self.config.exempt_paths)

    def _is_login_path(self, url: str) -> bool:
        return _exact(url, self.config.login_paths)

    def _approval_request(self, method: str, sub: Submission) -> ApprovalRequest:
        """What the person is asked: every field (one a rule leaves out of the key says so), the
        record amount the rules need, the record it changes (``record.record_page``: the page that
        amount is read from, else the page the form sat on), the flags, and the canonical key of
        exactly what is sent."""
        excluded = self.rules.excluded_for(sub.url)
        sent = sub.sent if sub.sent is not None else [(f.name, f.value) for f in sub.fields]
        shown = [
            FieldValue(name=f.name, value=f"(left out of the approval: {excluded[f.name]})")
            if f.name in excluded
            else self._flagged(f)
            for f in sub.fields
        ]
        fetch = _read_once(self.page_fetch)  # a pay form sits on the record's page: one GET serves both
        vendors = vendor_list(sub.url, self.rules, fetch)
        request = ApprovalRequest(
            kind="form_submission" if sub.origin == "form" else "network_request",
            method=method,
            url=sub.url,
            fields=shown,
            summary=sub.summary,
            page_url=sub.page_url,
            key=request_key(method, sub.url, sent, excluded=excluded),
            excluded={n: why for n, why in excluded.items() if any(n == f.name for f in sub.fields)},
            looked_up=look_up(sub.url, self.rules, fetch),
            record=read_record(record_page(sub.url, sub.page_url, self.rules), fetch),  # its "before"
            known_vendors=vendors.names,
            vendors_page=vendors.page,
            vendor_records=vendors.records,
        )
        return self._assessed(request)

    def _reading(self, request: ApprovalRequest) -> dict[str, str]:
        """What the person asked about ``request`` is shown read from the system
        (``authority.system_reading``: the one reading a decision is held to)."""
        from taskcrew.approvals.authority import system_reading  # (the authority imports the job store)

        return system_reading(request, self.rules)

    def _assessed(self, request: ApprovalRequest) -> ApprovalRequest:
        """``request`` with the flags every surface shows (``authority.assess_request``: the rules
        judge the values sent, and flag one that sat in a password box)."""
        from taskcrew.approvals.authority import assess_request  # (the authority imports the job store)

        flags = assess_request(request, self.rules)
        return request.model_copy(update={"flags": [f.message for f in flags.flags]})

    def _flagged(self, field: FieldValue) -> FieldValue:
        """``field`` with the flaggers' notes after the gate's own (``authority.PASSWORD_BOX``)."""
        notes = [n for n in (flag(field) for flag in self.flaggers) if n]
        kept = [field.note] if field.note and notes else []
        return field.model_copy(update={"note": "; ".join([*kept, *notes])}) if notes else field

    def refuse_websocket(self, url: str, why: str) -> PolicyDecision:
        """A WebSocket is never opened (``network.py``: ``why``): recorded as a refused request with
        method WEBSOCKET, to a host off the allow-list as blocked there."""
        verdict = self.check_url(url)
        read_only = verdict.allowed and self.read_only
        return self._record(
            PolicyDecision(
                kind="request",
                outcome="read_only_refused" if read_only else "blocked",
                url=url,
                method="WEBSOCKET",
                reason=("read-only session; " if read_only else "")
                + (why if verdict.allowed else f"{verdict.reason}; {why}"),
            )
        )

    def _record(self, decision: PolicyDecision) -> PolicyDecision:
        self.decisions.append(decision)
        if isinstance(self._recorder, list):
            self._recorder.append(decision)
        elif self._recorder is not None:
            self._recorder(decision)
        return decision


def _exact(url: str, paths: list[str]) -> bool:
    """An exemption (an allow rule) holds only for a path sent plain (``TargetPath.plain``: no
    escape, ";", "//", dot segment or trailing "/") that is one of ``paths`` exactly, case and all:
    a path a server could read as another is never exempt (it is asked, and flagged)."""
    target = target_path(url)
    return target.plain and target.sent in paths


def _read_once(fetch: Callable[[str], str | None] | None) -> Callable[[str], str | None] | None:
    """``fetch`` with each URL read at most once (the reads of one approval request)."""
    if fetch is None:
        return None
    pages: dict[str, str | None] = {}

    def once(url: str) -> str | None:
        if url not in pages:
            pages[url] = fetch(url)
        return pages[url]

    return once
