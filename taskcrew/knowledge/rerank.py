"""A search's second stage: a language model picks the answering sections among the store's best.

The store's ranking (ranking.py) rests on a 6-layer sentence model: with a model's questions and
phrasings it finds the right section among its first 20 for every labelled question of the foreign
manuals, but puts a near-miss first
where the words overlap ("record a supplier's invoice we pay later" ranks the *customer* payment
section first). A language model reading the candidates' heading paths and first lines tells
them apart. So a search with a reranker takes the store's ``DEPTH`` best chunks (one per section
first), shows them to the model, numbered, with the prompt ``prompts/rerank.yaml``, and puts the
ones the model picks (at most ``MAX_BEST``, best first) before the others, which keep the store's
order. One model call per search; the store's order is kept, and the reason given, when the
model fails or its reply cannot be read. Figures and cost: docs/knowledge.md, "A model picks among
the store's best 20".

Nothing here needs the network but the model call, which is injected (``Ask``): the CLI and the
crew pass the provider's model, tests a function.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import yaml

from taskcrew.knowledge.models import ProcedureHit, Ranking
from taskcrew.knowledge.questions import Ask, json_reply

if TYPE_CHECKING:
    from taskcrew.knowledge.procedures import ProcedureLibrary

DEPTH = 20  # candidates shown to the model
MAX_BEST = 5  # passages the model may pick
PASSAGE_CHARS = 300  # of each candidate's text shown
PROMPT_FILE = Path(__file__).parent / "prompts" / "rerank.yaml"


class Reranked(NamedTuple):
    hits: list[ProcedureHit]  # renumbered from 1
    problem: str | None = None  # why the store's order was kept (None: the model's order)


def prompt() -> dict[str, str]:
    data = yaml.safe_load(PROMPT_FILE.read_text(encoding="utf-8"))
    return {"system": str(data["system"]), "user": str(data["user"])}


def passage(number: int, hit: ProcedureHit) -> str:
    text = " ".join(hit.text.split())
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"
    return f"[{number}] {hit.citation}\n> {text}"


_SLOT = re.compile(r"\{(query|also|passages)\}")


def render(query: str, also: Sequence[str], hits: Sequence[ProcedureHit], template: str) -> str:
    """The template's ``{query}``, ``{also}`` and ``{passages}`` filled in one pass: a query, a
    phrasing or a passage that holds "{passages}" is text, never filled in again."""
    other = "; ".join(" ".join(a.split()) for a in also if a.strip())
    values = {
        "query": " ".join(query.split()),
        "also": f"\nThe person's other words for it: {other}" if other else "",
        "passages": "\n\n".join(passage(n, h) for n, h in enumerate(hits, 1)),
    }
    return _SLOT.sub(lambda m: values[m.group(1)], template)


def parse_best(reply: str, shown: int) -> list[int]:
    """The 0-based indexes a reply ({"best": [numbers]}) picks, in its order; numbers outside
    1..``shown`` and repeats are dropped. ValueError saying what is wrong with an unreadable one."""
    data = json_reply(reply)
    items = data.get("best") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in items):
        raise ValueError(f'the reply has no "best" list of passage numbers: {reply[:80]!r}')
    return list(dict.fromkeys(n - 1 for n in items if 1 <= n <= shown))[:MAX_BEST]


def rerank(query: str, hits: Sequence[ProcedureHit], ask: Ask, also: Sequence[str] = ()) -> Reranked:
    """``hits`` (the store's order) with the ones the model picks first. A failed call or an
    unreadable reply keeps the store's order and says why; an interrupt (not an Exception)
    propagates."""
    hits = list(hits)
    if len(hits) < 2:
        return Reranked(hits)
    template = prompt()
    try:
        best = parse_best(ask(template["system"], render(query, also, hits, template["user"])), len(hits))
    except Exception as exc:  # the search still answers, in the store's order
        return Reranked(hits, f"reranking failed, the store's order is kept: {exc}")
    chosen = set(best)
    ordered = [hits[i] for i in best] + [h for i, h in enumerate(hits) if i not in chosen]
    return Reranked([h.model_copy(update={"rank": n}) for n, h in enumerate(ordered, 1)])


def search(
    library: ProcedureLibrary,
    query: str,
    k: int,
    ask: Ask | None,
    also: Sequence[str] = (),
    ranking: Ranking | None = None,
) -> Reranked:
    """The ``k`` best chunks for ``query``: the store's order, or with ``ask`` the model's pick
    among the store's ``DEPTH`` best first."""
    if ask is None:
        return Reranked(library.search(query, k=k, ranking=ranking, also=also))
    got = rerank(query, library.search(query, k=max(k, DEPTH), ranking=ranking, also=also), ask, also)
    return Reranked(got.hits[:k], got.problem)
