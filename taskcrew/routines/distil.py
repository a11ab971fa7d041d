"""Distil a verified run into a routine (a draft): its chore and parameters, the document rule and
the issuer's extraction template, and the browser steps bound to what a person sees.

Read from the run folder: ``trace.jsonl`` (the task, the steps' reported values, the files read,
the verdict) and ``browser_steps.jsonl`` (each browser action with the element it addressed, by
role, accessible name and form field name); for a job's run that resumed in a later leg, what the
legs before it did too (``LegFacts``, carried in the job's signed checkpoint, never read from an
earlier leg's folder). What is learned is only what the verified run shows:
values typed come from the recipe's parameters or from the document; secrets stay placeholders;
what a person answered or decided is never learned (a value with no such source refuses the step).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from pydantic import BaseModel, Field, TypeAdapter

from taskcrew.crew.trace import read_trace
from taskcrew.routines.files import sender_parts
from taskcrew.routines.match import Match, match_task, recipes_for
from taskcrew.routines.models import (
    SENDS_MOST,
    BrowserStep,
    DocumentRule,
    Obstacle,
    PageExpect,
    Routine,
    Sends,
    Target,
    Template,
    named_like,
    on_screen,
    query_names,
)
from taskcrew.routines.recording import ActRecord, read_records
from taskcrew.routines.template import ExtractionError, LearnError, extract_all, learn

SECRET = re.compile(r"^\{\{secret:[A-Z][A-Z0-9_]*\}\}$")
CHANGING = ("approved", "allowed")


class DistilError(ValueError):
    """A run a routine cannot be learned from; the message says why (one line)."""


def vouched_done(run_dir: Path, jobs: Any = None, record: Any = None) -> None:
    """Refuse a run folder whose job's signed record does not say the run was done: a run folder's
    files are not signed (anyone who can write the runs folder can make its trace say "done" and
    add a verified verdict), the job store's record of it is (``eval.runs.RunRecords``; ``record``:
    what the signed records say of the folder, when already read)."""
    from taskcrew.eval.runs import RunRecords

    record = record or RunRecords.read(jobs, run_dir).of(run_dir)
    said = record.outcome
    if said == "done" and record.altered:  # the record says done; the folder is no longer that run's
        raise DistilError(
            f"{run_dir.name} cannot be learned from: {record.altered}, so what it says is not vouched "
            "for. Learn from the folder of a run as it ended"
        )
    if said == "done":
        return
    ended = {"failed": "failed", "cancelled": "was cancelled"}
    if said is None:
        why = f"nothing vouches that it was: {record.unvouched}"
    elif record.jobs[0].status == "finished":
        why = f"{record.said} says it ended {said}"
    else:
        why = f"{record.said} says it {ended.get(said, f'is still {said}')}"
    raise DistilError(
        f"{run_dir.name} was not verified: {why}. Only a run whose job's signed record says done can "
        "become a routine: run the chore as a job (`taskcrew run`, `taskcrew submit` or the console) "
        "and learn from the folder of a run that ended done"
    )


LEGS_FILE = "earlier_legs.json"  # in a resumed leg's run folder: what the legs before it did


class LegFacts(BaseModel):
    """What one earlier leg of a job's run did that a routine is learned from, up to the checkpoint
    the run resumed from (what it did after that, the leg that resumed did again): its browser
    actions, the values its finished steps reported, the files it read (oldest first) and the
    searches it made. A job that parks for its approval, or whose worker stops, resumes in a new
    run folder, and no signed record names the earlier one (nor seals it): so these go from leg to
    leg in the job's signed checkpoint (``hooks.Progress``), never read back from an earlier folder,
    and the leg that resumes writes them to its own folder (``LEGS_FILE``), sealed with it when the
    job ends (`routines learn` reads them there)."""

    run: str = Field(description="the leg's run folder (its name)")
    records: list[ActRecord] = Field(default_factory=list)
    reported: dict[str, str] = Field(default_factory=dict)
    files_read: list[str] = Field(default_factory=list)
    searched: list[str] = Field(default_factory=list)


LEGS = TypeAdapter(list[LegFacts])


def read_legs(run_dir: Path) -> list[LegFacts]:
    """The earlier legs a resumed leg's folder carries (``LEGS_FILE``; [] for a run of one leg)."""
    path = run_dir / LEGS_FILE
    if not path.is_file():
        return []
    try:
        return LEGS.validate_json(path.read_bytes())
    except ValueError as exc:
        raise DistilError(
            f"{run_dir.name}: {LEGS_FILE} is not what taskcrew wrote ({exc.__class__.__name__})"
        ) from exc


def write_legs(run_dir: Path, legs: list[LegFacts]) -> None:
    (run_dir / LEGS_FILE).write_bytes(LEGS.dump_json(legs))


def _trace(run_dir: Path) -> Path:
    trace = run_dir / "trace.jsonl"
    if not trace.is_file():
        raise DistilError(f"{run_dir} is not a run folder (no trace.jsonl); pass a folder under runs/")
    return trace


class RunFacts:
    """What the distiller needs of a run, read once across all its legs: its run folder's trace and
    recording, after what the job's earlier legs did (``LegFacts``): ``earlier`` as the job's
    signed checkpoint carried them (a run's own proposal, ``hooks``), else as its folder holds them
    (``LEGS_FILE``: `routines learn`, which holds the folder to its job's seal first)."""

    def __init__(self, run_dir: Path, earlier: list[LegFacts] | None = None) -> None:
        self.run_dir = run_dir
        self.events = read_trace(_trace(run_dir))
        started = next((e for e in self.events if e.kind == "run_started"), None)
        if started is None:
            raise DistilError(f"{run_dir}: the trace has no start")
        self.task: str = started.task
        self.sandbox = Path(started.settings.get("sandbox", "."))
        self.systems = {k: u.rstrip("/") for k, u in started.settings.items() if k != "sandbox"}
        self.earlier = read_legs(run_dir) if earlier is None else list(earlier)
        self.own_records = read_records(run_dir)
        self.records = [*(r for leg in self.earlier for r in leg.records), *self.own_records]
        hosts = [urlsplit(u).netloc for r in self.records for o, _m, u in r.decisions if o in CHANGING]
        self.erp = next((u for u in self.systems.values() if urlsplit(u).netloc in hosts), "")

    def leg(self) -> LegFacts:
        """What this run folder's own leg did (so far), as the next leg carries it."""
        return LegFacts(
            run=self.run_dir.name,
            records=self.own_records,
            reported=self._reported(),
            files_read=self._files_read(),
            searched=self._searched(),
        )

    def verified(self) -> bool:
        finished = next((e for e in reversed(self.events) if e.kind == "run_finished"), None)
        verdicts = [e for e in self.events if e.kind == "verdict"]
        return (
            finished is not None
            and finished.outcome == "done"
            and bool(verdicts)
            and verdicts[-1].verdict.verified
        )

    def reported(self) -> dict[str, str]:
        """The values the run's finished steps reported, in all its legs (later steps win)."""
        data: dict[str, str] = {}
        for leg in self.earlier:
            data.update(leg.reported)
        return data | self._reported()

    def files_read(self) -> list[str]:
        """The files the run read, in all its legs: the last read first."""
        paths = [*(p for leg in self.earlier for p in leg.files_read), *self._files_read()]
        return list(dict.fromkeys(reversed(paths)))

    def searched(self) -> list[str]:
        return [*(q for leg in self.earlier for q in leg.searched), *self._searched()]

    def _reported(self) -> dict[str, str]:
        data: dict[str, str] = {}
        for event in self.events:
            if event.kind == "step" and event.report.status == "done":
                data.update({k: str(v) for k, v in event.report.data.items()})
        return data

    def _files_read(self) -> list[str]:
        return [
            str(e.args.get("path"))
            for e in self.events
            if e.kind == "tool_call" and e.tool == "read_file" and e.role != "verifier" and e.ok
        ]

    def _searched(self) -> list[str]:
        return [
            str(e.args.get("query"))
            for e in self.events
            if e.kind == "tool_call" and e.tool == "search_files" and e.role != "verifier"
        ]


def _source(
    text: str, params: dict[str, str], values: dict[str, str], did: str = "entered a value"
) -> str | None:
    """The placeholder a typed or chosen value comes from: a secret, else the ONE parameter (in any
    case, or an option named like it: "Globex Corp" for vendor "Globex") or document value (exactly)
    it is. None when it is none of them. Raises DistilError when it is several (``_tied``): an
    invoice due on receipt prints its date twice, as invoice and due date; a bill without tax, its
    total twice: bound to the first, every later replay would type the one into the other's field."""
    said = text.strip()
    if SECRET.match(said):
        return said
    names = [n for n, v in params.items() if said.casefold() == v.casefold() or named_like(said, v)]
    names += [n for n, v in values.items() if said == v and n not in names]
    if len(names) > 1:
        raise DistilError(_tied(said, names, params, did))
    return f"{{{names[0]}}}" if names else None


def _tied(value: str, names: list[str], params: dict[str, str], did: str) -> str:
    each = [f"the {'parameter' if n in params else 'document value'} {n}" for n in names]
    which = f"both {each[0]} and {each[1]}" if len(each) == 2 else "each of " + ", ".join(each)
    return (
        f"the run {did}: {value[:60]!r} is {which} in this run, so which of them it stands for cannot "
        f"be learned from it (a replay would enter the one as the other). Learn the routine from a run "
        f"where {', '.join(names)} differ"
    )


def page_pattern(url: str) -> str:
    """A URL's path as a pattern: segments with digits (record ids) match any segment."""
    path = urlsplit(url).path.rstrip("/") or "/"
    parts = ["[^/]+" if re.search(r"\d", seg) else re.escape(seg) for seg in path.split("/")]
    return "/".join(parts)


def leads_to(after_url: str, form_url: str) -> str:
    """The pattern of the page a save must lead to (learned from the page the run's save led to),
    made never to match the form's own page: ``/bills/[^/]+`` from ``/bills/BILL-0011`` also
    matches ``/bills/new``, where a refused save comes back, so it is learned as
    ``(?!/bills/new$)/bills/[^/]+`` (the form's page as a pattern, whatever its ids). A run whose
    save came back to the form's own page teaches no routine: there a save cannot be told from a
    refusal."""
    if not form_url:
        return page_pattern(after_url)
    form = urlsplit(form_url).path.rstrip("/") or "/"
    if (urlsplit(after_url).path.rstrip("/") or "/") == form:
        raise DistilError(
            f"the run's save came back to the form's own page ({form}): a routine cannot tell a save "
            "there from a refusal"
        )
    pattern, own = page_pattern(after_url), page_pattern(form_url)
    if own != pattern and re.fullmatch(pattern, form):
        pattern = f"(?!{own}$){pattern}"
    return pattern


def _url_template(url: str, erp: str, params: dict[str, str], values: dict[str, str]) -> str:
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    head = "{erp}" if erp and base == erp.rstrip("/") else base
    named = [(name, value) for name, value in [*params.items(), *values.items()] if value]
    pairs = []
    for key, raw in parse_qsl(parts.query, keep_blank_values=True):
        # compared as the system reads it (AT%26T, Northwind+Traders): a value left as a literal
        # would make the replay for another vendor look at this vendor's list
        names = list(dict.fromkeys(n for n, v in named if raw == v))
        if len(names) > 1:
            raise DistilError(_tied(raw, names, params, f"opened {head}{parts.path} with {key}"))
        name = names[0] if names else None
        pairs.append(f"{quote(key, safe='')}=" + (f"{{{name}}}" if name else quote(raw, safe="")))
    return head + urlunsplit(("", "", parts.path, "&".join(pairs), ""))


def _step_of(rec: ActRecord, params: dict[str, str], values: dict[str, str]) -> BrowserStep | None:
    kind = rec.action.get("action")
    if kind not in ("type", "select", "check", "click") or rec.target is None:
        return None
    target = Target(role=rec.target.role, name=rec.target.name, field=rec.target.field)
    expect = PageExpect(path=page_pattern(rec.page_url))
    value = None
    if kind in ("type", "select"):
        raw = str(rec.action.get("text") if kind == "type" else rec.action.get("option"))
        did = f"{'typed' if kind == 'type' else 'chose'} into {target.describe()}"
        value = _source(raw, params, values, did)
        if value is None:
            raise DistilError(
                f"the run typed {raw[:60]!r} into {target.describe()}, which is neither a parameter of the "
                "chore nor a value read from the document: a routine never learns it"
            )
    return BrowserStep(kind=kind, target=target, value=value, expect=expect)


def _submitted(rec: ActRecord) -> bool:
    """The action sent a data-changing submission the gate let through (approved, or an identical
    payload approved before); a login is not one."""
    if "login_form" in rec.obstacles:
        return False
    return any(o in CHANGING and m.upper() not in ("GET", "HEAD") for o, m, _u in rec.decisions)


def _sends(rec: ActRecord) -> Sends | None:
    """What the run's save sent, as the gate let it through: its method, the path it went to, as a
    pattern (``page_pattern``), the name of every parameter in its address's query
    (``models.query_names``) and of every field in its body (``Sends``). None when the recording
    does not say (a leg recorded before field names were kept): that version does not replay, and
    the agent's verified run heals it (``replay.Replayer._drive``)."""
    for (outcome, method, url), names in zip(rec.decisions, rec.sent_fields, strict=False):
        if outcome in CHANGING and method.upper() not in ("GET", "HEAD"):
            fields, query = sorted(set(names)), query_names(url)
            for what, sent in (("fields", fields), ("query parameters", query)):
                if len(sent) > SENDS_MOST:
                    raise DistilError(
                        f"the run's save sent {len(sent)} {what}; a routine's approval step is reviewed "
                        f"with at most {SENDS_MOST}: do this chore with the agent"
                    )
            return Sends(path=page_pattern(url), fields=fields, method=method.upper(), query=query)
    return None


def browser_steps(
    facts: RunFacts, params: dict[str, str], values: dict[str, str]
) -> tuple[list[BrowserStep], list[Obstacle]]:
    records = [r for r in facts.records if r.ok]
    login: list[BrowserStep] = []
    obstacles: list[Obstacle] = []
    work: list[ActRecord] = []
    for rec in records:
        if "login_form" in rec.obstacles and rec.action.get("action") in ("type", "click"):
            step = _step_of(rec, {}, {}) if rec.action.get("action") == "click" else None
            if rec.action.get("action") == "type":
                text = str(rec.action.get("text", ""))
                if not SECRET.match(text) or rec.target is None:
                    raise DistilError("the run signed in with something other than {{secret:…}} placeholders")
                step = BrowserStep(
                    kind="type",
                    target=Target(role=rec.target.role, name=rec.target.name, field=rec.target.field),
                    value=text,
                )
            if step is not None and all(s.target != step.target for s in login):
                login.append(step.model_copy(update={"expect": None}))
            continue
        if rec.action.get("action") == "dismiss_modal":
            if not any(o.kind == "modal" for o in obstacles):
                obstacles.append(Obstacle(kind="modal"))
            continue
        work.append(rec)
    submits = [i for i, r in enumerate(work) if _submitted(r) and r.action.get("action") == "click"]
    if not submits:
        raise DistilError(
            "the run submitted nothing in the browser: routines replay chores that change data "
            "(a read-only answer stays with the agent)"
        )
    last = submits[-1]
    opens = [i for i, r in enumerate(work[:last]) if r.action.get("action") == "navigate"]
    if not opens:
        raise DistilError("the run never opened the page it submitted from")
    start = opens[-1]
    block = work[start : last + 1]
    steps: list[BrowserStep] = []
    earlier = [r for r in work[:start] if r.action.get("action") == "navigate"]
    submit_rec = work[last]
    for rec in earlier:
        url = _url_template(str(rec.action["url"]), facts.erp, params, values)
        if url == _url_template(str(block[0].action["url"]), facts.erp, params, values):
            continue
        if any(s.url == url for s in steps):
            continue
        steps.append(
            BrowserStep(kind="open", url=url, expect=PageExpect(path=page_pattern(str(rec.action["url"]))))
        )
    form: dict[str, BrowserStep] = {}
    for rec in block[1:]:
        step = _step_of(rec, params, values)
        if step is None:
            continue
        key = step.target.model_dump_json() if step.target else ""
        form.pop(key, None)  # the last time a target was set is the value that was saved
        form[key] = step
    first = block[0]
    opened = BrowserStep(
        kind="open",
        url=_url_template(str(first.action["url"]), facts.erp, params, values),
        expect=PageExpect(path=page_pattern(str(first.action["url"]))),
    )
    submit = list(form.values())[-1]
    form_steps = [s for s in form.values() if s is not submit]
    submit = submit.model_copy(
        update={
            "approval": True,
            "then": PageExpect(path=leads_to(submit_rec.after_url, submit_rec.page_url)),
            "sends": _sends(submit_rec),
        }
    )
    steps += [opened, *form_steps, submit]
    if login:
        obstacles.insert(0, Obstacle(kind="login", steps=login))
        if any(_submitted(r) and "login_form" in r.after_obstacles for r in facts.records):
            obstacles.append(Obstacle(kind="expired_session"))
    if any((r.http_status or 0) >= 500 for r in facts.records):
        obstacles.append(Obstacle(kind="unavailable"))
    identify = _identifying(facts, submit_rec, form_steps)
    for step in steps:
        if step.kind == "open" and step is not opened:
            step.absent = identify
    return steps, obstacles


def _identifying(facts: RunFacts, submit: ActRecord, form: list[BrowserStep]) -> list[str]:
    """The values that identify the record a submission makes, as the company's read-back rule for
    its target names them (``readback.yaml``: identify): an earlier look must not find them yet."""
    from taskcrew.tools.readback import load_rules, rules_file

    try:
        rules = load_rules(rules_file(facts.sandbox), {"erp": facts.erp})
    except ValueError:
        return []
    url = next((u for outcome, _m, u in submit.decisions if outcome in CHANGING), "")
    found = rules.rule_for("POST", url)
    if found is None:
        return []
    fields = set(found[0].identify)
    return [
        s.value for s in form if s.target and s.target.field in fields and s.value and "{{" not in s.value
    ]


def distil(run_dir: Path, *, require_verified: bool = True, jobs: Any = None, record: Any = None) -> Routine:
    """A draft routine from one verified run; raises DistilError saying why it cannot be learned.
    Verified means the job store's signed record of the run says it was done (``vouched_done``;
    ``jobs``: an open job store, default the CLI's; ``record``: its records of the folder, when
    already read), and its trace's last verdict says so too."""
    _trace(run_dir)  # a run folder at all
    if require_verified:  # before anything of the folder is read: only a vouched folder's facts count
        vouched_done(run_dir, jobs, record)
    facts = RunFacts(run_dir)
    if require_verified and not facts.verified():
        raise DistilError(f"{run_dir.name} was not verified: only a verified run can become a routine")
    match = match_task(facts.task, recipes_for(facts.sandbox))
    if match is None:
        raise DistilError(
            f"the task of {run_dir.name} is not one of the company's recipes, so its parameters are not "
            "known: run the chore as a recipe (`taskcrew <recipe> --help`) and learn from that run"
        )
    return distil_facts(facts, match)


def document_values(reported: dict[str, str], params: dict[str, str]) -> dict[str, str]:
    """The reported values a document must print (what a template learns), by name.

    "SOYLENT FOODS" as printed is the parameter, and so is the vendor reported in full ("Bharat
    Components Pvt. Ltd.") for the parameter vendor="Bharat Components": neither is a value the
    document must print after a label. Only under the parameter's own name: an invoice number
    "GLOBEX-0042" is still a value, though it shares a word with vendor="Globex"."""
    named = {v.casefold() for v in params.values()}
    return {
        k: v
        for k, v in reported.items()
        if v
        and v.casefold() not in named
        and not (k in params and named_like(v, params[k]))
        and k not in ("file", "target")
    }


def learned_senders(content: Any, issuer: str, template: Template | None = None) -> list[str]:
    """The domain a template learned from ``content`` accepts the issuer's invoices from: the sender
    of the one part ``template`` reads its values from — the issuer's e-mail, or the issuer's e-mail
    in a colleague's forward, the parts a replay reads (``files.sender_parts``) — never another
    message the same forward carries (a stranger's note forwarded beside the invoice would be
    trusted as the issuer's sender). [] only for a file that is not an e-mail. Raises LearnError
    when no part names a sender outside the company (no senders would read anyone's e-mail), or
    when the values cannot be tied to one sender: the template reads them from parts of several
    senders or from none (the colleague's own words); without ``template``, whenever the e-mail
    carries parts of several senders."""
    if content.email is None:
        return []
    parts = sender_parts(content)
    if not parts:
        raise LearnError(
            f"it is an e-mail from {content.email.headers.sender or '(no sender)'}, not from {issuer} "
            f"or a colleague's forward of {issuer}'s e-mail: it does not say who sends {issuer}'s invoices"
        )
    carried = list(dict.fromkeys(d for d, _ in parts))
    senders = carried
    said = "which of them the values were read from is not known"
    if template is not None:
        senders = list(dict.fromkeys(d for d, text in parts if _reads(template, text)))
        said = f"the template reads its values from parts sent by {' and '.join(senders) or 'none of them'}"
    if len(senders) != 1:
        raise LearnError(
            f"the values cannot be tied to one sender of the messages it carries ({', '.join(carried)}): "
            f"{said}, so it does not say who sends {issuer}'s invoices"
        )
    return senders


def _reads(template: Template, text: str) -> bool:
    try:
        return bool(extract_all(template, text))
    except ExtractionError:
        return False


def distil_facts(facts: RunFacts, match: Match, files: Any = None) -> Routine:
    """``files``: the run's own SandboxFiles when at hand (its parsed documents are cached)."""
    from taskcrew.crew.toolbox import files_root
    from taskcrew.tools.files import SandboxFiles

    params = match.values
    reported = facts.reported()
    files = files if files is not None else SandboxFiles(files_root(facts.sandbox))
    searched = next(
        (p for p, v in params.items() if any(v.casefold() in q.casefold() for q in facts.searched())), None
    )
    search_param = searched or next(iter(params), None)
    if search_param is None:
        raise DistilError(f"{match.recipe.name} has no parameter to find its document by")
    issuer = params[search_param]
    candidates = document_values(reported, params)
    steps, obstacles = browser_steps(facts, params, candidates)
    used = {n for s in steps for n in re.findall(r"\{([a-z][a-z0-9_]*)\}", (s.value or "") + (s.url or ""))}
    needed = {n: candidates[n] for n in used if n in candidates}
    if not needed:
        raise DistilError(
            "the browser steps use no value read from a document: there is no file work to learn"
        )
    template: Template | None = None
    problems = []
    for path in facts.files_read():
        try:
            content = files.read(path)
            learned = learn(content.full_text(), needed, issuer, path)
            # who may send the issuer's invoices: the sender of the part the values were read from
            learned.senders = learned_senders(content, issuer, learned)
            template = learned  # only once its senders are known: a file that teaches none is no template
            break
        except LearnError as exc:
            problems.append(f"{path}: {exc}")
        except Exception as exc:  # an unreadable file is not the document
            problems.append(f"{path}: {type(exc).__name__}")
    if template is None:
        raise DistilError("no file the run read prints the verified values: " + "; ".join(problems[:3]))
    number = next((f.name for f in template.fields if f.kind == "text"), None)
    by_number = next((p for p, v in params.items() if number and v == needed.get(number)), None)
    rule = DocumentRule(
        search=f"{{{search_param}}}",
        choose="by_number" if by_number else "newest_by_printed_date",
        number_param=by_number,
    )
    routine = Routine(
        name=match.recipe.name,
        version=1,
        summary=match.recipe.summary,
        source_run=facts.run_dir.name,
        system=next((k for k, u in facts.systems.items() if u == facts.erp), ""),
        params=list(params),
        documents=rule,
        templates=[template],
        values=sorted(needed),
        browser=steps,
        obstacles=obstacles,
    )
    from taskcrew.routines.files import FileStepFailed, find_document

    try:
        found = find_document(routine, params, files)
    except FileStepFailed as exc:  # e.g. a file naming the issuer that cannot be read
        raise DistilError(f"the document rule ({rule.choose}) cannot pick a document: {exc}") from exc
    if found.values.get(number or "") != needed.get(number or ""):
        raise DistilError(
            f"the document rule ({rule.choose}) picks {found.path}, not the document the run used: not learned"
        )
    return routine


def merge(old: Routine, new: Routine) -> Routine:
    """``new`` keeping what ``old`` knew that the healing run did not show again (a heal changes
    what it must): the templates ``old`` has for other issuers, the obstacles it met that the run
    did not (a session that expired, the system down: ``new`` learned none of that kind), and its
    no-duplicate look where ``new`` learned none (its guard learned by field name from the company's
    read-back rule, which a renamed form field no longer matches), for the values ``new`` still
    enters. ``old`` is a version ``RoutineStore.heal_base`` vouched for."""
    mine = {t.issuer.casefold() for t in new.templates}
    keep = [t for t in old.templates if t.issuer.casefold() not in mine]
    met = {o.kind for o in new.obstacles}
    obstacles = [*new.obstacles, *(o for o in old.obstacles if o.kind not in met)]
    browser = new.browser
    opens = [i for i, s in enumerate(browser) if s.kind == "open"][:-1]  # the looks before the form's page
    entered = {s.value for s in browser if s.value}
    guard = list(dict.fromkeys(v for s in old.browser if s.kind == "open" for v in s.absent if v in entered))
    if guard and opens and not any(browser[i].absent for i in opens):
        browser = [s.model_copy(update={"absent": guard}) if i in opens else s for i, s in enumerate(browser)]
    update = {"templates": [*new.templates, *keep], "obstacles": obstacles, "browser": browser}
    return new.model_copy(update={**update, "based_on": old.version})


UNSIGNED = "as the workers counted them, not signed"


def _page(expect: PageExpect) -> str:
    return expect.path + (f" showing {', '.join(repr(w) for w in expect.shows)}" if expect.shows else "")


def describe_step(step: BrowserStep) -> str:
    """Everything a browser step does: its kind, target, address, value, approval, the page it runs
    on, what that page must not show yet, and the page it must lead to."""
    line = (
        step.kind
        + (f" {step.target.describe()}" if step.target else "")
        + (f" {step.url or repr(step.url)}" if step.url is not None else "")
    )
    if step.value is not None:
        line += f" ← {step.value}"
    if step.approval:
        line += " [asks the person to approve the exact payload]"
    if step.expect is not None:
        line += f", expecting {_page(step.expect)}" if step.kind == "open" else f" on {_page(step.expect)}"
    if step.absent:
        line += f" (must not show yet: {', '.join(step.absent)})"
    if step.then is not None:
        line += f" → expects {_page(step.then)}"
    if step.approval:
        line += (
            f"; {step.sends.describe()}"
            if step.sends is not None
            else "; records no field set it sends: it does not replay (a verified run records it)"
        )
    return line


def describe_routine(routine: Routine) -> list[str]:
    """What the routine will do, step by step (for `routines show` and the console): every field its
    fingerprint signs, and its status and counts, which it does not; each line ``on_screen``."""
    flag = f", FLAGGED ({UNSIGNED})" if routine.flagged else ""
    lines = [f"{routine.name} v{routine.version} [{routine.status}{flag}]"]
    lines.append(
        f"learned from run {routine.source_run}"
        + (f", says it heals v{routine.based_on}" if routine.based_on else "")
    )
    lines.append(
        f"replays ({UNSIGNED}): {routine.successes} clean, {routine.fallbacks} fell back "
        f"({routine.fallbacks_in_a_row} in a row)"
    )
    if routine.last_fallback:
        lines.append(f"last fallback (a worker's note, not signed): {routine.last_fallback}")
    lines.append(f"parameters: {', '.join(routine.params) or 'none'}")
    if routine.summary:
        lines.append(f"summary: {routine.summary}")
    if routine.system:
        lines.append(f"{{erp}} stands for: {routine.system}")
    lines.append(f"the file work hands on: {', '.join(routine.values)}")
    rule = routine.documents
    how = (
        "the newest by printed date"
        if rule.choose == "newest_by_printed_date"
        else f"by the number in {{{rule.number_param}}}"
    )
    lines.append(f"1. files: search {rule.search!r}; of the invoices a template reads, take {how}")
    for template in routine.templates:
        fields = ", ".join(
            f"{f.name} ({f.kind}) after {f.anchor!r}" + (f" shaped {f.pattern}" if f.pattern else "")
            for f in template.fields
        )
        derived = ", ".join(f"{d.name} = {d.rule}({', '.join(d.inputs)})" for d in template.derived)
        learned = f" (learned from {template.learned_from!r})" if template.learned_from else ""
        lines.append(
            f"   template {template.issuer}{learned}: {fields}" + (f"; {derived}" if derived else "")
        )
        if lacking := [n for n in routine.uses() if n not in template.value_names()]:
            lines.append(
                f"   reads no {', '.join(lacking)}: a replay for {template.issuer} hands over to the agent"
            )
        if template.senders:
            lines.append(f"   only from e-mails sent from: {', '.join(template.senders)}")
        if template.checks:
            lines.append(f"   checks: {', '.join(template.checks)}")
    for i, step in enumerate(routine.browser, 2):
        lines.append(f"{i}. browser: {describe_step(step)}")
    for obstacle in routine.obstacles:
        steps = "; ".join(describe_step(s) for s in obstacle.steps)
        lines.append(
            f"obstacle {obstacle.kind}: "
            + (f"{steps}; " if steps else "")
            + f"up to {obstacle.retries} retries"
        )
    return [on_screen(line) for line in lines]
