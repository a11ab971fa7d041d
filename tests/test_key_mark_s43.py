"""`taskcrew approvals rotate-key --retire-old` and the job database's key ring mark (``Jobs.check_keys``).

Before, rotate-key re-marked only the job database TASKCREW_JOBS_DB / the home names (it had no --db),
and only with the ring it was checking: a fleet whose database is given with --db was refused for good
after the documented rotation, with a message blaming the approvals folder (the right one). Now
rotate-key takes --db (repeatable) and marks each database with the new key before the old is gone; a
database a rotation missed is refused with a message naming the repair, `rotate-key --remark --db`,
which marks it again only where this folder's ring retired the key that marked it (kept signed in the
key file). A process with another approvals folder is still refused and makes no key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskcrew.approvals.signing import KeyRing
from taskcrew.cli import app
from taskcrew.jobs.store import Jobs, WrongKeyRing


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A job database at a --db URL (not the home's), marked by the home's approvals folder."""
    for name in ("TASKCREW_JOBS_DB", "TASKCREW_APPROVALS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TASKCREW_HOME", str(tmp_path / "home"))
    (tmp_path / "shared").mkdir()
    url = f"sqlite:///{tmp_path / 'shared' / 'jobs.sqlite3'}"
    jobs = Jobs.open(url)
    jobs.submit("enter the Northwind bill", submitted_by="ana", enqueue=False)
    jobs.close()
    return url


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = CliRunner().invoke(app, list(args), env=env)
    return done.exit_code, done.output + (str(done.exception) if done.exit_code not in (0, 2) else "")


def _usable(url: str) -> None:
    jobs = Jobs.open(url, create=False)
    try:
        assert jobs.submit("enter the Initech bill", submitted_by="ana", enqueue=False)
    finally:
        jobs.close()


def test_rotate_key_retire_old_marks_the_db_it_is_given(fleet: str) -> None:
    code, out = _cli("approvals", "rotate-key", "--retire-old", "--db", fleet)
    assert code == 0, out
    assert "marked again" in out
    _usable(fleet)
    assert _cli("jobs", "list", "--db", fleet)[0] == 0


def test_a_db_the_rotation_missed_says_how_to_mark_it_again_and_the_operator_can(fleet: str) -> None:
    code, out = _cli("approvals", "rotate-key", "--retire-old")  # no --db: the home has no database
    assert code == 0, out
    assert "--remark --db" in out  # says a database elsewhere must be named
    with pytest.raises(WrongKeyRing, match="retired") as refused:
        Jobs.open(fleet, create=False)
    assert "rotate-key --remark --db" in str(refused.value)
    assert "TASKCREW_APPROVALS_DIR" not in str(refused.value)  # the folder is the right one
    code, out = _cli("approvals", "rotate-key", "--remark", "--db", fleet)
    assert code == 0, out
    _usable(fleet)
    # the same repair through a second rotation naming it (TASKCREW_JOBS_DB), after two retirements
    assert _cli("approvals", "rotate-key", "--retire-old")[0] == 0
    assert _cli("approvals", "rotate-key", "--retire-old", env={"TASKCREW_JOBS_DB": fleet})[0] == 0
    _usable(fleet)


def test_another_approvals_folder_is_still_refused_and_cannot_remark(
    fleet: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    monkeypatch.setenv("TASKCREW_APPROVALS_DIR", str(other))
    with pytest.raises(WrongKeyRing, match="TASKCREW_APPROVALS_DIR"):
        Jobs.open(fleet, create=False)
    for args in (["--remark"], ["--retire-old"]):
        code, out = _cli("approvals", "rotate-key", *args, "--db", fleet)
        assert code == 2 and "TASKCREW_APPROVALS_DIR" in out, out
    assert not (other / "operator.key").exists()  # no key made, none rotated
    # a folder with keys of its own, some retired, never held the one that marked the database
    KeyRing(other / "operator.key").rotate(retire_old=True)
    KeyRing(other / "operator.key").rotate(retire_old=True)
    code, out = _cli("approvals", "rotate-key", "--remark", "--db", fleet)
    assert code == 2 and "TASKCREW_APPROVALS_DIR" in out, out
    with pytest.raises(WrongKeyRing, match="TASKCREW_APPROVALS_DIR"):
        Jobs.open(fleet, create=False)


def test_an_edited_list_of_retired_marks_marks_nothing_again(fleet: str, tmp_path: Path) -> None:
    """The retired marks are signed: a list edited in the key file (or copied from another ring's)
    counts for nothing, and the database stays refused."""
    key_file = tmp_path / "home" / "approvals" / "operator.key"
    jobs = Jobs.open(fleet, create=False)
    assert jobs.keys.path == key_file
    jobs.close()
    assert _cli("approvals", "rotate-key", "--retire-old")[0] == 0
    data = json.loads(key_file.read_text())
    assert len(data["retired"]) == 1 and data["retired_sig"]
    data["retired"].append("feedbeef:" + "0" * 64)
    key_file.write_text(json.dumps(data))
    assert not KeyRing(key_file).retired(data["retired"][0])
    code, out = _cli("approvals", "rotate-key", "--remark", "--db", fleet)
    assert code == 2 and "TASKCREW_APPROVALS_DIR" in out, out


def test_rotation_without_retiring_keeps_the_retired_marks(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path / "operator.key")
    first = ring.mark()
    ring.rotate(retire_old=True)
    second = KeyRing(ring.path).mark()
    ring.rotate()  # a new key; the retired marks stay, still signed by a key the ring holds
    ring.rotate(retire_old=True)
    again = KeyRing(ring.path)
    assert again.retired(first) and again.retired(second)
    assert not again.made(first) and not again.retired(again.mark())


def test_a_remark_with_no_database_to_mark_fails(fleet: str) -> None:
    """``--remark`` asks for a repair: with no --db and no default job database nothing is marked,
    and it says so with exit 2 (it said a note and exited 0)."""
    code, out = _cli("approvals", "rotate-key", "--remark")
    assert code == 2 and "no key was made or retired" in out, out
