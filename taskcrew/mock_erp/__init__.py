"""Acme Payables, the demo company's mock ERP: a real web app on a real HTTP server and SQLite.

Library API: ``ErpServer`` (start/stop, ``.url``, in-process ``state()``), ``ChaosConfig``,
``ErpSettings``, the ground-truth models (``DebugState``, ``Bill``), and ``fetch_state(url)``.
"""

from taskcrew.mock_erp.errors import ErpError
from taskcrew.mock_erp.ground_truth import ErpUnreachable, fetch_state, reset_remote
from taskcrew.mock_erp.models import Bill, DebugState, Payment, SessionInfo, Vendor
from taskcrew.mock_erp.server import ErpServer, serve_forever
from taskcrew.mock_erp.settings import ChaosConfig, ErpSettings

__all__ = [
    "Bill",
    "ChaosConfig",
    "DebugState",
    "ErpError",
    "ErpServer",
    "ErpSettings",
    "ErpUnreachable",
    "Payment",
    "SessionInfo",
    "Vendor",
    "fetch_state",
    "reset_remote",
    "serve_forever",
]
