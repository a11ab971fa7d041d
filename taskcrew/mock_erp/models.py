"""The ERP's records as they cross its boundary: the /_debug JSON and the library API.

The field names and shapes here are the documented, stable ground truth (docs/mock_erp.md).
Amounts are strings with exactly two decimals ("1284.50"); dates are ISO strings.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from taskcrew.mock_erp.settings import ChaosConfig

BillStatus = Literal["unpaid", "paid"]
SessionStatus = Literal["active", "expired", "logged_out", "revoked"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Vendor(_Record):
    id: int
    name: str
    default_currency: str


class Bill(_Record):
    id: str = Field(description="BILL-0011")
    vendor: str
    invoice_number: str
    amount: str = Field(description="Plain number with two decimals, e.g. '99.90'.")
    currency: str
    invoice_date: str
    due_date: str
    status: BillStatus
    paid_on: str | None
    created_at: str
    notes: str | None


class Payment(_Record):
    id: int
    bill_id: str
    paid_on: str
    amount: str
    currency: str
    created_at: str


class SessionInfo(_Record):
    id_prefix: str = Field(description="First 8 characters of the session token.")
    username: str
    created_at: str
    expires_at: str
    status: SessionStatus


class ChaosCounters(BaseModel):
    """What chaos has done since the last reset or chaos change."""

    page_requests: int = 0
    delayed_requests: int = 0
    random_errors: int = 0
    valid_saves: int = 0
    sessions_expired: int = 0
    service_unavailable: int = 0


class ChaosState(BaseModel):
    config: ChaosConfig
    counters: ChaosCounters


class DebugState(_Record):
    """GET /_debug/state."""

    today: str
    vendors: list[Vendor]
    bills: list[Bill]
    payments: list[Payment]
    sessions: list[SessionInfo]
    chaos: ChaosState

    def bill(self, bill_id: str) -> Bill | None:
        return next((b for b in self.bills if b.id == bill_id), None)

    def bills_of(self, vendor: str) -> list[Bill]:
        return [b for b in self.bills if b.vendor == vendor]


class ResetRequest(BaseModel):
    """Optional body of POST /_debug/reset."""

    model_config = ConfigDict(extra="forbid")

    chaos: ChaosConfig | None = None
