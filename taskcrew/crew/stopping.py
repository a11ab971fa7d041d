"""Clean interrupts: SIGINT/SIGTERM end a run with a report instead of killing it mid-sentence.

Python only handles signals on the main thread, and a crewAI Flow blocks it for the whole run. So
``call_interruptibly`` runs the work on a worker thread and keeps the main thread free: a signal makes
it raise ``RunInterrupted`` there, where the caller writes the report (outcome ``interrupted``) and
closes what it opened. The worker thread is a daemon and is abandoned; crewAI's own threads may not
end on their own, so a command line process ends with ``exit_now`` once its cleanup is done.

Small API, meant to be reused (durable jobs stop their runs the same way):

    try:
        result = call_interruptibly(work)
    except RunInterrupted as stop:
        ...  # stop.signal_name is "SIGINT" or "SIGTERM"

The abandoned thread keeps going until its call in flight returns, so whatever it would write after
the caller wrote the report goes through the run's ``Seal``: the first account to be finished is the
one that stands; later ones, and later writes to it, are no-ops.
"""

from __future__ import annotations

import contextvars
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from taskcrew.tools.prompt_input import stop_asked

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_INTERRUPTED = 130  # the shell's code for "ended by Ctrl-C"


def stop_signals() -> tuple[signal.Signals, ...]:
    """What stops a run or a worker: SIGTERM always; SIGINT (Ctrl-C) and SIGHUP (its terminal hung
    up) unless the process was started ignoring them (``nohup``; a non-interactive shell's ``&``
    starts a command with SIGINT ignored): it is meant to outlive its terminal, and a handler of our
    own would undo that."""
    asked = (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None))
    return tuple(
        s
        for s in asked
        if s is not None and (s == signal.SIGTERM or signal.getsignal(s) is not signal.SIG_IGN)
    )


class RunInterrupted(BaseException):  # like KeyboardInterrupt: not an Exception
    """The user (SIGINT) or the system (SIGTERM) asked the run to stop."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        super().__init__(f"stopped by {self.signal_name}")


class RunStopped(BaseException):  # not an Exception: nothing on the way catches it as a failure
    """The run's job is no longer its own (cancelled, taken over, handed back: ``jobs.runner.Stopped``):
    ``run_task`` ends its account as an interrupt's (outcome ``interrupted``, what it changed, its
    report) and raises it again with ``result``, the finished ``RunResult``, for the job's runner."""

    result: Any = None
    ends_run = True  # False: the run is handed on as it is (a worker stopping: the next leg goes on)


class _Handlers:
    """The handlers of ``signals`` while a block runs, and the process's own put back after it."""

    def __init__(self, signals: tuple[signal.Signals, ...], handler: Callable[[int, Any], None]) -> None:
        self.previous = {s: signal.signal(s, handler) for s in signals}

    def restore(self) -> None:
        for s, h in self.previous.items():
            signal.signal(s, h)


@contextmanager
def signals_raise(
    signals: tuple[signal.Signals, ...] = SIGNALS, on_signal: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Inside the block, SIGINT/SIGTERM raise RunInterrupted on the main thread (so ``finally``
    clauses run: temp folders are removed). ``on_signal(name)`` is told first, in the handler, before
    any other thread runs on (a run seals its stop: ``Seal.stop``). A no-op off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        handlers.restore()  # a second signal gets the default behaviour
        if on_signal is not None:
            on_signal(signal.Signals(signum).name)
        stop_asked.set()  # a prompt waiting on another thread gives up (``tools.prompt_input``)
        raise RunInterrupted(signum)

    stop_asked.clear()
    handlers = _Handlers(signals, handler)
    try:
        yield
    finally:
        handlers.restore()


@contextmanager
def signals_deferred(signals: tuple[signal.Signals, ...] = SIGNALS) -> Iterator[None]:
    """Inside the block, a first SIGINT/SIGTERM waits for its end: a change a command makes in
    several writes (the job database, the signed audit log, the workers' queue) is not cut half-way
    by a Ctrl-C. As the block ends, the signal is delivered again with the handlers the process had
    (Ctrl-C: KeyboardInterrupt; SIGTERM: the process ends). A second signal meanwhile is not held
    back: the person who presses Ctrl-C again means it. A no-op off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if held:  # the second one: at once, as the process would have taken the first
            handlers.restore()
            signal.raise_signal(signum)
        held.append(signum)

    handlers = _Handlers(signals, handler)
    try:
        yield
    finally:
        handlers.restore()
        if held:
            signal.raise_signal(held[0])


def call_interruptibly(
    work: Callable[[], T],
    signals: tuple[signal.Signals, ...] = SIGNALS,
    on_signal: Callable[[str], None] | None = None,
) -> T:
    """``work()`` on a worker thread; a signal raises RunInterrupted here without waiting for it
    (``on_signal``: see ``signals_raise``)."""
    if threading.current_thread() is not threading.main_thread():
        return work()  # only the main thread gets signals: nothing to listen for
    done = threading.Event()
    box: dict[str, Any] = {}
    context = contextvars.copy_context()  # the worker sees the caller's context variables

    def target() -> None:
        try:
            box["result"] = context.run(work)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    with signals_raise(signals, on_signal):
        thread = threading.Thread(target=target, name="taskcrew-run", daemon=True)
        thread.start()
        while not done.wait(0.2):
            pass
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result


class Seal:
    """A run's account (its outcome, verdicts, report, what it returns) is finished once.

    Every write to the account happens inside ``open()``, which yields False once the account is
    sealed: the write is then skipped. ``close(account)`` seals it (inside ``open()``), keeping the
    finished account, the one that stands. The lock is held for a whole write, so a write from a
    thread abandoned at an interrupt either lands before the seal (and is in the account) or not at
    all. Re-entrant: a write may call another write.

    A stop (``stop(ending)``: a signal, a prompt nobody answered) closes the account to every write
    at once, before it is finished: the only write left is finishing it (``finishing``) with the
    stop's ending, by whichever thread gets there — the interrupted ending cannot be overtaken,
    also when the caller's own finishing is cut short (a second Ctrl-C) and the abandoned thread
    goes on: its verdicts, outcomes and checkpoints are no-ops, its finish seals the stop's ending."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._account: Any = None
        self._sealed = False
        self._stopping: Any = None  # the ending a stop gave the run

    def stop(self, ending: Any) -> Any:
        """The run is being stopped with ``ending``; returns the stop that stands (the first).
        Without the lock (a signal handler calls it, and a write may hold the lock): a write already
        under way lands, none starts after it."""
        if self._stopping is None:
            self._stopping = ending
        return self._stopping

    @property
    def stopping(self) -> Any:
        """The stop's ending (None: not stopped)."""
        return self._stopping

    @classmethod
    def of(cls, run: Any) -> Seal:
        """The seal kept on ``run`` (the run context), made on first use."""
        kept = getattr(run, "seal", None)  # RunContext.seal
        if isinstance(kept, Seal):
            return kept
        seal: Seal = vars(run).setdefault("_seal", cls())  # another run-like object: one atomic step
        return seal

    @property
    def account(self) -> Any:
        """The finished account (None while it is open)."""
        return self._account

    @contextmanager
    def open(self) -> Iterator[bool]:
        """Hold the account for one write; yields whether it may still be written to (not once the
        run is stopping: only ``finishing`` writes then)."""
        with self._lock:
            yield not self._sealed and self._stopping is None

    @contextmanager
    def finishing(self) -> Iterator[bool]:
        """Hold the account to finish it; yields whether it is still open (a stop included)."""
        with self._lock:
            yield not self._sealed

    def close(self, account: Any) -> None:
        with self._lock:
            if not self._sealed:
                self._account, self._sealed = account, True


def exit_now(code: int = EXIT_INTERRUPTED) -> None:
    """End the process at once (after cleanup): abandoned crewAI threads would keep it alive."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def quiet_exit() -> None:
    """From here on the process is only ending (the command has returned): a Ctrl-C meanwhile — while
    the interpreter joins its threads and runs its exit handlers — prints no traceback. The first one
    says the exit is under way and lets it finish (what a handler closes or writes is not cut); a
    second one ends the process at once (``exit_now``). A no-op off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    pressed: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if pressed:
            exit_now()
        pressed.append(signum)
        with suppress(OSError, ValueError):
            sys.stderr.write("\ntaskcrew is finishing its exit; press Ctrl-C again to leave at once\n")
            sys.stderr.flush()

    with suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, handler)
