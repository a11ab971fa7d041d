"""The terminal approval, in a real pseudo-terminal, and with the input closed (cron, a pipe)."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SCRIPT = """
from taskcrew.tools.human import ApprovalRequest, FieldValue, TerminalHuman
from taskcrew.tools.prompt_input import NoAnswer
human = TerminalHuman()
request = ApprovalRequest(kind="form_submission", method="POST", url="http://erp/bills/new",
                          fields=[FieldValue(name="amount", value="99.90")])
for _ in range(2):
    try:
        decision = human.approve(request)
    except NoAnswer as none:
        print("NO ANSWER", none.why, flush=True)
    else:
        print("DECISION", decision.outcome, decision.text, flush=True)
try:
    print("ASK", repr(human.ask("which vendor?")), flush=True)
except NoAnswer as none:
    print("ASK NO ANSWER", none.why, flush=True)
"""


def read_until(fd: int, marker: str, timeout: float = 20.0) -> str:
    out, deadline = "", time.monotonic() + timeout
    while marker not in ANSI.sub("", out) and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                out += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    return ANSI.sub("", out)


def test_the_prompt_reads_right_in_a_real_terminal() -> None:
    leader, follower = os.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdin=follower, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    try:
        first = read_until(leader, "(n):")
        assert "Approve? y = yes, send it / n = no / a = answer with a message instead" in first
        assert "[y/n/a] (n):" in first and "amount" in first and "99.90" in first
        os.write(leader, b"y\n")
        second = read_until(leader, "(n):")
        assert "DECISION approve None" in second
        os.write(leader, b"n\n")
        rest = read_until(leader, "Reason")
        os.write(leader, b"wrong vendor\n")
        rest += read_until(leader, "Your answer")
        os.write(leader, b"Northwind\n")
        rest += read_until(leader, "ASK 'Northwind'")
        assert "DECISION reject wrong vendor" in rest and "ASK 'Northwind'" in rest
        assert "which vendor?" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=20)
        os.close(leader)


def test_closed_input_is_no_answer_asked_once() -> None:
    """With the input closed nobody can answer: that is no decision (``NoAnswer``, which ends the
    run interrupted), never a rejection in the person's name; and nothing is asked again."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("\nNO ANSWER nobody could be asked: the terminal input is closed") == 2
    assert "DECISION" not in out
    assert out.count("Approval needed") == 1  # not asked again once the input is known to be closed
    assert "ASK NO ANSWER nobody could be asked" in out and "EOFError" not in out + done.stderr
