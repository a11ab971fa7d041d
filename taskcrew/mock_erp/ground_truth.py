"""Read the ERP's ground truth over HTTP, typed (for graders, tests and the verifier's auditors)."""

from __future__ import annotations

import httpx

from taskcrew.mock_erp.models import DebugState
from taskcrew.mock_erp.settings import ChaosConfig


def fetch_state(base_url: str, timeout: float = 10.0) -> DebugState:
    """GET {base_url}/_debug/state as a ``DebugState``. Raises httpx.HTTPError when unreachable."""
    response = httpx.get(base_url.rstrip("/") + "/_debug/state", timeout=timeout)
    response.raise_for_status()
    return DebugState.model_validate_json(response.content)


def reset_remote(base_url: str, chaos: ChaosConfig | None = None, timeout: float = 10.0) -> DebugState:
    """POST {base_url}/_debug/reset: reseed (and optionally set chaos); returns the fresh state."""
    body = {"chaos": chaos.model_dump()} if chaos else {}
    response = httpx.post(base_url.rstrip("/") + "/_debug/reset", json=body, timeout=timeout)
    response.raise_for_status()
    return DebugState.model_validate_json(response.content)
