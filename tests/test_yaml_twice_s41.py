"""A key written twice in a file a person edits is refused, never silently read as its last value.

PyYAML's safe loader keeps the last value of a repeated key without a word: an operator who put
``two_person: 'on'`` at the top of the shipped rules file (which says ``two_person: auto`` further
down) got ``auto`` — the looser setting. The files people edit are read with one loader
(``taskcrew.yamlfile.load_yaml``) that refuses a key written twice at any depth, naming it and its
lines; the risk rules say so as they say an unknown key ("cannot be used: …").
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from taskcrew.approvals.rules import DEFAULT_RULES, RiskRulesError, load_rules
from taskcrew.console.auth import ConsoleUserError, load_users
from taskcrew.tools.readback import ReadBackFileError
from taskcrew.tools.readback import load_rules as load_readback
from taskcrew.yamlfile import DuplicateKeyError, load_yaml


def test_a_setting_written_twice_in_the_risk_rules_is_refused_naming_it_and_its_lines(tmp_path: Path) -> None:
    text = DEFAULT_RULES.read_text(encoding="utf-8")
    assert "two_person: auto" in text
    line = text.splitlines().index("two_person: auto") + 3  # below the two lines put on top
    path = tmp_path / "rules.yaml"
    path.write_text("# ours: every payment needs two people\ntwo_person: 'on'\n" + text, encoding="utf-8")
    with pytest.raises(RiskRulesError) as refused:
        load_rules(path)  # before: read as two_person auto, without a word
    assert str(refused.value) == (
        f"The risk rules {path} cannot be used: two_person: written twice (lines 2 and {line}); only one "
        "can count. Keep one (docs/security.md lists the settings)."
    )


def test_a_key_written_twice_deeper_down_is_named_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "auto_approve:\n  - identities: ['cibot']\n    paths: ['^/reports/']\n    paths: ['.*']\n",
        encoding="utf-8",
    )
    with pytest.raises(RiskRulesError, match=r"auto_approve\.0\.paths: written twice \(lines 3 and 4\)"):
        load_rules(path)


def test_the_read_back_rules_and_the_console_users_refuse_a_key_written_twice_too(tmp_path: Path) -> None:
    readback = tmp_path / "readback.yaml"
    readback.write_text("rules: []\nrules:\n  - target: x\n", encoding="utf-8")
    with pytest.raises(
        ReadBackFileError, match=r"at line 2: the key 'rules' is written twice \(lines 1 and 2\)"
    ):
        load_readback(readback, {})
    users = tmp_path / "users.yaml"
    users.write_text("users: []\nusers: []\n", encoding="utf-8")
    with pytest.raises(ConsoleUserError, match="the key 'users' is written twice"):
        load_users(users)


def test_what_yaml_allows_still_loads_as_safe_load_reads_it() -> None:
    text = "base: &b {x: 1, y: 2}\nover:\n  <<: *b\n  x: 3\nlist: [{k: 1}, {k: 2}]\nsame: {a: *b, b: *b}\n"
    assert load_yaml(text) == yaml.safe_load(text)  # a merge's keys overridden on purpose: allowed
    assert load_yaml(DEFAULT_RULES.read_text(encoding="utf-8")) == yaml.safe_load(DEFAULT_RULES.read_text())
    with pytest.raises(DuplicateKeyError, match="'True' is written twice"):
        load_yaml("on: 1\ntrue: 2\n")  # one key to YAML, however spelt
    with pytest.raises(yaml.constructor.ConstructorError):
        load_yaml("!!python/object:os.system {}\n")  # still the safe loader
