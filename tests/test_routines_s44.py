"""A save with more fields than a routine reviews is not learned, and says so.

A line-item grid can send more than ``SENDS_MOST`` field names in one save. Before, ``Sends`` refused
them with a pydantic ValidationError that the learning hook caught as "nothing learned
(ValidationError: …)"; now the distiller says why in words and what to do.
"""

from __future__ import annotations

import pytest

from taskcrew.routines.distil import DistilError, _sends
from taskcrew.routines.models import SENDS_MOST
from taskcrew.routines.recording import ActRecord


def _save(fields: int) -> ActRecord:
    return ActRecord(
        action={"action": "click"},
        decisions=[("approved", "POST", "http://127.0.0.1:8800/bills/new")],
        sent_fields=[[f"line_{i}" for i in range(fields)]],
    )


def test_a_save_of_as_many_fields_as_a_routine_reviews_is_learned() -> None:
    sends = _sends(_save(SENDS_MOST))
    assert sends is not None and len(sends.fields) == SENDS_MOST


def test_a_save_of_more_fields_is_not_learned_and_says_why() -> None:
    with pytest.raises(DistilError, match=rf"sent {SENDS_MOST + 1} fields.*at most {SENDS_MOST}"):
        _sends(_save(SENDS_MOST + 1))
