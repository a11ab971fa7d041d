"""The file_reader's CrewAI tools: thin wrappers with pydantic args schemas (imports crewai)."""

from __future__ import annotations

import pytest

from taskcrew.tools.files import SandboxFiles


@pytest.fixture(scope="module")
def tools(inbox_files: SandboxFiles) -> dict[str, object]:
    from taskcrew.tools.reader_tools import file_reader_tools

    return {t.name: t for t in file_reader_tools(inbox_files)}


def test_tool_set_and_schemas(tools: dict[str, object]) -> None:
    from crewai.tools import BaseTool

    assert sorted(tools) == [
        "compare_values",
        "compute_due_date",
        "list_files",
        "parse_amount",
        "read_file",
        "search_files",
    ]
    for tool in tools.values():
        assert isinstance(tool, BaseTool)
        assert tool.args_schema.model_json_schema()["properties"]
        assert tool.description


def test_file_tools_return_bounded_text(tools: dict[str, object]) -> None:
    from crewai.tools import BaseTool

    list_files, read_file, search_files = (tools[n] for n in ("list_files", "read_file", "search_files"))
    assert isinstance(list_files, BaseTool) and isinstance(read_file, BaseTool)
    assert isinstance(search_files, BaseTool)
    listing = list_files.run(folder="downloads")
    assert "downloads/invoice.pdf" in listing and len(listing) <= 6000
    text = read_file.run(path="Invoice from Northwind Traders.eml")
    assert "TOTAL PAYABLE 1,284.50 USD" in text
    assert "[read by OCR" in read_file.run(path="scans/SCAN_0001.pdf")
    assert read_file.run(path="../documents.yaml").startswith("ERROR: refused:")
    assert "Tax Invoice.eml" in search_files.run(query="INV/2026/0917")


def test_ap_tools_show_their_working(tools: dict[str, object]) -> None:
    from crewai.tools import BaseTool

    parse, due, compare = (tools[n] for n in ("parse_amount", "compute_due_date", "compare_values"))
    assert isinstance(parse, BaseTool) and isinstance(due, BaseTool) and isinstance(compare, BaseTool)
    assert "value: 1284.50\ncurrency: EUR" in parse.run(text="1.284,50 EUR")
    assert parse.run(text="1,284").startswith("ERROR: ambiguous amount")
    assert "working: 2026-09-12 + 30 days = 2026-10-12" in due.run(
        invoice_date="September 12, 2026", terms="Net 30"
    )
    assert "b is later" in compare.run(a="2026-10-05", b="2026-10-12")


def test_wrong_arguments_are_rejected_by_the_schema(tools: dict[str, object]) -> None:
    from crewai.tools import BaseTool

    read_file = tools["read_file"]
    assert isinstance(read_file, BaseTool)
    with pytest.raises(ValueError, match="arguments validation failed"):
        read_file.run(file="x.pdf")
