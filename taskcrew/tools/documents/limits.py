"""Limits on one document read (constants here; the child process that enforces time and memory is
:mod:`taskcrew.tools.documents.worker`), and on the knowledge ingest's reading of a PDF."""

from __future__ import annotations

import os
import time

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_PAGES = 300  # pages read per PDF
MAX_OCR_PAGES = int(os.environ.get("TASKCREW_MAX_OCR_PAGES", "10"))  # pages OCR'd per document
MAX_CHARS = 2_000_000  # text kept per document
PARSE_TIMEOUT_S = float(os.environ.get("TASKCREW_PARSE_TIMEOUT_S", "45"))
PARSE_MEMORY_BYTES = int(float(os.environ.get("TASKCREW_PARSE_MEMORY_MB", "1536")) * 1024 * 1024)
CACHE_ENTRIES = 256  # parsed files kept per reader …
CACHE_CHARS = 20_000_000  # … and at most this much text in all
TEXT_SHARE = 0.5  # PDF pages stop being read after this share of the time limit (a partial answer) …
OCR_SHARE = 0.65  # … and OCR stops starting pages after this share, so the parse answers before the kill
# the knowledge ingest (no child process, no parse clock): which text of a PDF a person sees is
# checked for at most this many pages and seconds per file; the pages past them are not indexed
MAX_INGEST_PAGES = int(os.environ.get("TASKCREW_INGEST_MAX_PAGES", "2000"))
INGEST_CHECK_S = float(os.environ.get("TASKCREW_INGEST_CHECK_S", "300"))

# the clock of the parse in progress (one parse at a time per process)
_clock = {"started": time.monotonic(), "timeout": PARSE_TIMEOUT_S}


def start_parse(timeout_s: float | None = None) -> None:
    """Start the clock of one parse (the worker passes its time limit)."""
    _clock["started"] = time.monotonic()
    if timeout_s is not None:
        _clock["timeout"] = timeout_s


def past(share: float) -> bool:
    """True once this share of the parse's time limit has been used."""
    return time.monotonic() - _clock["started"] > share * _clock["timeout"]


def budget_s(share: float) -> float:
    return share * _clock["timeout"]
