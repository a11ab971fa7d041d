"""A routine's file rule ("the issuer's newest invoice by printed date") against files it cannot
read: a red-team round.

The rule picked the newest invoice among the files it could read and said nothing of the others:
a file naming the issuer that the search could not open (permission denied, a damaged PDF) was
left out of the search's hits, one that could not be read after the search was skipped, and an
issuer's e-mail whose invoice PDF was damaged read as no invoice at all. With the newest invoice's
file unreadable, the replay entered an older invoice — one already entered, or not the one due —
without a word. Now a file naming the issuer that cannot be read (by its text, or by its name when
the search could not open it) stops the file work: the run goes to the agent, the reason names the
file and says what to do. A damaged file that names no issuer (the demo's `downloads/invoice
(3).pdf`) is what the agent's own answer key treats as no one's: it does not stop the rule.

Real files (a copy of the demo inbox), the real reader and templates learned from the demo inbox.
"""

from __future__ import annotations

import errno
from email.message import EmailMessage
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_routines import INBOX, _routine

from taskcrew.routines.files import FileStepFailed, find_document
from taskcrew.routines.models import DocumentRule, Routine, Template
from taskcrew.routines.replay import Fallback, Replayer
from taskcrew.tools.documents import reader
from taskcrew.tools.files import SandboxFiles

NORTHWIND = {"vendor": "Northwind Traders"}
NEWEST = ("Invoice from Northwind Traders.eml", "FW_ Invoice from Northwind Traders.eml")  # INV-2057
DAMAGED = (INBOX / "downloads" / "invoice (3).pdf").read_bytes()  # the first part of a PDF


def _by_number(template: Template) -> Routine:
    return _routine(
        template,
        params=["vendor", "invoice"],
        documents=DocumentRule(search="{vendor}", choose="by_number", number_param="invoice"),
    )


def _refused(routine: Routine, params: dict[str, str], files: Any) -> str:
    with pytest.raises(FileStepFailed) as stopped:
        find_document(routine, params, files)
    assert not stopped.value.new_issuer  # not growth: the rule cannot be decided
    return str(stopped.value)


def test_the_newest_invoice_that_cannot_be_opened_is_not_replaced_by_an_older_one(
    inbox: Path, northwind: Template, monkeypatch: pytest.MonkeyPatch
) -> None:
    """INV-2057's e-mail and its forward cannot be opened (permission denied: the reader's own
    error for EACCES). Before, the search left them out and the rule entered INV-2031, August's
    invoice, already paid. Now the file work stops and names both files and why."""
    assert find_document(_routine(northwind), NORTHWIND, SandboxFiles(inbox)).values["invoice_number"] == (
        "INV-2057"
    )
    opener = reader._nonblocking_opener

    def denied(path: str, flags: int) -> int:
        if Path(path).name in NEWEST:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return opener(path, flags)

    monkeypatch.setattr(reader, "_nonblocking_opener", denied)
    files = SandboxFiles(inbox)
    assert {u.split(" (")[0] for u in files.search("Northwind Traders").unreadable} >= set(NEWEST)
    reason = _refused(_routine(northwind), NORTHWIND, files)
    for name in NEWEST:
        assert f"{name} ('{name}' cannot be opened (Permission denied))" in reason, reason
    assert "Northwind Traders's newest invoice" in reason and "read permission" in reason, reason
    assert "INV-2031" not in reason
    by_number = _refused(_by_number(northwind), {**NORTHWIND, "invoice": "INV-2031"}, files)
    assert "the invoice whose number the task gives" in by_number, by_number


def test_a_damaged_pdf_named_for_the_issuer_stops_the_rule(inbox: Path, northwind: Template) -> None:
    """A broken download of Northwind's next invoice, its name naming Northwind: the search cannot
    read it, so it had no hit and the rule entered INV-2057 as the newest."""
    (inbox / "downloads" / "Northwind Traders INV-2060.pdf").write_bytes(DAMAGED)
    reason = _refused(_routine(northwind), NORTHWIND, SandboxFiles(inbox))
    assert "downloads/Northwind Traders INV-2060.pdf (damaged file)" in reason, reason
    assert "1 file(s) naming 'Northwind Traders' cannot be read" in reason, reason


def _issuer_mail_with_a_damaged_pdf() -> bytes:
    msg = EmailMessage()
    msg["From"] = "Northwind Traders Billing <billing@northwind-traders.example>"
    msg["To"] = "ap@acme-corp.example"
    msg["Subject"] = "Invoice INV-2060 from Northwind Traders"
    msg["Date"] = "Fri, 02 Oct 2026 09:00:00 -0700"
    msg.set_content("Hello,\n\nplease find attached our invoice INV-2060.\n\nNorthwind Traders\n")
    msg.add_attachment(DAMAGED, maintype="application", subtype="pdf", filename="INV-2060.pdf")
    return msg.as_bytes()


def test_an_issuers_mail_whose_invoice_pdf_is_damaged_stops_the_rule(
    inbox: Path, northwind: Template
) -> None:
    """Northwind's own e-mail, its invoice attached as a damaged PDF: the e-mail names Northwind
    (a hit), its body prints no invoice, and the attachment cannot be read. Before, the template
    "read nothing" there and INV-2057 was entered as the newest."""
    (inbox / "Invoice INV-2060.eml").write_bytes(_issuer_mail_with_a_damaged_pdf())
    content = SandboxFiles(inbox).read("Invoice INV-2060.eml")
    assert content.email is not None and content.email.attachments[0].error  # the reader says so
    reason = _refused(_routine(northwind), NORTHWIND, SandboxFiles(inbox))
    assert "Invoice INV-2060.eml (its attachment INV-2060.pdf cannot be read:" in reason, reason


class VanishingFiles(SandboxFiles):
    """A reader whose files change between the search and the read (a sync client replacing them,
    a colleague moving them): the newest invoice's files are gone once the search has listed them."""

    def search(self, query: str, folder: str = ".", max_hits: int | None = None) -> Any:
        result = super().search(query, folder, max_hits)
        for name in NEWEST:
            (self.root / name).unlink(missing_ok=True)
        return result


def test_a_hit_that_cannot_be_read_after_the_search_is_not_skipped(inbox: Path, northwind: Template) -> None:
    """The search found INV-2057's files; reading them fails. Before, each was skipped as "cannot be
    read (FileMissing)" and INV-2031 entered."""
    reason = _refused(_routine(northwind), NORTHWIND, VanishingFiles(inbox))
    for name in NEWEST:
        assert f"{name} (no such file: '{name}'" in reason, reason


def test_the_replay_goes_to_the_agent_with_the_reason(inbox: Path, northwind: Template) -> None:
    """How a replay reports it: a fallback at the file step (the agent's planner gets the reason and
    the remaining steps), as for every file work the routine cannot do."""
    (inbox / "downloads" / "Northwind Traders INV-2060.pdf").write_bytes(DAMAGED)
    replayer = Replayer(_routine(northwind), NORTHWIND)
    ctx = SimpleNamespace(toolbox=SimpleNamespace(files=SandboxFiles(inbox)))
    with pytest.raises(Fallback) as fell:
        replayer._files(ctx, state=None)
    assert fell.value.reason.startswith("file work: 1 file(s) naming 'Northwind Traders' cannot be read")
    assert fell.value.remaining[0] == "find and read the document" and not fell.value.new_issuer


def test_a_damaged_file_that_names_no_issuer_does_not_stop_it(northwind: Template) -> None:
    """The demo inbox's broken download names no vendor (the answer key: vendor unknown; the agent
    enters INV-2057 too): it is no candidate, and the rule still picks INV-2057. Its name decides:
    the same bytes named for Northwind stop it (above)."""
    files = SandboxFiles(INBOX)
    assert any(
        u.startswith("downloads/invoice (3).pdf") for u in files.search("Northwind Traders").unreadable
    )
    assert find_document(_routine(northwind), NORTHWIND, files).values["invoice_number"] == "INV-2057"
