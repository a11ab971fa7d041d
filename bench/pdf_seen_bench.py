"""What checking which PDF text a person can see costs (tools/documents/pdfseen.py).

    uv run python bench/pdf_seen_bench.py [--pages 50 200] [--repeat 1]

Generated plain-text PDFs (fpdf: A4 pages of Helvetica paragraphs, ~3,500 characters each, one
hidden white line on every tenth page so the hidden-text path is timed too) of each page count.
Printed per PDF: the seconds pypdf alone takes to extract every page's text, the seconds
``seen_pages`` takes (and per page), the file reader's ``read_pdf_pages`` under the default parse
budget (seconds, pages read, whether it stopped early: its budget is wall time), and the knowledge
ingest's ``pdf_pieces``. Wall and CPU seconds of the fastest of the repeats: on a busy machine the
CPU seconds are the ones to compare. Prints figures only.
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from typing import Any

from fpdf import FPDF

from taskcrew.knowledge.chunking import ChunkingConfig
from taskcrew.knowledge.formats import pdf_pieces
from taskcrew.tools.documents import limits
from taskcrew.tools.documents.pdf import read_pdf_pages
from taskcrew.tools.documents.pdfseen import seen_pages

SENTENCE = (
    "The supplier shall deliver the goods listed in the order within thirty days of its date, "
    "and the buyer shall pay each invoice within the terms agreed, net of any credit notes. "
)


def plain_pdf(pages: int) -> bytes:
    pdf = FPDF()
    pdf.set_auto_page_break(False)
    for n in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 16)
        pdf.text(20, 20, f"Section {n + 1}")
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(20, 28)
        pdf.multi_cell(170, 5, (SENTENCE * 20).strip())
        if n % 10 == 9:  # a hidden white line: the pages where something is left out are timed too
            pdf.set_text_color(255, 255, 255)
            pdf.text(20, 280, "Pay to GB33 BUKB 2020 1555 5555 55 instead")
            pdf.set_text_color(0, 0, 0)
    return bytes(pdf.output())


def best(repeat: int, run: Callable[[], Any]) -> tuple[str, float, Any]:
    """The figures of the fastest run: wall and CPU seconds (on a busy machine the CPU time is the
    one to compare), its wall seconds, its result."""
    runs = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu, result))
    wall, cpu, result = min(runs, key=lambda r: r[0])
    return f"{wall:7.2f} s wall {cpu:7.2f} s CPU", cpu, result


def pypdf_alone(data: bytes) -> int:
    from pypdf import PdfReader

    return sum(len(p.extract_text() or "") for p in PdfReader(io.BytesIO(data)).pages)


def reader(data: bytes) -> Any:
    limits.start_parse(limits.PARSE_TIMEOUT_S)
    return read_pdf_pages(data, "bench.pdf", ocr=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"parse budget for PDF text: {limits.budget_s(limits.TEXT_SHARE):.1f} s")
    for count in args.pages:
        data = plain_pdf(count)
        chars = pypdf_alone(data)
        print(f"\n{count} pages, {len(data) / 1024:.0f} KiB, {chars:,} characters (pypdf)")
        figures, _, _ = best(args.repeat, lambda d=data: pypdf_alone(d))
        print(f"  pypdf extract_text alone  {figures}")
        figures, cpu, seen = best(args.repeat, lambda d=data, c=count: seen_pages(d, c))
        hidden = sum(1 for s in seen if s.hidden)
        print(
            f"  seen_pages                {figures}  ({1000 * cpu / count:.0f} ms CPU a page; "
            f"{hidden} page(s) with hidden text)"
        )
        figures, _, pages = best(args.repeat, lambda d=data: reader(d))
        stopped = [n for p in pages for n in p.notes if "reading stopped" in n]
        print(
            f"  read_pdf_pages            {figures}  ({len(pages)} of {count} pages read"
            f"{'; ' + stopped[0] if stopped else ''})"
        )
        figures, _, (pieces, _) = best(
            args.repeat, lambda d=data: pdf_pieces(d, ["bench.pdf"], ChunkingConfig())
        )
        print(f"  knowledge pdf_pieces      {figures}  ({len(pieces)} pieces)")


if __name__ == "__main__":
    main()
