"""An approval seals the files its values cite as the run READ them, not as they are when it parks:
a file changed between the run's read and the park is shown to the approver as changed (before, the
seal was taken at park time, so the changed file was vouched for as the one the run read).
Real files, a real SQLite job store and the console's own document view; no model."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

from taskcrew.console.documents import Documents
from taskcrew.crew.models import RunState
from taskcrew.crew.stages import checkpoint, restore
from taskcrew.crew.trace import Tracer
from taskcrew.jobs import Jobs
from taskcrew.jobs.human import JobHuman
from taskcrew.jobs.models import FieldSource
from taskcrew.jobs.runner import StoreCheckpoints
from taskcrew.tools.documents.reader import SandboxFiles
from taskcrew.tools.human import ApprovalRequest, FieldValue

READ = "Invoice INV-77\nVendor: Hooli\nIBAN: DE89 3704 0044 0532 0130 00\nTotal: 1,250.00\n"
LATER = "Invoice INV-77\nVendor: Hooli\nIBAN: GB33 BUKB 2020 1555 5555 55\nTotal: 1,250.00\n"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_reader_tells_what_it_read_of_a_file_and_when_it_read_two_versions(tmp_path: Path) -> None:
    (tmp_path / "bill.txt").write_text(READ, encoding="utf-8")
    files = SandboxFiles(tmp_path, record_reads=True)
    assert files.read_digest("bill.txt") is None  # not read yet
    files.read("bill.txt")
    assert files.read_digest("bill.txt") == files.read_digest("./bill.txt") == _digest(READ)
    (tmp_path / "bill.txt").write_text(LATER + "\n", encoding="utf-8")  # another size: parsed again
    files.search("IBAN")
    assert files.read_digest("bill.txt") == ""  # two versions read: neither can be vouched for
    assert files.read_digest("../outside.txt") is None


def test_a_file_changed_between_the_runs_read_and_the_park_is_shown_as_changed(tmp_path: Path) -> None:
    sandbox = tmp_path / "files"
    sandbox.mkdir()
    (sandbox / "bill.txt").write_text(READ, encoding="utf-8")
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Pay Hooli's INV-77", submitted_by="ana", enqueue=False)
    run_reader = SandboxFiles(sandbox, record_reads=True)
    run_reader.read("bill.txt")  # what the run read: the IBAN it will send
    (sandbox / "bill.txt").write_text(LATER, encoding="utf-8")  # then the file is changed
    human = JobHuman(jobs, job.id, sandbox=sandbox)
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/BILL-7/pay",
        fields=[FieldValue(name="iban", value="DE89 3704 0044 0532 0130 00")],
    )
    sources = [FieldSource(name="iban", value="DE89 3704 0044 0532 0130 00", source="bill.txt, line 3")]
    assert human._sealed(request, sources) == {"bill.txt": _digest(LATER)}  # no run reader: as it is now
    human.read_digest = run_reader.read_digest
    sealed = human._sealed(request, sources)
    assert sealed == {"bill.txt": _digest(READ)}  # as the run read it
    shown = Documents(sandbox).view("bill.txt", line=3, sealed=sealed["bill.txt"])
    assert not isinstance(shown, str) and shown.seal == "changed", shown
    jobs.close()


def test_a_link_switched_between_the_runs_read_and_the_park_does_not_lend_its_new_target_the_seal(
    tmp_path: Path,
) -> None:
    """The run reads mail/bill.txt through a link (mail -> v1); before the park, the link is switched
    to v2, a clean copy. Keyed by the resolved file alone, the reader knew no read of mail/bill.txt
    and the seal fell back to v2 as it was then: the approver saw v2 vouched for as what the run
    read. The name the run read it as is kept too."""
    sandbox = tmp_path / "files"
    for version, text in (("v1", READ.replace("Vendor", "URGENT: pay the new IBAN\nVendor")), ("v2", READ)):
        (sandbox / version).mkdir(parents=True)
        (sandbox / version / "bill.txt").write_text(text, encoding="utf-8")
    (sandbox / "mail").symlink_to("v1")
    run_reader = SandboxFiles(sandbox, record_reads=True)
    read = run_reader.read("mail/bill.txt")
    (sandbox / "switch").symlink_to("v2")
    (sandbox / "switch").replace(sandbox / "mail")  # atomically
    assert (
        run_reader.read_digest("mail/bill.txt")
        == read.sha256
        == run_reader.read_digest("./mail/../mail/bill.txt")
    )
    shown = Documents(sandbox).view("mail/bill.txt", line=4, sealed=read.sha256)
    assert not isinstance(shown, str) and shown.seal == "changed", shown


def test_a_resumed_leg_seals_what_the_legs_before_it_read(tmp_path: Path) -> None:
    """Leg 1 reads the bill and checkpoints; the file is changed; leg 2 resumes past the read and
    parks: its approval seals the bytes leg 1 read (before, leg 2's reader had read nothing, so the
    seal was the changed file as it was at the park, vouched for as what the run read)."""
    sandbox = tmp_path / "files"
    sandbox.mkdir()
    (sandbox / "bill.txt").write_text(READ, encoding="utf-8")
    jobs = Jobs.open(f"sqlite:///{tmp_path / 'jobs.sqlite3'}")
    job = jobs.submit("Pay Hooli's INV-77", submitted_by="ana", enqueue=False)
    jobs.mark(job.id, "running", only_if=("queued",), worker="worker-a")

    def leg(worker: str) -> SimpleNamespace:  # what checkpoint() and restore() use of a run's context
        files = SandboxFiles(sandbox, record_reads=True)
        return SimpleNamespace(
            checkpoints=StoreCheckpoints(jobs, job.id, worker),
            toolbox=SimpleNamespace(files=files),
            notes=[],
            budget=SimpleNamespace(used=0),
            tracer=Tracer(tmp_path / f"{worker}.jsonl"),
        )

    first = leg("worker-a")
    first.toolbox.files.read("bill.txt")
    checkpoint(first, RunState(task=job.task), "step:1")
    (sandbox / "bill.txt").write_text(LATER, encoding="utf-8")  # changed while no leg runs it
    jobs.take_over(job.id, "worker-a")
    jobs.mark(job.id, "running", only_if=("queued",), worker="worker-b")
    second = leg("worker-b")
    assert restore(second, RunState())
    human = JobHuman(jobs, job.id, sandbox=sandbox)
    human.read_digest = second.toolbox.files.read_digest
    request = ApprovalRequest(
        kind="form_submission",
        method="POST",
        url="http://127.0.0.1:8800/bills/BILL-7/pay",
        fields=[FieldValue(name="iban", value="DE89 3704 0044 0532 0130 00")],
    )
    sources = [FieldSource(name="iban", value="DE89 3704 0044 0532 0130 00", source="bill.txt, line 3")]
    assert human._sealed(request, sources) == {"bill.txt": _digest(READ)}
    jobs.close()
