"""Questions a section answers: written once per section by a model, matched by the ranking.

A manual says "Bills" where the clerk asks about "a supplier's invoice we pay later"; a 6-layer
sentence model does not bridge that, a language model does. So `taskcrew knowledge questions`
asks the configured model, once per section of the ingested documents, for up to three questions
a person at work would ask to find that section, in everyday words (the prompt is the data file
``prompts/section_questions.yaml``). The questions are embedded and kept in the store's
``questions`` collection with the section they belong to ("title > heading path", as the ranking
groups chunks) and a digest of the section's chunk ids. The section ranking adds
``question_weight`` x the best cosine between the query and a section's questions (a section
without questions counts its name's cosine instead), and the sections best matched by their
questions join the candidates. A section whose text changed since (another digest) is asked
again on the next run and its old questions are not used meanwhile.

Nothing here needs the network but the model call, which is injected (``Ask``): the CLI passes
the provider's model, tests a function.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import yaml
from pydantic import BaseModel, Field

from taskcrew.knowledge.changes import ChangeMark

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from taskcrew.knowledge.procedures import ProcedureLibrary
    from taskcrew.knowledge.store import KnowledgeStore

QUESTIONS = "questions"  # the store's collection
MAX_QUESTIONS = 3
MAX_QUESTION_CHARS = 200
SECTION_CHARS = 2500  # of a section's text shown to the model
PAGE = 2000  # questions read from the collection at a time
PROMPT_FILE = Path(__file__).parent / "prompts" / "section_questions.yaml"

Ask = Callable[[str, str], str]  # (system prompt, user message) -> the model's reply


class Section(BaseModel):
    key: str  # "title > heading path": what the ranking groups chunks by
    source: str
    title: str = ""
    path: list[str] = Field(default_factory=list)
    text: str
    digest: str  # of the section's chunk ids: a changed section gets new questions


class AskedQuestions(NamedTuple):
    sections: list[str]  # the section of each question
    vectors: np.ndarray  # one row per question
    asked: set[str]  # every section asked for its current text (a model may have found none)


class QuestionsReport(BaseModel):
    sections: int = 0  # sections in the store
    fresh: int = 0  # already had questions for their current text
    asked: int = 0
    left: int = 0  # not asked this time (``limit``)
    written: int = 0  # questions stored
    failed: list[str] = Field(default_factory=list)  # "section: reason"
    seconds: float = 0.0

    def render(self) -> str:
        lines = [
            f"{self.sections} section(s): {self.fresh} already had questions, {self.asked} asked, "
            f"{self.written} question(s) written, {len(self.failed)} failed ({self.seconds:.1f} s)"
            + (f"; {self.left} left for the next run (--limit)" if self.left else "")
        ]
        lines += [f"  failed: {reason}" for reason in self.failed[:20]]
        if len(self.failed) > 20:
            lines.append(f"  … and {len(self.failed) - 20} more")
        return "\n".join(lines)


def digest(chunk_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(chunk_ids)).encode()).hexdigest()[:24]


def prompt() -> dict[str, str]:
    data = yaml.safe_load(PROMPT_FILE.read_text(encoding="utf-8"))
    return {"system": str(data["system"]), "user": str(data["user"])}


def render(section: Section, template: str) -> str:
    text = section.text if len(section.text) <= SECTION_CHARS else section.text[:SECTION_CHARS] + " …"
    return (
        template.replace("{file}", Path(section.source).name)
        .replace("{title}", f" — {section.title}" if section.title else "")
        .replace("{path}", " > ".join(section.path) or section.title or "(the top of the document)")
        .replace("{text}", text)
    )


_FENCED = re.compile(r"^```(?:json)?\s*|\s*```$")


def json_reply(reply: str) -> Any:
    """A model's JSON reply (a code fence around it allowed); ValueError when it is not JSON."""
    try:
        return json.loads(_FENCED.sub("", reply.strip()))
    except json.JSONDecodeError:
        raise ValueError(f"the reply is not JSON: {reply[:80]!r}") from None


def parse_questions(reply: str) -> list[str]:
    """The questions of a model's reply ({"questions": [...]}, a code fence around it allowed);
    ValueError saying what is wrong otherwise."""
    data = json_reply(reply)
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(q, str) for q in items):
        raise ValueError(f'the reply has no "questions" list of strings: {reply[:80]!r}')
    out = [" ".join(q.split())[:MAX_QUESTION_CHARS] for q in items]
    return list(dict.fromkeys(q for q in out if q))[:MAX_QUESTIONS]


class QuestionBook:
    """The ``questions`` collection: each question's vector with its section and digest."""

    def __init__(self, collection: Collection, mark: ChangeMark | None = None) -> None:
        self._collection = collection
        self._mark = mark or ChangeMark(None)  # changed by every write, this process's or another's
        self._writes = 0

    def count(self) -> int:
        return self._collection.count()

    def version(self) -> tuple[int, int, str]:
        """Changes when questions are written: by this process (its writes), or by another one
        (the count, and the store's change mark for a rewrite of as many questions)."""
        return self.count(), self._writes, self._mark.token()

    def digests(self) -> dict[str, str]:
        got = self._collection.get(include=["metadatas"])
        return {str(m["section"]): str(m["digest"]) for m in got["metadatas"] or []}

    def replace(self, section: Section, questions: list[str], vectors: np.ndarray) -> None:
        """The section's questions, instead of any it had (none: the section is marked asked)."""
        self._writes += 1
        self._collection.delete(where={"section": section.key})
        texts = questions or [""]  # an empty marker: asked, nothing to ask about it
        ids = ["q-" + hashlib.sha256(f"{section.key}\n{q}".encode()).hexdigest()[:24] for q in texts]
        vectors = vectors if questions else np.zeros((1, 384), dtype=np.float32)
        metadata = {"section": section.key, "digest": section.digest, "source": section.source}
        self._collection.upsert(
            ids=ids, documents=texts, embeddings=vectors, metadatas=[dict(metadata) for _ in ids]
        )

    def vectors(self, current: dict[str, str]) -> AskedQuestions:
        """The questions of sections whose digest is ``current[section]`` (those of a section
        that changed since are left out), and which sections were asked, with or without an
        answer."""
        sections: list[str] = []
        parts: list[np.ndarray] = []
        asked: set[str] = set()
        offset = 0
        while True:  # a page at a time: all of them at once is a transient copy of every vector
            got = self._collection.get(
                include=["metadatas", "embeddings", "documents"], limit=PAGE, offset=offset
            )
            if not got["ids"]:
                break
            offset += len(got["ids"])
            metas, documents = got["metadatas"] or [], got["documents"] or []
            fresh = [current.get(str(m["section"])) == m["digest"] for m in metas]
            asked.update(str(m["section"]) for m, ok in zip(metas, fresh, strict=True) if ok)
            keep = [n for n, (ok, d) in enumerate(zip(fresh, documents, strict=True)) if ok and d]
            if keep:
                embeddings = got["embeddings"] if got["embeddings"] is not None else []
                parts.append(np.asarray([embeddings[n] for n in keep], dtype=np.float32))
                sections += [str(metas[n]["section"]) for n in keep]
        vectors = np.concatenate(parts) if parts else np.zeros((0, 384), dtype=np.float32)
        return AskedQuestions(sections, vectors, asked)


def section_chunks(ids: Sequence[str], section_texts: Sequence[str]) -> dict[str, list[str]]:
    """The chunk ids of each section ("title > heading path"), in the order given."""
    grouped: dict[str, list[str]] = {}
    for chunk_id, key in zip(ids, section_texts, strict=True):
        grouped.setdefault(key, []).append(chunk_id)
    return grouped


def section_digests(ids: Sequence[str], section_texts: Sequence[str]) -> dict[str, str]:
    """Each section's digest of its chunk ids: what its questions were asked for."""
    return {key: digest(chunks) for key, chunks in section_chunks(ids, section_texts).items()}


def sections_of(library: ProcedureLibrary) -> list[Section]:
    """Every distinct section of the store, its chunks' text in order and their digest."""
    corpus = library._current_corpus(library.count())
    out = []
    for key, chunk_ids in section_chunks(corpus.ids, corpus.section_texts()).items():
        entries = sorted(
            (str(m.get("source") or ""), int(m.get("ordinal") or 0), d)
            for d, m in (corpus.entries[i] for i in chunk_ids)
        )
        meta = corpus.entries[chunk_ids[0]][1]
        out.append(
            Section(
                key=key,
                source=entries[0][0],
                title=str(meta.get("title") or ""),
                path=json.loads(str(meta.get("heading_path") or "[]")),
                text="\n\n".join(e[2] for e in entries),
                digest=digest(chunk_ids),
            )
        )
    return out


def unasked(store: KnowledgeStore) -> int:
    """How many sections have no questions for their current text."""
    corpus = store.procedures._current_corpus(store.procedures.count())
    known = store.questions.digests()
    current = section_digests(corpus.ids, corpus.section_texts())
    return sum(1 for key, value in current.items() if known.get(key) != value)


def write_questions(
    store: KnowledgeStore,
    ask: Ask,
    *,
    limit: int | None = None,
    calls: int = 4,
    on_section: Callable[[Section, list[str] | None], None] | None = None,
) -> QuestionsReport:
    """Ask ``ask`` for the questions of every section that has none for its current text (at
    most ``limit`` sections, ``calls`` model calls at a time); each section's answer is stored as
    it comes, in order, so a stopped run keeps what it wrote. A reply that is not the expected
    JSON is reported and the section left for the next run; an exception from ``ask`` (a missing
    key, an unreachable model) propagates."""
    started = time.monotonic()
    template = prompt()
    sections = sections_of(store.procedures)
    known = store.questions.digests()
    pending = [s for s in sections if known.get(s.key) != s.digest]
    todo = pending[:limit]
    report = QuestionsReport(
        sections=len(sections), fresh=len(sections) - len(pending), left=len(pending) - len(todo)
    )

    def asked(section: Section) -> str:
        return ask(template["system"], render(section, template["user"]))

    def replies(pool: ThreadPoolExecutor) -> Iterator[str]:
        if todo:  # the first call alone: a missing key fails once, and the model client builds its
            # response types (pydantic, on first use) before calls overlap; built by two threads at
            # once they failed ("BaseModel cannot be instantiated directly")
            yield asked(todo[0])
        yield from pool.map(asked, todo[1:])

    # the model calls overlap (``calls`` at a time); each answer is stored here, in order
    with ThreadPoolExecutor(max(1, calls), thread_name_prefix="taskcrew-questions") as pool:
        try:
            for section, reply in zip(todo, replies(pool), strict=True):
                report.asked += 1
                try:
                    questions = parse_questions(reply)
                except ValueError as exc:
                    report.failed.append(f"{section.key}: {exc}")
                    if on_section is not None:
                        on_section(section, None)
                    continue
                vectors = (
                    store.embedder.embed(questions) if questions else np.zeros((0, 384), dtype=np.float32)
                )
                store.questions.replace(section, questions, vectors)
                report.written += len(questions)
                if on_section is not None:
                    on_section(section, questions)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    report.seconds = time.monotonic() - started
    return report
