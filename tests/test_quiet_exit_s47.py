"""A Ctrl-C while `taskcrew` is only ending (its command returned; the interpreter runs its exit
handlers and joins its threads) prints no traceback: the first one says the exit is under way and
lets it finish, a second one ends the process at once with the shell's Ctrl-C code. A real process
of the real entry point (`taskcrew.cli.main`), real signals; the exit handler that is slow to end
stands for a library's (a browser's, a thread pool's) that the user interrupts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SLOW_EXIT = """
import atexit, os, sys, time
from pathlib import Path
here = Path(sys.argv[1])
def slow() -> None:  # registered before main: runs after the command has returned
    (here / "exiting").write_text("1")
    for _ in range(1200):
        if (here / "go").exists():
            return
        time.sleep(0.05)
atexit.register(slow)
sys.argv = ["taskcrew", "--help"]
from taskcrew.cli import main
main()
"""


def _start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    err = tmp_path / "stderr.txt"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_EXIT, str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=err.open("wb"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    _until(lambda: (tmp_path / "exiting").exists(), proc)
    return proc, err


def _until(done: object, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60  # a safety net only
    while not done():  # type: ignore[operator]
        assert proc.poll() is None or done(), "the process ended early"  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_one_ctrl_c_while_exiting_says_so_and_lets_the_exit_finish(tmp_path: Path) -> None:
    proc, err = _start(tmp_path)
    proc.send_signal(signal.SIGINT)
    _until(lambda: "finishing its exit" in err.read_text(errors="replace"), proc)
    (tmp_path / "go").write_text("1")
    assert proc.wait(timeout=60) == 0  # --help's own code: the exit finished
    said = err.read_text(errors="replace")
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_second_ctrl_c_while_exiting_ends_at_once_without_a_traceback(tmp_path: Path) -> None:
    proc, err = _start(tmp_path)
    proc.send_signal(signal.SIGINT)
    _until(lambda: "finishing its exit" in err.read_text(errors="replace"), proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    said = err.read_text(errors="replace")
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
