"""The demo company gives away no answers, keeps one calendar, and says when a filter is not understood."""

from __future__ import annotations

import re
from pathlib import Path

from fixtures_erp import ErpUser, erp_state

from taskcrew.mock_erp import ErpServer

TEMPLATES = Path(__file__).parents[1] / "taskcrew" / "mock_erp" / "templates"


def rows(page: str) -> list[str]:
    return re.findall(r'<tr id="row-(BILL-\d+)">', page)


def test_no_page_of_the_erp_hints_at_an_eval_answer() -> None:
    from taskcrew.eval.models import load_cases

    answers = set()
    for case in load_cases():
        for value in re.findall(
            r"[A-Z]{2,4}-\d{3,}|\d[\d,]*\.\d{2}|\d{4}-\d{2}-\d{2}", case.model_dump_json()
        ):
            answers.add(value)
    sources = [p.read_text() for p in TEMPLATES.glob("*.html")]
    sources += [p.read_text() for p in (TEMPLATES.parent).glob("*.py")]
    text = "\n".join(sources)
    hints = re.findall(r"(?:e\.g\.|like|such as)\s+([^\s<\"),]+)", text)
    leaked = sorted(a for a in answers if any(a == h.strip(".'") for h in hints))
    assert not leaked, leaked


def test_a_new_bill_is_entered_on_the_simulated_day(erp: ErpServer, erp_user: ErpUser) -> None:
    response = erp_user.new_bill()
    assert response.status_code in (200, 303)
    state = erp_state(erp)
    new = state.bills[-1]
    assert new.created_at.startswith(state.today + "T")
    page = erp_user.http.get(f"/bills/{new.id}").text
    assert f"{state.today}T" in page


def test_list_filters_by_vendor_name_or_say_they_were_not_understood(erp_user: ErpUser) -> None:
    by_id = erp_user.http.get("/bills", params={"vendor": erp_user.vendor_ids()["Northwind Traders"]}).text
    by_name = erp_user.http.get("/bills", params={"vendor": "Northwind Traders"}).text
    assert rows(by_name) == rows(by_id) and rows(by_id)
    everything = rows(erp_user.http.get("/bills").text)
    assert len(rows(by_id)) < len(everything)

    unknown = erp_user.http.get("/bills", params={"vendor": "Nothwind"})
    assert unknown.status_code == 422 and rows(unknown.text) == []
    assert (
        "No vendor matches &#39;Nothwind&#39;" in unknown.text
        or "No vendor matches 'Nothwind'" in unknown.text
    )

    typo = erp_user.http.get("/bills", params={"vendr": "Northwind Traders"})
    assert "Unknown filter(s) ignored: vendr" in typo.text and 'role="alert"' in typo.text
