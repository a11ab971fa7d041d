"""The vault without a browser: placeholders, redaction, loading from the environment and .env."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote_plus

import pytest
from pydantic import BaseModel

from taskcrew.tools.vault import SecretConfigError, UnknownSecretError, Vault


def test_substitute_and_unknown_placeholder() -> None:
    vault = Vault({"ERP_USERNAME": "demo", "ERP_PASSWORD": "hunter2&co"})
    assert vault.substitute("{{secret:ERP_USERNAME}} / {{ secret:ERP_PASSWORD }}") == "demo / hunter2&co"
    assert vault.substitute("no placeholders") == "no placeholders"
    with pytest.raises(UnknownSecretError, match=r"ERP_TOKEN.*ERP_PASSWORD, ERP_USERNAME"):
        vault.substitute("{{secret:ERP_TOKEN}}")


def test_redact_longest_first_and_escaped_forms() -> None:
    vault = Vault({"SHORT": "pass", "LONG": "pass word!"})
    text = f"a pass word! b pass c {quote_plus('pass word!')} d pass&amp;"
    redacted = vault.redact(text)
    assert "{{secret:LONG}}" in redacted and "{{secret:SHORT}}" in redacted
    assert "pass word" not in redacted and "pass+word" not in redacted
    assert redacted.count("{{secret:LONG}}") == 2
    html = Vault({"P": 'a<b>"c'})
    assert html.redact("x a&lt;b&gt;&quot;c y") == "x {{secret:P}} y"
    assert html.redact('{"v": "a<b>\\"c"}') == '{"v": "{{secret:P}}"}'


def test_redact_obj_walks_models_lists_and_dicts() -> None:
    class Inner(BaseModel):
        note: str

    class Outer(BaseModel):
        items: list[Inner]
        data: dict[str, str]
        n: int

    vault = Vault({"CANARY": "c4n4ry-9431"})
    obj = Outer(items=[Inner(note="see c4n4ry-9431")], data={"c4n4ry-9431": "x c4n4ry-9431"}, n=3)
    red = vault.redact_obj(obj)
    assert "c4n4ry" not in red.model_dump_json()
    assert red.items[0].note == "see {{secret:CANARY}}" and red.n == 3
    assert "c4n4ry" in obj.model_dump_json()  # the original is untouched


def test_from_env_prefers_the_environment_and_reads_dotenv(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("ERP_USERNAME=from-file\nERP_PASSWORD='p@ss w0rd'\nOTHER=ignored\n")
    vault = Vault.from_env(env_file=env_file, environ={"ERP_USERNAME": "from-env"})
    assert vault.names == ["ERP_PASSWORD", "ERP_USERNAME"]
    assert vault.substitute("{{secret:ERP_USERNAME}}|{{secret:ERP_PASSWORD}}") == "from-env|p@ss w0rd"
    empty = Vault.from_env(env_file=tmp_path / "missing.env", environ={})
    assert len(empty) == 0
    assert "p@ss" not in repr(vault)


def test_unsafe_secrets_are_refused() -> None:
    with pytest.raises(SecretConfigError, match="shorter"):
        Vault({"PIN": "12"})
    with pytest.raises(SecretConfigError, match="identifier"):
        Vault({"bad-name": "value123"})


def test_empty_vault_is_a_no_op() -> None:
    vault = Vault()
    assert vault.redact("anything") == "anything"
    assert not vault.contains_secret("anything")
    assert Vault.has_placeholders("{{secret:X}}")


def test_public_names_are_substituted_but_not_redacted() -> None:
    vault = Vault({"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"}, public=["ERP_USERNAME"])
    assert vault.substitute("{{secret:ERP_USERNAME}}/{{secret:ERP_PASSWORD}}") == "demo/demo123"
    assert vault.redact("demo-worker typed demo123") == "demo-worker typed {{secret:ERP_PASSWORD}}"
