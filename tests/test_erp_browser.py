"""A person's flow in real Chromium: log in, open the new-bill form, fill it, save, see the bill."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fixtures_erp import ErpFactory, erp_state

from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.tools.browser import BrowserConfig
from taskcrew.tools.browser.runtime import plan_launch

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        plan = plan_launch(BrowserConfig(), playwright_build=False)  # the system's Chromium
        launched = playwright.chromium.launch(**plan.launch_options())
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


def log_in(page: Any, erp: ErpServer) -> None:
    page.goto(erp.url + "/")
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("demo123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/bills")


def fill_northwind(page: Any) -> None:
    page.get_by_label("Vendor").select_option(label="Northwind Traders")
    page.get_by_label("Invoice number").fill("INV-2057")
    page.get_by_label("Amount").fill("1,284.50")
    page.get_by_label("Currency").select_option("USD")
    page.get_by_label("Invoice date").fill("2026-09-12")
    page.get_by_label("Due date").fill("2026-10-12")


def test_a_person_enters_a_bill(erp: ErpServer, page: Any) -> None:
    log_in(page, erp)
    assert page.get_by_role("heading", name="Bills").is_visible()
    page.get_by_role("link", name="New bill").first.click()
    page.wait_for_url("**/bills/new")

    fill_northwind(page)
    page.get_by_role("button", name="Save bill").click()
    alert = page.get_by_role("alert")
    assert "no thousands separators or currency symbols" in alert.inner_text()
    assert page.get_by_label("Invoice number").input_value() == "INV-2057"  # kept

    page.get_by_label("Amount").fill("1284.50")
    page.get_by_role("button", name="Save bill").click()
    page.wait_for_url("**/bills/BILL-0011")
    assert "Bill BILL-0011 saved" in page.get_by_role("status").inner_text()
    assert page.get_by_role("heading", name="Bill BILL-0011").is_visible()

    page.get_by_role("link", name="Bills", exact=True).click()
    page.wait_for_url("**/bills")
    row = page.locator("#row-BILL-0011")
    assert row.is_visible()
    assert "Northwind Traders" in row.inner_text() and "1284.50" in row.inner_text()
    bill = erp_state(erp).bill("BILL-0011")
    assert bill is not None and (bill.amount, bill.due_date) == ("1284.50", "2026-10-12")


def test_the_overlay_really_covers_the_page(erp_factory: ErpFactory, page: Any) -> None:
    erp = erp_factory(chaos=ChaosConfig(modal=True, save_faults=[]))
    page.goto(erp.url + "/login")
    overlay = page.locator("#notice-overlay")
    assert overlay.is_visible()
    button = page.get_by_role("button", name="Log in").bounding_box()
    covered = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('#notice-overlay') !== null",
        [button["x"] + button["width"] / 2, button["y"] + button["height"] / 2],
    )
    assert covered
    with page.expect_navigation():  # a form post: read the page it leads to, not the one left
        page.get_by_role("button", name="Accept and close").click()
    assert page.locator("#notice-overlay").count() == 0
    page.reload()
    assert page.locator("#notice-overlay").count() == 0  # remembered by cookie
    log_in(page, erp)
