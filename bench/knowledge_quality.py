"""Retrieval quality of the knowledge store on labelled queries: two handbooks and foreign manuals.

    uv run python bench/knowledge_quality.py [--misses] [--ranking hybrid vector ...] [--only foreign]
                                             [--foreign SET.yaml ...] [--check-labels]
                                             [--phrasings FILE.yaml] [--rerankings FILE.yaml]

Sets:
- handbooks: both demo handbooks in one fresh store (bench/data/knowledge/queries.yaml); a chunk of
  the other company's handbook is a miss.
- foreign sets (every bench/data/knowledge/foreign*_queries.yaml, or those given with --foreign;
  each names its staged folder and its set name): documentation the project did not write, e.g.
  the GnuCash guide (foreign_queries.yaml) and ERPNext's Accounts chapter
  (foreign_erpnext_queries.yaml), when staged by bench/stage_foreign_docs.py; skipped with a note
  otherwise.
Every query runs through each ranking (and ``section-plain``: the section ranking without query
expansion; ``section+also``: the section ranking with the other phrasings a model gave for the
question, bench/data/knowledge/rephrasings.yaml, as an agent passes them in search_procedures'
``also``; ``section+questions``: with the questions a model wrote for each section,
bench/data/knowledge/section_questions.yaml, as `taskcrew knowledge questions` stores them;
``section+questions+also``: both; and each of ``section``, ``section+also``, ``section+questions``
and ``section+questions+also`` with ``+rerank``: then a model's pick among the store's best 20,
knowledge/rerank.py, as recorded in bench/data/knowledge/rerankings.yaml or the file given as
--rerankings). hit@1, hit@3 and MRR (over the top 10; MRR again to four places) and the mean
latency are printed per set. The other rankings run without the questions. A hit is a chunk of
the expected file whose heading path ends in (or whose text holds the heading of) one of the
query's expected sections.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml
from pydantic import BaseModel

from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder, ProcedureHit, rerank
from taskcrew.knowledge.procedures import RANKINGS

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "bench" / "data" / "knowledge" / "queries.yaml"
FOREIGN = ROOT / "bench" / "data" / "knowledge" / "foreign_queries.yaml"
REPHRASINGS = ROOT / "bench" / "data" / "knowledge" / "rephrasings.yaml"  # a model's `also` per question
# a model's questions per section
QUESTIONS = ROOT / "bench" / "data" / "knowledge" / "section_questions.yaml"
DEPTH = 10
NO_QUESTIONS = {"question_weight": 0.0}
# The store's rankings plus variants of one with other settings (for comparison in one run):
# (ranking, settings, whether the query's recorded other phrasings are searched with it). Every
# ranking but the +questions ones runs without the questions (section_questions.yaml) the stores hold.
VARIANTS = {
    "section-plain": ("section", {"expansion_terms": 0, **NO_QUESTIONS}, False),  # no query expansion
    "section+also": ("section", NO_QUESTIONS, True),  # with a model's other phrasings (rephrasings.yaml)
    "section+questions": ("section", {}, False),  # with the questions a model wrote for each section
    "section+questions+also": ("section", {}, True),  # both: the store as shipped, asked by a model
    # then the model's pick among the store's best 20 (knowledge/rerank.py; rerankings.yaml)
    "section+rerank": ("section", NO_QUESTIONS, False),
    "section+questions+rerank": ("section", {}, False),
    "section+also+rerank": ("section", NO_QUESTIONS, True),
    "section+questions+also+rerank": ("section", {}, True),
}
RERANKINGS = ROOT / "bench" / "data" / "knowledge" / "rerankings.yaml"  # a model's picks per question


class Expected(BaseModel):
    file: str  # file name
    section: str  # last heading
    within: str | None = None  # a heading the path must contain (tells AP "New" from AR "New")


class Labelled(BaseModel):
    set: str
    query: str
    kind: str = ""
    expect: list[Expected]
    also: list[str] = []  # other phrasings a model gave (rephrasings.yaml)


class Scores(BaseModel):
    n: int
    hit1: float
    hit3: float
    mrr: float


@functools.cache
def rephrasings() -> dict[str, list[str]]:
    """The recorded ``also`` of each question (rephrasings.yaml, or the file given as --phrasings)."""
    return {r["query"]: list(r["also"]) for r in yaml.safe_load(PHRASINGS[0].read_text(encoding="utf-8"))}


PHRASINGS = [REPHRASINGS]  # the file section+also reads (main() puts --phrasings here)


@functools.cache
def rerankings() -> dict[tuple[str, str], list[str]]:
    """The recorded pick for each question after each ranking (rerankings.yaml, or the file given
    as --rerankings): the citations the model chose."""
    rows = yaml.safe_load(RERANKED[0].read_text(encoding="utf-8"))
    return {(r["after"], r["query"]): list(r["best"]) for r in rows}


RERANKED = [RERANKINGS]  # the file the +rerank rankings replay (main() puts --rerankings here)


def replayer(after: str) -> rerank.Ask:
    """The reranker as recorded after the ranking ``after``: the picks (citations) it made for this
    request's question, renumbered as this request shows them. KeyError for a question never
    recorded (the search keeps the store's order)."""

    def replayed(system: str, user: str) -> str:
        query = user.partition("\n")[0].removeprefix("Search: ")
        shown = {m[2]: int(m[1]) for m in re.finditer(r"^\[(\d+)\] (.+)$", user, flags=re.MULTILINE)}
        return json.dumps({"best": [shown[c] for c in rerankings()[after, query] if c in shown]})

    return replayed


def handbook_queries() -> tuple[list[Path], list[Labelled]]:
    data = yaml.safe_load(QUERIES.read_text(encoding="utf-8"))
    books = {name: ROOT / p for name, p in data["handbooks"].items()}
    also = rephrasings()
    out = [
        Labelled(
            set=q["handbook"],
            query=q["query"],
            expect=[Expected(file=books[q["handbook"]].name, section=s) for s in q["expect"]],
            also=also.get(q["query"], []),
        )
        for q in data["queries"]
    ]
    return list(books.values()), out


def foreign_sets() -> list[Path]:
    """Every labelled set over documentation the project did not write (foreign*_queries.yaml)."""
    return sorted(FOREIGN.parent.glob("foreign*_queries.yaml"))


def foreign_queries(path: Path = FOREIGN) -> tuple[Path, list[Labelled]] | None:
    """The staged folder and the labelled queries of one set (its ``name``, default "foreign");
    None when the folder has not been staged."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    folder = ROOT / data["folder"]
    name = str(data.get("name", "foreign"))
    if not folder.is_dir() or not any(p.is_file() and p.name != "STAGED.txt" for p in folder.rglob("*")):
        return None
    also = rephrasings()
    out = []
    for q in data["queries"]:
        expect = []
        for e in q["expect"]:
            file, _, section = e.partition(" § ")
            expect.append(Expected(file=file, section=section, within=q.get("file_section")))
        out.append(
            Labelled(
                set=name,
                query=q["query"],
                kind=q.get("kind", ""),
                expect=expect,
                also=also.get(q["query"], []),
            )
        )
    return folder, out


def answers(hit: ProcedureHit, query: Labelled) -> bool:
    for e in query.expect:
        if hit.source_name != e.file or (e.within and e.within not in hit.heading_path):
            continue
        if hit.heading_path and hit.heading_path[-1] == e.section:
            return True
        if re.search(rf"^#+ {re.escape(e.section)}$", hit.text, flags=re.MULTILINE):
            return True
    return False


def first_rank(hits: list[ProcedureHit], query: Labelled) -> int | None:
    return next((h.rank for h in hits if answers(h, query)), None)


def score(ranks: list[int | None]) -> Scores:
    n = len(ranks)
    return Scores(
        n=n,
        hit1=sum(1 for r in ranks if r == 1) / n,
        hit3=sum(1 for r in ranks if r is not None and r <= 3) / n,
        mrr=sum(1 / r for r in ranks if r is not None) / n,
    )


def load_questions(store: KnowledgeStore) -> int:
    """Store the recorded questions (section_questions.yaml) of the store's sections that have
    none for their current text; how many sections got some."""
    from taskcrew.knowledge.models import head_line
    from taskcrew.knowledge.questions import sections_of

    recorded: dict[tuple[str, str], list[str]] = {}
    for row in yaml.safe_load(QUESTIONS.read_text(encoding="utf-8")):
        recorded.setdefault((row["file"], head_line(row["title"], row["path"])), []).extend(row["questions"])
    known = store.questions.digests()
    written = 0
    for section in sections_of(store.procedures):
        questions = recorded.get((Path(section.source).name, section.key))
        if questions is None or known.get(section.key) == section.digest:
            continue
        questions = list(dict.fromkeys(questions))
        store.questions.replace(section, questions, store.embedder.embed(questions))
        written += 1
    return written


def check_labels(store: KnowledgeStore, queries: list[Labelled]) -> list[str]:
    """Expected sections that no chunk in the store has (a label typo, or a chunker change)."""
    known: set[tuple[str, str]] = set()
    for source in store.procedures.sources():
        for path in store.procedures.sections(source):
            known.update((Path(source).name, h) for h in path)
    return sorted(
        {f"{e.file} § {e.section}" for q in queries for e in q.expect if (e.file, e.section) not in known}
    )


def run_set(
    store: KnowledgeStore, name: str, queries: list[Labelled], rankings: list[str], misses: bool
) -> None:
    library = store.procedures
    saved = library._ranking
    for ranking in rankings:
        mode, update, with_also = VARIANTS.get(ranking, (ranking, NO_QUESTIONS, False))
        ask = replayer(ranking.removesuffix("+rerank")) if ranking.endswith("+rerank") else None
        library._ranking = saved.model_copy(update=update)
        ranks: list[int | None] = []
        missed = []
        unanswered = 0  # searches the reranker did not answer (not recorded): the store's order
        started = time.perf_counter()
        try:
            for q in queries:
                also = q.also if with_also else ()
                found = rerank.search(library, q.query, DEPTH, ask, also, mode)  # type: ignore[arg-type]
                hits = found.hits
                if found.problem:
                    unanswered += 1
                rank = first_rank(hits, q)
                ranks.append(rank)
                if rank is None or rank > 1:
                    top = hits[0].citation if hits else "-"
                    missed.append(f"    rank {rank} [{q.kind}]: {q.query!r} (top: {top})")
        finally:
            library._ranking = saved
        ms = (time.perf_counter() - started) * 1000 / len(queries)
        s = score(ranks)
        print(
            f"{name:<8} {ranking:<22} {s.n:>3} {s.hit1:>6.2f} {s.hit3:>6.2f} {s.mrr:>6.2f} {s.mrr:>7.4f} {ms:>9.1f}"
        )
        if unanswered:
            print(f"    {unanswered} search(es) kept the store's order: no recorded reranking")
        if misses:
            print("\n".join(missed))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--misses", action="store_true", help="list queries whose answer is not first")
    choices = [*RANKINGS, *VARIANTS]
    parser.add_argument("--ranking", nargs="+", choices=choices, default=choices)
    parser.add_argument("--only", choices=("handbooks", "foreign"), default=None)
    parser.add_argument(
        "--foreign",
        type=Path,
        nargs="+",
        default=None,
        help="labelled sets over foreign documentation (default: bench/data/knowledge/foreign*_queries.yaml)",
    )
    parser.add_argument(
        "--check-labels",
        action="store_true",
        help="only ingest and report expected sections no chunk has (no ranking is run or printed)",
    )
    parser.add_argument(
        "--store", type=Path, default=None, help="keep the stores here (a second run embeds nothing)"
    )
    parser.add_argument(
        "--phrasings",
        type=Path,
        default=REPHRASINGS,
        help="other phrasings per question for section+also, recorded from a model (default: %(default)s)",
    )
    parser.add_argument(
        "--rerankings",
        type=Path,
        default=RERANKINGS,
        help="a reranker's picks per question, recorded from a model, for the +rerank rankings (default: %(default)s)",
    )
    args = parser.parse_args()
    PHRASINGS[0] = args.phrasings
    RERANKED[0] = args.rerankings
    rankings = [] if args.check_labels else args.ranking

    embedder = MiniLMEmbedder()
    if not args.check_labels:
        print(
            f"{'set':<8} {'ranking':<22} {'n':>3} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'MRR':>7} {'ms/query':>9}"
        )
    with tempfile.TemporaryDirectory(prefix="taskcrew-kbench-") as scratch:
        tmp = args.store or Path(scratch)
        if args.only in (None, "handbooks"):
            books, queries = handbook_queries()
            store = KnowledgeStore(Path(tmp) / "handbooks", embedder)
            store.procedures.ingest(books)
            load_questions(store)
            for missing in check_labels(store, queries):
                print(f"label error: no section {missing}")
            for name in dict.fromkeys(q.set for q in queries):
                run_set(store, name, [q for q in queries if q.set == name], rankings, args.misses)
        if args.only in (None, "foreign"):
            for path in args.foreign or foreign_sets():
                foreign = foreign_queries(path)
                if foreign is None:
                    print(f"{path.name}: not staged (run bench/stage_foreign_docs.py first); skipped")
                    continue
                folder, queries = foreign
                name = queries[0].set if queries else path.stem
                store = KnowledgeStore(Path(tmp) / name, embedder)
                report = store.procedures.ingest([folder])
                load_questions(store)
                print(f"{name}: {report.render().splitlines()[0]}")
                for missing in check_labels(store, queries):
                    print(f"label error: no section {missing}")
                run_set(store, name, queries, rankings, args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
