"""A 429 backs off every worker on that model: the pause is kept in the job database, and every
worker's model calls wait it out before they are sent.

``SharedBackoff(jobs, "anthropic/claude-…", inner)`` wraps a provider model (anything with ``call``).
A rate-limit error (HTTP 429 / "rate limit" in the message) sets the model's pause to
now + base·2^n (capped), then the call waits and retries, at most ``retries`` times.

The pause's end is written and read by the database's clock (``store.db_now``), and a wait read back
is never longer than the pause its strikes call for (nor ``cap_s``): a row written by a process whose
own clock was far ahead, or edited, cannot hold every worker on that model for longer.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from taskcrew.jobs.store import BACKOFF as B
from taskcrew.jobs.store import Jobs, db_now


def is_rate_limit(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    text = str(exc).lower()
    # a whole "429", not the digits of a port or an id in the message (":34290")
    return (
        status == 429
        or bool(re.search(r"\b429\b", text))
        or "rate limit" in text
        or "ratelimit" in type(exc).__name__.lower()
    )


class SharedBackoff:
    def __init__(
        self,
        jobs: Jobs,
        model: str,
        inner: Any,
        *,
        base_s: float = 2.0,
        cap_s: float = 60.0,
        retries: int = 5,
    ) -> None:
        self.jobs, self.model, self.inner = jobs, model, inner
        self.base_s, self.cap_s, self.retries = base_s, cap_s, retries  # the table: Jobs.open

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _pause(self, strikes: int) -> float:
        return min(self.cap_s, self.base_s * 2 ** (max(strikes, 1) - 1))

    def pause_left(self) -> float:
        """Seconds still to wait: by the database's clock, and never more than the pause the row's
        strikes call for (a shared row is not trusted beyond that)."""
        with self.jobs.engine.connect() as conn:
            row = conn.execute(sa.select(B.c.until, B.c.strikes).where(B.c.model == self.model)).first()
            if row is None:
                return 0.0
            now = db_now(conn)
        try:
            left = (datetime.fromisoformat(str(row[0])) - now).total_seconds()
        except (TypeError, ValueError):  # not a time: no pause longer than its strikes'
            left = float("inf")
        return max(0.0, min(left, self._pause(int(row[1] or 0))))

    def strike(self) -> float:
        """Record a 429: the pause every worker on this model now waits (seconds)."""
        with self.jobs.engine.begin() as conn:
            row = conn.execute(sa.select(B.c.strikes, B.c.until).where(B.c.model == self.model)).first()
            strikes = (int(row[0]) if row else 0) + 1
            pause = self._pause(strikes)
            until = (db_now(conn) + timedelta(seconds=pause)).isoformat()
            if row is None:
                conn.execute(B.insert().values(model=self.model, until=until, strikes=strikes))
            else:
                conn.execute(B.update().where(B.c.model == self.model).values(until=until, strikes=strikes))
        return pause

    def clear(self) -> None:
        with self.jobs.engine.begin() as conn:
            conn.execute(B.update().where(B.c.model == self.model, B.c.strikes > 0).values(strikes=0))

    def call(self, *args: Any, **kwargs: Any) -> Any:
        for attempt in range(self.retries + 1):
            if (wait := self.pause_left()) > 0:
                time.sleep(wait)
            try:
                result = self.inner.call(*args, **kwargs)
            except Exception as exc:
                if not is_rate_limit(exc) or attempt == self.retries:
                    raise
                self.strike()
                continue
            self.clear()
            return result
        raise AssertionError("unreachable")
