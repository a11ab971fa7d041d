"""Read (and reset) the ERP's ground truth over HTTP, typed: for graders, tests and the crew.

Plain urllib: these are loopback calls, and building an httpx client costs more than the call.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from taskcrew.mock_erp.errors import ErpError
from taskcrew.mock_erp.models import DebugState
from taskcrew.mock_erp.settings import ChaosConfig


class ErpUnreachable(ErpError):
    pass


def fetch_state(base_url: str, timeout: float = 10.0) -> DebugState:
    """GET {base_url}/_debug/state as a ``DebugState``. Raises ErpUnreachable with the reason."""
    return DebugState.model_validate_json(_call(base_url, "/_debug/state", None, timeout))


def reset_remote(base_url: str, chaos: ChaosConfig | None = None, timeout: float = 10.0) -> DebugState:
    """POST {base_url}/_debug/reset (reseed; optionally set chaos) and return the fresh state."""
    body: dict[str, object] = {"chaos": chaos.model_dump()} if chaos else {}
    return DebugState.model_validate_json(_call(base_url, "/_debug/reset", body, timeout))


def _call(base_url: str, path: str, body: dict[str, object] | None, timeout: float) -> bytes:
    url = base_url.rstrip("/") + path
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", errors="replace")[:300]
        raise ErpUnreachable(f"{url} answered HTTP {exc.code}: {detail}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ErpUnreachable(f"cannot reach the ERP at {url} ({reason}); is it running?") from exc
