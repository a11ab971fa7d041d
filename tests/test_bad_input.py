"""Every bad input a user can type gets one clear line and exit 2, before anything heavy starts.

Each row runs the real CLI (Typer's CliRunner, an isolated home). The test also writes the table of
rows, exit codes and messages to docs/bad-input.md: when the file is out of date it is rewritten and
the test fails, so the committed table always says what the CLI really does.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskcrew.cli import app
from taskcrew.inputs import TASK_MAX_CHARS

DOC = Path(__file__).resolve().parent.parent / "docs" / "bad-input.md"
MODEL = ["--model", "m1@http://127.0.0.1:9/v1", "--verifier-model", "m2@http://127.0.0.1:9/v1"]
JOB_MODELS = ["--model", "scripted/solver", "--verifier-model", "scripted/auditor"]


class _JsonHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"status": "ok", "service": "not a web app"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def json_server() -> Iterator[str]:
    """A port that answers HTTP, but not like a web application (JSON, not HTML)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JsonHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _HtmlHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><body><h1>Team wiki</h1></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def html_server() -> Iterator[str]:
    """Another web application (HTML, but not the ERP)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@dataclass
class Row:
    what: str
    args: list[str]
    expect: str  # a regex the one-line message must match
    code: int = 2
    env: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None


def _file(name: str, text: str = "x") -> Callable[[Path], None]:
    return lambda tmp: (tmp / name).write_text(text)


def _truncated_store(tmp: Path) -> None:
    (tmp / "store").mkdir()
    (tmp / "store" / "chroma.sqlite3").write_bytes(b"")


def _half_store(tmp: Path) -> None:
    """A real SQLite database cut in half, as a full disk or a killed copy leaves it."""
    (tmp / "store").mkdir()
    db = tmp / "store" / "chroma.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE collections (id TEXT, name TEXT)")
    conn.execute("CREATE TABLE embeddings (id INTEGER PRIMARY KEY, doc TEXT)")
    conn.executemany(
        "INSERT INTO embeddings (doc) VALUES (?)", [(f"passage {i} " * 40,) for i in range(3000)]
    )
    conn.commit()
    conn.close()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _prices_garbage(tmp: Path) -> None:
    (tmp / "prices.yaml").write_text("openai/gpt-4o: [this is: not, a price\n")


def _prices_wrong(tmp: Path) -> None:
    (tmp / "prices.yaml").write_text("openai/gpt-4o:\n  input_per_mtok: cheap\n")


ROWS = [
    Row("run: empty task", ["run", "", *MODEL], r"the task is empty"),
    Row("run: blank task", ["run", "   \n\t", *MODEL], r"the task is empty"),
    Row("run: task over the limit", ["run", "x" * (TASK_MAX_CHARS + 1), *MODEL], r"over the limit of"),
    Row(
        "run: scripted model",
        ["run", "Pay the bill", "--model", "scripted/solver"],
        r"taskcrew eval --models",
    ),
    Row(
        "run: empty --criterion",
        ["run", "Pay the bill", *MODEL, "--criterion", " "],
        r"a --criterion is empty",
    ),
    Row("run: no model configured", ["run", "Pay the bill"], r"no model configured"),
    Row(
        "run: model without provider",
        ["run", "Pay", "--model", "gpt-4o", "--verifier-model", "openai/y"],
        r"has no provider",
    ),
    Row(
        "run: model key missing",
        ["run", "Pay", "--model", "anthropic/x", "--verifier-model", "openai/y"],
        r"needs an API key",
    ),
    Row(
        "run: --runs-dir is a file",
        ["run", "Pay", *MODEL, "--runs-dir", "{tmp}/afile"],
        r"is a file, not a folder",
        setup=_file("afile"),
    ),
    Row(
        "run: --runs-dir under a file",
        ["run", "Pay", *MODEL, "--runs-dir", "{tmp}/afile/runs"],
        r"cannot be created",
        setup=_file("afile"),
    ),
    Row(
        "run: --sandbox is a file",
        ["run", "Pay", *MODEL, "--sandbox", "{tmp}/afile"],
        r"is a file, not a folder",
        setup=_file("afile"),
    ),
    Row("run: --sandbox missing", ["run", "Pay", *MODEL, "--sandbox", "{tmp}/nowhere"], r"does not exist"),
    Row(
        "run: --erp-url not a URL", ["run", "Pay", *MODEL, "--erp-url", "erp.local"], r"not an http\(s\) URL"
    ),
    Row(
        "run: --erp-url bad port",
        ["run", "Pay", *MODEL, "--erp-url", "http://127.0.0.1:99999"],
        r"not an http\(s\) URL",
    ),
    Row(
        "run: --erp-url answers JSON",
        ["run", "Pay", *MODEL, "--erp-url", "{json}", "--intranet-url", ""],
        r"does not answer like a web application",
    ),
    Row(
        "run: TASKCREW_PRICES missing",
        ["run", "Pay", *MODEL],
        r"prices file .* cannot be read",
        env={"TASKCREW_PRICES": "{tmp}/nope.yaml"},
    ),
    Row(
        "run: TASKCREW_PRICES not YAML",
        ["run", "Pay", *MODEL],
        r"not valid YAML",
        env={"TASKCREW_PRICES": "{tmp}/prices.yaml"},
        setup=_prices_garbage,
    ),
    Row(
        "run: TASKCREW_PRICES wrong shape",
        ["run", "Pay", *MODEL],
        r"no valid input_per_mtok",
        env={"TASKCREW_PRICES": "{tmp}/prices.yaml"},
        setup=_prices_wrong,
    ),
    Row("audit: nothing to audit", ["audit"], r"give a claim to audit"),
    Row("eval: unknown provider", ["eval", "--models", "gpt-4o"], r"has no provider"),
    Row("eval: unknown scripted model", ["eval", "--models", "scripted/nosuch"], r"unknown scripted model"),
    Row(
        "eval: --out is a file",
        ["eval", "--models", "scripted/solver", "--out", "{tmp}/afile"],
        r"is a file, not a folder",
        setup=_file("afile"),
    ),
    Row(
        "eval: --cases matches none",
        ["eval", "--models", "scripted/solver", "--cases", "zzz,yyy*"],
        r"no case matches",
    ),
    Row("eval --list: --cases matches none", ["eval", "--list", "--cases", "zzz"], r"no case matches"),
    Row("knowledge search: empty query", ["knowledge", "search", "  "], r"search query is empty"),
    Row(
        "knowledge: --store is a file",
        ["knowledge", "search", "due", "--store", "{tmp}/afile"],
        r"is a file, not a folder",
        setup=_file("afile"),
    ),
    Row(
        "knowledge: chroma.sqlite3 is 0 bytes",
        ["knowledge", "search", "due", "--store", "{tmp}/store"],
        r"is empty \(0 bytes",
        setup=_truncated_store,
    ),
    Row(
        "knowledge: chroma.sqlite3 half-truncated",
        ["knowledge", "facts", "--store", "{tmp}/store"],
        r"is damaged",
        setup=_half_store,
    ),
    Row("erp serve: port too big", ["erp", "serve", "--port", "99999"], r"less than or equal to 65535"),
    Row("erp serve: negative port", ["erp", "serve", "--port", "-1"], r"greater than or equal to 0"),
    Row(
        "intranet serve: negative port", ["intranet", "serve", "--port", "-5"], r"greater than or equal to 0"
    ),
    Row("runs show: no such run", ["runs", "show", "nosuchrun"], r"is not a run folder"),
    Row("submit: empty task", ["submit", ""], r"the task is empty"),
    Row("submit: blank task", ["submit", "  \n"], r"the task is empty"),
    Row("submit: task over the limit", ["submit", "x" * (TASK_MAX_CHARS + 1)], r"over the limit of"),
    Row("submit: --batch with --for-each", ["submit", "Enter", "--batch", "--for-each", "a"], r"not both"),
    Row("submit: model without provider", ["submit", "Enter it", "--model", "gpt-4o"], r"has no provider"),
    Row(
        "submit: unknown provider",
        ["submit", "Enter it", "--verifier-model", "acme/m1"],
        r"unknown provider 'acme'",
    ),
    Row("worker: --erp-url not a URL", ["worker", "--erp-url", "erp.local"], r"not an http\(s\) URL"),
    Row(
        "console: --users (one setting for every process)",
        ["console", "--users", "{tmp}/users.yaml"],
        r"--users is no longer an option.*set TASKCREW_CONSOLE_USERS=",
    ),
    Row(
        "console add-user: --users",
        ["console", "add-user", "ana", "--users", "{tmp}/users.yaml"],
        r"--users is no longer an option.*set TASKCREW_CONSOLE_USERS=",
    ),
    Row(
        "console: users file missing",
        ["console"],
        r"TASKCREW_CONSOLE_USERS=.*nope.yaml: no such file; create it with `taskcrew console add-user NAME`",
        env={"TASKCREW_CONSOLE_USERS": "{tmp}/nope.yaml"},
    ),
    Row("jobs list: unknown status", ["jobs", "list", "--status", "bogus"], r"no job status 'bogus'"),
    # a home with no job database yet: nothing is created by a command that reads or changes jobs
    Row("jobs show: no job database", ["jobs", "show", "nope"], r"there is no job database at", code=2),
    Row("jobs retry: no job database", ["jobs", "retry", "nope"], r"there is no job database at", code=2),
    Row(
        "approvals approve: no job database",
        ["approvals", "approve", "nope"],
        r"there is no job database at",
        code=2,
    ),
    Row("worker: --concurrency 0", ["worker", "--concurrency", "0"], r"greater than or equal to 1"),
    Row("jobs limits: 0 ERP sessions", ["jobs", "limits", "--erp-sessions", "0"], r"greater than or equal"),
    Row("console: port too big", ["console", "--port", "99999"], r"less than or equal to 65535"),
    Row("recipe: required parameter missing", ["enter-invoice"], r"--vendor is required"),
    Row("recipe: empty parameter", ["enter-invoice", "--vendor", ""], r"--vendor: is empty"),
    Row("recipes show: unknown recipe", ["recipes", "show", "nope"], r"no recipe named 'nope'"),
    Row(
        "submit: --db is a path",
        ["submit", "Enter the bill", *JOB_MODELS, "--db", "{tmp}/jobs.sqlite3"],
        r"is a path, not a database URL: write sqlite:///",
    ),
    Row(
        "console: --jobs-db is a path", ["console", "--jobs-db", "{tmp}/jobs.sqlite3"], r"not a database URL"
    ),
    Row(
        "jobs list: TASKCREW_HOME is a file",
        ["jobs", "list"],
        r"TASKCREW_HOME <tmp>/afile is a file, not a folder",
        env={"TASKCREW_HOME": "{tmp}/afile"},
        setup=_file("afile"),
    ),
    Row(
        "worker: --erp-url is another web app",
        ["worker", "--erp-url", "{html}", "--intranet-url", ""],
        r"is not the demo ERP .* check --erp-url",
    ),
    Row(
        "knowledge ingest: missing path", ["knowledge", "ingest", "{tmp}/nope.pdf"], r"no such file or folder"
    ),
    Row(
        "submit: {item} without --for-each",
        ["submit", "Enter {item}'s invoice", *JOB_MODELS],
        r"no items: add --for-each",
    ),
    Row("submit: no model configured", ["submit", "Enter the bill"], r"no model configured for the job"),
    Row(
        "submit: a model server the operator did not configure",
        ["submit", "Enter the bill", "--model", "m1@http://evil.example/v1"],
        r"names its own server",
    ),
    Row(
        "submit: a name not in the models file",
        ["submit", "Enter the bill", "--model", "gpt-9"],
        r"not one of the operator's models: use one of claude",
        env={"TASKCREW_MODELS_FILE": "{tmp}/models.yaml"},
        setup=_file("models.yaml", "models:\n  claude: {model: anthropic/claude-sonnet-4-5}\n"),
    ),
    Row(
        "submit: models file invalid",
        ["submit", "Enter the bill", "--model", "claude"],
        r"models file .*: models.claude.model: .*has no provider",
        env={"TASKCREW_MODELS_FILE": "{tmp}/models.yaml"},
        setup=_file("models.yaml", "models:\n  claude: {model: claude-sonnet}\n"),
    ),
    Row("console add-user: non-ASCII name", ["console", "add-user", "élodie"], r"use 1-64 ASCII letters"),
    Row("erp serve: --error-rate 2", ["erp", "serve", "--error-rate", "2"], r"less than or equal to 1"),
    Row("erp serve: --latency-ms -1", ["erp", "serve", "--latency-ms", "-1"], r"greater than or equal to 0"),
    Row(
        "worker: --approval-hours -1", ["worker", "--approval-hours", "-1"], r"greater than or equal to 0.01"
    ),
    Row("worker: --stale-after 0", ["worker", "--stale-after", "0"], r"greater than or equal to 1"),
    Row("worker: --stop-grace -1", ["worker", "--stop-grace", "-1"], r"greater than or equal to 0"),
    Row(
        "jobs limits: --concurrency over --erp-sessions",
        ["jobs", "limits", "--concurrency", "5", "--erp-sessions", "2"],
        r"--concurrency 5 is more than the 2 ERP session",
    ),
]


def _one_line(output: str) -> str:
    """The message, as a user reads it: Typer's usage box and the hint reduced to plain lines."""
    lines = [re.sub(r"^[│╭╰─ ]+|[│╮╯─ ]+$", "", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("Usage:", "Try 'taskcrew", "Error"))]
    return " ".join(lines)


def _run(
    row: Row, tmp: Path, json_url: str, html_url: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    if row.setup:
        row.setup(tmp)
    for key, value in row.env.items():
        monkeypatch.setenv(key, value.format(tmp=tmp))
    args = [a.format(tmp=tmp, json=json_url, html=html_url) if "{item}" not in a else a for a in row.args]
    result = CliRunner().invoke(app, args)
    text = _one_line(result.output).replace(str(tmp), "<tmp>")
    text = text.replace(json_url, "http://127.0.0.1:<port>").replace(html_url, "http://127.0.0.1:<port>")
    return result.exit_code, text


@pytest.mark.timeout(600)  # ~90 rows, each a real CLI call; slow only on a loaded machine
def test_bad_inputs_are_one_line_errors_and_the_table_is_true(
    tmp_path: Path, isolated_home: Path, json_server: str, html_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    table = []
    failures = []
    for n, row in enumerate(ROWS):
        case_dir = tmp_path / f"case{n}"
        case_dir.mkdir()
        with monkeypatch.context() as patch:
            code, text = _run(row, case_dir, json_server, html_server, patch)
        text = text.replace(str(tmp_path), "<tmp>")
        if code != row.code or not re.search(row.expect, text) or "Traceback" in text:
            failures.append(f"{row.what}: exit {code}, {text!r}")
        shown = " ".join(repr(a) if not a or a != a.strip() or " " in a else a for a in row.args)
        shown = shown if len(shown) < 70 else shown[:60] + "…"
        message = text.replace("|", "\\|")
        table.append(f"| {row.what} | `{shown}` | {code} | {message} |")
    assert not failures, "\n".join(failures)
    assert not list((isolated_home / "runs").glob("*")), "a refused run left a run folder behind"
    _check_doc(table)


def _check_doc(table: list[str]) -> None:
    text = (
        "# Bad input: what the CLI says\n\n"
        "Generated by `tests/test_bad_input.py` (it rewrites this file when the CLI's messages change).\n"
        "Every row is refused before anything heavy starts: no browser, no model call, no run folder.\n"
        "`<tmp>` stands for the folder the test used; `m1@…`/`m2@…` are OpenAI-compatible model strings.\n\n"
        "| bad input | command | exit | message |\n|---|---|---|---|\n" + "\n".join(table) + "\n"
    )
    if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
        DOC.write_text(text, encoding="utf-8")
        pytest.fail(f"{DOC.name} was out of date and has been regenerated: review and commit it")


def test_a_damaged_store_is_left_as_it_was(tmp_path: Path, isolated_home: Path) -> None:
    """A 0-byte chroma.sqlite3 is reported, never replaced by a fresh store with the demo handbook."""
    _truncated_store(tmp_path)
    for args in (
        ["knowledge", "search", "due date"],
        ["knowledge", "facts"],
        ["knowledge", "ingest", str(tmp_path / "x.md")],
    ):
        (tmp_path / "x.md").write_text("# Payment terms\nNet 30.\n")
        result = CliRunner().invoke(app, [*args[:2], *args[2:], "--store", str(tmp_path / "store")])
        assert result.exit_code == 2, result.output
        assert "mv " in result.output and "nothing was changed" in result.output
    assert (tmp_path / "store" / "chroma.sqlite3").stat().st_size == 0
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["chroma.sqlite3"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused_before_any_run(tmp_path: Path) -> None:
    from taskcrew.inputs import InputError, check_writable_dir

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        for target in (locked, locked / "runs"):
            with pytest.raises(InputError, match="is not writable"):
                check_writable_dir(target, "--runs-dir")
    finally:
        locked.chmod(0o755)
    assert check_writable_dir(tmp_path / "new" / "runs", "--runs-dir") == tmp_path / "new" / "runs"
    assert not (tmp_path / "new").exists()  # checking creates nothing
