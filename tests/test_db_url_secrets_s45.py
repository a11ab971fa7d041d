"""A job database URL's password is never shown: every message that names the job database names it
as ``store.where`` does (an SQLite file's path, else dialect, host, port and database name), and a
database error shown beside it has the URL's secret parts taken out (``store.hide_secrets``).

Before, ``where`` hid only the password between ``user:`` and ``@``: a libpq ``?password=`` was
printed in clear ("cannot use the job database postgresql+psycopg://ap@127.0.0.1:1/jobs?password=…"),
a password holding an unescaped '@' was half shown (``ap:***@rd9S3cret@…``) and psycopg's own error
repeated that half, and a URL written without its ``postgresql://`` was echoed whole. These messages
reach terminals, systemd journals, CI logs and the console's runs page.

Unreachable databases are a refused port on this machine; the rest runs on a real PostgreSQL when
TASKCREW_TEST_PG is set (as .ci/run sets it)."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.eval.runs import RunRecords
from taskcrew.jobs import store
from taskcrew.jobs.store import Jobs, JobStoreError, where

SECRET = "S3cretDbPw"
PG = os.environ.get("TASKCREW_TEST_PG")
runner = CliRunner()


@pytest.fixture
def port() -> int:
    """A port nothing listens on: a connection to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _urls(port: int) -> dict[str, str]:
    at = f"127.0.0.1:{port}/jobs"
    return {
        "query password": f"postgresql+psycopg://ap@{at}?password={SECRET}",
        "query sslpassword": f"postgresql+psycopg://ap@{at}?sslmode=prefer&sslpassword={SECRET}",
        "user-info password": f"postgresql+psycopg://ap:{SECRET}@{at}",
        "escaped '@' in it": f"postgresql+psycopg://ap:Pw%40rd9{SECRET}@{at}",
        "unescaped '@' in it": f"postgresql+psycopg://ap:Pw@rd9{SECRET}@{at}",
    }


KINDS = list(_urls(1))


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreachable_database_is_named_without_its_password(
    kind: str, port: int, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _urls(port)[kind]
    shown = f"postgresql+psycopg://127.0.0.1:{port}/jobs"
    assert where(url) == shown

    with pytest.raises(JobStoreError) as refused:
        Jobs.open(url)
    said = str(refused.value)
    assert SECRET not in said and "rd9" not in said and shown in said, said
    if kind == "unescaped '@' in it":  # refused before any connection, saying how to write it
        assert "has an '@' in its password or user name: write it as %40" in said
    else:
        assert "Connection refused" in said  # the driver's own words are kept

    # the CLI (--db and TASKCREW_JOBS_DB), and the runs list (the console's runs page) that reads it
    models = ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"]
    for command in (["jobs", "list", "--db", url], ["submit", "Pay the bills.", *models, "--db", url]):
        out = runner.invoke(app, command)
        assert out.exit_code == 2 and shown in out.output, out.output
        assert SECRET not in out.output, out.output
    monkeypatch.setenv("TASKCREW_JOBS_DB", url)
    out = runner.invoke(app, ["jobs", "list"])
    assert out.exit_code == 2 and SECRET not in out.output and shown in out.output, out.output
    problem = RunRecords.read().problem
    assert problem.startswith("the job store cannot be read") and shown in problem, problem
    assert SECRET not in problem, problem


def test_a_driver_error_has_the_urls_secrets_taken_out(port: int) -> None:
    """psycopg's own error for an unescaped '@' (the rest of the password taken for the host) says
    the host it could not find: shown beside the database, that part of the password is hidden.
    (The driver's words as it wrote them: connecting would ask a name server for that host.)"""
    url = _urls(port)["unescaped '@' in it"]
    raw = (
        f"(psycopg.OperationalError) failed to resolve host 'rd9{SECRET}@127.0.0.1': [Errno -2] "
        "Name or service not known\n(Background on this error at: https://sqlalche.me/e/21/e3q8)"
    )
    said = store.hide_secrets(raw, url)
    assert SECRET not in said and "rd9" not in said, said
    for text in (f"at {url}: refused", f"dsn 'password={SECRET} host=h'", f"password: {SECRET}"):
        assert SECRET not in store.hide_secrets(text, _urls(port)["query password"]), text


def test_a_url_without_its_scheme_is_not_echoed(isolated_home: Path) -> None:
    """A URL missing ``postgresql+psycopg://`` is not a path: it is not printed back (it may hold a
    password); a plain path still gets the SQLite URL to write."""
    out = runner.invoke(app, ["jobs", "list", "--db", f"ap:{SECRET}@db.example/jobs"])
    assert out.exit_code == 2 and SECRET not in out.output, out.output
    assert "is not a database URL (it has no '://'; not shown)" in " ".join(out.output.split())
    out = runner.invoke(app, ["jobs", "list", "--db", "/srv/jobs.sqlite3"])
    assert out.exit_code == 2 and "write sqlite:////srv/jobs.sqlite3" in out.output, out.output


DSNS = {
    "libpq keywords": f"host=db.example password={SECRET} dbname=jobs user=tc",
    "path and a password": f"/srv/jobs.sqlite3 password={SECRET}",
    "keywords after the scheme": f"postgresql+psycopg://host=db.example password={SECRET} dbname=jobs",
    "a quoted password": f"host=db.example password='{SECRET} x' dbname=jobs",
}


@pytest.mark.parametrize("kind", list(DSNS))
def test_a_setting_that_is_neither_a_url_nor_a_plain_path_is_not_echoed(
    kind: str, isolated_home: Path
) -> None:
    """A libpq keyword string (or a path with more after it) given as the job database is not a path:
    it is not printed back, nor offered as "write sqlite:///…" (s45 red team: it was, password and
    all, by ``check_url``, which every entry point runs)."""
    dsn = DSNS[kind]
    with pytest.raises(JobStoreError) as refused:
        Jobs.open(dsn)
    said = str(refused.value)
    assert SECRET not in said and "sqlite:///" not in said.split("e.g.")[0], said
    out = runner.invoke(app, ["jobs", "list", "--db", dsn])
    assert out.exit_code == 2 and SECRET not in out.output and "not shown" in out.output, out.output
    assert where(dsn) == "(its setting, not shown: it is neither a database URL nor a plain path)"


def test_a_short_password_does_not_garble_the_database_error() -> None:
    """The driver's text keeps its words: a password is taken out of free text only as a whole token
    and only when it is at least ``vault.MIN_SECRET_LENGTH`` long; in its ``password=`` and user-info
    places it is hidden at any length. (s45 red team: "127" made "127.0.0.1" "***.0.0.1", "a" made
    "failed" "f***iled".)"""
    said = store.hide_secrets(
        "connection to server at 127.0.0.1 failed; dsn password=127 and postgresql://tc:127@h/jobs",
        "postgresql+psycopg://tc:127@127.0.0.1/jobs",
    )
    assert said == "connection to server at 127.0.0.1 failed; dsn password=*** and postgresql://***@h/jobs"
    said = store.hide_secrets(
        "password authentication failed: password=a", "postgresql+psycopg://ap:a@db/jobs"
    )
    assert said == "password authentication failed: password=***", said
    # a long enough password standing as a token of its own is hidden wherever it stands
    said = store.hide_secrets("no host 'Pw9x' (Pw9x.)", "postgresql+psycopg://ap:Pw9x@db/jobs")
    assert "Pw9x" not in said, said


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh database on the test server, named with a password written as libpq's query parameter
    (the test server trusts every local connection, so any password signs in)."""
    if not PG:
        pytest.skip("set TASKCREW_TEST_PG to a Postgres URL (.ci/run does)")
    name = f"taskcrew_secrets_{secrets.token_hex(4)}"
    admin = sa.create_engine(PG, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(PG).set(database=name, password=None)
    yield url.render_as_string(hide_password=False) + f"?password={SECRET}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_a_real_database_is_named_without_its_password(
    pg_url: str, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Created, marked by `approvals rotate-key`, then failing under a job: each message names it
    without the password."""
    shown = where(pg_url)
    assert SECRET not in shown and shown.endswith(sa.engine.make_url(pg_url).database or "?")
    limits = runner.invoke(app, ["jobs", "limits", "--db", pg_url])
    assert limits.exit_code == 0, limits.output
    assert f"created a new job database at {shown}" in limits.output and SECRET not in limits.output
    rotated = runner.invoke(app, ["approvals", "rotate-key", "--remark", "--db", pg_url])
    assert rotated.exit_code == 0 and f"job database {shown}: " in rotated.output, rotated.output
    assert SECRET not in rotated.output

    jobs = Jobs.open(pg_url)
    try:
        admin = sa.create_engine(PG or "", isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:  # the database goes away under the open store
            conn.execute(sa.text(f'DROP DATABASE "{sa.engine.make_url(pg_url).database}" WITH (FORCE)'))
        admin.dispose()
        with pytest.raises(JobStoreError) as failed:
            jobs.list()
    finally:
        jobs.close()
    said = str(failed.value)
    assert said.startswith(f"the job database {shown} failed: ") and SECRET not in said, said
