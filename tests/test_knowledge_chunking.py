"""Files → chunks: markdown by heading, PDF by page, text and email by paragraph; clear refusals."""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path

import pytest
from fixtures_knowledge import HANDBOOK, write_pdf

from taskcrew.knowledge.chunking import ChunkingConfig, UnreadableFile, chunk_file
from taskcrew.knowledge.streaming import iter_chunks

DOC = """# Handbook of Things

Intro to the handbook, which says what it is for and who owns it. It is long enough to stand on its
own as a chunk of text about the handbook as a whole.

## Payments

### Due dates

Compute the due date from the terms when no due date is printed on the invoice. Net 30 means thirty
days after the invoice date, and the printed date always wins over the terms.

```
# this is code, not a heading
```

### Tiny

Short.

## Travel

Book trips through the portal at least fourteen days ahead, economy class for short flights and
premium economy for long ones, within the hotel cap.
"""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def test_markdown_chunks_keep_heading_paths_and_drop_the_title(tmp_path: Path) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(DOC, encoding="utf-8")
    chunks = chunk_file(doc)
    paths = [c.heading_path for c in chunks]
    assert paths[0] == ["Handbook of Things"]  # the text under the title keeps it
    assert ["Payments"] in paths  # "Due dates" and its tiny sibling, merged under their parent
    assert ["Travel"] in paths
    assert all(p[0] != "Handbook of Things" for p in paths[1:])
    # the code block's '#' line stays text of "Due dates"
    due = next(c for c in chunks if "Net 30" in c.text)
    assert "# this is code, not a heading" in due.text
    assert all(c.source == str(doc.resolve()) and c.kind == "markdown" for c in chunks)


def test_headings_written_without_a_space_are_headings_and_hashtags_stay_text(tmp_path: Path) -> None:
    """Python-Markdown (what Frappe/ERPNext's manual is rendered with) reads "#Title" as a heading;
    an article written that way lost its sections. Hashtags and issue numbers stay text."""
    body = "Text long enough to stand as its own chunk of the section, with words about {0}. " * 3
    doc = tmp_path / "article.md"
    doc.write_text(
        f"#Post Dated Cheque Entry\n\n{body.format('the cheque')}\n\n"
        f"####Step 1: Save and Submit\n\n{body.format('submitting')}\n"
        f"#finance #ap\n#123 fixed the rounding\n\n"
        f"####2. Adjusting the entry\n\n{body.format('adjusting')}\n",
        encoding="utf-8",
    )
    chunks = chunk_file(doc)
    assert {c.title for c in chunks} == {"Post Dated Cheque Entry"}
    paths = [c.heading_path for c in chunks]
    assert ["Step 1: Save and Submit"] in paths and ["2. Adjusting the entry"] in paths
    step = next(c for c in chunks if c.heading_path == ["Step 1: Save and Submit"])
    assert "#finance #ap" in step.text and "#123 fixed the rounding" in step.text
    assert list(iter_chunks(doc)) == chunks  # ingest streams markdown: the same headings there


def test_tiny_section_is_merged_into_its_sibling_with_its_heading(tmp_path: Path) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(DOC, encoding="utf-8")
    chunks = chunk_file(doc, ChunkingConfig(max_chars=850, min_chars=200))
    merged = next(c for c in chunks if "Short." in c.text)
    assert merged.heading_path == ["Payments"]
    assert re.search(r"^#+ Tiny$", merged.text, re.M) and re.search(r"^#+ Due dates$", merged.text, re.M)
    assert not any(c.text.strip() == "Short." for c in chunks)


def test_long_sections_split_into_bounded_pieces_without_losing_text(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {i}. " + "The procedure says this and that. " * (4 + i % 5) for i in range(30)]
    doc = tmp_path / "long.md"
    doc.write_text("## Long section\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    config = ChunkingConfig(max_chars=600, min_chars=150)
    chunks = chunk_file(doc, config)
    assert len(chunks) > 5
    assert all(len(c.text) <= config.max_chars for c in chunks)
    assert all(c.heading_path == ["Long section"] for c in chunks)
    assert _words(" ".join(c.text for c in chunks)) == _words("\n".join(paragraphs))
    sizes = [len(c.text) for c in chunks]
    assert min(sizes) > config.max_chars / 3  # balanced, no scraps


def test_ids_are_content_hashes(tmp_path: Path) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(DOC, encoding="utf-8")
    first = [c.id for c in chunk_file(doc)]
    assert first == [c.id for c in chunk_file(doc)]
    assert len(set(first)) == len(first)
    doc.write_text(DOC.replace("fourteen days", "twenty-one days"), encoding="utf-8")
    second = [c.id for c in chunk_file(doc)]
    assert len(set(first) - set(second)) == 1  # only the edited section's chunk changed


def test_the_handbook_chunks_are_sized_for_the_model() -> None:
    chunks = chunk_file(HANDBOOK)
    config = ChunkingConfig()
    assert 20 <= len(chunks) <= 60
    assert all(len(c.text) <= config.max_chars + config.min_chars for c in chunks)
    headings = {c.heading_path[-1] for c in chunks}
    assert "1.3 Check for duplicates before entering" in headings


def test_pdf_is_chunked_by_page(tmp_path: Path) -> None:
    pdf = write_pdf(
        tmp_path / "policy.pdf", ["Page one talks about refunds.", "Page two talks about travel."]
    )
    chunks = chunk_file(pdf)
    assert [c.heading_path for c in chunks] == [["page 1"], ["page 2"]]
    assert "refunds" in chunks[0].text and "travel" in chunks[1].text
    assert {c.kind for c in chunks} == {"pdf"}


def test_text_is_chunked_by_paragraph(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(8)), encoding="utf-8")
    chunks = chunk_file(note, ChunkingConfig(max_chars=700, min_chars=100))
    assert len(chunks) >= 3
    assert all(c.text.startswith("Paragraph") for c in chunks)


def test_email_body_and_pdf_attachment_are_chunked(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "att.pdf", ["Attached policy: approvals above 5000 need the CFO."])
    message = EmailMessage()
    message["From"] = "ap-lead@acme.example"
    message["To"] = "team@acme.example"
    message["Subject"] = "New approval rule"
    message.set_content("Hello team,\n\nplease read the attached policy before approving payments.")
    message.add_attachment(pdf.read_bytes(), maintype="application", subtype="pdf", filename="policy.pdf")
    eml = tmp_path / "rule.eml"
    eml.write_bytes(message.as_bytes())
    chunks = chunk_file(eml)
    assert chunks[0].heading_path == ["New approval rule"]
    assert "From: ap-lead@acme.example" in chunks[0].text and "attached policy" in chunks[0].text
    assert any(
        c.heading_path == ["New approval rule", "policy.pdf", "page 1"] and "CFO" in c.text for c in chunks
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("scan.pdf", None, "no text layer"),
        ("broken.pdf", b"%PDF-1.4 this is not really a pdf", "not a readable PDF"),
        ("latin1.txt", "Gebühr für Überweisung".encode("latin-1"), "not UTF-8"),
        ("blob.txt", b"\x00\x01\x02binary", "binary"),
        ("empty.md", b"   \n\n", "no text to index"),
        ("slides.pptx", b"whatever", "unsupported file type '.pptx'"),
        ("missing.md", b"", "file not found"),
    ],
)
def test_unreadable_files_raise_a_clear_message(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is None:
        write_pdf(path, [""])
    elif name != "missing.md":
        path.write_bytes(content)
    with pytest.raises(UnreadableFile, match=re.escape(message)):
        chunk_file(path)
