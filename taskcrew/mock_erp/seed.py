"""The seeded vendors and bills, loaded from seed_data.yaml and checked on load."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

SEED_FILE = Path(__file__).with_name("seed_data.yaml")


class SeedVendor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    default_currency: str = Field(pattern=r"^[A-Z]{3}$")


class SeedBill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    vendor: str
    invoice_number: str
    amount: str = Field(pattern=r"^\d+\.\d{2}$")
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    invoice_date: date
    due_date: date
    paid_on: date | None = None
    created_at: str
    notes: str | None = None


class SeedData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    vendors: list[SeedVendor]
    bills: list[SeedBill]

    @model_validator(mode="after")
    def _bills_name_known_vendors(self) -> SeedData:
        names = {v.name for v in self.vendors}
        unknown = sorted({b.vendor for b in self.bills} - names)
        if unknown:
            raise ValueError(f"seed bills name unknown vendors: {unknown}")
        return self


@lru_cache(maxsize=4)
def load_seed(path: Path = SEED_FILE) -> SeedData:
    """The seed at ``path`` (immutable, so loading it once per process is enough)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return SeedData.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=loader))
