"""Chaos mode over real HTTP: each fault, and that a seed reproduces it exactly."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import httpx
from fixtures_erp import ErpFactory, ErpUser, erp_state

from taskcrew.mock_erp import ChaosConfig, ErpServer
from taskcrew.mock_erp.validation import BILL_FIELDS

UserFactory = Callable[[ErpServer], ErpUser]


def test_first_save_expires_the_session_second_gets_503_third_goes_through(
    erp_factory: ErpFactory, erp_user_factory: UserFactory
) -> None:
    erp = erp_factory(chaos=ChaosConfig())  # the default: chaos on
    user = erp_user_factory(erp)
    user.login()

    # An invalid submission is not a "valid save" and is answered normally.
    assert user.new_bill(amount="1,284.50").status_code == 422

    first = user.new_bill()
    assert first.status_code == 303
    assert first.headers["location"] == "/login?next=/bills/new&reason=expired"
    login = user.http.get(first.headers["location"])
    assert "Your session has expired, please log in again." in login.text
    assert user.http.get("/bills").status_code == 303  # really logged out
    state = erp_state(erp)
    assert len(state.bills) == 10  # the entered data is lost
    assert [s.status for s in state.sessions] == ["revoked"]

    assert user.login(next_path="/bills/new").headers["location"] == "/bills/new"
    second = user.new_bill()
    assert second.status_code == 503
    assert "Service temporarily unavailable, try again." in second.text
    assert second.headers["retry-after"] == "1"
    assert len(erp_state(erp).bills) == 10

    third = user.new_bill()
    assert third.status_code == 303 and third.headers["location"] == "/bills/BILL-0011"
    state = erp_state(erp)
    assert [b.invoice_number for b in state.bills].count("INV-2057") == 1
    counters = state.chaos.counters
    assert (counters.valid_saves, counters.sessions_expired, counters.service_unavailable) == (3, 1, 1)


def test_save_faults_are_configurable(erp_factory: ErpFactory, erp_user_factory: UserFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(save_faults=["service_unavailable", "none", "expire_session"]))
    user = erp_user_factory(erp)
    user.login()
    assert user.new_bill().status_code == 503
    assert user.new_bill().headers["location"] == "/bills/BILL-0011"
    assert user.new_bill(invoice_number="INV-2058", amount="99.00").headers["location"].startswith("/login")
    assert user.login().status_code == 303
    assert user.new_bill(invoice_number="INV-2058", amount="99.00").headers["location"] == "/bills/BILL-0012"


def test_no_chaos_means_the_first_save_goes_through(erp: ErpServer, erp_user: ErpUser) -> None:
    assert erp_user.new_bill().headers["location"] == "/bills/BILL-0011"
    assert erp_state(erp).chaos.counters.sessions_expired == 0


def test_latency_delays_pages_but_not_ground_truth(erp_factory: ErpFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(save_faults=[], latency_ms=200))
    started = time.perf_counter()
    assert httpx.get(erp.url + "/login").status_code == 200
    assert time.perf_counter() - started >= 0.19  # a lower bound only: a slow machine cannot break it
    assert httpx.get(erp.url + "/_debug/state").status_code == 200
    counters = erp_state(erp).chaos.counters
    assert (counters.page_requests, counters.delayed_requests) == (1, 1)


def statuses(erp: ErpServer, n: int) -> list[int]:
    with httpx.Client(base_url=erp.url) as client:
        return [client.get("/login").status_code for _ in range(n)]


def test_random_5xx_are_reproducible_from_the_seed(erp_factory: ErpFactory) -> None:
    config = ChaosConfig(seed=7, error_rate=0.4, save_faults=[])
    first = statuses(erp_factory(chaos=config), 30)
    again = statuses(erp_factory(chaos=config), 30)
    other = statuses(erp_factory(chaos=config.model_copy(update={"seed": 8})), 30)
    assert first == again
    assert first != other
    assert 200 in first and {s for s in first if s != 200} <= {500, 502, 503, 504}
    assert any(s >= 500 for s in first)


def test_random_5xx_page_and_debug_exemption(erp_factory: ErpFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(error_rate=1.0))
    response = httpx.get(erp.url + "/login")
    assert response.status_code in (500, 502, 503, 504)
    assert "Service temporarily unavailable, try again." in response.text
    assert httpx.get(erp.url + "/_debug/state").status_code == 200
    assert erp_state(erp).chaos.counters.random_errors == 1


def test_the_notice_overlay_covers_pages_until_dismissed(erp_factory: ErpFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(modal=True))
    with httpx.Client(base_url=erp.url) as client:
        page = client.get("/login?next=/vendors").text
        assert 'id="notice-overlay"' in page and 'aria-modal="true"' in page
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        dismissed = client.post("/notice/dismiss", data={"csrf_token": token, "next": "/login?next=/vendors"})
        assert dismissed.status_code == 303 and dismissed.headers["location"] == "/login?next=/vendors"
        assert "acme_notice=dismissed" in dismissed.headers["set-cookie"]
        assert 'id="notice-overlay"' not in client.get("/login").text
    assert 'id="notice-overlay"' in httpx.get(erp.url + "/login").text  # a new visitor sees it again


def test_the_overlay_dismissal_needs_a_csrf_token(erp_factory: ErpFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(modal=True))
    response = httpx.post(erp.url + "/notice/dismiss", data={"next": "/login"})
    assert response.status_code == 403


def field_order(page: str) -> list[str]:
    return re.findall(r'<div class="field[^"]*" id="field-(\w+)">', page)


def test_shuffled_fields_are_reproducible(erp_factory: ErpFactory, erp_user_factory: UserFactory) -> None:
    orders = []
    for seed in (3, 3, 4):
        erp = erp_factory(chaos=ChaosConfig(seed=seed, shuffle_fields=True))
        user = erp_user_factory(erp)
        user.login()
        orders.append(field_order(user.http.get("/bills/new").text))
    assert orders[0] == orders[1]
    assert sorted(orders[0]) == sorted(BILL_FIELDS)
    assert orders[0] != list(BILL_FIELDS)
    assert orders[0] != orders[2] or orders[2] != list(BILL_FIELDS)


def test_shuffled_form_still_saves(erp_factory: ErpFactory, erp_user_factory: UserFactory) -> None:
    erp = erp_factory(chaos=ChaosConfig(shuffle_fields=True, save_faults=[]))
    user = erp_user_factory(erp)
    user.login()
    assert field_order(user.http.get("/bills/new").text) != list(BILL_FIELDS)
    assert user.new_bill().headers["location"] == "/bills/BILL-0011"


def test_chaos_can_be_changed_at_runtime(erp: ErpServer, erp_user_factory: UserFactory) -> None:
    response = httpx.post(
        erp.url + "/_debug/chaos", json={"enabled": True, "save_faults": ["service_unavailable"]}
    )
    assert response.status_code == 200
    assert response.json()["config"]["save_faults"] == ["service_unavailable"]
    user = erp_user_factory(erp)
    user.login()
    assert user.new_bill().status_code == 503
    assert user.new_bill().status_code == 303
