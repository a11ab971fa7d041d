"""Configuration of the mock ERP: who may log in, how long sessions last, and which faults fire."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from taskcrew.mock_erp.form_change import FormChange

DEMO_TODAY = date(2026, 10, 2)
CURRENCIES: tuple[str, ...] = ("USD", "EUR", "GBP", "INR", "CAD", "AUD", "CHF")

ENV_USERNAME = "ACME_ERP_USERNAME"
ENV_PASSWORD = "ACME_ERP_PASSWORD"
ENV_SESSION_TTL = "ACME_ERP_SESSION_TTL_S"
ENV_TODAY = "ACME_ERP_TODAY"


class ErpSettings(BaseModel):
    """Fixed behaviour of one ERP instance. ``from_env`` reads the ``ACME_ERP_*`` variables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    username: str = Field("demo", min_length=1)
    password: SecretStr = SecretStr("demo123")
    session_ttl_s: float = Field(1800.0, gt=0, description="Idle time after which a session expires.")
    today: date = Field(DEMO_TODAY, description="The demo's 'today': default payment date suggestion.")
    currencies: tuple[str, ...] = CURRENCIES

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ErpSettings:
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        if username := env.get(ENV_USERNAME):
            values["username"] = username
        if password := env.get(ENV_PASSWORD):
            values["password"] = SecretStr(password)
        if ttl := env.get(ENV_SESSION_TTL):
            values["session_ttl_s"] = ttl
        if today := env.get(ENV_TODAY):
            values["today"] = today
        return cls.model_validate(values)


SaveFault = Literal["none", "expire_session", "service_unavailable"]
DEFAULT_SAVE_FAULTS: tuple[SaveFault, ...] = ("expire_session", "service_unavailable")


class ChaosConfig(BaseModel):
    """Real-world faults, all reproducible from ``seed``.

    ``save_faults[n]`` is what happens to the (n+1)-th valid new-bill save; saves beyond the list go
    through. The default list expires the session on the 1st save and answers 503 to the 2nd.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    seed: int = 0
    save_faults: list[SaveFault] = Field(default_factory=lambda: list(DEFAULT_SAVE_FAULTS))
    latency_ms: int = Field(0, ge=0, le=30_000, description="Added to every page request.")
    error_rate: float = Field(0.0, ge=0.0, le=1.0, description="Chance of a random 5xx per page request.")
    modal: bool = Field(False, description="A notice overlay covers every page until dismissed.")
    shuffle_fields: bool = Field(False, description="The new-bill form's fields come in a shuffled order.")
    hostile_script: bool = Field(
        False, description="A script on every signed-in page tries to enter a bill of its own (fetch POST)."
    )
    form_change: FormChange = Field(
        "none", description="The new-bill form as a later release ships it (mock_erp/form_change.py)."
    )

    @classmethod
    def off(cls) -> ChaosConfig:
        return cls(enabled=False)
