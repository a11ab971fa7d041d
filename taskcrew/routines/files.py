"""The routine's file work: find the document by its rule over the company's files, read its values
with the issuer's template. Everything here is code; nothing asks a model."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from email.header import decode_header, make_header
from email.headerregistry import AddressHeader, HeaderRegistry
from email.utils import getaddresses

from taskcrew.config import company_domains
from taskcrew.routines.models import DocumentRule, Routine, Template, Unfilled, fill
from taskcrew.routines.template import ExtractionError, extract_all
from taskcrew.tools.documents.models import EmailContent, EmailHeaders, FileContent, email_text

MAX_FILES = 60  # the files with a hit the rule reads, at most: more, and the agent decides
SEARCH_BUDGET = 400  # matching lines a search may return, when the reader's own cap cut it short
_ADDRESS = re.compile(r"[^\s<>()\[\]\",;:@]+@[^\s<>()\[\]\",;:@]+")
_HEADERS = HeaderRegistry()  # the parser the mail reader's policy uses (email.policy.default)
_DOMAIN = re.compile(r"(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W_](?:[\w-]*[^\W_])?")


class FileStepFailed(Exception):
    """The file work cannot be done by the routine (the reason goes to the agent). ``new_issuer``:
    only because the routine has not learned this issuer's template, or sender, yet (growth, not a
    defect)."""

    def __init__(self, reason: str, new_issuer: bool = False) -> None:
        super().__init__(reason)
        self.new_issuer = new_issuer


@dataclass
class Found:
    path: str
    values: dict[str, str]
    quote: str
    stranger: str | None = None  # where it came from, when not from the issuer's learned senders


def sender_domain(header: str) -> str:
    """The domain of the one address a From header gives, casefolded; "" — an unclear sender, a
    stranger's mail — unless the header says plainly who sent it. Two parsers must read the same
    one address from it: ``email.utils.getaddresses`` and the standard library's mail parser (the
    reader's), with no defect it would repair (``billing@northwind.example <ar@evil.example>``, two
    angle-bracket addresses, an unclosed ``<``) and no group (``Northwind: a@northwind.example;``).
    The address must be ASCII (a look-alike letter: "trader\u017f" casefolds to "traders"), and the
    header must show no other address anywhere — display name, comment, an RFC 2047 encoded word
    (``=?utf-8?q?billing=40northwind.example?=``) or look-alike characters (``billing＠northwind``)
    — besides its own: the display name is the sender's own words, not who sent it. Every sender
    domain the routines use (learned senders, trusted parts, the reasons) comes from here, through
    ``mail_sender``, which also weighs what the rest of the mail's headers say against it."""
    pairs = getaddresses([header])
    if len(pairs) != 1 or not pairs[0][1].isascii():
        return ""
    address = pairs[0][1].lower()
    local, at, domain = address.rpartition("@")
    domain = domain.rstrip(".")
    if not at or not local or "@" in local or not _DOMAIN.fullmatch(domain):
        return ""
    read = _mail_parser_reads(header)
    if read is None or read[0] != address:
        return ""
    shown = _shown_addresses(header, read[1])
    if shown is None or any(other != address for other in shown):
        return ""
    return domain


def _mail_parser_reads(header: str) -> tuple[str, str] | None:
    """(address, display name) the mail parser reads from a From header, when it reads exactly one
    mailbox, outside any group, without repairing anything; else None."""
    try:
        parsed = _HEADERS("From", header)
    except Exception:  # a header it cannot read at all (a line break in it, say)
        return None
    if not isinstance(parsed, AddressHeader):
        return None
    groups = parsed.groups
    if parsed.defects or len(groups) != 1 or groups[0].display_name is not None:
        return None
    if len(groups[0].addresses) != 1:
        return None
    mailbox = groups[0].addresses[0]
    return mailbox.addr_spec.lower(), mailbox.display_name


def _shown_addresses(header: str, name: str) -> list[str] | None:
    """Every address-like text a header shows a person, casefolded: as written, with its RFC 2047
    encoded words decoded, and each also in compatibility form (NFKC: a full-width "＠" is "@");
    ``name``: its display name as the parser decoded it. None when an encoded word does not
    decode (what it shows is unknown)."""
    try:
        decoded = str(make_header(decode_header(header)))
    except Exception:
        return None
    texts = [header, decoded, name]
    texts += [unicodedata.normalize("NFKC", t) for t in texts]
    return [found.casefold() for t in texts for found in _ADDRESS.findall(t)]


def mail_sender(headers: EmailHeaders) -> str:
    """The domain an e-mail was sent from as far as the routine can tell: its From's
    (``sender_domain``), "" — an unclear sender, a stranger's mail — when the mail's own headers
    contradict it (``sender_doubts``: replies or bounces going to another domain, the receiving
    server's SPF/DKIM/DMARC failing for it). Anyone can write any From; this is all the check has
    besides the company's mail server refusing forged mail. Every e-mail the routines trust (learned
    senders, trusted parts, a colleague's forward and what it forwards) is judged here."""
    domain = sender_domain(headers.sender)
    return domain if domain and not sender_doubts(headers, domain) else ""


def sender_doubts(headers: EmailHeaders, domain: str) -> list[str]:
    """Why an e-mail whose From gives ``domain`` may not be from there, in plain words ([] when its
    headers say nothing against it): a Reply-To or Return-Path on another domain (the same domain or
    one under it is the sender's own), one that shows no address plainly, and an
    Authentication-Results reporting spf, dkim or dmarc "fail" for ``domain`` (or a domain above or
    under it, or for no domain named)."""
    said = []
    for name, value, what in (
        ("Reply-To", headers.reply_to, "replies would go to"),
        ("Return-Path", headers.return_path, "the sending mail server gave the return address"),
    ):
        if not value or not value.replace("<>", "").strip(" ,"):
            continue  # none, or the empty return address of an automatic message
        shown = _shown_addresses(value, "")
        if not shown:
            said.append(f"its {name} does not show an address plainly ({' '.join(value.split())[:80]!r})")
            continue
        others = [a for a in dict.fromkeys(shown) if not _under(a.rpartition("@")[2].rstrip("."), domain)]
        if others:
            said.append(f"{what} {', '.join(others[:3])} (its {name})")
    failed = [r for header in headers.authentication_results for r in _failures(header, domain)]
    if failed:
        said.append(
            f"the receiving mail server reports {', '.join(dict.fromkeys(failed))} for {domain} "
            "(its Authentication-Results)"
        )
    return said


def _under(domain: str, parent: str) -> bool:
    return domain == parent or domain.endswith("." + parent)


_COMMENT = re.compile(r"\([^()]*\)")
_RESULT = re.compile(r"\s*(spf|dkim|dmarc)\s*=\s*([a-z]+)", re.IGNORECASE)
_CHECKED = re.compile(
    r"\b(?:header\.from|header\.d|header\.i|smtp\.mailfrom|smtp\.helo)\s*=\s*([^\s;]+)", re.I
)


def _failures(header: str, domain: str) -> list[str]:
    """The "spf=fail", "dkim=fail", "dmarc=fail" an Authentication-Results header reports for
    ``domain``, a domain above or under it, or no domain at all."""
    text = header
    while _COMMENT.search(text):  # comments, nested ones too: "(p=reject; dis=none)"
        text = _COMMENT.sub(" ", text)
    found = []
    for result in text.split(";"):  # the first part names the server that checked: no verdict
        verdict = _RESULT.match(result)
        if verdict is None or verdict.group(2).lower() != "fail":
            continue
        checked = [v.strip("\"'<>").rpartition("@")[2].rstrip(".").lower() for v in _CHECKED.findall(result)]
        if not checked or any(_under(c, domain) or _under(domain, c) for c in checked):
            found.append(f"{verdict.group(1).lower()}=fail")
    return found


def _shown_sender(headers: EmailHeaders) -> str:
    """A sender as a reason names it: its domain, or the header itself when it gives none, or why
    its own headers put the domain in doubt."""
    if domain := mail_sender(headers):
        return domain
    if domain := sender_domain(headers.sender):
        doubts = "; ".join(sender_doubts(headers, domain))
        return f"an unclear sender: its From says {domain}, but {doubts}; the From may be forged"
    return f"an unclear sender {' '.join(headers.sender.split())[:80]!r}"


def _ours(domain: str, ours: set[str]) -> bool:
    """A company domain or one of its subdomains (a colleague at eu.acme-corp.example)."""
    return any(domain == d or domain.endswith("." + d) for d in ours)


def _forwarded(email: EmailContent) -> list[EmailContent]:
    return [a.email for a in email.attachments if a.email is not None]


def _chain(email: EmailContent | None) -> list[str]:
    """Every sender domain in an e-mail and the e-mails forwarded in it, outermost first."""
    if email is None:
        return []
    found = [_shown_sender(email.headers), *(d for e in _forwarded(email) for d in _chain(e))]
    return list(dict.fromkeys(d for d in found if d))


def _issuer_parts(email: EmailContent, ours: set[str]) -> list[tuple[str, EmailContent]]:
    """(sender domain, part) of each part of ``email`` a replay may read as someone's (the parts
    ``_trusted_part`` chooses from): the e-mail itself when someone outside the company sent it,
    else — a colleague's forward — the forwarded e-mails' own such parts."""
    sender = mail_sender(email.headers)
    if sender and not _ours(sender, ours):
        return [(sender, email)]
    if not sender:
        return []
    # a colleague's forward: the forwarded e-mails' senders speak for the document
    return [p for e in _forwarded(email) for p in _issuer_parts(e, ours)]


def sender_parts(content: FileContent) -> list[tuple[str, str]]:
    """(sender domain, the text a template would read there on replay) of each part of a document
    someone outside the company sent (``_issuer_parts``); [] for a file that is not an e-mail."""
    if content.email is None:
        return []
    return [(d, _part_text(content, p)) for d, p in _issuer_parts(content.email, company_domains())]


def sender_domains(content: FileContent) -> list[str]:
    """The domains a document was sent from: its sender's — or, when a colleague (the company's own
    domain) sent it, those of the e-mails forwarded in it. A stranger's e-mail that merely attaches
    another message is the stranger's. [] for a file that is not an e-mail, or one only the
    company's own people sent."""
    return list(dict.fromkeys(d for d, _ in sender_parts(content)))


def _part_text(content: FileContent, part: EmailContent) -> str:
    """The text of ``part`` of ``content``'s e-mail, as a template reads it."""
    return content.full_text() if part is content.email else email_text(part)


def _trusted_part(email: EmailContent, senders: set[str], ours: set[str]) -> EmailContent | None:
    """The part of an e-mail one of ``senders`` sent: the e-mail itself, or (a colleague's forward
    only) a forwarded e-mail's trusted part. None when no learned sender sent any of it."""
    sender = mail_sender(email.headers)
    if sender in senders:
        return email
    if not sender or not _ours(sender, ours):
        return None
    return next((p for e in _forwarded(email) if (p := _trusted_part(e, senders, ours)) is not None), None)


def _readable(template: Template, content: FileContent) -> str | None:
    """The text the template may read (anyone can mail the inbox a text that names the issuer and
    prints its labels): a template learned from a file that was not an e-mail (no learned senders)
    reads such files whole and no e-mail — nobody learned who sends the issuer's mail; one with
    learned senders reads only what the issuer sent — the e-mail itself, or the issuer's e-mail a
    colleague forwarded, never the colleague's own words — and no file that is not an e-mail. None
    for a document the template may not read."""
    if not template.senders:
        return content.full_text() if content.email is None else None
    if content.email is None:
        return None
    part = _trusted_part(content.email, set(template.senders), company_domains())
    return None if part is None else _part_text(content, part)


def find_document(routine: Routine, params: dict[str, str], files: object) -> Found:
    """The document the rule picks and the values its template reads; raises FileStepFailed."""
    rule = routine.documents
    try:
        words = fill(rule.search, params)
    except Unfilled as exc:
        raise FileStepFailed(f"the document rule's search: {exc}") from None
    template: Template | None = routine.template_for(words)
    if template is None:
        raise FileStepFailed(routine.no_template(words), new_issuer=True)
    paths, unsearched = _hit_paths(files, words)
    read: list[Found] = []
    problems = []
    unfit: list[tuple[str, FileContent, str]] = []  # the issuer's files the template reads nothing from
    unread = list(unsearched)  # (path, why): files naming ``words`` whose text could not be read
    for path in paths:
        try:
            content = files.read(path)  # type: ignore[attr-defined]
            if not routine.names(content.full_text(), words, template):
                continue  # another issuer's document: it names the vendor only inside that one's name
            trusted = _readable(template, content)
            text = trusted if trusted is not None else content.full_text()
        except Exception as exc:
            unread.append((path, _why(exc)))
            continue
        try:
            every = extract_all(template, text)
        except ExtractionError as exc:
            if part := _part_not_read(content):  # the invoice may be in the part it could not read
                unread.append((path, part))
            else:
                problems.append(f"{path}: {exc}")
                if trusted is not None:
                    unfit.append((path, content, text))
            continue
        stranger = None if trusted is not None else ", ".join(_chain(content.email)) or "not an e-mail"
        for values in every:
            number = values.get(template.fields[0].name, "")
            quote = next((line.strip() for line in text.splitlines() if number and number in line), number)
            read.append(Found(path=path, values=values, quote=quote, stranger=stranger))
    if unread:
        raise FileStepFailed(_unread_reason(template, rule, words, unread))
    picked = _pick(template, rule, params, read, len(paths), words, problems)
    if rule.choose == "newest_by_printed_date":
        _none_newer_unread(template, picked[0], read, unfit)
    return _trusted(template, picked)


def _none_newer_unread(
    template: Template, pick: Found, read: list[Found], unfit: list[tuple[str, FileContent, str]]
) -> None:
    """Raises FileStepFailed when a file of the issuer's that the template reads nothing from may be
    a newer invoice than ``pick`` — the issuer changed its layout ("Invoice #" for "Invoice No."),
    its invoice numbers' style too, or both: it is dated on or after the pick's printed date (an
    e-mail's Date), or has no date to tell (a file that is not an e-mail), and prints an invoice
    number that no document the template read has — one of the issuer's invoice numbers' kind (the
    template's shape, and the letters before the digits of one it read), or one in any style that
    the file prints as an invoice number (after "Invoice", "Invoice No.", "Invoice #",
    "Rechnungsnummer" … or the template's own label for it: ``_labelled_numbers``). A reminder or a
    payment advice about a known invoice, a price list of item codes, an older e-mail: none of them
    stops the rule; a newer invoice is never passed over for an older one without a word."""
    number = template.fields[0]
    known = {f.values.get(number.name, "") for f in read} - {""}
    if not known:
        return
    kinds = {_kind(n) for n in known}
    since = pick.values.get(_date_field(template), "")
    shape = re.compile(rf"(?<![\w/-])(?:{number.pattern})(?![\w/-])") if number.pattern else None
    labels = _number_labels(number.anchor)
    folded = {n.casefold() for n in known}
    for path, content, text in unfit:
        sent = (content.email.headers.date or "") if content.email is not None else ""
        day = sent[:10] if re.match(r"\d{4}-\d{2}-\d{2}", sent) else ""
        if day and since and day < since:
            continue  # sent before the picked invoice was issued
        alike = [] if shape is None else [m.group(0) for m in shape.finditer(text)]
        alike = [n for n in dict.fromkeys(alike) if n.casefold() not in folded and _kind(n) in kinds]
        labelled = [
            n for n in _labelled_numbers(text, labels) if n.casefold() not in folded and n not in alike
        ]
        if not alike and not labelled:
            continue
        prints = (
            f"prints {', '.join(alike[:3])} like the issuer's invoice numbers"
            if alike
            else f"prints {', '.join(labelled[:3])} as an invoice number (a number style the issuer's "
            f"invoices read so far do not have)"
        )
        raise FileStepFailed(
            f"{path} is {template.issuer}'s, "
            + (f"sent {day}, " if day else "undated, ")
            + f"and {prints}, but the template reads no invoice from it (a new layout?): it may be a "
            f"newer invoice than {pick.values.get(number.name, '')} of {since or 'an unknown date'}, the "
            "newest the template reads, so the routine does not pick that one; the agent and the person "
            "decide"
        )


# the words a document prints before its invoice number, in the languages of the demo's issuers:
# "Invoice", "Invoice No.", "Invoice #", "Invoice number", "Rechnung", "Rechnungsnummer", "Rechnungs-Nr.",
# "Facture n°", "Factura", "Fattura"
_INVOICE_WORDS = (
    r"invoices?(?:[ \t]*(?:no\.?|nr\.?|number|num\.?|id|\#))?"
    r"|rechnung(?:s-?nr\.?|snummer)?(?:[ \t]*(?:nr\.?|\#))?"
    r"|factur[ae](?:[ \t]*(?:no\.?|n°|nr\.?|número|numero|\#))?"
    r"|fattura(?:[ \t]*(?:n\.?|nr\.?|numero|\#))?"
)
_AMOUNT = re.compile(r"[-+]?\d{1,3}(?:[,.' ]\d{2,3})*[.,]\d{2}")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2}-[a-z]{3}-\d{2,4}", re.I)


def _number_labels(anchor: str) -> re.Pattern[str]:
    """The labels an invoice number is printed after: the usual words (``_INVOICE_WORDS``) and the
    template's own label for it (its anchor: "Invoice No.", "Rechnungsnummer")."""
    own = re.escape(anchor.strip().rstrip(":#").strip())
    return re.compile(
        rf"(?<![\w@.-])(?:{own}|{_INVOICE_WORDS})(?![\w@-])[ \t]*[:#]?[ \t]*"
        r"(?P<number>[^\W_][\w/.-]{1,39})",
        re.IGNORECASE,
    )


def _labelled_numbers(text: str, labels: re.Pattern[str]) -> list[str]:
    """The invoice numbers ``text`` prints after an invoice-number label, in any style
    ("INV-3001", "NWT/2026/0042", "3001", "HCS-2026-10A"): a word with a digit, of at least three
    characters, that is neither an amount ("INVOICE 1,980.00" in a statement) nor a date; "invoice
    for PO 4471" prints none."""
    found = []
    for match in labels.finditer(text):
        number = match.group("number").rstrip(".-/")
        if len(number) < 3 or not any(c.isdigit() for c in number):
            continue
        if _AMOUNT.fullmatch(number) or _DATE.fullmatch(number):
            continue
        found.append(number)
    return list(dict.fromkeys(found))


def _kind(number: str) -> str:
    """What an invoice number prints before its digits ("INV-" of INV-2057): item codes ("NW-1170")
    or delivery notes ("LS-2026-1177") of the same shape are another kind of number."""
    return re.split(r"\d", number, maxsplit=1)[0]


def _why(exc: Exception) -> str:
    """Why a file could not be read, in the reader's words (its first sentence), else the error's kind."""
    said = " ".join(str(exc).split()).split("; ")[0]
    return said[:160] if said else type(exc).__name__


def _part_not_read(content: FileContent) -> str:
    """What part of a document the reader could not read ("" when it read all of it): an e-mail's
    attachment it could not open (a damaged PDF, a format it does not read), or a read cut short
    at its limits (a page cap, the content budget)."""
    if content.notes:
        return f"read in part: {content.notes[0]}"
    email = content.email
    pending = [email] if email is not None else []
    while pending:
        current = pending.pop()
        for attachment in current.attachments:
            if attachment.error:
                return f"its attachment {attachment.name} cannot be read: {attachment.error}"
            if attachment.email is not None:
                pending.append(attachment.email)
    return ""


def _unread_reason(template: Template, rule: DocumentRule, words: str, unread: list[tuple[str, str]]) -> str:
    """Why the routine picks no document: files naming ``words`` it cannot read, each named."""
    which = (
        "the invoice whose number the task gives"
        if rule.choose == "by_number"
        else f"{template.issuer}'s newest invoice"
    )
    listed = "; ".join(f"{path} ({why})" for path, why in unread[:3])
    more = f"; and {len(unread) - 3} more" if len(unread) > 3 else ""
    return (
        f"{len(unread)} file(s) naming {words!r} cannot be read: {listed}{more}. Any of them may be {which}, "
        "so the routine picks none of the files it can read (it would enter an older invoice without a "
        "word). Make each readable (a complete copy of the file, read permission for taskcrew) or move it "
        "out of the company files, then run the chore again; until then the agent and the person decide"
    )


def _hit_paths(files: object, words: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Every file with a line naming ``words``, in the search's order, and (path, why) of each file
    the search could not read whose name names ``words`` (as a line does: every word, in any case).
    A search cut short at the reader's cap (``truncated``: a few e-mails that repeat the name push
    the rest out) is searched again with a larger one (``SEARCH_BUDGET``), the same reader
    otherwise; the rule never picks "the newest" from part of the files: a search still cut short,
    or more than ``MAX_FILES`` files, goes to the agent."""
    result = files.search(words)  # type: ignore[attr-defined]
    if result.truncated:
        result = files.search(words, max_hits=SEARCH_BUDGET)  # type: ignore[attr-defined]
    paths = list(dict.fromkeys(h.path for h in result.hits))
    if result.truncated:
        raise FileStepFailed(
            f"the search for {words!r} stopped at {len(result.hits)} matching lines in {len(paths)} file(s), "
            "its limit: the document the rule picks may be in a file it did not reach"
        )
    if len(paths) > MAX_FILES:
        raise FileStepFailed(
            f"{len(paths)} files mention {words!r}, more than the {MAX_FILES} the routine reads: "
            "the document the rule picks may be among those it would not read"
        )
    terms = words.lower().split()
    unsearched = [
        (path, why)
        for path, why in map(_unsearched_entry, getattr(result, "unreadable", []))
        if all(term in path.lower() for term in terms)
    ]
    return paths, unsearched


def _unsearched_entry(entry: str) -> tuple[str, str]:
    """A search's "path (why)" entry of a file it could not read, as (path, why): the reason is the
    parenthesised text at its end (a path may hold parentheses too: "invoice (3).pdf (damaged file)")."""
    if entry.endswith(")"):
        depth = 0
        for i in range(len(entry) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(entry[i], 0)
            if depth == 0:
                if i > 0 and entry[i - 1] == " ":
                    return entry[: i - 1], entry[i + 1 : -1]
                break
    return entry, "it could not be searched"


def _trusted(template: Template, found: list[Found]) -> Found:
    """The one document picked, unless it (or one as good) was not sent by the issuer: the agent,
    and the person approving, decide about a stranger's document; the routine never reads it."""
    for f in found:
        if f.stranger is not None:
            learned = (
                f"was not sent from {', '.join(template.senders)}, the issuer's e-mail the routine learned"
                if template.senders
                else "is an e-mail, and the routine learned the issuer's invoices as files: nobody learned "
                "who sends its mail"
            )
            raise FileStepFailed(
                f"{f.path} reads as {template.issuer}'s invoice {f.values.get(template.fields[0].name, '')} but "
                f"{learned} (it came from {f.stranger})",
                new_issuer=True,
            )
    return _agreed(template, found)


def _agreed(template: Template, found: list[Found]) -> Found:
    """The document picked, when every other the rule could as well have picked (another copy of
    the same invoice: a forward, a re-send) reads the same values. Two that differ in any value (a
    corrected re-issue under the same number and date) are a person's decision, like two invoices
    on one date: never settled by the search's order."""
    names = dict.fromkeys(k for f in found for k in f.values)
    differ = [k for k in names if len({f.values.get(k) for f in found}) > 1]
    if differ:
        said = "; ".join(
            f"{f.path}: " + ", ".join(f"{k} {f.values.get(k, '(none)')}" for k in differ) for f in found[:4]
        )
        raise FileStepFailed(
            f"{len(found)} documents read as {template.issuer}'s invoice "
            f"{found[0].values.get(template.fields[0].name, '')}, the one the rule picks, but differ "
            f"({said}): which one counts is a person's decision"
        )
    return found[0]


def _pick(
    template: Template,
    rule: DocumentRule,
    params: dict[str, str],
    read: list[Found],
    files_found: int,
    words: str,
    problems: list[str],
) -> list[Found]:
    """The document the rule picks, first, and any other it could as well have picked."""
    if rule.choose == "by_number":
        wanted = params.get(rule.number_param or "", "")
        read = [f for f in read if f.values.get(template.fields[0].name) == wanted]
        if not read:
            raise FileStepFailed(f"no document read by the template has the number {wanted!r}")
        return read
    if not read:
        raise FileStepFailed(
            f"the template for {template.issuer} reads no invoice among {files_found} file(s) found for "
            f"{words!r}" + (f" ({problems[0]})" if problems else "")
        )
    dated = [f for f in read if f.values.get(_date_field(template), "")]
    if not dated:
        raise FileStepFailed("the template reads no printed date to order the invoices by")
    key = _date_field(template)
    newest = max(f.values[key] for f in dated)
    same_day = {f.values[template.fields[0].name]: f for f in dated if f.values[key] == newest}
    if len(same_day) > 1:  # which one to enter is a person's decision: never learned, never guessed
        listing = ", ".join(sorted(same_day))
        raise FileStepFailed(f"{len(same_day)} invoices share the newest printed date {newest} ({listing})")
    return [f for f in dated if f.values[key] == newest]


def _date_field(template: Template) -> str:
    """The printed date that orders invoices: the first date field (the invoice date)."""
    return next((f.name for f in template.fields if f.kind == "date"), "")
