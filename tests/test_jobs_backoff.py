"""A 429 on one worker pauses every worker on that model (the pause lives in the job database)."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest

from taskcrew.jobs import Jobs, backoff
from taskcrew.jobs.backoff import SharedBackoff, is_rate_limit


class RateLimited(Exception):
    status_code = 429


class FlakyModel:
    """A scripted model: answers, after ``limited`` rate-limit errors."""

    def __init__(self, limited: int) -> None:
        self.limited = limited
        self.calls: list[float] = []

    def call(self, messages: object) -> str:
        self.calls.append(time.monotonic())
        if self.limited:
            self.limited -= 1
            raise RateLimited("Error code: 429 - rate limit exceeded")
        return "ok"


def test_a_429_backs_off_every_worker_on_that_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    real_sleep = time.sleep

    me = threading.get_ident()

    def sleep(seconds: float) -> None:  # time.sleep is global: count this thread's waits only
        if threading.get_ident() == me:
            waits.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(backoff.time, "sleep", sleep)
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    first_model, second_model, other_model = FlakyModel(limited=1), FlakyModel(0), FlakyModel(0)
    first = SharedBackoff(Jobs.open(url), "openai/gpt-x", first_model, base_s=1.5)
    second = SharedBackoff(Jobs.open(url), "openai/gpt-x", second_model, base_s=1.5)  # another worker
    other = SharedBackoff(Jobs.open(url), "anthropic/claude-y", other_model, base_s=1.5)
    assert first.strike() == 1.5 and second.pause_left() > 0.3  # one strike pauses all workers
    started = time.monotonic()
    assert other.call("hi") == "ok" and waits == []  # another model is not paused
    assert second.call("hi") == "ok" and second_model.calls[0] - started >= 0.3  # this one waited
    assert first.call("hi") == "ok"  # its own 429: backs off, retries
    assert first_model.calls[1] - first_model.calls[0] >= 0.55  # waited out the pause it set
    assert second.pause_left() == 0 and second.call("hi") == "ok"
    assert is_rate_limit(RateLimited()) and not is_rate_limit(ValueError("bad request"))


def test_a_non_rate_limit_error_is_not_retried(tmp_path: Path) -> None:
    class Broken:
        calls = 0

        def call(self, messages: object) -> str:
            Broken.calls += 1
            raise ValueError("invalid request")

    wrapped = SharedBackoff(Jobs.open(f"sqlite:///{tmp_path / 'j.sqlite3'}"), "m", Broken())
    with contextlib.suppress(ValueError):
        wrapped.call("hi")
    assert Broken.calls == 1 and wrapped.pause_left() == 0
