# ruff: noqa: F811 — `office` is the fixture imported from test_facts_authority_s41
"""Session 41: what the knowledge ingest records is what it stores; first-use seeding takes only the
shipped handbook from anyone; a risk-rules key written twice in two spellings is refused.

1. An ingest hashes each file once, first; the signed ``knowledge_ingest`` entry names that SHA-256
   and only chunks of bytes with it are stored: a file changed after the entry was written (here:
   while the file before it was ingested) is skipped, nothing of it stored, and the output says so.
2. An empty store is seeded from ``$TASKCREW_SANDBOX/company_context.md`` as anyone only when that
   file is the handbook taskcrew ships (same bytes); any other is seeded only for an identity an
   ingest would take it from (not an OS user under the two-person rule), else a line says why.
3. ``usd:`` under ``USD:`` in ``amount_thresholds`` is the same currency: refused, naming both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures_knowledge import write_pdf
from test_facts_authority_s41 import IBAN, WORDS, _as, _ingests, office  # noqa: F401
from test_facts_redteam import Place
from typer.testing import CliRunner

from taskcrew.approvals.identity import Identity, cli_identity, os_user
from taskcrew.approvals.rules import DEFAULT_RULES, RiskRulesError, load_rules
from taskcrew.cli import app as cli
from taskcrew.config import DEFAULT_SANDBOX
from taskcrew.knowledge import KnowledgeStore, MiniLMEmbedder
from taskcrew.knowledge.bootstrap import HANDBOOK_NAME, seed_if_empty
from taskcrew.knowledge.bootstrap import ingest_as as ingest
from taskcrew.knowledge.models import FileIngest

BENIGN = "# Vendor notes\n\n## Initech\n\nInitech invoices are paid by bank transfer.\n"
EVIL = "# Vendor notes\n\n## Vandelay Industries\n\n" + WORDS + "\n"


@pytest.fixture
def empty_store(tmp_path: Path, knowledge_embedder: MiniLMEmbedder) -> KnowledgeStore:
    return KnowledgeStore(tmp_path / "fresh-store", knowledge_embedder)


def _write(path: Path, text: str) -> None:
    """``text`` as markdown or plain text (streamed by the ingest), or as a real PDF (parsed whole)."""
    if path.suffix == ".pdf":
        write_pdf(path, [text.replace("#", "")])
    else:
        path.write_text(text)


def _stored_text(store: KnowledgeStore) -> str:
    return " ".join(
        str(d) for d in store.procedures._collection.get(include=["documents"])["documents"] or []
    )


# ---- 1. the audit entry's hash is of the bytes stored ----------------------------------------------
@pytest.mark.parametrize("suffix", [".md", ".txt", ".pdf"])
def test_a_file_changed_after_its_hash_was_recorded_is_not_stored(
    office: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suffix: str
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    first = folder / f"a_notes{suffix}"
    _write(first, "# A\n\n## Acme\n\nAcme invoices are paid monthly.\n")
    second = folder / f"b_notes{suffix}"
    _write(second, BENIGN)
    _as(monkeypatch, "bob")

    def swap(result: FileIngest) -> None:  # the second file changes after the entry was signed
        if result.path == str(first):
            _write(second, EVIL)

    report = ingest(office.store, [first, second], cli_identity(), on_file=swap)
    entry = [e for e in _ingests() if not e.payload.get("seeding")][-1]
    logged = {Path(f["file"]).name: f["sha256"] for f in entry.payload["files"]}
    stored = office.store.procedures._collection.get(
        where={"source": str(second.resolve())}, include=["metadatas"]
    )["metadatas"]
    assert not stored or {m["file_sha256"] for m in stored} == {logged[second.name]}
    assert IBAN not in _stored_text(office.store)
    assert IBAN not in office.brief("Enter the new Vandelay Industries bill")
    line = next(f for f in report.files if f.path == str(second))
    assert line.status == "skipped" and "changed after this ingest hashed it" in (line.message or "")
    assert next(f for f in report.files if f.path == str(first)).status == "added"


# ---- 2. first-use seeding ------------------------------------------------------------------------
def test_an_os_user_seeds_no_other_handbook_under_the_two_person_rule(
    office: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for source in office.store.procedures.sources():  # every document removed: the store is empty
        ids = office.store.procedures._collection.get(where={"source": source}, include=[])["ids"]
        office.store.procedures._collection.delete(ids=ids)
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / HANDBOOK_NAME).write_text(EVIL)
    _as(monkeypatch, None)
    monkeypatch.setenv("TASKCREW_SANDBOX", str(evil))
    out = CliRunner().invoke(cli, ["knowledge", "ingest", str(evil / HANDBOOK_NAME)]).output
    said = " ".join(out.split())
    assert "was not seeded with" in said and "not the handbook taskcrew ships" in said, said
    assert "personal token" in said
    assert IBAN not in _stored_text(office.store)
    assert IBAN not in office.brief("Enter the new Vandelay Industries bill")


def test_another_handbook_is_seeded_for_a_proven_identity(
    office: Place, empty_store: KnowledgeStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / HANDBOOK_NAME).write_text(BENIGN)
    lines: list[str] = []
    unproven = Identity(name=os_user(), proof="os_user")
    assert seed_if_empty(empty_store, sandbox, who=unproven, say=lines.append) is None
    assert len(lines) == 1 and "ingest it with a personal token" in lines[0]
    assert empty_store.is_empty()
    _as(monkeypatch, "bob")
    seeded = seed_if_empty(empty_store, sandbox, who=cli_identity())
    assert seeded is not None and seeded.count("added") == 1
    assert [e.payload.get("seeding") for e in _ingests()][-1]  # recorded as the seeding, by bob
    assert _ingests()[-1].who == "bob"


def test_the_shipped_handbook_is_seeded_as_anyone(
    office: Place, empty_store: KnowledgeStore, tmp_path: Path
) -> None:
    sandbox = tmp_path / "demo"
    sandbox.mkdir()
    shutil.copyfile(DEFAULT_SANDBOX / HANDBOOK_NAME, sandbox / HANDBOOK_NAME)  # same bytes, elsewhere
    seeded = seed_if_empty(empty_store, sandbox, who=Identity(name=os_user(), proof="os_user"))
    assert seeded is not None and seeded.count("added") == 1
    (sandbox / HANDBOOK_NAME).write_text(  # one word changed: no longer the shipped handbook
        (DEFAULT_SANDBOX / HANDBOOK_NAME).read_text(encoding="utf-8") + "\nOne more line.\n"
    )
    other = KnowledgeStore(tmp_path / "other-store", empty_store.embedder)
    assert seed_if_empty(other, sandbox, say=lambda _: None) is None and other.is_empty()


# ---- 3. risk rules: one key, two spellings ---------------------------------------------------------
def test_a_threshold_written_twice_in_another_case_is_refused(tmp_path: Path) -> None:
    text = DEFAULT_RULES.read_text(encoding="utf-8")
    assert '  USD: "5000.00"\n' in text
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace('  USD: "5000.00"\n', '  USD: "5000.00"\n  usd: "99999999"\n', 1))
    with pytest.raises(RiskRulesError) as refused:
        load_rules(path)
    said = str(refused.value)
    assert "amount_thresholds" in said and "written twice" in said
    assert "'USD'" in said and "'usd'" in said
