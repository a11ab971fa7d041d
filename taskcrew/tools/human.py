"""The human in the loop, as an injected interface.

Two questions ever reach a person: "may I send this?" (``approve``) and "what should I do?"
(``ask``). Everything that needs a human takes a ``Human`` in its constructor, so a run can use a
terminal prompt, an auto-approver, or — in tests — a ``ScriptedHuman`` that replays decisions,
records what it was asked, and fails on a question it has no answer for or on unused script.
"""

from __future__ import annotations

import sys
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import suppress
from typing import TYPE_CHECKING, Literal, NoReturn, Protocol, TextIO, cast, runtime_checkable

from pydantic import BaseModel, Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from taskcrew.approvals.visible import VALUE_LIMIT as VALUE_LIMIT  # the one cut of every surface
from taskcrew.approvals.visible import cut_value
from taskcrew.tools.prompt_input import NoAnswer, PromptStopped, TerminalLines

if TYPE_CHECKING:
    from rich.console import Console

    from taskcrew.approvals.rules import RiskRules


class FieldValue(BaseModel):
    """One name/value pair a submission will send. Secrets appear as their placeholders.

    For a chosen option of a select, ``value`` is shown as "1 (Northwind Traders)" (what is sent,
    then the option's text) and ``label`` holds the option's text alone: every reader that shows
    the option by its text takes ``label``, never a part of ``value`` (a typed value may look the
    same)."""

    name: str
    value: str
    note: str | None = None  # e.g. "read by OCR — check it": where the value came from, for the approver
    label: str | None = None  # a chosen option's text (the browser gate sets it)
    # one value of a control that sends several under one name: the page's checkboxes of that name,
    # a multi-select (the browser gate sets it); read as a set, not as one field sent twice
    choice: bool = False

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, object]:
        # unset, ``label`` and ``choice`` are not in the dump: a request parked before they existed seals the same
        data: dict[str, object] = handler(self)
        if data.get("label") is None:
            data.pop("label", None)
        if not data.get("choice"):
            data.pop("choice", None)
        return data


class RecordState(BaseModel):
    """A record as its system showed it when the approval was asked (read by code, read-only)."""

    page: str = Field(description="the page read: the one the form was filled on")
    values: dict[str, str] = Field(default_factory=dict, description="label (or field name) -> value")
    links: dict[str, str] = Field(
        default_factory=dict,
        description="label -> the link in its value (a bill's vendor linked to its record: which record "
        "it is); left out of a dump while empty, so a request parked before it was read seals the same",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if not data.get("links"):
            data.pop("links", None)
        return data


class ValueOrigin(BaseModel):
    """Where code found one field's value (``crew.provenance.field_origins``), as data: its words
    ("invoice.txt, line 3 (cited in step 1)", "not found in any source …") and the file and line it
    read the value on — a file a step of the run cited, read again by code. Carried on the request
    and signed with it; every surface shows it from here (``approvals.origins``), never from text a
    value could have written."""

    text: str
    file: str | None = None
    line: int | None = None


# left out of a dump while unset
OPTIONAL = ("record", "known_vendors", "vendors_page", "vendor_records", "asked_again", "origins")


class ApprovalRequest(BaseModel):
    """What a data-changing request will do, shown to the human before it is sent."""

    kind: Literal["form_submission", "network_request"]
    method: str
    url: str
    fields: list[FieldValue] = Field(default_factory=list)
    summary: str = ""
    page_url: str | None = None
    key: str = Field(default="", description="the canonical key of exactly what is sent (approvals.key)")
    excluded: dict[str, str] = Field(
        default_factory=dict, description="fields left out of the key by a rule: name -> why"
    )
    looked_up: dict[str, str] = Field(
        default_factory=dict, description="what the worker read for the risk rules (a record's amount)"
    )
    flags: list[str] = Field(default_factory=list, description="what the risk rules flag, for the person")
    record: RecordState | None = Field(default=None, description="the changed record as the system shows it")
    known_vendors: list[str] | None = Field(default=None, description="the vendors the target system lists")
    vendors_page: str | None = Field(default=None, description="where known_vendors were read")
    vendor_records: dict[str, str] | None = Field(
        default=None,
        description="what a form sends for each record of that vendor list (an option's value, the id in "
        "its link) -> its name as listed, empty when uncertain (approvals.record.vendor_records)",
    )
    asked_again: str | None = Field(
        default=None, description="why it is asked again though it was approved before (the record changed)"
    )
    origins: dict[str, ValueOrigin] | None = Field(
        default=None,
        description="where code found each field's value, by field key (approvals.origins.field_keys: "
        "the name, 'name #k' for a name sent twice; crew.provenance); None: not "
        "worked out, or parked before origins were carried as data",
    )

    def option_labels(self) -> dict[str, str]:
        """The chosen options' labels by field name (the page's text, not sent: ``rules.read_money``)."""
        return {f.name: f.label for f in self.fields if f.label}

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, object]:
        # unset, these are not in the dump: a request parked before they existed seals the same
        data: dict[str, object] = handler(self)
        for name in OPTIONAL:
            if data.get(name) is None:
                data.pop(name, None)
        return data


Basis = Literal["person", "auto_approve", "rule", "resumed", "identical"]


class ApprovalDecision(BaseModel):
    """The human's reply: approve, reject, or answer with text instead (treated as not approved)."""

    outcome: Literal["approve", "reject", "answer"]
    text: str | None = None
    by: str | None = Field(
        default=None, description="who or what decided: a named person, a rule, --auto-approve"
    )
    basis: Basis | None = None
    credential: str | None = Field(
        default=None,
        description="the decider's password it was given under: a digest bound to the approval "
        "(``approvals.authority.decision_credential``), sealed with the decision; an approval counts "
        "only while it is still her password (``Authority.approvers_refusal``). None: given before it "
        "was kept, by a login that keeps none, or not by a person",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, object]:
        # unset, ``credential`` is not in the dump: a decision sealed before it existed seals the same
        data: dict[str, object] = handler(self)
        if data.get("credential") is None:
            data.pop("credential", None)
        return data

    @classmethod
    def approve(cls, by: str | None = None, basis: Basis | None = None) -> ApprovalDecision:
        return cls(outcome="approve", by=by, basis=basis)

    @classmethod
    def reject(cls, reason: str | None = None) -> ApprovalDecision:
        return cls(outcome="reject", text=reason)

    @classmethod
    def answer(cls, text: str) -> ApprovalDecision:
        return cls(outcome="answer", text=text)

    @property
    def approved(self) -> bool:
        return self.outcome == "approve"


@runtime_checkable
class Human(Protocol):
    def approve(self, request: ApprovalRequest) -> ApprovalDecision: ...

    def ask(self, question: str) -> str: ...


CONTINUED = "  ┆ "  # starts every further screen line of a line too long for the terminal
MARK = "┆"  # shown as ⟨U+2506⟩ in a field's name: no field line starts like a continued one


def describe_request(
    request: ApprovalRequest,
    *,
    width: int | None = None,
    full_values: str | None = None,
    rules: RiskRules | None = None,
    deciding: bool = True,
) -> str:
    """A plain-text rendering of an approval request (used by the prompts and in logs). Every value
    is shown with its invisible characters made visible (``approvals.visible``): a value cannot
    reorder what is drawn, hide its tail, or start a line of its own.

    On a terminal (``width``: its columns) no value can draw a line that passes for one of the
    prompt's own, and the values that decide a payment stay on screen beside the question:

    - ``full_values`` (where the whole values are shown): a value longer than ``VALUE_LIMIT``
      characters is cut, saying how many more it has and where they are;
    - every line wider than ``width`` is wrapped by ``fit``: each further screen line starts with
      ``CONTINUED``, never as a field line does (a terminal wrapping a long value itself starts the
      next line at its first column, where a value's words could read "  amount = 49.00");
    - the payee, the amount, the bank details and the due date, as every surface reads them
      (``deciding_lines``), are repeated as the last lines, right above the question (``deciding``:
      a surface that prints more after it, `approvals show`, puts them last itself)."""
    return _described(request, width, full_values, rules, deciding)[0]


def _described(
    request: ApprovalRequest,
    width: int | None,
    full_values: str | None,
    rules: RiskRules | None,
    deciding: bool = True,
) -> tuple[str, bool]:
    """``describe_request``, and whether it cut a value."""
    from taskcrew.approvals.origins import HEADER, shown_summary  # its origins rendered from data
    from taskcrew.approvals.visible import visible

    cut: list[str] = []

    def value(text: str) -> str:
        shown = cut_value(text, full_values)
        if shown != cut_value(text, None):
            cut.append(text)
        return shown

    lines = [visible(f"{request.method} {request.url}")]
    if request.asked_again:
        lines.append(f"⚠ asked again: {visible(request.asked_again)}")
    if request.summary:
        own, header, block = visible(shown_summary(request), layout=True).partition(HEADER + "\n")
        if own.strip():  # its own words: each further line marked continued
            lines.append(continued(own.rstrip("\n")))
        if header:
            lines.extend([HEADER, *block.split("\n")])  # one line a field, written by code
    if request.page_url:
        lines.append(f"from page: {visible(request.page_url)}")
    if request.fields:
        names = [visible(f.name).replace(MARK, "⟨U+2506⟩") for f in request.fields]
        width_ = min(max(len(n) for n in names), 30)
        lines.append("fields that will be sent:")
        lines.extend(
            f"  {n:<{width_}} = {value(f.value)}" + (f"   ⚠ {visible(f.note)}" if f.note else "")
            for n, f in zip(names, request.fields, strict=True)
        )
    else:
        lines.append("(no fields)")
    for name, why in request.excluded.items():
        lines.append(f"not part of what you approve: {visible(name)} ({why}; it changes on every page load)")
    if "amount" in request.looked_up:
        found = request.looked_up
        lines.append(
            visible(f"amount of the record: {found['amount']} {found.get('currency', '')}")
            + f" (read from {visible(str(found.get('source')))})"
        )
    lines.extend(f"⚠ {visible(flag)}" for flag in request.flags)
    if deciding and (request.fields or request.looked_up):
        lines.extend(_deciding(request, rules, value))
    return fit(lines, width), bool(cut)


def deciding_lines(
    request: ApprovalRequest, rules: RiskRules | None = None, full_values: str | None = None
) -> list[str]:
    """The values that decide a payment, as the console's "What you approve" shows them: the payee
    (``authority.request_payee``), the amount (``Money.headline``, with its currency), each field
    that sets bank details (``rules.bank_field``) and the due date; a long one cut as
    ``cut_value`` cuts it. ``rules``: None, the risk rules a run reads (``load_rules``)."""
    return _deciding(request, rules, lambda text: cut_value(text, full_values))


def _deciding(request: ApprovalRequest, rules: RiskRules | None, show: Callable[[str], str]) -> list[str]:
    from taskcrew.approvals.authority import request_fields, request_payee
    from taskcrew.approvals.rules import (
        RiskRulesError,
        bank_field,
        field_matches,
        load_rules,
        read_money,
        with_address,
    )
    from taskcrew.approvals.visible import visible
    from taskcrew.console.worklist import DUE_FIELD

    try:
        rules = rules if rules is not None else load_rules()
    except RiskRulesError as exc:
        return [f"what you approve cannot be repeated here: {visible(str(exc))}"]
    fields = request_fields(request)
    out = ["what you approve (repeated from above):"]
    payee = request_payee(request, rules)
    for name, payee_name in payee.fields if payee.unclear else payee.fields[:1]:
        where = " (the record's, not changed by this)" if payee.from_record else f" ({visible(name)})"
        out.append(f"  Payee{where}: {show(payee_name)}")
    sent = with_address(fields, request.url)
    money = read_money(sent, rules, request.looked_up, request.option_labels())
    if (head := money.headline) is not None:
        currency = money.currency or money.currency_text
        where = f" ({visible(head.field)})" if any(head.field == n for n, _ in sent) else " (the record's)"
        out.append(f"  Amount{where}: {show(f'{head.text} {currency}'.strip())}")
    out.extend(f"  Bank details ({visible(n)}): {show(v)}" for n, v in fields if bank_field(n, v, rules))
    if due := next(((n, v) for n, v in fields if field_matches(n, DUE_FIELD) and v.strip()), None):
        out.append(f"  Due date ({visible(due[0])}): {show(due[1])}")
    return (
        out
        if len(out) > 1
        else [*out, "  no payee, amount, bank details or due date: read every field above"]
    )


def continued(text: str) -> str:
    """``text``'s further lines (its own line breaks) each started with ``CONTINUED``."""
    return text.replace("\n", "\n" + CONTINUED)


# characters a terminal may draw wider than rich counts them (``rich.cells``, its own table): an
# emoji skin-tone modifier U+1F3FB–U+1F3FF (rich: 0 columns, as after an emoji; a terminal: 2, and
# "👍🏽" 4 on many), a regional indicator U+1F1E6–U+1F1FF (two make a flag; rich 1, a terminal 2),
# and a code point this Python's Unicode tables do not know (category Cn; rich 1, a terminal with
# newer tables draws an emoji added since 2). wcwidth (what xterm-like terminals and pyte count)
# counts no character wider than ``char_cells`` (tests/test_terminal_width_s44.py sweeps them all).
TERMINAL_WIDE = ((0x1F3FB, 0x1F3FF), (0x1F1E6, 0x1F1FF))
NARROWEST = len(CONTINUED) + 2  # columns a further screen line needs: the mark and one wide character


def char_cells(char: str) -> int:
    """The columns ``char`` takes on a terminal: the wider of rich's count and a terminal's where
    the two differ (``TERMINAL_WIDE``, unassigned code points)."""
    from rich.cells import get_character_cell_size

    code = ord(char)
    if any(low <= code <= high for low, high in TERMINAL_WIDE) or unicodedata.category(char) == "Cn":
        return 2
    return get_character_cell_size(char)


def cells(text: str) -> int:
    """The columns ``text`` (one line) takes on any terminal, at most (``char_cells``)."""
    return sum(map(char_cells, text))


def fit(lines: Iterable[str], width: int | None) -> str:
    """``lines`` for a terminal of ``width`` columns (None: as they are): a line wider (``cells``: no
    terminal draws it wider than counted) is cut at a space where one is near, else anywhere, and
    each further piece starts with ``CONTINUED``, so no screen line of a long value starts where the
    terminal's own wrap would start it. ``width`` is the terminal's, however narrow, down to
    ``NARROWEST`` (narrower, a further line cannot hold its mark and a character)."""
    if width is None:
        return "\n".join(lines)
    width = max(width, NARROWEST)
    out: list[str] = []
    for line in "\n".join(lines).expandtabs(8).split("\n"):
        sizes = [char_cells(c) for c in line]
        start, room = 0, width
        while True:
            end, used = start, 0
            while end < len(line) and used + sizes[end] <= room:
                used, end = used + sizes[end], end + 1
            if end == len(line):
                break
            space = line.rfind(" ", start, end)
            cut = space + 1 if space - start > (end - start) // 2 else max(end, start + 1)
            out.append(line[start:cut] if room == width else CONTINUED + line[start:cut])
            start, room = cut, width - len(CONTINUED)
        out.append(line[start:] if room == width else CONTINUED + line[start:])
    return "\n".join(out)


NO_INPUT = (
    "nobody could be asked: the terminal input is closed (a pipe, cron, a closed stdin or a "
    "terminal that hung up). Run from a terminal to approve changes, or pass --auto-approve to "
    "approve them all."
)
APPROVE_PROMPT = "Approve? y = yes, send it / n = no / a = answer with a message instead"
FULL_CHOICE = " / f = show every value in full"
FULL_ON_REQUEST = "answer f to see every value in full"
STOPPED = "the run was stopped while it waited for an answer: nothing was sent."


class TerminalHuman:
    """Asks a person at the terminal (rich). ``stream`` lets tests feed the answers.

    A prompt that ends without the person's answer — a stop (Ctrl-C, SIGTERM), the input closed
    (EOF), the terminal hung up — is no decision: ``approve`` and ``ask`` raise ``NoAnswer`` (said
    once at the terminal, with why), never a rejection or an empty answer in the person's name. The
    run ends ``interrupted`` and a retry asks again. Nothing is asked twice: once nobody can answer,
    every later question raises ``NoAnswer`` unasked.
    """

    def __init__(self, console: Console | None = None, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self._console = console if console is not None else Console()
        self._stream = stream
        self.input_closed = False
        self.no_answer = NO_INPUT  # why nobody answers, once nobody can

    def _prompt(self, text: str, choices: list[str] | None = None, default: str | None = None) -> str:
        """The person's answer; ``NoAnswer`` when the prompt ends without one."""
        from rich.prompt import Prompt

        if self.input_closed:
            raise NoAnswer(self.no_answer)
        # a terminal's own input is read so that a Ctrl-C ends the wait (``prompt_input``): the prompt
        # waits on the browser's thread, which the interrupted run's report needs
        stream = self._stream or (cast("TextIO", TerminalLines()) if sys.stdin.isatty() else None)
        try:
            if default is None:
                return str(Prompt.ask(text, console=self._console, stream=stream, choices=choices))
            return str(
                Prompt.ask(text, console=self._console, stream=stream, choices=choices, default=default)
            )
        except PromptStopped:
            self._nobody_answers(STOPPED)
        except EOFError:
            self._nobody_answers(NO_INPUT)

    def _nobody_answers(self, why: str) -> NoReturn:
        self.input_closed, self.no_answer = True, why
        with suppress(OSError):  # a terminal that hung up takes no more output
            self._console.print(f"\n[red]No answer:[/] {why}", highlight=False)
        raise NoAnswer(why)

    def _framed(self, title: str, shown: str, width: int) -> None:
        """``shown`` (lines ``fit`` to ``width``) in a yellow frame under ``title``, each line padded
        by ``cells``: a rich panel pads by rich's count, and a line a terminal draws wider than rich
        counts would push the frame's right side onto a screen line of its own."""
        from rich.text import Text

        head = f" {title} "[: width + 2]
        left = (width + 2 - len(head)) // 2
        frame = Text("╭" + "─" * left, style="yellow").append(head, style="bold")
        frame.append("─" * (width + 2 - left - len(head)) + "╮\n", style="yellow")
        for line in shown.split("\n"):
            frame.append("│ ", style="yellow").append(line + " " * (width - cells(line)))
            frame.append(" │\n", style="yellow")
        frame.append("╰" + "─" * (width + 2) + "╯", style="yellow")
        self._console.print(frame, soft_wrap=True)  # no line rich would wrap or crop by its own count

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        from rich.markup import escape

        if self.input_closed:
            raise NoAnswer(self.no_answer)
        title = "Approval needed: this will change data"
        width = self._console.width - 4  # inside the frame's border and padding
        shown, cut = _described(request, width, FULL_ON_REQUEST, None)
        self._framed(title, shown, width)
        choices, prompt = (
            (["y", "n", "a", "f"], APPROVE_PROMPT + FULL_CHOICE) if cut else (["y", "n", "a"], APPROVE_PROMPT)
        )
        while (choice := self._prompt(escape(prompt), choices=choices, default="n")) == "f":
            full = describe_request(request, width=width)  # every value whole, wrapped and marked
            self._framed(title + " (every value in full)", full, width)
        if choice == "y":
            return ApprovalDecision.approve(by=f"{_os_user()} at the terminal", basis="person")
        if choice == "a":  # a message is the answer: stopped before it was given, there is none
            text = self._prompt("Your message to the agent")
            return ApprovalDecision.answer(text) if text else ApprovalDecision.reject("no message was given")
        try:  # she said no: that stands, whatever happens to the optional reason
            reason = self._prompt("Reason (optional)", default="")
        except NoAnswer:
            reason = ""
        return ApprovalDecision.reject(reason or None)

    def ask(self, question: str) -> str:
        from taskcrew.terminal import markup, say

        if self.input_closed:
            raise NoAnswer(self.no_answer)
        say(self._console, f"[bold cyan]The agent asks:[/] {markup(question, layout=True, indent='  ')}")
        return self._prompt("Your answer")


def _os_user() -> str:
    from taskcrew.approvals.identity import os_user

    return os_user()


AUTO_APPROVED = "--auto-approve (nobody was asked)"


class AutoApproveHuman:
    """Approves everything (``--auto-approve``); answers questions with a fixed text."""

    def __init__(self, answer: str = "No human is available; proceed with your best judgement.") -> None:
        self._answer = answer
        self.approved: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approved.append(request)
        return ApprovalDecision.approve(by=AUTO_APPROVED, basis="auto_approve")

    def ask(self, question: str) -> str:
        return self._answer


class ScriptError(AssertionError):
    """A scripted human was asked something its script does not cover, or the script was not used up."""


class ScriptedHuman:
    """Replays decisions and answers in order and records every request (tests).

    A question with no script left raises ``ScriptError``; ``assert_complete`` fails on unused script.
    """

    def __init__(
        self,
        decisions: Iterable[ApprovalDecision] = (),
        answers: Iterable[str] = (),
    ) -> None:
        self._decisions: deque[ApprovalDecision] = deque(decisions)
        self._answers: deque[str] = deque(answers)
        self.requests: list[ApprovalRequest] = []
        self.questions: list[str] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        if not self._decisions:
            raise ScriptError(f"unexpected approval request: {describe_request(request)}")
        return self._decisions.popleft()

    def ask(self, question: str) -> str:
        self.questions.append(question)
        if not self._answers:
            raise ScriptError(f"unexpected question: {question}")
        return self._answers.popleft()

    def assert_complete(self) -> None:
        if self._decisions or self._answers:
            raise ScriptError(
                f"script not used up: {len(self._decisions)} decisions, {len(self._answers)} answers left"
            )
