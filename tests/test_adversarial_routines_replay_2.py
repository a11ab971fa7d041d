"""Whose invoice a replay enters, and what counts as a clean replay: a red-team round.

1. A longer name is another company. With only Northwind Traders' template, a task for "Northwind
   Traders Logistics" got it (``models.named_like`` matched names whose words lead one another),
   Northwind's own INV-3001 (which mentions its sister company) was handed on as trusted, and the
   vendor drop-down chose "Northwind Traders" for the Logistics bill. Now a vendor gets a template
   or an option only when it is the same name, give or take case, punctuation and a legal form
   ("Northwind Traders Ltd", "Bharat Components Pvt. Ltd."); else the agent, told which names differ.
2. A replay the verifier rejected, reworked by the agent and then verified, was counted a clean
   replay (the fallback streak reset, no healed draft, no reflection). Now it is a fallback with
   the verifier's reason (``Replayer.result``), and the run learns as an agent run.
3. A newer invoice in a changed layout was passed over for an older one. Now an issuer's file the
   template cannot read, sent on or after the pick (or undated) and printing an invoice number of
   the issuer's kind that no document read has, hands the run to the agent naming it.

Real e-mails through the real reader over a copy of the demo inbox; no model is asked.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_adversarial_routine_issuers import LOGISTICS, NWT, NWT_MENTIONING_LOGISTICS, _logistics_mail
from test_routines import INBOX, _routine, _template

from taskcrew.routines import hooks
from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import Template
from taskcrew.routines.replay import Fallback, Replayer, choose_option, no_option
from taskcrew.routines.store import RoutineStore
from taskcrew.tools.files import SandboxFiles


@pytest.fixture(scope="module")
def northwind() -> Template:
    return _template(SandboxFiles(INBOX), "INV-2057", NWT)


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    copied = tmp_path / "inbox"
    shutil.copytree(INBOX, copied)
    return copied


# ---------------------------------------------------------------- 1. a longer name is another company


def test_a_longer_name_never_gets_the_shorter_issuers_template_or_invoice(
    inbox: Path, northwind: Template
) -> None:
    routine = _routine(northwind)  # as first learned: Northwind's template only
    assert routine.template_for(LOGISTICS) is None
    assert routine.template_for("Northwind Traders Ltd") is northwind  # a legal form: the same name
    (inbox / "Invoice LOG-77.eml").write_text(
        _logistics_mail("LOG-77", "Fri, 25 Sep 2026 08:02:11 -0700", "September 25, 2026"), encoding="utf-8"
    )
    (inbox / "Invoice INV-3001.eml").write_text(NWT_MENTIONING_LOGISTICS, encoding="utf-8")
    with pytest.raises(FileStepFailed) as fell:
        find_document(routine, {"vendor": LOGISTICS}, SandboxFiles(inbox))
    said = str(fell.value)
    assert f"{LOGISTICS!r} is not {NWT!r}" in said and "logistics" in said, said
    assert fell.value.new_issuer  # a new issuer for the routine: growth, the agent adds its template
    # the replay hands the run to the agent before any file is read for Logistics
    ctx = SimpleNamespace(toolbox=SimpleNamespace(files=SandboxFiles(inbox)))
    with pytest.raises(Fallback, match="no extraction template for 'Northwind Traders Logistics'"):
        Replayer(routine, {"vendor": LOGISTICS})._files(ctx, state=None)


class _Options:
    def __init__(self, *labels: str) -> None:
        self.field = SimpleNamespace(
            options=[SimpleNamespace(label=x, value=str(i)) for i, x in enumerate(labels)]
        )


def test_the_vendor_drop_down_never_chooses_another_companys_name() -> None:
    erp = _Options("Initech", NWT, "Bharat Components Pvt. Ltd.", "Globex Corp")
    assert choose_option(erp, LOGISTICS) is None
    assert "'Northwind Traders Logistics' is not 'Northwind Traders'" in no_option(erp, LOGISTICS)
    assert choose_option(erp, "Northwind") is None
    # the same name, in the ERP's full legal form, is still chosen
    assert choose_option(erp, "Bharat Components") == "Bharat Components Pvt. Ltd."
    assert choose_option(erp, "GLOBEX") == "Globex Corp"
    assert choose_option(erp, "Northwind Traders Ltd") == NWT


# ---------------------------------------------------------------- 2. a reworked replay is a fallback


def _after_run(tmp_path: Path, northwind: Template, verdicts: list[bool]) -> tuple[Any, str, RoutineStore]:
    store = RoutineStore(tmp_path / "routines")
    flagged = _routine(northwind).model_copy(
        update={"status": "accepted", "fallbacks": 2, "fallbacks_in_a_row": 2, "last_fallback": "x"}
    )
    store.save(flagged)
    replayer = Replayer(flagged, {"vendor": NWT})
    replayer.outcome = "replayed"  # every step matched; then the verifier's verdicts, in order
    state = SimpleNamespace(
        outcome="done",
        outcome_reason="confirmed",
        verdicts=[
            SimpleNamespace(verified=v, reason="the bill's amount is 1,248.50, the invoice prints 1,284.50")
            for v in verdicts
        ],
    )
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ctx = SimpleNamespace(run_dir=run_dir, toolbox=SimpleNamespace(files=None), submitted_by="ana")
    hooks.after_run(ctx, state, hooks.Attached(match=SimpleNamespace(), replayer=replayer, store=store))
    assert replayer.result(state)[0] == ("replayed" if verdicts[0] else "fell_back")  # what the Flow asks
    return store.get("enter-invoice", 1), (run_dir / hooks.NOTE_FILE).read_text(), store


def test_a_replay_the_verifier_rejected_and_the_agent_reworked_is_a_fallback(
    tmp_path: Path, northwind: Template
) -> None:
    after, note, _ = _after_run(tmp_path, northwind, [False, True])
    assert (after.successes, after.fallbacks, after.fallbacks_in_a_row) == (0, 3, 3) and after.flagged
    assert after.last_fallback.startswith("the independent verifier did not confirm the replay: the bill's")
    assert "fell_back" in note and "FLAGGED" in note, note
    # learned from as an agent run (this run folder has no trace to learn from: it says so)
    assert "no routine learned from this run" in note, note


def test_a_replay_the_verifier_confirmed_is_still_clean(tmp_path: Path, northwind: Template) -> None:
    after, note, store = _after_run(tmp_path, northwind, [True])
    assert (after.successes, after.fallbacks, after.fallbacks_in_a_row) == (1, 2, 0)
    assert "replayed" in note and "learned" not in note, note
    assert store.versions("enter-invoice") == [after]


# ---------------------------------------------------------------- 3. a newer invoice in a new layout

NEW_LAYOUT = """Date: {date}
From: Northwind Traders Billing <billing@northwind-traders.example>
To: ap@acme-corp.example
Subject: Invoice INV-3001 from Northwind Traders
MIME-Version: 1.0
Content-Type: text/plain; charset="utf-8"

Northwind Traders - our invoices have a new look!

Invoice # INV-3001
Issued on October 1, 2026
Payment terms Net 30
Net 1,650.00 USD
Sales tax 330.00 USD
Amount due 1,980.00 USD
"""


def test_a_newer_invoice_the_template_cannot_read_is_not_passed_over(
    inbox: Path, northwind: Template
) -> None:
    path = inbox / "Invoice INV-3001 from Northwind Traders.eml"
    path.write_text(NEW_LAYOUT.format(date="Thu, 01 Oct 2026 09:14:00 +0000"), encoding="utf-8")
    with pytest.raises(FileStepFailed) as fell:
        find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    said = str(fell.value)
    assert said.startswith(f"{path.name} is Northwind Traders's, sent 2026-10-01, and prints INV-3001"), said
    assert "newer invoice than INV-2057" in said and not fell.value.new_issuer
    # the same e-mail sent before the newest invoice the template reads cannot be newer: not asked
    path.write_text(NEW_LAYOUT.format(date="Thu, 03 Sep 2026 09:14:00 +0000"), encoding="utf-8")
    found = find_document(_routine(northwind), {"vendor": NWT}, SandboxFiles(inbox))
    assert found.values["invoice_number"] == "INV-2057" and found.stranger is None
