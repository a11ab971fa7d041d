"""What a record's page should show once a submission is sent, from the company's read-back rules
(``tools/readback.py``: e.g. paying BILL-0004 on 2026-12-01 → ``/bills/BILL-0004`` shows "paid on
2026-12-01"). The same rules the run reads back with after sending; the approver sees them before."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit

from taskcrew.config import ERP_NAME, INTRANET_NAME
from taskcrew.tools.human import ApprovalRequest
from taskcrew.tools.readback import PLACEHOLDER, ReadBackFileError, load_rules, rules_file

PLACEHOLDERS = {ERP_NAME: "erp", INTRANET_NAME: "intranet"}  # a system's name -> its {name} in the rules


def expected_after(request: ApprovalRequest, system: str, sandbox: Path) -> list[tuple[str, str]]:
    """(page, text) pairs the target's read-back rule expects once ``request`` is sent."""
    placeholder = PLACEHOLDERS.get(system)
    if placeholder is None:
        return []
    parts = urlsplit(request.url)
    try:
        rules = load_rules(rules_file(sandbox), {placeholder: f"{parts.scheme}://{parts.netloc}"})
    except ReadBackFileError:
        return []
    hit = rules.rule_for(request.method, request.url)
    if hit is None or not hit[0].read_back:
        return []
    rule, params = hit
    values = {f.name: f.value for f in request.fields} | params
    try:
        page = PLACEHOLDER.sub(lambda m: quote(values[m.group(1)], safe=""), rule.read_back or "")
        texts = [PLACEHOLDER.sub(lambda m: values[m.group(1)], t) for t in rule.shows]
    except KeyError:
        return []
    return [(page, t) for t in texts if t.strip()]
