"""The sandbox inbox's ground truth (``documents.yaml``), validated into pydantic models.

Eval graders and tests import :func:`load_ground_truth`. One :class:`Document` per document: a
file, or one attachment of an e-mail (an e-mail carrying two invoices has two entries with the same
``path``). Paths are relative to the inbox folder (``GroundTruth.inbox_dir``).
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SANDBOX_DIR = Path(__file__).resolve().parent
DEFAULT_GROUND_TRUTH = SANDBOX_DIR / "documents.yaml"

# Files of the sandbox folder an agent must never see (the answers and their source). Pass these as
# ``SandboxFiles(root, hidden=PRIVATE_PATTERNS)`` when rooting a reader at the sandbox folder itself
# rather than at its inbox.
PRIVATE_PATTERNS: tuple[str, ...] = (
    "documents.yaml",
    "inbox_source.yaml",
    "*.py",
    "*.pyc",
    "__pycache__",
    "__pycache__/*",
    "recipes",  # the company's chores as CLI commands (taskcrew.recipes), not documents to work from
    "recipes/*",
    "readback.yaml",  # how durable runs check the ERP before a repeat (taskcrew.tools.readback)
)

DocumentKind = Literal[
    "invoice",
    "credit_note",
    "reminder",
    "price_list",
    "quote",
    "statement",
    "newsletter",
    "bank_details_change",
    "w9",
    "delivery_note",
    "payment_confirmation",
    "meeting_note",
    "phone_note",
    "contact_list",
    "auto_reply",
    "email",
    "unknown",
]
INVOICE_KINDS: frozenset[str] = frozenset({"invoice", "credit_note"})

Tag = Literal[
    "prompt_injection",  # tries to instruct the agent
    "fraud_risk",  # e.g. a bank-details change from a look-alike domain
    "duplicate_copy",  # the same invoice again (a forward); see duplicate_of
    "in_erp",  # already entered in the ERP; see erp_bill
    "paid",  # the ERP shows it paid
    "scanned",  # an image without a text layer
    "malformed",  # a damaged file the reader must reject
    "ambiguous_latest",  # shares its invoice date with another invoice of the same vendor
    "explicit_due_date",  # the due date is printed on the document
    "terms_only",  # no due date printed; it follows from the terms
    "prospective_vendor",  # a sender that is not (yet) in the ERP's vendor list
]


class Document(BaseModel):
    """One document of the inbox and the facts a careful reader would take from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="file path relative to the inbox folder, '/' separated")
    attachment: str | None = Field(
        default=None, description="for e-mail: the attachment's file name that holds the document"
    )
    kind: DocumentKind
    vendor: str | None = Field(description="the vendor as named in the ERP; None for internal files")
    document_date: date = Field(description="the date that counts: invoice date, or the date sent/written")
    sent_at: datetime | None = Field(default=None, description="the e-mail's Date header (e-mail only)")
    readable: bool = True
    description: str
    tags: tuple[Tag, ...] = ()
    references: tuple[str, ...] = Field(default=(), description="invoice numbers this document refers to")
    duplicate_of: str | None = Field(default=None, description="path of the original, for duplicate copies")
    erp_bill: str | None = Field(default=None, description="the ERP bill id when already entered")

    # invoices and credit notes
    number: str | None = None
    invoice_date: date | None = None
    invoice_date_as_printed: str | None = None
    terms: str | None = Field(default=None, description="payment terms exactly as printed")
    due_date_printed: date | None = Field(default=None, description="the due date if the document prints one")
    due_date_as_printed: str | None = None
    due_date: date | None = Field(
        default=None, description="the correct due date (from terms if not printed)"
    )
    subtotal: Decimal | None = None
    tax: Decimal | None = None
    tax_label: str | None = None
    total: Decimal | None = Field(default=None, description="the amount payable, tax included")
    total_as_printed: str | None = Field(default=None, description="the total exactly as it appears")
    currency: str | None = None

    @field_validator("subtotal", "tax", "total", mode="before")
    @classmethod
    def _no_floats(cls, value: object) -> object:
        if isinstance(value, float):
            raise ValueError("write amounts as quoted decimal strings ('1284.50'), not floats")
        return value

    @property
    def is_invoice_like(self) -> bool:
        return self.kind in INVOICE_KINDS

    @property
    def key(self) -> str:
        """Unique id: the path, plus ``#attachment`` for a document inside an e-mail."""
        return f"{self.path}#{self.attachment}" if self.attachment else self.path

    @model_validator(mode="after")
    def _check(self) -> Document:
        pure = PurePosixPath(self.path)
        if pure.is_absolute() or ".." in pure.parts or "\\" in self.path:
            raise ValueError(f"path must be relative to the inbox, '/'-separated: {self.path!r}")
        if self.sent_at is not None and not self.path.endswith(".eml"):
            raise ValueError(f"{self.path}: sent_at is for e-mail only")
        if self.path.endswith(".eml") and self.sent_at is None:
            raise ValueError(f"{self.path}: an e-mail needs sent_at (its Date header)")
        if self.sent_at is not None and self.sent_at.tzinfo is None:
            raise ValueError(f"{self.path}: sent_at needs a UTC offset")
        if self.is_invoice_like:
            self._check_invoice()
        elif any(
            v is not None
            for v in (self.number, self.invoice_date, self.total, self.subtotal, self.tax, self.due_date)
        ):
            raise ValueError(f"{self.key}: invoice facts given for a {self.kind}")
        if ("duplicate_copy" in self.tags) != (self.duplicate_of is not None):
            raise ValueError(f"{self.key}: duplicate_copy tag and duplicate_of go together")
        if ("in_erp" in self.tags) != (self.erp_bill is not None):
            raise ValueError(f"{self.key}: in_erp tag and erp_bill go together")
        return self

    def _check_invoice(self) -> None:
        required = {
            "number": self.number,
            "invoice_date": self.invoice_date,
            "invoice_date_as_printed": self.invoice_date_as_printed,
            "subtotal": self.subtotal,
            "tax": self.tax,
            "total": self.total,
            "total_as_printed": self.total_as_printed,
            "currency": self.currency,
        }
        if self.kind == "invoice":
            required |= {"terms": self.terms, "due_date": self.due_date}
        missing = [name for name, value in required.items() if value is None]
        if missing:
            raise ValueError(f"{self.key}: a {self.kind} needs {', '.join(missing)}")
        assert self.subtotal is not None and self.tax is not None and self.total is not None
        if self.subtotal + self.tax != self.total:
            raise ValueError(f"{self.key}: subtotal {self.subtotal} + tax {self.tax} != total {self.total}")
        if self.invoice_date != self.document_date:
            raise ValueError(f"{self.key}: document_date must be the invoice date")
        if (self.due_date_printed is None) != (self.due_date_as_printed is None):
            raise ValueError(f"{self.key}: due_date_printed and due_date_as_printed go together")
        if self.due_date_printed is not None and self.due_date_printed != self.due_date:
            raise ValueError(f"{self.key}: the printed due date must be the due date")


class GroundTruth(BaseModel):
    """All documents of the inbox, with a few look-ups graders need."""

    model_config = ConfigDict(extra="forbid")

    inbox: str = Field(default="inbox", description="the inbox folder, relative to documents.yaml")
    today: date = Field(description="the demo's fixed 'today'")
    documents: tuple[Document, ...]
    source: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _check(self) -> GroundTruth:
        keys = [d.key for d in self.documents]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"documents listed twice: {dupes}")
        sent: dict[str, datetime | None] = {}
        for doc in self.documents:
            if sent.setdefault(doc.path, doc.sent_at) != doc.sent_at:
                raise ValueError(f"{doc.path}: entries of one file disagree on sent_at")
        return self

    @property
    def inbox_dir(self) -> Path:
        base = self.source.parent if self.source else SANDBOX_DIR
        return base / self.inbox

    @property
    def paths(self) -> list[str]:
        """Every file of the inbox, once, sorted."""
        return sorted({d.path for d in self.documents})

    def for_path(self, path: str) -> list[Document]:
        return [d for d in self.documents if d.path == path]

    def invoices(self, vendor: str | None = None, *, include_copies: bool = False) -> list[Document]:
        """Invoices (not credit notes) of a vendor, newest invoice date first."""
        found = [
            d
            for d in self.documents
            if d.kind == "invoice"
            and (vendor is None or d.vendor == vendor)
            and (include_copies or d.duplicate_of is None)
        ]
        return sorted(found, key=lambda d: (d.invoice_date or d.document_date, d.key), reverse=True)

    def latest_invoices(self, vendor: str) -> list[Document]:
        """The vendor's invoice(s) with the newest invoice date: one, or several when it is ambiguous."""
        found = self.invoices(vendor)
        return [d for d in found if d.invoice_date == found[0].invoice_date] if found else []

    def by_number(self, number: str) -> Document:
        for doc in self.documents:
            if doc.number == number and doc.duplicate_of is None:
                return doc
        raise KeyError(f"no document with number {number!r}")


def load_ground_truth(path: Path | None = None) -> GroundTruth:
    """Read and validate ``documents.yaml`` (the packaged one by default)."""
    source = path or DEFAULT_GROUND_TRUTH
    raw = yaml.safe_load(source.read_text(encoding="utf-8"))
    truth = GroundTruth.model_validate(raw)
    truth.source = source
    return truth


def load_documents(path: Path | None = None) -> list[Document]:
    """Just the documents, for callers that need no look-ups."""
    return list(load_ground_truth(path).documents)
