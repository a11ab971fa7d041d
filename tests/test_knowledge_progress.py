"""`knowledge ingest` reports progress on a plain (non-TTY) stream too, within a large file."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.knowledge.models import FileIngest
from taskcrew.knowledge.progress import IngestProgress


def test_plain_output_gets_throttled_lines_and_the_final_count() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with IngestProgress(console, files=1, every_s=0.0) as progress:
        for done in (128, 256, 300):
            progress.chunks(Path("big.txt"), done, 300)
        progress.file_done(FileIngest(path="big.txt", status="added", chunks=300))
    lines = out.getvalue().splitlines()
    assert [line.split(" chunks")[0] for line in lines] == [
        "ingesting big.txt: 128/300",
        "ingesting big.txt: 256/300",
        "ingesting big.txt: 300/300",
    ]
    quiet = io.StringIO()
    with IngestProgress(Console(file=quiet, force_terminal=False), files=1, every_s=3600) as progress:
        for done in (128, 256, 300):
            progress.chunks(Path("big.txt"), done, 300)
    assert quiet.getvalue().count("\n") == 2  # the first batch, then only the end within the interval


def test_ingest_through_the_cli_prints_chunk_progress(isolated_home: Path, tmp_path: Path) -> None:
    paragraphs = [f"Section {n}. " + f"Vendor {n} is paid net {n % 60} days after the invoice date. " * 12
                  for n in range(40)]  # fmt: skip
    big = tmp_path / "big.txt"
    big.write_text("\n\n".join(paragraphs), encoding="utf-8")
    result = CliRunner().invoke(app, ["knowledge", "ingest", str(big), "--store", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    match = re.search(r"ingesting big\.txt: (\d+)/(\d+) chunks embedded \([\d.]+/s\)", result.output)
    assert match and match.group(1) == match.group(2) and int(match.group(2)) > 10, result.output
