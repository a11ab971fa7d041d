"""The terminal's answer to a prompt, read so that a stop (Ctrl-C, SIGTERM) ends the wait.

The approval prompt waits on the browser's thread (the gate asks before a request leaves), while
signals go to the main thread (``crew.stopping``). A plain ``input()`` there would wait for ever
after a Ctrl-C: the run's report needs the browser, whose thread is still in the prompt. So the
prompt reads the terminal a line at a time, polling; ``stop_asked`` (set by the signal handler)
ends the wait with ``PromptStopped``. Nobody answered: the prompt raises ``NoAnswer`` (never a
refusal in the person's name), nothing is sent, and the run ends ``interrupted``.
"""

from __future__ import annotations

import os
import select
import threading

stop_asked = threading.Event()  # set by ``crew.stopping`` when a stop signal arrives


class PromptStopped(Exception):
    """A stop was asked while the prompt waited: nobody answered."""


class NoAnswer(BaseException):  # like ``jobs.human.Parked``: not an error, an ending
    """A prompt ended without the person's answer: a stop (Ctrl-C, SIGTERM), the input closed, the
    terminal hung up. Nobody decided anything, so it is no decision: raised out of the human's
    ``approve``/``ask`` (``tools.human.TerminalHuman``), it unwinds the run as ``jobs.human.Parked``
    does (a ``BaseException``: no tool, no step and no gate takes it for an answer), nothing is sent,
    and the run ends ``interrupted`` (``crew.run.run_task``); a retry asks again. ``why`` says
    which stop it was."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class TerminalLines:
    """The terminal's input as rich's ``Prompt`` reads a stream (``readline``), giving up when a stop
    is asked. End of input is ``EOFError``, as ``input()`` says it."""

    POLL_S = 0.2

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._pending = b""

    def readline(self) -> str:
        poller = select.poll()  # not select.select: a process past 1,024 descriptors makes it raise
        poller.register(self._fd, select.POLLIN)
        while b"\n" not in self._pending:
            if stop_asked.is_set():
                raise PromptStopped
            if poller.poll(self.POLL_S * 1000):
                try:
                    chunk = os.read(self._fd, 4096)
                except OSError as exc:  # EIO: the terminal hung up — no more input, as at its end
                    raise EOFError(str(exc)) from exc
                if not chunk:
                    raise EOFError
                self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"
