"""Secrets the model may use but never see.

The model writes placeholders such as ``{{secret:ERP_PASSWORD}}``; the browser substitutes the
value only when typing into a field of an allowed host (``substitute``). Every secret value is
redacted back to its placeholder — longest first, also in its URL-, HTML- and JSON-escaped forms —
from any text passed through ``redact`` / ``redact_obj``: observations, action results, errors,
policy decisions, traces, reports, memory.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

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


class Vault:
    """Holds secret values by name; substitutes placeholders and redacts values."""

    def __init__(self, secrets: Mapping[str, str] | None = None, *, public: Iterable[str] = ()) -> None:
        """``public`` names (a login name, say) are substituted like secrets but not redacted:
        redacting a short everyday word such as "demo" would mangle ordinary text."""
        self._public = frozenset(public)
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
        self._pattern, self._by_variant = self._compile()

    @classmethod
    def from_env(
        cls,
        names: Iterable[str] = DEFAULT_SECRET_NAMES,
        env_file: Path | None = None,
        environ: Mapping[str, str] | None = None,
        public: Iterable[str] = (),
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
        return cls(found, public=public)

    @property
    def names(self) -> list[str]:
        return sorted(self._secrets)

    def __len__(self) -> int:
        return len(self._secrets)

    def __repr__(self) -> str:  # never show values
        return f"Vault(names={self.names})"

    @staticmethod
    def has_placeholders(text: str) -> bool:
        return bool(PLACEHOLDER_RE.search(text))

    def substitute(self, text: str) -> str:
        """Replace every placeholder with its value; an unknown name raises ``UnknownSecretError``."""

        def repl(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self._secrets:
                known = ", ".join(self.names) or "none"
                raise UnknownSecretError(
                    f"unknown secret placeholder {placeholder(name)}; the secrets available are: {known}"
                )
            return self._secrets[name]

        return PLACEHOLDER_RE.sub(repl, text)

    def redact(self, text: str) -> str:
        """Replace every secret value (and its escaped forms) with its placeholder, longest first."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: self._by_variant[m.group(0)], text)

    def contains_secret(self, text: str) -> bool:
        return self._pattern is not None and bool(self._pattern.search(text))

    def redact_obj(self, obj: T) -> T:
        """Redact every string inside ``obj`` (str, list, tuple, dict, pydantic model); returns a copy."""
        if not self._secrets:
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

    def _compile(self) -> tuple[re.Pattern[str] | None, dict[str, str]]:
        by_variant: dict[str, str] = {}
        # Longer secrets first so that a secret containing another is replaced whole.
        redacted = {n: v for n, v in self._secrets.items() if n not in self._public}
        for name, value in sorted(redacted.items(), key=lambda kv: -len(kv[1])):
            for variant in _variants(value):
                by_variant.setdefault(variant, placeholder(name))
        if not by_variant:
            return None, {}
        ordered = sorted(by_variant, key=len, reverse=True)
        return re.compile("|".join(re.escape(v) for v in ordered)), by_variant


def _variants(value: str) -> list[str]:
    forms = [value, quote(value, safe=""), quote_plus(value, safe=""), html.escape(value, quote=True)]
    forms.append(json.dumps(value, ensure_ascii=False)[1:-1])
    forms.append(json.dumps(value)[1:-1])
    return [f for f in dict.fromkeys(forms) if f]
