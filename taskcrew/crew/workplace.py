"""The composition root: the systems a run works in, started and wired once, then used by runs.

A Workplace owns the services (the demo ERP and intranet, started in-process when they are the
local defaults and not already running), the secrets vault, the knowledge store, and builds each
run's browser, policy gate and tools. The CLI, the audit mode and the eval sweep all go through it.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from taskcrew.config import ERP_NAME, INTRANET_NAME, WorkplaceSettings
from taskcrew.crew.audit import AuditResult, criteria_from_claim, criteria_from_run, run_audit
from taskcrew.crew.browsing import DecisionLog, RunBrowser
from taskcrew.crew.context import RunLimits
from taskcrew.crew.errors import WorkplaceError
from taskcrew.crew.run import RunResources, RunResult, RunSettings, ScriptedFactory, run_task
from taskcrew.crew.toolbox import System
from taskcrew.inputs import probe_web_app

LOCAL_HOSTS = ("127.0.0.1", "localhost")
SECRET_NAMES = ("ERP_USERNAME", "ERP_PASSWORD")
PUBLIC_NAMES = ("ERP_USERNAME",)  # typed from the vault, but a login name is not redacted


def reachable(url: str, timeout: float = 1.5) -> bool:
    """Something answers HTTP at ``url`` (any status: a login page or a 404 still means it is up)."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/", timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def demo_erp_login(url: str) -> dict[str, str] | None:
    """The login of the demo ERP at ``url`` when it is ours (``/_about``) and its login is the one
    this environment configures for it (``ACME_ERP_*``, else demo/demo123); else None."""
    import json

    from pydantic import ValidationError

    from taskcrew.mock_erp.identity import ABOUT_PATH, APP_NAME, ErpAbout, login_matches
    from taskcrew.mock_erp.settings import ErpSettings

    try:
        with urllib.request.urlopen(url.rstrip("/") + ABOUT_PATH, timeout=3) as response:
            info = ErpAbout.model_validate(json.loads(response.read(65_536)))
    except (urllib.error.URLError, OSError, ValueError, ValidationError):
        return None
    if info.app != APP_NAME:
        return None
    settings = ErpSettings.from_env()
    if not login_matches(info, settings):
        raise WorkplaceError(
            f"the demo ERP at {url} was started with another login than this environment's "
            "ACME_ERP_USERNAME / ACME_ERP_PASSWORD: set the same ones here, or ERP_USERNAME and ERP_PASSWORD"
        )
    return {"ERP_USERNAME": settings.username, "ERP_PASSWORD": settings.password.get_secret_value()}


def erp_login(url: str) -> dict[str, str]:
    """The login for the ERP at ``url`` when ERP_USERNAME/ERP_PASSWORD are not set: the demo ERP's
    own (``taskcrew erp serve``); else a WorkplaceError saying what is wrong (checked by the worker
    at start, before it takes any job)."""
    demo = demo_erp_login(url)
    if demo is not None:
        return demo
    if not reachable(url):
        raise WorkplaceError(f"the ERP at {url} does not answer: start it, or check --erp-url")
    raise WorkplaceError(
        f"{url} is not the demo ERP (Acme Payables) and ERP_USERNAME / ERP_PASSWORD are not set: "
        "check --erp-url, or set them for your ERP in the environment or .env"
    )


def _port(url: str) -> int:
    parts = urlsplit(url)
    if parts.port is not None:
        return parts.port  # 0 = any free port
    return 443 if parts.scheme == "https" else 80


class Workplace:
    """Use as a context manager: services start on enter and stop on exit."""

    def __init__(self, settings: WorkplaceSettings, human: Any) -> None:
        self.settings = settings
        self.human = human
        self._stack = ExitStack()
        self.erp_url = settings.erp_url.rstrip("/")
        self.intranet_url = settings.intranet_url.rstrip("/") if settings.intranet_url else None
        self.erp_server: Any = None
        self.vault: Any = None
        self.store: Any = None
        self._runtime: Any = None  # one Chromium for all runs of this workplace, started on first use

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Workplace:
        try:
            self._check_sandbox()
            self._check_chromium()
            self._start_services()
            self.vault = self._vault()
            if self.settings.use_knowledge:
                self.store = self._knowledge_store()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runtime is not None:
            self._runtime.close()
        self._stack.close()

    def _check_sandbox(self) -> None:
        if not self.settings.sandbox.is_dir():
            raise WorkplaceError(
                f"sandbox folder {self.settings.sandbox} does not exist: pass --sandbox with the folder of "
                "company files (or unset TASKCREW_SANDBOX to use the demo company)"
            )

    def _check_chromium(self) -> None:
        """Fail before the run, not in the middle of it, when no Chromium can be found."""
        import shutil

        from taskcrew.tools.browser.runtime import INSTALL_HINT, PATH_NAMES

        configured = self.settings.chromium or os.environ.get("TASKCREW_CHROMIUM")
        if configured:
            if not Path(configured).is_file():
                raise WorkplaceError(f"the configured Chromium {configured} does not exist. {INSTALL_HINT}")
            return
        playwright_dir = Path(
            os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright"
        )
        if any(playwright_dir.glob("chromium*")) or any(shutil.which(name) for name in PATH_NAMES):
            return
        raise WorkplaceError(INSTALL_HINT)

    def _start_services(self) -> None:
        if reachable(self.erp_url):
            probe_web_app(self.erp_url, "the ERP", "--erp-url")
        else:
            if not (self.settings.start_local and urlsplit(self.erp_url).hostname in LOCAL_HOSTS):
                raise WorkplaceError(
                    f"the ERP at {self.erp_url} is unreachable: start it with `taskcrew erp serve` "
                    "or pass the right --erp-url"
                )
            from taskcrew.mock_erp import ChaosConfig, ErpServer

            chaos = ChaosConfig(seed=self.settings.chaos_seed) if self.settings.chaos else ChaosConfig.off()
            server = ErpServer(self.settings.erp_db, chaos=chaos, port=_port(self.erp_url))
            self.erp_server = self._stack.enter_context(server)
            self.erp_url = server.url
        if self.intranet_url and not reachable(self.intranet_url):
            if self.settings.start_local and urlsplit(self.intranet_url).hostname in LOCAL_HOSTS:
                from taskcrew.intranet.server import IntranetServer, Site

                intranet = IntranetServer(Site.load(), port=_port(self.intranet_url))
                intranet.start()
                self._stack.callback(intranet.stop)
                self.intranet_url = intranet.base_url.rstrip("/")
            else:
                self.intranet_url = None  # research tools then only use files and the ERP

    def _vault(self) -> Any:
        from taskcrew.tools.vault import Vault

        # The ERP's credentials may only ever be typed into the ERP (host and port).
        hosts = {name: _host_port(self.erp_url) for name in SECRET_NAMES}
        if self.erp_server is not None:  # the demo ERP we started: its own configured login
            erp = self.erp_server.settings
            secrets = {"ERP_USERNAME": erp.username, "ERP_PASSWORD": erp.password.get_secret_value()}
            return Vault(secrets, public=PUBLIC_NAMES, hosts=hosts)
        vault = Vault.from_env(SECRET_NAMES, public=PUBLIC_NAMES, hosts=hosts)
        if len(vault) < len(SECRET_NAMES):
            return Vault(erp_login(self.erp_url), public=PUBLIC_NAMES, hosts=hosts)
        return vault

    def _knowledge_store(self) -> Any:
        from taskcrew.knowledge import open_store, seed_if_empty

        store = open_store(self.settings.knowledge_dir)
        seed_if_empty(store, self.settings.sandbox)
        return store

    # ------------------------------------------------------------------ per run
    def systems(self) -> list[System]:
        systems = [
            System(
                name=ERP_NAME,
                url=self.erp_url + "/",
                description="the company's accounts-payable system (web application)",
                credentials=list(SECRET_NAMES),
            )
        ]
        if self.intranet_url:
            systems.append(
                System(
                    name=INTRANET_NAME,
                    url=self.intranet_url + "/",
                    description="company news, vendor announcements, finance reference pages; "
                    "web_search searches it, web_fetch reads its pages",
                )
            )
        return systems

    def _policy(self, log: DecisionLog, human: Any, *, read_only: bool = False) -> Any:
        from taskcrew.tools.policy import Policy, PolicyConfig

        hosts = PolicyConfig.for_url(self.erp_url).allowed_hosts
        if self.intranet_url:
            hosts += PolicyConfig.for_url(self.intranet_url).allowed_hosts
        return Policy(PolicyConfig(allowed_hosts=hosts, read_only=read_only), human, recorder=log.record)

    def _research(self, policy: Any) -> tuple[list[Any], Any]:
        from taskcrew.tools.research.crew_tools import PythonTool, WebFetchTool, WebSearchTool
        from taskcrew.tools.research.python_sandbox import PythonSandbox
        from taskcrew.tools.research.search import DdgsBackend, IntranetSearchBackend
        from taskcrew.tools.research.web import WebFetcher

        fetcher = WebFetcher(policy.read_refusal)  # the policy's rule for every read by code
        tools: list[Any] = [WebFetchTool(fetcher), PythonTool(PythonSandbox())]
        if self.settings.web_search == "web":
            tools.insert(0, WebSearchTool(DdgsBackend()))
        elif self.intranet_url:
            tools.insert(0, WebSearchTool(IntranetSearchBackend(self.intranet_url)))

        def fetch_text(url: str) -> str | None:
            """Intranet pages only: ERP pages sit behind a login, so the verifier judges those."""
            if not self.intranet_url or urlsplit(url).netloc != urlsplit(self.intranet_url).netloc:
                return None
            result = fetcher.fetch(url)
            return result.data.text if result.ok and result.data is not None else None

        return tools, fetch_text

    def resources(
        self,
        *,
        scripted: ScriptedFactory | None = None,
        listeners: list[Any] | None = None,
        knowledge: bool = True,
        read_only: bool = False,
        human: Any = None,
        store: Any = None,
    ) -> RunResources:
        """A run's browser (behind a fresh policy gate; ``read_only`` refuses every change), tools
        and knowledge."""
        from taskcrew.crew.provenance import SourcedHuman
        from taskcrew.tools.browser import BrowserConfig, BrowserRuntime

        log = DecisionLog()
        human = SourcedHuman(human or self.human)  # approvals show where each value came from
        policy = self._policy(log, human, read_only=read_only)
        config = BrowserConfig(
            executable_path=self.settings.chromium,
            headless=self.settings.headless,
            slow_mo_ms=self.settings.slow_mo_ms,
        )
        if self._runtime is None:
            self._runtime = BrowserRuntime(config)
        research_tools, fetch_text = self._research(policy)
        store, knowledge_tools = self._knowledge(store or self.store) if knowledge else (None, [])
        # the run's own view: the stored secrets, and hidden values that end with the run
        vault = self.vault.for_run()
        browser = RunBrowser(config, policy, vault, log, runtime=self._runtime)

        def page_text(url: str) -> str | None:
            """A web page as the browser showed it (ERP pages sit behind a login), else fetched."""
            return browser.page_text(url) or (fetch_text(url) if fetch_text is not None else None)

        return RunResources(
            human=human,
            redact=vault.redact,
            knowledge=store,
            knowledge_tools=knowledge_tools,
            browser=browser,
            research_tools=research_tools,
            fetch_text=page_text,
            decisions=log,
            scripted=scripted,
            listeners=listeners or [],
            readback=self.readback_rules(),
        )

    def readback_rules(self) -> Any:
        """The company's read-back rules (tools/readback.py) with this workplace's addresses; none when
        it has no rule file or the file cannot be used (a durable job refuses such a file itself)."""
        from taskcrew.tools.readback import ReadBackFileError, ReadBackRules, load_rules, rules_file

        systems = {"erp": self.erp_url, "intranet": self.intranet_url or ""}
        try:
            return load_rules(rules_file(self.settings.sandbox), systems)
        except ReadBackFileError:
            return ReadBackRules()

    def today(self) -> date:
        """The demo ERP's 'today' when we run the demo company; else TASKCREW_TODAY or the real date."""
        if self.erp_server is not None:
            return self.erp_server.settings.today
        if value := os.environ.get("TASKCREW_TODAY"):
            return date.fromisoformat(value)
        return date.today()

    def run_settings(self, task: str, **overrides: Any) -> RunSettings:
        return RunSettings(
            task=task,
            today=self.today(),
            sandbox=self.settings.sandbox,
            runs_dir=self.settings.runs_dir,
            systems=self.systems(),
            **overrides,
        )

    def run(
        self,
        task: str,
        *,
        worker_model: str | None = None,
        verifier_model: str | None = None,
        allow_same_verifier: bool = False,
        limits: RunLimits | None = None,
        scripted: ScriptedFactory | None = None,
        listeners: list[Any] | None = None,
        human: Any = None,
        store: Any = None,
        criteria: list[str] | None = None,
        read_only: bool = False,
        on_run_dir: Callable[[Path], None] | None = None,
    ) -> RunResult:
        """One run. ``human`` / ``store`` replace the workplace's person and knowledge store for it;
        ``criteria`` are kept in every plan; ``read_only`` refuses every change in the policy gate;
        ``on_run_dir`` is told the run's folder once it is made."""
        settings = self.run_settings(
            task,
            worker_model=worker_model,
            verifier_model=verifier_model,
            allow_same_verifier=allow_same_verifier,
            limits=limits or RunLimits(),
            criteria=criteria or [],
            read_only=read_only,
        )
        res = self.resources(
            scripted=scripted, listeners=listeners, human=human, store=store, read_only=read_only
        )
        if on_run_dir is not None:
            res.on_run_dir = on_run_dir
        return run_task(settings, res)

    def audit(
        self,
        claim: str | None = None,
        *,
        run_dir: Path | None = None,
        verifier_model: str | None = None,
        scripted: ScriptedFactory | None = None,
        listeners: list[Any] | None = None,
    ) -> AuditResult:
        """The verifier alone, read-only: check a claim, or re-check a past run's success criteria."""
        criteria: list[str]
        if run_dir is not None:
            # held to its job's signed record (refused: changed since, or nothing vouches for it)
            task, criteria = criteria_from_run(run_dir)  # a RunCriteria: the audit sees that run's sends
            older = " (an older run: its files were not checked against its job's record)"
            subject = f"re-check of run {run_dir.name}{older if criteria.unsealed else ''}: {task}"
        else:
            criteria = criteria_from_claim(claim or "")
            subject = claim or ""
        settings = self.run_settings(subject.strip(), verifier_model=verifier_model)
        # the procedures define terms such as "latest"; an audit reads them and writes no facts
        res = self.resources(scripted=scripted, listeners=listeners, knowledge=True, read_only=True)
        return run_audit(settings, res, criteria)

    def _knowledge(self, store: Any) -> tuple[Any, list[Any]]:
        if store is None:
            return None, []
        from taskcrew.crew.knowledge import StoreKnowledge
        from taskcrew.tools.knowledge import RecallFactsTool, SearchProceduresTool

        return StoreKnowledge(store), [SearchProceduresTool(store), RecallFactsTool(store)]


def _host_port(url: str) -> list[str]:
    """``host:port`` of ``url``, with the other spelling of the loopback address."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    out = [f"{host}:{port}"]
    if host in ("127.0.0.1", "localhost"):
        out.append(f"{'localhost' if host == '127.0.0.1' else '127.0.0.1'}:{port}")
    return out
