"""`taskcrew erp serve` and `taskcrew run` agree on the demo ERP's login without extra setup: the ERP
says who it is at /_about (a salted digest of its login, never the password), and the run uses the
demo login only when the digests match."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from taskcrew.crew.errors import WorkplaceError
from taskcrew.crew.workplace import demo_erp_login
from taskcrew.mock_erp import ChaosConfig, ErpServer, ErpSettings
from taskcrew.mock_erp.identity import APP_NAME
from taskcrew.mock_erp.settings import ENV_PASSWORD, ENV_USERNAME


def test_the_demo_erp_is_recognised_and_its_login_agreed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_USERNAME, raising=False)
    monkeypatch.delenv(ENV_PASSWORD, raising=False)
    with ErpServer(tmp_path / "erp.sqlite3", chaos=ChaosConfig.off()) as erp:
        about = httpx.get(erp.url + "/_about")
        assert about.status_code == 200 and about.json()["app"] == APP_NAME
        assert "demo123" not in about.text
        assert demo_erp_login(erp.url) == {"ERP_USERNAME": "demo", "ERP_PASSWORD": "demo123"}
        login = httpx.post(erp.url + "/login", data={"username": "demo", "password": "demo123"})
        assert login.status_code in (200, 303, 400, 403)  # the ERP is up; the crew logs in with the browser


def test_a_demo_erp_with_another_login_is_named_not_guessed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = ErpSettings(username="clerk", password="s3cret-x")  # type: ignore[arg-type]
    with ErpServer(tmp_path / "erp.sqlite3", settings=settings, chaos=ChaosConfig.off()) as erp:
        monkeypatch.delenv(ENV_USERNAME, raising=False)
        monkeypatch.delenv(ENV_PASSWORD, raising=False)
        with pytest.raises(WorkplaceError, match="another login than this environment's ACME_ERP_USERNAME"):
            demo_erp_login(erp.url)
        monkeypatch.setenv(ENV_USERNAME, "clerk")
        monkeypatch.setenv(ENV_PASSWORD, "s3cret-x")  # the same variables `erp serve` reads: agreed
        assert demo_erp_login(erp.url) == {"ERP_USERNAME": "clerk", "ERP_PASSWORD": "s3cret-x"}


def test_another_web_app_is_not_taken_for_the_demo_erp(tmp_path: Path) -> None:
    from taskcrew.intranet.server import IntranetServer, Site

    intranet = IntranetServer(Site.load(), port=0)
    intranet.start()
    try:
        assert demo_erp_login(intranet.base_url) is None  # no /_about: the run asks for ERP_USERNAME/PASSWORD
    finally:
        intranet.stop()
