"""Who holds a worker id: at most one live process per id, recorded in the job database.

    holder = IdHolder(jobs, "worker-a", stale_after_s=15)
    holder.claim()      # raises WorkerIdInUse naming the holder's host and pid while it lives
    holder.beat()       # from the worker's watch loop: False once another process took the id
    holder.release()    # on a clean stop

Each start of a worker has its own token (``IdHolder.token``: host, pid and a nonce), kept in its
id's row; the jobs it runs are bound to that token, not to the id alone (``store.holds``: its leg's
claim, heartbeat, writes and sends). A process that finds its token gone from the row (``beat``
False: it stalled past the others' patience and another process took its id, or the row was
deleted) holds no id: it halts every leg it runs and stops (``worker.serve``). A leg recovered
for the id (DBOS hands a restarted worker every leg pending for its executor id) whose job another
live start still runs is not claimed (``token_alive``).

A holder on this host is alive while its pid is; on another host while its beat is fresher than
``stale_after_s``, by the database's clock: beats are written and judged by it (``store.db_now``), so
a host whose clock is off neither loses its id while it beats nor keeps it after it stopped. A dead
holder's id is free at once: a restarted worker takes its id (and, through DBOS and the watch loop,
its jobs) back.
"""

from __future__ import annotations

import os
import secrets
import socket
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from taskcrew.jobs.store import Jobs, db_now

_META = sa.MetaData()
WORKERS = sa.Table(
    "taskcrew_workers",
    _META,
    sa.Column("worker_id", sa.String, primary_key=True),
    sa.Column("host", sa.String, nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("beat_at", sa.String, nullable=False),
    sa.Column("token", sa.String),  # the worker start holding the id (``IdHolder.token``)
)


class WorkerIdInUse(RuntimeError):
    """Another live process holds this worker id; the message names it and what to do."""


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


class IdHolder:
    def __init__(self, jobs: Jobs, worker_id: str, *, stale_after_s: float) -> None:
        self.jobs, self.worker_id, self.stale_after_s = jobs, worker_id, stale_after_s
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.token = f"{self.host}/{self.pid}/{secrets.token_hex(8)}"
        _META.create_all(jobs.engine)
        _add_token_column(jobs.engine)

    def _alive(self, host: str, pid: int, beat_at: str, now: datetime) -> bool:
        """``now``: the database's clock, which wrote ``beat_at``."""
        if host == self.host:
            return pid_alive(pid)
        age = (now - datetime.fromisoformat(beat_at)).total_seconds()
        return age < self.stale_after_s

    def claim(self) -> None:
        for _ in range(3):
            with self.jobs.engine.begin() as conn:
                row = conn.execute(
                    sa.select(WORKERS.c.host, WORKERS.c.pid, WORKERS.c.beat_at).where(
                        WORKERS.c.worker_id == self.worker_id
                    )
                ).first()
                now = db_now(conn)
                values = {"host": self.host, "pid": self.pid, "beat_at": now.isoformat(), "token": self.token}
                if row is None:
                    try:
                        conn.execute(WORKERS.insert().values(worker_id=self.worker_id, **values))
                    except IntegrityError:
                        continue  # another process claimed it just now: look again
                    return
                host, pid, beat_at = str(row[0]), int(row[1]), str(row[2])
                if (host, pid) != (self.host, self.pid) and self._alive(host, pid, beat_at, now):
                    raise WorkerIdInUse(
                        f"worker id {self.worker_id!r} is in use by pid {pid} on {host} (alive); stop "
                        "that worker, or start this one with another --worker-id"
                    )
                held = sa.and_(  # as judged: a holder that beat meanwhile keeps its id (look again)
                    WORKERS.c.worker_id == self.worker_id,
                    WORKERS.c.host == host,
                    WORKERS.c.pid == pid,
                    WORKERS.c.beat_at == beat_at,
                )
                if conn.execute(WORKERS.update().where(held).values(**values)).rowcount:
                    return
        raise WorkerIdInUse(f"worker id {self.worker_id!r} is being claimed by another process; try again")

    def live_ids(self) -> set[str]:
        """The worker ids a live process holds now (this one's included)."""
        with self.jobs.engine.connect() as conn:
            now = db_now(conn)
            rows = conn.execute(
                sa.select(WORKERS.c.worker_id, WORKERS.c.host, WORKERS.c.pid, WORKERS.c.beat_at)
            ).all()
        return {str(r[0]) for r in rows if self._alive(str(r[1]), int(r[2]), str(r[3]), now)}

    def beat(self) -> bool:
        """This start still holds its id (its beat written); False when the id's row names another
        start, or none: the caller holds no id any more and stops (``worker.serve``)."""
        with self.jobs.engine.begin() as conn:
            return bool(
                conn.execute(
                    WORKERS.update()
                    .where(WORKERS.c.worker_id == self.worker_id, WORKERS.c.token == self.token)
                    .values(beat_at=db_now(conn).isoformat())
                ).rowcount
            )

    def holds(self) -> bool:
        """Whether the id's row still names this start (read, nothing written)."""
        with self.jobs.engine.connect() as conn:
            row = conn.execute(
                sa.select(WORKERS.c.token).where(WORKERS.c.worker_id == self.worker_id)
            ).first()
        return row is not None and row[0] == self.token

    def token_alive(self, token: str, beat_at: datetime | None) -> bool:
        """Whether the worker start ``token`` may still be running what it holds: while its id's row
        names it, as that row is judged (``_alive``). A start whose row is gone (its id taken since:
        a stalled process may wake, and stops at its next beat) is alive on this host while its pid
        is (never when that pid is this process's: an earlier start in this pid, as a container's pid
        1 restarted after a crash), elsewhere while ``beat_at`` (the heartbeat of the job it holds) is
        fresher than ``stale_after_s`` by the database's clock."""
        with self.jobs.engine.connect() as conn:
            now = db_now(conn)
            row = conn.execute(
                sa.select(WORKERS.c.host, WORKERS.c.pid, WORKERS.c.beat_at).where(WORKERS.c.token == token)
            ).first()
        if row is not None:
            return self._alive(str(row[0]), int(row[1]), str(row[2]), now)
        host, _, rest = token.partition("/")
        pid = rest.partition("/")[0]
        if host == self.host and pid.isdigit():
            return int(pid) != self.pid and pid_alive(int(pid))
        return beat_at is not None and (now - beat_at).total_seconds() < self.stale_after_s

    def release(self) -> None:
        with self.jobs.engine.begin() as conn:
            conn.execute(
                WORKERS.delete().where(WORKERS.c.worker_id == self.worker_id, WORKERS.c.token == self.token)
            )


def _add_token_column(engine: sa.Engine) -> None:
    """A job database whose id rows were made before worker starts had tokens gets the column (a row
    without one names no start: its holder is judged as before, by host, pid and beat)."""
    if "token" in {c["name"] for c in sa.inspect(engine).get_columns(WORKERS.name)}:
        return
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f"ALTER TABLE {WORKERS.name} ADD COLUMN token VARCHAR"))
    except sa.exc.DBAPIError:  # another worker added it just now
        if "token" not in {c["name"] for c in sa.inspect(engine).get_columns(WORKERS.name)}:
            raise
