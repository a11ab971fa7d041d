"""The terminal as a client of the authority: ``taskcrew run`` asks the person at the terminal (or
approves under ``--auto-approve``), with the same risk rules as every other surface.

With no rule that needs two people (a single user on a laptop: the two-person rule is "auto" and
there are fewer than two users) the terminal works exactly as before, flags shown. Where the
two-person rule is on, an item that needs two people cannot be approved by one person at a
terminal, nor by ``--auto-approve`` unless a rule permits it: it is refused with what to do
(submit it as a job, so that two people approve it). Every decision goes to the audit log; a
prompt that ended without an answer (a stop, the input closed: ``NoAnswer``) is signed as
``terminal_no_answer`` with why — asked of whom, and that nobody decided — never as her rejection.

Who is at the terminal is the CLI's identity (a personal token, else the OS user) while that login
still counts (``identity_refusal``): a token of someone removed from the users file, or whose
password was reset, falls back to the OS user, and the terminal says so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from taskcrew.approvals.authority import Authority
from taskcrew.approvals.identity import Identity, IdentityError, cli_identity, identity_refusal, os_user
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest, AutoApproveHuman, Human
from taskcrew.tools.prompt_input import NoAnswer

_said: set[str] = set()  # what this process told the person at the terminal (each once)


def _say(text: str) -> None:
    if text not in _said:
        _said.add(text)
        print(f"note: {text}", file=sys.stderr)


def counted(who: Identity, refusal: Callable[[Identity], str | None] = identity_refusal) -> Identity:
    """``who`` if her login or token still counts (``identity_refusal``), else the OS user, said
    once at the terminal: a saved token of someone who left (or whose password was reset) identifies
    nobody, and what the rules grant her name (auto-approve) is not granted through it."""
    if (why := refusal(who)) is None:
        return who
    fallback = Identity(name=os_user(), proof="os_user")
    _say(f"{why}; acting as the operating-system user {fallback.name} (not authenticated) instead")
    return fallback


def terminal_identity() -> Identity:
    try:
        return counted(cli_identity())
    except IdentityError:
        return Identity(name=os_user(), proof="os_user")


class TerminalApprovals:
    def __init__(self, inner: Human, authority: Authority | None = None, who: Identity | None = None) -> None:
        self.inner = inner
        self.authority = authority or Authority(None)
        self.who = who or terminal_identity()

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        authority = self.authority.one_reading()  # one decision, one reading of the rules in force
        # judged at each approval: a person removed from the users file during a long run counts no longer
        self.who = counted(self.who, authority.identity_refusal)
        auto = isinstance(self.inner, AutoApproveHuman)
        # whom it pays, as every other surface shows it (``payee_flags``): shown, never auto-approved
        payee = authority.payee_flags(request)
        shown = [*request.flags, *(f.message for f in payee)]
        request = request.model_copy(update={"flags": shown}) if payee else request
        needs_two = authority.needs_two(authority.assess(request))
        rule = authority.rules.auto_approve_rule(self.who.name, request.url) if auto else None
        if auto and rule is None:
            decision = ApprovalDecision.reject(
                f"the risk rules do not let {self.who.name} auto-approve {request.url}; run without --auto-approve"
            )
        elif auto and (refusal := authority.payee_refusal(request, payee)):
            decision = ApprovalDecision.reject(f"{refusal}; run without --auto-approve")
        elif needs_two and not (auto and rule is not None and rule.flagged):
            decision = ApprovalDecision.reject(
                "this needs two people (" + "; ".join(request.flags) + "): one person at a terminal cannot "
                "approve it. Submit the task as a job (`taskcrew submit`) so that two people approve it "
                "(`taskcrew approvals approve`, or the console)."
            )
        else:
            try:
                decision = self.inner.approve(request)
            except NoAnswer as none:  # asked, and nobody answered: signed as that, never as her "no"
                self._sign(self.who.name, "terminal_no_answer", request, {"by": None, "why": none.why})
                raise
            if decision.outcome == "approve" and not auto:  # the one proven here, as the signed entry names
                decision = decision.model_copy(update={"by": f"{self.who.name} at the terminal"})
        who = "--auto-approve" if auto else self.who.name
        action = {"approve": "approve", "reject": "reject", "answer": "answer"}[decision.outcome]
        self._sign(who, f"terminal_{action}", request, {"by": decision.by})
        return decision

    def _sign(self, who: str, action: str, request: ApprovalRequest, said: dict[str, object]) -> None:
        self.authority.audit.append(
            who,
            action,
            request.key or request.url,
            {
                "method": request.method,
                "url": request.url,
                "flags": request.flags,
                **said,
                "proof": self.who.proof,
            },
        )

    def ask(self, question: str) -> str:
        return self.inner.ask(question)
