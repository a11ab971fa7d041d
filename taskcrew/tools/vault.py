"""Secrets the model may use but never see.

The model writes placeholders such as ``{{secret:ERP_PASSWORD}}``; the browser substitutes the
value only when typing into a field of a host the secret is bound to (``hosts``; ``may_type``). Every
secret value is redacted back to its placeholder — longest first, also in the forms a browser or a
server produces: percent-encoding (any case, ``+`` for space), HTML entities (named, decimal, hex),
JSON escapes and base64 — from any text passed through ``redact`` / ``redact_obj``: observations,
action results, errors, policy decisions, traces, reports, memory.

No redaction oracle: text the model typed into a password field as plain text is a *guess*
(``note_guess``) and is redacted exactly like the real value, so an echo of a right guess and of a
wrong one look the same. A value the page itself holds in a password box is a hidden value of the
run the same way (``note_guess(by_page=True)``, shown as ``{{secret:PAGE_PASSWORD_1}}``, ``_2`` … one
number per distinct value, in the order met, never given to another value in the run): the model
never reads it, the trace, report and facts never hold it; only ``redact_stored`` (what a person
approves, its key, the record of a send) keeps both, as sent. Hidden values belong to one run: each
run works with its own view of the vault (``for_run``), holding the stored secrets and none of
another run's hidden values; a durable job's later leg starts with the values its job's approvals
show in password boxes (``jobs.runner.hide_approved``). Redaction is for text that leaves (to a
model, the trace, the report, disk); code that compares what a page showed reads it through
``reveal``.
"""

from __future__ import annotations

import base64
import copy
import html
import html.entities
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel

GUESS_NAME = "TYPED_SECRET"
PAGE_NAME = "PAGE_PASSWORD"
"""How a value the page holds in a password box (not a vault secret, not typed by the model) reads:
``PAGE_PASSWORD_1``, ``PAGE_PASSWORD_2`` … (``page_name``), one per distinct value of the run."""
PAGE_NAME_RE = re.compile(PAGE_NAME + r"(?:_[0-9]+)?")
PLACEHOLDER_RE = re.compile(r"\{\{\s*secret:([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
MIN_SECRET_LENGTH = 3
DEFAULT_SECRET_NAMES = ("ERP_USERNAME", "ERP_PASSWORD")

T = TypeVar("T")


class UnknownSecretError(ValueError):
    """A placeholder names a secret the vault does not hold."""


class SecretConfigError(ValueError):
    """A secret cannot be held safely (empty or too short to redact without mangling text)."""


def placeholder(name: str) -> str:
    return "{{secret:" + name + "}}"


def page_name(number: int) -> str:
    """The name the run's ``number``-th hidden page value reads as (1-based, in the order met)."""
    return f"{PAGE_NAME}_{number}"


LOGIN_FIELDS = "login"
"""A field rule: the fields of a login form (one password field, at most two text fields)."""
ANY_FIELD = "*"


@dataclass(frozen=True)
class TypingTarget:
    """The field a placeholder is about to be typed into."""

    name: str = ""
    type: str = "text"
    login_form: bool = False
    label: str = ""


class Vault:
    """Holds secret values by name; substitutes placeholders and redacts values."""

    def __init__(
        self,
        secrets: Mapping[str, str] | None = None,
        *,
        public: Iterable[str] = (),
        hosts: Mapping[str, Sequence[str]] | None = None,
        fields: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """``public`` names (a login name, say) are substituted like secrets but not redacted:
        redacting a short everyday word such as "demo" would mangle ordinary text. ``hosts`` binds a
        secret to the ``host:port`` (or ``host``) entries it may be typed into; a secret without an
        entry may be typed into any host the policy allows. ``fields`` binds a secret to the fields it
        may be typed into: field names, ``"login"`` (the fields of a login form) or ``"*"``; a secret
        bound to hosts and not named there may only be typed into a login form."""
        self._public = frozenset(public)
        self._hosts = {name: [h.strip().lower() for h in entries] for name, entries in (hosts or {}).items()}
        self._fields = {name: [f.strip() for f in entries] for name, entries in (fields or {}).items()}
        self._guesses: dict[str, str] = {}  # a hidden value of the run -> the name it reads as
        self._numbered = 0  # page values numbered so far in the run: a number is never given twice
        self._known = ""  # the run's task: a page value it names is the model's already (``know``)
        self._lock = threading.Lock()  # the page views of a run's sessions note values on their threads
        self._secrets: dict[str, str] = {}
        for name, value in (secrets or {}).items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise SecretConfigError(f"secret name {name!r} must look like an identifier (A-Z, 0-9, _)")
            if len(value) < MIN_SECRET_LENGTH:
                raise SecretConfigError(
                    f"secret {name} is shorter than {MIN_SECRET_LENGTH} characters; "
                    "it could not be redacted without mangling ordinary text"
                )
            self._secrets[name] = value
        # one attribute, swapped whole: the page view registers values on the browser's thread while
        # other threads redact (a pattern with another's group names would fail or mislabel)
        self._redaction = self._compile()
        self._stored, self._stored_by_variant = self._compile(guesses=False)

    @classmethod
    def from_env(
        cls,
        names: Iterable[str] = DEFAULT_SECRET_NAMES,
        env_file: Path | None = None,
        environ: Mapping[str, str] | None = None,
        public: Iterable[str] = (),
        hosts: Mapping[str, Sequence[str]] | None = None,
    ) -> Vault:
        """Read the named secrets from the environment, then from a ``.env`` file (environment wins).

        Names that are set nowhere are simply absent; typing their placeholder gives a clear error.
        """
        from dotenv import dotenv_values

        env = os.environ if environ is None else environ
        file_values: dict[str, str | None] = {}
        path = env_file if env_file is not None else Path.cwd() / ".env"
        if path.is_file():
            file_values = dotenv_values(path)
        found: dict[str, str] = {}
        for name in names:
            value = env.get(name) or file_values.get(name)
            if value:
                found[name] = value
        return cls(found, public=public, hosts=hosts)

    def for_run(self) -> Vault:
        """A view for one run: the same stored secrets, hidden values of its own (none yet). A run's
        hidden values — what the model typed into a password box, what a page held in one — end
        with it: another run of the same process (a job worker runs everyone's jobs in one
        workplace) never reads its own values masked because of a page an earlier run opened."""
        view = copy.copy(self)
        view._guesses = {}
        view._numbered = 0
        view._known = ""
        view._lock = threading.Lock()
        view._redaction = view._compile()
        return view

    def know(self, task: str) -> None:
        """The run's task text: a value a page holds in a password box that the task names is not
        hidden (the model has it already; masking it would only hide the run's own values), whether
        it was met before or after. Named means as a whole token (``named_in``): a value that is only a
        part of a longer word or number of the task ("250.00" in "1250.00", "5501" in "INV-5501") is
        not named, and stays hidden."""
        with self._lock:
            self._known = task
            named = [v for v, shown in self._guesses.items() if shown != GUESS_NAME and named_in(task, v)]
            if named:
                for value in named:  # its number is not given to another value
                    del self._guesses[value]
                self._redaction = self._compile()

    @property
    def names(self) -> list[str]:
        return sorted(self._secrets)

    def __len__(self) -> int:
        return len(self._secrets)

    def __repr__(self) -> str:  # never show values
        return f"Vault(names={self.names})"

    def is_public(self, name: str) -> bool:
        return name in self._public

    def hosts_for(self, name: str) -> list[str] | None:
        """The hosts ``name`` is bound to, or None when it is not bound (any allowed host)."""
        return list(self._hosts[name]) if name in self._hosts else None

    def may_type(self, name: str, url: str) -> bool:
        """May secret ``name`` be typed into a page at ``url`` (its host and port)?"""
        bound = self._hosts.get(name)
        if bound is None:
            return True
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        return f"{host}:{port}" in bound or host in bound

    def field_rules(self, name: str) -> list[str]:
        """Where ``name`` may be typed: its rules, else a login form for a host-bound secret."""
        if name in self._fields:
            return list(self._fields[name])
        return [LOGIN_FIELDS] if name in self._hosts else [ANY_FIELD]

    def field_refusal(self, name: str, target: TypingTarget) -> str | None:
        """Why ``name`` may not be typed into ``target`` (None: it may)."""
        rules = self.field_rules(name)
        for rule in rules:
            if rule == ANY_FIELD or (rule == LOGIN_FIELDS and target.login_form):
                return None
            if rule not in (ANY_FIELD, LOGIN_FIELDS) and rule.casefold() == target.name.casefold():
                return None
        allowed = " or ".join(
            "a login form's user or password field" if r == LOGIN_FIELDS else f"the field {r!r}"
            for r in rules
        )
        field = repr(target.label or target.name or target.type)
        return (
            f"the secret {name} may only be typed into {allowed}; the field {field} is not one, so it "
            "was not typed (it would be stored or shown where it does not belong)"
        )

    def note_guess(self, text: str, *, by_page: bool = False) -> None:
        """A hidden value of the run: from now on redacted like a secret by ``redact`` (everything a
        model reads, the trace, the report, the facts), never by ``redact_stored``. Plain text the
        model typed into a password box is a guess (``{{secret:TYPED_SECRET}}``, which it may copy
        back); ``by_page``, a value the page holds in a password box, met by the page view or the
        browser's gate (``{{secret:PAGE_PASSWORD_1}}``, ``_2`` … one per distinct value in the order
        met, so two different values never read alike; never typed: the model never knew it). A
        value the vault holds as a secret is not one (it reads as its own placeholder), nor is a page
        value the run's task names (``know``); a guess keeps its name if the page later holds it, and
        a page value the model types reads as a guess from then on (no oracle: a right guess reads
        like a wrong one), its number never given to another value.
        Shorter than ``MIN_SECRET_LENGTH`` it is not hidden: masking "1" or "30" everywhere would
        garble every amount, date and element number (the vault refuses such a secret for the same
        reason), and the approval still flags it."""
        with self._lock:
            if len(text) < MIN_SECRET_LENGTH or self._guesses.get(text) == GUESS_NAME:
                return
            if by_page and (
                text in self._guesses or text in self._secrets.values() or named_in(self._known, text)
            ):
                return
            if by_page:
                self._numbered += 1
                shown = page_name(self._numbered)
            else:
                shown = GUESS_NAME
            self._guesses[text] = shown
            self._redaction = self._compile()

    @staticmethod
    def has_placeholders(text: str) -> bool:
        return bool(PLACEHOLDER_RE.search(text))

    def substitute(self, text: str) -> str:
        """Replace every placeholder with its value; an unknown name raises ``UnknownSecretError``."""

        def repl(match: re.Match[str]) -> str:
            name = match.group(1)
            if PAGE_NAME_RE.fullmatch(name) and name not in self._secrets:
                raise UnknownSecretError(
                    f"{placeholder(name)} hides a value the page holds in a password box; it is not a "
                    "stored secret and is never typed elsewhere — leave that box as it is, or use a "
                    "{{secret:NAME}} of: " + (", ".join(self.names) or "none")
                )
            if name == GUESS_NAME and name not in self._secrets:
                # copied from a render, where it hides what was typed into a password field
                with self._lock:  # another session of the run may be noting a value meanwhile
                    typed = [g for g, shown in self._guesses.items() if shown == GUESS_NAME]
                if len(typed) == 1:
                    return typed[0]
                raise UnknownSecretError(
                    f"{placeholder(name)} hides text typed into a password field earlier"
                    + (
                        f" ({len(typed)} different texts, so it is ambiguous)"
                        if typed
                        else " (none in this session)"
                    )
                    + "; it is not a stored secret — type the text itself, or a {{secret:NAME}} of: "
                    + (", ".join(self.names) or "none")
                )
            if name not in self._secrets:
                known = ", ".join(self.names) or "none"
                raise UnknownSecretError(
                    f"unknown secret placeholder {placeholder(name)}; the secrets available are: {known}"
                )
            return self._secrets[name]

        return PLACEHOLDER_RE.sub(repl, text)

    def redact(self, text: str) -> str:
        """Replace every secret value (and its escaped forms) with its placeholder, longest first."""
        pattern, by_variant = self._redaction
        if pattern is None or not text:
            return text
        return pattern.sub(lambda m: by_variant[str(m.lastgroup)], text)

    def reveal(self, text: str) -> str:
        """``text`` as read through ``redact``, with the run's hidden values back (a page value's
        placeholder, and ``{{secret:TYPED_SECRET}}`` when one text was typed): for code that compares
        what a page showed with a quote or a value sent (the citation check, where an approved value
        comes from) — never for text that leaves. A stored secret stays its placeholder."""
        with self._lock:
            hidden = {placeholder(shown): value for value, shown in self._guesses.items()}
            typed = [v for v, shown in self._guesses.items() if shown == GUESS_NAME]
        hidden.pop(placeholder(GUESS_NAME), None)
        if len(typed) == 1:
            hidden[placeholder(GUESS_NAME)] = typed[0]
        if not hidden or not text:
            return text
        return PLACEHOLDER_RE.sub(lambda m: hidden.get(placeholder(m.group(1)), m.group(0)), text)

    def redact_stored(self, text: str) -> str:
        """Replace every stored secret's value (not a hidden value of the run, ``note_guess``) with
        its placeholder: what a data-changing request is recorded as, keyed by, judged by and shown
        to the person who approves it (``actions._gate``, ``network``). A guess or a page's value in
        a password box is sent as it is, so it is shown and keyed as it is: a guess "98000.00" must
        not mask an amount on the approval screen, nor give every guess one key. (Model-visible
        text, the trace and the report keep ``redact``: no oracle there.)"""
        if self._stored is None or not text:
            return text
        return self._stored.sub(lambda m: self._stored_by_variant[str(m.lastgroup)], text)

    def is_stored_placeholder(self, text: str) -> bool:
        """Is ``text`` exactly one stored (not public) secret's placeholder, as ``redact_stored``
        shows that secret's value?"""
        match = PLACEHOLDER_RE.fullmatch(text)
        return match is not None and match.group(1) in self._secrets and not self.is_public(match.group(1))

    def contains_secret(self, text: str) -> bool:
        pattern = self._redaction[0]
        return pattern is not None and bool(pattern.search(text))

    def redact_obj(self, obj: T) -> T:
        """Redact every string inside ``obj`` (str, list, tuple, dict, pydantic model); returns a copy."""
        if self._redaction[0] is None:
            return obj
        return self._redact_any(obj)

    def _redact_any(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.redact(obj)
        if isinstance(obj, BaseModel):
            updates = {name: self._redact_any(getattr(obj, name)) for name in type(obj).model_fields}
            return obj.model_copy(update=updates)
        if isinstance(obj, list):
            return [self._redact_any(x) for x in obj]
        if isinstance(obj, tuple):
            return tuple(self._redact_any(x) for x in obj)
        if isinstance(obj, dict):
            return {self._redact_any(k): self._redact_any(v) for k, v in obj.items()}
        return obj

    def _compile(self, guesses: bool = True) -> tuple[re.Pattern[str] | None, dict[str, str]]:
        """One pattern: a group per value (hidden values first, then secrets, longest first)."""
        values: list[tuple[str, str]] = [
            (g, placeholder(self._guesses[g]))
            for g in sorted(self._guesses, key=len, reverse=True)
            if guesses
        ]
        redacted = {n: v for n, v in self._secrets.items() if n not in self._public}
        values += [(v, placeholder(n)) for n, v in sorted(redacted.items(), key=lambda kv: -len(kv[1]))]
        if not values:
            return None, {}
        by_group: dict[str, str] = {}
        parts: list[str] = []
        for i, (value, shown) in enumerate(values):
            by_group[f"v{i}"] = shown
            parts.append(f"(?P<v{i}>{value_pattern(value)})")
        return re.compile("|".join(parts)), by_group


def named_in(text: str, value: str) -> bool:
    """Does ``text`` name ``value`` as a whole token: between the text's edges or white space, with
    at most punctuation around it ("(1250.00).", "INV-5501,") — not as a part of a longer word or
    number ("250.00" in "1250.00", "5501" in "INV-5501", "1250" in "1250.00")?"""
    if not value or not text:
        return False
    return re.search(r"(?<!\S)[^\w\s]*" + re.escape(value) + r"[^\w\s]*(?!\S)", text) is not None


def value_pattern(value: str) -> str:
    """A regex for ``value`` in any of its forms, also mixed: each character literal, percent-encoded
    (any case; ``+`` for space), as an HTML entity (named, decimal, hex) or a JSON escape; and the
    value's base64 at any alignment inside a longer payload."""
    chars = "".join(_char_pattern(c) for c in value)
    b64 = [re.escape(f) for f in _base64_forms(value)]
    return "|".join([chars, *b64])


def _char_pattern(c: str) -> str:
    forms = [re.escape(c)]
    if c == " ":
        forms.append(r"\+")
    forms.append("(?i:" + "".join(f"%{b:02x}" for b in c.encode()) + ")")
    forms += [f"&#0*{ord(c)};", f"(?i:&#x0*{ord(c):x};)"]
    name = html.entities.codepoint2name.get(ord(c))
    if name:
        forms.append(f"&{name};")
    if c == "'":
        forms.append("&apos;")
    if ord(c) <= 0xFFFF:
        forms.append(f"(?i:\\\\u{ord(c):04x})")
    escaped = json.dumps(c)[1:-1]
    if escaped != c:
        forms.append(re.escape(escaped))
    if c == "/":
        forms.append(r"\\/")
    return "(?:" + "|".join(forms) + ")"


def _base64_forms(value: str) -> list[str]:
    forms: list[str] = []
    raw = value.encode()
    for offset in range(3):  # the characters that do not depend on what surrounds the value
        padded = b"\0" * offset + raw
        core = base64.b64encode(padded).decode()
        start = (offset * 4 + 2) // 3 if offset else 0
        stable = core[start : (len(padded) // 3) * 4]
        if len(stable) >= 8:
            forms += [stable, stable.replace("+", "-").replace("/", "_")]
    return list(dict.fromkeys(forms))
