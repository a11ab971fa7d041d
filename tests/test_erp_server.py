"""The ERP as a server: /_debug ground truth, reset, persistence, bad database files, busy ports,
clean start/stop, and the `taskcrew erp serve` command."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from fixtures_erp import ErpFactory, ErpUser, erp_state
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.mock_erp import (
    ChaosConfig,
    DebugState,
    ErpError,
    ErpServer,
    ErpSettings,
    ErpUnreachable,
    fetch_state,
)
from taskcrew.mock_erp.ground_truth import reset_remote

BILL_KEYS = {
    "id", "vendor", "invoice_number", "amount", "currency", "invoice_date", "due_date", "status", "paid_on",
    "created_at", "notes",
}  # fmt: skip


# -- /_debug ------------------------------------------------------------------------------------


def test_state_is_json_without_login(erp: ErpServer) -> None:
    response = httpx.get(erp.url + "/_debug/state")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    data = response.json()
    assert set(data) == {"today", "vendors", "bills", "payments", "sessions", "chaos"}
    assert data["today"] == "2026-10-02"
    assert len(data["vendors"]) == 10
    assert set(data["vendors"][0]) == {"id", "name", "default_currency"}
    assert all(set(bill) == BILL_KEYS for bill in data["bills"])
    assert data["bills"][1] == {
        "id": "BILL-0002",
        "vendor": "Globex Corp",
        "invoice_number": "GX-5531",
        "amount": "2150.00",
        "currency": "USD",
        "invoice_date": "2026-09-05",
        "due_date": "2026-10-05",
        "status": "unpaid",
        "paid_on": None,
        "created_at": "2026-09-07T10:03:00Z",
        "notes": None,
    }
    assert [p["bill_id"] for p in data["payments"]] == ["BILL-0001", "BILL-0003", "BILL-0008", "BILL-0010"]
    assert set(data["chaos"]) == {"config", "counters"}
    DebugState.model_validate(data)


def test_reset_reseeds_and_can_set_chaos(erp: ErpServer, erp_user: ErpUser) -> None:
    erp_user.new_bill()
    erp_user.mark_paid("BILL-0002", "2026-10-02")
    assert len(erp_state(erp).bills) == 11

    state = reset_remote(erp.url, ChaosConfig(seed=5, modal=True))
    assert [b.id for b in state.bills] == [f"BILL-{n:04d}" for n in range(1, 11)]
    assert state.bill("BILL-0002").status == "unpaid"  # type: ignore[union-attr]
    assert len(state.payments) == 4 and state.sessions == []
    assert (state.chaos.config.seed, state.chaos.config.modal) == (5, True)
    assert erp_user.http.get("/bills").status_code == 303  # sessions are gone too

    erp.set_chaos(ChaosConfig.off())
    assert erp_user.login().status_code == 303
    assert erp_user.new_bill().headers["location"] == "/bills/BILL-0011"  # ids start again


def test_reset_without_body_keeps_chaos_and_zeroes_counters(erp_factory: ErpFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(seed=9, save_faults=[]))
    httpx.get(erp.url + "/login")
    assert erp_state(erp).chaos.counters.page_requests == 1
    response = httpx.post(erp.url + "/_debug/reset")
    assert response.status_code == 200
    chaos = DebugState.model_validate_json(response.content).chaos
    assert chaos.config.seed == 9 and chaos.counters.page_requests == 0


def test_debug_endpoints_explain_bad_requests(erp: ErpServer) -> None:
    bad_json = httpx.post(
        erp.url + "/_debug/reset", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert bad_json.status_code == 400 and "not JSON" in bad_json.json()["error"]
    bad_field = httpx.post(erp.url + "/_debug/reset", json={"chaos": {"error_rate": 3}})
    assert bad_field.status_code == 422 and "chaos.error_rate" in bad_field.json()["details"][0]
    unknown = httpx.post(erp.url + "/_debug/chaos", json={"explode": True})
    assert unknown.status_code == 422
    assert httpx.post(erp.url + "/_debug/chaos", json=[1]).status_code == 422
    assert httpx.get(erp.url + "/_debug/reset").status_code == 405
    assert httpx.get(erp.url + "/_debug/nothing").status_code == 404
    assert erp_state(erp).chaos.config.enabled is False  # nothing changed


def test_chaos_endpoint_reads_and_merges(erp: ErpServer) -> None:
    current = httpx.get(erp.url + "/_debug/chaos").json()
    assert current["config"]["enabled"] is False and current["counters"]["valid_saves"] == 0
    updated = httpx.post(erp.url + "/_debug/chaos", json={"latency_ms": 5, "seed": 2}).json()
    assert updated["config"]["latency_ms"] == 5 and updated["config"]["seed"] == 2
    assert updated["config"]["enabled"] is False  # fields not sent are kept
    assert erp.state().chaos.config.latency_ms == 5


# -- lifecycle ----------------------------------------------------------------------------------


def test_data_survives_a_restart_and_reset_reseeds(tmp_path: Path) -> None:
    db = tmp_path / "erp.sqlite3"
    settings = ErpSettings()
    with ErpServer(db, settings=settings, chaos=ChaosConfig.off()) as erp:
        user = ErpUser(erp.url)
        user.login()
        assert user.new_bill().status_code == 303
        user.close()
    with ErpServer(db, settings=settings, chaos=ChaosConfig.off()) as erp:
        assert erp.state().bill("BILL-0011") is not None
    with ErpServer(db, settings=settings, chaos=ChaosConfig.off(), reset=True) as erp:
        assert erp.state().bill("BILL-0011") is None


def test_a_foreign_database_file_is_refused_and_kept(tmp_path: Path) -> None:
    junk = tmp_path / "notes.sqlite3"
    junk.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(ErpError, match="not an SQLite database"):
        ErpServer(junk, settings=ErpSettings()).start()
    assert junk.read_text().startswith("these are my notes")

    other = tmp_path / "other.sqlite3"
    import sqlite3

    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE mine (x)")
    with pytest.raises(ErpError, match="not an Acme Payables database"):
        ErpServer(other, settings=ErpSettings()).start()
    with pytest.raises(ErpError, match="cannot open the database"):
        ErpServer(tmp_path, settings=ErpSettings()).start()  # a folder


def test_a_busy_port_gives_a_clear_error(erp: ErpServer, tmp_path: Path) -> None:
    with pytest.raises(ErpError, match=f"cannot listen on 127.0.0.1:{erp.port}"):
        ErpServer(tmp_path / "second.sqlite3", settings=ErpSettings(), port=erp.port).start()


def test_start_and_stop_leave_no_threads_or_sockets(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    for n in range(3):
        erp = ErpServer(tmp_path / f"erp{n}.sqlite3", settings=ErpSettings(), chaos=ChaosConfig.off()).start()
        port = erp.port
        idle = socket.create_connection(("127.0.0.1", port))  # like a browser's preconnect: never sends
        with httpx.Client(base_url=erp.url) as client:
            assert client.get("/login").status_code == 200
        erp.stop()
        assert idle.recv(1) == b""  # the server closed the idle connection
        idle.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert set(threading.enumerate()) - before == set()
    erp.stop()  # stopping twice is harmless


def test_url_before_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="not started"):
        _ = ErpServer(tmp_path / "x.sqlite3", settings=ErpSettings()).url


# -- the command --------------------------------------------------------------------------------


def test_erp_serve_command_serves_until_terminated(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ACME_ERP_PASSWORD": "from-env"}
    cmd = [sys.executable, "-m", "taskcrew.cli", "erp", "serve", "--port", "0", "--db", str(tmp_path / "e.db"),
           "--no-chaos"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("Acme Payables on http://127.0.0.1:"), first
        url = first.split()[3]
        assert httpx.get(url + "/healthz").text == "ok\n"
        state = erp_state(url)
        assert state.chaos.config.enabled is False and len(state.bills) == 10
        user = ErpUser(url)
        assert user.login(password="from-env").status_code == 303
        user.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Acme Payables stopped." in out
    assert "from-env" not in first + out


def test_erp_serve_reports_a_bad_database(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("x" * 500)
    result = CliRunner().invoke(app, ["erp", "serve", "--port", "0", "--db", str(junk)])
    assert result.exit_code == 1
    assert "not an SQLite database" in result.output
    result = CliRunner().invoke(app, ["erp", "serve", "--port", "0", "--db", str(junk), "--error-rate", "2"])
    assert result.exit_code == 2 and "--error-rate" in result.output  # refused before the database is opened


def test_fetch_state_reports_an_unreachable_erp(tmp_path: Path) -> None:
    erp = ErpServer(tmp_path / "gone.sqlite3", settings=ErpSettings()).start()
    url = erp.url
    erp.stop()
    with pytest.raises(ErpUnreachable, match=r"cannot reach the ERP at .*/_debug/state"):
        fetch_state(url, timeout=5)
