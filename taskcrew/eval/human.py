"""The simulated person of an eval case: answers from the case's HumanScript, records everything.

Unlike the tests' ScriptedHuman it never fails: approvals follow the script's policy, questions get
the scripted answers in order and then the default answer. What it was asked is what the graders
read ("did the agent ask?") and what the sweep counts ("approvals asked").
"""

from __future__ import annotations

import threading
from collections import deque

from taskcrew.eval.models import HumanScript
from taskcrew.tools.human import ApprovalDecision, ApprovalRequest

REJECTION_NOTE = "I do not approve this change."


class CaseHuman:
    """Implements taskcrew.tools.human.Human for one eval run."""

    def __init__(self, script: HumanScript) -> None:
        self.script = script
        self._answers: deque[str] = deque(script.answers)
        self._lock = threading.Lock()
        self.requests: list[ApprovalRequest] = []
        self.questions: list[str] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        with self._lock:
            self.requests.append(request)
        if self.script.approvals == "reject":
            return ApprovalDecision.reject(REJECTION_NOTE)
        return ApprovalDecision.approve()

    def ask(self, question: str) -> str:
        with self._lock:
            self.questions.append(question)
            return self._answers.popleft() if self._answers else self.script.default_answer
