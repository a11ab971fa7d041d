"""YAML as taskcrew reads the files people edit (risk rules, read-back rules, console users, models,
recipes, routines): PyYAML's safe loader, but a mapping key written twice is refused
(``DuplicateKeyError``), at any depth. PyYAML keeps the last value of a repeated key without a word,
so ``two_person: 'on'`` added at the top of a rules file that says ``two_person: auto`` further down
would read as ``auto``: the looser setting, silently."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import yaml
from pydantic_core import PydanticCustomError
from yaml.nodes import MappingNode, SequenceNode

MERGE = "tag:yaml.org,2002:merge"
V = TypeVar("V")


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping key written twice: ``key`` (its path from the top, dotted as settings are named:
    ``thresholds.EUR``, ``auto_approve.0.paths``) and the ``lines`` it is on (1-based); its message
    says so."""

    def __init__(self, key: str, first: yaml.Mark, again: yaml.Mark) -> None:
        self.key = key
        self.lines = (first.line + 1, again.line + 1)
        super().__init__(
            problem=f"the key {key!r} is written twice (lines {self.lines[0]} and {self.lines[1]}); "
            "only one can count: keep one",
            problem_mark=again,
        )


class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises ``DuplicateKeyError`` on a mapping key written twice."""

    def construct_document(self, node: yaml.Node) -> Any:
        self._refuse_twice(node, "", set())
        return super().construct_document(node)

    def _refuse_twice(self, node: yaml.Node, path: str, walked: set[int]) -> None:
        if id(node) in walked:  # an alias of a node already walked (or a recursive one)
            return
        walked.add(id(node))
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                self._refuse_twice(item, f"{path}.{index}" if path else str(index), walked)
        if not isinstance(node, MappingNode):
            return
        seen: dict[Any, yaml.Node] = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:  # ``<<: *defaults``: keys written next to it override it
                self._refuse_twice(value_node, path, walked)
                continue
            key = self.construct_object(key_node, deep=True)
            name = f"{path}.{key}" if path else str(key)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the safe loader's own error says so
                continue
            if first is not key_node:
                raise DuplicateKeyError(name, first.start_mark, key_node.start_mark)
            self._refuse_twice(value_node, name, walked)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, refusing a key written twice (``DuplicateKeyError``, a ``yaml.YAMLError``)."""
    return yaml.load(text, Loader=StrictLoader)  # a SafeLoader: no Python objects


def normalised_keys(value: Mapping[str, V], normalise: Callable[[str], str], how: str) -> dict[str, V]:
    """``value`` with its keys normalised (``how`` says how, for the message: "currency codes are
    read in upper case"), for a model's validator: two keys written differently that normalise to
    the same (``usd`` under ``USD``) are one key written twice, refused as the loader refuses it
    (else the last would count, silently, maybe the looser). Every validator that normalises keys
    goes through here."""
    out: dict[str, V] = {}
    spelt: dict[str, str] = {}
    for key, item in value.items():
        name = normalise(key)
        if (first := spelt.setdefault(name, key)) != key:
            said = f"the key {name!r} is written twice, as {first!r} and {key!r} ({how}); only one can count: keep one"
            raise PydanticCustomError("written_twice", "{said}", {"said": said})
        out[name] = item
    return out
