"""A routine: what a verified run of a chore did, as reviewed data a later run replays in code.

    name: enter-invoice            # the recipe it replays
    version: 2
    status: accepted               # draft → accepted → retired; only an accepted version replays
    source_run: 20261002-101500-find-the-latest-invoice-from-northwind
    documents: {search: "{vendor}", choose: newest_by_printed_date}
    templates:                     # one per issuer: where each value is printed on its invoices
      - issuer: Northwind Traders
        fields:
          - {name: invoice_number, kind: text, anchor: "Invoice No.", pattern: "[A-Z]+-\\d+"}
          - {name: amount, kind: amount, anchor: "TOTAL PAYABLE"}
        checks: [total_is_subtotal_plus_tax, due_is_date_plus_terms]
    browser:                       # semantic targets only: role, accessible name, form field name
      - {kind: open, url: "{erp}/bills/new", expect: {path: "/bills/new"}}
      - {kind: type, target: {role: textbox, name: Invoice number, field: invoice_number},
         value: "{invoice_number}"}
      - {kind: click, target: {role: button, name: Save bill}, approval: true,
         then: {path: "/bills/[^/]+"},
         sends: {path: /bills/new, fields: [csrf_token, invoice_number, ...], query: []}}  # all it may send
    obstacles: [...]               # login (secrets as placeholders), modal, expired session, 503

Nothing here is an element number, a CSS path, a secret or a person's decision.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from taskcrew.terminal import CONTROLS

NAME = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
VALUE_NAME = r"^[a-z][a-z0-9_]*$"
FLAG_AFTER = 2
"""A routine whose replays fell back this many times in a row is flagged for review."""
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
SECRET = re.compile(r"\{\{secret:[A-Z][A-Z0-9_]*\}\}")


class Unfilled(ValueError):
    """A placeholder ``fill`` has no value for: it is never typed, opened or searched as it is."""


def fill(text: str, values: Mapping[str, str], *, system: str | None = None, url: bool = False) -> str:
    """``text`` with its ``{name}`` placeholders replaced, in one pass: a value is never read for
    placeholders itself (a vendor named "Initech {amount}" is typed as that, not with an amount in
    it). ``system``: what ``{erp}`` stands for, whatever a value of that name says. ``url``: the text
    is an address, so each value is percent-encoded — "AT&T" or "a/../_debug" stays one value of one
    query parameter or path segment instead of adding parameters or leaving the path. Raises
    Unfilled for a placeholder with no value: "{po_number}" is never what is typed."""
    from urllib.parse import quote

    def one(found: re.Match[str]) -> str:
        name = found.group(1)
        if name == "erp" and system is not None:
            return system
        if name not in values:
            raise Unfilled(f"there is no value for {{{name}}} in {text!r}: it is never entered as it is")
        return quote(values[name], safe="") if url else values[name]

    return PLACEHOLDER.sub(one, text)


Status = Literal["draft", "accepted", "retired"]
FieldKind = Literal["text", "amount", "date", "terms", "currency"]
Check = Literal["total_is_subtotal_plus_tax", "due_is_date_plus_terms"]
StepKind = Literal["open", "type", "select", "check", "click"]
ObstacleKind = Literal["login", "modal", "expired_session", "unavailable"]


def controls(text: str) -> list[str]:
    """The control characters in ``text`` (``terminal.CONTROLS``: a line feed, a carriage return, a
    tab, ESC, a bidi control, a line separator …), by code point."""
    return [f"U+{ord(c):04X}" for c in dict.fromkeys(text) if c in CONTROLS]


def printable(text: str) -> str:
    """``text`` with each control character (``terminal.CONTROLS``) as a space (a fallback's reason,
    read from a page)."""
    return "".join(" " if c in CONTROLS else c for c in text)


def on_screen(line: str) -> str:
    """One line of a routine as a terminal may print it (``terminal.plain``, its indentation kept):
    every character that draws nothing or moves the cursor (an ESC sequence, a carriage return, a
    line feed or tab inside a value, a bidi control) shown as a marker, so what is printed is what
    the file says."""
    from taskcrew.terminal import plain

    return plain(line, layout=True).replace("\n", "⟨U+000A⟩").replace("\t", "⟨U+0009⟩")


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _no_controls(self) -> Self:
        """No text of a routine holds a control character: its reviewer reads it on a terminal, where
        an ESC sequence, a carriage return or a line feed can hide or forge what is printed."""
        for name, value in self:
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str) and (found := controls(text)):
                    raise ValueError(f"{name} holds control characters ({', '.join(found)})")
        return self


class FieldRule(_Data):
    """Where one value is printed: the words before it (``anchor``) and the shape of the value."""

    name: str = Field(pattern=VALUE_NAME)
    kind: FieldKind
    anchor: str = Field(min_length=2, max_length=80, description="the printed label before the value")
    pattern: str = Field(default="", max_length=200, description="the value's shape (text fields)")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} is not a regular expression: {exc}") from exc
        return pattern


class Derived(_Data):
    """A value that is not printed but follows from others by an AP helper (due = date + terms)."""

    name: str = Field(pattern=VALUE_NAME)
    rule: Literal["due_from_terms", "currency_of_total"]
    inputs: list[str] = Field(min_length=1, max_length=2, description="the values it follows from")


class Template(_Data):
    """How one issuer prints its invoices, learned from where the verified values were found."""

    issuer: str = Field(min_length=2, max_length=120)
    fields: list[FieldRule] = Field(min_length=1, max_length=16)
    derived: list[Derived] = Field(default_factory=list, max_length=8)
    checks: list[Check] = Field(default_factory=list)
    learned_from: str = Field(default="", description="the file the values were found in")
    senders: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="the e-mail domains the issuer's invoice came from (learned from an e-mail): a document "
        "not sent from one of them is not read by the routine, however it names the issuer",
    )

    def value_names(self) -> list[str]:
        return [f.name for f in self.fields] + [d.name for d in self.derived]


class DocumentRule(_Data):
    """Which document a run works from, as a rule over the company's files."""

    search: str = Field(min_length=1, max_length=120, description="search words; {param} placeholders")
    choose: Literal["newest_by_printed_date", "by_number"] = "newest_by_printed_date"
    number_param: str | None = Field(default=None, description="for by_number: the parameter holding it")

    @model_validator(mode="after")
    def _number_only_by_number(self) -> Self:
        if (self.choose == "by_number") != (self.number_param is not None):
            raise ValueError("number_param goes with choose: by_number, and only with it")
        return self


class Target(_Data):
    """An element by what a person sees and what the form sends: never a number or a CSS path."""

    role: str = Field(min_length=2, max_length=40)
    name: str = Field(default="", max_length=200, description="the accessible name (label, button text)")
    field: str | None = Field(default=None, max_length=100, description="the form field's name")

    def describe(self) -> str:
        what = f"{self.role} {self.name!r}" if self.name else self.role
        return what + (f" (field {self.field or repr(self.field)})" if self.field is not None else "")


class _PathPattern(_Data):
    """A URL path as a regular expression (checked to compile): where a step leads or sends."""

    path: str = Field(min_length=1, max_length=200)

    @field_validator("path")
    @classmethod
    def _compiles(cls, path: str) -> str:
        try:
            re.compile(path)
        except re.error as exc:  # a ValueError: a routine file holding it is "not a usable routine"
            raise ValueError(f"path {path!r} is not a regular expression: {exc}") from exc
        return path


class PageExpect(_PathPattern):
    """The page a step expects: its URL path (a regular expression) and words it shows."""

    shows: list[str] = Field(default_factory=list, max_length=4)


SENDS_MOST = 100  # the field names an approval step's save is reviewed with, at most


def query_names(url: str) -> list[str]:
    """The names of the parameters in ``url``'s query as the system reads them (percent-decoded:
    ``pay%5Fnow`` is ``pay_now``), each once, sorted; "?flag" names ``flag``. The fragment is not
    sent, so it is never read. The one reading of a save's query for the routine it is learned into
    (``distil``) and the replay it is held to (``replay.off_review``)."""
    from urllib.parse import parse_qsl, urlsplit

    return sorted({name for name, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)})


class Sends(_PathPattern):
    """What an approval step's save was reviewed to send, learned from the verified run's approved
    submission: the method, the path it goes to (a pattern, as ``PageExpect.path``), the name of
    every parameter in its address's query (``query_names``) and of every field in its body — the
    routine's own, and those the page filled or hid (a CSRF token, a default, an empty "Notes").
    Names only: a value that differs from run to run (a record's id) is the person's to approve, as
    a field's is. A replay whose save would send any other field or query parameter, by another
    method, to another path, or to another system than the routine's, is stopped at the gate before
    anyone is asked (``replay.off_review``). ``query`` is None in a version learned before a save's
    query was recorded: the review cannot show any query was there, so any is off review."""

    fields: list[str] = Field(default_factory=list, max_length=SENDS_MOST)
    method: str = Field(
        default="POST",
        pattern=r"^[A-Z]{1,16}$",
        description="the save's HTTP method (POST in a version learned before it was recorded: a form's save)",
    )
    query: list[str] | None = Field(
        default=None,
        max_length=SENDS_MOST,
        description="the names of the parameters in the save's query (none in a version learned before "
        "they were recorded: a save with a query is off its review)",
    )

    def describe(self) -> str:
        if self.query is None:
            query = "learned before a save's query was recorded: any query is off review"
        else:
            query = f"query {', '.join(self.query)}" if self.query else "no query"
        return (
            f"sends exactly {', '.join(self.fields) or 'no field'} to {self.path} (by {self.method}, {query})"
        )


class BrowserStep(_Data):
    kind: StepKind
    target: Target | None = None
    url: str | None = Field(default=None, description="open: the address, {erp} and {param} placeholders")
    value: str | None = Field(default=None, description="type/select: a {value} placeholder or a literal")
    expect: PageExpect | None = Field(default=None, description="the page this step runs on")
    absent: list[str] = Field(
        default_factory=list, description="open: values that must not be on the page yet (no duplicate)"
    )
    approval: bool = Field(default=False, description="this step submits a change: the person approves it")
    then: PageExpect | None = Field(default=None, description="the page the step must lead to")
    sends: Sends | None = Field(
        default=None,
        description="approval: the field names and path its save was reviewed to send (none on a "
        "version learned before they were recorded: it does not replay)",
    )

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.kind == "open" and not self.url:
            raise ValueError("an open step needs url")
        if self.sends is not None and not self.approval:
            raise ValueError("sends goes with approval: true, and only with it")
        if self.kind != "open" and self.target is None:
            raise ValueError(f"a {self.kind} step needs a target (role, name, field)")
        if self.kind in ("type", "select") and self.value is None:
            raise ValueError(f"a {self.kind} step needs value")
        placeholder = PLACEHOLDER.fullmatch(self.value or "") or SECRET.fullmatch(self.value or "")
        if self.value and not placeholder and "{" in self.value:
            raise ValueError(f"value {self.value!r}: one {{name}} or {{{{secret:NAME}}}} placeholder")
        return self

    def describe(self) -> str:
        if self.kind == "open":
            return f"open {self.url}"
        assert self.target is not None
        head = f"{self.kind} {self.target.describe()}"
        if self.value is not None:
            head += f" ← {self.value}"
        return head + (" [asks the person to approve the exact payload]" if self.approval else "")


class Obstacle(_Data):
    """Something the system may put in the way, and what the routine does about it."""

    kind: ObstacleKind
    steps: list[BrowserStep] = Field(default_factory=list, description="login: how to sign in")
    retries: int = Field(default=2, ge=0, le=5)

    @model_validator(mode="after")
    def _secrets_only(self) -> Self:
        for step in self.steps:
            if step.kind == "type" and step.value and not SECRET.fullmatch(step.value):
                raise ValueError("a login step types only {{secret:NAME}} placeholders")
        return self


class Routine(_Data):
    name: str = Field(pattern=NAME, max_length=40, description="the recipe it replays")
    version: int = Field(ge=1)
    status: Status = "draft"
    summary: str = Field(default="", max_length=300)
    source_run: str = Field(min_length=1, description="the verified run it was learned from")
    based_on: int | None = Field(default=None, description="the version this one heals")
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    reviewed_by: str | None = None
    reviewer_credential: str | None = Field(
        default=None,
        description="the fingerprint of the password the reviewer accepted it under: the acceptance "
        "counts only while it is still her password (approvals.identity)",
    )
    seal: str | None = Field(
        default=None, description="the approvals key's signature of the acceptance: what it does, by whom"
    )
    proposed_by: str | None = Field(
        default=None,
        description="who wrote this version, proof:name: worker:taskcrew for the system's own proposal "
        "after a verified run, the proven identity of whoever ran `routines learn` (store.AUTHOR)",
    )
    source_submitter: str | None = Field(
        default=None, description="who submitted the run it was learned from, when the system knew it"
    )
    proposal_seal: str | None = Field(
        default=None,
        description="the approvals key's signature of who wrote it and what it does (store.proposal): "
        "a file written into the folder by hand, or edited since, has none that checks out",
    )
    system: str = Field(default="", description="the system {erp} stands for, by its name in the run")
    params: list[str] = Field(default_factory=list, description="the recipe parameters it uses")
    documents: DocumentRule
    templates: list[Template] = Field(min_length=1)
    values: list[str] = Field(description="what the file work hands on, by name")
    browser: list[BrowserStep] = Field(min_length=1, max_length=60)
    obstacles: list[Obstacle] = Field(default_factory=list)
    successes: int = Field(default=0, ge=0)
    fallbacks: int = Field(default=0, ge=0)
    fallbacks_in_a_row: int = Field(default=0, ge=0)
    last_fallback: str = Field(default="", max_length=600)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        known = set(self.params) | set(self.values) | {"erp"}
        for step in [*self.browser, *(s for o in self.obstacles for s in o.steps)]:
            for text in (step.url or "", step.value or "", *step.absent):
                unknown = set(PLACEHOLDER.findall(text)) - known
                if unknown:
                    raise ValueError(
                        f"step {step.describe()!r} uses {', '.join(sorted(unknown))}: neither a parameter "
                        "nor a value the file work hands on"
                    )
        names = [t.issuer.casefold() for t in self.templates]
        if len(names) != len(set(names)):
            raise ValueError("two templates for one issuer")
        return self

    def uses(self) -> list[str]:
        """The values of the file work its steps enter (their placeholders but parameters, {erp})."""
        texts = [t for s in self.browser for t in (s.url or "", s.value or "", *s.absent)]
        found = dict.fromkeys(n for t in texts for n in PLACEHOLDER.findall(t))
        return [n for n in found if n not in self.params and n != "erp"]

    @property
    def flagged(self) -> bool:
        return self.fallbacks_in_a_row >= FLAG_AFTER

    def template_for(self, vendor: str) -> Template | None:
        """The template of the issuer ``vendor`` is, by ``issuer_of`` (None: none, or several)."""
        found = issuer_of(vendor, [t.issuer for t in self.templates])
        return None if found is None else self.templates[found]

    def no_template(self, vendor: str) -> str:
        """Why ``template_for(vendor)`` is None, in plain words: which names differ from the vendor's."""
        like = [t.issuer for t in self.templates if named_like(vendor, t.issuer)]
        if len(like) > 1:
            return (
                f"the vendor name {vendor!r} could be any of {len(like)} issuers the routine has a template "
                f"for ({', '.join(like)}), and none of them is named exactly that: the routine does not "
                "guess which one the task means"
            )
        known = ", ".join(t.issuer for t in self.templates)
        near = [t.issuer for t in self.templates if resembles(vendor, t.issuer)]
        if near:
            return (
                f"the routine has no extraction template for {vendor!r}: {name_differs(vendor, near[0])}, "
                f"so its template (it has: {known}) may be another company's and is not used"
            )
        return f"the routine has no extraction template for {vendor!r} yet (it has: {known})"

    def names(self, text: str, vendor: str, template: Template) -> bool:
        """Whether ``text`` (a document the search for ``vendor`` found) is ``template``'s issuer's by
        what it prints: a line prints ``vendor``'s name in order, each word a whole word
        (``prints_name``), and at one such place the issuer it names is ``template``'s
        (``issuers_named``). The search matches each word as a substring anywhere on a line, in any
        order: that only finds candidates, it never vouches — "Unit 7 Supplies, 4 Harbour Road" holds
        every word of "Unit 4 Supplies" but prints Unit 7's name, and "Studio B is a design firm"
        is not Studio A's. A document that prints the name only inside the longer name of another
        issuer the routine knows ("Northwind Traders Logistics" for vendor "Northwind Traders") is
        that issuer's, not the vendor's."""
        named = issuers_named(text, vendor, [t.issuer for t in self.templates])
        return self.templates.index(template) in named

    def params_problem(self, values: Mapping[str, str]) -> str | None:
        """Why this routine cannot do a task given ``values`` (None: it can): it was learned and
        reviewed with exactly its ``params``. A value the task gives that it was not learned with
        would be ignored (a recipe's optional ``--invoice INV-2031`` replayed as "the newest
        invoice" enters another one), and one it needs that the task leaves out would be typed as
        its placeholder."""
        extra, missing = sorted(set(values) - set(self.params)), sorted(set(self.params) - set(values))
        if not extra and not missing:
            return None
        said = []
        if extra:
            said.append(f"the task gives {', '.join(extra)}, which it was not learned with and would ignore")
        if missing:
            said.append(f"the task does not give {', '.join(missing)}, which it needs")
        return f"{self.name} v{self.version}: " + "; ".join(said)

    def obstacle(self, kind: ObstacleKind) -> Obstacle | None:
        return next((o for o in self.obstacles if o.kind == kind), None)


_WORD = re.compile(r"[^\W_]+")
_INITIALS = re.compile(r"(?<![^\W_])[^\W\d_](?:[./][^\W\d_])+(?![^\W_])")
"""Single letters joined by dots or slashes: "S.A.", "L.L.C.", "A/S", "J.P."."""


def _words(text: str) -> list[str]:
    """A name's words in order, EVERY one of them: letters of any script ("Müller" is one word, not
    "ller"), single letters and digits too — "Unit 4 Supplies" is not "Unit 7 Supplies", nor "Studio
    A" "Studio B", so no word may be dropped. Punctuation is no word ("Smith & Sons" is "Smith Sons"),
    and initials written with dots or a slash are one ("S.A." is "SA", "A/S" "AS", "J.P." "JP"), so a
    name reads the same however its initials and legal form are punctuated."""
    text = unicodedata.normalize("NFC", text).casefold()  # "ü" composed or not is one letter
    text = _INITIALS.sub(lambda m: re.sub(r"[./]", "", m.group(0)), text)
    return _WORD.findall(text)


def _places(words: Sequence[str], name: Sequence[str]) -> list[int]:
    """Where ``words`` (a line's, by ``_words``) print ``name``'s words in order, one after another:
    the index of each such place's first word. The one test of "prints a name" (``prints_name``,
    ``issuers_named``)."""
    k = len(name)
    return [i for i in range(len(words) - k + 1) if k and list(words[i : i + k]) == list(name)]


def prints_name(text: str, name: str) -> bool:
    """Some line of ``text`` prints ``name`` — its words but its trailing legal form (``_name``) — in
    order, one after another, each as a whole word (``_places``): not inside other words ("14
    Harbour Road" does not print the "4" of "Unit 4 Supplies", nor "Studio Bar" the "B" of "Studio
    B"), and not in another order ("Unit 7 Supplies, 4 Harbour Road" holds every word of "Unit 4
    Supplies" and prints Unit 7's name; "Studio B is a design firm" does not print "Studio A"),
    while "GLOBEX CORPORATION" prints Globex Corp (a legal form written out). A search that finds
    the words in any order only finds candidates; this is what a document must print to be one."""
    wanted = _name(name)
    return any(_places(_words(line), wanted) for line in text.splitlines())


def issuer_of(name: str, issuers: Sequence[str]) -> int | None:
    """Which of ``issuers`` ``name`` is (its index), the one rule for whose template a vendor gets
    and whose a document is: the issuer that IS that name — the same words after ``_words`` ("SOYLENT
    FOODS" is Soylent Foods; of two written differently, "Northwind Traders" and
    "NORTHWIND-TRADERS", the first, the newer) — else the one issuer ``named_like`` it, the same
    name give or take a legal form ("Globex" is Globex Corp). None when none is — "Northwind Traders
    Logistics" is not Northwind Traders, nor is "Northwind" — or when several are only named like it
    ("Northwind Traders" with Northwind Traders Ltd and Northwind Traders Inc): which one is meant
    is not guessed, and never decided by the order the templates are kept in."""
    words = _words(name)
    if not words:
        return None
    same = [i for i, issuer in enumerate(issuers) if _words(issuer) == words]
    if same:
        return same[0]
    like = [i for i, issuer in enumerate(issuers) if named_like(name, issuer)]
    return like[0] if len(like) == 1 else None


def issuers_named(text: str, name: str, issuers: Sequence[str]) -> set[int | None]:
    """Whom ``text`` names where it prints ``name`` (``prints_name``'s test, ``_places``: its words
    but a trailing legal form, in a line, in order, as words): at each such place the longest of
    ``issuers`` printed there around them — "Northwind Traders Logistics" around "Northwind Traders"
    is that issuer, a longer name that merely contains the vendor's — else the name as printed
    there, with the legal form printed after it, if any ("Northwind Traders Inc" is not Northwind
    Traders Ltd when the routine knows both; a bare "Northwind Traders" then is neither's); each
    read by ``issuer_of``. Empty when the text never prints the name in order: a line holding its
    words in another order names nobody by it."""
    wanted = _name(name)
    known = [_words(issuer) for issuer in issuers]
    found: set[int | None] = set()
    k = len(wanted)
    for line in text.splitlines():
        words = _words(line)
        for i in _places(words, wanted):
            around = [
                (len(s), j)
                for j, s in enumerate(known)
                if len(s) > k
                and any(words[p : p + len(s)] == s for p in range(max(0, i + k - len(s)), i + 1))
            ]
            if around:
                printed = issuers[max(around)[1]]
            else:
                end = i + k
                while end < len(words) and words[end] in LEGAL_FORMS:
                    end += 1
                printed = " ".join(words[i:end])
            found.add(issuer_of(printed, issuers))
    return found


LEGAL_FORMS = frozenset(
    {"ltd", "limited", "inc", "incorporated", "corp", "corporation", "co", "company", "llc", "llp", "lp"}
    | {"plc", "pvt", "private", "pty", "gmbh", "ag", "kg", "se", "sa", "sas", "sarl", "srl", "spa", "bv"}
    | {"nv", "oy", "ab", "aps", "kk", "pte", "as", "sl", "sro", "ek"}
)
"""Words of a company's legal form: "Bharat Components Pvt. Ltd." is Bharat Components, "Globex
Corp" is Globex. No other word is dropped: "Northwind Traders Logistics" is another company."""
MULTI_WORD_FORMS: dict[tuple[str, ...], str] = {
    ("gmbh", "co", "kg"): "gmbh & co kg",  # a KG whose partner is a GmbH: neither a GmbH nor a KG
    ("ag", "co", "kg"): "ag & co kg",
    ("se", "co", "kg"): "se & co kg",
    ("sp", "z", "oo"): "sp z oo",  # "Sp. z o.o.", the Polish limited company
    ("sa", "rl"): "sarl",  # "S.à r.l." (accents dropped, as ``name_key`` reads it) is a SARL
    ("sà", "rl"): "sarl",
    ("pvt", "ltd"): "ltd",  # a limited company however qualified: "Pvt. Ltd.", "Pte. Ltd.", "Pty Ltd",
    ("pty", "ltd"): "ltd",  # "Co., Ltd." — a person checks which of "X Pvt Ltd" and "X Ltd" is meant
    ("co", "ltd"): "ltd",
}
"""Legal forms of several words, each one form (words as ``_words`` reads them, after
``_LEGAL_FORM_SPELLINGS``): "Schmidt GmbH & Co. KG" is Schmidt with one legal form, another
company's than "Schmidt GmbH" or "Schmidt KG" (``other_entities``)."""


def _form_start(words: list[str]) -> int:
    """Where a name's trailing legal forms start in its ``words`` (``len(words)``: none), a form of
    several words (``MULTI_WORD_FORMS``) as one; a name that is nothing but a legal form is a name (0
    is never returned for words)."""
    end = len(words)
    while end:
        spelled = [_LEGAL_FORM_SPELLINGS.get(w, w) for w in words[:end]]
        many = next((len(f) for f in MULTI_WORD_FORMS if len(f) <= end and tuple(spelled[-len(f) :]) == f), 0)
        if not many and words[end - 1] not in LEGAL_FORMS:
            break
        end -= many or 1
    return end or len(words)


def _name(text: str) -> list[str]:
    """A name's words without its trailing legal form (all of them when it is nothing else)."""
    words = _words(text)
    return words[: _form_start(words)]


# characters drawn like a Latin letter (after Unicode's confusables, UTS #39; NFKC already folds
# fullwidth and mathematical letters): Cyrillic, Greek, Armenian and Latin look-alikes, before case
# is folded (a capital and a small letter may look like different Latin ones: Greek "Η" and "η")
_DRAWN_ALIKE = str.maketrans(
    {
        pair[0]: pair[1]
        for pair in (  # noqa: SIM905 (pairs read better so: each letter beside its Latin one)
            "Аa Вb Сc Еe Нh Іi Јj Кk Мm Оo Рp Ѕs Тt Хx Уy Үy Һh Ӏl Ԛq Ԝw Ьb "
            "аa еe оo рp сc уy хx іi јj ѕs һh ԁd ԛq ԝw ӏl үy ьb ъb ѵv "
            "Αa Βb Εe Ζz Ηh Ιi Κk Μm Νn Οo Ρp Τt Υy Χx Ϲc Ϳj αa ιi κk νv οo ρp υu χx γy ϲc ϳj ηn "
            "Օo օo Սu սu ոn հh ցg զq "
            "ıi ǀi ǁl Ɩl ɩi ȷj ƚl ĸk |l"
        ).split()
    }
)
_LOOK_ALIKE: tuple[tuple[str, str], ...] = tuple(
    (drawn, letter)
    for line in (Path(__file__).with_name("drawn_alike.txt").read_text(encoding="utf-8").splitlines())
    if line.strip() and not line.startswith("#")
    for drawn, letter in [line.split("\t")]
)
"""After case is folded, in order (``drawn_alike.txt``, reviewed against UTS #39's confusables):
digits drawn like letters, "I", "l" and "1" one letter (one stroke in a sans-serif font), "rn"
drawn like "m", "cl" like "d", "vv" like "w"."""


def name_key(text: str) -> str:
    """A name as a person cannot tell it from another: the one comparison of vendor names, for the
    approval's look-alike record (``approvals.rules.lookalike_vendor``) and the drop-down option a
    replay or a scripted model may choose (``replay.options_like``). A skeleton in the spirit of
    Unicode's confusables (UTS #39): compatibility forms folded (NFKC), letters of other scripts
    drawn like Latin ones made Latin, case folded, accents dropped ("Müller" is "Muller"), then
    ``_name``'s words (punctuation and a trailing legal form aside: "Northwind Traders Ltd" is
    Northwind Traders) run together, with "I"/"l"/"1"/"|"/"ı" one letter, "0" "o", "rn" "m", "cl"
    "d" and "vv" "w" (``_LOOK_ALIKE``): "lnitech" is Initech, "GIobex Corporation" Globex,
    "Northvvind Traders" and "Northwincl Traders" Northwind Traders. Only equal keys name alike; a word more or less is another name ("Initech Europe
    GmbH" is not Initech). Empty for a name of no letter or digit. Two listed records of one key
    whose legal forms alone tell them apart ("Siemens AG", "Siemens plc") are two companies to the
    approval (``other_entities``)."""
    text = unicodedata.normalize("NFKC", text).translate(_DRAWN_ALIKE).casefold()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    key = "".join(_name(text))
    for drawn, letter in _LOOK_ALIKE:
        key = key.replace(drawn, letter)
    return key


_LEGAL_FORM_SPELLINGS = {
    "limited": "ltd",
    "incorporated": "inc",
    "corporation": "corp",
    "company": "co",
    "private": "pvt",
    "pte": "pvt",
}
"""One legal form written out or cut short: "Globex Corporation" is Globex Corp, "Bharat Components
Private Limited" Bharat Components Pvt. Ltd."""


def _entity(text: str) -> tuple[list[str], list[str]]:
    """A name's words and its trailing legal form (``_name``), as written (compatibility forms
    folded, case aside, nothing drawn alike made Latin): a form with a letter of another script
    ("АG", a Cyrillic А) is no legal form here, only a word of the name."""
    words = _words(unicodedata.normalize("NFKC", text))
    end = _form_start(words)
    spelled = [_LEGAL_FORM_SPELLINGS.get(w, w) for w in words[end:]]
    forms, i = [], 0
    while i < len(spelled):  # a form of several words is one (``MULTI_WORD_FORMS``)
        many = max((f for f in MULTI_WORD_FORMS if tuple(spelled[i : i + len(f)]) == f), key=len, default=())
        forms.append(MULTI_WORD_FORMS[many] if many else spelled[i])
        i += len(many) or 1
    return words[:end], forms


def other_entities(text: str, other: str) -> bool:
    """Two names a person tells apart by their legal forms alone: the same words, as written, each
    with its own legal form, written plainly ("Siemens AG" and "Siemens plc", "Robert Bosch GmbH"
    and "Robert Bosch Ltd": two companies of one group). Not when one has no legal form ("Northwind
    Traders" and "Northwind Traders Ltd"), the forms are one ("Corp", "Corporation"), or the names
    differ in a letter drawn alike ("Sіemens plc", a Cyrillic і, or "Siemens АG"): those stay named
    alike (``name_key``) — which record is meant is for a person to check. Each name must have
    exactly one legal form: "Northwind Traders Ltd Ltd" or "… Limited Ltd" beside "Northwind Traders
    Ltd" (a form repeated) stay alike. A form of several words is one (``MULTI_WORD_FORMS``): "Schmidt
    GmbH & Co. KG" and "Schmidt GmbH", or "Müller KG" and "Müller GmbH & Co. KG", are two companies;
    "… Co Ltd" or "… Pvt Ltd" is a Ltd, named alike with "… Ltd"."""
    (name, form), (other_name, other_form) = _entity(text), _entity(other)
    return len(form) == len(other_form) == 1 and form != other_form and name == other_name


def named_like(text: str, other: str) -> bool:
    """``text`` names what ``other`` names: the same words, in any case, spacing and punctuation,
    give or take a legal form ("Bharat Components" and "Bharat Components Pvt. Ltd.", "Globex" and
    "Globex Corp", "Northwind Traders Ltd" and "Northwind Traders"). A name with a word more or
    less is another company's ("Northwind Traders Logistics" is not Northwind Traders, nor is
    "Northwind" or "Traders"), and a name differing in a letter of any script is another name
    ("Möller" is not "Müller"). The one rule for a template's issuer, a learned parameter and the
    drop-down option a replay chooses: a sister company must never get another's invoice or bill."""
    a = _name(text)
    return bool(a) and a == _name(other)


def resembles(text: str, other: str) -> bool:
    """The words of one name lead the other's ("Northwind" and "Northwind Traders Logistics"), or
    the names differ in one word of several ("Unit 4 Supplies" and "Unit 7 Supplies"): not the same
    name (``named_like``), only worth saying in a reason why none was used."""
    a, b = _words(text), _words(other)
    if len(a) == len(b) > 1 and sum(x != y for x, y in zip(a, b, strict=True)) == 1:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return bool(short) and long[: len(short)] == short


def name_differs(name: str, other: str) -> str:
    """How ``name`` differs from ``other`` that it is not named like, in a reason's words."""
    a, b = _name(name), _name(other)
    extra = [w for w in a if w not in b] or [w for w in b if w not in a]
    return f"{name!r} is not {other!r}" + (f" (the words differ: {' '.join(extra)})" if extra else "")
