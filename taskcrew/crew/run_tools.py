"""Tools that belong to the run itself: run notes and asking the person in charge."""

from __future__ import annotations

from typing import Any

from crewai.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field

MAX_NOTES = 50
NOTES_ECHOED = 12


class NoteArgs(BaseModel):
    text: str = Field(min_length=1, max_length=500, description="A fact worth keeping for later steps")


class NoteTool(BaseTool):
    """Run notes: short facts later steps will see (bounded; the oldest are dropped)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "note"
    description: str = (
        "Save a short note for the rest of this run (a value you found, a quote, a decision, a "
        "problem). Older tool results are shortened as you work; notes are not: the reply lists "
        "all your recent notes, and later steps see them too."
    )
    args_schema: type[BaseModel] = NoteArgs
    notes: Any = Field(exclude=True, description="the run's notes list, appended in place")

    @classmethod
    def private(cls, notes: Any) -> NoteTool:
        """The verifier's own notes: kept for this verification only, seen by nobody else."""
        return cls(
            notes=notes,
            description=(
                "Save a short note for yourself during this verification (a quote or a value you will "
                "compare). Older tool results are shortened as you work; notes are not: the reply lists "
                "your recent notes. Nobody else sees them, and they change nothing."
            ),
        )

    def _run(self, text: str) -> str:
        self.notes.append(text.strip())
        del self.notes[:-MAX_NOTES]
        recent = "\n".join(f"- {note}" for note in self.notes[-NOTES_ECHOED:])
        return f"Noted ({len(self.notes)} notes in this run). Your recent notes:\n{recent}"


class AskArgs(BaseModel):
    question: str = Field(min_length=3, max_length=1000, description="One clear question for the person")


class AskUserTool(BaseTool):
    """Ask the person in charge; their answer comes back as the tool result."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "ask_user"
    description: str = (
        "Ask the person who gave you the task a question when the request is ambiguous or "
        "information is missing. Returns their answer. Do not use it for approvals: when you submit a "
        "change, the person is shown its exact values and asked to approve it before it is sent."
    )
    args_schema: type[BaseModel] = AskArgs
    human: Any = Field(exclude=True)

    def _run(self, question: str) -> str:
        answer = self.human.ask(question).strip()
        return f"The person answered: {answer}" if answer else "The person gave no answer."
