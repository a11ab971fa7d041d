"""Ground truth for graders and tests: /_debug/state, /_debug/reset, /_debug/chaos (JSON, no login).

The agent's policy blocks these paths; they exist so that tests and the eval can see the truth.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import ValidationError

from taskcrew.mock_erp.chaos import ChaosEngine
from taskcrew.mock_erp.models import DebugState, ResetRequest
from taskcrew.mock_erp.settings import ChaosConfig
from taskcrew.mock_erp.web import Request, Response, json_response


class DebugApi:
    def __init__(
        self, state: Callable[[], DebugState], reset: Callable[[ChaosConfig | None], None], chaos: ChaosEngine
    ) -> None:
        self._state = state
        self._reset = reset
        self._chaos = chaos

    def handle(self, request: Request) -> Response:
        route = (request.method, request.path.rstrip("/"))
        if route == ("GET", "/_debug/state"):
            return json_response(self._state())
        if route == ("POST", "/_debug/reset"):
            return self._post_reset(request)
        if route == ("GET", "/_debug/chaos"):
            return json_response(self._chaos.state())
        if route == ("POST", "/_debug/chaos"):
            return self._post_chaos(request)
        known = {"/_debug/state": "GET", "/_debug/reset": "POST", "/_debug/chaos": "GET, POST"}
        if request.path.rstrip("/") in known:
            allowed = known[request.path.rstrip("/")]
            response = json_response({"error": f"method not allowed; use {allowed}"}, 405)
            response.headers.append(("Allow", allowed))
            return response
        return json_response({"error": f"unknown debug path {request.path}; see docs/mock_erp.md"}, 404)

    def _post_reset(self, request: Request) -> Response:
        try:
            body = ResetRequest.model_validate(request.json() or {})
        except ValueError as exc:
            return _bad_body(exc)
        self._reset(body.chaos)
        return json_response(self._state())

    def _post_chaos(self, request: Request) -> Response:
        try:
            changes = request.json() or {}
            if not isinstance(changes, dict):
                raise ValueError("the body must be a JSON object of ChaosConfig fields")
            config = ChaosConfig.model_validate({**self._chaos.config.model_dump(), **changes})
        except ValueError as exc:
            return _bad_body(exc)
        self._chaos.configure(config)
        return json_response(self._chaos.state())


def _bad_body(exc: ValueError) -> Response:
    if isinstance(exc, ValidationError):
        details = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        return json_response({"error": "invalid body", "details": details}, 422)
    if isinstance(exc, json.JSONDecodeError):
        return json_response({"error": f"body is not JSON: {exc}"}, 400)
    return json_response({"error": str(exc)}, 422)
