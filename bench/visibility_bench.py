"""What reading only the visible part of HTML costs (tools/documents/visibility.py).

    uv run python bench/visibility_bench.py [--repeat 3]

For generated pages of several sizes (paragraphs in nested blocks, some hidden, with and without a
style sheet of 300 class rules), prints the seconds ``visible_html`` takes, the seconds the file
reader's whole ``html_to_text`` takes, and the same for a Markdown manual with raw HTML through
``visible_markdown``, then documents built to be slow (median of the repeats). Prints figures only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from taskcrew.tools.documents.html import html_to_text
from taskcrew.tools.documents.visibility import visible_html, visible_markdown

SHEET = "\n".join(f".c{i} .d{i % 7} > p {{ color: #333; margin: 0 }}" for i in range(300))


def page(paragraphs: int, sheet: bool) -> str:
    body = "".join(
        f'<div class="c{i % 300}"><p class="d{i % 7}"{" hidden" if i % 50 == 0 else ""}>'
        f"Paragraph {i} of the remittance, with <b>bold</b> words &amp; a link.</p></div>"
        for i in range(paragraphs)
    )
    style = f"<style>{SHEET}</style>" if sheet else ""
    return f"<html><head><title>Page</title>{style}</head><body>{body}</body></html>"


def manual(sections: int) -> str:
    parts = []
    for i in range(sections):
        parts.append(f"## Section {i}\n\nText of section {i}, with `code` and a <b>bold</b> word.\n")
        if i % 20 == 0:
            parts.append('<div style="display:none">\nHidden note.\n</div>\n')
    return "# Manual\n\n" + "\n".join(parts)


def seconds(read: Callable[[str], object], document: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        read(document)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'document':<34} {'KB':>6} {'visible s':>10} {'to text s':>10}")
    for paragraphs in (100, 1_000, 5_000):
        for sheet in (False, True):
            document = page(paragraphs, sheet)
            label = f"HTML, {paragraphs} paragraphs{', 300 rules' if sheet else ''}"
            visible = seconds(visible_html, document, args.repeat)
            whole = seconds(html_to_text, document, args.repeat)
            print(f"{label:<34} {len(document) / 1024:>6.0f} {visible:>10.3f} {whole:>10.3f}")
    for sections in (100, 2_000):
        text = manual(sections)
        took = seconds(visible_markdown, text, args.repeat)
        print(f"{f'Markdown, {sections} sections':<34} {len(text) / 1024:>6.0f} {took:>10.3f} {'-':>10}")
    # built to be slow: tags cut off by the end, a sheet of long selectors over deep nesting, tags
    # that never close in Markdown (each must stay linear, or end with a reason)
    hostile = {
        "HTML ending in 20,000 <style": "<p>x</p>" + "<style " * 20_000,
        "HTML, 12-step selector, depth 40": "<style>div span "
        + "div " * 12
        + "p { display: none }</style><span>"
        + "<div>" * 40
        + "<p>x</p>" * 500
        + "</div>" * 40,
    }
    for label, document in hostile.items():
        took = seconds(visible_html, document, args.repeat)
        print(f"{label:<34} {len(document) / 1024:>6.0f} {took:>10.3f} {'-':>10}")
    markdown = {
        "Markdown, 250 tags never closed": "# T\n\n" + ("<a\n" + "word line\n" * 400) * 250,
        "Markdown, a line of 20,000 <style": "x\n" + "<style " * 20_000 + "\n",
    }
    for label, text in markdown.items():
        took = seconds(visible_markdown, text, args.repeat)
        print(f"{label:<34} {len(text) / 1024:>6.0f} {took:>10.3f} {'-':>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
