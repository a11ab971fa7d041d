"""Intents: every approved data-changing submission is recorded before it is sent, its outcome after,
and a repeat of the same payload in the same job is reconciled before anything is sent again.

The network gate (``tools/browser/network.py``) calls ``IntentLog.before_send`` for every approved
data-changing request and ``after_send`` with what came back. A durable run (``taskcrew.jobs``)
attaches an ``IntentLog`` to the run's policy (``policy.intents``); a plain run has none and sends as
before.

    before_send → None: send it (the attempt is recorded first, with no result yet)
                → a text: do NOT send; the text goes back to the agent as an observation.

The request is the gate's, computed once (``outgoing``: method, URL and fields with the vault's
secrets redacted, and its request key): the approval, the send check, the record, every text about it
and the signed send all read that one, and the record keeps its key (``IntentRecord.send_key``) to be
matched to the signed audit log by. Only the request that goes out carries the real secret.

A repeat (same job and the same canonical request key, ``approvals.key``: method, URL and every field
but those a rule names as per-page tokens of that system):
- with a read-back rule (``tools/readback.py``, the company's ``readback.yaml``): the system is read
  back; applied → not sent (and the attempt it confirms is the latest one saved, else the latest whose
  answer nobody knows: a refused, bounced or unsent attempt stays so, and when every one was, the
  record found is not this job's change: the repeat is recorded as held back); absent → sent, unless
  an earlier attempt may still land (``in_doubt``:
  no answer came back from the system — none recorded, a timeout, a worker stopped or frozen mid-send,
  a gateway's 502/504): a read-back cannot prove that one will not apply later, so it is sent again
  only on a person's fresh approval that says so (``ask_again``; never ``--auto-approve``); cannot
  tell → decided as without a rule;
- without one, by the earlier attempt's recorded outcome: definitely not applied (refused, bounced to
  a login page, never reached the system) → sent again; applied, no clear answer (no answer, a 5xx),
  or no recorded result at all (stopped between recording and the answer) → not sent, and the agent
  is told what to check or to ask a person. Never guessed.

Every attempt is its own record (``attempt_key``), never written over by the next one, so an earlier
attempt whose answer never came stays in the job's facts (``crew/outcome.py``). ``last_check`` is the
last thing before an attempt leaves (a durable job: the job still runs on this leg).

The outcome is the network gate's classification of the answer (``tools/submissions.classify``, made
once, with the answer's page: a near-duplicate warning or a login page answered HTTP 200 is not
saved), kept in the record (``IntentRecord.seen``); the repeat rule here and a resumed leg's facts
(``crew/outcome.py``) both read it through ``IntentRecord.answer``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from taskcrew.approvals.key import (
    POSSIBLY,
    POSSIBLY_WHY,
    counts_as_attempt,
    earlier_attempt,
    earlier_send,
    request_key,
    request_keys,
)
from taskcrew.approvals.rules import RiskRules, load_rules
from taskcrew.tools.readback import PLACEHOLDER as RULE_VALUE
from taskcrew.tools.readback import FetchText, ReadBack, ReadBackRules
from taskcrew.tools.submissions import Applied, classify
from taskcrew.tools.vault import Vault

IntentStatus = Literal["recorded", "sent", "confirmed", "not_applied", "uncertain"]


NOT_SENT_AGAIN = "it was NOT sent again"  # the words a repeat held back ends with (models read them)
HELD = "not sent: "  # how the result of an attempt the gate held back (it never left) starts
UNRECORDED = "sent before, says the signed audit log; the job database has no record of it"
GATEWAY = (502, 504)  # answered by a gateway, not the system: it may still be working on the request


class SendOutcome(BaseModel):
    """What came back for a submission that left the gate."""

    http_status: int | None = None  # None: no answer
    detail: str = ""  # the failure, when there was no answer
    location: str | None = None  # where a redirect pointed (a login page: bounced, not applied)
    body: str = Field(default="", exclude=True, repr=False)  # the answer page (tools/submissions.py)
    landing: str = Field(default="", exclude=True, repr=False)  # the page a redirect led to
    seen: Applied | None = None  # the gate's classification of the answer, with its page (network.py)
    reason: str = ""  # what the answer said, with ``seen`` (a refusal's reason, where it showed)

    def classified(self) -> Applied:
        """The gate's classification (``seen``); for an outcome the gate did not classify, the same
        rule on what there is (no page)."""
        if self.seen is not None:
            return self.seen
        seen, _ = classify(
            method="POST",
            url="",
            http_status=self.http_status,
            location=self.location,
            body=self.body,
            failure=self.detail,
        )
        return seen

    @property
    def applied(self) -> bool | None:
        """True: the system accepted it; False: it definitely did not; None: cannot be known."""
        return applied_of(self.classified())

    def describe(self) -> str:
        """The answer in words, kept as the record's ``result``; one that was not saved names the
        gate's classification ("answered HTTP 200 — refused: …")."""
        if self.http_status is None:
            return f"no answer: {self.detail}" if self.detail else "no answer"
        seen = self.classified()
        said = "" if seen == "saved" else f" — {seen}" + (f": {self.reason}" if self.reason else "")
        return f"answered HTTP {self.http_status}{said}"


def applied_of(seen: Applied) -> bool | None:
    """A classification as applied (True), not applied (False) or cannot be known (None)."""
    return {"saved": True, "unknown": None}.get(seen, False)


_ANSWERED = re.compile(r"answered HTTP (\d{3})(?: — (refused|bounced|unknown|not_sent)\b)?")


class IntentRecord(BaseModel):
    key: str
    method: str
    url: str
    fields: list[tuple[str, str]]
    status: IntentStatus = "recorded"
    result: str | None = None
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    # the gate's classification of the answer (``after_send``); None: not answered yet
    seen: Applied | None = None
    # a person, told the earlier attempts may still apply, approved sending this one: she judged that
    # they did not, so they are no longer in doubt for the attempts after it (``IntentLog.doubt``)
    approved_again: bool = False
    # the store vouches for the row (signed: ``Intent.trusted``); one it does not is read as an answer
    # nobody knows, and is this job's send only where the signed audit log says so (``reconcile``)
    trusted: bool = True
    # the request's key of no job (``Outgoing.key``): the key its approval and its signed send carry,
    # kept as the gate computed it, so the signed audit log is matched by key (``reconcile``). None: a
    # row written before rows kept it, matched by the key of its stored method, URL and fields
    send_key: str | None = None
    # the fields the rules left out of its key when it was recorded (``approvals.key.earlier_attempt``
    # reads it: an edit of ``excluded_fields`` since does not hide it). None: a row written before
    # rows recorded it, read by the set its key proves
    excluded: list[str] | None = None

    @property
    def left(self) -> bool:
        """It may have left the gate: every attempt but one the gate held back before it went (its
        last check said no; a read-back found the change and no attempt of this job put it there)."""
        held = self.status == "not_applied" and self.seen == "not_sent"
        return not (held and (self.result or "").startswith(HELD))

    @property
    def answer(self) -> Applied:
        """What became of it: for the repeat rule (``IntentLog.before_send``) and for a resumed leg's
        facts (``crew/outcome.py``): the gate's classification once answered. A record without one
        (not answered yet; a store's record taskcrew did not write, which the store reads as
        ``uncertain``) is an answer nobody knows, unless a read-back found the change."""
        if self.status == "confirmed":  # read back: in the system
            return "saved"
        if self.status == "recorded" or self.seen is None:
            return "unknown"
        return self.seen

    @property
    def applied(self) -> bool | None:
        return applied_of(self.answer)

    @property
    def in_doubt(self) -> bool:
        """It may still apply later, whatever a read-back finds now: no answer came back from the
        system (none recorded — stopped or frozen mid-send, on its way —, a timeout, a dropped
        connection, a record that does not check out, a gateway's 502/504)."""
        return self.answer == "unknown" and self.http_status in (None, *GATEWAY)

    @property
    def http_status(self) -> int | None:
        """The HTTP status the system answered with (None: no answer, or not sent yet)."""
        found = _ANSWERED.match(self.result or "") if self.status != "recorded" else None
        return int(found.group(1)) if found else None


class IntentSink(Protocol):
    def get(self, key: str) -> IntentRecord | None: ...

    def put(self, record: IntentRecord) -> None: ...

    def claim(self, record: IntentRecord) -> IntentRecord | None:
        """Record a first attempt atomically: None when recorded, else the record already there."""
        ...


class Outgoing(BaseModel):
    """One data-changing request as every record of it reads it, computed once by the network gate
    (``tools/browser/network.py`` ``_route``, by ``outgoing``): the method, the URL and the fields with
    the vault's secrets redacted (what the approver is shown), and its request key (``approvals.key``,
    of no job). The approval is checked, the intent keyed and stored, the answer given and the send
    signed on these; only the request that goes out carries the real secret."""

    model_config = ConfigDict(frozen=True)

    method: str
    url: str
    fields: list[tuple[str, str]]
    key: str


def outgoing(
    method: str,
    url: str,
    fields: list[tuple[str, str]],
    redact: Callable[[str], str],
    risk: RiskRules | None = None,
) -> Outgoing:
    """The request as it is recorded: ``redact`` (``Vault.redact``) applied to the URL and to every
    field's name and value, keyed as ``Authority.key_of`` keys it (the rules' per-page tokens left out)."""
    method, shown = method.upper(), redact(url)
    kept = [(redact(n), redact(v)) for n, v in fields]
    excluded = (risk or load_rules()).excluded_for(shown)
    return Outgoing(
        method=method, url=shown, fields=kept, key=request_key(method, shown, kept, excluded=excluded)
    )


def intent_key(
    scope: str, method: str, url: str, fields: list[tuple[str, str]], risk: RiskRules | None = None
) -> str:
    """The canonical request key (``approvals.key``) of this job's (``scope``) submission."""
    excluded = (risk or load_rules()).excluded_for(url)
    return request_key(method, url, fields, excluded=excluded, scope=scope)


def attempt_key(key: str, n: int) -> str:
    """The record of the ``n``-th attempt (0: the first) to send the submission ``key``."""
    return key if n == 0 else f"{key}.{n + 1}"


def record_of(intent: Any) -> IntentRecord:
    """A job database's intent row (``jobs.models.Intent``) as the intent log and every surface read
    it. Its ``excluded``: the fields the rules left out of its key when it was recorded (``[]``:
    nothing left out, ``Intent.exclusions_recorded``), or None: a row written before rows recorded
    them (no mark and none named: every version wrote an empty set), read by what its key proves."""
    named = list(intent.payload.excluded)
    return IntentRecord(
        key=intent.key,
        method=intent.payload.method,
        url=intent.target,
        fields=[(f.name, f.value) for f in intent.payload.fields],
        status=intent.status,
        result=intent.result,
        seen=intent.seen,
        approved_again=intent.approved_again,
        trusted=intent.trusted,  # the store's reading of its signature (``Jobs._read_intent``)
        at=intent.recorded_at,
        send_key=intent.payload.key or None,  # "": a row written before rows kept it
        excluded=named if named or intent.exclusions_recorded else None,
    )


class IntentLog:
    def __init__(
        self,
        sink: IntentSink,
        scope: str,
        rules: ReadBackRules | list[ReadBack],
        risk: RiskRules | None = None,
        witness: Callable[[str, str, list[tuple[str, str]]], datetime | None] | None = None,
        last_check: Callable[[], str | None] | None = None,
        ask_again: Callable[[str, str, list[tuple[str, str]], str, str], bool] | None = None,
        leaving: Callable[[str, str, list[tuple[str, str]]], None] | None = None,
    ) -> None:
        self.sink = sink
        self.scope = scope  # the job id: the same payload in another job is another intent
        self.rules = rules if isinstance(rules, ReadBackRules) else ReadBackRules(rules=rules)
        self.risk = risk or load_rules()
        self.refused = 0
        # when a record nobody can edit (the signed audit log: ``WorkerGate.sent_before``) says this
        # job sent exactly this before: a missing row in the job database is no first attempt
        self.witness = witness
        # the last check before an attempt leaves (a durable job: ``WorkerGate.leg_refusal``); a text:
        # it does not leave, and that is why
        self.last_check = last_check
        # told of each attempt that passed its last check and leaves now: (method, url, fields) (a
        # foreground run: ``Authority.record_send``, what its ``witness`` reads; a worker's leg records
        # its sends in its ``last_check``, ``WorkerGate.sending``)
        self.leaving = leaving
        # a person's fresh approval to send again what an earlier attempt may still apply: (method,
        # url, fields, the record key of the attempt it approves, the warning she is shown) ->
        # approved (a durable job: ``WorkerGate.again``, through the job's approvals: it may park the
        # run). One approval is one attempt. None: nobody to ask
        self.ask_again = ask_again
        self.mine: set[str] = set()  # the attempts this log recorded (``crew.outcome.gather``)
        self._sending: dict[str, IntentRecord] = {}  # a submission's key -> its attempt on its way now
        self._possibly: set[str] = set()  # rows that cannot be told from the request (``earlier_attempts``)

    def before_send(
        self,
        method: str,
        url: str,
        fields: list[tuple[str, str]],
        fetch_text: FetchText,
        *,
        key: str | None = None,
        sent_as: str | None = None,
    ) -> str | None:
        """``method``, ``url`` and ``fields`` as every record of the request reads them and ``key``
        its request key (the gate's ``Outgoing``: secrets redacted; None: keyed here as the store's
        signed sends are, ``send_key``). ``sent_as``: the URL as it goes out, when the vault redacted
        something in it: a version before rows were keyed on the redacted URL keyed this job's rows
        (and a foreground run's signed sends) on that one; they are read as this request's too, and
        nothing is written under it again. So are rows and signed sends a version before request
        keys kept the fields' order keyed (``approvals.key.request_keys``): an earlier attempt is
        looked for under every key the request has had (``older_keys``) and among the job's rows by
        what they stored (``earlier_attempts``: whatever fields the rules left out of its key then;
        one found under another key counts only when its content is this request)."""
        send_key = key if key is not None else self._send_key(method, url, fields)
        key = intent_key(self.scope, method, url, fields, self.risk)  # this job's: the row's
        legacy = sent_as if sent_as is not None and sent_as != url else None
        attempts, others = self.earlier_attempts(method, url, fields, key, legacy)
        left_out = sorted(self.risk.excluded_for(url))  # recorded with the row (``IntentRecord.excluded``)
        if (at := self._unrecorded(method, url, fields, attempts, send_key, legacy, others)) is not None:
            earlier = IntentRecord(  # its row is gone from the job database: an answer nobody knows
                key=self._free(key, len(attempts)),
                method=method.upper(),
                url=url,
                fields=fields,
                status="uncertain",
                result=UNRECORDED,
                at=at,
                send_key=send_key,
                excluded=left_out,
            )
            self.sink.put(earlier)
            attempts = [*attempts, earlier]
        again = IntentRecord(
            key=self._free(key, len(attempts)),
            method=method.upper(),
            url=url,
            fields=fields,
            send_key=send_key,
            excluded=left_out,
        )
        if not attempts:
            return self._send(key, again, "")
        earlier = attempts[-1]
        doubt = self.doubt(attempts)
        found = self.rules.rule_for(method, url)
        if found is not None and found[0].safe_to_repeat:
            return self._send(key, again, "the read-back rule says a repeat changes nothing; sent again")
        if found is not None:
            rule, params = found
            if _reads_a_secret(rule, params, url, fields):  # its placeholder is not what the system holds
                seen, page = "unknown", rule.read_back or ""
            else:
                seen, page = rule.check(url, params, fields, fetch_text)
            if seen == "absent" and doubt is None:
                return self._send(key, again, "read back: not in the system; sent again")
            if seen == "absent" and doubt is not None:  # it may still land: a person decides
                return self._ask_again(key, again, doubt, page)
            if seen == "applied":
                self.refused += 1
                if (landed := self._landed(attempts)) is None:
                    return self._found_not_ours(key, again, earlier, page)
                landed.status, landed.result = "confirmed", "read back: the change is in the system"
                landed.seen = "saved"
                self.sink.put(landed)
                return (
                    f"this exact submission to {url} was already sent (at {landed.at:%H:%M:%S} UTC) and "
                    f"{page} shows it in the system now: {NOT_SENT_AGAIN}. Check the "
                    "existing record there instead of submitting it again."
                )
        if earlier.applied is False and doubt is None:
            why = f"the earlier attempt was not applied ({earlier.result}); sent again"
            return self._send(key, again, why)
        self.refused += 1
        return self._refusal(doubt or earlier, url, checked=found is not None)

    def after_send(self, method: str, url: str, fields: list[tuple[str, str]], outcome: SendOutcome) -> None:
        key = intent_key(self.scope, method, url, fields, self.risk)
        attempt = self._sending.pop(key)  # the attempt this log let go (``before_send`` said send it)
        record = self.sink.get(attempt.key) or attempt
        record.seen = outcome.classified()  # the gate's, made once (network.py)
        done = applied_of(record.seen)
        record.status = "sent" if done else "not_applied" if done is False else "uncertain"
        record.result = outcome.describe()
        self.sink.put(record)

    @staticmethod
    def doubt(attempts: list[IntentRecord]) -> IntentRecord | None:
        """The latest attempt that may still land, unless a person has since approved sending it again
        (``approved_again``) and that resend left and was answered: her judgement covers every
        attempt before it, so an approved resend the system then refused (a 503) is retried without
        asking her twice. A resend she approved that never left (its leg lost the job first: a
        cancel voids her decision) covers nothing."""
        for attempt in reversed(attempts):
            if attempt.in_doubt:
                return attempt
            if attempt.approved_again and attempt.seen not in (None, "not_sent"):
                return None
        return None

    @staticmethod
    def _landed(attempts: list[IntentRecord]) -> IntentRecord | None:
        """The attempt a read-back that finds the change in the system confirms: the latest one the
        system saved, else the latest whose answer nobody knows. The gate's definite "not applied"
        (refused, bounced, not sent) is final: a refused duplicate's record found is someone else's.
        A row the store does not vouch for is not made this job's send by a read-back (re-signed as
        confirmed, a forged row would become a saved change). None: no attempt of this job put it there."""
        saved = next((a for a in reversed(attempts) if a.answer == "saved"), None)
        return saved or next((a for a in reversed(attempts) if a.answer == "unknown" and a.trusted), None)

    def _found_not_ours(self, key: str, again: IntentRecord, earlier: IntentRecord, page: str) -> str:
        """A read-back finds the change, but no attempt of this job put it there: not sent, and this
        attempt is recorded as held back (``HELD``: it never left), never as a saved send."""
        again.status, again.seen = "not_applied", "not_sent"
        again.result = f"{HELD}{page} shows it in the system already; no send of this job put it there"
        if self.sink.claim(again) is None:  # another leg racing to this attempt: its record stands
            self.mine.add(again.key)
        return (
            f"{page} shows this exact submission to {again.url} in the system, but no attempt of this job "
            f"put it there (the last, at {earlier.at:%H:%M:%S} UTC: {earlier.result}): it was there already "
            f"or someone else entered it, and it is not this job's change; {NOT_SENT_AGAIN}. Check the "
            "existing record there instead of submitting it again; if it is not what the task wants, ask a person."
        )

    def _send_key(self, method: str, url: str, fields: list[tuple[str, str]]) -> str:
        """The request key of no job, for a caller that did not give the gate's: as the store's signed
        sends are keyed (``StoreIntents.send_key``: ``Authority.key_of``), else by this log's rules."""
        send_key = getattr(self.sink, "send_key", None)
        if callable(send_key):
            return str(send_key(method, url, fields))
        return request_key(method, url, fields, excluded=self.risk.excluded_for(url))

    def _unrecorded(
        self,
        method: str,
        url: str,
        fields: list[tuple[str, str]],
        attempts: list[IntentRecord],
        mine: str,
        legacy: str | None = None,
        others: list[IntentRecord] | None = None,
    ) -> datetime | None:
        """When the signed audit log shows a send of this request (key ``mine``) that no row of the
        job database accounts for (None: every one is): more signed sends than attempts that may have
        left (rows deleted, the saved one's beside a refused one's kept), by the sink's signed sends
        (``StoreIntents.signed_sends``), else by the ``witness`` when there is no row. Every attempt
        here is one of this request (found by one of its keys), so each accounts for a send of
        ``mine``; a send signed under the URL as it went out (``legacy``: before rows were keyed on the
        redacted one), or under a key an earlier version made of the request (``request_keys``: its
        fields sorted), is one of this request too. A signed send stores no fields, only its key and
        the fields left out of it: one a row of the job accounts for is judged by that row's content
        (``earlier_attempts``; the sends of ``others``, rows that are another request, are theirs);
        one no row accounts for (its row deleted) by its key (``_sent_as_keyed``)."""
        sends, send_key = getattr(self.sink, "signed_sends", None), getattr(self.sink, "send_key", None)
        if callable(sends) and callable(send_key):
            keys = {mine} | ({send_key(method, legacy, fields)} if legacy else set())
            keys |= {k for u in (url, legacy) if u for k in self._keys(method, u, fields, scope="")}
            keys |= {a.send_key for a in attempts if a.send_key}  # keyed under the rules then
            theirs = _accounted(others or [], sends(), lambda r: _key_of(r, send_key))[2]
            signed = [
                s.model_copy(update={"key": mine})
                for s in theirs
                if s.key in keys or self._sent_as_keyed(s, method, url, fields, legacy)
            ]
            unaccounted = _accounted(attempts, signed, lambda _record: mine)[2]
            return max((s.at for s in unaccounted), default=None)
        if not attempts and self.witness is not None:
            seen = [self.witness(method, u, fields) for u in (url, legacy) if u]
            return max((at for at in seen if at is not None), default=None)
        return None

    def older_keys(
        self, method: str, url: str, fields: list[tuple[str, str]], legacy: str | None = None
    ) -> list[str]:
        """The keys this job's rows of the request had under earlier versions, oldest first (as the
        versions came: on the URL as it went out, ``legacy``, with the fields sorted; then on the
        redacted URL with the fields sorted), today's (``intent_key``) not among them."""
        keys = [*(self._keys(method, legacy, fields) if legacy else []), *self._keys(method, url, fields)]
        now = intent_key(self.scope, method, url, fields, self.risk)
        return [k for i, k in enumerate(keys) if k != now and k not in keys[:i]]

    def _keys(
        self, method: str, url: str, fields: list[tuple[str, str]], scope: str | None = None
    ) -> list[str]:
        """Every key the request (of this job; ``scope=""``: of no job) has had, oldest rule first."""
        excluded = self.risk.excluded_for(url)
        return request_keys(
            method, url, fields, excluded=excluded, scope=self.scope if scope is None else scope
        )

    def earlier_attempts(
        self, method: str, url: str, fields: list[tuple[str, str]], key: str, legacy: str | None = None
    ) -> tuple[list[IntentRecord], list[IntentRecord]]:
        """(this request's earlier attempts in this job, oldest first; the job's rows that are another
        request). A row under today's key (``key``) is one; a row found any other way — under a key an
        earlier version made of the request (``older_keys``: fields sorted, or on the URL as it went
        out) or among the job's rows (a sink that lists them, ``records``: keyed while the rules left
        out other fields) — only when what it stored is this request (``approvals.key.earlier_attempt``:
        the same rows paired otherwise are another request, whatever key it was found under). A row
        that cannot be told from it (``POSSIBLY``) is one (``counts_as_attempt``: held, a person asked),
        and what this log says of it says why (``POSSIBLY_WHY``)."""
        rows = {r.key: r for r in self._attempts(key, self.older_keys(method, url, fields, legacy))}
        listed = getattr(self.sink, "records", None)
        for row in listed() if callable(listed) else []:
            rows.setdefault(row.key, row)
        mine: list[IntentRecord] = []
        others: list[IntentRecord] = []
        self._possibly = set()  # of this request
        for row in rows.values():
            said = (
                True if row.key.split(".")[0] == key else self._is_attempt(row, method, url, fields, legacy)
            )
            (mine if counts_as_attempt(said) else others).append(row)
            if said is POSSIBLY:
                self._possibly.add(row.key)
        return sorted(mine, key=lambda r: r.at), others

    def _is_attempt(
        self, row: IntentRecord, method: str, url: str, fields: list[tuple[str, str]], legacy: str | None
    ) -> bool | None:
        """``approvals.key.earlier_attempt`` of ``row`` and this request (on its URL, or as it went out)."""
        said = [
            earlier_attempt(
                (row.method, row.url, row.fields),
                method,
                u,
                fields,
                excluded=self.risk.excluded_for(u),
                recorded=row.excluded,
                stored_key=row.key.split(".")[0],
                scope=self.scope,
            )
            for u in (url, legacy)
            if u
        ]
        return True if True in said else None if None in said else False

    def _free(self, key: str, n: int) -> str:
        """The record key of a new attempt of ``key``: the ``n``-th, or the next one no row holds."""
        while self.sink.get(attempt_key(key, n)) is not None:
            n += 1
        return attempt_key(key, n)

    def _sent_as_keyed(
        self, send: SignedSend, method: str, url: str, fields: list[tuple[str, str]], legacy: str | None
    ) -> bool:
        """Whether the signed ``send`` is one of this request by what it proves (it stores no fields):
        ``approvals.key.earlier_send``, with the fields the rules left out of its key when it left
        (``SignedSend.excluded``, recorded with it: ``Authority.record_send``)."""
        sent = (send.key, send.method, send.url, send.excluded)
        return any(
            earlier_send(sent, method, u, fields, excluded=self.risk.excluded_for(u))
            for u in (url, legacy)
            if u
        )

    def _attempts(self, key: str, older: tuple[str, ...] | list[str] = ()) -> list[IntentRecord]:
        """The rows recorded under ``key`` and under ``older`` (its keys under earlier versions:
        ``older_keys``), numbered on from the ones before (or from the first)."""
        found: dict[str, IntentRecord] = {}
        for each in (*older, key):
            n = 0
            while (record := self.sink.get(attempt_key(each, n))) is not None or n < len(found):
                if record is not None:
                    found.setdefault(record.key, record)
                n += 1
        return list(found.values())

    def _send(self, key: str, attempt: IntentRecord, why: str) -> str | None:
        """Record a new attempt (no result yet: a kill from here on leaves it ``recorded``), check once
        more that it may leave (``last_check``), and let it go: None. Each attempt is a record of its
        own, inserted atomically: a leg that finds another leg of this job recording it first sends
        nothing (no read-back can tell yet: the other one may not have landed)."""
        attempt.result = why or None
        if (racing := self.sink.claim(attempt)) is not None:
            self.refused += 1
            return (
                f"this exact submission to {attempt.url} is being sent by another attempt of this job right "
                f"now (recorded at {racing.at:%H:%M:%S} UTC). It was NOT sent again. Check in the system "
                "whether the change is there before doing anything else; if you cannot tell, ask a person."
            )
        self.mine.add(attempt.key)
        if self.last_check is not None and (stop := self.last_check()) is not None:
            attempt.status, attempt.seen, attempt.result = "not_applied", "not_sent", f"{HELD}{stop}"
            self.sink.put(attempt)
            self.refused += 1
            return f"{attempt.method} {attempt.url} was not sent: {stop}. Nothing was sent."
        if self.leaving is not None:
            self.leaving(attempt.method, attempt.url, attempt.fields)
        self._sending[key] = attempt
        return None

    def _ask_again(self, key: str, again: IntentRecord, doubt: IntentRecord, page: str) -> str | None:
        """Reading the system back does not find the change, but an earlier attempt may still land:
        sent again only when a person, told so, approves it now (``ask_again``: it may park the run)."""
        answer = doubt.result if doubt.status != "recorded" else None
        answer = answer or "none was recorded: the run stopped, froze or lost the job while it was on its way"
        warning = (
            f"an earlier attempt to send exactly this ({doubt.at:%Y-%m-%d %H:%M:%S} UTC) got no answer "
            f"from the system ({answer}), so it MAY STILL APPLY: it may be in the system already or still "
            f"on its way. {page} does not show it now, which does not prove it will not land. Approve only "
            "if you have checked that the earlier attempt did not apply: approving sends it again."
            f"{self._why_possibly(doubt)}"
        )
        ask = self.ask_again
        if ask is not None and ask(again.method, again.url, again.fields, again.key, warning):
            again.approved_again = True
            return self._send(key, again, "read back: not in the system; a person approved sending it again")
        self.refused += 1
        who = "a person did not approve sending it again" if ask else "only a person may approve that"
        return (
            f"this exact submission to {again.url} was sent at {doubt.at:%H:%M:%S} UTC and no answer came "
            f"back from the system ({answer}); {page} does not show it now, but it may still arrive, and "
            f"{who}. It was NOT sent again. Check in the system whether the change is there (open the "
            f"record it changes); if you cannot tell, ask a person.{self._why_possibly(doubt)}"
        )

    def _refusal(self, earlier: IntentRecord, url: str, *, checked: bool) -> str:
        when = f"at {earlier.at:%H:%M:%S} UTC"
        if earlier.status == "recorded":
            what = (
                f"this exact submission to {url} was about to be sent {when}, and no result was recorded "
                "(the run stopped between sending it and its answer), so it may be in the system"
            )
        elif earlier.answer == "unknown":
            what = f"this exact submission to {url} was sent {when} and got {earlier.result}, so it may be in the system"
        else:
            what = f"this exact submission to {url} was already sent {when} and the system accepted it ({earlier.result})"
        how = (
            "reading the system back could not tell"
            if checked
            else "no read-back rule says where to check it"
        )
        return (
            f"{what}; {how}. It was NOT sent again. Check in the system whether this change is already "
            "there (open the record it changes); if it is, carry on without submitting; if it is not, or "
            "you cannot tell, ask a person — this job will not send the same submission again."
            f"{self._why_possibly(earlier)}"
        )

    def _why_possibly(self, row: IntentRecord) -> str:
        """What a person or the agent is told of an attempt that cannot be told from the request
        (``earlier_attempts``: ``POSSIBLY``); '' for one that is this request."""
        return f" (Note: {POSSIBLY_WHY}.)" if row.key in self._possibly else ""


class SignedSend(BaseModel):
    """A send of the job the signed audit log holds (``Authority.record_send``, written as it leaves):
    its request key without the job (``Authority.key_of``), method, address and when; not its fields."""

    key: str
    method: str
    url: str
    at: datetime
    excluded: list[str] | None = None  # the fields the rules left out of ``key`` (None: not recorded)


def reconcile(
    records: list[IntentRecord],
    sends: list[SignedSend],
    send_key: Callable[[str, str, list[tuple[str, str]]], str],
) -> tuple[list[IntentRecord], list[IntentRecord]]:
    """A job's intent rows checked against its signed sends (``crew/outcome.gather``): (the job's
    sends, rows nobody vouches for). Anyone who can write the job database can delete or add a row;
    only the key signs the audit log. A row the store signed stands, and accounts for one signed send
    of its request unless the gate held it back (``left``). A row that does not check out is this
    job's (an answer nobody knows, as the store reads it) only where a signed send no other row
    accounts for matches it; else it is not this job's send. A signed send that no row accounts for
    (its row deleted: ``unaccounted``) is a send whose answer nobody knows. ``send_key``:
    ``Authority.key_of``."""
    mine, untrusted, unaccounted = _accounted(records, sends, lambda r: _key_of(r, send_key))
    for send in unaccounted:
        mine.append(
            IntentRecord(
                key=f"signed-send:{send.key}:{send.at.isoformat()}",
                method=send.method.upper(),
                url=send.url,
                fields=[],
                status="uncertain",
                result=UNRECORDED,
                at=send.at,
                send_key=send.key,
            )
        )
    return mine, untrusted


def _key_of(record: IntentRecord, send_key: Callable[[str, str, list[tuple[str, str]]], str]) -> str:
    """The key a signed send of ``record`` carries: the one kept on it (``IntentRecord.send_key``),
    else (a row written before rows kept it) the key of its stored method, URL and fields."""
    return record.send_key or send_key(record.method, record.url, record.fields)


def _accounted(
    records: list[IntentRecord],
    sends: list[SignedSend],
    key_of: Callable[[IntentRecord], str],
) -> tuple[list[IntentRecord], list[IntentRecord], list[SignedSend]]:
    """(rows that are the job's, rows nobody vouches for, signed sends no row accounts for): ``reconcile``.
    ``key_of``: the key a signed send of a row carries."""
    waiting: dict[str, list[SignedSend]] = {}
    for send in sorted(sends, key=lambda s: s.at):
        waiting.setdefault(send.key, []).append(send)
    mine: list[IntentRecord] = []
    untrusted: list[IntentRecord] = []
    for record in sorted(records, key=lambda r: not r.trusted):  # signed rows take their sends first
        matching = waiting.get(key_of(record), [])
        if not record.trusted and not matching:
            untrusted.append(record)
            continue
        mine.append(record)
        if record.left and matching:
            matching.pop(0)
    return mine, untrusted, [s for left in waiting.values() for s in left]


def _reads_a_secret(rule: ReadBack, params: dict[str, str], url: str, fields: list[tuple[str, str]]) -> bool:
    """The read-back ``rule`` needs a value the gate redacted (a vault secret, recorded as its
    placeholder): the page it would read and the text it would look for are not the system's, so it
    cannot tell, and a page without the change would prove nothing."""
    values = dict(parse_qsl(urlsplit(url).query))
    values.update(fields)
    values.update(params)
    names = set(rule.identify)
    for text in (rule.read_back or "", *rule.shows):
        names.update(RULE_VALUE.findall(text))
    return any(Vault.has_placeholders(values.get(name, "")) for name in names)


READ_REDIRECTS = 5  # hops a read by code follows, each one checked by the policy
READ_SECONDS = 15.0  # one read by code, all its hops together


class ReadPolicy(Protocol):
    def refuse_read(self, url: str) -> object | None: ...


def fetcher(
    context: Any, policy: ReadPolicy, login_marker: str = 'name="password"'
) -> Callable[[str], str | None]:
    """GET a page with the browser context's cookies (a read: no approval asked); None when it fails,
    lands on a login page (a read-back that cannot be trusted), or the policy refuses the URL or a
    redirect hop of it (``Policy.refuse_read``: the browser's allow-list and blocked paths)."""

    def fetch(url: str) -> str | None:
        deadline = time.monotonic() + READ_SECONDS  # for the read with all its hops
        for _ in range(READ_REDIRECTS + 1):
            left = deadline - time.monotonic()
            if left <= 0 or policy.refuse_read(url) is not None:
                return None
            try:
                response = context.request.get(url, timeout=left * 1000, max_redirects=0)
            except Exception:
                return None
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                url = urljoin(url, location)
                continue
            if not response.ok:
                return None
            text = response.text()
            return None if login_marker in text else text
        return None

    return fetch
