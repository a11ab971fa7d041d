"""Headings found by font size against the PDF's own outline, on PDFs that have one.

    uv run python bench/pdf_headings_bench.py FILE.pdf [...]
    (e.g. /usr/share/doc/libtasn1-doc/libtasn1.pdf from Debian's libtasn1-doc, or any manual)

For each PDF with bookmarks, the outline is read as the truth, then the headings are found from
font sizes alone (knowledge/pdf_headings.py, which the chunker uses only when a PDF has no
outline). An outline entry is found when a heading on the same page ends with its title (a
numbered "2.1 ASN.1 syntax" finds the bookmark "ASN.1 syntax"); a found heading is right when it
is some entry's (the title found, not a chapter, is not counted). Printed per file: entries, found headings, recall, precision, depth agreement on
the matched ones, and the misses; then the totals.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pypdf import PdfReader

from taskcrew.knowledge.markup import pdf_outline
from taskcrew.knowledge.pdf_headings import font_outline


def _norm(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def compare(path: Path) -> tuple[int, int, int, int, int] | None:
    reader = PdfReader(path)
    truth = pdf_outline(reader)
    if not truth:
        print(f"{path.name}: no outline to compare with; skipped")
        return None
    started = time.perf_counter()
    found = font_outline(reader)
    seconds = time.perf_counter() - started
    heads = [(page, path_[-1], len(path_)) for page, path_ in found.entries]
    matched: set[int] = set()
    depth_same = 0
    misses: list[str] = []
    for page, path_ in truth:
        title = _norm(path_[-1])
        hit = next(
            (i for i, (p, text, _) in enumerate(heads) if p == page and _norm(text).endswith(title)),
            None,
        )
        if hit is None:
            misses.append(f"p{page + 1} {' > '.join(path_)}")
            continue
        matched.add(hit)
        depth_same += heads[hit][2] == len(path_)
    recalled = len(truth) - len(misses)
    extra = [f"p{p + 1} {text}" for i, (p, text, _) in enumerate(heads) if i not in matched]
    print(
        f"{path.name}: {len(reader.pages)} pages, {len(truth)} outline entries, {len(heads)} found "
        f"(title: {found.title!r}); recall {recalled / len(truth):.2f}, precision "
        f"{len(matched) / max(1, len(heads)):.2f}, same depth {depth_same}/{recalled}; {seconds:.2f} s"
    )
    for line in misses[:10]:
        print(f"   missed  {line}")
    for line in extra[:10]:
        print(f"   extra   {line}")
    return len(truth), recalled, len(heads), len(matched), depth_same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("pdfs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    totals = [0, 0, 0, 0, 0]
    for path in args.pdfs:
        result = compare(path)
        if result:
            totals = [a + b for a, b in zip(totals, result, strict=True)]
    entries, recalled, heads, matched, depth = totals
    if entries:
        print(
            f"total: {entries} entries, recall {recalled / entries:.2f}, precision "
            f"{matched / max(1, heads):.2f}, same depth {depth}/{recalled}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
