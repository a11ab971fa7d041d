"""The file_reader's CrewAI tools: thin ``BaseTool`` wrappers over ``files`` and ``ap``.

Each ``_run`` validates nothing itself (the ``args_schema`` does), calls the plain logic and
returns ``ToolResult.to_text()``. Importing this module imports crewai (seconds); the logic in
``taskcrew.tools.files`` and ``taskcrew.tools.ap`` does not.

    files = SandboxFiles(paths.sandbox / "inbox")
    tools = file_reader_tools(files)   # list_files, read_file, search_files, parse_amount, ...
"""

from __future__ import annotations

from crewai.tools import BaseTool
from pydantic import BaseModel, Field

from taskcrew.tools import ap
from taskcrew.tools.files import SandboxFiles

# ----------------------------------------------------------------------------------- schemas


class ListFilesArgs(BaseModel):
    folder: str = Field(default=".", description="folder inside the sandbox, '.' for all of it")
    offset: int = Field(default=0, ge=0, description="skip this many entries (to page through a long list)")


class ReadFileArgs(BaseModel):
    path: str = Field(description="file path exactly as list_files shows it")
    offset: int = Field(default=0, ge=0, description="character offset, to continue a truncated file")


class SearchFilesArgs(BaseModel):
    query: str = Field(min_length=1, description="words that must all appear on one line (case-insensitive)")
    folder: str = Field(default=".", description="folder to search, '.' for the whole sandbox")


class ParseAmountArgs(BaseModel):
    text: str = Field(description="the amount exactly as printed, with its currency, e.g. '1.284,50 EUR'")


class DueDateArgs(BaseModel):
    invoice_date: str = Field(description="the invoice date as printed or as YYYY-MM-DD")
    terms: str = Field(
        description="the payment terms exactly as printed, e.g. 'Net 30' or 'Due date: 2026-10-20'"
    )


class CompareArgs(BaseModel):
    a: str = Field(description="first amount or date")
    b: str = Field(description="second amount or date")


# ------------------------------------------------------------------------------------- tools


class ListFilesTool(BaseTool):
    name: str = "list_files"
    description: str = (
        "List the files in the sandbox (recursively): path, type and size; for e-mails also the Date, "
        "From, Subject and attachment names. Use the dates to find the newest document."
    )
    args_schema: type[BaseModel] = ListFilesArgs
    files: SandboxFiles = Field(exclude=True)

    def _run(self, folder: str = ".", offset: int = 0) -> str:
        return self.files.list_files(folder, offset).to_text()


class ReadFileTool(BaseTool):
    name: str = "read_file"
    description: str = (
        "Read one file: PDF text page by page; an e-mail's headers, body and attachments (PDFs read "
        "inline); text, markdown or CSV; scans and photos (PNG, JPG, TIFF) by OCR, marked as such. "
        "Long output is cut; the note says which offset to continue at."
    )
    args_schema: type[BaseModel] = ReadFileArgs
    files: SandboxFiles = Field(exclude=True)

    def _run(self, path: str, offset: int = 0) -> str:
        return self.files.read_file(path, offset).to_text()


class SearchFilesTool(BaseTool):
    name: str = "search_files"
    description: str = (
        "Search the text of every readable file (PDFs and e-mail attachments included) for lines that "
        "contain all the given words, case-insensitive. Returns file, location and the matching line."
    )
    args_schema: type[BaseModel] = SearchFilesArgs
    files: SandboxFiles = Field(exclude=True)

    def _run(self, query: str, folder: str = ".") -> str:
        return self.files.search_files(query, folder).to_text()


class ParseAmountTool(BaseTool):
    name: str = "parse_amount"
    description: str = (
        "Turn an amount as printed (1,284.50 / 1.284,50 / 1,28,450.00 / 'EUR 1 284,50' / '(150.00)') "
        "into an exact decimal, its currency, and the plain form systems accept (1284.50). Refuses "
        "ambiguous input such as '1,284' instead of guessing."
    )
    args_schema: type[BaseModel] = ParseAmountArgs

    def _run(self, text: str) -> str:
        return ap.parse_amount_result(text).to_text()


class ComputeDueDateTool(BaseTool):
    name: str = "compute_due_date"
    description: str = (
        "Compute a due date from the invoice date and the payment terms as printed: 'Net 30', "
        "'30 days', 'zahlbar innerhalb 14 Tagen', '30 days EOM', 'due on receipt', or an explicit "
        "due date. Shows the working, e.g. '2026-09-12 + 30 days = 2026-10-12'."
    )
    args_schema: type[BaseModel] = DueDateArgs

    def _run(self, invoice_date: str, terms: str) -> str:
        return ap.due_date_result(invoice_date, terms).to_text()


class CompareValuesTool(BaseTool):
    name: str = "compare_values"
    description: str = (
        "Compare two amounts (any format, same currency) or two dates: equal, which is larger/later, "
        "and the difference a - b."
    )
    args_schema: type[BaseModel] = CompareArgs

    def _run(self, a: str, b: str) -> str:
        return ap.compare_result(a, b).to_text()


def file_reader_tools(files: SandboxFiles) -> list[BaseTool]:
    """The file_reader's full tool set, bound to one sandbox."""
    return [
        ListFilesTool(files=files),
        ReadFileTool(files=files),
        SearchFilesTool(files=files),
        ParseAmountTool(),
        ComputeDueDateTool(),
        CompareValuesTool(),
    ]


def read_only_file_tools(files: SandboxFiles) -> list[BaseTool]:
    """Alias for the verifier: every tool here is read-only."""
    return file_reader_tools(files)
