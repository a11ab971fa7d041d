"""Context by budget: what a model sees per call, and the text it writes beside its tool calls."""

from __future__ import annotations

import json
from typing import Any

from taskcrew.crew.compaction import compact_messages
from taskcrew.crew.prose import ProseMemory, tool_call_in_text

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def turn(i: int, results: dict[str, str], prose: str | None = None) -> list[dict[str, Any]]:
    calls = [
        {"id": f"c{i}_{n}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for n, name in enumerate(results)
    ]
    out: list[dict[str, Any]] = [{"role": "assistant", "content": prose, "tool_calls": calls}]
    out += [
        {"role": "tool", "tool_call_id": f"c{i}_{n}", "name": name, "content": text}
        for n, (name, text) in enumerate(results.items())
    ]
    return out


def tool_texts(sent: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in sent if m["role"] == "tool"]


def test_every_result_of_the_latest_parallel_turn_is_in_full() -> None:
    big = "32 matching line(s) for 'Northwind' in 6 file(s)\n" + "line\n" * 800
    other = "file list\n" + "row\n" * 800
    history = HEAD + turn(0, {"search_files": big, "list_files": other})
    sent, _ = compact_messages(history, budget=500)  # even over budget: the latest turn is whole
    assert tool_texts(sent) == [big, other]


def test_older_results_stay_in_full_while_they_fit_newest_first() -> None:
    results = [f"result {i}\n" + "word " * 400 for i in range(8)]  # ~500 tokens each
    history = HEAD + [m for i, r in enumerate(results) for m in turn(i, {"read_file": r})]
    sent, compacted = compact_messages(history, budget=2500)
    texts = tool_texts(sent)
    full = [t for t in texts if "[older result shortened]" not in t]
    assert texts[-1] == results[-1] and texts[-2] == results[-2]  # the newest ones first
    assert 2 <= len(full) < 8 and compacted == 8 - len(full)
    assert all(t.startswith(f"result {i}") for i, t in enumerate(texts))  # shortened: one line, in order
    sent_big, compacted_big = compact_messages(history, budget=20_000)
    assert tool_texts(sent_big) == results and compacted_big == 0


def test_older_pages_by_their_gist_even_when_they_fit() -> None:
    history = HEAD + [
        m for i in range(3) for m in turn(i, {"browser_act": f"Page {i}: Bills\n" + "[1] link\n" * 50})
    ]
    history += turn(3, {"compute_due_date": "2026-10-12"})
    texts = tool_texts(compact_messages(history, budget=50_000)[0])
    assert texts[2].startswith("Page 2") and len(texts[2]) > 300  # the newest page, in full
    assert texts[0].endswith("[older page, shown by its gist]") and texts[1].startswith("Page 1")
    assert len(texts[1]) < 200


def test_the_models_own_text_is_kept_bounded_and_the_prompt_says_what_is_kept() -> None:
    history = HEAD + turn(0, {"read_file": "a"}, prose="Invoice A says 1,284.50. " + "x" * 2000)
    history += turn(1, {"read_file": "b"})
    sent, _ = compact_messages(history)
    assistant = next(m for m in sent if m["role"] == "assistant")
    assert assistant["content"].startswith("Invoice A says 1,284.50.") and len(assistant["content"]) <= 600
    task = sent[1]["content"]
    assert task.startswith("task") and "older results in full while they fit in about 6000 tokens" in task
    assert [m["role"] for m in sent[:2]] == ["system", "user"] and sent[2]["role"] == "assistant"


def test_thirty_actions_keep_the_prompt_flat() -> None:
    sizes = []
    history = list(HEAD)
    for i in range(30):
        name = "browser_act" if i % 2 else "read_file"
        history += turn(i, {name: f"obs {i}\n" + "token " * 700}, prose=f"step {i} done")
        sent, _ = compact_messages(history, budget=6000)
        sizes.append(sum(len(str(m.get("content") or "")) for m in sent) // 4)
    assert sizes[29] <= 1.2 * sizes[4], sizes
    assert max(sizes) <= 8000


def test_prose_memory_puts_the_text_back_by_call_id() -> None:
    memory = ProseMemory()
    calls = [
        {"id": "a1", "type": "function", "function": {"name": "x", "arguments": "{}"}, "prose": "I think"}
    ]
    assert "prose" not in memory.take(calls)[0]
    history = [{"role": "assistant", "content": None, "tool_calls": calls}, {"role": "tool", "content": "r"}]
    assert memory.restore(history)[0]["content"] == "I think"
    assert history[0]["content"] is None  # the caller's history is not changed


def test_a_tool_call_written_as_text_becomes_a_call() -> None:
    tools = [{"type": "function", "function": {"name": "read_file"}}]
    text = 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "a.eml"}}\n```'
    calls = tool_call_in_text(text, tools)
    assert calls is not None and calls[0]["function"]["name"] == "read_file"
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "a.eml"}
    assert tool_call_in_text('{"status": "done", "summary": "s"}', tools) is None
    assert tool_call_in_text('{"name": "delete_all", "arguments": {}}', tools) is None  # not its tool
