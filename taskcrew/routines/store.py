"""Where routines are kept and how their versions change status.

One YAML file per version, ``<name>.v<N>.yaml``, in the routines folder: ``TASKCREW_ROUTINES`` when
set, else ``TASKCREW_HOME/routines`` — beside the recipes a company adds (``TASKCREW_HOME/recipes``).
A learned version starts as a draft; accepting one retires the version accepted before it; only the
accepted version replays, and only while its acceptance checks out: accepting signs what the version
does and who accepted it with the approvals key (``approvals.signing``), so a file edited after it
was accepted, or one that says "accepted" without having been, does not replay. Which version is
the accepted one is not the routine files' word either (workers write their counts there): accept
and retire keep it, signed, beside the approvals key (``<approvals>/routines/<name>.json``), so an
old version edited back to "accepted", or restored from a backup, does not replay. Nor does one
whose reviewer no longer counts (removed from the users file: ``reviewer_problem``).

Who wrote a version is signed too: ``propose`` records its author (``worker:taskcrew``, the system,
for a draft a verified run proposes, with the run's submitter; the proven identity of whoever ran
``routines learn``, with the submitter of the run folder she named as the job store's signed record
of that run says: ``run_submitter``; ``UNPROVEN_SUBMITTER`` when no signed record proves it) and
signs it with what the version does (``proposal``). A file written into the folder by hand, or
changed after it was proposed, has no authorship that checks out: it counts as written by whoever
accepts it, so where the two-person rule is on nobody may accept it, and the accepter must differ
from the author and from the submitter of the run it was learned from (``author_refusal``; the
approval authority judges who the accepter is) — nobody may, where who submitted that run is not
proven. Every acceptance and retirement, granted or refused, goes to the signed audit log
(``approvals.audit``).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from taskcrew.approvals import identity
from taskcrew.eval.runs import NOT_NAMED, RunRecord
from taskcrew.routines.models import Routine, printable
from taskcrew.yamlfile import load_yaml

if TYPE_CHECKING:
    from taskcrew.approvals.audit import AuditLog
    from taskcrew.approvals.identity import Identity
    from taskcrew.approvals.seals import Dump
    from taskcrew.approvals.signing import KeyRing

ENV_VAR = "TASKCREW_ROUTINES"
COUNTED_RUNS = ".counted-runs"  # the runs whose replay was counted (a durable run's key, one a line)
KEEP_COUNTED = 5000  # the most recent keys kept: a run resumes within days, not after thousands more
_FILE = re.compile(r"^(?P<name>[a-z][a-z0-9-]*)\.v(?P<version>\d+)\.yaml$")
METADATA = {
    "status",
    "created_at",
    "reviewed_by",
    "reviewer_credential",
    "successes",
    "fallbacks",
    "fallbacks_in_a_row",
    "last_fallback",
    "seal",
    "proposed_by",
    "source_submitter",
    "proposal_seal",
}
SYSTEM_AUTHOR = "worker:taskcrew"
"""The author of a draft taskcrew itself proposes after a verified run (``hooks.after_run``)."""
UNPROVEN_SUBMITTER = identity.UNPROVEN_SUBMITTER
"""A version's ``source_submitter`` when no signed record proves who submitted the run it was learned
from (a run an operating-system user submitted, signed records that disagree; ``routines learn``
refuses a run folder no signed record says was done: ``distil.vouched_done``): signed with the
proposal like a name, so it cannot be dropped without voiding who wrote it; where the two-person
rule is on nobody may accept such a version."""


class RoutineError(ValueError):
    """A routine that cannot be found or changed; the message says what to do."""


class RoutineRefused(RoutineError):
    """The approval authority's rule refuses this person the change (who may accept or retire)."""


@dataclass(frozen=True)
class Authorship:
    """Who wrote a version, as signed: ``by`` (proof:name), the submitter of the run it was learned
    from (when known; None when not, or when it is not proven: ``submitter_proven``), and what
    vouches for it: its ``proposal`` seal, or its ``acceptance`` (a version whose author was not
    proven counts as written by whoever accepted it)."""

    by: str
    submitter: str | None
    vouched: str
    submitter_proven: bool = True

    @classmethod
    def of(cls, routine: Routine, vouched: str) -> Authorship:
        """``routine``'s authorship as its file records it (checked by the caller)."""
        said = routine.source_submitter
        unproven = said == UNPROVEN_SUBMITTER
        return cls(routine.proposed_by or "", None if unproven else said, vouched, not unproven)

    @property
    def recorded_submitter(self) -> str | None:
        """The submitter as a version records it (``UNPROVEN_SUBMITTER`` when not proven)."""
        return self.submitter if self.submitter_proven else UNPROVEN_SUBMITTER

    @property
    def person(self) -> str | None:
        """The name of the person who wrote it (None: taskcrew itself)."""
        proof, _, name = self.by.partition(":")
        return None if proof == "worker" else (name or proof)

    @property
    def proof(self) -> str:
        return self.by.partition(":")[0] if ":" in self.by else "unstated"

    def describe(self) -> str:
        if self.person is None:
            head = "taskcrew itself, after a verified run"
        else:
            head = self.by + (
                " (its reviewer: who wrote it was not proven)" if self.vouched == "acceptance" else ""
            )
        if not self.submitter_proven:
            return head + (
                "; who submitted that run is NOT PROVEN (no signed job record names its run folder): "
                "while two people decide, nobody may accept it"
            )
        return head + (f"; that run was submitted by {self.submitter}" if self.submitter else "")


@dataclass(frozen=True)
class RunSubmitter:
    """Who submitted a run, as far as a signed record says: ``name`` (None: not proven) and
    ``said``: the record it comes from, or why none vouches for it."""

    name: str | None
    said: str


def run_submitter(run_dir: Path, jobs: Any = None, *, record: RunRecord | None = None) -> RunSubmitter:
    """Who submitted the run in ``run_dir``, from the job store's signed records: every run of
    `taskcrew run`, `taskcrew submit`, a recipe or the console is a job, whose record names its
    submitter and its run folder, signed by the store on every write (``jobs.store``: a record
    changed or added in the job database is not ``signed`` and is not believed). Nothing the run
    folder holds says who submitted it, and a file there would be anyone's word. Not proven (name
    None) when the store cannot be read, when no signed record names the folder (a run made outside
    the job store, an earlier leg of a retried job — the record names its newest leg's folder — or
    another job database than the workers'), or when records naming it disagree. ``record``: what the signed records say of the folder, when already
    read (``eval.runs.RunRecords``, the one lookup of a run folder's signed records); else read from
    ``jobs``, an open job store (default: the CLI's, opened read-only)."""
    from taskcrew.eval.runs import RunRecords

    if record is None:
        record = RunRecords.read(jobs, run_dir).of(run_dir)
    if record.problem:
        return RunSubmitter(None, record.problem)
    mine = record.jobs
    names = sorted({j.submitted_by for j in mine})
    if len(names) == 1 and all(j.submitted_proof in identity.AUTHENTICATED for j in mine):
        return RunSubmitter(names[0], record.said)
    if len(names) == 1:
        proofs = sorted({f"{j.submitted_proof.replace('_', ' ')} {j.submitted_by}" for j in mine})
        return RunSubmitter(None, f"{record.said} names an unproven identity ({', '.join(proofs)})")
    if names:
        return RunSubmitter(None, f"the signed records naming it disagree ({', '.join(names)})")
    return RunSubmitter(None, NOT_NAMED)


def routines_folder() -> Path:
    if named := os.environ.get(ENV_VAR):
        return Path(named).expanduser()
    from taskcrew.config import Paths

    return Paths.from_env().home / "routines"


def acceptance(routine: Routine, dump: Dump | None = None) -> dict[str, Any]:
    """What accepting a version signs (``approvals.seals.routine``), with who wrote it and who
    submitted its run as the acceptance judged them (left out when none: older acceptances check
    out as they were)."""
    from taskcrew.approvals import seals

    sealed = seals.routine(routine, (dump or seals.settled)(routine, exclude=METADATA))
    if routine.proposed_by is not None:
        sealed["proposed_by"] = routine.proposed_by
    if routine.source_submitter is not None:
        sealed["source_submitter"] = routine.source_submitter
    return sealed


def proposal(routine: Routine) -> dict[str, Any]:
    """What proposing a version signs: which version, who wrote it, who submitted the run it was
    learned from, and everything it does (its work, as its fingerprint reads it: the run it names
    and the version it says it heals too)."""
    from taskcrew.approvals import seals

    sealed: dict[str, Any] = {
        "seal": "routine-proposal",
        "name": routine.name,
        "version": routine.version,
        "by": routine.proposed_by,
        "work": seals.settled(routine, exclude=METADATA),
    }
    if routine.source_submitter is not None:
        sealed["submitter"] = routine.source_submitter
    return sealed


def _person(by: str) -> tuple[str, str]:
    """``proof:name`` as (proof, name); a bare name has no stated proof."""
    proof, _, name = by.partition(":")
    return (proof, name) if name else ("unstated", proof)


def fingerprint(routine: Routine) -> str:
    """What a reviewer reads of a version, in 32 hex digits: everything its acceptance signs of the
    work (not its status, reviewer or counts). ``routines show`` prints it and ``routines accept
    --fingerprint`` accepts only the version that still has it: the folder is written by workers
    and runs, so a draft can change between a review and its acceptance. 128 bits: whoever writes
    the folder cannot make two drafts that share one (64 bits took ~2^32 tries)."""
    import hashlib

    from taskcrew.approvals import seals
    from taskcrew.approvals.signing import canonical

    return hashlib.sha256(canonical(seals.settled(routine, exclude=METADATA))).hexdigest()[:32]


class RoutineStore:
    def __init__(self, folder: Path | None = None, keys: KeyRing | None = None) -> None:
        self.folder = folder or routines_folder()
        self._keys = keys

    @property
    def keys(self) -> KeyRing:
        if self._keys is None:
            from taskcrew.approvals.signing import KeyRing

            self._keys = KeyRing.default()
        return self._keys

    @property
    def audit(self) -> AuditLog:
        """The signed audit log beside the approvals key (the one the approval authority writes),
        where every acceptance and retirement, granted or refused, is recorded."""
        from taskcrew.approvals.audit import AuditLog

        return AuditLog(self.keys.path.parent / "audit.jsonl", self.keys)

    def _record(self, by: str, action: str, name: str, version: int | None, payload: dict[str, Any]) -> None:
        proof, person = _person(by)
        target = f"/routines/{name}" + (f"/v{version}" if version is not None else "")
        self.audit.append(person, action, target, {"version": version, "proof": proof, **payload})

    def record_refusal(self, action: str, name: str, version: int | None, who: Identity, why: str) -> None:
        """A refusal decided before the store was asked (an identity that does not count), recorded
        as the store records its own: ``routine_<action>_refused``."""
        self._record(f"{who.proof}:{who.name}", f"routine_{action}_refused", name, version, {"reason": why})

    @staticmethod
    def person_refusal(who: Identity, role: str) -> str | None:
        """Why ``who`` may not act on a routine as ``role`` (None: she may): the approval authority's
        rule on who decides (``Authority.submitter_refusal``), the one for approvals and jobs."""
        from taskcrew.approvals.authority import Authority
        from taskcrew.approvals.rules import RiskRulesError

        try:
            return Authority(None).submitter_refusal(who, role=role)
        except RiskRulesError as exc:
            return f"who may accept it cannot be judged: {exc}"

    def authorship(self, routine: Routine) -> Authorship | None:
        """Who wrote ``routine``, as signed (None: not proven, e.g. written into the folder by hand,
        or changed after it was proposed): its proposal seal, else (a version whose author was not
        proven, accepted since) its acceptance, which counts its reviewer as its author."""
        from taskcrew.approvals import seals

        if not routine.proposed_by:
            return None
        if self.keys.verify(proposal(routine), routine.proposal_seal):
            return Authorship.of(routine, "proposal")
        if routine.seal and seals.check(self.keys, acceptance, routine, routine.seal):
            return Authorship.of(routine, "acceptance")
        return None

    def author_refusal(self, routine: Routine, who: str, authorship: Authorship | None = None) -> str | None:
        """Why the person named ``who`` may not accept ``routine`` under the two-person rule (None:
        she may, or the rule is off): who wrote it must be proven (else it counts as written by
        whoever accepts it) by a proven identity, and so must who submitted the run it was learned
        from (else the rule cannot tell her from the accepter: nobody may accept it), and the
        accepter is neither its author nor that submitter. ``authorship``: as judged already (else
        read)."""
        from taskcrew.approvals.authority import Authority
        from taskcrew.approvals.identity import AUTHENTICATED
        from taskcrew.approvals.rules import RiskRulesError

        try:
            authority = Authority(None)
            if not authority.two_person_active():
                return None
        except RiskRulesError as exc:
            return f"who may accept it cannot be judged: {exc}"
        written = authorship or self.authorship(routine)
        what = f"{routine.name} v{routine.version}"
        if written is None:
            return (
                f"who wrote {what} is not proven (no signed record of its author: written into the "
                "routines folder by hand, or changed after it was proposed), so it counts as written by "
                "whoever accepts it, and the two-person rule is on here: nobody may accept it. Have it "
                "proposed again from a verified run (`taskcrew routines learn <run dir>`)"
            )
        if written.person is not None and written.proof not in AUTHENTICATED:
            return (
                f"{what} was written by an unproven identity ({written.by}), and the two-person rule is "
                "on here: it cannot tell its author from its reviewer. Learn it again after "
                "`taskcrew approvals login`"
            )
        if identity.same_person(written.person, who):  # one person in two spellings is one person
            wrote = (
                "accepted it when who wrote it was not proven, so it counts as written by them"
                if written.vouched == "acceptance"
                else f"wrote {what}"
            )
            return f"{who} {wrote}, and the two-person rule is on here: someone else accepts it"
        return authority.proposal_refusal(
            who, written.recorded_submitter, f"{what} was learned from ({routine.source_run})"
        )

    def review_problem(self, routine: Routine) -> str | None:
        """Why the reviewer ``routine``'s file names is not proven (None: it names none, or her
        acceptance is signed and still counts): for a version marked accepted, ``acceptance_problem``;
        for any other (a draft, a retired version), its acceptance seal must check out."""
        from taskcrew.approvals import seals
        from taskcrew.approvals.signing import KeyError_

        if not routine.reviewed_by:
            return None
        if routine.status == "accepted":
            return self.acceptance_problem(routine)
        try:
            if seals.check(self.keys, acceptance, routine, routine.seal):
                return None
        except KeyError_ as exc:
            return f"{routine.name} v{routine.version}: its reviewer cannot be checked: {exc}"
        return (
            f"{routine.name} v{routine.version}'s file says it was reviewed by {routine.reviewed_by}, "
            "but no acceptance of it is signed (written into the file by hand, or the file changed "
            "since): not proven"
        )

    def _current_path(self, name: str) -> Path:
        return self.keys.path.parent / "routines" / f"{name}.json"

    def current(self, name: str) -> int | None:
        """The version ``accept`` last made the one that replays (None: none, retired since, or a
        record that is missing or does not check out). The record signs only (name, version), so an
        old one put back (a backup) would revive a retired version: it counts only while it is the
        version of the signed audit log's latest decision on ``name`` (``_decided``), as a learned
        fact's acceptance does."""
        from taskcrew.approvals import seals

        try:
            data = json.loads(self._current_path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        version = data.get("version") if isinstance(data, dict) else None
        if not isinstance(version, int) or not self.keys.verify(
            seals.current_routine(name, version), str(data.get("seal", ""))
        ):
            return None
        return version if version == self._decided(name) else None

    def _decided(self, name: str) -> int | None:
        """The version the latest signed decision on ``name`` in the audit log made the one that
        replays: an acceptance's; None after a retirement that stopped it replaying, or no decision."""
        try:
            entries = self.audit.signed(("routine_accept", "routine_retire"))
        except OSError:
            return None
        for entry in reversed(entries):
            if entry.target != f"/routines/{name}" and not entry.target.startswith(f"/routines/{name}/v"):
                continue
            if entry.action == "routine_accept":
                version = entry.payload.get("version")
                return version if isinstance(version, int) else None
            if entry.payload.get("stops_replaying"):
                return None  # a retirement of a version that did not replay changes nothing
        return None

    def _set_current(self, name: str, version: int | None) -> None:
        from taskcrew.approvals import seals

        path = self._current_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "name": name,
            "version": version,
            "seal": self.keys.sign(seals.current_routine(name, version)),
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record), encoding="utf-8")
        tmp.replace(path)

    def acceptance_problem(self, routine: Routine) -> str | None:
        """Why a version marked accepted may not replay (None: its acceptance checks out)."""
        from taskcrew.approvals import seals
        from taskcrew.approvals.signing import KeyError_

        if routine.status != "accepted":
            return None
        try:
            current = self.current(routine.name)
            if current == routine.version and seals.check(self.keys, acceptance, routine, routine.seal):
                return self.reviewer_problem(routine)
        except KeyError_ as exc:
            return f"{routine.name} v{routine.version}: its acceptance cannot be checked, so it does not replay: {exc}"
        if current != routine.version:
            which = f"v{current}" if current is not None else "none (retired, or never accepted here)"
            return (
                f"{routine.name} v{routine.version} says it is accepted, but the version accepted with "
                f"`taskcrew routines accept` is {which}; it does not replay. Review it: taskcrew routines "
                f"show {routine.name} -v {routine.version}; then taskcrew routines accept {routine.name} -v "
                f"{routine.version}"
            )
        return (
            f"{routine.name} v{routine.version} says it is accepted, but its acceptance does not check out "
            "(the file was changed after it was accepted, or it was never accepted with `taskcrew routines "
            f"accept`); it does not replay. Review it: taskcrew routines show {routine.name} -v "
            f"{routine.version}; then taskcrew routines accept {routine.name} -v {routine.version}"
        )

    def reviewer_problem(self, routine: Routine) -> str | None:
        """Why the person who accepted ``routine`` no longer vouches for it (None: she does): an
        acceptance rests on its reviewer's login as a first approval does, so a reviewer removed from
        the users file, or whose password was reset since, takes it with her; and it is judged by the
        approval authority's rule on who decides as it is now, the one ``routines accept`` applies
        (``Authority.submitter_refusal``): an OS user's acceptance, taken on her word while one
        person decided, does not replay once the two-person rule is on; nor does one by its own
        author or by the submitter of its run (``author_refusal``, on who wrote it as the acceptance
        sealed it). A current user accepts it again. ``reviewed_by`` is signed with the acceptance."""
        from taskcrew.approvals.identity import recorded

        proof, _, name = (routine.reviewed_by or "").partition(":")
        if not name:
            return None  # accepted before reviewers were recorded as proof:name; the seal vouches
        why = self.person_refusal(recorded(name, proof, routine.reviewer_credential), "routine's reviewer")
        if why is None and routine.proposed_by is not None:  # who wrote it, as the acceptance sealed it
            vouched = "proposal" if routine.proposal_seal else "acceptance"  # kept only when it checked out
            written = Authorship.of(routine, vouched)
            why = self.author_refusal(routine, name, written)
        if why is None:
            return None
        return (
            f"{routine.name} v{routine.version} was accepted by {routine.reviewed_by}, whose acceptance no "
            f"longer counts ({why}); it does not replay. A current user reviews it again: taskcrew routines "
            f"show {routine.name} -v {routine.version}; then taskcrew routines accept {routine.name} -v "
            f"{routine.version}"
        )

    def vouched(self, name: str, version: int, recorded: str | None) -> tuple[Routine | None, str]:
        """The one way a version is read as the base of another: what a heal keeps of it
        (``distil.merge``, for a draft a run or `routines learn` proposes: ``heal_base``), the
        version a run that resumes in a later leg takes its replay from (``hooks.Attached.restore``)
        and what a reviewer's diff compares a draft with (``diff_base``). ``name`` v``version`` as
        its file holds it, only when what it does is signed — its acceptance or its proposal checks
        out — and, given ``recorded``, it still has that fingerprint (the version a run replayed,
        as the run's signed checkpoint recorded it). Else None, and why: a file changed after it
        was accepted or proposed, or written by hand, is nobody's word; a draft merged from it
        would carry it under taskcrew's signature, and a diff against it would hide it."""
        try:
            routine = self.get(name, version)
        except RoutineError as exc:
            return None, str(exc)
        problem = self._unvouched(routine, recorded)
        return (None, problem) if problem else (routine, "")

    def _unvouched(self, routine: Routine, recorded: str | None) -> str:
        """Why ``routine`` as read is not vouched for ('' when it is): ``vouched``'s rule."""
        from taskcrew.approvals import seals
        from taskcrew.approvals.signing import KeyError_

        what = f"{routine.name} v{routine.version}"
        try:
            signed = bool(routine.seal) and seals.check(self.keys, acceptance, routine, routine.seal)
            signed = signed or (
                bool(routine.proposal_seal) and self.keys.verify(proposal(routine), routine.proposal_seal)
            )
        except KeyError_ as exc:
            return f"{what} cannot be checked ({exc})"
        if not signed:
            return (
                f"{what}'s file is not what was accepted or proposed (changed since, or written into the "
                "routines folder by hand): nothing signed vouches for what it does"
            )
        if recorded is not None and (now := fingerprint(routine)) != recorded:
            was = f"its fingerprint was {recorded}" if recorded else "the run recorded no fingerprint"
            return f"{what} is not the version the run replayed ({was}; it is now {now})"
        return ""

    def heal_base(self, name: str, replayed: Routine | None = None) -> tuple[Routine | None, str]:
        """The version a draft learned from a verified run heals (``distil.merge`` keeps what the run
        did not show again), read through ``vouched``: the version the run replayed (``replayed``,
        held to the fingerprint it replayed with), else the one that replays now. None and why
        ('' when there is none to heal: no version replays)."""
        if replayed is None:
            replayed = self.accepted(name)
            if replayed is None:
                return None, ""
        return self.vouched(name, replayed.version, fingerprint(replayed))

    def diff_base(self, routine: Routine) -> tuple[Routine | None, str]:
        """The version a reviewer compares ``routine`` with, and what it is: the one that replays now
        (its acceptance and the signed record of which version replays check out), else the newest
        one before it, each read through ``vouched``: one whose file nobody signed (changed after it
        was accepted or proposed, or written by hand) is passed over, and the reviewer is told why.
        Never the version the file says it heals: ``based_on`` is the draft's own word, and a draft
        naming itself or a draft of its own making would hide what it changes."""
        replays = self.accepted(routine.name)
        if replays is not None and replays.version != routine.version:
            return replays, "the version that replays now"
        before = [r for r in self.versions(routine.name) if r.version < routine.version]
        if not before:
            return None, "the first version"
        why = "this one replays now" if replays is not None else "no version replays now"
        passed: list[str] = []
        for older in reversed(before):
            if not (problem := self._unvouched(older, None)):
                said = f"; passed over: {'; '.join(passed)}" if passed else ""
                head = "the version before it" if not passed else "the newest signed version before it"
                return older, f"{head} ({why}{said})"
            passed.append(problem)
        return None, (
            f"no signed version before it ({'; '.join(passed)}); `routines show` prints everything it does"
        )

    def _path(self, name: str, version: int) -> Path:
        return self.folder / f"{name}.v{version}.yaml"

    def load(self, path: Path) -> Routine:
        try:
            data = load_yaml(path.read_text(encoding="utf-8"))  # a key written twice is refused
            return Routine.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise RoutineError(
                f"{path}: not a usable routine ({where + ': ' if where else ''}{first['msg']})"
            ) from exc
        except (OSError, yaml.YAMLError) as exc:
            raise RoutineError(f"{path}: not a usable routine ({str(exc).splitlines()[0]})") from exc

    def all(self) -> tuple[list[Routine], list[str]]:
        """Every version of every routine (by name, then version), and the files that are broken."""
        found, problems = [], []
        if self.folder.is_dir():
            for path in sorted(self.folder.iterdir()):
                if not _FILE.match(path.name):
                    continue
                try:
                    found.append(self.load(path))
                except RoutineError as exc:
                    problems.append(f"skipped {exc}")
        return sorted(found, key=lambda r: (r.name, r.version)), problems

    def versions(self, name: str) -> list[Routine]:
        return [r for r in self.all()[0] if r.name == name]

    def get(self, name: str, version: int | None = None) -> Routine:
        versions = self.versions(name)
        if version is not None:
            if chosen := next((r for r in versions if r.version == version), None):
                return chosen
            if (path := self._path(name, version)).is_file():
                self.load(path)  # says why that version's file is not a usable routine
        if not versions:
            known = ", ".join(sorted({r.name for r in self.all()[0]})) or "none yet"
            raise RoutineError(
                f"no routine named {name!r} (routines: {known}); `taskcrew routines learn <run dir>` makes one"
            )
        if version is None:
            return versions[-1]
        have = ", ".join(f"v{r.version}" for r in versions)
        raise RoutineError(f"{name} has no version {version} (versions: {have})")

    def marked_accepted(self, name: str) -> Routine | None:
        """The version that would replay: the accepted one if its file says so, else any file that
        says "accepted" (``acceptance_problem`` says why it does not replay)."""
        marked = [r for r in self.versions(name) if r.status == "accepted"]
        current = self.current(name) if marked else None
        return next((r for r in marked if r.version == current), marked[0] if marked else None)

    def accepted(self, name: str) -> Routine | None:
        """The version that replays: marked accepted and its acceptance checks out (else None)."""
        routine = self.marked_accepted(name)
        return routine if routine is not None and self.acceptance_problem(routine) is None else None

    @contextlib.contextmanager
    def _changing(self) -> Iterator[None]:
        """One change to the folder at a time, between processes (workers counting replays, a run
        proposing, a reviewer accepting): each reads the versions, changes one and writes it back,
        so without it a write from an older read erased another's (a count, an acceptance) and two
        proposals took one version number."""
        from taskcrew.approvals.signing import locked

        with locked(self.folder / ".changing"):
            yield

    def save(self, routine: Routine) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(routine.name, routine.version)
        data = routine.model_dump(mode="json", exclude_defaults=False)
        fd, name = tempfile.mkstemp(dir=self.folder, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:  # never a half-written file under its name
            fh.write(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110))
        Path(name).replace(path)
        return path

    def propose(
        self, routine: Routine, *, author: str | Identity = SYSTEM_AUTHOR, submitter: str | None = None
    ) -> tuple[Routine, bool]:
        """Save ``routine`` as the next draft version, signed with who wrote it (``proposal``):
        ``author``, taskcrew itself by default (a draft a verified run proposes), else the proven
        identity of whoever had it learned; ``submitter``: who submitted the run it was learned from,
        when known (``UNPROVEN_SUBMITTER``: no signed record says). Unless the newest version already
        does the same, can still be accepted (a draft, or the accepted one: a retired version cannot
        be, so the same work is proposed again as a new draft) and who wrote it checks out (then that
        one is returned and False) — and it is not one whose run's submitter is not proven while this
        one's is (nobody could accept it)."""
        by = author if isinstance(author, str) else f"{author.proof}:{author.name}"
        with self._changing():
            versions = self.versions(routine.name)
            newest = versions[-1] if versions else None
            written = self.authorship(newest) if newest is not None else None
            proves_more = submitter not in (None, UNPROVEN_SUBMITTER) and (
                written is not None and not written.submitter_proven
            )
            acceptable = written is not None and not proves_more  # the newest: a draft, or accepted
            if (
                newest is not None
                and newest.status != "retired"
                and acceptable
                and same_work(newest, routine)
            ):
                return newest, False
            draft = routine.model_copy(
                update={
                    "version": versions[-1].version + 1 if versions else 1,
                    "status": "draft",
                    "seal": None,
                    "reviewed_by": None,
                    "reviewer_credential": None,
                    "successes": 0,
                    "fallbacks": 0,
                    "fallbacks_in_a_row": 0,
                    "last_fallback": "",
                    "proposed_by": by,
                    "source_submitter": submitter or None,
                }
            )
            draft.proposal_seal = self.keys.sign(proposal(draft))
            self.save(draft)
            return draft, True

    def named(self, name: str, version: int | None) -> Routine:
        """The version a reviewer names. Without one, only a routine's single version: the newest may
        have been drafted (a healing run) after the reviewer's ``show``."""
        if version is None and len(versions := self.versions(name)) > 1:
            raise RoutineError(
                f"{name} has {len(versions)} versions (the newest is v{versions[-1].version}); say which one "
                f"you reviewed: taskcrew routines accept {name} -v N"
            )
        return self.get(name, version)

    def accept(
        self,
        name: str,
        version: int | None,
        by: str | Identity,
        credential: str | None = None,
        *,
        reviewed: str | None = None,
    ) -> Routine:
        """Accept the version the reviewer names. Without one, only a routine's single version: the
        newest may have been drafted (a healing run) after the reviewer's ``show``. ``by``: the
        reviewer's proven ``Identity`` (judged by the approval authority's rule on who decides:
        ``person_refusal``), or ``proof:name`` already judged; ``credential`` the password
        fingerprint her login was proven with; ``reviewed``: the ``fingerprint`` of the version she
        read (None: not checked). Under the two-person rule she must not be who wrote it or who
        submitted its run (``author_refusal``). Recorded, granted or refused, in the signed audit
        log; RoutineRefused when the rules refuse her."""
        who = by if not isinstance(by, str) else None
        if who is not None:
            by, credential = f"{who.proof}:{who.name}", who.credential
        assert isinstance(by, str)
        with self._changing():
            try:
                if who is not None and (why := self.person_refusal(who, "routine's reviewer")):
                    raise RoutineRefused(why)
                accepted = self._accept(name, version, by, credential, reviewed)
            except RoutineError as exc:
                self._record(by, "routine_accept_refused", name, version, {"reason": str(exc)})
                raise
            payload = {
                "fingerprint": fingerprint(accepted),
                "proposed_by": accepted.proposed_by,
                "source_submitter": accepted.source_submitter,
                "source_run": accepted.source_run,
                "seal": accepted.seal,
            }
            self._record(by, "routine_accept", name, accepted.version, payload)  # nothing decided unrecorded
            for other in self.versions(name):
                if other.status == "accepted" and other.version != accepted.version:
                    self.save(other.model_copy(update={"status": "retired"}))
            self.save(accepted)
            self._set_current(name, accepted.version)
            return accepted

    def _accept(
        self, name: str, version: int | None, by: str, credential: str | None, reviewed: str | None
    ) -> Routine:
        """The accepted version, signed (not saved yet), or RoutineError / RoutineRefused."""
        routine = self.named(name, version)
        if reviewed is not None and (now := fingerprint(routine)) != reviewed.strip().lower():
            raise RoutineError(
                f"{name} v{routine.version} changed since it was shown with fingerprint {reviewed.strip()} "
                f"(it is now {now}); nothing accepted. Review it again: taskcrew routines show {name} -v "
                f"{routine.version}"
            )
        if routine.status == "retired":
            raise RoutineError(f"{name} v{routine.version} is retired; accept a newer version instead")
        written = self.authorship(routine)
        if why := self.author_refusal(routine, _person(by)[1], written):
            raise RoutineRefused(why)
        accepted = routine.model_copy(
            update={
                "status": "accepted",
                "reviewed_by": by,
                "reviewer_credential": credential,
                "fallbacks_in_a_row": 0,
                # who wrote it, as judged: signed, else whoever accepts it (it counts as hers)
                "proposed_by": written.by if written else by,
                "source_submitter": written.recorded_submitter if written else None,
                "proposal_seal": routine.proposal_seal if written and written.vouched == "proposal" else None,
            }
        )
        accepted.seal = self.keys.sign(acceptance(accepted))
        return accepted

    def retire(self, name: str, version: int | None, by: Identity | None = None) -> Routine:
        """Retire a version (default: the accepted one). ``by``: who retires it, judged by the
        approval authority's rule on who decides (``person_refusal``, as for accepting: proven where
        the two-person rule is on, still a user); None only for a caller that has judged it (the OS
        user is recorded). Recorded, granted or refused, in the signed audit log."""
        from taskcrew.approvals.identity import os_user

        said = f"{by.proof}:{by.name}" if by is not None else f"os_user:{os_user()}"
        with self._changing():
            try:
                if by is not None and (why := self.person_refusal(by, "person who retires a routine")):
                    raise RoutineRefused(why)
                routine = (
                    self.get(name, version)
                    if version is not None
                    else (self.marked_accepted(name) or self.get(name))
                )
            except RoutineError as exc:
                self._record(said, "routine_retire_refused", name, version, {"reason": str(exc)})
                raise
            replayed = version is None or self.current(name) in (None, routine.version)
            payload = {
                "fingerprint": fingerprint(routine),
                "was": routine.status,
                "stops_replaying": replayed,
            }
            self._record(said, "routine_retire", name, routine.version, payload)
            return self._retire(routine, replayed)

    def _retire(self, routine: Routine, replayed: bool) -> Routine:
        retired = routine.model_copy(update={"status": "retired"})
        if replayed:
            self._set_current(routine.name, None)  # before the file: a retirement never leaves it replaying
        self.save(retired)
        return retired

    def count(self, routine: Routine, *, fell_back: bool, reason: str = "", in_a_row: bool = True) -> Routine:
        """One more replay of ``routine``: a success, or a fallback (in a row: flagged at FLAG_AFTER).
        ``in_a_row=False``: a fallback that says nothing against the routine (an issuer it has not
        learned yet) is counted but neither flags it nor clears the flag."""
        with self._changing():
            return self._count(routine, fell_back=fell_back, reason=reason, in_a_row=in_a_row)

    def count_once(
        self, routine: Routine, run: str, *, fell_back: bool, reason: str = "", in_a_row: bool = True
    ) -> Routine | None:
        """``count``, once per ``run`` (a durable run's key, the same in every leg: ``hooks``): None
        when a leg of that run counted its replay already (two legs that both finished it, one of
        them after losing the job to the other). The keys are kept beside the counts
        (``COUNTED_RUNS``), as unsigned as they are."""
        with self._changing():
            path = self.folder / COUNTED_RUNS
            try:
                seen = path.read_text(encoding="utf-8").split()
            except FileNotFoundError:
                seen = []
            if run in seen:
                return None
            counted = self._count(routine, fell_back=fell_back, reason=reason, in_a_row=in_a_row)
            fd, name = tempfile.mkstemp(dir=self.folder, prefix=f"{COUNTED_RUNS}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("".join(f"{key}\n" for key in [*seen, run][-KEEP_COUNTED:]))
            Path(name).replace(path)
            return counted

    def _count(self, routine: Routine, *, fell_back: bool, reason: str, in_a_row: bool) -> Routine:
        current = self.get(routine.name, routine.version)
        if fell_back:
            update = {
                "fallbacks": current.fallbacks + 1,
                "fallbacks_in_a_row": current.fallbacks_in_a_row + (1 if in_a_row else 0),
                "last_fallback": printable(reason)[:600],  # a page's words: no control characters
            }
        else:
            update = {"successes": current.successes + 1, "fallbacks_in_a_row": 0}
        counted = current.model_copy(update=update)
        self.save(counted)
        return counted


def as_yaml(routine: Routine, *, work_only: bool = False) -> str:
    data = routine.model_dump(mode="json", exclude=METADATA if work_only else None)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


def same_work(a: Routine, b: Routine) -> bool:
    skip = METADATA | {"version", "source_run", "based_on"}
    return a.model_dump(mode="json", exclude=skip) == b.model_dump(mode="json", exclude=skip)


def diff(old: Routine, new: Routine) -> str:
    """What a version changes against another, as a unified diff of what they do."""
    lines = difflib.unified_diff(
        as_yaml(old, work_only=True).splitlines(),
        as_yaml(new, work_only=True).splitlines(),
        f"{old.name} v{old.version}",
        f"{new.name} v{new.version}",
        lineterm="",
    )
    return "\n".join(lines)
