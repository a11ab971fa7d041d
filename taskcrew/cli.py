"""The taskcrew command line. Thin: each command parses options and calls into a module.

Keep heavy imports (crewai, chromadb, playwright) inside the command bodies so that
``taskcrew --help`` and ``taskcrew erp serve`` start instantly.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, cast

import typer

app = typer.Typer(
    name="taskcrew",
    help="An autonomous task worker with a human in the loop and an independent verifier.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
erp_app = typer.Typer(help="The demo company's mock ERP, 'Acme Payables'.", no_args_is_help=True)
app.add_typer(erp_app, name="erp")
intranet_app = typer.Typer(
    help="The demo company's intranet, 'Acme Connect' (vendor portal and news).", no_args_is_help=True
)
app.add_typer(intranet_app, name="intranet")
knowledge_app = typer.Typer(
    help="Company procedures and learned facts (a Chroma store; the first use ingests the demo handbook).",
    no_args_is_help=True,
)
app.add_typer(knowledge_app, name="knowledge")


@erp_app.command("serve")
def erp_serve(
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1 (0 picks a free one).")] = 8800,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    db: Annotated[Path | None, typer.Option(help="SQLite file (default: under TASKCREW_HOME).")] = None,
    chaos: Annotated[bool, typer.Option("--chaos/--no-chaos", help="Inject real-world faults.")] = True,
    seed: Annotated[int, typer.Option(help="Seed that makes every fault reproducible.")] = 0,
    reset: Annotated[bool, typer.Option(help="Reseed the database before serving.")] = False,
    latency_ms: Annotated[int, typer.Option(help="Chaos: delay every page by this many ms.")] = 0,
    error_rate: Annotated[float, typer.Option(help="Chaos: chance (0-1) of a random 5xx per page.")] = 0.0,
    modal: Annotated[
        bool, typer.Option(help="Chaos: a notice overlay covers pages until dismissed.")
    ] = False,
    shuffle_fields: Annotated[bool, typer.Option(help="Chaos: shuffle the new-bill form's fields.")] = False,
) -> None:
    """Serve the mock ERP until Ctrl-C (log in as demo / demo123 unless ACME_ERP_* say otherwise)."""
    from pydantic import ValidationError

    from taskcrew.mock_erp import ChaosConfig, ErpError, serve_forever

    try:
        config = ChaosConfig(
            enabled=chaos,
            seed=seed,
            latency_ms=latency_ms,
            error_rate=error_rate,
            modal=modal,
            shuffle_fields=shuffle_fields,
        )
        serve_forever(host=host, port=port, db_path=db, chaos=config, reset=reset)
    except (ErpError, ValidationError) as exc:
        typer.echo(f"erp serve: {exc}", err=True)
        raise typer.Exit(1) from exc


@intranet_app.command("serve")
def intranet_serve(
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1.")] = 8801,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    pages: Annotated[
        Path | None, typer.Option(help="Folder of page files (default: the built-in site).")
    ] = None,
) -> None:
    """Serve the intranet (read-only) until Ctrl-C."""
    from taskcrew.intranet.content import PageError
    from taskcrew.intranet.server import serve_forever

    try:
        serve_forever(host=host, port=port, pages_dir=pages)
    except PageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except OSError as exc:
        typer.echo(f"error: cannot serve on {host}:{port}: {exc}", err=True)
        raise typer.Exit(1) from exc


class KnowledgeRanking(StrEnum):
    hybrid = "hybrid"
    vector = "vector"
    bm25 = "bm25"
    rrf = "rrf"


KnowledgeStoreOption = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default: TASKCREW_HOME/knowledge).")
]


@knowledge_app.command("ingest")
def knowledge_ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (.md, .txt, .pdf, .eml).")],
    store: KnowledgeStoreOption = None,
) -> None:
    """Add company documents to the procedures collection (re-ingesting is idempotent)."""
    from rich.console import Console

    from taskcrew.knowledge import commands

    raise typer.Exit(commands.ingest(paths, store, Console(soft_wrap=True)))


@knowledge_app.command("search")
def knowledge_search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    k: Annotated[int, typer.Option("-k", min=1, max=20, help="How many passages.")] = 4,
    ranking: Annotated[
        KnowledgeRanking, typer.Option(help="How to rank passages.")
    ] = KnowledgeRanking.hybrid,
    store: KnowledgeStoreOption = None,
) -> None:
    """Search the company procedures."""
    from rich.console import Console

    from taskcrew.knowledge import commands
    from taskcrew.knowledge.models import Ranking

    raise typer.Exit(commands.search(query, k, cast(Ranking, ranking.value), store, Console(soft_wrap=True)))


@knowledge_app.command("facts")
def knowledge_facts(
    query: Annotated[str | None, typer.Option("--query", "-q", help="Only facts related to this.")] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=50, help="How many facts with --query.")] = 10,
    store: KnowledgeStoreOption = None,
) -> None:
    """List the facts learned by verified runs (with their provenance)."""
    from rich.console import Console

    from taskcrew.knowledge import commands

    raise typer.Exit(commands.facts(query, k, store, Console(soft_wrap=True)))


@knowledge_app.command("forget")
def knowledge_forget(
    fact_id: Annotated[str, typer.Argument(help="The fact's id, as `taskcrew knowledge facts` shows it.")],
    store: KnowledgeStoreOption = None,
) -> None:
    """Delete a learned fact."""
    from rich.console import Console

    from taskcrew.knowledge import commands

    raise typer.Exit(commands.forget(fact_id, store, Console(soft_wrap=True)))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
