"""A learned fact laundered through the chroma directory: a red-team round.

With the two-person rule on, ana may not accept a fact her own run proposed. But whoever can write
the chroma directory could change one value of the proposed row (its confidence 0.72 -> 0.71): its
record no longer checked out, so it read "of unknown origin" with its submitter dropped, and then
anyone might accept it — ana included; the store re-signed it as hers and planners read it. Now a
fact whose origin does not check out counts as proposed by a run whose submitter is not proven
(``identity.UNPROVEN_SUBMITTER``), as a routine whose authorship does not check out: while two people
decide, nobody may accept it (``Authority.proposal_refusal``), on the console or the CLI; rejecting
and forgetting it stay possible, and its words proposed again by a run are accepted as usual.

Real console over HTTP in-process, real users file, tokens, operator key and signed audit log, a real
Chroma directory under tmp.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_facts_redteam import Place, _accept_on_console, _flash
from typer.testing import CliRunner

from taskcrew.approvals.identity import UNPROVEN_SUBMITTER, TokenStore
from taskcrew.cli import app as cli
from taskcrew.knowledge import MiniLMEmbedder
from taskcrew.knowledge.facts import words_of

NORTHWIND = "Northwind Traders bank account is now GB33BUKB20201555555555."
NOBODY = "nobody may accept it"
runner = CliRunner()


@pytest.fixture
def office(
    isolated_home: Path, knowledge_embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Place]:
    """Three users (ana, bob, carol: the two-person rule is on, `two_person: auto`)."""
    monkeypatch.delenv("TASKCREW_RISK_RULES", raising=False)
    monkeypatch.delenv("TASKCREW_CONSOLE_RISK_RULES", raising=False)
    made = Place(isolated_home, knowledge_embedder, monkeypatch)
    yield made
    made.jobs.close()


def _rule_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from taskcrew.approvals.rules import DEFAULT_RULES

    lax = tmp_path / "lax.yaml"
    lax.write_text(DEFAULT_RULES.read_text(encoding="utf-8").replace("two_person: auto", 'two_person: "off"'))
    monkeypatch.setenv("TASKCREW_RISK_RULES", str(lax))


def _cli_accept(monkeypatch: pytest.MonkeyPatch, user: str, fact_id: str, text: str) -> str:
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue(user))
    done = runner.invoke(cli, ["knowledge", "facts", "accept", fact_id, "--words", words_of(text)])
    monkeypatch.delenv("TASKCREW_TOKEN")
    assert done.exit_code == 1, done.output
    return " ".join(done.output.split())


def test_a_fact_whose_record_was_edited_is_nobodys_to_accept_under_two_people(
    office: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = office.propose(NORTHWIND, run_id="run-ana-1", submitted_by="ana")
    ana, bob = office.client("ana"), office.client("bob")
    _accept_on_console(ana, fact.id)
    assert "ana submitted the run that proposed it" in _flash(ana)

    office.store.facts._collection.update(ids=[fact.id], metadatas=[{"confidence": 0.71}])  # the attack
    for client in (ana, bob):  # not its submitter, and not anyone else either: who that was is unknown
        _accept_on_console(client, fact.id)
        said = _flash(client)
        assert NOBODY in said and "of unknown origin" in said and "knowledge forget" in said, said
    said = _cli_accept(monkeypatch, "carol", fact.id, NORTHWIND)
    assert "refused" in said and NOBODY in said and "knowledge ingest" in said, said
    edited = office.store.facts.get(fact.id)
    assert edited is not None and edited.unverified and edited.status == "proposed"
    assert edited.submitted_by == UNPROVEN_SUBMITTER  # what the two-person rule judges it by
    assert "GB33BUKB" not in office.brief("Northwind Traders bank account")

    # a row whose signature is missing (as an earlier taskcrew wrote it) is judged the same way
    office.store.facts._collection.update(ids=[fact.id], metadatas=[{"record_sig": None}])
    _accept_on_console(bob, fact.id)
    assert NOBODY in _flash(bob)

    # rejecting stays possible, and a rejected row is still nobody's to accept (the store signs it
    # with its submitter not proven: rejecting does not launder it either)
    _accept_on_console(bob, fact.id, "reject")
    assert f"Rejected {fact.id}" in _flash(bob)
    rejected = office.store.facts.get(fact.id)
    assert rejected is not None and not rejected.unverified and rejected.status == "rejected"
    _accept_on_console(ana, fact.id)
    assert NOBODY in _flash(ana)
    assert office.store.facts.get(fact.id).status == "rejected"  # type: ignore[union-attr]

    # what the refusal says to do: forget it (a proven person: an OS user decides nothing here, s41),
    # and have a run propose the words again
    monkeypatch.setenv("TASKCREW_TOKEN", TokenStore().issue("carol"))
    assert runner.invoke(cli, ["knowledge", "forget", fact.id]).exit_code == 0
    again = office.propose(NORTHWIND, run_id="run-ana-2", submitted_by="ana")
    assert again.id == fact.id and again.submitted_by == "ana" and again.status == "proposed"
    _accept_on_console(ana, fact.id)
    assert "ana submitted the run that proposed it" in _flash(ana)
    _accept_on_console(bob, fact.id)
    assert office.store.facts.get(fact.id).decided_by == "console:bob"  # type: ignore[union-attr]
    assert "GB33BUKB" in office.brief("Northwind Traders bank account")


def test_with_the_rule_off_a_person_accepts_its_words_which_two_people_judge_again(
    office: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With the two-person rule off one person decides alone, as documented: she may accept the
    words of a fact of unknown origin. Once two people decide, that acceptance no longer counts
    (as for a fact from a run an operating-system user submitted): someone cannot tell who asked."""
    fact = office.propose(NORTHWIND, run_id="run-ana-1", submitted_by="ana")
    office.store.facts._collection.update(ids=[fact.id], metadatas=[{"confidence": 0.71}])
    _rule_off(monkeypatch, tmp_path)
    ana = office.client("ana")
    _accept_on_console(ana, fact.id)
    accepted = office.store.facts.get(fact.id)
    assert accepted is not None and (accepted.status, accepted.decided_by) == ("accepted", "console:ana")
    assert "GB33BUKB" in office.brief("Northwind Traders bank account")

    monkeypatch.delenv("TASKCREW_RISK_RULES")  # three users: the two-person rule is on again
    judged = office.store.facts.get(fact.id)
    assert judged is not None and judged.status == "proposed" and NOBODY in (judged.problem or "")
    assert "GB33BUKB" not in office.brief("Northwind Traders bank account")
