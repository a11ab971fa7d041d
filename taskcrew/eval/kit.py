"""Building blocks for scripted "models": policies that read real observations and decide.

A scripted model stands in for an LLM in tests and in the offline eval sweep. It gets no help the
real model would not get: it sees the same prompts and tool results, finds element numbers by
reading the rendered observation, and answers in the same JSON formats.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from taskcrew.crew.models import Citation, CriterionCheck, StepReport, Verdict
from taskcrew.crew.scripted import Reply, ScriptedCall, ScriptError, ToolCall
from taskcrew.tools.browser.render import BEGIN, ELEMENTS, END, labels_in_text, names_in_text
from taskcrew.tools.intents import NOT_SENT_AGAIN
from taskcrew.tools.submissions import UNKNOWN_WORDS

_ELEMENT = re.compile(r'^\[(\d+)\](?:–\[(\d+)\])? (\w+)(?: "((?:[^"\\]|\\.)*)")?(.*)$')
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


@dataclass
class El:
    index: int
    role: str
    name: str
    attrs: dict[str, str]
    rest: str

    @property
    def field(self) -> str | None:
        return self.attrs.get("name")

    @property
    def offscreen(self) -> bool:
        return "OFFSCREEN" in self.rest


def elements(text: str) -> list[El]:
    """The element lines of the latest observation in ``text``."""
    part = text.rsplit("\n" + ELEMENTS, 1)
    if len(part) < 2:
        return []
    found = []
    # names the page text shows after [n] or as the label right before it are not repeated
    shown = {**labels_in_text(page_text(text)), **names_in_text(page_text(text))}
    for line in part[1].splitlines()[1:]:
        match = _ELEMENT.match(line.strip())
        if not match:
            continue
        attrs = {k: v.strip('"') for k, v in _ATTR.findall(match.group(5))}
        first = int(match.group(1))
        for index in range(first, int(match.group(2) or first) + 1):  # "[a]–[b] role": a run
            name = match.group(4) or shown.get(index, "")
            found.append(El(index, match.group(3), name, attrs, match.group(5)))
    return found


def page_url(text: str) -> str:
    matches = re.findall(r'^Observation #\d+: ".*?" (\S+)$', text, re.MULTILINE)
    return matches[-1] if matches else ""


def page_text(text: str) -> str:
    match = re.search(rf"{re.escape(BEGIN)}\n(.*?){re.escape(END)}", text, re.DOTALL)
    return match.group(1) if match else ""


def system_url(call: ScriptedCall, name: str) -> str:
    match = re.search(rf"{re.escape(name)} at (https?://[^\s/]+)", call.prompt)
    if not match:
        raise ScriptError(f"no URL for {name!r} in the prompt")
    return match.group(1)


def erp(call: ScriptedCall) -> str:
    return system_url(call, "Acme Payables")


def act(*actions: dict[str, Any]) -> ToolCall:
    return ToolCall(name="browser_act", args={"actions": list(actions)})


def navigate(url: str) -> ToolCall:
    return act({"action": "navigate", "url": url})


def by_field(els: list[El], name: str) -> El:
    """The field sent as ``name``; else, as a model reading the form would, the one field labelled
    like it ("Invoice number" for invoice_number, when a new release sends it under another name)."""
    for el in els:
        if el.field == name:
            return el
    words = name.replace("_", " ").casefold().split()
    labelled = [e for e in els if e.field and e.name.replace("*", " ").casefold().split() == words]
    if len(labelled) == 1:
        return labelled[0]
    raise ScriptError(f"no field {name!r} on the page: {[e.field for e in els]}")


def button(els: list[El], label: str) -> El:
    for el in els:
        if el.role == "button" and label.lower() in el.name.lower():
            return el
    raise ScriptError(f"no button {label!r} on the page")


def login(text: str) -> ToolCall | None:
    """Log in when the page shows the login form (credentials only as placeholders)."""
    if "Obstacle: login form" not in text:
        return None
    els = elements(text)
    return act(
        {"action": "type", "index": by_field(els, "username").index, "text": "{{secret:ERP_USERNAME}}"},
        {"action": "type", "index": by_field(els, "password").index, "text": "{{secret:ERP_PASSWORD}}"},
        {"action": "click", "index": button(els, "Log in").index},
    )


def report(status: str, summary: str, sources: list[Citation] | None = None, **data: str) -> str:
    return StepReport(status=status, summary=summary, data=data, sources=sources or []).model_dump_json()


@dataclass
class Bill:
    vendor: str
    invoice_number: str
    amount: str
    currency: str
    invoice_date: str
    due_date: str


class EnterBill:
    """Reactive operator: open the new-bill form, fill it, save, and recover from what happens.

    ``first_amount`` (e.g. the printed "1,284.50") is typed on the first try, the way a careless
    model would, so the form's validation message is exercised; the fix uses ``bill.amount``.
    The vendor is chosen among the form's options by name (a document's "GLOBEX CORPORATION" is the
    ERP's "Globex Corp"); when several options could be it, the step ends blocked, nothing guessed.
    A refused approval, a duplicate and a near-duplicate warning end the step with an honest
    report; subclasses change those reactions (``on_*``).
    """

    def __init__(self, bill: Bill, first_amount: str | None = None) -> None:
        self.bill = bill
        self.amount = first_amount or bill.amount
        self.started = False
        self.looking = False  # a save had no clear answer: look in the bills list before sending again

    def __call__(self, call: ScriptedCall) -> Reply:
        text = call.last_tool_result
        base = erp(call)
        if not self.started:
            self.started = True
            return navigate(f"{base}/bills/new")
        if "did not approve" in text:
            return self.on_rejected(text)
        if NOT_SENT_AGAIN in text:  # the intent log held back a repeat of a save already made
            return self.on_already_sent(text)
        if step := login(text) or dismiss_modal(text):
            return step
        url = page_url(text)
        body = page_text(text)
        outage = bool(re.search(r"\b503\b", text)) or "unavailable" in body.lower()
        if UNKNOWN_WORDS in text and not self.looking:  # as the result says: look before sending again
            self.looking = True
            return navigate(f"{base}/bills")
        if self.looking:
            if outage or not url.split("?")[0].endswith("/bills"):
                return navigate(f"{base}/bills")
            self.looking = False
            rows = [r for r in bill_rows(body, self.bill.invoice_number) if re.search(r"BILL-\d+", r)]
            if rows:
                bill_id = re.search(r"BILL-\d+", rows[0]).group(0)  # type: ignore[union-attr]
                return report(
                    "done",
                    f"The save had no clear answer, so I looked before sending it again: the bills list "
                    f"shows {bill_id} for {self.bill.vendor} {self.bill.invoice_number}; not sent again.",
                    bill_id=bill_id,
                )
            return navigate(f"{base}/bills/new")  # not there: it may be sent again
        if re.search(r"/bills/BILL-\d+", url) and "saved" in body.lower():
            bill_id = re.search(r"BILL-\d+", url).group(0)  # type: ignore[union-attr]
            return report(
                "done",
                f"Saved bill {bill_id} for {self.bill.vendor} {self.bill.invoice_number}: "
                f"{self.bill.amount} {self.bill.currency}, due {self.bill.due_date}.",
                bill_id=bill_id,
            )
        if "/bills/new" not in url or outage:
            return navigate(f"{base}/bills/new")
        els = elements(text)
        if "Duplicate bill:" in body:
            return self.on_duplicate(body, els)
        if "Possible duplicate" in body:
            return self.on_near_duplicate(body, els)
        amount = by_field(els, "amount")
        if "invalid=" in amount.rest and self.amount != self.bill.amount:
            self.amount = self.bill.amount
            return act(
                {"action": "type", "index": amount.index, "text": self.amount, "clear": True},
                {"action": "click", "index": button(els, "Save").index},
            )
        if invalid := [e for e in els if "invalid=" in e.rest]:
            return self.on_invalid(invalid, els)
        return self.fill(els)

    def fill(self, els: list[El]) -> Reply:
        vendor = by_field(els, "vendor_id")
        could = could_be(options(vendor), self.bill.vendor)
        if len(could) > 1:  # which vendor record is meant is not guessed
            return report(
                "blocked",
                f"The vendor drop-down has {len(could)} options that could be {self.bill.vendor!r} "
                f"({'; '.join(repr(o) for o in could)}): I did not guess which vendor record is meant, as "
                "one may be a look-alike someone added; nothing was saved. Check the vendor records in "
                "the ERP (and why there is more than one), then tell me which one to use.",
            )
        return act(
            {"action": "select", "index": vendor.index, "option": could[0] if could else self.bill.vendor},
            {
                "action": "type",
                "index": by_field(els, "invoice_number").index,
                "text": self.bill.invoice_number,
                "clear": True,
            },
            {"action": "type", "index": by_field(els, "amount").index, "text": self.amount, "clear": True},
            {"action": "select", "index": by_field(els, "currency").index, "option": self.bill.currency},
            {"action": "type", "index": by_field(els, "invoice_date").index, "text": self.bill.invoice_date},
            {"action": "type", "index": by_field(els, "due_date").index, "text": self.bill.due_date},
            {"action": "click", "index": button(els, "Save").index},
        )

    def on_rejected(self, text: str) -> Reply:
        return report(
            "blocked",
            f"The person did not approve saving the bill for {self.bill.vendor} {self.bill.invoice_number}; "
            "nothing was saved.",
        )

    def on_already_sent(self, text: str) -> Reply:
        return report(
            "nothing_to_do",
            f"The bill for {self.bill.vendor} {self.bill.invoice_number} was already sent to Acme Payables "
            "earlier and the system shows it; it was not sent again.",
        )

    def on_duplicate(self, body: str, els: list[El]) -> Reply:
        message = next((line for line in body.splitlines() if "Duplicate bill:" in line), "duplicate")
        return report("nothing_to_do", f"Acme Payables refused the bill: {message.strip()}")

    def on_near_duplicate(self, body: str, els: list[El]) -> Reply:
        return report(
            "blocked",
            f"Acme Payables warns that {self.bill.invoice_number} may duplicate an existing bill; I did not "
            "confirm it. A person should check the existing bill first.",
        )

    def on_invalid(self, invalid: list[El], els: list[El]) -> Reply:
        problems = "; ".join(f"{e.field}: {e.attrs.get('invalid', '')}" for e in invalid)
        return report("failed", f"Acme Payables refused the form: {problems}")


def dismiss_modal(text: str) -> ToolCall | None:
    """Close a notice overlay that blocks the page."""
    if "Obstacle: modal" not in text:
        return None
    return act({"action": "dismiss_modal"})


class LookUpBills:
    """Reactive reader of the bills list: log in, open ``/bills?<query>``, hand the page to ``decide``."""

    def __init__(self, query: str, decide: Any) -> None:
        self.query = query
        self.decide = decide
        self.started = False

    def __call__(self, call: ScriptedCall) -> Reply:
        text = call.last_tool_result
        target = f"{erp(call)}/bills" + (f"?{self.query}" if self.query else "")
        if not self.started:
            self.started = True
            return navigate(target)
        if step := login(text):
            return step
        if not page_url(text).split("?")[0].endswith("/bills"):
            return navigate(target)
        result: Reply = self.decide(page_url(text), page_text(text))
        return result


def bill_rows(body: str, invoice_number: str) -> list[str]:
    return [line for line in body.splitlines() if invoice_number in line]


def verdict(criteria: list[tuple[str, bool, str, str]], reason: str) -> str:
    checks = [CriterionCheck(criterion=c, met=m, source=s, observed=o) for c, m, s, o in criteria]
    return Verdict(verified=all(c.met for c in checks), checks=checks, reason=reason).model_dump_json()


# ----------------------------------------------------------------------------- reading the prompts
@dataclass
class StepResult:
    """One earlier step as the prompt shows it ("Results of earlier steps" / "What was done so far")."""

    number: int
    role: str
    title: str
    status: str
    summary: str
    data: dict[str, str]


_STEP_LINE = re.compile(r"^- Step (\d+) \[(\w+)\] (.+?) → (\w+): (.*)$")


def request(call: ScriptedCall) -> str:
    """The user's request, as the planner and the verifier are shown it."""
    match = re.search(r"<request>\n?(.*?)\n?</request>", call.task_text, re.DOTALL)
    return match.group(1).strip() if match else ""


def step_title(call: ScriptedCall) -> str:
    match = re.search(r"^THIS STEP: (.+)$", call.task_text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def is_first_call(call: ScriptedCall) -> bool:
    """True on the first call of a task: nothing answered, no tool result yet."""
    return not any(m.get("role") in ("assistant", "tool") for m in call.messages)


def is_replan(call: ScriptedCall) -> bool:
    return "THIS IS A REPLAN" in call.task_text


def step_results(call: ScriptedCall) -> list[StepResult]:
    """Every earlier step listed in the prompt, with its data (shown for the latest few)."""
    results: list[StepResult] = []
    for line in call.task_text.splitlines():
        if match := _STEP_LINE.match(line):
            number, role, title, status, summary = match.groups()
            results.append(StepResult(int(number), role, title, status, summary, {}))
        elif line.startswith("  data: ") and results:
            for part in line.removeprefix("  data: ").split("; "):
                key, sep, value = part.partition("=")
                if sep:
                    results[-1].data[key.strip()] = value.strip()
    return results


def criteria(call: ScriptedCall) -> list[str]:
    """The plan's success criteria as the verifier (or a worker) is shown them."""
    match = re.search(r"Success criteria[^\n]*:\n((?:- .*\n?)+)", call.task_text)
    if not match:
        return []
    return [line[2:].strip() for line in match.group(1).splitlines() if line.startswith("- ")]


def intranet(call: ScriptedCall) -> str:
    return system_url(call, "Acme Connect intranet")


def person_answer(text: str) -> str:
    """The person's answer in an ask_user result ('' when they gave none)."""
    match = re.search(r"The person answered: (.*)", text, re.DOTALL)
    return match.group(1).strip() if match else ""


# ----------------------------------------------------------------------------- reading observations
def options(el: El) -> list[str]:
    """The options of a combobox element line."""
    match = re.search(r"options=(\[.*?\])(?:\s|$)", el.rest)
    if not match:
        return []
    try:
        return [str(o) for o in json.loads(match.group(1))]
    except ValueError:
        return []


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-zäöüß0-9]+", text.lower()) if len(w) > 2}


def could_be(choices: list[str], name: str) -> list[str]:
    """The options that could be ``name``, as a careful model reads them: those a replay would take
    (``replay.options_like``: the same label in any case and spacing, or named like it give or take
    a legal form); else the one sharing the most words with it, with every option that could be
    that one. More than one ("NORTHWIND TRADERS" or "Northwind  Traders" beside Northwind Traders)
    is a choice not to be guessed."""
    from taskcrew.routines.replay import options_like  # the one rule, shared with a replay

    if could := options_like(choices, name):
        return could
    wanted = _words(name)
    scored = [(len(wanted & _words(c)), c) for c in choices]
    top = max((score for score, _ in scored), default=0)
    best = [c for score, c in scored if top and score == top]
    return options_like(choices, best[0]) if len(best) == 1 else best


def choose_option(choices: list[str], name: str) -> str | None:
    """The option that names the same thing as ``name``: the one that could be it (``could_be``);
    None when none could, or when several could."""
    could = could_be(choices, name)
    return could[0] if len(could) == 1 else None


def search_paths(text: str) -> list[str]:
    """Files with hits in a search_files result, in order of appearance."""
    paths: list[str] = []
    for match in re.finditer(r"^- (.+?) \[[^\]]*\]: ", text, re.MULTILINE):
        if match.group(1) not in paths:
            paths.append(match.group(1))
    return paths


def unreadable_paths(text: str) -> list[tuple[str, str]]:
    """(path, why) for the files a search could not read."""
    match = re.search(r"^Not searched \(unreadable\): (.*)$", text, re.MULTILINE)
    if not match:
        return []
    return [(m.group(1), m.group(2)) for m in re.finditer(r"(.+?) \(([^)]*)\)(?:; |$)", match.group(1))]


@dataclass
class ListedFile:
    path: str
    kind: str
    date: str = ""
    sender: str = ""
    subject: str = ""


def listed_files(text: str) -> list[ListedFile]:
    files = []
    for line in text.splitlines():
        if not line.startswith("- ") or " · " not in line:
            continue
        parts = line[2:].split(" · ")
        entry = ListedFile(path=parts[0], kind=parts[1] if len(parts) > 1 else "")
        for part in parts[2:]:
            if part.startswith("Date "):
                entry.date = part.removeprefix("Date ")
            elif part.startswith("From "):
                entry.sender = part.removeprefix("From ")
            elif part.startswith("Subject "):
                entry.subject = part.removeprefix("Subject ").strip('"')
        files.append(entry)
    return files


@dataclass
class SearchHit:
    title: str
    url: str
    snippet: str


def search_hits(text: str) -> list[SearchHit]:
    """The hits of a web_search result."""
    hits = []
    pattern = r"^\d+\. (.+)\n   (https?://\S+)\n(?:   (.*))?"
    for match in re.finditer(pattern, text, re.MULTILINE):
        hits.append(SearchHit(match.group(1).strip(), match.group(2), (match.group(3) or "").strip()))
    return hits


@dataclass
class FetchedPage:
    url: str
    title: str
    text: str


def fetched_page(text: str) -> FetchedPage | None:
    """A web_fetch result: the final URL, the title and the page text (None for an error)."""
    url = re.search(r"^URL: (\S+)", text, re.MULTILINE)
    body = re.search(
        r"<<<UNTRUSTED WEB CONTENT[^\n]*\n(.*?)\n<<<END UNTRUSTED WEB CONTENT>>>", text, re.DOTALL
    )
    if not url or not body:
        return None
    title = re.search(r"^Title: (.*)$", text, re.MULTILINE)
    return FetchedPage(url.group(1), title.group(1).strip() if title else "", body.group(1))


def field_value(text: str, name: str) -> str:
    """``name: value`` from a calculator or python result ('' when absent)."""
    match = re.search(rf"^{re.escape(name)}: (.*)$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def iso_dates(text: str) -> list[str]:
    return re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text)


def table_rows(body: str) -> list[list[str]]:
    """Rows of the markdown-ish tables in a page's text (cells stripped, '[n]' markers kept)."""
    rows = []
    for line in body.splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def same_key(number: str) -> str:
    """An invoice number without case, spaces and punctuation."""
    return re.sub(r"[^a-z0-9]", "", number.lower())


def same_number(a: str, b: str) -> bool:
    """Invoice numbers equal when only case, spaces and punctuation differ (how duplicates slip in)."""
    return same_key(a) == same_key(b)


def shares_words(a: str, b: str) -> bool:
    """Two names for the same party ('GLOBEX CORPORATION' / 'Globex Corp')."""
    return bool(_words(a) & _words(b))


def search_lines(text: str) -> list[tuple[str, str]]:
    """(path, matching line) for each hit of a search_files result."""
    return [
        (m.group(1), m.group(2).strip())
        for m in re.finditer(r"^- (.+?) \[[^\]]*\]: (.*)$", text, re.MULTILINE)
    ]


@dataclass
class BillRow:
    """One row of Acme Payables' bills table, with the bill id from its link element."""

    bill_id: str
    vendor: str
    invoice_number: str
    amount: str
    currency: str
    invoice_date: str
    due_date: str
    status: str
    paid_on: str
    line: str


def bill_table(text: str) -> list[BillRow]:
    """The rows of the bills table in the latest observation."""
    names = {str(e.index): e.name for e in elements(text)}
    rows = []
    for line in page_text(text).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        marker = re.match(r"\[(\d+)\]", cells[0]) if cells else None
        if marker is None or len(cells) < 9:
            continue
        vendor, number, amount, currency, issued, due, status, paid_on = cells[1:9]
        rows.append(
            BillRow(
                names.get(marker.group(1), ""),
                vendor,
                number,
                amount,
                currency,
                issued,
                due,
                status,
                paid_on,
                line.strip(),
            )
        )
    return rows


def totals_line(text: str) -> str:
    """The bills table's 'Total per currency' footer ('' when the page has none)."""
    for line in page_text(text).splitlines():
        if "Total per currency" in line:
            return line.strip().strip("|").replace("Total per currency |", "").strip()
    return ""
