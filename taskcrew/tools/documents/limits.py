"""Limits on one document read (constants here; the child process that enforces time and memory is
:mod:`taskcrew.tools.documents.worker`)."""

from __future__ import annotations

import os

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_PAGES = 300  # pages read per PDF
MAX_OCR_PAGES = int(os.environ.get("TASKCREW_MAX_OCR_PAGES", "10"))  # pages OCR'd per document
MAX_CHARS = 2_000_000  # text kept per document
PARSE_TIMEOUT_S = float(os.environ.get("TASKCREW_PARSE_TIMEOUT_S", "45"))
PARSE_MEMORY_BYTES = int(float(os.environ.get("TASKCREW_PARSE_MEMORY_MB", "1536")) * 1024 * 1024)
CACHE_ENTRIES = 256  # parsed files kept per reader …
CACHE_CHARS = 20_000_000  # … and at most this much text in all
OCR_BUDGET_S = PARSE_TIMEOUT_S * 0.6  # OCR stops starting pages after this, so the parse still answers
