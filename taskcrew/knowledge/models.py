"""The typed things that cross the knowledge store's boundary.

Chunks of company documents, what an ingest did, search hits, and learned facts with provenance.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from taskcrew.approvals.visible import visible
from taskcrew.knowledge.seen import seen, skeleton

ChunkKind = Literal["markdown", "pdf", "text", "email"]
FileStatus = Literal["added", "replaced", "unchanged", "skipped", "removed"]
Ranking = Literal["section", "hybrid", "vector", "bm25", "rrf"]
FactStatus = Literal["proposed", "accepted", "rejected"]

HEADING_SEPARATOR = " > "
# A heading is cut to this many characters in a citation (and text longer than this set large in a
# PDF is no heading: pdf_headings.MAX_CHARS).
HEADING_MAX_CHARS = 120
# The characters that structure a citation ("[file § heading > heading]"), inside a file name or a
# heading, and what stands for each there: no heading can close the citation's bracket, open a
# second one, name another file's section or pass for a deeper level.
CITATION_MARKS = {"[": "(", "]": ")", "§": "Sec.", ">": "›"}


class Chunk(BaseModel):
    """One retrievable piece of a company document."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    source: str = Field(description="Resolved path of the file the chunk came from.")
    heading_path: list[str] = Field(default_factory=list)
    kind: ChunkKind
    ordinal: int = Field(ge=0, description="Position of the chunk in its file.")
    file_sha256: str
    title: str = Field("", description="The document's title (its lone top heading, <title>, subject).")

    @property
    def heading(self) -> str:
        return HEADING_SEPARATOR.join(self.heading_path)

    def embed_text(self) -> str:
        """What is embedded and indexed: the heading path carries much of a section's meaning.
        (The document title is matched through the section's own vector, ``section_text``: in
        the chunk's text it repeats in every chunk of a file and blurs them, measured.)"""
        return f"{self.heading}\n{self.text}" if self.heading_path else self.text

    def section_text(self) -> str:
        """The section's name as matched on its own: title > heading path."""
        return head_line(self.title, self.heading_path)


def head_line(title: str, heading_path: list[str]) -> str:
    """Title > heading > path, without repeating a title that already heads the path."""
    parts = list(heading_path)
    if title and (not parts or parts[0] != title):
        parts.insert(0, title)
    return HEADING_SEPARATOR.join(parts)


class FileIngest(BaseModel):
    """What happened to one file during an ingest."""

    path: str
    status: FileStatus
    chunks: int = Field(0, description="Chunks the file has in the store now.")
    added: int = Field(0, description="Chunks embedded and written by this ingest.")
    removed: int = Field(0, description="Old chunks of this file deleted by this ingest.")
    message: str | None = None


class IngestReport(BaseModel):
    files: list[FileIngest] = Field(default_factory=list)
    seconds: float = 0.0

    def count(self, status: FileStatus) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def chunks_added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def skipped(self) -> list[FileIngest]:
        return [f for f in self.files if f.status == "skipped"]

    def render(self) -> str:
        head = (
            f"{len(self.files)} file(s): {self.count('added')} added, {self.count('replaced')} replaced, "
            f"{self.count('unchanged')} unchanged, {self.count('skipped')} skipped"
            + (f", {self.count('removed')} removed (gone)" if self.count("removed") else "")
            + f"; {self.chunks_added} chunk(s) embedded in {self.seconds:.1f} s"
        )
        lines = [head] + [f"  skipped {f.path}: {f.message}" for f in self.skipped]
        return "\n".join(lines)


class ProcedureHit(BaseModel):
    """A chunk of a company document returned by a search, with where it came from."""

    id: str
    rank: int = Field(ge=1)
    score: float = Field(description="Fused (or single-ranker) relevance score; higher is better.")
    source: str
    heading_path: list[str]
    text: str
    title: str = ""
    source_label: str = Field(
        "",
        description="How the file is named in citations: its name, or more of its path where "
        "another stored file has the same name (source_labels); empty: its name.",
    )

    @property
    def source_name(self) -> str:
        return self.source_label or Path(self.source).name

    @property
    def citation(self) -> str:
        """The hit's citation, "file § heading > heading" on one line, as ``cite`` writes it."""
        return cite(self.source_name, self.heading_path)


class FactProvenance(BaseModel):
    """Who taught the store a fact: one verified run."""

    run_id: str
    task: str
    learned_at: datetime
    confidence: float = Field(ge=0.0, le=1.0)
    verified: bool


class Fact(BaseModel):
    """A short durable statement learned by a verified run; near-duplicates are merged into one."""

    id: str
    text: str
    confidence: float = Field(ge=0.0, le=1.0, description="Highest confidence any teaching run gave.")
    verified: bool = Field(description="Every teaching run was verified.")
    learned_at: datetime = Field(description="When the fact was first learned.")
    run_id: str = Field(description="The run that first learned it.")
    task: str = Field(description="The task of that run.")
    confirmations: int = Field(1, ge=1, description="How many runs taught it (merges count).")
    provenance: list[FactProvenance]
    status: FactStatus = Field(
        "proposed",
        description="proposed: derived from untrusted text, waits for a person; only accepted facts "
        "reach a planner or a tool.",
    )
    derived_from: list[str] = Field(
        default_factory=list, description="The untrusted sources (tools) the teaching run read."
    )
    decided_by: str | None = Field(None, description="Who accepted or rejected it.")
    decided_at: datetime | None = None
    seal: str = Field(
        "",
        description="The authority's signature over an accepted fact (facts.acceptance): a row of the "
        "store that says accepted without it, or whose words changed since, reads as proposed.",
    )
    decider_credential: str | None = Field(
        None, description="The password fingerprint the accepting login was proven with (sealed)."
    )
    submitted_by: str | None = Field(None, description="Who submitted the run that taught it, if known.")
    record_sig: str = Field(
        "", description="The store's signature over the fact's record (facts.record): its words and origin."
    )
    unverified: bool = Field(
        False, description="As read: its record is not the store's; its claimed origin is not shown."
    )
    problem: str | None = Field(None, description="As read: why it is not accepted, or of unknown origin.")


class FactHit(BaseModel):
    fact: Fact
    similarity: float = Field(description="Cosine similarity of the query and the fact, -1..1.")


class LearnOutcome(BaseModel):
    action: Literal["added", "merged"]
    fact: Fact
    similarity: float | None = Field(None, description="Similarity to the fact merged into.")


def source_labels(sources: Iterable[str]) -> dict[str, str]:
    """How each file is named in citations: its name, or, where other stored files have a name that
    looks the same, the shortest end of its path that looks like no other one's
    ("inbox/company_context.md" against "sandbox/company_context.md"), so a namesake cannot be
    cited as the file it imitates. Names are compared as they look (``seen.skeleton``): a name with
    a leading space, a zero-width character, a Cyrillic "о" or another case is a namesake too."""
    parts = {s: Path(s).parts for s in dict.fromkeys(sources)}
    looks = {s: tuple(skeleton(p) for p in mine) for s, mine in parts.items()}
    namesakes: dict[str, list[str]] = {}  # by the look of the name: only these can share a path's end
    for source, shape in looks.items():
        namesakes.setdefault(shape[-1] if shape else "", []).append(source)
    labels: dict[str, str] = {}
    for source, mine in parts.items():
        shape = looks[source]
        others = [looks[o] for o in namesakes[shape[-1] if shape else ""] if o != source]
        depth = 1
        while depth < len(mine) and any(theirs[-depth:] == shape[-depth:] for theirs in others):
            depth += 1
        labels[source] = "/".join(mine[-depth:]).lstrip("/") or source
    return labels


# -- citations: the one place a file name and a heading path become text a prompt shows ----------
def cite(name: str, heading_path: Sequence[str]) -> str:
    """A citation, "file § heading > heading": one line, whatever the name or the headings hold;
    the name as ``cited_name`` shows it, each heading as ``cited_heading`` does."""
    shown = cited_name(name)
    if not heading_path:
        return shown
    return f"{shown} § {HEADING_SEPARATOR.join(cited_heading(h) for h in heading_path)}"


def cited_name(name: str) -> str:
    """A file's name (or the end of its path) as a citation shows it: each invisible or look-alike
    character, and a run of odd whitespace, made visible as the approvers' screens show one
    (``approvals.visible``: "company_c⟨Cyrillic о U+043E⟩ntext.md", "company_context⟨U+200B⟩.md"),
    a letter of the phonetic alphabets or another block no language writes names in shown the same
    way (``visible.odd_letter``: "comp⟨Latin ɑ U+0251⟩ny_context.md", "c⟨Latin ᴏ U+1D0F⟩mpany…"),
    whitespace at either end of a path part shown as ``⟨U+0020⟩``, and the citation's own marks
    replaced (``CITATION_MARKS``)."""
    return "/".join(_unmarked(_edges(_visible_part(part))) for part in name.split("/"))


_NAME_WORDS = re.compile(r"([._]+)")  # what parts the words of a file name ("נהלים" "md")


def _visible_part(part: str) -> str:
    """``approvals.visible`` on each word of a path part, a word being what lies between its dots
    and underscores (and spaces): the Latin extension of a Hebrew, Arabic or Russian name is no
    Latin letter in a foreign word ("נהלים.md" is shown as it is, "company_c\u043entext.md" is not);
    a letter of a block no language writes names in included (``visible.odd_letter``)."""
    return "".join(seg if n % 2 else visible(seg) for n, seg in enumerate(_NAME_WORDS.split(part)))


def cited_heading(heading: str) -> str:
    """A heading as a citation shows it: what a reader of the document sees of it (``seen.seen``),
    on one line, the citation's own marks replaced (``CITATION_MARKS``), cut to
    ``HEADING_MAX_CHARS``."""
    text = _unmarked(" ".join(seen(heading).split()))
    if len(text) <= HEADING_MAX_CHARS:
        return text
    cut = text.rfind(" ", 0, HEADING_MAX_CHARS)
    return text[: cut if cut > HEADING_MAX_CHARS // 2 else HEADING_MAX_CHARS - 1].rstrip() + "…"


def _unmarked(text: str) -> str:
    """``text`` with each character that structures a citation (or its compatibility form: "［",
    "＞") replaced by its stand-in."""
    if not any(c in text for c in CITATION_MARKS) and text.isascii():
        return text
    return "".join(CITATION_MARKS.get(unicodedata.normalize("NFKC", c), c) for c in text)


def _edges(part: str) -> str:
    """A path part's leading and trailing whitespace shown as code points (" company_context.md"
    reads "⟨U+0020⟩company_context.md")."""
    core = part.strip()
    if core == part:
        return part
    start = part.index(core[0]) if core else len(part)
    mark = "".join(f"⟨U+{ord(c):04X}⟩" for c in part[:start])
    end = "".join(f"⟨U+{ord(c):04X}⟩" for c in part[start + len(core) :])
    return f"{mark}{core}{end}"
