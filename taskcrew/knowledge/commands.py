"""The logic behind `taskcrew knowledge ...` (cli.py only parses options and calls these).

Each function prints to the given rich console and returns the process exit code. The store is
opened in ``directory`` (default: TASKCREW_HOME/knowledge) and, when it has no procedures yet,
seeded from the sandbox's company_context.md (TASKCREW_SANDBOX, default: the packaged sandbox).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from taskcrew.crew.stopping import EXIT_INTERRUPTED, RunInterrupted, signals_raise
from taskcrew.inputs import InputError, UserError, check_query
from taskcrew.knowledge.bootstrap import IngestRefused, ingest_as, open_store, seed_if_empty
from taskcrew.knowledge.embedder import EmbedderUnavailable
from taskcrew.knowledge.folders import collect
from taskcrew.knowledge.models import Ranking
from taskcrew.knowledge.procedures import MAX_ALSO
from taskcrew.knowledge.progress import IngestProgress
from taskcrew.knowledge.questions import Ask
from taskcrew.knowledge.retrieval import clip
from taskcrew.knowledge.store import KnowledgeStore
from taskcrew.terminal import markup, say

if TYPE_CHECKING:
    from taskcrew.approvals.identity import Identity

OK, FAILED, UNAVAILABLE = 0, 1, 2


def _open(directory: Path | None, console: Console, who: Identity | None = None) -> KnowledgeStore:
    """The store, seeded on first use (``seed_if_empty``: a handbook other than the shipped one only
    as ``who``, default the OS user, may ingest it)."""
    store = open_store(directory)
    seeded = seed_if_empty(store, who=who, say=lambda line: say(console, f"[yellow]{markup(line)}[/yellow]"))
    if seeded is not None:
        say(
            console,
            f"[dim]The knowledge store was empty: ingested the company handbook "
            f"({seeded.chunks_added} chunks) from {markup(seeded.files[0].path)}.[/dim]",
        )
    return store


NO_FILES = "[yellow]No supported files found (.md, .markdown, .txt, .text, .pdf, .eml).[/yellow]"


def ingest(paths: list[Path], directory: Path | None, console: Console) -> int:
    """Ingest files and folders as the CLI's proven identity (``bootstrap.ingest_as``: recorded in
    the audit log first; refused to an unproven one under the two-person rule); exit 1 when any file
    had to be skipped (the others are kept) or the ingest was refused."""
    from taskcrew.approvals.audit import AuditLogError

    who = _identity(console)
    if who is None:
        return UNAVAILABLE
    collected = collect(paths)
    files = [*collected.files, *(Path(r.path) for r in collected.refused)]
    if not files and not any(p.is_dir() for p in paths):  # a folder emptied: its old chunks go below
        console.print(NO_FILES)
        return FAILED
    progress = IngestProgress(console, len(files))
    try:
        store = _open(directory, console, who)
        with signals_raise(), progress:
            report = ingest_as(store, paths, who, on_file=progress.file_done, on_chunks=progress.chunks)
    except IngestRefused as exc:
        say(console, f"[red]refused:[/red] {markup(exc)}")
        return FAILED
    except AuditLogError as exc:
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE
    except (KeyboardInterrupt, RunInterrupted):
        where = ""
        if progress.last is not None:
            path, done, total = progress.last
            where = f" while ingesting {markup(path.name)} ({done}/{total} new chunks written)"
        say(
            console,
            f"[yellow]interrupted{where}.[/yellow] The store is consistent: the files finished and the "
            "chunks written so far are searchable, a file's earlier chunks are kept. Run the same "
            "command again to finish; chunks already written are not embedded again.",
        )
        return EXIT_INTERRUPTED
    except (EmbedderUnavailable, UserError) as exc:  # UserError: a damaged store, a bad query
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE
    if not report.files:
        console.print(NO_FILES)
        return FAILED
    for f in report.files:
        note = f" ({f.added} new, {f.removed} removed)" if f.status == "replaced" else ""
        if f.status == "skipped":
            gone = f"; its {f.removed} earlier chunks were removed" if f.removed else ""
            say(console, f"[red]skipped[/red] {markup(f.path)}: {markup(f.message or '')}{gone}")
        elif f.status == "removed":
            say(console, f"removed   {markup(f.path)}: the file is gone, its {f.removed} chunks removed")
        else:
            say(console, f"{f.status:<9} {markup(f.path)}: {f.chunks} chunks{note}")
    console.print(report.render().splitlines()[0] + f"; {store.procedures.count()} chunks in the store.")
    if report.chunks_added and store.questions.count():
        from taskcrew.knowledge.questions import unasked

        waiting = unasked(store)
        if waiting:
            console.print(
                f"{waiting} section(s) have no questions for their text yet: run `taskcrew knowledge "
                "questions` so searches in everyday words find them as they find the others."
            )
    return FAILED if report.skipped else OK


def search(
    query: str,
    k: int,
    ranking: Ranking | None,
    directory: Path | None,
    console: Console,
    also: Sequence[str] = (),
    rerank: bool = False,
    model: str | None = None,
) -> int:
    """Print the passages that answer ``query``; ``rerank``: the worker model (or ``model``)
    picks among the store's best (rerank.py)."""
    from taskcrew.crew.modelspec import ModelConfigError
    from taskcrew.knowledge.rerank import search as reranked

    try:
        query = check_query(query)
        if len(also) > MAX_ALSO:
            raise InputError(
                f"--also was given {len(also)} times: at most {MAX_ALSO} other phrasings are searched"
            )
        ask = _model_ask(model, "reranker") if rerank else None
        store = _open(directory, console)
        found = reranked(store.procedures, query, k, ask, also, ranking)
    # UserError: a damaged store, a bad query; ModelConfigError: --rerank without a usable model
    except (EmbedderUnavailable, UserError, ModelConfigError) as exc:
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE
    hits = found.hits
    if found.problem:
        say(console, f"[yellow]warning:[/yellow] {markup(found.problem)}")
    if not hits:
        console.print(
            "No procedures in the store match; add documents with `taskcrew knowledge ingest PATH`."
        )
        return FAILED
    for hit in hits:
        # a citation is shown already (models.cite: its name made visible, its headings as a reader
        # sees them, no control character): only rich's markup is escaped, never marked twice
        say(console, f"[bold]{hit.rank}. {escape(hit.citation)}[/bold] [dim](score {hit.score:.3f})[/dim]")
        say(console, markup(clip(hit.text), layout=True))
        console.print()
    return OK


def questions(model: str | None, limit: int | None, directory: Path | None, console: Console) -> int:
    """Ask a model for the questions each section answers (knowledge/questions.py); exit 1 when a
    reply could not be read (those sections are asked again next time), 2 without a model."""
    from taskcrew.crew.modelspec import ModelConfigError
    from taskcrew.knowledge.questions import Section, write_questions

    try:
        ask = _model_ask(model, "question writer")
        store = _open(directory, console)
    except (ModelConfigError, EmbedderUnavailable, UserError) as exc:
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE

    def shown(section: Section, written: list[str] | None) -> None:
        state = "unreadable reply" if written is None else f"{len(written)} question(s)"
        say(console, f"[dim]{markup(section.key)}: {state}[/dim]")

    try:
        with signals_raise():
            report = write_questions(store, ask, limit=limit, on_section=shown)
    except (KeyboardInterrupt, RunInterrupted):
        console.print(
            "[yellow]interrupted.[/yellow] The questions written so far are kept; run the same "
            "command again to ask the sections that have none yet."
        )
        return EXIT_INTERRUPTED
    except (ConnectionError, ModelConfigError) as exc:
        say(
            console,
            f"[red]error:[/red] {markup(exc)}\nThe questions written before it are kept; "
            "run the command again when the model answers.",
        )
        return UNAVAILABLE
    say(console, markup(report.render(), layout=True))  # a failure may quote a model's reply
    return FAILED if report.failed else OK


def _model_ask(model: str | None, who: str) -> Ask:
    """(system, user) -> reply text from the run's worker model, or ``model``; a failed call is
    raised as one line naming the model's address and status. ModelConfigError without a model."""
    from taskcrew.crew.calls import call_error
    from taskcrew.crew.llm import build_provider_llm, text_ask
    from taskcrew.crew.modelspec import worker_spec

    spec = worker_spec(model)  # the run's worker model unless --model names another
    call = text_ask(build_provider_llm(spec))

    def ask(system: str, user: str) -> str:
        try:
            return call(system, user)
        except Exception as exc:
            clear = call_error(exc, who, spec)  # one line naming the URL and status
            if clear is None:
                raise
            raise clear from exc

    return ask


def facts(query: str | None, k: int, directory: Path | None, console: Console) -> int:
    """List facts of every status (proposed ones wait for `knowledge facts accept|reject ID`), with
    each fact's words digest (what `accept --words` names), and the damaged rows."""
    from taskcrew.knowledge.facts import UNKNOWN_ORIGIN, words_of

    try:
        store = _open(directory, console)
        if query:
            found, damaged = [h.fact for h in store.facts.search(query, k=k, status=None)], []
        else:
            rows = store.facts.rows()
            found, damaged = rows.facts, rows.damaged
    except (EmbedderUnavailable, UserError) as exc:  # UserError: a damaged store, a bad query
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE
    if not found and not damaged:
        console.print(
            "No learned facts yet." if not query else "No learned fact matches.",
            "Facts are added by the reflector after verified runs.",
        )
        return OK
    for fact in found:
        origin = (
            "unverified row of unknown origin"
            if fact.unverified
            else f"first learned {fact.learned_at:%Y-%m-%d %H:%M} by run {markup(fact.run_id)}"
            if fact.run_id
            else UNKNOWN_ORIGIN
        )
        say(
            console,
            f"[bold]{fact.id}[/bold] {_STATUS_STYLE[fact.status]} [dim]confidence {fact.confidence:.2f}, "
            f"confirmed {fact.confirmations}x, {origin}, words {words_of(fact.text)}[/dim]",
        )
        say(console, f"  {markup(fact.text)}")
        if fact.problem:
            say(console, f"  [yellow]{markup(fact.problem)}[/yellow]")
        if fact.status == "proposed":
            sources = ", ".join(s for s in fact.derived_from if s != UNKNOWN_ORIGIN) or "untrusted text"
            say(
                console,
                f"  [dim]from {markup(sources if not fact.unverified else UNKNOWN_ORIGIN)}: not shown to "
                f"any planner until a person runs `taskcrew knowledge facts accept {fact.id} --words "
                f"{words_of(fact.text)}` (or reject)[/dim]",
            )
        elif fact.decided_by:
            say(console, f"  [dim]{fact.status} by {markup(fact.decided_by)}[/dim]")
    for row in damaged:
        say(
            console,
            f"[bold]{markup(row.id)}[/bold] [red]damaged row[/red] [dim]{markup(row.problem)}; no planner "
            f"sees it: `taskcrew knowledge forget {markup(row.id)}`[/dim]",
        )
        say(console, f"  {markup(row.text)}")
    return OK


_STATUS_STYLE = {
    "proposed": "[yellow]proposed[/yellow]",
    "accepted": "[green]accepted[/green]",
    "rejected": "[red]rejected[/red]",
}


def _identity(console: Console) -> Identity | None:
    """The CLI's proven identity, as `taskcrew approvals` takes it (None: refused, said why)."""
    from taskcrew.approvals.identity import IdentityError, cli_identity, identity_refusal

    try:
        who = cli_identity()
        if refused := identity_refusal(who):
            raise IdentityError(refused)
    except IdentityError as exc:
        say(console, f"[red]error:[/red] {markup(exc)}")
        return None
    return who


def decide(
    fact_id: str, accept: bool, directory: Path | None, console: Console, words: str | None = None
) -> int:
    """`knowledge facts accept|reject ID [--words DIGEST]`: a person's decision on a fact, as the
    CLI's proven identity (the personal token, else the OS user: as `taskcrew approvals`), in the
    audit log. An acceptance is of words the person read: those ``words`` names (the digest
    `knowledge facts` prints), else the fact's words printed here and confirmed at the prompt."""
    from rich.prompt import Confirm

    from taskcrew.approvals.audit import AuditLogError
    from taskcrew.knowledge.facts import FactRefused, words_of

    who = _identity(console)
    if who is None:
        return UNAVAILABLE
    try:
        book = _open(directory, console).facts
        if accept and words is None and (shown := book.get(fact_id)) is not None:
            say(console, f"{shown.id} says:\n  {markup(shown.text)}")
            if shown.unverified:
                say(console, f"  [yellow]{markup(shown.problem or 'of unknown origin')}[/yellow]")
            try:
                sure = Confirm.ask("Accept exactly these words?", console=console, default=False)
            except EOFError:
                sure = False
            if not sure:
                console.print(
                    "Nothing decided. Without a terminal, name the words you read: "
                    f"`taskcrew knowledge facts accept {fact_id} --words {words_of(shown.text)}`"
                )
                return FAILED
            words = words_of(shown.text)
        decided = book.decide(fact_id, accept, who, words)
    except (EmbedderUnavailable, UserError, AuditLogError) as exc:
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE
    except FactRefused as exc:
        say(console, f"[red]refused:[/red] {markup(exc)}")
        return FAILED
    if decided is None:
        say(
            console,
            f"[red]No fact with id {markup(fact_id)!r}; list them with `taskcrew knowledge facts`.[/red]",
        )
        return FAILED
    say(console, f"{decided.status.capitalize()} {decided.id}: {markup(decided.text)}")
    return OK


def forget(fact_id: str, directory: Path | None, console: Console) -> int:
    """`knowledge forget ID`: delete a fact or a damaged row, recorded in the audit log as the CLI's
    identity (a copy of the row written back later stays forgotten)."""
    from taskcrew.approvals.audit import AuditLogError
    from taskcrew.knowledge.facts import FactRefused

    who = _identity(console)
    if who is None:
        return UNAVAILABLE
    try:
        removed = _open(directory, console).facts.forget(fact_id, who)
    except (EmbedderUnavailable, UserError, AuditLogError) as exc:  # UserError: a damaged store
        say(console, f"[red]error:[/red] {markup(exc)}")
        return UNAVAILABLE
    except FactRefused as exc:  # who may decide nothing on a fact here
        say(console, f"[red]refused:[/red] {markup(exc)}")
        return FAILED
    if removed is None:
        say(
            console,
            f"[red]No fact with id {markup(fact_id)!r}; list them with `taskcrew knowledge facts`.[/red]",
        )
        return FAILED
    say(console, f"Forgot {markup(removed.id)}: {markup(removed.text)}")
    return OK
