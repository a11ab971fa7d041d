"""Read-only access to the sandbox's files — kept for its imports; the code lives in
:mod:`taskcrew.tools.documents` (one module per format, OCR, limits and caching)."""

from taskcrew.tools.documents import *  # noqa: F403
from taskcrew.tools.documents import __all__  # noqa: F401
