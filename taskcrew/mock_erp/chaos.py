"""Chaos mode: real-world faults, each one reproducible from the configured seed.

Every random choice comes from a ``random.Random`` seeded from ``ChaosConfig.seed`` (one stream per
fault kind), never from the global generator, so the same seed and the same request sequence give
the same faults.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from taskcrew.mock_erp.form_change import FormChange
from taskcrew.mock_erp.models import ChaosCounters, ChaosState
from taskcrew.mock_erp.settings import ChaosConfig, SaveFault

RANDOM_ERROR_STATUSES: tuple[int, ...] = (500, 502, 503, 504)


class RequestFault(BaseModel):
    """What chaos does to one page request before it is handled."""

    model_config = ConfigDict(frozen=True)

    delay_s: float = 0.0
    error_status: int | None = None


class ChaosEngine:
    """Decides faults. Not thread-safe on its own: the app calls it under its lock."""

    def __init__(self, config: ChaosConfig) -> None:
        self.configure(config)

    def configure(self, config: ChaosConfig) -> None:
        """Apply ``config`` and start over: counters at zero, random streams rewound."""
        self.config = config
        self.counters = ChaosCounters()
        self._errors = random.Random(f"{config.seed}/errors")

    def state(self) -> ChaosState:
        return ChaosState(config=self.config, counters=self.counters.model_copy())

    def on_page_request(self) -> RequestFault:
        self.counters.page_requests += 1
        if not self.config.enabled:
            return RequestFault()
        delay = self.config.latency_ms / 1000
        if delay:
            self.counters.delayed_requests += 1
        status = None
        if self.config.error_rate > 0:
            # Two draws per request whatever the outcome, so later faults do not shift.
            roll, pick = self._errors.random(), self._errors.choice(RANDOM_ERROR_STATUSES)
            if roll < self.config.error_rate:
                status = pick
                self.counters.random_errors += 1
        return RequestFault(delay_s=delay, error_status=status)

    def on_valid_save(self) -> SaveFault:
        """Called when a new bill passed every check and is about to be written."""
        self.counters.valid_saves += 1
        if not self.config.enabled:
            return "none"
        index = self.counters.valid_saves - 1
        fault = self.config.save_faults[index] if index < len(self.config.save_faults) else "none"
        if fault == "expire_session":
            self.counters.sessions_expired += 1
        elif fault == "service_unavailable":
            self.counters.service_unavailable += 1
        return fault

    def field_order(self, fields: Sequence[str]) -> list[str]:
        """The new-bill form's field order: as given, or one fixed shuffle per seed."""
        order = list(fields)
        if not (self.config.enabled and self.config.shuffle_fields) or len(order) < 2:
            return order
        shuffled = order[:]
        random.Random(f"{self.config.seed}/fields").shuffle(shuffled)
        if shuffled == order:  # a shuffle must be visible
            shuffled = shuffled[1:] + shuffled[:1]
        return shuffled

    @property
    def form_change(self) -> FormChange:
        return self.config.form_change if self.config.enabled else "none"

    def show_notice(self, dismissed: bool) -> bool:
        return self.config.enabled and self.config.modal and not dismissed
